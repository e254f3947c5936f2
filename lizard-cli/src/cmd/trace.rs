//! `lizard trace-server` and `lizard trace-dump`: application trace records in a bounded ring.

use std::time::Duration;

use lizard_trace::{
    ClientLedger, HandleLimits, Origin, PeerPolicy, ServerConfig, SocketName, TraceRing,
    TraceServer,
};
use serde::Serialize;

use crate::args::{TextFormat, TraceDumpArgs, TraceServerArgs};
use crate::error::CliError;
use crate::interrupt;
use crate::output;
use crate::table::Table;

/// Runs `lizard trace-server` until Ctrl-C (or `--duration`), then saves the ring if asked.
pub fn server(args: &TraceServerArgs) -> Result<i32, CliError> {
    interrupt::install();
    let Ok(name) = args.socket.parse::<SocketName>();
    let mut config = ServerConfig::with_capacity(args.capacity);
    config.peers = match args.allow_anyone {
        true => PeerPolicy::anyone(),
        false => PeerPolicy::allowing(&args.allow_uid, &args.allow_gid),
    };
    if args.socket_mode.is_some() && !matches!(name, SocketName::Path(_)) {
        return Err(CliError::Usage(format!(
            "--socket-mode needs a path socket: '{}' is an abstract name, which has no file",
            args.socket
        )));
    }
    config.socket_mode = args.socket_mode;
    config.device.enabled = !args.no_device;
    config.device.handles = HandleLimits {
        per_process: args.max_open_handles.max(1),
        max_mapped_bytes: args.max_mapped as u64,
    };
    let admitted = admitted_text(&config.peers);
    let ring = match &args.load {
        Some(path) => TraceRing::load(path).map_err(|e| CliError::bad_input(path, e))?,
        None => TraceRing::new(args.capacity)
            .map_err(|e| CliError::Other(format!("cannot create the ring: {e}")))?,
    };
    let loaded = args.load.as_ref().map(|path| (path, ring.directory()));
    let capacity = ring.capacity();
    let server = TraceServer::start_with_ring(&name, ring, config).map_err(|e| {
        CliError::Other(format!(
            "cannot start the trace server on '{}': {}",
            args.socket,
            lizard_core::error_chain(&e)
        ))
    })?;
    eprintln!(
        "trace-server: listening on {}{} ({} bytes of ring; admitting {admitted}); Ctrl-C stops",
        args.socket,
        args.socket_mode
            .map_or_else(String::new, |m| format!(" (file mode {m:03o})")),
        capacity
    );
    if let Some((path, directory)) = loaded {
        eprintln!(
            "trace-server: continuing {}: {} records held, the next gets sequence number {}",
            path.display(),
            directory.record_count,
            directory.next_seq
        );
    }
    eprintln!("trace-server: {}", server.device_support());
    match args.duration {
        Some(duration) => {
            interrupt::sleep(duration);
        }
        None => while !interrupt::sleep(Duration::from_secs(3600)) {},
    }
    let stats = server.stats();
    let ring = server.stop();
    let directory = ring.directory();
    eprintln!("trace-server: {} records kept; {stats:?}", ring.len());
    eprintln!("trace-server: {directory:?}");
    if let Some(path) = &args.output {
        ring.save(path)
            .map_err(|e| CliError::Other(format!("{}: {e}", path.display())))?;
        eprintln!("trace-server: saved to {}", path.display());
    }
    Ok(0)
}

/// Who `peers` admits, for the banner: `every user`, or `this user and root` with the allowed ids.
fn admitted_text(peers: &PeerPolicy) -> String {
    if peers.anyone {
        return "every user".to_owned();
    }
    let list = |ids: &[u32]| ids.iter().map(u32::to_string).collect::<Vec<_>>().join(",");
    let mut text = "this user and root".to_owned();
    if !peers.uids.is_empty() {
        text.push_str(&format!(", uids {}", list(&peers.uids)));
    }
    if !peers.gids.is_empty() {
        text.push_str(&format!(", gids {}", list(&peers.gids)));
    }
    text
}

