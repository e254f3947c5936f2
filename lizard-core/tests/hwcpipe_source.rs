//! The HWCPipe path: Linux software perf counters read for real on this machine, the Mali GPU through
//! hwcpipe's simulated kbase driver (its in-memory model of `/dev/mali0`), and both sources together with the
//! simulated gatord, ids continuing after the gatord counters.

mod common;

use std::time::Duration;

use common::config_for;
use gatord_sim::{self as sim, SimConfig};
use hwcpipe::gpu::{Fault, GpuProfiler, MaliValues, SimGpu, SimulatedKbase, Workload};
use hwcpipe::HwcPipe;
use lizard_core::{
    CaptureMode, Config, CounterClass, DerivedInput, Error, GpuDumps, HwcPipeBackend, Lizard,
    ResultType, Source, Value,
};
use lizard_core::{DirectError, UsageError};

fn id_named(lizard: &Lizard, name: &str) -> u32 {
    lizard
        .counters()
        .iter()
        .find(|c| c.name == name)
        .unwrap_or_else(|| panic!("no counter {name}"))
        .id
}

/// A backend over the simulated Mali-G78 where every hardware counter counts 7 per interval.
fn simulated_gpu() -> (HwcPipeBackend, hwcpipe::gpu::sim::SimHandle) {
    let device = SimulatedKbase::new(SimGpu::G78, Workload::from_fn(|_, _, _, _| 7));
    let handle = device.handle();
    let gpu = GpuProfiler::with_device(device).unwrap();
    let pipe = HwcPipe::from_profilers(None, Some(Ok(gpu)));
    (HwcPipeBackend::new(pipe).unwrap(), handle)
}

fn no_gatord() -> Config {
    let mut config = Config::default();
    config.gatord = None;
    config.sample_interval = Duration::from_millis(1);
    config
}

#[test]
fn software_cpu_counters_are_read_on_this_machine() {
    let lizard = match Lizard::configure(Config::hwcpipe_only()) {
        Ok(l) => l,
        Err(err) => {
            // perf_event_open refused entirely (e.g. perf_event_paranoid 3 or seccomp): the reason is typed.
            let Error::NoSource { hwcpipe, .. } = &err else {
                panic!("{err:?}")
            };
            assert!(
                matches!(
                    **hwcpipe,
                    Error::Direct(DirectError::HwcPipeUnavailable { .. })
                ),
                "{hwcpipe:?}"
            );
            return;
        }
    };
    let mut lizard = lizard;
    assert!(matches!(lizard.gatord_error(), Some(Error::SourceDisabled)));
    let task_clock = id_named(&lizard, "TaskClock");
    let counter = lizard.counter(task_clock).unwrap().clone();
    assert_eq!(counter.id, task_clock);
    assert_eq!(
        (counter.source, counter.class),
        (Source::HwcPipeCpu, CounterClass::Delta)
    );
    assert_eq!(counter.result_type, ResultType::Integer);
    lizard.enable(task_clock).unwrap();
    lizard.start_capture().unwrap();
    let spin_until = std::time::Instant::now() + Duration::from_millis(30);
    let mut x = 0u64;
    while std::time::Instant::now() < spin_until {
        x = x.wrapping_mul(31).wrapping_add(7);
    }
    std::hint::black_box(x);
    lizard.stop_capture().unwrap();
    let samples = lizard.samples(task_clock).unwrap();
    assert!(samples.len() >= 3, "start, ticks, stop: {}", samples.len());
    let total: i64 = samples.iter().map(|s| s.value.as_f64() as i64).sum();
    assert_eq!(
        lizard.read_int(task_clock).unwrap(),
        total,
        "delta: the sum of per-sample deltas"
    );
    // The thread spun: its task clock advanced (how far depends on how busy the machine is).
    assert!(total > 0, "task clock {total} ns");
}

