"""Arm PMU events by name from Python, judged by a real Arm kernel and PMU: the emulated Arm system under
-icount (QEMU's Cortex-A72, whose PMU counts CPU_CYCLES and INST_RETIRED, every instruction one cycle of a
1 GHz clock), with `arm_loop`, which executes exactly 2 000 005 instructions at EL0.

A capture counts the whole CPU here (the default local target): the kernel samples the named events alone,
one group read per sample, so nothing is multiplexed and every sample's counts come from one instant.
"""

import ctypes
import os
import select
import signal
import subprocess
import threading
import time

import numpy as np
import pytest

import lizard_rs
from guest import ARM_LOOP_INSTRUCTIONS, Busy, arm_loop, icount, note  # noqa: F401 (fixtures)

EVENTS = ["INST_RETIRED", "CPU_CYCLES"]


def test_counters_lists_the_cpus_arm_events(icount, shared_data, monkeypatch):
    # Arm's per-core lists, as a user names them, give the core's name and each event's description.
    monkeypatch.setenv("LIZARD_PMU_DATA", str(shared_data / "arm-pmu-data"))
    listed = lizard_rs.counters(gatord=False)
    events = {c.name: c for c in listed if c.category == "Arm PMU event"}
    hwcpipe = [c for c in listed if c.category == "HWCPipe CPU Counter"]
    assert {"INST_RETIRED", "CPU_CYCLES"} <= set(events), sorted(events)
    assert len({c.id for c in listed}) == len(listed), "every listed counter has its own id"
    inst, cycles = events["INST_RETIRED"], events["CPU_CYCLES"]
    assert (inst.source, inst.counter_class, inst.units) == ("cpu", "delta", "events")
    assert cycles.units == "cycles"
    assert "instruction" in inst.description.lower(), inst.description
    assert hwcpipe and inst.scope == hwcpipe[0].scope, "counted by the local CPU counters, as they are"
    # QEMU's PMU does not implement the stall events (PMCEID0/1_EL0): they are not offered.
    assert "STALL_BACKEND" not in events
    note(
        f"lizard_rs.counters(): {len(events)} Arm PMU events of the Cortex-A72 listed beside "
        f"{len(hwcpipe)} HWCPipe counters, among them INST_RETIRED ({inst.units}) and CPU_CYCLES "
        f"({cycles.units}); the stall events QEMU's PMU lacks are not"
    )


def test_stat_counts_the_loop_exactly_by_event_name_and_gives_ipc(icount, arm_loop):
    seen = {}
    for spelling in (EVENTS, ["inst_retired", "cpu_cycles"], ["0x08", "0x11"]):
        report = lizard_rs.stat([str(arm_loop)], spelling, user_only=True, metrics=True)
        assert report["exit_code"] == 0 and report["kernel_excluded"] is True
        rows = {row["counter"]: row for row in report["counters"]}
        for name in EVENTS:
            row = rows[name]
            assert row["value"] == ARM_LOOP_INSTRUCTIONS, (spelling, row)
            assert row["multiplexed"] is False and row["counted_share"] == 1.0, row
        ipc = next(m for m in report["metrics"] if m["metric"] == "IPC" and m["pmu"] is None)
        assert ipc["formula"] == "INST_RETIRED / CPU_CYCLES", ipc
        assert ipc["value"] == 1.0, ipc
        seen[",".join(spelling)] = rows["INST_RETIRED"]["value"]
    note(
        f"lizard_rs.stat(arm_loop, INST_RETIRED/inst_retired/0x08 with CPU_CYCLES, user_only): "
        f"INST_RETIRED {ARM_LOOP_INSTRUCTIONS:,} exactly, the loop's own count, each spelling, not "
        f"multiplexed; CPU_CYCLES {ARM_LOOP_INSTRUCTIONS:,}; IPC {ipc['value']:.4f} from {ipc['formula']}"
    )


def test_a_capture_of_the_busy_cpu_counts_one_instruction_a_cycle_in_every_sample(icount, arm_loop):
    busy = Busy(arm_loop)
    try:
        time.sleep(0.3)
        capture = lizard_rs.capture(duration=1.0, counters=EVENTS, gatord=False, interval=0.01)
    finally:
        busy.stop()
    assert capture.names == EVENTS
    assert capture.sampling["method"] == "kernel", capture.sampling
    inst, cycles = capture["INST_RETIRED"], capture["CPU_CYCLES"]
    assert inst.timestamps.dtype == np.uint64 and inst.values.dtype == np.float64
    assert len(inst) == len(cycles) >= 90
    assert np.array_equal(inst.timestamps, cycles.timestamps)
    assert np.all(np.diff(inst.timestamps.astype(np.int64)) > 0)
    # The loop never lets the CPU wait: one instruction a cycle in every sample. The first and the last are
    # read apart from the kernel's sampling (the capture's start and stop), a few hundred instructions apart.
    assert np.array_equal(inst.values[1:-1], cycles.values[1:-1])
    assert np.all(np.abs(inst.values[[0, -1]] - cycles.values[[0, -1]]) < 1000)
    assert inst.value == pytest.approx(np.sum(inst.values), rel=1e-12)
    # A cycle is a nanosecond of the emulated clock: the samples cover the time between their timestamps.
    span_ns = float(inst.timestamps[-1] - inst.timestamps[0])
    assert np.sum(cycles.values[1:]) == pytest.approx(span_ns, rel=2e-3)
    note(
        f"lizard_rs.capture(INST_RETIRED, CPU_CYCLES) of the CPU kept busy by arm_loop: {len(inst)} samples "
        f"as NumPy arrays, sampled by the kernel (nothing multiplexed); INST_RETIRED {np.sum(inst.values):,.0f}, "
        f"CPU_CYCLES {np.sum(cycles.values):,.0f}, equal in every sample but the first and last; "
        f"{np.sum(cycles.values[1:]) / span_ns:.5f} cycles per ns of the samples' span"
    )


