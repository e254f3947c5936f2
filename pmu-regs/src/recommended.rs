//! The events the Arm architecture recommends for the IMPLEMENTATION DEFINED range 0x0040–0x00BF
//! ("Armv8 recommended IMPLEMENTATION DEFINED events"): a core that counts one of these conditions
//! should use this number and mnemonic, but need not implement it, and PMCEID0/1_EL0 cannot say
//! whether it does. The list holds every number of the range that Arm's per-core event lists use;
//! the integration tests check each number and mnemonic against those files.

use core::fmt;

macro_rules! recommended_events {
    ($($variant:ident = $code:literal, $mnemonic:literal;)*) => {
        /// A recommended IMPLEMENTATION DEFINED PMU event. The discriminant is the event number.
        ///
        /// ```
        /// use pmu_regs::RecommendedEvent;
        /// assert_eq!(RecommendedEvent::BusAccessRd.code(), 0x60);
        /// assert_eq!(RecommendedEvent::from_code(0x77), Some(RecommendedEvent::CryptoSpec));
        /// assert_eq!(RecommendedEvent::CryptoSpec.mnemonic(), "CRYPTO_SPEC");
        /// ```
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[repr(u16)]
        pub enum RecommendedEvent {
            $(
                #[doc = concat!("`", $mnemonic, "` (", stringify!($code), ").")]
                $variant = $code,
            )*
        }

        impl RecommendedEvent {
            /// Every recommended event, by ascending event number.
            pub const ALL: &'static [RecommendedEvent] = &[$(RecommendedEvent::$variant,)*];

            /// The event number.
            pub const fn code(self) -> u16 {
                self as u16
            }

            /// Arm's mnemonic, e.g. `"BUS_ACCESS_RD"`.
            pub const fn mnemonic(self) -> &'static str {
                match self {
                    $(RecommendedEvent::$variant => $mnemonic,)*
                }
            }

            /// The event with number `code`, if it is one of these.
            pub const fn from_code(code: u16) -> Option<RecommendedEvent> {
                match code {
                    $($code => Some(RecommendedEvent::$variant),)*
                    _ => None,
                }
            }
        }
    };
}

