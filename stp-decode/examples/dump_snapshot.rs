//! Dumps an STM trace snapshot as OpenCSD ships it: the CoreSight-formatted trace buffer of the Arm Juno
//! snapshot in `../shared/data/opencsd-stm/stm_only-juno/` (STM on trace ID 0x20), the first STP packets,
//! then the software-trace elements (master, channel, data) an application wrote.
//!
//! `cargo run -p stp-decode --example dump_snapshot [BUFFER [TRACE_ID]]`

use std::path::PathBuf;

use stp_decode::dump::{dump, DumpOptions, Item};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let path = args.next().map(PathBuf::from).unwrap_or_else(|| {
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../../shared/data/opencsd-stm/stm_only-juno/cstraceitm.bin")
    });
    let trace_id = match args.next() {
        Some(text) => u8::from_str_radix(text.trim_start_matches("0x"), 16)?,
        None => 0x20,
    };
    let buffer = std::fs::read(&path).map_err(|e| {
        format!(
            "{}: {e} (OpenCSD's snapshots live in ../shared/data beside the repository; pass a trace \
             buffer as the first argument)",
            path.display()
        )
    })?;
    println!(
        "{}: {} bytes, STM on trace ID {trace_id:#04x}",
        path.display(),
        buffer.len()
    );
    let mut packets = 0;
    let mut other = Vec::new();
    let mut elements = Vec::new();
    for record in dump(&buffer, DumpOptions::formatted(trace_id)) {
        match record.item {
            Item::Packet(_) => {
                if packets < 12 {
                    println!("  {record}");
                }
                packets += 1;
            }
            Item::Element(_) => elements.push(record.to_string()),
            Item::EndOfTrace => {}
            _ => other.push(record.to_string()),
        }
    }
    // Frames of other trace sources and padding the snapshot holds; the decoder says what each was.
    println!(
        "{} frame or decode errors, the first: {:?}",
        other.len(),
        other.first()
    );
    println!(
        "{packets} packets; {} software-trace elements, the first 8:",
        elements.len()
    );
    for line in elements.iter().take(8) {
        println!("  {line}");
    }
    Ok(())
}
