//! The `perf_event_attr` record handed to `perf_event_open(2)`, and the constants around it.
//!
//! Only the first 64 bytes (`PERF_ATTR_SIZE_VER0`) are defined: every kernel since 2.6.31 accepts that
//! size, and the counting mode used here needs nothing from the later extensions. Setting `size`
//! to 64 tells a newer kernel that the remaining fields are zero.

/// `PERF_TYPE_HARDWARE`: a generic hardware event (`config` is a `PERF_COUNT_HW_*` number).
pub const PERF_TYPE_HARDWARE: u32 = 0;
/// `PERF_TYPE_SOFTWARE`: a kernel software event (`config` is a `PERF_COUNT_SW_*` number).
pub const PERF_TYPE_SOFTWARE: u32 = 1;
/// `PERF_TYPE_RAW`: an implementation-defined event; on Arm `config` is the PMU event number.
pub const PERF_TYPE_RAW: u32 = 4;

/// `PERF_ATTR_SIZE_VER0`: the size of [`PerfEventAttr`].
pub const PERF_ATTR_SIZE_VER0: u32 = 64;

/// `PERF_FORMAT_TOTAL_TIME_ENABLED`: the read carries the time the event was enabled.
pub const PERF_FORMAT_TOTAL_TIME_ENABLED: u64 = 1 << 0;
/// `PERF_FORMAT_TOTAL_TIME_RUNNING`: the read carries the time the event was on a hardware counter.
pub const PERF_FORMAT_TOTAL_TIME_RUNNING: u64 = 1 << 1;
/// `PERF_FORMAT_ID`: each value is followed by the event's unique id.
pub const PERF_FORMAT_ID: u64 = 1 << 2;
/// `PERF_FORMAT_GROUP`: reading the leader returns every member of the group at once.
pub const PERF_FORMAT_GROUP: u64 = 1 << 3;

/// `PERF_FLAG_FD_CLOEXEC`: the new descriptor is close-on-exec.
pub const PERF_FLAG_FD_CLOEXEC: u64 = 1 << 3;

/// Bit flags of the `perf_event_attr` bit-field word (`disabled`, `inherit`, ...).
pub mod flag {
    /// `disabled`: the event starts off; only the group leader should set it.
    pub const DISABLED: u64 = 1 << 0;
    /// `inherit`: children created after the open are counted too.
    pub const INHERIT: u64 = 1 << 1;
    /// `pinned`: the group is always on the PMU while it can count (never multiplexed out); when it
    /// cannot be put on, it goes into an error state where `read()` returns end-of-file.
    pub const PINNED: u64 = 1 << 2;
    /// `exclude_kernel`: do not count while the CPU runs kernel code.
    pub const EXCLUDE_KERNEL: u64 = 1 << 5;
    /// `exclude_hv`: do not count while the CPU runs hypervisor code.
    pub const EXCLUDE_HV: u64 = 1 << 6;
    /// `enable_on_exec`: the event switches itself on when the target calls `execve`.
    pub const ENABLE_ON_EXEC: u64 = 1 << 12;
    /// `watermark`: wake a poller when `wakeup_watermark` bytes are in the ring (not every n events).
    pub const WATERMARK: u64 = 1 << 14;
    /// `use_clockid`: sample times are on `clockid` (only in a [`SamplingAttr`](super::SamplingAttr)).
    pub const USE_CLOCKID: u64 = 1 << 25;
}

/// `PERF_SAMPLE_TIME`: a sample record carries its time.
pub const PERF_SAMPLE_TIME: u64 = 1 << 2;
/// `PERF_SAMPLE_READ`: a sample record carries a read of the event (of its group with `PERF_FORMAT_GROUP`).
pub const PERF_SAMPLE_READ: u64 = 1 << 4;
/// `PERF_SAMPLE_IDENTIFIER`: a sample record starts with the id of the event that wrote it.
pub const PERF_SAMPLE_IDENTIFIER: u64 = 1 << 16;
/// `PERF_COUNT_SW_CPU_CLOCK`: the software event of a high-resolution timer, the clock of periodic sampling.
pub const PERF_COUNT_SW_CPU_CLOCK: u64 = 0;
/// `PERF_ATTR_SIZE_VER3`: the size of [`SamplingAttr`], the first with `clockid`.
pub const PERF_ATTR_SIZE_VER3: u32 = 96;
/// `CLOCK_MONOTONIC_RAW`, the clock sample times are put on (as gatord does).
pub const CLOCK_MONOTONIC_RAW: i32 = 4;

/// `perf_event_attr` as far as `PERF_ATTR_SIZE_VER0`, laid out exactly as the kernel reads it.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PerfEventAttr {
    /// Major event type (`PERF_TYPE_*`).
    pub type_: u32,
    /// Size of this record in bytes: [`PERF_ATTR_SIZE_VER0`].
    pub size: u32,
    /// Event number within `type_`.
    pub config: u64,
    /// Sampling period or frequency; zero for counting.
    pub sample_period: u64,
    /// What a sample record holds; zero for counting.
    pub sample_type: u64,
    /// Layout of a `read()` of the event (`PERF_FORMAT_*`).
    pub read_format: u64,
    /// The bit-field word (see [`flag`]).
    pub flags: u64,
    /// Wake-up every n events; zero for counting.
    pub wakeup_events: u32,
    /// Breakpoint type; zero for non-breakpoint events.
    pub bp_type: u32,
    /// Extension of `config` (`config1`).
    pub config1: u64,
}

