//! A group of perf events scheduled onto the PMU together: its members, how one sample reads them (one
//! `read()` of the leader, or member by member from user space) and how an interval is committed into a
//! sample (deltas, multiplex scaling, totals).
//!
//! Scaling follows perf: a group that was on the PMU for `running` of the `reference` nanoseconds has its
//! changes scaled by `reference / running`. The reference is the time the group was enabled — except for
//! the Arm PMU event groups of a task on a system with several core types, where an event of one core type
//! can only count while the task runs on those cores: there the reference is the time the task spent on
//! them, which the PMU's first group gives, opened pinned (never multiplexed out while it can count).

use std::os::fd::{AsFd, OwnedFd};

use super::counter::CpuCounter;
use super::error::CpuError;
use super::group_read::GroupRecord;
use super::sample::{CpuReading, CpuSample, PartValues};
use super::scaling::Interval;
use super::user_read::{count, times, ReadPath, SyscallReason, PAGE_READ_ROUNDS};
use crate::sys::perf_page::{current_thread_id, PerfPage, UserAccess};
use crate::sys::PerfSys;

/// The mapped pages of a group read from user space when the kernel allows it.
#[derive(Debug)]
pub(super) struct UserPages {
    /// One per member, leader first.
    pub(super) pages: Vec<PerfPage>,
    /// The thread whose counters these are (the one that opened them).
    pub(super) owner: i32,
}

/// Why a group was not read from user space at a sample: the member that could not be (`None`: the
/// group as a whole) and why.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct UserMiss {
    pub(super) member: Option<u32>,
    pub(super) reason: SyscallReason,
}

impl UserMiss {
    pub(super) fn group(reason: SyscallReason) -> Self {
        UserMiss {
            member: None,
            reason,
        }
    }

    pub(super) fn member(i: usize, reason: SyscallReason) -> Self {
        UserMiss {
            member: u32::try_from(i).ok(),
            reason,
        }
    }
}

/// What a member's value is: one of the HWCPipe counters, or one event on one PMU (a part, by its
/// position in the profiler's parts). A group holds counters only or parts only.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Key {
    Counter(CpuCounter),
    Part(u32),
}

/// The running totals since `run()`: one per counter, one per event part; and each PMU's time on its
/// cores in the current sample, which its pinned group records ([`Reference`]). The counters' come first,
/// at the struct's own address, so that the hot path of a sample reaches them as directly as an array.
#[derive(Clone, Debug)]
#[repr(C)]
pub(super) struct Totals {
    pub(super) counters: [u64; CpuCounter::COUNT],
    pub(super) parts: Vec<u64>,
    pub(super) on_pmu: Vec<u64>,
}

impl Totals {
    pub(super) fn new(parts: usize, pmus: usize) -> Self {
        Totals {
            counters: [0; CpuCounter::COUNT],
            parts: vec![0; parts],
            on_pmu: vec![0; pmus],
        }
    }

    pub(super) fn reset(&mut self) {
        self.counters = [0; CpuCounter::COUNT];
        self.parts.fill(0);
    }
}

/// Where a group's scaling reference comes from (see the module documentation).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Reference {
    /// The group's enabled time, as perf scales.
    Enabled,
    /// The pinned group of PMU `pmu`: its running time is the reference of the PMU's groups.
    Pinned(usize),
    /// A later group of PMU `pmu`: scaled against the time the pinned group ran in the same sample.
    OnPmu(usize),
}

/// One counter of a group, with what a sample needs of it in one place.
#[derive(Clone, Copy, Debug)]
pub(super) struct Member {
    /// The counter; in a group of Arm PMU events (whose parts are the group's `parts`), the placeholder
    /// [`CpuCounter::Cycles`], never read.
    pub(super) counter: CpuCounter,
    /// The raw count at the previous sample (or at `run()`).
    pub(super) prev_raw: u64,
    /// This sample's raw count, whichever way it was read (scratch).
    pub(super) value: u64,
    /// How it was read at the last sample.
    pub(super) path: ReadPath,
}

