//! Fuzzes the `pmu-regs` software PMU with sequences of register writes and reads, events, cycles,
//! context and EL2-partition changes, all decoded from libFuzzer's bytes. Nothing may panic, the
//! architectural invariants must hold after every step, and the register value types must format
//! and sanitise any bit pattern.
#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use pmu_regs::encoding::PmuRegister;
use pmu_regs::overflow::{
    delta, preset_for_period, CounterWidth, El2Partition, OverflowAccumulator,
};
use pmu_regs::soft_pmu::{ExceptionLevel, ExecContext, SecurityState, SoftPmu, SoftPmuConfig};
use pmu_regs::{
    CommonEventSet, Pmccfiltr, Pmcfgr, Pmcr, Pmevtyper, Pmmir, Pmselr, PmuVersion, Pmuserenr,
    Register,
};

#[derive(Arbitrary, Debug)]
enum Op {
    Write {
        register: u8,
        value: u64,
    },
    Read {
        register: u8,
    },
    Count {
        event: u16,
        count: u32,
    },
    Cycles {
        count: u64,
    },
    Context {
        el: u8,
        secure: bool,
        prohibited: bool,
    },
    Partition {
        hpmn: u8,
        hpme: bool,
        hlp: bool,
    },
    Accumulate {
        raw: u64,
        overflows: u8,
    },
}

#[derive(Arbitrary, Debug)]
struct Input {
    version: u8,
    counters: u8,
    ops: Vec<Op>,
}

fn register(selector: u8) -> PmuRegister {
    let fixed = PmuRegister::FIXED;
    let selector = usize::from(selector);
    if selector < fixed.len() {
        fixed[selector]
    } else if selector % 2 == 0 {
        PmuRegister::Pmevcntr((selector / 2 % 32) as u8)
    } else {
        PmuRegister::Pmevtyper((selector / 2 % 32) as u8)
    }
}

fn exercise_value_types(bits: u64, version: PmuVersion) {
    use std::fmt::Write;
    let mut text = String::new();
    let _ = write!(
        text,
        "{:?}{:?}{:?}{:?}{:?}{:?}{:?}{:?}",
        Pmcr::from_bits(bits),
        Pmevtyper::from_bits(bits),
        Pmccfiltr::from_bits(bits),
        Pmselr::from_bits(bits),
        Pmuserenr::from_bits(bits),
        Pmcfgr::from_bits(bits),
        Pmmir::from_bits(bits),
        CommonEventSet::from_registers(bits, bits.rotate_left(17)),
    );
    assert!(Pmevtyper::from_bits(bits)
        .sanitized(version)
        .check_res0(version)
        .is_ok());
    assert!(Pmcr::from_bits(bits)
        .sanitized(version)
        .check_res0(version)
        .is_ok());
    let _ = Pmmir::from_bits(bits).bus_width_bytes();
    for width in [CounterWidth::Bits32, CounterWidth::Bits64] {
        let d = delta(bits, bits.rotate_right(7), width);
        assert!(d <= width.mask());
        if let Ok(preset) = preset_for_period(bits, width) {
            assert_eq!(preset.wrapping_add(bits) & width.mask(), 0);
        }
    }
}

fuzz_target!(|input: Input| {
    let version = PmuVersion::ALL[usize::from(input.version) % PmuVersion::ALL.len()];
    let mut config = SoftPmuConfig::new(version, input.counters & 0x3F);
    config.aarch32 = input.counters & 0x80 == 0;
    config.export = input.counters & 0x40 == 0;
    let Ok(mut pmu) = SoftPmu::new(config) else {
        // Only more than 31 counters is refused.
        assert!(input.counters & 0x3F > 31);
        return;
    };
    let mut acc = OverflowAccumulator::new(CounterWidth::Bits32, 0);
    for op in input.ops.into_iter().take(256) {
        match op {
            Op::Write { register: r, value } => {
                let _ = pmu.write(register(r), value);
                exercise_value_types(value, version);
            }
            Op::Read { register: r } => {
                let _ = pmu.read(register(r));
            }
            Op::Count { event, count } => pmu.count_event(event, count.into()),
            Op::Cycles { count } => pmu.run_cycles(count),
            Op::Context {
                el,
                secure,
                prohibited,
            } => pmu.set_context(ExecContext {
                el: [
                    ExceptionLevel::El0,
                    ExceptionLevel::El1,
                    ExceptionLevel::El2,
                    ExceptionLevel::El3,
                ][usize::from(el % 4)],
                security: if secure {
                    SecurityState::Secure
                } else {
                    SecurityState::NonSecure
                },
                counting_prohibited: prohibited,
            }),
            Op::Partition { hpmn, hpme, hlp } => {
                let result = pmu.set_el2_partition(El2Partition { hpmn, hpme, hlp });
                assert_eq!(result.is_ok(), hpmn <= config.counters);
            }
            Op::Accumulate { raw, overflows } => {
                let before = acc;
                if acc.update(raw, overflows.into()).is_err() {
                    assert_eq!(acc, before, "a refused update changes nothing");
                }
            }
        }
        pmu.check_invariants().unwrap();
        if pmu.irq_asserted() {
            assert!(pmu.interrupt_enables().intersects(pmu.overflow_flags()));
        }
        for n in 0..config.counters {
            let width = pmu.event_counter_width(n).unwrap();
            assert!(width == CounterWidth::Bits32 || version.has_long_event_counters());
        }
    }
});
