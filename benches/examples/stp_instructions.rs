//! The STP decoder and the STM pipeline run once over the clean STM inputs of the benches, for an instruction
//! count under callgrind (`--toggle-collect='*measure*'`), beside OpenCSD's on the same bytes
//! (`benches/opencsd/callgrind.sh` runs both and prints the ratios).
//!
//! ```text
//! stp_instructions stream [FILE]     # StpDecoder events over the 1.08 MB STP stream
//! stp_instructions pipeline [FILE]   # deformat + decode + elements over the 1.16 MB formatted buffer
//! ```
//!
//! FILE receives the input bytes, for the OpenCSD harness to decode the very same ones.

use std::hint::black_box;

use lizard_benches::stm::{clean_buffer, clean_stream, TRACE_ID};
use stp_decode::dump::{dump, DumpOptions};
use stp_decode::StpDecoder;

/// The STP decoder's events over `stream`.
#[inline(never)]
fn measure_stream(stream: &[u8]) -> usize {
    let mut decoder = StpDecoder::new();
    decoder.feed(black_box(stream)).count() + decoder.finish().count()
}

/// The whole pipeline's element records over the formatted `buffer`.
#[inline(never)]
fn measure_pipeline(buffer: &[u8]) -> usize {
    dump(
        black_box(buffer),
        DumpOptions::formatted(TRACE_ID).elements(),
    )
    .count()
}

fn main() {
    let mut args = std::env::args().skip(1);
    let which = args.next().unwrap_or_else(|| "stream".to_owned());
    let (input, count, what) = match which.as_str() {
        "pipeline" => {
            let buffer = clean_buffer(1 << 20);
            let n = measure_pipeline(&buffer);
            (buffer, n, "records")
        }
        _ => {
            let stream = clean_stream(1 << 20);
            let n = measure_stream(&stream);
            (stream, n, "events")
        }
    };
    if let Some(path) = args.next() {
        if let Err(e) = std::fs::write(&path, &input) {
            eprintln!("stp_instructions: {path}: {e}");
            std::process::exit(1);
        }
    }
    println!("{which}: {count} {what} from {} bytes", input.len());
}
