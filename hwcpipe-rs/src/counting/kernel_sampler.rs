//! [`KernelSampler`]: periodic sampling done by the kernel, for CPU-wide counters. Instead of a thread woken
//! every period to `read()` each group, each group gets a leader of its own, a high-resolution timer
//! (`PERF_COUNT_SW_CPU_CLOCK`) with `sample_period` = the interval, which writes a read of the whole group
//! (`PERF_SAMPLE_READ` with `PERF_FORMAT_GROUP`, stamped `PERF_SAMPLE_TIME` on CLOCK_MONOTONIC_RAW) into
//! the leader's ring buffer at every period. The reader drains the rings in batches, as seldom as the rings'
//! size allows, so the cost of a period is the kernel's timer interrupt and a record's bytes.
//!
//! The records are the ones gatord sends in its PERF_DATA frames, and the events are described the way
//! gatord describes its own (a `perf_event_attr` per counter key, perf ids mapped to keys), so one decoder
//! reads both: [`KernelSampler::events`] and [`KernelSampler::ids`] are what a PERF_ATTRS frame announces,
//! [`KernelSampler::drain`] gives each CPU's records as a PERF_DATA frame carries them.
//!
//! Only CPU-wide targets are sampled this way: a task's timer fires only while the task runs, so its
//! records would come every interval of the task's CPU time, not of the wall clock.
//!
//! Every kernel call goes through a [`PerfSys`] ([`KernelSampler::open_with`]): opening the timers and
//! their members, mapping the rings, the `ioctl`s that start and stop them and the reads after the stop; so
//! the simulated kernel (`cpu::sim`, feature `sim`) drives the sampler as the real one does.

use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::sync::Arc;
use std::time::{Duration, Instant};

use perf_record::{ReadFormat, SampleType};
use rustix::io::Errno;

use crate::cpu::PerfEvent;
use crate::sys::perf_event_attr::{
    flag, PerfEventAttr, CLOCK_MONOTONIC_RAW, PERF_COUNT_SW_CPU_CLOCK, PERF_FORMAT_GROUP,
    PERF_FORMAT_ID, PERF_FORMAT_TOTAL_TIME_ENABLED, PERF_FORMAT_TOTAL_TIME_RUNNING,
    PERF_SAMPLE_IDENTIFIER, PERF_SAMPLE_READ, PERF_SAMPLE_TIME, PERF_TYPE_SOFTWARE,
};
use crate::sys::{LinuxPerf, PerfIoctl, PerfRing, PerfSys, RingError};
use crate::CpuCounter;

/// The key of the timer that leads every group: its own value (the CPU time of the period) is in each
/// record, under this key.
pub const TIMER_KEY: i32 = -1;

/// What each record holds: the id of the writer first (so a reader finds its layout), the time, the group.
const SAMPLE_TYPE: SampleType =
    SampleType(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TIME | PERF_SAMPLE_READ);
/// The read of a group: every member with its id, and the times enabled and running.
const READ_FORMAT: ReadFormat = ReadFormat(
    PERF_FORMAT_GROUP
        | PERF_FORMAT_ID
        | PERF_FORMAT_TOTAL_TIME_ENABLED
        | PERF_FORMAT_TOTAL_TIME_RUNNING,
);

/// How long the rings hold records between two drains: the reader drains at least four times as often.
pub const RING_SPAN: Duration = Duration::from_millis(200);
/// The most data pages of one ring (a ring that cannot hold [`RING_SPAN`] at a short interval is drained
/// more often: see [`KernelSampler::drain_period`]).
const MAX_RING_PAGES: usize = 256;

/// One event of a sampling plan: what `perf_event_open` is given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlannedEvent {
    /// `perf_event_attr.type`.
    pub type_: u32,
    /// `perf_event_attr.config`.
    pub config: u64,
    /// Whether it takes a PMU counter (else it is a software event).
    pub hardware: bool,
}

impl PlannedEvent {
    /// The event of `counter`, or `None` where it cannot be opened on this architecture.
    pub fn of_counter(counter: CpuCounter) -> Option<PlannedEvent> {
        let event: PerfEvent = counter.event();
        let (type_, config) = event.type_and_config()?;
        Some(PlannedEvent {
            type_,
            config,
            hardware: event.is_hardware(),
        })
    }
}

/// One CPU's part of a sampling plan: the counters and events to sample there, each under its key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CpuPlan {
    /// The CPU.
    pub cpu: u32,
    /// The events, each with the key its values are reported under.
    pub counters: Vec<(i32, PlannedEvent)>,
}

