//! The client side of a gatord connection as a sans-IO state machine.

use std::collections::VecDeque;
use std::fmt;
use std::ops::Deref;
use std::sync::Arc;

use thiserror::Error;

use crate::command::{encode_command, CommandType};
use crate::handshake::{decode_gator_line, encode_legacy_version_line, HandshakeError, STREAMLINE};
use crate::header::{EncodeError, DEFAULT_MAX_COMMAND_PAYLOAD, DEFAULT_MAX_RESPONSE_PAYLOAD};
use crate::response::{decode_response, Response, ResponseError, ResponseType};
use crate::status::Decoded;
use crate::version::ProtocolVersion;

/// The XML declaration every request starts with (gatord NAKs requests without it).
pub const XML_DECLARATION: &str = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>";

/// Limits and options of a [`Session`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Config {
    /// Largest response payload accepted; a longer header is an error before anything is buffered for it.
    pub max_response_payload: u32,
    /// Largest command payload sent (gatord refuses more than 1 MiB).
    pub max_command_payload: u32,
    /// If set, a legacy `VERSION <n>\n` line is sent before `STREAMLINE\n`, as Lizard does with 671.
    pub legacy_version_line: Option<u32>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            max_response_payload: DEFAULT_MAX_RESPONSE_PAYLOAD,
            max_command_payload: DEFAULT_MAX_COMMAND_PAYLOAD,
            legacy_version_line: None,
        }
    }
}

/// Where a [`Session`] is in the conversation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    /// Waiting for the `GATOR <n>` answer (commands may already be queued).
    Handshaking,
    /// Handshake done; XML requests, deliveries, PING and APC_START are allowed.
    Setup,
    /// APC_START sent; frames arrive; PING and APC_STOP are allowed.
    Capturing,
    /// APC_STOP sent; remaining frames arrive until the end marker.
    Stopping,
    /// The zero-length APC_DATA end marker arrived; the daemon closes the connection next.
    Ended,
    /// DISCONNECT or EXIT was sent; later input is ignored.
    Disconnected,
    /// The peer closed the connection cleanly ([`Session::handle_eof`]).
    Closed,
    /// A protocol violation was reported; the session accepts nothing more.
    Failed,
}

/// Something the daemon said, in arrival order.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Event {
    /// The handshake completed.
    Connected {
        /// The daemon's protocol version.
        version: ProtocolVersion,
    },
    /// The XML document answering [`Session::request_xml`].
    Xml {
        /// The requested type (`events`, `counters`, `captured`, …).
        request: String,
        /// The document bytes.
        document: Vec<u8>,
    },
    /// The daemon refused an XML request (text such as `Unknown request`).
    XmlRejected {
        /// The requested type.
        request: String,
        /// The NAK text.
        message: Vec<u8>,
    },
    /// The delivered document was accepted (ACK).
    Delivered,
    /// The delivered document was refused (NAK).
    DeliveryRejected {
        /// The NAK text (usually empty).
        message: Vec<u8>,
    },
    /// A PING was acknowledged.
    Pong,
    /// The `<current_config>` document answering [`Session::request_current_config`].
    CurrentConfig(Vec<u8>),
    /// One APC frame (`packInt frame_type` + body), a view into the received bytes; decode it with
    /// [`crate::apc::Frame::parse`].
    ApcFrame(ApcFrame),
    /// The zero-length APC_DATA: the capture (or, after [`Event::DaemonError`], the connection) is over.
    EndOfCapture,
    /// The daemon reported a fatal error; [`Event::EndOfCapture`] normally follows.
    DaemonError(Vec<u8>),
    /// A chunk of the daemon's capture log.
    GatorLog(Vec<u8>),
    /// The capture log is complete.
    GatorLogEnd,
    /// The profiled application was started.
    ActivityStarted,
    /// The peer closed the connection at a message boundary.
    Closed,
}

/// The bytes of one APC frame, where they were received: a shared view into the chunk of input that held
/// it, never copied out. Cloning it shares the chunk; the chunk is freed when its last frame is dropped.
/// It dereferences to `[u8]`.
#[derive(Clone)]
pub struct ApcFrame {
    chunk: Arc<Vec<u8>>,
    start: usize,
    end: usize,
}

impl ApcFrame {
    /// The frame bytes.
    pub fn as_bytes(&self) -> &[u8] {
        &self.chunk[self.start..self.end]
    }
}

impl Deref for ApcFrame {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        self.as_bytes()
    }
}

impl AsRef<[u8]> for ApcFrame {
    fn as_ref(&self) -> &[u8] {
        self.as_bytes()
    }
}

