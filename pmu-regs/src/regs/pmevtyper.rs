//! `PMEVTYPER<n>_EL0`, the event type and filter register of event counter n (also reached through
//! PMXEVTYPER_EL0).

use thiserror::Error;

use crate::regs::field::register;
use crate::version::PmuVersion;

register! {
    /// `PMEVTYPER<n>_EL0`: the event counter n counts (`evtCount`) and the exception levels and security
    /// states it counts in.
    ///
    /// `evtCount` is split the way the architecture draws it: bits `[9:0]` exist on every PMUv3, bits
    /// `[15:10]` from PMUv3p1. [`Pmevtyper::evt_count`] and [`Pmevtyper::for_event`] handle the whole
    /// number.
    ///
    /// Filtering: `P`/`U` exclude EL1/EL0; Non-secure EL1/EL0 are counted when `NSK == P` / `NSU == U`;
    /// EL2 is counted only when `NSH` is 1; EL3 is counted when `M == P`.
    ///
    /// ```
    /// use pmu_regs::{CommonEvent, Pmevtyper, PmuVersion};
    /// let t = Pmevtyper::for_event(CommonEvent::InstRetired.code(), PmuVersion::V3)
    ///     .unwrap()
    ///     .with_p(true); // do not count at EL1
    /// assert_eq!(t.bits(), 0x8000_0008);
    /// assert!(Pmevtyper::for_event(0x4005, PmuVersion::V3).is_err()); // 0x4005 needs PMUv3p1
    /// ```
    pub struct Pmevtyper = "PMEVTYPER<n>_EL0" {
        /// `evtCount[9:0]`, bits `[9:0]`: the low ten bits of the event number.
        field evt_count_low / with_evt_count_low [9:0] u16, ReadWrite, V3;
        /// `evtCount[15:10]`, bits `[15:10]` (PMUv3p1): the high six bits of the event number.
        field evt_count_high / with_evt_count_high [15:10] u8, ReadWrite, V3p1;
        /// RLH, bit 20 (FEAT_RME): Realm EL2 filtering.
        flag rlh / with_rlh [20], ReadWrite, V3p7;
        /// RLU, bit 21 (FEAT_RME): Realm EL0 filtering, with U.
        flag rlu / with_rlu [21], ReadWrite, V3p7;
        /// RLK, bit 22 (FEAT_RME): Realm EL1 filtering, with P.
        flag rlk / with_rlk [22], ReadWrite, V3p7;
        /// T, bit 23: transactional-state filtering.
        flag t / with_t [23], ReadWrite, V3p5;
        /// SH, bit 24 (FEAT_SEL2): Secure EL2 is counted when SH differs from NSH.
        flag sh / with_sh [24], ReadWrite, V3p4;
        /// MT, bit 25 (FEAT_MTPMU): count events from every PE of a multithreaded core.
        flag mt / with_mt [25], ReadWrite, V3p5;
        /// M, bit 26: EL3 is counted when M equals P.
        flag m / with_m [26], ReadWrite, V3;
        /// NSH, bit 27: 1 = count at EL2 (the only filter bit that includes rather than excludes).
        flag nsh / with_nsh [27], ReadWrite, V3;
        /// NSU, bit 28: Non-secure EL0 is counted when NSU equals U.
        flag nsu / with_nsu [28], ReadWrite, V3;
        /// NSK, bit 29: Non-secure EL1 is counted when NSK equals P.
        flag nsk / with_nsk [29], ReadWrite, V3;
        /// U, bit 30: 1 = do not count at EL0.
        flag u / with_u [30], ReadWrite, V3;
        /// P, bit 31: 1 = do not count at EL1.
        flag p / with_p [31], ReadWrite, V3;
        /// TH, bits `[43:32]` (FEAT_PMUv3_TH): threshold value; PMMIR_EL1.THWIDTH gives its width.
        field th / with_th [43:32] u16, ReadWrite, V3p8;
        /// TLC, bits `[55:54]` (FEAT_PMUv3_TH2): threshold linking control.
        field tlc / with_tlc [55:54] u8, ReadWrite, V3p9;
        /// VS, bits `[57:56]` (FEAT_PMUv3_SME): 0b01 = not in Streaming SVE mode, 0b10 = not in
        /// Non-streaming mode.
        field vs / with_vs [57:56] u8, ReadWrite, V3p7;
        /// SYNC, bit 58: synchronous mode.
        flag sync / with_sync [58], ReadWrite, V3p9;
        /// TE, bit 60 (FEAT_PMUv3_EDGE): threshold edge enable.
        flag te / with_te [60], ReadWrite, V3p9;
        /// TC, bits `[63:61]` (FEAT_PMUv3_TH): threshold condition, see [`ThresholdCondition`].
        field tc / with_tc [63:61] u8, ReadWrite, V3p8;
    }
}

/// An event number the PMU version cannot program.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Error)]
#[error("event {event:#06x} does not fit the {bits}-bit evtCount field of {version}")]
pub struct EventNotEncodable {
    /// The event number.
    pub event: u16,
    /// The PMU version.
    pub version: PmuVersion,
    /// Width of evtCount in that version.
    pub bits: u32,
}