/// One group on one CPU: the timer, its members and the ring the timer writes.
#[derive(Debug)]
struct RingGroup {
    cpu: u32,
    leader: OwnedFd,
    /// The timer's perf id.
    leader_id: u64,
    _members: Vec<OwnedFd>,
    ring: PerfRing,
    /// Taken just before the timer's enable and just after its disable: no period of the ring lies
    /// outside.
    enabled: Option<Instant>,
    disabled: Option<Instant>,
}

/// CPU-wide counters sampled by the kernel every interval (see the module documentation).
///
/// Call order: [`open`](Self::open) (or [`open_with`](Self::open_with) a kernel of the caller's) →
/// [`start`](Self::start) → [`drain`](Self::drain) every [`drain_period`](Self::drain_period) or sooner →
/// [`stop`](Self::stop) → a last drain and [`read_groups`](Self::read_groups) for the counts since the last
/// period.
#[derive(Debug)]
pub struct KernelSampler {
    sys: Arc<dyn PerfSys>,
    groups: Vec<RingGroup>,
    events: Vec<(i32, PerfEventAttr)>,
    ids: Vec<(u64, i32)>,
    interval: Duration,
    drain_period: Duration,
}

impl KernelSampler {
    /// Opens, for every CPU of `plan`, its counters in groups (software events together, hardware events in
    /// groups of at most `group_size`, the PMU's size), each led by a timer of period `interval`, and maps
    /// each timer's ring. `exclude_kernel` leaves kernel code out of the counters (never out of the timer,
    /// which would then drop the periods that interrupt the kernel or an idle CPU). Any refusal is the
    /// error: the caller samples another way and says why.
    pub fn open(
        plan: &[CpuPlan],
        interval: Duration,
        exclude_kernel: bool,
        group_size: usize,
    ) -> io::Result<KernelSampler> {
        Self::open_with(
            Arc::new(LinuxPerf),
            plan,
            interval,
            exclude_kernel,
            group_size,
        )
    }

    /// [`open`](Self::open) through `sys`, which every later call of the sampler goes through too (the
    /// simulated kernel, in tests).
    pub fn open_with(
        sys: Arc<dyn PerfSys>,
        plan: &[CpuPlan],
        interval: Duration,
        exclude_kernel: bool,
        group_size: usize,
    ) -> io::Result<KernelSampler> {
        let period = u64::try_from(interval.as_nanos())
            .ok()
            .filter(|&ns| ns > 0)
            .ok_or(Errno::INVAL)?;
        let mut sampler = KernelSampler {
            sys,
            groups: Vec::new(),
            events: Vec::new(),
            ids: Vec::new(),
            interval,
            drain_period: RING_SPAN / 4,
        };
        let timer = timer_attr(period);
        sampler.events.push((TIMER_KEY, timer));
        for cpu_plan in plan {
            let (software, hardware): (Vec<_>, Vec<_>) = cpu_plan
                .counters
                .iter()
                .partition(|(_, event)| !event.hardware);
            let chunks = std::iter::once(software.as_slice())
                .chain(hardware.chunks(group_size.max(1)))
                .filter(|chunk| !chunk.is_empty());
            for chunk in chunks {
                sampler.open_group(cpu_plan.cpu, &timer, chunk, exclude_kernel)?;
            }
        }
        Ok(sampler)
    }

    fn open_group(
        &mut self,
        cpu: u32,
        timer: &PerfEventAttr,
        counters: &[&(i32, PlannedEvent)],
        exclude_kernel: bool,
    ) -> io::Result<()> {
        let cpu_arg = i32::try_from(cpu).map_err(|_| Errno::INVAL)?;
        let sys = &*self.sys;
        let leader = sys.perf_event_open(timer, -1, cpu_arg, None)?;
        let leader_id = sys.ioctl(leader.as_fd(), PerfIoctl::Id)?;
        self.ids.push((leader_id, TIMER_KEY));
        let mut members = Vec::with_capacity(counters.len());
        for &&(key, event) in counters {
            let attr = member_attr(event.type_, event.config, exclude_kernel);
            let fd = sys.perf_event_open(&attr, -1, cpu_arg, Some(leader.as_fd()))?;
            self.ids.push((sys.ioctl(fd.as_fd(), PerfIoctl::Id)?, key));
            if !self.events.iter().any(|(k, _)| *k == key) {
                self.events.push((key, attr));
            }
            members.push(fd);
        }
        let ring = map_ring(sys, &leader, record_bytes(members.len() + 1), self.interval)?;
        // A ring smaller than the span is drained more often: four times per filling.
        let fill = ring_fill_time(
            ring.capacity(),
            record_bytes(members.len() + 1),
            self.interval,
        );
        self.drain_period = self.drain_period.min(fill / 4);
        self.groups.push(RingGroup {
            cpu,
            leader,
            leader_id,
            _members: members,
            ring,
            enabled: None,
            disabled: None,
        });
        Ok(())
    }

