//! The first page of a perf event mapped into the process (`struct perf_event_mmap_page`), read under
//! its sequence lock, and the two instructions a user-space read needs: the counter (`MRS` of
//! `PMCCNTR_EL0` / `PMEVCNTR<n>_EL0` through `pmu_regs::hw::el0` on aarch64, `rdpmc` on x86-64) and the
//! clock the kernel's time fields are based on (`CNTVCT_EL0`, `rdtsc`).
//!
//! The page is written by the kernel while the task runs (when the event is scheduled in or out, on an
//! overflow interrupt), always as `lock += 1; fields; lock += 1` on the CPU the task runs on. A reader
//! reads `lock`, the fields and the counter, then `lock` again, and retries when the two differ (or the
//! first is odd: an update is in progress). [`PerfPage::read`] retries a bounded number of times and
//! then gives up, so nothing here can spin forever.
//!
//! Self-contained on purpose: everything about the page is in this file (layout, reads); the mapping
//! itself is the crate's one mapping type, `sys::mapping::Mapping`, which checks every field's bounds.

use std::io;
use std::os::fd::{AsRawFd, BorrowedFd};
use std::sync::atomic::{fence, AtomicU16, AtomicU32, AtomicU64, Ordering};

use rustix::io::Errno;
use rustix::mm::{MapFlags, ProtFlags};

use super::mapping::{AtomicWord, Mapping};

/// Byte offsets of the fields of `struct perf_event_mmap_page` (Linux uapi `perf_event.h`).
mod offset {
    pub const LOCK: usize = 8;
    pub const INDEX: usize = 12;
    pub const OFFSET: usize = 16;
    pub const TIME_ENABLED: usize = 24;
    pub const TIME_RUNNING: usize = 32;
    pub const CAPABILITIES: usize = 40;
    pub const PMC_WIDTH: usize = 48;
    pub const TIME_SHIFT: usize = 50;
    pub const TIME_MULT: usize = 52;
    pub const TIME_OFFSET: usize = 56;
    pub const TIME_ZERO: usize = 64;
    pub const TIME_CYCLES: usize = 80;
    pub const TIME_MASK: usize = 88;
    /// Bytes up to and including `time_mask`.
    pub const END: usize = 96;
}

/// `capabilities` bits.
pub mod cap {
    /// `cap_user_rdpmc`: the counter named by `index` may be read from user space.
    pub const USER_RDPMC: u64 = 1 << 2;
    /// `cap_user_time`: `time_shift`, `time_mult` and `time_offset` convert the clock to nanoseconds.
    pub const USER_TIME: u64 = 1 << 3;
    /// `cap_user_time_zero`: `time_zero` is valid.
    pub const USER_TIME_ZERO: u64 = 1 << 4;
    /// `cap_user_time_short`: the clock is narrower than 64 bits; `time_cycles` and `time_mask` widen it.
    pub const USER_TIME_SHORT: u64 = 1 << 5;
}

/// The fields of a perf mmap page that a user-space read uses, as one consistent snapshot.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PageFields {
    /// `index`: the hardware counter, 0 when the task may not read it from user space now.
    pub index: u32,
    /// `offset`: added to the sign-extended counter gives the count.
    pub offset: i64,
    /// `time_enabled` (ns) when the page was written.
    pub time_enabled: u64,
    /// `time_running` (ns) when the page was written.
    pub time_running: u64,
    /// `capabilities` (see [`cap`]).
    pub capabilities: u64,
    /// `pmc_width`: bits of the counter that carry the count.
    pub pmc_width: u16,
    /// `time_shift`.
    pub time_shift: u16,
    /// `time_mult`.
    pub time_mult: u32,
    /// `time_offset`.
    pub time_offset: u64,
    /// `time_zero`.
    pub time_zero: u64,
    /// `time_cycles`.
    pub time_cycles: u64,
    /// `time_mask`.
    pub time_mask: u64,
}

impl PageFields {
    /// Whether `capabilities` has every bit of `bits`.
    pub fn has(&self, bits: u64) -> bool {
        self.capabilities & bits == bits
    }
}

