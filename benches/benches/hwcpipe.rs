//! `HwcPipe::sample()` latency for the seven Linux software counters in one perf group, against
//! the floor it cannot beat: one raw `read()` of a single perf event descriptor, measured in the
//! same run; a raw `read()` of the same seven events as one group shows how much of the gap is the
//! kernel's. All read the running kernel's counters of this thread (no recorded data involved).
//!
//! The same sample with user-space reads asked for (`UserReads::Auto`) is measured beside it: where
//! the kernel lets this thread read its counters (arm64 with `kernel.perf_user_access=1`, x86 with
//! `rdpmc` allowed, hardware events) no system call is made; where it does not (software events
//! always, hardware events on a VM without a PMU) every group falls back to `read()`, and the bench
//! prints which path each counter took, so the figure is never mistaken for a user-space one. The
//! deterministic measure of the user-space path is the instruction count of `tests/cpu_user_read.rs`
//! in the emulated Arm system.

use lizard_benches::Ratios;
use std::fs::File;
use std::hint::black_box;
use std::io::Read;
use std::os::fd::{AsFd, OwnedFd};

use criterion::{criterion_group, criterion_main, Criterion};
use hwcpipe::cpu::{CpuConfig, CpuProfiler, UserReads};
use hwcpipe::sys::perf_event_attr::{
    ReadFormat, PERF_FORMAT_GROUP, PERF_FORMAT_ID, PERF_FORMAT_TOTAL_TIME_ENABLED,
    PERF_FORMAT_TOTAL_TIME_RUNNING, PERF_TYPE_SOFTWARE,
};
use hwcpipe::sys::{LinuxPerf, PerfEventAttr, PerfSys};
use hwcpipe::{CpuCounter, HwcPipe};

/// `PERF_COUNT_SW_TASK_CLOCK`.
const TASK_CLOCK: u64 = 1;

fn single_task_clock_fd() -> File {
    // read_format 0: a read returns one u64; the event counts from the open on.
    let attr = PerfEventAttr::counting(PERF_TYPE_SOFTWARE, TASK_CLOCK);
    let fd: OwnedFd = LinuxPerf
        .perf_event_open(&attr, 0, -1, None)
        .expect("software perf events must be allowed to run this bench");
    File::from(fd)
}

/// The seven software events as one group, opened the way the profiler opens them; the leader's
/// `File` reads the whole group.
fn software_group() -> (File, Vec<OwnedFd>) {
    let mut members = Vec::new();
    let mut leader: Option<OwnedFd> = None;
    for config in [0, 1, 3, 4, 2, 5, 6] {
        let mut attr = PerfEventAttr::counting(PERF_TYPE_SOFTWARE, config);
        attr.read_format = ReadFormat(
            PERF_FORMAT_GROUP
                | PERF_FORMAT_TOTAL_TIME_ENABLED
                | PERF_FORMAT_TOTAL_TIME_RUNNING
                | PERF_FORMAT_ID,
        );
        let fd = LinuxPerf
            .perf_event_open(&attr, 0, -1, leader.as_ref().map(|l| l.as_fd()))
            .expect("software perf events must be allowed to run this bench");
        match leader {
            None => leader = Some(fd),
            Some(_) => members.push(fd),
        }
    }
    (File::from(leader.expect("seven events")), members)
}

fn sample_vs_raw_read(c: &mut Criterion) {
    let ratios = Ratios::new();
    let mut group = c.benchmark_group("hwcpipe_sample");

    let mut pipe = HwcPipe::with_counters(&CpuCounter::SOFTWARE, &[]);
    assert_eq!(
        pipe.cpu_profiler()
            .expect("software perf events must be allowed to run this bench")
            .available_counters()
            .len(),
        7
    );
    pipe.run().unwrap();
    group.bench_function("sample_7_software_counters", |b| {
        ratios.iter(b, "sample_7_software_counters", || {
            let m = pipe.sample().unwrap();
            black_box(m.cpu_value(CpuCounter::TaskClock))
        })
    });
    pipe.stop().unwrap();

    // The same counters with user-space reads asked for; software events cannot be read from user
    // space, so this shows what asking costs when every group falls back.
    let config = CpuConfig::new(&CpuCounter::SOFTWARE).user_reads(UserReads::Auto);
    let mut auto = CpuProfiler::new(config).expect("software perf events");
    auto.run().unwrap();
    auto.sample().unwrap();
    report_paths("sample_7_software_counters_user_reads_auto", &auto);
    group.bench_function("sample_7_software_counters_user_reads_auto", |b| {
        ratios.iter(b, "sample_7_software_counters_user_reads_auto", || {
            black_box(auto.sample().unwrap().get(CpuCounter::TaskClock))
        })
    });
    auto.stop().unwrap();

    // Cycles and instructions, from user space where this machine allows it.
    let config =
        CpuConfig::new(&[CpuCounter::Cycles, CpuCounter::Instructions]).user_reads(UserReads::Auto);
    match CpuProfiler::new(config) {
        Ok(mut hw) => {
            hw.run().unwrap();
            hw.sample().unwrap();
            report_paths("sample_cycles_instructions_user_reads_auto", &hw);
            group.bench_function("sample_cycles_instructions_user_reads_auto", |b| {
                ratios.iter(b, "sample_cycles_instructions_user_reads_auto", || {
                    black_box(hw.sample().unwrap().get(CpuCounter::Cycles))
                })
            });
            group.bench_function("sample_cycles_instructions_with_read", |b| {
                ratios.iter(b, "sample_cycles_instructions_with_read", || {
                    black_box(hw.sample_with_read().unwrap().get(CpuCounter::Cycles))
                })
            });
            hw.stop().unwrap();
        }
        Err(e) => println!(
            "hwcpipe_sample: no hardware counters here ({e}); the user-space path is measured \
             by tests/cpu_user_read.rs in the emulated Arm system"
        ),
    }

    let mut file = single_task_clock_fd();
    let mut buf = [0u8; 8];
    group.bench_function("baseline_raw_read_1_fd", |b| {
        ratios.iter(b, "baseline_raw_read_1_fd", || {
            let n = file.read(&mut buf).unwrap();
            black_box((n, u64::from_ne_bytes(buf)))
        })
    });

    let (mut leader, _members) = software_group();
    let mut record = [0u8; 24 + 7 * 16];
    group.bench_function("reference_raw_group_read_7_fds", |b| {
        ratios.iter(b, "reference_raw_group_read_7_fds", || {
            black_box(leader.read(&mut record).unwrap())
        })
    });
    group.finish();
    ratios.print("hwcpipe_sample", "baseline_raw_read_1_fd", 100);
}

/// Prints how each counter of `profiler` was read at its last sample.
fn report_paths(name: &str, profiler: &CpuProfiler) {
    let paths: Vec<String> = profiler
        .available_counters()
        .iter()
        .map(|&c| format!("{c}: {}", profiler.read_path(c).expect("available")))
        .collect();
    let user = profiler
        .available_counters()
        .iter()
        .any(|&c| profiler.read_path(c).is_some_and(|p| p.is_user_space()));
    let verdict = if user {
        "user-space reads on this machine"
    } else {
        "no user-space read on this machine: every counter falls back to read()"
    };
    println!("hwcpipe_sample/{name}: {verdict} ({})", paths.join("; "));
}

criterion_group!(benches, sample_vs_raw_read);
criterion_main!(benches);
