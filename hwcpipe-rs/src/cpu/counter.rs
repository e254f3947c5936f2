//! [`CpuCounter`]: HWCPipe's 17 CPU counters in HWCPipe's order and names, then seven Linux software
//! counters, with their descriptions, units and the perf event each one opens. Arm PMU events are
//! named by `pmu-regs`' event model ([`ArmEvent`]), which holds their numbers and Arm's mnemonics.

use core::fmt;
use core::str::FromStr;

use pmu_regs::{ArmEvent, CommonEvent, RecommendedEvent};

use crate::counter_info::CounterInfo;
use crate::sys::perf_event_attr::{PERF_TYPE_HARDWARE, PERF_TYPE_RAW, PERF_TYPE_SOFTWARE};
use crate::unit::Unit;

/// Where the kernel finds a counter: a perf event type and number.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PerfEvent {
    /// `PERF_TYPE_HARDWARE` with a `PERF_COUNT_HW_*` number.
    Hardware(u64),
    /// `PERF_TYPE_RAW` with an Arm PMU event number (only meaningful on aarch64).
    Arm(ArmEvent),
    /// `PERF_TYPE_SOFTWARE` with a `PERF_COUNT_SW_*` number.
    Software(u64),
}

impl PerfEvent {
    /// `(attr.type, attr.config)` for this event on the architecture this crate was built for, or
    /// `None` for an Arm raw event on another architecture, where the same number means something else.
    pub fn type_and_config(self) -> Option<(u32, u64)> {
        match self {
            PerfEvent::Hardware(n) => Some((PERF_TYPE_HARDWARE, n)),
            PerfEvent::Software(n) => Some((PERF_TYPE_SOFTWARE, n)),
            PerfEvent::Arm(e) if cfg!(target_arch = "aarch64") => {
                Some((PERF_TYPE_RAW, u64::from(e.code())))
            }
            PerfEvent::Arm(_) => None,
        }
    }

    /// Whether the event needs a hardware PMU counter (hardware and raw events do).
    pub fn is_hardware(self) -> bool {
        !matches!(self, PerfEvent::Software(_))
    }
}

/// A common Arm PMU event as a perf event.
const fn common(event: CommonEvent) -> PerfEvent {
    PerfEvent::Arm(ArmEvent::Common(event))
}

/// A recommended IMPLEMENTATION DEFINED Arm PMU event as a perf event.
const fn recommended(event: RecommendedEvent) -> PerfEvent {
    PerfEvent::Arm(ArmEvent::Recommended(event))
}

