//! The simulated kernel's sampling events: their rings, and the records it writes into them as the kernel
//! does (Linux `kernel/events/core.c` and `ring_buffer.c`).
//!
//! - A period of a sampling event ([`FakePerf::fire_timers`]): the event overflows and writes a
//!   PERF_RECORD_SAMPLE laid out by its `sample_type`, its READ field a read of its group by its
//!   `read_format` (the leader first, then the members by id, as `read()` gives them). Times are now on
//!   CLOCK_MONOTONIC_RAW, the fake's only clock.
//! - A record that does not fit in the space the reader has released is not written; the ring counts it
//!   lost, and the next record that fits is preceded by a PERF_RECORD_LOST (`id`, `lost`) in the same
//!   reservation — if both do not fit, that record is lost too.
//! - Throttling ([`FakePerf::throttle`], [`FakePerf::unthrottle`]): PERF_RECORD_THROTTLE, then no samples
//!   and (as on Linux 6.16 and later) no counts of its group until PERF_RECORD_UNTHROTTLE; both carry the
//!   time, the event's id and its own id (`stream_id`).
//!
//! None of the fake's events sets `sample_id_all`, so no record carries the sample id fields after its own.

use std::io;
use std::os::fd::RawFd;

use perf_record::{LostRecord, ReadValue, SampleLayout, SampleRecord, ThrottleRecord, WordSlice};
use rustix::io::Errno;

use super::{errno, FakePerf, State};
use crate::sys::perf_ring::RingMemory;
use crate::sys::{monotonic_raw_ns, PerfRing};

/// One mapped ring of the simulated kernel.
#[derive(Debug)]
pub(super) struct Ring {
    memory: RingMemory,
    data_pages: usize,
    /// Records not written since the last PERF_RECORD_LOST that was.
    lost: u64,
    /// Whether its event is throttled.
    throttled: bool,
}

impl Ring {
    /// Writes `record` of the event with perf id `id`, after a PERF_RECORD_LOST of the records lost
    /// before it; or, where they do not fit, counts it lost.
    fn write(&mut self, id: u64, record: &[u64]) {
        let mut words = Vec::with_capacity(3 + record.len());
        if self.lost > 0 {
            LostRecord {
                id,
                lost: self.lost,
            }
            .encode_words(&mut words);
        }
        words.extend_from_slice(record);
        if self.memory.write(&words) {
            self.lost = 0;
        } else {
            self.lost += 1;
        }
    }
}

impl State {
    /// `mmap` of the ring of event `fd`: a power of two of data pages, at most
    /// [`Faults::ring_page_limit`](super::Faults::ring_page_limit).
    pub(super) fn map_ring(&mut self, fd: RawFd, data_pages: usize) -> io::Result<PerfRing> {
        if !self.events.contains_key(&fd) {
            return Err(Errno::BADF.into());
        }
        if !data_pages.is_power_of_two() {
            return Err(Errno::INVAL.into());
        }
        if self
            .faults
            .ring_page_limit
            .is_some_and(|limit| data_pages > limit)
        {
            return Err(errno(Errno::PERM.raw_os_error()));
        }
        match self.rings.get(&fd) {
            // A second mapping of the same size shares the ring, as the kernel's does.
            Some(ring) if ring.data_pages == data_pages => Ok(ring.memory.reader()),
            Some(_) => Err(Errno::INVAL.into()),
            None => {
                let memory = RingMemory::new(data_pages, rustix::param::page_size());
                let reader = memory.reader();
                self.rings.insert(
                    fd,
                    Ring {
                        memory,
                        data_pages,
                        lost: 0,
                        throttled: false,
                    },
                );
                Ok(reader)
            }
        }
    }

    /// The enabled sampling leaders (a sample period set) on online CPUs, by descriptor, in order.
    fn sampling_leaders(&self) -> Vec<RawFd> {
        let mut leaders: Vec<RawFd> = self
            .events
            .iter()
            .filter(|(_, (e, _))| {
                e.leader.is_none()
                    && e.enabled
                    && e.attr.samples()
                    && !self.faults.offline_cpus.contains(&e.cpu)
            })
            .map(|(&fd, _)| fd)
            .collect();
        leaders.sort_unstable();
        leaders
    }

