//! Reading CPU counters from user space, without a system call, and the rule that picks, at every
//! sample and for every counter, between that and `read()`.
//!
//! Linux publishes, in the first page of a perf event mapped by its task (`perf_event_mmap_page`), which
//! hardware counter holds the event (`index`), what to add to it (`offset`), its width (`pmc_width`),
//! and the event's enabled and running times with what is needed to bring them up to date from a clock
//! the task can read (`time_mult`, `time_shift`, `time_offset`, ...). A task that may read the counter
//! (`cap_user_rdpmc`) computes the count as `offset + sign_extend(counter, pmc_width)`
//! ([`pmu_regs::user_read::user_count`]) with one instruction: `MRS` of `PMEVCNTR<n>_EL0` or
//! `PMCCNTR_EL0` on arm64 (Linux 5.17+, `kernel.perf_user_access = 1`, events opened with
//! `config1` bit 1), `rdpmc` on x86-64. The page is read under its sequence lock
//! ([`PerfPage`](crate::sys::perf_page::PerfPage)).
//!
//! The profiler asks for this with [`UserReads::Auto`] (for [`CpuTarget::CallingThread`](super::CpuTarget)
//! only). A group of counters is read from user space at a sample when every member's page allows it;
//! otherwise the group is read with one `read()` as before. Each [`CpuReading`](super::CpuReading)
//! says which it was ([`ReadPath`]), and why not user space ([`SyscallReason`]).

use std::fmt;

use pmu_regs::user_read::{user_count, PmcWidth};

use crate::sys::perf_page::{cap, CounterRead, TimeNow, TimeRead};

/// Whether the profiler may read counters from user space.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum UserReads {
    /// Every sample is one `read()` per group (the events count the target and, through perf's
    /// `inherit`, the threads and processes it creates afterwards).
    #[default]
    Off,
    /// For [`CpuTarget::CallingThread`](super::CpuTarget::CallingThread): map each event's page, ask
    /// the kernel for user access (arm64), and read a group from user space whenever the kernel
    /// allows it, else with `read()`. Hardware events count the calling thread only (no `inherit`:
    /// the count of threads created later would be in `read()` but never in the page); software
    /// events, which a page never lets user space read, keep `inherit` and go by `read()`
    /// ([`SyscallReason::NoUserAccess`]), since a software clock that is a group member without
    /// `inherit` reads a stale count. Other targets
    /// ignore it and say so ([`SyscallReason::NotCallingThread`]). Sample from the thread that built
    /// the profiler (other threads get `read()`, [`SyscallReason::OtherThread`]), and not from a
    /// process forked after it was built: the counters and pages are the parent thread's.
    Auto,
}

/// How a counter's value was obtained at a sample.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReadPath {
    /// From user space: the mmap page and one counter instruction, no system call.
    UserSpace,
    /// With `read()` of the counter's group, for this reason.
    Syscall(SyscallReason),
}

impl ReadPath {
    /// Whether this is [`ReadPath::UserSpace`].
    pub fn is_user_space(self) -> bool {
        self == ReadPath::UserSpace
    }
}

/// Why a counter was read with `read()` rather than from user space.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum SyscallReason {
    /// User-space reads were not asked for ([`UserReads::Off`]).
    NotRequested,
    /// The profiler counts another thread, process or CPU: only the calling thread's own counters
    /// are readable from user space.
    NotCallingThread,
    /// The CPUs have more than one kind of Arm PMU: a thread moved to a CPU of the other kind between
    /// the check and the read would be stopped by a trap, so user access is not asked for.
    HeterogeneousCpus,
    /// The event's page could not be mapped (the errno of `mmap`, or of the check that the
    /// descriptor is a perf event).
    NoPage {
        /// The errno.
        errno: i32,
    },
    /// The page grants no user-space read now (`cap_user_rdpmc` 0 or `index` 0): a software event,
    /// `kernel.perf_user_access` is 0, the event was opened without user access, or it is not on
    /// the PMU at the moment (multiplexed out).
    NoUserAccess,
    /// The hardware refused the read (on arm64, PMUSERENR_EL0 is closed on this CPU).
    CounterRefused,
    /// The page has no clock conversion (`cap_user_time` 0), so the enabled and running times
    /// cannot be brought up to date.
    NoUserTime,
    /// The page's `pmc_width` is outside 1..=64.
    BadWidth {
        /// The width found.
        width: u16,
    },
    /// The page changed on every attempt to read it.
    PageBusy,
    /// The value read from user space was below the previous one.
    Implausible,
    /// `sample()` was called from another thread than the one that opened the counters; the
    /// counters in this thread's PMU are not the profiler's.
    OtherThread,
    /// Another counter of the same group could not be read from user space, so the group was read
    /// with one `read()`.
    GroupMember,
    /// No sample has been taken since `run()`.
    NotSampledYet,
    /// `read()` was asked for ([`CpuProfiler::sample_with_read`](super::CpuProfiler::sample_with_read)).
    Forced,
}

