/*
 * lizard_demo.c - uses liblizard.so the way RenderDoc's ARM counter backend does:
 * dlopen, LoadApi, check the version, Init, enumerate the counters, enable them, then for each "draw"
 * StartCapture / StopCapture / ReadCounterInt or ReadCounterDouble by result type, and Destroy.
 *
 * Build:  gcc -std=c99 -Wall -Wextra -Werror -I lizard-capi/include lizard_demo.c -o lizard_demo -ldl
 * Run:    ./lizard_demo target/release/liblizard.so 127.0.0.1 8080 3
 *
 * Output, one line each: "counters N", "counter ID TYPE CLASS UNITS SHORT_NAME|TITLE|NAME|CATEGORY",
 * "draw D ID VALUE", and finally "done".
 */
#define _POSIX_C_SOURCE 200809L
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lizard/lizard_api.h"

/* Some work between StartCapture and StopCapture, standing in for a draw call. */
static volatile unsigned long sink;
static void draw(void)
{
    for (unsigned long i = 0; i < 2000000; i++) {
        sink += i;
    }
}

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: %s LIBRARY HOST PORT DRAWS\n", argv[0]);
        return 2;
    }
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
        if (api->StartCapture(ctx) != LZD_OK) {
            fprintf(stderr, "StartCapture failed in draw %d\n", n);
            continue;
        }
        draw();
        if (api->StopCapture(ctx) != LZD_OK) {
            fprintf(stderr, "StopCapture reported a failure in draw %d\n", n);
        }
        for (uint32_t id = 1; id <= count; id++) {
            if (descriptions[id - 1].result_type == LZD_TYPE_INT) {
                printf("draw %d %u %lld\n", n, (unsigned)id, (long long)api->ReadCounterInt(ctx, id));
            } else {
                printf("draw %d %u %.6f\n", n, (unsigned)id, api->ReadCounterDouble(ctx, id));
            }
        }
    }

    free(descriptions);
    api->Destroy(ctx);
    dlclose(library);
    printf("done\n");
    return 0;
}
