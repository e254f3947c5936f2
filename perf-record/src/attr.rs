//! `struct perf_event_attr`: the fields that say what an event counts and how its perf records are laid out,
//! for a reader of perf data and for a writer that opens events.
//!
//! A reader decodes it from the bytes gatord announces in PERF_ATTRS PEA messages ([`PerfEventAttr::parse`]):
//! gatord sends the struct in its own native byte order (little-endian on every Arm and x86 target it runs
//! on) with its own `size` (144 in gatord 9.7.2, whose copy of the kernel header is newer than many kernels).
//! Fields beyond `size` read as 0, as the kernel treats them. Offsets are the kernel UAPI's
//! (`linux/perf_event.h`).
//!
//! A writer builds one ([`PerfEventAttr::counting`], the [`flag`] bits, [`PerfEventAttr::on_clock`]) and hands
//! it to whatever encodes it for `perf_event_open` (hwcpipe's system-call layer); every field of the kernel's
//! struct that is not here is zero.

use thiserror::Error;

/// The smallest attribute the kernel accepts (`PERF_ATTR_SIZE_VER0`): type … `bp_type`, `config1`.
pub const PERF_ATTR_SIZE_VER0: usize = 64;

/// The attribute up to and including `clockid` (`PERF_ATTR_SIZE_VER3`): the smallest that can choose a clock.
pub const PERF_ATTR_SIZE_VER3: usize = 96;

/// `clockid` value of `CLOCK_MONOTONIC_RAW`, the clock gatord asks perf to stamp records with.
pub const CLOCK_MONOTONIC_RAW: i32 = 4;

/// The bits of `perf_event_attr`'s bit-field word ([`PerfEventAttr::flags`]) that this workspace reads or
/// sets, at the kernel's positions.
pub mod flag {
    /// `disabled`: the event starts off; only a group leader should set it.
    pub const DISABLED: u64 = 1 << 0;
    /// `inherit`: children created after the open are counted too.
    pub const INHERIT: u64 = 1 << 1;
    /// `pinned`: the group is always on the PMU while it can count (never multiplexed out); when it cannot
    /// be put on, it goes into an error state where `read()` returns end-of-file.
    pub const PINNED: u64 = 1 << 2;
    /// `exclude_kernel`: do not count while the CPU runs kernel code.
    pub const EXCLUDE_KERNEL: u64 = 1 << 5;
    /// `exclude_hv`: do not count while the CPU runs hypervisor code.
    pub const EXCLUDE_HV: u64 = 1 << 6;
    /// `freq`: `sample_period` is a frequency in Hz.
    pub const FREQ: u64 = 1 << 10;
    /// `enable_on_exec`: the event switches itself on when the target calls `execve`.
    pub const ENABLE_ON_EXEC: u64 = 1 << 12;
    /// `watermark`: wake a poller when `wakeup_watermark` bytes are in the ring (not every n events).
    pub const WATERMARK: u64 = 1 << 14;
    /// `sample_id_all`: non-sample records end with the sample id fields.
    pub const SAMPLE_ID_ALL: u64 = 1 << 18;
    /// `use_clockid`: record times are on `clockid`, not perf's own clock.
    pub const USE_CLOCKID: u64 = 1 << 25;
    /// `context_switch`: the event also writes context switch records.
    pub const CONTEXT_SWITCH: u64 = 1 << 26;
}

const OFFSET_TYPE: usize = 0;
const OFFSET_SIZE: usize = 4;
const OFFSET_CONFIG: usize = 8;
const OFFSET_SAMPLE_PERIOD: usize = 16;
const OFFSET_SAMPLE_TYPE: usize = 24;
const OFFSET_READ_FORMAT: usize = 32;
const OFFSET_FLAGS: usize = 40;
const OFFSET_CONFIG1: usize = 56;
const OFFSET_CONFIG2: usize = 64;
const OFFSET_SAMPLE_REGS_USER: usize = 80;
const OFFSET_CLOCKID: usize = 92;

/// The bits of `perf_event_attr.sample_type`: which fields a PERF_RECORD_SAMPLE carries, in kernel order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct SampleType(pub u64);