impl PartialEq for ApcFrame {
    fn eq(&self, other: &Self) -> bool {
        self.as_bytes() == other.as_bytes()
    }
}

impl Eq for ApcFrame {}

impl fmt::Debug for ApcFrame {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("ApcFrame").field(&self.as_bytes()).finish()
    }
}

/// A protocol violation or a misuse of the session.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum ClientError {
    /// The daemon's handshake answer is malformed.
    #[error("bad handshake from the daemon")]
    Handshake(#[from] HandshakeError),
    /// A response header is unknown or announces a payload over the limit.
    #[error("bad response from the daemon")]
    Response(#[from] ResponseError),
    /// A well-formed response arrived that does not answer anything outstanding in this state.
    #[error("unexpected {kind:?} response in state {state:?}")]
    UnexpectedResponse {
        /// The response type.
        kind: ResponseType,
        /// The session state when it arrived.
        state: State,
    },
    /// A command was issued in a state that does not allow it.
    #[error("{command:?} is not allowed in state {state:?}")]
    InvalidState {
        /// The command.
        command: CommandType,
        /// The session state.
        state: State,
    },
    /// A command needs a newer daemon than the one connected.
    #[error("{command:?} needs protocol {needed}, the daemon speaks {version}")]
    Unsupported {
        /// The command.
        command: CommandType,
        /// The first protocol with it.
        needed: ProtocolVersion,
        /// The daemon's protocol.
        version: ProtocolVersion,
    },
    /// A command payload is over the limit.
    #[error("command payload too large")]
    Encode(#[from] EncodeError),
    /// An XML request type that is not a plain name (letters, digits, `_`, `-`).
    #[error("invalid XML request type {0:?}")]
    InvalidRequestType(String),
    /// The peer closed the connection in the middle of a message.
    #[error("connection closed with {buffered} byte(s) of an incomplete message")]
    TruncatedAtEof {
        /// The bytes of the incomplete message.
        buffered: usize,
    },
    /// The session already reported an error and accepts nothing more.
    #[error("the session already failed")]
    Failed,
}

/// Input handed to [`Session::receive`].
enum Input<'a> {
    Borrowed(&'a [u8]),
    Owned(Vec<u8>),
}

impl Deref for Input<'_> {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        match self {
            Input::Borrowed(bytes) => bytes,
            Input::Owned(bytes) => bytes,
        }
    }
}

/// Where the APC frames of one input are kept: the input itself when the session was handed it, else a
/// copy of the input from its first APC frame on, made when that frame is met (one copy for all the
/// frames after it).
struct SharedInput {
    chunk: Option<Arc<Vec<u8>>>,
    /// Offset in the decoded bytes of `chunk[0]`.
    base: usize,
}

impl SharedInput {
    fn owned(chunk: Arc<Vec<u8>>) -> SharedInput {
        SharedInput {
            chunk: Some(chunk),
            base: 0,
        }
    }

    fn borrowed() -> SharedInput {
        SharedInput {
            chunk: None,
            base: 0,
        }
    }

    /// The frame at `start..end` of `buf` (the bytes being decoded).
    fn frame(&mut self, buf: &[u8], start: usize, end: usize) -> ApcFrame {
        let base = &mut self.base;
        let chunk = self.chunk.get_or_insert_with(|| {
            *base = start;
            Arc::new(buf[start..].to_vec())
        });
        ApcFrame {
            chunk: Arc::clone(chunk),
            start: start - self.base,
            end: end - self.base,
        }
    }
}

/// What an outstanding command waits for.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Pending {
    Ping,
    Xml(String),
    Deliver,
    CurrentConfig,
}

