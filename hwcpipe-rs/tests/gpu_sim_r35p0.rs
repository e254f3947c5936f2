//! The simulator's presets of Arm's kbase r35p0 over its dummy GPU model
//! (`SimConfig::kbase_r35p0_dummy`), for every GPU of the model's table: the same checks the real
//! driver passes in `gpu_kbase` (run in the emulated Arm system, where a test also holds each
//! preset's handshake to the driver's), here on any machine.

#[path = "support/kbase_dummy.rs"]
mod kbase_dummy;

use hwcpipe::gpu::{
    Backend, GpuError, GpuProfiler, SimConfig, SimulatedKbase, Workload, KBASE_R35P0_DUMMY_GPUS,
};
use kbase_dummy::{check_sample, distinct, injected};

/// The simulator's stand-in for injected values: every dump counts `value` in every present block.
fn workload(value: fn(usize, u32) -> u32) -> Workload {
    Workload::from_fn(move |_, kind, instance, index| injected(&value, kind, instance, index))
}

#[test]
fn every_dummy_model_gpu_reads_exact_values_through_both_readers() {
    let mut opened = 0;
    for (name, gpu_id, csf) in KBASE_R35P0_DUMMY_GPUS {
        let config = SimConfig::kbase_r35p0_dummy(name).expect("a preset");
        assert_eq!(config.gpu_id, u64::from(gpu_id));
        let open = |backend| {
            GpuProfiler::with_device_using(
                SimulatedKbase::with_config(config, workload(distinct)),
                backend,
            )
        };
        if name == "tDUx" {
            assert!(matches!(
                open(None),
                Err(GpuError::UnsupportedProduct {
                    codename: Some("tDUx"),
                    ..
                })
            ));
            continue;
        }
        for backend in [Backend::Vinstr, Backend::KinstrPrfcnt] {
            let mut profiler =
                open(Some(backend)).unwrap_or_else(|e| panic!("{name} {backend:?}: {e}"));
            let info = *profiler.info();
            assert_eq!(
                info.offered,
                &[Backend::Vinstr, Backend::KinstrPrfcnt],
                "{name}"
            );
            assert_eq!(info.layout.slots, [1, 1, 8, 32], "{name}");
            assert_eq!(info.layout.dump_bytes(), 10752, "{name}");
            assert_eq!(
                info.version.to_string(),
                if csf { "CSF 1.8" } else { "JM 11.33" }
            );
            assert_eq!(info.props.bus_width_bytes(), 8, "{name}: 64-bit bus");
            profiler.run().unwrap();
            for _ in 0..3 {
                let sample = profiler.sample().unwrap().clone();
                assert!(
                    check_sample(&profiler, &sample, &distinct, 1) >= 20,
                    "{name}"
                );
            }
            opened += 1;
        }
        // The preferred reader where both exist is vinstr, as HWCPipe chooses.
        assert_eq!(open(None).unwrap().info().backend, Backend::Vinstr);
    }
    assert_eq!(opened, 32, "16 GPUs with a layout × 2 readers");
}

#[test]
fn periodic_sampling_gives_one_dump_per_sample_through_both_readers() {
    let config = SimConfig::kbase_r35p0_dummy("tODx").unwrap();
    for backend in [Backend::Vinstr, Backend::KinstrPrfcnt] {
        let mut profiler = GpuProfiler::with_device_using(
            SimulatedKbase::with_config(config, workload(distinct)),
            Some(backend),
        )
        .unwrap();
        assert!(matches!(
            profiler.run_periodic(std::time::Duration::from_micros(99)),
            Err(GpuError::PeriodTooShort { .. })
        ));
        profiler
            .run_periodic(hwcpipe::gpu::profiler::MIN_PERIOD)
            .unwrap();
        assert_eq!(profiler.period(), Some(hwcpipe::gpu::profiler::MIN_PERIOD));
        let mut last = 0;
        for _ in 0..50 {
            let sample = profiler.sample().unwrap().clone();
            check_sample(&profiler, &sample, &distinct, 1);
            assert!(sample.timestamp_ns() > last);
            last = sample.timestamp_ns();
        }
        // Back to manual dumps, then periodic again: each run sets its mode up.
        profiler.stop().unwrap();
        profiler.run().unwrap();
        let sample = profiler.sample().unwrap().clone();
        check_sample(&profiler, &sample, &distinct, 1);
        assert_eq!(profiler.period(), None);
        profiler
            .run_periodic(hwcpipe::gpu::profiler::MIN_PERIOD)
            .unwrap();
        let sample = profiler.sample().unwrap().clone();
        check_sample(&profiler, &sample, &distinct, 1);
    }
}
