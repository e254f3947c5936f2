"""Ctrl-C (SIGINT) in the emulated Arm system ends a capture of the CPU's Arm events and keeps what was
captured, as on x86 (../test_interrupt.py)."""

from guest import note, on_arm
from sigint import interrupt_capture


def test_ctrl_c_ends_a_capture_and_keeps_what_was_captured():
    on_arm()
    took, interrupted, (cycles, clock), warned = interrupt_capture(["CPU_CYCLES", "TaskClock"])
    assert took < 10, "the capture ended soon after Ctrl-C"
    assert interrupted
    assert cycles > 20 and clock > 20, "about a second at 10 ms was kept"
    assert warned
    note(
        f"SIGINT 1.5 s into a 60 s capture of CPU_CYCLES and TaskClock: ended {took:.2f} s later, "
        f"interrupted=True, {cycles} and {clock} samples kept, a LizardWarning said so"
    )
