//! Links the `arm_loop` example (a test program whose every instruction is known) with its own entry
//! point on aarch64 Linux, so that no C library start-up runs before it.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let arch = std::env::var("CARGO_CFG_TARGET_ARCH").unwrap_or_default();
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    if arch == "aarch64" && os == "linux" {
        println!("cargo:rustc-link-arg-examples=-Wl,-e,arm_loop_start");
    }
}