/// What one read of a page under its lock gave: the fields, and what the caller read in between.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Locked<T> {
    /// The page.
    pub fields: PageFields,
    /// The caller's reads (counter, clock), made while the lock held still.
    pub reads: T,
    /// Rounds it took (1 when the page did not change during the first).
    pub rounds: u32,
}

/// The page changed (or was being written) on every one of the allowed rounds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("the perf mmap page changed during each of {rounds} read attempts")]
pub struct PageBusy {
    /// Rounds attempted.
    pub rounds: u32,
}

/// The first page of one perf event, mapped read-only and shared with the kernel. Unmapped on drop.
#[derive(Debug)]
pub struct PerfPage {
    map: Mapping,
}

/// What `/proc/self/fd/N` of a perf event descriptor links to.
const PERF_EVENT_LINK: &str = "anon_inode:[perf_event]";

impl PerfPage {
    /// Maps the first page of the perf event `fd` read-only.
    ///
    /// `fd` must be a perf event descriptor (its `/proc/self/fd` link is checked: the page of anything
    /// else must never steer a counter instruction); otherwise the error is `InvalidInput`.
    pub fn map(fd: BorrowedFd<'_>) -> io::Result<PerfPage> {
        let link = std::fs::read_link(format!("/proc/self/fd/{}", fd.as_raw_fd()))?;
        if link.as_os_str() != PERF_EVENT_LINK {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "not a perf event descriptor",
            ));
        }
        let page_size = rustix::param::page_size();
        if page_size < offset::END {
            return Err(Errno::INVAL.into());
        }
        // Kernels before 5.10 end the written fields at `time_zero`; the rest of the page is zero,
        // which reads as "no short clock" and is handled as such.
        let map = Mapping::new(fd, page_size, ProtFlags::READ, MapFlags::SHARED)?;
        Ok(PerfPage { map })
    }

    /// A page in ordinary, zeroed, 8-byte aligned memory, written with [`PerfPage::store_for_test`].
    #[cfg(test)]
    pub(crate) fn in_memory() -> PerfPage {
        PerfPage {
            map: Mapping::in_memory(offset::END),
        }
    }

    /// Writes `fields` as the kernel does: lock odd, fields, lock even.
    #[cfg(test)]
    pub(crate) fn store_for_test(&self, fields: &PageFields) {
        let lock = self.atomic32(offset::LOCK);
        lock.fetch_add(1, Ordering::SeqCst);
        self.atomic32(offset::INDEX)
            .store(fields.index, Ordering::SeqCst);
        self.atomic64(offset::OFFSET)
            .store(fields.offset as u64, Ordering::SeqCst);
        self.atomic64(offset::TIME_ENABLED)
            .store(fields.time_enabled, Ordering::SeqCst);
        self.atomic64(offset::TIME_RUNNING)
            .store(fields.time_running, Ordering::SeqCst);
        self.atomic64(offset::CAPABILITIES)
            .store(fields.capabilities, Ordering::SeqCst);
        self.map
            .atomic_u16(offset::PMC_WIDTH)
            .store(fields.pmc_width, Ordering::SeqCst);
        self.map
            .atomic_u16(offset::TIME_SHIFT)
            .store(fields.time_shift, Ordering::SeqCst);
        self.atomic32(offset::TIME_MULT)
            .store(fields.time_mult, Ordering::SeqCst);
        self.atomic64(offset::TIME_OFFSET)
            .store(fields.time_offset, Ordering::SeqCst);
        self.atomic64(offset::TIME_ZERO)
            .store(fields.time_zero, Ordering::SeqCst);
        self.atomic64(offset::TIME_CYCLES)
            .store(fields.time_cycles, Ordering::SeqCst);
        self.atomic64(offset::TIME_MASK)
            .store(fields.time_mask, Ordering::SeqCst);
        lock.fetch_add(1, Ordering::SeqCst);
    }

    /// The lock word, for tests that write the page from another thread.
    #[cfg(test)]
    pub(crate) fn lock_word(&self) -> &AtomicU32 {
        self.atomic32(offset::LOCK)
    }

    /// Whether the page is the kernel's (mapped by [`map`](Self::map)), so that its `index` may
    /// steer a counter instruction. Outside unit tests every page is: pages in ordinary memory
    /// ([`in_memory`](Self::in_memory)) exist only there, so the check costs nothing elsewhere.
    #[inline(always)]
    fn is_kernel_page(&self) -> bool {
        cfg!(not(test)) || self.map.is_kernel()
    }

    /// A field of the page, without a bounds check on the read paths: `at` is one of `offset`'s
    /// constants, each aligned to its type and ending at or before `offset::END`
    /// (`offsets_follow_the_uapi_layout` checks both), and every `PerfPage` maps at least
    /// `offset::END` bytes (`map` and `in_memory` make sure).
    #[inline(always)]
    fn field<T: AtomicWord>(&self, at: usize) -> &T {
        debug_assert!(at + std::mem::size_of::<T>() <= offset::END);
        // SAFETY: as said above, `at..at + size_of::<T>()` lies within the first `offset::END`
        // bytes, which the mapping holds, and `at` is aligned to `T`.
        unsafe { self.map.field_unchecked(at) }
    }

    /// A u32 field; the kernel writes it concurrently, hence an atomic view.
    #[inline(always)]
    fn atomic32(&self, at: usize) -> &AtomicU32 {
        self.field(at)
    }

    #[inline(always)]
    fn atomic64(&self, at: usize) -> &AtomicU64 {
        self.field(at)
    }

    #[inline(always)]
    fn load32(&self, at: usize) -> u32 {
        self.atomic32(at).load(Ordering::Relaxed)
    }

    #[inline(always)]
    fn load64(&self, at: usize) -> u64 {
        self.atomic64(at).load(Ordering::Relaxed)
    }

    #[inline(always)]
    fn load16(&self, at: usize) -> u16 {
        self.field::<AtomicU16>(at).load(Ordering::Relaxed)
    }

    /// Reads the fields and, between the two reads of the lock, calls `reads` with them (the counter
    /// and clock reads belong there). Retries up to `rounds` times while the page changes.
    pub fn read<T>(
        &self,
        rounds: u32,
        mut reads: impl FnMut(&PageFields) -> T,
    ) -> Result<Locked<T>, PageBusy> {
        let lock = self.atomic32(offset::LOCK);
        for round in 1..=rounds {
            let seq = lock.load(Ordering::Acquire);
            if seq & 1 != 0 {
                std::hint::spin_loop();
                continue;
            }
            let fields = PageFields {
                index: self.load32(offset::INDEX),
                offset: self.load64(offset::OFFSET) as i64,
                time_enabled: self.load64(offset::TIME_ENABLED),
                time_running: self.load64(offset::TIME_RUNNING),
                capabilities: self.load64(offset::CAPABILITIES),
                pmc_width: self.load16(offset::PMC_WIDTH),
                time_shift: self.load16(offset::TIME_SHIFT),
                time_mult: self.load32(offset::TIME_MULT),
                time_offset: self.load64(offset::TIME_OFFSET),
                time_zero: self.load64(offset::TIME_ZERO),
                time_cycles: self.load64(offset::TIME_CYCLES),
                time_mask: self.load64(offset::TIME_MASK),
            };
            let value = reads(&fields);
            fence(Ordering::Acquire);
            if lock.load(Ordering::Relaxed) == seq {
                return Ok(Locked {
                    fields,
                    reads: value,
                    rounds: round,
                });
            }
        }
        Err(PageBusy { rounds })
    }
}