#[test]
fn the_engine_names_the_gpu_and_driver_its_direct_source_reads() {
    let (backend, _device) = simulated_gpu();
    let lizard = Lizard::configure_with_backend(no_gatord(), Box::new(backend)).unwrap();
    let gpu = lizard.gpu().expect("the simulated GPU");
    assert_eq!(gpu.product, "Mali-G78");
    assert!(gpu.driver.starts_with("JM 11."), "{gpu:?}");

    let cpu_only = HwcPipe::from_profilers(None, None);
    if let Ok(backend) = HwcPipeBackend::new(cpu_only) {
        if let Ok(lizard) = Lizard::configure_with_backend(no_gatord(), Box::new(backend)) {
            assert_eq!(lizard.gpu(), None);
        }
    }
}

#[test]
fn simulated_mali_values_are_summed() {
    let (backend, device) = simulated_gpu();
    let mut lizard = Lizard::configure_with_backend(no_gatord(), Box::new(backend)).unwrap();
    let cycles = id_named(&lizard, "GpuCycles");
    let c = lizard.counter(cycles).unwrap();
    assert_eq!(
        (c.source, c.result_type),
        (Source::HwcPipeGpu, ResultType::Floating)
    );
    lizard.enable(cycles).unwrap();
    lizard.start_capture().unwrap();
    std::thread::sleep(Duration::from_millis(20));
    lizard.stop_capture().unwrap();
    let samples = lizard.samples(cycles).unwrap();
    assert!(samples.len() >= 2);
    let per_sample = samples[0].value.as_f64();
    assert!(per_sample > 0.0);
    assert!(
        samples.iter().all(|s| s.value == Value::Float(per_sample)),
        "a constant workload"
    );
    assert_eq!(
        lizard.read_double(cycles).unwrap(),
        per_sample * samples.len() as f64
    );
    assert!(device.samples_taken() >= samples.len() as u64);
    // The window's account (the GPU's, the driver dumping by itself): every period served or counted as
    // missed or folded, except one due at the stop.
    let sampling = lizard.sampling().expect("the direct source sampled");
    assert_eq!(sampling.interval, Duration::from_millis(1));
    let gpu = sampling.gpu.clone().expect("the GPU's account");
    assert_eq!(
        sampling.delivered as usize,
        samples.len(),
        "one sample per dump"
    );
    let handled = sampling.delivered + sampling.missed + gpu.folded;
    assert!(
        handled <= sampling.expected && sampling.expected <= handled + 1,
        "{sampling:?}"
    );
    assert!(sampling.window >= Duration::from_millis(20), "{sampling:?}");
    assert!(
        sampling.largest_gap >= Duration::from_millis(1) - Duration::from_micros(1),
        "{sampling:?}"
    );
}

/// A capture of 20 ms with a 1 s interval, its GPU dumped as `dumps` says: GpuCycles' samples.
fn short_capture_of_gpu_cycles(dumps: GpuDumps) -> Result<Vec<f64>, Error> {
    let (backend, _device) = simulated_gpu();
    let mut config = no_gatord();
    config.sample_interval = Duration::from_secs(1);
    let backend = backend.with_gpu_dumps(dumps);
    let mut lizard = Lizard::configure_with_backend(config, Box::new(backend)).unwrap();
    let cycles = id_named(&lizard, "GpuCycles");
    lizard.enable(cycles).unwrap();
    lizard.start_capture().unwrap();
    std::thread::sleep(Duration::from_millis(20));
    lizard.stop_capture()?;
    let samples = lizard.samples(cycles)?;
    Ok(samples.iter().map(|s| s.value.as_f64()).collect())
}

#[test]
fn dumps_with_the_samples_cover_a_capture_shorter_than_the_interval() {
    // At the driver's pace the first dump is due after the stop: a short capture has no GPU sample.
    let paced = short_capture_of_gpu_cycles(GpuDumps::DriverPaced);
    assert!(matches!(paced, Err(Error::NothingCaptured(_))), "{paced:?}");
    // With the samples: the dump at the stop covers the window, one constant workload's dump.
    let samples = short_capture_of_gpu_cycles(GpuDumps::WithSamples).unwrap();
    assert!(!samples.is_empty(), "the stop's dump is a sample");
    assert!(samples.iter().all(|&v| v > 0.0), "{samples:?}");
}

