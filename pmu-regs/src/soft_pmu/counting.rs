//! How events reach the counters of the software PMU: enables, filters, overflow, CHAIN, freeze on
//! overflow, the cycle divider and software increments.

use super::context::Filter;
use super::SoftPmu;
use crate::event::CommonEvent;
use crate::overflow::CounterWidth;
use crate::regs::counter_set::CounterSet;
use crate::regs::pmceid::CommonEventSet;

const CHAIN: u16 = CommonEvent::Chain as u16;
const SW_INCR: u16 = CommonEvent::SwIncr as u16;
const CPU_CYCLES: u16 = CommonEvent::CpuCycles as u16;

impl SoftPmu {
    /// `count` occurrences of event `event` in the current context.
    ///
    /// Every enabled event counter programmed with `event` whose filter permits the context counts
    /// them. An event number wider than the version's evtCount field (0x4005 on PMUv3) matches no
    /// counter. A common event that the configuration's PMCEID pair marks as not implemented never
    /// occurs, so it is ignored (events PMCEID cannot describe, such as IMPLEMENTATION DEFINED ones,
    /// always count). SW_INCR (0x00) and CHAIN (0x1E) are not external events: they count only through
    /// PMSWINC_EL0 writes and even-counter overflows, so they are ignored here. The cycle counter is
    /// driven by [`SoftPmu::run_cycles`].
    pub fn count_event(&mut self, event: u16, count: u64) {
        if event == SW_INCR || event == CHAIN || count == 0 || !self.implements(event) {
            return;
        }
        let candidates = self.counters_for(|pmu, n| pmu.event_of(n) == event);
        self.advance(candidates, count);
    }

    /// `cycles` processor cycles in the current context: the cycle counter (through PMCR_EL0.D's
    /// divider while LC is 0) and every event counter programmed with CPU_CYCLES (0x11).
    pub fn run_cycles(&mut self, cycles: u64) {
        self.count_cycle_counter(cycles);
        self.count_event(CPU_CYCLES, cycles);
    }

    /// A PMSWINC_EL0 write: +1 on each selected counter that is enabled, permitted and programmed with
    /// SW_INCR.
    pub(super) fn software_increment(&mut self, selected: CounterSet) {
        let candidates =
            self.counters_for(|pmu, n| selected.has_event_counter(n) && pmu.event_of(n) == SW_INCR);
        self.advance(candidates, 1);
    }

    /// Whether `event` can occur: an event PMCEID describes must be marked implemented there.
    fn implements(&self, event: u16) -> bool {
        CommonEventSet::bit_of(event).is_err()
            || self
                .config
                .common_events
                .for_version(self.config.version)
                .contains(event)
    }

    /// The event counter `n` is programmed with, as this version reads evtCount.
    fn event_of(&self, n: u8) -> u16 {
        self.evtyper[usize::from(n)].evt_count_for(self.config.version)
    }

    /// Implemented counters for which `wanted` holds and which are enabled and permitted now.
    fn counters_for(&self, wanted: impl Fn(&Self, u8) -> bool) -> CounterSet {
        let mut set = CounterSet::empty();
        for n in 0..self.config.counters {
            if wanted(self, n) && self.event_counter_counts(n) {
                set |= CounterSet::from_bits_retain(1 << n);
            }
        }
        set
    }

    /// Whether event counter `n` is enabled and its filter permits the current context.
    fn event_counter_counts(&self, n: u8) -> bool {
        let range_enabled = if n < self.partition.hpmn {
            self.pmcr.e()
        } else {
            self.partition.hpme
        };
        range_enabled
            && self.cnten.has_event_counter(n)
            && !self.context.counting_prohibited
            && Filter::from(self.evtyper[usize::from(n)]).permits(self.context)
    }

    /// Whether freeze-on-overflow stops counter `n` now (PMCR_EL0.FZO for counters below HPMN).
    fn frozen(&self, n: u8) -> bool {
        self.config.version.has_freeze_on_overflow()
            && n < self.partition.hpmn
            && self.pmcr.fzo()
            && self.ovs.intersects(self.low_range())
    }

