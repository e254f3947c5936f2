/*
 * lizard_demo.c - uses liblizard.so the way RenderDoc's ARM counter backend does:
 * dlopen, LoadApi, check the version, Init, enumerate the counters, enable them, then for each "draw"
 * StartCapture / StopCapture / ReadCounterInt or ReadCounterDouble by result type, and Destroy.
 *
 * Build:  gcc -std=c99 -Wall -Wextra -Werror -I lizard-capi/include lizard_demo.c -o lizard_demo -ldl
 * Run:    ./lizard_demo target/release/liblizard.so 127.0.0.1 8080 3 [WORK]
 *
 * WORK is the number of loop iterations each "draw" spends between StartCapture and StopCapture (default
 * 2000000). Output, one line each: "counters N", "counter ID TYPE CLASS UNITS SHORT_NAME|TITLE|NAME|CATEGORY",
 * then per draw "window D INNER_NS OUTER_NS" (the time from after StartCapture to before StopCapture, and from
 * before StartCapture to after StopCapture: the capture window lies between the two), "draw D ID VALUE" and
 * "reads D NS" (how long the draw's reads took, printing included), and finally "done".
 */
#define _POSIX_C_SOURCE 200809L
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lizard/lizard_api.h"

/* Some work between StartCapture and StopCapture, standing in for a draw call. */
static volatile unsigned long sink;
static void draw(unsigned long work)
{
    for (unsigned long i = 0; i < work; i++) {
        sink += i;
    }
}

static long long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int main(int argc, char **argv)
{
    if (argc != 5 && argc != 6) {
        fprintf(stderr, "usage: %s LIBRARY HOST PORT DRAWS [WORK]\n", argv[0]);
        return 2;
    }
    unsigned long work = argc == 6 ? strtoul(argv[5], NULL, 10) : 2000000UL;
    void *library = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) {
        fprintf(stderr, "dlopen: %s\n", dlerror());
        return 1;
    }
    LZD_LoadApi_PFN load_api;
    /* POSIX guarantees a data pointer from dlsym converts to a function pointer. */
    *(void **)(&load_api) = dlsym(library, "LoadApi");
    struct LizardApi *api = NULL;
    if (load_api == NULL || load_api(&api) != LZD_OK || api == NULL) {
        fprintf(stderr, "LoadApi failed\n");
        return 1;
    }
    if (api->version != LIZARD_VERSION_0_1 || api->struct_size != (int)sizeof(struct LizardApi)) {
        fprintf(stderr, "unexpected table version %d size %d\n", api->version, api->struct_size);
        return 1;
    }

    LizardInstance ctx = api->Init(argv[2], atoi(argv[3]));
    if (ctx == NULL) {
        fprintf(stderr, "Init failed\n");
        return 1;
    }
    uint32_t count = api->GetAvailableCountersCount(ctx);
    printf("counters %u\n", (unsigned)count);
    if (count == 0) {
        api->Destroy(ctx);
        return 1;
    }
    LizardCounterDescription *descriptions = (LizardCounterDescription *)calloc(count, sizeof *descriptions);
    if (descriptions == NULL) {
        api->Destroy(ctx);
        return 1;
    }
    for (uint32_t id = 1; id <= count; id++) {
        LizardCounterDescription *d = &descriptions[id - 1];
        if (api->GetCounterDescription(ctx, id, d) != LZD_OK || d->id != id) {
            fprintf(stderr, "GetCounterDescription(%u) failed\n", (unsigned)id);
            free(descriptions);
            api->Destroy(ctx);
            return 1;
        }
        printf("counter %u %u %u %u %s|%s|%s|%s\n", (unsigned)id, (unsigned)d->result_type,
               (unsigned)d->class_type, (unsigned)d->units, d->short_name, d->title, d->name, d->category);
        api->EnableCounter(ctx, id);
    }

    int draws = atoi(argv[4]);
    for (int n = 0; n < draws; n++) {
        long long before_start = now_ns();
        if (api->StartCapture(ctx) != LZD_OK) {
            fprintf(stderr, "StartCapture failed in draw %d\n", n);
            continue;
        }
        long long started = now_ns();
        draw(work);
        long long stopping = now_ns();
        if (api->StopCapture(ctx) != LZD_OK) {
            fprintf(stderr, "StopCapture reported a failure in draw %d\n", n);
        }
        printf("window %d %lld %lld\n", n, stopping - started, now_ns() - before_start);
        long long reading = now_ns();
        for (uint32_t id = 1; id <= count; id++) {
            if (descriptions[id - 1].result_type == LZD_TYPE_INT) {
                printf("draw %d %u %lld\n", n, (unsigned)id, (long long)api->ReadCounterInt(ctx, id));
            } else {
                printf("draw %d %u %.6f\n", n, (unsigned)id, api->ReadCounterDouble(ctx, id));
            }
        }
        printf("reads %d %lld\n", n, now_ns() - reading);
    }

    free(descriptions);
    api->Destroy(ctx);
    dlclose(library);
    printf("done\n");
    return 0;
}
