//! `lizard gatord-sim`: a gatord stand-in on loopback, serving simulated counters.

use std::time::Duration;

use gator_proto::ProtocolVersion;
use gatord_sim::{mali_events, SimConfig};

use crate::args::GatordSimArgs;
use crate::error::CliError;
use crate::inputs::inputs;
use crate::interrupt;
use lizard_core::input::InputKind;

/// The simulator configuration the flags ask for.
pub fn config(args: &GatordSimArgs) -> Result<SimConfig, CliError> {
    let bind =
        crate::args::resolve(&args.bind, args.port).map_err(|reason| CliError::BadAddress {
            text: args.bind.clone(),
            reason,
        })?;
    let protocol = match args.protocol.as_str() {
        "670" => ProtocolVersion::V670,
        _ => ProtocolVersion::V950,
    };
    let events_xml = match (&args.events, &args.gpu) {
        (Some(path), _) => Some(inputs()?.read_text(path, InputKind::EventsXml)?),
        (None, Some(gpu)) => {
            Some(mali_events::events_xml(gpu).map_err(|e| CliError::Usage(e.to_string()))?)
        }
        (None, None) => None,
    };
    // The counters the served events document names: what --perf-counters and --counting-only may name.
    let served = events_xml
        .as_deref()
        .unwrap_or(gatord_sim::DEFAULT_EVENTS_XML);
    let events = gator_xml::Events::parse(served).map_err(|e| match &args.events {
        Some(path) => CliError::bad_input(path, e),
        None => CliError::Other(format!("the built-in events document: {e}")),
    })?;
    let names: Vec<&str> = events
        .events()
        .filter_map(|(_, event)| event.counter.as_deref())
        .collect();
    for (flag, wanted) in [
        ("--perf-counters", &args.perf_counters),
        ("--counting-only", &args.counting_only),
    ] {
        if let Some(unknown) = wanted.iter().find(|w| !names.contains(&w.as_str())) {
            return Err(CliError::UnknownCounter {
                name: unknown.clone(),
                hint: format!(
                    " for {flag}: the events served name {}{}",
                    names.iter().take(8).copied().collect::<Vec<_>>().join(", "),
                    if names.len() > 8 { ", …" } else { "" }
                ),
            });
        }
    }
    Ok(SimConfig {
        bind,
        protocol,
        events_xml,
        perf_counters: args.perf_counters.clone(),
        counting_only_counters: args.counting_only.clone(),
        cores: args.cores,
        ..SimConfig::default()
    })
}

/// Runs `lizard gatord-sim` until Ctrl-C (or `--duration`); `--gpu list` lists the GPUs it can serve.
pub fn run(args: &GatordSimArgs) -> Result<i32, CliError> {
    interrupt::install();
    if args.gpu.as_deref() == Some("list") {
        let mut text =
            String::from("GPUs whose hardware counters gatord-sim serves (--gpu NAME):\n");
        for name in mali_events::gpus() {
            text.push_str(&format!("  {name}\n"));
        }
        crate::output::write(None, &text)?;
        return Ok(0);
    }
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
