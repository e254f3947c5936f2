//! Unit tests of the diagnosis: each reason against a state written out from the architecture's rules.

use std::vec::Vec;

use super::*;
use crate::soft_pmu::ExceptionLevel;
use crate::soft_pmu::SecurityState;

fn ctx(el: ExceptionLevel, security: SecurityState) -> ExecContext {
    ExecContext {
        el,
        security,
        counting_prohibited: false,
    }
}

/// Six counters, PMCR_EL0.E set, every counter enabled, counting INST_RETIRED with no filter.
fn counting(measured: ExecContext) -> PmuSnapshot {
    let pmcr = Pmcr::default().with_n(6).unwrap().with_e(true);
    let mut s = PmuSnapshot::new(PmuVersion::V3p7, pmcr, measured, AccessPath::El1);
    s.pmcntenset = CounterSet::implemented(6);
    for t in &mut s.pmevtyper[..6] {
        *t = Pmevtyper::for_event(CommonEvent::InstRetired.code(), PmuVersion::V3p7).unwrap();
    }
    s
}

fn not_counting(s: &PmuSnapshot, c: Counter) -> Vec<NotCounting> {
    s.why_not_counting(c).iter().collect()
}

#[test]
fn a_programmed_counter_counts() {
    let s = counting(ExecContext::USER);
    for n in 0..6 {
        assert_eq!(not_counting(&s, Counter::Event(n)), []);
    }
    assert_eq!(not_counting(&s, Counter::Cycle), []);
}

#[test]
fn every_reason_is_reported_in_hardware_order() {
    let mut s = counting(ExecContext {
        counting_prohibited: true,
        ..ExecContext::USER
    });
    s.pmcr = s.pmcr.with_e(false).with_fzo(true);
    s.pmcntenset = CounterSet::empty();
    s.pmovsset = CounterSet::P3;
    s.pmevtyper[0] = s.pmevtyper[0].with_u(true).with_evt_count(0x1E);
    s.pmceid = s.pmceid.without_event(0x1E);
    let c = Counter::Event(0);
    assert_eq!(
        not_counting(&s, c),
        [
            NotCounting::PmuDisabled,
            NotCounting::CounterDisabled(c),
            NotCounting::CountingProhibited,
            NotCounting::FrozenOnOverflow {
                overflowed: CounterSet::P3
            },
            NotCounting::Filtered {
                counter: c,
                exclusion: FilterExclusion::NonSecureEl0 {
                    u: true,
                    nsu: false
                }
            },
            NotCounting::EventNotImplemented {
                event: 0x1E,
                bit: CommonEventSet::bit_of(0x1E).unwrap()
            },
            NotCounting::ChainOnEvenCounter { index: 0 },
        ]
    );
    // A missing counter is the only reason.
    assert_eq!(
        not_counting(&s, Counter::Event(6)),
        [NotCounting::NoSuchCounter {
            index: 6,
            implemented: 6
        }]
    );
    assert_eq!(
        not_counting(&s, Counter::Event(31)),
        [NotCounting::NoSuchCounter {
            index: 31,
            implemented: 6
        }]
    );
}

#[test]
fn linux_exclude_flags_and_the_secure_sense() {
    // exclude_kernel (P = 1): Non-secure EL1 stops, EL0 counts; Secure EL1 stops too.
    let mut s = counting(ExecContext::KERNEL);
    s.pmevtyper[0] = s.pmevtyper[0].with_p(true);
    assert_eq!(
        not_counting(&s, Counter::Event(0)),
        [NotCounting::Filtered {
            counter: Counter::Event(0),
            exclusion: FilterExclusion::NonSecureEl1 {
                p: true,
                nsk: false
            }
        }]
    );
    s.measured = ExecContext::USER;
    assert_eq!(not_counting(&s, Counter::Event(0)), []);
    s.measured = ctx(ExceptionLevel::El1, SecurityState::Secure);
    assert_eq!(
        not_counting(&s, Counter::Event(0)),
        [NotCounting::Filtered {
            counter: Counter::Event(0),
            exclusion: FilterExclusion::SecureEl1
        }]
    );
    // P = 1 with NSK = 1: count Non-secure EL1 only, not Secure EL1.
    s.pmevtyper[0] = s.pmevtyper[0].with_nsk(true);
    assert_eq!(not_counting(&s, Counter::Event(1)), []);
    s.measured = ExecContext::KERNEL;
    assert_eq!(not_counting(&s, Counter::Event(0)), []);
    // NSU = 1 alone stops Non-secure EL0 but not Secure EL0.
    s.pmccfiltr = Pmccfiltr::default().with_nsu(true);
    s.measured = ExecContext::USER;
    assert_eq!(
        not_counting(&s, Counter::Cycle),
        [NotCounting::Filtered {
            counter: Counter::Cycle,
            exclusion: FilterExclusion::NonSecureEl0 {
                u: false,
                nsu: true
            }
        }]
    );
    s.measured = ctx(ExceptionLevel::El0, SecurityState::Secure);
    assert_eq!(not_counting(&s, Counter::Cycle), []);
}

