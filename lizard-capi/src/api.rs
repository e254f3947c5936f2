//! The exported `LoadApi` and the functions of the `LizardApi` table.
//!
//! Every function body runs inside [`boundary`], looks its instance up in the [`Registry`] (so a NULL,
//! forged or destroyed handle is a clean failure) and writes through an output pointer only on success.

use std::cell::UnsafeCell;
use std::ffi::{c_char, c_int, CStr, CString};

use hwcpipe::counting::{Target, TargetError};
use lizard_core::sources::{Gatord, Join, Local, SourceError, Sources};
use lizard_core::{
    CaptureMode, Config, Counter, CounterClass, GatordAddress, GpuPace, Lizard, ResultType,
    SamplingMethod, Units,
};

use crate::abi::*;
use crate::panic::boundary;
use crate::registry::Registry;

/// One live instance: the engine plus the C strings its descriptions point into.
struct Instance {
    lizard: Lizard,
    /// Per counter (index `id - 1`): short_name, name, title, description, category.
    strings: Vec<[CString; 5]>,
}

impl Instance {
    fn new(lizard: Lizard) -> Instance {
        let strings = lizard.counters().iter().map(c_strings).collect();
        Instance { lizard, strings }
    }
}

static INSTANCES: Registry<Instance> = Registry::new();

/// A C string without interior NULs: any NUL in `text` ends it early rather than failing.
fn c_string(text: &str) -> CString {
    let end = text.find('\0').unwrap_or(text.len());
    CString::new(&text[..end]).unwrap_or_default()
}

fn c_strings(counter: &Counter) -> [CString; 5] {
    [
        c_string(&counter.key),
        c_string(&counter.name),
        c_string(&counter.title),
        c_string(&counter.description),
        c_string(&counter.category),
    ]
}

/// The `LZD_UNITS_*` value of `units`: MHz reports Hz (its readings are scaled to Hz), and units the C enum
/// lacks (mV, %, cycles, ...) report `LZD_UNITS_UNKNOWN`, as the original library does.
pub(crate) fn units_code(units: &Units) -> u32 {
    match units {
        Units::Bytes => LZD_UNITS_BYTE,
        Units::Celsius => LZD_UNITS_CELSIUS,
        Units::Hertz | Units::Megahertz => LZD_UNITS_HZ,
        Units::Pages => LZD_UNITS_PAGES,
        Units::Rpm => LZD_UNITS_RPM,
        Units::Seconds => LZD_UNITS_S,
        Units::Volts => LZD_UNITS_V,
        Units::Unknown | Units::Millivolts | Units::Other(_) => LZD_UNITS_UNKNOWN,
    }
}

/// The `LZD_*` class of `class`: a derived counter (a ratio, a rate, an equation over a window's totals) is not
/// summed over draws, so it is `LZD_ABSOLUTE` (the C enum has no third class).
fn class_code(class: CounterClass) -> u32 {
    match class {
        CounterClass::Absolute | CounterClass::Derived => LZD_ABSOLUTE,
        CounterClass::Delta => LZD_DELTA,
    }
}

fn result_code(result: ResultType) -> u32 {
    match result {
        ResultType::Integer => LZD_TYPE_INT,
        ResultType::Floating => LZD_TYPE_DOUBLE,
    }
}

/// The environment variable that chooses how gatord sessions map onto Start/Stop pairs (see the header).
const MODE_ENV: &str = "LIZARD_GATORD_MODE";

/// The engine configuration `Init` uses: per-draw (one gatord session kept across Start/Stop pairs), or
/// one session per pair when [`MODE_ENV`] is `reconnecting`; any other value keeps the default.
fn init_config(address: GatordAddress) -> Config {
    let per_draw = Config::per_draw(address);
    match std::env::var(MODE_ENV).as_deref() {
        Ok("reconnecting") => {
            let mut config = per_draw;
            config.mode = CaptureMode::Reconnecting;
            config.live_rate_ms = Config::default().live_rate_ms;
            config
        }
        _ => per_draw,
    }
}

/// The environment variable that chooses what the local CPU counters count (see the header).
const COUNT_ENV: &str = "LIZARD_COUNT";

/// The environment variable that names Arm PMU events the local CPU counters count beside HWCPipe's (see
/// the header).
const EVENTS_ENV: &str = "LIZARD_CPU_EVENTS";