/// The counter half of one user-space read, taken while the page's lock held still.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CounterRead {
    /// `index`.
    pub index: u32,
    /// `offset`.
    pub offset: i64,
    /// `capabilities`.
    pub capabilities: u64,
    /// `pmc_width`.
    pub pmc_width: u16,
    /// The counter register, `None` when the page grants no read (`cap_user_rdpmc` 0 or `index` 0),
    /// the page is not a kernel mapping, or the hardware refused it.
    pub pmc: Option<u64>,
}

impl CounterRead {
    /// Whether `capabilities` has every bit of `bits`.
    pub fn has(&self, bits: u64) -> bool {
        self.capabilities & bits == bits
    }
}

/// The time half of one user-space read: the clock, and the page's times and conversion.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TimeRead {
    /// The clock (`CNTVCT_EL0`, TSC) read under the lock.
    pub clock: u64,
    /// `time_enabled`.
    pub time_enabled: u64,
    /// `time_running`.
    pub time_running: u64,
    /// `time_shift`.
    pub time_shift: u16,
    /// `time_mult`.
    pub time_mult: u32,
    /// `time_offset`.
    pub time_offset: u64,
    /// `time_cycles`.
    pub time_cycles: u64,
    /// `time_mask`.
    pub time_mask: u64,
}

