//! `lizard trace-server` and `lizard trace-dump`: application trace records in a bounded ring.

use std::time::Duration;

use lizard_trace::ring_dump::RingDump;
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
    let mut config = ServerConfig::with_capacity(args.capacity);
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
    let ring = match &args.load {
        Some(path) => load(path)?,
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

/// Runs `lizard trace-dump`.
pub fn dump(args: &TraceDumpArgs) -> Result<i32, CliError> {
    let destination = output::Destination::open(args.output.as_deref())?;
    let ring = load(&args.file)?;
    let text = match args.format {
        TextFormat::Table => {
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
                    meta.origin.to_string(),
                    copied_after,
                ]);
            }
            format!(
                "{}\n\n{}\nclients:\n{}",
                ring.directory(),
                table.render(),
                clients_table(&ring).render()
            )
        }
        TextFormat::Json => {
            let doc = RingDump::of(&ring);
            let mut text = serde_json::to_string_pretty(&doc)
                .map_err(|e| CliError::Other(format!("cannot write JSON: {e}")))?;
            text.push('\n');
            text
        }
    };
    destination.write_text(&text)?;
    Ok(0)
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