/// The client side of one gatord connection: bytes in, events and bytes out, no I/O.
///
/// # Methods
/// - getters: [`state`](Self::state), [`protocol_version`](Self::protocol_version)
/// - input: [`handle_input`](Self::handle_input) with bytes read from the socket,
///   [`handle_eof`](Self::handle_eof) when the read side is closed
/// - commands: [`ping`](Self::ping), [`request_xml`](Self::request_xml), [`deliver_xml`](Self::deliver_xml),
///   [`request_current_config`](Self::request_current_config), [`start_capture`](Self::start_capture),
///   [`stop_capture`](Self::stop_capture), [`disconnect`](Self::disconnect), [`exit_daemon`](Self::exit_daemon)
/// - outputs: [`poll_transmit`](Self::poll_transmit) (bytes to write), [`poll_event`](Self::poll_event)
///
/// # Call order
/// 1. [`Session::new`] queues the handshake (`STREAMLINE\n`); write what [`poll_transmit`](Self::poll_transmit)
///    gives.
/// 2. Issue commands at any time their state allows (they may be queued before the handshake answer arrives);
///    after each, call `poll_transmit` and write the bytes.
/// 3. Feed every byte read to [`handle_input`](Self::handle_input) (any split is fine), then drain
///    [`poll_event`](Self::poll_event) until it returns `None`. At end of stream call
///    [`handle_eof`](Self::handle_eof).
///
/// Replies are matched to commands in order, as gatord answers them in order. An error from `handle_input`
/// leaves the events decoded before it in the queue and puts the session in [`State::Failed`].
#[derive(Debug)]
pub struct Session {
    config: Config,
    state: State,
    version: Option<ProtocolVersion>,
    pending: VecDeque<Pending>,
    events: VecDeque<Event>,
    transmit: Vec<u8>,
    inbuf: Vec<u8>,
    inpos: usize,
}

impl Session {
    /// A new session with the handshake queued for transmission.
    pub fn new(config: Config) -> Session {
        let mut transmit = Vec::new();
        if let Some(version) = config.legacy_version_line {
            encode_legacy_version_line(version, &mut transmit);
        }
        transmit.extend_from_slice(STREAMLINE);
        Session {
            config,
            state: State::Handshaking,
            version: None,
            pending: VecDeque::new(),
            events: VecDeque::new(),
            transmit,
            inbuf: Vec::new(),
            inpos: 0,
        }
    }

    /// The current state.
    pub fn state(&self) -> State {
        self.state
    }

    /// The daemon's protocol version, once the handshake is done.
    pub fn protocol_version(&self) -> Option<ProtocolVersion> {
        self.version
    }

    /// Moves the bytes waiting to be sent to the end of `out`; returns how many were moved.
    #[must_use = "the bytes appended to `out` must be written to the peer"]
    pub fn poll_transmit(&mut self, out: &mut Vec<u8>) -> usize {
        let n = self.transmit.len();
        out.append(&mut self.transmit);
        n
    }

    /// The next event, if any.
    #[must_use = "an event not taken is lost to the caller"]
    pub fn poll_event(&mut self) -> Option<Event> {
        self.events.pop_front()
    }

    /// Queues PING; [`Event::Pong`] answers it. Allowed from the start until the end marker.
    pub fn ping(&mut self) -> Result<(), ClientError> {
        self.require(
            CommandType::Ping,
            &[
                State::Handshaking,
                State::Setup,
                State::Capturing,
                State::Stopping,
            ],
        )?;
        self.send(CommandType::Ping, &[])?;
        self.pending.push_back(Pending::Ping);
        Ok(())
    }

    /// Queues `<?xml …?>\n<request type="KIND"/>`; [`Event::Xml`] or [`Event::XmlRejected`] answers it.
    ///
    /// `kind` is `events`, `counters`, `captured`, `configuration`, `defaults` or any other plain name.
    pub fn request_xml(&mut self, kind: &str) -> Result<(), ClientError> {
        self.require(CommandType::RequestXml, &[State::Handshaking, State::Setup])?;
        let plain = !kind.is_empty()
            && kind
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
        if !plain {
            return Err(ClientError::InvalidRequestType(kind.to_owned()));
        }
        let document = format!("{XML_DECLARATION}\n<request type=\"{kind}\"/>");
        self.send(CommandType::RequestXml, document.as_bytes())?;
        self.pending.push_back(Pending::Xml(kind.to_owned()));
        Ok(())
    }

    /// Queues DELIVER_XML with a `<session>` or `<configurations>` document; [`Event::Delivered`] or
    /// [`Event::DeliveryRejected`] answers it.
    pub fn deliver_xml(&mut self, document: &[u8]) -> Result<(), ClientError> {
        self.require(CommandType::DeliverXml, &[State::Handshaking, State::Setup])?;
        self.send(CommandType::DeliverXml, document)?;
        self.pending.push_back(Pending::Deliver);
        Ok(())
    }

    /// Queues REQUEST_CURRENT_CONFIG (protocol ≥ 750); [`Event::CurrentConfig`] answers it.
    pub fn request_current_config(&mut self) -> Result<(), ClientError> {
        self.require(
            CommandType::RequestCurrentConfig,
            &[State::Handshaking, State::Setup],
        )?;
        self.require_version(CommandType::RequestCurrentConfig, ProtocolVersion::V750)?;
        self.send(CommandType::RequestCurrentConfig, &[])?;
        self.pending.push_back(Pending::CurrentConfig);
        Ok(())
    }

