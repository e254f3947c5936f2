//! Exact counter arithmetic: overflow points, deltas across wraps, sampling presets, the 32-bit bias
//! on 64-bit counters, chained pairs, and turning raw reads plus overflow counts into 64-bit totals.
//!
//! Counters never saturate: every PMU counter wraps modulo 2^width, and "overflow" means the unsigned
//! carry out of the overflow bit (31 or 63), which sets the counter's PMOVS flag.

use thiserror::Error;

use crate::regs::counter_set::NoSuchCounter;
use crate::regs::pmcr::Pmcr;
use crate::version::PmuVersion;

/// Where a counter overflows: the carry out of bit 31 or of bit 63.
///
/// This is a property of the counter *and* the control registers at the time, never of a register
/// type: PMCCNTR_EL0 is always 64 bits of storage but overflows at bit 31 while PMCR_EL0.LC is 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CounterWidth {
    /// Overflow on the carry out of bit 31.
    Bits32,
    /// Overflow on the carry out of bit 63.
    Bits64,
}

/// The MDCR_EL2 fields that split the event counters between EL1/EL0 and EL2.
///
/// Counters below `hpmn` use PMCR_EL0.E and PMCR_EL0.LP; counters from `hpmn` up use `hpme` and `hlp`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct El2Partition {
    /// MDCR_EL2.HPMN: the number of counters EL1 and EL0 own.
    pub hpmn: u8,
    /// MDCR_EL2.HPME: enable for counters `hpmn` and above.
    pub hpme: bool,
    /// MDCR_EL2.HLP (PMUv3p5): counters `hpmn` and above overflow at bit 63.
    pub hlp: bool,
}

impl El2Partition {
    /// No partition: EL1 owns all `counters` counters (HPMN = N).
    pub const fn unpartitioned(counters: u8) -> Self {
        Self {
            hpmn: counters,
            hpme: false,
            hlp: false,
        }
    }
}

impl CounterWidth {
    /// Width in bits (32 or 64).
    pub const fn bits(self) -> u32 {
        match self {
            CounterWidth::Bits32 => 32,
            CounterWidth::Bits64 => 64,
        }
    }

    /// 2^bits − 1.
    pub const fn mask(self) -> u64 {
        match self {
            CounterWidth::Bits32 => 0xFFFF_FFFF,
            CounterWidth::Bits64 => u64::MAX,
        }
    }

    /// The bit whose carry-out is the overflow (31 or 63).
    pub const fn overflow_bit(self) -> u32 {
        self.bits() - 1
    }

    /// Overflow point of PMCCNTR_EL0: bit 63 when PMCR_EL0.LC is 1, else bit 31.
    pub const fn cycle_counter(pmcr: Pmcr) -> Self {
        if pmcr.lc() {
            CounterWidth::Bits64
        } else {
            CounterWidth::Bits32
        }
    }

    /// Overflow point of event counter `index`.
    ///
    /// Before PMUv3p5 event counters are 32-bit. From PMUv3p5 a counter below HPMN overflows at bit 63
    /// when PMCR_EL0.LP is 1, and a counter at or above HPMN when MDCR_EL2.HLP is 1.
    ///
    /// ```
    /// use pmu_regs::overflow::{CounterWidth, El2Partition};
    /// use pmu_regs::{Pmcr, PmuVersion};
    /// let lp = Pmcr::default().with_lp(true);
    /// let split = El2Partition { hpmn: 4, hpme: true, hlp: false };
    /// assert_eq!(CounterWidth::event_counter(PmuVersion::V3p5, lp, split, 3), Ok(CounterWidth::Bits64));
    /// assert_eq!(CounterWidth::event_counter(PmuVersion::V3p5, lp, split, 4), Ok(CounterWidth::Bits32));
    /// assert_eq!(CounterWidth::event_counter(PmuVersion::V3p4, lp, split, 0), Ok(CounterWidth::Bits32));
    /// ```
    pub const fn event_counter(
        version: PmuVersion,
        pmcr: Pmcr,
        partition: El2Partition,
        index: u8,
    ) -> Result<Self, NoSuchCounter> {
        if index > 30 {
            return Err(NoSuchCounter { index, limit: 31 });
        }
        let long = version.has_long_event_counters()
            && if index < partition.hpmn {
                pmcr.lp()
            } else {
                partition.hlp
            };
        Ok(if long {
            CounterWidth::Bits64
        } else {
            CounterWidth::Bits32
        })
    }
}

