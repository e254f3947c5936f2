//! Kernel sampling driven through the simulated perf kernel (`hwcpipe::cpu::sim::FakePerf`), which writes
//! real perf ring records: the engine's account of a capture (`SamplingMethod::Kernel`) when the kernel
//! loses records in a full ring, throttles a timer, or loses a CPU — refusing the open on it, or, taken
//! away mid-capture, leaving its ring quiet and failing the read after the stop. Each shows up as the
//! real kernel's would: from the records and errors alone, the totals exact wherever records were lost.
//!
//! The fake's records are stamped on the machine's CLOCK_MONOTONIC_RAW, so the periods are real time: the
//! test fires the timers about once an interval and checks what does not depend on the host's timing
//! exactly (which records were written, lost and throttled, and the values).

use std::sync::Arc;
use std::time::{Duration, Instant};

use hwcpipe::counting::{CpuPlan, KernelSampler, PlannedEvent};
use hwcpipe::cpu::sim::FakePerf;
use hwcpipe::sys::perf_event_attr::PERF_TYPE_SOFTWARE;
use lizard_core::{
    error_chain, Config, CounterClass, Error, HwcBackend, HwcCounterInfo, KernelPlan, Lizard,
    NoKernelSampling, ResultType, Sampling, SamplingMethod, Source, Units, Value,
};

const INTERVAL: Duration = Duration::from_millis(1);
/// `PERF_COUNT_SW_CONTEXT_SWITCHES`: counter 0, counting 3 a period here.
const CONTEXT_SWITCHES: u64 = 3;
/// `PERF_COUNT_SW_PAGE_FAULTS`: counter 1, counting 2 a period here.
const PAGE_FAULTS: u64 = 2;
/// What each counter counts in a period: its config.
fn per_period(_type: u32, config: u64) -> u64 {
    config
}

/// Two CPU-wide software counters of `cpus`, sampled by the simulated kernel's timers.
#[derive(Debug)]
struct FakeKernelCounters {
    fake: Arc<FakePerf>,
    cpus: Vec<u32>,
    /// The counters the engine's thread samples, where the kernel refused.
    enabled: Vec<usize>,
}

impl HwcBackend for FakeKernelCounters {
    fn counters(&self) -> Vec<HwcCounterInfo> {
        ["ContextSwitches", "PageFaults"]
            .into_iter()
            .map(|name| HwcCounterInfo {
                name: name.to_owned(),
                description: String::new(),
                units: Units::parse(""),
                source: Source::HwcPipeCpu,
                result_type: ResultType::Integer,
                class: CounterClass::Delta,
                category: None,
                derivation: None,
                cpu_series: None,
                pmu_part: None,
            })
            .collect()
    }

    // The engine's thread samples only where the kernel refused: nothing counts then.
    fn start(&mut self, enabled: &[usize]) -> Result<(), Error> {
        self.enabled = enabled.to_vec();
        Ok(())
    }

    fn sample(&mut self, out: &mut Vec<(usize, Value)>) -> Result<(), Error> {
        out.extend(self.enabled.iter().map(|&index| (index, Value::Int(0))));
        Ok(())
    }

    fn stop(&mut self) {}

    fn kernel_sampler(
        &mut self,
        enabled: &[usize],
        interval: Duration,
    ) -> Result<KernelPlan, NoKernelSampling> {
        let event = |index: usize| PlannedEvent {
            type_: PERF_TYPE_SOFTWARE,
            config: [CONTEXT_SWITCHES, PAGE_FAULTS][index],
            hardware: false,
        };
        let plan: Vec<CpuPlan> = self
            .cpus
            .iter()
            .map(|&cpu| CpuPlan {
                cpu,
                counters: enabled
                    .iter()
                    .map(|&index| (index as i32, event(index)))
                    .collect(),
            })
            .collect();
        let sampler = KernelSampler::open_with(self.fake.clone(), &plan, interval, false, 6)
            .map_err(NoKernelSampling::Refused)?;
        Ok(KernelPlan {
            sampler,
            per_core: true,
        })
    }
}

