//! The diagnosis against the software PMU: random register states are written into a `SoftPmu`, a
//! snapshot is taken, and the PMU is stepped. A counter that did not count must have been given a
//! reason, and one that counted must not have been; the overflow interrupt line must be asserted
//! exactly when the diagnosis says some counter requests it; and an EL0 access the software PMU
//! refuses must be one the diagnosis refuses.

use proptest::prelude::*;

use pmu_regs::diagnosis::{
    AccessDenied, AccessKind, AccessPath, Counter, OverflowInterrupt, PmuSnapshot,
};
use pmu_regs::encoding::PmuRegister as R;
use pmu_regs::overflow::El2Partition;
use pmu_regs::soft_pmu::{
    ExceptionLevel, ExecContext, SecurityState, SoftPmu, SoftPmuConfig, SoftPmuError,
};
use pmu_regs::{CommonEventSet, PmuVersion};

/// Events worth programming: SW_INCR, CHAIN, common events (some a PE may lack), the 0x4000 range,
/// IMPLEMENTATION DEFINED ones, and any number at all.
fn event() -> impl Strategy<Value = u16> {
    prop_oneof![
        4 => prop::sample::select(vec![
            0x00u16, 0x1E, 0x08, 0x11, 0x03, 0x06, 0x07, 0x13, 0x3F, 0x4005, 0x4010, 0x40, 0xC2,
        ]),
        1 => any::<u16>(),
    ]
}

fn context() -> impl Strategy<Value = ExecContext> {
    (
        prop::sample::select(vec![
            ExceptionLevel::El0,
            ExceptionLevel::El1,
            ExceptionLevel::El2,
            ExceptionLevel::El3,
        ]),
        prop::bool::ANY,
        prop::bool::weighted(0.2),
    )
        .prop_map(|(el, secure, counting_prohibited)| ExecContext {
            el,
            security: if secure {
                SecurityState::Secure
            } else {
                SecurityState::NonSecure
            },
            counting_prohibited,
        })
}

/// Filter bits `[31:24]` are where the interest is; every other bit is random too (the software PMU
/// keeps only what the version implements).
fn filter_bits() -> impl Strategy<Value = u64> {
    prop_oneof![
        2 => Just(0u64),
        3 => any::<u8>().prop_map(|b| u64::from(b) << 24),
        1 => any::<u64>(),
    ]
}

#[derive(Debug, Clone)]
struct State {
    version: PmuVersion,
    counters: u8,
    hpmn_cut: u8,
    hpme: bool,
    pmceid_keep: (u64, u64),
    pmcr: u64,
    cnten: u64,
    inten: u64,
    ovs: u64,
    types: Vec<(u16, u64)>,
    ccfiltr: u64,
    values: Vec<u64>,
    ccntr: u64,
    pmuserenr: u64,
    measured: ExecContext,
    events: u64,
    cycles: u64,
}

fn state() -> impl Strategy<Value = State> {
    let dense = || prop_oneof![1 => any::<u64>(), 2 => Just(u64::MAX)];
    let values = prop::collection::vec(
        prop_oneof![any::<u64>(), Just(0xFFFF_FFFFu64), Just(u64::MAX), Just(0)],
        8,
    );
    (
        (
            prop::sample::select(PmuVersion::ALL.to_vec()),
            0u8..=8,
            0u8..=3,
            prop::bool::ANY,
            (any::<u64>(), any::<u64>()).prop_map(|(a, b)| (a | b, a | b.rotate_left(7))),
        ),
        (any::<u64>(), dense(), dense(), any::<u64>()),
        (
            prop::collection::vec((event(), filter_bits()), 8),
            filter_bits(),
            values,
            any::<u64>(),
        ),
        (any::<u64>(), context(), 1u64..2000, 64u64..5000),
    )
        .prop_map(
            |(
                (version, counters, hpmn_cut, hpme, pmceid_keep),
                (pmcr, cnten, inten, ovs),
                (types, ccfiltr, values, ccntr),
                (pmuserenr, measured, events, cycles),
            )| State {
                version,
                counters,
                hpmn_cut,
                hpme,
                pmceid_keep,
                pmcr,
                cnten,
                inten,
                ovs,
                types,
                ccfiltr,
                values,
                ccntr,
                pmuserenr,
                measured,
                events,
                cycles,
            },
        )
}

const EL2: ExecContext = ExecContext {
    el: ExceptionLevel::El2,
    security: SecurityState::NonSecure,
    counting_prohibited: false,
};

