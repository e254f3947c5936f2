/*
 * trace_client.c - the trace client of lizard_trace.h from C: host records the test reads back from the
 * server's ring, and every misuse, none of which may crash.
 * Usage: trace_client SOCKET CYCLES
 * SOCKET is the live trace server ("@name"). Prints "line NAME N" for each record whose line the test
 * checks, then "ok" and exits 0 when every check holds; otherwise names the failed check and exits 1.
 */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

static int open_fds(void)
{
    DIR *dir = opendir("/proc/self/fd");
    int n = 0;
    if (dir == NULL) {
        return -1;
    }
    while (readdir(dir) != NULL) {
        n++;
    }
    closedir(dir);
    return n;
}

static int last_error_mentions(const char *word)
{
    const char *text = lizard_trace_last_error();
    return text != NULL && strstr(text, word) != NULL;
}

/* Records the test reads back: their module, file, line and bytes must arrive exactly. */
static void records(LizardTraceClient *client)
{
    static const char hello[] = "hello from C";
    unsigned char *big = (unsigned char *)malloc(100000);
    size_t i;
    int line;
    CHECK(big != NULL);
    if (big == NULL) {
        return;
    }
    for (i = 0; i < 100000; i++) {
        big[i] = (unsigned char)(i * 7);
    }
    line = __LINE__ + 1;
    CHECK(LIZARD_TRACE_RECORD(client, "cmodule", hello, sizeof hello - 1) == LZT_OK);
    printf("line hello %d\n", line);
    line = __LINE__ + 1;
    CHECK(LIZARD_TRACE_RECORD(client, "ten-bytes!", big, 100000) == LZT_OK);
    printf("line big %d\n", line);
    CHECK(lizard_trace_record(client, "empty", "some/dir/explicit.c", 4242, NULL, 0) == LZT_OK);
    free(big);
}

/* Every misuse gets its code and a message; none crashes. */
static void misuse(const char *socket, LizardTraceClient *client)
{
    LizardTraceClient *out = (LizardTraceClient *)0x1;
    LizardTraceClient *forged = (LizardTraceClient *)&out;
    LizardTraceOptions options;
    unsigned char handle[64];
    unsigned char uuid[16];
    int local = 5;

    /* Connecting. */
    CHECK(lizard_trace_connect(socket, NULL) == LZT_ERR_NULL);
    CHECK(lizard_trace_connect("@lizard-trace-nobody-listens-here", &out) == LZT_ERR_CONNECT);
    CHECK(out == (LizardTraceClient *)0x1);
    CHECK(last_error_mentions("connect"));
    CHECK(lizard_trace_connect("", &out) == LZT_ERR_ARGUMENT);
    memset(&options, 0, sizeof options);
    CHECK(lizard_trace_connect_with(socket, &options, &out) == LZT_ERR_ARGUMENT);
    CHECK(last_error_mentions("options.size"));
    options.size = sizeof options;
    options.device_mode = 7;
    CHECK(lizard_trace_connect_with(socket, &options, &out) == LZT_ERR_ARGUMENT);
    CHECK(out == (LizardTraceClient *)0x1);

    /* Clients that are not. */
    CHECK(lizard_trace_record(NULL, "m", "f.c", 1, "x", 1) == LZT_ERR_NULL);
    CHECK(lizard_trace_record(forged, "m", "f.c", 1, "x", 1) == LZT_ERR_NOT_A_CLIENT);
    CHECK(lizard_trace_close(forged) == LZT_ERR_NOT_A_CLIENT);
    CHECK(lizard_trace_close(NULL) == LZT_ERR_NULL);

    /* Arguments. */
    CHECK(lizard_trace_record(client, NULL, "f.c", 1, "x", 1) == LZT_ERR_NULL);
    CHECK(lizard_trace_record(client, "m", NULL, 1, "x", 1) == LZT_ERR_NULL);
    CHECK(lizard_trace_record(client, "m", "f.c", 1, NULL, 1) == LZT_ERR_NULL);
    CHECK(lizard_trace_record(client, "eleven-char", "f.c", 1, "x", 1) == LZT_ERR_ARGUMENT);
    CHECK(last_error_mentions("module"));
    CHECK(lizard_trace_record(client, "\xff\xfe", "f.c", 1, "x", 1) == LZT_ERR_ARGUMENT);

    /* Device memory: a NULL pointer, a host pointer, a handle the server cannot open. */
    CHECK(lizard_trace_record_cuda(client, "gpu", "f.c", 1, NULL, 8) == LZT_ERR_NULL);
    {
        LizardTraceResult r = LIZARD_TRACE_RECORD_CUDA(client, "gpu", &local, sizeof local);
        /* No driver here: LZT_ERR_NO_CUDA; with one, a host pointer is not device memory. */
        CHECK(r == LZT_ERR_NO_CUDA || r == LZT_ERR_NOT_DEVICE_MEMORY);
    }
    CHECK(lizard_trace_record_ipc(client, "gpu", "f.c", 1, NULL, 0, 8, NULL) == LZT_ERR_NULL);
    memset(handle, 0x5a, sizeof handle);
    memset(uuid, 0x11, sizeof uuid);
    /* The server either cannot read device memory or cannot open this handle, or has no such GPU: it
     * refuses and says why, and the connection stays usable. */
    CHECK(LIZARD_TRACE_RECORD_IPC(client, "gpu", handle, 0, 8, NULL) == LZT_ERR_REFUSED);
    CHECK(last_error_mentions("refused"));
    CHECK(LIZARD_TRACE_RECORD_IPC(client, "gpu", handle, 0, 8, uuid) == LZT_ERR_REFUSED);
    CHECK(lizard_trace_record_ipc(client, "gpu", "f.c", 1, handle, 0, (size_t)1 << 33, NULL) ==
          LZT_ERR_OUT_OF_RANGE);
    CHECK(lizard_trace_last_error() != NULL);
}

