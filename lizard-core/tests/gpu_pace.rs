//! The GPU sampled at the driver's pace: the engine's GPU poller over hwcpipe's simulated kbase driver in
//! periodic mode, its account (expected, delivered, folded, missed, not counting yet) apart from the CPUs',
//! a dump that never comes counted missed without ending the capture, manual dumps where the driver will
//! not dump by itself, and a CSF GPU's first dumps, taken before its firmware counts, left out.

use std::sync::Arc;
use std::time::Duration;

use hwcpipe::cpu::sim::FakePerf;
use hwcpipe::gpu::sim::SimHandle;
use hwcpipe::gpu::{Fault, GpuProfiler, SimGpu, SimulatedKbase, Workload};
use hwcpipe::{CpuConfig, CpuCounter, CpuProfiler, HwcPipe};
use lizard_core::{
    Config, DirectError, Error, GpuPace, GpuSampling, HwcPipeBackend, Lizard, Sampling,
    SamplingMethod,
};

const INTERVAL: Duration = Duration::from_millis(1);

/// The engine over a simulated GPU (and the simulated perf kernel's CPU counters when `cpu`), every
/// hardware counter counting 7 per dump, faults injected before the handshake.
fn engine(gpu: SimGpu, faults: &[Fault], cpu: bool) -> (Lizard, SimHandle) {
    let device = SimulatedKbase::new(gpu, Workload::from_fn(|_, _, _, _| 7));
    let handle = device.handle();
    for &fault in faults {
        handle.inject(fault);
    }
    let gpu = GpuProfiler::with_device(device).unwrap();
    let cpu = cpu.then(|| {
        CpuProfiler::with_sys(
            CpuConfig::new(&CpuCounter::SOFTWARE),
            Arc::new(FakePerf::new(2)),
        )
    });
    let backend = HwcPipeBackend::new(HwcPipe::from_profilers(cpu, Some(Ok(gpu)))).unwrap();
    let mut config = Config::default();
    config.gatord = None;
    config.sample_interval = INTERVAL;
    let lizard = Lizard::configure_with_backend(config, Box::new(backend)).unwrap();
    (lizard, handle)
}

fn id_named(lizard: &Lizard, name: &str) -> u32 {
    lizard
        .counters()
        .iter()
        .find(|c| c.name == name)
        .unwrap_or_else(|| panic!("no counter {name}"))
        .id
}

/// Captures GpuCycles (and `more`) for `run`, which may inject faults meanwhile.
fn capture(
    lizard: &mut Lizard,
    more: &[&str],
    run: impl FnOnce(),
) -> (Result<(), Error>, Sampling) {
    for name in ["GpuCycles"].iter().chain(more) {
        let id = id_named(lizard, name);
        lizard.enable(id).unwrap();
    }
    lizard.start_capture().unwrap();
    run();
    let result = lizard.stop_capture();
    (result, lizard.sampling().expect("an account"))
}

/// Every period of the window is delivered, folded, missed or not counting, but the one under way at the
/// stop.
fn accounted(gpu: &GpuSampling) -> bool {
    let handled = gpu.delivered + gpu.folded + gpu.missed + gpu.not_counting;
    handled <= gpu.expected + 1 && gpu.expected <= handled + 1
}

#[test]
fn the_driver_dumps_every_period_and_each_dump_is_one_sample() {
    let (mut lizard, device) = engine(SimGpu::G78, &[], false);
    let (result, sampling) = capture(&mut lizard, &[], || {
        std::thread::sleep(Duration::from_millis(30))
    });
    result.unwrap();
    // GPU counters only: the account is the GPU's.
    assert_eq!(sampling.method, SamplingMethod::GpuOnly);
    let gpu = sampling.gpu.clone().expect("the GPU's account");
    assert_eq!(gpu.pace, GpuPace::Periodic);
    assert_eq!(
        (sampling.delivered, sampling.missed),
        (gpu.delivered, gpu.missed)
    );
    assert!(accounted(&gpu), "{gpu:?}");
    assert_eq!(
        (gpu.folded, gpu.missed, gpu.not_counting),
        (0, 0, 0),
        "{gpu:?}"
    );
    assert!(gpu.expected >= 25, "{gpu:?}");
    let cycles = id_named(&lizard, "GpuCycles");
    let samples = lizard.samples(cycles).unwrap();
    assert_eq!(samples.len() as u64, gpu.delivered);
    assert_eq!(device.samples_taken(), gpu.delivered, "one dump per sample");
    assert!(samples
        .windows(2)
        .all(|w| w[0].timestamp_ns <= w[1].timestamp_ns));
    let per_sample = samples[0].value.as_f64();
    assert!(per_sample > 0.0);
    assert_eq!(
        lizard.read_double(cycles).unwrap(),
        per_sample * samples.len() as f64
    );
}