    /// Each event key with the `perf_event_attr` it was opened with ([`TIMER_KEY`] for the timers): what
    /// gatord announces in PEA messages.
    pub fn events(&self) -> &[(i32, PerfEventAttr)] {
        &self.events
    }

    /// Every opened event's perf id with its key: what gatord announces in KEYS messages.
    pub fn ids(&self) -> &[(u64, i32)] {
        &self.ids
    }

    /// The sampling interval.
    pub fn interval(&self) -> Duration {
        self.interval
    }

    /// How often [`drain`](Self::drain) must be called so that no ring fills up.
    pub fn drain_period(&self) -> Duration {
        self.drain_period.max(Duration::from_millis(1))
    }

    /// How many rings (groups × CPUs) are sampled: each delivers one record per period.
    pub fn rings(&self) -> usize {
        self.groups.len()
    }

    /// The CPU of each ring, in the order [`drain`](Self::drain) reports them.
    pub fn ring_cpus(&self) -> impl Iterator<Item = u32> + '_ {
        self.groups.iter().map(|g| g.cpu)
    }

    /// The perf id of ring `ring`'s timer: the writer of its records, and the event whose group
    /// [`read_groups`](Self::read_groups) reads. `None` for a ring that does not exist.
    pub fn ring_id(&self, ring: usize) -> Option<u64> {
        self.groups.get(ring).map(|g| g.leader_id)
    }

    /// Resets every group's counts to zero and starts the timers.
    pub fn start(&mut self) -> io::Result<()> {
        for group in &mut self.groups {
            self.sys
                .ioctl(group.leader.as_fd(), PerfIoctl::ResetGroup)?;
            group.enabled = None;
            group.disabled = None;
        }
        for group in &mut self.groups {
            group.enabled = Some(Instant::now());
            self.sys.ioctl(group.leader.as_fd(), PerfIoctl::Enable)?;
        }
        Ok(())
    }

    /// Stops the timers (and so the counters of their groups).
    pub fn stop(&mut self) -> io::Result<()> {
        let mut result = Ok(());
        for group in &mut self.groups {
            if let Err(e) = self.sys.ioctl(group.leader.as_fd(), PerfIoctl::Disable) {
                result = result.and(Err(e));
            }
            group.disabled = group.enabled.map(|_| Instant::now());
        }
        result
    }

    /// When ring `ring`'s timer ran: from an instant taken just before its enable to one taken just after
    /// its disable, so that every period the timer ended lies inside (the rings are started and stopped one
    /// after another, and a thread may be preempted between two). The end is `None` until
    /// [`stop`](Self::stop), both ends before [`start`](Self::start) or for a ring that does not exist.
    pub fn ring_window(&self, ring: usize) -> (Option<Instant>, Option<Instant>) {
        self.groups
            .get(ring)
            .map_or((None, None), |g| (g.enabled, g.disabled))
    }

    /// Calls `each(ring, cpu, words)` with every ring's records written since the last drain, as 8-byte
    /// words (whole records, as a PERF_DATA frame carries them); `ring` numbers the rings in
    /// [`ring_cpus`](Self::ring_cpus) order. `scratch` is reused between calls. A ring whose header is
    /// inconsistent is skipped to its head and its error returned after the others are drained.
    pub fn drain(
        &mut self,
        scratch: &mut Vec<u64>,
        mut each: impl FnMut(usize, u32, &[u64]),
    ) -> Result<(), RingError> {
        let mut first_error = None;
        for (index, group) in self.groups.iter_mut().enumerate() {
            scratch.clear();
            match group.ring.drain(scratch) {
                Ok(0) => {}
                Ok(_) => each(index, group.cpu, scratch),
                Err(e) => {
                    first_error.get_or_insert(e);
                }
            }
        }
        first_error.map_or(Ok(()), Err)
    }

    /// Reads every group with `read()` (best after [`stop`](Self::stop), for the counts since the last
    /// period): `each(ring, cpu, words)` gets the read as `read()` filled it, in the layout of a sample's
    /// READ field (`nr`, `time_enabled`, `time_running`, then `value`, `id` per event, the timer first),
    /// for [`ring_id`](Self::ring_id)'s event. A read that fails or comes short (a CPU gone offline, say)
    /// is skipped and its error returned after the other groups are read.
    pub fn read_groups(&mut self, mut each: impl FnMut(usize, u32, &[u64])) -> io::Result<()> {
        let mut buf = Vec::new();
        let mut words = Vec::new();
        let mut first_error = None;
        for (index, group) in self.groups.iter().enumerate() {
            let members = group._members.len() + 1;
            buf.clear();
            buf.resize(8 * (3 + 2 * members), 0);
            match self.sys.read(group.leader.as_fd(), &mut buf) {
                Ok(n) if n == buf.len() => {}
                Ok(_) => {
                    first_error.get_or_insert(io::Error::from(io::ErrorKind::UnexpectedEof));
                    continue;
                }
                Err(e) => {
                    first_error.get_or_insert(e);
                    continue;
                }
            }
            words.clear();
            words.extend(
                buf.chunks_exact(8)
                    .map(|w| u64::from_ne_bytes(w.try_into().unwrap_or_default())),
            );
            each(index, group.cpu, &words);
        }
        first_error.map_or(Ok(()), Err)
    }
}

