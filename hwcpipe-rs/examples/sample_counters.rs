//! Samples counters the way HWCPipe does, on any Linux: the CPU's software counters (task clock, context
//! switches, page faults) of this process through the real `perf_event_open` while it works, then a Mali-G78
//! through the simulated kbase driver (an in-memory model of `/dev/mali0`'s ioctls and dump buffers), whose
//! counters and formulas read like a real GPU's.
//!
//! `cargo run -p hwcpipe-rs --example sample_counters`

use std::hint::black_box;

use hwcpipe::gpu::{GpuProfiler, SimGpu, SimulatedKbase, Workload};
use hwcpipe::{CpuConfig, CpuCounter, GpuCounter, HwcPipe};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // CPU: software counters of this process.
    let software = [
        CpuCounter::TaskClock,
        CpuCounter::ContextSwitches,
        CpuCounter::PageFaults,
    ];
    let mut pipe = HwcPipe::with_config(Some(CpuConfig::new(&software)), &[]);
    match pipe.cpu_error() {
        Some(error) => println!("CPU counters unavailable here: {error}"),
        None => {
            pipe.run()?;
            for round in 1..=3 {
                // Work: touch fresh pages and spin.
                let pages = vec![1u8; 8 << 20];
                let sum: u64 = (0..2_000_000u64).map(black_box).sum();
                black_box((pages.iter().step_by(4096).count(), sum));
                let m = pipe.sample()?;
                let line: Vec<String> = m
                    .iter()
                    .map(|(counter, value)| format!("{counter} = {value} {}", counter.info().unit))
                    .collect();
                println!("CPU sample {round}: {}", line.join(", "));
            }
            pipe.stop()?;
        }
    }

    // GPU: a simulated Mali-G78 whose every hardware counter counts 1000 per dump.
    let device = SimulatedKbase::new(SimGpu::G78, Workload::from_fn(|_, _, _, _| 1000));
    let gpu = GpuProfiler::with_device(device)?;
    let info = gpu.info();
    println!(
        "GPU: {} (shader core mask {:#x}, read through {:?})",
        info.product.name, info.props.shader_core_mask, info.backend
    );
    let mut pipe = HwcPipe::from_profilers(None, Some(Ok(gpu)));
    pipe.set_enabled_gpu_counters(&[
        GpuCounter::GpuCycles,
        GpuCounter::FragmentJobs,
        GpuCounter::ShaderCycles,
    ])?;
    pipe.run()?;
    for round in 1..=2 {
        let m = pipe.sample()?;
        let line: Vec<String> = m
            .iter()
            .map(|(counter, value)| format!("{counter} = {value} {}", counter.info().unit))
            .collect();
        println!("GPU sample {round}: {}", line.join(", "));
    }
    pipe.stop()?;
    Ok(())
}
