//! `lizard trace-server` and `lizard trace-dump`: application trace records in a bounded ring.

use std::time::Duration;

use lizard_trace::ring_dump::{RecordDump, RingDump};
use lizard_trace::shared_ring::{RingReader, SharedRingError};
use lizard_trace::RecordHead;
use lizard_trace::{
    ClientLedger, HandleLimits, PeerPolicy, ServerConfig, SocketName, TraceRing, TraceServer,
};

use crate::args::{TextFormat, TraceDumpArgs, TraceServerArgs};
use crate::error::CliError;
use crate::inputs::inputs;
use crate::interrupt;
use crate::output;
use crate::table::Table;
use lizard_core::input::{InputError, InputKind};

/// Runs `lizard trace-server` until Ctrl-C (or `--duration`), then saves the ring if asked.
pub fn server(args: &TraceServerArgs) -> Result<i32, CliError> {
    interrupt::install();
    let Ok(name) = args.socket.parse::<SocketName>();
    let mut config = ServerConfig::with_capacity(
        args.capacity
            .unwrap_or(lizard_trace::server::DEFAULT_CAPACITY),
    );
    config.max_payload = args.max_payload;
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
    let admitted = config.peers.to_string();
    let (ring, recovery) = match (&args.load, &args.ring) {
        (Some(path), _) => (load(path)?, None),
        (None, Some(path)) => {
            // A new ring file takes the default capacity; an existing one keeps its own unless named.
            let exists = std::fs::metadata(path).is_ok_and(|m| m.len() > 0);
            let capacity = match exists {
                true => args.capacity,
                false => Some(config.capacity),
            };
            let (ring, recovery) =
                TraceRing::open_shared(path, capacity, args.sync.unwrap_or_default())
                    .map_err(shared_ring_error)?;
            (ring, Some((path, recovery)))
        }
        (None, None) => (
            TraceRing::new(config.capacity)
                .map_err(|e| CliError::Other(format!("cannot create the ring: {e}")))?,
            None,
        ),
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
        "trace-server: listening on {}{} ({} bytes of ring, records of at most {} bytes; admitting {admitted}); Ctrl-C stops",
        args.socket,
        args.socket_mode
            .map_or_else(String::new, |m| format!(" (file mode {m:03o})")),
        capacity,
        args.max_payload
    );
    if let Some((path, directory)) = loaded {
        eprintln!("trace-server: continuing {}: {directory}", path.display());
    }
    if let Some((path, recovery)) = &recovery {
        eprintln!(
            "trace-server: the ring is {} (written back {}): {recovery}",
            path.display(),
            args.sync.unwrap_or_default()
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
    eprintln!("trace-server: stopped; the ring: {directory}");
    for line in stats.to_string().lines() {
        eprintln!("trace-server: {line}");
    }
    if let Some(path) = &args.output {
        ring.save(path)
            .map_err(|e| CliError::Other(format!("{}: {e}", path.display())))?;
        eprintln!("trace-server: saved to {}", path.display());
    }
    Ok(0)
}

/// The columns of a record's row.
const RECORD_COLUMNS: [&str; 9] = [
    "seq",
    "timestamp_ns",
    "module",
    "location",
    "pid",
    "client_seq",
    "bytes",
    "origin",
    "copied_after_ns",
];

/// A record's row: its head's facts and its payload's length.
fn record_row(head: &RecordHead, payload_len: usize) -> Vec<String> {
    let meta = &head.meta;
    let copied_after = match meta.stored_ns {
        0 => "-".to_owned(),
        stored => stored.saturating_sub(meta.timestamp_ns).to_string(),
    };
    vec![
        head.seq.to_string(),
        meta.timestamp_ns.to_string(),
        meta.module.as_str().to_owned(),
        format!("{}:{}", meta.file.as_str(), meta.line),
        meta.client_pid.to_string(),
        meta.client_seq.to_string(),
        payload_len.to_string(),
        meta.origin.to_string(),
        copied_after,
    ]
}

/// Runs `lizard trace-dump`: a saved ring file, or a shared ring file read while its server writes it.
pub fn dump(args: &TraceDumpArgs) -> Result<i32, CliError> {
    let destination = output::Destination::open(args.output.as_deref())?;
    if RingReader::is_shared_ring(&args.file) {
        return dump_shared(args, destination);
    }
    if args.follow {
        return Err(CliError::Usage(format!(
            "--follow reads a shared ring file (trace-server --ring); {} is a saved ring",
            args.file.display()
        )));
    }
    let ring = load(&args.file)?;
    let text = match args.format {
        TextFormat::Table => {
            let mut table = Table::new(&RECORD_COLUMNS);
            for r in ring.iter() {
                table.row(record_row(r.head(), r.payload().len()));
            }
            format!(
                "{}\n\n{}\nclients:\n{}",
                ring.directory(),
                table.render(),
                clients_table(&ring).render()
            )
        }
        TextFormat::Json => json(&RingDump::of(&ring))?,
    };
    destination.write_text(&text)?;
    Ok(0)
}

/// `value` as pretty JSON with a final newline.
fn json<T: serde::Serialize>(value: &T) -> Result<String, CliError> {
    let mut text = serde_json::to_string_pretty(value)
        .map_err(|e| CliError::Other(format!("cannot write JSON: {e}")))?;
    text.push('\n');
    Ok(text)
}

/// How often `trace-dump --follow` looks for new records.
const FOLLOW_EVERY: Duration = Duration::from_millis(50);

/// `trace-dump` of a shared ring file: a consistent snapshot, or (`--follow`) the records as they come.
fn dump_shared(args: &TraceDumpArgs, destination: output::Destination) -> Result<i32, CliError> {
    let reader = RingReader::open(&args.file).map_err(shared_ring_error)?;
    if !args.follow {
        let snapshot = reader.snapshot();
        let text = match args.format {
            TextFormat::Table => {
                let mut table = Table::new(&RECORD_COLUMNS);
                for r in &snapshot.records {
                    table.row(record_row(&r.head, r.payload.len()));
                }
                format!(
                    "{} (a snapshot of the shared ring written by process {}; {} records lost in {} \
                     crashes and pick-ups)\n\n{}",
                    snapshot.directory,
                    snapshot.writer_pid,
                    snapshot.lost_in_crashes,
                    snapshot.restarts,
                    table.render()
                )
            }
            TextFormat::Json => json(&RingDump::of_snapshot(&snapshot))?,
        };
        destination.write_text(&text)?;
        return Ok(0);
    }
    // Following: one line (or one JSON object) per record as it is committed, until Ctrl-C.
    interrupt::install();
    let mut out = destination.stream();
    let mut cursor = reader.cursor();
    if args.format == TextFormat::Table {
        out.write_fmt(format_args!("{}\n", RECORD_COLUMNS.join("\t")))?;
    }
    while !interrupt::interrupted() && !out.is_closed() {
        let (records, missed) = reader.follow(&mut cursor);
        if missed > 0 {
            eprintln!("lizard: {missed} records were overwritten before they were read");
        }
        for r in &records {
            match args.format {
                TextFormat::Table => out.write_fmt(format_args!(
                    "{}\n",
                    record_row(&r.head, r.payload.len()).join("\t")
                ))?,
                TextFormat::Json => {
                    let line = serde_json::to_string(&RecordDump::of(&r.head, &r.payload))
                        .map_err(|e| CliError::Other(format!("cannot write JSON: {e}")))?;
                    out.write_fmt(format_args!("{line}\n"))?;
                }
            }
        }
        out.flush()?;
        if records.is_empty() {
            interrupt::sleep(FOLLOW_EVERY);
        }
    }
    out.finish()?;
    Ok(0)
}

/// The command line's words for a shared ring file that cannot be used.
fn shared_ring_error(error: SharedRingError) -> CliError {
    match error {
        SharedRingError::Io { path, source, .. } => CliError::file(path, source),
        SharedRingError::Format { path, source } => CliError::bad_input(path, source),
        SharedRingError::CapacityMismatch { .. } | SharedRingError::Capacity { .. } => {
            CliError::Usage(lizard_core::error_chain(&error))
        }
        other => CliError::Other(lizard_core::error_chain(&other)),
    }
}

/// Reads a ring file, under the ring file limit and stopped by Ctrl-C.
fn load(path: &std::path::Path) -> Result<TraceRing, CliError> {
    let mut stream = std::io::BufReader::new(inputs()?.open(path, InputKind::RingFile)?);
    TraceRing::read_from(&mut stream, lizard_trace::ring_file::DEFAULT_LOAD_LIMIT).map_err(|e| {
        match e {
            lizard_trace::RingFileError::Io(io) => match InputError::from_io(io) {
                Ok(input) => CliError::Input(input),
                Err(io) => CliError::file(path, io),
            },
            other => CliError::bad_input(path, other),
        }
    })
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
            ring.held_by(a.pid).to_string(),
            a.overwritten.to_string(),
            a.refused.to_string(),
            a.connections_refused.to_string(),
            a.device_sync.to_string(),
            a.device_async.to_string(),
        ]);
    }
    table
}