#[test]
fn a_sampling_interval_below_the_shortest_is_refused() {
    let (backend, _device) = simulated_gpu();
    let mut config = no_gatord();
    config.sample_interval = Duration::from_micros(50);
    let err = Lizard::configure_with_backend(config, Box::new(backend)).unwrap_err();
    assert!(
        matches!(
            err,
            Error::Usage(UsageError::SampleInterval { interval, min })
                if interval == Duration::from_micros(50) && min == lizard_core::MIN_SAMPLE_INTERVAL
        ),
        "{err:?}"
    );
}

#[test]
fn gpu_fault_mid_capture_is_reported_and_samples_kept() {
    let (backend, device) = simulated_gpu();
    let mut lizard = Lizard::configure_with_backend(no_gatord(), Box::new(backend)).unwrap();
    let cycles = id_named(&lizard, "GpuCycles");
    lizard.enable(cycles).unwrap();
    lizard.start_capture().unwrap();
    std::thread::sleep(Duration::from_millis(10));
    device.inject(Fault::HangUp);
    std::thread::sleep(Duration::from_millis(10));
    let err = lizard.stop_capture().unwrap_err();
    assert!(
        matches!(err, Error::Direct(DirectError::HwcPipe(_))),
        "{err:?}"
    );
    assert!(!lizard.is_capturing());
    assert!(
        !lizard.samples(cycles).unwrap().is_empty(),
        "samples before the fault stay readable"
    );
}

#[test]
fn gatord_and_gpu_together_ids_continue_and_both_threads_store() {
    let daemon = sim::start(SimConfig::quick()).unwrap();
    for mode in [CaptureMode::Reconnecting, CaptureMode::Persistent] {
        let mut config = config_for(&daemon);
        config.mode = mode;
        let (backend, _device) = simulated_gpu();
        let mut lizard = Lizard::configure_with_backend(config, Box::new(backend)).unwrap();
        // The daemon's fixed counters, and the one programmable event (0x08) of its Sim_cnt set in place
        // of the set's slots.
        let slots = daemon
            .counters()
            .iter()
            .filter(|n| n.starts_with("Sim_cnt"))
            .count();
        assert_eq!(slots, 2);
        let gatord_count = daemon.counters().len() - slots + 1;
        for (i, c) in lizard.counters().iter().enumerate() {
            assert_eq!(c.id as usize, i + 1);
            let expected = if i < gatord_count {
                Source::Gatord
            } else {
                Source::HwcPipeGpu
            };
            assert_eq!(c.source, expected, "gatord first, then HWCPipe GPU");
        }
        let gpu_cycles = id_named(&lizard, "GpuCycles");
        assert!(gpu_cycles as usize > gatord_count);
        lizard.enable(1).unwrap();
        lizard.enable(gpu_cycles).unwrap();
        lizard.start_capture().unwrap();
        std::thread::sleep(Duration::from_millis(20));
        lizard.stop_capture().unwrap();
        assert!(
            !lizard.samples(1).unwrap().is_empty(),
            "{mode:?}: gatord samples"
        );
        assert!(
            !lizard.samples(gpu_cycles).unwrap().is_empty(),
            "{mode:?}: GPU samples"
        );
        assert!(lizard.read_double(gpu_cycles).unwrap() > 0.0);
    }
}

/// Whether `counter`'s equation, or one of its derived inputs', reads the time span.
fn depends_on_time(lizard: &Lizard, counter: &lizard_core::Counter) -> bool {
    counter.derivation.as_ref().is_some_and(|d| {
        d.inputs.iter().any(|input| match *input {
            DerivedInput::TimeSpan => true,
            DerivedInput::Counter(id) => depends_on_time(lizard, lizard.counter(id).unwrap()),
            DerivedInput::Constant(_) => false,
        })
    })
}

/// The shader core count the reference sample gives.
fn catalog_cores(catalog: &hwcpipe::gpu::MaliCounters, values: &MaliValues) -> u32 {
    let counter = catalog.by_name("MaliConfigCoreCount").unwrap();
    values.get(counter).unwrap().unwrap() as u32
}

