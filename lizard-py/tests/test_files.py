"""The file readers of ``lizard_rs``: ``apc``, ``trace_ring``, ``stm`` and ``events``.

Real recordings come from ``../shared/data`` (or ``$LIZARD_TEST_DATA``), whose README gives their provenance:

* ``gatord-9.7.2/arm64-vm-local.apc``: gatord 9.7.2's own local capture on an emulated Cortex-A72. The values
  expected are those ``lizard apc-dump`` prints for it, held in ``lizard-cli/tests/data/golden/``
  (``apc-dump-arm64-vm-local.json.summary``: samples and sum per counter; ``.csv.head``: the first rows).
* ``opencsd-stm/stm_only/cstraceitm.bin``: OpenCSD's STM snapshot, CoreSight-formatted frames, STM on trace ID
  0x20; ``stm_only.ppl`` is what OpenCSD's ``trc_pkt_lister`` decodes from it.
* ``gatord-9.7.2/events/events-Mali-G78_hw.xml``: an events fragment shipped with gatord.

The saved trace ring is written here, byte for byte, in the ring file format that
``lizard-trace/src/ring_file.rs`` and ``head.rs`` document (version 3), so that the test needs no server.
Without the shared data the tests that need it skip, saying why.
"""

import math
import os
import re
import struct
from pathlib import Path

import numpy as np
import pytest

from conftest import skip

try:
    import lizard_rs as native

    native.apc  # the package re-exports the extension module
except (ImportError, AttributeError):
    import lizard_rs._native as native

REPO = Path(__file__).resolve().parents[2]
DATA = Path(os.environ.get("LIZARD_TEST_DATA", REPO / ".." / "shared" / "data"))
GOLDEN = REPO / "lizard-cli" / "tests" / "data" / "golden"


def shared(relative):
    """The shared data file ``relative``, or a skip saying it is absent."""
    path = DATA / relative
    if not path.exists():
        skip(f"shared test data absent: {path} (set LIZARD_TEST_DATA)")
    return path


# --- apc -------------------------------------------------------------------------------------------------


def golden_counts():
    """``counter name -> (samples, sum)`` as ``lizard apc-dump`` gives them for the arm64 capture."""
    counts = {}
    for line in (GOLDEN / "apc-dump-arm64-vm-local.json.summary").read_text().splitlines():
        m = re.fullmatch(r"(.+): (\d+) samples, sum (\d+)", line)
        if m:
            counts[m.group(1)] = (int(m.group(2)), int(m.group(3)))
    assert counts, "golden summary without per-counter lines"
    return counts


def test_apc_matches_what_apc_dump_prints():
    rec = native.apc(shared("gatord-9.7.2/arm64-vm-local.apc"))
    assert rec.protocol == 950
    assert rec.issues == []
    counts = golden_counts()
    assert set(rec.counters) == set(counts)
    for name, (samples, total) in counts.items():
        series = rec.counters[name]
        assert len(series) == samples, name
        assert series.timestamps.dtype == np.uint64
        assert series.values.dtype == np.float64
        assert series.cores.dtype == np.int64
        assert len(series.timestamps) == len(series.cores) == samples
        assert math.isclose(series.values.sum(), total, rel_tol=1e-12), name
        assert np.all(np.diff(series.timestamps.astype(np.int64)) >= 0), name
    assert rec.samples == sum(s for s, _ in counts.values())
    # The first CSV rows: time, core, key and value of each counter's first reading.
    head = (GOLDEN / "apc-dump-arm64-vm-local.csv.head").read_text().splitlines()
    assert int(head[0].split()[2]) == rec.samples + 1  # lines: the header and one per value
    first = {}
    for row in head[2:]:
        ts, core, key, *_, value, _total = row.split(",")
        first.setdefault(int(key), (int(ts), int(core), float(value)))
    by_key = {s.key: s for s in rec.counters.values()}
    for key, (ts, core, value) in first.items():
        s = by_key[key]
        assert (int(s.timestamps[0]), int(s.cores[0]), float(s.values[0])) == (ts, core, value)
    # Memfree is a value of the whole system.
    memfree = rec.counters["Linux_meminfo_memfree (Memory: Free)"]
    assert memfree.key == 0x86 and np.all(memfree.cores == -1)
    assert rec.summary["frames"] == {
        "BlockCounter": 34,
        "External": 2,
        "PerfAttrs": 128,
        "PerfData": 5,
        "Summary": 3,
    }
    assert rec.summary["errors"] == []
    assert rec.summary["attributes"]["PAGESIZE"] == "4096"
    assert "ApcRecording" in repr(rec) and "ApcSeries" in repr(memfree)


