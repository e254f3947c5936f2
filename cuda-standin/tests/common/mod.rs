//! Helpers of the stand-in's tests: the driver calls they make, and child processes (this test binary run
//! again in a role) that export memory to the test, with every wait bounded.
#![allow(dead_code, unsafe_code)]

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use cuda_standin::api::{self, CUcontext, CUipcMemHandle};
use cuda_standin::result::{CuResult, SUCCESS};

/// The longest any wait of these tests lasts.
pub const WAIT: Duration = Duration::from_secs(30);

/// The environment variable that names a child's role.
pub const ROLE: &str = "CUDA_STANDIN_TEST_ROLE";

/// One test at a time: a reset or a last release destroys every allocation of the process.
pub fn serial() -> MutexGuard<'static, ()> {
    static SERIAL: Mutex<()> = Mutex::new(());
    SERIAL.lock().unwrap_or_else(|p| p.into_inner())
}

/// Panics unless `result` is success.
pub fn ok(call: &str, result: CuResult) {
    assert_eq!(result, SUCCESS, "{call}");
}

/// `cuInit`, then device 0's primary context retained and current on this thread; released on drop.
pub struct Current {
    /// The context handle.
    pub ctx: CUcontext,
}

impl Current {
    pub fn new() -> Current {
        ok("cuInit", api::error::cuInit(0));
        let mut ctx = std::ptr::null_mut();
        // SAFETY: writes one context handle into `ctx`.
        ok("retain", unsafe {
            api::context::cuDevicePrimaryCtxRetain(&mut ctx, 0)
        });
        ok("set current", api::context::cuCtxSetCurrent(ctx));
        Current { ctx }
    }
}

impl Drop for Current {
    fn drop(&mut self) {
        let _ = api::context::cuDevicePrimaryCtxRelease_v2(0);
        let _ = api::context::cuCtxSetCurrent(std::ptr::null_mut());
    }
}

/// `cuMemAlloc` of `len` bytes holding `fill(k)` at each offset k.
pub fn alloc(len: usize, fill: impl Fn(usize) -> u8) -> u64 {
    let mut ptr = 0;
    // SAFETY: writes one device address.
    ok("cuMemAlloc", unsafe {
        api::memory::cuMemAlloc_v2(&mut ptr, len)
    });
    let bytes: Vec<u8> = (0..len).map(fill).collect();
    // SAFETY: `bytes` is readable for `len` bytes.
    ok("cuMemcpyHtoD", unsafe {
        api::memory::cuMemcpyHtoD_v2(ptr, bytes.as_ptr().cast(), len)
    });
    ptr
}

/// Copies `len` bytes at device address `ptr` to the host: the bytes, or the failure's code.
pub fn read(ptr: u64, len: usize) -> Result<Vec<u8>, CuResult> {
    let mut out = vec![0u8; len];
    // SAFETY: `out` is writable for `len` bytes.
    match unsafe { api::memory::cuMemcpyDtoH_v2(out.as_mut_ptr().cast(), ptr, len) } {
        SUCCESS => Ok(out),
        code => Err(code),
    }
}

/// `cuIpcGetMemHandle` of `ptr`.
pub fn handle_of(ptr: u64) -> [u8; 64] {
    let mut handle = CUipcMemHandle { reserved: [0; 64] };
    // SAFETY: writes the 64 handle bytes.
    ok("cuIpcGetMemHandle", unsafe {
        api::ipc::cuIpcGetMemHandle(&mut handle, ptr)
    });
    handle.reserved.map(|b| b as u8)
}

/// `cuIpcOpenMemHandle` of `bytes`: the address, or the failure's code.
pub fn open(bytes: &[u8; 64]) -> Result<u64, CuResult> {
    let handle = CUipcMemHandle {
        reserved: bytes.map(|b| b as _),
    };
    let mut ptr = 0;
    // SAFETY: writes one device address; the handle is passed by value.
    match unsafe { api::ipc::cuIpcOpenMemHandle_v2(&mut ptr, handle, 1) } {
        SUCCESS => Ok(ptr),
        code => Err(code),
    }
}

/// `cuMemGetAddressRange` of `ptr`: base and size.
pub fn range(ptr: u64) -> Result<(u64, u64), CuResult> {
    let (mut base, mut size) = (0, 0);
    // SAFETY: writes one address and one size.
    match unsafe { api::memory::cuMemGetAddressRange_v2(&mut base, &mut size, ptr) } {
        SUCCESS => Ok((base, size as u64)),
        code => Err(code),
    }
}

pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

pub fn unhex<const N: usize>(text: &str) -> [u8; N] {
    let mut out = [0; N];
    for (i, byte) in out.iter_mut().enumerate() {
        *byte = u8::from_str_radix(&text[2 * i..2 * i + 2], 16).expect("hex");
    }
    out
}

/// The marker a child's lines start with (after whatever libtest printed before them on the same line).
pub const MARK: &str = "standin-child: ";

/// Prints `KEY VALUE` for the parent.
pub fn say(key: &str, value: impl std::fmt::Display) {
    println!("{MARK}{key} {value}");
    std::io::stdout().flush().unwrap();
}

/// Waits (bounded) for a line from the parent.
pub fn hear() -> String {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = std::io::stdin().read_line(&mut line);
        let _ = tx.send(line);
    });
    rx.recv_timeout(WAIT)
        .expect("the parent said nothing in time")
        .trim()
        .to_owned()
}

/// A child process in a role, its marked lines read by a thread.
pub struct Peer {
    pub child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
}

impl Peer {
    /// This test binary again, running the ignored test `child` in `role`.
    pub fn start(role: &str, env: &[(&str, &str)]) -> Peer {
        let mut child = Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "child",
                "--ignored",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(ROLE, role)
            .envs(env.iter().copied())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if let Some((_, marked)) = line.split_once(MARK) {
                    if tx.send(marked.to_owned()).is_err() {
                        return;
                    }
                }
            }
        });
        Peer {
            stdin: child.stdin.take(),
            child,
            lines,
        }
    }

    /// The value of the child's next `KEY VALUE` line, which must be `key`.
    pub fn expect(&self, key: &str) -> String {
        let deadline = Instant::now() + WAIT;
        let left = deadline.saturating_duration_since(Instant::now());
        let line = self
            .lines
            .recv_timeout(left)
            .unwrap_or_else(|_| panic!("the child said no '{key}' within {WAIT:?}"));
        let (k, v) = line.split_once(' ').unwrap_or((&line, ""));
        assert_eq!(k, key, "{line}");
        v.to_owned()
    }

    /// Sends the child a line.
    pub fn tell(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().unwrap();
        writeln!(stdin, "{line}").unwrap();
        stdin.flush().unwrap();
    }

    /// Waits (bounded) for the child to exit successfully.
    pub fn finish(mut self) {
        drop(self.stdin.take());
        let deadline = Instant::now() + WAIT;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                assert!(status.success(), "child failed: {status:?}");
                return;
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                panic!("the child did not finish within {WAIT:?}");
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Kills the child and reaps it.
    pub fn kill(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