/// `counter`'s equation over its inputs' totals when each hardware input totals `n` times its per-sample
/// value (`per_sample` by name), evaluated here from the counter's derivation.
fn window_value(
    lizard: &Lizard,
    counter: &lizard_core::Counter,
    n: f64,
    per_sample: &dyn Fn(&str) -> f64,
) -> f64 {
    let derivation = counter.derivation.as_ref().expect("a derived counter");
    let inputs: Vec<f64> = derivation
        .inputs
        .iter()
        .map(|input| match *input {
            DerivedInput::Counter(id) => {
                let input = lizard.counter(id).unwrap();
                match input.class {
                    CounterClass::Derived => window_value(lizard, input, n, per_sample),
                    _ => n * per_sample(&input.name),
                }
            }
            DerivedInput::Constant(value) => value,
            DerivedInput::TimeSpan => panic!("time-based counters are not checked here"),
        })
        .collect();
    derivation.equation.eval(&inputs).unwrap()
}

#[test]
fn every_database_counter_of_the_simulated_g78_is_listed_and_read_as_hwcpipe_computes_it() {
    let workload = || Workload::from_fn(|_, _, _, _| 7);
    // The reference: hwcpipe's own catalog and one sample's values over an identical device.
    let mut reference =
        GpuProfiler::with_device(SimulatedKbase::new(SimGpu::G78, workload())).unwrap();
    let catalog = reference.mali_counters().clone();
    reference.run().unwrap();
    reference.sample().unwrap();
    let mut expected = MaliValues::default();
    reference.mali_values(&mut expected);

    let device = SimulatedKbase::new(SimGpu::G78, workload());
    let pipe = HwcPipe::from_profilers(None, Some(Ok(GpuProfiler::with_device(device).unwrap())));
    let backend = HwcPipeBackend::new(pipe).unwrap();
    let mut lizard = Lizard::configure_with_backend(no_gatord(), Box::new(backend)).unwrap();
    let available: Vec<_> = catalog.iter().filter(|(_, c)| c.is_available()).collect();
    let listed: Vec<_> = lizard
        .counters()
        .iter()
        .filter(|c| c.category.ends_with("(Arm's database)"))
        .cloned()
        .collect();
    assert_eq!(listed.len(), available.len());
    let unreadable = lizard.unreadable().len();
    assert_eq!(unreadable, catalog.len() - available.len());
    assert!(lizard.unreadable().iter().all(|u| !u.reason.is_empty()));
    for c in &listed {
        lizard.enable(c.id).unwrap();
    }
    lizard.start_capture().unwrap();
    std::thread::sleep(Duration::from_millis(10));
    lizard.stop_capture().unwrap();

    let mut checked = 0;
    for (counter, info) in &available {
        let c = listed.iter().find(|c| c.name == info.name()).unwrap();
        // A time-based input anywhere down its equations makes the reading depend on the capture's length.
        let time_based = depends_on_time(
            &lizard,
            listed.iter().find(|c| c.name == info.name()).unwrap(),
        );
        let _ = &info.source;
        let samples = lizard.samples(c.id).unwrap();
        let Some(Ok(want)) = expected.get(*counter) else {
            // No value in the reference sample (a division by zero): none in the capture either.
            assert!(samples.is_empty(), "{}: {samples:?}", c.name);
            continue;
        };
        assert!(samples.len() >= 2, "{}", c.name);
        if time_based {
            continue;
        }
        for s in &samples {
            assert_eq!(s.value, Value::Float(want), "{}", c.name);
        }
        let reading = lizard.read_double(c.id).unwrap();
        // Every sample is alike, so each hardware input totals its sample's value times the samples: a
        // count totals that, and a derived counter is its equation over the totals.
        let n = samples.len() as f64;
        let per_sample = |name: &str| {
            let counter = catalog.by_name(name).unwrap();
            expected.get(counter).unwrap().unwrap()
        };
        let whole = match c.class {
            CounterClass::Delta => want * n,
            _ => window_value(&lizard, c, n, &per_sample),
        };
        assert!(
            (reading - whole).abs() <= 1e-9 * whole.abs(),
            "{}: {reading} against {whole}",
            c.name
        );
        checked += 1;
    }
    let active = listed
        .iter()
        .find(|c| c.name == "MaliGPUActiveCy")
        .expect("GPU active cycles");
    assert_eq!(
        (active.class, active.result_type),
        (CounterClass::Delta, ResultType::Floating)
    );
    let percent = listed
        .iter()
        .find(|c| c.units.to_string() == "%")
        .expect("a percentage");
    assert_eq!(percent.class, CounterClass::Derived, "{}", percent.name);
    // A constant reads as the constant over a capture of many samples, never multiplied by their number.
    let cores = listed
        .iter()
        .find(|c| c.name == "MaliConfigCoreCount")
        .expect("the core count");
    assert_eq!(
        lizard.read_double(cores.id).unwrap(),
        f64::from(catalog_cores(&catalog, &expected))
    );
    println!(
        "Mali-G78 (simulated): {} database counters listed, {} unreadable, {checked} checked against hwcpipe",
        listed.len(),
        unreadable
    );
    assert!(checked > 100, "{checked}");
}

