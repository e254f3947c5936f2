//! Property tests: register field round-trips and per-version masks, and the overflow arithmetic
//! (delta, presets, bias, chained pairs, the accumulator) checked against the software PMU as oracle.
//! Field positions below are written out from the Arm register layouts (research note `pmu.md` §3), so
//! they also check the crate's field tables. All inputs are generated.

use proptest::prelude::*;

use pmu_regs::encoding::PmuRegister as R;
use pmu_regs::overflow::{
    bias_32, delta, preset_for_period, unbias_32, ChainedPair, CounterWidth, OverflowAccumulator,
};
use pmu_regs::soft_pmu::{SoftPmu, SoftPmuConfig};
use pmu_regs::{
    CommonEvent, CommonEventSet, Pmccfiltr, Pmcfgr, Pmcr, Pmevtyper, Pmmir, Pmselr, PmuVersion,
    Pmuserenr, Register,
};

/// Checks a one-bit field: the table entry, the getter, and that the setter changes only that bit.
macro_rules! check_flag {
    ($ty:ty, $bits:expr, $value:expr, $get:ident, $with:ident, $bit:literal) => {{
        let info = <$ty as Register>::FIELDS
            .iter()
            .find(|f| f.name == stringify!($get))
            .expect(stringify!($get));
        prop_assert_eq!((info.lsb, info.width), ($bit, 1));
        let before = <$ty>::from_bits($bits);
        prop_assert_eq!(before.$get(), $bits & (1 << $bit) != 0);
        let after = before.$with($value);
        prop_assert_eq!(after.$get(), $value);
        prop_assert_eq!(after.bits() & !(1u64 << $bit), $bits & !(1u64 << $bit));
    }};
}

/// Checks a multi-bit field the same way, plus the rejection of a value one bit too wide.
macro_rules! check_field {
    ($ty:ty, $bits:expr, $value:expr, $get:ident, $with:ident, $lsb:literal, $width:literal, $vty:ty) => {{
        let info = <$ty as Register>::FIELDS
            .iter()
            .find(|f| f.name == stringify!($get))
            .expect(stringify!($get));
        prop_assert_eq!((info.lsb, info.width), ($lsb, $width));
        let mask: u64 = (1u64 << $width) - 1;
        let before = <$ty>::from_bits($bits);
        prop_assert_eq!(u64::from(before.$get()), ($bits >> $lsb) & mask);
        let value = ($value & mask) as $vty;
        let after = before.$with(value).unwrap();
        prop_assert_eq!(after.$get(), value);
        prop_assert_eq!(after.bits() & !(mask << $lsb), $bits & !(mask << $lsb));
        if $width < <$vty>::BITS {
            let too_wide = (1u64 << $width) as $vty;
            prop_assert!(before.$with(too_wide).is_err());
        }
    }};
}

fn version() -> impl Strategy<Value = PmuVersion> {
    prop::sample::select(PmuVersion::ALL.to_vec())
}

