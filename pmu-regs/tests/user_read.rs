//! User-space counter reads (`offset + sign_extend(counter, pmc_width)`) checked against the software
//! PMU as the hardware and a model of the Linux Arm PMU driver's bookkeeping as the kernel: the driver
//! programs a counting event with half a wrap of room (`prev = −left`, counter = `(−left) & mask`),
//! publishes `offset = count − prev` in the mmap page, updates `count` and `prev` with
//! `delta = (new − prev) & mask` on `read()` and on the overflow interrupt, and reprograms the counter
//! (publishing a new offset) on the interrupt and whenever it schedules the event in. The user-space
//! value must equal the count `read()` would give at the same instant, also while a 32-bit counter has
//! wrapped and its interrupt is still pending. All inputs are generated.

use proptest::prelude::*;

use pmu_regs::encoding::PmuRegister as R;
use pmu_regs::overflow::{bias_32, delta, half_range_period, preset_for_period, CounterWidth};
use pmu_regs::soft_pmu::{ExecContext, SoftPmu, SoftPmuConfig};
use pmu_regs::user_read::{user_count, PmcWidth};
use pmu_regs::{CommonEvent, Pmcr, Pmevtyper, PmuVersion};

const EVENT: u16 = CommonEvent::InstRetired as u16;

/// The kernel's state for one counting event on event counter 0, and its published page.
struct Driver {
    pmu: SoftPmu,
    width: CounterWidth,
    /// The counter stores 64 bits but overflows at bit 31: the driver biases what it writes.
    biased: bool,
    count: u64,
    prev: u64,
    /// `perf_event_mmap_page.offset` as last published.
    page_offset: i64,
}

impl Driver {
    fn new(version: PmuVersion, long: bool) -> Driver {
        let mut pmu = SoftPmu::new(SoftPmuConfig::new(version, 6)).unwrap();
        let event = Pmevtyper::for_event(EVENT, version).unwrap();
        pmu.write(R::Pmevtyper(0), event.bits()).unwrap();
        pmu.write(R::Pmcntenset, 1).unwrap();
        pmu.write(R::Pmintenset, 1).unwrap();
        pmu.write(R::Pmcr, Pmcr::default().with_e(true).with_lp(long).bits())
            .unwrap();
        let width = if long {
            CounterWidth::Bits64
        } else {
            CounterWidth::Bits32
        };
        let mut driver = Driver {
            pmu,
            width,
            biased: !long && version.has_long_event_counters(),
            count: 0,
            prev: 0,
            page_offset: 0,
        };
        driver.set_period();
        driver
    }

    /// What the driver's `read_counter` returns: the register, unbiased.
    fn read_counter(&self) -> u64 {
        let raw = self.pmu.read(R::Pmevcntr(0)).unwrap();
        if self.biased {
            raw & 0xFFFF_FFFF
        } else {
            raw
        }
    }

    /// `armpmu_event_update`: count the events since `prev`.
    fn update(&mut self) {
        let new = self.read_counter();
        self.count += delta(self.prev, new, self.width);
        self.prev = new;
    }

    /// `armpmu_event_set_period` for a counting event, then the page update.
    fn set_period(&mut self) {
        let left = half_range_period(self.width);
        let preset = preset_for_period(left, self.width).unwrap();
        let value = if self.biased {
            bias_32(preset as u32)
        } else {
            preset
        };
        self.pmu.write(R::Pmevcntr(0), value).unwrap();
        self.prev = left.wrapping_neg();
        self.page_offset = self.count.wrapping_sub(self.prev) as i64;
    }

    /// Runs `n` events; the interrupt is taken only when `irq_now` (otherwise it stays pending).
    fn run(&mut self, n: u64, irq_now: bool) {
        self.pmu.set_context(ExecContext::USER);
        self.pmu.count_event(EVENT, n);
        self.pmu.set_context(ExecContext::KERNEL);
        if irq_now {
            self.take_irq();
        }
    }

    /// The overflow interrupt handler, if the interrupt is asserted.
    fn take_irq(&mut self) {
        if self.pmu.irq_asserted() {
            let flags = self.pmu.read(R::Pmovsclr).unwrap();
            self.pmu.write(R::Pmovsclr, flags).unwrap();
            self.update();
            self.set_period();
        }
    }

    /// The count `read()` returns now.
    fn read_syscall(&mut self) -> u64 {
        self.update();
        self.count
    }

    /// The count a user-space read gives now, from the published page and the raw register.
    fn read_user(&self) -> u64 {
        let raw = self.pmu.read(R::Pmevcntr(0)).unwrap();
        user_count(
            self.page_offset,
            raw,
            PmcWidth::from_counter_width(self.width),
        )
    }
}

