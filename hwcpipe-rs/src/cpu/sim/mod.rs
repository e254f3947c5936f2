//! A simulated perf kernel behind the [`PerfSys`] seam, for tests of code that counts CPU events without
//! the machine's PMU: groups, ids, enable/disable/reset, the `PERF_FORMAT_GROUP` read layout,
//! enabled/running times, and injected failures. It answers every question of the seam itself (no Arm PMU,
//! unless [`FakePerf::set_arm_events`] or [`FakePerf::set_arm_pmus`] describes one; its own
//! `perf_event_paranoid`), so a test never sees the host's kernel. Descriptors are real (of `/dev/null`),
//! so they close like the kernel's.
//!
//! Arm PMUs described with [`FakePerf::set_arm_pmus`] behave as the kernel's Arm PMU driver does: an event
//! of a PMU's `type` opens only for that PMU's CPUs (or for a task), and [`FakePerf::run_on`] lets a task run
//! on one PMU's cores, where its events count while the task is there and only as many as the PMU has
//! counters: pinned groups first (a pinned group that does not fit reads end-of-file, its error state),
//! then the others share what is left, multiplexed. Events of another core type are enabled but never on a
//! counter while the task is away from their cores.
//!
//! Sampling events write real perf ring records (`sampling.rs`): a sampling event's ring
//! ([`PerfSys::map_ring`]) is ordinary memory the fake writes as the kernel writes a mapped one, and
//! [`FakePerf::fire_timers`] lets one period of every sampling event elapse — a PERF_RECORD_SAMPLE with a
//! read of its group in its ring, or, where the ring is full, a record lost and announced by a
//! PERF_RECORD_LOST in the next one that fits. [`FakePerf::throttle`] and [`FakePerf::unthrottle`] write
//! PERF_RECORD_THROTTLE and UNTHROTTLE, and [`Faults::offline_cpus`] takes CPUs away.

mod sampling;

use std::collections::HashMap;
use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, OwnedFd, RawFd};
use std::sync::Mutex;

use rustix::io::Errno;

use crate::cpu::group_read::{encode, record_len};
use crate::cpu::{CoreEvent, CpuPmu};
use crate::sys::arm_pmu::{ArmPmu, ArmPmuError};
use crate::sys::perf_event_attr::{
    flag, PERF_ATTR_SIZE_VER0, PERF_ATTR_SIZE_VER3, PERF_FORMAT_GROUP, PERF_FORMAT_ID,
    PERF_FORMAT_TOTAL_TIME_ENABLED, PERF_FORMAT_TOTAL_TIME_RUNNING, PERF_TYPE_RAW,
};
use crate::sys::{PerfEventAttr, PerfIoctl, PerfRing, PerfSys};

/// QEMU's Cortex-A72 PMU (one core, MIDR 0x410fd083) as Debian's 6.1 kernel describes it: its two
/// kernel-named events, and with `arm_list` the core type, a part of Arm's event list and PMCR_EL0.N (6)
/// that Arm's PMU data adds.
pub fn qemu_a72_pmu(arm_list: bool) -> CpuPmu {
    CpuPmu {
        name: "armv8_pmuv3".into(),
        perf_type: 8,
        cpus: vec![0],
        midr: Some(0x410f_d083),
        core: arm_list.then(|| "Cortex-A72".into()),
        kernel_events: vec![("cpu_cycles".into(), 0x11), ("inst_retired".into(), 0x08)],
        core_events: arm_list.then(|| {
            vec![
                CoreEvent {
                    code: 0x08,
                    name: Some("INST_RETIRED".into()),
                    description: "Instruction architecturally executed".into(),
                },
                CoreEvent {
                    code: 0x11,
                    name: Some("CPU_CYCLES".into()),
                    description: "Cycle".into(),
                },
                CoreEvent {
                    code: 0x60,
                    name: Some("BUS_ACCESS_RD".into()),
                    description: "Bus access read".into(),
                },
            ]
        }),
        counters: arm_list.then_some(6),
        slots: None,
    }
}

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
    /// A pinned group that could not be put on its PMU: its reads give end-of-file.
    pub error: bool,
}

