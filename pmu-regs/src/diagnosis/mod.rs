//! The PMU's own diagnosis: from a snapshot of its registers, why a counter does not count, why it
//! cannot be read, and why its overflow interrupt is not delivered. Every answer is a typed reason
//! naming the register and field, in the order the hardware applies its conditions.
//!
//! The Cortex-A720AE article this crate started from gives two checklists. This module follows the
//! architecture where they differ:
//!
//! - **"A counter does not increment: check PMUSERENR_EL0.EN, PMCR_EL0.E, the PMCNTENSET bit, PMCEID."**
//!   PMUSERENR_EL0 does not stop a counter: it decides whether EL0 may *access* it, and an access it
//!   refuses traps (SIGILL on Linux) instead of reading a still value. EN is also not the only grant:
//!   ER alone lets EL0 read the event counters and CR the cycle counter, which is what Linux grants.
//!   That check is [`PmuSnapshot::why_access_denied`]. The checklist also misses the counter's
//!   existence (PMCR_EL0.N), the EL2 partition (MDCR_EL2.HPMN/HPME), prohibited regions (and
//!   PMCR_EL0.DP for the cycle counter), freeze on overflow (PMCR_EL0.FZO) and, most often met, the
//!   PMEVTYPER/PMCCFILTR filter bits: [`PmuSnapshot::why_not_counting`].
//! - **"Interrupt not delivered: if PMOVSSET is set, it fired but was not delivered; else if
//!   PMINTENSET is set, the counter did not overflow; else, the interrupt controller."** The PMU
//!   requests the interrupt only when the overflow flag, the PMINTENSET_EL1 bit *and* the counter
//!   range's enable (PMCR_EL0.E, or MDCR_EL2.HPME) are all set; only then is the interrupt controller
//!   to blame. A counter whose flag and enable are both clear has simply not overflowed and would not
//!   interrupt anyway: [`PmuSnapshot::overflow_interrupt`].
//! - **"Access is controlled by the power state, the OS Lock (PMOSLAR_EL1) and the external access
//!   disable bit (PMXEVTYPER_EL0); a wrong setting raises Undefined Instruction."** These conditions
//!   gate the *external* interface (a debugger, or the memory-mapped PMU block), in this order: core
//!   power (EDPRSR.PU), the OS Double Lock, the OS Lock (OSLAR_EL1/OSLSR_EL1; there is no
//!   PMOSLAR_EL1), MDCR_EL3.EPMAD (PMXEVTYPER_EL0 is the indirect event-type register), then the
//!   Software Lock on memory-mapped writes (PMLSR/PMLAR). A blocked external access returns a bus
//!   error, not an Undefined Instruction exception; MRS/MSR are not affected by any of them.
//!
//! # Modelled and not
//! Modelled: everything [`SoftPmu`] models, which the tests hold the diagnosis to. Not modelled:
//! Debug state (counting stops while halted), FEAT_RME Realm filtering, the threshold and SVE-mode
//! filters (TH/TC, VS), MDCR_EL2.HPMFZO, the PMUv3p5/p7 cycle-counting prohibitions
//! (MDCR_EL3.SCCD/MCCD, MDCR_EL2.HCCD), MDCR_EL2/EL3.TPM traps, and PMUv3p9's per-counter EL0 access
//! (PMUSERENR_EL0.UEN with PMUACR_EL1). The snapshot states whether counting is prohibited where the
//! events happen ([`ExecContext::counting_prohibited`]) rather than deriving it from MDCR_EL3/MDCR_EL2,
//! which software below EL2 cannot read.
//!
//! ```
//! use pmu_regs::diagnosis::{AccessPath, Counter, FilterExclusion, NotCounting, PmuSnapshot};
//! use pmu_regs::soft_pmu::ExecContext;
//! use pmu_regs::{CommonEvent, CounterSet, Pmcr, Pmevtyper, PmuVersion};
//!
//! // A tool counts INST_RETIRED on counter 0 of an application, but programmed PMEVTYPER0_EL0 with
//! // U = 1 (exclude EL0) where it meant P = 1 (exclude EL1).
//! let pmcr = Pmcr::default().with_n(6).unwrap().with_e(true);
//! let mut s = PmuSnapshot::new(PmuVersion::V3p1, pmcr, ExecContext::USER, AccessPath::El1);
//! s.pmcntenset = CounterSet::P0;
//! s.pmevtyper[0] = Pmevtyper::for_event(CommonEvent::InstRetired.code(), PmuVersion::V3p1)
//!     .unwrap()
//!     .with_u(true);
//! let reasons = s.why_not_counting(Counter::Event(0));
//! assert_eq!(
//!     reasons.first(),
//!     Some(NotCounting::Filtered {
//!         counter: Counter::Event(0),
//!         exclusion: FilterExclusion::NonSecureEl0 { u: true, nsu: false },
//!     })
//! );
//! assert_eq!(reasons.len(), 1);
//!
//! s.pmevtyper[0] = s.pmevtyper[0].with_u(false).with_p(true);
//! assert!(s.why_not_counting(Counter::Event(0)).is_empty()); // it counts
//! ```

