"""Ctrl-C sent to a capture in a Python process of its own: shared by the x86 test (test_interrupt.py) and
the Arm one (arm/test_ctrl_c.py)."""

import signal
import subprocess
import sys
import time

CODE = """
import sys, warnings
import lizard_rs
counters = sys.argv[1].split(",")
print("started", flush=True)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    capture = lizard_rs.capture(duration=60, counters=counters, gatord=False, interval=0.01)
print(capture.interrupted, *(len(capture[name]) for name in counters), flush=True)
print(any(w.category is lizard_rs.LizardWarning for w in caught), flush=True)
"""


def interrupt_capture(counters, after_s=1.5, deadline_s=60):
    """Starts a 60 s capture of `counters` at 10 ms, sends it SIGINT `after_s` seconds after it started and
    waits at most `deadline_s` for it to end. Returns (seconds from the signal to its end, whether the capture
    says it was interrupted, its sample count per counter, whether a LizardWarning was raised)."""
    process = subprocess.Popen(
        [sys.executable, "-c", CODE, ",".join(counters)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout.readline().strip() == "started"
        time.sleep(after_s)
        sent = time.monotonic()
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=deadline_s)
        took = time.monotonic() - sent
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=10)
    assert process.returncode == 0, err
    summary, warned = out.strip().splitlines()
    flag, *samples = summary.split()
    return took, flag == "True", [int(n) for n in samples], warned == "True"
