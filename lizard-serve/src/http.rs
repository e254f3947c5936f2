//! The exporter's HTTP side: one request per connection, read within a deadline into a bounded buffer,
//! parsed with `httparse`, answered and closed. Connections are served one at a time: a scraper waits at
//! most one request deadline behind a slow peer, and a peer can hold no more than one buffer and one thread.

use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use crate::exposition::Format;
use crate::stats::Refusals;

/// The largest request head read (request line and headers); a larger one is answered 431.
pub const MAX_REQUEST_HEAD: usize = 8 * 1024;

/// The most headers a request may have.
const MAX_HEADERS: usize = 32;

/// What a request asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Route {
    /// `GET /metrics` (or `HEAD`): the exposition in the negotiated format.
    Metrics {
        /// The format the `Accept` header asks for.
        format: Format,
        /// `HEAD`: headers only.
        head_only: bool,
    },
    /// `GET /`: a line saying where the metrics are.
    Index {
        /// `HEAD`: headers only.
        head_only: bool,
    },
}

/// Why a request is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// Not an HTTP/1.x request.
    Malformed,
    /// The head does not fit [`MAX_REQUEST_HEAD`] (or has more than 32 headers).
    TooLarge,
    /// Not complete before the deadline or the peer's end of stream.
    Incomplete,
    /// No such path.
    NotFound,
    /// A method other than GET or HEAD.
    Method,
}

impl Refusal {
    /// Counts this refusal in `refusals`.
    pub fn count(self, refusals: &mut Refusals) {
        *match self {
            Refusal::Malformed => &mut refusals.malformed,
            Refusal::TooLarge => &mut refusals.too_large,
            Refusal::Incomplete => &mut refusals.incomplete,
            Refusal::NotFound => &mut refusals.not_found,
            Refusal::Method => &mut refusals.method,
        } += 1;
    }

    /// The status line and body of the answer, if the connection still takes one.
    fn answer(self) -> Option<(&'static str, &'static str)> {
        match self {
            Refusal::Malformed => Some(("400 Bad Request", "not an HTTP/1.x request\n")),
            Refusal::TooLarge => Some((
                "431 Request Header Fields Too Large",
                "the request head is larger than 8 KiB\n",
            )),
            Refusal::Incomplete => None,
            Refusal::NotFound => Some(("404 Not Found", "the metrics are at /metrics\n")),
            Refusal::Method => Some(("405 Method Not Allowed", "only GET and HEAD\n")),
        }
    }
}

/// Parses a request head: `Ok(None)` while more bytes are needed, the route once complete, the refusal
/// for anything else. Total: any bytes give one of the three.
pub fn parse(head: &[u8]) -> Result<Option<Route>, Refusal> {
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut request = httparse::Request::new(&mut headers);
    match request.parse(head) {
        Ok(httparse::Status::Partial) if head.len() >= MAX_REQUEST_HEAD => Err(Refusal::TooLarge),
        Ok(httparse::Status::Partial) => Ok(None),
        Err(httparse::Error::TooManyHeaders) => Err(Refusal::TooLarge),
        Err(_) => Err(Refusal::Malformed),
        Ok(httparse::Status::Complete(_)) => {
            let head_only = match request.method {
                Some("GET") => false,
                Some("HEAD") => true,
                _ => return Err(Refusal::Method),
            };
            let path = request.path.unwrap_or("");
            let path = path.split_once('?').map_or(path, |(p, _)| p);
            match path {
                "/metrics" => {
                    let accept = request
                        .headers
                        .iter()
                        .find(|h| h.name.eq_ignore_ascii_case("accept"))
                        .and_then(|h| std::str::from_utf8(h.value).ok());
                    Ok(Some(Route::Metrics {
                        format: Format::negotiate(accept),
                        head_only,
                    }))
                }
                "/" => Ok(Some(Route::Index { head_only })),
                _ => Err(Refusal::NotFound),
            }
        }
    }
}

