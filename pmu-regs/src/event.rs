//! The common architectural and microarchitectural events (0x0000–0x003F and 0x4000–0x403F): the
//! events PMCEID0/1_EL0 can report.
//!
//! Mnemonics and the architectural flag follow Arm's `common_armv8.json`/`common_armv9.json` event
//! lists; the integration tests check every entry against those files.

use core::fmt;

macro_rules! common_events {
    ($($variant:ident = $code:literal, $mnemonic:literal, $arch:literal, $desc:literal;)*) => {
        /// A common PMU event. The discriminant is the event number programmed into evtCount.
        ///
        /// ```
        /// use pmu_regs::CommonEvent;
        /// assert_eq!(CommonEvent::MemAccess.code(), 0x13);
        /// assert_eq!(CommonEvent::from_code(0x0003), Some(CommonEvent::L1dCacheRefill));
        /// assert_eq!(CommonEvent::from_mnemonic("TRCEXTOUT0").map(CommonEvent::code), Some(0x4010));
        /// assert!(CommonEvent::InstRetired.is_architectural());
        /// ```
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[repr(u16)]
        pub enum CommonEvent {
            $(
                #[doc = concat!("`", $mnemonic, "` (", stringify!($code), "): ", $desc, ".")]
                $variant = $code,
            )*
        }

        impl CommonEvent {
            /// Every common event, by ascending event number.
            pub const ALL: &'static [CommonEvent] = &[$(CommonEvent::$variant,)*];

            /// The event number.
            pub const fn code(self) -> u16 {
                self as u16
            }

            /// Arm's mnemonic, e.g. `"L1D_CACHE_REFILL"`.
            pub const fn mnemonic(self) -> &'static str {
                match self {
                    $(CommonEvent::$variant => $mnemonic,)*
                }
            }

            /// A one-line description.
            pub const fn description(self) -> &'static str {
                match self {
                    $(CommonEvent::$variant => $desc,)*
                }
            }

            /// Whether Arm classes the event as architectural (defined by retired instructions) rather
            /// than microarchitectural.
            pub const fn is_architectural(self) -> bool {
                match self {
                    $(CommonEvent::$variant => $arch,)*
                }
            }

            /// The common event with this number.
            pub const fn from_code(code: u16) -> Option<CommonEvent> {
                match code {
                    $($code => Some(CommonEvent::$variant),)*
                    _ => None,
                }
            }
        }
    };
}

