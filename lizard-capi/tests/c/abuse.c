/*
 * abuse.c - every way a C caller can misuse liblizard.so, none of which may crash it.
 * Links against liblizard.so directly. Usage: abuse LIVE_PORT DEAD_PORT CYCLES
 * Prints "ok" and exits 0 when every check holds; otherwise names the failed check and exits 1.
 */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lizard/lizard_api.h"

static int failures = 0;
#define CHECK(cond)                                                                     \
    do {                                                                                \
        if (!(cond)) {                                                                  \
            fprintf(stderr, "check failed at line %d: %s\n", __LINE__, #cond);          \
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

static void null_context(const struct LizardApi *api)
{
    LizardCounterDescription d;
    memset(&d, 0xAB, sizeof d);
    api->Destroy(NULL);
    CHECK(api->GetAvailableCountersCount(NULL) == 0);
    CHECK(api->GetCounterDescription(NULL, 1, &d) == LZD_FAILURE);
    CHECK(((unsigned char *)&d)[0] == 0xAB);
    api->EnableCounter(NULL, 1);
    api->DisableCounter(NULL, 1);
    api->DisableAllCounters(NULL);
    CHECK(api->StartCapture(NULL) == LZD_FAILURE);
    CHECK(api->StopCapture(NULL) == LZD_FAILURE);
    CHECK(api->ReadCounterInt(NULL, 1) == 0);
    CHECK(api->ReadCounterDouble(NULL, 1) == 0.0);
    /* A handle that was never issued. */
    LizardInstance forged = (LizardInstance)&d;
    CHECK(api->GetAvailableCountersCount(forged) == 0);
    CHECK(api->StartCapture(forged) == LZD_FAILURE);
    api->Destroy(forged);
}

static void bad_init(const struct LizardApi *api)
{
    CHECK(api->Init(NULL, 8080) == NULL);
    CHECK(api->Init("127.0.0.1", -1) == NULL);
    CHECK(api->Init("127.0.0.1", 70000) == NULL);
}

static void bad_ids(const struct LizardApi *api, LizardInstance ctx)
{
    uint32_t n = api->GetAvailableCountersCount(ctx);
    LizardCounterDescription d;
    memset(&d, 0xAB, sizeof d);
    CHECK(n > 0);
    CHECK(api->GetCounterDescription(ctx, 0, &d) == LZD_FAILURE);
    CHECK(api->GetCounterDescription(ctx, n + 1, &d) == LZD_FAILURE);
    CHECK(api->GetCounterDescription(ctx, 0xFFFFFFFFu, &d) == LZD_FAILURE);
    CHECK(((unsigned char *)&d)[0] == 0xAB);
    CHECK(api->GetCounterDescription(ctx, 1, NULL) == LZD_FAILURE);
    CHECK(api->GetCounterDescription(ctx, n, &d) == LZD_OK && d.id == n);
    api->EnableCounter(ctx, 0);
    api->EnableCounter(ctx, n + 1);
    api->EnableCounter(ctx, 0xFFFFFFFFu);
    api->DisableCounter(ctx, 0);
    api->DisableCounter(ctx, n + 1);
    CHECK(api->ReadCounterInt(ctx, 0) == 0);
    CHECK(api->ReadCounterInt(ctx, n + 1) == 0);
    CHECK(api->ReadCounterDouble(ctx, 0) == 0.0);
    CHECK(api->ReadCounterDouble(ctx, 0xFFFFFFFFu) == 0.0);
}

static void cycles(const struct LizardApi *api, LizardInstance ctx, int count)
{
    uint32_t n = api->GetAvailableCountersCount(ctx);
    for (uint32_t id = 1; id <= n; id++) {
        api->EnableCounter(ctx, id);
    }
    /* One warm-up cycle opens whatever is kept open across captures. */
    api->StartCapture(ctx);
    api->StopCapture(ctx);
    int before = open_fds();
    for (int i = 0; i < count; i++) {
        CHECK(api->StartCapture(ctx) == LZD_OK);
        CHECK(api->StopCapture(ctx) == LZD_OK);
    }
    int after = open_fds();
    if (after != before) {
        fprintf(stderr, "fds before %d after %d\n", before, after);
    }
    CHECK(after == before);
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: %s LIVE_PORT DEAD_PORT CYCLES\n", argv[0]);
        return 2;
    }
    int live = atoi(argv[1]), dead = atoi(argv[2]), count = atoi(argv[3]);
    struct LizardApi *api = NULL;
    CHECK(LoadApi(NULL) == LZD_FAILURE);
    if (LoadApi(&api) != LZD_OK || api == NULL) {
        fprintf(stderr, "LoadApi failed\n");
        return 1;
    }

    null_context(api);
    bad_init(api);

    LizardInstance ctx = api->Init("127.0.0.1", live);
    CHECK(ctx != NULL);
    if (ctx != NULL) {
        bad_ids(api, ctx);
        CHECK(api->StopCapture(ctx) == LZD_FAILURE); /* no capture running */
        cycles(api, ctx, count);
        /* Destroy while a capture runs: the threads are stopped and joined. */
        CHECK(api->StartCapture(ctx) == LZD_OK);
        api->Destroy(ctx);
        /* The destroyed handle is now invalid, not dangling. */
        CHECK(api->GetAvailableCountersCount(ctx) == 0);
        CHECK(api->ReadCounterInt(ctx, 1) == 0);
        CHECK(api->StopCapture(ctx) == LZD_FAILURE);
        api->Destroy(ctx);
    }

    /* Nothing listens on the dead port: Init returns promptly, with HWCPipe counters or NULL. */
    LizardInstance local = api->Init("127.0.0.1", dead);
    if (local != NULL) {
        CHECK(api->GetAvailableCountersCount(local) > 0);
        api->Destroy(local);
    }

    if (failures != 0) {
        fprintf(stderr, "%d checks failed\n", failures);
        return 1;
    }
    printf("ok\n");
    return 0;
}
