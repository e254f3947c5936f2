//! One blocking connection to gatord: a [`Transport`] driving `gator-proto`'s sans-IO client state machine.
//!
//! The state machine does the framing and checking (handshake line, 5-byte headers, the payload limit checked
//! before anything is allocated for it, replies matched to commands); this module only moves bytes between it
//! and the socket, and turns its events into results.

use gator_proto::client::{ClientError, Config as ClientConfig, Event, Session};
use std::time::{Duration, Instant};

use gator_proto::ProtocolVersion;

use crate::error::{Error, ProtocolFault};
use crate::transport::{GatordAddress, Timeouts, Transport, TransportError};
use crate::GatordError;

use gator_proto::daemon::SESSION_IN_PROGRESS;

/// Bytes read from the socket per call.
pub(crate) const READ_CHUNK: usize = 64 * 1024;

/// Maps a RESPONSE_ERROR text to the engine error.
pub(crate) fn daemon_error(payload: &[u8]) -> Error {
    let text = String::from_utf8_lossy(payload).trim().to_owned();
    if text.contains(SESSION_IN_PROGRESS) {
        Error::Gatord(GatordError::SessionInProgress {
            waited: Duration::ZERO,
        })
    } else {
        Error::Gatord(GatordError::Daemon(text))
    }
}

/// Maps a state-machine error to the engine error.
pub(crate) fn protocol_error(what: &'static str, err: ClientError) -> Error {
    Error::Gatord(GatordError::Protocol {
        what,
        source: ProtocolFault::Client(err),
    })
}

fn unexpected(what: &'static str, event: &Event) -> Error {
    match event {
        Event::DaemonError(text) => daemon_error(text),
        Event::Closed | Event::EndOfCapture => {
            Error::Gatord(GatordError::Transport(TransportError::Closed {
                op: what,
                source: None,
            }))
        }
        other => Error::Gatord(GatordError::Protocol {
            what,
            source: ProtocolFault::UnexpectedReply(event_name(other)),
        }),
    }
}

fn event_name(event: &Event) -> &'static str {
    match event {
        Event::Connected { .. } => "handshake",
        Event::Xml { .. } => "XML",
        Event::XmlRejected { .. } => "NAK",
        Event::Delivered => "ACK",
        Event::DeliveryRejected { .. } => "NAK",
        Event::Pong => "ACK",
        Event::CurrentConfig(_) => "CURRENT_CONFIG",
        Event::ApcFrame(_) => "APC_DATA",
        Event::EndOfCapture => "end of capture",
        Event::DaemonError(_) => "ERROR",
        Event::GatorLog(_) | Event::GatorLogEnd => "GATOR_LOG",
        Event::ActivityStarted => "ACTIVITY_STARTED",
        Event::Closed => "close",
        _ => "unrecognised",
    }
}

/// A connected, handshaken gatord connection.
#[derive(Debug)]
pub(crate) struct Connection {
    transport: Transport,
    session: Session,
    buf: Vec<u8>,
}

impl Connection {
    /// Connects, sends `STREAMLINE\n`, reads the `GATOR <n>\n` answer and PINGs: a daemon busy with another
    /// session answers the first command with "Session already in progress" ([`GatordError::SessionInProgress`], which says how long this kept retrying).
    pub(crate) fn open(
        address: &GatordAddress,
        timeouts: Timeouts,
        max_len: u32,
    ) -> Result<Connection, Error> {
        let transport = Transport::connect(address, timeouts)?;
        let mut config = ClientConfig::default();
        config.max_response_payload = max_len;
        let session = Session::new(config);
        let mut conn = Connection {
            transport,
            session,
            buf: vec![0; READ_CHUNK],
        };
        conn.session
            .ping()
            .map_err(|e| protocol_error("sending PING", e))?;
        conn.flush()?;
        loop {
            match conn.next_event("waiting for the handshake and PING")? {
                Event::Connected { .. } => {}
                Event::Pong => return Ok(conn),
                other => return Err(unexpected("waiting for the PING reply", &other)),
            }
        }
    }