impl TimeRead {
    /// Nanoseconds since the page was written: the kernel's conversion
    /// `time_offset + (cyc >> shift) × mult + ((cyc & (2^shift − 1)) × mult >> shift)` of the clock,
    /// with `cyc` first widened by `time_cycles` and `time_mask` when the clock is short (`short`,
    /// the page's `cap_user_time_short`). Wrapping arithmetic, as in the kernel; shifts count modulo
    /// 64, as the CPU's shift instructions do (the kernel publishes shifts of 32 at most).
    #[inline]
    pub fn since_update(&self, short: bool) -> u64 {
        let cyc = if short {
            self.time_cycles
                .wrapping_add(self.clock.wrapping_sub(self.time_cycles) & self.time_mask)
        } else {
            self.clock
        };
        let shift = u32::from(self.time_shift);
        let mult = u64::from(self.time_mult);
        let quot = cyc.wrapping_shr(shift);
        let rem = cyc & 1u64.wrapping_shl(shift).wrapping_sub(1);
        self.time_offset
            .wrapping_add(quot.wrapping_mul(mult))
            .wrapping_add(rem.wrapping_mul(mult).wrapping_shr(shift))
    }

    /// The event's enabled and running times (ns) at the clock reading, for an event on the PMU
    /// (`index` ≠ 0), which has been running all the time since the page was written: both grow by
    /// [`since_update`](Self::since_update).
    #[inline]
    pub fn now(&self, short: bool) -> TimeNow {
        let since = self.since_update(short);
        TimeNow {
            enabled: self.time_enabled.wrapping_add(since),
            running: self.time_running.wrapping_add(since),
        }
    }
}

/// An event's enabled and running times brought up to a clock reading.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TimeNow {
    /// Nanoseconds enabled.
    pub enabled: u64,
    /// Nanoseconds on the PMU.
    pub running: u64,
}

impl PerfPage {
    /// One user-space read of the event under the page's lock, retried at most `rounds` times:
    /// the counter the page names and, when `WITH_TIME` and the page converts its clock
    /// (`cap_user_time`), the event's times at that moment (`None` otherwise, or when the counter
    /// could not be read). On arm64 the read is made only if PMUSERENR_EL0 lets user space read every
    /// counter, cycle and event ([`read_counter`]), so that the other counters of a group may then be
    /// read with [`read_user_granted`](Self::read_user_granted). Reads only what it needs, with no
    /// call: this is the hot path of a sample, and a call would make the caller save and restore what
    /// it holds across it.
    #[inline(always)]
    pub fn read_user<const WITH_TIME: bool>(
        &self,
        rounds: u32,
    ) -> Result<(CounterRead, Option<TimeNow>), PageBusy> {
        // SAFETY: the checked read (`GRANTED` false) has no precondition.
        unsafe { self.read_locked::<WITH_TIME, false>(rounds) }
    }

    /// [`read_user`](Self::read_user) without looking at PMUSERENR_EL0 first: for the other counters
    /// of a group, after [`read_user`](Self::read_user) read the first from user space on this thread
    /// (`access`, from that read).
    #[inline(always)]
    pub fn read_user_granted<const WITH_TIME: bool>(
        &self,
        rounds: u32,
        access: UserAccess,
    ) -> Result<(CounterRead, Option<TimeNow>), PageBusy> {
        let _ = access;
        // SAFETY: `access` was made on this thread (it is neither Send nor Sync) from a read that
        // found every counter readable from user space.
        unsafe { self.read_locked::<WITH_TIME, true>(rounds) }
    }

