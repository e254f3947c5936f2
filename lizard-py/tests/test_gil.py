"""A capture waits with the GIL released: other Python threads run meanwhile."""

import threading
import time

import lizard_rs


def test_a_capture_lets_other_threads_run_while_it_waits():
    done = threading.Event()
    result = {}

    def run():
        result["capture"] = lizard_rs.capture(
            duration=1.0, counters=["TaskClock"], gatord=False, interval=0.01
        )
        done.set()

    worker = threading.Thread(target=run)
    worker.start()
    ticks = 0
    while not done.is_set():
        ticks += 1
        time.sleep(0.001)
    worker.join(timeout=30)
    # Had the capture held the GIL for its second, this loop could not have run in the meantime.
    assert ticks > 100
    assert len(result["capture"]["TaskClock"]) > 10
