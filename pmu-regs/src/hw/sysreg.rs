//! MRS/MSR access to the PMU system registers of the executing PE.
//!
//! Registers are named by their generic encodings (`S3_3_C9_C12_0`, ...), so the assembler needs no
//! knowledge of PMU extensions.

use core::arch::asm;

use thiserror::Error;

use crate::encoding::{IndexOutOfRange, PmuRegister};

/// A register access refused before any instruction was executed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum HwError {
    /// The register is write-only (PMSWINC_EL0, PMZR_EL0).
    #[error("{0} is write-only")]
    WriteOnly(PmuRegister),
    /// The register is read-only (PMCEID0/1_EL0, PMMIR_EL1).
    #[error("{0} is read-only")]
    ReadOnly(PmuRegister),
    /// An `n`-indexed register with n above 30.
    #[error(transparent)]
    Index(#[from] IndexOutOfRange),
}

macro_rules! mrs {
    ($name:literal) => {{
        let value: u64;
        // SAFETY: the caller of the reading function (`read`, `read_pmccntr`, ...) guarantees that
        // reading this PMU register is permitted at the current exception level; MRS only copies the register into a general-purpose register.
        unsafe {
            asm!(concat!("mrs {0}, ", $name), out(reg) value, options(nomem, nostack, preserves_flags))
        };
        value
    }};
}

macro_rules! msr {
    ($name:literal, $value:expr) => {{
        let value: u64 = $value;
        // SAFETY: the caller of `write` guarantees that writing this PMU register is permitted at the
        // current exception level and that the new PMU state is acceptable to the rest of the system.
        unsafe { asm!(concat!("msr ", $name, ", {0}"), in(reg) value, options(nostack, preserves_flags)) };
    }};
}

/// Reads `register` with MRS.
///
/// # Safety
/// The access must be permitted at the current exception level: at EL0 PMUSERENR_EL0 must allow it
/// (otherwise the instruction is trapped, which Linux reports as SIGILL), and registers of features
/// the PE lacks (PMMIR_EL1 before PMUv3p4, PMUACR_EL1, PMICNTR_EL0, ...) must not be accessed, since
/// they are UNDEFINED. Reading PMXEVTYPER/PMXEVCNTR with PMSELR_EL0.SEL selecting a counter that does
/// not exist is CONSTRAINED UNPREDICTABLE.
#[inline]
pub unsafe fn read(register: PmuRegister) -> Result<u64, HwError> {
    use PmuRegister as R;
    Ok(match register {
        R::Pmcr => mrs!("S3_3_C9_C12_0"),
        R::Pmcntenset => mrs!("S3_3_C9_C12_1"),
        R::Pmcntenclr => mrs!("S3_3_C9_C12_2"),
        R::Pmovsclr => mrs!("S3_3_C9_C12_3"),
        R::Pmswinc => return Err(HwError::WriteOnly(register)),
        R::Pmselr => mrs!("S3_3_C9_C12_5"),
        R::Pmceid0 => mrs!("S3_3_C9_C12_6"),
        R::Pmceid1 => mrs!("S3_3_C9_C12_7"),
        // SAFETY: the same contract as this function's, for one register.
        R::Pmccntr => unsafe { read_pmccntr() },
        R::Pmxevtyper => mrs!("S3_3_C9_C13_1"),
        R::Pmxevcntr => mrs!("S3_3_C9_C13_2"),
        R::Pmzr => return Err(HwError::WriteOnly(register)),
        // SAFETY: as above.
        R::Pmuserenr => unsafe { read_pmuserenr() },
        R::Pmintenset => mrs!("S3_0_C9_C14_1"),
        R::Pmintenclr => mrs!("S3_0_C9_C14_2"),
        R::Pmovsset => mrs!("S3_3_C9_C14_3"),
        R::Pmuacr => mrs!("S3_0_C9_C14_4"),
        R::Pmmir => mrs!("S3_0_C9_C14_6"),
        R::Pmccfiltr => mrs!("S3_3_C14_C15_7"),
        R::Pmicntr => mrs!("S3_3_C9_C4_0"),
        R::Pmicfiltr => mrs!("S3_3_C9_C6_0"),
        // SAFETY: as above; an `n` above 30 reads nothing.
        R::Pmevcntr(n) => match unsafe { read_pmevcntr(n) } {
            Some(value) => value,
            None => return Err(HwError::Index(IndexOutOfRange(n))),
        },
        R::Pmevtyper(n) => match n {
            0 => mrs!("S3_3_C14_C12_0"),
            1 => mrs!("S3_3_C14_C12_1"),
            2 => mrs!("S3_3_C14_C12_2"),
            3 => mrs!("S3_3_C14_C12_3"),
            4 => mrs!("S3_3_C14_C12_4"),
            5 => mrs!("S3_3_C14_C12_5"),
            6 => mrs!("S3_3_C14_C12_6"),
            7 => mrs!("S3_3_C14_C12_7"),
            8 => mrs!("S3_3_C14_C13_0"),
            9 => mrs!("S3_3_C14_C13_1"),
            10 => mrs!("S3_3_C14_C13_2"),
            11 => mrs!("S3_3_C14_C13_3"),
            12 => mrs!("S3_3_C14_C13_4"),
            13 => mrs!("S3_3_C14_C13_5"),
            14 => mrs!("S3_3_C14_C13_6"),
            15 => mrs!("S3_3_C14_C13_7"),
            16 => mrs!("S3_3_C14_C14_0"),
            17 => mrs!("S3_3_C14_C14_1"),
            18 => mrs!("S3_3_C14_C14_2"),
            19 => mrs!("S3_3_C14_C14_3"),
            20 => mrs!("S3_3_C14_C14_4"),
            21 => mrs!("S3_3_C14_C14_5"),
            22 => mrs!("S3_3_C14_C14_6"),
            23 => mrs!("S3_3_C14_C14_7"),
            24 => mrs!("S3_3_C14_C15_0"),
            25 => mrs!("S3_3_C14_C15_1"),
            26 => mrs!("S3_3_C14_C15_2"),
            27 => mrs!("S3_3_C14_C15_3"),
            28 => mrs!("S3_3_C14_C15_4"),
            29 => mrs!("S3_3_C14_C15_5"),
            30 => mrs!("S3_3_C14_C15_6"),
            _ => return Err(HwError::Index(IndexOutOfRange(n))),
        },
    })
}

