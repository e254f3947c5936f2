//! The typed reasons of the diagnosis, each naming the register and field it comes from.

use core::fmt;

use super::list::Reasons;
use crate::regs::counter_set::CounterSet;
use crate::regs::pmceid::PmceidBit;

/// A counter of the PMU: an event counter or the cycle counter.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Counter {
    /// `PMEVCNTR<n>_EL0`, programmed through `PMEVTYPER<n>_EL0`.
    Event(u8),
    /// PMCCNTR_EL0, filtered by PMCCFILTR_EL0; bit 31 of the counter bitmaps.
    Cycle,
}

impl Counter {
    /// Its bit in PMCNTENSET/PMINTENSET/PMOVSSET (bit n, or bit 31 for the cycle counter); `None`
    /// for an index above 30.
    pub const fn bit(self) -> Option<CounterSet> {
        match self {
            Counter::Cycle => Some(CounterSet::C),
            Counter::Event(n) if n <= 30 => Some(CounterSet::from_bits_retain(1 << n)),
            Counter::Event(_) => None,
        }
    }
}

impl fmt::Display for Counter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Counter::Event(n) => write!(f, "PMEVCNTR{n}_EL0"),
            Counter::Cycle => f.write_str("PMCCNTR_EL0"),
        }
    }
}

/// Reading or writing a counter.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AccessKind {
    /// MRS, or an external read.
    Read,
    /// MSR, or an external write.
    Write,
}

/// The filter rule of `PMEVTYPER<n>_EL0` / PMCCFILTR_EL0 (bits `[31:24]`) that excludes the exception
/// level and security state measured. The bits are the same in both registers.
///
/// The rules: Secure EL0/EL1 count unless U/P is 1; Non-secure EL0/EL1 count when NSU equals U / NSK
/// equals P (so `U = 1` alone, Linux's `exclude_user`, stops Non-secure EL0); EL2 counts only when
/// NSH is 1 (Non-secure) or when SH differs from NSH (Secure EL2); EL3 counts when M equals P. Without
/// EL3, NSK, NSU and M are RES0; without EL2, NSH; without FEAT_SEL2, SH; their zero gives the rules
/// for those PEs. Realm states (FEAT_RME: RLK, RLU, RLH) are not modelled.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FilterExclusion {
    /// U (bit 30) is 1: Secure EL0 is not counted.
    SecureEl0,
    /// NSU (bit 28) differs from U (bit 30): Non-secure EL0 is not counted.
    NonSecureEl0 {
        /// U, bit 30.
        u: bool,
        /// NSU, bit 28.
        nsu: bool,
    },
    /// P (bit 31) is 1: Secure EL1 is not counted.
    SecureEl1,
    /// NSK (bit 29) differs from P (bit 31): Non-secure EL1 is not counted.
    NonSecureEl1 {
        /// P, bit 31.
        p: bool,
        /// NSK, bit 29.
        nsk: bool,
    },
    /// NSH (bit 27) is 0: Non-secure EL2 is not counted (NSH includes rather than excludes).
    NonSecureEl2,
    /// SH (bit 24) equals NSH (bit 27): Secure EL2 is not counted.
    SecureEl2 {
        /// NSH, bit 27.
        nsh: bool,
        /// SH, bit 24.
        sh: bool,
    },
    /// M (bit 26) differs from P (bit 31): EL3 is not counted.
    El3 {
        /// P, bit 31.
        p: bool,
        /// M, bit 26.
        m: bool,
    },
}

impl fmt::Display for FilterExclusion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let b = |v: bool| u8::from(v);
        match *self {
            FilterExclusion::SecureEl0 => f.write_str("U (bit 30) is 1, so Secure EL0 is not counted"),
            FilterExclusion::NonSecureEl0 { u, nsu } => write!(
                f,
                "Non-secure EL0 is counted only when NSU (bit 28) equals U (bit 30), and U = {}, NSU = {}",
                b(u),
                b(nsu)
            ),
            FilterExclusion::SecureEl1 => f.write_str("P (bit 31) is 1, so Secure EL1 is not counted"),
            FilterExclusion::NonSecureEl1 { p, nsk } => write!(
                f,
                "Non-secure EL1 is counted only when NSK (bit 29) equals P (bit 31), and P = {}, NSK = {}",
                b(p),
                b(nsk)
            ),
            FilterExclusion::NonSecureEl2 => {
                f.write_str("NSH (bit 27) is 0, and EL2 is counted only when it is 1")
            }
            FilterExclusion::SecureEl2 { nsh, sh } => write!(
                f,
                "Secure EL2 is counted only when SH (bit 24) differs from NSH (bit 27), and NSH = {}, SH = {}",
                b(nsh),
                b(sh)
            ),
            FilterExclusion::El3 { p, m } => write!(
                f,
                "EL3 is counted only when M (bit 26) equals P (bit 31), and P = {}, M = {}",
                b(p),
                b(m)
            ),
        }
    }
}