/// The software PMU in state `s`, executing in `s.measured`. Registers are written from EL2, which
/// reaches every counter.
fn build(s: &State) -> SoftPmu {
    let mut config = SoftPmuConfig::new(s.version, s.counters);
    let all = CommonEventSet::all_defined();
    config.common_events = CommonEventSet::from_registers(
        all.pmceid0() & s.pmceid_keep.0,
        all.pmceid1() & s.pmceid_keep.1,
    );
    let mut pmu = SoftPmu::new(config).unwrap();
    pmu.set_context(EL2);
    pmu.set_el2_partition(El2Partition {
        hpmn: s.counters.saturating_sub(s.hpmn_cut),
        hpme: s.hpme,
        hlp: false,
    })
    .unwrap();
    for n in 0..s.counters {
        let (event, filter) = s.types[usize::from(n)];
        pmu.write(R::Pmevtyper(n), (filter & !0xFFFF) | u64::from(event))
            .unwrap();
        pmu.write(R::Pmevcntr(n), s.values[usize::from(n)]).unwrap();
    }
    pmu.write(R::Pmccfiltr, s.ccfiltr).unwrap();
    pmu.write(R::Pmccntr, s.ccntr).unwrap();
    pmu.write(R::Pmcntenset, s.cnten).unwrap();
    pmu.write(R::Pmintenset, s.inten).unwrap();
    pmu.write(R::Pmovsset, s.ovs).unwrap();
    pmu.write(R::Pmuserenr, s.pmuserenr).unwrap();
    // Without P and C, so that the counter values stay as drawn.
    pmu.write(R::Pmcr, s.pmcr & !0b110).unwrap();
    pmu.set_context(s.measured);
    pmu.check_invariants().unwrap();
    pmu
}

/// The counters to ask about: every event counter, one that does not exist, the cycle counter.
fn targets(counters: u8) -> impl Iterator<Item = Counter> {
    (0..=counters)
        .map(Counter::Event)
        .chain([Counter::Event(31), Counter::Cycle])
}

/// The counter's value and overflow flag.
fn observe(pmu: &SoftPmu, counter: Counter) -> Option<(u64, bool)> {
    match counter {
        Counter::Event(n) => pmu
            .event_counter(n)
            .ok()
            .map(|v| (v, pmu.overflow_flags().has_event_counter(n))),
        Counter::Cycle => Some((
            pmu.cycle_counter(),
            pmu.overflow_flags().contains(pmu_regs::CounterSet::C),
        )),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// A counter that does not count is always given a reason; one that counts never is.
    #[test]
    fn a_reason_exactly_when_the_counter_does_not_count(s in state()) {
        let pmu = build(&s);
        let snapshot = PmuSnapshot::from_soft_pmu(&pmu, AccessPath::El2OrEl3);
        for counter in targets(s.counters) {
            let reasons = snapshot.why_not_counting(counter);
            let mut stepped = pmu.clone();
            match counter {
                Counter::Event(n) => {
                    if let Ok(t) = pmu.event_type(n) {
                        // The workload produces the counter's own event.
                        stepped.count_event(t.evt_count_for(s.version), s.events);
                    }
                }
                // At least 64 cycles: PMCR_EL0.D divides by 64.
                Counter::Cycle => stepped.run_cycles(s.cycles),
            }
            let before = observe(&pmu, counter);
            let after = observe(&stepped, counter);
            let counted = before.is_some() && before != after;
            prop_assert_eq!(
                counted,
                reasons.is_empty(),
                "{} counted: {}, reasons: {:?}",
                counter,
                counted,
                reasons
            );
        }
    }

    /// The interrupt line is asserted exactly when the diagnosis says some counter requests it, and
    /// each counter alone asserts it exactly when the diagnosis says so.
    #[test]
    fn interrupt_requested_exactly_when_the_line_is_asserted(s in state()) {
        let pmu = build(&s);
        let snapshot = PmuSnapshot::from_soft_pmu(&pmu, AccessPath::El2OrEl3);
        let requested = |c| snapshot.overflow_interrupt(c) == OverflowInterrupt::Requested;
        prop_assert_eq!(pmu.irq_asserted(), targets(s.counters).any(requested));
        for counter in targets(s.counters) {
            let mut alone = pmu.clone();
            alone.set_context(EL2);
            let others = match counter.bit() {
                Some(bit) => !bit.bits(),
                None => u64::MAX,
            };
            alone.write(R::Pmovsclr, others).unwrap();
            prop_assert_eq!(
                alone.irq_asserted(),
                requested(counter),
                "{}: {}",
                counter,
                snapshot.overflow_interrupt(counter)
            );
        }
    }

    /// An EL0 access the software PMU refuses is one the diagnosis refuses, and the other way round.
    /// (The software PMU does not trap counters reserved for EL2, so that reason is left aside.)
    #[test]
    fn el0_access_refused_exactly_when_a_reason_is_given(s in state()) {
        let mut pmu = build(&s);
        pmu.set_context(ExecContext::USER);
        let snapshot = PmuSnapshot::from_soft_pmu(&pmu, AccessPath::El0);
        for counter in targets(s.counters) {
            let register = match counter {
                Counter::Event(n) => R::Pmevcntr(n),
                Counter::Cycle => R::Pmccntr,
            };
            for kind in [AccessKind::Read, AccessKind::Write] {
                let refused = match kind {
                    AccessKind::Read => pmu.read(register).err(),
                    AccessKind::Write => pmu.clone().write(register, 1).err(),
                };
                prop_assert!(matches!(
                    refused,
                    None | Some(SoftPmuError::TrappedAtEl0(_)) | Some(SoftPmuError::NoSuchCounter(_))
                ));
                let reasons = snapshot.why_access_denied(counter, kind);
                let denied = reasons
                    .iter()
                    .any(|r| !matches!(r, AccessDenied::ReservedForEl2 { .. }));
                prop_assert_eq!(refused.is_some(), denied, "{} {:?}: {:?}", counter, kind, reasons);
            }
        }
    }
}
