//! A simulated perf kernel behind the [`PerfSys`] seam, for tests of code that counts CPU events without
//! the machine's PMU: groups, ids, enable/disable/reset, the `PERF_FORMAT_GROUP` read layout,
//! enabled/running times, and injected failures. It answers every question of the seam itself (no Arm PMU,
//! unless [`FakePerf::set_arm_events`] describes one; its own `perf_event_paranoid`), so a test never sees
//! the host's kernel. Descriptors are real (of `/dev/null`), so they close like the kernel's.

use std::collections::HashMap;
use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, OwnedFd, RawFd};
use std::sync::Mutex;

use rustix::io::Errno;

use crate::cpu::group_read::{encode, record_len};
use crate::sys::perf_event_attr::{
    flag, PERF_FORMAT_GROUP, PERF_FORMAT_ID, PERF_FORMAT_TOTAL_TIME_ENABLED,
    PERF_FORMAT_TOTAL_TIME_RUNNING,
};
use crate::sys::{PerfEventAttr, PerfIoctl, PerfSys};

/// One simulated event.
#[derive(Debug, Clone)]
pub struct Event {
    /// The attribute it was opened with.
    pub attr: PerfEventAttr,
    /// The pid it was opened for.
    pub pid: i32,
    /// The CPU it was opened for (−1: any CPU).
    pub cpu: i32,
    /// The leader's descriptor, `None` for a leader.
    pub leader: Option<RawFd>,
    /// The kernel id.
    pub id: u64,
    /// The count.
    pub count: u64,
    /// Enabled time.
    pub time_enabled: u64,
    /// Running time.
    pub time_running: u64,
    /// Whether it counts.
    pub enabled: bool,
}

/// Failures to inject.
#[derive(Debug, Default)]
pub struct Faults {
    /// errno for `perf_event_open` of `(type, config)`.
    pub open_errno: HashMap<(u32, u64), i32>,
    /// `EACCES` for every open that does not set `exclude_kernel`.
    pub deny_kernel: bool,
    /// `EACCES` for every open.
    pub deny_all: bool,
    /// Opens at most this many events, then refuses every later open with the errno (`EMFILE`: out of
    /// descriptors).
    pub open_limit: Option<(usize, i32)>,
    /// errno of `PERF_EVENT_IOC_*`.
    pub ioctl_errno: HashMap<&'static str, i32>,
    /// errno of `read`.
    pub read_errno: Option<i32>,
    /// Return only this many bytes from `read`.
    pub short_read: Option<usize>,
    /// Report this id instead of the real one for every member after the leader.
    pub wrong_id: Option<u64>,
    /// errno of `close`.
    pub close_errno: Option<i32>,
    /// Write this `nr` into the record header instead of the real member count.
    pub nr_override: Option<u64>,
    /// Report this `time_enabled` instead of the real one.
    pub time_enabled_override: Option<u64>,
}

/// The simulated kernel.
#[derive(Debug, Default)]
pub struct FakePerf {
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    events: HashMap<RawFd, (Event, File)>,
    next_id: u64,
    faults: Faults,
    paranoid: i32,
    reads: usize,
    opened: Vec<PerfEventAttr>,
    closed: usize,
    arm_events: Option<pmu_regs::CommonEventSet>,
    arm_pmus: usize,
}

impl FakePerf {
    /// A kernel with `perf_event_paranoid` = `paranoid` and no failures.
    pub fn new(paranoid: i32) -> Self {
        let fake = FakePerf::default();
        fake.state.lock().unwrap().paranoid = paranoid;
        fake.state.lock().unwrap().next_id = 100;
        fake
    }

    /// Changes the injected failures.
    pub fn faults(&self, f: impl FnOnce(&mut Faults)) {
        f(&mut self.state.lock().unwrap().faults);
    }