/// Events scheduled onto the PMU together, read with one `read()` of the leader (`fds[0]`), or
/// member by member from user space.
#[derive(Debug)]
pub(super) struct Group {
    pub(super) fds: Vec<OwnedFd>,
    pub(super) ids: Vec<u64>,
    /// One per event, leader first, as `fds` and `ids`.
    pub(super) members: Vec<Member>,
    pub(super) prev_enabled: u64,
    pub(super) prev_running: u64,
    pub(super) buf: Vec<u8>,
    /// Why the group is never read from user space, when it has no pages.
    pub(super) no_user_reason: SyscallReason,
    pub(super) user: Option<UserPages>,
    /// Where its scaling reference comes from.
    pub(super) reference: Reference,
    /// For a group of Arm PMU events, each member's part (by position among the profiler's parts); empty
    /// for a group of counters.
    pub(super) parts: Vec<u32>,
    /// How every member was read at the last sample, when they were all read the same way (from user
    /// space); `None` when each member's own `path` says.
    pub(super) all_read: Option<ReadPath>,
}

impl Group {
    pub(super) fn new(user: Result<i32, SyscallReason>) -> Self {
        let (user, no_user_reason) = match user {
            Ok(owner) => (
                Some(UserPages {
                    pages: Vec::new(),
                    owner,
                }),
                SyscallReason::NotSampledYet,
            ),
            Err(reason) => (None, reason),
        };
        Group {
            fds: Vec::new(),
            ids: Vec::new(),
            members: Vec::new(),
            prev_enabled: 0,
            prev_running: 0,
            buf: Vec::new(),
            no_user_reason,
            user,
            reference: Reference::Enabled,
            parts: Vec::new(),
            all_read: None,
        }
    }

    /// How member `member` was read at the last sample.
    pub(super) fn path_of(&self, member: &Member) -> ReadPath {
        self.all_read.unwrap_or(member.path)
    }

    /// Whether this is a group of Arm PMU events.
    pub(super) fn has_events(&self) -> bool {
        !self.parts.is_empty()
    }

    /// Whether `counter` is one of the group's counters.
    pub(super) fn has_counter(&self, counter: CpuCounter) -> bool {
        self.parts.is_empty() && self.members.iter().any(|m| m.counter == counter)
    }

    /// Adds a member just opened (its descriptor, id and page) under `key`.
    pub(super) fn add(&mut self, key: Key, (fd, id, page): super::opener::Opened) {
        self.fds.push(fd);
        let counter = match key {
            Key::Counter(counter) => counter,
            Key::Part(part) => {
                self.parts.push(part);
                CpuCounter::Cycles
            }
        };
        self.members.push(Member {
            counter,
            prev_raw: 0,
            value: 0,
            path: ReadPath::Syscall(self.no_user_reason),
        });
        self.ids.push(id);
        match page {
            Some(Ok(page)) => {
                if let Some(user) = &mut self.user {
                    user.pages.push(page);
                }
            }
            Some(Err(reason)) => {
                self.user = None;
                self.no_user_reason = reason;
            }
            None => {}
        }
    }
}

impl Reference {
    /// The reference of an interval: the enabled time, or the time on the PMU (recorded in `on_pmu` by
    /// the PMU's pinned group, which is read first in every sample).
    fn of(self, enabled: u64, running: u64, on_pmu: &mut [u64]) -> u64 {
        match self {
            Reference::Enabled => enabled,
            Reference::Pinned(pmu) => {
                if let Some(slot) = on_pmu.get_mut(pmu) {
                    *slot = running;
                }
                running
            }
            Reference::OnPmu(pmu) => on_pmu.get(pmu).copied().unwrap_or(enabled),
        }
    }
}

