//! APC frame type codes: the first `packInt` of every APC_DATA payload.

/// A known APC frame type (gatord `FrameType`). Codes with no variant decode as [`crate::apc::Frame::Unknown`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(i32)]
#[non_exhaustive]
pub enum FrameType {
    /// 1: capture summary, clocks and attributes, CPU names.
    Summary = 1,
    /// 2: backtraces from the old kernel module (gone since gatord 7.2; kept opaque).
    Backtrace = 2,
    /// 3: cookie and thread names (last produced by gatord 9.1).
    Name = 3,
    /// 4: one counter value (last produced by gatord 9.1).
    Counter = 4,
    /// 5: polled and Mali counter values as key/value records.
    BlockCounter = 5,
    /// 6: annotations from the old kernel module (kept opaque).
    Annotate = 6,
    /// 7: scheduler trace (last produced by gatord 9.1; kept opaque).
    SchedTrace = 7,
    /// 9: idle events from the old kernel module (kept opaque).
    Idle = 9,
    /// 10: bytes read from an external source such as a Mali pipe.
    External = 10,
    /// 11: perf attributes, key maps, process and kernel metadata.
    PerfAttrs = 11,
    /// 12: raw perf ring-buffer records.
    PerfData = 12,
    /// 13: activity trace (last produced by gatord 9.1; kept opaque).
    ActivityTrace = 13,
    /// 14: perf AUX data (SPE).
    PerfAux = 14,
    /// 15: generic-timer synchronisation.
    PerfSync = 15,
}

impl FrameType {
    /// The type for a wire code, if it is a known one.
    pub fn from_code(code: i32) -> Option<FrameType> {
        Some(match code {
            1 => FrameType::Summary,
            2 => FrameType::Backtrace,
            3 => FrameType::Name,
            4 => FrameType::Counter,
            5 => FrameType::BlockCounter,
            6 => FrameType::Annotate,
            7 => FrameType::SchedTrace,
            9 => FrameType::Idle,
            10 => FrameType::External,
            11 => FrameType::PerfAttrs,
            12 => FrameType::PerfData,
            13 => FrameType::ActivityTrace,
            14 => FrameType::PerfAux,
            15 => FrameType::PerfSync,
            _ => return None,
        })
    }

    /// The wire code.
    pub fn code(self) -> i32 {
        self as i32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_round_trip() {
        for code in -2..20 {
            if let Some(kind) = FrameType::from_code(code) {
                assert_eq!(kind.code(), code);
            }
        }
        assert_eq!(FrameType::from_code(8), None);
        assert_eq!(FrameType::from_code(5), Some(FrameType::BlockCounter));
    }
}