    /// Lets `ns` nanoseconds pass: every counting event (enabled, and a member's leader enabled too, as
    /// the kernel schedules a group) is enabled for `ns`, runs for `running` of them, and counts
    /// `per_config(config)` more.
    pub fn advance(&self, ns: u64, running: u64, per_config: impl Fn(u64) -> u64) {
        let mut s = self.state.lock().unwrap();
        let leaders_on: Vec<i32> = s
            .events
            .iter()
            .filter(|(_, (e, _))| e.leader.is_none() && e.enabled)
            .map(|(fd, _)| *fd)
            .collect();
        for (event, _) in s.events.values_mut() {
            let group_on = event.leader.is_none_or(|l| leaders_on.contains(&l));
            if event.enabled && group_on {
                event.time_enabled += ns;
                event.time_running += running;
                event.count += per_config(event.attr.config);
            }
        }
    }

    /// Sets the raw count of the event opened for `config`.
    pub fn set_count(&self, config: u64, count: u64) {
        let mut s = self.state.lock().unwrap();
        for (event, _) in s.events.values_mut() {
            if event.attr.config == config {
                event.count = count;
            }
        }
    }

    /// Describes an Arm PMU implementing the common events `events` (none is described by default,
    /// whatever the machine running the tests has).
    pub fn set_arm_events(&self, events: pmu_regs::CommonEventSet) {
        let mut s = self.state.lock().unwrap();
        s.arm_events = Some(events);
        s.arm_pmus = s.arm_pmus.max(1);
    }

    /// Describes `count` Arm PMUs (a big.LITTLE system has two), their events unknown unless
    /// [`FakePerf::set_arm_events`] gives them.
    pub fn set_arm_pmu_count(&self, count: usize) {
        self.state.lock().unwrap().arm_pmus = count;
    }

    /// Number of `read` calls so far.
    pub fn reads(&self) -> usize {
        self.state.lock().unwrap().reads
    }

    /// Every attribute successfully opened, in order.
    pub fn opened(&self) -> Vec<PerfEventAttr> {
        self.state.lock().unwrap().opened.clone()
    }

    /// Every live event.
    pub fn events(&self) -> Vec<Event> {
        self.state
            .lock()
            .unwrap()
            .events
            .values()
            .map(|(e, _)| e.clone())
            .collect()
    }

    /// Number of descriptors closed through the seam.
    pub fn closed(&self) -> usize {
        self.state.lock().unwrap().closed
    }
}

fn errno(e: i32) -> io::Error {
    io::Error::from_raw_os_error(e)
}

const FORMAT: u64 = PERF_FORMAT_GROUP
    | PERF_FORMAT_TOTAL_TIME_ENABLED
    | PERF_FORMAT_TOTAL_TIME_RUNNING
    | PERF_FORMAT_ID;

impl PerfSys for FakePerf {
    fn perf_event_open(
        &self,
        attr: &PerfEventAttr,
        pid: i32,
        cpu: i32,
        group: Option<BorrowedFd<'_>>,
    ) -> io::Result<OwnedFd> {
        let mut s = self.state.lock().unwrap();
        if attr.size != 64 || attr.read_format != FORMAT {
            return Err(Errno::INVAL.into());
        }
        // Like the real kernel, an event it does not have fails as such before permissions count.
        if let Some(&e) = s.faults.open_errno.get(&(attr.type_, attr.config)) {
            return Err(errno(e));
        }
        if s.faults.deny_all || (s.faults.deny_kernel && !attr.has(flag::EXCLUDE_KERNEL)) {
            return Err(Errno::ACCESS.into());
        }
        if let Some((limit, e)) = s.faults.open_limit {
            if s.opened.len() >= limit {
                return Err(errno(e));
            }
        }
        let leader = match group {
            Some(fd) => {
                let raw = fd.as_raw_fd();
                match s.events.get(&raw) {
                    Some((e, _)) if e.leader.is_none() => Some(raw),
                    _ => return Err(io::Error::from(Errno::BADF)),
                }
            }
            None => None,
        };
        let file = File::open("/dev/null")?;
        let owned = OwnedFd::from(file.try_clone()?);
        s.next_id += 1;
        let event = Event {
            attr: *attr,
            pid,
            cpu,
            leader,
            id: s.next_id,
            count: 0,
            time_enabled: 0,
            time_running: 0,
            enabled: !attr.has(flag::DISABLED),
        };
        s.opened.push(*attr);
        s.events.insert(owned.as_raw_fd(), (event, file));
        Ok(owned)
    }