#[test]
fn a_window_of_a_running_capture_reads_its_part_of_each_counter() {
    let (backend, _device) = simulated_gpu();
    let mut lizard = Lizard::configure_with_backend(no_gatord(), Box::new(backend)).unwrap();
    let cycles = id_named(&lizard, "GpuCycles");
    // A derived counter with counter inputs only (no time span), so that its reading scales with its
    // inputs' totals.
    let derived = lizard
        .counters()
        .iter()
        .find(|c| {
            c.derivation.is_some()
                && !depends_on_time(&lizard, c)
                && c.name != "MaliConfigCoreCount"
        })
        .map(|c| c.id)
        .expect("a derived counter");
    lizard.enable(cycles).unwrap();
    lizard.enable(derived).unwrap();
    lizard.start_capture().unwrap();
    std::thread::sleep(Duration::from_millis(30));
    // While the capture runs: the window between two stored samples reads the samples inside it.
    let samples = lizard.samples(cycles).unwrap();
    assert!(samples.len() >= 10, "{}", samples.len());
    let (a, b) = (samples[2].timestamp_ns, samples[7].timestamp_ns);
    let window = lizard_core::Window {
        start_ns: a,
        end_ns: b,
    };
    let inside: f64 = samples[3..=7].iter().map(|s| s.value.as_f64()).sum();
    let read = lizard.read_window(cycles, window).unwrap();
    assert!(
        (read - inside).abs() < 1e-6 * inside.max(1.0),
        "{read} vs {inside}"
    );
    assert!(lizard.read_window(derived, window).is_ok());
    // Half a sample's interval reads half of that sample.
    let half = lizard_core::Window {
        start_ns: a,
        end_ns: a + (samples[3].timestamp_ns - a) / 2,
    };
    let part = lizard.read_window(cycles, half).unwrap();
    assert!(
        (part / samples[3].value.as_f64() - 0.5).abs() < 0.01,
        "{part}"
    );
    // Pruning keeps what a window starting at the prune point reads: the sample before it, and on.
    lizard.prune_before(b);
    assert_eq!(
        lizard.samples(cycles).unwrap()[0].timestamp_ns,
        samples[6].timestamp_ns
    );
    let after = lizard_core::Window {
        start_ns: b,
        end_ns: lizard.samples(cycles).unwrap().last().unwrap().timestamp_ns,
    };
    assert!(lizard.read_window(cycles, after).unwrap() > 0.0);
    // A counter not captured has no value, by name.
    let other = lizard
        .counters()
        .iter()
        .find(|c| c.id != cycles && c.id != derived && c.derivation.is_none())
        .unwrap()
        .id;
    assert!(matches!(
        lizard.read_window(other, window),
        Err(Error::NoValue { .. })
    ));
    lizard.stop_capture().unwrap();
}
