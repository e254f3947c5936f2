//! Hardware access, AArch64 only: MRS/MSR accessors for the PMU system registers and a volatile view
//! of the external PMU block. Every `unsafe` in the crate lives here.

pub mod mmio;
pub mod sysreg;

pub use mmio::{Mmio, MmioError};
pub use sysreg::HwError;
