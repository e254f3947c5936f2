//! Fault injection through the kbase seam: each misbehaviour of the (simulated) driver yields its
//! typed `GpuError`, and the profiler keeps working once the fault is gone. No recorded bytes.

use rustix::io::Errno;

use hwcpipe::gpu::dump::DumpError;
use hwcpipe::gpu::ioctl::*;
use hwcpipe::gpu::kinstr::MetadataError;
use hwcpipe::gpu::props::PropsError;
use hwcpipe::gpu::{
    Fault, GpuCounter, GpuError, GpuProfiler, Interface, SimConfig, SimGpu, SimulatedKbase,
    Workload,
};

fn open(gpu: SimGpu, faults: &[Fault]) -> Result<GpuProfiler, GpuError> {
    let sim = SimulatedKbase::new(gpu, Workload::ramp());
    let handle = sim.handle();
    for &f in faults {
        handle.inject(f);
    }
    GpuProfiler::with_device(sim)
}

fn open_config(config: SimConfig) -> Result<GpuProfiler, GpuError> {
    GpuProfiler::with_device(SimulatedKbase::with_config(config, Workload::ramp()))
}

fn errno_of(err: &GpuError) -> Option<i32> {
    match err {
        GpuError::Ioctl { source, .. } => source.raw_os_error(),
        _ => None,
    }
}

#[test]
fn failing_ioctls_during_the_handshake_are_reported_with_their_name_and_errno() {
    let err = open(
        SimGpu::G78,
        &[Fault::FailIoctl {
            request: SET_FLAGS,
            errno: Errno::PERM.raw_os_error(),
        }],
    )
    .unwrap_err();
    assert!(
        matches!(
            err,
            GpuError::Ioctl {
                op: "KBASE_IOCTL_SET_FLAGS",
                ..
            }
        ),
        "{err}"
    );
    assert_eq!(errno_of(&err), Some(Errno::PERM.raw_os_error()));

    let err = open(
        SimGpu::G78,
        &[Fault::FailIoctl {
            request: GET_GPUPROPS,
            errno: Errno::FAULT.raw_os_error(),
        }],
    )
    .unwrap_err();
    assert!(
        matches!(
            err,
            GpuError::Ioctl {
                op: "KBASE_IOCTL_GET_GPUPROPS",
                ..
            }
        ),
        "{err}"
    );

    let err = open(
        SimGpu::T860,
        &[Fault::FailIoctl {
            request: UK_GPU_PROPS,
            errno: Errno::INVAL.raw_os_error(),
        }],
    )
    .unwrap_err();
    assert_eq!(errno_of(&err), Some(Errno::INVAL.raw_os_error()));

    let err = open(
        SimGpu::G715,
        &[Fault::FailIoctl {
            request: KINSTR_PRFCNT_SETUP,
            errno: Errno::BUSY.raw_os_error(),
        }],
    )
    .unwrap_err();
    assert!(
        matches!(
            err,
            GpuError::Ioctl {
                op: "KBASE_IOCTL_KINSTR_PRFCNT_SETUP",
                ..
            }
        ),
        "{err}"
    );
}

#[test]
fn a_device_that_answers_no_version_check_is_not_kbase() {
    let faults =
        [UK_VERSION_CHECK, VERSION_CHECK_JM, VERSION_CHECK_CSF].map(|request| Fault::FailIoctl {
            request,
            errno: Errno::NOTTY.raw_os_error(),
        });
    assert!(matches!(
        open(SimGpu::G78, &faults),
        Err(GpuError::NotKbase)
    ));
}

#[test]
fn reader_setup_retries_smaller_rings_on_enomem_then_reports_it() {
    let err = open(
        SimGpu::G71,
        &[Fault::FailIoctl {
            request: HWCNT_READER_SETUP,
            errno: Errno::NOMEM.raw_os_error(),
        }],
    )
    .unwrap_err();
    assert_eq!(errno_of(&err), Some(Errno::NOMEM.raw_os_error()));
    let sim = SimulatedKbase::new(SimGpu::G71, Workload::idle());
    let handle = sim.handle();
    handle.inject(Fault::FailIoctl {
        request: HWCNT_READER_SETUP,
        errno: Errno::NOMEM.raw_os_error(),
    });
    let _ = GpuProfiler::with_device(sim);
    let setups = handle
        .device_calls()
        .iter()
        .filter(|&&r| r == HWCNT_READER_SETUP)
        .count();
    assert_eq!(setups, 5, "tries 32, 16, 8, 4 and 2 buffers");
}

#[test]
fn a_dump_that_never_completes_times_out_and_sampling_recovers() {
    for gpu in [SimGpu::G78, SimGpu::G715] {
        let sim = SimulatedKbase::new(gpu, Workload::ramp());
        let handle = sim.handle();
        let mut profiler = GpuProfiler::with_device(sim).unwrap();
        profiler.set_timeout(std::time::Duration::from_millis(5));
        profiler.run().unwrap();
        handle.inject(Fault::DumpNeverCompletes);
        let err = profiler.sample().unwrap_err();
        assert!(
            matches!(err, GpuError::Timeout { waited } if waited.as_millis() == 5),
            "{gpu:?}: {err}"
        );
        handle.clear_faults();
        assert!(profiler
            .sample()
            .unwrap()
            .get(GpuCounter::GpuCycles)
            .is_some());
    }
}

