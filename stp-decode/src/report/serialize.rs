//! The report's events as data (feature `serde`): an event serializes as one map, its `event` member naming
//! the variant ([`ReportEvent::name`]) and the other members its fields; [`ReportEvent::fields`] is the map
//! without `event`, for a consumer that files events by kind.
//!
//! | `event` | members |
//! |---|---|
//! | `message` | `time`, then the [`Message`](crate::message::Message)'s own (`master`, `channel`, `timestamp`, `offset`, `packets`, `kind`, `protocol`, `reason`, `text`, `data`, `values`) |
//! | `torn` | `time`, `master`, `channel`, `packets`, `bytes`, `offset`, `cause` ([`TearCause::name`](crate::message::TearCause::name)) |
//! | `span` | `span` (its position among the configured spans), `name`, `master`, `begin`, `end` |
//! | `cptracer` | `time`, `master`, `channel`, `word` |
//! | `window` | `begin`, `end`, `bytes` |
//! | `loss` | `time`, then the [`Loss`]'s own: `kind` ([`Loss::name`]) and, by kind, `nibbles` (`unsynced`), `error` (`decode`, `frame`: what went wrong and where, as text), `master` (`master_overflow`, absent before any master was known), `value` (the overflows) |

use serde::ser::{SerializeMap, Serializer};
use serde::Serialize;

use super::{Loss, ReportEvent};

/// A [`ReportEvent`]'s members without its `event` tag ([`ReportEvent::fields`]).
#[derive(Debug, Clone, Copy)]
pub struct EventFields<'e, 'a>(&'e ReportEvent<'a>);

impl<'a> ReportEvent<'a> {
    /// The event's members without its `event` tag, serializable (the module's table lists them).
    pub fn fields(&self) -> EventFields<'_, 'a> {
        EventFields(self)
    }
}

/// A payload with the time it was found, its members after `time`.
#[derive(Serialize)]
struct Timed<'v, T: Serialize> {
    time: u64,
    #[serde(flatten)]
    of: &'v T,
}

#[derive(Serialize)]
struct SpanMembers<'v> {
    span: usize,
    name: &'v str,
    master: u16,
    begin: u64,
    end: u64,
}

#[derive(Serialize)]
struct CpTracerMembers {
    time: u64,
    master: u16,
    channel: u16,
    word: u32,
}

#[derive(Serialize)]
struct WindowMembers {
    begin: u64,
    end: u64,
    bytes: u64,
}

impl Serialize for EventFields<'_, '_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match *self.0 {
            ReportEvent::Message { time, message } => {
                Timed { time, of: message }.serialize(serializer)
            }
            ReportEvent::Torn { time, ref torn } => Timed { time, of: torn }.serialize(serializer),
            ReportEvent::Span {
                span,
                name,
                master,
                begin,
                end,
            } => SpanMembers {
                span,
                name,
                master,
                begin,
                end,
            }
            .serialize(serializer),
            ReportEvent::CpTracer {
                time,
                master,
                channel,
                word,
            } => CpTracerMembers {
                time,
                master,
                channel,
                word,
            }
            .serialize(serializer),
            ReportEvent::Window { begin, end, bytes } => {
                WindowMembers { begin, end, bytes }.serialize(serializer)
            }
            ReportEvent::Loss { time, ref loss } => Timed { time, of: loss }.serialize(serializer),
        }
    }
}

/// The event as one map: `event` ([`ReportEvent::name`]), then its [fields](ReportEvent::fields).
impl Serialize for ReportEvent<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct Tagged<'e, 'a> {
            event: &'static str,
            #[serde(flatten)]
            fields: EventFields<'e, 'a>,
        }
        Tagged {
            event: self.name(),
            fields: self.fields(),
        }
        .serialize(serializer)
    }
}