proptest! {
    #[test]
    fn pmcr_fields(bits: u64, flag: bool, value: u64) {
        check_flag!(Pmcr, bits, flag, e, with_e, 0);
        check_flag!(Pmcr, bits, flag, p, with_p, 1);
        check_flag!(Pmcr, bits, flag, c, with_c, 2);
        check_flag!(Pmcr, bits, flag, d, with_d, 3);
        check_flag!(Pmcr, bits, flag, x, with_x, 4);
        check_flag!(Pmcr, bits, flag, dp, with_dp, 5);
        check_flag!(Pmcr, bits, flag, lc, with_lc, 6);
        check_flag!(Pmcr, bits, flag, lp, with_lp, 7);
        check_flag!(Pmcr, bits, flag, fzo, with_fzo, 9);
        check_field!(Pmcr, bits, value, n, with_n, 11, 5, u8);
        check_field!(Pmcr, bits, value, idcode, with_idcode, 16, 8, u8);
        check_field!(Pmcr, bits, value, imp, with_imp, 24, 8, u8);
        check_flag!(Pmcr, bits, flag, fzs, with_fzs, 32);
    }

    #[test]
    fn pmevtyper_fields(bits: u64, flag: bool, value: u64) {
        check_field!(Pmevtyper, bits, value, evt_count_low, with_evt_count_low, 0, 10, u16);
        check_field!(Pmevtyper, bits, value, evt_count_high, with_evt_count_high, 10, 6, u8);
        check_flag!(Pmevtyper, bits, flag, rlh, with_rlh, 20);
        check_flag!(Pmevtyper, bits, flag, rlu, with_rlu, 21);
        check_flag!(Pmevtyper, bits, flag, rlk, with_rlk, 22);
        check_flag!(Pmevtyper, bits, flag, t, with_t, 23);
        check_flag!(Pmevtyper, bits, flag, sh, with_sh, 24);
        check_flag!(Pmevtyper, bits, flag, mt, with_mt, 25);
        check_flag!(Pmevtyper, bits, flag, m, with_m, 26);
        check_flag!(Pmevtyper, bits, flag, nsh, with_nsh, 27);
        check_flag!(Pmevtyper, bits, flag, nsu, with_nsu, 28);
        check_flag!(Pmevtyper, bits, flag, nsk, with_nsk, 29);
        check_flag!(Pmevtyper, bits, flag, u, with_u, 30);
        check_flag!(Pmevtyper, bits, flag, p, with_p, 31);
        check_field!(Pmevtyper, bits, value, th, with_th, 32, 12, u16);
        check_field!(Pmevtyper, bits, value, tlc, with_tlc, 54, 2, u8);
        check_field!(Pmevtyper, bits, value, vs, with_vs, 56, 2, u8);
        check_flag!(Pmevtyper, bits, flag, sync, with_sync, 58);
        check_flag!(Pmevtyper, bits, flag, te, with_te, 60);
        check_field!(Pmevtyper, bits, value, tc, with_tc, 61, 3, u8);
        // The whole event number is the two halves.
        let t = Pmevtyper::from_bits(bits);
        prop_assert_eq!(t.evt_count(), t.evt_count_low() | u16::from(t.evt_count_high()) << 10);
        let event = value as u16;
        prop_assert_eq!(t.with_evt_count(event).evt_count(), event);
    }

    #[test]
    fn pmccfiltr_fields(bits: u64, flag: bool, value: u64) {
        check_flag!(Pmccfiltr, bits, flag, rlh, with_rlh, 20);
        check_flag!(Pmccfiltr, bits, flag, rlu, with_rlu, 21);
        check_flag!(Pmccfiltr, bits, flag, rlk, with_rlk, 22);
        check_flag!(Pmccfiltr, bits, flag, t, with_t, 23);
        check_flag!(Pmccfiltr, bits, flag, sh, with_sh, 24);
        check_flag!(Pmccfiltr, bits, flag, m, with_m, 26);
        check_flag!(Pmccfiltr, bits, flag, nsh, with_nsh, 27);
        check_flag!(Pmccfiltr, bits, flag, nsu, with_nsu, 28);
        check_flag!(Pmccfiltr, bits, flag, nsk, with_nsk, 29);
        check_flag!(Pmccfiltr, bits, flag, u, with_u, 30);
        check_flag!(Pmccfiltr, bits, flag, p, with_p, 31);
        check_field!(Pmccfiltr, bits, value, vs, with_vs, 56, 2, u8);
    }

    #[test]
    fn small_register_fields(bits: u64, flag: bool, value: u64) {
        check_field!(Pmselr, bits, value, sel, with_sel, 0, 5, u8);
        check_flag!(Pmuserenr, bits, flag, en, with_en, 0);
        check_flag!(Pmuserenr, bits, flag, sw, with_sw, 1);
        check_flag!(Pmuserenr, bits, flag, cr, with_cr, 2);
        check_flag!(Pmuserenr, bits, flag, er, with_er, 3);
        check_flag!(Pmuserenr, bits, flag, uen, with_uen, 4);
        check_flag!(Pmuserenr, bits, flag, ir, with_ir, 5);
        check_flag!(Pmuserenr, bits, flag, tid, with_tid, 6);
        check_field!(Pmcfgr, bits, value, n, with_n, 0, 8, u8);
        check_field!(Pmcfgr, bits, value, size, with_size, 8, 6, u8);
        check_flag!(Pmcfgr, bits, flag, cc, with_cc, 14);
        check_flag!(Pmcfgr, bits, flag, ccd, with_ccd, 15);
        check_flag!(Pmcfgr, bits, flag, ex, with_ex, 16);
        check_flag!(Pmcfgr, bits, flag, fzo, with_fzo, 21);
        check_flag!(Pmcfgr, bits, flag, ss, with_ss, 22);
        check_field!(Pmcfgr, bits, value, ncg, with_ncg, 28, 4, u8);
        check_field!(Pmmir, bits, value, slots, with_slots, 0, 8, u8);
        check_field!(Pmmir, bits, value, bus_slots, with_bus_slots, 8, 8, u8);
        check_field!(Pmmir, bits, value, bus_width, with_bus_width, 16, 4, u8);
        check_field!(Pmmir, bits, value, thwidth, with_thwidth, 20, 4, u8);
        check_field!(Pmmir, bits, value, edge, with_edge, 24, 4, u8);
    }

    #[test]
    fn masks_per_version(bits: u64, v in version()) {
        fn check<T: Register>(bits: u64, v: PmuVersion) -> Result<(), TestCaseError> {
            let value = T::from_raw(bits);
            prop_assert_eq!(value.to_bits(), bits, "from_bits keeps every bit");
            let clean = value.sanitized(v);
            prop_assert!(clean.check_res0(v).is_ok());
            prop_assert_eq!(clean.to_bits() & T::res0_mask(v), 0);
            prop_assert_eq!(value.check_res0(v).is_ok(), bits & T::res0_mask(v) == 0);
            prop_assert_eq!(T::writable_mask(v) & T::res0_mask(v), 0);
            // A newer version never turns a defined bit back into RES0.
            for newer in PmuVersion::ALL.iter().filter(|&&n| n >= v) {
                prop_assert_eq!(T::res0_mask(*newer) & !T::res0_mask(v), 0);
            }
            Ok(())
        }
        check::<Pmcr>(bits, v)?;
        check::<Pmevtyper>(bits, v)?;
        check::<Pmccfiltr>(bits, v)?;
        check::<Pmselr>(bits, v)?;
        check::<Pmuserenr>(bits, v)?;
        check::<Pmcfgr>(bits, v)?;
        check::<Pmmir>(bits, v)?;
    }

    #[test]
    fn delta_is_exact_within_one_wrap(prev: u64, k: u64, long: bool) {
        let width = if long { CounterWidth::Bits64 } else { CounterWidth::Bits32 };
        let k = k & width.mask(); // any k < 2^w
        let prev = prev & width.mask();
        let new = prev.wrapping_add(k) & width.mask();
        prop_assert_eq!(delta(prev, new, width), k);
    }

    #[test]
    fn preset_overflows_after_exactly_the_period(period in 1u64..=(1 << 32)) {
        let preset = preset_for_period(period, CounterWidth::Bits32).unwrap();
        prop_assert!(preset <= 0xFFFF_FFFF);
        prop_assert_eq!(preset + period, 1 << 32);
    }

    #[test]
    fn bias_overflows_like_a_32_bit_counter(value: u32, k in 0u64..(1 << 32)) {
        let (after, carried) = bias_32(value).overflowing_add(k);
        prop_assert_eq!(carried, u64::from(value) + k >= 1 << 32);
        prop_assert_eq!(unbias_32(after), value.wrapping_add(k as u32));
        prop_assert_eq!(unbias_32(bias_32(value)), value);
    }

    #[test]
    fn chained_halves_round_trip(value: u64) {
        let (high, low) = ChainedPair::split(value);
        prop_assert_eq!(ChainedPair::compose(high, low), value);
    }

    /// A 32-bit counter driven by random bursts; an "interrupt handler" counts and clears each
    /// overflow after a burst, so several wraps between two reads are seen; the accumulator must
    /// equal the true number of events.
    #[test]
    fn accumulator_equals_the_true_total(
        start: u32,
        reads in prop::collection::vec(prop::collection::vec(0u64..(1 << 32), 0..6), 1..12),
    ) {
        let mut p = SoftPmu::new(SoftPmuConfig::new(PmuVersion::V3p1, 1)).unwrap();
        let inst = CommonEvent::InstRetired.code();
        p.write(R::Pmevtyper(0), inst.into()).unwrap();
        p.write(R::Pmevcntr(0), start.into()).unwrap();
        p.write(R::Pmcntenset, 1).unwrap();
        p.write(R::Pmintenset, 1).unwrap();
        p.write(R::Pmcr, 1).unwrap();
        let mut acc = OverflowAccumulator::new(CounterWidth::Bits32, start.into());
        let mut truth = 0u64;
        for bursts in reads {
            let mut overflows = 0;
            for burst in bursts {
                p.count_event(inst, burst);
                truth += burst;
                if p.irq_asserted() {
                    let flags = p.read(R::Pmovsclr).unwrap();
                    p.write(R::Pmovsclr, flags).unwrap();
                    overflows += 1;
                }
            }
            acc.update(p.read(R::Pmevcntr(0)).unwrap(), overflows).unwrap();
            prop_assert_eq!(acc.total(), truth);
        }
        p.check_invariants().unwrap();
    }

    /// With at most one wrap between reads, the sticky flag alone is enough.
    #[test]
    fn accumulator_with_flags_only(start: u32, bursts in prop::collection::vec(0u64..(1 << 32), 1..20)) {
        let mut p = SoftPmu::new(SoftPmuConfig::new(PmuVersion::V3p5, 1)).unwrap();
        p.write(R::Pmcntenset, 1 << 31).unwrap();
        p.write(R::Pmcr, 1).unwrap(); // LC = 0: the cycle counter overflows at bit 31
        p.write(R::Pmccntr, start.into()).unwrap();
        let mut acc = OverflowAccumulator::new(CounterWidth::Bits32, start.into());
        let mut truth = 0u64;
        for burst in bursts {
            p.run_cycles(burst);
            truth += burst;
            let flag = p.read(R::Pmovsclr).unwrap() & 1 << 31 != 0;
            p.write(R::Pmovsclr, 1 << 31).unwrap();
            acc.update_with_flag(p.cycle_counter(), flag).unwrap();
            prop_assert_eq!(acc.total(), truth);
        }
        // LC = 0 does not stop the counter at 2^32: its 64 bits hold the whole count.
        prop_assert_eq!(p.cycle_counter(), u64::from(start) + truth);
    }

    /// A CHAIN pair on 32-bit counters holds (start + events) mod 2^64.
    #[test]
    fn chained_pair_on_the_soft_pmu(start: u64, bursts in prop::collection::vec(any::<u32>(), 1..10), low in 0u8..3) {
        let pair = ChainedPair::new(low * 2).unwrap();
        let mut p = SoftPmu::new(SoftPmuConfig::new(PmuVersion::V3p4, 6)).unwrap();
        let inst = CommonEvent::InstRetired.code();
        let (hi, lo) = ChainedPair::split(start);
        p.write(R::Pmevtyper(pair.low()), inst.into()).unwrap();
        p.write(R::Pmevtyper(pair.high()), CommonEvent::Chain.code().into()).unwrap();
        p.write(R::Pmevcntr(pair.high()), hi).unwrap();
        p.write(R::Pmevcntr(pair.low()), lo).unwrap();
        p.write(R::Pmcntenset, 0b11 << pair.low()).unwrap();
        p.write(R::Pmcr, 1).unwrap();
        let mut truth = start;
        for burst in bursts {
            p.count_event(inst, burst.into());
            truth = truth.wrapping_add(burst.into());
            let value = ChainedPair::compose(
                p.event_counter(pair.high()).unwrap(),
                p.event_counter(pair.low()).unwrap(),
            );
            prop_assert_eq!(value, truth);
        }
    }

    /// LP/LC on the soft PMU: the overflow flag is set exactly when the count crosses the overflow
    /// bit the control bits select.
    #[test]
    fn overflow_point_follows_lp_and_lc(start: u64, k in 0u64..(1 << 33), lp: bool, lc: bool, v in version()) {
        let mut p = SoftPmu::new(SoftPmuConfig::new(v, 1)).unwrap();
        let inst = CommonEvent::InstRetired.code();
        p.write(R::Pmevtyper(0), inst.into()).unwrap();
        p.write(R::Pmevcntr(0), start).unwrap();
        p.write(R::Pmccntr, start).unwrap();
        p.write(R::Pmcntenset, 1 | 1 << 31).unwrap();
        p.write(R::Pmcr, Pmcr::default().with_e(true).with_lp(lp).with_lc(lc).bits()).unwrap();
        p.count_event(inst, k);
        p.run_cycles(k);
        let stored = p.event_counter(0).unwrap();
        let ew = p.event_counter_width(0).unwrap();
        let start_ev = if v.has_long_event_counters() { start } else { start & 0xFFFF_FFFF };
        let crossed = |s: u64, w: CounterWidth| u128::from(s & w.mask()) + u128::from(k) > u128::from(w.mask());
        prop_assert_eq!(p.overflow_flags().has_event_counter(0), crossed(start_ev, ew));
        prop_assert_eq!(ew == CounterWidth::Bits64, lp && v.has_long_event_counters());
        let cw = p.cycle_counter_width();
        prop_assert_eq!(p.overflow_flags().contains(pmu_regs::CounterSet::C), crossed(start, cw));
        prop_assert_eq!(stored, start_ev.wrapping_add(k) & if v.has_long_event_counters() { u64::MAX } else { 0xFFFF_FFFF });
        prop_assert_eq!(p.cycle_counter(), start.wrapping_add(k));
    }
}

#[test]
fn pmceid_bits_are_a_bijection_onto_the_common_ranges() {
    let mut seen = std::collections::BTreeSet::new();
    for register in 0..2u8 {
        for bit in 0..64u8 {
            let event = CommonEventSet::event_of(register, bit).unwrap();
            let back = CommonEventSet::bit_of(event).unwrap();
            assert_eq!((back.register, back.bit), (register, bit));
            assert!(seen.insert(event));
        }
    }
    let expected: std::collections::BTreeSet<u16> = (0..0x40).chain(0x4000..0x4040).collect();
    assert_eq!(seen, expected);
}
