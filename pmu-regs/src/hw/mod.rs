//! Hardware access, AArch64 only: MRS/MSR accessors for the PMU system registers and a volatile view
//! of the external PMU block. Every `unsafe` in the crate lives here.

pub mod el0;
pub mod mmio;
pub mod sysreg;

pub use el0::{El0Counter, El0Pmu, El0ReadError};
pub use mmio::{Mmio, MmioError};
pub use sysreg::HwError;
