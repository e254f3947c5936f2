"""Files read under their limits, as the ``lizard`` command reads them (``lizard_core::input``).

What a user hands a loader by mistake ends with a typed exception, in bounded time and memory: ``/dev/zero``
(over the limit of its kind, which ``LIZARD_MAX_INPUT`` sets), a directory (``IsADirectoryError``), XML of
another kind (``FormatError``), a FIFO with no writer (``KeyboardInterrupt`` at Ctrl-C, tested in a child).
"""

import os
import signal
import subprocess
import sys
import time

import pytest

try:
    import lizard_rs as native

    native.load  # the package re-exports the extension module
except (ImportError, AttributeError):
    import lizard_rs._native as native


@pytest.fixture
def small_limit(monkeypatch):
    monkeypatch.setenv("LIZARD_MAX_INPUT", "1MiB")


def test_dev_zero_is_refused_at_the_limit_by_every_loader(small_limit, tmp_path):
    started = time.monotonic()
    for load in (native.load, native.events, native.stm):
        with pytest.raises(native.InputLimitError) as raised:
            load("/dev/zero")
        assert "/dev/zero" in str(raised.value) and "1 MiB" in str(raised.value)
        assert raised.value.kind == "TooLarge"
    assert time.monotonic() - started < 20


def test_a_bad_limit_is_a_value_error(monkeypatch):
    monkeypatch.setenv("LIZARD_MAX_INPUT", "lots")
    with pytest.raises(ValueError, match="LIZARD_MAX_INPUT"):
        native.load("/dev/zero")


def test_a_directory_is_refused_as_one(tmp_path):
    for load in (native.load, native.events, native.trace_ring):
        with pytest.raises(IsADirectoryError):
            load(str(tmp_path))


def test_xml_of_another_kind_is_not_an_events_file(tmp_path):
    other = tmp_path / "pmus.xml"
    other.write_text('<?xml version="1.0"?>\n<pmus><pmu/></pmus>\n')
    with pytest.raises(native.FormatError, match="found <pmus>"):
        native.events(str(other))
    empty = tmp_path / "empty.xml"
    empty.write_text("")
    with pytest.raises(native.FormatError, match="no XML element"):
        native.events(str(empty))


def test_a_frame_file_of_zeros_ends_with_its_problems_counted(tmp_path):
    capture = tmp_path / "zeros.apc"
    capture.mkdir()
    (capture / "0000000000").symlink_to("/dev/zero")
    started = time.monotonic()
    recording = native.apc(str(capture))
    assert time.monotonic() - started < 20
    assert recording.samples == 0
    assert any("not a frame file" in issue for issue in recording.issues)
    assert recording.summary["errors_not_listed"] > 0


def test_ctrl_c_ends_a_wait_for_a_fifo_writer(tmp_path):
    fifo = tmp_path / "events.xml"
    os.mkfifo(fifo)
    code = (
        "import sys, lizard_rs\n"
        "print('reading', flush=True)\n"
        "try:\n"
        "    lizard_rs.events(sys.argv[1])\n"
        "except KeyboardInterrupt:\n"
        "    print('interrupted', flush=True)\n"
    )
    child = subprocess.Popen(
        [sys.executable, "-c", code, str(fifo)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert child.stdout.readline().strip() == "reading"
        time.sleep(0.5)
        child.send_signal(signal.SIGINT)
        out, _ = child.communicate(timeout=30)
    finally:
        child.kill()
    assert "interrupted" in out, out
