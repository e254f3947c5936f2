//! Reads a Streamline local capture stream (`0000000000`: u32-LE length + frame, no terminator) built in memory
//! from the APC frames of the real gatord 9.7.2 live session (`shared/data/gatord-9.7.2/live-session/d2c.bin`):
//! the live APC_DATA envelope minus its type byte, which is what gatord writes to the file.

use gator_proto::apc::{
    local_capture, Frame, LocalCaptureDecoder, LocalCaptureError, LocalCaptureReader,
};
use gator_proto::recorded::RecordedResponses;
use gator_proto::ProtocolVersion;
use proptest::prelude::*;

/// The local-capture form of the recording: every non-empty APC_DATA payload with a length prefix.
fn local_file() -> Option<(Vec<u8>, usize)> {
    let d2c = test_data::gatord_bytes("live-session/d2c.bin")?;
    let mut file = Vec::new();
    let mut frames = 0;
    for payload in RecordedResponses::new(&d2c).unwrap().apc_frames() {
        assert!(local_capture::encode_record(payload.unwrap(), &mut file));
        frames += 1;
    }
    Some((file, frames))
}

#[test]
fn every_frame_of_the_recording_reads_back() {
    let Some((file, frames)) = local_file() else {
        return;
    };
    assert_eq!(frames, 188 + 1 + 31 + 58);
    let mut counts = [0usize; 16];
    for record in LocalCaptureReader::new(&file) {
        let frame = Frame::parse(record.unwrap(), ProtocolVersion::V950).unwrap();
        counts[frame.frame_type() as usize] += 1;
    }
    assert_eq!(
        (counts[1], counts[5], counts[11], counts[12]),
        (1, 31, 188, 58)
    );
}

#[test]
fn a_cut_file_ends_with_a_typed_error() {
    let Some((file, _)) = local_file() else {
        return;
    };
    let cut = &file[..file.len() - 3];
    let last = LocalCaptureReader::new(cut).last().unwrap();
    assert!(matches!(
        last,
        Err(LocalCaptureError::TruncatedFrame { .. })
    ));
    // The 5.4 MB kallsyms frame is over a 1 MiB limit.
    let limited = LocalCaptureReader::new(&file).with_max_frame_len(1 << 20);
    let error = limited.filter_map(Result::err).next().unwrap();
    assert!(matches!(error, LocalCaptureError::TooLarge { length, .. } if length > 5_000_000));
}

/// What the decoder makes of `file` fed in pieces of the given sizes (cycled): the frames, then how it ended.
fn decode_in_pieces(
    file: &[u8],
    pieces: &[usize],
    max: u32,
) -> (Vec<Vec<u8>>, Result<(), LocalCaptureError>) {
    let mut decoder = LocalCaptureDecoder::new().with_max_frame_len(max);
    let mut frames = Vec::new();
    let mut at = 0;
    for &size in pieces.iter().cycle() {
        let end = (at + size.max(1)).min(file.len());
        decoder.feed(&file[at..end]);
        at = end;
        loop {
            match decoder.next_frame() {
                Ok(Some(frame)) => frames.push(frame.to_vec()),
                Ok(None) => break,
                Err(e) => return (frames, Err(e)),
            }
        }
        if at == file.len() {
            break;
        }
    }
    (frames, decoder.finish())
}

/// What the in-memory reader makes of `file`: the same shape.
fn read_whole(file: &[u8], max: u32) -> (Vec<Vec<u8>>, Result<(), LocalCaptureError>) {
    let mut frames = Vec::new();
    for record in LocalCaptureReader::new(file).with_max_frame_len(max) {
        match record {
            Ok(frame) => frames.push(frame.to_vec()),
            Err(e) => return (frames, Err(e)),
        }
    }
    (frames, Ok(()))
}

#[test]
fn the_decoder_reads_the_recording_in_chunks_as_the_reader_does_whole() {
    let Some((file, frames)) = local_file() else {
        return;
    };
    let (decoded, end) = decode_in_pieces(&file, &[64 << 10], u32::MAX);
    assert_eq!(end, Ok(()));
    assert_eq!(decoded.len(), frames);
    assert_eq!((decoded, end), read_whole(&file, u32::MAX));
    let cut = &file[..file.len() - 3];
    assert_eq!(
        decode_in_pieces(cut, &[4093], u32::MAX),
        read_whole(cut, u32::MAX)
    );
    assert_eq!(
        decode_in_pieces(&file, &[777], 1 << 20),
        read_whole(&file, 1 << 20)
    );
}

proptest! {
    #[test]
    fn the_decoder_agrees_with_the_reader_however_the_bytes_are_cut(
        file in prop::collection::vec(prop_oneof![3 => 0u8..4, 1 => any::<u8>()], 0..64),
        pieces in prop::collection::vec(1usize..9, 1..5),
        max in 0u32..6,
    ) {
        prop_assert_eq!(decode_in_pieces(&file, &pieces, max), read_whole(&file, max));
    }
}