macro_rules! cpu_counters {
    ($( $(#[$doc:meta])* $name:ident => $desc:literal, $unit:ident, $event:expr; )*) => {
        /// A CPU counter. The first 17 are HWCPipe 1.x's, with HWCPipe's enum values as
        /// discriminants; the Linux software counters follow.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[repr(u8)]
        pub enum CpuCounter {
            $( $(#[$doc])* $name, )*
        }

        impl CpuCounter {
            /// Every counter, in order.
            pub const ALL: [CpuCounter; CpuCounter::COUNT] = [$(CpuCounter::$name,)*];

            /// The exact name, e.g. `"Cycles"`.
            pub const fn name(self) -> &'static str {
                match self { $(CpuCounter::$name => stringify!($name),)* }
            }

            /// One-line description (HWCPipe's text for HWCPipe's counters).
            pub const fn description(self) -> &'static str {
                match self { $(CpuCounter::$name => $desc,)* }
            }

            /// The unit of a value.
            pub const fn unit(self) -> Unit {
                match self { $(CpuCounter::$name => Unit::$unit,)* }
            }

            /// The perf event that counts it.
            pub const fn event(self) -> PerfEvent {
                match self { $(CpuCounter::$name => $event,)* }
            }
        }
    };
}

cpu_counters! {
    /// CPU cycles (`PERF_COUNT_HW_CPU_CYCLES`).
    Cycles => "Number of CPU cycles", Cycles, PerfEvent::Hardware(0);
    /// Instructions (`PERF_COUNT_HW_INSTRUCTIONS`).
    Instructions => "Number of CPU instructions", Instructions, PerfEvent::Hardware(1);
    /// Cache references (`PERF_COUNT_HW_CACHE_REFERENCES`).
    CacheReferences => "Number of cache references", References, PerfEvent::Hardware(2);
    /// Cache misses (`PERF_COUNT_HW_CACHE_MISSES`).
    CacheMisses => "Number of cache misses", Misses, PerfEvent::Hardware(3);
    /// Branch instructions (`PERF_COUNT_HW_BRANCH_INSTRUCTIONS`).
    BranchInstructions => "Number of branch instructions", Instructions, PerfEvent::Hardware(4);
    /// Branch misses (`PERF_COUNT_HW_BRANCH_MISSES`).
    BranchMisses => "Number of branch misses", Misses, PerfEvent::Hardware(5);
    /// Arm `L1D_CACHE`.
    L1Accesses => "L1 data cache accesses", Accesses, common(CommonEvent::L1dCache);
    /// Arm `INST_RETIRED`.
    InstrRetired => "All retired instructions", Instructions, common(CommonEvent::InstRetired);
    /// Arm `L2D_CACHE`.
    L2Accesses => "L2 data cache accesses", Accesses, common(CommonEvent::L2dCache);
    /// Arm `L3D_CACHE`.
    L3Accesses => "L3 data cache accesses", Accesses, common(CommonEvent::L3dCache);
    /// Arm `BUS_ACCESS_RD`.
    BusReads => "Bus access reads", Beats, recommended(RecommendedEvent::BusAccessRd);
    /// Arm `BUS_ACCESS_WR`.
    BusWrites => "Bus access writes", Beats, recommended(RecommendedEvent::BusAccessWr);
    /// Arm `MEM_ACCESS_RD`.
    MemReads => "Data memory access, load instructions", Instructions, recommended(RecommendedEvent::MemAccessRd);
    /// Arm `MEM_ACCESS_WR`.
    MemWrites => "Data memory access, store instructions", Instructions, recommended(RecommendedEvent::MemAccessWr);
    /// Arm `ASE_SPEC`.
    ASESpec => "Speculatively executed SIMD operations", Operations, recommended(RecommendedEvent::AseSpec);
    /// Arm `VFP_SPEC`.
    VFPSpec => "Speculatively executed floating point operations", Operations, recommended(RecommendedEvent::VfpSpec);
    /// Arm `CRYPTO_SPEC`.
    CryptoSpec => "Speculatively executed cryptographic operations", Operations, recommended(RecommendedEvent::CryptoSpec);
    /// CPU time from the per-CPU clock (`PERF_COUNT_SW_CPU_CLOCK`).
    CpuClock => "CPU clock time", Nanoseconds, PerfEvent::Software(0);
    /// CPU time of the measured tasks (`PERF_COUNT_SW_TASK_CLOCK`).
    TaskClock => "Task clock time", Nanoseconds, PerfEvent::Software(1);
    /// Context switches (`PERF_COUNT_SW_CONTEXT_SWITCHES`).
    ContextSwitches => "Number of context switches", Switches, PerfEvent::Software(3);
    /// Migrations to another CPU (`PERF_COUNT_SW_CPU_MIGRATIONS`).
    CpuMigrations => "Number of CPU migrations", Migrations, PerfEvent::Software(4);
    /// Page faults (`PERF_COUNT_SW_PAGE_FAULTS`).
    PageFaults => "Number of page faults", Faults, PerfEvent::Software(2);
    /// Minor page faults, served without I/O (`PERF_COUNT_SW_PAGE_FAULTS_MIN`).
    MinorFaults => "Number of minor page faults", Faults, PerfEvent::Software(5);
    /// Major page faults, which needed I/O (`PERF_COUNT_SW_PAGE_FAULTS_MAJ`).
    MajorFaults => "Number of major page faults", Faults, PerfEvent::Software(6);
}

impl CpuCounter {
    /// How many counters there are.
    pub const COUNT: usize = 24;

    /// HWCPipe 1.x's 17 counters (`Cycles` ..= `CryptoSpec`).
    pub const HWCPIPE: [CpuCounter; 17] = {
        let mut out = [CpuCounter::Cycles; 17];
        let mut i = 0;
        while i < 17 {
            out[i] = CpuCounter::ALL[i];
            i += 1;
        }
        out
    };

    /// The seven Linux software counters, which count on any Linux.
    pub const SOFTWARE: [CpuCounter; 7] = [
        CpuCounter::CpuClock,
        CpuCounter::TaskClock,
        CpuCounter::ContextSwitches,
        CpuCounter::CpuMigrations,
        CpuCounter::PageFaults,
        CpuCounter::MinorFaults,
        CpuCounter::MajorFaults,
    ];

    /// HWCPipe's default CPU selection: `Cycles`, `Instructions`, `CacheReferences`,
    /// `CacheMisses`, `BranchInstructions`, `BranchMisses`.
    pub const HWCPIPE_DEFAULT: [CpuCounter; 6] = [
        CpuCounter::Cycles,
        CpuCounter::Instructions,
        CpuCounter::CacheReferences,
        CpuCounter::CacheMisses,
        CpuCounter::BranchInstructions,
        CpuCounter::BranchMisses,
    ];

    /// Position in [`CpuCounter::ALL`].
    pub const fn index(self) -> usize {
        self as usize
    }

    /// Name, description and unit.
    pub const fn info(self) -> CounterInfo {
        CounterInfo {
            name: self.name(),
            description: self.description(),
            unit: self.unit(),
        }
    }
}

#[cfg(feature = "json")]
impl CpuCounter {
    /// What a core's own event list (one of Arm's per-core JSON files, loaded by `pmu-regs`) says
    /// about this counter's Arm event: `None` for counters that are not Arm events and for events the
    /// core's list does not have.
    pub fn catalog_event(
        self,
        catalog: &pmu_regs::catalog::EventCatalog,
    ) -> Option<&pmu_regs::catalog::CatalogEvent> {
        match self.event() {
            PerfEvent::Arm(event) => catalog.get(event.code()),
            PerfEvent::Hardware(_) | PerfEvent::Software(_) => None,
        }
    }
}

impl fmt::Display for CpuCounter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A name that is not exactly one of the [`CpuCounter`] names.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown CPU counter {name:?}; valid names: {}", valid_names())]
pub struct UnknownCpuCounter {
    /// The name that was given.
    pub name: String,
}

fn valid_names() -> String {
    CpuCounter::ALL
        .iter()
        .map(|c| c.name())
        .collect::<Vec<_>>()
        .join(", ")
}

impl FromStr for CpuCounter {
    type Err = UnknownCpuCounter;

    /// Exact, case-sensitive match on [`CpuCounter::name`].
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        CpuCounter::ALL
            .iter()
            .copied()
            .find(|c| c.name() == s)
            .ok_or_else(|| UnknownCpuCounter { name: s.to_owned() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn order_and_values_match_hwcpipe_1x() {
        let names: Vec<_> = CpuCounter::HWCPIPE.iter().map(|c| c.name()).collect();
        assert_eq!(
            names,
            [
                "Cycles",
                "Instructions",
                "CacheReferences",
                "CacheMisses",
                "BranchInstructions",
                "BranchMisses",
                "L1Accesses",
                "InstrRetired",
                "L2Accesses",
                "L3Accesses",
                "BusReads",
                "BusWrites",
                "MemReads",
                "MemWrites",
                "ASESpec",
                "VFPSpec",
                "CryptoSpec"
            ]
        );
        for (i, c) in CpuCounter::ALL.iter().enumerate() {
            assert_eq!(c.index(), i);
        }
        assert_eq!(CpuCounter::CryptoSpec as u8, 16);
    }

    #[test]
    fn raw_events_open_only_on_aarch64() {
        let opened = CpuCounter::L1Accesses.event().type_and_config();
        if cfg!(target_arch = "aarch64") {
            assert_eq!(
                opened,
                Some((PERF_TYPE_RAW, u64::from(CommonEvent::L1dCache.code())))
            );
        } else {
            assert_eq!(opened, None);
        }
        assert_eq!(
            CpuCounter::TaskClock.event().type_and_config(),
            Some((PERF_TYPE_SOFTWARE, 1))
        );
    }

    #[test]
    fn software_counters_are_software_events() {
        for c in CpuCounter::SOFTWARE {
            assert!(!c.event().is_hardware(), "{c}");
        }
        for c in CpuCounter::HWCPIPE {
            assert!(c.event().is_hardware(), "{c}");
        }
    }

    #[test]
    fn names_parse_exactly() {
        for c in CpuCounter::ALL {
            assert_eq!(c.name().parse::<CpuCounter>(), Ok(c));
        }
        let err = "cycles".parse::<CpuCounter>().unwrap_err();
        assert!(err.to_string().contains("TaskClock"));
    }
}
