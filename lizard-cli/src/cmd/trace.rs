//! `lizard trace-server` and `lizard trace-dump`: application trace records in a bounded ring.

use std::time::Duration;

use lizard_trace::{ClientLedger, PeerPolicy, ServerConfig, SocketName, TraceRing, TraceServer};
use serde_json::json;

use crate::args::{TextFormat, TraceDumpArgs, TraceServerArgs};
use crate::error::CliError;
use crate::interrupt;
use crate::output;
use crate::table::Table;

/// Runs `lizard trace-server` until Ctrl-C (or `--duration`), then saves the ring if asked.
pub fn server(args: &TraceServerArgs) -> Result<i32, CliError> {
    interrupt::install();
    let name: SocketName = args
        .socket
        .parse()
        .map_err(|e| CliError::Other(format!("bad socket name '{}': {e}", args.socket)))?;
    let capacity = args.capacity;
    let mut config = ServerConfig::with_capacity(capacity);
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
    let admitted = admitted_text(&config.peers);
    let server = TraceServer::start(&name, config).map_err(|e| {
        CliError::Other(format!(
            "cannot start the trace server on '{}': {e}",
            args.socket
        ))
    })?;
    eprintln!(
        "trace-server: listening on {}{} ({} bytes of ring; admitting {admitted}); Ctrl-C stops",
        args.socket,
        args.socket_mode
            .map_or_else(String::new, |m| format!(" (file mode {m:03o})")),
        capacity
    );
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
            ]);
            for r in ring.iter() {
                table.row(vec![
                    r.seq().to_string(),
                    r.timestamp_ns().to_string(),
                    r.module().to_owned(),
                    format!("{}:{}", r.file(), r.line()),
                    r.client_pid().to_string(),
                    r.client_seq().to_string(),
                    r.payload().len().to_string(),
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
            let records: Vec<_> = ring
                .iter()
                .map(|r| {
                    json!({
                        "seq": r.seq(),
                        "timestamp_ns": r.timestamp_ns(),
                        "module": r.module(),
                        "file": r.file(),
                        "line": r.line(),
                        "pid": r.client_pid(),
                        "client_seq": r.client_seq(),
                        "payload_len": r.payload().len(),
                        "payload_hex": r.payload().iter().map(|b| format!("{b:02x}")).collect::<String>(),
                    })
                })
                .collect();
            let clients: Vec<_> = ring
                .ledger()
                .accounts()
                .map(|a| {
                    json!({
                        "pid": a.pid,
                        "stored": a.stored,
                        "overwritten": a.overwritten,
                        "refused": a.refused,
                        "connections_refused": a.connections_refused,
                        "held": held_by(&ring, a.pid),
                    })
                })
                .collect();
            let d = ring.directory();
            output::to_json(&json!({
                "directory": format!("{d:?}"),
                "records": records,
                "clients": clients,
            }))
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
        ]);
    }
    table
}
