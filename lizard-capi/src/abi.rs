//! The C types of `include/lizard/lizard_api.h`, field for field.
//!
//! `tests/header.rs` compiles a C program against the committed header and fails when a size, an
//! offset or an enum value differs from the definitions here.

use std::ffi::{c_char, c_int, c_void};

/// `LizardInstance`: an opaque handle to one instance: a key issued by the library and never reused, not a
/// pointer to its memory.
pub type LizardInstance = *mut c_void;

/// `LizardCounterId`: valid ids are `1..=count`; 0 is never valid.
pub type LizardCounterId = u32;

/// `LIZARD_VERSION_0_1`, the only table version.
pub const LIZARD_VERSION_0_1: c_int = 1;

/// `LZD_Result`: the result of a call.
pub type LzdResult = u32;
/// `LZD_OK`.
pub const LZD_OK: LzdResult = 0;
/// `LZD_FAILURE`.
pub const LZD_FAILURE: LzdResult = 1;

/// `LZD_ABSOLUTE`: samples are averaged.
pub const LZD_ABSOLUTE: u32 = 1;
/// `LZD_DELTA`: samples are summed.
pub const LZD_DELTA: u32 = 2;

/// `LZD_UNITS_UNKNOWN`, also used for units the enum lacks (mV, %, ...).
pub const LZD_UNITS_UNKNOWN: u32 = 0;
/// `LZD_UNITS_BYTE`.
pub const LZD_UNITS_BYTE: u32 = 1;
/// `LZD_UNITS_CELSIUS`.
pub const LZD_UNITS_CELSIUS: u32 = 2;
/// `LZD_UNITS_HZ`, also used for MHz counters (their values are scaled to Hz).
pub const LZD_UNITS_HZ: u32 = 3;
/// `LZD_UNITS_PAGES`.
pub const LZD_UNITS_PAGES: u32 = 4;
/// `LZD_UNITS_RPM`.
pub const LZD_UNITS_RPM: u32 = 5;
/// `LZD_UNITS_S`.
pub const LZD_UNITS_S: u32 = 6;
/// `LZD_UNITS_V`.
pub const LZD_UNITS_V: u32 = 7;
/// `LZD_TYPE_INT`: `ReadCounterInt` gives the exact value.
pub const LZD_TYPE_INT: u32 = 8;
/// `LZD_TYPE_DOUBLE`: `ReadCounterDouble` gives the exact value.
pub const LZD_TYPE_DOUBLE: u32 = 9;

/// `LizardSampling` (an extension beside the table, read with `LizardGetSampling`): how the local
/// counters' periodic sampling went in the last stopped capture. 48 bytes everywhere.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LizardSampling {
    /// The sampling interval, in ns.
    pub interval_ns: u64,
    /// The window sampled, from the start sample to the stop sample, in ns.
    pub window_ns: u64,
    /// Whole periods in the window.
    pub expected: u64,
    /// Periodic samples taken (the start and stop samples not included).
    pub delivered: u64,
    /// Periods skipped because the sampler woke a whole period or more late.
    pub missed: u64,
    /// The longest time between two consecutive samples, in ns.
    pub largest_gap_ns: u64,
}

/// `LZD_SAMPLING_THREAD`: a thread of the library read the counters every interval.
pub const LZD_SAMPLING_THREAD: u32 = 0;
/// `LZD_SAMPLING_KERNEL`: the kernel's timers wrote the counters into rings, drained in batches.
pub const LZD_SAMPLING_KERNEL: u32 = 1;
/// `LZD_SAMPLING_GPU_ONLY`: no CPU counter was sampled; [`LizardSampling`] holds the GPU's figures (read
/// them with `LizardGetGpuSampling`).
pub const LZD_SAMPLING_GPU_ONLY: u32 = 2;

/// `LZD_GPU_PACE_PERIODIC`: the driver dumped the GPU's counters by itself every interval.
pub const LZD_GPU_PACE_PERIODIC: u32 = 0;
/// `LZD_GPU_PACE_MANUAL`: one dump request per period, the driver refusing to dump by itself.
pub const LZD_GPU_PACE_MANUAL: u32 = 1;

/// `LizardGpuSampling` (a third extension, read with `LizardGetGpuSampling`): how the GPU's counters were
/// sampled, apart from the CPUs'. Versioned by its first field: the caller sets `struct_size` to the size it
/// knows, the library writes at most that many bytes (fields a later version appends are left alone) and
/// sets `struct_size` to the bytes it wrote. 72 bytes in this version, everywhere.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LizardGpuSampling {
    /// In: the size of the caller's struct; out: the bytes written.
    pub struct_size: u32,
    /// [`LZD_GPU_PACE_PERIODIC`] or [`LZD_GPU_PACE_MANUAL`].
    pub pace: u32,
    /// The interval asked for, in ns.
    pub interval_ns: u64,
    /// From the start of counting to the stop, in ns.
    pub window_ns: u64,
    /// Whole periods in the window.
    pub expected: u64,
    /// Samples stored, one dump each.
    pub delivered: u64,
    /// Periods folded into a sample covering several (their counts kept).
    pub folded: u64,
    /// Periods without their counts: a dump flagged erroneous, or none by the stop.
    pub missed: u64,
    /// Dumps at the start that counted nothing yet (a CSF GPU's firmware not counting), left out.
    pub not_counting: u64,
    /// The longest time between two dumps, in ns.
    pub largest_gap_ns: u64,
}

impl LizardGpuSampling {
    /// The size of this version of the struct.
    pub const SIZE: u32 = std::mem::size_of::<LizardGpuSampling>() as u32;
    /// The least a caller's struct must hold: `struct_size` and `pace`.
    pub const MIN_SIZE: u32 = 8;
}

