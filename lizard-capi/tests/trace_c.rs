//! The trace client of `lizard_trace.h` from C, against a real trace server on an abstract socket: host
//! records sent from C arrive with their module, file, line and bytes exact, and every misuse (NULL, a closed
//! or forged client, a host pointer as device memory, lengths past an allocation, a server that refuses) gets
//! its code. Compiled as C99 and as C++11 with `-Werror`, run plainly, under valgrind and under
//! AddressSanitizer + UBSan, as `tests/c_programs.rs` runs the Lizard API's programs.

#[path = "support/prebuilt.rs"]
mod prebuilt;

#[path = "support/c_build.rs"]
mod c_build;

use std::path::PathBuf;
use std::process::{Command, Output};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use c_build::{compile, cross_compiler, manifest, run, tool_available, Lang};
use lizard_trace::{Origin, ServerConfig, SocketName, TraceServer};

/// Records each cycle of the program sends.
const CYCLES: u32 = 50;

fn source() -> PathBuf {
    manifest().join("tests/c/trace_client.c")
}

/// A server on an abstract name no other test uses.
fn server() -> (TraceServer, String) {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let name = format!(
        "@lizard-capi-trace-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    );
    let socket: SocketName = name.parse().unwrap();
    let mut config = ServerConfig::with_capacity(4 << 20);
    // The program's short-lived connections may all be open before the server sees the first close.
    config.max_clients_per_process = 4 * CYCLES as usize;
    let server = TraceServer::start(&socket, config).unwrap();
    (server, name)
}

/// `line NAME N` lines of the program's output.
fn line_of(output: &Output, name: &str) -> u32 {
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .find_map(|l| l.strip_prefix(&format!("line {name} ")))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no line for {name}"))
}

/// The server holds exactly what the program sent.
fn check_ring(server: &TraceServer, output: &Output) {
    assert!(
        output.status.success(),
        "{:?}\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&output.stdout).lines().last(),
        Some("ok")
    );
    let (stats, done) = server.wait_until(Duration::from_secs(60), |s| {
        s.records_stored >= 3 + u64::from(CYCLES) && s.clients_connected == 0
    });
    assert!(done, "{stats:?}");
    // Two device records refused, and the IPC record over 4 GiB never left the client.
    assert_eq!(stats.rejected.total(), 2, "{stats:?}");
    server.with_ring(|ring| {
        let records: Vec<_> = ring.iter().collect();
        assert_eq!(records.len(), 3 + CYCLES as usize);
        let hello = &records[0];
        assert_eq!(
            (hello.module(), hello.file(), hello.line()),
            ("cmodule", "trace_client.c", line_of(output, "hello"))
        );
        assert_eq!(hello.payload(), b"hello from C");
        assert_eq!(hello.head().meta.origin, Origin::Inline);
        let big = &records[1];
        assert_eq!(
            (big.module(), big.file(), big.line()),
            ("ten-bytes!", "trace_client.c", line_of(output, "big"))
        );
        let want: Vec<u8> = (0..100_000u32).map(|i| (i * 7) as u8).collect();
        assert_eq!(big.payload(), &want[..]);
        assert_eq!(big.head().meta.origin, Origin::Memfd);
        let empty = &records[2];
        assert_eq!(
            (empty.module(), empty.file(), empty.line(), empty.payload()),
            ("empty", "explicit.c", 4242, &b""[..])
        );
        // One record per connection: the server serves the connections in any order.
        let mut cycles: Vec<_> = records[3..].iter().collect();
        cycles.sort_by_key(|r| r.line());
        for (i, cycle) in cycles.iter().enumerate() {
            assert_eq!((cycle.module(), cycle.line()), ("cycle", i as u32));
            assert_eq!(cycle.payload(), &(i as i32).to_ne_bytes());
        }
    });
}

fn args(socket: &str) -> Vec<String> {
    vec![socket.to_owned(), CYCLES.to_string()]
}

#[test]
fn host_records_from_c_and_cxx_arrive_exact_and_every_misuse_gets_its_code() {
    for (lang, name) in [(Lang::C, "trace-c"), (Lang::Cxx, "trace-cxx")] {
        let program = compile(lang, &source(), name, &[]);
        let (server, socket) = server();
        let output = run(&program, &[], &args(&socket));
        check_ring(&server, &output);
    }
}

#[test]
fn the_trace_client_is_clean_under_valgrind() {
    if let Some(cc) = cross_compiler() {
        test_data::skip!(
            test_data::Fixture::Valgrind,
            "valgrind checks native builds only ({cc} is a cross compiler)"
        );
        return;
    }
    if !tool_available("valgrind") {
        return;
    }
    let valgrind = [
        "valgrind",
        "--quiet",
        "--error-exitcode=99",
        "--leak-check=full",
        "--errors-for-leak-kinds=definite",
    ];
    let program = compile(Lang::C, &source(), "trace-vg", &[]);
    let (server, socket) = server();
    let output = run(&program, &valgrind, &args(&socket));
    check_ring(&server, &output);
}

#[test]
fn the_trace_client_is_clean_under_address_sanitizer() {
    if let Some(cc) = cross_compiler() {
        test_data::skip!(
            test_data::Fixture::Asan,
            "AddressSanitizer checks native builds only ({cc} is a cross compiler)"
        );
        return;
    }
    let program = compile(
        Lang::C,
        &source(),
        "trace-asan",
        &["-fsanitize=address,undefined", "-fno-omit-frame-pointer"],
    );
    let (server, socket) = server();
    let output = Command::new(&program)
        .args(args(&socket))
        .env("LD_LIBRARY_PATH", c_build::search_path())
        .env(
            "ASAN_OPTIONS",
            "detect_leaks=1:abort_on_error=0:exitcode=86",
        )
        .env("UBSAN_OPTIONS", "halt_on_error=1")
        .output()
        .expect("run");
    check_ring(&server, &output);
}
