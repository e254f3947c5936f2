//! The TCP transport to gatord: the only place a socket is connected, read or written.
//!
//! - Connects to a host name or an IPv4/IPv6 address, trying each resolved address with a connect timeout.
//! - Every read and write has a timeout (`SO_RCVTIMEO` / `SO_SNDTIMEO`), so a stalled daemon never blocks a
//!   caller forever.
//! - Writes never raise `SIGPIPE`: on Linux and Android `std::net::TcpStream` sends with `MSG_NOSIGNAL`, so
//!   writing to a peer that has gone away returns `EPIPE` (here [`TransportError::Closed`]) instead of killing a
//!   C host process that has not ignored the signal. A test runs this with `SIGPIPE` at its default action.
//! - The socket is an owned `TcpStream`: it is closed when the transport is dropped, on every path.

use std::fmt;
use std::io::{self, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream, ToSocketAddrs};
use std::str::FromStr;
use std::time::Duration;

/// gatord's default TCP port.
pub const DEFAULT_PORT: u16 = 8080;

/// The address of a gatord daemon: a host name or IP literal (v4 or v6) and a port.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct GatordAddress {
    /// Host name (`localhost`, `device.lan`) or IP literal (`127.0.0.1`, `::1`), without brackets.
    pub host: String,
    /// TCP port.
    pub port: u16,
}

impl GatordAddress {
    /// An address from a host (name or IP literal; IPv6 with or without brackets) and a port.
    pub fn new(host: impl Into<String>, port: u16) -> GatordAddress {
        let host = host.into();
        let host = host
            .strip_prefix('[')
            .and_then(|h| h.strip_suffix(']'))
            .map(str::to_owned)
            .unwrap_or(host);
        GatordAddress { host, port }
    }
}

impl From<std::net::SocketAddr> for GatordAddress {
    /// The IP literal and port of a socket address.
    fn from(address: std::net::SocketAddr) -> Self {
        GatordAddress::new(address.ip().to_string(), address.port())
    }
}

impl Default for GatordAddress {
    /// `127.0.0.1:8080`, where an `adb forward tcp:8080 ...` or a local gatord listens.
    fn default() -> Self {
        GatordAddress::new("127.0.0.1", DEFAULT_PORT)
    }
}

impl fmt::Display for GatordAddress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.host.contains(':') {
            write!(f, "[{}]:{}", self.host, self.port)
        } else {
            write!(f, "{}:{}", self.host, self.port)
        }
    }
}

/// Why a text could not be read as a [`GatordAddress`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AddressParseError {
    /// The text was empty.
    #[error("empty gatord address")]
    Empty,
    /// The part after the last `:` is not a port number 0..=65535.
    #[error("invalid port in gatord address {0:?}")]
    InvalidPort(String),
    /// A `[` without a matching `]` (or text after `]` that is not `:port`).
    #[error("malformed bracketed IPv6 address {0:?}")]
    Brackets(String),
    /// A bare IPv6 address whose last group reads as a port too (`::1:8080`): which was meant cannot be
    /// told.
    #[error(
        "{text:?} is ambiguous: an IPv6 address with a port is written in brackets, [{host}]:{port} \
         (or [{text}] for the address {text} on port 8080)"
    )]
    AmbiguousIpv6 {
        /// The text given.
        text: String,
        /// The address before the last `:`.
        host: String,
        /// The number after it.
        port: u16,
    },
}

impl FromStr for GatordAddress {
    type Err = AddressParseError;

    /// Reads `host`, `host:port`, `a.b.c.d:port`, `::1`, `[::1]` or `[::1]:port` (the port defaults to 8080).
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        if text.is_empty() {
            return Err(AddressParseError::Empty);
        }
        let port = |p: &str| {
            p.parse::<u16>()
                .map_err(|_| AddressParseError::InvalidPort(text.to_owned()))
        };
        if let Some(rest) = text.strip_prefix('[') {
            let (host, after) = rest
                .split_once(']')
                .ok_or_else(|| AddressParseError::Brackets(text.to_owned()))?;
            return match after {
                "" => Ok(GatordAddress::new(host, DEFAULT_PORT)),
                _ => match after.strip_prefix(':') {
                    Some(p) => Ok(GatordAddress::new(host, port(p)?)),
                    None => Err(AddressParseError::Brackets(text.to_owned())),
                },
            };
        }
        match text.matches(':').count() {
            0 => Ok(GatordAddress::new(text, DEFAULT_PORT)),
            1 => {
                let (host, p) = text.split_once(':').unwrap_or((text, ""));
                if host.is_empty() {
                    return Err(AddressParseError::Empty);
                }
                Ok(GatordAddress::new(host, port(p)?))
            }
            // A bare IPv6 literal: no port, unless its last group could be one (refused as ambiguous).
            _ => {
                if let Some((host, p)) = text.rsplit_once(':') {
                    if let (Ok(_), Ok(port)) =
                        (host.parse::<std::net::Ipv6Addr>(), p.parse::<u16>())
                    {
                        if text.parse::<std::net::Ipv6Addr>().is_ok() && !p.is_empty() {
                            return Err(AddressParseError::AmbiguousIpv6 {
                                text: text.to_owned(),
                                host: host.to_owned(),
                                port,
                            });
                        }
                    }
                }
                Ok(GatordAddress::new(text, DEFAULT_PORT))
            }
        }
    }
}

