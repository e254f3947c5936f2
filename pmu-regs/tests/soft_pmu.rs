//! Architectural behaviour of the software PMU: enables, resets, overflow points (LC/LP/HLP), the
//! cycle divider, CHAIN pairs, freeze on overflow, filtering, the interrupt line, PMSWINC, PMZR, the
//! PMSELR window, EL0 access and every refused access. Inputs are register writes built in the tests
//! from the field layouts of the Arm architecture (research note `pmu.md` §3, §4, §7).

use pmu_regs::encoding::PmuRegister as R;
use pmu_regs::overflow::{ChainedPair, CounterWidth, El2Partition, OverflowAccumulator};
use pmu_regs::soft_pmu::{
    ExceptionLevel, ExecContext, SecurityState, SoftPmu, SoftPmuConfig, SoftPmuError,
};
use pmu_regs::{CommonEvent, CommonEventSet, CounterSet, NoSuchCounter, Pmcr, PmuVersion};

const INST: u16 = CommonEvent::InstRetired as u16;
const CHAIN: u64 = CommonEvent::Chain as u64;

fn pmu(version: PmuVersion, counters: u8) -> SoftPmu {
    SoftPmu::new(SoftPmuConfig::new(version, counters)).unwrap()
}

/// Programs counter `n` with `event`, enables it and sets PMCR_EL0.E plus `pmcr_extra`.
fn program(p: &mut SoftPmu, n: u8, event: u16, pmcr_extra: Pmcr) {
    p.write(R::Pmevtyper(n), event.into()).unwrap();
    p.write(R::Pmcntenset, 1 << n).unwrap();
    p.write(R::Pmcr, pmcr_extra.with_e(true).bits()).unwrap();
}

#[test]
fn nothing_counts_until_both_enables_are_set() {
    let mut p = pmu(PmuVersion::V3p1, 4);
    p.write(R::Pmevtyper(0), INST.into()).unwrap();
    p.count_event(INST, 10);
    assert_eq!(p.read(R::Pmevcntr(0)), Ok(0));
    p.write(R::Pmcntenset, 1).unwrap();
    p.count_event(INST, 10);
    assert_eq!(p.read(R::Pmevcntr(0)), Ok(0), "PMCR_EL0.E still clear");
    p.write(R::Pmcr, 1).unwrap();
    p.count_event(INST, 10);
    assert_eq!(p.read(R::Pmevcntr(0)), Ok(10));
    p.write(R::Pmcntenclr, 1).unwrap();
    p.count_event(INST, 10);
    assert_eq!(p.read(R::Pmevcntr(0)), Ok(10));
    assert_eq!(p.read(R::Pmcntenset), Ok(0));
}

#[test]
fn p_and_c_reset_counters_but_not_overflow_flags() {
    let mut p = pmu(PmuVersion::V3p1, 2);
    program(&mut p, 0, INST, Pmcr::default());
    p.write(R::Pmcntenset, 1 << 31).unwrap();
    p.write(R::Pmevcntr(0), 0xFFFF_FFFF).unwrap();
    p.count_event(INST, 2);
    p.run_cycles(7);
    assert_eq!(p.read(R::Pmovsclr), Ok(1));
    p.write(
        R::Pmcr,
        Pmcr::default()
            .with_e(true)
            .with_p(true)
            .with_c(true)
            .bits(),
    )
    .unwrap();
    assert_eq!(p.read(R::Pmevcntr(0)), Ok(0));
    assert_eq!(p.read(R::Pmccntr), Ok(0));
    assert_eq!(
        p.read(R::Pmovsclr),
        Ok(1),
        "P does not clear overflow flags"
    );
    // P and C read as zero; E stayed set.
    assert_eq!(p.read(R::Pmcr).map(|v| v & 0x7), Ok(1));
}