/// The timer leading a group: CPU time, sampled every `period` ns, never excluding kernel code.
fn timer_attr(period: u64) -> PerfEventAttr {
    PerfEventAttr {
        sample_period_or_freq: period,
        sample_type: SAMPLE_TYPE,
        read_format: READ_FORMAT,
        flags: flag::DISABLED,
        ..PerfEventAttr::counting(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK)
    }
    .on_clock(CLOCK_MONOTONIC_RAW)
}

/// A counter in a timer's group: counting only; the same record layout so one decoder finds every id.
fn member_attr(type_: u32, config: u64, exclude_kernel: bool) -> PerfEventAttr {
    let mut attr = PerfEventAttr {
        sample_type: SAMPLE_TYPE,
        read_format: READ_FORMAT,
        ..PerfEventAttr::counting(type_, config)
    };
    if exclude_kernel {
        attr.flags |= flag::EXCLUDE_KERNEL | flag::EXCLUDE_HV;
    }
    attr.on_clock(CLOCK_MONOTONIC_RAW)
}

/// The bytes of one sample record of a group of `events`: header, identifier, time, `nr`, the two times,
/// and a value and id per event.
fn record_bytes(events: usize) -> usize {
    8 * (6 + 2 * events)
}

/// How long a ring of `capacity` bytes takes to fill with records of `record` bytes every `interval`.
fn ring_fill_time(capacity: usize, record: usize, interval: Duration) -> Duration {
    let records = u32::try_from(capacity / record.max(1)).unwrap_or(u32::MAX);
    interval.saturating_mul(records)
}

/// Maps the ring of `leader` through `sys`, sized to hold [`RING_SPAN`] of records (a power of two of
/// pages, at most [`MAX_RING_PAGES`]); where the kernel refuses that much locked memory (`EPERM`, `ENOMEM`),
/// half as much, down to one page.
fn map_ring(
    sys: &dyn PerfSys,
    leader: &OwnedFd,
    record: usize,
    interval: Duration,
) -> io::Result<PerfRing> {
    let page = rustix::param::page_size().max(1);
    let per_second = record as f64 * 1e9 / interval.as_nanos().max(1) as f64;
    let wanted = (per_second * RING_SPAN.as_secs_f64() / page as f64).ceil() as usize;
    let mut pages = wanted.clamp(1, MAX_RING_PAGES).next_power_of_two();
    loop {
        match sys.map_ring(leader.as_fd(), pages) {
            Ok(ring) => return Ok(ring),
            Err(e)
                if pages > 1
                    && matches!(Errno::from_io_error(&e), Some(Errno::PERM | Errno::NOMEM)) =>
            {
                pages /= 2;
            }
            Err(e) => return Err(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_of_a_group_is_its_header_id_time_and_read() {
        assert_eq!(record_bytes(3), 8 * 12);
        assert_eq!(
            ring_fill_time(4096 * 8, 96, Duration::from_micros(100)),
            Duration::from_micros(100) * 341
        );
    }

    #[test]
    fn the_timer_counts_the_kernel_and_stamps_the_raw_monotonic_clock() {
        let timer = timer_attr(100_000);
        assert_eq!(timer.sample_period(), Some(100_000));
        assert!(timer.has(flag::DISABLED | flag::USE_CLOCKID));
        assert!(!timer.has(flag::EXCLUDE_KERNEL));
        assert!(timer.on_monotonic_raw());
        assert_eq!(timer.size, crate::sys::perf_event_attr::PERF_ATTR_SIZE_VER3);
        let member = member_attr(0, 1, true);
        assert_eq!(member.sample_period(), None);
        assert!(member.has(flag::EXCLUDE_KERNEL) && member.on_monotonic_raw());
        assert!(!member.has(flag::DISABLED), "members follow their leader");
    }

    #[test]
    fn a_zero_interval_is_refused() {
        let err = KernelSampler::open(&[], Duration::ZERO, false, 6).unwrap_err();
        assert_eq!(err.raw_os_error(), Some(Errno::INVAL.raw_os_error()));
    }
}
