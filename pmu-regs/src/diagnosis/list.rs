//! `Reasons`, a short ordered list of typed reasons that needs no allocator.

use core::fmt;

/// How many reasons a [`Reasons`] can hold: more than any one question can have.
pub const CAPACITY: usize = 8;

/// The reasons found for one question, in the order the hardware applies its conditions. Empty means
/// nothing stops the thing asked about.
///
/// `Display` joins the reasons' messages with `"; "` (nothing for an empty list).
///
/// ```
/// use pmu_regs::diagnosis::{AccessPath, Counter, NotCounting, PmuSnapshot};
/// use pmu_regs::soft_pmu::ExecContext;
/// use pmu_regs::{Pmcr, PmuVersion};
///
/// let pmcr = Pmcr::default().with_n(6).unwrap(); // six counters, PMCR_EL0.E clear
/// let snapshot = PmuSnapshot::new(PmuVersion::V3p1, pmcr, ExecContext::USER, AccessPath::El1);
/// let reasons = snapshot.why_not_counting(Counter::Event(0));
/// assert_eq!(reasons.first(), Some(NotCounting::PmuDisabled));
/// // E clear, PMCNTENSET_EL0 bit 0 clear, and PMEVTYPER0_EL0 still 0: SW_INCR.
/// assert_eq!(reasons.len(), 3);
/// assert_eq!(reasons.iter().last(), Some(NotCounting::SoftwareIncrementOnly { index: 0 }));
/// assert!(reasons.to_string().starts_with("PMCR_EL0.E (bit 0) is 0"));
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Reasons<R> {
    items: [Option<R>; CAPACITY],
    len: u8,
}

impl<R: Copy> Reasons<R> {
    /// No reasons.
    pub const fn new() -> Self {
        Self {
            items: [None; CAPACITY],
            len: 0,
        }
    }

    /// Appends `reason` (a list that is full keeps its first [`CAPACITY`] reasons).
    pub(crate) fn push(&mut self, reason: R) {
        if let Some(slot) = self.items.get_mut(usize::from(self.len)) {
            *slot = Some(reason);
            self.len += 1;
        }
    }

    /// Whether no reason was found.
    pub const fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// How many reasons were found.
    pub const fn len(&self) -> usize {
        self.len as usize
    }

    /// The first reason, the one the hardware applies first.
    pub fn first(&self) -> Option<R> {
        self.items[0]
    }

    /// The reasons in order.
    pub fn iter(&self) -> impl Iterator<Item = R> + '_ {
        self.items.iter().map_while(|r| *r)
    }
}

impl<R: Copy> Default for Reasons<R> {
    fn default() -> Self {
        Self::new()
    }
}

impl<R: Copy + fmt::Debug> fmt::Debug for Reasons<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl<R: Copy + fmt::Display> fmt::Display for Reasons<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, reason) in self.iter().enumerate() {
            if i > 0 {
                f.write_str("; ")?;
            }
            write!(f, "{reason}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::string::ToString;
    use std::vec::Vec;

    #[test]
    fn keeps_order_and_capacity() {
        let mut r: Reasons<u8> = Reasons::new();
        assert!(r.is_empty() && r.first().is_none() && r.to_string().is_empty());
        for i in 0..10 {
            r.push(i);
        }
        assert_eq!(r.len(), CAPACITY);
        assert_eq!(r.iter().collect::<Vec<_>>(), (0..8).collect::<Vec<_>>());
        assert_eq!(r.first(), Some(0));
        let mut two: Reasons<u8> = Reasons::default();
        two.push(3);
        two.push(4);
        assert_eq!(two.to_string(), "3; 4");
        assert_eq!(std::format!("{two:?}"), "[3, 4]");
    }
}
