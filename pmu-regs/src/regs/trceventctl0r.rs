//! TRCEVENTCTL0R, the ETE's event selection: which resource selector fires each of the four trace
//! events.

use crate::encoding::SysRegEncoding;
use crate::regs::field::register;
use crate::regs::trcrsctlr::{NoSuchResource, ResourceSelector};

/// One of the trace unit's four ETE events (those below TRCIDR0.NUMEVENT + 1 exist).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum TraceEvent {
    /// ETEEvent 0 (also the ATB trigger, TRCEVENTCTL1R.ATB).
    Event0,
    /// ETEEvent 1.
    Event1,
    /// ETEEvent 2.
    Event2,
    /// ETEEvent 3.
    Event3,
}

impl TraceEvent {
    /// The four events in order.
    pub const ALL: [TraceEvent; 4] = [
        TraceEvent::Event0,
        TraceEvent::Event1,
        TraceEvent::Event2,
        TraceEvent::Event3,
    ];

    /// Its number (0..=3).
    pub const fn index(self) -> u8 {
        self as u8
    }
}

/// A pair of resource selectors, 1..=15 (pair p is selectors 2p and 2p + 1). Pair 0, the fixed
/// selectors, is UNPREDICTABLE as an event source and is refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ResourcePair(u8);

impl ResourcePair {
    /// Pair `p`, or [`NoSuchResource`] unless 1 ≤ p ≤ 15.
    pub const fn new(p: u8) -> Result<ResourcePair, NoSuchResource> {
        if p == 0 || p > 15 {
            Err(NoSuchResource {
                kind: "pair",
                index: p,
            })
        } else {
            Ok(ResourcePair(p))
        }
    }

    /// Its number.
    pub const fn index(self) -> u8 {
        self.0
    }
}

/// What fires a trace event: one resource selector, or the Boolean combination of a pair (set up in
/// the pair's `TRCRSCTLR` registers).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ResourceSelection {
    /// TYPE 0: a single resource selector (SEL`[4:0]`).
    Single(ResourceSelector),
    /// TYPE 1: a resource selector pair (SEL`[3:0]`; SEL`[4]` is RES0).
    Pair(ResourcePair),
    /// TYPE 1 with SEL`[3:0]` = 0, as read back from a register: pair 0 is UNPREDICTABLE.
    UnpredictablePair,
}

register! {
    /// TRCEVENTCTL0R (FEAT_ETE): for each of the four ETE events, the resource selector (or pair) whose
    /// activation fires it. An event is only recorded in the trace when its TRCEVENTCTL1R.INSTEN bit is
    /// set ([`TrcEventCtl1r`](crate::TrcEventCtl1r)). Write it while the trace unit is idle.
    ///
    /// Encoding `S2_1_C0_C8_0` ([`TrcEventCtl0r::ENCODING`]); external offset 0x020 of the ETE component.
    ///
    /// The Cortex-A720AE article writes 1 here to "enable ETE event tracing" after routing PMU event 0x13
    /// to external input 0. That selects resource selector 1, which is always TRUE: event 0 fires all the
    /// time, unrelated to the input, and nothing is traced without INSTEN. The route from a PMU event to
    /// a trace event takes four registers:
    ///
    /// ```
    /// use pmu_regs::regs::trceventctl0r::{ResourceSelection, TraceEvent};
    /// use pmu_regs::regs::trcextinselr::ExternalInput;
    /// use pmu_regs::regs::trcrsctlr::ResourceSelector;
    /// use pmu_regs::{CommonEvent, TrcEventCtl0r, TrcEventCtl1r, TrcExtInSelR, TrcRsctlr};
    ///
    /// // 1. External input 0 follows PMU event 0x13, MEM_ACCESS (not an L1D miss: that is 0x03).
    /// let extin0 = TrcExtInSelR::for_event(CommonEvent::MemAccess.code());
    /// // 2. Resource selector 2 is true while external input 0 is active.
    /// let rs2 = ResourceSelector::new(2).unwrap();
    /// let rsctlr2 = TrcRsctlr::external_inputs(1 << ExternalInput::In0.index()).unwrap();
    /// // 3. ETE event 0 fires on resource selector 2.
    /// let ctl0 = TrcEventCtl0r::default().with_event(TraceEvent::Event0, ResourceSelection::Single(rs2));
    /// // 4. ETE event 0 is recorded in the instruction trace.
    /// let ctl1 = TrcEventCtl1r::default().with_instruction_event(TraceEvent::Event0, true);
    ///
    /// let writes = [
    ///     (TrcExtInSelR::encoding(ExternalInput::In0), extin0.bits()),
    ///     (TrcRsctlr::encoding(rs2).unwrap(), rsctlr2.bits()),
    ///     (TrcEventCtl0r::ENCODING, ctl0.bits()),
    ///     (TrcEventCtl1r::ENCODING, ctl1.bits()),
    /// ];
    /// let named: Vec<String> = writes.iter().map(|(e, v)| format!("{e}={v:#x}")).collect();
    /// assert_eq!(
    ///     named,
    ///     ["S2_1_C0_C8_4=0x13", "S2_1_C1_C2_0=0x1", "S2_1_C0_C8_0=0x2", "S2_1_C0_C9_0=0x1"]
    /// );
    ///
    /// // The article's value: event 0 on the always-TRUE selector 1.
    /// let article = TrcEventCtl0r::from_bits(1);
    /// assert_eq!(article.event(TraceEvent::Event0), ResourceSelection::Single(ResourceSelector::TRUE));
    /// ```
    ///
    /// ```compile_fail,E0308
    /// // There are four ETE events, named by `TraceEvent`, not by a number that could be 4.
    /// let _ = pmu_regs::TrcEventCtl0r::default().event(4);
    /// ```
    pub struct TrcEventCtl0r = "TRCEVENTCTL0R" {
        /// EVENT0.SEL, bits `[4:0]`.
        field event0_sel / with_event0_sel [4:0] u8, ReadWrite, V3;
        /// EVENT0.TYPE, bit 7: 1 = SEL names a resource pair.
        flag event0_type / with_event0_type [7], ReadWrite, V3;
        /// EVENT1.SEL, bits `[12:8]`.
        field event1_sel / with_event1_sel [12:8] u8, ReadWrite, V3;
        /// EVENT1.TYPE, bit 15.
        flag event1_type / with_event1_type [15], ReadWrite, V3;
        /// EVENT2.SEL, bits `[20:16]`.
        field event2_sel / with_event2_sel [20:16] u8, ReadWrite, V3;
        /// EVENT2.TYPE, bit 23.
        flag event2_type / with_event2_type [23], ReadWrite, V3;
        /// EVENT3.SEL, bits `[28:24]`.
        field event3_sel / with_event3_sel [28:24] u8, ReadWrite, V3;
        /// EVENT3.TYPE, bit 31.
        flag event3_type / with_event3_type [31], ReadWrite, V3;
    }
}