    /// Queues APC_START. There is no reply: [`Event::ApcFrame`]s follow.
    pub fn start_capture(&mut self) -> Result<(), ClientError> {
        self.require(CommandType::ApcStart, &[State::Handshaking, State::Setup])?;
        self.send(CommandType::ApcStart, &[])?;
        self.state = State::Capturing;
        Ok(())
    }

    /// Queues APC_STOP. The remaining frames follow, then [`Event::EndOfCapture`].
    pub fn stop_capture(&mut self) -> Result<(), ClientError> {
        self.require(CommandType::ApcStop, &[State::Capturing])?;
        self.send(CommandType::ApcStop, &[])?;
        self.state = State::Stopping;
        Ok(())
    }

    /// Queues DISCONNECT (no reply; the daemon closes). Later input is ignored.
    pub fn disconnect(&mut self) -> Result<(), ClientError> {
        self.require(
            CommandType::Disconnect,
            &[
                State::Handshaking,
                State::Setup,
                State::Capturing,
                State::Stopping,
                State::Ended,
            ],
        )?;
        self.send(CommandType::Disconnect, &[])?;
        self.state = State::Disconnected;
        self.pending.clear();
        Ok(())
    }

    /// Queues EXIT (protocol ≥ 750): the daemon process itself exits. Later input is ignored.
    pub fn exit_daemon(&mut self) -> Result<(), ClientError> {
        self.require(
            CommandType::Exit,
            &[
                State::Handshaking,
                State::Setup,
                State::Capturing,
                State::Stopping,
                State::Ended,
            ],
        )?;
        self.require_version(CommandType::Exit, ProtocolVersion::V750)?;
        self.send(CommandType::Exit, &[])?;
        self.state = State::Disconnected;
        self.pending.clear();
        Ok(())
    }

    /// Feeds bytes read from the connection. Complete messages become events; a partial one is kept.
    ///
    /// APC frames share one copy of the input from the first frame on (see [`ApcFrame`]); a caller that
    /// reads into a fresh buffer can hand it over without that copy with
    /// [`handle_input_owned`](Self::handle_input_owned).
    pub fn handle_input(&mut self, bytes: &[u8]) -> Result<(), ClientError> {
        self.receive(Input::Borrowed(bytes))
    }

    /// Feeds bytes read from the connection, taking ownership of the buffer: APC frames in it become views
    /// into it, with no copy at all. Otherwise the same as [`handle_input`](Self::handle_input).
    pub fn handle_input_owned(&mut self, bytes: Vec<u8>) -> Result<(), ClientError> {
        self.receive(Input::Owned(bytes))
    }

    fn receive(&mut self, input: Input<'_>) -> Result<(), ClientError> {
        match self.state {
            State::Failed => return Err(ClientError::Failed),
            State::Disconnected | State::Closed => return Ok(()),
            _ => {}
        }
        if self.inpos == self.inbuf.len() {
            // Nothing buffered: decode straight from the input and keep only an incomplete tail.
            self.inbuf.clear();
            self.inpos = 0;
            let (used, rest) = match input {
                Input::Owned(bytes) => {
                    let chunk = Arc::new(bytes);
                    let mut shared = SharedInput::owned(Arc::clone(&chunk));
                    let used = self.process(&chunk, &mut shared);
                    (used, chunk)
                }
                Input::Borrowed(bytes) => {
                    let used = self.process(bytes, &mut SharedInput::borrowed());
                    let used = used.map_err(|e| self.fail(e))?;
                    if self.state != State::Disconnected {
                        self.inbuf.extend_from_slice(&bytes[used..]);
                    }
                    return Ok(());
                }
            };
            let used = used.map_err(|e| self.fail(e))?;
            if self.state != State::Disconnected {
                self.inbuf.extend_from_slice(&rest[used..]);
            }
            return Ok(());
        }
        // A message started in earlier input: it is completed in the buffer.
        self.inbuf.extend_from_slice(&input);
        let buffered = std::mem::take(&mut self.inbuf);
        let used = self.process(&buffered[self.inpos..], &mut SharedInput::borrowed());
        self.inbuf = buffered;
        let used = used.map_err(|e| self.fail(e))?;
        self.inpos += used;
        if self.inpos == self.inbuf.len() {
            self.inbuf.clear();
            self.inpos = 0;
        } else if self.inpos > self.inbuf.len() / 2 {
            self.inbuf.drain(..self.inpos);
            self.inpos = 0;
        }
        Ok(())
    }

