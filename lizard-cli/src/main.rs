//! `lizard`: list, capture and inspect Arm CPU and Mali GPU hardware counters.

fn main() {
    eprintln!("lizard: no subcommands are available in this build yet");
    std::process::exit(2);
}