#[test]
fn the_cpus_are_sampled_apart_from_the_gpu() {
    let (mut lizard, _device) = engine(SimGpu::G78, &[], true);
    let (result, sampling) = capture(&mut lizard, &["TaskClock"], || {
        std::thread::sleep(Duration::from_millis(20))
    });
    result.unwrap();
    // This process's CPU counters: a thread of their own, with start and stop samples.
    assert!(
        matches!(sampling.method, SamplingMethod::Thread { .. }),
        "{sampling:?}"
    );
    let gpu = sampling.gpu.expect("the GPU's account");
    assert_eq!(gpu.pace, GpuPace::Periodic);
    assert!(gpu.delivered > 0 && accounted(&gpu), "{gpu:?}");
    let task_clock = id_named(&lizard, "TaskClock");
    assert_eq!(
        lizard.samples(task_clock).unwrap().len() as u64,
        sampling.delivered + 2
    );
}

#[test]
fn a_dump_that_never_comes_is_missed_with_its_reason_and_the_capture_goes_on() {
    let (mut lizard, device) = engine(SimGpu::G78, &[], false);
    let (result, sampling) = capture(&mut lizard, &[], || {
        std::thread::sleep(Duration::from_millis(10));
        device.inject(Fault::DumpNeverCompletes);
        std::thread::sleep(Duration::from_millis(15));
    });
    result.expect("missed dumps do not end the capture");
    let gpu = sampling.gpu.unwrap();
    assert!(gpu.missed >= 10, "{gpu:?}");
    let reason = gpu.missed_reason.clone().expect("a reason");
    assert!(reason.starts_with("no dump came within"), "{reason}");
    assert!(accounted(&gpu), "{gpu:?}");
    let samples = lizard.samples(id_named(&lizard, "GpuCycles")).unwrap();
    assert_eq!(samples.len() as u64, gpu.delivered);
    assert!(gpu.delivered > 0, "{gpu:?}");
}

#[test]
fn periods_whose_dump_came_late_are_folded_into_the_dump_that_covers_them() {
    let (mut lizard, device) = engine(SimGpu::G78, &[], false);
    let (result, sampling) = capture(&mut lizard, &[], || {
        std::thread::sleep(Duration::from_millis(10));
        device.inject(Fault::DumpNeverCompletes);
        std::thread::sleep(Duration::from_millis(10));
        device.clear_faults();
        std::thread::sleep(Duration::from_millis(15));
    });
    result.unwrap();
    let gpu = sampling.gpu.unwrap();
    // The dump after the fault spans the periods without one (its timestamps say so).
    assert!(gpu.folded >= 5, "{gpu:?}");
    assert!(accounted(&gpu), "{gpu:?}");
    let samples = lizard.samples(id_named(&lizard, "GpuCycles")).unwrap();
    assert_eq!(samples.len() as u64, gpu.delivered);
}

#[test]
fn a_dump_flagged_erroneous_is_missed_with_its_reason() {
    let (mut lizard, device) = engine(SimGpu::G715, &[], false);
    let (result, sampling) = capture(&mut lizard, &[], || {
        std::thread::sleep(Duration::from_millis(5));
        device.inject(Fault::SampleErrorFlag);
        std::thread::sleep(Duration::from_millis(20));
        device.clear_faults();
        std::thread::sleep(Duration::from_millis(5));
    });
    result.unwrap();
    let gpu = sampling.gpu.unwrap();
    assert!(gpu.missed > 0, "{gpu:?}");
    assert_eq!(
        gpu.missed_reason.as_deref(),
        Some("the driver flagged the dump as erroneous")
    );
}

