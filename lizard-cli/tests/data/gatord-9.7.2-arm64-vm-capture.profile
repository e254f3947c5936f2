# gatord 9.7.2 (aarch64, static) in the emulated Arm system of .ci/gatord-tests (6.1 kernel, Cortex-A72, -icount), tracefs mounted:
# the profile of `lizard capture` of ARMv8_Cortex_A72_ccnt, ARMv8_Cortex_A72:INST_RETIRED and Linux_meminfo_memfree for 3 s
# (live_rate 100 ms), recorded through a proxy by lizard-cli/tests/gatord_real.rs (the_simulator_streams_as_the_daemon_does).
protocol 950
frame types, first seen in this order: PERF_ATTRS EXTERNAL SUMMARY BLOCK_COUNTER PERF_DATA
capture end: the zero-length end marker
counter ARMv8_Cortex_A72_ccnt (event 0x11): values in PERF_DATA samples; perf event type 8 config 0x11 size 144 period 0 sample_type 0x10214 read_format 0xf flags 0x2044000 clockid 4: read in the group's samples, ids on 1 CPU(s)
counter ARMv8_Cortex_A72_cnt0 (event 0x8): values in PERF_DATA samples; perf event type 8 config 0x8 size 144 period 0 sample_type 0x10214 read_format 0xf flags 0x2044000 clockid 4: read in the group's samples, ids on 1 CPU(s)
counter Linux_meminfo_memfree: values in BLOCK_COUNTER frames
counter ARM_Mali-CONST_BUS_WIDTH_BITS: no values
counter ARM_Mali-CONST_L2_SLICE_COUNT: no values
counter ARM_Mali-CONST_SHADER_CORE_COUNT: no values
perf event of gatord's own: type 1 config 0x0 size 144 period 991080 sample_type 0x10217 read_format 0xf flags 0x2044000 clockid 4: samples, ids on 1 CPU(s)
perf event of gatord's own: type 1 config 0x9 size 144 period 0 sample_type 0x10204 read_format 0x7 flags 0x403846305 clockid 4: counting only, ids on 1 CPU(s)
perf event of gatord's own: type 2 config 0x108 size 144 period 1 sample_type 0x10716 read_format 0xf flags 0x403846305 clockid 4: samples, ids on 1 CPU(s)
BLOCK_COUNTER sample period: 100 ms
perf samples: nine gaps in ten within: 1 ms
BLOCK_COUNTER frames reach the socket every: 100 ms
PERF_DATA frames reach the socket every: 100 ms
the first PERF_DATA frame comes after the first BLOCK_COUNTER frame by: 100 ms
