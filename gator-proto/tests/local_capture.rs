//! Reads a Streamline local capture stream (`0000000000`: u32-LE length + frame, no terminator) built in memory
//! from the APC frames of the real gatord 9.7.2 live session (`shared/data/gatord-9.7.2/live-session/d2c.bin`):
//! the live APC_DATA envelope minus its type byte, which is what gatord writes to the file.

use gator_proto::apc::{local_capture, Frame, LocalCaptureError, LocalCaptureReader};
use gator_proto::recorded::RecordedResponses;
use gator_proto::ProtocolVersion;

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