/// The engine over the simulated kernel's `cpus`, both counters enabled (ids in counter order).
fn engine(fake: &Arc<FakePerf>, cpus: &[u32]) -> (Lizard, Vec<u32>) {
    let backend = FakeKernelCounters {
        fake: fake.clone(),
        cpus: cpus.to_vec(),
        enabled: Vec::new(),
    };
    let mut config = Config::hwcpipe_only();
    config.sample_interval = INTERVAL;
    let mut lizard = Lizard::configure_with_backend(config, Box::new(backend)).expect("the engine");
    let ids: Vec<u32> = lizard.counters().iter().map(|c| c.id).collect();
    for &id in &ids {
        lizard.enable(id).expect("enable");
    }
    (lizard, ids)
}

/// Fires the simulated timers `periods` times, about once an interval.
fn run_periods(fake: &FakePerf, periods: usize) {
    for _ in 0..periods {
        fake.fire_timers(per_period);
        std::thread::sleep(INTERVAL);
    }
}

/// The kernel's account of a capture: rings, lost records, throttled count and time, idle periods.
fn kernel_account(sampling: &Sampling) -> (usize, u64, u64, Duration, u64) {
    match sampling.method {
        SamplingMethod::Kernel {
            rings,
            lost_records,
            throttled,
            throttled_time,
            idle_periods,
        } => (rings, lost_records, throttled, throttled_time, idle_periods),
        ref other => panic!("not sampled by the kernel: {other:?}"),
    }
}

/// The sum of counter `id`'s samples counted on `cpu`, and how many there are.
fn on_cpu(lizard: &Lizard, id: u32, cpu: u32) -> (i64, usize) {
    let samples: Vec<i64> = lizard
        .samples(id)
        .unwrap()
        .iter()
        .filter(|s| s.core == Some(cpu))
        .map(|s| match s.value {
            Value::Int(v) => v,
            Value::Float(v) => panic!("a count as a fraction: {v}"),
        })
        .collect();
    (samples.iter().sum(), samples.len())
}

#[test]
fn every_period_of_every_ring_is_a_sample_of_its_cpu() {
    let fake = Arc::new(FakePerf::new(0));
    let (mut lizard, ids) = engine(&fake, &[0, 3]);
    lizard.start_capture().unwrap();
    run_periods(&fake, 20);
    lizard.stop_capture().unwrap();
    let sampling = lizard.sampling().expect("an account");
    let (rings, lost, throttled, throttled_time, _) = kernel_account(&sampling);
    assert_eq!((rings, lost, throttled), (2, 0, 0), "{sampling:?}");
    assert_eq!(throttled_time, Duration::ZERO);
    assert_eq!(sampling.delivered, 40, "{sampling:?}");
    for cpu in [0, 3] {
        // 20 periods, and the read after the stop (nothing since the last period).
        assert_eq!(on_cpu(&lizard, ids[0], cpu), (20 * 3, 21));
        assert_eq!(on_cpu(&lizard, ids[1], cpu), (20 * 2, 21));
    }
}

#[test]
fn records_lost_in_a_full_ring_are_counted_and_their_counts_come_with_the_next_record() {
    let fake = Arc::new(FakePerf::new(0));
    // One page a ring: 51 records of a timer and two counters.
    fake.faults(|f| f.ring_page_limit = Some(1));
    let (mut lizard, ids) = engine(&fake, &[0, 1]);
    lizard.start_capture().unwrap();
    run_periods(&fake, 5);
    // 300 periods at once, faster than any drain: most cannot be written.
    for _ in 0..300 {
        fake.fire_timers(per_period);
    }
    let lost_in_burst = fake.unannounced_lost();
    assert!(lost_in_burst >= 2 * (300 - 2 * 51), "{lost_in_burst}");
    // The drains make room; the next records announce the loss.
    std::thread::sleep(Duration::from_millis(40));
    run_periods(&fake, 5);
    assert_eq!(fake.unannounced_lost(), 0);
    lizard.stop_capture().unwrap();
    let sampling = lizard.sampling().expect("an account");
    let (rings, lost, ..) = kernel_account(&sampling);
    assert_eq!((rings, lost), (2, lost_in_burst), "{sampling:?}");
    assert_eq!(sampling.delivered, 2 * 310 - lost_in_burst, "{sampling:?}");
    // Totals are running totals: the record after a loss covers it, and nothing is missing.
    for cpu in [0, 1] {
        assert_eq!(on_cpu(&lizard, ids[0], cpu).0, 310 * 3);
        assert_eq!(on_cpu(&lizard, ids[1], cpu).0, 310 * 2);
    }
}