mod list;
mod reasons;

pub use list::{Reasons, CAPACITY};
pub use reasons::{
    AccessDenied, AccessKind, Counter, FilterExclusion, NoInterrupt, NotCounting, OverflowInterrupt,
};

use crate::event::CommonEvent;
use crate::overflow::El2Partition;
use crate::regs::counter_set::CounterSet;
use crate::regs::edprsr::Edprsr;
use crate::regs::osdlr::Osdlr;
use crate::regs::oslsr::Oslsr;
use crate::regs::pmccfiltr::Pmccfiltr;
use crate::regs::pmceid::CommonEventSet;
use crate::regs::pmcr::Pmcr;
use crate::regs::pmevtyper::Pmevtyper;
use crate::regs::pmlsr::Pmlsr;
use crate::regs::pmuserenr::Pmuserenr;
use crate::soft_pmu::context::Filter;
use crate::soft_pmu::{ExecContext, SoftPmu};
use crate::version::PmuVersion;

/// Where the registers are accessed from, which decides the access checks
/// ([`PmuSnapshot::why_access_denied`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AccessPath {
    /// MRS/MSR at EL0: PMUSERENR_EL0 decides; counters reserved for EL2 trap.
    El0,
    /// MRS/MSR at EL1: counters reserved for EL2 (at or above MDCR_EL2.HPMN) trap to EL2.
    El1,
    /// MRS/MSR at EL2 or EL3: every counter.
    El2OrEl3,
    /// The external debug interface (a debugger): core power, the OS Double Lock, the OS Lock and
    /// external PMU access (EPMAD) decide.
    ExternalDebug,
    /// The memory-mapped PMU block: as [`AccessPath::ExternalDebug`], and the Software Lock (PMLSR)
    /// makes writes ignored.
    MemoryMapped,
}

