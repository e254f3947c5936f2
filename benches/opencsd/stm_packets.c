/* OpenCSD's STM packet processor alone over a raw STP stream, for an instruction count under callgrind
 * (`--toggle-collect=measure`) beside lizard-rs' StpDecoder (`callgrind.sh`). Links Debian's libopencsd. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <opencsd/c_api/opencsd_c_api.h>
#include "input.h"

static unsigned long packets;

static ocsd_datapath_resp_t on_packet(const void *ctx, const ocsd_datapath_op_t op,
                                      const ocsd_trc_index_t index, const void *packet) {
    (void)ctx;
    (void)index;
    (void)packet;
    if (op == OCSD_OP_DATA)
        packets++;
    return OCSD_RESP_CONT;
}

__attribute__((noinline)) unsigned long measure(const unsigned char *data, size_t len) {
    dcd_tree_handle_t tree = ocsd_create_dcd_tree(OCSD_TRC_SRC_SINGLE, 0);
    ocsd_stm_cfg cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.reg_tcsr = 0x20 << 16;
    cfg.reg_feat3r = 0x7f;
    cfg.reg_devid = 0xff;
    unsigned char id = 0;
    if (!tree || ocsd_dt_create_decoder(tree, OCSD_BUILTIN_DCD_STM, OCSD_CREATE_FLG_PACKET_PROC, &cfg, &id) != OCSD_OK)
        fail("cannot create OpenCSD's STM packet processor");
    ocsd_dt_attach_packet_callback(tree, id, OCSD_C_API_CB_PKT_SINK, (void *)on_packet, NULL);
    feed(tree, data, len);
    ocsd_destroy_dcd_tree(tree);
    return packets;
}

int main(int argc, char **argv) {
    size_t len = 0;
    unsigned char *data = read_input(argc, argv, &len);
    printf("opencsd stream: %lu packets from %zu bytes\n", measure(data, len), len);
    free(data);
    return 0;
}