common_events! {
    SwIncr = 0x0000, "SW_INCR", true, "Software increment: a write to PMSWINC_EL0";
    L1iCacheRefill = 0x0001, "L1I_CACHE_REFILL", false, "Level 1 instruction cache refill";
    L1iTlbRefill = 0x0002, "L1I_TLB_REFILL", false, "Level 1 instruction TLB refill";
    L1dCacheRefill = 0x0003, "L1D_CACHE_REFILL", false, "Level 1 data cache refill (an L1D miss)";
    L1dCache = 0x0004, "L1D_CACHE", false, "Level 1 data cache access";
    L1dTlbRefill = 0x0005, "L1D_TLB_REFILL", false, "Level 1 data TLB refill";
    LdRetired = 0x0006, "LD_RETIRED", true, "Load instruction architecturally executed";
    StRetired = 0x0007, "ST_RETIRED", true, "Store instruction architecturally executed";
    InstRetired = 0x0008, "INST_RETIRED", true, "Instruction architecturally executed";
    ExcTaken = 0x0009, "EXC_TAKEN", true, "Exception taken";
    ExcReturn = 0x000a, "EXC_RETURN", true, "Exception return instruction architecturally executed";
    CidWriteRetired = 0x000b, "CID_WRITE_RETIRED", true, "Write to CONTEXTIDR architecturally executed";
    PcWriteRetired = 0x000c, "PC_WRITE_RETIRED", true, "Software change of the PC architecturally executed";
    BrImmedRetired = 0x000d, "BR_IMMED_RETIRED", true, "Immediate branch architecturally executed";
    BrReturnRetired = 0x000e, "BR_RETURN_RETIRED", true, "Procedure return architecturally executed";
    UnalignedLdstRetired = 0x000f, "UNALIGNED_LDST_RETIRED", true, "Unaligned load or store architecturally executed";
    BrMisPred = 0x0010, "BR_MIS_PRED", false, "Branch mispredicted or not predicted, speculatively executed";
    CpuCycles = 0x0011, "CPU_CYCLES", false, "Processor cycle";
    BrPred = 0x0012, "BR_PRED", false, "Predictable branch speculatively executed";
    MemAccess = 0x0013, "MEM_ACCESS", false, "Data memory access (loads and stores; not a miss)";
    L1iCache = 0x0014, "L1I_CACHE", false, "Level 1 instruction cache access";
    L1dCacheWb = 0x0015, "L1D_CACHE_WB", false, "Level 1 data cache write-back";
    L2dCache = 0x0016, "L2D_CACHE", false, "Level 2 data cache access";
    L2dCacheRefill = 0x0017, "L2D_CACHE_REFILL", false, "Level 2 data cache refill";
    L2dCacheWb = 0x0018, "L2D_CACHE_WB", false, "Level 2 data cache write-back";
    BusAccess = 0x0019, "BUS_ACCESS", false, "Bus access";
    MemoryError = 0x001a, "MEMORY_ERROR", false, "Local memory error";
    InstSpec = 0x001b, "INST_SPEC", false, "Operation speculatively executed";
    TtbrWriteRetired = 0x001c, "TTBR_WRITE_RETIRED", true, "Write to TTBR architecturally executed";
    BusCycles = 0x001d, "BUS_CYCLES", false, "Bus cycle";
    Chain = 0x001e, "CHAIN", true, "On an odd counter, one per overflow of the preceding even counter";
    L1dCacheAllocate = 0x001f, "L1D_CACHE_ALLOCATE", false, "Level 1 data cache allocation without refill";
    L2dCacheAllocate = 0x0020, "L2D_CACHE_ALLOCATE", false, "Level 2 data cache allocation without refill";
    BrRetired = 0x0021, "BR_RETIRED", true, "Branch instruction architecturally executed";
    BrMisPredRetired = 0x0022, "BR_MIS_PRED_RETIRED", false, "Branch mispredicted, architecturally executed";
    StallFrontend = 0x0023, "STALL_FRONTEND", false, "Cycle with no operation issued because of the front end";
    StallBackend = 0x0024, "STALL_BACKEND", false, "Cycle with no operation issued because of the back end";
    L1dTlb = 0x0025, "L1D_TLB", false, "Level 1 data TLB access";
    L1iTlb = 0x0026, "L1I_TLB", false, "Level 1 instruction TLB access";
    L2iCache = 0x0027, "L2I_CACHE", false, "Level 2 instruction cache access";
    L2iCacheRefill = 0x0028, "L2I_CACHE_REFILL", false, "Level 2 instruction cache refill";
    L3dCacheAllocate = 0x0029, "L3D_CACHE_ALLOCATE", false, "Level 3 data cache allocation without refill";
    L3dCacheRefill = 0x002a, "L3D_CACHE_REFILL", false, "Level 3 data cache refill";
    L3dCache = 0x002b, "L3D_CACHE", false, "Level 3 data cache access";
    L3dCacheWb = 0x002c, "L3D_CACHE_WB", false, "Level 3 data cache write-back";
    L2dTlbRefill = 0x002d, "L2D_TLB_REFILL", false, "Level 2 data TLB refill";
    L2iTlbRefill = 0x002e, "L2I_TLB_REFILL", false, "Level 2 instruction TLB refill";
    L2dTlb = 0x002f, "L2D_TLB", false, "Level 2 data TLB access";
    L2iTlb = 0x0030, "L2I_TLB", false, "Level 2 instruction TLB access";
    RemoteAccess = 0x0031, "REMOTE_ACCESS", false, "Access to memory of another socket";
    LlCache = 0x0032, "LL_CACHE", false, "Last level cache access";
    LlCacheMiss = 0x0033, "LL_CACHE_MISS", false, "Last level cache miss";
    DtlbWalk = 0x0034, "DTLB_WALK", false, "Data TLB access with at least one translation table walk";
    ItlbWalk = 0x0035, "ITLB_WALK", false, "Instruction TLB access with at least one translation table walk";
    LlCacheRd = 0x0036, "LL_CACHE_RD", false, "Last level cache read";
    LlCacheMissRd = 0x0037, "LL_CACHE_MISS_RD", false, "Last level cache read miss";
    RemoteAccessRd = 0x0038, "REMOTE_ACCESS_RD", false, "Read access to memory of another socket";
    L1dCacheLmissRd = 0x0039, "L1D_CACHE_LMISS_RD", false, "Level 1 data cache long-latency read miss";
    OpRetired = 0x003a, "OP_RETIRED", false, "Micro-operation architecturally executed";
    OpSpec = 0x003b, "OP_SPEC", false, "Micro-operation speculatively executed";
    Stall = 0x003c, "STALL", false, "Cycle with no operation sent for execution";
    StallSlotBackend = 0x003d, "STALL_SLOT_BACKEND", false, "Slot with no operation sent for execution because of the back end";
    StallSlotFrontend = 0x003e, "STALL_SLOT_FRONTEND", false, "Slot with no operation sent for execution because of the front end";
    StallSlot = 0x003f, "STALL_SLOT", false, "Slot with no operation sent for execution (PMMIR_EL1.SLOTS per cycle)";
    SamplePop = 0x4000, "SAMPLE_POP", false, "Statistical Profiling sample population";
    SampleFeed = 0x4001, "SAMPLE_FEED", false, "Statistical Profiling sample taken";
    SampleFiltrate = 0x4002, "SAMPLE_FILTRATE", false, "Statistical Profiling sample taken and not removed by filtering";
    SampleCollision = 0x4003, "SAMPLE_COLLISION", false, "Statistical Profiling sample collided with the previous one";
    CntCycles = 0x4004, "CNT_CYCLES", false, "Constant-frequency cycle";
    StallBackendMem = 0x4005, "STALL_BACKEND_MEM", false, "Memory stall cycle: back-end stall with a demand miss in the last level cache (a cycle count, not a latency)";
    L1iCacheLmiss = 0x4006, "L1I_CACHE_LMISS", false, "Level 1 instruction cache long-latency miss";
    L2dCacheLmissRd = 0x4009, "L2D_CACHE_LMISS_RD", false, "Level 2 data cache long-latency read miss";
    L2iCacheLmiss = 0x400a, "L2I_CACHE_LMISS", false, "Level 2 instruction cache long-latency miss";
    L3dCacheLmissRd = 0x400b, "L3D_CACHE_LMISS_RD", false, "Level 3 data cache long-latency read miss";
    TrbWrap = 0x400c, "TRB_WRAP", true, "Trace buffer current write pointer wrapped";
    PmuOvfs = 0x400d, "PMU_OVFS", true, "PMU overflow, counters accessible to EL1 and EL0";
    TrbTrig = 0x400e, "TRB_TRIG", true, "Trace buffer trigger event";
    PmuHovfs = 0x400f, "PMU_HOVFS", true, "PMU overflow, counters reserved for EL2";
    Trcextout0 = 0x4010, "TRCEXTOUT0", false, "Trace unit external output 0";
    Trcextout1 = 0x4011, "TRCEXTOUT1", false, "Trace unit external output 1";
    Trcextout2 = 0x4012, "TRCEXTOUT2", false, "Trace unit external output 2";
    Trcextout3 = 0x4013, "TRCEXTOUT3", false, "Trace unit external output 3";
    CtiTrigout4 = 0x4018, "CTI_TRIGOUT4", false, "Cross-trigger interface output trigger 4";
    CtiTrigout5 = 0x4019, "CTI_TRIGOUT5", false, "Cross-trigger interface output trigger 5";
    CtiTrigout6 = 0x401a, "CTI_TRIGOUT6", false, "Cross-trigger interface output trigger 6";
    CtiTrigout7 = 0x401b, "CTI_TRIGOUT7", false, "Cross-trigger interface output trigger 7";
    LdstAlignLat = 0x4020, "LDST_ALIGN_LAT", false, "Access with additional latency from alignment";
    LdAlignLat = 0x4021, "LD_ALIGN_LAT", false, "Load with additional latency from alignment";
    StAlignLat = 0x4022, "ST_ALIGN_LAT", false, "Store with additional latency from alignment";
    MemAccessChecked = 0x4024, "MEM_ACCESS_CHECKED", false, "Memory-tagging checked data memory access";
    MemAccessCheckedRd = 0x4025, "MEM_ACCESS_CHECKED_RD", false, "Memory-tagging checked data memory read";
    MemAccessCheckedWr = 0x4026, "MEM_ACCESS_CHECKED_WR", false, "Memory-tagging checked data memory write";
}