/// The registers the diagnosis needs, with the context the counters are measuring and where they are
/// accessed from.
///
/// Fill it from register reads (or [`PmuSnapshot::from_soft_pmu`]). Values that cannot be read from
/// where the reader runs keep the defaults [`PmuSnapshot::new`] gives them, which are the ones that
/// stop nothing.
///
/// ```
/// use pmu_regs::diagnosis::{AccessPath, Counter, PmuSnapshot};
/// use pmu_regs::soft_pmu::{ExecContext, SoftPmu, SoftPmuConfig};
/// use pmu_regs::encoding::PmuRegister;
/// use pmu_regs::PmuVersion;
///
/// let mut pmu = SoftPmu::new(SoftPmuConfig::new(PmuVersion::V3p5, 4)).unwrap();
/// pmu.write(PmuRegister::Pmcntenset, 1 << 31).unwrap();
/// pmu.write(PmuRegister::Pmcr, 1).unwrap();
/// let s = PmuSnapshot::from_soft_pmu(&pmu, AccessPath::El1);
/// assert!(s.why_not_counting(Counter::Cycle).is_empty());
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct PmuSnapshot {
    /// The PMU version (ID_AA64DFR0_EL1.PMUVer).
    pub version: PmuVersion,
    /// PMCR_EL0 with N the number of event counters implemented, as read at EL2 or EL3 (at EL0/EL1 with
    /// EL2 in use N reads as MDCR_EL2.HPMN: then give [`PmuSnapshot::partition`] HPMN = N too).
    pub pmcr: Pmcr,
    /// MDCR_EL2's PMU partition: HPMN, HPME, HLP ([`El2Partition::unpartitioned`] without EL2).
    pub partition: El2Partition,
    /// PMCNTENSET_EL0.
    pub pmcntenset: CounterSet,
    /// PMINTENSET_EL1.
    pub pmintenset: CounterSet,
    /// PMOVSSET_EL0.
    pub pmovsset: CounterSet,
    /// PMCEID0/1_EL0, with their high halves (PMCEID2/3 externally).
    pub pmceid: CommonEventSet,
    /// `PMEVTYPER<n>_EL0` for n = 0..=30 (entries at or above N are ignored).
    pub pmevtyper: [Pmevtyper; 31],
    /// PMCCFILTR_EL0.
    pub pmccfiltr: Pmccfiltr,
    /// PMUSERENR_EL0.
    pub pmuserenr: Pmuserenr,
    /// OSLSR_EL1 (the OS Lock; EDPRSR.OSLK when [`PmuSnapshot::edprsr`] is given).
    pub oslsr: Oslsr,
    /// OSDLR_EL1 (the OS Double Lock request; EDPRSR.DLK when [`PmuSnapshot::edprsr`] is given).
    pub osdlr: Osdlr,
    /// EDPRSR, when read through the external debug interface: the power, Double Lock, OS Lock and EPMAD
    /// status the external PMU interface depends on.
    pub edprsr: Option<Edprsr>,
    /// PMLSR, when read through the memory-mapped interface.
    pub pmlsr: Option<Pmlsr>,
    /// Where the events to be counted happen: exception level, security state, and whether event
    /// counting is prohibited there.
    pub measured: ExecContext,
    /// Where the counters are accessed from.
    pub access: AccessPath,
}

impl PmuSnapshot {
    /// A snapshot of a PMU of `version` with this PMCR_EL0 (N = the counters implemented), measuring
    /// `measured` and accessed from `access`. The rest starts as the values that stop nothing but the
    /// enables: no EL2 partition, nothing enabled, no overflow, every defined common event implemented
    /// (0x4000 range from PMUv3p1), filters and PMUSERENR_EL0 zero, the OS Lock implemented and
    /// unlocked, no Double Lock, no EDPRSR or PMLSR read.
    pub fn new(version: PmuVersion, pmcr: Pmcr, measured: ExecContext, access: AccessPath) -> Self {
        Self {
            version,
            pmcr,
            partition: El2Partition::unpartitioned(pmcr.n()),
            pmcntenset: CounterSet::empty(),
            pmintenset: CounterSet::empty(),
            pmovsset: CounterSet::empty(),
            pmceid: CommonEventSet::all_defined().for_version(version),
            pmevtyper: [Pmevtyper::default(); 31],
            pmccfiltr: Pmccfiltr::default(),
            pmuserenr: Pmuserenr::default(),
            oslsr: Oslsr::implemented(false),
            osdlr: Osdlr::default(),
            edprsr: None,
            pmlsr: None,
            measured,
            access,
        }
    }

