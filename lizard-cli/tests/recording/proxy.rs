//! A recording TCP proxy: `lizard` talks to the proxy, the proxy to a gatord (real or simulated), and
//! every byte the daemon sends is kept with the moment it arrived.

use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// What one connection carried.
#[derive(Debug, Clone, Default)]
pub struct Connection {
    /// The client's bytes, in order.
    pub to_daemon: Vec<u8>,
    /// The daemon's bytes, in order.
    pub from_daemon: Vec<u8>,
    /// `(time since the connection opened, length)` of every read of the daemon's bytes.
    pub arrivals: Vec<(Duration, usize)>,
}

/// A proxy listening on a free loopback port, forwarding to `upstream`.
pub struct Proxy {
    address: SocketAddr,
    connections: Arc<Mutex<Vec<Arc<Mutex<Connection>>>>>,
    accept: Option<JoinHandle<()>>,
    stop: Arc<std::sync::atomic::AtomicBool>,
}

/// How long a side may stay silent before the proxy gives it up (every wait has a deadline).
const IDLE: Duration = Duration::from_secs(60);

impl Proxy {
    /// Listens on a free loopback port; each accepted connection is forwarded to `upstream`.
    pub fn start(upstream: SocketAddr) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind the proxy");
        listener.set_nonblocking(true).expect("non-blocking");
        let address = listener.local_addr().expect("proxy address");
        let connections: Arc<Mutex<Vec<Arc<Mutex<Connection>>>>> = Arc::default();
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let accept = {
            let (connections, stop) = (Arc::clone(&connections), Arc::clone(&stop));
            std::thread::spawn(move || {
                let mut pumps = Vec::new();
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    match listener.accept() {
                        Ok((client, _)) => {
                            let record = Arc::new(Mutex::new(Connection::default()));
                            lock(&connections).push(Arc::clone(&record));
                            pumps.push(std::thread::spawn(move || {
                                forward(client, upstream, record)
                            }));
                        }
                        Err(_) => std::thread::sleep(Duration::from_millis(2)),
                    }
                }
                for pump in pumps {
                    let _ = pump.join();
                }
            })
        };
        Proxy {
            address,
            connections,
            accept: Some(accept),
            stop,
        }
    }

    /// `127.0.0.1:PORT` of the proxy.
    pub fn address(&self) -> String {
        self.address.to_string()
    }

    /// Stops accepting, waits for the open connections to end, and returns every connection's record in
    /// the order they were accepted.
    pub fn finish(mut self) -> Vec<Connection> {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        if let Some(accept) = self.accept.take() {
            let _ = accept.join();
        }
        lock(&self.connections)
            .iter()
            .map(|c| lock(c).clone())
            .collect()
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Copies both directions until either side closes, recording what passes.
fn forward(client: TcpStream, upstream: SocketAddr, record: Arc<Mutex<Connection>>) {
    let Ok(daemon) = TcpStream::connect_timeout(&upstream, Duration::from_secs(10)) else {
        let _ = client.shutdown(Shutdown::Both);
        return;
    };
    let _ = (client.set_nodelay(true), daemon.set_nodelay(true));
    let opened = Instant::now();
    let pump = |mut from: TcpStream, mut to: TcpStream, to_daemon: bool| {
        let record = Arc::clone(&record);
        std::thread::spawn(move || {
            let _ = from.set_read_timeout(Some(IDLE));
            let mut buf = vec![0u8; 64 * 1024];
            loop {
                let n = match from.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => n,
                };
                {
                    let mut record = lock(&record);
                    if to_daemon {
                        record.to_daemon.extend_from_slice(&buf[..n]);
                    } else {
                        record.from_daemon.extend_from_slice(&buf[..n]);
                        record.arrivals.push((opened.elapsed(), n));
                    }
                }
                if to.write_all(&buf[..n]).is_err() {
                    break;
                }
            }
            let _ = to.shutdown(Shutdown::Write);
            let _ = from.shutdown(Shutdown::Read);
        })
    };
    let (Ok(client2), Ok(daemon2)) = (client.try_clone(), daemon.try_clone()) else {
        return;
    };
    let up = pump(client, daemon2, true);
    let down = pump(daemon, client2, false);
    let _ = (up.join(), down.join());
}

impl Connection {
    /// Writes the record to `dir` as `NAME-c2s.bin`, `NAME-d2c.bin` and `NAME-arrivals.txt` (a line per
    /// read: nanoseconds since the connection opened, then the length).
    pub fn save(&self, dir: &std::path::Path, name: &str) -> std::io::Result<()> {
        std::fs::create_dir_all(dir)?;
        std::fs::write(dir.join(format!("{name}-c2s.bin")), &self.to_daemon)?;
        std::fs::write(dir.join(format!("{name}-d2c.bin")), &self.from_daemon)?;
        let arrivals: String = self
            .arrivals
            .iter()
            .map(|(at, len)| format!("{} {len}\n", at.as_nanos()))
            .collect();
        std::fs::write(dir.join(format!("{name}-arrivals.txt")), arrivals)
    }

    /// Reads a record [`Connection::save`] wrote.
    pub fn load(dir: &std::path::Path, name: &str) -> std::io::Result<Connection> {
        let bad =
            |what: &str| std::io::Error::new(std::io::ErrorKind::InvalidData, what.to_owned());
        let arrivals = std::fs::read_to_string(dir.join(format!("{name}-arrivals.txt")))?
            .lines()
            .map(|line| {
                let (at, len) = line.split_once(' ').ok_or_else(|| bad(line))?;
                Ok((
                    Duration::from_nanos(at.parse().map_err(|_| bad(line))?),
                    len.parse().map_err(|_| bad(line))?,
                ))
            })
            .collect::<std::io::Result<_>>()?;
        Ok(Connection {
            to_daemon: std::fs::read(dir.join(format!("{name}-c2s.bin")))?,
            from_daemon: std::fs::read(dir.join(format!("{name}-d2c.bin")))?,
            arrivals,
        })
    }

    /// Whether this connection started a capture (its client sent APC_START, command 2).
    pub fn started_a_capture(&self) -> bool {
        self.to_daemon.windows(5).any(|w| w == [2, 0, 0, 0, 0])
    }
}
