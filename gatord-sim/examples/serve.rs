//! Serves the simulated gatord on loopback for a while and talks to it with `gator-proto`'s client session
//! over a plain socket: the handshake, a PING and the `counters` document, then the simulator's statistics.
//!
//! `cargo run -p gatord-sim --example serve [--gpu G71] [SECONDS]` (the simulator keeps serving for SECONDS,
//! default 0, so that another client such as `lizard list --gatord 127.0.0.1:PORT` can connect meanwhile).

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use gator_proto::client::{Config, Event, Session};
use gatord_sim::{mali_events, SimConfig};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let mut events_xml = None;
    let mut seconds = 0;
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--gpu" => {
                let gpu = args.next().ok_or("--gpu needs a GPU name")?;
                events_xml = Some(mali_events::events_xml(&gpu)?);
            }
            n => {
                seconds = n
                    .parse()
                    .map_err(|_| format!("not a number of seconds: {n}"))?
            }
        }
    }
    let daemon = gatord_sim::start(SimConfig {
        events_xml,
        ..SimConfig::default()
    })?;
    println!(
        "simulated gatord at {} offering {} counters",
        daemon.address(),
        daemon.counters().len()
    );

    let mut socket = TcpStream::connect_timeout(&daemon.address(), Duration::from_secs(2))?;
    socket.set_read_timeout(Some(Duration::from_secs(2)))?;
    socket.set_write_timeout(Some(Duration::from_secs(2)))?;
    let mut session = Session::new(Config::default());
    session.ping()?;
    session.request_xml("counters")?;
    let deadline = Instant::now() + Duration::from_secs(5);
    let (mut out, mut buf) = (Vec::new(), [0u8; 4096]);
    let mut document = None;
    while document.is_none() {
        if Instant::now() > deadline {
            return Err("no counters document within 5 s".into());
        }
        out.clear();
        if session.poll_transmit(&mut out) > 0 {
            socket.write_all(&out)?;
        }
        let n = socket.read(&mut buf)?;
        if n == 0 {
            return Err("the simulator closed the connection".into());
        }
        session.handle_input(&buf[..n])?;
        while let Some(event) = session.poll_event() {
            match event {
                Event::Connected { version } => println!("handshake: protocol {}", version.0),
                Event::Pong => println!("PING acknowledged"),
                Event::Xml { document: d, .. } => document = Some(String::from_utf8(d)?),
                _ => {}
            }
        }
    }
    print!("counters document:\n{}", document.unwrap_or_default());
    drop(socket);

    std::thread::sleep(Duration::from_secs(seconds));
    let stats = daemon.stats();
    println!(
        "{} connections, {} captures, {} frames sent",
        stats.connections, stats.captures, stats.frames
    );
    daemon.shutdown();
    Ok(())
}