    /// [`Connection::open`], retried while gatord answers "Session already in progress" (it releases a session
    /// a moment after the previous connection closes), for up to `busy_retry` in total.
    pub(crate) fn open_retrying(
        address: &GatordAddress,
        timeouts: Timeouts,
        max_len: u32,
        busy_retry: Duration,
    ) -> Result<Connection, Error> {
        let started = Instant::now();
        let deadline = started + busy_retry;
        let mut pause = Duration::from_millis(1);
        loop {
            match Connection::open(address, timeouts, max_len) {
                Err(Error::Gatord(GatordError::SessionInProgress { .. }))
                    if Instant::now() + pause < deadline =>
                {
                    std::thread::sleep(pause);
                    pause = (pause * 2).min(Duration::from_millis(100));
                }
                Err(Error::Gatord(GatordError::SessionInProgress { .. })) => {
                    return Err(Error::Gatord(GatordError::SessionInProgress {
                        waited: started.elapsed(),
                    }))
                }
                other => return other,
            }
        }
    }

    /// The protocol version the daemon announced (after [`Connection::open`], always known).
    pub(crate) fn version(&self) -> ProtocolVersion {
        self.session
            .protocol_version()
            .unwrap_or(ProtocolVersion::V670)
    }

    /// Writes whatever the state machine has queued.
    pub(crate) fn flush(&mut self) -> Result<(), Error> {
        let mut out = Vec::new();
        if self.session.poll_transmit(&mut out) > 0 {
            self.transport.write_all(&out)?;
        }
        Ok(())
    }

    /// The next event, reading from the socket as needed.
    fn next_event(&mut self, what: &'static str) -> Result<Event, Error> {
        loop {
            if let Some(event) = self.session.poll_event() {
                return Ok(event);
            }
            match self.transport.read_some(&mut self.buf) {
                Ok(n) => self
                    .session
                    .handle_input(&self.buf[..n])
                    .map_err(|e| protocol_error(what, e))?,
                Err(TransportError::Closed { .. }) => self
                    .session
                    .handle_eof()
                    .map_err(|e| protocol_error(what, e))?,
                Err(err) => return Err(err.into()),
            }
        }
    }

    /// Asks for an XML document and returns it as text.
    pub(crate) fn request_xml(&mut self, what: &'static str) -> Result<String, Error> {
        self.session
            .request_xml(what)
            .map_err(|e| protocol_error("sending an XML request", e))?;
        self.flush()?;
        match self.next_event(what)? {
            Event::Xml { document, .. } => {
                String::from_utf8(document).map_err(|_| Error::Gatord(GatordError::NotUtf8(what)))
            }
            Event::XmlRejected { message, .. } => Err(Error::Gatord(GatordError::Refused {
                what,
                text: String::from_utf8_lossy(&message).into_owned(),
            })),
            other => Err(unexpected(what, &other)),
        }
    }

    /// Delivers an XML document (`<configurations>` or `<session>`) and waits for the ACK.
    pub(crate) fn deliver_xml(&mut self, what: &'static str, xml: &str) -> Result<(), Error> {
        self.session
            .deliver_xml(xml.as_bytes())
            .map_err(|e| protocol_error("delivering XML", e))?;
        self.flush()?;
        match self.next_event(what)? {
            Event::Delivered => Ok(()),
            Event::DeliveryRejected { message } => Err(Error::Gatord(GatordError::Refused {
                what,
                text: String::from_utf8_lossy(&message).into_owned(),
            })),
            other => Err(unexpected(what, &other)),
        }
    }

    /// Sends DISCONNECT (gatord answers by closing) and closes the socket. Errors are ignored: the connection
    /// is finished either way.
    pub(crate) fn disconnect(mut self) {
        if self.session.disconnect().is_ok() {
            let _ = self.flush();
        }
    }

    /// Sends APC_START and splits the connection into the pieces a capture needs: the state machine, the
    /// socket for reading and a second handle on it for writing.
    pub(crate) fn start_capture(mut self) -> Result<(Session, Transport, Transport), Error> {
        self.session
            .start_capture()
            .map_err(|e| protocol_error("sending APC_START", e))?;
        self.flush()?;
        let writer = self.transport.try_clone()?;
        Ok((self.session, self.transport, writer))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reply_that_answers_nothing_asked_is_a_typed_protocol_fault() {
        let err = unexpected("requesting the events XML", &Event::Pong);
        assert!(
            matches!(
                &err,
                Error::Gatord(GatordError::Protocol {
                    what: "requesting the events XML",
                    source: ProtocolFault::UnexpectedReply("ACK"),
                })
            ),
            "{err:?}"
        );
        let cause = std::error::Error::source(&err).expect("the fault is the source");
        assert_eq!(cause.to_string(), "unexpected ACK reply");
        assert!(!err.to_string().contains("ACK"), "{err}");
        assert!(matches!(
            unexpected("stopping", &Event::Closed),
            Error::Gatord(GatordError::Transport(TransportError::Closed {
                op: "stopping",
                source: None
            }))
        ));
    }
}