/// Events counted between two reads of a `width` counter: `(new − prev) & mask`.
///
/// Exact whenever fewer than 2^width events happened between the reads, including across a wrap:
/// `prev = 0xFFFF_FFF0`, `new = 0x10` gives `0x20`.
///
/// ```
/// use pmu_regs::overflow::{delta, CounterWidth};
/// assert_eq!(delta(0xFFFF_FFF0, 0x10, CounterWidth::Bits32), 0x20);
/// assert_eq!(delta(5, 5, CounterWidth::Bits64), 0);
/// ```
pub const fn delta(prev: u64, new: u64, width: CounterWidth) -> u64 {
    new.wrapping_sub(prev) & width.mask()
}

/// A sampling period the counter cannot express.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum PeriodError {
    /// A period of zero events never overflows.
    #[error("a sampling period of zero events is meaningless")]
    Zero,
    /// The period is longer than one full wrap of the counter.
    #[error("period {period} exceeds 2^{bits} events, one full wrap of the counter")]
    TooLong {
        /// The requested period.
        period: u64,
        /// Counter width in bits.
        bits: u32,
    },
}

/// The value to write so that the counter overflows after exactly `period` more events:
/// `(−period) & mask`. Valid periods are 1..=2^width (2^32 presets the counter to zero).
///
/// ```
/// use pmu_regs::overflow::{preset_for_period, CounterWidth};
/// assert_eq!(preset_for_period(0x100, CounterWidth::Bits32), Ok(0xFFFF_FF00));
/// assert_eq!(preset_for_period(1 << 32, CounterWidth::Bits32), Ok(0));
/// assert!(preset_for_period(0, CounterWidth::Bits32).is_err());
/// ```
pub const fn preset_for_period(period: u64, width: CounterWidth) -> Result<u64, PeriodError> {
    if period == 0 {
        return Err(PeriodError::Zero);
    }
    if let CounterWidth::Bits32 = width {
        if period > 1 << 32 {
            return Err(PeriodError::TooLong { period, bits: 32 });
        }
    }
    Ok(period.wrapping_neg() & width.mask())
}

/// The period Linux uses for counting (non-sampling) events: half a wrap, `mask >> 1`, which leaves
/// half a wrap of margin for interrupt latency.
pub const fn half_range_period(width: CounterWidth) -> u64 {
    width.mask() >> 1
}

/// Bits `[63:32]` set: the bias that gives a 64-bit counter (overflowing at bit 63) the overflow
/// behaviour of a 32-bit one.
pub const BIAS_32: u64 = 0xFFFF_FFFF_0000_0000;

/// The 64-bit value to write so that a counter overflowing at bit 63 overflows exactly when a 32-bit
/// counter holding `value` would: `value` with bits `[63:32]` set.
///
/// ```
/// use pmu_regs::overflow::{bias_32, unbias_32};
/// let raw = bias_32(0xFFFF_FFFE);
/// let (after, carried) = raw.overflowing_add(2); // two events
/// assert!(carried); // bit-63 overflow, as a 32-bit counter would have wrapped
/// assert_eq!(unbias_32(after), 0);
/// ```
pub const fn bias_32(value: u32) -> u64 {
    BIAS_32 | value as u64
}

/// The 32-bit count inside a biased 64-bit counter value: bits `[31:0]`.
pub const fn unbias_32(raw: u64) -> u32 {
    raw as u32
}

