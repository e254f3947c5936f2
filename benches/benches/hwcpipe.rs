//! `HwcPipe::sample()` latency for the seven Linux software counters in one perf group, against
//! the floor it cannot beat: one raw `read()` of a single perf event descriptor, measured in the
//! same run; a raw `read()` of the same seven events as one group shows how much of the gap is the
//! kernel's. All read the running kernel's counters of this thread (no recorded data involved).

use lizard_benches::Ratios;
use std::fs::File;
use std::hint::black_box;
use std::io::Read;
use std::os::fd::{AsFd, OwnedFd};

use criterion::{criterion_group, criterion_main, Criterion};
use hwcpipe::sys::perf_event_attr::{
    PERF_FORMAT_GROUP, PERF_FORMAT_ID, PERF_FORMAT_TOTAL_TIME_ENABLED,
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
        attr.read_format = PERF_FORMAT_GROUP
            | PERF_FORMAT_TOTAL_TIME_ENABLED
            | PERF_FORMAT_TOTAL_TIME_RUNNING
            | PERF_FORMAT_ID;
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

criterion_group!(benches, sample_vs_raw_read);
criterion_main!(benches);