#[test]
fn el2_and_el3_filters() {
    let mut s = counting(ctx(ExceptionLevel::El2, SecurityState::NonSecure));
    // EL2 is counted only with NSH = 1.
    assert_eq!(
        not_counting(&s, Counter::Event(0)).first(),
        Some(&NotCounting::Filtered {
            counter: Counter::Event(0),
            exclusion: FilterExclusion::NonSecureEl2
        })
    );
    s.pmevtyper[0] = s.pmevtyper[0].with_nsh(true);
    assert_eq!(not_counting(&s, Counter::Event(0)), []);
    // Secure EL2: counted when SH differs from NSH.
    s.measured = ctx(ExceptionLevel::El2, SecurityState::Secure);
    assert_eq!(not_counting(&s, Counter::Event(0)), []);
    s.pmevtyper[0] = s.pmevtyper[0].with_sh(true);
    assert_eq!(
        not_counting(&s, Counter::Event(0)),
        [NotCounting::Filtered {
            counter: Counter::Event(0),
            exclusion: FilterExclusion::SecureEl2 {
                nsh: true,
                sh: true
            }
        }]
    );
    // EL3: counted when M equals P, so P = 1 alone stops it and P = M = 1 counts it.
    s.measured = ctx(ExceptionLevel::El3, SecurityState::Secure);
    s.pmevtyper[1] = s.pmevtyper[1].with_p(true);
    assert_eq!(
        not_counting(&s, Counter::Event(1)),
        [NotCounting::Filtered {
            counter: Counter::Event(1),
            exclusion: FilterExclusion::El3 { p: true, m: false }
        }]
    );
    s.pmevtyper[1] = s.pmevtyper[1].with_m(true);
    assert_eq!(not_counting(&s, Counter::Event(1)), []);
}

#[test]
fn el2_partition_uses_hpme_not_e() {
    let mut s = counting(ExecContext::KERNEL);
    s.partition = El2Partition {
        hpmn: 4,
        hpme: false,
        hlp: false,
    };
    assert_eq!(
        not_counting(&s, Counter::Event(4)),
        [NotCounting::El2CountersDisabled { index: 4, hpmn: 4 }]
    );
    s.partition.hpme = true;
    s.pmcr = s.pmcr.with_e(false);
    assert_eq!(not_counting(&s, Counter::Event(5)), []);
    assert_eq!(
        not_counting(&s, Counter::Event(3)),
        [NotCounting::PmuDisabled]
    );
    assert_eq!(not_counting(&s, Counter::Cycle), [NotCounting::PmuDisabled]);
    // FZO freezes only the counters below HPMN, on the flags of those counters.
    s.pmcr = s.pmcr.with_e(true).with_fzo(true);
    s.pmovsset = CounterSet::P5 | CounterSet::C;
    assert_eq!(not_counting(&s, Counter::Event(0)), []);
    s.pmovsset |= CounterSet::P1;
    assert_eq!(
        not_counting(&s, Counter::Event(0)),
        [NotCounting::FrozenOnOverflow {
            overflowed: CounterSet::P1
        }]
    );
    assert_eq!(not_counting(&s, Counter::Event(5)), []);
    assert_eq!(not_counting(&s, Counter::Cycle), []);
    // Before PMUv3p7 there is no FZO.
    s.version = PmuVersion::V3p5;
    assert_eq!(not_counting(&s, Counter::Event(0)), []);
}

#[test]
fn prohibited_regions_and_dp() {
    let mut s = counting(ExecContext {
        counting_prohibited: true,
        ..ctx(ExceptionLevel::El1, SecurityState::Secure)
    });
    assert_eq!(
        not_counting(&s, Counter::Event(2)),
        [NotCounting::CountingProhibited]
    );
    // The cycle counter keeps counting in a prohibited region unless PMCR_EL0.DP is set.
    assert_eq!(not_counting(&s, Counter::Cycle), []);
    s.pmcr = s.pmcr.with_dp(true);
    assert_eq!(
        not_counting(&s, Counter::Cycle),
        [NotCounting::CycleCounterDisabledByDp]
    );
}

