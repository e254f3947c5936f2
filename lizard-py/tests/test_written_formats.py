"""Every format `lizard capture` writes opens from Python: the capture document with `lizard_rs.load`, the
CSV with pandas, the Chrome trace with `json`, the Perfetto trace with Perfetto's own module where it is
installed (and its bytes as protobuf otherwise), the HTML report with the capture document inside it."""

import json
import subprocess

import numpy as np
import pytest

import lizard_rs
from conftest import require, skip


def capture(lizard, gatord_sim, tmp_path, fmt):
    path = tmp_path / f"capture.{fmt}"
    subprocess.run(
        [str(lizard), "capture", "--gatord", gatord_sim, "--duration", "500ms",
         "--counters", "ARM_Mali-G78_GPU_ACTIVE", "--format", fmt, "-o", str(path)],
        check=True, capture_output=True, timeout=60,
    )
    return path


def test_the_capture_document_loads_as_a_capture(lizard, gatord_sim, tmp_path):
    loaded = lizard_rs.load(capture(lizard, gatord_sim, tmp_path, "json"))
    counter = loaded["ARM_Mali-G78_GPU_ACTIVE"]
    assert counter.source == "gatord" and len(counter) > 0
    assert counter.value == pytest.approx(np.nansum(counter.values), rel=1e-9)


def test_the_csv_reads_with_pandas(lizard, gatord_sim, tmp_path):
    pandas = require("pandas")
    frame = pandas.read_csv(capture(lizard, gatord_sim, tmp_path, "csv"))
    assert len(frame) > 0
    assert any("GPU_ACTIVE" in str(v) for v in frame.astype(str).values.ravel())


def test_the_chrome_trace_reads_with_json(lizard, gatord_sim, tmp_path):
    trace = json.loads(capture(lizard, gatord_sim, tmp_path, "chrome-trace").read_text())
    events = trace["traceEvents"] if isinstance(trace, dict) else trace
    assert any(e.get("ph") == "C" for e in events)


def test_the_perfetto_trace_reads_with_perfetto_or_protobuf(lizard, gatord_sim, tmp_path):
    data = capture(lizard, gatord_sim, tmp_path, "perfetto").read_bytes()
    try:
        from perfetto.protos.perfetto.trace.perfetto_trace_pb2 import Trace
    except ImportError as error:
        # Without Perfetto's module: a Trace is `repeated TracePacket packet = 1`, length-delimited.
        assert data[0] == 0x0A
        skip(f"no Perfetto module to decode the trace ({error})")
    trace = Trace()
    trace.ParseFromString(data)
    # Mali counters are written as GPU counter events, under the GPU; the others as counter track events.
    kinds = {packet.WhichOneof("data") for packet in trace.packet}
    assert "gpu_counter_event" in kinds


def test_the_html_report_holds_its_capture(lizard, gatord_sim, tmp_path):
    page = capture(lizard, gatord_sim, tmp_path, "html").read_text()
    assert page.lstrip().lower().startswith("<!doctype html")
    assert "ARM_Mali-G78_GPU_ACTIVE" in page