impl Group {
    /// Reads every member from user space and records the interval of each into `sample`; on
    /// failure nothing but the members' scratch `value` has changed, and the error names the
    /// member that could not be read (`None`: the group as a whole) and why. This is the hot path of a sample: plain loops over slices
    /// of one length, no call, in line in the profiler's loop over the groups.
    /// `EVENTS`: whether this is a group of Arm PMU events (else of counters, the hot path, which then
    /// carries nothing of events).
    #[inline(always)]
    pub(super) fn sample_user<const EVENTS: bool>(
        &mut self,
        totals: &mut Totals,
        sample: &mut CpuSample,
    ) -> Result<(), UserMiss> {
        let Some(user) = &self.user else {
            return Err(UserMiss::group(self.no_user_reason));
        };
        if current_thread_id() != user.owner {
            return Err(UserMiss::group(SyscallReason::OtherThread));
        }
        // One page per member, in the same order: slices of one length, so that indexing them
        // below needs no bounds check.
        let pages = user.pages.as_slice();
        let n = pages.len();
        let Some(members) = self.members.get_mut(..n) else {
            return Err(UserMiss::group(SyscallReason::NotSampledYet));
        };
        if n == 0 {
            return Err(UserMiss::group(SyscallReason::NotSampledYet));
        }
        // The leader, with the clock: its times are the group's, as in a group `read()`.
        let (read, time) = pages[0]
            .read_user::<true>(PAGE_READ_ROUNDS)
            .map_err(|_| UserMiss::member(0, SyscallReason::PageBusy))?;
        let value = count(&read).map_err(|r| UserMiss::member(0, r))?;
        // The leader's counter was read: the others need no second look at the CPU's permission.
        let access =
            UserAccess::shown_by(&read).ok_or(UserMiss::member(0, SyscallReason::NoUserAccess))?;
        let (now_enabled, now_running) =
            times(&read, time.as_ref()).map_err(|r| UserMiss::member(0, r))?;
        if value < members[0].prev_raw
            || now_enabled < self.prev_enabled
            || now_running < self.prev_running
        {
            return Err(UserMiss::member(0, SyscallReason::Implausible));
        }
        members[0].value = value;
        // The other members: each value read and checked before anything is changed.
        for i in 1..n {
            let (read, _) = pages[i]
                .read_user_granted::<false>(PAGE_READ_ROUNDS, access)
                .map_err(|_| UserMiss::member(i, SyscallReason::PageBusy))?;
            let value = count(&read).map_err(|r| UserMiss::member(i, r))?;
            if value < members[i].prev_raw {
                return Err(UserMiss::member(i, SyscallReason::Implausible));
            }
            members[i].value = value;
        }
        // Every value read and checked: commit.
        let enabled = now_enabled - self.prev_enabled;
        let running = now_running - self.prev_running;
        if !EVENTS {
            // A group of counters, scaled against its enabled time as perf scales: the hot path.
            if running < enabled {
                commit_scaled(
                    members,
                    &mut totals.counters,
                    sample,
                    enabled,
                    running,
                    Some(ReadPath::UserSpace),
                );
            } else {
                commit::<false>(
                    members,
                    &mut totals.counters,
                    sample,
                    enabled,
                    running,
                    Some(ReadPath::UserSpace),
                );
            }
        } else {
            commit_events(
                self.reference,
                members,
                &self.parts,
                totals,
                sample,
                (enabled, running),
                Some(ReadPath::UserSpace),
            );
        }
        self.prev_enabled = now_enabled;
        self.prev_running = now_running;
        self.all_read = Some(ReadPath::UserSpace);
        Ok(())
    }

