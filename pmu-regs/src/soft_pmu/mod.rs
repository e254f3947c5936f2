//! `SoftPmu`: a software PMUv3 with N event counters and the cycle counter, driven by register
//! reads/writes and by events, that follows the architecture. It is the oracle the overflow
//! arithmetic is tested against, and a stand-in for hardware in simulations.

mod access;
pub(crate) mod context;
mod counting;

use thiserror::Error;

pub use context::{ExceptionLevel, ExecContext, SecurityState};

use crate::encoding::PmuRegister;
use crate::overflow::{CounterWidth, El2Partition};
use crate::regs::counter_set::{CounterSet, NoSuchCounter};
use crate::regs::field::Register;
use crate::regs::pmccfiltr::Pmccfiltr;
use crate::regs::pmceid::CommonEventSet;
use crate::regs::pmcr::Pmcr;
use crate::regs::pmevtyper::Pmevtyper;
use crate::regs::pmmir::Pmmir;
use crate::regs::pmselr::Pmselr;
use crate::regs::pmuserenr::Pmuserenr;
use crate::version::PmuVersion;

/// What the simulated PMU implements.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct SoftPmuConfig {
    /// The PMU version.
    pub version: PmuVersion,
    /// PMCR_EL0.N: the number of event counters (0..=31).
    pub counters: u8,
    /// PMCR_EL0.IMP.
    pub implementer: u8,
    /// PMCR_EL0.IDCODE.
    pub idcode: u8,
    /// The common events PMCEID0/1_EL0 report.
    pub common_events: CommonEventSet,
    /// PMMIR_EL1 (read only from PMUv3p4).
    pub pmmir: Pmmir,
    /// AArch32 is supported: PMCR_EL0.D is implemented (PMCFGR.CCD = 1). Without AArch32, D is RES0
    /// and PMCR_EL0.LC is RES1.
    pub aarch32: bool,
    /// Event export is supported: PMCR_EL0.X is writable (PMCFGR.EX = 1).
    pub export: bool,
}

impl SoftPmuConfig {
    /// A PMU of `version` with `counters` event counters, Arm as implementer, every defined common
    /// event implemented (the 0x4000 range only from PMUv3p1), AArch32 and export supported.
    pub const fn new(version: PmuVersion, counters: u8) -> Self {
        Self {
            version,
            counters,
            implementer: 0x41,
            idcode: 0,
            common_events: CommonEventSet::all_defined().for_version(version),
            pmmir: Pmmir::from_bits(0),
            aarch32: true,
            export: true,
        }
    }
}

/// A register access the software PMU refuses, or a configuration it cannot model.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum SoftPmuError {
    /// More than 31 event counters were configured, or HPMN above N.
    #[error("{requested} event counters requested, at most {limit} possible")]
    TooManyCounters {
        /// The requested number.
        requested: u8,
        /// The limit (31, or N for HPMN).
        limit: u8,
    },
    /// An event counter index at or above PMCR_EL0.N.
    #[error(transparent)]
    NoSuchCounter(#[from] NoSuchCounter),
    /// A write to a read-only register.
    #[error("{0} is read-only")]
    ReadOnly(PmuRegister),
    /// A read of a write-only register.
    #[error("{0} is write-only")]
    WriteOnly(PmuRegister),
    /// The register does not exist in this PMU version.
    #[error("{register} is not implemented by {version}")]
    NotImplemented {
        /// The register.
        register: PmuRegister,
        /// The PMU version.
        version: PmuVersion,
    },
    /// The register belongs to an optional feature the model does not implement (PMUACR_EL1,
    /// PMICNTR_EL0, PMICFILTR_EL0).
    #[error("{0} is not modelled")]
    NotModelled(PmuRegister),
    /// PMXEVTYPER_EL0/PMXEVCNTR_EL0 with a PMSELR_EL0.SEL the architecture leaves CONSTRAINED
    /// UNPREDICTABLE (SEL ≥ N, or 31 for PMXEVCNTR_EL0).
    #[error("{register} with PMSELR_EL0.SEL = {sel} is CONSTRAINED UNPREDICTABLE")]
    Unpredictable {
        /// PMXEVTYPER_EL0 or PMXEVCNTR_EL0.
        register: PmuRegister,
        /// The selector value.
        sel: u8,
    },
    /// The access traps at EL0 (PMUSERENR_EL0 does not allow it) or is UNDEFINED there.
    #[error("{0} is not accessible at EL0 with the current PMUSERENR_EL0")]
    TrappedAtEl0(PmuRegister),
}

