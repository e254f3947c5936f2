//! A C client over CUDA's driver API, compiled with gcc (`tests/c/trace_driver.c`), records device memory
//! through `lizard_trace.h` into a real trace server in this test process: through the handle it took
//! itself, through a pointer inside its allocation and from a thread with no current context; the bytes
//! arrive exact, and a host pointer, ranges past an allocation and a freed allocation get their codes. It
//! runs against the CUDA driver found on the loader's path: NVIDIA's on a GPU machine, the driver stand-in
//! (`cuda-standin`) in CI (`bash .ci/gpu-trace sim`). Without a driver it says so and returns.

#[path = "support/prebuilt.rs"]
mod prebuilt;

#[path = "support/c_build.rs"]
mod c_build;

use std::path::{Path, PathBuf};
use std::time::Duration;

use c_build::{compile, manifest, run, search_path_with, tool_available, Lang};
use lizard_trace::{CopyMode, DeviceSupport, Origin, ServerConfig, SocketName, TraceServer};

/// The folder holding the CUDA driver, `libcuda.so.1`: on the loader's path, or where NVIDIA's driver is
/// usually installed.
fn driver_dir() -> Option<PathBuf> {
    let path = std::env::var_os("LD_LIBRARY_PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(
            [
                "/usr/local/nvidia/lib64",
                "/usr/lib/x86_64-linux-gnu",
                "/usr/lib/aarch64-linux-gnu",
                "/usr/lib64",
            ]
            .map(PathBuf::from),
        )
        .find(|dir| dir.join("libcuda.so.1").exists())
}

fn pattern(k: usize) -> u8 {
    ((k * 29 + 7) & 0xff) as u8
}

#[test]
fn a_c_client_over_the_driver_api_records_device_memory_through_the_header() {
    let Some(driver) = driver_dir() else {
        test_data::skip!(
            test_data::Fixture::Cuda,
            "no CUDA driver (libcuda.so.1) on the loader's path"
        );
        return;
    };
    if !tool_available(&Lang::C.compiler()) {
        return;
    }
    let socket = format!("@lizard-capi-driver-{}", std::process::id());
    let name: SocketName = socket.parse().unwrap();
    let server = TraceServer::start(&name, ServerConfig::with_capacity(64 << 20)).unwrap();
    if let DeviceSupport::Unavailable(reason) = server.device_support() {
        test_data::skip!(
            test_data::Fixture::Cuda,
            "{} holds libcuda.so.1 but the server cannot copy device memory: {reason}",
            driver.display()
        );
        return;
    }
    let dir = driver.to_str().expect("a UTF-8 folder");
    let program = compile(
        Lang::C,
        &manifest().join("tests/c/trace_driver.c"),
        "trace_driver",
        &["-pthread", "-L", dir, "-l:libcuda.so.1"],
    );
    let output = run(&program, &[], &[socket]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let line = |name: &str| -> u32 {
        stdout
            .lines()
            .find_map(|l| l.strip_prefix(&format!("line {name} ")))
            .and_then(|n| n.parse().ok())
            .expect("line")
    };
    let (stats, done) = server.wait_until(Duration::from_secs(60), |s| {
        s.records_stored >= 3 && s.rejected.total() >= 1
    });
    assert!(done, "{stats:?}");
    assert_eq!(stats.records_device_sync, 3);
    assert_eq!(stats.rejected.device_outside_allocation, 1, "{stats:?}");
    assert_eq!(stats.rejected.total(), 1, "{stats:?}");
    server.with_ring(|ring| {
        let records: Vec<_> = ring.iter().collect();
        for (record, (module, offset, len)) in records.iter().zip([
            ("ipc", 4096, 65536),
            ("ptr", 100, 1000),
            ("worker", 200, 64),
        ]) {
            assert_eq!(
                (record.module(), record.file(), record.line()),
                (module, "trace_driver.c", line(module))
            );
            let want: Vec<u8> = (offset..offset + len).map(pattern).collect();
            assert_eq!(record.payload(), &want[..], "{module}");
            assert!(matches!(
                record.head().meta.origin,
                Origin::Device { mode: CopyMode::Sync, offset: o, device, .. }
                    if o == offset as u64 && !device.is_any()
            ));
        }
    });
}

#[test]
fn the_driver_folder_stays_on_the_loader_path_behind_the_library_built_here() {
    let lib = Path::new("/build/target/debug");
    assert_eq!(
        search_path_with(lib, Some("/usr/local/nvidia/lib64:/opt/x".into())),
        "/build/target/debug:/usr/local/nvidia/lib64:/opt/x"
    );
    assert_eq!(search_path_with(lib, None), "/build/target/debug");
    assert_eq!(
        search_path_with(lib, Some("".into())),
        "/build/target/debug"
    );
}