#[test]
fn lc_moves_the_cycle_overflow_point_and_never_saturates() {
    let mut p = pmu(PmuVersion::V3p1, 0);
    p.write(R::Pmcntenset, 1 << 31).unwrap();
    p.write(R::Pmcr, 1).unwrap(); // E, LC = 0
    p.write(R::Pmccntr, 0xFFFF_FFFE).unwrap();
    p.run_cycles(4);
    // LC = 0: the flag is set on the carry out of bit 31, and the counter keeps counting past 2^32.
    assert_eq!(p.read(R::Pmccntr), Ok(0x1_0000_0002));
    assert_eq!(p.overflow_flags(), CounterSet::C);
    p.write(R::Pmovsclr, 1 << 31).unwrap();
    p.write(R::Pmcr, Pmcr::default().with_e(true).with_lc(true).bits())
        .unwrap();
    p.write(R::Pmccntr, 0xFFFF_FFFE).unwrap();
    p.run_cycles(4);
    assert_eq!(
        p.overflow_flags(),
        CounterSet::empty(),
        "LC = 1: bit 31 carry is no overflow"
    );
    p.write(R::Pmccntr, u64::MAX).unwrap();
    p.run_cycles(3);
    assert_eq!(p.read(R::Pmccntr), Ok(2), "wraps at 2^64");
    assert_eq!(p.overflow_flags(), CounterSet::C);
}

#[test]
fn d_divides_by_64_only_while_lc_is_clear() {
    let mut p = pmu(PmuVersion::V3p1, 0);
    p.write(R::Pmcntenset, 1 << 31).unwrap();
    p.write(R::Pmcr, Pmcr::default().with_e(true).with_d(true).bits())
        .unwrap();
    p.run_cycles(63);
    assert_eq!(p.cycle_counter(), 0);
    p.run_cycles(1);
    assert_eq!(p.cycle_counter(), 1);
    p.run_cycles(64 * 10 + 5);
    assert_eq!(p.cycle_counter(), 11);
    p.write(
        R::Pmcr,
        Pmcr::default()
            .with_e(true)
            .with_d(true)
            .with_lc(true)
            .bits(),
    )
    .unwrap();
    p.run_cycles(100);
    assert_eq!(p.cycle_counter(), 111);
}

#[test]
fn without_aarch32_d_is_res0_and_lc_res1() {
    let mut config = SoftPmuConfig::new(PmuVersion::V3p4, 1);
    config.aarch32 = false;
    let mut p = SoftPmu::new(config).unwrap();
    p.write(R::Pmcr, Pmcr::default().with_e(true).with_d(true).bits())
        .unwrap();
    let pmcr = Pmcr::from_bits(p.read(R::Pmcr).unwrap());
    assert!(pmcr.e() && pmcr.lc() && !pmcr.d());
    assert_eq!(p.cycle_counter_width(), CounterWidth::Bits64);
}

#[test]
fn lp_makes_event_counters_long_from_v3p5_only() {
    for (version, counter_after, flagged) in [
        (PmuVersion::V3p4, 0x1, true),
        (PmuVersion::V3p5, 0x1_0000_0001, false),
    ] {
        let mut p = pmu(version, 1);
        program(&mut p, 0, INST, Pmcr::default().with_lp(true));
        p.write(R::Pmevcntr(0), 0xFFFF_FFFF).unwrap();
        p.count_event(INST, 2);
        assert_eq!(p.read(R::Pmevcntr(0)), Ok(counter_after), "{version}");
        assert_eq!(p.read(R::Pmovsclr) == Ok(1), flagged, "{version}");
    }
    // PMUv3p5 with LP = 0: 64-bit storage, overflow at bit 31.
    let mut p = pmu(PmuVersion::V3p5, 1);
    program(&mut p, 0, INST, Pmcr::default());
    p.write(R::Pmevcntr(0), 0xFFFF_FFFF).unwrap();
    p.count_event(INST, 2);
    assert_eq!(p.read(R::Pmevcntr(0)), Ok(0x1_0000_0001));
    assert_eq!(p.read(R::Pmovsclr), Ok(1));
}

