//! The frame file of a Streamline local capture (`0000000000` inside a `.apc` directory) read from any
//! [`Read`]er in chunks through gator-proto's [`LocalCaptureDecoder`]: memory is the largest frame plus one
//! chunk, whatever the file's size. Each frame goes to [`FrameSink::values`](super::apc::FrameSink::values)
//! or [`FrameSink::frame`](super::apc::FrameSink::frame).

use std::io::Read;

use gator_proto::apc::{LocalCaptureDecoder, LocalCaptureError};
use thiserror::Error;

/// Bytes read at a time.
const CHUNK: usize = 64 << 10;

/// Why the frame file could not be read further.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum FrameFileError {
    /// Reading failed.
    #[error("cannot read the frame file")]
    Io(#[source] std::io::Error),
    /// A record is malformed or cut short (the frames before it were read).
    #[error("malformed frame record")]
    Record(#[source] LocalCaptureError),
}

/// The frames of a local capture's frame file, one at a time.
#[derive(Debug)]
pub struct FrameFile<R> {
    reader: R,
    decoder: LocalCaptureDecoder,
    chunk: Vec<u8>,
    ended: bool,
}

impl<R: Read> FrameFile<R> {
    /// Reads frames from `reader` (the frame file, from its start).
    pub fn new(reader: R) -> FrameFile<R> {
        FrameFile {
            reader,
            decoder: LocalCaptureDecoder::new(),
            chunk: vec![0; CHUNK],
            ended: false,
        }
    }

    /// The next frame's payload, `None` at the end of the file.
    pub fn next_frame(&mut self) -> Result<Option<&[u8]>, FrameFileError> {
        while self.decoder.needs_input() && !self.ended {
            match self.reader.read(&mut self.chunk) {
                Ok(0) => self.ended = true,
                Ok(n) => self.decoder.feed(&self.chunk[..n]),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(FrameFileError::Io(e)),
            }
        }
        if self.decoder.needs_input() {
            self.decoder.finish().map_err(FrameFileError::Record)?;
            return Ok(None);
        }
        self.decoder.next_frame().map_err(FrameFileError::Record)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gator_proto::apc::local_capture::encode_record;

    #[test]
    fn frames_come_back_whole_and_a_cut_record_is_an_error() {
        let mut file = Vec::new();
        assert!(encode_record(&[5, 1, 2], &mut file));
        assert!(encode_record(&[], &mut file));
        assert!(encode_record(&vec![7; 3 * CHUNK], &mut file));
        let mut frames = FrameFile::new(&file[..]);
        assert_eq!(frames.next_frame().unwrap(), Some(&[5, 1, 2][..]));
        assert_eq!(frames.next_frame().unwrap(), Some(&[][..]));
        assert_eq!(
            frames.next_frame().unwrap().map(<[u8]>::len),
            Some(3 * CHUNK)
        );
        assert_eq!(frames.next_frame().unwrap(), None);

        let cut = &file[..file.len() - 1];
        let mut frames = FrameFile::new(cut);
        frames.next_frame().unwrap();
        frames.next_frame().unwrap();
        assert!(matches!(
            frames.next_frame(),
            Err(FrameFileError::Record(
                LocalCaptureError::TruncatedFrame { .. }
            ))
        ));
    }
}
