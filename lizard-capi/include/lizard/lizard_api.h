/*
 * lizard_api.h - the Lizard hardware-counter C API (LIZARD_VERSION_0_1).
 *
 * Drop-in compatible with the original Lizard header: same names, enum values, struct layouts and function
 * table order, so callers written for it (RenderDoc's ARM counter backend among them) work unchanged.
 * Unlike the original it compiles as C99 as well as C++11.
 *
 * Usage:
 *     struct LizardApi *api = NULL;
 *     if (LoadApi(&api) != LZD_OK || api->version != LIZARD_VERSION_0_1) { ... }
 *     LizardInstance ctx = api->Init("127.0.0.1", 8080);   // NULL on failure
 *     uint32_t n = api->GetAvailableCountersCount(ctx);     // ids are 1..n
 *     ...
 *     api->Destroy(ctx);
 *
 * Safety contract (stronger than the original):
 *   - Every function accepts a NULL or already-destroyed ctx and any counter id: an invalid one gives 0,
 *     0.0, LZD_FAILURE or no effect. Nothing crashes the host process, and no function raises SIGPIPE.
 *   - Output structs are written only when the call returns LZD_OK.
 *   - The strings in a LizardCounterDescription stay valid until Destroy(ctx).
 *
 * Thread safety: LoadApi may be called from any thread at any time. Calls on one ctx are serialised
 * internally, so any function may be called from any thread; calls on different contexts are independent.
 * Destroy(ctx) waits for a running capture on ctx to stop; no call on ctx may start after Destroy returns.
 */
#ifndef LIB_LIZARD_API_H
#define LIB_LIZARD_API_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* An opaque handle to one Lizard instance. */
typedef void *LizardInstance;

/* A counter id: valid ids are 1..GetAvailableCountersCount(ctx); 0 is never valid. */
typedef uint32_t LizardCounterId;

struct LizardApi;

/* Versions of the function table. */
enum LizardVersion {
    LIZARD_VERSION_0_1 = 1
};

/* Result of a call. */
typedef enum {
    LZD_OK = 0,
    LZD_FAILURE = 1
} LZD_Result;

/* How the samples of a counter combine: ABSOLUTE values are averaged, DELTA values are summed. */
typedef enum {
    LZD_ABSOLUTE = 1,
    LZD_DELTA = 2
} LZD_CounterClassType;

/* Units and result types share one enum, as in the original header.
 * MHz counters report LZD_UNITS_HZ (their values are scaled to Hz); units without a member (mV, %, ...)
 * report LZD_UNITS_UNKNOWN. */
typedef enum {
    LZD_UNITS_UNKNOWN = 0,
    LZD_UNITS_BYTE = 1,
    LZD_UNITS_CELSIUS = 2,
    LZD_UNITS_HZ = 3,
    LZD_UNITS_PAGES = 4,
    LZD_UNITS_RPM = 5,
    LZD_UNITS_S = 6,
    LZD_UNITS_V = 7,
    LZD_TYPE_INT = 8,
    LZD_TYPE_DOUBLE = 9
} LZD_CounterAttribute;

/* The description of one counter (72 bytes on LP64, 48 on ILP32). */
typedef struct LizardCounterDescription {
    LizardCounterId id;       /* equals the id it was asked for */
    const char *short_name;   /* gatord counter name (key); for a programmable event of a CPU counter set
                                 "<set>:<EVENT>" ("ARMv8_Cortex_A72:INST_RETIRED", or "…:0x60" without a
                                 common mnemonic), which StartCapture programs into one of the set's slots;
                                 for HWCPipe counters their name ("TaskClock") */
    const char *name;         /* gatord event name; for HWCPipe counters their name again */
    const char *title;        /* gatord event title; for HWCPipe counters "HWCPipe CPU (this process)" (they
                                 count only the calling process; with LIZARD_COUNT what they count, e.g.
                                 "HWCPipe CPU (process 1234, all threads)") or "HWCPipe GPU" */
    const char *description;
    const char *category;
    double multiplier;        /* already applied by ReadCounterInt/ReadCounterDouble */
    uint32_t units;           /* an LZD_UNITS_* value */
    uint32_t class_type;      /* an LZD_CounterClassType value */
    uint32_t result_type;     /* LZD_TYPE_INT or LZD_TYPE_DOUBLE: which read gives the exact value */
} LizardCounterDescription;