#[test]
fn events_that_the_workload_cannot_drive() {
    let mut s = counting(ExecContext::USER);
    let v = PmuVersion::V3p7;
    s.pmevtyper[0] = Pmevtyper::for_event(0x00, v).unwrap();
    s.pmevtyper[3] = Pmevtyper::for_event(0x1E, v).unwrap();
    s.pmevtyper[4] = Pmevtyper::for_event(0x4005, v).unwrap();
    s.pmevtyper[5] = Pmevtyper::for_event(0x00C2, v).unwrap(); // IMPLEMENTATION DEFINED
    s.pmceid = s.pmceid.without_event(0x4005);
    assert_eq!(
        not_counting(&s, Counter::Event(0)),
        [NotCounting::SoftwareIncrementOnly { index: 0 }]
    );
    assert_eq!(
        not_counting(&s, Counter::Event(3)),
        [NotCounting::ChainCountsOverflows { index: 3 }]
    );
    assert_eq!(
        not_counting(&s, Counter::Event(4)),
        [NotCounting::EventNotImplemented {
            event: 0x4005,
            bit: crate::PmceidBit {
                register: 0,
                bit: 37
            }
        }]
    );
    // PMCEID cannot describe 0xC2: no verdict from it.
    assert_eq!(not_counting(&s, Counter::Event(5)), []);
    // PMUv3 reads ten bits of evtCount, and has no 0x4000 range in PMCEID.
    s.version = PmuVersion::V3;
    s.pmceid = CommonEventSet::all_defined();
    assert_eq!(not_counting(&s, Counter::Event(4)), []); // 0x4005 reads as 0x005
}

#[test]
fn el0_access_follows_pmuserenr() {
    let mut s = counting(ExecContext::USER);
    s.access = AccessPath::El0;
    let denied =
        |s: &PmuSnapshot, c, k| -> Vec<AccessDenied> { s.why_access_denied(c, k).iter().collect() };
    use AccessKind::{Read, Write};
    let user = |counter, kind| AccessDenied::UserAccessDisabled { counter, kind };
    assert_eq!(
        denied(&s, Counter::Event(0), Read),
        [user(Counter::Event(0), Read)]
    );
    s.pmuserenr = Pmuserenr::default().with_er(true);
    assert_eq!(denied(&s, Counter::Event(0), Read), []);
    assert_eq!(
        denied(&s, Counter::Event(0), Write),
        [user(Counter::Event(0), Write)]
    );
    assert_eq!(
        denied(&s, Counter::Cycle, Read),
        [user(Counter::Cycle, Read)]
    );
    s.pmuserenr = Pmuserenr::default().with_cr(true);
    assert_eq!(denied(&s, Counter::Cycle, Read), []);
    s.pmuserenr = Pmuserenr::default().with_en(true);
    assert_eq!(denied(&s, Counter::Cycle, Write), []);
    // A counter reserved for EL2 traps to EL2 from EL0 and EL1, not from EL2.
    s.partition.hpmn = 2;
    let el2 = AccessDenied::ReservedForEl2 { index: 3, hpmn: 2 };
    assert_eq!(denied(&s, Counter::Event(3), Read), [el2]);
    s.access = AccessPath::El1;
    assert_eq!(denied(&s, Counter::Event(3), Write), [el2]);
    s.access = AccessPath::El2OrEl3;
    assert_eq!(denied(&s, Counter::Event(3), Write), []);
    assert_eq!(
        denied(&s, Counter::Event(9), Read),
        [AccessDenied::NoSuchCounter {
            index: 9,
            implemented: 6
        }]
    );
}

