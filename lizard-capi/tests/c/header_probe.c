/* Prints every size, offset and enum value of lizard_api.h and lizard_trace.h, one "name value" line each, for
 * tests/header.rs to compare with the Rust definitions. */
#include <stddef.h>
#include <stdio.h>
#include "lizard/lizard_api.h"
#include "lizard/lizard_trace.h"
#define SHOW(name, value) printf("%s %lld\n", name, (long long)(value))
#define OFF(type, field) SHOW(#type "." #field, offsetof(type, field))
int main(void) {
    SHOW("sizeof.LizardCounterDescription", sizeof(LizardCounterDescription));
    SHOW("sizeof.LizardApi", sizeof(struct LizardApi));
    SHOW("sizeof.LizardCounterId", sizeof(LizardCounterId));
    SHOW("sizeof.LizardInstance", sizeof(LizardInstance));
    OFF(LizardCounterDescription, id);
    OFF(LizardCounterDescription, short_name);
    OFF(LizardCounterDescription, name);
    OFF(LizardCounterDescription, title);
    OFF(LizardCounterDescription, description);
    OFF(LizardCounterDescription, category);
    OFF(LizardCounterDescription, multiplier);
    OFF(LizardCounterDescription, units);
    OFF(LizardCounterDescription, class_type);
    OFF(LizardCounterDescription, result_type);
    OFF(struct LizardApi, struct_size);
    OFF(struct LizardApi, version);
    OFF(struct LizardApi, Init);
    OFF(struct LizardApi, Destroy);
    OFF(struct LizardApi, GetAvailableCountersCount);
    OFF(struct LizardApi, GetCounterDescription);
    OFF(struct LizardApi, EnableCounter);
    OFF(struct LizardApi, DisableCounter);
    OFF(struct LizardApi, DisableAllCounters);
    OFF(struct LizardApi, StartCapture);
    OFF(struct LizardApi, StopCapture);
    OFF(struct LizardApi, ReadCounterInt);
    OFF(struct LizardApi, ReadCounterDouble);
    SHOW("sizeof.LizardSampling", sizeof(LizardSampling));
    OFF(LizardSampling, interval_ns);
    OFF(LizardSampling, window_ns);
    OFF(LizardSampling, expected);
    OFF(LizardSampling, delivered);
    OFF(LizardSampling, missed);
    OFF(LizardSampling, largest_gap_ns);
    SHOW("sizeof.LizardSamplingDetail", sizeof(LizardSamplingDetail));
    OFF(LizardSamplingDetail, method);
    OFF(LizardSamplingDetail, rings);
    OFF(LizardSamplingDetail, lost_records);
    OFF(LizardSamplingDetail, throttled);
    OFF(LizardSamplingDetail, throttled_ns);
    OFF(LizardSamplingDetail, idle_periods);
    SHOW("LZD_SAMPLING_THREAD", LZD_SAMPLING_THREAD);
    SHOW("LZD_SAMPLING_KERNEL", LZD_SAMPLING_KERNEL);
    SHOW("LZD_SAMPLING_GPU_ONLY", LZD_SAMPLING_GPU_ONLY);
    SHOW("sizeof.LizardGpuSampling", sizeof(LizardGpuSampling));
    OFF(LizardGpuSampling, struct_size);
    OFF(LizardGpuSampling, pace);
    OFF(LizardGpuSampling, interval_ns);
    OFF(LizardGpuSampling, window_ns);
    OFF(LizardGpuSampling, expected);
    OFF(LizardGpuSampling, delivered);
    OFF(LizardGpuSampling, folded);
    OFF(LizardGpuSampling, missed);
    OFF(LizardGpuSampling, not_counting);
    OFF(LizardGpuSampling, largest_gap_ns);
    SHOW("LZD_GPU_PACE_PERIODIC", LZD_GPU_PACE_PERIODIC);
    SHOW("LZD_GPU_PACE_MANUAL", LZD_GPU_PACE_MANUAL);
    SHOW("LIZARD_VERSION_0_1", LIZARD_VERSION_0_1);
    SHOW("LZD_OK", LZD_OK);
    SHOW("LZD_FAILURE", LZD_FAILURE);
    SHOW("sizeof.LZD_Result", sizeof(LZD_Result));
    SHOW("LZD_ABSOLUTE", LZD_ABSOLUTE);
    SHOW("LZD_DELTA", LZD_DELTA);
    SHOW("LZD_UNITS_UNKNOWN", LZD_UNITS_UNKNOWN);
    SHOW("LZD_UNITS_BYTE", LZD_UNITS_BYTE);
    SHOW("LZD_UNITS_CELSIUS", LZD_UNITS_CELSIUS);
    SHOW("LZD_UNITS_HZ", LZD_UNITS_HZ);
    SHOW("LZD_UNITS_PAGES", LZD_UNITS_PAGES);
    SHOW("LZD_UNITS_RPM", LZD_UNITS_RPM);
    SHOW("LZD_UNITS_S", LZD_UNITS_S);
    SHOW("LZD_UNITS_V", LZD_UNITS_V);
    SHOW("LZD_TYPE_INT", LZD_TYPE_INT);
    SHOW("LZD_TYPE_DOUBLE", LZD_TYPE_DOUBLE);
    SHOW("sizeof.LizardTraceResult", sizeof(LizardTraceResult));
    SHOW("sizeof.LizardTraceClient*", sizeof(LizardTraceClient *));
    SHOW("sizeof.LizardTraceOptions", sizeof(LizardTraceOptions));
    OFF(LizardTraceOptions, size);
    OFF(LizardTraceOptions, device_mode);
    OFF(LizardTraceOptions, deadline_ms);
    OFF(LizardTraceOptions, block_ms);
    SHOW("LZT_OK", LZT_OK);
    SHOW("LZT_DROPPED", LZT_DROPPED);
    SHOW("LZT_ERR_NULL", LZT_ERR_NULL);
    SHOW("LZT_ERR_NOT_A_CLIENT", LZT_ERR_NOT_A_CLIENT);
    SHOW("LZT_ERR_ARGUMENT", LZT_ERR_ARGUMENT);
    SHOW("LZT_ERR_CONNECT", LZT_ERR_CONNECT);
    SHOW("LZT_ERR_DISCONNECTED", LZT_ERR_DISCONNECTED);
    SHOW("LZT_ERR_SOCKET", LZT_ERR_SOCKET);
    SHOW("LZT_ERR_NO_CUDA", LZT_ERR_NO_CUDA);
    SHOW("LZT_ERR_NOT_DEVICE_MEMORY", LZT_ERR_NOT_DEVICE_MEMORY);
    SHOW("LZT_ERR_OUT_OF_RANGE", LZT_ERR_OUT_OF_RANGE);
    SHOW("LZT_ERR_CUDA", LZT_ERR_CUDA);
    SHOW("LZT_ERR_REFUSED", LZT_ERR_REFUSED);
    SHOW("LZT_ERR_TIMEOUT", LZT_ERR_TIMEOUT);
    SHOW("LZT_ERR_PROTOCOL", LZT_ERR_PROTOCOL);
    SHOW("LZT_ERR_INTERNAL", LZT_ERR_INTERNAL);
    SHOW("LZT_DEVICE_SYNC", LZT_DEVICE_SYNC);
    SHOW("LZT_DEVICE_ASYNC", LZT_DEVICE_ASYNC);
    return 0;
}
