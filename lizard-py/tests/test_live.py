"""Live counters: the local CPU counters of this machine, and the gatord simulator."""

import platform

import numpy as np
import pytest

import lizard_rs
from conftest import require


def test_counters_lists_local_counters_with_units_class_and_source():
    listed = lizard_rs.counters(gatord=False)
    names = [c.name for c in listed]
    assert "TaskClock" in names
    task_clock = listed[names.index("TaskClock")]
    assert task_clock.units == "ns"
    assert task_clock.counter_class == "delta"
    assert task_clock.source == "cpu"
    assert "TaskClock" in repr(task_clock)
    # The CPU's Arm PMU events are listed only on Arm (tests/arm lists them in the emulated Arm system).
    if platform.machine() not in ("aarch64", "arm64"):
        assert not [c.name for c in listed if c.category == "Arm PMU event"]


def test_a_capture_gives_each_counter_as_numpy_arrays_with_its_account():
    capture = lizard_rs.capture(
        duration=0.5, counters=["TaskClock", "ContextSwitches"], gatord=False, interval=0.01
    )
    assert capture.names == ["TaskClock", "ContextSwitches"]
    assert not capture.interrupted
    clock = capture["TaskClock"]
    assert clock.timestamps.dtype == np.uint64
    assert clock.values.dtype == np.float64
    assert len(clock.timestamps) == len(clock.values) == len(clock) > 10
    assert np.all(np.diff(clock.timestamps.astype(np.int64)) > 0)
    # Two CPUs' task clock over 10 ms periods: each sample is at most 2 × 10 ms plus the sampler's lateness.
    assert clock.values.max() <= 2 * 0.05e9
    assert clock.value == pytest.approx(np.nansum(clock.values), rel=1e-6)
    assert clock.units == "ns" and clock.counter_class == "delta"
    sampling = capture.sampling
    assert sampling["interval_ns"] == 10_000_000
    assert sampling["expected"] >= 40
    assert sampling["delivered"] + sampling["missed"] >= sampling["expected"] - 2
    assert capture[0].name == "TaskClock" and capture[-1].name == "ContextSwitches"
    with pytest.raises(KeyError):
        capture["NoSuchCounter"]
    with pytest.raises(IndexError):
        capture[5]


def test_a_capture_without_counters_named_takes_the_default_choice():
    capture = lizard_rs.capture(duration=0.2, gatord=False, interval=0.05)
    assert "TaskClock" in capture.names


def test_to_pandas_gives_one_row_a_sample():
    pandas = require("pandas")
    capture = lizard_rs.capture(duration=0.3, counters=["TaskClock"], gatord=False, interval=0.02)
    frame = capture.to_pandas()
    assert isinstance(frame, pandas.DataFrame)
    assert list(frame.columns) == ["counter", "timestamp_ns", "value"]
    assert len(frame) == len(capture["TaskClock"])
    assert set(frame["counter"]) == {"TaskClock"}


def test_a_capture_saved_loads_back_equal(tmp_path):
    capture = lizard_rs.capture(duration=0.2, counters=["TaskClock"], gatord=False, interval=0.02)
    path = tmp_path / "capture.json"
    capture.save(path)
    loaded = lizard_rs.load(path)
    assert loaded.to_json() == capture.to_json()
    assert np.array_equal(loaded["TaskClock"].values, capture["TaskClock"].values)


def test_the_gatord_simulator_is_captured_through_gatord(gatord_sim):
    listed = lizard_rs.counters(gatord=gatord_sim)
    assert any(c.source == "gatord" for c in listed)
    gpu = [c.name for c in listed if c.source == "gatord" and "GPU_ACTIVE" in c.name]
    assert gpu, "the simulator serves a Mali-G78's GPU_ACTIVE"
    capture = lizard_rs.capture(duration=0.5, counters=gpu[:1], gatord=gatord_sim)
    counter = capture[0]
    assert counter.source == "gatord"
    assert len(counter.timestamps) > 0
    assert counter.value is not None and counter.value > 0


def test_a_session_reads_regions_one_after_another():
    with lizard_rs.Session(counters=["TaskClock"], gatord=False) as session:
        assert session.counters == ["TaskClock"]
        sum(range(200_000))
        first = session.read()
        sum(range(200_000))
        second = session.read()
    assert set(first) == {"TaskClock"}
    # This process's task clock: the time it ran in each region, in ns.
    for reading in (first, second):
        value = reading["TaskClock"]
        assert value is None or value > 0
    with pytest.raises(lizard_rs.CaptureError):
        session.read()


def test_stat_counts_a_command_and_gives_its_exit_code():
    report = lizard_rs.stat(["sh", "-c", "exit 3"], ["TaskClock"])
    assert report["exit_code"] == 3
    assert report["exit_status"] == 3
    rows = {row["counter"]: row for row in report["counters"]}
    assert rows["TaskClock"]["unit"] == "ns"
    assert rows["TaskClock"]["value"] > 0
