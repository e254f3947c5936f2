//! Register value types: one file per register, plus the shared field machinery in `field.rs`.

pub mod counter_set;
pub(crate) mod field;
pub mod id_aa64dfr0;
pub mod pmccfiltr;
pub mod pmceid;
pub mod pmcfgr;
pub mod pmcr;
pub mod pmevtyper;
pub mod pmmir;
pub mod pmselr;
pub mod pmuserenr;
