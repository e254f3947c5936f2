//! `lizard`: list, capture and inspect Arm CPU and Mali GPU hardware counters, locally or through gatord.
//!
//! Every failure is one line on standard error (`lizard: …`) and a non-zero exit status, from one table
//! for every subcommand ([`error::EXIT_STATUSES`], printed by `lizard --help`): 2 for bad arguments or
//! unknown names, 3 when a counter source is unreachable or refused, fails during a capture (gatord closed
//! the connection or reported an error) or a capture measured nothing, 4 for input files that cannot be read
//! or hold nothing usable, 5 for a `diff` gate that failed, 130 for a read stopped by Ctrl-C, 1 otherwise.
//! `lizard stat` exits with the status of the command it ran.
#![forbid(unsafe_code)]

mod args;
mod cmd;
mod error;
mod inputs;
mod interrupt;
mod names;
mod output;
mod quantity;
mod source;
mod table;

use clap::Parser;
use lizard_core::error_chain;

use args::{Cli, Command};
use error::CliError;

fn run(cli: &Cli) -> Result<i32, CliError> {
    match &cli.command {
        Command::List(args) => cmd::list::run(args),
        Command::Capture(args) => cmd::capture::run(args),
        Command::Stat(args) => cmd::stat::run(args),
        Command::ApcDump(args) => cmd::apc_dump::run(args),
        Command::Events(args) => cmd::events::run(args),
        Command::GatordSim(args) => cmd::gatord_sim::run(args),
        Command::StmDump(args) => cmd::stm_dump::run(args),
        Command::StmReport(args) => cmd::stm_report::run(args),
        Command::Doctor(args) => cmd::doctor::run(args),
        Command::TraceServer(args) => cmd::trace::server(args),
        Command::TraceDump(args) => cmd::trace::dump(args),
        Command::Report(args) => cmd::report::run(args),
        Command::Diff(args) => cmd::diff::run(args),
        Command::Serve(args) => cmd::serve::run(args),
    }
}

fn main() {
    // A panic would print a backtrace hint; keep failures to one line even then.
    std::panic::set_hook(Box::new(|info| {
        eprintln!("lizard: internal error: {info}");
    }));
    let cli = Cli::parse();
    inputs::set_max_input(cli.max_input);
    let code = match run(&cli) {
        Ok(code) => code,
        Err(error) => {
            eprintln!("lizard: {}", error_chain(&error));
            error.exit_code()
        }
    };
    std::process::exit(code);
}
