//! `lizard serve`: the counters as an OpenMetrics / Prometheus endpoint, until Ctrl-C or SIGTERM.

use std::time::Duration;

use hwcpipe::counting::{self, Target};
use lizard_core::{error_chain, Counters, Machine};
use lizard_serve::{device_labels, Exporter, ServeConfig};

use crate::args::ServeArgs;
use crate::cmd::capture;
use crate::error::CliError;
use crate::interrupt;
use crate::source::{self, Purpose};

/// How often the command looks at the exporter's failures, the target and Ctrl-C.
const POLL: Duration = Duration::from_millis(200);

/// Runs `lizard serve`.
pub fn run(args: &ServeArgs) -> Result<i32, CliError> {
    interrupt::install();
    let target = args.target.target()?;
    let opened = source::open(
        &args.source,
        target.as_ref(),
        Purpose::Serve,
        Some(args.interval),
        None,
        &args.counters,
    )?;
    eprintln!("{}", opened.summary);
    let mut lizard = opened.lizard;
    let counters = match args.counters.is_empty() {
        true => Counters::Default,
        false => Counters::Named(args.counters.clone()),
    };
    let chosen = lizard.enable_counters(&counters)?;
    capture::tell(&chosen);
    let served = chosen.ids.len();
    let mut config = ServeConfig::new(args.listen, device_labels(&Machine::this(), &lizard));
    config.interval = args.interval;
    let exporter = Exporter::start(lizard, config)?;
    let address = exporter.local_addr();
    let reach = match address.ip().is_loopback() {
        true => "loopback only: --listen ADDRESS:PORT to be scraped from other hosts",
        false => "reachable from other hosts: whoever reaches this address can read the counters",
    };
    eprintln!(
        "lizard: serving {served} counters at http://{address}/metrics, a window every {:.3}s ({reach}); \
         Ctrl-C or SIGTERM stops",
        args.interval.as_secs_f64()
    );

    let pid = match opened.target {
        Some(Target::Pid(pid)) => Some(pid),
        _ => None,
    };
    let watch = opened.watch;
    let mut reported: Option<String> = None;
    loop {
        if interrupt::sleep(POLL) {
            break;
        }
        if let Some((_, error)) = exporter.failure() {
            let text = error_chain(&*error);
            if reported.as_ref() != Some(&text) {
                eprintln!("lizard: a window failed (counted; the next one tries again): {text}");
                reported = Some(text);
            }
        }
        if watch.as_ref().is_some_and(|w| w.status().is_some()) {
            eprintln!("lizard: the counted command ended; stopping");
            break;
        }
        if pid.is_some_and(counting::process_ended) {
            eprintln!("lizard: the counted process ended; stopping");
            break;
        }
    }
    let account = exporter.account();
    drop(exporter.stop());
    eprintln!(
        "lizard: served {} windows ({} failed, {:.1}s covered), {} scrapes, {} requests refused",
        account.windows,
        account.window_failures,
        account.covered_s,
        account.scrapes,
        account.refused.total()
    );
    Ok(0)
}