/// Where a record's payload came from, as `trace-dump` prints it.
#[derive(Serialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
enum OriginDoc {
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

impl OriginDoc {
    fn of(origin: &Origin) -> OriginDoc {
        match *origin {
            Origin::Unknown => OriginDoc::Unknown,
            Origin::Inline => OriginDoc::Inline,
            Origin::Memfd => OriginDoc::Memfd,
            Origin::Device {
                mode,
                device,
                offset,
            } => OriginDoc::Device {
                mode: mode.to_string(),
                device: device.to_string(),
                offset,
            },
        }
    }
}

/// One record of `trace-dump --format json`.
#[derive(Serialize)]
struct RecordDoc {
    seq: u64,
    timestamp_ns: u64,
    /// When the server copied the payload (0: not known).
    stored_ns: u64,
    module: String,
    file: String,
    line: u32,
    pid: u32,
    client_seq: u64,
    origin: OriginDoc,
    payload_len: usize,
    payload_hex: String,
}

/// One client account of `trace-dump --format json`.
#[derive(Serialize)]
struct ClientDoc {
    pid: u32,
    stored: u64,
    overwritten: u64,
    refused: u64,
    connections_refused: u64,
    device_sync: u64,
    device_async: u64,
    held: usize,
}

/// The ring's directory in `trace-dump --format json`.
#[derive(Serialize)]
struct DirectoryDoc {
    capacity: u64,
    first_seq: u64,
    next_seq: u64,
    record_count: u64,
    bytes_used: u64,
    records_overwritten: u64,
}

/// `trace-dump --format json`.
#[derive(Serialize)]
struct DumpDoc {
    directory: DirectoryDoc,
    records: Vec<RecordDoc>,
    clients: Vec<ClientDoc>,
}

/// A record's origin in a table cell: `inline`, `memfd`, `device sync GPU-…+0x100`, `unknown`.
fn origin_text(origin: &Origin) -> String {
    match origin {
        Origin::Unknown => "unknown".to_owned(),
        Origin::Inline => "inline".to_owned(),
        Origin::Memfd => "memfd".to_owned(),
        Origin::Device {
            mode,
            device,
            offset,
        } => format!("device {mode} {device}+{offset:#x}"),
    }
}

/// Runs `lizard trace-dump`.
pub fn dump(args: &TraceDumpArgs) -> Result<i32, CliError> {
    let ring = TraceRing::load(&args.file).map_err(|e| CliError::bad_input(&args.file, e))?;
    let text = match args.format {
        TextFormat::Text => {
            let mut table = Table::new(&[
                "seq",
                "timestamp_ns",
                "module",
                "location",
                "pid",
                "client_seq",
                "bytes",
                "origin",
                "copied_after_ns",
            ]);
            for r in ring.iter() {
                let meta = &r.head().meta;
                let copied_after = match meta.stored_ns {
                    0 => "-".to_owned(),
                    stored => stored.saturating_sub(meta.timestamp_ns).to_string(),
                };
                table.row(vec![
                    r.seq().to_string(),
                    r.timestamp_ns().to_string(),
                    r.module().to_owned(),
                    format!("{}:{}", r.file(), r.line()),
                    r.client_pid().to_string(),
                    r.client_seq().to_string(),
                    r.payload().len().to_string(),
                    origin_text(&meta.origin),
                    copied_after,
                ]);
            }
            format!(
                "{:?}\n{}\nclients:\n{}",
                ring.directory(),
                table.render(),
                clients_table(&ring).render()
            )
        }
        TextFormat::Json => {
            let d = ring.directory();
            let doc = DumpDoc {
                directory: DirectoryDoc {
                    capacity: d.capacity,
                    first_seq: d.first_seq,
                    next_seq: d.next_seq,
                    record_count: d.record_count,
                    bytes_used: d.bytes_used,
                    records_overwritten: d.records_overwritten,
                },
                records: ring
                    .iter()
                    .map(|r| RecordDoc {
                        seq: r.seq(),
                        timestamp_ns: r.timestamp_ns(),
                        stored_ns: r.head().meta.stored_ns,
                        module: r.module().to_owned(),
                        file: r.file().to_owned(),
                        line: r.line(),
                        pid: r.client_pid(),
                        client_seq: r.client_seq(),
                        origin: OriginDoc::of(&r.head().meta.origin),
                        payload_len: r.payload().len(),
                        payload_hex: r.payload().iter().map(|b| format!("{b:02x}")).collect(),
                    })
                    .collect(),
                clients: ring
                    .ledger()
                    .accounts()
                    .map(|a| ClientDoc {
                        pid: a.pid,
                        stored: a.stored,
                        overwritten: a.overwritten,
                        refused: a.refused,
                        connections_refused: a.connections_refused,
                        device_sync: a.device_sync,
                        device_async: a.device_async,
                        held: held_by(&ring, a.pid),
                    })
                    .collect(),
            };
            let mut text = serde_json::to_string_pretty(&doc)
                .map_err(|e| CliError::Other(format!("cannot write JSON: {e}")))?;
            text.push('\n');
            text
        }
    };
    output::write(None, &text)?;
    Ok(0)
}

/// Records of `pid` the ring holds now.
fn held_by(ring: &TraceRing, pid: u32) -> usize {
    ring.iter().filter(|r| r.client_pid() == pid).count()
}

/// The ring's ledger as a table: what each client process stored, still has, lost and had refused.
fn clients_table(ring: &TraceRing) -> Table {
    let mut table = Table::new(&[
        "pid",
        "stored",
        "held",
        "overwritten",
        "refused",
        "connections_refused",
        "device_sync",
        "device_async",
    ]);
    for a in ring.ledger().accounts() {
        let pid = match a.pid {
            ClientLedger::OTHERS => "others".to_owned(),
            pid => pid.to_string(),
        };
        table.row(vec![
            pid,
            a.stored.to_string(),
            held_by(ring, a.pid).to_string(),
            a.overwritten.to_string(),
            a.refused.to_string(),
            a.connections_refused.to_string(),
            a.device_sync.to_string(),
            a.device_async.to_string(),
        ]);
    }
    table
}
