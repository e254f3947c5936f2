"""Ctrl-C (SIGINT) ends a capture and keeps what was captured."""

import signal
import subprocess
import sys
import time

CODE = """
import sys, warnings
import lizard_rs
print("started", flush=True)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    capture = lizard_rs.capture(duration=60, counters=["TaskClock"], gatord=False, interval=0.01)
print("interrupted", capture.interrupted, len(capture["TaskClock"]), flush=True)
print("warned", any(w.category is lizard_rs.LizardWarning for w in caught), flush=True)
"""


def test_ctrl_c_ends_a_capture_and_keeps_what_was_captured():
    process = subprocess.Popen(
        [sys.executable, "-c", CODE], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        assert process.stdout.readline().strip() == "started"
        time.sleep(1.5)
        started = time.monotonic()
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=30)
        assert time.monotonic() - started < 10, "the capture ended soon after Ctrl-C"
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=10)
    assert process.returncode == 0, err
    interrupted, warned = out.strip().splitlines()
    word, flag, samples = interrupted.split()
    assert flag == "True"
    assert int(samples) > 20, "about a second at 10 ms was kept"
    assert warned == "warned True"