    /// The lock loop of [`read_user`](Self::read_user) (`GRANTED` false) and
    /// [`read_user_granted`](Self::read_user_granted) (`GRANTED` true).
    ///
    /// # Safety
    /// With `GRANTED`, that of [`read_user_granted`](Self::read_user_granted).
    #[inline(always)]
    unsafe fn read_locked<const WITH_TIME: bool, const GRANTED: bool>(
        &self,
        rounds: u32,
    ) -> Result<(CounterRead, Option<TimeNow>), PageBusy> {
        let lock = self.atomic32(offset::LOCK);
        let mut round = 0;
        while round < rounds {
            let seq = lock.load(Ordering::Acquire);
            if seq & 1 == 0 {
                // SAFETY: passed on from the caller.
                let got = unsafe { self.read_user_unlocked::<WITH_TIME, GRANTED>() };
                fence(Ordering::Acquire);
                if lock.load(Ordering::Relaxed) == seq {
                    return Ok(got);
                }
            }
            round += 1;
            std::hint::spin_loop();
        }
        Err(PageBusy { rounds })
    }

    /// The fields, clock and counter of one attempt, to be made after an even read of the lock
    /// and kept only if the lock reads the same afterwards.
    ///
    /// # Safety
    /// With `GRANTED`, that of [`read_user_granted`](Self::read_user_granted).
    #[inline(always)]
    unsafe fn read_user_unlocked<const WITH_TIME: bool, const GRANTED: bool>(
        &self,
    ) -> (CounterRead, Option<TimeNow>) {
        let mut counter = CounterRead {
            index: self.load32(offset::INDEX),
            offset: self.load64(offset::OFFSET) as i64,
            capabilities: self.load64(offset::CAPABILITIES),
            pmc_width: self.load16(offset::PMC_WIDTH),
            pmc: None,
        };
        let mut time = None;
        if self.is_kernel_page() && counter.has(cap::USER_RDPMC) && counter.index != 0 {
            // The clock and the times first, so that only two values live across the counter
            // read; all of it lies between the two reads of the lock.
            if WITH_TIME && counter.has(cap::USER_TIME) {
                if let Some(clock) = read_clock() {
                    let read = TimeRead {
                        clock,
                        time_enabled: self.load64(offset::TIME_ENABLED),
                        time_running: self.load64(offset::TIME_RUNNING),
                        time_shift: self.load16(offset::TIME_SHIFT),
                        time_mult: self.load32(offset::TIME_MULT),
                        time_offset: self.load64(offset::TIME_OFFSET),
                        time_cycles: self.load64(offset::TIME_CYCLES),
                        time_mask: self.load64(offset::TIME_MASK),
                    };
                    time = Some(read.now(counter.has(cap::USER_TIME_SHORT)));
                }
            }
            // SAFETY: the page was mapped by `map` from a perf event descriptor, grants the read
            // (cap_user_rdpmc, index ≠ 0, both checked just above), and the caller reads the lock
            // before (even) and after (unchanged) this call; with `GRANTED`, the caller's contract
            // says user space may read every counter now.
            counter.pmc = unsafe {
                if GRANTED {
                    read_counter_granted(counter.index)
                } else {
                    read_counter(counter.index)
                }
            };
            if counter.pmc.is_none() {
                time = None;
            }
        }
        (counter, time)
    }
}

/// That this thread just read a counter from user space, and so may read the others of its group
/// without checking again ([`PerfPage::read_user_granted`]): on arm64, [`PerfPage::read_user`] reads
/// a counter only when PMUSERENR_EL0 lets user space read every counter, and Linux keeps it so while
/// the thread has a user-access event. Neither `Send` nor `Sync`: it holds for the thread that made
/// it. Should another thread close this thread's last user-access event in between, or a caller make
/// one from a [`CounterRead`] of its own, a read traps (SIGILL) and ends the process, as any
/// user-space counter read racing that close does; it is never undefined behaviour.
#[derive(Clone, Copy, Debug)]
pub struct UserAccess {
    _this_thread: std::marker::PhantomData<*const ()>,
}