#[test]
fn folded_dumps_are_counted_folded_and_their_counts_kept() {
    let (mut lizard, device) = engine(SimGpu::G78, &[Fault::FoldedDumps], false);
    let (result, sampling) = capture(&mut lizard, &[], || {
        std::thread::sleep(Duration::from_millis(30))
    });
    result.unwrap();
    let gpu = sampling.gpu.unwrap();
    // Each dump covers two periods: one delivered, one folded into it.
    assert!(gpu.folded > 0, "{gpu:?}");
    assert!(gpu.folded + 1 >= gpu.delivered, "{gpu:?}");
    assert!(accounted(&gpu), "{gpu:?}");
    assert_eq!(device.samples_taken(), gpu.delivered);
}

#[test]
fn a_driver_that_will_not_dump_by_itself_is_sampled_with_manual_dumps_and_says_so() {
    for gpu in [SimGpu::G78, SimGpu::G715] {
        let (mut lizard, _device) = engine(gpu, &[Fault::NoPeriodicDumps], false);
        let (result, sampling) = capture(&mut lizard, &[], || {
            std::thread::sleep(Duration::from_millis(20))
        });
        result.unwrap();
        let account = sampling.gpu.unwrap();
        let GpuPace::Manual { reason } = &account.pace else {
            panic!("{gpu:?}: {account:?}")
        };
        assert!(
            reason.starts_with("the driver does not dump by itself here ("),
            "{reason}"
        );
        assert!(account.delivered > 0 && accounted(&account), "{account:?}");
        let samples = lizard.samples(id_named(&lizard, "GpuCycles")).unwrap();
        // One sample per dump, the one at the stop included.
        assert_eq!(samples.len() as u64, account.delivered);
    }
}

#[test]
fn a_csf_gpus_first_dumps_before_counting_are_not_counting_yet_not_zeros() {
    let (mut lizard, _device) = engine(SimGpu::G710, &[Fault::NotCountingFirst(3)], false);
    let (result, sampling) = capture(&mut lizard, &[], || {
        std::thread::sleep(Duration::from_millis(20))
    });
    result.unwrap();
    let gpu = sampling.gpu.unwrap();
    assert_eq!(gpu.not_counting, 3, "{gpu:?}");
    let reason = gpu.not_counting_reason.clone().unwrap();
    assert!(
        reason.starts_with("nothing counted yet: a CSF GPU's firmware"),
        "{reason}"
    );
    assert!(accounted(&gpu), "{gpu:?}");
    let samples = lizard.samples(id_named(&lizard, "GpuCycles")).unwrap();
    assert_eq!(samples.len() as u64, gpu.delivered);
    assert!(
        samples.iter().all(|s| s.value.as_f64() > 0.0),
        "no made-up zeros: {samples:?}"
    );
}

#[test]
fn a_job_manager_gpus_first_dumps_of_zeros_are_zeros() {
    // Only a CSF GPU's firmware starts counting late: elsewhere a dump of zeros is an idle GPU.
    let (mut lizard, _device) = engine(SimGpu::G78, &[Fault::NotCountingFirst(3)], false);
    let (result, sampling) = capture(&mut lizard, &[], || {
        std::thread::sleep(Duration::from_millis(20))
    });
    result.unwrap();
    let gpu = sampling.gpu.unwrap();
    assert_eq!((gpu.not_counting, gpu.not_counting_reason), (0, None));
    let samples = lizard.samples(id_named(&lizard, "GpuCycles")).unwrap();
    assert_eq!(samples.len() as u64, gpu.delivered);
    assert!(
        samples[..3].iter().all(|s| s.value.as_f64() == 0.0),
        "{samples:?}"
    );
}

#[test]
fn a_failing_gpu_ends_its_sampling_with_the_error_and_keeps_the_samples() {
    let (mut lizard, device) = engine(SimGpu::G78, &[], false);
    let (result, sampling) = capture(&mut lizard, &[], || {
        std::thread::sleep(Duration::from_millis(10));
        device.inject(Fault::HangUp);
        std::thread::sleep(Duration::from_millis(10));
    });
    let err = result.unwrap_err();
    assert!(
        matches!(err, Error::Direct(DirectError::HwcPipe(_))),
        "{err:?}"
    );
    let gpu = sampling.gpu.unwrap();
    assert!(gpu.delivered > 0);
    assert!(!lizard
        .samples(id_named(&lizard, "GpuCycles"))
        .unwrap()
        .is_empty());
}
