//! A Streamline local capture directory (`PATH.apc`) read back: the counter names resolved from
//! `captured.xml` and `events.xml`, and the frames of `0000000000` walked through the engine's
//! [`FrameSink`], so that a value's time and core follow the rules of a live capture (a BLOCK_COUNTER value
//! before the frame's first core marker is a value of the whole system; a time before capture start is
//! capture start).
//!
//! [`Recording::walk`] streams: the frame file is read a record at a time and each value goes to the caller
//! as it is decoded, so memory stays constant whatever the capture's size; what is known only at the end
//! (sample count, SUMMARY, frame counts, perf events, problems) comes back as a [`RecordingSummary`].

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::path::{Path, PathBuf};

use gator_proto::apc::{
    Clocks, Delivery, Frame, FrameError, FrameType, LocalCaptureError, SummaryFrame,
};
use gator_proto::ProtocolVersion;
use gator_xml::{Captured, Events, XmlError};
use thiserror::Error;

use super::apc::{FrameSink, KeyMap, KeyedSample, SinkError};
use super::frame_file::{FrameFile, FrameFileError};
use crate::input::{InputError, InputKind, Inputs, Stream};
use crate::store::Value;

/// The frame file inside a capture directory.
pub const FRAMES_FILE: &str = "0000000000";

/// The protocol version assumed for a capture without `captured.xml`.
const DEFAULT_PROTOCOL: i64 = 950;

/// The problems a summary lists one by one; the rest are counted ([`RecordingSummary::issues_not_listed`]).
pub const LISTED_ISSUES: usize = 20;

/// Frames in a row that cannot be read after which the walk stops: such a file is not a frame file (a
/// file of zeros is one empty record every 4 bytes), and reading on would take as long as the file is.
pub const UNREADABLE_RUN_LIMIT: usize = 10_000;

/// Why a capture directory cannot be read.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum RecordingError {
    /// The path is not a directory.
    #[error("{}: not a capture directory (it should hold {FRAMES_FILE})", path.display())]
    NotADirectory {
        /// The path given.
        path: PathBuf,
    },
    /// A file of the capture could not be opened or read.
    #[error("{}: cannot be read", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// A file of the capture could not be read under its limit (over it, a directory, interrupted).
    #[error(transparent)]
    Input(#[from] InputError),
    /// `captured.xml` or `events.xml` is not a document of its kind.
    #[error("{}: malformed XML document", path.display())]
    Xml {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        #[source]
        source: XmlError,
    },
}

impl RecordingError {
    /// The file (or directory) the error is about.
    pub fn path(&self) -> &Path {
        match self {
            RecordingError::NotADirectory { path }
            | RecordingError::Io { path, .. }
            | RecordingError::Xml { path, .. } => path,
            RecordingError::Input(error) => error.path(),
        }
    }
}

/// Counter names by gatord key, resolved once from `captured.xml` and `events.xml`: the counter's name,
/// followed by its event's title in parentheses where `events.xml` names it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CounterNames {
    by_key: HashMap<i32, String>,
}

impl CounterNames {
    /// Resolves the name of each key `captured` lists (the first counter of a key wins); a counter set slot
    /// resolves through its counter set and the event programmed into it.
    pub fn new(captured: Option<&Captured>, events: Option<&Events>) -> CounterNames {
        let mut by_key = HashMap::new();
        for c in captured.map_or(&[][..], |c| &c.counters[..]) {
            let (Ok(key), Some(first)) = (
                i32::try_from(c.key),
                captured.and_then(|all| all.counter_by_key(c.key)),
            ) else {
                continue;
            };
            let title = events
                .and_then(|e| e.resolve(&first.counter, first.event))
                .map(|r| r.event.label());
            let name = title.map_or_else(
                || first.counter.clone(),
                |t| format!("{} ({t})", first.counter),
            );
            by_key.entry(key).or_insert(name);
        }
        CounterNames { by_key }
    }

    /// The name of `key`: its resolved name, or for a key without one, a description of the key (gatord's
    /// own perf events use the keys from `0x7fff_fff0` up).
    pub fn name(&self, key: i32) -> Cow<'_, str> {
        match self.by_key.get(&key) {
            Some(name) => Cow::Borrowed(name),
            None if key >= 0x7fff_fff0 => {
                Cow::Owned(format!("gatord's own perf event (key {key:#x})"))
            }
            None => Cow::Owned(format!("key {key:#x}")),
        }
    }
}