/* Connects to gatord at host:port (a name or an IPv4/IPv6 address) and discovers the local HWCPipe
 * counters. Returns NULL when no source gives any counter, or when host is NULL or port is out of range.
 * The local CPU counters count the calling process; the environment variable LIZARD_COUNT, read by Init,
 * names something else: "pid:PID" (another process, all its threads and those they create), "system" (every
 * online CPU, summed) or "cpus:LIST" ("0-3,6", summed). A value that names no target, or one the kernel
 * refuses (CPU-wide counting needs perf_event_paranoid <= 0 or CAP_PERFMON), makes Init return NULL after
 * one line on stderr saying why; the calling process is never counted in its place. LIZARD_CPU_EVENTS, also
 * read by Init, adds Arm PMU events of this CPU to the counters, comma-separated, by Arm's mnemonic
 * ("L2D_CACHE_REFILL"), the kernel's name ("l2d_cache_refill") or number ("0x4005", "r4005"): each is
 * counted on every core type that has it, one counter summed and, on a big.LITTLE CPU, one per core type
 * ("armv8_cortex_a55/INST_RETIRED/"), between the CPU and the GPU counters; a name that is no event of this
 * CPU makes Init return NULL after one line on stderr, and an event the CPU cannot count is said there. */
typedef LizardInstance (*LZD_Init_PFN)(const char *host, int port);

/* Stops any running capture, joins its threads, closes every socket and frees ctx. Accepts NULL. */
typedef void (*LZD_Destroy_PFN)(LizardInstance ctx);

/* The number of counters; 0 for an invalid ctx. */
typedef uint32_t (*LZD_GetAvailableCountersCount_PFN)(LizardInstance ctx);

/* Describes counter id. LZD_FAILURE (and lzdDesc untouched) for an invalid ctx, id or NULL lzdDesc. */
typedef LZD_Result (*LZD_GetCounterDescription_PFN)(LizardInstance ctx, LizardCounterId id,
                                                    LizardCounterDescription *lzdDesc);

/* Marks counter id to be captured by the next StartCapture. Invalid ctx or id: no effect. */
typedef void (*LZD_EnableCounter_PFN)(LizardInstance ctx, LizardCounterId id);

/* Stops capturing counter id from the next StartCapture on. Invalid ctx or id: no effect. */
typedef void (*LZD_DisableCounter_PFN)(LizardInstance ctx, LizardCounterId id);

/* Disables every counter. Invalid ctx: no effect. */
typedef void (*LZD_DisableAllCounters_PFN)(LizardInstance ctx);

/* Starts capturing the enabled counters.
 * With gatord as a source, one gatord session is kept open across Start/Stop pairs (per-draw use: a pair
 * opens no connection and waits for nothing; gatord flushes every 1 ms, live_rate="1", and samples perf
 * counters at about 1 kHz, sample_rate="normal"); each pair reads the samples stamped inside its window by the
 * rules of ReadCounterInt. The session is opened by the first StartCapture, reopened when the set of enabled
 * gatord counters changes, and closed by Destroy. The trade-off: gatord samples at its own rate, so a short
 * window is read from the samples enclosing it, not counted exactly. Setting the environment variable
 * LIZARD_GATORD_MODE=reconnecting before Init gives each pair a gatord session of its own instead (its
 * window is every sample gatord sends in that session; about 0.2 s per pair against a real daemon); any
 * other value keeps the default.
 * LZD_OK when every source with an enabled counter started; LZD_FAILURE (and nothing started) when
 * none is enabled, more events of one counter set are enabled than it has slots (6 on a Cortex-A72), or a
 * source failed to start (gatord unreachable, or busy with another client's session). */
typedef LZD_Result (*LZD_StartCapture_PFN)(LizardInstance ctx);

/* Stops the capture. With the kept gatord session it returns at once (a read that needs a later sample
 * waits for it); with LIZARD_GATORD_MODE=reconnecting it ends the session (bounded wait for gatord's end
 * marker).
 * LZD_FAILURE for an invalid ctx, when no capture runs, when gatord closed the connection or reported an
 * error during the capture, when a source failed, or (one session per pair only) when no enabled counter
 * has a value for the window (see ReadCounterInt: nothing was measured). The samples received stay readable
 * after a failure. */