def test_apc_of_a_missing_path_is_file_not_found(tmp_path):
    with pytest.raises(FileNotFoundError):
        native.apc(tmp_path / "absent.apc")


def test_apc_of_a_file_is_a_format_error(tmp_path):
    plain = tmp_path / "plain.apc"
    plain.write_bytes(b"not a directory")
    with pytest.raises(native.FormatError) as err:
        native.apc(plain)
    assert err.value.kind == "NotADirectory"
    assert issubclass(native.FormatError, native.LizardError)


def test_apc_without_a_frame_file_is_an_os_error(tmp_path):
    with pytest.raises(FileNotFoundError):
        native.apc(tmp_path)


def test_apc_with_broken_captured_xml_is_a_format_error(tmp_path):
    (tmp_path / "0000000000").write_bytes(b"")
    (tmp_path / "captured.xml").write_text("<captured version=")
    with pytest.raises(native.FormatError) as err:
        native.apc(tmp_path)
    assert err.value.kind == "Xml"


def test_apc_with_a_garbage_frame_file_reports_issues(tmp_path):
    # A frame file whose first record claims more bytes than follow: the walk stops there and says so.
    (tmp_path / "0000000000").write_bytes(struct.pack("<I", 1000) + b"\x07" * 10)
    rec = native.apc(tmp_path)
    assert rec.counters == {}
    assert rec.samples == 0
    assert len(rec.issues) == 1 and rec.issues[0].startswith("frame 0")
    assert rec.summary["errors"] == rec.issues
    assert rec.protocol is None


# --- trace_ring ------------------------------------------------------------------------------------------

RING_MAGIC = b"LZTRRING"
HEAD_LEN = 100
PID = 4242


def record_head(seq, payload, client_seq):
    """A version 2 record head (``lizard-trace/src/head.rs``): an inline record of module ``render``."""
    head = bytearray(HEAD_LEN)
    struct.pack_into("<QI", head, 0, seq, len(payload))
    head[12:18] = b"render"
    struct.pack_into("<Q", head, 22, 1_000 + seq)
    head[30:38] = b"frame.rs"
    struct.pack_into("<IIQ", head, 50, 12 + seq, PID, client_seq)
    head[66] = 1  # inline
    struct.pack_into("<Q", head, 68, 1_500 + seq)
    return bytes(head)


def ring_file(payloads):
    """A version 3 ring file holding ``payloads`` as records 0.., and one client account."""
    records = b"".join(record_head(i, p, i) + p for i, p in enumerate(payloads))
    n = len(payloads)
    header = RING_MAGIC + struct.pack("<II7Q", 3, HEAD_LEN, 4096, 0, n, n, len(records), 0, 0)
    ledger = struct.pack("<I", 1) + struct.pack("<I6Q", PID, n, 0, 0, 0, 0, 0)
    return header + records + ledger