/// The names [`EVENTS_ENV`] gives, comma-separated; every one must be an Arm PMU event of this CPU, else
/// `Err` with the line saying which is not.
fn cpu_events() -> Result<Vec<String>, String> {
    let Ok(text) = std::env::var(EVENTS_ENV) else {
        return Ok(Vec::new());
    };
    let names: Vec<String> = text
        .split(',')
        .map(|n| n.trim().to_owned())
        .filter(|n| !n.is_empty())
        .collect();
    let found = lizard_core::hwc::event_counter_names(&names)
        .map_err(|e| format!("{EVENTS_ENV}={text}: {}", lizard_core::error_chain(&e)))?;
    if let Some(missing) = names
        .iter()
        .find(|n| !found.iter().any(|(asked, _)| asked == *n))
    {
        return Err(format!(
            "{EVENTS_ENV}={text}: '{missing}' is no Arm PMU event of this CPU"
        ));
    }
    Ok(names)
}

/// The engine `Init` configures, by [`lizard_core::sources`]' policy: gatord at `address` when it gives
/// counters (`Init` always passes one, so it is probed, not required), joined by HWCPipe for the calling
/// process, or for what [`COUNT_ENV`] names (`pid:PID`, `system`, `cpus:LIST`), with the Arm PMU events
/// [`EVENTS_ENV`] names. A value that names no target or no event, or a target the kernel refuses, makes
/// `Init` fail with one line on standard error saying why: the caller asked for something else than the
/// calling process, and silently counting it instead would mislead. An event named that this CPU does not
/// count is said on standard error, with the reason.
fn configure(address: GatordAddress, mut config: Config) -> Option<Lizard> {
    match cpu_events() {
        Ok(events) => config.cpu_events = events,
        Err(line) => {
            eprintln!("liblizard: {line}");
            return None;
        }
    }
    let spec = std::env::var(COUNT_ENV)
        .ok()
        .filter(|spec| !spec.trim().is_empty());
    let refused = |error: &TargetError| {
        eprintln!(
            "liblizard: {COUNT_ENV}={}: {}",
            spec.as_deref().unwrap_or_default(),
            lizard_core::error_chain(error)
        );
    };
    let local = match spec.as_deref().map(Target::parse) {
        None => Local::ThisProcess,
        Some(Ok(target)) => Local::Target(target),
        Some(Err(error)) => {
            refused(&error);
            return None;
        }
    };
    let sources = Sources {
        gatord: Gatord::Probe(address),
        local,
        join: Join::Always,
    };
    let named = config.cpu_events.clone();
    match lizard_core::sources::open(&sources, config) {
        Ok(opened) => {
            for u in opened.lizard.unreadable() {
                let event = u
                    .name
                    .rsplit('/')
                    .find(|p| !p.is_empty())
                    .unwrap_or(&u.name);
                if named.iter().any(|n| n.eq_ignore_ascii_case(event)) {
                    eprintln!(
                        "liblizard: {EVENTS_ENV}: {} is not counted: {}",
                        u.name, u.reason
                    );
                }
            }
            Some(opened.lizard)
        }
        Err(SourceError::Target(error)) => {
            refused(&error);
            None
        }
        Err(_) => None,
    }
}

/// `Init(host, port)`: discovers the counters of gatord at `host:port` and of HWCPipe.
///
/// # Safety
/// `host` is NULL or points to a NUL-terminated string that stays readable for the call.
unsafe extern "C" fn init(host: *const c_char, port: c_int) -> LizardInstance {
    boundary(std::ptr::null_mut(), || {
        if host.is_null() {
            return std::ptr::null_mut();
        }
        // SAFETY: `host` is non-NULL and, per this function's contract, a NUL-terminated string.
        let host = unsafe { CStr::from_ptr(host) };
        let (Ok(host), Ok(port)) = (host.to_str(), u16::try_from(port)) else {
            return std::ptr::null_mut();
        };
        let address = GatordAddress::new(host, port);
        match configure(address.clone(), init_config(address)) {
            Some(lizard) if lizard.count() > 0 => INSTANCES.insert(Instance::new(lizard)),
            _ => std::ptr::null_mut(),
        }
    })
}