/// Reads one request head from `stream` within `deadline` and parses it.
pub fn read_request(stream: &mut TcpStream, deadline: Duration) -> Result<Route, Refusal> {
    let until = Instant::now() + deadline;
    let mut buf = [0u8; MAX_REQUEST_HEAD];
    let mut len = 0;
    loop {
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() || stream.set_read_timeout(Some(left)).is_err() {
            return Err(Refusal::Incomplete);
        }
        match stream.read(&mut buf[len..]) {
            Ok(0) => return Err(Refusal::Incomplete),
            Ok(n) => len += n,
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(_) => return Err(Refusal::Incomplete),
        }
        if let Some(route) = parse(&buf[..len])? {
            return Ok(route);
        }
    }
}

/// Writes a whole response (`Connection: close`) within `deadline`, however slowly the peer reads: what
/// is not written by then is dropped with the connection. Errors are the peer's loss only.
pub fn respond(
    stream: &mut TcpStream,
    status: &str,
    content_type: &str,
    body: &[u8],
    head_only: bool,
    deadline: Duration,
) {
    let head = format!(
        "HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    let until = Instant::now() + deadline;
    let body = if head_only { &[][..] } else { body };
    for mut part in [head.as_bytes(), body] {
        while !part.is_empty() {
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() || stream.set_write_timeout(Some(left)).is_err() {
                return;
            }
            match stream.write(part) {
                Ok(0) => return,
                Ok(n) => part = &part[n..],
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(_) => return,
            }
        }
    }
}

/// Answers a refused request, where it takes an answer.
pub fn refuse(stream: &mut TcpStream, refusal: Refusal, deadline: Duration) {
    if let Some((status, body)) = refusal.answer() {
        let content_type = "text/plain; charset=utf-8";
        respond(
            stream,
            status,
            content_type,
            body.as_bytes(),
            false,
            deadline,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_scrape_is_routed_with_its_format() {
        let scrape = b"GET /metrics HTTP/1.1\r\nHost: x\r\nAccept: application/openmetrics-text; version=1.0.0\r\n\r\n";
        assert_eq!(
            parse(scrape),
            Ok(Some(Route::Metrics {
                format: Format::OpenMetrics,
                head_only: false
            }))
        );
        assert_eq!(
            parse(b"HEAD /metrics?x=1 HTTP/1.0\r\n\r\n"),
            Ok(Some(Route::Metrics {
                format: Format::Prometheus,
                head_only: true
            }))
        );
        assert_eq!(
            parse(b"GET / HTTP/1.1\r\n\r\n"),
            Ok(Some(Route::Index { head_only: false }))
        );
    }

    #[test]
    fn every_prefix_of_a_request_needs_more_bytes() {
        let scrape = b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
        for end in 0..scrape.len() {
            assert_eq!(parse(&scrape[..end]), Ok(None), "prefix of {end} bytes");
        }
    }

    #[test]
    fn bad_requests_are_refused_by_reason() {
        assert_eq!(
            parse(b"\x16\x03\x01\x00\xa5\x01\r\n\r\n"),
            Err(Refusal::Malformed)
        );
        assert_eq!(
            parse(b"POST /metrics HTTP/1.1\r\n\r\n"),
            Err(Refusal::Method)
        );
        assert_eq!(
            parse(b"GET /admin HTTP/1.1\r\n\r\n"),
            Err(Refusal::NotFound)
        );
        let mut long = b"GET /metrics HTTP/1.1\r\nX: ".to_vec();
        long.resize(MAX_REQUEST_HEAD, b'a');
        assert_eq!(parse(&long), Err(Refusal::TooLarge));
        let mut many = b"GET /metrics HTTP/1.1\r\n".to_vec();
        for i in 0..40 {
            many.extend_from_slice(format!("X-{i}: 1\r\n").as_bytes());
        }
        many.extend_from_slice(b"\r\n");
        assert_eq!(parse(&many), Err(Refusal::TooLarge));
    }

    #[test]
    fn refusals_are_counted_by_reason() {
        let mut refusals = Refusals::default();
        Refusal::Malformed.count(&mut refusals);
        Refusal::Incomplete.count(&mut refusals);
        Refusal::Incomplete.count(&mut refusals);
        assert_eq!((refusals.malformed, refusals.incomplete), (1, 2));
        assert_eq!(refusals.total(), 3);
    }
}