typedef LZD_Result (*LZD_StopCapture_PFN)(LizardInstance ctx);

/* The value of counter id over the last Start/Stop window, then MHz becomes Hz and the multiplier
 * applies; truncated toward zero.
 *   ABSOLUTE: the mean of the samples stamped inside the window; a window holding none (shorter than the
 *     daemon's sample period, e.g. 5 ms between gatord's 100 ms samples) reads the last sample at or before
 *     the window's end (the level in force).
 *   DELTA: each sample counts the events since the previous sample, spread evenly over that interval; the
 *     reading is the part falling inside the window (samples wholly inside count in full, the samples
 *     enclosing the window's edges in proportion to their overlap). A window inside one interval of length
 *     T reads value * window / T of the sample that closes it. A counter's first sample, whose interval is
 *     unknown, counts in full when it lies inside the window.
 * Returns 0 only when there is no value: an invalid ctx or id, no capture yet, or no sample the rule can
 * use (no sample of the counter at all; ABSOLUTE: none at or before the window's end; DELTA: no sample
 * whose interval meets the window). With the kept gatord session, a DELTA read whose closing sample (the
 * first stamped at or after the window's end) has not arrived yet waits for it, at most 500 ms, and then
 * reads what the rule gives without it; an ABSOLUTE read waits (as long) only
 * while no sample of the counter has arrived at all, as at the start of the session.
 * A counter gatord lists but never sends (its derived counters) always has no value. A genuine reading of
 * 0 is also 0: with one session per pair, StopCapture's LZD_FAILURE tells "nothing measured" apart. */
typedef int64_t (*LZD_ReadCounterInt_PFN)(LizardInstance ctx, LizardCounterId id);

/* The same reading as ReadCounterInt, in double precision without truncation, and 0.0 in exactly the
 * same no-value cases. Integer counters are converted by value, never by reinterpreting bits. */
typedef double (*LZD_ReadCounterDouble_PFN)(LizardInstance ctx, LizardCounterId id);

/* The function table, in the original order. */
struct LizardApi {
    int struct_size; /* sizeof(struct LizardApi) */
    int version;     /* LIZARD_VERSION_0_1 */
    LZD_Init_PFN Init;
    LZD_Destroy_PFN Destroy;
    LZD_GetAvailableCountersCount_PFN GetAvailableCountersCount;
    LZD_GetCounterDescription_PFN GetCounterDescription;
    LZD_EnableCounter_PFN EnableCounter;
    LZD_DisableCounter_PFN DisableCounter;
    LZD_DisableAllCounters_PFN DisableAllCounters;
    LZD_StartCapture_PFN StartCapture;
    LZD_StopCapture_PFN StopCapture;
    LZD_ReadCounterInt_PFN ReadCounterInt;
    LZD_ReadCounterDouble_PFN ReadCounterDouble;
};

/* Points *api at the library's function table (shared by all callers, valid for the life of the
 * library). LZD_FAILURE when api is NULL. Thread-safe. */
typedef LZD_Result (*LZD_LoadApi_PFN)(struct LizardApi **api);

LZD_Result LoadApi(struct LizardApi **api);

/* An extension beside the table (the table keeps the original layout): how the local (HWCPipe) counters'
 * periodic sampling went in the last stopped capture of ctx. The sampler takes one sample at StartCapture,
 * one per interval and one at StopCapture; a period it woke a whole period or more late for is missed,
 * and counted here, never made up. */
typedef struct LizardSampling {
    uint64_t interval_ns;    /* the sampling interval */
    uint64_t window_ns;      /* from the start sample to the stop sample */
    uint64_t expected;       /* whole periods in the window */
    uint64_t delivered;      /* periodic samples taken (start and stop samples not included) */
    uint64_t missed;         /* periods skipped: the sampler woke a whole period or more late */
    uint64_t largest_gap_ns; /* the longest time between two consecutive samples */
} LizardSampling;

/* LZD_OK and *sampling written after a capture with local counters has stopped on ctx; LZD_FAILURE, with
 * *sampling untouched, for a NULL sampling, an invalid ctx, or before such a capture. Thread-safe. */
LZD_Result LizardGetSampling(LizardInstance ctx, LizardSampling *sampling);