    /// The snapshot of a software PMU's registers, measuring the context it executes in.
    pub fn from_soft_pmu(pmu: &SoftPmu, access: AccessPath) -> Self {
        let config = pmu.config();
        let counters = config.counters;
        // PMCR_EL0 as EL2 reads it: N is every implemented counter.
        let pmcr = Pmcr::from_bits((pmu.pmcr().bits() & !(0x1F << 11)) | u64::from(counters) << 11);
        let mut s = Self::new(pmu.version(), pmcr, pmu.context(), access);
        s.partition = pmu.el2_partition();
        s.pmcntenset = pmu.counter_enables();
        s.pmintenset = pmu.interrupt_enables();
        s.pmovsset = pmu.overflow_flags();
        s.pmceid = config.common_events.for_version(pmu.version());
        for n in 0..counters {
            if let Ok(t) = pmu.event_type(n) {
                s.pmevtyper[usize::from(n)] = t;
            }
        }
        s.pmccfiltr = pmu.cycle_filter();
        s.pmuserenr = pmu.user_enables();
        s
    }

    /// The number of event counters implemented, PMCR_EL0.N.
    pub const fn counters(&self) -> u8 {
        self.pmcr.n()
    }

    /// MDCR_EL2.HPMN, at most N.
    fn hpmn(&self) -> u8 {
        self.partition.hpmn.min(self.counters())
    }

    /// The counter's bit, or the reason it has none.
    fn exists(&self, counter: Counter) -> Result<CounterSet, (u8, u8)> {
        match counter {
            Counter::Event(n) if n >= self.counters() || n > 30 => Err((n, self.counters())),
            _ => counter.bit().ok_or((0, self.counters())),
        }
    }

    /// Whether `counter` is an event counter reserved for EL2 (at or above HPMN).
    fn reserved_for_el2(&self, counter: Counter) -> Option<u8> {
        match counter {
            Counter::Event(n) if n >= self.hpmn() => Some(n),
            _ => None,
        }
    }

    /// Why `counter` does not count the events of the context measured; empty when it counts them.
    ///
    /// The conditions, in the order the hardware applies them: the counter exists (n < PMCR_EL0.N);
    /// its range is enabled (PMCR_EL0.E, or MDCR_EL2.HPME at or above HPMN); its PMCNTENSET_EL0 bit;
    /// event counting is not prohibited there (for the cycle counter, only with PMCR_EL0.DP); no
    /// freeze on overflow (PMCR_EL0.FZO); the PMEVTYPER/PMCCFILTR filter admits the context; and,
    /// for an event counter, that its event can happen: a common event PMCEID marks implemented,
    /// not SW_INCR (which counts PMSWINC_EL0 writes) and not CHAIN (which counts overflows). Every
    /// condition that fails is reported, not just the first. The cycle counter still counts slowly
    /// with PMCR_EL0.D (every 64th cycle), which is not a reason.
    ///
    /// ```
    /// use pmu_regs::diagnosis::{AccessPath, Counter, NotCounting, PmuSnapshot};
    /// use pmu_regs::soft_pmu::ExecContext;
    /// use pmu_regs::{CommonEventSet, CounterSet, Pmcr, Pmevtyper, PmuVersion};
    ///
    /// // A Cortex-A720 does not implement LD_RETIRED (0x06).
    /// let pmcr = Pmcr::default().with_n(6).unwrap().with_e(true);
    /// let mut s = PmuSnapshot::new(PmuVersion::V3p7, pmcr, ExecContext::USER, AccessPath::El1);
    /// s.pmcntenset = CounterSet::P1;
    /// s.pmceid = CommonEventSet::all_defined().without_event(0x06);
    /// s.pmevtyper[1] = Pmevtyper::for_event(0x06, PmuVersion::V3p7).unwrap();
    /// let reasons = s.why_not_counting(Counter::Event(1));
    /// assert!(matches!(reasons.first(), Some(NotCounting::EventNotImplemented { event: 0x06, .. })));
    /// assert_eq!(
    ///     s.why_not_counting(Counter::Event(7)).first(),
    ///     Some(NotCounting::NoSuchCounter { index: 7, implemented: 6 })
    /// );
    /// ```
    pub fn why_not_counting(&self, counter: Counter) -> Reasons<NotCounting> {
        let mut reasons = Reasons::new();
        let bit = match self.exists(counter) {
            Ok(bit) => bit,
            Err((index, implemented)) => {
                reasons.push(NotCounting::NoSuchCounter { index, implemented });
                return reasons;
            }
        };
        let hpmn = self.hpmn();
        match self.reserved_for_el2(counter) {
            Some(index) if !self.partition.hpme => {
                reasons.push(NotCounting::El2CountersDisabled { index, hpmn })
            }
            Some(_) => {}
            None if !self.pmcr.e() => reasons.push(NotCounting::PmuDisabled),
            None => {}
        }
        if !self.pmcntenset.contains(bit) {
            reasons.push(NotCounting::CounterDisabled(counter));
        }
        if self.measured.counting_prohibited {
            match counter {
                Counter::Event(_) => reasons.push(NotCounting::CountingProhibited),
                Counter::Cycle if self.pmcr.dp() => {
                    reasons.push(NotCounting::CycleCounterDisabledByDp)
                }
                Counter::Cycle => {}
            }
        }
        if let Counter::Event(n) = counter {
            let low = CounterSet::from_bits_retain((1u64 << hpmn) - 1);
            let overflowed = self.pmovsset & low;
            if self.version.has_freeze_on_overflow()
                && n < hpmn
                && self.pmcr.fzo()
                && !overflowed.is_empty()
            {
                reasons.push(NotCounting::FrozenOnOverflow { overflowed });
            }
        }
        let filter = match counter {
            Counter::Event(n) => Filter::from(self.pmevtyper[usize::from(n)]),
            Counter::Cycle => Filter::from(self.pmccfiltr),
        };
        if let Some(exclusion) = filter.exclusion(self.measured) {
            reasons.push(NotCounting::Filtered { counter, exclusion });
        }
        if let Counter::Event(index) = counter {
            let event = self.pmevtyper[usize::from(index)].evt_count_for(self.version);
            if let Ok(bit) = CommonEventSet::bit_of(event) {
                if !self.pmceid.for_version(self.version).contains(event) {
                    reasons.push(NotCounting::EventNotImplemented { event, bit });
                }
            }
            if event == CommonEvent::SwIncr.code() {
                reasons.push(NotCounting::SoftwareIncrementOnly { index });
            } else if event == CommonEvent::Chain.code() {
                if index % 2 == 0 {
                    reasons.push(NotCounting::ChainOnEvenCounter { index });
                } else {
                    reasons.push(NotCounting::ChainCountsOverflows { index });
                }
            }
        }
        reasons
    }

