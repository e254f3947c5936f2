//! The one-bit-per-counter registers: PMCNTENSET/CLR_EL0, PMINTENSET/CLR_EL1, PMOVSSET/CLR_EL0,
//! PMSWINC_EL0 and PMZR_EL0.

use bitflags::bitflags;
use thiserror::Error;

use crate::version::PmuVersion;

bitflags! {
    /// A set of counters, laid out as every counter-bitmap register: bit n = event counter n (0..=30),
    /// bit 31 = the cycle counter, bit 32 = the fixed instruction counter (FEAT_PMUv3_ICNTR).
    ///
    /// | register | read | write 1 |
    /// |---|---|---|
    /// | PMCNTENSET_EL0 / PMCNTENCLR_EL0 | enabled counters | enable / disable |
    /// | PMINTENSET_EL1 / PMINTENCLR_EL1 | overflow-interrupt enables | enable / disable |
    /// | PMOVSSET_EL0 / PMOVSCLR_EL0 | overflow flags | set / clear |
    /// | PMSWINC_EL0 (write-only) | — | software increment (bits `[30:0]` only) |
    /// | PMZR_EL0 (write-only, PMUv3p9) | — | zero the counter |
    ///
    /// Writing 0 never changes anything. Bits of unimplemented counters are RAZ/WI.
    ///
    /// ```
    /// use pmu_regs::CounterSet;
    /// let s = CounterSet::event_counter(3).unwrap() | CounterSet::C;
    /// assert_eq!(s.bits(), 0x8000_0008);
    /// assert_eq!(CounterSet::implemented(6).bits(), 0x8000_003F);
    /// assert!(CounterSet::event_counter(31).is_err()); // 31 is the cycle counter's bit
    /// ```
    #[derive(Clone, Copy, PartialEq, Eq, Hash, Default, Debug)]
    pub struct CounterSet: u64 {
        /// Event counter 0 (PMEVCNTR0_EL0).
        const P0 = 1 << 0;
        /// Event counter 1 (PMEVCNTR1_EL0).
        const P1 = 1 << 1;
        /// Event counter 2 (PMEVCNTR2_EL0).
        const P2 = 1 << 2;
        /// Event counter 3 (PMEVCNTR3_EL0).
        const P3 = 1 << 3;
        /// Event counter 4 (PMEVCNTR4_EL0).
        const P4 = 1 << 4;
        /// Event counter 5 (PMEVCNTR5_EL0).
        const P5 = 1 << 5;
        /// Event counter 6 (PMEVCNTR6_EL0).
        const P6 = 1 << 6;
        /// Event counter 7 (PMEVCNTR7_EL0).
        const P7 = 1 << 7;
        /// Event counter 8 (PMEVCNTR8_EL0).
        const P8 = 1 << 8;
        /// Event counter 9 (PMEVCNTR9_EL0).
        const P9 = 1 << 9;
        /// Event counter 10 (PMEVCNTR10_EL0).
        const P10 = 1 << 10;
        /// Event counter 11 (PMEVCNTR11_EL0).
        const P11 = 1 << 11;
        /// Event counter 12 (PMEVCNTR12_EL0).
        const P12 = 1 << 12;
        /// Event counter 13 (PMEVCNTR13_EL0).
        const P13 = 1 << 13;
        /// Event counter 14 (PMEVCNTR14_EL0).
        const P14 = 1 << 14;
        /// Event counter 15 (PMEVCNTR15_EL0).
        const P15 = 1 << 15;
        /// Event counter 16 (PMEVCNTR16_EL0).
        const P16 = 1 << 16;
        /// Event counter 17 (PMEVCNTR17_EL0).
        const P17 = 1 << 17;
        /// Event counter 18 (PMEVCNTR18_EL0).
        const P18 = 1 << 18;
        /// Event counter 19 (PMEVCNTR19_EL0).
        const P19 = 1 << 19;
        /// Event counter 20 (PMEVCNTR20_EL0).
        const P20 = 1 << 20;
        /// Event counter 21 (PMEVCNTR21_EL0).
        const P21 = 1 << 21;
        /// Event counter 22 (PMEVCNTR22_EL0).
        const P22 = 1 << 22;
        /// Event counter 23 (PMEVCNTR23_EL0).
        const P23 = 1 << 23;
        /// Event counter 24 (PMEVCNTR24_EL0).
        const P24 = 1 << 24;
        /// Event counter 25 (PMEVCNTR25_EL0).
        const P25 = 1 << 25;
        /// Event counter 26 (PMEVCNTR26_EL0).
        const P26 = 1 << 26;
        /// Event counter 27 (PMEVCNTR27_EL0).
        const P27 = 1 << 27;
        /// Event counter 28 (PMEVCNTR28_EL0).
        const P28 = 1 << 28;
        /// Event counter 29 (PMEVCNTR29_EL0).
        const P29 = 1 << 29;
        /// Event counter 30 (PMEVCNTR30_EL0).
        const P30 = 1 << 30;
        /// The cycle counter (PMCCNTR_EL0), bit 31 in every counter-bitmap register.
        const C = 1 << 31;
        /// The fixed-function instruction counter (PMICNTR_EL0), FEAT_PMUv3_ICNTR only.
        const F0 = 1 << 32;
    }
}