impl fmt::Display for ReadPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReadPath::UserSpace => f.write_str("user space"),
            ReadPath::Syscall(reason) => write!(f, "read(): {reason}"),
        }
    }
}

impl fmt::Display for SyscallReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            SyscallReason::NotRequested => f.write_str("user-space reads not requested"),
            SyscallReason::NotCallingThread => f.write_str("the target is not the calling thread"),
            SyscallReason::HeterogeneousCpus => f.write_str("CPUs with different Arm PMUs"),
            SyscallReason::NoPage { errno } => write!(
                f,
                "the event's page could not be mapped: {}",
                std::io::Error::from_raw_os_error(errno)
            ),
            SyscallReason::NoUserAccess => f.write_str(
                "the kernel grants no user-space read (software event, \
                 kernel.perf_user_access=0, or not on the PMU now)",
            ),
            SyscallReason::CounterRefused => f.write_str("the CPU refused the counter read"),
            SyscallReason::NoUserTime => f.write_str("the page has no clock conversion"),
            SyscallReason::BadWidth { width } => write!(f, "counter width {width} in the page"),
            SyscallReason::PageBusy => f.write_str("the page kept changing"),
            SyscallReason::Implausible => f.write_str("the user-space value went backwards"),
            SyscallReason::OtherThread => {
                f.write_str("sampled from another thread than the one counted")
            }
            SyscallReason::GroupMember => f.write_str("another counter of its group needed read()"),
            SyscallReason::NotSampledYet => f.write_str("not sampled yet"),
            SyscallReason::Forced => f.write_str("read() asked for"),
        }
    }
}

/// Attempts at reading a page before giving up for this sample. The kernel rewrites a page only
/// when the event is scheduled or overflows, so a second attempt almost always succeeds.
pub const PAGE_READ_ROUNDS: u32 = 8;

/// Nanoseconds since the page was written, from a reading of the page's clock
/// ([`TimeRead::since_update`]): `short` is the page's `cap_user_time_short`.
#[inline]
pub fn time_since_update(time: &TimeRead, short: bool) -> u64 {
    time.since_update(short)
}

/// The event count of one user-space read: `offset + sign_extend(counter, pmc_width)`, or why
/// `read()` is needed instead.
#[inline]
pub fn count(read: &CounterRead) -> Result<u64, SyscallReason> {
    let Some(pmc) = read.pmc else {
        return Err(if read.has(cap::USER_RDPMC) && read.index != 0 {
            SyscallReason::CounterRefused
        } else {
            SyscallReason::NoUserAccess
        });
    };
    let width = PmcWidth::new(read.pmc_width).map_err(|_| SyscallReason::BadWidth {
        width: read.pmc_width,
    })?;
    Ok(user_count(read.offset, pmc, width))
}