    /// One period of the sampling leader `fd`: its group counts, and it writes its sample into its ring.
    fn fire(&mut self, fd: RawFd, now: u64, per_event: &impl Fn(u32, u64) -> u64) {
        if self.rings.get(&fd).is_some_and(|r| r.throttled) {
            return;
        }
        let Some((leader, _)) = self.events.get(&fd) else {
            return;
        };
        let period = leader.attr.sample_period_or_freq;
        for (&member_fd, (event, _)) in self.events.iter_mut() {
            if member_fd == fd {
                event.count += period;
            } else if event.leader == Some(fd) && event.enabled {
                event.count += per_event(event.attr.kind, event.attr.config);
            } else {
                continue;
            }
            event.time_enabled += period;
            event.time_running += period;
        }
        let Some((leader, _)) = self.events.get(&fd) else {
            return;
        };
        let mut members: Vec<&super::Event> = self
            .events
            .values()
            .map(|(e, _)| e)
            .filter(|e| e.leader == Some(fd))
            .collect();
        members.sort_by_key(|e| e.id);
        let values: Vec<ReadValue> = std::iter::once(leader)
            .chain(members)
            .map(|e| ReadValue {
                value: e.count,
                id: Some(e.id),
                lost: None,
            })
            .collect();
        let layout = SampleLayout {
            sample_type: leader.attr.sample_type,
            read_format: leader.attr.read_format,
        };
        let mut record = Vec::new();
        SampleRecord {
            identifier: Some(leader.id),
            ip: None,
            pid_tid: None,
            time: Some(now),
            addr: None,
            id: Some(leader.id),
            stream_id: Some(leader.id),
            cpu: u32::try_from(leader.cpu).ok(),
            period: Some(period),
            read: None,
            tail: WordSlice::default(),
        }
        .encode_words(
            layout,
            leader.time_enabled,
            leader.time_running,
            &values,
            &mut record,
        );
        let id = leader.id;
        if let Some(ring) = self.rings.get_mut(&fd) {
            ring.write(id, &record);
        }
    }

    /// Throttles (or unthrottles) the sampling leaders on `cpu` that are not (or are), writing the record
    /// that says so.
    fn set_throttled(&mut self, cpu: i32, throttled: bool) {
        let now = monotonic_raw_ns();
        for fd in self.sampling_leaders() {
            let Some((event, _)) = self.events.get(&fd) else {
                continue;
            };
            if event.cpu != cpu {
                continue;
            }
            let id = event.id;
            let Some(ring) = self.rings.get_mut(&fd) else {
                continue;
            };
            if ring.throttled == throttled {
                continue;
            }
            ring.throttled = throttled;
            let record = ThrottleRecord {
                time: now,
                id,
                stream_id: id,
            };
            let mut words = Vec::new();
            if throttled {
                record.encode_throttle(&mut words);
            } else {
                record.encode_unthrottle(&mut words);
            }
            ring.write(id, &words);
        }
    }
}

impl FakePerf {
    /// Lets one period of every sampling event elapse: each enabled sampling leader (a `sample_period`
    /// set, its CPU online, not throttled) counts its period (a CPU clock counts nanoseconds), its enabled
    /// members `per_event(type, config)` more each, the group's enabled and running times grow by the
    /// period, and the leader writes a PERF_RECORD_SAMPLE of its group into its ring (see the module
    /// documentation for a full ring).
    pub fn fire_timers(&self, per_event: impl Fn(u32, u64) -> u64) {
        let mut s = self.state.lock().unwrap();
        let now = monotonic_raw_ns();
        for fd in s.sampling_leaders() {
            s.fire(fd, now, &per_event);
        }
    }

    /// Throttles the sampling events on `cpu`, as the kernel does one that interrupts more often than
    /// `perf_event_max_sample_rate` allows per tick: each writes PERF_RECORD_THROTTLE now, then no samples
    /// and no counts of its group until [`FakePerf::unthrottle`].
    pub fn throttle(&self, cpu: i32) {
        self.state.lock().unwrap().set_throttled(cpu, true);
    }

    /// Lets the throttled sampling events on `cpu` sample again (the kernel does so at a later tick): each
    /// writes PERF_RECORD_UNTHROTTLE now.
    pub fn unthrottle(&self, cpu: i32) {
        self.state.lock().unwrap().set_throttled(cpu, false);
    }