#[test]
fn hlp_and_hpme_govern_counters_above_hpmn() {
    let mut p = pmu(PmuVersion::V3p5, 4);
    p.set_el2_partition(El2Partition {
        hpmn: 2,
        hpme: true,
        hlp: true,
    })
    .unwrap();
    p.set_context(ExecContext {
        el: ExceptionLevel::El2,
        ..ExecContext::KERNEL
    });
    for n in [1u8, 3] {
        p.write(R::Pmevtyper(n), u64::from(INST) | 1 << 27).unwrap(); // NSH: count at EL2
        p.write(R::Pmevcntr(n), 0xFFFF_FFFF).unwrap();
    }
    p.write(R::Pmcntenset, 0b1010).unwrap();
    // PMCR_EL0.E clear: only counter 3 (HPME) counts, and it is 64-bit (HLP).
    p.count_event(INST, 1);
    assert_eq!(p.event_counter(1), Ok(0xFFFF_FFFF));
    assert_eq!(p.event_counter(3), Ok(0x1_0000_0000));
    assert_eq!(p.overflow_flags(), CounterSet::empty());
    assert_eq!(p.event_counter_width(3), Ok(CounterWidth::Bits64));
    assert_eq!(p.event_counter_width(1), Ok(CounterWidth::Bits32));
    // At EL1, N reads as HPMN and the EL2 counters are invisible in the bitmaps.
    p.set_context(ExecContext::KERNEL);
    assert_eq!(Pmcr::from_bits(p.read(R::Pmcr).unwrap()).n(), 2);
    assert_eq!(p.read(R::Pmcntenset), Ok(0b10));
    p.write(R::Pmcntenclr, 0b1000).unwrap();
    assert_eq!(p.counter_enables().bits(), 0b1010, "bit 3 is RAZ/WI at EL1");
    // P at EL1 leaves the EL2 counter alone.
    p.write(R::Pmcr, Pmcr::default().with_p(true).bits())
        .unwrap();
    assert_eq!(p.event_counter(3), Ok(0x1_0000_0000));
    assert_eq!(p.event_counter(1), Ok(0));
}

#[test]
fn chained_pair_counts_64_bits_on_32_bit_counters() {
    let mut p = pmu(PmuVersion::V3p1, 4);
    let pair = ChainedPair::new(2).unwrap();
    p.write(R::Pmevtyper(pair.high()), CHAIN).unwrap();
    let (hi, lo) = ChainedPair::split(0x0000_0005_FFFF_FFF0);
    p.write(R::Pmevcntr(pair.high()), hi).unwrap();
    p.write(R::Pmevcntr(pair.low()), lo).unwrap();
    p.write(R::Pmcntenset, 0b1100).unwrap();
    program(&mut p, pair.low(), INST, Pmcr::default());
    p.count_event(INST, 0x20);
    let value = ChainedPair::compose(
        p.event_counter(pair.high()).unwrap(),
        p.event_counter(pair.low()).unwrap(),
    );
    assert_eq!(value, 0x0000_0006_0000_0010);
    assert_eq!(
        p.overflow_flags().bits(),
        0b0100,
        "only the low counter overflowed"
    );
    // Many wraps of the low counter in one burst all reach the high counter.
    p.count_event(INST, 3 << 32);
    assert_eq!(p.event_counter(pair.high()), Ok(9));
    // The high counter overflowing sets its own flag.
    p.write(R::Pmevcntr(pair.high()), 0xFFFF_FFFF).unwrap();
    p.count_event(INST, 1 << 32);
    assert_eq!(p.event_counter(pair.high()), Ok(0));
    assert_eq!(p.overflow_flags().bits(), 0b1100);
}

#[test]
fn chain_on_an_even_counter_or_disabled_odd_counter_counts_nothing() {
    let mut p = pmu(PmuVersion::V3p1, 4);
    p.write(R::Pmevtyper(2), CHAIN).unwrap();
    p.write(R::Pmevtyper(1), CHAIN).unwrap();
    p.write(R::Pmevcntr(0), 0xFFFF_FFFF).unwrap();
    program(&mut p, 0, INST, Pmcr::default());
    p.write(R::Pmcntenset, 0b100).unwrap(); // counter 1 (the odd partner) stays disabled
    p.count_event(INST, 1);
    p.count_event(CHAIN as u16, 5); // CHAIN is not an external event
    assert_eq!(p.event_counter(1), Ok(0));
    assert_eq!(p.event_counter(2), Ok(0));
}