impl SampleType {
    /// `PERF_SAMPLE_IP`.
    pub const IP: u64 = 1 << 0;
    /// `PERF_SAMPLE_TID`: pid and tid, two u32 in one word.
    pub const TID: u64 = 1 << 1;
    /// `PERF_SAMPLE_TIME`.
    pub const TIME: u64 = 1 << 2;
    /// `PERF_SAMPLE_ADDR`.
    pub const ADDR: u64 = 1 << 3;
    /// `PERF_SAMPLE_READ`: the counter values, laid out by `read_format`.
    pub const READ: u64 = 1 << 4;
    /// `PERF_SAMPLE_CALLCHAIN`.
    pub const CALLCHAIN: u64 = 1 << 5;
    /// `PERF_SAMPLE_ID`.
    pub const ID: u64 = 1 << 6;
    /// `PERF_SAMPLE_CPU`: cpu and a reserved u32 in one word.
    pub const CPU: u64 = 1 << 7;
    /// `PERF_SAMPLE_PERIOD`.
    pub const PERIOD: u64 = 1 << 8;
    /// `PERF_SAMPLE_STREAM_ID`.
    pub const STREAM_ID: u64 = 1 << 9;
    /// `PERF_SAMPLE_RAW`.
    pub const RAW: u64 = 1 << 10;
    /// `PERF_SAMPLE_IDENTIFIER`: the id first in every sample and last in every other record.
    pub const IDENTIFIER: u64 = 1 << 16;

    /// Whether every bit of `bits` is set.
    pub fn contains(self, bits: u64) -> bool {
        self.0 & bits == bits
    }

    /// The word index (after the record header) of the sample's id in a PERF_RECORD_SAMPLE, if it has one:
    /// 0 with `IDENTIFIER`, else after IP, TID, TIME and ADDR when `ID` is set.
    pub fn id_word(self) -> Option<usize> {
        if self.contains(Self::IDENTIFIER) {
            return Some(0);
        }
        if !self.contains(Self::ID) {
            return None;
        }
        Some(
            [Self::IP, Self::TID, Self::TIME, Self::ADDR]
                .iter()
                .filter(|&&bit| self.contains(bit))
                .count(),
        )
    }
}

/// The bits of `perf_event_attr.read_format`: how a read (and a sample's READ field) lays out values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct ReadFormat(pub u64);

impl ReadFormat {
    /// `PERF_FORMAT_TOTAL_TIME_ENABLED`.
    pub const TOTAL_TIME_ENABLED: u64 = 1 << 0;
    /// `PERF_FORMAT_TOTAL_TIME_RUNNING`.
    pub const TOTAL_TIME_RUNNING: u64 = 1 << 1;
    /// `PERF_FORMAT_ID`: each value is followed by the event's id.
    pub const ID: u64 = 1 << 2;
    /// `PERF_FORMAT_GROUP`: the values of every event of the group, with their count first.
    pub const GROUP: u64 = 1 << 3;
    /// `PERF_FORMAT_LOST`: each value is followed by the number of lost samples.
    pub const LOST: u64 = 1 << 4;

    /// Whether every bit of `bits` is set.
    pub fn contains(self, bits: u64) -> bool {
        self.0 & bits == bits
    }
}

/// The fields of one `struct perf_event_attr` that matter to a reader of perf data (gatord's or a ring's)
/// and to a writer that opens events; the kernel's other fields are zero.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PerfEventAttr {
    /// `type`: 0 hardware, 1 software, 2 tracepoint, 3 cache, 4 raw, 5 breakpoint, or a dynamic PMU type
    /// (e.g. 8 for `armv8_pmuv3` in the arm64 recording).
    pub kind: u32,
    /// `size` as sent.
    pub size: u32,
    /// `config`: the event within its type (e.g. 0x8 INST_RETIRED on an Arm PMU, 0 CPU_CLOCK for software).
    pub config: u64,
    /// `sample_period`, or `sample_freq` when [`PerfEventAttr::freq`] is set; 0 for a counting-only event.
    pub sample_period_or_freq: u64,
    /// `sample_type`.
    pub sample_type: SampleType,
    /// `read_format`.
    pub read_format: ReadFormat,
    /// The bit-field word (`disabled`, `inherit`, `pinned`, …, `use_clockid`, `context_switch`, …).
    pub flags: u64,
    /// `config1`.
    pub config1: u64,
    /// `config2`.
    pub config2: u64,
    /// `sample_regs_user`.
    pub sample_regs_user: u64,
    /// `clockid` (meaningful when [`PerfEventAttr::use_clockid`]).
    pub clockid: i32,
}