/// A simulated Arm PMU: the kernel's description, the MIDR of its cores and its number of counters.
#[derive(Debug, Clone)]
pub struct FakePmu {
    /// What the kernel shows in sysfs.
    pub pmu: ArmPmu,
    /// MIDR_EL1 of its cores.
    pub midr: u64,
    /// PMCR_EL0.N: how many events it counts at once.
    pub counters: usize,
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
    /// CPUs that are offline: an open for one answers `ENODEV`, as the kernel's does for a CPU that is not
    /// online; events already open on one count nothing more and their timers write no records (their CPU
    /// runs nothing).
    pub offline_cpus: Vec<i32>,
    /// errno of a `read` of an event opened for one of these CPUs.
    pub read_errno_on_cpu: HashMap<i32, i32>,
    /// Maps a ring of at most this many data pages; a larger one is refused with `EPERM`, as the kernel
    /// refuses more locked memory than `perf_event_mlock_kb` allows.
    pub ring_page_limit: Option<usize>,
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
    pmus: Vec<FakePmu>,
    /// The mapped rings, by their event's descriptor.
    rings: HashMap<RawFd, sampling::Ring>,
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
    /// the kernel schedules a group; its CPU online) is enabled for `ns`, runs for `running` of them, and
    /// counts `per_config(config)` more.
    pub fn advance(&self, ns: u64, running: u64, per_config: impl Fn(u64) -> u64) {
        let mut s = self.state.lock().unwrap();
        let leaders_on: Vec<i32> = s
            .events
            .iter()
            .filter(|(_, (e, _))| e.leader.is_none() && e.enabled)
            .map(|(fd, _)| *fd)
            .collect();
        let offline = s.faults.offline_cpus.clone();
        for (event, _) in s.events.values_mut() {
            let group_on = event.leader.is_none_or(|l| leaders_on.contains(&l));
            if event.enabled && group_on && !offline.contains(&event.cpu) {
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

    /// Describes the Arm PMUs `pmus` (one per core type), which then open their events and count them
    /// as [`FakePerf::run_on`] says.
    pub fn set_arm_pmus(&self, pmus: Vec<FakePmu>) {
        let mut s = self.state.lock().unwrap();
        let mut union = pmu_regs::CommonEventSet::default();
        for pmu in &pmus {
            let set = pmu.pmu.common_events();
            union = pmu_regs::CommonEventSet::from_registers(
                union.pmceid0() | set.pmceid0(),
                union.pmceid1() | set.pmceid1(),
            );
        }
        s.arm_events = (!pmus.is_empty()).then_some(union);
        s.arm_pmus = pmus.len();
        s.pmus = pmus;
    }

    /// Lets a task run `ns` nanoseconds on the cores of the Arm PMU of type `pmu_type`: every enabled event
    /// is enabled for `ns`; an event of that PMU is on a counter as the PMU's counters allow (pinned
    /// groups first, then the others share what is left) and counts `per_event(type, config)` scaled to
    /// the time it was on; an event of another Arm PMU is not on a counter at all; any other event (software,
    /// generic) runs the whole time.
    pub fn run_on(&self, pmu_type: u32, ns: u64, per_event: impl Fn(u32, u64) -> u64) {
        let mut s = self.state.lock().unwrap();
        let arm_types: Vec<u32> = s.pmus.iter().map(|p| p.pmu.perf_type).collect();
        let counters = s
            .pmus
            .iter()
            .find(|p| p.pmu.perf_type == pmu_type)
            .map_or(0, |p| p.counters);
        // The enabled groups of this PMU: leader descriptor, members, pinned.
        let mut groups: Vec<(RawFd, usize, bool)> = s
            .events
            .iter()
            .filter(|(_, (e, _))| e.leader.is_none() && e.enabled && e.attr.kind == pmu_type)
            .map(|(&fd, (e, _))| (fd, 0, e.attr.has(flag::PINNED)))
            .collect();
        groups.sort_by_key(|&(fd, _, _)| fd);
        for (fd, members, _) in &mut groups {
            *members = s
                .events
                .iter()
                .filter(|(&f, (e, _))| f == *fd || e.leader == Some(*fd))
                .count();
        }
        let pinned: usize = groups.iter().filter(|g| g.2).map(|g| g.1).sum();
        let free = counters.saturating_sub(pinned);
        let flexible: usize = groups.iter().filter(|g| !g.2).map(|g| g.1).sum();
        // The time each group is on a counter, by leader; pinned groups that do not fit are in error.
        let on: Vec<(RawFd, u64, bool)> = groups
            .iter()
            .map(|&(fd, _, pinned_group)| match pinned_group {
                true if pinned > counters => (fd, 0, true),
                true => (fd, ns, false),
                false if flexible <= free => (fd, ns, false),
                false => (fd, ns * free as u64 / flexible.max(1) as u64, false),
            })
            .collect();
        let leaders_on: Vec<RawFd> = s
            .events
            .iter()
            .filter(|(_, (e, _))| e.leader.is_none() && e.enabled)
            .map(|(fd, _)| *fd)
            .collect();
        for (&fd, (event, _)) in s.events.iter_mut() {
            let leader = event.leader.unwrap_or(fd);
            if !event.enabled || !leaders_on.contains(&leader) {
                continue;
            }
            event.time_enabled += ns;
            let running = if event.attr.kind == pmu_type {
                match on.iter().find(|&&(l, _, _)| l == leader) {
                    Some(&(_, time, error)) => {
                        event.error |= error;
                        time
                    }
                    None => 0,
                }
            } else if arm_types.contains(&event.attr.kind) {
                0
            } else {
                ns
            };
            event.time_running += running;
            let counted = per_event(event.attr.kind, event.attr.config) * running;
            event.count += counted.checked_div(ns).unwrap_or(0);
        }
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
        // The two sizes this crate writes: a counting event's, and that of one choosing its clock.
        if !matches!(attr.size, PERF_ATTR_SIZE_VER0 | PERF_ATTR_SIZE_VER3)
            || attr.read_format.0 != FORMAT
        {
            return Err(Errno::INVAL.into());
        }
        // Like the real kernel, an event it does not have fails as such before permissions count.
        if let Some(&e) = s.faults.open_errno.get(&(attr.kind, attr.config)) {
            return Err(errno(e));
        }
        if s.faults.deny_all || (s.faults.deny_kernel && !attr.has(flag::EXCLUDE_KERNEL)) {
            return Err(Errno::ACCESS.into());
        }
        if s.faults.offline_cpus.contains(&cpu) {
            return Err(Errno::NODEV.into());
        }
        if let Some((limit, e)) = s.faults.open_limit {
            if s.opened.len() >= limit {
                return Err(errno(e));
            }
        }
        // An Arm PMU's event: for a task, or for one of the PMU's own CPUs (the driver's rule).
        if let Some(pmu) = s.pmus.iter().find(|p| p.pmu.perf_type == attr.kind) {
            if cpu >= 0 && !pmu.pmu.cpus.iter().any(|&c| i64::from(c) == i64::from(cpu)) {
                return Err(Errno::NOENT.into());
            }
        } else if attr.kind > PERF_TYPE_RAW && !s.pmus.is_empty() {
            return Err(Errno::NOENT.into());
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
            error: false,
        };
        s.opened.push(*attr);
        // A descriptor number dropped without `close` and now reused: nothing of its old event stays.
        s.rings.remove(&owned.as_raw_fd());
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
        if let Some(&e) = s.faults.read_errno_on_cpu.get(&leader.cpu) {
            return Err(errno(e));
        }
        if leader.error {
            return Ok(0);
        }
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
                // Enabling or disabling a group ends a pinned group's error state.
                PerfIoctl::EnableGroup | PerfIoctl::Enable => {
                    event.enabled = true;
                    event.error = false;
                }
                PerfIoctl::DisableGroup | PerfIoctl::Disable => {
                    event.enabled = false;
                    event.error = false;
                }
                PerfIoctl::ResetGroup => event.count = 0,
                PerfIoctl::Id => unreachable!(),
            }
        }
        Ok(0)
    }

    fn map_ring(&self, fd: BorrowedFd<'_>, data_pages: usize) -> io::Result<PerfRing> {
        self.state
            .lock()
            .unwrap()
            .map_ring(fd.as_raw_fd(), data_pages)
    }

    fn close(&self, fd: OwnedFd) -> io::Result<()> {
        let mut s = self.state.lock().unwrap();
        s.events.remove(&fd.as_raw_fd());
        s.rings.remove(&fd.as_raw_fd());
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

    /// As [`FakePerf::set_arm_pmus`] described them; none by default.
    fn arm_pmus(&self) -> Result<Vec<ArmPmu>, ArmPmuError> {
        Ok(self
            .state
            .lock()
            .unwrap()
            .pmus
            .iter()
            .map(|p| p.pmu.clone())
            .collect())
    }

    fn midr(&self, cpu: u32) -> Option<u64> {
        let s = self.state.lock().unwrap();
        s.pmus
            .iter()
            .find(|p| p.pmu.cpus.contains(&cpu))
            .map(|p| p.midr)
    }
}