impl CommonEvent {
    /// The common event with this mnemonic (exact, upper case).
    pub fn from_mnemonic(mnemonic: &str) -> Option<CommonEvent> {
        CommonEvent::ALL
            .iter()
            .copied()
            .find(|e| e.mnemonic() == mnemonic)
    }
}

impl fmt::Display for CommonEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.mnemonic())
    }
}

impl From<CommonEvent> for u16 {
    fn from(event: CommonEvent) -> u16 {
        event.code()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_ascending_and_round_trip() {
        for pair in CommonEvent::ALL.windows(2) {
            assert!(pair[0].code() < pair[1].code());
        }
        for &e in CommonEvent::ALL {
            assert_eq!(CommonEvent::from_code(e.code()), Some(e));
            assert_eq!(CommonEvent::from_mnemonic(e.mnemonic()), Some(e));
            assert!(crate::CommonEventSet::bit_of(e.code()).is_ok());
        }
        assert_eq!(CommonEvent::from_code(0x4007), None);
        assert_eq!(CommonEvent::from_mnemonic("GPU_WAIT"), None);
    }

    #[test]
    fn the_articles_event_numbers() {
        assert_eq!(
            CommonEvent::from_code(0x4010),
            Some(CommonEvent::Trcextout0)
        );
        assert_eq!(
            CommonEvent::from_code(0x4020),
            Some(CommonEvent::LdstAlignLat)
        );
        assert_eq!(
            CommonEvent::from_code(0x4005),
            Some(CommonEvent::StallBackendMem)
        );
        assert_eq!(CommonEvent::from_code(0x400D), Some(CommonEvent::PmuOvfs));
        assert_eq!(CommonEvent::BrMisPred.code(), 0x10);
        assert_eq!(CommonEvent::BrMisPredRetired.code(), 0x22);
    }
}