impl UserAccess {
    /// The access a read with a value (`pmc` set) shows, or `None`.
    #[inline(always)]
    pub fn shown_by(read: &CounterRead) -> Option<UserAccess> {
        read.pmc.map(|_| UserAccess {
            _this_thread: std::marker::PhantomData,
        })
    }
}

/// The counter named by a page's `index`, read with the instruction the kernel granted, or `None`
/// where this architecture has no user-space read (the page's `cap_user_rdpmc` is then 0 anyway).
///
/// # Safety
/// `index` must come from a page mapped by [`PerfPage::map`] from a perf event of this process, read
/// under its lock with `cap_user_rdpmc` set and `index` non-zero, and the call must be made before the
/// lock is read again (so that a changed page discards the value). On x86-64 the kernel then lets the
/// process execute `rdpmc` for that counter; on aarch64 the read checks first that PMUSERENR_EL0 lets
/// EL0 read every counter, cycle and event (as Linux grants them, together), and gives `None` when
/// it does not.
///
/// Always in line: the read is a handful of instructions around one jump, on the hot path of a
/// sample, and a call would make the caller save and restore what it holds across it.
#[inline(always)]
pub unsafe fn read_counter(index: u32) -> Option<u64> {
    #[cfg(target_arch = "aarch64")]
    {
        use pmu_regs::hw::el0::El0Pmu;
        // SAFETY: the kernel's Arm PMU driver granted this page user access (the caller's contract),
        // so the PE implements PMUv3 and EL0 reads of PMUSERENR_EL0 are not trapped.
        let pmu = unsafe { El0Pmu::new() };
        if !pmu.pmuserenr().el0_may_read_all_counters() {
            return None;
        }
    }
    // SAFETY: the caller's contract, and on aarch64 the check just above.
    unsafe { read_counter_granted(index) }
}

/// [`read_counter`] without the check of PMUSERENR_EL0 on aarch64: for the other counters of a group
/// once one was read.
///
/// # Safety
/// That of [`read_counter`]; and on aarch64, PMUSERENR_EL0 must let EL0 read every counter now, as
/// [`read_counter`] (a value read) found for this thread just before. Linux keeps it so while the
/// thread has a user-access event: should another thread close the last one in between, the read
/// traps (SIGILL), as any user-space read racing that close can.
#[inline(always)]
pub unsafe fn read_counter_granted(index: u32) -> Option<u64> {
    #[cfg(target_arch = "aarch64")]
    {
        use pmu_regs::hw::el0::{El0Counter, El0Pmu};
        let counter = El0Counter::from_perf_index(index)?;
        // SAFETY: as in `read_counter`: the PE implements PMUv3 and the counter the page names
        // exists; the caller's contract says EL0 may read it now.
        unsafe { El0Pmu::new().read_granted(counter) }
    }
    #[cfg(target_arch = "x86_64")]
    {
        let ecx = index.checked_sub(1)?;
        let (lo, hi): (u32, u32);
        // SAFETY: the page grants `rdpmc` of counter `index − 1` to this process (the caller's
        // contract: the kernel sets CR4.PCE for a process that maps such a page); the instruction
        // reads only that counter into EDX:EAX.
        unsafe {
            std::arch::asm!(
                "rdpmc",
                in("ecx") ecx,
                out("eax") lo,
                out("edx") hi,
                options(nomem, nostack, preserves_flags)
            );
        }
        Some(u64::from(hi) << 32 | u64::from(lo))
    }
    #[cfg(not(any(target_arch = "aarch64", target_arch = "x86_64")))]
    {
        let _ = index;
        None
    }
}

