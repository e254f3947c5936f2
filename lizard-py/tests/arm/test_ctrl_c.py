"""Ctrl-C (SIGINT) in the emulated Arm system ends a capture of the CPU's Arm events and keeps what was
captured, as on x86 (../test_interrupt.py)."""

import signal
import subprocess
import sys
import time

from guest import note, on_arm

CODE = """
import warnings
import lizard_rs
print("started", flush=True)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    capture = lizard_rs.capture(duration=60, counters=["CPU_CYCLES", "TaskClock"], gatord=False, interval=0.01)
print("interrupted", capture.interrupted, len(capture["CPU_CYCLES"]), len(capture["TaskClock"]), flush=True)
print("warned", any(w.category is lizard_rs.LizardWarning for w in caught), flush=True)
"""


def test_ctrl_c_ends_a_capture_and_keeps_what_was_captured():
    on_arm()
    process = subprocess.Popen(
        [sys.executable, "-c", CODE], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        assert process.stdout.readline().strip() == "started"
        time.sleep(1.5)
        sent = time.monotonic()
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=60)
        took = time.monotonic() - sent
        assert took < 10, "the capture ended soon after Ctrl-C"
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=10)
    assert process.returncode == 0, err
    interrupted, warned = out.strip().splitlines()
    _, flag, cycles, clock = interrupted.split()
    assert flag == "True"
    assert int(cycles) > 20 and int(clock) > 20, "about a second at 10 ms was kept"
    assert warned == "warned True"
    note(
        f"SIGINT 1.5 s into a 60 s capture of CPU_CYCLES and TaskClock: ended {took:.2f} s later, "
        f"interrupted=True, {cycles} and {clock} samples kept, a LizardWarning said so"
    )