/// A chaining request the architecture cannot honour.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum ChainError {
    /// The low counter of a pair must have an even index.
    #[error("counter {0} cannot start a chained pair: the low counter must be even")]
    OddLowCounter(u8),
    /// The pair would need counter 31, which is the cycle counter's slot.
    #[error("counter {0} cannot start a chained pair: its partner would be counter 31")]
    NoPartner(u8),
}

/// Two event counters used as one 64-bit counter: the even counter `2k` counts the event (low 32
/// bits) and the odd counter `2k + 1` counts CHAIN (0x1E), one per overflow of the even counter (high
/// 32 bits).
///
/// Chaining only makes sense while the even counter overflows at bit 31; with PMUv3p5 long counters
/// a single counter is already 64 bits.
///
/// ```
/// use pmu_regs::overflow::ChainedPair;
/// let pair = ChainedPair::new(2).unwrap();
/// assert_eq!((pair.low(), pair.high()), (2, 3));
/// assert_eq!(ChainedPair::compose(0x1, 0x2), 0x1_0000_0002);
/// assert_eq!(ChainedPair::split(0x1_0000_0002), (0x1, 0x2));
/// assert!(ChainedPair::new(3).is_err());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ChainedPair {
    low: u8,
}

impl ChainedPair {
    /// The pair whose low (even) counter is `low`.
    pub const fn new(low: u8) -> Result<Self, ChainError> {
        if !low.is_multiple_of(2) {
            return Err(ChainError::OddLowCounter(low));
        }
        if low >= 30 {
            return Err(ChainError::NoPartner(low));
        }
        Ok(Self { low })
    }

    /// The even counter (the event, low half).
    pub const fn low(self) -> u8 {
        self.low
    }

    /// The odd counter (CHAIN, high half).
    pub const fn high(self) -> u8 {
        self.low + 1
    }

    /// The 64-bit value of the pair: `(high << 32) | low`, each half taken from bits `[31:0]`.
    pub const fn compose(high: u64, low: u64) -> u64 {
        (high & 0xFFFF_FFFF) << 32 | (low & 0xFFFF_FFFF)
    }

    /// The halves of a 64-bit value: `(high, low)`. Write the high counter first.
    pub const fn split(value: u64) -> (u64, u64) {
        (value >> 32, value & 0xFFFF_FFFF)
    }
}

/// A 64-bit value read as two 32-bit halves could not be read consistently.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Error)]
#[error("the high word changed on every one of {attempts} attempts to read a 64-bit counter")]
pub struct TornRead {
    /// How many hi-lo-hi rounds were tried.
    pub attempts: u32,
}

/// Reads a 64-bit counter from two 32-bit halves with the hi-lo-hi rule: read high, low, high again,
/// and accept when both highs agree. Gives up after `attempts` rounds.
///
/// ```
/// use pmu_regs::overflow::read_hi_lo_hi;
/// let v = read_hi_lo_hi(|| 0x1, || 0x2, 3);
/// assert_eq!(v, Ok(0x1_0000_0002));
/// ```
pub fn read_hi_lo_hi(
    mut read_high: impl FnMut() -> u32,
    mut read_low: impl FnMut() -> u32,
    attempts: u32,
) -> Result<u64, TornRead> {
    let mut high = read_high();
    for _ in 0..attempts {
        let low = read_low();
        let again = read_high();
        if again == high {
            return Ok(u64::from(high) << 32 | u64::from(low));
        }
        high = again;
    }
    Err(TornRead { attempts })
}

/// A raw read the accumulator cannot reconcile.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum AccumulatorError {
    /// The counter went backwards but no overflow was reported: an overflow was missed, or the
    /// overflow flag and the counter were not read consistently.
    #[error("counter went from {previous:#x} to {current:#x} with no overflow reported")]
    MissedOverflow {
        /// The previous raw value (masked to the counter width).
        previous: u64,
        /// The new raw value (masked to the counter width).
        current: u64,
    },
    /// The running total would exceed 2^64 − 1.
    #[error("the accumulated total exceeds 2^64 - 1")]
    TotalOverflow,
}