/// A broken internal invariant (the software PMU reached a state the architecture cannot).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Error)]
#[error("software PMU invariant broken: {0}")]
pub struct InvariantViolation(pub &'static str);

/// A software PMUv3: PMCR_EL0, the counter bitmaps, PMSELR/PMXEV*, PMUSERENR, PMCEID, PMMIR, up to 31
/// event counters and the cycle counter.
///
/// # What it models
/// - Enables: a counter counts when its PMCNTENSET bit is set and PMCR_EL0.E is set (counters at or
///   above MDCR_EL2.HPMN use HPME instead), and its filter permits the current [`ExecContext`].
/// - PMCR_EL0.P/C reset the event counters below HPMN / the cycle counter without touching overflow
///   flags; LC/LP/HLP pick the overflow point; D divides the cycle counter by 64 while LC is 0;
///   FZO (PMUv3p7) freezes counters below HPMN while one of their overflow flags is set; DP stops the
///   cycle counter where counting is prohibited.
/// - Counters wrap, never saturate. Event counters hold 32 bits before PMUv3p5 and 64 bits after,
///   whatever the overflow point.
/// - The overflow interrupt line: `(E and PMINTEN & PMOVS below HPMN or C) or (HPME and PMINTEN &
///   PMOVS at or above HPMN)`.
/// - CHAIN (0x1E) on an odd counter counts the overflows of the even counter below it; PMSWINC_EL0
///   increments enabled counters programmed with SW_INCR (0x00); PMZR_EL0 (PMUv3p9) zeroes counters.
/// - Bits of unimplemented counters are RAZ/WI; at EL0/EL1 so are counters at or above HPMN. At EL0,
///   accesses follow PMUSERENR_EL0 (EN, SW, CR, ER) and EL1-only registers are refused.
///
/// Reset values that the architecture leaves UNKNOWN (counters, enables, filters) start at zero.
///
/// # Call contract
/// Configure with [`SoftPmu::new`], optionally [`SoftPmu::set_el2_partition`] and
/// [`SoftPmu::set_context`]; program it with [`SoftPmu::write`] (or the typed setters); drive it with
/// [`SoftPmu::count_event`] and [`SoftPmu::run_cycles`]; observe it with [`SoftPmu::read`],
/// [`SoftPmu::irq_asserted`] and the typed getters. Each `count_event`/`run_cycles` call is one
/// burst of identical events.
///
/// ```
/// use pmu_regs::encoding::PmuRegister;
/// use pmu_regs::soft_pmu::{SoftPmu, SoftPmuConfig};
/// use pmu_regs::{CommonEvent, PmuVersion};
///
/// let mut pmu = SoftPmu::new(SoftPmuConfig::new(PmuVersion::V3p1, 6)).unwrap();
/// pmu.write(PmuRegister::Pmevtyper(0), CommonEvent::InstRetired.code().into()).unwrap();
/// pmu.write(PmuRegister::Pmevcntr(0), 0xFFFF_FFF0).unwrap();
/// pmu.write(PmuRegister::Pmcntenset, 1).unwrap();
/// pmu.write(PmuRegister::Pmintenset, 1).unwrap();
/// pmu.write(PmuRegister::Pmcr, 1).unwrap(); // E
/// pmu.count_event(CommonEvent::InstRetired.code(), 0x20);
/// assert_eq!(pmu.read(PmuRegister::Pmevcntr(0)), Ok(0x10)); // wrapped, not saturated
/// assert_eq!(pmu.read(PmuRegister::Pmovsclr), Ok(1));
/// assert!(pmu.irq_asserted());
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SoftPmu {
    config: SoftPmuConfig,
    partition: El2Partition,
    context: ExecContext,
    pmcr: Pmcr,
    cnten: CounterSet,
    inten: CounterSet,
    ovs: CounterSet,
    evtyper: [Pmevtyper; 31],
    evcntr: [u64; 31],
    ccfiltr: Pmccfiltr,
    ccntr: u64,
    prescale: u8,
    pmselr: Pmselr,
    pmuserenr: Pmuserenr,
}

impl SoftPmu {
    /// A PMU in its reset state: everything disabled and zero, Non-secure EL1, no EL2 partition.
    pub fn new(config: SoftPmuConfig) -> Result<Self, SoftPmuError> {
        if config.counters > 31 {
            return Err(SoftPmuError::TooManyCounters {
                requested: config.counters,
                limit: 31,
            });
        }
        let mut pmcr = Pmcr::default();
        if !config.aarch32 {
            pmcr = pmcr.with_lc(true);
        }
        Ok(Self {
            config,
            partition: El2Partition::unpartitioned(config.counters),
            context: ExecContext::KERNEL,
            pmcr,
            cnten: CounterSet::empty(),
            inten: CounterSet::empty(),
            ovs: CounterSet::empty(),
            evtyper: [Pmevtyper::default(); 31],
            evcntr: [0; 31],
            ccfiltr: Pmccfiltr::default(),
            ccntr: 0,
            prescale: 0,
            pmselr: Pmselr::default(),
            pmuserenr: Pmuserenr::default(),
        })
    }

    /// The configuration.
    pub const fn config(&self) -> &SoftPmuConfig {
        &self.config
    }

    /// The PMU version.
    pub const fn version(&self) -> PmuVersion {
        self.config.version
    }

    /// Sets the MDCR_EL2 partition (HPMN, HPME, HLP). HPMN must not exceed N.
    pub fn set_el2_partition(&mut self, partition: El2Partition) -> Result<(), SoftPmuError> {
        if partition.hpmn > self.config.counters {
            return Err(SoftPmuError::TooManyCounters {
                requested: partition.hpmn,
                limit: self.config.counters,
            });
        }
        let hlp = partition.hlp && self.config.version.has_long_event_counters();
        self.partition = El2Partition { hlp, ..partition };
        Ok(())
    }

    /// The MDCR_EL2 partition in effect.
    pub const fn el2_partition(&self) -> El2Partition {
        self.partition
    }

    /// Moves the simulated PE to `context`.
    pub fn set_context(&mut self, context: ExecContext) {
        self.context = context;
    }

    /// Where the simulated PE executes.
    pub const fn context(&self) -> ExecContext {
        self.context
    }

    /// PMCR_EL0 as the current context reads it (N reads as HPMN at EL0/EL1).
    pub fn pmcr(&self) -> Pmcr {
        let n = if self.context.el <= ExceptionLevel::El1 {
            self.partition.hpmn
        } else {
            self.config.counters
        };
        Pmcr::from_bits(
            self.pmcr.bits()
                | u64::from(n) << 11
                | u64::from(self.config.idcode) << 16
                | u64::from(self.config.implementer) << 24,
        )
    }

    /// The enabled-counter set (PMCNTENSET_EL0).
    pub const fn counter_enables(&self) -> CounterSet {
        self.cnten
    }

    /// The overflow-interrupt enables (PMINTENSET_EL1).
    pub const fn interrupt_enables(&self) -> CounterSet {
        self.inten
    }

    /// The overflow flags (PMOVSSET_EL0).
    pub const fn overflow_flags(&self) -> CounterSet {
        self.ovs
    }

    /// Raw value of event counter `index`.
    pub fn event_counter(&self, index: u8) -> Result<u64, SoftPmuError> {
        self.check_counter(index)?;
        Ok(self.evcntr[usize::from(index)])
    }

    /// `PMEVTYPER<index>_EL0`.
    pub fn event_type(&self, index: u8) -> Result<Pmevtyper, SoftPmuError> {
        self.check_counter(index)?;
        Ok(self.evtyper[usize::from(index)])
    }

    /// PMCCNTR_EL0.
    pub const fn cycle_counter(&self) -> u64 {
        self.ccntr
    }

    /// PMCCFILTR_EL0.
    pub const fn cycle_filter(&self) -> Pmccfiltr {
        self.ccfiltr
    }

    /// PMUSERENR_EL0, the EL0 access enables.
    pub const fn user_enables(&self) -> Pmuserenr {
        self.pmuserenr
    }

    /// The overflow point of event counter `index` under the current PMCR_EL0 and MDCR_EL2.
    pub fn event_counter_width(&self, index: u8) -> Result<CounterWidth, SoftPmuError> {
        self.check_counter(index)?;
        Ok(CounterWidth::event_counter(
            self.config.version,
            self.pmcr,
            self.partition,
            index,
        )?)
    }

    /// The overflow point of the cycle counter under the current PMCR_EL0.
    pub fn cycle_counter_width(&self) -> CounterWidth {
        CounterWidth::cycle_counter(self.pmcr)
    }

    /// Whether the overflow interrupt request is asserted.
    pub fn irq_asserted(&self) -> bool {
        let pending = self.inten & self.ovs;
        let low = self.low_range() | CounterSet::C;
        let high = self.high_range();
        (self.pmcr.e() && !(pending & low).is_empty())
            || (self.partition.hpme && !(pending & high).is_empty())
    }

    /// Checks the invariants the architecture guarantees: no state for unimplemented counters,
    /// 32-bit event counters before PMUv3p5, no RES0 or read-only bits stored, SEL in range.
    pub fn check_invariants(&self) -> Result<(), InvariantViolation> {
        let implemented = CounterSet::implemented(self.config.counters);
        for set in [self.cnten, self.inten, self.ovs] {
            if !implemented.contains(set) {
                return Err(InvariantViolation(
                    "bitmap bit set for an unimplemented counter",
                ));
            }
        }
        let n = usize::from(self.config.counters);
        if self.evcntr[n..].iter().any(|&c| c != 0) {
            return Err(InvariantViolation(
                "unimplemented event counter holds a value",
            ));
        }
        if self.evtyper[n..].iter().any(|t| t.bits() != 0) {
            return Err(InvariantViolation("unimplemented event type holds a value"));
        }
        if !self.config.version.has_long_event_counters()
            && self.evcntr.iter().any(|&c| c > u64::from(u32::MAX))
        {
            return Err(InvariantViolation("32-bit event counter above 2^32 - 1"));
        }
        let v = self.config.version;
        if self.pmcr.bits() & !Pmcr::writable_mask(v) != 0 {
            return Err(InvariantViolation("PMCR_EL0 holds non-writable bits"));
        }
        if self
            .evtyper
            .iter()
            .any(|t| t.bits() & !Pmevtyper::writable_mask(v) != 0)
        {
            return Err(InvariantViolation("PMEVTYPER holds RES0 bits"));
        }
        if self.ccfiltr.bits() & !Pmccfiltr::writable_mask(v) != 0 {
            return Err(InvariantViolation("PMCCFILTR_EL0 holds RES0 bits"));
        }
        if self.pmuserenr.bits() & !Pmuserenr::writable_mask(v) != 0 {
            return Err(InvariantViolation("PMUSERENR_EL0 holds RES0 bits"));
        }
        if self.pmselr.bits() > 31 {
            return Err(InvariantViolation("PMSELR_EL0.SEL out of range"));
        }
        if self.prescale >= 64 {
            return Err(InvariantViolation("cycle prescaler out of range"));
        }
        if self.partition.hpmn > self.config.counters {
            return Err(InvariantViolation("HPMN above N"));
        }
        Ok(())
    }

    fn check_counter(&self, index: u8) -> Result<(), SoftPmuError> {
        if index >= self.config.counters {
            return Err(NoSuchCounter {
                index,
                limit: self.config.counters,
            }
            .into());
        }
        Ok(())
    }

    /// Event counters below HPMN (owned by EL1/EL0).
    fn low_range(&self) -> CounterSet {
        CounterSet::from_bits_retain((1u64 << self.partition.hpmn) - 1)
    }

    /// Event counters from HPMN to N − 1 (owned by EL2).
    fn high_range(&self) -> CounterSet {
        let all = (1u64 << self.config.counters) - 1;
        CounterSet::from_bits_retain(all & !self.low_range().bits())
    }

    /// The bitmap bits the current context can see: at EL2/EL3 every implemented counter, at
    /// EL0/EL1 the counters below HPMN; the cycle counter always.
    fn visible(&self) -> CounterSet {
        if self.context.el <= ExceptionLevel::El1 {
            self.low_range() | CounterSet::C
        } else {
            CounterSet::implemented(self.config.counters)
        }
    }

    /// Bits of an event counter's storage: 32 before PMUv3p5, 64 after.
    fn event_storage_mask(&self) -> u64 {
        if self.config.version.has_long_event_counters() {
            u64::MAX
        } else {
            u64::from(u32::MAX)
        }
    }

    /// PMCR_EL0 bits a write can change for this configuration.
    fn pmcr_writable(&self) -> u64 {
        let mut mask = Pmcr::writable_mask(self.config.version);
        if !self.config.aarch32 {
            mask &= !(Pmcr::default().with_d(true).with_lc(true).bits());
        }
        if !self.config.export {
            mask &= !Pmcr::default().with_x(true).bits();
        }
        mask
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A way to break the state, and the violation it must be reported as.
    type Corruption = (fn(&mut SoftPmu), &'static str);

    fn fresh() -> SoftPmu {
        SoftPmu::new(SoftPmuConfig::new(PmuVersion::V3p1, 2)).unwrap()
    }

    #[test]
    fn every_broken_invariant_is_reported() {
        let corruptions: [Corruption; 11] = [
            (
                |p| p.cnten = CounterSet::P5,
                "bitmap bit set for an unimplemented counter",
            ),
            (
                |p| p.evcntr[4] = 1,
                "unimplemented event counter holds a value",
            ),
            (
                |p| p.evtyper[4] = Pmevtyper::from_bits(1),
                "unimplemented event type holds a value",
            ),
            (
                |p| p.evcntr[0] = 1 << 32,
                "32-bit event counter above 2^32 - 1",
            ),
            (
                |p| p.pmcr = Pmcr::from_bits(1 << 1),
                "PMCR_EL0 holds non-writable bits",
            ),
            (
                |p| p.evtyper[0] = Pmevtyper::from_bits(1 << 16),
                "PMEVTYPER holds RES0 bits",
            ),
            (
                |p| p.ccfiltr = Pmccfiltr::from_bits(1),
                "PMCCFILTR_EL0 holds RES0 bits",
            ),
            (
                |p| p.pmuserenr = Pmuserenr::from_bits(1 << 4),
                "PMUSERENR_EL0 holds RES0 bits",
            ),
            (
                |p| p.pmselr = Pmselr::from_bits(32),
                "PMSELR_EL0.SEL out of range",
            ),
            (|p| p.prescale = 64, "cycle prescaler out of range"),
            (|p| p.partition.hpmn = 3, "HPMN above N"),
        ];
        for (corrupt, message) in corruptions {
            let mut p = fresh();
            assert_eq!(p.check_invariants(), Ok(()));
            corrupt(&mut p);
            assert_eq!(p.check_invariants(), Err(InvariantViolation(message)));
        }
    }
}