/// Reads PMUSERENR_EL0: [`read`] of that one register, small enough to be inlined into a caller's
/// sampling loop.
///
/// # Safety
/// As for [`read`]: the PE implements PMUv3 (EL0 may always read PMUSERENR_EL0 then).
#[inline(always)]
pub unsafe fn read_pmuserenr() -> u64 {
    mrs!("S3_3_C9_C14_0")
}

/// Reads PMCCNTR_EL0: [`read`] of that one register, small enough to be inlined into a caller's
/// sampling loop.
///
/// # Safety
/// As for [`read`]: at EL0, PMUSERENR_EL0 must let EL0 read the cycle counter (EN or CR).
#[inline(always)]
pub unsafe fn read_pmccntr() -> u64 {
    mrs!("S3_3_C9_C13_0")
}

/// Reads `PMEVCNTR<n>_EL0`, or gives `None` without executing anything when `n` is above 30:
/// [`read`] of the event counters alone, small enough to be inlined into a caller's sampling loop.
/// The register is chosen by one computed branch into a table of 31 `MRS` + `B` pairs (8 bytes an
/// entry, entry `n` at `8 × n`): five instructions for the read, where a `match` costs a table load
/// and its address arithmetic too.
///
/// # Safety
/// As for [`read`]: at EL0, PMUSERENR_EL0 must let EL0 read the event counters (EN or ER), and
/// counter `n` must exist on this PE (below PMCR_EL0.N).
#[inline(always)]
pub unsafe fn read_pmevcntr(n: u8) -> Option<u64> {
    if n > 30 {
        return None;
    }
    let value: u64;
    // SAFETY: the branch lands on entry `n` (checked ≤ 30 just above) of the table that follows it,
    // which reads PMEVCNTR<n>_EL0 (permitted: the caller's contract) and branches past the table.
    // Nothing touches memory or the stack; the flags are left alone.
    unsafe {
        asm!(
            "adr {target}, 3f",
            "add {target}, {target}, {n}, lsl #3",
            "br {target}",
            "3:",
            "mrs {value}, S3_3_C14_C8_0",
            "b 4f",
            "mrs {value}, S3_3_C14_C8_1",
            "b 4f",
            "mrs {value}, S3_3_C14_C8_2",
            "b 4f",
            "mrs {value}, S3_3_C14_C8_3",
            "b 4f",
            "mrs {value}, S3_3_C14_C8_4",
            "b 4f",
            "mrs {value}, S3_3_C14_C8_5",
            "b 4f",
            "mrs {value}, S3_3_C14_C8_6",
            "b 4f",
            "mrs {value}, S3_3_C14_C8_7",
            "b 4f",
            "mrs {value}, S3_3_C14_C9_0",
            "b 4f",
            "mrs {value}, S3_3_C14_C9_1",
            "b 4f",
            "mrs {value}, S3_3_C14_C9_2",
            "b 4f",
            "mrs {value}, S3_3_C14_C9_3",
            "b 4f",
            "mrs {value}, S3_3_C14_C9_4",
            "b 4f",
            "mrs {value}, S3_3_C14_C9_5",
            "b 4f",
            "mrs {value}, S3_3_C14_C9_6",
            "b 4f",
            "mrs {value}, S3_3_C14_C9_7",
            "b 4f",
            "mrs {value}, S3_3_C14_C10_0",
            "b 4f",
            "mrs {value}, S3_3_C14_C10_1",
            "b 4f",
            "mrs {value}, S3_3_C14_C10_2",
            "b 4f",
            "mrs {value}, S3_3_C14_C10_3",
            "b 4f",
            "mrs {value}, S3_3_C14_C10_4",
            "b 4f",
            "mrs {value}, S3_3_C14_C10_5",
            "b 4f",
            "mrs {value}, S3_3_C14_C10_6",
            "b 4f",
            "mrs {value}, S3_3_C14_C10_7",
            "b 4f",
            "mrs {value}, S3_3_C14_C11_0",
            "b 4f",
            "mrs {value}, S3_3_C14_C11_1",
            "b 4f",
            "mrs {value}, S3_3_C14_C11_2",
            "b 4f",
            "mrs {value}, S3_3_C14_C11_3",
            "b 4f",
            "mrs {value}, S3_3_C14_C11_4",
            "b 4f",
            "mrs {value}, S3_3_C14_C11_5",
            "b 4f",
            "mrs {value}, S3_3_C14_C11_6",
            "b 4f",
            "4:",
            n = in(reg) u64::from(n),
            target = out(reg) _,
            value = lateout(reg) value,
            options(nomem, nostack, preserves_flags),
        );
    }
    Some(value)
}