/// Turns successive raw reads of one counter, plus the overflows seen since the previous read, into
/// an exact 64-bit total.
///
/// The usual formula `overflows × 2^32 + current` is wrong in four ways that this type fixes:
/// it ignores the counter's starting value (counters are preset for sampling), it assumes 32 bits
/// (LC/LP make the overflow point bit 63), it needs the overflow count and the counter value to
/// describe the same instant, and a PMOVS flag is sticky: it records *at least one* overflow, so
/// several wraps between two reads of the flag look like one. Count overflows where they are
/// cleared (the overflow interrupt handler reads PMOVSCLR_EL0 and writes the bits back), read the
/// flag, then the counter, then the flag again, and pass the count to [`OverflowAccumulator::update`].
///
/// ```
/// use pmu_regs::overflow::{CounterWidth, OverflowAccumulator};
/// let mut acc = OverflowAccumulator::new(CounterWidth::Bits32, 0xFFFF_0000);
/// // Two overflows later the counter reads 0x0001_0000: 2 × 2^32 + 0x1_0000 − 0xFFFF_0000 events.
/// assert_eq!(acc.update(0x0001_0000, 2), Ok(0x1_0002_0000));
/// assert_eq!(acc.total(), 0x1_0002_0000);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct OverflowAccumulator {
    width: CounterWidth,
    last: u64,
    total: u64,
}

impl OverflowAccumulator {
    /// Starts accumulating from the raw value `initial` (for example a sampling preset).
    pub const fn new(width: CounterWidth, initial: u64) -> Self {
        Self {
            width,
            last: initial & width.mask(),
            total: 0,
        }
    }

    /// The counter width (overflow point) assumed.
    pub const fn width(&self) -> CounterWidth {
        self.width
    }

    /// Events counted since construction.
    pub const fn total(&self) -> u64 {
        self.total
    }

    /// The last raw value accepted, masked to the counter width.
    pub const fn last_raw(&self) -> u64 {
        self.last
    }

    /// Accepts a new raw value `raw` read after `overflows` overflows since the previous update, and
    /// returns the events counted in between: `overflows × 2^width + raw − previous`.
    ///
    /// Bits of `raw` above the overflow point are ignored (a PMUv3p5 event counter overflowing at
    /// bit 31 keeps counting into bits `[63:32]`; each such carry is one overflow). On error nothing
    /// changes.
    pub fn update(&mut self, raw: u64, overflows: u64) -> Result<u64, AccumulatorError> {
        let current = raw & self.width.mask();
        let wraps = u128::from(overflows) << self.width.bits();
        let events = (wraps + u128::from(current))
            .checked_sub(u128::from(self.last))
            .ok_or(AccumulatorError::MissedOverflow {
                previous: self.last,
                current,
            })?;
        let total = u128::from(self.total) + events;
        if total > u128::from(u64::MAX) {
            return Err(AccumulatorError::TotalOverflow);
        }
        self.total = total as u64;
        self.last = current;
        Ok(events as u64)
    }

    /// [`OverflowAccumulator::update`] with a PMOVS flag read and cleared since the previous update:
    /// exact when at most one overflow can happen between updates.
    pub fn update_with_flag(
        &mut self,
        raw: u64,
        overflowed: bool,
    ) -> Result<u64, AccumulatorError> {
        self.update(raw, u64::from(overflowed))
    }

