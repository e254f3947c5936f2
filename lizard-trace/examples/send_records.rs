//! Runs a trace server on an abstract socket, sends it records the way an application does (a small payload
//! inline, a large one through a sealed memfd, one with the caller's file and line), then reads the ring
//! back oldest first and saves it to a file that `lizard trace-dump` prints.
//!
//! `cargo run -p lizard-trace --example send_records`

use std::time::Duration;

use lizard_trace::{trace_record, ServerConfig, SocketName, TraceClient, TraceRing, TraceServer};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let socket = format!("lizard-trace-example-{}", std::process::id());
    let name = SocketName::abstract_name(socket.clone());
    let server = TraceServer::start(&name, ServerConfig::with_capacity(1 << 20))?;
    println!("trace server on @{socket} with a 1 MiB ring");

    let mut client = TraceClient::connect(&name)?;
    for frame in 0..3u32 {
        let delivery =
            client.record("submit", format!("vkQueueSubmit frame {frame}").as_bytes())?;
        println!("record 'submit' #{frame}: {delivery:?}");
    }
    let delivery = trace_record!(client, "upload", &vec![7u8; 200_000])?;
    println!("record 'upload' of 200000 bytes (memfd): {delivery:?}");

    // Every wait is bounded.
    let (stats, done) = server.wait_until(Duration::from_secs(5), |s| s.records_stored == 4);
    if !done {
        return Err(format!("the server did not store the 4 records in 5 s: {stats:?}").into());
    }
    server.with_ring(|ring| {
        for record in ring.iter() {
            println!(
                "  {} {}:{} {} bytes",
                record.module(),
                record.file(),
                record.line(),
                record.payload().len()
            );
        }
    });
    let path =
        std::env::temp_dir().join(format!("lizard-trace-example-{}.ring", std::process::id()));
    server.save(&path)?;
    let ring = TraceRing::load(&path)?;
    println!(
        "saved {} records to {} (print them with `lizard trace-dump FILE`)",
        ring.len(),
        path.display()
    );
    std::fs::remove_file(&path)?;
    Ok(())
}