#[test]
fn freeze_on_overflow_stops_low_counters_at_the_overflow() {
    let mut p = pmu(PmuVersion::V3p7, 2);
    p.write(R::Pmevtyper(1), INST.into()).unwrap();
    p.write(R::Pmcntenset, 0b10).unwrap();
    program(&mut p, 0, INST, Pmcr::default().with_fzo(true));
    p.write(R::Pmevcntr(0), 0xFFFF_FFF0).unwrap();
    p.count_event(INST, 0x100);
    // Counter 0 overflowed (carry out of bit 31; PMUv3p7 storage is 64 bits) after 0x10 events, and
    // both counters froze at that instant.
    assert_eq!(p.event_counter(0), Ok(0x1_0000_0000));
    assert_eq!(p.event_counter(1), Ok(0x10));
    p.count_event(INST, 5);
    assert_eq!(p.event_counter(1), Ok(0x10));
    p.write(R::Pmovsclr, 1).unwrap();
    p.count_event(INST, 5);
    assert_eq!(p.event_counter(1), Ok(0x15));
    // Before PMUv3p7 FZO is RES0 and nothing freezes.
    let mut old = pmu(PmuVersion::V3p5, 1);
    program(&mut old, 0, INST, Pmcr::default().with_fzo(true));
    assert!(!Pmcr::from_bits(old.read(R::Pmcr).unwrap()).fzo());
}

#[test]
fn filters_follow_the_exception_level_and_security_state() {
    let mut p = pmu(PmuVersion::V3p1, 1);
    // P = 1: exclude EL1.
    program(&mut p, 0, INST, Pmcr::default());
    p.write(R::Pmevtyper(0), u64::from(INST) | 1 << 31).unwrap();
    p.count_event(INST, 1);
    assert_eq!(p.event_counter(0), Ok(0));
    p.set_context(ExecContext::USER);
    p.count_event(INST, 1);
    assert_eq!(p.event_counter(0), Ok(1));
    // EL2 counts only with NSH.
    p.set_context(ExecContext {
        el: ExceptionLevel::El2,
        ..ExecContext::KERNEL
    });
    p.count_event(INST, 1);
    assert_eq!(p.event_counter(0), Ok(1));
    // EL3 counts when M == P.
    p.set_context(ExecContext {
        el: ExceptionLevel::El3,
        security: SecurityState::Secure,
        counting_prohibited: false,
    });
    p.count_event(INST, 1);
    assert_eq!(p.event_counter(0), Ok(1));
    p.write(R::Pmevtyper(0), u64::from(INST) | 1 << 31 | 1 << 26)
        .unwrap();
    p.count_event(INST, 1);
    assert_eq!(p.event_counter(0), Ok(2));
}

#[test]
fn prohibited_counting_and_dp() {
    let mut p = pmu(PmuVersion::V3p1, 1);
    program(&mut p, 0, INST, Pmcr::default());
    p.write(R::Pmcntenset, 1 << 31).unwrap();
    p.set_context(ExecContext {
        counting_prohibited: true,
        ..ExecContext::KERNEL
    });
    p.count_event(INST, 5);
    p.run_cycles(5);
    assert_eq!((p.event_counter(0), p.cycle_counter()), (Ok(0), 5));
    p.write(R::Pmcr, Pmcr::default().with_e(true).with_dp(true).bits())
        .unwrap();
    p.run_cycles(5);
    assert_eq!(
        p.cycle_counter(),
        5,
        "DP stops the cycle counter where counting is prohibited"
    );
}