/// Why a `perf_event_attr` could not be decoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum AttrError {
    /// Fewer bytes than `PERF_ATTR_SIZE_VER0`, or fewer than the `size` field claims.
    #[error("perf_event_attr of {available} byte(s) is shorter than {needed}")]
    Short {
        /// The bytes the attribute needs.
        needed: usize,
        /// The bytes given.
        available: usize,
    },
}

impl PerfEventAttr {
    /// A counting attribute for event `config` of type `kind`, `PERF_ATTR_SIZE_VER0` bytes long, every
    /// other field zero (no sampling, no read format, every flag clear).
    pub const fn counting(kind: u32, config: u64) -> PerfEventAttr {
        PerfEventAttr {
            kind,
            size: PERF_ATTR_SIZE_VER0 as u32,
            config,
            sample_period_or_freq: 0,
            sample_type: SampleType(0),
            read_format: ReadFormat(0),
            flags: 0,
            config1: 0,
            config2: 0,
            sample_regs_user: 0,
            clockid: 0,
        }
    }

    /// The same attribute stamping its records on `clockid`: `use_clockid` set, and `size` at least
    /// `PERF_ATTR_SIZE_VER3`, the first that holds the clock.
    pub const fn on_clock(mut self, clockid: i32) -> PerfEventAttr {
        self.flags |= flag::USE_CLOCKID;
        self.clockid = clockid;
        if (self.size as usize) < PERF_ATTR_SIZE_VER3 {
            self.size = PERF_ATTR_SIZE_VER3 as u32;
        }
        self
    }

    /// Whether every bit of `flags` ([`flag`]) is set in the bit-field word.
    pub const fn has(&self, flags: u64) -> bool {
        self.flags & flags == flags
    }

    /// Decodes the attribute bytes of a PEA message (little-endian, at least `PERF_ATTR_SIZE_VER0` and at
    /// least the `size` they claim).
    pub fn parse(bytes: &[u8]) -> Result<PerfEventAttr, AttrError> {
        let short = |needed| AttrError::Short {
            needed,
            available: bytes.len(),
        };
        if bytes.len() < PERF_ATTR_SIZE_VER0 {
            return Err(short(PERF_ATTR_SIZE_VER0));
        }
        let size = u32_at(bytes, OFFSET_SIZE);
        let claimed = usize::try_from(size).unwrap_or(usize::MAX);
        if claimed > bytes.len() {
            return Err(short(claimed));
        }
        // Fields past the announced size (or past the bytes) are absent: the kernel reads them as 0.
        let limit = claimed.max(PERF_ATTR_SIZE_VER0).min(bytes.len());
        let bytes = &bytes[..limit];
        Ok(PerfEventAttr {
            kind: u32_at(bytes, OFFSET_TYPE),
            size,
            config: u64_at(bytes, OFFSET_CONFIG),
            sample_period_or_freq: u64_at(bytes, OFFSET_SAMPLE_PERIOD),
            sample_type: SampleType(u64_at(bytes, OFFSET_SAMPLE_TYPE)),
            read_format: ReadFormat(u64_at(bytes, OFFSET_READ_FORMAT)),
            flags: u64_at(bytes, OFFSET_FLAGS),
            config1: u64_at(bytes, OFFSET_CONFIG1),
            config2: u64_at(bytes, OFFSET_CONFIG2),
            sample_regs_user: u64_at(bytes, OFFSET_SAMPLE_REGS_USER),
            clockid: u32_at(bytes, OFFSET_CLOCKID) as i32,
        })
    }

    /// Whether `freq` is set: [`PerfEventAttr::sample_period_or_freq`] is a frequency in Hz.
    pub fn freq(&self) -> bool {
        self.flags & flag::FREQ != 0
    }

    /// The sample period in events (or ns for the clock events), if the event samples by period.
    pub fn sample_period(&self) -> Option<u64> {
        (!self.freq() && self.sample_period_or_freq != 0).then_some(self.sample_period_or_freq)
    }

    /// The sample frequency in Hz, if the event samples by frequency.
    pub fn sample_freq(&self) -> Option<u64> {
        (self.freq() && self.sample_period_or_freq != 0).then_some(self.sample_period_or_freq)
    }

