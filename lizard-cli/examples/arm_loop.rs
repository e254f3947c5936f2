//! A program whose every instruction is known, for exact-count tests of `lizard stat` on aarch64 Linux.
//!
//! Its entry point is `arm_loop_start` (the build script links it so): no C library start-up and no Rust
//! runtime run before it. It executes exactly 2 × 1 000 000 + 5 instructions at EL0 — two to load the
//! iteration count, the two-instruction loop, and three to call `exit(0)` — so
//! `lizard stat --user-only --counters Instructions -- arm_loop` must print 2000005 wherever every
//! instruction is counted (QEMU with `-icount`; on real cores INST_RETIRED is exact as well).
//! On other machines it says it cannot run and exits with status 2.

#[cfg(all(target_arch = "aarch64", target_os = "linux"))]
core::arch::global_asm!(
    ".globl arm_loop_start",
    ".type arm_loop_start, %function",
    "arm_loop_start:",
    // 1 000 000 = 0xF_4240 iterations.
    "movz x9, #0x4240",
    "movk x9, #0xf, lsl #16",
    "2:",
    "subs x9, x9, #1",
    "b.ne 2b",
    // exit(0): system call 93 on arm64.
    "mov x0, #0",
    "mov x8, #93",
    "svc #0",
);

fn main() {
    // Reached only where the program is not linked with its own entry point.
    eprintln!("arm_loop runs only on aarch64 Linux, from its own entry point");
    std::process::exit(2);
}