    /// Reads the group into `buf` and checks the record: its size, its member count, its ids. A pinned group
    /// the kernel could not put on its PMU reads end-of-file: [`CpuError::PinnedGroupOff`].
    pub(super) fn read<'b>(
        sys: &dyn PerfSys,
        leader: &OwnedFd,
        buf: &'b mut [u8],
        ids: &[u64],
        pinned: Option<usize>,
    ) -> Result<GroupRecord<'b>, CpuError> {
        let expected = buf.len();
        let got = sys.read(leader.as_fd(), buf).map_err(CpuError::Read)?;
        if let (0, Some(pmu)) = (got, pinned) {
            return Err(CpuError::PinnedGroupOff { pmu });
        }
        if got < expected {
            return Err(CpuError::ShortRead { expected, got });
        }
        let record = GroupRecord::parse(&buf[..got], ids.len())?;
        for (position, ((_, found), &expected)) in record.entries().zip(ids).enumerate() {
            if found != expected {
                return Err(CpuError::UnexpectedEventId {
                    position,
                    expected,
                    found,
                });
            }
        }
        Ok(record)
    }

    /// Takes the current values as the starting point of the next interval.
    pub(super) fn baseline(&mut self, sys: &dyn PerfSys) -> Result<(), CpuError> {
        let pinned = self.pinned();
        let record = Self::read(sys, &self.fds[0], &mut self.buf, &self.ids, pinned)?;
        for (member, (value, _)) in self.members.iter_mut().zip(record.entries()) {
            member.prev_raw = value;
        }
        self.prev_enabled = record.time_enabled;
        self.prev_running = record.time_running;
        Ok(())
    }

    /// Reads the group with `read()` and records the interval of each member into `sample`;
    /// `miss` says why it was not read from user space.
    /// The PMU of a pinned group.
    fn pinned(&self) -> Option<usize> {
        match self.reference {
            Reference::Pinned(pmu) => Some(pmu),
            _ => None,
        }
    }

    /// `EVENTS` as for [`sample_user`](Self::sample_user).
    pub(super) fn sample_with_read<const EVENTS: bool>(
        &mut self,
        sys: &dyn PerfSys,
        totals: &mut Totals,
        sample: &mut CpuSample,
        miss: UserMiss,
    ) -> Result<(), CpuError> {
        self.all_read = None;
        for (i, member) in self.members.iter_mut().enumerate() {
            member.path = ReadPath::Syscall(match miss.member {
                Some(f) if f as usize != i => SyscallReason::GroupMember,
                _ => miss.reason,
            });
        }
        let pinned = self.pinned();
        let record = Self::read(sys, &self.fds[0], &mut self.buf, &self.ids, pinned)?;
        for ((value, _), member) in record.entries().zip(self.members.iter_mut()) {
            member.value = value;
        }
        let (time_enabled, time_running) = (record.time_enabled, record.time_running);
        let enabled = since("time_enabled", self.prev_enabled, time_enabled)?;
        let running = since("time_running", self.prev_running, time_running)?;
        for member in &self.members {
            if member.value < member.prev_raw {
                return Err(CpuError::WentBackwards {
                    what: match EVENTS {
                        false => member.counter.name(),
                        true => "an Arm PMU event",
                    },
                    previous: member.prev_raw,
                    current: member.value,
                });
            }
        }
        // Every value checked: commit the interval.
        if !EVENTS {
            if running < enabled {
                commit_scaled(
                    &mut self.members,
                    &mut totals.counters,
                    sample,
                    enabled,
                    running,
                    None,
                );
            } else {
                commit::<false>(
                    &mut self.members,
                    &mut totals.counters,
                    sample,
                    enabled,
                    running,
                    None,
                );
            }
        } else {
            commit_events(
                self.reference,
                &mut self.members,
                &self.parts,
                totals,
                sample,
                (enabled, running),
                None,
            );
        }
        self.prev_enabled = time_enabled;
        self.prev_running = time_running;
        Ok(())
    }
}

/// Commits one interval of a group of counters whose values are all read and checked: each member's change
/// since the previous sample (`value − prev_raw`, scaled by `enabled / running` when `SCALED`: the group was
/// multiplexed) is added to its total and recorded into `sample`, and `value` becomes the previous value.
/// `path`, when given, is how every member was read; otherwise each member's own `path` is reported.
/// Generic so that the common case carries no scaling at all.
#[inline(always)]
pub(super) fn commit<const SCALED: bool>(
    members: &mut [Member],
    totals: &mut [u64; CpuCounter::COUNT],
    sample: &mut CpuSample,
    enabled: u64,
    running: u64,
    path: Option<ReadPath>,
) {
    for member in members {
        let raw = member.value - member.prev_raw;
        member.prev_raw = member.value;
        let delta = if SCALED {
            Interval {
                raw,
                enabled,
                running,
            }
            .scaled()
        } else {
            raw
        };
        let total = &mut totals[member.counter.index()];
        *total = total.saturating_add(delta);
        sample.record(CpuReading {
            counter: member.counter,
            delta,
            total: *total,
            raw_delta: raw,
            time_enabled: enabled,
            time_running: running,
            path: path.unwrap_or(member.path),
        });
    }
}

/// [`commit`] of a multiplexed group, out of line: it divides, and it is the rare case.
#[cold]
#[inline(never)]
pub(super) fn commit_scaled(
    members: &mut [Member],
    totals: &mut [u64; CpuCounter::COUNT],
    sample: &mut CpuSample,
    enabled: u64,
    running: u64,
    path: Option<ReadPath>,
) {
    commit::<true>(members, totals, sample, enabled, running, path);
}