/* A closed client is dead: every call on it fails cleanly. */
static void closed(const char *socket)
{
    LizardTraceClient *client = NULL;
    CHECK(lizard_trace_connect(socket, &client) == LZT_OK);
    CHECK(lizard_trace_close(client) == LZT_OK);
    CHECK(lizard_trace_close(client) == LZT_ERR_NOT_A_CLIENT);
    CHECK(lizard_trace_record(client, "m", "f.c", 1, "x", 1) == LZT_ERR_NOT_A_CLIENT);
    CHECK(lizard_trace_record_cuda(client, "m", "f.c", 1, &client, 8) == LZT_ERR_NOT_A_CLIENT);
    CHECK(last_error_mentions("not a live client"));
}

int main(int argc, char **argv)
{
    LizardTraceClient *client = NULL;
    LizardTraceOptions options;
    int cycles, before, after, i;
    if (argc != 3) {
        fprintf(stderr, "usage: trace_client SOCKET CYCLES\n");
        return 2;
    }
    cycles = atoi(argv[2]);
    CHECK(strcmp(lizard_trace_last_error(), "") == 0);

    memset(&options, 0, sizeof options);
    options.size = sizeof options;
    options.device_mode = LZT_DEVICE_SYNC;
    options.deadline_ms = 10000;
    CHECK(lizard_trace_connect_with(argv[1], &options, &client) == LZT_OK);
    if (client == NULL) {
        return 1;
    }
    records(client);
    misuse(argv[1], client);
    CHECK(lizard_trace_close(client) == LZT_OK);
    closed(argv[1]);

    /* Connections come and go without leaking a descriptor. */
    before = open_fds();
    for (i = 0; i < cycles; i++) {
        LizardTraceClient *c = NULL;
        CHECK(lizard_trace_connect(argv[1], &c) == LZT_OK);
        CHECK(lizard_trace_record(c, "cycle", "f.c", (uint32_t)i, &i, sizeof i) == LZT_OK);
        CHECK(lizard_trace_close(c) == LZT_OK);
    }
    after = open_fds();
    CHECK(before == after);

    if (failures != 0) {
        fprintf(stderr, "%d checks failed\n", failures);
        return 1;
    }
    printf("ok\n");
    return 0;
}