/// Socket timeouts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Timeouts {
    /// Longest wait for a TCP connection to one resolved address.
    pub connect: Duration,
    /// Longest wait for any single read or write to make progress.
    pub io: Duration,
}

impl Timeouts {
    /// `connect` for a TCP connection to one resolved address, `io` for any single read or write.
    pub const fn new(connect: Duration, io: Duration) -> Timeouts {
        Timeouts { connect, io }
    }
}

impl Default for Timeouts {
    /// 2 s to connect, 5 s per read or write (the 3 MB events XML arrives well within that on loopback and adb).
    fn default() -> Self {
        Timeouts {
            connect: Duration::from_secs(2),
            io: Duration::from_secs(5),
        }
    }
}

/// A failure of the transport.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TransportError {
    /// The host name could not be resolved.
    #[error("cannot resolve gatord host {host:?}")]
    Resolve {
        /// The host that was looked up.
        host: String,
        /// The resolver's error.
        #[source]
        source: io::Error,
    },
    /// The host name resolved to no address.
    #[error("gatord host {0:?} resolved to no address")]
    NoAddress(String),
    /// No resolved address accepted a connection (the error of the last one tried is kept).
    #[error("cannot connect to gatord at {address}")]
    Connect {
        /// The address as configured.
        address: String,
        /// The last connect error.
        #[source]
        source: io::Error,
    },
    /// A read or write made no progress within the I/O timeout.
    #[error("gatord did not respond within {0:?} while {1}")]
    Timeout(Duration, &'static str),
    /// The peer closed the connection: the end of the stream (`source` `None`), or the socket's reset or
    /// broken pipe (`source` the OS error).
    #[error("gatord closed the connection while {op}")]
    Closed {
        /// What the transport was doing.
        op: &'static str,
        /// The OS error that said so, when it was not a plain end of stream.
        #[source]
        source: Option<io::Error>,
    },
    /// Any other socket error.
    #[error("socket error while {op}")]
    Io {
        /// What the transport was doing.
        op: &'static str,
        /// The OS error.
        #[source]
        source: io::Error,
    },
}

impl TransportError {
    fn from_io(err: io::Error, op: &'static str, timeout: Duration) -> TransportError {
        match err.kind() {
            io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => {
                TransportError::Timeout(timeout, op)
            }
            io::ErrorKind::UnexpectedEof
            | io::ErrorKind::ConnectionReset
            | io::ErrorKind::ConnectionAborted
            | io::ErrorKind::BrokenPipe
            | io::ErrorKind::NotConnected => TransportError::Closed {
                op,
                source: Some(err),
            },
            _ => TransportError::Io { op, source: err },
        }
    }
}

/// A connected TCP stream to gatord with timeouts on every operation.
#[derive(Debug)]
pub struct Transport {
    stream: TcpStream,
    io_timeout: Duration,
}

impl Transport {
    /// Resolves `address` and connects to the first resolved address that accepts within `timeouts.connect`,
    /// then sets the read and write timeouts and disables Nagle's algorithm (commands are small).
    pub fn connect(
        address: &GatordAddress,
        timeouts: Timeouts,
    ) -> Result<Transport, TransportError> {
        let resolved: Vec<SocketAddr> = (address.host.as_str(), address.port)
            .to_socket_addrs()
            .map_err(|source| TransportError::Resolve {
                host: address.host.clone(),
                source,
            })?
            .collect();
        let mut last_error = None;
        for addr in &resolved {
            match TcpStream::connect_timeout(addr, timeouts.connect) {
                Ok(stream) => return Transport::from_stream(stream, timeouts.io),
                Err(err) => last_error = Some(err),
            }
        }
        match last_error {
            Some(source) => Err(TransportError::Connect {
                address: address.to_string(),
                source,
            }),
            None => Err(TransportError::NoAddress(address.host.clone())),
        }
    }

