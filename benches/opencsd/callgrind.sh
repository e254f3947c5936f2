#!/usr/bin/env bash
# Instructions of lizard-rs' STP decoder and STM pipeline against OpenCSD's on the same bytes, counted by
# callgrind over the measured function alone (`--toggle-collect`), and their ratios.
#
#   bash benches/opencsd/callgrind.sh
#
# Needs valgrind and Debian's libopencsd-dev (OpenCSD 1.3.3: `apt-get install libopencsd-dev valgrind`).
set -euo pipefail
cd "$(dirname "$0")/../.."
work=target/opencsd
mkdir -p "$work"
cargo build -q --release -p lizard-benches --example stp_instructions
ours=target/release/examples/stp_instructions
for harness in stm_packets stm_full; do
    gcc -O2 -Wall -o "$work/$harness" "benches/opencsd/$harness.c" -lopencsd_c_api -lopencsd
done
count() { # OUTPUT-FILE COMMAND...: the instructions callgrind counted in the measured function
    local out=$1
    shift
    valgrind --tool=callgrind --toggle-collect='*measure*' --callgrind-out-file="$out" "$@" >&2 2>"$out.log" ||
        { cat "$out.log" >&2; exit 1; }
    sed -n 's/^==[0-9]*== Collected : \([0-9]*\)$/\1/p' "$out.log"
}
"$ours" stream "$work/stream.bin" >&2
"$ours" pipeline "$work/buffer.bin" >&2
ours_stream=$(count "$work/ours-stream.cg" "$ours" stream)
ours_pipeline=$(count "$work/ours-pipeline.cg" "$ours" pipeline)
opencsd_stream=$(count "$work/opencsd-stream.cg" "$work/stm_packets" "$work/stream.bin")
opencsd_pipeline=$(count "$work/opencsd-pipeline.cg" "$work/stm_full" "$work/buffer.bin")
awk -v a="$ours_stream" -v b="$opencsd_stream" -v c="$ours_pipeline" -v d="$opencsd_pipeline" 'BEGIN {
    printf "STP decoder alone: %d instructions against OpenCSD packet processor %d: %.2f x fewer\n", a, b, b / a
    printf "STM pipeline:      %d instructions against OpenCSD full decoder   %d: %.2f x fewer\n", c, d, d / c
}'
