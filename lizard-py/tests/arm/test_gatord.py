"""The real gatord 9.7.2 (Arm's daemon, built for aarch64) from Python, in the emulated Arm system under
-icount: its Cortex-A72 counter set (the cycle counter, INST_RETIRED programmed into a slot), its CPU metrics,
and a Session read region by region. Under -icount one instruction is one cycle of a 1 GHz clock, so while
`arm_loop` keeps the CPU busy, cycles and instructions agree, and a waiting CPU counts cycles alone.
"""

import time

import numpy as np
import pytest

import lizard_rs
from guest import Busy, arm_loop, icount, note, real_gatord  # noqa: F401 (fixtures)

CYCLES = "ARMv8_Cortex_A72_ccnt"
INSTRUCTIONS = "ARMv8_Cortex_A72:INST_RETIRED"
IPC = "ARMv8_Cortex_A72_metric_ipc"
CPI = "ARMv8_Cortex_A72_metric_cpi"


def test_counters_lists_the_daemons_counter_set_and_metrics(icount, real_gatord):
    listed = lizard_rs.counters(gatord=real_gatord)
    by_name = {c.name: c for c in listed}
    for name in (CYCLES, INSTRUCTIONS, IPC, CPI):
        assert name in by_name, f"{name} is not among {len(listed)} counters"
        assert by_name[name].source == "gatord"
    assert by_name[INSTRUCTIONS].event == "0x08"
    metrics = [c.name for c in listed if c.name.startswith("ARMv8_Cortex_A72_metric_")]
    # gatord alone gives the counters: the local ones (and the CPU's events by mnemonic) do not join.
    assert all(c.source == "gatord" for c in listed)
    note(
        f"lizard_rs.counters(gatord='{real_gatord}'): {len(listed)} counters of gatord 9.7.2, the "
        f"Cortex-A72's counter set ({INSTRUCTIONS} is event {by_name[INSTRUCTIONS].event}) and "
        f"{len(metrics)} of its CPU metrics"
    )


def test_a_capture_gives_cycles_instructions_and_the_cpu_metrics(icount, real_gatord, arm_loop):
    busy = Busy(arm_loop)
    try:
        time.sleep(0.3)
        capture = lizard_rs.capture(duration=3.0, counters=[CYCLES, INSTRUCTIONS, IPC, CPI], gatord=real_gatord)
    finally:
        busy.stop()
    cycles, instructions, ipc, cpi = (capture[n] for n in (CYCLES, INSTRUCTIONS, IPC, CPI))
    for counter in (cycles, instructions):
        assert counter.source == "gatord" and counter.counter_class == "delta"
        assert counter.timestamps.dtype == np.uint64 and counter.values.dtype == np.float64
        assert len(counter) > 10, f"{counter.name}: {len(counter)} samples"
        assert counter.value == pytest.approx(np.nansum(counter.values), rel=1e-9)
    # One instruction a cycle: the two differ only by what ran between gatord's reads of each.
    gap = abs(cycles.value - instructions.value)
    assert gap < 1e-3 * cycles.value, (cycles.value, instructions.value)
    per_second = cycles.value / cycles.covered_s
    assert 0.9e9 < per_second < 1.1e9, per_second
    # gatord's metrics agree with the counters' own ratio: it computes them from events it programs for them
    # and samples on their own overflows, which end their counts up to a sampling period early (cpi has
    # read 0.9916 where the ratio was 1.0000).
    ratio = instructions.value / cycles.value
    assert ipc.value == pytest.approx(ratio, abs=0.02), (ipc.value, ratio)
    assert cpi.value == pytest.approx(1 / ratio, abs=0.02), (cpi.value, ratio)
    assert len(ipc) > 0 and len(cpi) > 0
    note(
        f"lizard_rs.capture(gatord='{real_gatord}') of the CPU kept busy by arm_loop: {CYCLES} "
        f"{cycles.value:,.0f} and {INSTRUCTIONS} {instructions.value:,.0f} over {len(cycles)} samples "
        f"({per_second / 1e9:.3f} G a second; they differ by {gap:,.0f}); {IPC} {ipc.value:.4f}, {CPI} "
        f"{cpi.value:.4f}"
    )


def test_a_session_reads_gatords_counters_region_by_region(icount, real_gatord, arm_loop):
    # The loop runs in processes of its own while this one waits: a Session also opens this process's own
    # local counters (as the C API does), and while this process runs they take PMU counters from gatord's
    # (a loop run from here read as few as 0.67 instructions a cycle, fewer than its own runs executed).
    with lizard_rs.Session(counters=[CYCLES, INSTRUCTIONS], gatord=real_gatord) as session:
        assert session.counters == [CYCLES, INSTRUCTIONS]
        # gatord's perf samples start a little after its session: the first region waits for them.
        time.sleep(0.5)
        assert session.read()[CYCLES] is not None, session.no_value
        busy = Busy(arm_loop)
        try:
            time.sleep(0.6)
            busy_region = session.read()
        finally:
            busy.stop()
        time.sleep(0.6)
        idle_region = session.read()
        no_value = session.no_value
    for region in (busy_region, idle_region):
        assert region[CYCLES] and region[INSTRUCTIONS] is not None, (region, no_value)
        # Each region is 0.6 s of the emulated 1 GHz clock, read from gatord's samples around it (1 ms apart).
        assert 0.55e9 < region[CYCLES] < 0.7e9, region
    # Busy, one instruction a cycle; waiting, the cycle counter goes on alone.
    assert busy_region[INSTRUCTIONS] == pytest.approx(busy_region[CYCLES], rel=1e-3), busy_region
    assert idle_region[INSTRUCTIONS] < 0.1 * idle_region[CYCLES], idle_region
    note(
        f"lizard_rs.Session(gatord='{real_gatord}'), region by region: arm_loop over and over for 0.6 s: "
        f"{busy_region[INSTRUCTIONS]:,.0f} instructions in {busy_region[CYCLES]:,.0f} cycles; waiting 0.6 s: "
        f"{idle_region[INSTRUCTIONS]:,.0f} instructions in {idle_region[CYCLES]:,.0f} cycles"
    )