#[test]
fn interrupt_line_needs_flag_enable_and_range_enable() {
    let mut p = pmu(PmuVersion::V3p1, 2);
    p.write(R::Pmovsset, 0b10).unwrap();
    assert!(!p.irq_asserted());
    p.write(R::Pmintenset, 0b10).unwrap();
    assert!(!p.irq_asserted(), "PMCR_EL0.E clear");
    p.write(R::Pmcr, 1).unwrap();
    assert!(p.irq_asserted());
    p.write(R::Pmintenclr, 0b10).unwrap();
    assert!(!p.irq_asserted());
    p.write(R::Pmintenset, 0b10).unwrap();
    p.write(R::Pmovsclr, 0b10).unwrap();
    assert!(!p.irq_asserted());
    // The cycle counter's flag uses bit 31.
    p.write(R::Pmintenset, 1 << 31).unwrap();
    p.write(R::Pmovsset, 1 << 31).unwrap();
    assert!(p.irq_asserted());
    assert_eq!(p.read(R::Pmintenset), Ok(0x8000_0002));
}

#[test]
fn software_increment_hits_enabled_sw_incr_counters_only() {
    let mut p = pmu(PmuVersion::V3p1, 3);
    p.write(R::Pmevtyper(0), 0).unwrap(); // SW_INCR
    p.write(R::Pmevtyper(1), INST.into()).unwrap();
    p.write(R::Pmevtyper(2), 0).unwrap();
    p.write(R::Pmcntenset, 0b011).unwrap();
    p.write(R::Pmcr, 1).unwrap();
    p.write(R::Pmevcntr(0), 0xFFFF_FFFF).unwrap();
    p.write(R::Pmswinc, 0b111 | 1 << 31).unwrap();
    assert_eq!(p.event_counter(0), Ok(0));
    assert_eq!(
        p.read(R::Pmovsclr),
        Ok(1),
        "software increments overflow like events"
    );
    assert_eq!(p.event_counter(1), Ok(0), "not programmed with SW_INCR");
    assert_eq!(p.event_counter(2), Ok(0), "not enabled");
    p.count_event(0, 10); // SW_INCR is not an external event
    assert_eq!(p.event_counter(0), Ok(0));
    assert_eq!(p.read(R::Pmswinc), Err(SoftPmuError::WriteOnly(R::Pmswinc)));
}

#[test]
fn pmzr_zeroes_counters_from_v3p9() {
    let mut p = pmu(PmuVersion::V3p9, 2);
    p.write(R::Pmevcntr(1), 9).unwrap();
    p.write(R::Pmccntr, 9).unwrap();
    p.write(R::Pmzr, 0b10 | 1 << 31).unwrap();
    assert_eq!((p.event_counter(1), p.cycle_counter()), (Ok(0), 0));
    let mut old = pmu(PmuVersion::V3p8, 2);
    assert_eq!(
        old.write(R::Pmzr, 1),
        Err(SoftPmuError::NotImplemented {
            register: R::Pmzr,
            version: PmuVersion::V3p8
        })
    );
}

#[test]
fn pmselr_window() {
    let mut p = pmu(PmuVersion::V3p1, 2);
    p.write(R::Pmselr, 1).unwrap();
    p.write(R::Pmxevtyper, 0x11).unwrap();
    p.write(R::Pmxevcntr, 77).unwrap();
    assert_eq!(p.read(R::Pmevtyper(1)), Ok(0x11));
    assert_eq!(p.read(R::Pmxevcntr), Ok(77));
    p.write(R::Pmselr, 31).unwrap();
    p.write(R::Pmxevtyper, 1 << 30).unwrap();
    assert_eq!(p.read(R::Pmccfiltr), Ok(1 << 30));
    assert_eq!(
        p.read(R::Pmxevcntr),
        Err(SoftPmuError::Unpredictable {
            register: R::Pmxevcntr,
            sel: 31
        })
    );
    p.write(R::Pmselr, 5).unwrap();
    assert_eq!(
        p.write(R::Pmxevtyper, 0),
        Err(SoftPmuError::Unpredictable {
            register: R::Pmxevtyper,
            sel: 5
        })
    );
    // SEL is five bits.
    p.write(R::Pmselr, 0xFF).unwrap();
    assert_eq!(p.read(R::Pmselr), Ok(31));
}