recommended_events! {
    L1dCacheRd = 0x0040, "L1D_CACHE_RD";
    L1dCacheWr = 0x0041, "L1D_CACHE_WR";
    L1dCacheRefillRd = 0x0042, "L1D_CACHE_REFILL_RD";
    L1dCacheRefillWr = 0x0043, "L1D_CACHE_REFILL_WR";
    L1dCacheRefillInner = 0x0044, "L1D_CACHE_REFILL_INNER";
    L1dCacheRefillOuter = 0x0045, "L1D_CACHE_REFILL_OUTER";
    L1dCacheWbVictim = 0x0046, "L1D_CACHE_WB_VICTIM";
    L1dCacheWbClean = 0x0047, "L1D_CACHE_WB_CLEAN";
    L1dCacheInval = 0x0048, "L1D_CACHE_INVAL";
    L1dTlbRefillRd = 0x004C, "L1D_TLB_REFILL_RD";
    L1dTlbRefillWr = 0x004D, "L1D_TLB_REFILL_WR";
    L1dTlbRd = 0x004E, "L1D_TLB_RD";
    L1dTlbWr = 0x004F, "L1D_TLB_WR";
    L2dCacheRd = 0x0050, "L2D_CACHE_RD";
    L2dCacheWr = 0x0051, "L2D_CACHE_WR";
    L2dCacheRefillRd = 0x0052, "L2D_CACHE_REFILL_RD";
    L2dCacheRefillWr = 0x0053, "L2D_CACHE_REFILL_WR";
    L2dCacheWbVictim = 0x0056, "L2D_CACHE_WB_VICTIM";
    L2dCacheWbClean = 0x0057, "L2D_CACHE_WB_CLEAN";
    L2dCacheInval = 0x0058, "L2D_CACHE_INVAL";
    L2dTlbRefillRd = 0x005C, "L2D_TLB_REFILL_RD";
    L2dTlbRefillWr = 0x005D, "L2D_TLB_REFILL_WR";
    L2dTlbRd = 0x005E, "L2D_TLB_RD";
    L2dTlbWr = 0x005F, "L2D_TLB_WR";
    BusAccessRd = 0x0060, "BUS_ACCESS_RD";
    BusAccessWr = 0x0061, "BUS_ACCESS_WR";
    BusAccessShared = 0x0062, "BUS_ACCESS_SHARED";
    BusAccessNotShared = 0x0063, "BUS_ACCESS_NOT_SHARED";
    BusAccessNormal = 0x0064, "BUS_ACCESS_NORMAL";
    BusAccessPeriph = 0x0065, "BUS_ACCESS_PERIPH";
    MemAccessRd = 0x0066, "MEM_ACCESS_RD";
    MemAccessWr = 0x0067, "MEM_ACCESS_WR";
    UnalignedLdSpec = 0x0068, "UNALIGNED_LD_SPEC";
    UnalignedStSpec = 0x0069, "UNALIGNED_ST_SPEC";
    UnalignedLdstSpec = 0x006A, "UNALIGNED_LDST_SPEC";
    LdrexSpec = 0x006C, "LDREX_SPEC";
    StrexPassSpec = 0x006D, "STREX_PASS_SPEC";
    StrexFailSpec = 0x006E, "STREX_FAIL_SPEC";
    StrexSpec = 0x006F, "STREX_SPEC";
    LdSpec = 0x0070, "LD_SPEC";
    StSpec = 0x0071, "ST_SPEC";
    LdstSpec = 0x0072, "LDST_SPEC";
    DpSpec = 0x0073, "DP_SPEC";
    AseSpec = 0x0074, "ASE_SPEC";
    VfpSpec = 0x0075, "VFP_SPEC";
    PcWriteSpec = 0x0076, "PC_WRITE_SPEC";
    CryptoSpec = 0x0077, "CRYPTO_SPEC";
    BrImmedSpec = 0x0078, "BR_IMMED_SPEC";
    BrReturnSpec = 0x0079, "BR_RETURN_SPEC";
    BrIndirectSpec = 0x007A, "BR_INDIRECT_SPEC";
    IsbSpec = 0x007C, "ISB_SPEC";
    DsbSpec = 0x007D, "DSB_SPEC";
    DmbSpec = 0x007E, "DMB_SPEC";
    ExcUndef = 0x0081, "EXC_UNDEF";
    ExcSvc = 0x0082, "EXC_SVC";
    ExcPabort = 0x0083, "EXC_PABORT";
    ExcDabort = 0x0084, "EXC_DABORT";
    ExcIrq = 0x0086, "EXC_IRQ";
    ExcFiq = 0x0087, "EXC_FIQ";
    ExcSmc = 0x0088, "EXC_SMC";
    ExcHvc = 0x008A, "EXC_HVC";
    ExcTrapPabort = 0x008B, "EXC_TRAP_PABORT";
    ExcTrapDabort = 0x008C, "EXC_TRAP_DABORT";
    ExcTrapOther = 0x008D, "EXC_TRAP_OTHER";
    ExcTrapIrq = 0x008E, "EXC_TRAP_IRQ";
    ExcTrapFiq = 0x008F, "EXC_TRAP_FIQ";
    RcLdSpec = 0x0090, "RC_LD_SPEC";
    RcStSpec = 0x0091, "RC_ST_SPEC";
    L3dCacheRd = 0x00A0, "L3D_CACHE_RD";
    L3dCacheRefillRd = 0x00A2, "L3D_CACHE_REFILL_RD";
}

impl RecommendedEvent {
    /// The event with Arm's mnemonic `mnemonic` (exact, upper case), if it is one of these.
    pub fn from_mnemonic(mnemonic: &str) -> Option<RecommendedEvent> {
        Self::ALL.iter().copied().find(|e| e.mnemonic() == mnemonic)
    }
}

impl fmt::Display for RecommendedEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.mnemonic())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_ascend_inside_the_recommended_range_and_round_trip() {
        let mut previous = 0x3F;
        for &event in RecommendedEvent::ALL {
            assert!(event.code() > previous && event.code() <= 0xBF, "{event}");
            previous = event.code();
            assert_eq!(RecommendedEvent::from_code(event.code()), Some(event));
            assert_eq!(
                RecommendedEvent::from_mnemonic(event.mnemonic()),
                Some(event)
            );
        }
        assert_eq!(RecommendedEvent::from_code(0x3F), None);
        assert_eq!(RecommendedEvent::from_code(0x4B), None);
        assert_eq!(RecommendedEvent::from_mnemonic("bus_access_rd"), None);
    }
}
