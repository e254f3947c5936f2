//! A ring's contents as one document (feature `serde`): its directory, every record it holds with its
//! payload in hex, and every client's account. `lizard trace-dump --format json` writes it.

use serde::Serialize;

use crate::head::{Origin, RecordHead};
use crate::ledger::ClientAccount;
use crate::ring::{Directory, TraceRing};
use crate::shared_ring::Snapshot;

/// Everything a ring holds, serializable; built by [`RingDump::of`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RingDump {
    /// What the ring holds and what it lost.
    pub directory: Directory,
    /// The records, oldest first.
    pub records: Vec<RecordDump>,
    /// What each client process stored, lost and had refused (a saved ring's; a shared ring file keeps no
    /// accounts).
    pub clients: Vec<ClientDump>,
    /// For a shared ring file read while its server runs: its writer, its pick-ups and crash losses.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shared: Option<SharedDump>,
}

/// What a [`RingDump`] of a shared ring file adds ([`Snapshot`]'s facts).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SharedDump {
    /// The process id of the last server that wrote it.
    pub writer_pid: u32,
    /// Times a server picked it up.
    pub restarts: u64,
    /// Records lost in servers' crashes.
    pub lost_in_crashes: u64,
    /// Times the snapshot started again because its first record was overwritten meanwhile.
    pub snapshot_retries: u32,
}

/// One record of a [`RingDump`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RecordDump {
    /// The ring's sequence number.
    pub seq: u64,
    /// When the client made the record (CLOCK_MONOTONIC_RAW, ns).
    pub timestamp_ns: u64,
    /// When the server copied the payload (0: not known).
    pub stored_ns: u64,
    /// The module the client named.
    pub module: String,
    /// The source file the client named.
    pub file: String,
    /// The source line the client named.
    pub line: u32,
    /// The client's process id.
    pub pid: u32,
    /// The client's own sequence number.
    pub client_seq: u64,
    /// Where the payload came from.
    pub origin: OriginDump,
    /// The payload; serialized as two members, `payload_len` (its length in bytes) and `payload_hex` (two
    /// lowercase hex digits a byte).
    #[serde(flatten, serialize_with = "payload_members")]
    pub payload: Vec<u8>,
}

/// `payload_len` and `payload_hex` of a [`RecordDump`]'s payload.
fn payload_members<S: serde::Serializer>(payload: &[u8], serializer: S) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeMap;
    struct Hex<'a>(&'a [u8]);
    impl std::fmt::Display for Hex<'_> {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            self.0.iter().try_for_each(|b| write!(f, "{b:02x}"))
        }
    }
    let mut map = serializer.serialize_map(Some(2))?;
    map.serialize_entry("payload_len", &payload.len())?;
    map.serialize_entry("payload_hex", &format_args!("{}", Hex(payload)))?;
    map.end()
}

/// Where a record's payload came from, in a [`RecordDump`]: serialized with a `kind` member.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
#[non_exhaustive]
pub enum OriginDump {
    /// From a ring file older than version 3.
    Unknown,
    /// Host bytes in the message.
    Inline,
    /// Host bytes in a sealed memfd.
    Memfd,
    /// GPU device memory.
    Device {
        /// `sync` or `async`.
        mode: String,
        /// The GPU's UUID.
        device: String,
        /// The payload's offset inside its allocation.
        offset: u64,
    },
}

impl From<&Origin> for OriginDump {
    fn from(origin: &Origin) -> OriginDump {
        match *origin {
            Origin::Unknown => OriginDump::Unknown,
            Origin::Inline => OriginDump::Inline,
            Origin::Memfd => OriginDump::Memfd,
            Origin::Device {
                mode,
                device,
                offset,
            } => OriginDump::Device {
                mode: mode.to_string(),
                device: device.to_string(),
                offset,
            },
        }
    }
}

/// One client's account in a [`RingDump`], with the number of its records the ring holds now.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ClientDump {
    /// The account, its members inline.
    #[serde(flatten)]
    pub account: ClientAccount,
    /// The client's records the ring holds now ([`TraceRing::held_by`]).
    pub held: usize,
}

impl RecordDump {
    /// The record with `head` and `payload`.
    pub fn of(head: &RecordHead, payload: &[u8]) -> RecordDump {
        let meta = &head.meta;
        RecordDump {
            seq: head.seq,
            timestamp_ns: meta.timestamp_ns,
            stored_ns: meta.stored_ns,
            module: meta.module.as_str().to_owned(),
            file: meta.file.as_str().to_owned(),
            line: meta.line,
            pid: meta.client_pid,
            client_seq: meta.client_seq,
            origin: OriginDump::from(&meta.origin),
            payload: payload.to_vec(),
        }
    }
}

impl RingDump {
    /// A snapshot of a shared ring file ([`crate::shared_ring::RingReader::snapshot`]).
    pub fn of_snapshot(snapshot: &Snapshot) -> RingDump {
        RingDump {
            directory: snapshot.directory,
            records: snapshot
                .records
                .iter()
                .map(|r| RecordDump::of(&r.head, &r.payload))
                .collect(),
            clients: Vec::new(),
            shared: Some(SharedDump {
                writer_pid: snapshot.writer_pid,
                restarts: snapshot.restarts,
                lost_in_crashes: snapshot.lost_in_crashes,
                snapshot_retries: snapshot.retries,
            }),
        }
    }

    /// The contents of `ring`.
    pub fn of(ring: &TraceRing) -> RingDump {
        RingDump {
            directory: ring.directory(),
            records: ring
                .iter()
                .map(|r| RecordDump::of(r.head(), r.payload()))
                .collect(),
            clients: ring
                .ledger()
                .accounts()
                .map(|&account| ClientDump {
                    account,
                    held: ring.held_by(account.pid),
                })
                .collect(),
            shared: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::{CopyMode, DeviceUuid};
    use crate::head::RecordMeta;

    #[test]
    fn a_dump_holds_every_record_and_account() {
        let mut ring = TraceRing::new(4096).unwrap();
        let meta = |seq, origin| RecordMeta {
            client_pid: 7,
            client_seq: seq,
            timestamp_ns: 100 + seq,
            stored_ns: 150 + seq,
            origin,
            ..RecordMeta::new("render", "frame.rs", 12).unwrap()
        };
        ring.push(&meta(0, Origin::Inline), &[0xab, 0x01]).unwrap();
        let device = Origin::Device {
            mode: CopyMode::Async,
            device: DeviceUuid([0x11; 16]),
            offset: 0x100,
        };
        ring.push(&meta(1, device), &[]).unwrap();
        let dump = RingDump::of(&ring);
        assert_eq!(dump.directory, ring.directory());
        assert_eq!(dump.records.len(), 2);
        assert_eq!(dump.records[0].payload, [0xab, 0x01]);
        assert_eq!(dump.clients.len(), 1);
        assert_eq!(
            (dump.clients[0].account.stored, dump.clients[0].held),
            (2, 2)
        );
        let json = serde_json::to_value(&dump).unwrap();
        assert_eq!(
            json["records"][0]["origin"],
            serde_json::json!({"kind": "inline"})
        );
        assert_eq!(json["records"][0]["payload_len"], 2);
        assert_eq!(json["records"][0]["payload_hex"], "ab01");
        assert_eq!(json["records"][1]["payload_hex"], "");
        assert_eq!(json["records"][1]["origin"]["kind"], "device");
        assert_eq!(json["records"][1]["origin"]["offset"], 0x100);
        assert_eq!(json["clients"][0]["pid"], 7);
        assert_eq!(json["clients"][0]["held"], 2);
    }
}
