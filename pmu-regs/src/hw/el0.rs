//! Counter reads from user space (EL0), each checked against PMUSERENR_EL0 before the counter
//! register is touched, so a denied read is an error value rather than a trapped instruction.
//!
//! On Linux, EL0 may read counters only while the task has a perf event open with user access: with
//! `kernel.perf_user_access = 1`, an event opened with `config1` bit 1 (`rdpmc`) and its first page
//! mapped, the kernel sets PMUSERENR_EL0 to ER | CR while the task runs and names the event's
//! counter in the page's `index` (32 for PMCCNTR_EL0, n + 1 for `PMEVCNTR<n>_EL0`, 0 for none; see
//! [`El0Counter::from_perf_index`]). Otherwise PMUSERENR_EL0 reads 0 and a counter read would trap.

use thiserror::Error;

use crate::encoding::PmuRegister;
use crate::regs::pmuserenr::Pmuserenr;
use crate::user_read::{sign_extend, user_count, PmcWidth};

use super::sysreg;

/// A counter EL0 can be granted: the cycle counter or an event counter.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum El0Counter {
    /// PMCCNTR_EL0.
    Cycles,
    /// `PMEVCNTR<n>_EL0`, n ≤ 30.
    Event(u8),
}

impl El0Counter {
    /// The counter a Linux `perf_event_mmap_page.index` names on arm64: 32 is the cycle counter,
    /// 1–31 are event counters 0–30, 0 means the task may not read the event from user space.
    ///
    /// ```
    /// use pmu_regs::hw::el0::El0Counter;
    /// assert_eq!(El0Counter::from_perf_index(32), Some(El0Counter::Cycles));
    /// assert_eq!(El0Counter::from_perf_index(1), Some(El0Counter::Event(0)));
    /// assert_eq!(El0Counter::from_perf_index(0), None);
    /// ```
    #[inline]
    pub const fn from_perf_index(index: u32) -> Option<El0Counter> {
        match index {
            32 => Some(El0Counter::Cycles),
            1..=31 => Some(El0Counter::Event((index - 1) as u8)),
            _ => None,
        }
    }

    /// The `perf_event_mmap_page.index` that names this counter: the inverse of
    /// [`from_perf_index`](Self::from_perf_index).
    ///
    /// ```
    /// use pmu_regs::hw::el0::El0Counter;
    /// assert_eq!(El0Counter::Cycles.perf_index(), 32);
    /// assert_eq!(El0Counter::Event(5).perf_index(), 6);
    /// ```
    pub const fn perf_index(self) -> u32 {
        match self {
            El0Counter::Cycles => 32,
            El0Counter::Event(n) => n as u32 + 1,
        }
    }

    /// The system register holding the count.
    #[inline]
    pub const fn register(self) -> PmuRegister {
        match self {
            El0Counter::Cycles => PmuRegister::Pmccntr,
            El0Counter::Event(n) => PmuRegister::Pmevcntr(n),
        }
    }
}

/// An EL0 counter read refused before the counter register was touched.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum El0ReadError {
    /// PMUSERENR_EL0 does not let EL0 read the register (on Linux: `kernel.perf_user_access` is 0,
    /// or no event with user access is open and mapped by this task).
    #[error("EL0 may not read {register}: PMUSERENR_EL0 is {:#x}", pmuserenr.bits())]
    NotPermitted {
        /// The register that was to be read.
        register: PmuRegister,
        /// PMUSERENR_EL0 as read just before.
        pmuserenr: Pmuserenr,
    },
    /// The register cannot be read at all (an event counter number above 30).
    #[error(transparent)]
    Register(#[from] sysreg::HwError),
}

/// The PMU of the executing PE as seen from EL0.
#[derive(Debug)]
pub struct El0Pmu {
    _private: (),
}

impl El0Pmu {
    /// Access to the PMU from EL0.
    ///
    /// # Safety
    /// The PE implements PMUv3 and EL0 reads of PMUSERENR_EL0 are not trapped (on Linux: the kernel
    /// drives the PMU with its PMUv3 driver, i.e. an `armv8_*` PMU appears under
    /// `/sys/bus/event_source/devices`), and every [`El0Counter::Event`] later passed to
    /// [`read`](Self::read) exists on this PE (below PMCR_EL0.N), as the counters a Linux perf mmap
    /// page names do. A read of a register that is not implemented is UNDEFINED.
    pub const unsafe fn new() -> El0Pmu {
        El0Pmu { _private: () }
    }