def test_trace_ring_gives_every_record(tmp_path):
    payloads = [bytes([i]) * (8 + i) for i in range(3)]
    path = tmp_path / "ring.bin"
    path.write_bytes(ring_file(payloads))
    ring = native.trace_ring(path)
    assert len(ring) == 3
    records = list(ring)
    assert [r.seq for r in records] == [0, 1, 2]
    assert [r.payload for r in records] == payloads
    first = records[0]
    assert (first.module, first.file, first.line, first.pid, first.client_seq) == (
        "render",
        "frame.rs",
        12,
        PID,
        0,
    )
    assert (first.timestamp_ns, first.stored_ns) == (1_000, 1_500)
    assert first.origin == {"kind": "inline"}
    assert ring[-1].seq == 2
    with pytest.raises(IndexError):
        ring[3]
    assert ring.timestamps.dtype == np.uint64
    assert ring.timestamps.tolist() == [1_000, 1_001, 1_002]
    directory = ring.directory
    assert directory["record_count"] == 3 and directory["next_seq"] == 3
    assert directory["bytes_used"] == sum(HEAD_LEN + len(p) for p in payloads)
    assert directory["capacity"] == 4096
    assert len(ring.clients) == 1
    client = ring.clients[0]
    assert (client["pid"], client["stored"], client["held"]) == (PID, 3, 3)
    assert "TraceRing" in repr(ring) and "TraceRecord" in repr(first)


def test_trace_ring_of_a_missing_file_is_file_not_found(tmp_path):
    with pytest.raises(FileNotFoundError):
        native.trace_ring(tmp_path / "absent.ring")


@pytest.mark.parametrize(
    "garbage",
    [b"", b"not a ring", b"\x00" * 200, RING_MAGIC + struct.pack("<I", 99) + bytes(60)],
)
def test_trace_ring_of_garbage_is_a_format_error(tmp_path, garbage):
    path = tmp_path / "garbage.ring"
    path.write_bytes(garbage)
    with pytest.raises(native.FormatError):
        native.trace_ring(path)


def test_trace_ring_cut_short_is_a_format_error(tmp_path):
    whole = ring_file([b"payload!"])
    path = tmp_path / "short.ring"
    path.write_bytes(whole[:-10])
    with pytest.raises(native.FormatError) as err:
        native.trace_ring(path)
    assert err.value.kind == "Truncated"


# --- stm -------------------------------------------------------------------------------------------------


def opencsd_values():
    """The data values OpenCSD decodes from ``stm_only`` (master 0x41, channel 0), in order."""
    values = []
    for line in shared("opencsd-stm/stm_only.ppl").read_text().splitlines():
        m = re.search(r"SWTRACE\( \(Ma:0x41; Ch:0x00\) (0x[0-9a-f]+);", line)
        if m:
            values.append(int(m.group(1), 16))
    return values


def test_stm_decodes_the_opencsd_snapshot_as_opencsd_does():
    trace = native.stm(shared("opencsd-stm/stm_only/cstraceitm.bin"), trace_id=0x20)
    expected = opencsd_values()
    assert len(trace) == len(trace.messages) > 0
    # The first value precedes the first message boundary: torn, not a message.
    assert [v for m in trace.messages for v in m.values] == expected[1:]
    assert len(trace.torn) == 1
    torn = trace.torn[0]
    assert (torn["master"], torn["channel"], torn["packets"], torn["cause"]) == (
        0x41,
        0,
        1,
        "before_first_message",
    )
    assert all(m.master == 0x41 and m.channel == 0 for m in trace.messages)
    assert all(m.kind == "values" and m.protocol is None for m in trace.messages)
    m = trace.messages[0]
    assert m.data == b"".join(struct.pack("<I", v) for v in m.values)
    stats = trace.stats
    assert stats["stream"]["data_packets"] == len(expected)
    assert stats["stream"]["messages"] == len(trace.messages)
    assert stats["time_unit"] == "ticks"
    assert trace.times.dtype == np.uint64 and len(trace.times) == len(trace.messages)
    assert [loss["kind"] for loss in trace.losses] == ["unsynced"]
    assert trace.losses[0]["nibbles"] == stats["stream"]["unsynced_nibbles"]
    assert trace.spans == []
    assert "StmTrace" in repr(trace) and "StmMessage" in repr(m)


