"""Every error class of the live half, fed its bad input: a typed exception, never a crash."""

import json

import pytest

import lizard_rs
from lizard_rs import mali


def test_every_class_is_a_lizard_error():
    for cls in (
        lizard_rs.SourceError,
        lizard_rs.GatordError,
        lizard_rs.CounterError,
        lizard_rs.CaptureError,
        lizard_rs.StatError,
        lizard_rs.FormatError,
        lizard_rs.MaliError,
    ):
        assert issubclass(cls, lizard_rs.LizardError)
    assert issubclass(lizard_rs.GatordError, lizard_rs.SourceError)
    assert issubclass(lizard_rs.LizardWarning, UserWarning)


def test_an_unknown_counter_is_a_counter_error_with_the_closest_name():
    with pytest.raises(lizard_rs.CounterError, match="did you mean 'TaskClock'"):
        lizard_rs.capture(duration=0.1, counters=["TaskClok"], gatord=False)


def test_a_named_gatord_that_does_not_answer_is_a_gatord_error_with_its_cause():
    with pytest.raises(lizard_rs.GatordError) as caught:
        lizard_rs.counters(gatord="127.0.0.1:1")
    assert caught.value.kind == "Gatord"
    assert caught.value.__cause__ is not None


def test_a_gatord_address_that_is_no_address_is_a_source_error():
    with pytest.raises(lizard_rs.SourceError, match="not a gatord address"):
        lizard_rs.counters(gatord="localhost:port")
    with pytest.raises(TypeError):
        lizard_rs.counters(gatord=8080)


def test_a_target_that_names_nothing_is_a_source_error_of_its_kind():
    with pytest.raises(lizard_rs.SourceError) as caught:
        lizard_rs.capture(duration=0.1, gatord=False, target="pid:abc")
    assert caught.value.kind == "InvalidSpec"
    with pytest.raises(lizard_rs.SourceError):
        lizard_rs.capture(duration=0.1, gatord=False, target=-4)


def test_a_process_that_does_not_exist_is_a_source_error():
    with pytest.raises(lizard_rs.SourceError):
        lizard_rs.capture(duration=0.1, gatord=False, target=2**22 + 12345)


def test_durations_and_intervals_must_be_positive():
    for bad in (0, -1, float("nan"), float("inf")):
        with pytest.raises(ValueError):
            lizard_rs.capture(duration=bad, gatord=False)
        with pytest.raises(ValueError):
            lizard_rs.capture(duration=0.1, interval=bad, gatord=False)


def test_load_of_a_missing_file_is_file_not_found(tmp_path):
    with pytest.raises(FileNotFoundError) as caught:
        lizard_rs.load(tmp_path / "missing.json")
    assert caught.value.filename.endswith("missing.json")


def test_load_of_what_is_not_a_capture_is_a_format_error(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text("{ not json")
    with pytest.raises(lizard_rs.FormatError) as caught:
        lizard_rs.load(path)
    assert caught.value.kind == "NotACapture"
    assert caught.value.__cause__ is not None


def test_load_of_a_newer_document_is_refused_by_its_version(tmp_path):
    path = tmp_path / "newer.json"
    path.write_text(json.dumps({"schema_version": 99, "counters": [], "window_ns": None}))
    with pytest.raises(lizard_rs.FormatError, match="version 99") as caught:
        lizard_rs.load(path)
    assert caught.value.kind == "NewerVersion"


def test_load_of_a_counter_without_value_or_reason_is_a_format_error(tmp_path):
    document = {
        "counters": [{"id": 1, "counter": "X", "class": "delta", "value": None, "samples": []}],
        "window_ns": None,
    }
    path = tmp_path / "no-reason.json"
    path.write_text(json.dumps(document))
    with pytest.raises(lizard_rs.FormatError) as caught:
        lizard_rs.load(path)
    assert caught.value.kind == "MissingReason"


def test_stat_of_an_unknown_counter_is_a_counter_error():
    with pytest.raises(lizard_rs.CounterError) as caught:
        lizard_rs.stat(["true"], ["NoSuchCounterAtAll"])
    assert caught.value.kind in ("UnknownCounter", "NoGpuForDatabase")


def chain(error):
    """The error's message and its causes', joined."""
    messages = []
    while error is not None:
        messages.append(str(error))
        error = error.__cause__
    return ": ".join(messages)


def test_a_name_spelled_as_an_arm_pmu_event_that_is_none_is_refused():
    # An event number beyond evtCount's 16 bits: refused before anything is counted.
    with pytest.raises(lizard_rs.CounterError) as caught:
        lizard_rs.stat(["true"], ["0x10000"])
    assert "does not fit the 16 bits" in chain(caught.value)
    with pytest.raises(lizard_rs.SourceError) as caught:
        lizard_rs.capture(duration=0.1, counters=["0x10000"], gatord=False)
    assert "does not fit the 16 bits" in chain(caught.value)


def test_arm_pmu_data_that_cannot_be_read_is_a_stat_error(monkeypatch):
    monkeypatch.setenv("LIZARD_PMU_DATA", "/nonexistent/arm-pmu-data")
    with pytest.raises(lizard_rs.StatError) as caught:
        lizard_rs.stat(["true"], ["INST_RETIRED"])
    assert "/nonexistent/arm-pmu-data/cpus.json" in chain(caught.value)


def test_stat_of_a_command_that_cannot_start_is_a_stat_error():
    with pytest.raises(lizard_rs.StatError):
        lizard_rs.stat(["/nonexistent/command"])


def test_stat_needs_something_to_count():
    with pytest.raises(TypeError):
        lizard_rs.stat()
    with pytest.raises(ValueError):
        lizard_rs.stat([])


def test_an_unknown_gpu_is_a_mali_error():
    with pytest.raises(lizard_rs.MaliError, match="no GPU named") as caught:
        mali.gpu("Mali-X1")
    assert caught.value.kind == "UnknownGpu"


def test_a_missing_input_and_a_zero_divisor_are_mali_errors():
    g78 = mali.gpu("Mali-G78")
    with pytest.raises(lizard_rs.MaliError, match="MaliGPUActiveCy") as caught:
        g78.evaluate("MaliFragQueueUtil", {"MaliFragQueueActiveCy": 1.0})
    assert caught.value.kind == "MissingInput"
    with pytest.raises(lizard_rs.MaliError) as caught:
        g78.evaluate("MaliFragQueueUtil", {"MaliFragQueueActiveCy": 1.0, "MaliGPUActiveCy": 0.0})
    assert caught.value.kind == "Eval"
    assert "is 0" in str(caught.value.__cause__)
    with pytest.raises(lizard_rs.MaliError) as caught:
        g78.evaluate("MaliNoSuchCounter", {})
    assert caught.value.kind == "UnknownCounter"