    /// Whether the event writes sample records of its own (a period or a frequency is set).
    pub fn samples(&self) -> bool {
        self.sample_period_or_freq != 0
    }

    /// Whether the event's value reaches the perf data at all: it samples itself, or it reads with
    /// `PERF_FORMAT_GROUP` and so rides in its group leader's samples. gatord opens a stand-alone counting
    /// event (no period, no group read) for counters configured without an event-based-sampling `count`; such an
    /// event is never read, so its values are never sent.
    pub fn reaches_perf_data(&self) -> bool {
        self.samples() || self.read_format.contains(ReadFormat::GROUP)
    }

    /// `disabled`.
    pub fn disabled(&self) -> bool {
        self.flags & flag::DISABLED != 0
    }

    /// `pinned` (gatord pins group leaders and stand-alone events).
    pub fn pinned(&self) -> bool {
        self.flags & flag::PINNED != 0
    }

    /// `sample_id_all`: non-sample records end with the sample id fields.
    pub fn sample_id_all(&self) -> bool {
        self.flags & flag::SAMPLE_ID_ALL != 0
    }

    /// `use_clockid`: record times are on [`PerfEventAttr::clockid`], not perf's own clock.
    pub fn use_clockid(&self) -> bool {
        self.flags & flag::USE_CLOCKID != 0
    }

    /// `context_switch`: the event also writes context switch records.
    pub fn context_switch(&self) -> bool {
        self.flags & flag::CONTEXT_SWITCH != 0
    }

    /// Whether record times are `CLOCK_MONOTONIC_RAW`, the clock of gatord's SUMMARY and frame timestamps.
    pub fn on_monotonic_raw(&self) -> bool {
        self.use_clockid() && self.clockid == CLOCK_MONOTONIC_RAW
    }

    /// Appends the attribute as `size` (at least `PERF_ATTR_SIZE_VER0`) little-endian bytes, fields past the
    /// decoded ones zero: what gatord sends, for encoders and tests.
    pub fn encode(&self, out: &mut Vec<u8>) {
        let size = usize::try_from(self.size)
            .unwrap_or(PERF_ATTR_SIZE_VER0)
            .max(PERF_ATTR_SIZE_VER0);
        let start = out.len();
        out.resize(start + size, 0);
        let bytes = &mut out[start..];
        put(bytes, OFFSET_TYPE, &self.kind.to_le_bytes());
        put(bytes, OFFSET_SIZE, &(size as u32).to_le_bytes());
        put(bytes, OFFSET_CONFIG, &self.config.to_le_bytes());
        put(
            bytes,
            OFFSET_SAMPLE_PERIOD,
            &self.sample_period_or_freq.to_le_bytes(),
        );
        put(bytes, OFFSET_SAMPLE_TYPE, &self.sample_type.0.to_le_bytes());
        put(bytes, OFFSET_READ_FORMAT, &self.read_format.0.to_le_bytes());
        put(bytes, OFFSET_FLAGS, &self.flags.to_le_bytes());
        put(bytes, OFFSET_CONFIG1, &self.config1.to_le_bytes());
        put(bytes, OFFSET_CONFIG2, &self.config2.to_le_bytes());
        put(
            bytes,
            OFFSET_SAMPLE_REGS_USER,
            &self.sample_regs_user.to_le_bytes(),
        );
        put(bytes, OFFSET_CLOCKID, &self.clockid.to_le_bytes());
    }
}

/// Little-endian u32 at `at`, 0 past the end.
fn u32_at(bytes: &[u8], at: usize) -> u32 {
    bytes
        .get(at..at + 4)
        .and_then(|b| b.try_into().ok())
        .map_or(0, u32::from_le_bytes)
}

/// Little-endian u64 at `at`, 0 past the end.
fn u64_at(bytes: &[u8], at: usize) -> u64 {
    bytes
        .get(at..at + 8)
        .and_then(|b| b.try_into().ok())
        .map_or(0, u64::from_le_bytes)
}