/// One counter value of a capture: the engine's sample with its key and counter name. Its members are
/// declared (and serialize) in the order of their names.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct RecordedValue<'n> {
    /// The CPU it was counted on; `None` for a value of the whole system.
    pub core: Option<u32>,
    /// The counter's name ([`CounterNames::name`]).
    pub counter: Cow<'n, str>,
    /// The gatord key.
    pub key: i32,
    /// For a perf counter value: the running total on that core (`value` is its increase since the
    /// previous reading on that core).
    pub perf_total: Option<u64>,
    /// Nanoseconds since capture start.
    pub timestamp_ns: u64,
    /// The value.
    pub value: Value,
}

/// How often a perf event samples, as its PERF_ATTRS announced it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum SamplePeriod {
    /// Every this many events.
    Events(u64),
    /// This many times a second.
    Frequency(u64),
    /// Not sampled.
    None,
}

impl fmt::Display for SamplePeriod {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SamplePeriod::Events(p) => write!(f, "{p}"),
            SamplePeriod::Frequency(hz) => write!(f, "{hz} Hz"),
            SamplePeriod::None => f.write_str("none"),
        }
    }
}

/// One perf event gatord announced (PERF_ATTRS).
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct PerfEvent {
    /// The event's `config`.
    pub config: u64,
    /// The counter's name ([`CounterNames::name`]).
    pub counter: String,
    /// The gatord key.
    pub key: i32,
    /// How often it samples (serialized as its text).
    #[cfg_attr(feature = "serde", serde(serialize_with = "display"))]
    pub sample_period: SamplePeriod,
    /// The event's `type`.
    #[cfg_attr(feature = "serde", serde(rename = "type"))]
    pub kind: u32,
    /// Whether its values are sent (serialized as [`PerfEvent::values_text`]).
    #[cfg_attr(
        feature = "serde",
        serde(rename = "values", serialize_with = "delivery_text")
    )]
    pub delivery: Delivery,
}

impl PerfEvent {
    /// Whether and how the event's values are sent, in words.
    pub fn values_text(&self) -> &'static str {
        delivery_words(self.delivery)
    }
}

fn delivery_words(delivery: Delivery) -> &'static str {
    match delivery {
        Delivery::Sampled => "sent (sample records)",
        Delivery::CountingOnly => "never sent (opened for counting only)",
        Delivery::NotOpened => "never sent (could not be opened)",
        _ => "not announced",
    }
}

#[cfg(feature = "serde")]
fn delivery_text<S: serde::Serializer>(delivery: &Delivery, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(delivery_words(*delivery))
}

#[cfg(feature = "serde")]
fn display<T: fmt::Display, S: serde::Serializer>(value: &T, s: S) -> Result<S::Ok, S::Error> {
    s.collect_str(value)
}

/// Something in the frame file that could not be read; the walk goes on past it where it can.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum RecordingIssue {
    /// Frame `frame`'s record is malformed or cut short; the walk ends there.
    Record {
        /// The frame's index in the file.
        frame: usize,
        /// What is wrong with the record.
        error: LocalCaptureError,
    },
    /// Frame `frame` is not an APC frame.
    Frame {
        /// The frame's index in the file.
        frame: usize,
        /// What is wrong with it.
        error: FrameError,
    },
    /// Frame `frame` could not be turned into values (the values before the fault were).
    Values {
        /// The frame's index in the file.
        frame: usize,
        /// What is wrong with it.
        error: SinkError,
    },
    /// The kernel lost perf records (PERF_RECORD_LOST).
    LostPerfRecords {
        /// How many.
        count: u64,
    },
    /// The walk stopped at frame `frame` after `UNREADABLE_RUN_LIMIT` (10 000) frames in a row could not be read.
    GaveUp {
        /// The index of the last frame tried.
        frame: usize,
    },
}

