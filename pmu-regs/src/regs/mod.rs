//! Register value types: one file per register, plus the shared field machinery in `field.rs`.
//!
//! Besides the PMU registers: the debug registers the external PMU interface depends on (OSLAR_EL1,
//! OSLSR_EL1, OSDLR_EL1, EDPRSR, PMLSR/PMLAR) and the ETE trace-unit registers that route PMU events
//! into the trace (`TRCEXTINSELR<n>`, `TRCRSCTLR<n>`, TRCEVENTCTL0R, TRCEVENTCTL1R). Their layouts do
//! not change with the PMU version, so their masks are the same for every [`PmuVersion`](crate::PmuVersion).

pub mod counter_set;
pub mod edprsr;
pub(crate) mod field;
pub mod id_aa64dfr0;
pub mod osdlr;
pub mod oslar;
pub mod oslsr;
pub mod pmccfiltr;
pub mod pmceid;
pub mod pmcfgr;
pub mod pmcr;
pub mod pmevtyper;
pub mod pmlsr;
pub mod pmmir;
pub mod pmselr;
pub mod pmuserenr;
pub mod trceventctl0r;
pub mod trceventctl1r;
pub mod trcextinselr;
pub mod trcrsctlr;
