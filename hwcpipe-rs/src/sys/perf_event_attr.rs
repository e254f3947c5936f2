//! The `perf_event_attr` handed to `perf_event_open(2)`: [`PerfEventAttr`] is perf-record's, the one
//! attribute type of the workspace (the reader of perf data decodes the same type a writer opens events
//! with), and this module encodes it into the kernel's own struct for the system call; with the constants
//! around it.
//!
//! The encoding goes as far as `PERF_ATTR_SIZE_VER3` (96 bytes, up to `clockid`): every field of
//! [`PerfEventAttr`] lies within it, and the kernel fields between them that it does not hold
//! (`wakeup_events`, `bp_type`, `branch_sample_type`, `sample_stack_user`) are zero. The attribute's own
//! `size` is what the kernel is told: 64 (`PERF_ATTR_SIZE_VER0`, which every kernel since 2.6.31 accepts)
//! for a counting event, 96 for one that chooses its clock. A larger `size` is told as 96: its fields past
//! 96 are zero, which the kernel reads the same as their absence.

pub use perf_record::{PerfEventAttr, ReadFormat, SampleType};

/// `PERF_TYPE_HARDWARE`: a generic hardware event (`config` is a `PERF_COUNT_HW_*` number).
pub const PERF_TYPE_HARDWARE: u32 = 0;
/// `PERF_TYPE_SOFTWARE`: a kernel software event (`config` is a `PERF_COUNT_SW_*` number).
pub const PERF_TYPE_SOFTWARE: u32 = 1;
/// `PERF_TYPE_RAW`: an implementation-defined event; on Arm `config` is the PMU event number.
pub const PERF_TYPE_RAW: u32 = 4;

/// `PERF_ATTR_SIZE_VER0`: the size of a counting event's attribute ([`PerfEventAttr::counting`]).
pub const PERF_ATTR_SIZE_VER0: u32 = perf_record::PERF_ATTR_SIZE_VER0 as u32;

/// `PERF_FORMAT_TOTAL_TIME_ENABLED`: the read carries the time the event was enabled.
pub const PERF_FORMAT_TOTAL_TIME_ENABLED: u64 = ReadFormat::TOTAL_TIME_ENABLED;
/// `PERF_FORMAT_TOTAL_TIME_RUNNING`: the read carries the time the event was on a hardware counter.
pub const PERF_FORMAT_TOTAL_TIME_RUNNING: u64 = ReadFormat::TOTAL_TIME_RUNNING;
/// `PERF_FORMAT_ID`: each value is followed by the event's unique id.
pub const PERF_FORMAT_ID: u64 = ReadFormat::ID;
/// `PERF_FORMAT_GROUP`: reading the leader returns every member of the group at once.
pub const PERF_FORMAT_GROUP: u64 = ReadFormat::GROUP;

/// `PERF_FLAG_FD_CLOEXEC`: the new descriptor is close-on-exec.
pub const PERF_FLAG_FD_CLOEXEC: u64 = 1 << 3;

/// Bit flags of the `perf_event_attr` bit-field word (`disabled`, `inherit`, ...): perf-record's.
pub use perf_record::flag;

/// `PERF_SAMPLE_TIME`: a sample record carries its time.
pub const PERF_SAMPLE_TIME: u64 = SampleType::TIME;
/// `PERF_SAMPLE_READ`: a sample record carries a read of the event (of its group with `PERF_FORMAT_GROUP`).
pub const PERF_SAMPLE_READ: u64 = SampleType::READ;
/// `PERF_SAMPLE_IDENTIFIER`: a sample record starts with the id of the event that wrote it.
pub const PERF_SAMPLE_IDENTIFIER: u64 = SampleType::IDENTIFIER;
/// `PERF_COUNT_SW_CPU_CLOCK`: the software event of a high-resolution timer, the clock of periodic sampling.
pub const PERF_COUNT_SW_CPU_CLOCK: u64 = 0;
/// `PERF_ATTR_SIZE_VER3`: the size of the attribute of an event that chooses its clock
/// ([`PerfEventAttr::on_clock`]), the first with `clockid`.
pub const PERF_ATTR_SIZE_VER3: u32 = perf_record::PERF_ATTR_SIZE_VER3 as u32;
/// `CLOCK_MONOTONIC_RAW`, the clock sample times are put on (as gatord does).
pub const CLOCK_MONOTONIC_RAW: i32 = perf_record::CLOCK_MONOTONIC_RAW;

