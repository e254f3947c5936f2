//! PERF_SYNC frames (type 15): generic-timer synchronisation points.
//!
//! Layout: `packInt core` (0), `packInt pid, packInt tid, packInt64 freq, packInt64 monotonic_raw, packInt64 vcnt`.

use super::cursor::Cursor;
use super::error::FrameError;
use super::frame_type::FrameType;
use crate::sleb128::{encode_i32, encode_i64};

/// A PERF_SYNC frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PerfSync {
    /// The legacy core field.
    pub core: i32,
    /// Process id of the sync thread.
    pub pid: i32,
    /// Thread id of the sync thread.
    pub tid: i32,
    /// The generic timer frequency in Hz.
    pub freq: i64,
    /// CLOCK_MONOTONIC_RAW at the sync point, ns.
    pub monotonic_raw: i64,
    /// The virtual counter (CNTVCT) at the sync point.
    pub vcnt: i64,
}

impl PerfSync {
    /// Decodes the body that follows the frame type byte.
    pub fn parse(body: &[u8]) -> Result<PerfSync, FrameError> {
        let mut cursor = Cursor::new(body);
        let sync = PerfSync {
            core: cursor.i32("core")?,
            pid: cursor.i32("pid")?,
            tid: cursor.i32("tid")?,
            freq: cursor.i64("freq")?,
            monotonic_raw: cursor.i64("monotonic_raw")?,
            vcnt: cursor.i64("vcnt")?,
        };
        cursor.finish("vcnt")?;
        Ok(sync)
    }

    /// Appends the whole frame (frame type included).
    pub fn encode(&self, out: &mut Vec<u8>) {
        encode_i32(FrameType::PerfSync.code(), out);
        encode_i32(self.core, out);
        encode_i32(self.pid, out);
        encode_i32(self.tid, out);
        encode_i64(self.freq, out);
        encode_i64(self.monotonic_raw, out);
        encode_i64(self.vcnt, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let sync = PerfSync {
            core: 0,
            pid: 100,
            tid: 101,
            freq: 19_200_000,
            monotonic_raw: 5_000_000,
            vcnt: 96_000,
        };
        let mut out = Vec::new();
        sync.encode(&mut out);
        assert_eq!(PerfSync::parse(&out[1..]), Ok(sync));
    }

    #[test]
    fn truncated_is_an_error() {
        assert!(matches!(
            PerfSync::parse(&[0, 1, 2]),
            Err(FrameError::Int { field: "freq", .. })
        ));
    }
}