    /// Wraps an already connected stream, setting the I/O timeouts (a zero timeout is raised to 1 ms, since the
    /// OS treats zero as "no timeout").
    pub fn from_stream(
        stream: TcpStream,
        io_timeout: Duration,
    ) -> Result<Transport, TransportError> {
        let io_timeout = io_timeout.max(Duration::from_millis(1));
        let setup = |stream: &TcpStream| -> io::Result<()> {
            stream.set_read_timeout(Some(io_timeout))?;
            stream.set_write_timeout(Some(io_timeout))?;
            stream.set_nodelay(true)
        };
        setup(&stream).map_err(|source| TransportError::Io {
            op: "configuring the socket",
            source,
        })?;
        Ok(Transport { stream, io_timeout })
    }

    /// The I/O timeout in effect.
    pub fn io_timeout(&self) -> Duration {
        self.io_timeout
    }

    /// Changes the read timeout (e.g. a short poll interval for a receiver thread).
    pub fn set_read_timeout(&mut self, timeout: Duration) -> Result<(), TransportError> {
        let timeout = timeout.max(Duration::from_millis(1));
        self.stream
            .set_read_timeout(Some(timeout))
            .map_err(|source| TransportError::Io {
                op: "setting the read timeout",
                source,
            })?;
        self.io_timeout = timeout;
        Ok(())
    }

    /// Writes all of `bytes` (never raising `SIGPIPE`).
    pub fn write_all(&mut self, bytes: &[u8]) -> Result<(), TransportError> {
        let timeout = self.io_timeout;
        self.stream
            .write_all(bytes)
            .map_err(|e| TransportError::from_io(e, "sending to gatord", timeout))
    }

    /// Reads at least one byte into `buf`, returning how many were read. The end of the stream is
    /// [`TransportError::Closed`]; no progress within the read timeout is [`TransportError::Timeout`].
    pub fn read_some(&mut self, buf: &mut [u8]) -> Result<usize, TransportError> {
        let timeout = self.io_timeout;
        loop {
            return match self.stream.read(buf) {
                Ok(0) if !buf.is_empty() => Err(TransportError::Closed {
                    op: "receiving from gatord",
                    source: None,
                }),
                Ok(n) => Ok(n),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => Err(TransportError::from_io(e, "receiving from gatord", timeout)),
            };
        }
    }

    /// A second handle on the same socket (its own file descriptor, closed when dropped), so one thread can
    /// read while another writes.
    pub fn try_clone(&self) -> Result<Transport, TransportError> {
        let stream = self
            .stream
            .try_clone()
            .map_err(|source| TransportError::Io {
                op: "duplicating the socket",
                source,
            })?;
        Ok(Transport {
            stream,
            io_timeout: self.io_timeout,
        })
    }

    /// Shuts both directions down: a thread blocked reading this socket (through any handle) wakes up at once.
    /// Errors (e.g. the peer already gone) are ignored: the goal, a dead socket, is reached either way.
    pub fn shutdown(&self) {
        let _ = self.stream.shutdown(Shutdown::Both);
    }

