//! A trace buffer fed to a [`Report`]: a buffer held whole and put in order from its write pointer
//! ([`report_buffer`]), or, with the `std` feature, a dump in order read from any `std::io::Read`er a chunk
//! at a time (`report_stream`), so that memory stays constant whatever its size.
//!
//! Both set what the buffer's start says about the first frame before the report starts: a buffer put in
//! order starts [`Ordered::partial_frame`](crate::tbr::Ordered::partial_frame) bytes into a frame; a
//! formatted dump that starts mid-stream ([`ReportConfig::starts_mid_stream`]) is searched for its first
//! whole frame ([`tbr::frame_phase`](crate::tbr::frame_phase())).

use crate::dict::Dictionary;
use crate::dump::Framing;
use crate::message::FormatStrings;
use crate::report::{Report, ReportConfig, ReportSink};
use crate::stats::Stats;
#[cfg(feature = "std")]
use crate::tbr::frame_phase;
use crate::tbr::{ordered, TbrError, Wrap};

/// Bytes of a stream read at a time by [`report_stream`].
#[cfg(feature = "std")]
pub const STREAM_CHUNK: usize = 64 << 10;

/// Why a trace buffer could not be reported on.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BufferError<E> {
    /// The buffer cannot be put in order from the write pointer given.
    #[error("the trace buffer cannot be put in order")]
    Order(#[source] TbrError),
    /// The report's sink failed.
    #[error("the report's sink failed")]
    Sink(#[source] E),
    /// Reading the stream failed.
    #[cfg(feature = "std")]
    #[error("cannot read the trace stream")]
    Read(#[source] std::io::Error),
    /// The stream's first `bytes` bytes gave the report nothing (no message, torn data, loss, span or CP
    /// Tracer word), and the report was told to give up there
    /// ([`ReportInputs::give_up_after`](crate::report_inputs::ReportInputs::give_up_after)): it is not a
    /// trace of this setup, and reading on would take as long as the stream is (`/dev/zero`).
    #[cfg(feature = "std")]
    #[error("nothing found in the first {bytes} bytes of the trace stream")]
    NothingFound {
        /// Bytes read.
        bytes: u64,
    },
}

fn is_formatted(config: &ReportConfig) -> bool {
    matches!(config.framing, Framing::Formatted(_))
}

/// Reports on `buffer`, a trace buffer held whole (such as a TBR read out) and put in order by `wrap`; for
/// a formatted buffer, the bytes of the frame cut by the write pointer are skipped. Each event goes to
/// `sink`; the statistics come back.
pub fn report_buffer<S: ReportSink>(
    mut config: ReportConfig,
    strings: &dyn FormatStrings,
    dict: &Dictionary,
    buffer: &[u8],
    wrap: Wrap,
    sink: &mut S,
) -> Result<Stats, BufferError<S::Error>> {
    let parts = ordered(buffer, wrap).map_err(BufferError::Order)?;
    if is_formatted(&config) {
        config.partial_frame_bytes = parts.partial_frame;
    }
    let mut report = Report::new(config, strings, dict);
    for part in parts.parts {
        report.feed(part, sink).map_err(BufferError::Sink)?;
    }
    report.finish(sink).map_err(BufferError::Sink)
}

/// Reads up to a whole chunk (less only at the end of the stream).
#[cfg(feature = "std")]
fn read_chunk<R: std::io::Read>(reader: &mut R, chunk: &mut [u8]) -> std::io::Result<usize> {
    let mut n = 0;
    while n < chunk.len() {
        match reader.read(&mut chunk[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

/// Reports on a trace stream in order read from `reader`, [`STREAM_CHUNK`] bytes at a time. A formatted
/// stream that starts mid-stream ([`ReportConfig::starts_mid_stream`], e.g. a dump saved without its write
/// pointer) starts where [`frame_phase`] finds its first whole frame in the first chunk. Each event goes to
/// `sink`; the statistics come back.
#[cfg(feature = "std")]
pub fn report_stream<R: std::io::Read, S: ReportSink>(
    config: ReportConfig,
    strings: &dyn FormatStrings,
    dict: &Dictionary,
    reader: R,
    sink: &mut S,
) -> Result<Stats, BufferError<S::Error>> {
    report_stream_within(config, strings, dict, reader, sink, None)
}

/// A sink that counts the events it hands on.
#[cfg(feature = "std")]
struct Counted<'s, S> {
    sink: &'s mut S,
    events: u64,
}

#[cfg(feature = "std")]
impl<S: ReportSink> ReportSink for Counted<'_, S> {
    type Error = S::Error;

    fn event(&mut self, event: &crate::report::ReportEvent<'_>) -> Result<(), S::Error> {
        self.events += 1;
        self.sink.event(event)
    }
}

/// [`report_stream`], ending with [`BufferError::NothingFound`] once `give_up_after` bytes were read
/// without an event.
#[cfg(feature = "std")]
pub(crate) fn report_stream_within<R: std::io::Read, S: ReportSink>(
    mut config: ReportConfig,
    strings: &dyn FormatStrings,
    dict: &Dictionary,
    mut reader: R,
    sink: &mut S,
    give_up_after: Option<u64>,
) -> Result<Stats, BufferError<S::Error>> {
    let mut chunk = std::vec![0u8; STREAM_CHUNK];
    let mut n = read_chunk(&mut reader, &mut chunk).map_err(BufferError::Read)?;
    if is_formatted(&config) && config.starts_mid_stream {
        config.partial_frame_bytes = frame_phase(&chunk[..n], config.trace_id);
    }
    let mut report = Report::new(config, strings, dict);
    let mut sink = Counted { sink, events: 0 };
    let mut read = 0u64;
    while n > 0 {
        report
            .feed(&chunk[..n], &mut sink)
            .map_err(BufferError::Sink)?;
        read += n as u64;
        if sink.events == 0 && give_up_after.is_some_and(|limit| read >= limit) {
            return Err(BufferError::NothingFound { bytes: read });
        }
        n = read_chunk(&mut reader, &mut chunk).map_err(BufferError::Read)?;
    }
    report.finish(&mut sink).map_err(BufferError::Sink)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::NoImages;
    use crate::report::ReportEvent;
    use crate::test_streams::put_msg;
    use alloc::borrow::ToOwned;
    use alloc::string::String;
    use alloc::vec::Vec;
    #[cfg(feature = "std")]
    use std::io::Read;

    fn texts(
        texts: &mut Vec<String>,
    ) -> impl FnMut(&ReportEvent<'_>) -> Result<(), core::convert::Infallible> + '_ {
        |event| {
            if let ReportEvent::Message { message, .. } = event {
                texts.push(message.text.to_owned());
            }
            Ok(())
        }
    }

    #[test]
    fn a_buffer_not_wrapped_and_a_stream_give_the_same_messages() {
        let bytes = put_msg(b"hello");
        let dict = Dictionary::new();
        let config = || ReportConfig::new(Framing::Raw, 0);
        let mut from_buffer = Vec::new();
        let words = u32::try_from(bytes.len() / 4).unwrap();
        let stats = report_buffer(
            config(),
            &NoImages,
            &dict,
            &bytes,
            Wrap::NotWrapped {
                write_pointer: words,
            },
            &mut texts(&mut from_buffer),
        )
        .unwrap();
        assert_eq!(from_buffer, ["hello"]);
        assert_eq!(stats.masters.len(), 1);
        #[cfg(feature = "std")]
        {
            let mut from_stream = Vec::new();
            let streamed = report_stream(
                config(),
                &NoImages,
                &dict,
                &bytes[..],
                &mut texts(&mut from_stream),
            )
            .unwrap();
            assert_eq!(from_stream, ["hello"]);
            assert_eq!(stats, streamed);
        }
    }

    #[test]
    fn a_buffer_that_cannot_be_put_in_order_is_an_order_error() {
        let dict = Dictionary::new();
        let mut seen = Vec::new();
        let error = report_buffer(
            ReportConfig::new(Framing::Raw, 0),
            &NoImages,
            &dict,
            &[0; 6],
            Wrap::Wrapped { write_pointer: 0 },
            &mut texts(&mut seen),
        )
        .unwrap_err();
        assert!(matches!(
            error,
            BufferError::Order(TbrError::NotWords { bytes: 6 })
        ));
        let error = report_buffer(
            ReportConfig::new(Framing::Raw, 0),
            &NoImages,
            &dict,
            &[0; 8],
            Wrap::Wrapped { write_pointer: 2 },
            &mut texts(&mut seen),
        )
        .unwrap_err();
        assert!(matches!(
            error,
            BufferError::Order(TbrError::PointerOutside { .. })
        ));
    }

    #[cfg(feature = "std")]
    #[test]
    fn a_failing_reader_and_a_failing_sink_are_their_own_errors() {
        struct Broken;
        impl std::io::Read for Broken {
            fn read(&mut self, _: &mut [u8]) -> std::io::Result<usize> {
                Err(std::io::Error::other("broken"))
            }
        }
        let dict = Dictionary::new();
        let mut seen = Vec::new();
        let error = report_stream(
            ReportConfig::new(Framing::Raw, 0),
            &NoImages,
            &dict,
            Broken,
            &mut texts(&mut seen),
        )
        .unwrap_err();
        assert!(matches!(error, BufferError::Read(_)));

        let bytes = put_msg(b"hello");
        let mut refuse = |_: &ReportEvent<'_>| -> Result<(), &'static str> { Err("full") };
        let error = report_stream(
            ReportConfig::new(Framing::Raw, 0),
            &NoImages,
            &dict,
            &bytes[..],
            &mut refuse,
        )
        .unwrap_err();
        assert!(matches!(error, BufferError::Sink("full")));
    }

    #[cfg(feature = "std")]
    #[test]
    fn a_stream_with_nothing_in_its_first_bytes_is_given_up_on_there() {
        let dict = Dictionary::new();
        let mut seen = Vec::new();
        // Zeros: no ASYNC, so no event until the end of the trace.
        let zeros = std::io::repeat(0).take(4 * STREAM_CHUNK as u64);
        let error = report_stream_within(
            ReportConfig::new(Framing::Raw, 0),
            &NoImages,
            &dict,
            zeros,
            &mut texts(&mut seen),
            Some(2 * STREAM_CHUNK as u64),
        )
        .unwrap_err();
        assert!(
            matches!(error, BufferError::NothingFound { bytes } if bytes == 2 * STREAM_CHUNK as u64)
        );
        // A trace that gives something is read to its end, whatever its length.
        let mut trace = put_msg(b"hello");
        trace.resize(4 * STREAM_CHUNK, 0);
        let stats = report_stream_within(
            ReportConfig::new(Framing::Raw, 0),
            &NoImages,
            &dict,
            &trace[..],
            &mut texts(&mut seen),
            Some(STREAM_CHUNK as u64),
        )
        .unwrap();
        assert_eq!(seen, ["hello"]);
        assert_eq!(stats.stream.input_bytes, trace.len() as u64);
    }
}