    /// PMUSERENR_EL0 now.
    #[inline(always)]
    pub fn pmuserenr(&self) -> Pmuserenr {
        // SAFETY: `new`'s contract: PMUv3 is implemented and EL0 reads of PMUSERENR_EL0, which the
        // architecture always permits at EL0, are not trapped.
        Pmuserenr::from_bits(unsafe { sysreg::read_pmuserenr() })
    }

    /// Reads `counter` if PMUSERENR_EL0 lets EL0 read it; otherwise says so without touching it.
    ///
    /// The check and the read are two instructions: a task that closes its last user-access perf event
    /// on another thread in between can still be stopped by a trap (SIGILL on Linux), never by
    /// undefined behaviour.
    #[inline]
    pub fn read(&self, counter: El0Counter) -> Result<u64, El0ReadError> {
        let register = counter.register();
        let pmuserenr = self.pmuserenr();
        if !pmuserenr.el0_may_read(register) {
            return Err(El0ReadError::NotPermitted {
                register,
                pmuserenr,
            });
        }
        // SAFETY: PMUSERENR_EL0 grants EL0 this read (checked just above), and `new`'s contract says
        // the counter exists on this PE.
        Ok(unsafe { sysreg::read(register) }?)
    }

    /// [`read`](Self::read) without the reason of a refusal: the counter, or `None` when
    /// PMUSERENR_EL0 does not let EL0 read it (or an event counter number is above 30), checked
    /// the same way just before the read. A few instructions and one jump on the counter number,
    /// always inlined: the form for a sampling loop.
    ///
    /// ```no_run
    /// use pmu_regs::hw::el0::{El0Counter, El0Pmu};
    /// // SAFETY: the kernel drives this PE's PMUv3 and granted this task user access.
    /// let pmu = unsafe { El0Pmu::new() };
    /// let cycles: Option<u64> = pmu.try_read(El0Counter::Cycles);
    /// # let _ = cycles;
    /// ```
    #[inline(always)]
    pub fn try_read(&self, counter: El0Counter) -> Option<u64> {
        let enables = self.pmuserenr();
        match counter {
            El0Counter::Cycles => {
                if !(enables.en() || enables.cr()) {
                    return None;
                }
                // SAFETY: EN or CR lets EL0 read PMCCNTR_EL0 (checked just above); `new`'s
                // contract says PMUv3 is implemented, which includes the cycle counter.
                Some(unsafe { sysreg::read_pmccntr() })
            }
            El0Counter::Event(n) => {
                if !(enables.en() || enables.er()) {
                    return None;
                }
                // SAFETY: EN or ER lets EL0 read the event counters (checked just above), and
                // `new`'s contract says counter `n` exists on this PE; above 30 nothing is read.
                unsafe { sysreg::read_pmevcntr(n) }
            }
        }
    }

    /// Reads `counter` without looking at PMUSERENR_EL0: the form for the other counters of a group
    /// once [`Pmuserenr::el0_may_read_all_counters`] was checked for the first (`None` only for an
    /// event counter number above 30, where nothing is read).
    ///
    /// # Safety
    /// PMUSERENR_EL0 must let EL0 read `counter` now. On Linux it stays open for a thread while the
    /// thread has a user-access perf event, so a check made by this thread just before holds unless
    /// another thread closed the last such event in between; then the read traps (SIGILL), which is
    /// never undefined behaviour but ends the process.
    #[inline(always)]
    pub unsafe fn read_granted(&self, counter: El0Counter) -> Option<u64> {
        match counter {
            // SAFETY: the caller's contract grants the read; `new`'s says the counter exists.
            El0Counter::Cycles => Some(unsafe { sysreg::read_pmccntr() }),
            // SAFETY: as above; above 30 nothing is read.
            El0Counter::Event(n) => unsafe { sysreg::read_pmevcntr(n) },
        }
    }

    /// Reads `counter` and sign-extends its low `width` bits ([`sign_extend`]): the value a perf
    /// mmap page's `offset` is to be added to.
    pub fn read_pmc(&self, counter: El0Counter, width: PmcWidth) -> Result<i64, El0ReadError> {
        Ok(sign_extend(self.read(counter)?, width))
    }

    /// The event count at this instant, from a perf mmap page's `offset` and `pmc_width` and a read of
    /// `counter` ([`user_count`]). The page must have been read under its sequence lock together with
    /// this call (see `perf_event_mmap_page`): the sum is only meaningful if the lock did not change.
    pub fn read_count(
        &self,
        counter: El0Counter,
        width: PmcWidth,
        offset: i64,
    ) -> Result<u64, El0ReadError> {
        Ok(user_count(offset, self.read(counter)?, width))
    }
}