#[test]
fn el0_access_follows_pmuserenr() {
    let mut p = pmu(PmuVersion::V3p1, 1);
    p.set_context(ExecContext::USER);
    assert_eq!(
        p.read(R::Pmccntr),
        Err(SoftPmuError::TrappedAtEl0(R::Pmccntr))
    );
    assert_eq!(p.read(R::Pmuserenr), Ok(0));
    assert_eq!(
        p.write(R::Pmuserenr, 1),
        Err(SoftPmuError::TrappedAtEl0(R::Pmuserenr))
    );
    p.set_context(ExecContext::KERNEL);
    p.write(R::Pmuserenr, 0b1100).unwrap(); // ER | CR
    p.set_context(ExecContext::USER);
    assert_eq!(p.read(R::Pmccntr), Ok(0));
    assert_eq!(p.read(R::Pmevcntr(0)), Ok(0));
    assert_eq!(
        p.write(R::Pmccntr, 1),
        Err(SoftPmuError::TrappedAtEl0(R::Pmccntr))
    );
    assert_eq!(
        p.write(R::Pmswinc, 1),
        Err(SoftPmuError::TrappedAtEl0(R::Pmswinc))
    );
    assert_eq!(
        p.read(R::Pmintenset),
        Err(SoftPmuError::TrappedAtEl0(R::Pmintenset))
    );
    p.set_context(ExecContext::KERNEL);
    p.write(R::Pmuserenr, 0xFF).unwrap();
    assert_eq!(
        p.read(R::Pmuserenr),
        Ok(0xF),
        "UEN/IR/TID are RES0 before PMUv3p9"
    );
    p.set_context(ExecContext::USER);
    assert_eq!(p.write(R::Pmcr, 1), Ok(()));
    assert_eq!(p.read(R::Pmmir), Err(SoftPmuError::TrappedAtEl0(R::Pmmir)));
}

#[test]
fn refused_accesses_are_typed_errors() {
    assert_eq!(
        SoftPmu::new(SoftPmuConfig::new(PmuVersion::V3, 32)).unwrap_err(),
        SoftPmuError::TooManyCounters {
            requested: 32,
            limit: 31
        }
    );
    let mut p = pmu(PmuVersion::V3, 2);
    assert_eq!(
        p.read(R::Pmevcntr(2)),
        Err(SoftPmuError::NoSuchCounter(NoSuchCounter {
            index: 2,
            limit: 2
        }))
    );
    assert_eq!(
        p.write(R::Pmevtyper(30), 0),
        Err(SoftPmuError::NoSuchCounter(NoSuchCounter {
            index: 30,
            limit: 2
        }))
    );
    assert_eq!(
        p.write(R::Pmceid0, 0),
        Err(SoftPmuError::ReadOnly(R::Pmceid0))
    );
    assert_eq!(p.write(R::Pmmir, 0), Err(SoftPmuError::ReadOnly(R::Pmmir)));
    assert_eq!(
        p.read(R::Pmmir),
        Err(SoftPmuError::NotImplemented {
            register: R::Pmmir,
            version: PmuVersion::V3
        })
    );
    assert_eq!(p.read(R::Pmuacr), Err(SoftPmuError::NotModelled(R::Pmuacr)));
    assert_eq!(
        p.write(R::Pmicntr, 0),
        Err(SoftPmuError::NotModelled(R::Pmicntr))
    );
    assert_eq!(
        p.set_el2_partition(El2Partition::unpartitioned(3)),
        Err(SoftPmuError::TooManyCounters {
            requested: 3,
            limit: 2
        })
    );
    // Unimplemented-counter bits are RAZ/WI; PMUv3 keeps only ten evtCount bits and 32-bit counters.
    p.write(R::Pmcntenset, u64::MAX).unwrap();
    assert_eq!(p.read(R::Pmcntenset), Ok(0x8000_0003));
    p.write(R::Pmevtyper(0), 0xFFFF_FFFF_FFFF_FFFF).unwrap();
    assert_eq!(p.read(R::Pmevtyper(0)), Ok(0xFC00_03FF));
    p.write(R::Pmevcntr(0), u64::MAX).unwrap();
    assert_eq!(p.read(R::Pmevcntr(0)), Ok(0xFFFF_FFFF));
    assert_eq!(
        p.read(R::Pmceid0),
        Ok(0xFFFF_FFFF),
        "no 0x4000 range on PMUv3"
    );
    p.check_invariants().unwrap();
}

