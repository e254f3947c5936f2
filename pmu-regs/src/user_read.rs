//! The arithmetic of a counter read from user space next to the count the kernel keeps.
//!
//! Linux lets a task read its own counters without a system call (`perf_event_mmap_page`): the kernel
//! publishes an `offset` and the counter width (`pmc_width`), the task reads the hardware counter
//! (`MRS PMEVCNTR<n>_EL0` / `PMCCNTR_EL0` on Arm, `rdpmc` on x86) and the count is
//! `offset + sign_extend(raw, pmc_width)`, modulo 2^64.
//!
//! Why sign extension is exact across a wrap: the kernel programs a counting (non-sampling) event with
//! half a wrap of room ([`half_range_period`](crate::overflow::half_range_period)): it writes
//! `(−left) & mask` to the counter, remembers `prev = (u64)(−left)`, and publishes
//! `offset = count − prev`. Until the overflow interrupt reprograms the counter, the counter holds
//! `prev + k` in its low `width` bits after `k` events, and `prev + k` sign-extended from `width` bits is
//! `prev + k` as a 64-bit two's-complement number as long as `k` stays below half a wrap past the
//! overflow — which is what the half-range period guarantees. Bits above `pmc_width` (a PMUv3p5 counter
//! that overflows at bit 31 but stores 64 bits, biased by [`BIAS_32`](crate::overflow::BIAS_32)) are
//! discarded by the extension.

use thiserror::Error;

use crate::overflow::CounterWidth;

/// The number of low bits of a raw counter value that carry the count (`perf_event_mmap_page.pmc_width`):
/// 1 to 64.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PmcWidth(u8);

/// A `pmc_width` outside 1..=64.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Error)]
#[error("counter width {0} is outside 1..=64")]
pub struct BadPmcWidth(pub u16);

impl PmcWidth {
    /// 32 bits: an Arm counter overflowing at bit 31.
    pub const BITS32: PmcWidth = PmcWidth(32);
    /// 64 bits: an Arm counter overflowing at bit 63.
    pub const BITS64: PmcWidth = PmcWidth(64);

    /// The width a perf mmap page gives, checked.
    ///
    /// ```
    /// use pmu_regs::user_read::PmcWidth;
    /// assert_eq!(PmcWidth::new(48).map(PmcWidth::bits), Ok(48));
    /// assert!(PmcWidth::new(0).is_err());
    /// assert!(PmcWidth::new(65).is_err());
    /// ```
    #[inline]
    pub const fn new(bits: u16) -> Result<PmcWidth, BadPmcWidth> {
        if bits == 0 || bits > 64 {
            Err(BadPmcWidth(bits))
        } else {
            Ok(PmcWidth(bits as u8))
        }
    }

    /// The width of an Arm counter with this overflow point.
    pub const fn from_counter_width(width: CounterWidth) -> PmcWidth {
        match width {
            CounterWidth::Bits32 => PmcWidth::BITS32,
            CounterWidth::Bits64 => PmcWidth::BITS64,
        }
    }

    /// The Arm overflow point of this width, when it is one (32 or 64).
    pub const fn counter_width(self) -> Option<CounterWidth> {
        match self.0 {
            32 => Some(CounterWidth::Bits32),
            64 => Some(CounterWidth::Bits64),
            _ => None,
        }
    }

    /// Width in bits.
    #[inline]
    pub const fn bits(self) -> u32 {
        self.0 as u32
    }

    /// The low `bits` of a raw value: `raw & (2^bits − 1)`.
    #[inline]
    pub const fn mask(self) -> u64 {
        u64::MAX >> (64 - self.0 as u32)
    }
}

/// `raw`'s low `width` bits as a two's-complement number (the kernel's `pmc <<= 64 − width;
/// pmc >>= 64 − width` with an arithmetic shift).
///
/// ```
/// use pmu_regs::user_read::{sign_extend, PmcWidth};
/// assert_eq!(sign_extend(0xFFFF_FFFF, PmcWidth::BITS32), -1);
/// assert_eq!(sign_extend(0x7FFF_FFFF, PmcWidth::BITS32), 0x7FFF_FFFF);
/// // A 64-bit register biased to overflow at bit 31: the upper half is ignored.
/// assert_eq!(sign_extend(0xFFFF_FFFF_0000_0005, PmcWidth::BITS32), 5);
/// ```
#[inline]
pub const fn sign_extend(raw: u64, width: PmcWidth) -> i64 {
    let shift = 64 - width.bits();
    ((raw << shift) as i64) >> shift
}

/// The event count a user-space read gives: `offset + sign_extend(raw, width)` modulo 2^64, the value
/// `read()` of the event returns at the same instant.
///
/// ```
/// use pmu_regs::user_read::{user_count, PmcWidth};
/// // The kernel programmed the counter to 0x8000_0001 (half a wrap) when the count was 1000: it
/// // published offset = 1000 − 0xFFFF_FFFF_8000_0001. Three events later the counter reads 0x8000_0004.
/// let prev = 0xFFFF_FFFF_8000_0001u64;
/// let offset = 1000u64.wrapping_sub(prev) as i64;
/// assert_eq!(user_count(offset, 0x8000_0004, PmcWidth::BITS32), 1003);
/// // 2^31 events later the counter has wrapped through zero; the sum is still exact.
/// assert_eq!(user_count(offset, 0x0000_0003, PmcWidth::BITS32), 1000 + (1 << 31) + 2);
/// ```
#[inline]
pub const fn user_count(offset: i64, raw: u64, width: PmcWidth) -> u64 {
    offset.wrapping_add(sign_extend(raw, width)) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn widths() {
        assert_eq!(PmcWidth::new(1).map(PmcWidth::mask), Ok(1));
        assert_eq!(PmcWidth::BITS64.mask(), u64::MAX);
        assert_eq!(PmcWidth::BITS32.mask(), 0xFFFF_FFFF);
        assert_eq!(PmcWidth::BITS32.counter_width(), Some(CounterWidth::Bits32));
        assert_eq!(PmcWidth::new(48).unwrap().counter_width(), None);
        assert_eq!(
            PmcWidth::from_counter_width(CounterWidth::Bits64),
            PmcWidth::BITS64
        );
        assert_eq!(PmcWidth::new(0), Err(BadPmcWidth(0)));
    }

    #[test]
    fn extension_at_the_edges() {
        assert_eq!(sign_extend(u64::MAX, PmcWidth::BITS64), -1);
        assert_eq!(sign_extend(1 << 47, PmcWidth::new(48).unwrap()), -(1 << 47));
        assert_eq!(sign_extend(1, PmcWidth::new(1).unwrap()), -1);
        assert_eq!(sign_extend(0, PmcWidth::new(1).unwrap()), 0);
        assert_eq!(user_count(-5, 5, PmcWidth::BITS64), 0);
    }
}
