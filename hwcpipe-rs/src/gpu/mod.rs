//! Mali GPU counters through the kbase kernel driver.
//!
//! [`GpuProfiler`] opens `/dev/mali<N>` (or any [`KbaseDevice`], such as the in-memory
//! `SimulatedKbase` of the `sim` feature), runs the driver handshake of its generation (legacy UK before r21, r21+
//! Job Manager, CSF: version check, SET_FLAGS, GPU properties), identifies the product from
//! RAW_GPU_ID, reads counter dumps through the vinstr hwcnt reader or kinstr_prfcnt (chosen by
//! driver version and product, as libGPUCounters does), and computes HWCPipe 1.x's 37
//! [`GpuCounter`]s with per-architecture formulas: exact names (no substring matching), shader
//! cores summed over the cores present, L2 counters over the slices, bytes = beats × the bus width
//! read from L2_FEATURES. A counter the GPU cannot give is listed in
//! [`GpuProfiler::unavailable_counters`] with the reason, never reported as a value.
//!
//! Where things happen: ioctl numbers and `#[repr(C)]` structs in [`ioctl`]; the kernel seam in
//! [`device`] (real: [`MaliDevice`], whose system calls are the crate's `sys::kbase`); handshake
//! in [`version`]; GPU properties in [`props`]; products in [`product`]; vinstr dumps in [`dump`]
//! and [`vinstr`]; kinstr_prfcnt items in [`kinstr`]; counter names in [`tables`] (generated from
//! Arm's MIT-licensed database by `gen/gen_tables.py`, Midgard typed by hand); formulas in
//! [`formula`]; Arm's database per GPU in [`mali_counter`], its equations evaluated on values a caller
//! gives in [`mali_evaluate`]; the simulated driver in `sim` (with the `sim` feature).
//!
//! ```
//! # #[cfg(feature = "sim")] {
//! use hwcpipe::gpu::{GpuCounter, GpuProfiler, SimGpu, SimulatedKbase, Workload};
//!
//! // A real device: GpuProfiler::open() (NoDevice on machines without a Mali).
//! // Here: a simulated Mali-G78 whose counters follow a script.
//! let sim = SimulatedKbase::new(SimGpu::G78, Workload::ramp());
//! let mut gpu = GpuProfiler::with_device(sim)?;
//! assert_eq!(gpu.info().product.name, "Mali-G78");
//! for (counter, reason) in gpu.unavailable_counters() {
//!     println!("{counter}: {reason}"); // e.g. ComputeJobs: no such counter on this GPU architecture
//! }
//! gpu.set_enabled(&[GpuCounter::GpuCycles, GpuCounter::ExternalMemoryReadBytes])?;
//! gpu.run()?;
//! let sample = gpu.sample()?;
//! // The ramp script counts 1000 + index in the first interval: GPU_ACTIVE is index 6.
//! assert_eq!(sample.get(GpuCounter::GpuCycles), Some(1006.0));
//! for (counter, value) in sample.iter() {
//!     println!("{counter} = {value} {}", counter.unit());
//! }
//! gpu.stop()?;
//! # }
//! # Ok::<(), hwcpipe::gpu::GpuError>(())
//! ```
//!
//! Dependencies of this side: `libc` for `open`/`ioctl` and errno values, `rustix` for `mmap`/`poll`,
//! and `thiserror` for the error enums; nothing else.
#![forbid(unsafe_code)]

pub mod counter;
pub mod device;
pub mod dump;
pub mod equation;
pub mod error;
pub mod formula;
pub mod ioctl;
pub mod kinstr;
pub mod mali_counter;
pub mod mali_device;
pub mod mali_evaluate;
pub mod product;
pub mod profiler;
pub mod props;
#[cfg(feature = "sim")]
pub mod sim;
pub mod tables;
pub mod version;
pub mod vinstr;

pub use counter::{GpuCounter, GpuUnit, UnknownGpuCounter};
pub use device::{Fd, IoctlArg, KbaseDevice, PollOutcome};
pub use equation::{EvalError, Expr};
pub use error::{GpuError, Unavailable};
pub use mali_counter::{
    CounterSource, MaliConstant, MaliConstants, MaliCounter, MaliCounterInfo, MaliCounters,
    MaliInput, MaliUnavailable, MaliValues,
};
pub use mali_device::MaliDevice;
pub use mali_evaluate::MaliEvalError;
pub use product::{Family, Product};
pub use profiler::{Backend, GpuInfo, GpuProfiler, GpuSample};
#[cfg(feature = "sim")]
pub use sim::{Fault, SimConfig, SimGpu, SimulatedKbase, Workload, KBASE_R35P0_DUMMY_GPUS};
pub use version::{DriverVersion, Interface};
