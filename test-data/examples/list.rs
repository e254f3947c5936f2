//! Prints the data folder and which of its recordings are present.
//!
//! `cargo run -p test-data --example list`

fn main() {
    println!("data folder: {}", test_data::root().display());
    for relative in [
        "gatord-9.7.2/live-session/d2c.bin",
        "gatord-9.7.2/perf-session/d2c.bin",
        "gatord-9.7.2/arm64-vm-local.apc/0000000000",
        "gatord-9.7.2/events",
        "opencsd-stm",
        "arm-pmu-data",
        "libgpucounters-spec",
    ] {
        let state = match test_data::path(relative) {
            Some(_) => "present",
            None => "missing",
        };
        println!("{state:8} {relative}");
    }
}