#[test]
fn a_throttled_timer_is_counted_and_timed_until_unthrottled_or_the_stop() {
    let fake = Arc::new(FakePerf::new(0));
    let (mut lizard, ids) = engine(&fake, &[0, 1]);
    lizard.start_capture().unwrap();
    run_periods(&fake, 5);
    let throttled_at = Instant::now();
    fake.throttle(1);
    run_periods(&fake, 10);
    fake.unthrottle(1);
    let first_stretch = throttled_at.elapsed();
    run_periods(&fake, 5);
    // Throttled again, and still at the stop.
    fake.throttle(0);
    let second_at = Instant::now();
    run_periods(&fake, 5);
    lizard.stop_capture().unwrap();
    let second_stretch = second_at.elapsed();
    let sampling = lizard.sampling().expect("an account");
    let (_, lost, throttled, throttled_time, _) = kernel_account(&sampling);
    assert_eq!((lost, throttled), (0, 2), "{sampling:?}");
    // Timed from the records, on the kernel's clock: each stretch between its two instants here.
    let least = first_stretch.saturating_sub(Duration::from_millis(2)) + Duration::from_millis(5);
    let most = first_stretch + second_stretch + Duration::from_millis(50);
    assert!(
        least <= throttled_time && throttled_time <= most,
        "{throttled_time:?} not in {least:?}..{most:?}"
    );
    // CPU 0 sampled 20 periods, CPU 1 15: a throttled group counts nothing meanwhile.
    assert_eq!(sampling.delivered, 35, "{sampling:?}");
    assert_eq!(on_cpu(&lizard, ids[0], 0).0, 20 * 3);
    assert_eq!(on_cpu(&lizard, ids[0], 1).0, 15 * 3);
}

#[test]
fn an_offline_cpu_refuses_kernel_sampling_and_the_thread_says_why() {
    let fake = Arc::new(FakePerf::new(0));
    fake.faults(|f| f.offline_cpus = vec![1]);
    let (mut lizard, _) = engine(&fake, &[0, 1]);
    lizard.start_capture().unwrap();
    std::thread::sleep(Duration::from_millis(5));
    lizard.stop_capture().unwrap();
    let sampling = lizard.sampling().expect("an account");
    let SamplingMethod::Thread { reason } = &sampling.method else {
        panic!("{sampling:?}");
    };
    let refused = NoKernelSampling::Refused(std::io::Error::from_raw_os_error(libc::ENODEV));
    assert_eq!(*reason, error_chain(&refused), "{reason}");
}

#[test]
fn a_cpu_taken_away_mid_capture_goes_quiet_and_its_failed_read_is_the_captures_error() {
    let fake = Arc::new(FakePerf::new(0));
    let (mut lizard, ids) = engine(&fake, &[0, 1]);
    lizard.start_capture().unwrap();
    run_periods(&fake, 10);
    fake.faults(|f| {
        f.offline_cpus = vec![1];
        f.read_errno_on_cpu.insert(1, libc::ENODEV);
    });
    run_periods(&fake, 10);
    let err = lizard.stop_capture().unwrap_err();
    assert!(
        error_chain(&err).contains(&std::io::Error::from_raw_os_error(libc::ENODEV).to_string()),
        "{}",
        error_chain(&err)
    );
    // The account is kept: CPU 1's ring wrote its first 10 periods only, and the periods it missed
    // after are idle ones (neither lost nor throttled).
    let sampling = lizard.sampling().expect("an account");
    let (rings, lost, throttled, _, idle) = kernel_account(&sampling);
    assert_eq!((rings, lost, throttled), (2, 0, 0), "{sampling:?}");
    assert_eq!(sampling.delivered, 30, "{sampling:?}");
    assert!(idle >= 5, "{sampling:?}");
    // Every value read before is kept; CPU 0's read after the stop is too, CPU 1's failed.
    assert_eq!(on_cpu(&lizard, ids[0], 0), (20 * 3, 21));
    assert_eq!(on_cpu(&lizard, ids[0], 1), (10 * 3, 10));
}
