"""Ctrl-C (SIGINT) ends a capture and keeps what was captured."""

from sigint import interrupt_capture


def test_ctrl_c_ends_a_capture_and_keeps_what_was_captured():
    took, interrupted, samples, warned = interrupt_capture(["TaskClock"], deadline_s=30)
    assert took < 10, "the capture ended soon after Ctrl-C"
    assert interrupted
    assert samples[0] > 20, "about a second at 10 ms was kept"
    assert warned