    /// Whether counter `n` would freeze the moment it overflows.
    fn freezes_on_overflow(&self, n: u8) -> bool {
        self.config.version.has_freeze_on_overflow() && n < self.partition.hpmn && self.pmcr.fzo()
    }

    /// Adds `count` events to every counter in `candidates`, in bursts that stop at the first overflow
    /// of a counter that freezes on overflow.
    fn advance(&mut self, candidates: CounterSet, count: u64) {
        let mut remaining = count;
        while remaining > 0 {
            let active: CounterSet = candidates
                .event_counters()
                .filter(|&n| !self.frozen(n))
                .map(|n| CounterSet::from_bits_retain(1 << n))
                .collect();
            if active.is_empty() {
                return;
            }
            let mut burst = u128::from(remaining);
            for n in active.event_counters() {
                if self.freezes_on_overflow(n) {
                    burst = burst.min(self.events_to_overflow(n));
                }
            }
            // `burst` ≤ `remaining`, so it fits in u64.
            let burst = burst as u64;
            for n in active.event_counters() {
                let overflows = self.add_to_event_counter(n, u128::from(burst));
                if overflows > 0 {
                    self.chain_from(n, overflows);
                }
            }
            remaining -= burst;
        }
    }

    /// Events until counter `n` next overflows (1..=2^64).
    fn events_to_overflow(&self, n: u8) -> u128 {
        let mask = self.width_of(n).mask();
        u128::from(mask) - u128::from(self.evcntr[usize::from(n)] & mask) + 1
    }

    /// The overflow point of counter `n` (which exists).
    fn width_of(&self, n: u8) -> CounterWidth {
        let long = self.config.version.has_long_event_counters()
            && if n < self.partition.hpmn {
                self.pmcr.lp()
            } else {
                self.partition.hlp
            };
        if long {
            CounterWidth::Bits64
        } else {
            CounterWidth::Bits32
        }
    }

    /// Adds `count` to event counter `n`, sets its overflow flag if it overflowed, and returns how
    /// many times it overflowed.
    fn add_to_event_counter(&mut self, n: u8, count: u128) -> u128 {
        let width = self.width_of(n);
        let value = self.evcntr[usize::from(n)];
        let overflows = (u128::from(value & width.mask()) + count) >> width.bits();
        // Storage wraps at its own width (32 or 64 bits); truncation is the wrap.
        let stored = (u128::from(value) + count) as u64 & self.event_storage_mask();
        self.evcntr[usize::from(n)] = stored;
        if overflows > 0 {
            self.ovs |= CounterSet::from_bits_retain(1 << n);
        }
        overflows
    }

    /// Feeds `overflows` overflows of even counter `n` to the odd counter above it if that counter
    /// counts CHAIN.
    fn chain_from(&mut self, n: u8, overflows: u128) {
        let odd = n + 1;
        if !n.is_multiple_of(2) || odd >= self.config.counters {
            return;
        }
        if self.event_of(odd) != CHAIN || !self.event_counter_counts(odd) || self.frozen(odd) {
            return;
        }
        self.add_to_event_counter(odd, overflows);
    }

    /// Counts `cycles` on PMCCNTR_EL0 if it is enabled and permitted.
    fn count_cycle_counter(&mut self, cycles: u64) {
        let enabled = self.pmcr.e() && self.cnten.contains(CounterSet::C);
        let prohibited = self.context.counting_prohibited && self.pmcr.dp();
        if !enabled || prohibited || !Filter::from(self.ccfiltr).permits(self.context) {
            return;
        }
        let width = CounterWidth::cycle_counter(self.pmcr);
        let ticks = if self.pmcr.d() && !self.pmcr.lc() {
            let total = u128::from(self.prescale) + u128::from(cycles);
            self.prescale = (total % 64) as u8;
            total / 64
        } else {
            u128::from(cycles)
        };
        let overflows = (u128::from(self.ccntr & width.mask()) + ticks) >> width.bits();
        self.ccntr = (u128::from(self.ccntr) + ticks) as u64;
        if overflows > 0 {
            self.ovs |= CounterSet::C;
        }
    }
}