impl fmt::Display for RecordingIssue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RecordingIssue::Record { frame, error } => write!(f, "frame {frame}: {error}"),
            RecordingIssue::Frame { frame, error } => write!(f, "frame {frame}: {error}"),
            RecordingIssue::Values { frame, error } => match error {
                SinkError::Frame(e) => write!(f, "frame {frame}: {e}"),
                SinkError::Perf(e) => write!(f, "frame {frame}: {e}"),
                SinkError::Count(e) => write!(f, "frame {frame}: {e}"),
            },
            RecordingIssue::LostPerfRecords { count } => write!(
                f,
                "the kernel lost {count} perf record(s) (PERF_RECORD_LOST); perf values after a loss still add up"
            ),
            RecordingIssue::GaveUp { frame } => write!(
                f,
                "stopped at frame {frame}: the last {UNREADABLE_RUN_LIMIT} frames could not be read, so this \
                 is not a frame file of a capture"
            ),
        }
    }
}

#[cfg(feature = "serde")]
impl serde::Serialize for RecordingIssue {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// What is known once the whole capture has been walked (everything but the values).
#[derive(Debug, Clone, Default, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct RecordingSummary {
    /// The SUMMARY frame's clocks, if the capture has one.
    pub clocks: Option<Clocks>,
    /// The SUMMARY's attributes, in the order sent (serialized as an object by name).
    #[cfg_attr(feature = "serde", serde(serialize_with = "attributes_by_name"))]
    pub attributes: Vec<(String, String)>,
    /// How many frames of each type (by the type's name, or `type N` for an unknown code).
    pub frames: BTreeMap<String, u64>,
    /// How many values the walk gave (not serialized).
    #[cfg_attr(feature = "serde", serde(skip))]
    pub samples: u64,
    /// The perf events gatord announced, by key.
    pub perf_events: Vec<PerfEvent>,
    /// What could not be read, the first `LISTED_ISSUES` (20) of it (serialized as `errors`, each as its text).
    #[cfg_attr(feature = "serde", serde(rename = "errors"))]
    pub issues: Vec<RecordingIssue>,
    /// Problems beyond the first `LISTED_ISSUES` (20), counted (serialized as `errors_not_listed`).
    #[cfg_attr(feature = "serde", serde(rename = "errors_not_listed"))]
    pub issues_not_listed: u64,
}

impl RecordingSummary {
    /// Lists `issue`, or counts it once [`LISTED_ISSUES`] are listed.
    fn push_issue(&mut self, issue: RecordingIssue) {
        match self.issues.len() < LISTED_ISSUES {
            true => self.issues.push(issue),
            false => self.issues_not_listed += 1,
        }
    }

    /// Every problem met, listed or counted.
    pub fn issue_count(&self) -> u64 {
        self.issues.len() as u64 + self.issues_not_listed
    }
}

#[cfg(feature = "serde")]
fn attributes_by_name<S: serde::Serializer>(
    attributes: &[(String, String)],
    serializer: S,
) -> Result<S::Ok, S::Error> {
    use serde::Serialize;
    let by_name: BTreeMap<_, _> = attributes.iter().map(|(k, v)| (k, v)).collect();
    by_name.serialize(serializer)
}

fn frame_type_name(code: i32) -> String {
    FrameType::from_code(code).map_or_else(|| format!("type {code}"), |t| format!("{t:?}"))
}

fn read_optional(
    inputs: &Inputs<'_>,
    dir: &Path,
    name: &str,
    kind: InputKind,
) -> Result<Option<Vec<u8>>, RecordingError> {
    let path = dir.join(name);
    match inputs.read(&path, kind) {
        Ok(bytes) => Ok(Some(bytes)),
        Err(InputError::Open { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
            Ok(None)
        }
        Err(error) => Err(error.into()),
    }
}

/// A local capture directory opened for reading.
///
/// [`Recording::open`] reads the XML documents and opens the frame file; [`Recording::walk`] then reads the
/// frames once, handing each value to the caller as it is decoded.
#[derive(Debug)]
pub struct Recording<'s> {
    frames: FrameFile<Stream<'s>>,
    frames_path: PathBuf,
    protocol: Option<u32>,
    names: CounterNames,
}

impl Recording<'static> {
    /// Opens the capture directory `dir` with each input's default limit ([`Recording::open_with`]).
    pub fn open(dir: &Path) -> Result<Recording<'static>, RecordingError> {
        Recording::open_with(dir, &Inputs::new())
    }
}