#[test]
fn external_access_conditions_in_order() {
    let mut s = counting(ExecContext::USER);
    s.access = AccessPath::MemoryMapped;
    let denied = |s: &PmuSnapshot, k| -> Vec<AccessDenied> {
        s.why_access_denied(Counter::Event(1), k).iter().collect()
    };
    use AccessKind::{Read, Write};
    // Without EDPRSR, the OS Lock and Double Lock registers stand in.
    assert_eq!(denied(&s, Read), []);
    s.oslsr = Oslsr::implemented(true);
    assert_eq!(denied(&s, Read), [AccessDenied::OsLocked]);
    s.osdlr = Osdlr::default().with_dlk(true);
    assert_eq!(denied(&s, Read), [AccessDenied::DoubleLocked]);
    // EDPRSR, when read, decides: PU first, then DLK; OSLK, EPMAD and the Software Lock together.
    s.edprsr = Some(Edprsr::from_u32(0x7F)); // PU, DLK, OSLK, ...
    assert_eq!(denied(&s, Read), [AccessDenied::DoubleLocked]);
    s.edprsr = Some(Edprsr::from_u32(0x7E)); // powered down: the rest is UNKNOWN
    assert_eq!(denied(&s, Read), [AccessDenied::CorePoweredDown]);
    s.edprsr = Some(Edprsr::from_u32(1 | 1 << 5 | 1 << 9));
    s.pmlsr = Some(Pmlsr::from_bits(0b11));
    assert_eq!(
        denied(&s, Write),
        [
            AccessDenied::OsLocked,
            AccessDenied::ExternalAccessDisabled,
            AccessDenied::SoftwareLocked
        ]
    );
    assert_eq!(
        denied(&s, Read),
        [AccessDenied::OsLocked, AccessDenied::ExternalAccessDisabled]
    );
    // The external debug interface ignores the Software Lock, and PMUSERENR_EL0 means nothing there.
    s.access = AccessPath::ExternalDebug;
    s.edprsr = Some(Edprsr::from_u32(1));
    assert_eq!(denied(&s, Write), []);
}

#[test]
fn the_articles_interrupt_checklist_corrected() {
    let mut s = counting(ExecContext::KERNEL);
    let c = Counter::Event(2);
    let reasons = |s: &PmuSnapshot| -> Vec<NoInterrupt> {
        match s.overflow_interrupt(c) {
            OverflowInterrupt::Requested => Vec::new(),
            OverflowInterrupt::NotRequested(r) => r.iter().collect(),
        }
    };
    // Neither overflowed nor enabled: the article blames the interrupt controller.
    assert_eq!(
        reasons(&s),
        [
            NoInterrupt::NotOverflowed(c),
            NoInterrupt::InterruptDisabled(c)
        ]
    );
    // Overflowed and enabled, but PMCR_EL0.E clear: the article says "not delivered".
    s.pmovsset = CounterSet::P2;
    s.pmintenset = CounterSet::P2;
    s.pmcr = s.pmcr.with_e(false);
    assert_eq!(reasons(&s), [NoInterrupt::PmuDisabled]);
    s.pmcr = s.pmcr.with_e(true);
    assert_eq!(s.overflow_interrupt(c), OverflowInterrupt::Requested);
    // A counter reserved for EL2 needs HPME instead.
    s.partition = El2Partition {
        hpmn: 2,
        hpme: false,
        hlp: false,
    };
    assert_eq!(
        reasons(&s),
        [NoInterrupt::El2CountersDisabled { index: 2, hpmn: 2 }]
    );
    assert!(matches!(
        s.overflow_interrupt(Counter::Event(6)),
        OverflowInterrupt::NotRequested(r) if r.first() == Some(NoInterrupt::NoSuchCounter { index: 6, implemented: 6 })
    ));
}

#[test]
fn messages_name_registers_and_fields() {
    use std::string::ToString;
    let filtered = NotCounting::Filtered {
        counter: Counter::Event(3),
        exclusion: FilterExclusion::NonSecureEl0 {
            u: true,
            nsu: false,
        },
    };
    assert_eq!(
        filtered.to_string(),
        "PMEVTYPER3_EL0 filters the context out: Non-secure EL0 is counted only when NSU (bit 28) \
         equals U (bit 30), and U = 1, NSU = 0"
    );
    assert_eq!(
        NotCounting::CounterDisabled(Counter::Cycle).to_string(),
        "PMCNTENSET_EL0 bit 31 is 0: PMCCNTR_EL0 is not enabled"
    );
    let user = AccessDenied::UserAccessDisabled {
        counter: Counter::Event(0),
        kind: AccessKind::Read,
    };
    assert!(user.to_string().contains("EN (bit 0) or ER (bit 3)"));
    assert!(OverflowInterrupt::Requested
        .to_string()
        .contains("interrupt controller"));
    let s = counting(ExecContext::USER);
    let d = s.diagnose(Counter::Event(0));
    assert_eq!(
        d.to_string(),
        "PMEVCNTR0_EL0 counts\nPMEVCNTR0_EL0 can be read\noverflow interrupt: \
         PMEVCNTR0_EL0 has not overflowed: its PMOVSSET_EL0 bit is 0; the PMINTENSET_EL1 bit of \
         PMEVCNTR0_EL0 is 0: its overflow requests no interrupt"
    );
}