#[derive(Clone, Debug)]
enum Op {
    /// Events, with the interrupt handled at once or left pending.
    Run(u64, bool),
    /// A `read()` system call: updates the kernel's count and `prev`, not the page.
    Read,
    /// The event is scheduled out and in again: update, reprogram, publish.
    Reschedule,
}

fn op(width: CounterWidth) -> impl Strategy<Value = Op> {
    // Fewer events between two interrupts than the half-range period leaves room for.
    let most = half_range_period(width).min(1 << 40);
    prop_oneof![
        (0..=most, any::<bool>()).prop_map(|(n, irq)| Op::Run(n, irq)),
        Just(Op::Read),
        Just(Op::Reschedule),
    ]
}

fn check(version: PmuVersion, long: bool, ops: &[Op]) -> Result<(), TestCaseError> {
    let mut driver = Driver::new(version, long);
    let mut expected = 0u64;
    for op in ops {
        match *op {
            Op::Run(n, irq) => {
                // A pending interrupt is taken before the next batch of events: with batches of at
                // most half a wrap, the counter never runs more than half a wrap past its overflow.
                driver.take_irq();
                driver.run(n, irq);
                expected += n;
            }
            Op::Read => {
                let user = driver.read_user();
                prop_assert_eq!(driver.read_syscall(), user);
            }
            Op::Reschedule => {
                driver.update();
                driver.set_period();
            }
        }
        prop_assert_eq!(driver.read_user(), expected, "after {:?}", op);
    }
    prop_assert_eq!(driver.read_syscall(), expected);
    Ok(())
}

proptest! {
    #[test]
    fn user_reads_of_a_32_bit_counter_equal_read(ops in proptest::collection::vec(op(CounterWidth::Bits32), 1..40)) {
        check(PmuVersion::V3p1, false, &ops)?;
    }

    #[test]
    fn user_reads_of_a_biased_64_bit_counter_equal_read(ops in proptest::collection::vec(op(CounterWidth::Bits32), 1..40)) {
        check(PmuVersion::V3p5, false, &ops)?;
    }

    #[test]
    fn user_reads_of_a_long_counter_equal_read(ops in proptest::collection::vec(op(CounterWidth::Bits64), 1..40)) {
        check(PmuVersion::V3p5, true, &ops)?;
    }

    #[test]
    fn sign_extension_is_the_kernels_shift_pair(raw in any::<u64>(), bits in 1u16..=64) {
        let width = PmcWidth::new(bits).unwrap();
        let shift = 64 - u32::from(bits);
        let expected = ((raw << shift) as i64) >> shift;
        prop_assert_eq!(pmu_regs::user_read::sign_extend(raw, width), expected);
        prop_assert_eq!(pmu_regs::user_read::sign_extend(raw & width.mask(), width), expected);
    }
}

/// The wrap itself, step by step: a 32-bit counter passes 0xFFFF_FFFF → 0 with its interrupt not yet
/// taken, and the user-space value keeps counting through it.
#[test]
fn a_32_bit_counter_wraps_with_its_interrupt_pending() {
    let mut driver = Driver::new(PmuVersion::V3p1, false);
    driver.run(0x7FFF_FFF0, false);
    assert_eq!(driver.read_user(), 0x7FFF_FFF0);
    assert!(!driver.pmu.irq_asserted());
    driver.run(0x20, false);
    assert!(driver.pmu.irq_asserted(), "the counter wrapped");
    assert!(driver.pmu.read(R::Pmevcntr(0)).unwrap() < 0x100);
    assert_eq!(driver.read_user(), 0x8000_0010);
    driver.run(5, true);
    assert!(!driver.pmu.irq_asserted());
    assert_eq!(driver.read_user(), 0x8000_0015);
    assert_eq!(driver.read_syscall(), 0x8000_0015);
}

/// Why a profiler must not reset an event the kernel has on the PMU: `PERF_EVENT_IOC_RESET` reads the
/// counter (leaving `prev` as the plain register value, with bit 31 set) and publishes
/// `offset = 0 − prev`, and sign extension then misplaces the count by 2^32 until the event is next
/// programmed. Disabling first (the counter is off the PMU, `index` 0) avoids it.
#[test]
fn a_page_published_after_a_read_is_off_by_a_wrap() {
    let mut driver = Driver::new(PmuVersion::V3p1, false);
    driver.run(1000, false);
    driver.update();
    // The reset: count 0, offset published from the unsigned `prev`.
    driver.count = 0;
    driver.page_offset = driver.count.wrapping_sub(driver.prev) as i64;
    driver.run(7, false);
    assert_eq!(driver.read_user(), 7u64.wrapping_sub(1 << 32));
    // Programmed again (scheduled in): exact.
    driver.update();
    driver.set_period();
    assert_eq!(driver.read_user(), 7);
}
