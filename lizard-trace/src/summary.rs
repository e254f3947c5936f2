//! The ring's directory and the server's counts in words, as `lizard trace-server` and `trace-dump` print
//! them: what a person reads at a glance, every count that is not zero named.

use std::fmt;

use crate::ring::Directory;
use crate::server::{Rejections, ServerStats};

/// `6 records held (sequence 3 to 8), 1.2 KiB of 64 MiB used, 3 overwritten to make room`.
impl fmt::Display for Directory {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.record_count {
            0 => write!(
                f,
                "no records held (the next gets sequence {})",
                self.next_seq
            )?,
            n => write!(
                f,
                "{n} records held (sequence {} to {})",
                self.first_seq,
                self.next_seq.saturating_sub(1)
            )?,
        }
        write!(
            f,
            ", {} of {} used",
            bytes(self.bytes_used),
            bytes(self.capacity)
        )?;
        if self.records_overwritten > 0 {
            write!(f, ", {} overwritten to make room", self.records_overwritten)?;
        }
        Ok(())
    }
}

/// One line per subject: connections, records, acknowledgements, device handles, rejections; a zero count
/// is left out.
impl fmt::Display for ServerStats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "connections: {} accepted, {} ended, {} connected now",
            self.connections_accepted, self.disconnects, self.clients_connected
        )?;
        let refused = [
            (self.connections_refused, "over the client limit"),
            (
                self.connections_refused_per_process,
                "over the per-process limit",
            ),
            (self.peers_refused, "users not admitted"),
            (self.accept_errors, "failed accepts"),
        ];
        list(f, "; refused", &refused)?;
        write!(
            f,
            "\nrecords: {} stored, {} of payload",
            self.records_stored,
            bytes(self.payload_bytes_stored)
        )?;
        let by_way = [
            (self.records_memfd, "by memfd"),
            (
                self.records_device_sync,
                "GPU memory copied while the client waited",
            ),
            (self.records_device_async, "GPU memory copied after"),
        ];
        list(f, "; of them", &by_way)?;
        if self.acks_sent + self.acks_dropped > 0 {
            write!(
                f,
                "\nacknowledgements: {} sent, {} dropped (the client's queue was full or it had gone)",
                self.acks_sent, self.acks_dropped
            )?;
        }
        let h = &self.handles;
        if h.opened > 0 {
            write!(
                f,
                "\nGPU handles: {} opened, {} reused, {} evicted, {} closed, {} open now ({} mapped, at most {})",
                h.opened,
                h.reused,
                h.evicted,
                h.closed,
                h.open,
                bytes(h.mapped_bytes),
                bytes(h.peak_mapped_bytes)
            )?;
        }
        write!(f, "\nrejected: {}", self.rejected)
    }
}

/// `none`, or `3 (2 malformed, 1 over its share of the ring)`.
impl fmt::Display for Rejections {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let total = self.total();
        if total == 0 {
            return f.write_str("none");
        }
        write!(f, "{total}")?;
        let reasons = [
            (self.malformed, "malformed"),
            (self.oversized, "over the size limit"),
            (self.bad_fds, "with bad descriptors"),
            (self.bad_memfd, "with a bad memfd"),
            (self.too_large_for_ring, "larger than the ring"),
            (self.over_share, "over the client's share of the ring"),
            (
                self.device_unavailable,
                "GPU memory, which this server cannot read",
            ),
            (self.device_unknown, "of a GPU this server does not have"),
            (self.device_open_failed, "whose GPU handle did not open"),
            (
                self.device_outside_allocation,
                "past the end of their GPU allocation",
            ),
            (self.device_copy_failed, "whose GPU copy failed"),
        ];
        let mut first = true;
        f.write_str(" (")?;
        for (count, why) in reasons.iter().filter(|(n, _)| *n > 0) {
            if !first {
                f.write_str(", ")?;
            }
            first = false;
            write!(f, "{count} {why}")?;
        }
        f.write_str(")")
    }
}

/// Writes `label: 2 this, 1 that` for the counts that are not zero; nothing when all are.
fn list(f: &mut fmt::Formatter<'_>, label: &str, counts: &[(u64, &str)]) -> fmt::Result {
    let mut first = true;
    for (count, what) in counts.iter().filter(|(n, _)| *n > 0) {
        f.write_str(if first { label } else { "," })?;
        f.write_str(if first { ": " } else { " " })?;
        write!(f, "{count} {what}")?;
        first = false;
    }
    Ok(())
}

/// A byte count as people read it: `512 bytes`, `1.2 KiB`, `64 MiB`.
fn bytes(n: u64) -> String {
    const UNITS: [(u64, &str); 3] = [(1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")];
    for (scale, unit) in UNITS {
        if n >= scale {
            return match n % scale {
                0 => format!("{} {unit}", n / scale),
                _ => format!("{:.1} {unit}", n as f64 / scale as f64),
            };
        }
    }
    format!("{n} bytes")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_directory_reads_as_a_sentence() {
        let d = Directory {
            capacity: 64 << 20,
            first_seq: 3,
            next_seq: 9,
            record_count: 6,
            bytes_used: 1234,
            records_overwritten: 3,
        };
        assert_eq!(
            d.to_string(),
            "6 records held (sequence 3 to 8), 1.2 KiB of 64 MiB used, 3 overwritten to make room"
        );
        let empty = Directory {
            capacity: 4096,
            first_seq: 0,
            next_seq: 0,
            record_count: 0,
            bytes_used: 0,
            records_overwritten: 0,
        };
        assert_eq!(
            empty.to_string(),
            "no records held (the next gets sequence 0), 0 bytes of 4 KiB used"
        );
    }

    #[test]
    fn server_counts_name_what_is_not_zero() {
        let mut stats = ServerStats {
            connections_accepted: 4,
            disconnects: 3,
            clients_connected: 1,
            peers_refused: 2,
            records_stored: 10,
            records_memfd: 1,
            payload_bytes_stored: 2048,
            ..ServerStats::default()
        };
        stats.rejected.malformed = 2;
        stats.rejected.over_share = 1;
        let text = stats.to_string();
        assert_eq!(
            text,
            "connections: 4 accepted, 3 ended, 1 connected now; refused: 2 users not admitted\n\
             records: 10 stored, 2 KiB of payload; of them: 1 by memfd\n\
             rejected: 3 (2 malformed, 1 over the client's share of the ring)"
        );
        assert!(!text.contains('{'), "no Debug structs");
    }
}
