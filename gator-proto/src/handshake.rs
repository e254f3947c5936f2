//! The text handshake that opens every connection.
//!
//! The client sends `STREAMLINE\n`, optionally preceded by legacy lines such as `VERSION 671\n` that the daemon
//! skips. The daemon reads lines (ending at `\n`, `\r` or NUL, at most 64 bytes) until one equals `STREAMLINE`,
//! then answers `GATOR <PROTOCOL_VERSION>\n`; the number has any count of digits and is negative for development
//! builds.

use thiserror::Error;

use crate::status::Decoded;
use crate::version::ProtocolVersion;

/// The magic line a client sends.
pub const STREAMLINE: &[u8] = b"STREAMLINE\n";
/// The prefix of the daemon's answer.
pub const GATOR_PREFIX: &[u8] = b"GATOR ";
/// The longest handshake line either side accepts, terminator included.
pub const MAX_LINE_LEN: usize = 64;

/// Why a handshake line was rejected.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum HandshakeError {
    /// The daemon's answer does not start with `GATOR `.
    #[error("handshake answer does not start with `GATOR `")]
    BadMagic,
    /// The number after `GATOR ` is missing, not decimal or out of range.
    #[error("handshake answer has no valid protocol version")]
    BadVersion,
    /// No line terminator within the first 64 bytes.
    #[error("handshake line longer than {MAX_LINE_LEN} bytes")]
    LineTooLong,
}

/// Appends the legacy `VERSION <n>\n` line Lizard sends before the magic (ignored by every daemon since v4).
pub fn encode_legacy_version_line(version: u32, out: &mut Vec<u8>) {
    out.extend_from_slice(format!("VERSION {version}\n").as_bytes());
}

/// Appends the daemon's answer `GATOR <n>\n`.
pub fn encode_gator_line(version: ProtocolVersion, out: &mut Vec<u8>) {
    out.extend_from_slice(format!("GATOR {}\n", version.0).as_bytes());
}

/// Parses the daemon's `GATOR <n>\n` answer at the start of `buf`.
///
/// A prefix of a valid line is [`Decoded::Partial`]; a byte that can not start a valid line fails at once.
pub fn decode_gator_line(buf: &[u8]) -> Result<Decoded<ProtocolVersion>, HandshakeError> {
    let magic_seen = buf.len().min(GATOR_PREFIX.len());
    if buf[..magic_seen] != GATOR_PREFIX[..magic_seen] {
        return Err(HandshakeError::BadMagic);
    }
    let Some(end) = buf.iter().take(MAX_LINE_LEN).position(|&b| b == b'\n') else {
        if buf.len() >= MAX_LINE_LEN {
            return Err(HandshakeError::LineTooLong);
        }
        // Reject a non-digit as soon as it arrives.
        if buf.len() > GATOR_PREFIX.len() && !is_number_prefix(&buf[GATOR_PREFIX.len()..]) {
            return Err(HandshakeError::BadVersion);
        }
        return Ok(Decoded::Partial);
    };
    let number = std::str::from_utf8(&buf[GATOR_PREFIX.len()..end])
        .map_err(|_| HandshakeError::BadVersion)?;
    if !is_number_prefix(number.as_bytes()) || number.is_empty() || number == "-" {
        return Err(HandshakeError::BadVersion);
    }
    let value: i64 = number.parse().map_err(|_| HandshakeError::BadVersion)?;
    Ok(Decoded::Complete {
        value: ProtocolVersion(value),
        consumed: end + 1,
    })
}

fn is_number_prefix(bytes: &[u8]) -> bool {
    let digits = bytes.strip_prefix(b"-").unwrap_or(bytes);
    digits.iter().all(u8::is_ascii_digit)
}

/// One line read by the daemon side of the handshake.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClientLine<'a> {
    /// The `STREAMLINE` magic: the handshake is complete.
    Streamline,
    /// Any other line (a legacy `VERSION nnn` line, or an empty line from `\r\n`), which the daemon ignores.
    Ignored(&'a [u8]),
}

/// Reads one client handshake line at the start of `buf`, as gatord does: it ends at `\n`, `\r` or NUL.
pub fn decode_client_line(buf: &[u8]) -> Result<Decoded<ClientLine<'_>>, HandshakeError> {
    let Some(end) = buf
        .iter()
        .take(MAX_LINE_LEN)
        .position(|&b| matches!(b, b'\n' | b'\r' | 0))
    else {
        return if buf.len() >= MAX_LINE_LEN {
            Err(HandshakeError::LineTooLong)
        } else {
            Ok(Decoded::Partial)
        };
    };
    let line = &buf[..end];
    let value = if line == &STREAMLINE[..STREAMLINE.len() - 1] {
        ClientLine::Streamline
    } else {
        ClientLine::Ignored(line)
    };
    Ok(Decoded::Complete {
        value,
        consumed: end + 1,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn any_digit_count_is_accepted() {
        for (line, version) in [
            (&b"GATOR 950\n"[..], 950),
            (b"GATOR 670\n", 670),
            (b"GATOR 6\n", 6),
            (b"GATOR 1000\n", 1000),
            (b"GATOR -95000123\n", -95_000_123),
        ] {
            assert_eq!(
                decode_gator_line(line),
                Ok(Decoded::Complete {
                    value: ProtocolVersion(version),
                    consumed: line.len()
                })
            );
            for cut in 0..line.len() {
                assert_eq!(
                    decode_gator_line(&line[..cut]),
                    Ok(Decoded::Partial),
                    "prefix {cut} of {line:?}"
                );
            }
        }
    }

    #[test]
    fn bad_answers_are_errors() {
        assert_eq!(
            decode_gator_line(b"GATORD 9"),
            Err(HandshakeError::BadMagic)
        );
        assert_eq!(decode_gator_line(b"X"), Err(HandshakeError::BadMagic));
        assert_eq!(
            decode_gator_line(b"GATOR x"),
            Err(HandshakeError::BadVersion)
        );
        assert_eq!(
            decode_gator_line(b"GATOR \n"),
            Err(HandshakeError::BadVersion)
        );
        assert_eq!(
            decode_gator_line(b"GATOR -\n"),
            Err(HandshakeError::BadVersion)
        );
        assert_eq!(
            decode_gator_line(b"GATOR 99999999999999999999\n"),
            Err(HandshakeError::BadVersion)
        );
        let mut long = b"GATOR ".to_vec();
        long.extend_from_slice(&[b'9'; 70]);
        assert_eq!(decode_gator_line(&long), Err(HandshakeError::LineTooLong));
    }

    #[test]
    fn client_lines() {
        let mut bytes = Vec::new();
        encode_legacy_version_line(671, &mut bytes);
        bytes.extend_from_slice(STREAMLINE);
        let (first, used) = decode_client_line(&bytes).unwrap().complete().unwrap();
        assert_eq!(first, ClientLine::Ignored(b"VERSION 671"));
        let (second, _) = decode_client_line(&bytes[used..])
            .unwrap()
            .complete()
            .unwrap();
        assert_eq!(second, ClientLine::Streamline);
        assert_eq!(decode_client_line(b"STREAM"), Ok(Decoded::Partial));
        assert_eq!(
            decode_client_line(&[b'a'; 64]),
            Err(HandshakeError::LineTooLong)
        );
    }

    #[test]
    fn gator_line_encodes() {
        let mut out = Vec::new();
        encode_gator_line(ProtocolVersion::V950, &mut out);
        assert_eq!(out, b"GATOR 950\n");
    }
}
