//! The error type of the GPU profiler.

use std::io;
use std::path::PathBuf;
use std::time::Duration;

use super::counter::GpuCounter;
use super::dump::DumpError;
use super::kinstr::MetadataError;
use super::product::gpu_id_fields;
use super::profiler::Backend;
use super::props::PropsError;
use super::version::DriverVersion;

/// Why a [`GpuCounter`] cannot be measured on the opened GPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unavailable {
    /// The GPU architecture has no hardware counter this formula could be built from
    /// (e.g. `ComputeJobs` on a Job Manager GPU, which counts vertex and compute together).
    NotOnArchitecture,
    /// The formula needs a hardware counter that this product's layout lacks.
    MissingHardwareCounter(&'static str),
    /// The formula needs a hardware counter at an index the driver's blocks do not have (the
    /// database places it at `index`, the driver dumps `values` values per block).
    OutsideDriverBlock {
        /// The hardware counter.
        name: &'static str,
        /// Its index in Arm's database.
        index: u32,
        /// Values per block the driver dumps.
        values: usize,
    },
}

impl core::fmt::Display for Unavailable {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Unavailable::NotOnArchitecture => {
                f.write_str("no such counter on this GPU architecture")
            }
            Unavailable::MissingHardwareCounter(name) => {
                write!(f, "hardware counter {name} is not in this GPU's layout")
            }
            Unavailable::OutsideDriverBlock {
                name,
                index,
                values,
            } => write!(
                f,
                "hardware counter {name} is value {index} of its block, the driver dumps {values}"
            ),
        }
    }
}

/// Everything that can go wrong while finding, opening or sampling a Mali GPU.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum GpuError {
    /// No `/dev/mali0` .. `/dev/mali31` character device exists.
    #[error("no Mali GPU device found (/dev/mali0 to /dev/mali31)")]
    NoDevice,
    /// A Mali device exists but may not be opened by this user.
    #[error("permission denied opening {}", path.display())]
    PermissionDenied {
        /// The device path.
        path: PathBuf,
        /// The error of `open`.
        #[source]
        source: io::Error,
    },
    /// Opening a device failed for another reason than permissions.
    #[error("cannot open {}", path.display())]
    Open {
        /// The device path.
        path: PathBuf,
        /// The error of `open`.
        #[source]
        source: io::Error,
    },
    /// The path exists but is not a character device.
    #[error("{} is not a character device", .0.display())]
    NotCharDevice(PathBuf),
    /// None of the version-check ioctls (legacy UK, r21+ JM, CSF) was accepted: not a kbase device.
    #[error("the device answered no kbase version check (legacy UK, JM or CSF)")]
    NotKbase,
    /// The kbase driver is older than any interface this crate can read counters through.
    #[error("kbase driver version {version} is too old for hardware counters")]
    DriverTooOld {
        /// The version the driver reported.
        version: DriverVersion,
    },
    /// The GPU product is not in the product table, or has no counter tables.
    #[error(
        "unsupported Mali GPU {}(GPU_ID {gpu_id:#010x}: arch {}.{}.{}, product {}): not in Arm's \
         counter database",
        codename.map(|n| format!("{n} ")).unwrap_or_default(),
        gpu_id_fields(*gpu_id).0,
        gpu_id_fields(*gpu_id).1,
        gpu_id_fields(*gpu_id).2,
        gpu_id_fields(*gpu_id).3
    )]
    UnsupportedProduct {
        /// The raw GPU_ID.
        gpu_id: u64,
        /// Arm's code name of the GPU, where known (`tDUx`).
        codename: Option<&'static str>,
    },
    /// The requested counter reader is not one this driver offers (vinstr needs 64-value blocks and
    /// a driver that still has it; kinstr_prfcnt needs JM 11.32 or CSF 1.6 and its enumeration).
    #[error("kbase driver {version} does not offer the {backend:?} counter reader")]
    ReaderNotOffered {
        /// The reader asked for.
        backend: Backend,
        /// The driver's interface version.
        version: DriverVersion,
    },
    /// Opening, identifying or reading one device failed: which device, and the driver interface
    /// version when the handshake got that far.
    #[error(
        "{device}{}",
        version.map(|v| format!(" (kbase {v})")).unwrap_or_default()
    )]
    OnDevice {
        /// The device (`/dev/mali0`).
        device: String,
        /// The driver's interface version, once the version check answered.
        version: Option<DriverVersion>,
        /// What failed.
        #[source]
        source: Box<GpuError>,
    },
    /// The hwcnt reader reports a dump layout version this crate does not decode (HWCPipe needs 5).
    #[error("unsupported hardware counter layout version {0}")]
    UnsupportedHwVersion(u32),
    /// The hwcnt reader reports an API version other than 1.
    #[error("unsupported hwcnt reader API version {0}")]
    UnsupportedReaderApi(u32),
    /// A kernel call failed.
    #[error("{op} failed")]
    Ioctl {
        /// Which request failed (e.g. `"KBASE_IOCTL_SET_FLAGS"`).
        op: &'static str,
        /// The errno, as an I/O error.
        #[source]
        source: io::Error,
    },
    /// A legacy UK ioctl returned 0 but set a non-zero `header.ret`.
    #[error("{op} returned UK status {ret}")]
    UkStatus {
        /// Which request failed.
        op: &'static str,
        /// The `ret` field the driver wrote.
        ret: u32,
    },
    /// No counter dump arrived within the timeout.
    #[error("no counter dump arrived within {waited:?}")]
    Timeout {
        /// How long the profiler waited.
        waited: Duration,
    },
    /// The reader fd reported hang-up or error instead of a dump.
    #[error("the hardware counter reader hung up")]
    HungUp,
    /// The GPU properties returned by the driver are malformed.
    #[error("malformed GPU properties")]
    Props(#[from] PropsError),
    /// A counter dump does not match the layout the driver announced.
    #[error("malformed counter dump")]
    Dump(#[from] DumpError),
    /// kinstr_prfcnt enumeration or sample metadata is malformed.
    #[error("malformed kinstr_prfcnt metadata")]
    Metadata(#[from] MetadataError),
    /// The driver returned a buffer index or sample offset outside the mapped ring.
    #[error("driver returned buffer {index} outside the ring of {count}")]
    BadBufferIndex {
        /// The index or offset returned.
        index: u64,
        /// The number of buffers (or bytes) mapped.
        count: u64,
    },
    /// The driver flagged the sample as erroneous (kinstr_prfcnt error flag).
    #[error("the driver flagged the counter sample as erroneous")]
    SampleError,
    /// A counter was enabled that cannot be measured on this GPU.
    #[error("GPU counter {counter} is not available: {reason}")]
    CounterUnavailable {
        /// The counter.
        counter: GpuCounter,
        /// Why it is not available.
        reason: Unavailable,
    },
    /// A periodic dump interval shorter than the driver's shortest.
    #[error("a GPU dump period of {asked:?} is shorter than the driver's shortest, {min:?}")]
    PeriodTooShort {
        /// The period asked for.
        asked: Duration,
        /// The shortest the driver takes.
        min: Duration,
    },
    /// `sample()` was called before `run()` or after `stop()`.
    #[error("the GPU profiler is not running")]
    NotRunning,
}
