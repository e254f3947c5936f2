/*
 * lizard_trace.h: application trace records from C and CUDA C, sent to a lizard trace server
 * (`lizard trace-server`), which keeps them in a bounded ring that overwrites its oldest records.
 *
 * Exported by liblizard.so and liblizard.a. C99 and C++11.
 *
 * A record is a module tag (at most 10 bytes), a source file name (its last path component, cut to 20
 * bytes), a line, a CLOCK_MONOTONIC_RAW timestamp and a payload:
 *   - host bytes (lizard_trace_record): copied into the message, or into a sealed memfd when large;
 *   - GPU device memory (lizard_trace_record_cuda, lizard_trace_record_ipc): this process sends the
 *     allocation's CUDA IPC handle and the server copies the bytes; this process never copies them.
 *
 *     LizardTraceClient *trace;
 *     if (lizard_trace_connect(NULL, &trace) == LZT_OK) {
 *         LIZARD_TRACE_RECORD(trace, "submit", &cmd, sizeof cmd);
 *         cudaStreamSynchronize(stream);
 *         LIZARD_TRACE_RECORD_CUDA(trace, "fft", d_out + 256, 4096);   any pointer inside an allocation
 *         lizard_trace_close(trace);
 *     }
 *
 * By default a device record returns once the server has copied the bytes into its ring: the record holds
 * the bytes of the call. Record after the work that writes the buffer has finished: the server's copy is
 * not ordered after this process's streams. LZT_DEVICE_ASYNC returns at once instead; the server then
 * copies when it gets to the record, which carries both times.
 *
 * Every function returns a LizardTraceResult. A NULL pointer, a client that was closed (or never came from
 * lizard_trace_connect), a host pointer passed as device memory, a length past the end of its allocation,
 * a server that refused the record: each is a negative code, never a crash. lizard_trace_last_error() says
 * more about the last failed call of the calling thread. A client may be used from several threads; calls
 * on one client are serialised.
 */
#ifndef LIZARD_TRACE_H
#define LIZARD_TRACE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* An opaque client: a key issued by the library, never a pointer to its memory. */
typedef struct LizardTraceClient LizardTraceClient;

typedef enum LizardTraceResult {
    LZT_OK = 0,                    /* sent; for a synchronous device record, stored */
    LZT_DROPPED = 1,               /* dropped because the server was slow (counted; nothing failed) */
    LZT_ERR_NULL = -1,             /* a required pointer is NULL */
    LZT_ERR_NOT_A_CLIENT = -2,     /* closed, or never returned by lizard_trace_connect */
    LZT_ERR_ARGUMENT = -3,         /* module tag over 10 bytes or not UTF-8, length over 4 GiB, bad options */
    LZT_ERR_CONNECT = -4,          /* no trace server listens on the socket */
    LZT_ERR_DISCONNECTED = -5,     /* the server went away; the next record reconnects */
    LZT_ERR_SOCKET = -6,           /* sending or receiving failed otherwise */
    LZT_ERR_NO_CUDA = -7,          /* no CUDA driver in this process (or a build without CUDA support) */
    LZT_ERR_NOT_DEVICE_MEMORY = -8,/* the pointer is not CUDA device memory */
    LZT_ERR_OUT_OF_RANGE = -9,     /* the bytes reach past the end of their allocation */
    LZT_ERR_CUDA = -10,            /* another CUDA driver call failed */
    LZT_ERR_REFUSED = -11,         /* the server refused the record (why: lizard_trace_last_error) */
    LZT_ERR_TIMEOUT = -12,         /* no acknowledgement within the deadline: the record may still be stored */
    LZT_ERR_PROTOCOL = -13,        /* the server's answer did not decode */
    LZT_ERR_INTERNAL = -14         /* a bug in the library, caught before it reached the caller */
} LizardTraceResult;

typedef enum LizardTraceDeviceMode {
    LZT_DEVICE_SYNC = 0,           /* device records return once stored (the default) */
    LZT_DEVICE_ASYNC = 1           /* device records return at once */
} LizardTraceDeviceMode;