/// `struct perf_event_attr` as far as `PERF_ATTR_SIZE_VER3`, laid out exactly as the kernel reads it: what
/// the system call is given, made from a [`PerfEventAttr`] and never seen outside this layer.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct KernelAttr {
    type_: u32,
    size: u32,
    config: u64,
    sample_period: u64,
    sample_type: u64,
    read_format: u64,
    flags: u64,
    wakeup_events: u32,
    bp_type: u32,
    config1: u64,
    config2: u64,
    branch_sample_type: u64,
    sample_regs_user: u64,
    sample_stack_user: u32,
    clockid: i32,
}

const _: () = assert!(core::mem::size_of::<KernelAttr>() == PERF_ATTR_SIZE_VER3 as usize);

impl From<&PerfEventAttr> for KernelAttr {
    /// The kernel's struct of `attr`, telling the kernel `attr.size` bytes, at most the struct's 96 (see
    /// the module documentation): the kernel never reads past it.
    fn from(attr: &PerfEventAttr) -> KernelAttr {
        KernelAttr {
            type_: attr.kind,
            size: attr.size.min(PERF_ATTR_SIZE_VER3),
            config: attr.config,
            sample_period: attr.sample_period_or_freq,
            sample_type: attr.sample_type.0,
            read_format: attr.read_format.0,
            flags: attr.flags,
            wakeup_events: 0,
            bp_type: 0,
            config1: attr.config1,
            config2: attr.config2,
            branch_sample_type: 0,
            sample_regs_user: attr.sample_regs_user,
            sample_stack_user: 0,
            clockid: attr.clockid,
        }
    }
}

#[cfg(test)]
impl KernelAttr {
    /// The `size` the kernel is told.
    fn size(&self) -> u32 {
        self.size
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The struct's bytes as the kernel reads them.
    fn bytes(attr: &KernelAttr) -> &[u8] {
        // SAFETY: `KernelAttr` is `repr(C)` plain integers without padding (96 bytes, asserted above), so
        // every byte is initialised; the slice borrows `attr`.
        unsafe {
            std::slice::from_raw_parts(
                std::ptr::from_ref(attr).cast::<u8>(),
                std::mem::size_of::<KernelAttr>(),
            )
        }
    }

    #[test]
    fn field_offsets_match_the_kernel_abi() {
        assert_eq!(core::mem::offset_of!(KernelAttr, type_), 0);
        assert_eq!(core::mem::offset_of!(KernelAttr, size), 4);
        assert_eq!(core::mem::offset_of!(KernelAttr, config), 8);
        assert_eq!(core::mem::offset_of!(KernelAttr, sample_period), 16);
        assert_eq!(core::mem::offset_of!(KernelAttr, read_format), 32);
        assert_eq!(core::mem::offset_of!(KernelAttr, flags), 40);
        assert_eq!(core::mem::offset_of!(KernelAttr, config1), 56);
        assert_eq!(core::mem::offset_of!(KernelAttr, config2), 64);
        assert_eq!(core::mem::offset_of!(KernelAttr, sample_regs_user), 80);
        assert_eq!(core::mem::offset_of!(KernelAttr, clockid), 92);
    }

    #[test]
    fn the_kernels_bytes_are_those_perf_record_encodes() {
        // perf-record encodes the kernel's layout little-endian, as gatord sends it; on a little-endian
        // machine that is what the system call reads.
        let timer = PerfEventAttr {
            sample_period_or_freq: 100_000,
            sample_type: SampleType(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TIME | PERF_SAMPLE_READ),
            read_format: ReadFormat(PERF_FORMAT_GROUP | PERF_FORMAT_ID),
            flags: flag::DISABLED,
            config1: 2,
            config2: 3,
            sample_regs_user: 4,
            ..PerfEventAttr::counting(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK)
        }
        .on_clock(CLOCK_MONOTONIC_RAW);
        let counting = PerfEventAttr::counting(PERF_TYPE_RAW, 0x11);
        for attr in [timer, counting] {
            let kernel = KernelAttr::from(&attr);
            assert_eq!(kernel.size(), attr.size);
            let mut encoded = Vec::new();
            attr.encode(&mut encoded);
            if cfg!(target_endian = "little") {
                assert_eq!(&bytes(&kernel)[..encoded.len()], &encoded[..]);
            }
            assert!(bytes(&kernel)[encoded.len()..].iter().all(|&b| b == 0));
        }
    }

    #[test]
    fn the_kernel_is_told_no_more_than_the_struct_holds() {
        let mut attr = PerfEventAttr::counting(PERF_TYPE_SOFTWARE, 1);
        attr.size = 144;
        assert_eq!(KernelAttr::from(&attr).size(), PERF_ATTR_SIZE_VER3);
        // Too small is passed on, for the kernel to refuse.
        attr.size = 1;
        assert_eq!(KernelAttr::from(&attr).size(), 1);
    }
}