/// `Destroy(ctx)`: stops a running capture, joins its threads, closes every socket, frees `ctx`.
///
/// # Safety
/// None beyond the C contract: any `ctx` value is accepted.
unsafe extern "C" fn destroy(ctx: LizardInstance) {
    boundary((), || {
        if let Some(instance) = INSTANCES.remove(ctx) {
            // Dropping the engine stops and joins its threads; if another thread is still inside a call on
            // this instance, the drop happens when that call returns.
            drop(instance);
        }
    })
}

/// `GetAvailableCountersCount(ctx)`.
///
/// # Safety
/// None beyond the C contract: any `ctx` value is accepted.
unsafe extern "C" fn get_available_counters_count(ctx: LizardInstance) -> u32 {
    boundary(0, || {
        INSTANCES
            .with(ctx, |instance| {
                u32::try_from(instance.lizard.count()).unwrap_or(u32::MAX)
            })
            .unwrap_or(0)
    })
}

/// `GetCounterDescription(ctx, id, desc)`.
///
/// # Safety
/// `desc` is NULL or points to writable memory for one `LizardCounterDescription`.
unsafe extern "C" fn get_counter_description(
    ctx: LizardInstance,
    id: LizardCounterId,
    desc: *mut LizardCounterDescription,
) -> LzdResult {
    boundary(LZD_FAILURE, || {
        if desc.is_null() {
            return LZD_FAILURE;
        }
        let described = INSTANCES.with(ctx, |instance| {
            let counter = instance.lizard.counter(id).ok()?;
            let strings = instance
                .strings
                .get(usize::try_from(id).ok()?.checked_sub(1)?)?;
            Some(LizardCounterDescription {
                id,
                short_name: strings[0].as_ptr(),
                name: strings[1].as_ptr(),
                title: strings[2].as_ptr(),
                description: strings[3].as_ptr(),
                category: strings[4].as_ptr(),
                multiplier: counter.multiplier,
                units: units_code(&counter.units),
                class_type: class_code(counter.class),
                result_type: result_code(counter.result_type),
            })
        });
        match described.flatten() {
            Some(description) => {
                // SAFETY: `desc` is non-NULL and, per this function's contract, writable for one description.
                unsafe { desc.write(description) };
                LZD_OK
            }
            None => LZD_FAILURE,
        }
    })
}

/// `EnableCounter(ctx, id)`.
///
/// # Safety
/// None beyond the C contract: any `ctx` and `id` are accepted.
unsafe extern "C" fn enable_counter(ctx: LizardInstance, id: LizardCounterId) {
    boundary((), || {
        INSTANCES.with(ctx, |instance| instance.lizard.enable(id).ok());
    })
}

/// `DisableCounter(ctx, id)`.
///
/// # Safety
/// None beyond the C contract: any `ctx` and `id` are accepted.
unsafe extern "C" fn disable_counter(ctx: LizardInstance, id: LizardCounterId) {
    boundary((), || {
        INSTANCES.with(ctx, |instance| instance.lizard.disable(id).ok());
    })
}

/// `DisableAllCounters(ctx)`.
///
/// # Safety
/// None beyond the C contract: any `ctx` is accepted.
unsafe extern "C" fn disable_all_counters(ctx: LizardInstance) {
    boundary((), || {
        INSTANCES.with(ctx, |instance| instance.lizard.disable_all());
    })
}

fn result(ok: Option<bool>) -> LzdResult {
    if ok == Some(true) {
        LZD_OK
    } else {
        LZD_FAILURE
    }
}

/// `StartCapture(ctx)`.
///
/// # Safety
/// None beyond the C contract: any `ctx` is accepted.
unsafe extern "C" fn start_capture(ctx: LizardInstance) -> LzdResult {
    boundary(LZD_FAILURE, || {
        result(INSTANCES.with(ctx, |instance| instance.lizard.start_capture().is_ok()))
    })
}

/// `StopCapture(ctx)`.
///
/// # Safety
/// None beyond the C contract: any `ctx` is accepted.
unsafe extern "C" fn stop_capture(ctx: LizardInstance) -> LzdResult {
    boundary(LZD_FAILURE, || {
        result(INSTANCES.with(ctx, |instance| instance.lizard.stop_capture().is_ok()))
    })
}