def test_stm_finds_the_snapshots_frames_from_its_first_bytes():
    path = shared("opencsd-stm/stm_only/cstraceitm.bin")
    named = native.stm(path, trace_id=0x20)
    found = native.stm(path, trace_id="auto")
    assert (named.trace_id, found.trace_id) == (0x20, 0x20)
    assert [m.values for m in found.messages] == [m.values for m in named.messages]
    assert native.stm(path).trace_id is None


def test_stm_with_a_clock_counts_in_nanoseconds():
    trace = native.stm(
        shared("opencsd-stm/stm_only/cstraceitm.bin"), trace_id=0x20, clock_hz=100_000_000
    )
    assert trace.stats["clock"]["hz"] == 100_000_000
    assert trace.stats["time_unit"] == "ns"


def test_stm_of_a_missing_file_is_file_not_found(tmp_path):
    with pytest.raises(FileNotFoundError):
        native.stm(tmp_path / "absent.bin")


def test_stm_of_a_directory_is_an_os_error(tmp_path):
    with pytest.raises(OSError):
        native.stm(tmp_path)


def test_stm_rejects_a_reserved_trace_id(tmp_path):
    path = tmp_path / "empty.bin"
    path.write_bytes(b"")
    with pytest.raises(ValueError):
        native.stm(path, trace_id=0x7F)


@pytest.mark.parametrize("trace_id", [None, 0x20])
@pytest.mark.parametrize("mid_stream", [False, True])
def test_stm_of_random_bytes_does_not_crash(tmp_path, trace_id, mid_stream):
    path = tmp_path / "random.bin"
    path.write_bytes(np.random.default_rng(7).integers(0, 256, 200_000, dtype=np.uint8).tobytes())
    trace = native.stm(path, trace_id=trace_id, mid_stream=mid_stream)
    assert trace.stats["stream"]["input_bytes"] == 200_000
    for m in trace.messages:
        assert isinstance(m.text, str) and isinstance(m.data, bytes)
    for loss in trace.losses:
        assert loss["kind"] in {
            "unsynced",
            "decode",
            "frame",
            "master_overflow",
            "global_overflow",
            "other",
        }


def test_stm_of_an_empty_file_is_empty(tmp_path):
    path = tmp_path / "empty.bin"
    path.write_bytes(b"")
    trace = native.stm(path)
    assert trace.messages == [] and trace.losses == [] and trace.torn == []
    assert len(trace.times) == 0


# --- events ----------------------------------------------------------------------------------------------


def test_events_lists_every_event_of_a_shipped_fragment():
    path = shared("gatord-9.7.2/events/events-Mali-G78_hw.xml")
    rows = native.events(path)
    assert len(rows) == path.read_text().count("<event ")
    assert any((r["counter"] or "").endswith("GPU_ACTIVE") for r in rows)
    assert {"category", "counter", "event", "title", "name", "units", "class"} <= set(rows[0])


def test_events_of_broken_xml_is_a_format_error(tmp_path):
    path = tmp_path / "bad.xml"
    path.write_text('<category name="x"><event counter="a"')
    with pytest.raises(native.FormatError):
        native.events(path)


def test_events_of_a_missing_file_is_file_not_found(tmp_path):
    with pytest.raises(FileNotFoundError):
        native.events(tmp_path / "absent.xml")


def test_events_of_a_small_document(tmp_path):
    path = tmp_path / "events.xml"
    path.write_text(
        '<events><category name="Memory">'
        '<event counter="Linux_meminfo_memfree" title="Memory" name="Free" units="B" class="absolute"/>'
        "</category></events>"
    )
    rows = native.events(path)
    assert len(rows) == 1
    row = rows[0]
    assert (row["category"], row["counter"], row["name"], row["title"]) == (
        "Memory",
        "Linux_meminfo_memfree",
        "Free",
        "Memory",
    )