/* Options for lizard_trace_connect_with. Zero-initialise, then set `size` to sizeof(LizardTraceOptions). */
typedef struct LizardTraceOptions {
    uint32_t size;                 /* sizeof(LizardTraceOptions) */
    uint32_t device_mode;          /* a LizardTraceDeviceMode */
    uint32_t deadline_ms;          /* synchronous device records: the longest wait; 0 = 5000 */
    uint32_t block_ms;             /* host and asynchronous records: 0 = drop when the server is slow,
                                      else wait at most this long for room */
} LizardTraceOptions;

/* Connects to the trace server on `socket`: "@name" for an abstract socket name, anything else a path;
 * NULL for the default, "@lizard-trace". On LZT_OK, *client is the new client. */
LizardTraceResult lizard_trace_connect(const char *socket, LizardTraceClient **client);

/* lizard_trace_connect with options; `options` NULL means the defaults. */
LizardTraceResult lizard_trace_connect_with(const char *socket, const LizardTraceOptions *options,
                                            LizardTraceClient **client);

/* Closes the connection and frees the client; the handle is dead afterwards. */
LizardTraceResult lizard_trace_close(LizardTraceClient *client);

/* Records `len` host bytes at `data` (NULL only when len is 0). */
LizardTraceResult lizard_trace_record(LizardTraceClient *client, const char *module, const char *file,
                                      uint32_t line, const void *data, size_t len);

/* Records `len` bytes of CUDA device memory at `device_ptr`, a pointer anywhere inside an allocation of
 * cudaMalloc or cuMemAlloc. The library finds the allocation's base and size and takes its IPC handle once
 * per allocation (keyed by the allocation's identity, never its address). A thread with no current CUDA
 * context may call it: the library then asks through a GPU's primary context this process already uses. */
LizardTraceResult lizard_trace_record_cuda(LizardTraceClient *client, const char *module, const char *file,
                                           uint32_t line, const void *device_ptr, size_t len);

/* Records `len` bytes at `offset` inside the allocation whose IPC handle the caller took itself
 * (cudaIpcGetMemHandle: the 64 bytes of a cudaIpcMemHandle_t). `device_uuid` is the 16 bytes of the GPU's
 * UUID (cudaDeviceProp.uuid), or NULL for the server's only GPU. Needs no CUDA in this process.
 * A handle maps the whole memory block that holds the allocation, and cudaMalloc places buffers smaller
 * than 2 MiB inside larger blocks: the server refuses bytes past the block's end, but cannot tell the end
 * of such a buffer from its neighbours. lizard_trace_record_cuda sends the allocation's size and is held to
 * it; share buffers whose size is a multiple of 2 MiB where it matters. */
LizardTraceResult lizard_trace_record_ipc(LizardTraceClient *client, const char *module, const char *file,
                                          uint32_t line, const void *ipc_handle, uint64_t offset, size_t len,
                                          const void *device_uuid);

/* What went wrong in the last call of this thread that failed ("" before any): valid until the next
 * lizard_trace call on this thread. */
const char *lizard_trace_last_error(void);

/* The record calls with the caller's file and line filled in. */
#define LIZARD_TRACE_RECORD(client, module, data, len) \
    lizard_trace_record((client), (module), __FILE__, (uint32_t)__LINE__, (data), (len))
#define LIZARD_TRACE_RECORD_CUDA(client, module, device_ptr, len) \
    lizard_trace_record_cuda((client), (module), __FILE__, (uint32_t)__LINE__, (device_ptr), (len))
#define LIZARD_TRACE_RECORD_IPC(client, module, ipc_handle, offset, len, device_uuid) \
    lizard_trace_record_ipc((client), (module), __FILE__, (uint32_t)__LINE__, (ipc_handle), (offset), (len), \
                            (device_uuid))

#ifdef __cplusplus
}
#endif

#endif /* LIZARD_TRACE_H */
