#![doc = include_str!("../README.md")]
#![no_std]
#![deny(missing_docs)]
#![cfg_attr(not(target_arch = "aarch64"), forbid(unsafe_code))]
#![cfg_attr(target_arch = "aarch64", deny(unsafe_code))]

#[cfg(any(test, feature = "std"))]
extern crate std;

pub mod regs;
pub mod version;

pub use regs::counter_set::{CounterSet, NoSuchCounter};
pub use regs::edprsr::Edprsr;
pub use regs::field::{Access, FieldInfo, FieldOverflow, Register, Res0Violation};
pub use regs::id_aa64dfr0::IdAa64Dfr0;
pub use regs::osdlr::Osdlr;
pub use regs::oslar::Oslar;
pub use regs::oslsr::Oslsr;
pub use regs::pmccfiltr::Pmccfiltr;
pub use regs::pmceid::{CommonEventSet, NotDiscoverable, PmceidBit};
pub use regs::pmcfgr::Pmcfgr;
pub use regs::pmcr::Pmcr;
pub use regs::pmevtyper::{EventNotEncodable, Pmevtyper, ThresholdCondition};
pub use regs::pmlsr::{Pmlar, Pmlsr};
pub use regs::pmmir::{Pmmir, ReservedBusWidth};
pub use regs::pmselr::{Pmselr, Selected};
pub use regs::pmuserenr::Pmuserenr;
pub use regs::trceventctl0r::TrcEventCtl0r;
pub use regs::trceventctl1r::TrcEventCtl1r;
pub use regs::trcextinselr::TrcExtInSelR;
pub use regs::trcrsctlr::TrcRsctlr;
pub use version::{PmuSupport, PmuVersion, ReservedPmuVer};
pub mod arm_event;
pub mod diagnosis;
pub mod encoding;
pub mod event;
pub mod external;
pub mod recommended;
pub use arm_event::ArmEvent;
pub use event::CommonEvent;
pub use recommended::RecommendedEvent;
#[cfg(feature = "json")]
pub mod catalog;
#[cfg(target_arch = "aarch64")]
#[allow(unsafe_code)]
pub mod hw;
pub mod overflow;
pub mod soft_pmu;
pub mod user_read;