/// The clock the page's `time_*` fields convert to nanoseconds (`cap_user_time`): the virtual counter
/// `CNTVCT_EL0` on aarch64, the TSC on x86-64; `None` elsewhere.
#[inline]
pub fn read_clock() -> Option<u64> {
    #[cfg(target_arch = "aarch64")]
    {
        let value: u64;
        // SAFETY: Linux lets EL0 read CNTVCT_EL0 (the vDSO's clock_gettime does; where an erratum
        // forbids it, the kernel traps and emulates the read). ISB keeps the read after the loads
        // before it; neither instruction touches memory.
        unsafe {
            std::arch::asm!(
                "isb",
                "mrs {0}, cntvct_el0",
                out(reg) value,
                options(nomem, nostack, preserves_flags)
            );
        }
        Some(value)
    }
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: RDTSC reads the time-stamp counter into EDX:EAX and touches no memory. (A process
        // that disabled it for itself with prctl(PR_SET_TSC) would get SIGSEGV; this crate never does.)
        Some(unsafe { std::arch::x86_64::_rdtsc() })
    }
    #[cfg(not(any(target_arch = "aarch64", target_arch = "x86_64")))]
    {
        None
    }
}

thread_local! {
    /// This thread's id, asked of the kernel once.
    static THREAD_ID: std::cell::Cell<i32> = const { std::cell::Cell::new(0) };
}

