//! Mali GPU counters through the kbase kernel driver.
//!
//! [`GpuProfiler`] opens `/dev/mali<N>` (or any [`KbaseDevice`], such as the in-memory
//! [`SimulatedKbase`]), runs the driver handshake of its generation (legacy UK, r21+ JM, CSF),
//! identifies the product from RAW_GPU_ID, reads counter dumps through the vinstr hwcnt reader or
//! kinstr_prfcnt, and computes HWCPipe's 37 [`GpuCounter`]s with per-architecture formulas.
//!
//! Where bytes are decoded: ioctl structs in [`ioctl`], GPU properties in [`props`], vinstr dumps
//! in [`dump`], kinstr_prfcnt items in [`kinstr`]; counter names in [`tables`]; formulas in
//! [`formula`].
#![forbid(unsafe_code)]

pub mod counter;
pub mod device;
pub mod dump;
pub mod error;
pub mod formula;
pub mod ioctl;
pub mod kinstr;
pub mod mali_device;
pub mod product;
pub mod profiler;
pub mod props;
pub mod sim;
pub mod tables;
pub mod version;
pub mod vinstr;

pub use counter::{GpuCounter, GpuUnit, UnknownGpuCounter};
pub use device::{Fd, IoctlArg, KbaseDevice, PollOutcome};
pub use error::{GpuError, Unavailable};
pub use mali_device::MaliDevice;
pub use product::{Family, Product};
pub use profiler::{Backend, GpuInfo, GpuProfiler, GpuSample};
pub use sim::{Fault, SimConfig, SimGpu, SimulatedKbase, Workload};
pub use version::{DriverVersion, Interface};