/// `ReadCounterInt(ctx, id)`.
///
/// # Safety
/// None beyond the C contract: any `ctx` and `id` are accepted.
unsafe extern "C" fn read_counter_int(ctx: LizardInstance, id: LizardCounterId) -> i64 {
    boundary(0, || {
        INSTANCES
            .with(ctx, |instance| instance.lizard.read_int(id).unwrap_or(0))
            .unwrap_or(0)
    })
}

/// `ReadCounterDouble(ctx, id)`.
///
/// # Safety
/// None beyond the C contract: any `ctx` and `id` are accepted.
unsafe extern "C" fn read_counter_double(ctx: LizardInstance, id: LizardCounterId) -> f64 {
    boundary(0.0, || {
        INSTANCES
            .with(ctx, |instance| {
                instance.lizard.read_double(id).unwrap_or(0.0)
            })
            .unwrap_or(0.0)
    })
}

/// The table lives in writable memory, as in the original library (the header hands out a non-const
/// pointer); the library itself never writes to it after initialisation.
struct Table(UnsafeCell<LizardApi>);

// SAFETY: the library never mutates the table; a caller that writes through the pointer it was given takes
// on the synchronisation of those writes, exactly as with the original library's static table.
unsafe impl Sync for Table {}

static TABLE: Table = Table(UnsafeCell::new(LizardApi {
    struct_size: std::mem::size_of::<LizardApi>() as c_int,
    version: LIZARD_VERSION_0_1,
    init,
    destroy,
    get_available_counters_count,
    get_counter_description,
    enable_counter,
    disable_counter,
    disable_all_counters,
    start_capture,
    stop_capture,
    read_counter_int,
    read_counter_double,
}));

/// `LoadApi(&api)`: points `*api` at the function table. `LZD_FAILURE` when `api` is NULL.
///
/// # Safety
/// `api` is NULL or points to writable memory for one pointer.
#[no_mangle]
pub unsafe extern "C" fn LoadApi(api: *mut *mut LizardApi) -> LzdResult {
    boundary(LZD_FAILURE, || {
        if api.is_null() {
            return LZD_FAILURE;
        }
        // SAFETY: `api` is non-NULL and, per this function's contract, writable for one pointer.
        unsafe { api.write(TABLE.0.get()) };
        LZD_OK
    })
}