#[test]
fn hang_up_bad_indices_and_error_flags_are_typed() {
    let sim = SimulatedKbase::new(SimGpu::G76, Workload::ramp());
    let handle = sim.handle();
    let mut profiler = GpuProfiler::with_device(sim).unwrap();
    profiler.run().unwrap();
    handle.inject(Fault::HangUp);
    assert!(matches!(profiler.sample(), Err(GpuError::HungUp)));
    handle.clear_faults();
    handle.inject(Fault::BadBufferIndex);
    assert!(matches!(
        profiler.sample(),
        Err(GpuError::BadBufferIndex { count: 32, .. })
    ));
    handle.clear_faults();
    handle.inject(Fault::FailIoctl {
        request: READER_DUMP,
        errno: Errno::BUSY.raw_os_error(),
    });
    assert!(matches!(
        profiler.sample(),
        Err(GpuError::Ioctl {
            op: "KBASE_HWCNT_READER_DUMP",
            ..
        })
    ));
    handle.clear_faults();
    assert!(profiler.sample().is_ok());

    let sim = SimulatedKbase::new(SimGpu::G720, Workload::ramp());
    let handle = sim.handle();
    let mut profiler = GpuProfiler::with_device(sim).unwrap();
    profiler.run().unwrap();
    handle.inject(Fault::SampleErrorFlag);
    assert!(matches!(profiler.sample(), Err(GpuError::SampleError)));
    handle.clear_faults();
    handle.inject(Fault::TruncatedSampleMetadata);
    assert!(matches!(
        profiler.sample(),
        Err(GpuError::Metadata(MetadataError::Truncated))
    ));
    handle.clear_faults();
    assert!(profiler.sample().is_ok());
}

#[test]
fn malformed_driver_answers_are_typed() {
    let err = open(SimGpu::G78, &[Fault::WrongBufferSize]).unwrap_err();
    assert!(
        matches!(err, GpuError::Dump(DumpError::SizeMismatch { .. })),
        "{err}"
    );
    let err = open(SimGpu::G715, &[Fault::ShortEnumItems]).unwrap_err();
    assert!(
        matches!(
            err,
            GpuError::Metadata(MetadataError::ItemTooSmall { size: 16, .. })
        ),
        "{err}"
    );
    let err = open(SimGpu::G710, &[Fault::TruncatedProps]).unwrap_err();
    assert!(
        matches!(err, GpuError::Props(PropsError::Truncated { .. })),
        "{err}"
    );
}

#[test]
fn unsupported_products_layouts_and_old_drivers_are_refused() {
    let unknown = SimConfig {
        gpu_id: 0x0999_0000,
        ..SimGpu::T860.config()
    };
    assert!(matches!(
        open_config(unknown),
        Err(GpuError::UnsupportedProduct {
            gpu_id: 0x0999_0000,
            ..
        })
    ));
    let t720 = SimConfig {
        gpu_id: 0x0720_0000,
        ..SimGpu::T860.config()
    };
    assert!(matches!(
        open_config(t720),
        Err(GpuError::UnsupportedProduct { .. })
    ));
    let hwver4 = SimConfig {
        hwver: 4,
        ..SimGpu::T860.config()
    };
    assert!(matches!(
        open_config(hwver4),
        Err(GpuError::UnsupportedHwVersion(4))
    ));
    let old_uk = SimConfig {
        version: (10, 1),
        ..SimGpu::T860.config()
    };
    assert!(matches!(
        open_config(old_uk),
        Err(GpuError::DriverTooOld { version }) if version.interface == Interface::LegacyUk && version.minor == 1
    ));
    // kinstr_prfcnt came with CSF interface 1.6; a 128-value GPU has no other reader.
    let old_csf = SimConfig {
        version: (1, 5),
        ..SimGpu::G715.config()
    };
    assert!(matches!(
        open_config(old_csf),
        Err(GpuError::DriverTooOld { .. })
    ));
}

#[test]
fn sampling_before_run_is_an_error() {
    let mut profiler = open(SimGpu::G78, &[]).unwrap();
    assert!(matches!(profiler.sample(), Err(GpuError::NotRunning)));
    profiler.stop().unwrap();
    profiler.stop().unwrap();
}

#[test]
fn periodic_dumps_say_whether_they_counted_and_span_the_periods_they_cover() {
    use hwcpipe::gpu::profiler::Backend;
    let period = std::time::Duration::from_micros(500);
    for (gpu, backend) in [
        (SimGpu::G710, Backend::Vinstr),
        (SimGpu::G715, Backend::KinstrPrfcnt),
    ] {
        let sim = SimulatedKbase::new(gpu, Workload::ramp());
        let handle = sim.handle();
        handle.inject(Fault::NotCountingFirst(2));
        let mut profiler = GpuProfiler::with_device_using(sim, Some(backend)).unwrap();
        profiler.run_periodic(period).unwrap();
        // The first two dumps came before counting was enabled: every counter zero.
        for _ in 0..2 {
            let sample = profiler.sample().unwrap();
            assert!(!sample.counted_anything(), "{backend:?}");
            assert_eq!(sample.get(GpuCounter::GpuCycles), Some(0.0));
        }
        let first = profiler.sample().unwrap().clone();
        assert!(first.counted_anything(), "{backend:?}");
        // Each periodic dump covers the period asked for, twice that when the driver folds one; the
        // rates of Arm's equations span what the dumps' timestamps say, however fast they are read.
        let second = profiler.sample().unwrap().clone();
        assert_eq!(second.timestamp_ns() - first.timestamp_ns(), 500_000);
        assert_eq!(profiler.mali_constants().time_span_s, 0.0005);
        handle.inject(Fault::FoldedDumps);
        let folded = profiler.sample().unwrap().clone();
        assert_eq!(folded.timestamp_ns() - second.timestamp_ns(), 1_000_000);
        assert_eq!(profiler.mali_constants().time_span_s, 0.001);
        assert!(!folded.stretched() || backend == Backend::KinstrPrfcnt);
        profiler.stop().unwrap();
    }
}