    /// Reports that the peer closed the connection. Clean at a message boundary ([`Event::Closed`]), an error
    /// inside a message.
    pub fn handle_eof(&mut self) -> Result<(), ClientError> {
        match self.state {
            State::Failed => return Err(ClientError::Failed),
            State::Closed => return Ok(()),
            _ => {}
        }
        let buffered = self.inbuf.len() - self.inpos;
        if buffered > 0 && self.state != State::Disconnected {
            return Err(self.fail(ClientError::TruncatedAtEof { buffered }));
        }
        self.state = State::Closed;
        self.pending.clear();
        self.events.push_back(Event::Closed);
        Ok(())
    }

    fn fail(&mut self, error: ClientError) -> ClientError {
        self.state = State::Failed;
        error
    }

    fn require(&self, command: CommandType, allowed: &[State]) -> Result<(), ClientError> {
        if allowed.contains(&self.state) {
            Ok(())
        } else {
            Err(ClientError::InvalidState {
                command,
                state: self.state,
            })
        }
    }

    fn require_version(
        &self,
        command: CommandType,
        needed: ProtocolVersion,
    ) -> Result<(), ClientError> {
        match self.version {
            Some(version) if !version.at_least(needed) => Err(ClientError::Unsupported {
                command,
                needed,
                version,
            }),
            _ => Ok(()),
        }
    }

    fn send(&mut self, kind: CommandType, payload: &[u8]) -> Result<(), ClientError> {
        encode_command(
            kind,
            payload,
            self.config.max_command_payload,
            &mut self.transmit,
        )?;
        Ok(())
    }

    /// Decodes as many whole messages from `buf` as possible; returns the bytes used. APC frames are views
    /// into `shared`.
    fn process(&mut self, buf: &[u8], shared: &mut SharedInput) -> Result<usize, ClientError> {
        let mut pos = 0;
        while pos < buf.len() {
            if matches!(self.state, State::Disconnected) {
                return Ok(buf.len());
            }
            if self.version.is_none() {
                match decode_gator_line(&buf[pos..])? {
                    Decoded::Partial => break,
                    Decoded::Complete { value, consumed } => {
                        pos += consumed;
                        self.version = Some(value);
                        // Commands queued before the answer (APC_START) may have moved the state on already.
                        if self.state == State::Handshaking {
                            self.state = State::Setup;
                        }
                        self.events.push_back(Event::Connected { version: value });
                    }
                }
                continue;
            }
            match decode_response(&buf[pos..], self.config.max_response_payload)? {
                Decoded::Partial => break,
                Decoded::Complete { value, consumed } => {
                    let frame = (value.kind == ResponseType::ApcData
                        && !value.payload.is_empty()
                        && matches!(self.state, State::Capturing | State::Stopping))
                    .then(|| {
                        shared.frame(buf, pos + consumed - value.payload.len(), pos + consumed)
                    });
                    pos += consumed;
                    self.on_response(value, frame)?;
                }
            }
        }
        Ok(pos)
    }