/// The kernel's id of the calling thread (`gettid`), cached per thread after the first call.
#[inline]
pub fn current_thread_id() -> i32 {
    THREAD_ID.with(|id| {
        if id.get() == 0 {
            id.set(rustix::thread::gettid().as_raw_nonzero().get());
        }
        id.get()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicBool;
    use std::sync::Arc;

    #[test]
    fn offsets_follow_the_uapi_layout() {
        // u32 version, compat_version, lock, index; s64 offset; u64 time_enabled, time_running,
        // capabilities; u16 pmc_width, time_shift; u32 time_mult; u64 time_offset, time_zero;
        // u32 size, reserved; u64 time_cycles, time_mask.
        let sizes = [4, 4, 4, 4, 8, 8, 8, 8, 2, 2, 4, 8, 8, 4, 4, 8, 8];
        let mut at = 0usize;
        let mut starts = Vec::new();
        for s in sizes {
            // Aligned to its own size, as `PerfPage::field`'s unchecked views need.
            assert!(
                at.is_multiple_of(s),
                "the {s}-byte field at {at} is misaligned"
            );
            starts.push(at);
            at += s;
        }
        assert_eq!(starts[2], offset::LOCK);
        assert_eq!(starts[3], offset::INDEX);
        assert_eq!(starts[4], offset::OFFSET);
        assert_eq!(starts[7], offset::CAPABILITIES);
        assert_eq!(starts[8], offset::PMC_WIDTH);
        assert_eq!(starts[10], offset::TIME_MULT);
        assert_eq!(starts[12], offset::TIME_ZERO);
        assert_eq!(starts[15], offset::TIME_CYCLES);
        assert_eq!(starts[16], offset::TIME_MASK);
        assert_eq!(at, offset::END);
    }

    #[test]
    fn a_still_page_reads_in_one_round() {
        let page = PerfPage::in_memory();
        let fields = PageFields {
            index: 3,
            offset: -42,
            time_enabled: 10,
            time_running: 9,
            capabilities: cap::USER_RDPMC | cap::USER_TIME,
            pmc_width: 32,
            time_shift: 31,
            time_mult: 7,
            time_offset: 5,
            time_zero: 6,
            time_cycles: 8,
            time_mask: 0xFF,
        };
        page.store_for_test(&fields);
        let got = page.read(4, |f| f.index * 2).unwrap();
        assert_eq!(got.fields, fields);
        assert_eq!((got.reads, got.rounds), (6, 1));
        assert!(got.fields.has(cap::USER_RDPMC));
        assert!(!got.fields.has(cap::USER_TIME_SHORT));
    }

    #[test]
    fn a_page_being_written_is_given_up_after_the_bound() {
        let page = PerfPage::in_memory();
        page.lock_word().store(1, Ordering::SeqCst); // an update in progress, forever
        assert_eq!(page.read(16, |_| ()), Err(PageBusy { rounds: 16 }));
        page.lock_word().store(2, Ordering::SeqCst);
        // A page that changes under every read is given up too.
        let mut calls = 0;
        let result = page.read(5, |_| {
            calls += 1;
            page.lock_word().fetch_add(2, Ordering::SeqCst);
        });
        assert_eq!(result, Err(PageBusy { rounds: 5 }));
        assert_eq!(calls, 5);
        // And one that changes once is read on the second round.
        let mut first = true;
        let result = page.read(5, |_| {
            if std::mem::take(&mut first) {
                page.lock_word().fetch_add(2, Ordering::SeqCst);
            }
        });
        assert_eq!(result.map(|l| l.rounds), Ok(2));
    }

    /// A writer thread keeps rewriting the page with `offset == -index`; every snapshot a reader
    /// accepts must be one the writer wrote whole.
    #[test]
    fn concurrent_writes_never_yield_a_torn_snapshot() {
        let page = Arc::new(PerfPage::in_memory());
        let stop = Arc::new(AtomicBool::new(false));
        let writer = {
            let (page, stop) = (Arc::clone(&page), Arc::clone(&stop));
            std::thread::spawn(move || {
                let mut i = 1u32;
                while !stop.load(Ordering::Relaxed) {
                    page.store_for_test(&PageFields {
                        index: i,
                        offset: -i64::from(i),
                        time_enabled: u64::from(i) * 3,
                        ..PageFields::default()
                    });
                    i = i.wrapping_add(1).max(1);
                    // Pauses of varying length, so that readers sometimes find the page still.
                    for _ in 0..(i % 64) * 16 {
                        std::hint::spin_loop();
                    }
                    if i.is_multiple_of(64) {
                        std::thread::yield_now();
                    }
                }
            })
        };
        let mut accepted = 0;
        let mut attempts = 0u64;
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        // Until enough snapshots were accepted (the writer pauses now and then) or time is up.
        while accepted < 200 && std::time::Instant::now() < deadline {
            attempts += 1;
            if let Ok(l) = page.read(64, |f| f.index) {
                let f = l.fields;
                if f.index != 0 {
                    assert_eq!(f.offset, -i64::from(f.index), "{f:?}");
                    assert_eq!(f.time_enabled, u64::from(f.index) * 3, "{f:?}");
                    assert_eq!(l.reads, f.index);
                    accepted += 1;
                }
            }
        }
        eprintln!("{accepted} snapshots accepted in {attempts} attempts");
        stop.store(true, Ordering::Relaxed);
        writer.join().unwrap();
        assert!(accepted > 0, "no snapshot was ever accepted");
    }

    #[test]
    fn only_perf_descriptors_are_mapped() {
        let file = std::fs::File::open("/dev/zero").unwrap();
        use std::os::fd::AsFd;
        let err = PerfPage::map(file.as_fd()).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
    }

    #[test]
    fn thread_ids_differ_between_threads_and_stay_put() {
        let here = current_thread_id();
        assert!(here > 0);
        assert_eq!(current_thread_id(), here);
        let there = std::thread::spawn(current_thread_id).join().unwrap();
        assert!(there > 0 && there != here);
    }

    #[test]
    fn a_page_not_mapped_from_the_kernel_never_reaches_the_counter() {
        let page = PerfPage::in_memory();
        page.store_for_test(&PageFields {
            index: 1,
            capabilities: cap::USER_RDPMC | cap::USER_TIME,
            pmc_width: 48,
            ..PageFields::default()
        });
        let (counter, time) = page.read_user::<true>(4).unwrap();
        assert_eq!(counter.pmc, None);
        assert_eq!(time, None);
        assert_eq!((counter.index, counter.pmc_width), (1, 48));
    }

    #[test]
    fn the_clock_moves_forward_where_there_is_one() {
        let a = read_clock();
        let b = read_clock();
        if cfg!(any(target_arch = "aarch64", target_arch = "x86_64")) {
            let (a, b) = (a.expect("a clock on this architecture"), b.unwrap());
            assert!(b >= a);
        } else {
            assert_eq!(
                (a, b),
                (None, None),
                "no clock is known on this architecture"
            );
        }
    }
}