/// A duration in whole nanoseconds, saturating.
fn nanos(d: std::time::Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

/// `LizardGetSampling(ctx, &sampling)`: how the local counters' sampling went in the last stopped capture of
/// `ctx`. `LZD_FAILURE` (and `*sampling` untouched) for a NULL pointer, an unknown `ctx`, or before a
/// capture that sampled local counters has stopped.
///
/// # Safety
/// `sampling` is NULL or points to writable memory for one `LizardSampling`.
#[no_mangle]
pub unsafe extern "C" fn LizardGetSampling(
    ctx: LizardInstance,
    sampling: *mut LizardSampling,
) -> LzdResult {
    // SAFETY: passed on from this function's contract.
    unsafe {
        write_sampling(ctx, sampling, |s| LizardSampling {
            interval_ns: nanos(s.interval),
            window_ns: nanos(s.window),
            expected: s.expected,
            delivered: s.delivered,
            missed: s.missed,
            largest_gap_ns: nanos(s.largest_gap),
        })
    }
}

/// Writes `convert` of the last stopped capture's sampling account of `ctx` to `out`: `LZD_FAILURE`
/// (and `*out` untouched) for a NULL pointer, an unknown `ctx`, or before such a capture.
///
/// # Safety
/// `out` is NULL or points to writable memory for one `T`.
unsafe fn write_sampling<T>(
    ctx: LizardInstance,
    out: *mut T,
    convert: impl Fn(&lizard_core::Sampling) -> T,
) -> LzdResult {
    boundary(LZD_FAILURE, || {
        if out.is_null() {
            return LZD_FAILURE;
        }
        match INSTANCES
            .with(ctx, |instance| instance.lizard.sampling())
            .flatten()
        {
            Some(s) => {
                let value = convert(&s);
                // SAFETY: `out` is non-NULL and, per this function's contract, writable for one value.
                unsafe { out.write(value) };
                LZD_OK
            }
            None => LZD_FAILURE,
        }
    })
}

/// `LizardGetSamplingDetail(ctx, &detail)`: who took the periods of the last stopped capture of `ctx`
/// and why the missed ones were missed. `LZD_FAILURE` (and `*detail` untouched) for a NULL pointer, an
/// unknown `ctx`, or before a capture that sampled local counters has stopped.
///
/// # Safety
/// `detail` is NULL or points to writable memory for one `LizardSamplingDetail`.
#[no_mangle]
pub unsafe extern "C" fn LizardGetSamplingDetail(
    ctx: LizardInstance,
    detail: *mut LizardSamplingDetail,
) -> LzdResult {
    // SAFETY: passed on from this function's contract.
    unsafe { write_sampling(ctx, detail, |s| sampling_detail(&s.method)) }
}

/// `LizardGetStartSkew(ctx, &skew_ns)`: in the last stopped capture of `ctx`, sampled by the kernel, the
/// time from the first counter group to start counting to the last, on any CPUs, in ns, as the kernel's
/// records tell. `LZD_FAILURE` (and `*skew_ns` untouched) for a NULL pointer, an unknown `ctx`, before
/// such a capture has stopped, or after one sampled by a thread (which reads every CPU at once) or whose
/// timers wrote no record.
///
/// # Safety
/// `skew_ns` is NULL or points to writable memory for one `uint64_t`.
#[no_mangle]
pub unsafe extern "C" fn LizardGetStartSkew(ctx: LizardInstance, skew_ns: *mut u64) -> LzdResult {
    boundary(LZD_FAILURE, || {
        if skew_ns.is_null() {
            return LZD_FAILURE;
        }
        let skew = INSTANCES
            .with(ctx, |instance| instance.lizard.sampling())
            .flatten()
            .and_then(|s| s.start)
            .map(|start| nanos(start.largest));
        match skew {
            Some(ns) => {
                // SAFETY: `skew_ns` is non-NULL and, per this function's contract, writable.
                unsafe { skew_ns.write(ns) };
                LZD_OK
            }
            None => LZD_FAILURE,
        }
    })
}

/// The C form of a capture's sampling method.
fn sampling_detail(method: &SamplingMethod) -> LizardSamplingDetail {
    match *method {
        SamplingMethod::Kernel {
            rings,
            lost_records,
            throttled,
            throttled_time,
            idle_periods,
        } => LizardSamplingDetail {
            method: LZD_SAMPLING_KERNEL,
            rings: u32::try_from(rings).unwrap_or(u32::MAX),
            lost_records,
            throttled,
            throttled_ns: nanos(throttled_time),
            idle_periods,
        },
        SamplingMethod::GpuOnly => LizardSamplingDetail {
            method: LZD_SAMPLING_GPU_ONLY,
            ..LizardSamplingDetail::default()
        },
        // A thread, or a method this version does not name: no kernel figures.
        _ => LizardSamplingDetail {
            method: LZD_SAMPLING_THREAD,
            ..LizardSamplingDetail::default()
        },
    }
}

/// `LizardGetGpuSampling(ctx, &gpu)`: how the GPU's counters were sampled in the last stopped capture of
/// `ctx`, apart from the CPUs'. The caller sets `gpu->struct_size` to `sizeof(LizardGpuSampling)` as it
/// knows it; at most that many bytes are written, and `struct_size` says how many. `LZD_FAILURE` (and
/// `*gpu` untouched) for a NULL pointer, a `struct_size` below 8, an unknown `ctx`, before a capture has
/// stopped, or when it sampled no GPU counter.
///
/// # Safety
/// `gpu` is NULL or points to writable memory of `gpu->struct_size` bytes (and at least 4).
#[no_mangle]
pub unsafe extern "C" fn LizardGetGpuSampling(
    ctx: LizardInstance,
    gpu: *mut LizardGpuSampling,
) -> LzdResult {
    boundary(LZD_FAILURE, || {
        if gpu.is_null() {
            return LZD_FAILURE;
        }
        // SAFETY: non-NULL, and per the contract readable for its first field.
        let size = unsafe { std::ptr::addr_of!((*gpu).struct_size).read_unaligned() };
        if size < LizardGpuSampling::MIN_SIZE {
            return LZD_FAILURE;
        }
        let Some(account) = INSTANCES
            .with(ctx, |instance| instance.lizard.sampling())
            .flatten()
            .and_then(|s| s.gpu)
        else {
            return LZD_FAILURE;
        };
        let full = gpu_sampling(&account);
        // SAFETY: `gpu` is writable for `size` bytes per the contract.
        unsafe { write_sized(&full, gpu.cast::<u8>(), size) };
        LZD_OK
    })
}

/// The C form of the GPU's account.
fn gpu_sampling(g: &lizard_core::GpuSampling) -> LizardGpuSampling {
    LizardGpuSampling {
        struct_size: LizardGpuSampling::SIZE,
        pace: match g.pace {
            GpuPace::Periodic => LZD_GPU_PACE_PERIODIC,
            _ => LZD_GPU_PACE_MANUAL,
        },
        interval_ns: nanos(g.interval),
        window_ns: nanos(g.window),
        expected: g.expected,
        delivered: g.delivered,
        folded: g.folded,
        missed: g.missed,
        not_counting: g.not_counting,
        largest_gap_ns: nanos(g.largest_gap),
    }
}

/// Writes the first `min(size, SIZE)` bytes of `full` to `out`, its `struct_size` set to that count.
///
/// # Safety
/// `out` is writable for `size` bytes.
unsafe fn write_sized(full: &LizardGpuSampling, out: *mut u8, size: u32) {
    let written = size.min(LizardGpuSampling::SIZE);
    let value = LizardGpuSampling {
        struct_size: written,
        ..*full
    };
    // SAFETY: `value` is a plain `repr(C)` struct of `SIZE` bytes; `written` is at most that, and `out`
    // is writable for `size` >= `written` bytes.
    unsafe {
        std::ptr::copy_nonoverlapping(
            std::ptr::addr_of!(value).cast::<u8>(),
            out,
            written as usize,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_gpu_account_is_written_only_as_far_as_the_callers_struct_goes() {
        let full = LizardGpuSampling {
            struct_size: LizardGpuSampling::SIZE,
            pace: LZD_GPU_PACE_MANUAL,
            interval_ns: 1,
            window_ns: 2,
            expected: 3,
            delivered: 4,
            folded: 5,
            missed: 6,
            not_counting: 7,
            largest_gap_ns: 8,
        };
        assert_eq!(LizardGpuSampling::SIZE, 72);
        // A caller that knows the whole struct gets all of it.
        let mut out = LizardGpuSampling::default();
        // SAFETY: `out` is writable for SIZE bytes.
        unsafe {
            write_sized(
                &full,
                std::ptr::addr_of_mut!(out).cast(),
                LizardGpuSampling::SIZE,
            )
        };
        assert_eq!(out, full);
        // A caller of an older, shorter struct: the bytes past it are left alone.
        let mut short = [0xAAu8; 96];
        // SAFETY: `short` is writable for 96 >= 24 bytes.
        unsafe { write_sized(&full, short.as_mut_ptr(), 24) };
        assert_eq!(&short[0..4], &24u32.to_ne_bytes());
        assert_eq!(&short[4..8], &LZD_GPU_PACE_MANUAL.to_ne_bytes());
        assert_eq!(&short[8..16], &1u64.to_ne_bytes());
        assert_eq!(&short[16..24], &2u64.to_ne_bytes());
        assert!(short[24..].iter().all(|&b| b == 0xAA));
        // A caller of a later, longer struct: this version's bytes, and the size it wrote.
        let mut long = [0x55u8; 96];
        // SAFETY: `long` is writable for 96 bytes.
        unsafe { write_sized(&full, long.as_mut_ptr(), 96) };
        assert_eq!(&long[0..4], &72u32.to_ne_bytes());
        assert!(long[72..].iter().all(|&b| b == 0x55));
    }

    #[test]
    fn units_map_as_the_original_library_does() {
        assert_eq!(units_code(&Units::Megahertz), LZD_UNITS_HZ);
        assert_eq!(units_code(&Units::Millivolts), LZD_UNITS_UNKNOWN);
        assert_eq!(
            units_code(&Units::Other("cycles".into())),
            LZD_UNITS_UNKNOWN
        );
        assert_eq!(units_code(&Units::Bytes), LZD_UNITS_BYTE);
        assert_eq!(units_code(&Units::Volts), LZD_UNITS_V);
    }

    #[test]
    fn interior_nul_shortens_rather_than_fails() {
        assert_eq!(c_string("ab\0cd").as_bytes(), b"ab");
        assert_eq!(c_string("plain").as_bytes(), b"plain");
    }
}
