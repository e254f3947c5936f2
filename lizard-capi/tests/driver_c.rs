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

#[path = "support/device_client.rs"]
mod device_client;

use std::path::{Path, PathBuf};

use c_build::{compile, manifest, run, search_path_with, tool_available, Lang};
use device_client::{check_device_records, device_server};
use lizard_trace::Origin;

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
    let here = format!("{} holds libcuda.so.1", driver.display());
    let Some((socket, server)) = device_server("driver", &here) else {
        return;
    };
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
    let expected = [
        ("ipc", 4096, 65536),
        ("ptr", 100, 1000),
        ("worker", 200, 64),
    ];
    let origins = check_device_records(&server, "trace_driver.c", &stdout, &expected, 1, pattern);
    for origin in origins {
        assert!(
            matches!(origin, Origin::Device { device, .. } if !device.is_any()),
            "the allocation's own device: {origin:?}"
        );
    }
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
