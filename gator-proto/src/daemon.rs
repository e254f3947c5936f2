//! The daemon side of a gatord connection as a sans-IO state machine, for simulators and tests that play gatord.

use std::collections::VecDeque;

use thiserror::Error;

use crate::command::{decode_command, CommandError, CommandType};
use crate::handshake::{decode_client_line, encode_gator_line, ClientLine, HandshakeError};
use crate::header::{EncodeError, DEFAULT_MAX_COMMAND_PAYLOAD};
use crate::response::{encode_response, ResponseType};
use crate::status::Decoded;
use crate::version::ProtocolVersion;

/// The text gatord sends (in a RESPONSE_ERROR) to a client that connects while another session runs.
pub const SESSION_IN_PROGRESS: &str = "Session already in progress";

/// Options of a daemon [`Session`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Config {
    /// The protocol version announced in `GATOR <n>\n`; it also gates commands and responses.
    pub protocol_version: ProtocolVersion,
    /// Largest command payload accepted (gatord: 1 MiB).
    pub max_command_payload: u32,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            protocol_version: ProtocolVersion::V950,
            max_command_payload: DEFAULT_MAX_COMMAND_PAYLOAD,
        }
    }
}

/// A command from the client, in arrival order.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Event {
    /// The client sent `STREAMLINE`; `GATOR <n>\n` has been queued.
    Connected {
        /// Lines the client sent before the magic (e.g. `VERSION 671`), ignored as gatord does.
        ignored_lines: Vec<Vec<u8>>,
    },
    /// REQUEST_XML.
    RequestXml {
        /// The `type` attribute of `<request>`, quoted or not, if one was found.
        request_type: Option<String>,
        /// The whole request document.
        document: Vec<u8>,
    },
    /// DELIVER_XML.
    DeliverXml(Vec<u8>),
    /// APC_START.
    ApcStart,
    /// APC_STOP.
    ApcStop,
    /// DISCONNECT.
    Disconnect,
    /// PING (answer with [`Session::send_ack`]).
    Ping,
    /// EXIT (protocol ≥ 750).
    Exit,
    /// REQUEST_CURRENT_CONFIG (protocol ≥ 750).
    RequestCurrentConfig,
}