/// Why a counter does not count the events of the context measured, in the order the hardware
/// applies its conditions (the Arm ARM's `CountPMUEvents()`: enables, prohibition, freezing, then
/// filtering; then what the event itself is).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum NotCounting {
    /// The event counter does not exist: its index is not below PMCR_EL0.N (bits `[15:11]`; PMCFGR.N
    /// externally). Nothing else is checked.
    NoSuchCounter {
        /// The counter asked about.
        index: u8,
        /// PMCR_EL0.N, the number of event counters.
        implemented: u8,
    },
    /// PMCR_EL0.E (bit 0) is 0: the cycle counter and the event counters below MDCR_EL2.HPMN are disabled.
    PmuDisabled,
    /// MDCR_EL2.HPME (bit 7) is 0: the counter is at or above MDCR_EL2.HPMN (bits `[4:0]`), reserved for
    /// EL2, and enabled by HPME rather than PMCR_EL0.E.
    El2CountersDisabled {
        /// The counter asked about.
        index: u8,
        /// MDCR_EL2.HPMN.
        hpmn: u8,
    },
    /// The counter's PMCNTENSET_EL0 bit (n, or 31 for the cycle counter) is 0.
    CounterDisabled(Counter),
    /// Event counting is prohibited where the events happen (Secure state with MDCR_EL3.SPME = 0, and
    /// MPMX = 0 from PMUv3p7; EL3 with MDCR_EL3.MPMX = 1; EL2 with MDCR_EL2.HPMD = 1 from PMUv3p1), so
    /// the event counters stop there. The cycle counter does not, unless PMCR_EL0.DP is set.
    CountingProhibited,
    /// PMCR_EL0.DP (bit 5) is 1 and event counting is prohibited where the cycles happen, so the cycle
    /// counter stops too.
    CycleCounterDisabledByDp,
    /// PMCR_EL0.FZO (bit 9, PMUv3p7) is 1 and overflow flags of counters below HPMN are set in
    /// PMOVSSET_EL0: those counters are frozen until the flags are cleared (write PMOVSCLR_EL0).
    FrozenOnOverflow {
        /// The overflow flags that freeze the counter.
        overflowed: CounterSet,
    },
    /// The filter bits of `PMEVTYPER<n>_EL0` (PMCCFILTR_EL0 for the cycle counter) exclude the
    /// exception level and security state measured.
    Filtered {
        /// The counter whose filter excludes.
        counter: Counter,
        /// The rule that excludes.
        exclusion: FilterExclusion,
    },
    /// `PMEVTYPER<n>_EL0`.evtCount names a common event the PE does not implement: its PMCEID0/1_EL0
    /// bit (bits `[63:32]` for 0x4000–0x403F) is 0, so the event never occurs.
    EventNotImplemented {
        /// The event number programmed.
        event: u16,
        /// Where PMCEID describes it.
        bit: PmceidBit,
    },
    /// evtCount is SW_INCR (0x00): the counter counts only PMSWINC_EL0 writes naming it, never an event
    /// of the workload.
    SoftwareIncrementOnly {
        /// The counter asked about.
        index: u8,
    },
    /// evtCount is CHAIN (0x1E) on an even counter, which counts nothing: CHAIN belongs on the odd
    /// counter of a pair.
    ChainOnEvenCounter {
        /// The counter asked about.
        index: u8,
    },
    /// evtCount is CHAIN (0x1E) on odd counter n: it counts the overflows of counter n − 1, not events.
    ChainCountsOverflows {
        /// The counter asked about.
        index: u8,
    },
}