    /// Accepts `raw` assuming fewer than 2^width events since the previous update and no overflow
    /// information (Linux's `delta = (new − prev) & mask` rule).
    pub fn update_within_range(&mut self, raw: u64) -> Result<u64, AccumulatorError> {
        let current = raw & self.width.mask();
        let events = delta(self.last, current, self.width);
        let total = self
            .total
            .checked_add(events)
            .ok_or(AccumulatorError::TotalOverflow)?;
        self.total = total;
        self.last = current;
        Ok(events)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cycle_counter_width_follows_lc() {
        assert_eq!(
            CounterWidth::cycle_counter(Pmcr::default()),
            CounterWidth::Bits32
        );
        assert_eq!(
            CounterWidth::cycle_counter(Pmcr::default().with_lc(true)),
            CounterWidth::Bits64
        );
    }

    #[test]
    fn hlp_governs_el2_counters() {
        let split = El2Partition {
            hpmn: 2,
            hpme: true,
            hlp: true,
        };
        let w = |i| CounterWidth::event_counter(PmuVersion::V3p9, Pmcr::default(), split, i);
        assert_eq!(w(1), Ok(CounterWidth::Bits32));
        assert_eq!(w(2), Ok(CounterWidth::Bits64));
        assert_eq!(
            w(31),
            Err(NoSuchCounter {
                index: 31,
                limit: 31
            })
        );
    }

    #[test]
    fn period_limits() {
        assert_eq!(
            preset_for_period(0, CounterWidth::Bits64),
            Err(PeriodError::Zero)
        );
        assert_eq!(
            preset_for_period((1 << 32) + 1, CounterWidth::Bits32),
            Err(PeriodError::TooLong {
                period: (1 << 32) + 1,
                bits: 32
            })
        );
        assert_eq!(preset_for_period(u64::MAX, CounterWidth::Bits64), Ok(1));
        assert_eq!(half_range_period(CounterWidth::Bits32), 0x7FFF_FFFF);
    }

    #[test]
    fn chain_errors() {
        assert_eq!(ChainedPair::new(5), Err(ChainError::OddLowCounter(5)));
        assert_eq!(ChainedPair::new(30), Err(ChainError::NoPartner(30)));
        assert_eq!(ChainedPair::new(28).map(ChainedPair::high), Ok(29));
    }

    #[test]
    fn torn_reads_are_retried_then_reported() {
        let mut highs = [1u32, 2, 2].into_iter();
        assert_eq!(
            read_hi_lo_hi(|| highs.next().unwrap_or(9), || 7, 3),
            Ok(0x2_0000_0007)
        );
        let mut n = 0u32;
        let err = read_hi_lo_hi(
            || {
                n += 1;
                n
            },
            || 0,
            4,
        );
        assert_eq!(err, Err(TornRead { attempts: 4 }));
    }

    #[test]
    fn accumulator_errors_leave_state_alone() {
        let mut acc = OverflowAccumulator::new(CounterWidth::Bits32, 100);
        assert_eq!(
            acc.update(50, 0),
            Err(AccumulatorError::MissedOverflow {
                previous: 100,
                current: 50
            })
        );
        assert_eq!((acc.total(), acc.last_raw()), (0, 100));
        assert_eq!(acc.update_with_flag(50, true), Ok((1 << 32) - 50));

        let mut big = OverflowAccumulator::new(CounterWidth::Bits64, 0);
        assert_eq!(big.update(5, 1), Err(AccumulatorError::TotalOverflow));
        assert_eq!(big.update(u64::MAX, 0), Ok(u64::MAX));
        assert_eq!(
            big.update_within_range(0),
            Err(AccumulatorError::TotalOverflow)
        );
    }

    #[test]
    fn upper_bits_of_long_storage_are_ignored() {
        // PMUv3p5, LP = 0: the counter has 64 bits of storage but overflows at bit 31.
        let mut acc = OverflowAccumulator::new(CounterWidth::Bits32, 0xFFFF_FFFF);
        assert_eq!(acc.update(0x1_0000_0001, 1), Ok(2));
        assert_eq!(acc.update_within_range(0x1_0000_0011), Ok(0x10));
    }
}