    /// Why `counter` cannot be read or written (`kind`) from [`PmuSnapshot::access`]; empty when the
    /// access works.
    ///
    /// - From EL0: the counter exists, is not reserved for EL2, and PMUSERENR_EL0 grants the access (EN;
    ///   or ER for event-counter reads, CR for cycle-counter reads).
    /// - From EL1: the counter exists and is not reserved for EL2. From EL2 or EL3: it exists.
    /// - Externally, the Arm external access conditions in order: core power (EDPRSR.PU), the OS
    ///   Double Lock, the OS Lock, external PMU access (EDPRSR.EPMAD); then, for memory-mapped writes,
    ///   the Software Lock (PMLSR). Without EDPRSR the power and EPMAD states are unknown and
    ///   OSDLR_EL1/OSLSR_EL1 stand for the locks. After a power-down or Double Lock reason nothing
    ///   else is reported: EDPRSR's other bits are UNKNOWN then.
    ///
    /// ```
    /// use pmu_regs::diagnosis::{AccessDenied, AccessKind, AccessPath, Counter, PmuSnapshot};
    /// use pmu_regs::soft_pmu::ExecContext;
    /// use pmu_regs::{Edprsr, Pmcr, PmuVersion, Pmuserenr};
    ///
    /// let pmcr = Pmcr::default().with_n(6).unwrap();
    /// // Linux with kernel.perf_user_access = 1 grants ER | CR: reads work, writes trap.
    /// let mut s = PmuSnapshot::new(PmuVersion::V3p1, pmcr, ExecContext::USER, AccessPath::El0);
    /// s.pmuserenr = Pmuserenr::default().with_er(true).with_cr(true);
    /// assert!(s.why_access_denied(Counter::Event(2), AccessKind::Read).is_empty());
    /// assert_eq!(
    ///     s.why_access_denied(Counter::Cycle, AccessKind::Write).first(),
    ///     Some(AccessDenied::UserAccessDisabled { counter: Counter::Cycle, kind: AccessKind::Write })
    /// );
    ///
    /// // A debugger after a Cold reset: the core is up, but the OS Lock is still locked.
    /// s.access = AccessPath::ExternalDebug;
    /// s.edprsr = Some(Edprsr::from_u32(0x21)); // PU, OSLK
    /// assert_eq!(
    ///     s.why_access_denied(Counter::Event(2), AccessKind::Read).first(),
    ///     Some(AccessDenied::OsLocked)
    /// );
    /// ```
    pub fn why_access_denied(&self, counter: Counter, kind: AccessKind) -> Reasons<AccessDenied> {
        let mut reasons = Reasons::new();
        if let Err((index, implemented)) = self.exists(counter) {
            reasons.push(AccessDenied::NoSuchCounter { index, implemented });
            return reasons;
        }
        let reserved = self
            .reserved_for_el2(counter)
            .map(|index| AccessDenied::ReservedForEl2 {
                index,
                hpmn: self.hpmn(),
            });
        match self.access {
            AccessPath::El0 => {
                if let Some(r) = reserved {
                    reasons.push(r);
                }
                let u = self.pmuserenr;
                let granted = u.en()
                    || (kind == AccessKind::Read
                        && match counter {
                            Counter::Event(_) => u.er(),
                            Counter::Cycle => u.cr(),
                        });
                if !granted {
                    reasons.push(AccessDenied::UserAccessDisabled { counter, kind });
                }
            }
            AccessPath::El1 => {
                if let Some(r) = reserved {
                    reasons.push(r);
                }
            }
            AccessPath::El2OrEl3 => {}
            AccessPath::ExternalDebug | AccessPath::MemoryMapped => {
                let (powered, double_locked, os_locked, epmad) = match self.edprsr {
                    Some(e) => (e.pu(), e.dlk(), e.oslk(), e.epmad()),
                    None => (true, self.osdlr.dlk(), self.oslsr.oslk(), false),
                };
                if !powered {
                    reasons.push(AccessDenied::CorePoweredDown);
                    return reasons;
                }
                if double_locked {
                    reasons.push(AccessDenied::DoubleLocked);
                    return reasons;
                }
                if os_locked {
                    reasons.push(AccessDenied::OsLocked);
                }
                if epmad {
                    reasons.push(AccessDenied::ExternalAccessDisabled);
                }
                let soft_locked = self.pmlsr.is_some_and(Pmlsr::writes_ignored);
                if self.access == AccessPath::MemoryMapped
                    && kind == AccessKind::Write
                    && soft_locked
                {
                    reasons.push(AccessDenied::SoftwareLocked);
                }
            }
        }
        reasons
    }

