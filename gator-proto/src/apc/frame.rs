//! [`Frame`]: one APC frame — the payload of an APC_DATA response, or one record of a local capture file.

use super::block_counter::BlockCounter;
use super::counter::Counter;
use super::cursor::Cursor;
use super::error::FrameError;
use super::external::External;
use super::frame_type::FrameType;
use super::name::Name;
use super::perf_attrs::PerfAttrs;
use super::perf_aux::PerfAux;
use super::perf_data::PerfData;
use super::perf_sync::PerfSync;
use super::summary::SummaryFrame;
use crate::sleb128::encode_i32;
use crate::version::ProtocolVersion;

/// A decoded APC frame borrowing its bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Frame<'a> {
    /// Type 1.
    Summary(SummaryFrame<'a>),
    /// Type 3.
    Name(Name<'a>),
    /// Type 4.
    Counter(Counter),
    /// Type 5.
    BlockCounter(BlockCounter<'a>),
    /// Type 10.
    External(External<'a>),
    /// Type 11.
    PerfAttrs(PerfAttrs<'a>),
    /// Type 12.
    PerfData(PerfData<'a>),
    /// Type 14.
    PerfAux(PerfAux<'a>),
    /// Type 15.
    PerfSync(PerfSync),
    /// Any other type (including the historical BACKTRACE, ANNOTATE, SCHED_TRACE, IDLE and ACTIVITY_TRACE).
    Unknown {
        /// The frame type code.
        frame_type: i32,
        /// The bytes after the type.
        body: &'a [u8],
    },
}

impl<'a> Frame<'a> {
    /// Decodes a frame: `packInt frame_type` followed by the body. `version` selects the SUMMARY layout.
    pub fn parse(frame: &'a [u8], version: ProtocolVersion) -> Result<Frame<'a>, FrameError> {
        if frame.is_empty() {
            return Err(FrameError::Empty);
        }
        let mut cursor = Cursor::new(frame);
        let frame_type = cursor.i32("frame_type")?;
        let body = cursor.rest();
        Ok(match FrameType::from_code(frame_type) {
            Some(FrameType::Summary) => Frame::Summary(SummaryFrame::parse(body, version)?),
            Some(FrameType::Name) => Frame::Name(Name::parse(body)?),
            Some(FrameType::Counter) => Frame::Counter(Counter::parse(body)?),
            Some(FrameType::BlockCounter) => Frame::BlockCounter(BlockCounter::parse(body)?),
            Some(FrameType::External) => Frame::External(External::parse(body)?),
            Some(FrameType::PerfAttrs) => Frame::PerfAttrs(PerfAttrs::parse(body)?),
            Some(FrameType::PerfData) => Frame::PerfData(PerfData::parse(body)?),
            Some(FrameType::PerfAux) => Frame::PerfAux(PerfAux::parse(body)?),
            Some(FrameType::PerfSync) => Frame::PerfSync(PerfSync::parse(body)?),
            _ => Frame::Unknown { frame_type, body },
        })
    }

    /// The type code of this frame.
    pub fn frame_type(&self) -> i32 {
        match self {
            Frame::Summary(_) => FrameType::Summary.code(),
            Frame::Name(_) => FrameType::Name.code(),
            Frame::Counter(_) => FrameType::Counter.code(),
            Frame::BlockCounter(_) => FrameType::BlockCounter.code(),
            Frame::External(_) => FrameType::External.code(),
            Frame::PerfAttrs(_) => FrameType::PerfAttrs.code(),
            Frame::PerfData(_) => FrameType::PerfData.code(),
            Frame::PerfAux(_) => FrameType::PerfAux.code(),
            Frame::PerfSync(_) => FrameType::PerfSync.code(),
            Frame::Unknown { frame_type, .. } => *frame_type,
        }
    }

    /// Appends the frame's wire bytes (type included). `Frame::parse` of the result gives back an equal frame.
    pub fn encode(&self, out: &mut Vec<u8>) {
        match self {
            Frame::Summary(frame) => frame.encode(out),
            Frame::Name(frame) => frame.encode(out),
            Frame::Counter(frame) => frame.encode(out),
            Frame::BlockCounter(frame) => {
                encode_i32(FrameType::BlockCounter.code(), out);
                encode_i32(frame.core, out);
                out.extend_from_slice(frame.raw_records);
            }
            Frame::External(frame) => frame.encode(out),
            Frame::PerfAttrs(frame) => frame.encode(out),
            Frame::PerfData(frame) => {
                encode_i32(FrameType::PerfData.code(), out);
                encode_i32(frame.cpu, out);
                out.extend_from_slice(&frame.packed_length.to_le_bytes());
                out.extend_from_slice(frame.raw_words);
            }
            Frame::PerfAux(frame) => frame.encode(out),
            Frame::PerfSync(frame) => frame.encode(out),
            Frame::Unknown { frame_type, body } => {
                encode_i32(*frame_type, out);
                out.extend_from_slice(body);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_frame_is_an_error() {
        assert_eq!(
            Frame::parse(&[], ProtocolVersion::V950),
            Err(FrameError::Empty)
        );
    }

    #[test]
    fn truncated_type_is_an_error() {
        assert!(matches!(
            Frame::parse(&[0x85], ProtocolVersion::V950),
            Err(FrameError::Int {
                field: "frame_type",
                ..
            })
        ));
    }

    #[test]
    fn unknown_and_historical_types_stay_opaque() {
        for frame_type in [0, 2, 6, 7, 8, 9, 13, 16, 17, 1000, -5] {
            let mut bytes = Vec::new();
            encode_i32(frame_type, &mut bytes);
            bytes.extend_from_slice(&[1, 2, 3]);
            let frame = Frame::parse(&bytes, ProtocolVersion::V950).unwrap();
            assert_eq!(
                frame,
                Frame::Unknown {
                    frame_type,
                    body: &[1, 2, 3]
                }
            );
            assert_eq!(frame.frame_type(), frame_type);
            let mut again = Vec::new();
            frame.encode(&mut again);
            assert_eq!(again, bytes);
        }
    }
}