/* Who took the periods LizardGetSampling counts, and why the missed ones were missed (a second extension,
 * so that LizardSampling keeps its layout). method: */
#define LZD_SAMPLING_THREAD 0 /* a thread of the library read the counters every interval */
#define LZD_SAMPLING_KERNEL 1 /* the kernel's timers wrote the counters into rings, drained in batches */
#define LZD_SAMPLING_GPU_ONLY 2 /* no CPU counter was sampled: LizardSampling holds the GPU's figures */
typedef struct LizardSamplingDetail {
    uint32_t method;        /* LZD_SAMPLING_THREAD, LZD_SAMPLING_KERNEL or LZD_SAMPLING_GPU_ONLY */
    uint32_t rings;         /* kernel: rings sampled (CPUs x counter groups); thread: 0 */
    uint64_t lost_records;  /* kernel: records lost to a full ring (PERF_RECORD_LOST) */
    uint64_t throttled;     /* kernel: times the kernel throttled a timer (too many samples per tick) */
    uint64_t throttled_ns;  /* kernel: how long the timers were throttled, summed over the rings */
    uint64_t idle_periods;  /* kernel: missed periods of idle CPUs, whose timer takes no sample; the
                             * counts go on, so totals stay exact */
} LizardSamplingDetail;

/* LZD_OK and *detail written after a capture with local counters has stopped on ctx; LZD_FAILURE, with
 * *detail untouched, for a NULL detail, an invalid ctx, or before such a capture. Thread-safe. */
LZD_Result LizardGetSamplingDetail(LizardInstance ctx, LizardSamplingDetail *detail);

/* How the GPU's counters were sampled in the last stopped capture, apart from the CPUs' (a third
 * extension). A poller of its own takes the driver's dumps; every period of the window is delivered (a
 * sample of one period), folded (into a sample covering several; the counts are kept), missed (no counts:
 * a dump flagged erroneous, or none by the stop) or not counting yet (a CSF GPU's first dumps, before its
 * firmware counts; left out rather than reported as zeros). Versioned by struct_size: set it to
 * sizeof(LizardGpuSampling) before the call; at most that many bytes are written, fields appended by a
 * later version are left alone, and struct_size says how many bytes were written. pace: */
#define LZD_GPU_PACE_PERIODIC 0 /* the driver dumped by itself every interval */
#define LZD_GPU_PACE_MANUAL 1   /* one dump request per period: the driver would not dump by itself */
typedef struct LizardGpuSampling {
    uint32_t struct_size;    /* in: sizeof(LizardGpuSampling) as the caller knows it; out: bytes written */
    uint32_t pace;           /* LZD_GPU_PACE_PERIODIC or LZD_GPU_PACE_MANUAL */
    uint64_t interval_ns;    /* the interval asked for */
    uint64_t window_ns;      /* from the start of counting to the stop */
    uint64_t expected;       /* whole periods in the window */
    uint64_t delivered;      /* samples stored, one dump each */
    uint64_t folded;         /* periods folded into a sample covering several */
    uint64_t missed;         /* periods without counts: an erroneous dump, or none by the stop */
    uint64_t not_counting;   /* first dumps that counted nothing yet, left out */
    uint64_t largest_gap_ns; /* the longest time between two dumps */
} LizardGpuSampling;

/* LZD_OK and *gpu written after a capture with GPU counters has stopped on ctx; LZD_FAILURE, with *gpu
 * untouched, for a NULL gpu, a struct_size below 8, an invalid ctx, before such a capture, or when it
 * sampled no GPU counter. Thread-safe. */
LZD_Result LizardGetGpuSampling(LizardInstance ctx, LizardGpuSampling *gpu);

/* A fourth extension: CPU-wide counters are enabled one counter group after another, so the CPUs start
 * counting at slightly different times. LZD_OK and *skew_ns written with the time from the first group to
 * start to the last, in ns, as the kernel's records tell, after a capture sampled by the kernel
 * (LZD_SAMPLING_KERNEL) has stopped on ctx; LZD_FAILURE, with *skew_ns untouched, for a NULL skew_ns, an
 * invalid ctx, before such a capture, or after one sampled by a thread. Thread-safe. */
LZD_Result LizardGetStartSkew(LizardInstance ctx, uint64_t *skew_ns);

#ifdef __cplusplus
}
#endif

#endif /* LIB_LIZARD_API_H */
