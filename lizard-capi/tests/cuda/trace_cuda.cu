/*
 * trace_cuda.cu - a CUDA C module recording device memory through lizard_trace.h, the way the original
 * design's modules do: the runtime API's cudaIpcGetMemHandle, then the handle sent with an offset, and the
 * library's own way, a pointer inside the allocation. Compiled with nvcc by tests/cuda_c.rs.
 * Usage: trace_cuda SOCKET
 * Prints "line NAME N" for the records the test checks, then "ok"; exits 1 naming a failed check.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>

#include "lizard/lizard_trace.h"

static int failures = 0;
#define CHECK(cond)                                                                     \
    do {                                                                                \
        if (!(cond)) {                                                                  \
            fprintf(stderr, "check failed at line %d: %s (last error: %s)\n", __LINE__, \
                    #cond, lizard_trace_last_error());                                  \
            failures++;                                                                 \
        }                                                                               \
    } while (0)

/* The byte at offset k of the buffer: tests/cuda_c.rs computes the same. */
static unsigned char pattern(size_t k)
{
    return (unsigned char)((k * 13 + 5) & 0xff);
}

int main(int argc, char **argv)
{
    /* 2 MiB: cudaMalloc may place a smaller buffer inside a larger block, which its handle maps whole, so
     * "past the end" through the handle would only be past the block's end. */
    const size_t size = (size_t)2 << 20;
    unsigned char *host, *device = NULL, *freed = NULL;
    cudaIpcMemHandle_t handle;
    cudaDeviceProp prop;
    LizardTraceClient *client = NULL;
    size_t k;
    int line, local = 0;
    if (argc != 2) {
        fprintf(stderr, "usage: trace_cuda SOCKET\n");
        return 2;
    }
    host = (unsigned char *)malloc(size);
    CHECK(host != NULL);
    if (host == NULL) {
        return 1;
    }
    for (k = 0; k < size; k++) {
        host[k] = pattern(k);
    }
    CHECK(cudaMalloc((void **)&device, size) == cudaSuccess);
    CHECK(cudaMemcpy(device, host, size, cudaMemcpyHostToDevice) == cudaSuccess);
    CHECK(cudaDeviceSynchronize() == cudaSuccess);
    CHECK(cudaIpcGetMemHandle(&handle, device) == cudaSuccess);
    CHECK(cudaGetDeviceProperties(&prop, 0) == cudaSuccess);

    CHECK(lizard_trace_connect(argv[1], &client) == LZT_OK);
    /* The design's way: the handle from the runtime API, 64 KiB at offset 4096. */
    line = __LINE__ + 1;
    CHECK(LIZARD_TRACE_RECORD_IPC(client, "ipc", &handle, 4096, 65536, prop.uuid.bytes) == LZT_OK);
    printf("line ipc %d\n", line);
    /* The library's way: a pointer inside the allocation. */
    line = __LINE__ + 1;
    CHECK(LIZARD_TRACE_RECORD_CUDA(client, "ptr", device + 100, 1000) == LZT_OK);
    printf("line ptr %d\n", line);
    /* Misuse: a host pointer, a range past the allocation, a freed allocation. */
    CHECK(LIZARD_TRACE_RECORD_CUDA(client, "host", &local, sizeof local) == LZT_ERR_NOT_DEVICE_MEMORY);
    CHECK(LIZARD_TRACE_RECORD_CUDA(client, "past", device + size - 10, 100) == LZT_ERR_OUT_OF_RANGE);
    CHECK(LIZARD_TRACE_RECORD_IPC(client, "past", &handle, size - 10, 100, NULL) == LZT_ERR_REFUSED);
    CHECK(cudaMalloc((void **)&freed, 4096) == cudaSuccess);
    CHECK(cudaFree(freed) == cudaSuccess);
    CHECK(LIZARD_TRACE_RECORD_CUDA(client, "freed", freed, 16) == LZT_ERR_NOT_DEVICE_MEMORY);
    CHECK(lizard_trace_close(client) == LZT_OK);
    CHECK(cudaFree(device) == cudaSuccess);
    free(host);
    if (failures != 0) {
        fprintf(stderr, "%d checks failed\n", failures);
        return 1;
    }
    printf("ok\n");
    return 0;
}