    /// Whether the PMU requests an overflow interrupt for `counter`, and if not, why.
    ///
    /// The PMU requests it when the counter's PMOVSSET_EL0 flag, its PMINTENSET_EL1 bit and its range's
    /// enable (PMCR_EL0.E; MDCR_EL2.HPME at or above HPMN) are all set. The reasons come in that
    /// order; [`OverflowInterrupt::Requested`] leaves the interrupt controller.
    ///
    /// ```
    /// use pmu_regs::diagnosis::{AccessPath, Counter, NoInterrupt, OverflowInterrupt, PmuSnapshot};
    /// use pmu_regs::soft_pmu::ExecContext;
    /// use pmu_regs::{CounterSet, Pmcr, PmuVersion};
    ///
    /// let pmcr = Pmcr::default().with_n(6).unwrap().with_e(true);
    /// let mut s = PmuSnapshot::new(PmuVersion::V3p1, pmcr, ExecContext::KERNEL, AccessPath::El1);
    /// s.pmovsset = CounterSet::P1; // overflowed, interrupt not enabled
    /// match s.overflow_interrupt(Counter::Event(1)) {
    ///     OverflowInterrupt::NotRequested(r) => {
    ///         assert_eq!(r.first(), Some(NoInterrupt::InterruptDisabled(Counter::Event(1))))
    ///     }
    ///     OverflowInterrupt::Requested => unreachable!(),
    /// }
    /// s.pmintenset = CounterSet::P1;
    /// assert_eq!(s.overflow_interrupt(Counter::Event(1)), OverflowInterrupt::Requested);
    /// ```
    pub fn overflow_interrupt(&self, counter: Counter) -> OverflowInterrupt {
        let mut reasons = Reasons::new();
        let bit = match self.exists(counter) {
            Ok(bit) => bit,
            Err((index, implemented)) => {
                reasons.push(NoInterrupt::NoSuchCounter { index, implemented });
                return OverflowInterrupt::NotRequested(reasons);
            }
        };
        if !self.pmovsset.contains(bit) {
            reasons.push(NoInterrupt::NotOverflowed(counter));
        }
        if !self.pmintenset.contains(bit) {
            reasons.push(NoInterrupt::InterruptDisabled(counter));
        }
        match self.reserved_for_el2(counter) {
            Some(index) if !self.partition.hpme => reasons.push(NoInterrupt::El2CountersDisabled {
                index,
                hpmn: self.hpmn(),
            }),
            Some(_) => {}
            None if !self.pmcr.e() => reasons.push(NoInterrupt::PmuDisabled),
            None => {}
        }
        if reasons.is_empty() {
            OverflowInterrupt::Requested
        } else {
            OverflowInterrupt::NotRequested(reasons)
        }
    }