/// Commits one interval of a group of Arm PMU events (member `i` is part `parts[i]`), out of line: scaled by
/// `reference / running` where the group ran for less than its reference (its enabled time, or the time on
/// its PMU: [`Reference`]).
#[inline(never)]
fn commit_events(
    reference: Reference,
    members: &mut [Member],
    parts: &[u32],
    totals: &mut Totals,
    sample: &mut CpuSample,
    (enabled, running): (u64, u64),
    path: Option<ReadPath>,
) {
    let reference = reference.of(enabled, running, &mut totals.on_pmu);
    for (member, &part) in members.iter_mut().zip(parts) {
        let raw = member.value - member.prev_raw;
        member.prev_raw = member.value;
        let delta = Interval {
            raw,
            enabled: reference,
            running,
        }
        .scaled();
        let part = part as usize;
        let Some(total) = totals.parts.get_mut(part) else {
            continue;
        };
        *total = total.saturating_add(delta);
        let total = *total;
        sample.record_part(
            part,
            PartValues {
                delta,
                total,
                raw_delta: raw,
                time_enabled: enabled,
                time_running: running,
                time_on_pmu: reference,
                path: path.unwrap_or(member.path),
            },
        );
    }
}

/// `current - previous`, or a typed error when the kernel's value went backwards.
pub(super) fn since(what: &'static str, previous: u64, current: u64) -> Result<u64, CpuError> {
    current
        .checked_sub(previous)
        .ok_or(CpuError::WentBackwards {
            what,
            previous,
            current,
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn member(counter: CpuCounter, prev_raw: u64, value: u64) -> Member {
        Member {
            counter,
            prev_raw,
            value,
            path: ReadPath::Syscall(SyscallReason::NotRequested),
        }
    }

    #[test]
    fn an_interval_is_committed_as_deltas_added_to_the_totals() {
        let mut members = [
            member(CpuCounter::Cycles, 100, 150),
            member(CpuCounter::Instructions, 7, 7),
        ];
        let mut totals = [0u64; CpuCounter::COUNT];
        totals[CpuCounter::Cycles.index()] = 1000;
        let mut sample = CpuSample::new(vec![CpuCounter::Cycles, CpuCounter::Instructions]);
        sample.begin();
        commit::<false>(&mut members, &mut totals, &mut sample, 10, 10, None);
        let cycles = sample.reading(CpuCounter::Cycles).unwrap();
        assert_eq!(
            (cycles.delta, cycles.total, cycles.raw_delta),
            (50, 1050, 50)
        );
        assert_eq!(sample.get(CpuCounter::Instructions), Some(0));
        // The values read become the previous ones.
        assert_eq!(members[0].prev_raw, 150);
    }

    #[test]
    fn a_multiplexed_interval_is_scaled_to_the_whole_of_it() {
        let mut members = [member(CpuCounter::Cycles, 0, 300)];
        let mut totals = [0u64; CpuCounter::COUNT];
        let mut sample = CpuSample::new(vec![CpuCounter::Cycles]);
        sample.begin();
        let path = ReadPath::Syscall(SyscallReason::Forced);
        commit_scaled(&mut members, &mut totals, &mut sample, 100, 25, Some(path));
        let cycles = sample.reading(CpuCounter::Cycles).unwrap();
        assert_eq!((cycles.delta, cycles.raw_delta), (1200, 300));
        assert!(cycles.is_multiplexed());
        assert_eq!(cycles.path, path);
    }

    #[test]
    fn a_kernel_value_that_goes_backwards_is_a_typed_error() {
        assert_eq!(since("time_enabled", 5, 9).unwrap(), 4);
        assert!(matches!(
            since("time_enabled", 9, 5),
            Err(CpuError::WentBackwards {
                what: "time_enabled",
                previous: 9,
                current: 5
            })
        ));
    }

    #[test]
    fn a_group_without_pages_says_why_it_is_read_with_read() {
        let group = Group::new(Err(SyscallReason::NotCallingThread));
        assert!(group.user.is_none());
        assert_eq!(group.no_user_reason, SyscallReason::NotCallingThread);
        let group = Group::new(Ok(42));
        assert_eq!(group.user.as_ref().map(|u| u.owner), Some(42));
        assert_eq!(group.no_user_reason, SyscallReason::NotSampledYet);
    }
}