impl fmt::Display for NotCounting {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            NotCounting::NoSuchCounter { index, implemented } => write!(
                f,
                "event counter {index} does not exist: PMCR_EL0.N is {implemented}"
            ),
            NotCounting::PmuDisabled => f.write_str(
                "PMCR_EL0.E (bit 0) is 0: the PMU's counters are disabled (set E)",
            ),
            NotCounting::El2CountersDisabled { index, hpmn } => write!(
                f,
                "event counter {index} is reserved for EL2 (MDCR_EL2.HPMN is {hpmn}) and MDCR_EL2.HPME (bit 7) is 0"
            ),
            NotCounting::CounterDisabled(counter) => {
                let bit = match counter {
                    Counter::Event(n) => n,
                    Counter::Cycle => 31,
                };
                write!(f, "PMCNTENSET_EL0 bit {bit} is 0: {counter} is not enabled")
            }
            NotCounting::CountingProhibited => f.write_str(
                "event counting is prohibited where the events happen (MDCR_EL3.SPME/MPMX, MDCR_EL2.HPMD)",
            ),
            NotCounting::CycleCounterDisabledByDp => f.write_str(
                "PMCR_EL0.DP (bit 5) is 1 and event counting is prohibited there, so the cycle counter stops",
            ),
            NotCounting::FrozenOnOverflow { overflowed } => write!(
                f,
                "PMCR_EL0.FZO (bit 9) is 1 and PMOVSSET_EL0 holds overflow flags {:#x}: the counters below HPMN are frozen until they are cleared",
                overflowed.bits()
            ),
            NotCounting::Filtered { counter, exclusion } => match counter {
                Counter::Event(n) => write!(f, "PMEVTYPER{n}_EL0 filters the context out: {exclusion}"),
                Counter::Cycle => write!(f, "PMCCFILTR_EL0 filters the context out: {exclusion}"),
            },
            NotCounting::EventNotImplemented { event, bit } => write!(
                f,
                "event {event:#06x} is not implemented: PMCEID{}_EL0 bit {} is 0",
                bit.register, bit.bit
            ),
            NotCounting::SoftwareIncrementOnly { index } => write!(
                f,
                "event counter {index} counts SW_INCR (0x00): only writes to PMSWINC_EL0 increment it"
            ),
            NotCounting::ChainOnEvenCounter { index } => write!(
                f,
                "event counter {index} is even and counts CHAIN (0x1E), which counts only on an odd counter"
            ),
            NotCounting::ChainCountsOverflows { index } => write!(
                f,
                "event counter {index} counts CHAIN (0x1E): it counts the overflows of counter {}, not events",
                index.wrapping_sub(1)
            ),
        }
    }
}

/// Why a counter cannot be read or written from where the snapshot says the access comes from
/// ([`AccessPath`](super::AccessPath)), in the order the architecture checks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum AccessDenied {
    /// The event counter does not exist (index not below PMCR_EL0.N): MRS/MSR is UNDEFINED, an external
    /// access RAZ/WI.
    NoSuchCounter {
        /// The counter asked about.
        index: u8,
        /// PMCR_EL0.N.
        implemented: u8,
    },
    /// EL0: PMUSERENR_EL0 does not grant the access. EN (bit 0) grants everything; without it ER (bit 3)
    /// grants event-counter reads and CR (bit 2) cycle-counter reads, and no bit grants writes. The
    /// instruction traps to EL1 (to EL2 when HCR_EL2.TGE is 1), which Linux reports as SIGILL.
    UserAccessDisabled {
        /// The counter asked about.
        counter: Counter,
        /// Read or write.
        kind: AccessKind,
    },
    /// EL0/EL1: the counter is at or above MDCR_EL2.HPMN, reserved for EL2: the access traps to EL2 and
    /// its bits in the counter bitmaps read as zero.
    ReservedForEl2 {
        /// The counter asked about.
        index: u8,
        /// MDCR_EL2.HPMN.
        hpmn: u8,
    },
    /// External: EDPRSR.PU (bit 0) is 0, the core power domain is off; the access returns an error.
    CorePoweredDown,
    /// External: the OS Double Lock is in force (EDPRSR.DLK, bit 6; OSDLR_EL1.DLK, bit 0, when no
    /// EDPRSR was read); the access returns an error.
    DoubleLocked,
    /// External: the OS Lock is locked (EDPRSR.OSLK, bit 5 = OSLSR_EL1.OSLK, bit 1); the access returns
    /// an error. A Cold reset locks it; software unlocks it by writing 0 to OSLAR_EL1.
    OsLocked,
    /// External: EDPRSR.EPMAD (bit 9) is 1, `AllowExternalPMUAccess()` is false (MDCR_EL3.EPMAD or the
    /// authentication interface); the access returns an error and sets EDPRSR.SPMAD.
    ExternalAccessDisabled,
    /// Memory-mapped writes: the Software Lock is locked (PMLSR.SLK, bit 1, with SLI): the write is
    /// ignored. Unlock it by writing 0xC5ACCE55 to PMLAR.
    SoftwareLocked,
}