/// A loss as a map: `kind` ([`Loss::name`]) and the members of its kind (see the module's table).
impl Serialize for Loss {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("kind", self.name())?;
        match *self {
            Loss::Unsynced { nibbles } => map.serialize_entry("nibbles", &nibbles)?,
            Loss::Decode(error) => map.serialize_entry("error", &format_args!("{error}"))?,
            Loss::Frame(error) => map.serialize_entry("error", &format_args!("{error}"))?,
            Loss::MasterOverflow { master, value } => {
                if let Some(master) = master {
                    map.serialize_entry("master", &master)?;
                }
                map.serialize_entry("value", &value)?;
            }
            Loss::GlobalOverflow { value } => map.serialize_entry("value", &value)?,
        }
        map.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::{DecodeError, StpError};
    use crate::message::{TearCause, Torn};
    use serde_json::json;
    use std::string::ToString;

    #[test]
    fn each_event_has_its_documented_members() {
        let torn = Torn {
            master: 2,
            channel: 5,
            packets: 3,
            bytes: 12,
            offset: 40,
            cause: TearCause::SyncLost,
        };
        let event = ReportEvent::Torn { time: 7, torn };
        assert_eq!(
            serde_json::to_value(event).unwrap(),
            json!({"event": "torn", "time": 7, "master": 2, "channel": 5, "packets": 3, "bytes": 12,
                   "offset": 40, "cause": "sync_lost"})
        );
        assert_eq!(
            serde_json::to_value(event.fields()).unwrap(),
            json!({"time": 7, "master": 2, "channel": 5, "packets": 3, "bytes": 12, "offset": 40,
                   "cause": "sync_lost"})
        );
        let span = ReportEvent::Span {
            span: 1,
            name: "frame",
            master: 3,
            begin: 10,
            end: 26,
        };
        assert_eq!(
            serde_json::to_value(span).unwrap(),
            json!({"event": "span", "span": 1, "name": "frame", "master": 3, "begin": 10, "end": 26})
        );
        let word = ReportEvent::CpTracer {
            time: 4,
            master: 0x80,
            channel: 1,
            word: 0xdead,
        };
        assert_eq!(
            serde_json::to_value(word.fields()).unwrap(),
            json!({"time": 4, "master": 128, "channel": 1, "word": 0xdead})
        );
        let window = ReportEvent::Window {
            begin: 0,
            end: 1000,
            bytes: 64,
        };
        assert_eq!(
            serde_json::to_value(window).unwrap(),
            json!({"event": "window", "begin": 0, "end": 1000, "bytes": 64})
        );
    }

    #[test]
    fn each_loss_has_the_members_of_its_kind() {
        let loss =
            |loss| serde_json::to_value(ReportEvent::Loss { time: 9, loss }.fields()).unwrap();
        assert_eq!(
            loss(Loss::Unsynced { nibbles: 128 }),
            json!({"time": 9, "kind": "unsynced", "nibbles": 128})
        );
        let decode = DecodeError {
            offset: 12,
            error: StpError::InvalidAsync,
        };
        assert_eq!(
            loss(Loss::Decode(decode)),
            json!({"time": 9, "kind": "decode", "error": decode.to_string()})
        );
        assert_eq!(
            loss(Loss::MasterOverflow {
                master: Some(3),
                value: 1
            }),
            json!({"time": 9, "kind": "master_overflow", "master": 3, "value": 1})
        );
        assert_eq!(
            loss(Loss::MasterOverflow {
                master: None,
                value: 1
            }),
            json!({"time": 9, "kind": "master_overflow", "value": 1})
        );
        assert_eq!(
            loss(Loss::GlobalOverflow { value: 2 }),
            json!({"time": 9, "kind": "global_overflow", "value": 2})
        );
        let frame = crate::error::FrameErrorAt {
            offset: 32,
            error: crate::error::FrameError::ReservedId { index: 4 },
        };
        assert_eq!(
            loss(Loss::Frame(frame)),
            json!({"time": 9, "kind": "frame", "error": "at byte 32: reserved trace ID 0x7f at byte 4 of the frame"})
        );
    }
}