/// An event counter index outside 0..=30, or not below the number of implemented counters.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Error)]
#[error("event counter {index} does not exist (limit {limit})")]
pub struct NoSuchCounter {
    /// The requested index.
    pub index: u8,
    /// The number of counters that exist (31 architecturally, or PMCR.N).
    pub limit: u8,
}

impl CounterSet {
    /// All 31 event-counter bits, P0..=P30.
    pub const EVENT_COUNTERS: CounterSet = CounterSet::from_bits_retain(0x7FFF_FFFF);

    /// The set holding only event counter `index` (0..=30).
    pub const fn event_counter(index: u8) -> Result<CounterSet, NoSuchCounter> {
        if index > 30 {
            return Err(NoSuchCounter { index, limit: 31 });
        }
        Ok(CounterSet::from_bits_retain(1u64 << index))
    }

    /// The bits a PMU with `counters` event counters implements: P0..P(counters−1) and C.
    /// `counters` above 31 is treated as 31.
    pub const fn implemented(counters: u8) -> CounterSet {
        let n = if counters > 31 { 31 } else { counters };
        let low = (1u64 << n) - 1;
        CounterSet::from_bits_retain(low | CounterSet::C.bits())
    }

    /// Bits `[63:33]` always, and F0 before PMUv3p9 (FEAT_PMUv3_ICNTR arrives with Armv8.9).
    pub const fn res0_mask(version: PmuVersion) -> u64 {
        let always = !0u64 << 33;
        if version.has_v3p9_controls() {
            always
        } else {
            always | CounterSet::F0.bits()
        }
    }

    /// Whether event counter `index` is in the set (false for indices above 30).
    pub const fn has_event_counter(self, index: u8) -> bool {
        index <= 30 && self.bits() & (1u64 << index) != 0
    }

    /// The event-counter indices in the set, lowest first.
    pub fn event_counters(self) -> impl Iterator<Item = u8> {
        let bits = self.bits();
        (0u8..=30).filter(move |&n| bits & (1u64 << n) != 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cycle_counter_is_bit_31() {
        assert_eq!(CounterSet::C.bits(), 1 << 31);
        assert_eq!(CounterSet::P30.bits(), 1 << 30);
        assert_eq!(CounterSet::EVENT_COUNTERS.bits().count_ones(), 31);
    }

    #[test]
    fn implemented_sets() {
        assert_eq!(CounterSet::implemented(0), CounterSet::C);
        assert_eq!(CounterSet::implemented(31).bits(), 0xFFFF_FFFF);
        assert_eq!(CounterSet::implemented(200).bits(), 0xFFFF_FFFF);
    }

    #[test]
    fn iterates_event_counters_only() {
        let s = CounterSet::from_bits_retain(0x1_8000_0005);
        assert!(s.event_counters().eq([0u8, 2]));
        assert!(s.has_event_counter(2) && !s.has_event_counter(31));
    }

    #[test]
    fn f0_is_res0_before_v3p9() {
        assert_ne!(CounterSet::res0_mask(PmuVersion::V3p8) & (1 << 32), 0);
        assert_eq!(CounterSet::res0_mask(PmuVersion::V3p9) & (1 << 32), 0);
    }
}