impl<'s> Recording<'s> {
    /// Opens the capture directory `dir`, its files read through `inputs` (limits, and the stop test the
    /// walk also obeys): its frame file must exist; `captured.xml` and `events.xml` are read if present.
    pub fn open_with(dir: &Path, inputs: &Inputs<'s>) -> Result<Recording<'s>, RecordingError> {
        if !dir.is_dir() {
            return Err(RecordingError::NotADirectory {
                path: dir.to_owned(),
            });
        }
        let frames_path = dir.join(FRAMES_FILE);
        let file = inputs.open(&frames_path, InputKind::FrameFile)?;
        let xml_error = |name: &str| {
            let path = dir.join(name);
            move |source| RecordingError::Xml { path, source }
        };
        let captured = read_optional(inputs, dir, "captured.xml", InputKind::CapturedXml)?
            .map(|b| Captured::from_bytes(&b).map_err(xml_error("captured.xml")))
            .transpose()?;
        let events = read_optional(inputs, dir, "events.xml", InputKind::EventsXml)?
            .map(|b| Events::from_bytes(&b).map_err(xml_error("events.xml")))
            .transpose()?;
        Ok(Recording {
            frames: FrameFile::new(file),
            frames_path,
            protocol: captured.as_ref().and_then(|c| c.protocol),
            names: CounterNames::new(captured.as_ref(), events.as_ref()),
        })
    }

    /// The protocol version `captured.xml` gives, `None` without one.
    pub fn protocol(&self) -> Option<u32> {
        self.protocol
    }

    /// The protocol version the frames are read with: [`Recording::protocol`], or 950 without one.
    pub fn version(&self) -> ProtocolVersion {
        ProtocolVersion(self.protocol.map_or(DEFAULT_PROTOCOL, i64::from))
    }

    /// The counter names.
    pub fn names(&self) -> &CounterNames {
        &self.names
    }

    /// Walks the frames through the engine's [`FrameSink`]: each value goes to `emit` as it is decoded (an
    /// error from `emit` ends the walk and is returned); the rest is summed up. A frame that cannot be read
    /// is a [`RecordingIssue`] of the summary, not an error; a failing read of the file is.
    pub fn walk<E: From<RecordingError>>(
        &mut self,
        mut emit: impl FnMut(&RecordedValue<'_>) -> Result<(), E>,
    ) -> Result<RecordingSummary, E> {
        let version = self.version();
        let names = &self.names;
        let mut summary = RecordingSummary::default();
        // Capture start is time 0; no key is bound, as the sink's values carry every key.
        let mut sink = FrameSink::new(version, KeyMap::new(), 0);
        let mut values: Vec<KeyedSample> = Vec::new();
        let mut index = 0usize;
        // Frames in a row that could not be read.
        let mut unreadable = 0usize;
        loop {
            if unreadable >= UNREADABLE_RUN_LIMIT {
                // Why the walk ended is always listed.
                summary
                    .issues
                    .push(RecordingIssue::GaveUp { frame: index - 1 });
                break;
            }
            let frame = match self.frames.next_frame() {
                Ok(Some(frame)) => frame,
                Ok(None) => break,
                Err(FrameFileError::Record(error)) => {
                    summary.push_issue(RecordingIssue::Record {
                        frame: index,
                        error,
                    });
                    break;
                }
                Err(FrameFileError::Io(source)) => {
                    return Err(match InputError::from_io(source) {
                        Ok(input) => RecordingError::Input(input),
                        Err(source) => RecordingError::Io {
                            path: self.frames_path.clone(),
                            source,
                        },
                    }
                    .into());
                }
            };
            let this = index;
            index += 1;
            let parsed = match Frame::parse(frame, version) {
                Ok(parsed) => parsed,
                Err(error) => {
                    unreadable += 1;
                    summary.push_issue(RecordingIssue::Frame { frame: this, error });
                    continue;
                }
            };
            unreadable = 0;
            *summary
                .frames
                .entry(frame_type_name(parsed.frame_type()))
                .or_default() += 1;
            if let Frame::Summary(SummaryFrame::Summary(s)) = &parsed {
                summary.clocks = Some(s.clocks);
                summary.attributes = s
                    .attributes
                    .iter()
                    .map(|(k, v)| {
                        (
                            String::from_utf8_lossy(k).into_owned(),
                            String::from_utf8_lossy(v).into_owned(),
                        )
                    })
                    .collect();
            }
            let result = sink.values(&parsed, &mut values);
            for v in values.drain(..) {
                summary.samples += 1;
                emit(&RecordedValue {
                    core: v.sample.core,
                    counter: names.name(v.key),
                    key: v.key,
                    perf_total: v.perf_total,
                    timestamp_ns: v.sample.timestamp_ns,
                    value: v.sample.value,
                })?;
            }
            if let Err(error) = result {
                summary.push_issue(RecordingIssue::Values { frame: this, error });
            }
        }
        let tracker = sink.perf();
        let mut announced: Vec<_> = tracker.attrs().map(|(key, attr)| (key, *attr)).collect();
        announced.sort_by_key(|(key, _)| *key);
        summary.perf_events = announced
            .into_iter()
            .map(|(key, attr)| PerfEvent {
                key,
                counter: names.name(key).into_owned(),
                kind: attr.kind,
                config: attr.config,
                sample_period: match (attr.sample_period(), attr.sample_freq()) {
                    (Some(p), _) => SamplePeriod::Events(p),
                    (_, Some(f)) => SamplePeriod::Frequency(f),
                    _ => SamplePeriod::None,
                },
                delivery: tracker.delivery(key),
            })
            .collect();
        if tracker.lost_records() > 0 {
            summary.issues.push(RecordingIssue::LostPerfRecords {
                count: tracker.lost_records(),
            });
        }
        Ok(summary)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gator_proto::apc::local_capture::encode_record;

    /// A fresh directory of its own for `name`.
    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "lizard-core-recording-{}-{name}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("scratch dir");
        dir
    }

    #[test]
    fn a_path_that_is_not_a_capture_directory_is_refused() {
        let dir = scratch("not-a-dir");
        let file = dir.join("file.apc");
        std::fs::write(&file, b"").expect("file");
        let error = Recording::open(&file).expect_err("a file");
        assert!(matches!(error, RecordingError::NotADirectory { .. }));
        assert_eq!(error.path(), file);
        let error = Recording::open(&dir).expect_err("no frame file");
        assert!(
            matches!(&error, RecordingError::Input(InputError::Open { path, source })
                if path.ends_with(FRAMES_FILE) && source.kind() == std::io::ErrorKind::NotFound),
            "{error:?}"
        );
    }

    #[test]
    fn a_malformed_captured_xml_is_an_error_of_that_file() {
        let dir = scratch("bad-xml");
        std::fs::write(dir.join(FRAMES_FILE), b"").expect("frames");
        std::fs::write(dir.join("captured.xml"), b"<captured><counters>").expect("xml");
        let error = Recording::open(&dir).expect_err("malformed XML");
        assert!(matches!(error, RecordingError::Xml { .. }), "{error:?}");
        assert!(error.path().ends_with("captured.xml"));
    }

    #[test]
    fn bad_frames_are_issues_of_the_summary_and_the_walk_goes_on() {
        let dir = scratch("bad-frames");
        let mut file = Vec::new();
        // A frame of an unknown type, then an empty one, then a record cut short.
        assert!(encode_record(&[0x7f, 1, 2, 3], &mut file));
        assert!(encode_record(&[], &mut file));
        assert!(encode_record(&[1, 2, 3, 4], &mut file));
        file.truncate(file.len() - 1);
        std::fs::write(dir.join(FRAMES_FILE), &file).expect("frames");
        let mut recording = Recording::open(&dir).expect("capture");
        assert_eq!(recording.protocol(), None);
        assert_eq!(recording.version(), ProtocolVersion(950));
        let summary = recording
            .walk(|_| -> Result<(), RecordingError> { panic!("no value expected") })
            .expect("walk");
        assert_eq!(summary.samples, 0);
        // The first frame parses and is counted; the empty frame and the cut record are issues.
        assert_eq!(
            summary.frames.values().sum::<u64>(),
            1,
            "{:?}",
            summary.frames
        );
        assert!(
            matches!(
                &summary.issues[..],
                [
                    RecordingIssue::Frame { frame: 1, .. },
                    RecordingIssue::Record { frame: 2, .. }
                ]
            ),
            "{:?}",
            summary.issues
        );
        assert!(summary.issues[1].to_string().starts_with("frame 2: "));
    }

    #[test]
    fn an_unnamed_key_is_described() {
        let names = CounterNames::default();
        assert_eq!(names.name(0x12), "key 0x12");
        assert_eq!(
            names.name(0x7fff_fff1),
            "gatord's own perf event (key 0x7ffffff1)"
        );
        assert_eq!(SamplePeriod::Frequency(100).to_string(), "100 Hz");
        assert_eq!(SamplePeriod::None.to_string(), "none");
    }
}
