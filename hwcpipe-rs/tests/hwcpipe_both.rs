//! `HwcPipe` with both profilers at once: the CPU side over the simulated perf kernel in
//! `tests/support`, the GPU side over the crate's `SimulatedKbase` Mali model. Checks the
//! combined counter list, availability reasons from each side, and that one `sample()` carries
//! integer CPU deltas and fractional-capable GPU values together. No recorded bytes are used.

use std::sync::Arc;

use hwcpipe::cpu::sim::FakePerf;
use hwcpipe::gpu::{SimGpu, SimulatedKbase, Workload};
use hwcpipe::{
    Availability, Counter, CpuConfig, CpuCounter, CpuProfiler, GpuCounter, GpuProfiler, HwcPipe,
    Unit, Value,
};

fn pipe(gpu: SimGpu) -> (HwcPipe, Arc<FakePerf>) {
    let fake = Arc::new(FakePerf::new(2));
    let cpu = CpuProfiler::with_sys(CpuConfig::new(&CpuCounter::SOFTWARE), fake.clone());
    let gpu = GpuProfiler::with_device(SimulatedKbase::new(gpu, Workload::ramp()));
    (HwcPipe::from_profilers(Some(cpu), Some(gpu)), fake)
}

#[test]
fn one_sample_carries_both_sides() {
    let (mut pipe, fake) = pipe(SimGpu::G78);
    pipe.run().unwrap();
    fake.advance(1_000, 1_000, |config| config + 1);
    let m = pipe.sample().unwrap();
    assert_eq!(m.get(CpuCounter::TaskClock), Some(Value::Int(2)));
    let gpu_cycles = m.get(GpuCounter::GpuCycles).expect("G78 counts GPU cycles");
    assert!(
        matches!(gpu_cycles, Value::Float(v) if v > 0.0),
        "{gpu_cycles:?}"
    );
    let cpu_part = m
        .iter()
        .take_while(|(c, _)| matches!(c, Counter::Cpu(_)))
        .count();
    assert_eq!(cpu_part, 7, "CPU values first");
    assert_eq!(
        m.iter().count(),
        7 + pipe.gpu_profiler().unwrap().enabled_counters().len()
    );
    pipe.stop().unwrap();
}

#[test]
fn every_counter_is_listed_with_its_side_and_reason() {
    let (pipe, _) = pipe(SimGpu::T860);
    let gpu = pipe.gpu_profiler().unwrap();
    let listed: Vec<_> = pipe.counters().collect();
    assert_eq!(listed.len(), CpuCounter::COUNT + GpuCounter::ALL.len());
    for (counter, info, availability) in &listed {
        match counter {
            Counter::Cpu(c) => {
                assert_eq!(
                    availability.is_available(),
                    CpuCounter::SOFTWARE.contains(c),
                    "{c}"
                );
                if !availability.is_available() {
                    assert!(matches!(availability, Availability::CpuCounter(_)));
                }
            }
            Counter::Gpu(g) => {
                assert_eq!(
                    availability.is_available(),
                    gpu.supported_counters().contains(g)
                );
                if !availability.is_available() {
                    assert!(matches!(availability, Availability::GpuCounter(_)), "{g}");
                }
            }
        }
        assert_eq!(*info, counter.info());
    }
    let bytes = Counter::Gpu(GpuCounter::ExternalMemoryReadBytes).info();
    assert_eq!(bytes.unit, Unit::Bytes);
}

#[test]
fn enabling_narrows_both_sides() {
    let (mut pipe, fake) = pipe(SimGpu::G710);
    pipe.set_enabled_cpu_counters(&[CpuCounter::PageFaults])
        .unwrap();
    pipe.set_enabled_gpu_counters(&[GpuCounter::GpuCycles])
        .unwrap();
    assert_eq!(
        pipe.enabled_counters(),
        [
            Counter::Cpu(CpuCounter::PageFaults),
            Counter::Gpu(GpuCounter::GpuCycles)
        ]
    );
    pipe.run().unwrap();
    fake.advance(10, 10, |_| 4);
    let m = pipe.sample().unwrap();
    let got: Vec<Counter> = m.iter().map(|(c, _)| c).collect();
    assert_eq!(
        got,
        [
            Counter::Cpu(CpuCounter::PageFaults),
            Counter::Gpu(GpuCounter::GpuCycles)
        ]
    );
}