/// `LizardSamplingDetail` (a second extension, read with `LizardGetSamplingDetail`): who took the periods
/// [`LizardSampling`] counts, and why the missed ones were missed. 40 bytes everywhere.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LizardSamplingDetail {
    /// [`LZD_SAMPLING_THREAD`], [`LZD_SAMPLING_KERNEL`] or [`LZD_SAMPLING_GPU_ONLY`].
    pub method: u32,
    /// Kernel: rings sampled (CPUs × counter groups); thread: 0.
    pub rings: u32,
    /// Kernel: records lost to a full ring (`PERF_RECORD_LOST`).
    pub lost_records: u64,
    /// Kernel: times the kernel throttled a timer.
    pub throttled: u64,
    /// Kernel: how long the timers were throttled, summed over the rings, in ns.
    pub throttled_ns: u64,
    /// Kernel: missed periods of idle CPUs, whose timer takes no sample (the counts go on).
    pub idle_periods: u64,
}

/// `struct LizardCounterDescription`: 72 bytes on LP64, 48 on ILP32.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct LizardCounterDescription {
    /// The id asked for.
    pub id: LizardCounterId,
    /// The gatord counter name, `""` for HWCPipe counters.
    pub short_name: *const c_char,
    /// The gatord event name, `""` for HWCPipe counters.
    pub name: *const c_char,
    /// The gatord event title, or the HWCPipe counter name.
    pub title: *const c_char,
    /// What the counter counts.
    pub description: *const c_char,
    /// The category the counter belongs to.
    pub category: *const c_char,
    /// The multiplier, already applied by the read functions.
    pub multiplier: f64,
    /// An `LZD_UNITS_*` value.
    pub units: u32,
    /// `LZD_ABSOLUTE` or `LZD_DELTA`.
    pub class_type: u32,
    /// `LZD_TYPE_INT` or `LZD_TYPE_DOUBLE`.
    pub result_type: u32,
}

/// `LZD_Init_PFN`.
pub type InitFn = unsafe extern "C" fn(host: *const c_char, port: c_int) -> LizardInstance;
/// `LZD_Destroy_PFN`.
pub type DestroyFn = unsafe extern "C" fn(ctx: LizardInstance);
/// `LZD_GetAvailableCountersCount_PFN`.
pub type GetAvailableCountersCountFn = unsafe extern "C" fn(ctx: LizardInstance) -> u32;
/// `LZD_GetCounterDescription_PFN`.
pub type GetCounterDescriptionFn = unsafe extern "C" fn(
    ctx: LizardInstance,
    id: LizardCounterId,
    desc: *mut LizardCounterDescription,
) -> LzdResult;
/// `LZD_EnableCounter_PFN` and `LZD_DisableCounter_PFN`.
pub type CounterFn = unsafe extern "C" fn(ctx: LizardInstance, id: LizardCounterId);
/// `LZD_DisableAllCounters_PFN`.
pub type DisableAllCountersFn = unsafe extern "C" fn(ctx: LizardInstance);
/// `LZD_StartCapture_PFN` and `LZD_StopCapture_PFN`.
pub type CaptureFn = unsafe extern "C" fn(ctx: LizardInstance) -> LzdResult;
/// `LZD_ReadCounterInt_PFN`.
pub type ReadCounterIntFn = unsafe extern "C" fn(ctx: LizardInstance, id: LizardCounterId) -> i64;
/// `LZD_ReadCounterDouble_PFN`.
pub type ReadCounterDoubleFn =
    unsafe extern "C" fn(ctx: LizardInstance, id: LizardCounterId) -> f64;

/// `struct LizardApi`: the function table, in the original order (96 bytes on LP64).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct LizardApi {
    /// `sizeof(struct LizardApi)`.
    pub struct_size: c_int,
    /// [`LIZARD_VERSION_0_1`].
    pub version: c_int,
    /// `Init(host, port)`.
    pub init: InitFn,
    /// `Destroy(ctx)`.
    pub destroy: DestroyFn,
    /// `GetAvailableCountersCount(ctx)`.
    pub get_available_counters_count: GetAvailableCountersCountFn,
    /// `GetCounterDescription(ctx, id, desc)`.
    pub get_counter_description: GetCounterDescriptionFn,
    /// `EnableCounter(ctx, id)`.
    pub enable_counter: CounterFn,
    /// `DisableCounter(ctx, id)`.
    pub disable_counter: CounterFn,
    /// `DisableAllCounters(ctx)`.
    pub disable_all_counters: DisableAllCountersFn,
    /// `StartCapture(ctx)`.
    pub start_capture: CaptureFn,
    /// `StopCapture(ctx)`.
    pub stop_capture: CaptureFn,
    /// `ReadCounterInt(ctx, id)`.
    pub read_counter_int: ReadCounterIntFn,
    /// `ReadCounterDouble(ctx, id)`.
    pub read_counter_double: ReadCounterDoubleFn,
}

#[cfg(all(test, target_pointer_width = "64"))]
mod tests {
    use super::*;
    use std::mem::{offset_of, size_of};

    #[test]
    fn lp64_layout_matches_the_original() {
        assert_eq!(size_of::<LizardCounterDescription>(), 72);
        assert_eq!(offset_of!(LizardCounterDescription, short_name), 8);
        assert_eq!(offset_of!(LizardCounterDescription, multiplier), 48);
        assert_eq!(offset_of!(LizardCounterDescription, result_type), 64);
        assert_eq!(size_of::<LizardApi>(), 96);
        assert_eq!(offset_of!(LizardApi, init), 8);
        assert_eq!(offset_of!(LizardApi, read_counter_double), 88);
    }
}
