//! The trace server's check: whether device-memory records can be copied (the CUDA driver and its GPUs, as
//! `lizard_trace` finds them).

use lizard_trace::device_support::{self, Unavailable};

use crate::{Check, SourceKind, SourceReport, Status};

/// The trace server's device-memory copies: whether the CUDA driver is here, and its GPUs.
pub fn trace_server() -> SourceReport {
    let check = match device_support::probe() {
        Ok(gpus) => {
            let list: Vec<String> = gpus
                .iter()
                .map(|g| format!("{} ({}, {})", g.ordinal, g.name, g.uuid))
                .collect();
            Check::new(
                "CUDA driver",
                Status::Ok,
                format!(
                    "device memory records can be copied from GPU {}",
                    list.join(", ")
                ),
            )
        }
        Err(reason) => {
            // No driver (or no CUDA in this build) is a machine without CUDA, not a broken one.
            let status = match reason {
                Unavailable::LibraryMissing | Unavailable::FeatureOff => Status::Absent,
                _ => Status::Failed,
            };
            let check = Check::new("CUDA driver", status, "device memory records are refused")
                .because(reason.to_string());
            match reason {
                Unavailable::LibraryMissing => check.fix(
                    "install the NVIDIA driver, or put the folder of libcuda.so.1 on LD_LIBRARY_PATH (host records work without it)",
                ),
                Unavailable::FeatureOff => check.fix("build lizard with lizard-trace's `cuda` feature"),
                _ => check,
            }
        }
    };
    SourceReport::new(SourceKind::TraceServer, vec![check])
}
