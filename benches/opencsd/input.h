/* What both OpenCSD harnesses share: reading the input file and feeding it to a decode tree. */
#ifndef STM_HARNESS_INPUT_H
#define STM_HARNESS_INPUT_H

#include <stdio.h>
#include <stdlib.h>
#include <opencsd/c_api/opencsd_c_api.h>

static void fail(const char *what) {
    fprintf(stderr, "%s\n", what);
    exit(1);
}

/* The bytes of the file argv[1]. */
static unsigned char *read_input(int argc, char **argv, size_t *len) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s INPUT\n", argv[0]);
        exit(2);
    }
    FILE *f = fopen(argv[1], "rb");
    if (!f || fseek(f, 0, SEEK_END) != 0)
        fail("cannot read the input");
    long size = ftell(f);
    if (size <= 0 || fseek(f, 0, SEEK_SET) != 0)
        fail("empty input");
    unsigned char *data = malloc((size_t)size);
    if (!data || fread(data, 1, (size_t)size, f) != (size_t)size)
        fail("cannot read the input");
    fclose(f);
    *len = (size_t)size;
    return data;
}

/* The whole input through the tree, then the end of trace. */
static void feed(dcd_tree_handle_t tree, const unsigned char *data, size_t len) {
    size_t done = 0;
    while (done < len) {
        uint32_t n = 0;
        ocsd_datapath_resp_t r = ocsd_dt_process_data(tree, OCSD_OP_DATA, done, (uint32_t)(len - done), data + done, &n);
        if (OCSD_DATA_RESP_IS_FATAL(r) || n == 0)
            fail("OpenCSD stopped decoding");
        done += n;
    }
    uint32_t n = 0;
    ocsd_dt_process_data(tree, OCSD_OP_EOT, 0, 0, NULL, &n);
}

#endif
