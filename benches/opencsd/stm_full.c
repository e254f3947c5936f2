/* OpenCSD's full STM decoder (deformatter, packet processor, packet decoder) over a formatted trace buffer,
 * for an instruction count under callgrind (`--toggle-collect=measure`) beside lizard-rs' STM pipeline
 * (`callgrind.sh`). Links Debian's libopencsd. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <opencsd/c_api/opencsd_c_api.h>
#include "input.h"

static unsigned long elements;

static ocsd_datapath_resp_t on_element(const void *ctx, const ocsd_trc_index_t index, const uint8_t id,
                                       const ocsd_generic_trace_elem *element) {
    (void)ctx;
    (void)index;
    (void)id;
    (void)element;
    elements++;
    return OCSD_RESP_CONT;
}

__attribute__((noinline)) unsigned long measure(const unsigned char *data, size_t len) {
    dcd_tree_handle_t tree = ocsd_create_dcd_tree(OCSD_TRC_SRC_FRAME_FORMATTED, OCSD_DFRMTR_FRAME_MEM_ALIGN);
    ocsd_stm_cfg cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.reg_tcsr = 0x20 << 16;
    cfg.reg_feat3r = 0x7f;
    cfg.reg_devid = 0xff;
    unsigned char id = 0;
    if (!tree || ocsd_dt_create_decoder(tree, OCSD_BUILTIN_DCD_STM, OCSD_CREATE_FLG_FULL_DECODER, &cfg, &id) != OCSD_OK)
        fail("cannot create OpenCSD's STM decoder");
    ocsd_dt_set_gen_elem_outfn(tree, on_element, NULL);
    feed(tree, data, len);
    ocsd_destroy_dcd_tree(tree);
    return elements;
}

int main(int argc, char **argv) {
    size_t len = 0;
    unsigned char *data = read_input(argc, argv, &len);
    printf("opencsd pipeline: %lu elements from %zu bytes\n", measure(data, len), len);
    free(data);
    return 0;
}