const _: () = assert!(core::mem::size_of::<PerfEventAttr>() == PERF_ATTR_SIZE_VER0 as usize);

/// `perf_event_attr` as far as `PERF_ATTR_SIZE_VER3`: [`PerfEventAttr`] and the fields up to `clockid`,
/// which a sampling event needs to stamp its records on a clock user space can read.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SamplingAttr {
    /// The first 64 bytes; `base.size` is [`PERF_ATTR_SIZE_VER3`].
    pub base: PerfEventAttr,
    /// `config2`.
    pub config2: u64,
    /// `branch_sample_type`.
    pub branch_sample_type: u64,
    /// `sample_regs_user`.
    pub sample_regs_user: u64,
    /// `sample_stack_user`.
    pub sample_stack_user: u32,
    /// `clockid`, used with [`flag::USE_CLOCKID`].
    pub clockid: i32,
}

const _: () = assert!(core::mem::size_of::<SamplingAttr>() == PERF_ATTR_SIZE_VER3 as usize);

impl SamplingAttr {
    /// `base` widened to [`PERF_ATTR_SIZE_VER3`], the new fields zero.
    pub fn new(mut base: PerfEventAttr) -> Self {
        base.size = PERF_ATTR_SIZE_VER3;
        SamplingAttr {
            base,
            ..SamplingAttr::default()
        }
    }

    /// The bytes the kernel reads, little-endian as on every target of this crate: what a PEA message of
    /// gatord's protocol carries.
    pub fn to_bytes(&self) -> Vec<u8> {
        let b = &self.base;
        let mut out = Vec::with_capacity(PERF_ATTR_SIZE_VER3 as usize);
        out.extend_from_slice(&b.type_.to_le_bytes());
        out.extend_from_slice(&b.size.to_le_bytes());
        for word in [
            b.config,
            b.sample_period,
            b.sample_type,
            b.read_format,
            b.flags,
        ] {
            out.extend_from_slice(&word.to_le_bytes());
        }
        out.extend_from_slice(&b.wakeup_events.to_le_bytes());
        out.extend_from_slice(&b.bp_type.to_le_bytes());
        for word in [
            b.config1,
            self.config2,
            self.branch_sample_type,
            self.sample_regs_user,
        ] {
            out.extend_from_slice(&word.to_le_bytes());
        }
        out.extend_from_slice(&self.sample_stack_user.to_le_bytes());
        out.extend_from_slice(&self.clockid.to_le_bytes());
        out
    }
}

impl PerfEventAttr {
    /// A counting attribute for event `config` of type `type_`, with every flag clear.
    pub fn counting(type_: u32, config: u64) -> Self {
        PerfEventAttr {
            type_,
            size: PERF_ATTR_SIZE_VER0,
            config,
            ..PerfEventAttr::default()
        }
    }

    /// Whether every bit of `flag` is set in the bit-field word.
    pub fn has(&self, flag: u64) -> bool {
        self.flags & flag == flag
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn field_offsets_match_the_kernel_abi() {
        assert_eq!(core::mem::offset_of!(PerfEventAttr, type_), 0);
        assert_eq!(core::mem::offset_of!(PerfEventAttr, size), 4);
        assert_eq!(core::mem::offset_of!(PerfEventAttr, config), 8);
        assert_eq!(core::mem::offset_of!(PerfEventAttr, read_format), 32);
        assert_eq!(core::mem::offset_of!(PerfEventAttr, flags), 40);
        assert_eq!(core::mem::offset_of!(PerfEventAttr, config1), 56);
    }

    #[test]
    fn the_sampling_attribute_has_the_kernels_ver3_layout() {
        assert_eq!(core::mem::offset_of!(SamplingAttr, config2), 64);
        assert_eq!(core::mem::offset_of!(SamplingAttr, sample_regs_user), 80);
        assert_eq!(core::mem::offset_of!(SamplingAttr, clockid), 92);
        let mut base = PerfEventAttr::counting(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK);
        base.sample_period = 100_000;
        base.flags = flag::USE_CLOCKID;
        let mut attr = SamplingAttr::new(base);
        attr.clockid = CLOCK_MONOTONIC_RAW;
        let bytes = attr.to_bytes();
        assert_eq!(bytes.len(), 96);
        assert_eq!(&bytes[4..8], &96u32.to_le_bytes());
        assert_eq!(&bytes[16..24], &100_000u64.to_le_bytes());
        assert_eq!(&bytes[92..96], &4i32.to_le_bytes());
        if cfg!(target_endian = "little") {
            // SAFETY: `SamplingAttr` is `repr(C)` plain integers without padding (96 bytes, asserted).
            let raw = unsafe {
                std::slice::from_raw_parts((&attr as *const SamplingAttr).cast::<u8>(), 96)
            };
            assert_eq!(raw, &bytes[..]);
        }
    }

    #[test]
    fn counting_sets_size_and_nothing_else() {
        let attr = PerfEventAttr::counting(PERF_TYPE_SOFTWARE, 1);
        assert_eq!(attr.size, 64);
        assert_eq!(attr.flags, 0);
        assert!(!attr.has(flag::DISABLED));
    }
}