    /// The address of the peer, if the socket still knows it.
    pub fn peer_addr(&self) -> Option<SocketAddr> {
        self.stream.peer_addr().ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;

    #[test]
    fn socket_addresses_convert_to_ip_literals() {
        let v4: GatordAddress = "127.0.0.1:9"
            .parse::<std::net::SocketAddr>()
            .unwrap()
            .into();
        assert_eq!(v4, GatordAddress::new("127.0.0.1", 9));
        let v6: GatordAddress = "[::1]:8080".parse::<std::net::SocketAddr>().unwrap().into();
        assert_eq!(
            (v6.host.as_str(), v6.to_string()),
            ("::1", "[::1]:8080".into())
        );
    }

    #[test]
    fn parses_every_address_form() {
        let cases = [
            ("127.0.0.1", "127.0.0.1", 8080),
            ("127.0.0.1:9000", "127.0.0.1", 9000),
            ("localhost:1", "localhost", 1),
            ("::1", "::1", 8080),
            ("[::1]", "::1", 8080),
            ("[::1]:8081", "::1", 8081),
            ("fe80::1:abcd", "fe80::1:abcd", 8080),
            ("2001:db8::", "2001:db8::", 8080),
        ];
        for (text, host, port) in cases {
            let a: GatordAddress = text.parse().unwrap();
            assert_eq!((a.host.as_str(), a.port), (host, port), "{text}");
        }
        assert_eq!(GatordAddress::new("[::1]", 5).host, "::1");
        assert_eq!(GatordAddress::new("::1", 5).to_string(), "[::1]:5");
        assert_eq!(GatordAddress::default().to_string(), "127.0.0.1:8080");
    }

    #[test]
    fn rejects_malformed_addresses() {
        assert_eq!("".parse::<GatordAddress>(), Err(AddressParseError::Empty));
        assert_eq!(
            ":80".parse::<GatordAddress>(),
            Err(AddressParseError::Empty)
        );
        assert!(matches!(
            "host:99999".parse::<GatordAddress>(),
            Err(AddressParseError::InvalidPort(_))
        ));
        assert!(matches!(
            "host:".parse::<GatordAddress>(),
            Err(AddressParseError::InvalidPort(_))
        ));
        assert!(matches!(
            "[::1".parse::<GatordAddress>(),
            Err(AddressParseError::Brackets(_))
        ));
        assert!(matches!(
            "[::1]x".parse::<GatordAddress>(),
            Err(AddressParseError::Brackets(_))
        ));
        // A bare IPv6 address whose last group is a number could hold a port: refused, with both readings.
        for text in ["::1:8080", "fe80::1:2"] {
            let error = text.parse::<GatordAddress>().unwrap_err();
            assert!(
                matches!(error, AddressParseError::AmbiguousIpv6 { .. }),
                "{text}"
            );
        }
        assert_eq!(
            "::1:8080".parse::<GatordAddress>().unwrap_err().to_string(),
            "\"::1:8080\" is ambiguous: an IPv6 address with a port is written in brackets, [::1]:8080 \
             (or [::1:8080] for the address ::1:8080 on port 8080)"
        );
    }

    #[test]
    fn connects_over_ipv4_ipv6_and_names() {
        let v4 = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = v4.local_addr().unwrap().port();
        Transport::connect(&GatordAddress::new("127.0.0.1", port), Timeouts::default()).unwrap();
        // A listener on the first address `localhost` resolves to that can be bound (some hosts resolve it to
        // ::1 first, or to 127.0.0.1 not at all): the name must reach it.
        let named = std::net::ToSocketAddrs::to_socket_addrs(&("localhost", 0))
            .unwrap()
            .find_map(|a| TcpListener::bind(a).ok())
            .expect("no address of localhost can be bound");
        let port = named.local_addr().unwrap().port();
        Transport::connect(&GatordAddress::new("localhost", port), Timeouts::default()).unwrap();
        match TcpListener::bind("[::1]:0") {
            Ok(v6) => {
                let port = v6.local_addr().unwrap().port();
                let t = Transport::connect(&GatordAddress::new("::1", port), Timeouts::default())
                    .unwrap();
                assert!(t.peer_addr().unwrap().is_ipv6());
            }
            Err(e) => test_data::skip!(
                test_data::Fixture::Ipv6,
                "the IPv6 half: no IPv6 loopback here ({e})"
            ),
        }
    }

    #[test]
    fn refused_connection_is_a_typed_error() {
        let port = {
            let l = TcpListener::bind("127.0.0.1:0").unwrap();
            l.local_addr().unwrap().port()
        };
        let err = Transport::connect(&GatordAddress::new("127.0.0.1", port), Timeouts::default())
            .unwrap_err();
        assert!(matches!(err, TransportError::Connect { .. }), "{err:?}");
    }

    #[test]
    fn unresolvable_host_is_a_typed_error() {
        let err = Transport::connect(
            &GatordAddress::new("no-such-host.invalid", 8080),
            Timeouts::default(),
        )
        .unwrap_err();
        assert!(
            matches!(
                err,
                TransportError::Resolve { .. } | TransportError::NoAddress(_)
            ),
            "{err:?}"
        );
    }

    #[test]
    fn silent_peer_times_out() {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap();
        let timeouts = Timeouts {
            connect: Duration::from_secs(1),
            io: Duration::from_millis(50),
        };
        let mut t =
            Transport::connect(&GatordAddress::new("127.0.0.1", addr.port()), timeouts).unwrap();
        let _peer = l.accept().unwrap();
        let mut buf = [0u8; 4];
        let err = t.read_some(&mut buf).unwrap_err();
        assert!(matches!(err, TransportError::Timeout(..)), "{err:?}");
    }

    #[test]
    fn closed_peer_reads_closed_and_writes_fail_without_signal() {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap();
        let mut t = Transport::connect(
            &GatordAddress::new("127.0.0.1", addr.port()),
            Timeouts::default(),
        )
        .unwrap();
        drop(l.accept().unwrap());
        let mut buf = [0u8; 4];
        assert!(matches!(
            t.read_some(&mut buf),
            Err(TransportError::Closed { source: None, .. })
        ));
        // The first write after a close may still be accepted by the kernel; a later one fails with EPIPE.
        let mut failed = false;
        for _ in 0..100 {
            if let Err(err) = t.write_all(&[0u8; 1024]) {
                assert!(
                    matches!(&err, TransportError::Closed { source: Some(e), .. } if e.kind() == io::ErrorKind::BrokenPipe
                        || e.kind() == io::ErrorKind::ConnectionReset),
                    "{err:?}"
                );
                failed = true;
                break;
            }
        }
        assert!(failed);
    }
}