impl fmt::Display for AccessDenied {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            AccessDenied::NoSuchCounter { index, implemented } => write!(
                f,
                "event counter {index} does not exist: PMCR_EL0.N is {implemented}"
            ),
            AccessDenied::UserAccessDisabled { counter, kind } => {
                let grant = match (counter, kind) {
                    (Counter::Event(_), AccessKind::Read) => "EN (bit 0) or ER (bit 3)",
                    (Counter::Cycle, AccessKind::Read) => "EN (bit 0) or CR (bit 2)",
                    (_, AccessKind::Write) => "EN (bit 0)",
                };
                let verb = match kind {
                    AccessKind::Read => "read",
                    AccessKind::Write => "write",
                };
                write!(
                    f,
                    "PMUSERENR_EL0 does not let EL0 {verb} {counter}: it needs {grant}; the access traps (SIGILL on Linux)"
                )
            }
            AccessDenied::ReservedForEl2 { index, hpmn } => write!(
                f,
                "event counter {index} is reserved for EL2 (MDCR_EL2.HPMN is {hpmn}): EL0 and EL1 accesses trap to EL2"
            ),
            AccessDenied::CorePoweredDown => {
                f.write_str("EDPRSR.PU (bit 0) is 0: the core is powered down; external accesses return an error")
            }
            AccessDenied::DoubleLocked => f.write_str(
                "the OS Double Lock is in force (EDPRSR.DLK, OSDLR_EL1.DLK); external accesses return an error",
            ),
            AccessDenied::OsLocked => f.write_str(
                "the OS Lock is locked (OSLSR_EL1.OSLK, EDPRSR.OSLK); external accesses return an error until 0 is written to OSLAR_EL1",
            ),
            AccessDenied::ExternalAccessDisabled => f.write_str(
                "EDPRSR.EPMAD (bit 9) is 1: external PMU access is disabled (MDCR_EL3.EPMAD or the authentication interface)",
            ),
            AccessDenied::SoftwareLocked => f.write_str(
                "PMLSR.SLK (bit 1) is 1: memory-mapped writes are ignored until 0xC5ACCE55 is written to PMLAR",
            ),
        }
    }
}

/// Why the PMU does not request an overflow interrupt for a counter.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum NoInterrupt {
    /// The event counter does not exist (index not below PMCR_EL0.N).
    NoSuchCounter {
        /// The counter asked about.
        index: u8,
        /// PMCR_EL0.N.
        implemented: u8,
    },
    /// The counter's PMOVSSET_EL0 bit is 0: it has not overflowed since its flag was last cleared.
    /// Where it overflows is set by PMCR_EL0.LC (cycle counter) and LP / MDCR_EL2.HLP (event counters):
    /// bit 31 or bit 63.
    NotOverflowed(Counter),
    /// The counter's PMINTENSET_EL1 bit is 0: its overflow sets the flag but requests no interrupt.
    InterruptDisabled(Counter),
    /// PMCR_EL0.E (bit 0) is 0: the PMU requests no interrupt for the cycle counter and the counters
    /// below HPMN, even with flag and enable set.
    PmuDisabled,
    /// MDCR_EL2.HPME (bit 7) is 0: no interrupt request for a counter reserved for EL2.
    El2CountersDisabled {
        /// The counter asked about.
        index: u8,
        /// MDCR_EL2.HPMN.
        hpmn: u8,
    },
}

impl fmt::Display for NoInterrupt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            NoInterrupt::NoSuchCounter { index, implemented } => write!(
                f,
                "event counter {index} does not exist: PMCR_EL0.N is {implemented}"
            ),
            NoInterrupt::NotOverflowed(counter) => write!(
                f,
                "{counter} has not overflowed: its PMOVSSET_EL0 bit is 0"
            ),
            NoInterrupt::InterruptDisabled(counter) => write!(
                f,
                "the PMINTENSET_EL1 bit of {counter} is 0: its overflow requests no interrupt"
            ),
            NoInterrupt::PmuDisabled => f.write_str(
                "PMCR_EL0.E (bit 0) is 0: the PMU requests no overflow interrupt",
            ),
            NoInterrupt::El2CountersDisabled { index, hpmn } => write!(
                f,
                "event counter {index} is reserved for EL2 (MDCR_EL2.HPMN is {hpmn}) and MDCR_EL2.HPME (bit 7) is 0"
            ),
        }
    }
}

/// Whether the PMU requests an overflow interrupt for a counter.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OverflowInterrupt {
    /// The PMU asserts its overflow interrupt request for this counter: the flag, the interrupt enable
    /// and the counter range's enable are all set. If no interrupt is taken, the cause is past the PMU:
    /// the interrupt controller (the PMU's level-sensitive PPI, INTID 23 on systems following Arm's
    /// SBSA, not enabled, or its priority or group), the PE's interrupt mask (PSTATE.I), or a handler
    /// that does not clear the flag through PMOVSCLR_EL0, so that the level stays high.
    Requested,
    /// The PMU requests no interrupt, for these reasons.
    NotRequested(Reasons<NoInterrupt>),
}

impl fmt::Display for OverflowInterrupt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OverflowInterrupt::Requested => f.write_str(
                "the PMU requests the overflow interrupt: check the interrupt controller (the PMU's PPI, its enable, priority and group) and PSTATE.I",
            ),
            OverflowInterrupt::NotRequested(reasons) => reasons.fmt(f),
        }
    }
}
