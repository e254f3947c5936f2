//! `lizard gatord-sim`: a gatord stand-in on loopback, serving simulated counters.

use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use gator_proto::ProtocolVersion;
use gatord_sim::{mali_events, SimConfig};

use crate::args::GatordSimArgs;
use crate::error::CliError;
use crate::interrupt;

/// The simulator configuration the flags ask for.
pub fn config(args: &GatordSimArgs) -> Result<SimConfig, CliError> {
    let ip: IpAddr = args
        .bind
        .trim_matches(['[', ']'])
        .parse()
        .map_err(|_| CliError::BadAddress(format!("{}:{}", args.bind, args.port)))?;
    let protocol = match args.protocol.as_str() {
        "670" => ProtocolVersion::V670,
        _ => ProtocolVersion::V950,
    };
    let events_xml = match (&args.events, &args.gpu) {
        (Some(path), _) => {
            let bytes = std::fs::read(path).map_err(|e| CliError::file(path, e))?;
            let text = String::from_utf8(bytes)
                .map_err(|_| CliError::bad_input(path, "not UTF-8 text"))?;
            gator_xml::Events::parse(&text).map_err(|e| CliError::bad_input(path, e))?;
            Some(text)
        }
        (None, Some(gpu)) => {
            Some(mali_events::events_xml(gpu).map_err(|e| CliError::Other(e.to_string()))?)
        }
        (None, None) => None,
    };
    Ok(SimConfig {
        bind: SocketAddr::new(ip, args.port),
        protocol,
        events_xml,
        perf_counters: args.perf_counters.clone(),
        counting_only_counters: args.counting_only.clone(),
        cores: args.cores,
        ..SimConfig::default()
    })
}

/// Runs `lizard gatord-sim` until Ctrl-C (or `--duration`).
pub fn run(args: &GatordSimArgs) -> Result<i32, CliError> {
    interrupt::install();
    let config = config(args)?;
    let protocol = config.protocol.0;
    let handle = gatord_sim::start(config).map_err(|e| {
        CliError::Other(format!("cannot listen on {}:{}: {e}", args.bind, args.port))
    })?;
    eprintln!(
        "gatord-sim: listening on {} (protocol {protocol}, {} counters); Ctrl-C stops",
        handle.local_addr(),
        handle.counters().len()
    );
    match args.duration {
        Some(duration) => {
            interrupt::sleep(duration);
        }
        None => while !interrupt::sleep(Duration::from_secs(3600)) {},
    }
    let stats = handle.stats();
    eprintln!(
        "gatord-sim: {} connections ({} told a session was in progress, {} closed over the limit of {}), \
         {} captures, {} frames sent",
        stats.connections,
        stats.busy_rejections,
        stats.connections_refused,
        gatord_sim::MAX_CONNECTIONS,
        stats.captures,
        stats.frames
    );
    handle.shutdown();
    Ok(0)
}
