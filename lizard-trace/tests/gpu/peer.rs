//! Child processes of the GPU tests and the device bench, with every wait bounded.
//!
//! A child says things to its parent as lines `lizard-gpu-child: KEY VALUE` on its standard output. The
//! marker is looked for anywhere in a line, because libtest, with `--nocapture`, writes `test NAME ... `
//! without a newline before the test's own output: the first line a child prints arrives after it. A child's
//! last line is `lizard-gpu-child: done ROLE`; a child that exits without it (a test that returned early,
//! whatever libtest printed) did not finish. The parent reads the lines on a thread and waits for each with
//! a deadline; a child waits for its parent's lines with a deadline too.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// What a child's lines for its parent start with.
pub const MARK: &str = "lizard-gpu-child: ";

/// Says `KEY VALUE` to the parent (a child's side).
pub fn say(key: &str, value: impl std::fmt::Display) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{MARK}{key} {value}");
    let _ = out.flush();
}

/// The next line the parent wrote to this process's standard input, waiting at most `within` (a child's
/// side); `None` when none came or the parent closed it.
pub fn hear(within: Duration) -> Option<String> {
    hear_from(std::io::stdin(), within)
}

/// The next line of `input`, waiting at most `within`.
pub fn hear_from(input: impl Read + Send + 'static, within: Duration) -> Option<String> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let read = BufReader::new(input).read_line(&mut line);
        let _ = tx.send(read.ok().filter(|&n| n > 0).map(|_| line));
    });
    rx.recv_timeout(within)
        .ok()
        .flatten()
        .map(|l| l.trim_end().to_owned())
}

/// A child process whose marked lines a thread reads.
pub struct Peer {
    /// The process.
    pub child: Child,
    /// Its standard input, until closed.
    stdin: Option<ChildStdin>,
    /// Its marked lines, without the marker.
    lines: Receiver<String>,
    /// Everything it printed, for failure messages.
    all: Arc<Mutex<String>>,
    /// Signalled when its standard output ends.
    ended: Receiver<()>,
}

impl Peer {
    /// Starts `command` with piped standard input and output.
    pub fn spawn(mut command: Command) -> Peer {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("start a child process");
        let stdout = child.stdout.take().expect("piped");
        let (tx, lines) = mpsc::channel();
        let (done, ended) = mpsc::channel();
        let all = Arc::new(Mutex::new(String::new()));
        let text = Arc::clone(&all);
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if let Ok(mut all) = text.lock() {
                    all.push_str(&line);
                    all.push('\n');
                }
                if let Some((_, marked)) = line.split_once(MARK) {
                    let _ = tx.send(marked.to_owned());
                }
            }
            let _ = done.send(());
        });
        Peer {
            stdin: child.stdin.take(),
            child,
            lines,
            all,
            ended,
        }
    }

    /// Everything the child printed so far.
    pub fn output(&self) -> String {
        self.all.lock().map(|s| s.clone()).unwrap_or_default()
    }

    /// The value of the child's next marked line, which must say `key`, waiting at most `within`.
    pub fn expect(&self, key: &str, within: Duration) -> Result<String, String> {
        let line = self.lines.recv_timeout(within).map_err(|_| {
            format!(
                "the child said no '{key}' within {within:?}; it printed:\n{}",
                self.output()
            )
        })?;
        let (k, v) = line.split_once(' ').unwrap_or((&line, ""));
        if k != key {
            return Err(format!("the child said '{line}' where '{key}' was due"));
        }
        Ok(v.to_owned())
    }

    /// Writes a line to the child's standard input.
    pub fn tell(&mut self, line: &str) {
        if let Some(stdin) = self.stdin.as_mut() {
            let _ = writeln!(stdin, "{line}");
            let _ = stdin.flush();
        }
    }

    /// Waits at most `within` for the child to exit; gives all it printed when it exited successfully after
    /// its `done` line, else says what went wrong (a child still running is killed).
    pub fn finish(mut self, within: Duration) -> Result<String, String> {
        drop(self.stdin.take());
        let deadline = Instant::now() + within;
        let status = loop {
            match self.child.try_wait() {
                Ok(Some(status)) => break status,
                Ok(None) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(10))
                }
                _ => {
                    let _ = self.child.kill();
                    let _ = self.child.wait();
                    return Err(format!(
                        "the child did not finish within {within:?}; it printed:\n{}",
                        self.output()
                    ));
                }
            }
        };
        // Its output ends with it, unless a process it started still holds it: wait a little, not forever.
        let _ = self.ended.recv_timeout(Duration::from_secs(5));
        let out = self.output();
        let done = out.lines().any(|l| {
            l.split_once(MARK)
                .is_some_and(|(_, m)| m.starts_with("done "))
        });
        match (status.success(), done) {
            (true, true) => Ok(out),
            (true, false) => Err(format!(
                "the child exited without finishing its work:\n{out}"
            )),
            (false, _) => Err(format!("the child failed ({status}):\n{out}")),
        }
    }

    /// Kills the child and reaps it.
    pub fn kill(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