impl TrcEventCtl0r {
    /// `S2_1_C0_C8_0` (op0 2, op1 1, CRn 0, CRm 8, op2 0).
    pub const ENCODING: SysRegEncoding = SysRegEncoding::new(2, 1, 0, 8, 0);

    /// What fires `event`.
    pub const fn event(self, event: TraceEvent) -> ResourceSelection {
        let byte = (self.0 >> (8 * event.index() as u32)) as u8;
        if byte & 0x80 == 0 {
            ResourceSelection::Single(ResourceSelector(byte & 0x1F))
        } else if byte & 0xF == 0 {
            ResourceSelection::UnpredictablePair
        } else {
            ResourceSelection::Pair(ResourcePair(byte & 0xF))
        }
    }

    /// A copy in which `selection` fires `event`. [`ResourceSelection::UnpredictablePair`] writes TYPE 1
    /// with pair 0.
    #[must_use]
    pub const fn with_event(self, event: TraceEvent, selection: ResourceSelection) -> Self {
        let byte: u64 = match selection {
            ResourceSelection::Single(sel) => sel.index() as u64,
            ResourceSelection::Pair(pair) => 0x80 | pair.index() as u64,
            ResourceSelection::UnpredictablePair => 0x80,
        };
        let shift = 8 * event.index() as u32;
        Self((self.0 & !(0xFFu64 << shift)) | byte << shift)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{PmuVersion, Register};

    #[test]
    fn layout() {
        assert_eq!(
            TrcEventCtl0r::res0_mask(PmuVersion::V3) & 0xFFFF_FFFF,
            0x6060_6060
        );
        let pair = ResourceSelection::Pair(ResourcePair::new(3).unwrap());
        let v = TrcEventCtl0r::default().with_event(TraceEvent::Event3, pair);
        assert_eq!(v.bits(), 0x8300_0000);
        assert_eq!(v.event(TraceEvent::Event3), pair);
        assert_eq!(
            v.event(TraceEvent::Event1),
            ResourceSelection::Single(ResourceSelector::FALSE)
        );
        assert_eq!(
            TrcEventCtl0r::from_bits(0x80).event(TraceEvent::Event0),
            ResourceSelection::UnpredictablePair
        );
        assert!(ResourcePair::new(0).is_err() && ResourcePair::new(16).is_err());
        for event in TraceEvent::ALL {
            for sel in 0..32u8 {
                let s = ResourceSelection::Single(ResourceSelector::new(sel).unwrap());
                assert_eq!(
                    TrcEventCtl0r::from_bits(!0)
                        .with_event(event, s)
                        .event(event),
                    s
                );
            }
        }
    }
}