/// Writes `value` to `register` with MSR, followed by nothing: issue [`isb`] before relying on the
/// effect (for example before reading a counter just enabled).
///
/// # Safety
/// As for [`read`], the access must be permitted and the register implemented. Beyond that, the
/// write changes PE state other software may own: on Linux the kernel's perf subsystem owns the PMU,
/// and changing counters or enables behind its back corrupts its measurements.
pub unsafe fn write(register: PmuRegister, value: u64) -> Result<(), HwError> {
    use PmuRegister as R;
    match register {
        R::Pmcr => msr!("S3_3_C9_C12_0", value),
        R::Pmcntenset => msr!("S3_3_C9_C12_1", value),
        R::Pmcntenclr => msr!("S3_3_C9_C12_2", value),
        R::Pmovsclr => msr!("S3_3_C9_C12_3", value),
        R::Pmswinc => msr!("S3_3_C9_C12_4", value),
        R::Pmselr => msr!("S3_3_C9_C12_5", value),
        R::Pmceid0 => return Err(HwError::ReadOnly(register)),
        R::Pmceid1 => return Err(HwError::ReadOnly(register)),
        R::Pmccntr => msr!("S3_3_C9_C13_0", value),
        R::Pmxevtyper => msr!("S3_3_C9_C13_1", value),
        R::Pmxevcntr => msr!("S3_3_C9_C13_2", value),
        R::Pmzr => msr!("S3_3_C9_C13_4", value),
        R::Pmuserenr => msr!("S3_3_C9_C14_0", value),
        R::Pmintenset => msr!("S3_0_C9_C14_1", value),
        R::Pmintenclr => msr!("S3_0_C9_C14_2", value),
        R::Pmovsset => msr!("S3_3_C9_C14_3", value),
        R::Pmuacr => msr!("S3_0_C9_C14_4", value),
        R::Pmmir => return Err(HwError::ReadOnly(register)),
        R::Pmccfiltr => msr!("S3_3_C14_C15_7", value),
        R::Pmicntr => msr!("S3_3_C9_C4_0", value),
        R::Pmicfiltr => msr!("S3_3_C9_C6_0", value),
        R::Pmevcntr(n) => match n {
            0 => msr!("S3_3_C14_C8_0", value),
            1 => msr!("S3_3_C14_C8_1", value),
            2 => msr!("S3_3_C14_C8_2", value),
            3 => msr!("S3_3_C14_C8_3", value),
            4 => msr!("S3_3_C14_C8_4", value),
            5 => msr!("S3_3_C14_C8_5", value),
            6 => msr!("S3_3_C14_C8_6", value),
            7 => msr!("S3_3_C14_C8_7", value),
            8 => msr!("S3_3_C14_C9_0", value),
            9 => msr!("S3_3_C14_C9_1", value),
            10 => msr!("S3_3_C14_C9_2", value),
            11 => msr!("S3_3_C14_C9_3", value),
            12 => msr!("S3_3_C14_C9_4", value),
            13 => msr!("S3_3_C14_C9_5", value),
            14 => msr!("S3_3_C14_C9_6", value),
            15 => msr!("S3_3_C14_C9_7", value),
            16 => msr!("S3_3_C14_C10_0", value),
            17 => msr!("S3_3_C14_C10_1", value),
            18 => msr!("S3_3_C14_C10_2", value),
            19 => msr!("S3_3_C14_C10_3", value),
            20 => msr!("S3_3_C14_C10_4", value),
            21 => msr!("S3_3_C14_C10_5", value),
            22 => msr!("S3_3_C14_C10_6", value),
            23 => msr!("S3_3_C14_C10_7", value),
            24 => msr!("S3_3_C14_C11_0", value),
            25 => msr!("S3_3_C14_C11_1", value),
            26 => msr!("S3_3_C14_C11_2", value),
            27 => msr!("S3_3_C14_C11_3", value),
            28 => msr!("S3_3_C14_C11_4", value),
            29 => msr!("S3_3_C14_C11_5", value),
            30 => msr!("S3_3_C14_C11_6", value),
            _ => return Err(HwError::Index(IndexOutOfRange(n))),
        },
        R::Pmevtyper(n) => match n {
            0 => msr!("S3_3_C14_C12_0", value),
            1 => msr!("S3_3_C14_C12_1", value),
            2 => msr!("S3_3_C14_C12_2", value),
            3 => msr!("S3_3_C14_C12_3", value),
            4 => msr!("S3_3_C14_C12_4", value),
            5 => msr!("S3_3_C14_C12_5", value),
            6 => msr!("S3_3_C14_C12_6", value),
            7 => msr!("S3_3_C14_C12_7", value),
            8 => msr!("S3_3_C14_C13_0", value),
            9 => msr!("S3_3_C14_C13_1", value),
            10 => msr!("S3_3_C14_C13_2", value),
            11 => msr!("S3_3_C14_C13_3", value),
            12 => msr!("S3_3_C14_C13_4", value),
            13 => msr!("S3_3_C14_C13_5", value),
            14 => msr!("S3_3_C14_C13_6", value),
            15 => msr!("S3_3_C14_C13_7", value),
            16 => msr!("S3_3_C14_C14_0", value),
            17 => msr!("S3_3_C14_C14_1", value),
            18 => msr!("S3_3_C14_C14_2", value),
            19 => msr!("S3_3_C14_C14_3", value),
            20 => msr!("S3_3_C14_C14_4", value),
            21 => msr!("S3_3_C14_C14_5", value),
            22 => msr!("S3_3_C14_C14_6", value),
            23 => msr!("S3_3_C14_C14_7", value),
            24 => msr!("S3_3_C14_C15_0", value),
            25 => msr!("S3_3_C14_C15_1", value),
            26 => msr!("S3_3_C14_C15_2", value),
            27 => msr!("S3_3_C14_C15_3", value),
            28 => msr!("S3_3_C14_C15_4", value),
            29 => msr!("S3_3_C14_C15_5", value),
            30 => msr!("S3_3_C14_C15_6", value),
            _ => return Err(HwError::Index(IndexOutOfRange(n))),
        },
    }
    Ok(())
}