    /// The three answers for `counter` at once: counting, reading (from [`PmuSnapshot::access`]) and the
    /// overflow interrupt.
    ///
    /// ```
    /// use pmu_regs::diagnosis::{AccessPath, Counter, PmuSnapshot};
    /// use pmu_regs::soft_pmu::ExecContext;
    /// use pmu_regs::{Pmcr, PmuVersion};
    ///
    /// let pmcr = Pmcr::default().with_n(2).unwrap();
    /// let s = PmuSnapshot::new(PmuVersion::V3p1, pmcr, ExecContext::USER, AccessPath::El0);
    /// let d = s.diagnose(Counter::Cycle);
    /// assert_eq!(d.counting.len(), 2); // PMCR_EL0.E and PMCNTENSET_EL0.C
    /// assert_eq!(d.reading.len(), 1); // PMUSERENR_EL0 grants nothing
    /// assert!(!d.to_string().is_empty());
    /// ```
    pub fn diagnose(&self, counter: Counter) -> CounterDiagnosis {
        CounterDiagnosis {
            counter,
            counting: self.why_not_counting(counter),
            reading: self.why_access_denied(counter, AccessKind::Read),
            interrupt: self.overflow_interrupt(counter),
        }
    }
}

/// Everything the diagnosis says about one counter ([`PmuSnapshot::diagnose`]). `Display` writes one
/// line per question.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct CounterDiagnosis {
    /// The counter.
    pub counter: Counter,
    /// Why it does not count (empty: it counts).
    pub counting: Reasons<NotCounting>,
    /// Why it cannot be read from where the snapshot was taken (empty: it can).
    pub reading: Reasons<AccessDenied>,
    /// Whether its overflow interrupt is requested.
    pub interrupt: OverflowInterrupt,
}

impl core::fmt::Display for CounterDiagnosis {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let counter = self.counter;
        if self.counting.is_empty() {
            writeln!(f, "{counter} counts")?;
        } else {
            writeln!(f, "{counter} does not count: {}", self.counting)?;
        }
        if self.reading.is_empty() {
            writeln!(f, "{counter} can be read")?;
        } else {
            writeln!(f, "{counter} cannot be read: {}", self.reading)?;
        }
        write!(f, "overflow interrupt: {}", self.interrupt)
    }
}

#[cfg(test)]
mod tests;