/// The comparison selected by PMEVTYPER.TC (FEAT_PMUv3_TH). "Add" variants add the event's per-cycle
/// value when the condition holds; "count" variants add one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ThresholdCondition {
    /// 0b000: value ≠ TH, add the value.
    NotEqualAdd,
    /// 0b001: value ≠ TH, add one.
    NotEqualCount,
    /// 0b010: value = TH, add the value.
    EqualAdd,
    /// 0b011: value = TH, add one.
    EqualCount,
    /// 0b100: value ≥ TH, add the value.
    GreaterOrEqualAdd,
    /// 0b101: value ≥ TH, add one.
    GreaterOrEqualCount,
    /// 0b110: value < TH, add the value.
    LessThanAdd,
    /// 0b111: value < TH, add one.
    LessThanCount,
}

impl ThresholdCondition {
    /// Decode the three TC bits (higher bits are ignored).
    pub const fn from_bits(tc: u8) -> Self {
        match tc & 0b111 {
            0b000 => ThresholdCondition::NotEqualAdd,
            0b001 => ThresholdCondition::NotEqualCount,
            0b010 => ThresholdCondition::EqualAdd,
            0b011 => ThresholdCondition::EqualCount,
            0b100 => ThresholdCondition::GreaterOrEqualAdd,
            0b101 => ThresholdCondition::GreaterOrEqualCount,
            0b110 => ThresholdCondition::LessThanAdd,
            _ => ThresholdCondition::LessThanCount,
        }
    }

    /// The three TC bits.
    pub const fn bits(self) -> u8 {
        self as u8
    }
}

impl Pmevtyper {
    /// The whole 16-bit event number (bits `[15:0]`); on PMUv3 only bits `[9:0]` are meaningful.
    pub const fn evt_count(self) -> u16 {
        (self.0 & 0xFFFF) as u16
    }

    /// The event number as `version` sees it (bits above its evtCount width dropped).
    pub const fn evt_count_for(self, version: PmuVersion) -> u16 {
        self.evt_count() & version.evt_count_mask()
    }

    /// A copy with the whole 16-bit event number replaced.
    #[must_use]
    pub const fn with_evt_count(self, event: u16) -> Self {
        Self((self.0 & !0xFFFF) | event as u64)
    }

    /// A filter-free event type for `event`, or an error if `version` cannot encode it.
    pub const fn for_event(event: u16, version: PmuVersion) -> Result<Self, EventNotEncodable> {
        if event & !version.evt_count_mask() != 0 {
            return Err(EventNotEncodable {
                event,
                version,
                bits: version.evt_count_bits(),
            });
        }
        Ok(Self(event as u64))
    }

    /// The threshold condition in TC.
    pub const fn threshold_condition(self) -> ThresholdCondition {
        ThresholdCondition::from_bits(self.tc())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Register;

    #[test]
    fn evt_count_width_follows_version() {
        assert_eq!(Pmevtyper::res0_mask(PmuVersion::V3) & 0xFFFF, 0xFC00);
        assert_eq!(Pmevtyper::res0_mask(PmuVersion::V3p1) & 0xFFFF, 0);
        let err = Pmevtyper::for_event(0x400, PmuVersion::V3).unwrap_err();
        assert_eq!(err.bits, 10);
        assert_eq!(
            Pmevtyper::for_event(0x3FF, PmuVersion::V3).map(Pmevtyper::bits),
            Ok(0x3FF)
        );
        assert_eq!(
            Pmevtyper::for_event(0x4010, PmuVersion::V3p1).map(Pmevtyper::bits),
            Ok(0x4010)
        );
    }

    #[test]
    fn split_event_number_agrees_with_whole() {
        let t = Pmevtyper::default().with_evt_count(0x8158);
        assert_eq!(t.evt_count_low(), 0x158);
        assert_eq!(u16::from(t.evt_count_high()), 0x8158u16 >> 10);
        assert_eq!(t.evt_count_for(PmuVersion::V3), 0x158);
    }

    #[test]
    fn qemu_writable_mask_is_the_v3_writable_set() {
        // QEMU's older model stores P|U|NSK|NSU|NSH|M|MT|evtCount = 0xFE00_FFFF; MT arrives with
        // FEAT_MTPMU, so the plain-v3 set is that without MT and with only ten evtCount bits.
        assert_eq!(Pmevtyper::writable_mask(PmuVersion::V3), 0xFC00_03FF);
        // PMUv3p5 adds evtCount[15:10] (v3p1), SH (v3p4), T and MT.
        assert_eq!(Pmevtyper::writable_mask(PmuVersion::V3p5), 0xFF80_FFFF);
    }

    #[test]
    fn threshold_condition_round_trips() {
        for tc in 0u8..8 {
            assert_eq!(ThresholdCondition::from_bits(tc).bits(), tc);
        }
    }
}