/// A client that broke the protocol, or a response this daemon's version cannot send.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum DaemonError {
    /// A handshake line is longer than 64 bytes.
    #[error("bad handshake from the client")]
    Handshake(#[from] HandshakeError),
    /// An unknown command type or an over-long payload.
    #[error("bad command from the client")]
    Command(#[from] CommandError),
    /// A command that exists only in newer protocols than this daemon's.
    #[error("command {command:?} does not exist in protocol {version}")]
    UnsupportedCommand {
        /// The command.
        command: CommandType,
        /// This daemon's protocol.
        version: ProtocolVersion,
    },
    /// A response that exists only in newer protocols than this daemon's.
    #[error("response {response:?} does not exist in protocol {version}")]
    UnsupportedResponse {
        /// The response.
        response: ResponseType,
        /// This daemon's protocol.
        version: ProtocolVersion,
    },
    /// An APC frame must hold at least its type; an empty APC_DATA is the end marker.
    #[error("an APC frame cannot be empty (use send_end_of_capture)")]
    EmptyFrame,
    /// A payload does not fit the 32-bit length.
    #[error("response payload too large")]
    Encode(#[from] EncodeError),
    /// The session already reported an error and accepts nothing more.
    #[error("the session already failed")]
    Failed,
}

/// The daemon side of one connection: parses commands into events, encodes responses. No I/O.
///
/// # Methods
/// - getters: [`protocol_version`](Self::protocol_version), [`is_connected`](Self::is_connected)
/// - input: [`handle_input`](Self::handle_input)
/// - responses: [`send_xml`](Self::send_xml), [`send_ack`](Self::send_ack), [`send_nak`](Self::send_nak),
///   [`send_current_config`](Self::send_current_config), [`send_apc_frame`](Self::send_apc_frame),
///   [`send_end_of_capture`](Self::send_end_of_capture), [`send_error`](Self::send_error),
///   [`send_gator_log`](Self::send_gator_log), [`send_activity_started`](Self::send_activity_started)
/// - outputs: [`poll_transmit`](Self::poll_transmit), [`poll_event`](Self::poll_event)
///
/// # Call order
/// Feed bytes read from the client to `handle_input`, drain `poll_event`, answer each event with the `send_*`
/// methods the way gatord does (ACK a PING, XML or NAK a request, ACK a delivery, nothing for APC_START, frames
/// then the end marker after APC_STOP), and write whatever `poll_transmit` gives. The `GATOR <n>\n` answer is
/// queued by the session itself when the client's `STREAMLINE` line arrives.
#[derive(Debug)]
pub struct Session {
    config: Config,
    connected: bool,
    failed: bool,
    ignored_lines: Vec<Vec<u8>>,
    events: VecDeque<Event>,
    transmit: Vec<u8>,
    inbuf: Vec<u8>,
}

impl Session {
    /// A session waiting for the client's handshake.
    pub fn new(config: Config) -> Session {
        Session {
            config,
            connected: false,
            failed: false,
            ignored_lines: Vec::new(),
            events: VecDeque::new(),
            transmit: Vec::new(),
            inbuf: Vec::new(),
        }
    }

    /// The protocol version this daemon speaks.
    pub fn protocol_version(&self) -> ProtocolVersion {
        self.config.protocol_version
    }

    /// True once the client's `STREAMLINE` arrived.
    pub fn is_connected(&self) -> bool {
        self.connected
    }

    /// Moves the bytes waiting to be sent to the end of `out`; returns how many were moved.
    #[must_use = "the bytes appended to `out` must be written to the peer"]
    pub fn poll_transmit(&mut self, out: &mut Vec<u8>) -> usize {
        let n = self.transmit.len();
        out.append(&mut self.transmit);
        n
    }

    /// The next command, if any.
    #[must_use = "an event not taken is lost to the caller"]
    pub fn poll_event(&mut self) -> Option<Event> {
        self.events.pop_front()
    }

    /// Feeds bytes read from the client. Complete commands become events; a partial one is kept.
    pub fn handle_input(&mut self, bytes: &[u8]) -> Result<(), DaemonError> {
        if self.failed {
            return Err(DaemonError::Failed);
        }
        self.inbuf.extend_from_slice(bytes);
        let buffered = std::mem::take(&mut self.inbuf);
        let result = self.process(&buffered);
        self.inbuf = buffered;
        match result {
            Ok(used) => {
                self.inbuf.drain(..used);
                Ok(())
            }
            Err(error) => {
                self.failed = true;
                Err(error)
            }
        }
    }

    fn process(&mut self, buf: &[u8]) -> Result<usize, DaemonError> {
        let mut pos = 0;
        while pos < buf.len() {
            if !self.connected {
                match decode_client_line(&buf[pos..])? {
                    Decoded::Partial => break,
                    Decoded::Complete { value, consumed } => {
                        pos += consumed;
                        match value {
                            ClientLine::Streamline => {
                                self.connected = true;
                                encode_gator_line(self.config.protocol_version, &mut self.transmit);
                                let ignored_lines = std::mem::take(&mut self.ignored_lines);
                                self.events.push_back(Event::Connected { ignored_lines });
                            }
                            ClientLine::Ignored([]) => {}
                            ClientLine::Ignored(line) => self.ignored_lines.push(line.to_vec()),
                        }
                    }
                }
                continue;
            }
            match decode_command(&buf[pos..], self.config.max_command_payload)? {
                Decoded::Partial => break,
                Decoded::Complete { value, consumed } => {
                    pos += consumed;
                    let version = self.config.protocol_version;
                    let event = match value.kind {
                        CommandType::RequestXml => Event::RequestXml {
                            request_type: request_type(value.payload).map(str::to_owned),
                            document: value.payload.to_vec(),
                        },
                        CommandType::DeliverXml => Event::DeliverXml(value.payload.to_vec()),
                        CommandType::ApcStart => Event::ApcStart,
                        CommandType::ApcStop => Event::ApcStop,
                        CommandType::Disconnect => Event::Disconnect,
                        CommandType::Ping => Event::Ping,
                        command @ (CommandType::Exit | CommandType::RequestCurrentConfig) => {
                            if !version.at_least(ProtocolVersion::V750) {
                                return Err(DaemonError::UnsupportedCommand { command, version });
                            }
                            if command == CommandType::Exit {
                                Event::Exit
                            } else {
                                Event::RequestCurrentConfig
                            }
                        }
                    };
                    self.events.push_back(event);
                }
            }
        }
        Ok(pos)
    }

    fn respond(&mut self, kind: ResponseType, payload: &[u8]) -> Result<(), DaemonError> {
        encode_response(kind, payload, &mut self.transmit)?;
        Ok(())
    }

    fn require(&self, response: ResponseType, needed: ProtocolVersion) -> Result<(), DaemonError> {
        let version = self.config.protocol_version;
        if version.at_least(needed) {
            Ok(())
        } else {
            Err(DaemonError::UnsupportedResponse { response, version })
        }
    }

    /// Queues RESPONSE_XML with `document`.
    pub fn send_xml(&mut self, document: &[u8]) -> Result<(), DaemonError> {
        self.respond(ResponseType::Xml, document)
    }

    /// Queues an empty ACK.
    pub fn send_ack(&mut self) {
        self.transmit
            .extend_from_slice(&[ResponseType::Ack.byte(), 0, 0, 0, 0]);
    }

    /// Queues a NAK with `text` (gatord sends `Unknown request`, or nothing for a refused delivery).
    pub fn send_nak(&mut self, text: &[u8]) -> Result<(), DaemonError> {
        self.respond(ResponseType::Nak, text)
    }

    /// Queues RESPONSE_CURRENT_CONFIG (protocol ≥ 750).
    pub fn send_current_config(&mut self, document: &[u8]) -> Result<(), DaemonError> {
        self.require(ResponseType::CurrentConfig, ProtocolVersion::V750)?;
        self.respond(ResponseType::CurrentConfig, document)
    }

    /// Queues one APC_DATA carrying `frame` (`packInt frame_type` + body, as the `apc` encoders write it).
    pub fn send_apc_frame(&mut self, frame: &[u8]) -> Result<(), DaemonError> {
        if frame.is_empty() {
            return Err(DaemonError::EmptyFrame);
        }
        self.respond(ResponseType::ApcData, frame)
    }

    /// Queues the end-of-capture marker, a zero-length APC_DATA (`03 00 00 00 00`).
    pub fn send_end_of_capture(&mut self) {
        self.transmit
            .extend_from_slice(&[ResponseType::ApcData.byte(), 0, 0, 0, 0]);
    }

    /// Queues RESPONSE_ERROR with `text`, then the end marker, as gatord always does.
    pub fn send_error(&mut self, text: &[u8]) -> Result<(), DaemonError> {
        self.respond(ResponseType::Error, text)?;
        self.send_end_of_capture();
        Ok(())
    }

    /// Queues RESPONSE_ERROR without the end marker (gatord's "Session already in progress" answer on a second
    /// connection is followed by a close, not by the marker).
    pub fn send_error_only(&mut self, text: &[u8]) -> Result<(), DaemonError> {
        self.respond(ResponseType::Error, text)
    }

    /// Queues one capture-log chunk (protocol ≥ 870); an empty chunk ends the log.
    pub fn send_gator_log(&mut self, chunk: &[u8]) -> Result<(), DaemonError> {
        self.require(ResponseType::GatorLog, ProtocolVersion::V870)?;
        self.respond(ResponseType::GatorLog, chunk)
    }

    /// Queues RESPONSE_ACTIVITY_STARTED (protocol ≥ 890).
    pub fn send_activity_started(&mut self) -> Result<(), DaemonError> {
        self.require(ResponseType::ActivityStarted, ProtocolVersion::V890)?;
        self.respond(ResponseType::ActivityStarted, &[])
    }
}

/// The `type` attribute of the `<request>` element in a REQUEST_XML document, quoted (`"`/`'`) or unquoted as
/// mxml accepts it; `None` if there is no `<request` element or no `type` attribute.
pub fn request_type(document: &[u8]) -> Option<&str> {
    let text = std::str::from_utf8(document).ok()?;
    let element = &text[text.find("<request")? + "<request".len()..];
    let element = &element[..element.find('>').unwrap_or(element.len())];
    let mut rest = element;
    loop {
        let at = rest.find("type")?;
        let before_ok = at == 0 || rest.as_bytes()[at - 1].is_ascii_whitespace();
        let after = rest[at + 4..].trim_start();
        rest = &rest[at + 4..];
        if !before_ok {
            continue;
        }
        let Some(value) = after.strip_prefix('=') else {
            continue;
        };
        let value = value.trim_start();
        return match value.chars().next()? {
            quote @ ('"' | '\'') => {
                let inner = &value[1..];
                Some(&inner[..inner.find(quote)?])
            }
            _ => {
                let end =
                    value.find(|c: char| c.is_whitespace() || c == '/' || c == '>' || c == '=');
                let name = &value[..end.unwrap_or(value.len())];
                (!name.is_empty()).then_some(name)
            }
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_type_forms() {
        assert_eq!(
            request_type(b"<?xml version=\"1.0\"?>\n<request type=\"events\"/>"),
            Some("events")
        );
        assert_eq!(
            request_type(b"<?xml version=\"1.0\"?><request type=captured/>"),
            Some("captured")
        );
        assert_eq!(
            request_type(b"<request  type = 'counters' />"),
            Some("counters")
        );
        assert_eq!(
            request_type(b"<request subtype=\"x\" type=\"defaults\"/>"),
            Some("defaults")
        );
        assert_eq!(request_type(b"<request/>"), None);
        assert_eq!(request_type(b"<session type=\"x\"/>"), None);
        assert_eq!(request_type(b"<request type=\"open"), None);
        assert_eq!(request_type(&[0xff, 0xfe]), None);
    }

    #[test]
    fn legacy_line_then_magic_connects() {
        let mut daemon = Session::new(Config {
            protocol_version: ProtocolVersion::V670,
            ..Config::default()
        });
        daemon
            .handle_input(b"VERSION 671\nSTREAMLINE\n\x05\0\0\0\0")
            .unwrap();
        assert_eq!(
            daemon.poll_event(),
            Some(Event::Connected {
                ignored_lines: vec![b"VERSION 671".to_vec()]
            })
        );
        assert_eq!(daemon.poll_event(), Some(Event::Ping));
        let mut out = Vec::new();
        let moved = daemon.poll_transmit(&mut out);
        assert_eq!(moved, out.len());
        assert_eq!(out, b"GATOR 670\n");
    }

    #[test]
    fn protocol_670_refuses_newer_commands_and_responses() {
        let mut daemon = Session::new(Config {
            protocol_version: ProtocolVersion::V670,
            ..Config::default()
        });
        assert_eq!(
            daemon.send_gator_log(b"x"),
            Err(DaemonError::UnsupportedResponse {
                response: ResponseType::GatorLog,
                version: ProtocolVersion::V670
            })
        );
        assert!(daemon.send_current_config(b"<current_config/>").is_err());
        assert!(daemon.send_activity_started().is_err());
        assert_eq!(
            daemon.handle_input(b"STREAMLINE\n\x07\0\0\0\0"),
            Err(DaemonError::UnsupportedCommand {
                command: CommandType::RequestCurrentConfig,
                version: ProtocolVersion::V670
            })
        );
        assert_eq!(daemon.handle_input(b""), Err(DaemonError::Failed));
    }

    #[test]
    fn unknown_command_and_long_line_are_errors() {
        let mut daemon = Session::new(Config::default());
        assert_eq!(
            daemon.handle_input(b"STREAMLINE\n\x09"),
            Err(DaemonError::Command(CommandError::UnknownType(9)))
        );
        let mut daemon = Session::new(Config::default());
        assert_eq!(
            daemon.handle_input(&[b'x'; 80]),
            Err(DaemonError::Handshake(HandshakeError::LineTooLong))
        );
    }

    #[test]
    fn empty_frame_is_refused() {
        let mut daemon = Session::new(Config::default());
        assert_eq!(daemon.send_apc_frame(&[]), Err(DaemonError::EmptyFrame));
    }

    #[test]
    fn error_is_followed_by_the_end_marker() {
        let mut daemon = Session::new(Config::default());
        daemon
            .send_error(b"Invalid sample rate () in session xml.")
            .unwrap();
        let mut out = Vec::new();
        let moved = daemon.poll_transmit(&mut out);
        assert_eq!(moved, out.len());
        assert_eq!(&out[..5], &[0xff, 0x26, 0, 0, 0]);
        assert_eq!(&out[out.len() - 5..], &[3, 0, 0, 0, 0]);
    }
}