/// Writes `value` at `at` when it fits (fields past a short `size` are dropped, as the kernel would).
fn put(bytes: &mut [u8], at: usize, value: &[u8]) {
    if let Some(slot) = bytes.get_mut(at..at + value.len()) {
        slot.copy_from_slice(value);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// gatord 9.7.2's own CPU clock event (key 0x7ffffffd) from the perf-session recording
    /// (`shared/data/gatord-9.7.2/perf-session/d2c.bin`), its fields as decoded there.
    fn cpu_clock() -> PerfEventAttr {
        PerfEventAttr {
            kind: 1,
            size: 144,
            config: 0,
            sample_period_or_freq: 991_080,
            sample_type: SampleType(0x10217),
            read_format: ReadFormat(0xf),
            flags: 0x204_4000,
            config1: 0,
            config2: 0,
            sample_regs_user: 0,
            clockid: 4,
        }
    }

    #[test]
    fn round_trip_and_accessors() {
        let attr = cpu_clock();
        let mut bytes = Vec::new();
        attr.encode(&mut bytes);
        assert_eq!(bytes.len(), 144);
        assert_eq!(PerfEventAttr::parse(&bytes), Ok(attr));
        assert_eq!(attr.sample_period(), Some(991_080));
        assert_eq!(attr.sample_freq(), None);
        assert!(attr.on_monotonic_raw() && attr.sample_id_all() && !attr.pinned());
        assert!(attr
            .read_format
            .contains(ReadFormat::GROUP | ReadFormat::ID));
        assert_eq!(attr.sample_type.id_word(), Some(0));
        assert!(attr.reaches_perf_data());
    }

    #[test]
    fn counting_only_events_never_reach_the_data() {
        let attr = PerfEventAttr {
            sample_period_or_freq: 0,
            read_format: ReadFormat(0x7),
            ..cpu_clock()
        };
        assert!(!attr.samples() && !attr.reaches_perf_data());
        let freq = PerfEventAttr {
            flags: cpu_clock().flags | (1 << 10),
            sample_period_or_freq: 1000,
            ..cpu_clock()
        };
        assert_eq!(
            (freq.sample_period(), freq.sample_freq()),
            (None, Some(1000))
        );
    }

    #[test]
    fn id_word_without_identifier() {
        let st = SampleType(SampleType::IP | SampleType::TID | SampleType::TIME | SampleType::ID);
        assert_eq!(st.id_word(), Some(3));
        assert_eq!(SampleType(SampleType::TIME).id_word(), None);
    }

    #[test]
    fn short_attributes_are_errors() {
        assert_eq!(
            PerfEventAttr::parse(&[0; 10]),
            Err(AttrError::Short {
                needed: 64,
                available: 10
            })
        );
        let mut bytes = Vec::new();
        cpu_clock().encode(&mut bytes);
        bytes.truncate(100);
        assert_eq!(
            PerfEventAttr::parse(&bytes),
            Err(AttrError::Short {
                needed: 144,
                available: 100
            })
        );
    }

    #[test]
    fn a_writer_builds_a_counting_event_then_puts_it_on_a_clock() {
        let counting = PerfEventAttr::counting(1, 0);
        let mut bytes = Vec::new();
        counting.encode(&mut bytes);
        assert_eq!(bytes.len(), PERF_ATTR_SIZE_VER0);
        assert_eq!(PerfEventAttr::parse(&bytes), Ok(counting));
        assert!(!counting.samples() && counting.has(0) && !counting.has(flag::DISABLED));
        let timer = PerfEventAttr {
            sample_period_or_freq: 100_000,
            flags: flag::DISABLED,
            ..counting
        }
        .on_clock(CLOCK_MONOTONIC_RAW);
        assert_eq!(timer.size as usize, PERF_ATTR_SIZE_VER3);
        assert!(timer.has(flag::DISABLED | flag::USE_CLOCKID) && timer.on_monotonic_raw());
        bytes.clear();
        timer.encode(&mut bytes);
        assert_eq!(&bytes[92..96], &CLOCK_MONOTONIC_RAW.to_le_bytes());
        assert_eq!(PerfEventAttr::parse(&bytes), Ok(timer));
        // A larger attribute keeps its size.
        assert_eq!(cpu_clock().on_clock(1).size, 144);
    }

    #[test]
    fn fields_past_a_small_size_read_as_zero() {
        let mut bytes = Vec::new();
        PerfEventAttr {
            size: 64,
            ..cpu_clock()
        }
        .encode(&mut bytes);
        assert_eq!(bytes.len(), 64);
        let attr = PerfEventAttr::parse(&bytes).unwrap();
        assert_eq!((attr.clockid, attr.sample_regs_user), (0, 0));
        assert!(!attr.on_monotonic_raw());
    }
}