#[test]
fn events_beyond_the_evtcount_width_match_no_counter() {
    let mut p = pmu(PmuVersion::V3, 1);
    program(&mut p, 0, 0x005, Pmcr::default());
    p.count_event(0x4005, 3); // would alias 0x005 if truncated to ten bits
    assert_eq!(p.event_counter(0), Ok(0));
    p.count_event(0x005, 3);
    assert_eq!(p.event_counter(0), Ok(3));
}

#[test]
fn common_events_pmceid_marks_unimplemented_never_occur() {
    // A Cortex-A720 implements neither LD_RETIRED (0x06) nor ST_RETIRED (0x07).
    let mut config = SoftPmuConfig::new(PmuVersion::V3p7, 2);
    config.common_events = CommonEventSet::all_defined().without_event(0x06);
    let mut p = SoftPmu::new(config).unwrap();
    program(&mut p, 0, 0x06, Pmcr::default());
    program(&mut p, 1, 0xC2, Pmcr::default()); // IMPLEMENTATION DEFINED: PMCEID cannot say
    p.count_event(0x06, 5);
    p.count_event(0xC2, 5);
    assert_eq!(p.event_counter(0), Ok(0));
    assert_eq!(p.event_counter(1), Ok(5));
    assert_eq!(p.read(R::Pmceid0).map(|v| v & 1 << 6), Ok(0));
}

#[test]
fn pmcr_reads_identification() {
    let mut config = SoftPmuConfig::new(PmuVersion::V3p1, 6);
    config.idcode = 0x0B;
    let p = SoftPmu::new(config).unwrap();
    let pmcr = Pmcr::from_bits(p.read(R::Pmcr).unwrap());
    assert_eq!((pmcr.imp(), pmcr.idcode(), pmcr.n()), (0x41, 0x0B, 6));
    // PMCEID reports the defined common events, the 0x4000 range included from PMUv3p1.
    let events = pmu_regs::CommonEventSet::from_registers(
        p.read(R::Pmceid0).unwrap(),
        p.read(R::Pmceid1).unwrap(),
    );
    assert!(events.iter().eq(CommonEvent::ALL.iter().map(|e| e.code())));
}

#[test]
fn sampling_preset_overflows_after_exactly_the_period() {
    let mut p = pmu(PmuVersion::V3p1, 1);
    program(&mut p, 0, INST, Pmcr::default());
    let preset = pmu_regs::overflow::preset_for_period(1000, CounterWidth::Bits32).unwrap();
    p.write(R::Pmevcntr(0), preset).unwrap();
    p.count_event(INST, 999);
    assert_eq!(p.read(R::Pmovsclr), Ok(0));
    p.count_event(INST, 1);
    assert_eq!(p.read(R::Pmovsclr), Ok(1));
    assert_eq!(p.event_counter(0), Ok(0));
}

#[test]
fn accumulator_over_an_interrupt_driven_counter() {
    let mut p = pmu(PmuVersion::V3p1, 1);
    program(&mut p, 0, INST, Pmcr::default());
    p.write(R::Pmintenset, 1).unwrap();
    p.write(R::Pmevcntr(0), 0xFFFF_0000).unwrap();
    let mut acc = OverflowAccumulator::new(CounterWidth::Bits32, 0xFFFF_0000);
    let mut overflows = 0;
    let mut truth = 0u64;
    // Three wraps between two reads, each one seen by the "interrupt handler".
    for _ in 0..3 {
        p.count_event(INST, 0xC000_0000);
        truth += 0xC000_0000;
        if p.irq_asserted() {
            let flags = p.read(R::Pmovsclr).unwrap();
            p.write(R::Pmovsclr, flags).unwrap();
            overflows += 1;
        }
    }
    acc.update(p.event_counter(0).unwrap(), overflows).unwrap();
    assert_eq!(acc.total(), truth);
    // The article's formula, overflows × 2^32 + current, ignores the starting value.
    let naive = overflows * (1 << 32) + p.event_counter(0).unwrap();
    assert_ne!(naive, truth);
}