    fn read(&self, fd: BorrowedFd<'_>, buf: &mut [u8]) -> io::Result<usize> {
        let mut s = self.state.lock().unwrap();
        s.reads += 1;
        if let Some(e) = s.faults.read_errno {
            return Err(errno(e));
        }
        let raw = fd.as_raw_fd();
        let Some((leader, _)) = s.events.get(&raw) else {
            return Err(Errno::BADF.into());
        };
        let mut members: Vec<&Event> = vec![leader];
        let mut siblings: Vec<&Event> = s
            .events
            .values()
            .map(|(e, _)| e)
            .filter(|e| e.leader == Some(raw))
            .collect();
        siblings.sort_by_key(|e| e.id);
        members.extend(siblings);
        if buf.len() < record_len(members.len()) {
            return Err(Errno::NOSPC.into());
        }
        let wrong = s.faults.wrong_id;
        let entries: Vec<(u64, u64)> = members
            .iter()
            .enumerate()
            .map(|(i, e)| (e.count, if i > 0 { wrong.unwrap_or(e.id) } else { e.id }))
            .collect();
        let mut out = Vec::new();
        let enabled = s
            .faults
            .time_enabled_override
            .unwrap_or(leader.time_enabled);
        encode(enabled, leader.time_running, &entries, &mut out);
        if let Some(nr) = s.faults.nr_override {
            out[..8].copy_from_slice(&nr.to_ne_bytes());
        }
        let n = s.faults.short_read.unwrap_or(out.len()).min(out.len());
        buf[..n].copy_from_slice(&out[..n]);
        Ok(n)
    }

    fn ioctl(&self, fd: BorrowedFd<'_>, request: PerfIoctl) -> io::Result<u64> {
        let mut s = self.state.lock().unwrap();
        if let Some(&e) = s.faults.ioctl_errno.get(request.name()) {
            return Err(errno(e));
        }
        let raw = fd.as_raw_fd();
        let Some((event, _)) = s.events.get(&raw) else {
            return Err(Errno::BADF.into());
        };
        if request == PerfIoctl::Id {
            return Ok(event.id);
        }
        let whole_group = !matches!(request, PerfIoctl::Enable | PerfIoctl::Disable);
        let group = s
            .events
            .iter_mut()
            .filter(|(fd, (e, _))| **fd == raw || (whole_group && e.leader == Some(raw)));
        for (_, (event, _)) in group {
            match request {
                PerfIoctl::EnableGroup | PerfIoctl::Enable => event.enabled = true,
                PerfIoctl::DisableGroup | PerfIoctl::Disable => event.enabled = false,
                PerfIoctl::ResetGroup => event.count = 0,
                PerfIoctl::Id => unreachable!(),
            }
        }
        Ok(0)
    }

    fn close(&self, fd: OwnedFd) -> io::Result<()> {
        let mut s = self.state.lock().unwrap();
        s.events.remove(&fd.as_raw_fd());
        s.closed += 1;
        drop(fd);
        match s.faults.close_errno {
            Some(e) => Err(errno(e)),
            None => Ok(()),
        }
    }

    fn perf_event_paranoid(&self) -> io::Result<i32> {
        Ok(self.state.lock().unwrap().paranoid)
    }

    fn arm_common_events(&self) -> Option<pmu_regs::CommonEventSet> {
        self.state.lock().unwrap().arm_events
    }

    /// As [`FakePerf::set_arm_pmu_count`] set, or one once [`FakePerf::set_arm_events`] described a PMU;
    /// none by default.
    fn arm_pmu_count(&self) -> usize {
        self.state.lock().unwrap().arm_pmus
    }
}