def test_a_capture_holds_the_loops_instructions_in_the_samples_it_ran_in(icount, arm_loop):
    # The loop starts stopped before its first instruction (traced, it stops at exec), is let go while the
    # capture runs, and runs alone: the samples of the time from its letting go to its end, read on the
    # parent's clock, hold its 2 000 005 instructions, its own kernel work (its exit, its first page faults)
    # and the CPU's timer and sampling interrupts of those few ms. The CPU's other work of the capture's
    # 0.6 s (now and then a 10 ms stretch of the guest's own, seen on a loaded host) lies outside them.
    libc = ctypes.CDLL(None, use_errno=True)
    libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
    ptrace_traceme, ptrace_detach = 0, 17

    def traced():
        if libc.ptrace(ptrace_traceme, 0, None, None) != 0:
            os._exit(126)

    child = subprocess.Popen([str(arm_loop)], preexec_fn=traced)
    _, status = os.waitpid(child.pid, 0)
    assert os.WIFSTOPPED(status) and os.WSTOPSIG(status) == signal.SIGTRAP, status
    ended = select.poll()
    pidfd = os.pidfd_open(child.pid)
    ended.register(pidfd, select.POLLIN)
    result = {}

    def capture():
        try:
            result["capture"] = lizard_rs.capture(duration=0.6, counters=EVENTS, gatord=False, interval=0.001)
        except BaseException as error:  # noqa: BLE001 (raised again below)
            result["error"] = error

    thread = threading.Thread(target=capture)
    thread.start()
    try:
        time.sleep(0.25)
    finally:
        let_go = time.clock_gettime_ns(time.CLOCK_BOOTTIME)
        assert libc.ptrace(ptrace_detach, child.pid, None, None) == 0, ctypes.get_errno()
    try:
        assert ended.poll(60_000), "the loop ended"
        done = time.clock_gettime_ns(time.CLOCK_BOOTTIME)
    finally:
        os.close(pidfd)
    assert child.wait(timeout=60) == 0
    thread.join(timeout=120)
    assert not thread.is_alive(), "the capture ended"
    if "error" in result:
        raise result["error"]
    capture = result["capture"]
    assert capture.sampling["method"] == "kernel", capture.sampling
    values, cycles = capture["INST_RETIRED"].values, capture["CPU_CYCLES"].values
    # Sample i counts from the sample before to its timestamp, on the capture's time base, whose zero is
    # read on CLOCK_BOOTTIME.
    ends = capture["INST_RETIRED"].timestamps.astype(np.int64)
    starts = np.concatenate((ends[:1], ends[:-1]))
    zero = capture.boottime_zero_ns
    let_go, done = let_go - zero, done - zero
    during = np.flatnonzero((ends >= let_go) & (starts <= done))
    assert 2 <= len(during) <= 2 + (done - let_go) // 500_000, (len(during), let_go, done, ends[[0, -1]])
    background = float(np.median(values))
    # The loop's run (over 2 ms) holds at least one sample in which the CPU never waited: there, one
    # instruction a cycle and a cycle a nanosecond of the sample's time, none lost. That time is not always
    # the timer's millisecond: while the CPU idles the emulated clock follows the host's (QEMU's -icount
    # sleeps in host time), so a timer that wakes it fires when the host lets it, and the samples around
    # the loop's start last from 0.86 ms (one CI run) to over 4 ms.
    whole = during[(values[during] == cycles[during]) & (during > 0)]
    assert len(whole) >= 1, (values[during], cycles[during])
    spans = ends[whole] - starts[whole]
    assert np.all(np.abs(values[whole] - spans) <= 100), (values[whole], spans)
    # The first and last of them hold what else ran in those milliseconds as well: the parent's return from
    # letting the loop go and its wait, the loop's own exit and first page faults in the kernel, the sampler
    # (about 0.4 M instructions measured).
    held = float(np.sum(values[during]))
    over = held - ARM_LOOP_INSTRUCTIONS
    assert 0 <= over < 1_000_000, (held, values[during])
    note(
        f"lizard_rs.capture(INST_RETIRED, CPU_CYCLES) at 1 ms while arm_loop ran once: the {len(during)} "
        f"samples of its {(done - let_go) / 1e6:.2f} ms on the parent's clock hold {held:,.0f} instructions: "
        f"its {ARM_LOOP_INSTRUCTIONS:,} and {over:,.0f} more from what else ran in those ms (a quiet sample "
        f"holds {background:,.0f}); {len(whole)} in which the CPU never waited, "
        f"{', '.join(f'{v:,.0f} in {t / 1e6:.3f} ms' for v, t in zip(values[whole], spans))} (= CPU_CYCLES)"
    )
