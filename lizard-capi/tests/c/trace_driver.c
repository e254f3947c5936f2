/*
 * trace_driver.c - a C module recording GPU device memory through lizard_trace.h over CUDA's driver API,
 * compiled with gcc (no nvcc, no CUDA headers) by tests/driver_c.rs and linked with the driver found on the
 * loader's path: NVIDIA's libcuda.so.1 on a GPU machine, the driver stand-in's (cuda-standin) in CI.
 * It records through a handle it took itself (the original design's way), through a pointer inside its
 * allocation, and from a thread that never made a context current; a host pointer, ranges past an
 * allocation (its own end, and a small buffer's inside a larger block) and a freed allocation get their
 * codes.
 * Usage: trace_driver SOCKET
 * Prints "line NAME N" for the records the test checks, then "ok"; exits 1 naming a failed check.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lizard/lizard_trace.h"

/* The driver API this program calls, as cuda.h declares it (cuda.h maps cuMemAlloc, cuMemFree and
 * cuMemcpyHtoD to these _v2 functions; CUresult is an enum of int size). */
typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef struct CUctx_st *CUcontext;
typedef struct {
    char reserved[64];
} CUipcMemHandle;
typedef struct {
    char bytes[16];
} CUuuid;
CUresult cuInit(unsigned int flags);
CUresult cuDeviceGet(CUdevice *device, int ordinal);
CUresult cuDeviceGetUuid_v2(CUuuid *uuid, CUdevice device);
CUresult cuDevicePrimaryCtxRetain(CUcontext *ctx, CUdevice device);
CUresult cuDevicePrimaryCtxRelease_v2(CUdevice device);
CUresult cuCtxSetCurrent(CUcontext ctx);
CUresult cuMemAlloc_v2(CUdeviceptr *ptr, size_t size);
CUresult cuMemFree_v2(CUdeviceptr ptr);
CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t size);
CUresult cuIpcGetMemHandle(CUipcMemHandle *handle, CUdeviceptr ptr);

static int failures = 0;
#define CHECK(cond)                                                                     \
    do {                                                                                \
        if (!(cond)) {                                                                  \
            fprintf(stderr, "check failed at line %d: %s (last error: %s)\n", __LINE__, \
                    #cond, lizard_trace_last_error());                                  \
            failures++;                                                                 \
        }                                                                               \
    } while (0)

/* The byte at offset k of the buffer: tests/driver_c.rs computes the same. */
static unsigned char pattern(size_t k)
{
    return (unsigned char)((k * 29 + 7) & 0xff);
}

static const void *at(CUdeviceptr ptr)
{
    return (const void *)(uintptr_t)ptr;
}

/* A thread that never made a CUDA context current records a device buffer. */
struct worker {
    LizardTraceClient *client;
    CUdeviceptr ptr;
    int result;
    int line;
};

static void *work(void *arg)
{
    struct worker *w = (struct worker *)arg;
    w->line = __LINE__ + 1;
    w->result = LIZARD_TRACE_RECORD_CUDA(w->client, "worker", at(w->ptr + 200), 64);
    return NULL;
}

int main(int argc, char **argv)
{
    const size_t size = (size_t)2 << 20; /* 2 MiB: a block of its own, as NVIDIA advises for sharing */
    unsigned char *host;
    CUdevice device;
    CUcontext ctx;
    CUdeviceptr buffer = 0, small = 0, freed = 0;
    CUipcMemHandle handle;
    CUuuid uuid;
    LizardTraceClient *client = NULL;
    struct worker w;
    pthread_t thread;
    size_t k;
    int line, local = 0;
    if (argc != 2) {
        fprintf(stderr, "usage: trace_driver SOCKET\n");
        return 2;
    }
    host = (unsigned char *)malloc(size);
    if (host == NULL) {
        return 1;
    }
    for (k = 0; k < size; k++) {
        host[k] = pattern(k);
    }
    CHECK(cuInit(0) == 0);
    CHECK(cuDeviceGet(&device, 0) == 0);
    CHECK(cuDevicePrimaryCtxRetain(&ctx, device) == 0);
    CHECK(cuCtxSetCurrent(ctx) == 0);
    CHECK(cuMemAlloc_v2(&buffer, size) == 0);
    CHECK(cuMemcpyHtoD_v2(buffer, host, size) == 0);
    CHECK(cuIpcGetMemHandle(&handle, buffer) == 0);
    CHECK(cuDeviceGetUuid_v2(&uuid, device) == 0);

    CHECK(lizard_trace_connect(argv[1], &client) == LZT_OK);
    /* The design's way: the handle taken here, 64 KiB at offset 4096, the GPU named as the runtime names it. */
    line = __LINE__ + 1;
    CHECK(LIZARD_TRACE_RECORD_IPC(client, "ipc", &handle, 4096, 65536, uuid.bytes) == LZT_OK);
    printf("line ipc %d\n", line);
    /* The library's way: a pointer inside the allocation. */
    line = __LINE__ + 1;
    CHECK(LIZARD_TRACE_RECORD_CUDA(client, "ptr", at(buffer + 100), 1000) == LZT_OK);
    printf("line ptr %d\n", line);
    /* From a thread with no current context. */
    w.client = client;
    w.ptr = buffer;
    w.result = -100;
    CHECK(pthread_create(&thread, NULL, work, &w) == 0);
    CHECK(pthread_join(thread, NULL) == 0);
    CHECK(w.result == LZT_OK);
    printf("line worker %d\n", w.line);
    /* Misuse: a host pointer, ranges past the allocation, a small buffer's end inside its block, a freed
     * allocation. */
    CHECK(LIZARD_TRACE_RECORD_CUDA(client, "host", &local, sizeof local) == LZT_ERR_NOT_DEVICE_MEMORY);
    CHECK(LIZARD_TRACE_RECORD_CUDA(client, "past", at(buffer + size - 10), 100) == LZT_ERR_OUT_OF_RANGE);
    CHECK(LIZARD_TRACE_RECORD_IPC(client, "past", &handle, size - 10, 100, NULL) == LZT_ERR_REFUSED);
    CHECK(cuMemAlloc_v2(&small, 4096) == 0);
    CHECK(LIZARD_TRACE_RECORD_CUDA(client, "small", at(small + 4000), 200) == LZT_ERR_OUT_OF_RANGE);
    CHECK(cuMemFree_v2(small) == 0);
    CHECK(cuMemAlloc_v2(&freed, 4096) == 0);
    CHECK(cuMemFree_v2(freed) == 0);
    CHECK(LIZARD_TRACE_RECORD_CUDA(client, "freed", at(freed), 16) == LZT_ERR_NOT_DEVICE_MEMORY);
    CHECK(lizard_trace_close(client) == LZT_OK);
    CHECK(cuMemFree_v2(buffer) == 0);
    CHECK(cuDevicePrimaryCtxRelease_v2(device) == 0);
    free(host);
    if (failures != 0) {
        fprintf(stderr, "%d checks failed\n", failures);
        return 1;
    }
    printf("ok\n");
    return 0;
}