    /// Records lost so far and not yet announced by a PERF_RECORD_LOST, summed over the rings.
    pub fn unannounced_lost(&self) -> u64 {
        self.state
            .lock()
            .unwrap()
            .rings
            .values()
            .map(|r| r.lost)
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sys::perf_event_attr::{flag, PERF_COUNT_SW_CPU_CLOCK, PERF_TYPE_SOFTWARE};
    use crate::sys::{PerfEventAttr, PerfIoctl, PerfSys};
    use perf_record::{
        PerfRecords, ReadFormat, ReadValues, SampleType, TypedRecord, CLOCK_MONOTONIC_RAW,
        PERF_RECORD_LOST,
    };
    use std::os::fd::{AsFd, OwnedFd};

    const FORMAT: ReadFormat = ReadFormat(0xf);
    const LAYOUT: SampleLayout = SampleLayout {
        sample_type: SampleType(SampleType::IDENTIFIER | SampleType::TIME | SampleType::READ),
        read_format: FORMAT,
    };

    /// A CPU clock timer of 1 ms on `cpu` leading a counter of config 7, with a ring of one page.
    fn timer(fake: &FakePerf, cpu: i32) -> (OwnedFd, OwnedFd, PerfRing) {
        let leader_attr = PerfEventAttr {
            sample_period_or_freq: 1_000_000,
            sample_type: LAYOUT.sample_type,
            read_format: FORMAT,
            flags: flag::DISABLED,
            ..PerfEventAttr::counting(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK)
        }
        .on_clock(CLOCK_MONOTONIC_RAW);
        let leader = fake.perf_event_open(&leader_attr, -1, cpu, None).unwrap();
        let member_attr = PerfEventAttr {
            read_format: FORMAT,
            ..PerfEventAttr::counting(PERF_TYPE_SOFTWARE, 7)
        }
        .on_clock(CLOCK_MONOTONIC_RAW);
        let member = fake
            .perf_event_open(&member_attr, -1, cpu, Some(leader.as_fd()))
            .unwrap();
        let ring = fake.map_ring(leader.as_fd(), 1).unwrap();
        (leader, member, ring)
    }

    #[test]
    fn each_period_writes_a_sample_of_the_group_into_the_leaders_ring() {
        let fake = FakePerf::new(0);
        let (leader, _member, mut ring) = timer(&fake, 2);
        fake.fire_timers(|_, _| 5);
        let mut words = Vec::new();
        assert_eq!(ring.drain(&mut words).unwrap(), 0, "disabled: no sample");
        fake.ioctl(leader.as_fd(), PerfIoctl::Enable).unwrap();
        let before = monotonic_raw_ns();
        fake.fire_timers(|_, config| config * 10);
        fake.fire_timers(|_, config| config * 10);
        ring.drain(&mut words).unwrap();
        let samples: Vec<SampleRecord<'_>> = PerfRecords::raw(&words)
            .map(|r| SampleRecord::parse(&r.unwrap(), LAYOUT).unwrap())
            .collect();
        assert_eq!(samples.len(), 2);
        let leader_id = fake.ioctl(leader.as_fd(), PerfIoctl::Id).unwrap();
        let last = samples[1];
        assert_eq!(last.identifier, Some(leader_id));
        assert!(last.time.unwrap() >= before);
        let values: Vec<(u64, Option<u64>)> = last
            .read
            .unwrap()
            .values()
            .map(|v| (v.value, v.id))
            .collect();
        assert_eq!(
            values,
            [(2_000_000, Some(leader_id)), (140, Some(leader_id + 1))]
        );
        let ReadValues::Group { time_enabled, .. } = last.read.unwrap() else {
            panic!("a group read");
        };
        assert_eq!(time_enabled, Some(2_000_000));
    }

    #[test]
    fn a_full_ring_loses_records_and_says_how_many_before_the_next() {
        let fake = FakePerf::new(0);
        let (leader, _member, mut ring) = timer(&fake, 0);
        fake.ioctl(leader.as_fd(), PerfIoctl::Enable).unwrap();
        // A record is 10 words; a page holds 51 of them.
        let capacity = ring.capacity() / 80;
        for _ in 0..capacity + 3 {
            fake.fire_timers(|_, _| 1);
        }
        assert_eq!(fake.unannounced_lost(), 3);
        let mut words = Vec::new();
        ring.drain(&mut words).unwrap();
        assert_eq!(PerfRecords::raw(&words).count(), capacity);
        fake.fire_timers(|_, _| 1);
        words.clear();
        ring.drain(&mut words).unwrap();
        let typed: Vec<_> = PerfRecords::raw(&words)
            .typed()
            .map(Result::unwrap)
            .collect();
        let leader_id = fake.ioctl(leader.as_fd(), PerfIoctl::Id).unwrap();
        assert_eq!(
            typed[0],
            TypedRecord::Lost(LostRecord {
                id: leader_id,
                lost: 3
            })
        );
        assert!(matches!(typed[1], TypedRecord::Sample(_)));
        assert_eq!(fake.unannounced_lost(), 0);
        assert_eq!(words[0] as u32, PERF_RECORD_LOST);
    }

    #[test]
    fn a_throttled_timer_says_so_and_samples_nothing_until_unthrottled() {
        let fake = FakePerf::new(0);
        let (leader, _member, mut ring) = timer(&fake, 1);
        let (other, _other_member, mut other_ring) = timer(&fake, 3);
        for fd in [&leader, &other] {
            fake.ioctl(fd.as_fd(), PerfIoctl::Enable).unwrap();
        }
        fake.throttle(1);
        fake.throttle(1);
        fake.fire_timers(|_, _| 1);
        fake.unthrottle(1);
        fake.fire_timers(|_, _| 1);
        let mut words = Vec::new();
        ring.drain(&mut words).unwrap();
        let kinds: Vec<&str> = PerfRecords::raw(&words)
            .typed()
            .map(|r| match r.unwrap() {
                TypedRecord::Throttle(_) => "throttle",
                TypedRecord::Unthrottle(_) => "unthrottle",
                TypedRecord::Sample(_) => "sample",
                _ => "other",
            })
            .collect();
        assert_eq!(kinds, ["throttle", "unthrottle", "sample"]);
        words.clear();
        other_ring.drain(&mut words).unwrap();
        assert_eq!(
            PerfRecords::raw(&words).count(),
            2,
            "CPU 3 was not throttled"
        );
    }

    #[test]
    fn an_offline_cpu_refuses_opens_and_its_timers_go_quiet() {
        let fake = FakePerf::new(0);
        let (leader, _member, mut ring) = timer(&fake, 1);
        fake.ioctl(leader.as_fd(), PerfIoctl::Enable).unwrap();
        fake.faults(|f| f.offline_cpus = vec![1]);
        fake.fire_timers(|_, _| 1);
        let mut words = Vec::new();
        assert_eq!(ring.drain(&mut words).unwrap(), 0);
        let attr = PerfEventAttr {
            read_format: FORMAT,
            ..PerfEventAttr::counting(PERF_TYPE_SOFTWARE, 1)
        };
        let err = fake.perf_event_open(&attr, -1, 1, None).unwrap_err();
        assert_eq!(err.raw_os_error(), Some(Errno::NODEV.raw_os_error()));
        assert!(fake.perf_event_open(&attr, -1, 0, None).is_ok());
    }

    #[test]
    fn rings_are_mapped_as_the_kernel_maps_them() {
        let fake = FakePerf::new(0);
        let attr = PerfEventAttr {
            read_format: FORMAT,
            flags: flag::DISABLED,
            ..PerfEventAttr::counting(PERF_TYPE_SOFTWARE, 0)
        };
        let fd = fake.perf_event_open(&attr, -1, 0, None).unwrap();
        let err = |r: io::Result<PerfRing>| r.unwrap_err().raw_os_error();
        assert_eq!(
            err(fake.map_ring(fd.as_fd(), 3)),
            Some(Errno::INVAL.raw_os_error())
        );
        fake.faults(|f| f.ring_page_limit = Some(2));
        assert_eq!(
            err(fake.map_ring(fd.as_fd(), 4)),
            Some(Errno::PERM.raw_os_error())
        );
        let ring = fake.map_ring(fd.as_fd(), 2).unwrap();
        assert_eq!(ring.capacity(), 2 * rustix::param::page_size());
        assert!(fake.map_ring(fd.as_fd(), 2).is_ok(), "the same ring again");
        assert_eq!(
            err(fake.map_ring(fd.as_fd(), 1)),
            Some(Errno::INVAL.raw_os_error())
        );
        let stranger = OwnedFd::from(std::fs::File::open("/dev/null").unwrap());
        assert_eq!(
            err(fake.map_ring(stranger.as_fd(), 1)),
            Some(Errno::BADF.raw_os_error())
        );
    }
}