    /// Acts on one response; `frame` is the payload of an APC frame expected in this state, as a view
    /// into the received bytes.
    fn on_response(
        &mut self,
        response: Response<'_>,
        frame: Option<ApcFrame>,
    ) -> Result<(), ClientError> {
        let unexpected = ClientError::UnexpectedResponse {
            kind: response.kind,
            state: self.state,
        };
        if self.state == State::Ended {
            return Err(unexpected);
        }
        let payload = response.payload;
        let event = match response.kind {
            ResponseType::Xml => match self.pending.pop_front() {
                Some(Pending::Xml(request)) => Event::Xml {
                    request,
                    document: payload.to_vec(),
                },
                _ => return Err(unexpected),
            },
            ResponseType::Ack => match self.pending.pop_front() {
                Some(Pending::Ping) => Event::Pong,
                Some(Pending::Deliver) => Event::Delivered,
                _ => return Err(unexpected),
            },
            ResponseType::Nak => match self.pending.pop_front() {
                Some(Pending::Xml(request)) => Event::XmlRejected {
                    request,
                    message: payload.to_vec(),
                },
                Some(Pending::Deliver) => Event::DeliveryRejected {
                    message: payload.to_vec(),
                },
                _ => return Err(unexpected),
            },
            ResponseType::CurrentConfig => match self.pending.pop_front() {
                Some(Pending::CurrentConfig) => Event::CurrentConfig(payload.to_vec()),
                _ => return Err(unexpected),
            },
            ResponseType::ApcData if payload.is_empty() => {
                self.state = State::Ended;
                self.pending.clear();
                Event::EndOfCapture
            }
            ResponseType::ApcData => match frame {
                Some(frame) => Event::ApcFrame(frame),
                None => return Err(unexpected),
            },
            ResponseType::GatorLog if payload.is_empty() => Event::GatorLogEnd,
            ResponseType::GatorLog => Event::GatorLog(payload.to_vec()),
            ResponseType::ActivityStarted => Event::ActivityStarted,
            ResponseType::Error => Event::DaemonError(payload.to_vec()),
        };
        self.events.push_back(event);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn connected(version: &[u8]) -> Session {
        let mut session = Session::new(Config::default());
        session.handle_input(version).unwrap();
        assert!(matches!(
            session.poll_event(),
            Some(Event::Connected { .. })
        ));
        session
    }

    fn sent(session: &mut Session) -> Vec<u8> {
        let mut out = Vec::new();
        let moved = session.poll_transmit(&mut out);
        assert_eq!(moved, out.len());
        out
    }

    #[test]
    fn handshake_is_sent_first_with_optional_legacy_line() {
        let mut session = Session::new(Config {
            legacy_version_line: Some(671),
            ..Config::default()
        });
        assert_eq!(sent(&mut session), b"VERSION 671\nSTREAMLINE\n");
        assert_eq!(session.state(), State::Handshaking);
        assert_eq!(session.protocol_version(), None);
        session.handle_input(b"GATOR 1234\n").unwrap();
        assert_eq!(session.protocol_version(), Some(ProtocolVersion(1234)));
        assert_eq!(session.state(), State::Setup);
    }

    #[test]
    fn bad_handshake_fails_the_session() {
        let mut session = Session::new(Config::default());
        assert_eq!(
            session.handle_input(b"HELLO"),
            Err(ClientError::Handshake(HandshakeError::BadMagic))
        );
        assert_eq!(session.state(), State::Failed);
        assert_eq!(
            session.handle_input(b"GATOR 950\n"),
            Err(ClientError::Failed)
        );
        assert_eq!(session.handle_eof(), Err(ClientError::Failed));
    }

    #[test]
    fn commands_queued_before_the_answer_are_matched_after_it() {
        let mut session = Session::new(Config::default());
        session.ping().unwrap();
        session.start_capture().unwrap();
        session
            .handle_input(b"GATOR 950\n\x04\0\0\0\0\x03\x02\0\0\0\x05\x00")
            .unwrap();
        assert_eq!(
            session.poll_event(),
            Some(Event::Connected {
                version: ProtocolVersion::V950
            })
        );
        assert_eq!(session.poll_event(), Some(Event::Pong));
        let Some(Event::ApcFrame(frame)) = session.poll_event() else {
            panic!("no frame");
        };
        assert_eq!(&frame[..], [5, 0]);
        assert_eq!(session.state(), State::Capturing);
    }

    fn capturing() -> Session {
        let mut session = connected(b"GATOR 950\n");
        session.start_capture().unwrap();
        session
    }

    fn frames(session: &mut Session) -> Vec<ApcFrame> {
        std::iter::from_fn(|| session.poll_event())
            .filter_map(|e| match e {
                Event::ApcFrame(frame) => Some(frame),
                _ => None,
            })
            .collect()
    }

    /// Two APC_DATA messages holding frames `[5, 1, 2]` and `[5, 3]`.
    const TWO_FRAMES: &[u8] = b"\x03\x03\0\0\0\x05\x01\x02\x03\x02\0\0\0\x05\x03";

    #[test]
    fn owned_input_is_shared_by_its_frames_not_copied() {
        let mut session = capturing();
        let input = TWO_FRAMES.to_vec();
        let base = input.as_ptr() as usize;
        session.handle_input_owned(input).unwrap();
        let got = frames(&mut session);
        assert_eq!(got.len(), 2);
        assert_eq!((&got[0][..], &got[1][..]), (&[5, 1, 2][..], &[5, 3][..]));
        // Each frame points into the buffer handed over, at its payload's offset.
        assert_eq!(got[0].as_ptr() as usize, base + 5);
        assert_eq!(got[1].as_ptr() as usize, base + 8 + 5);
    }

    #[test]
    fn borrowed_input_is_taken_once_for_all_its_frames() {
        let mut session = capturing();
        session.handle_input(TWO_FRAMES).unwrap();
        let got = frames(&mut session);
        assert_eq!(got[0].as_ptr() as usize + 8, got[1].as_ptr() as usize);
        assert_eq!(got[1].to_vec(), [5, 3]);
    }

    #[test]
    fn frames_split_across_inputs_come_out_whole_in_order() {
        for cut in 0..=TWO_FRAMES.len() {
            let mut session = capturing();
            session.handle_input(&TWO_FRAMES[..cut]).unwrap();
            session
                .handle_input_owned(TWO_FRAMES[cut..].to_vec())
                .unwrap();
            let got: Vec<Vec<u8>> = frames(&mut session).iter().map(|f| f.to_vec()).collect();
            assert_eq!(got, [vec![5, 1, 2], vec![5, 3]], "cut at {cut}");
        }
    }

    #[test]
    fn a_frame_outlives_the_session_and_later_input() {
        let mut session = capturing();
        session.handle_input(&TWO_FRAMES[..8]).unwrap();
        let first = frames(&mut session).remove(0);
        session.handle_input(&TWO_FRAMES[8..]).unwrap();
        drop(session);
        assert_eq!(&first[..], [5, 1, 2]);
        assert_eq!(format!("{first:?}"), "ApcFrame([5, 1, 2])");
    }

    #[test]
    fn unexpected_responses_are_errors() {
        for (input, kind) in [
            (&b"\x04\0\0\0\0"[..], ResponseType::Ack),
            (b"\x05\0\0\0\0", ResponseType::Nak),
            (b"\x01\x01\0\0\0x", ResponseType::Xml),
            (b"\x06\0\0\0\0", ResponseType::CurrentConfig),
            (b"\x03\x01\0\0\0\x05", ResponseType::ApcData),
        ] {
            let mut session = connected(b"GATOR 950\n");
            assert_eq!(
                session.handle_input(input),
                Err(ClientError::UnexpectedResponse {
                    kind,
                    state: State::Setup
                }),
                "{input:?}"
            );
        }
        // An ACK where an XML document is awaited.
        let mut session = connected(b"GATOR 950\n");
        session.request_xml("events").unwrap();
        assert!(matches!(
            session.handle_input(b"\x04\0\0\0\0"),
            Err(ClientError::UnexpectedResponse { .. })
        ));
        // Anything after the end marker.
        let mut session = connected(b"GATOR 950\n");
        session.handle_input(b"\x03\0\0\0\0").unwrap();
        assert_eq!(
            session.handle_input(b"\x04\0\0\0\0"),
            Err(ClientError::UnexpectedResponse {
                kind: ResponseType::Ack,
                state: State::Ended
            })
        );
    }

    #[test]
    fn unknown_and_oversized_responses_are_errors() {
        let mut session = connected(b"GATOR 950\n");
        assert_eq!(
            session.handle_input(&[0x02]),
            Err(ClientError::Response(ResponseError::UnknownType(2)))
        );
        let mut session = Session::new(Config {
            max_response_payload: 16,
            ..Config::default()
        });
        session.handle_input(b"GATOR 950\n").unwrap();
        session.request_xml("events").unwrap();
        assert_eq!(
            session.handle_input(&[0x01, 0xc4, 0x22, 0x2f, 0x00]),
            Err(ClientError::Response(ResponseError::TooLarge {
                kind: ResponseType::Xml,
                length: 3_089_092,
                max: 16
            }))
        );
    }

    #[test]
    fn commands_in_the_wrong_state_are_errors() {
        let mut session = connected(b"GATOR 950\n");
        assert_eq!(
            session.stop_capture(),
            Err(ClientError::InvalidState {
                command: CommandType::ApcStop,
                state: State::Setup
            })
        );
        session.start_capture().unwrap();
        assert_eq!(
            session.request_xml("captured"),
            Err(ClientError::InvalidState {
                command: CommandType::RequestXml,
                state: State::Capturing
            })
        );
        assert!(session.deliver_xml(b"<session/>").is_err());
        assert!(session.start_capture().is_err());
        session.ping().unwrap();
        session.stop_capture().unwrap();
        session.disconnect().unwrap();
        assert!(session.ping().is_err());
        assert!(session.disconnect().is_err());
    }

    #[test]
    fn newer_commands_need_protocol_750() {
        let mut session = connected(b"GATOR 670\n");
        assert_eq!(
            session.request_current_config(),
            Err(ClientError::Unsupported {
                command: CommandType::RequestCurrentConfig,
                needed: ProtocolVersion::V750,
                version: ProtocolVersion::V670
            })
        );
        assert!(session.exit_daemon().is_err());
        let mut session = connected(b"GATOR 950\n");
        session.exit_daemon().unwrap();
        assert_eq!(session.state(), State::Disconnected);
        assert_eq!(sent(&mut session).last_chunk::<5>(), Some(&[6, 0, 0, 0, 0]));
    }

    #[test]
    fn bad_request_types_and_large_deliveries_are_refused() {
        let mut session = connected(b"GATOR 950\n");
        assert_eq!(
            session.request_xml("a\"/><x"),
            Err(ClientError::InvalidRequestType("a\"/><x".into()))
        );
        assert!(session.request_xml("").is_err());
        let mut session = Session::new(Config {
            max_command_payload: 4,
            ..Config::default()
        });
        assert_eq!(
            session.deliver_xml(b"<session/>"),
            Err(ClientError::Encode(EncodeError::PayloadTooLarge {
                length: 10,
                max: 4
            }))
        );
    }

    #[test]
    fn request_carries_the_xml_declaration() {
        let mut session = connected(b"GATOR 950\n");
        sent(&mut session);
        session.request_xml("captured").unwrap();
        let bytes = sent(&mut session);
        assert_eq!(bytes[0], 0);
        assert_eq!(
            &bytes[5..],
            b"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<request type=\"captured\"/>"
        );
    }

    #[test]
    fn daemon_error_then_end_marker() {
        let mut session = connected(b"GATOR 950\n");
        session.deliver_xml(b"<session/>").unwrap();
        let mut input = vec![0xff, 0x26, 0, 0, 0];
        input.extend_from_slice(b"Invalid sample rate () in session xml.");
        input.extend_from_slice(&[3, 0, 0, 0, 0]);
        session.handle_input(&input).unwrap();
        assert_eq!(
            session.poll_event(),
            Some(Event::DaemonError(
                b"Invalid sample rate () in session xml.".to_vec()
            ))
        );
        assert_eq!(session.poll_event(), Some(Event::EndOfCapture));
        assert_eq!(session.state(), State::Ended);
    }

    #[test]
    fn logs_activity_and_current_config() {
        let mut session = connected(b"GATOR 950\n");
        session.request_current_config().unwrap();
        session.start_capture().unwrap();
        session
            .handle_input(b"\x06\x03\0\0\0<c/>\x08\0\0\0\0\x07\x02\0\0\0ab\x07\0\0\0\0")
            .unwrap_err();
        // `<c/>` is 4 bytes, so the header above is wrong on purpose: the 4th byte is read as a type.
        let mut session = connected(b"GATOR 950\n");
        session.request_current_config().unwrap();
        session.start_capture().unwrap();
        session
            .handle_input(b"\x06\x04\0\0\0<c/>\x08\0\0\0\0\x07\x02\0\0\0ab\x07\0\0\0\0")
            .unwrap();
        let events: Vec<Event> = std::iter::from_fn(|| session.poll_event()).collect();
        assert_eq!(
            events,
            [
                Event::CurrentConfig(b"<c/>".to_vec()),
                Event::ActivityStarted,
                Event::GatorLog(b"ab".to_vec()),
                Event::GatorLogEnd
            ]
        );
    }

    #[test]
    fn delivery_nak_and_xml_nak() {
        let mut session = connected(b"GATOR 950\n");
        session.deliver_xml(b"<foo/>").unwrap();
        session.request_xml("bogus").unwrap();
        session
            .handle_input(b"\x05\0\0\0\0\x05\x0f\0\0\0Unknown request")
            .unwrap();
        assert_eq!(
            session.poll_event(),
            Some(Event::DeliveryRejected { message: vec![] })
        );
        assert_eq!(
            session.poll_event(),
            Some(Event::XmlRejected {
                request: "bogus".into(),
                message: b"Unknown request".to_vec()
            })
        );
    }

    #[test]
    fn eof_inside_a_message_is_an_error() {
        let mut session = connected(b"GATOR 950\n");
        session.request_xml("events").unwrap();
        session.handle_input(&[0x01, 0x10, 0, 0, 0, b'<']).unwrap();
        assert_eq!(
            session.handle_eof(),
            Err(ClientError::TruncatedAtEof { buffered: 6 })
        );
        let mut session = Session::new(Config::default());
        session.handle_input(b"GATOR 9").unwrap();
        assert_eq!(
            session.handle_eof(),
            Err(ClientError::TruncatedAtEof { buffered: 7 })
        );
    }

    #[test]
    fn input_after_disconnect_is_ignored() {
        let mut session = connected(b"GATOR 950\n");
        session.disconnect().unwrap();
        session.handle_input(&[0xee, 0xee]).unwrap();
        assert_eq!(session.poll_event(), None);
        session.handle_eof().unwrap();
        assert_eq!(session.poll_event(), Some(Event::Closed));
    }
}