/// Instruction Synchronization Barrier: makes earlier PMU register writes visible to later
/// instructions.
pub fn isb() {
    // SAFETY: ISB only orders instruction execution; it reads and writes no memory or registers.
    unsafe { asm!("isb", options(nomem, nostack, preserves_flags)) };
}

#[cfg(test)]
mod tests {
    use super::*;

    // Only the refusals can run in a test: the PMU registers themselves trap at EL0 unless the kernel
    // opened PMUSERENR_EL0 (qemu-user and stock Linux do not).
    #[test]
    fn refusals_happen_before_any_instruction() {
        // SAFETY: each call returns an error before executing MRS/MSR.
        unsafe {
            assert_eq!(
                read(PmuRegister::Pmswinc),
                Err(HwError::WriteOnly(PmuRegister::Pmswinc))
            );
            assert_eq!(
                read(PmuRegister::Pmzr),
                Err(HwError::WriteOnly(PmuRegister::Pmzr))
            );
            assert_eq!(
                read(PmuRegister::Pmevcntr(31)),
                Err(HwError::Index(IndexOutOfRange(31)))
            );
            assert_eq!(
                read(PmuRegister::Pmevtyper(40)),
                Err(HwError::Index(IndexOutOfRange(40)))
            );
            assert_eq!(
                write(PmuRegister::Pmceid0, 0),
                Err(HwError::ReadOnly(PmuRegister::Pmceid0))
            );
            assert_eq!(
                write(PmuRegister::Pmmir, 0),
                Err(HwError::ReadOnly(PmuRegister::Pmmir))
            );
            assert_eq!(
                write(PmuRegister::Pmevcntr(31), 0),
                Err(HwError::Index(IndexOutOfRange(31)))
            );
            assert_eq!(
                write(PmuRegister::Pmevtyper(31), 0),
                Err(HwError::Index(IndexOutOfRange(31)))
            );
        }
    }
}
