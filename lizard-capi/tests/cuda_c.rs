//! A CUDA C client compiled with `nvcc` records device memory through `lizard_trace.h` into a real trace
//! server in this test process: through the handle it took itself with the runtime API's
//! `cudaIpcGetMemHandle` (the original design's way) and through a pointer inside its allocation; the bytes
//! arrive exact, and a host pointer, a range past the allocation and a freed allocation get their codes.
//! Where there is no `nvcc` or no GPU it says so and returns (CI has neither; `.ci/gpu-trace` runs it on a
//! GPU machine, where `LIZARD_CAPI_DIR` names this crate's folder).

#[path = "support/prebuilt.rs"]
mod prebuilt;

#[path = "support/c_build.rs"]
mod c_build;

#[path = "support/device_client.rs"]
mod device_client;

use std::path::PathBuf;
use std::process::Command;

use c_build::{library_dir, manifest, scratch};
use device_client::{check_device_records, device_server};

/// `nvcc`, if this machine has one.
fn nvcc() -> Option<PathBuf> {
    ["nvcc", "/usr/local/cuda/bin/nvcc"]
        .into_iter()
        .map(PathBuf::from)
        .find(|p| {
            Command::new(p)
                .arg("--version")
                .output()
                .is_ok_and(|o| o.status.success())
        })
}

fn pattern(k: usize) -> u8 {
    ((k * 13 + 5) & 0xff) as u8
}

#[test]
fn a_cuda_c_client_records_device_memory_through_the_header() {
    let Some(nvcc) = nvcc() else {
        test_data::skip!(
            test_data::Fixture::Cuda,
            "no nvcc here (the CUDA C client is compiled on a machine with a GPU)"
        );
        return;
    };
    let Some((socket, server)) = device_server("cuda", "nvcc is here") else {
        return;
    };
    let program = scratch().join("trace_cuda");
    let lib = library_dir();
    let status = Command::new(&nvcc)
        .arg(manifest().join("tests/cuda/trace_cuda.cu"))
        .arg("-I")
        .arg(manifest().join("include"))
        .arg("-L")
        .arg(&lib)
        .arg("-llizard")
        .arg(format!("-Xlinker=-rpath,{}", lib.display()))
        .arg("-o")
        .arg(&program)
        .status()
        .expect("run nvcc");
    assert!(status.success(), "nvcc failed");
    let output = Command::new(&program)
        .arg(&socket)
        .env("LD_LIBRARY_PATH", c_build::search_path())
        .output()
        .expect("run the CUDA client");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let expected = [("ipc", 4096, 65536), ("ptr", 100, 1000)];
    check_device_records(&server, "trace_cuda.cu", &stdout, &expected, 1, pattern);
}