/// The event's enabled and running times (ns) at the instant of the read, or why `read()` is needed:
/// the page converts no clock (`cap_user_time` 0) or this architecture has no clock to read.
#[inline]
pub fn times(read: &CounterRead, time: Option<&TimeNow>) -> Result<(u64, u64), SyscallReason> {
    match time {
        Some(time) if read.has(cap::USER_TIME) => Ok((time.enabled, time.running)),
        _ => Err(SyscallReason::NoUserTime),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn granted(index: u32, offset: i64, width: u16, pmc: u64) -> CounterRead {
        CounterRead {
            index,
            offset,
            capabilities: cap::USER_RDPMC
                | cap::USER_TIME
                | cap::USER_TIME_ZERO
                | cap::USER_TIME_SHORT,
            pmc_width: width,
            pmc: Some(pmc),
        }
    }

    /// A 1 GHz clock (1 ns per tick: mult 2^31, shift 31), the page written at clock `written`.
    fn clock(now: u64, written: u64) -> TimeRead {
        TimeRead {
            clock: now,
            time_enabled: 1_000,
            time_running: 600,
            time_shift: 31,
            time_mult: 1 << 31,
            time_offset: 0u64.wrapping_sub(written),
            time_cycles: 0,
            time_mask: u64::MAX,
        }
    }

    #[test]
    fn count_is_offset_plus_the_sign_extended_counter() {
        let prev = 0xFFFF_FFFF_8000_0001u64;
        let offset = 500u64.wrapping_sub(prev) as i64;
        assert_eq!(count(&granted(1, offset, 32, 0x8000_0011)), Ok(516));
        // Wrapped through zero, interrupt not yet taken.
        assert_eq!(
            count(&granted(1, offset, 32, 0x0000_0002)),
            Ok(500 + 0x8000_0001)
        );
    }

    #[test]
    fn times_advance_by_the_clock_since_the_update() {
        let read = granted(32, 0, 64, 7);
        let now = clock(400, 250).now(true);
        assert_eq!(
            now,
            TimeNow {
                enabled: 1_150,
                running: 750
            }
        );
        assert_eq!(times(&read, Some(&now)), Ok((1_150, 750)));
    }

    #[test]
    fn a_short_clock_is_widened_around_time_cycles() {
        let mut time = clock(5, 0);
        time.time_offset = 0;
        time.time_cycles = 0x1_0000_0000;
        time.time_mask = 0xFFFF_FFFF;
        // A 32-bit clock that reads 5 past the 2^32 boundary means 2^32 + 5.
        assert_eq!(time_since_update(&time, true), 0x1_0000_0005);
        assert_eq!(time_since_update(&time, false), 5);
    }

    #[test]
    fn refusals_have_reasons() {
        let mut read = granted(0, 0, 32, 1);
        read.pmc = None;
        assert_eq!(count(&read), Err(SyscallReason::NoUserAccess));
        read.index = 2;
        read.capabilities &= !cap::USER_RDPMC;
        assert_eq!(count(&read), Err(SyscallReason::NoUserAccess));
        let mut refused = granted(2, 0, 32, 1);
        refused.pmc = None;
        assert_eq!(count(&refused), Err(SyscallReason::CounterRefused));
        assert_eq!(
            count(&granted(2, 0, 0, 1)),
            Err(SyscallReason::BadWidth { width: 0 })
        );
        let mut no_time = granted(2, 0, 32, 1);
        no_time.capabilities &= !cap::USER_TIME;
        assert_eq!(count(&no_time), Ok(1));
        assert_eq!(
            times(&no_time, Some(&clock(1, 0).now(false))),
            Err(SyscallReason::NoUserTime)
        );
        assert_eq!(
            times(&granted(2, 0, 32, 1), None),
            Err(SyscallReason::NoUserTime)
        );
        assert_eq!(
            ReadPath::Syscall(SyscallReason::NoUserAccess).to_string(),
            "read(): the kernel grants no user-space read (software event, \
             kernel.perf_user_access=0, or not on the PMU now)"
        );
    }

    proptest! {
        /// x86-64 counters are 48 bits wide (`pmc_width` 48): the kernel programs them from
        /// `−left` with `left` < 2^47, and the user-space sum stays exact through their wrap.
        #[test]
        fn rdpmc_width_counts_through_the_wrap(count_then in 0u64..1 << 60, left in 1u64..1 << 47, k in 0u64..1 << 47) {
            let mask = (1u64 << 48) - 1;
            let prev = left.wrapping_neg();
            let pmc = prev.wrapping_add(k) & mask;
            let read = granted(1, count_then.wrapping_sub(prev) as i64, 48, pmc);
            prop_assert_eq!(count(&read), Ok(count_then + k));
        }

        /// The conversion equals exact rational arithmetic for a clock of any rate.
        #[test]
        fn time_conversion_is_the_exact_product(cyc in 0u64..1 << 50, mult in 1u32.., shift in 0u16..32) {
            let time = TimeRead {
                clock: cyc,
                time_mult: mult,
                time_shift: shift,
                ..TimeRead::default()
            };
            let exact = (u128::from(cyc) * u128::from(mult)) >> shift;
            prop_assert_eq!(u128::from(time_since_update(&time, false)), exact & u128::from(u64::MAX));
        }
    }
}
