"""A ring saved by the real trace server (`lizard trace-server --output`), its records sent from this process
through liblizard.so's C trace client (lizard_trace.h), read back with `lizard_rs.trace_ring`."""

import ctypes
import os
import re
import subprocess
import time

import pytest

import lizard_rs
from conftest import REPO, skip


@pytest.fixture
def liblizard():
    path = os.environ.get("LIZARD_CAPI_LIB") or str(REPO / "target" / "debug" / "liblizard.so")
    if not os.path.exists(path):
        skip(f"liblizard.so is not built at {path} (cargo build -p lizard-capi, or set LIZARD_CAPI_LIB)")
    lib = ctypes.CDLL(path)
    client = ctypes.POINTER(ctypes.c_void_p)
    lib.lizard_trace_connect.argtypes = [ctypes.c_char_p, ctypes.POINTER(client)]
    lib.lizard_trace_record.argtypes = [
        client, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_uint32, ctypes.c_char_p, ctypes.c_size_t,
    ]
    lib.lizard_trace_close.argtypes = [client]
    lib.client_type = client
    return lib


def test_a_ring_saved_by_the_trace_server_holds_what_this_process_recorded(lizard, liblizard, tmp_path):
    socket = f"@lizard-rs-test-{os.getpid()}"
    saved = tmp_path / "ring.bin"
    server = subprocess.Popen(
        [str(lizard), "trace-server", "--socket", socket, "--no-device", "--capacity", "1MiB",
         "--duration", "3s", "--output", str(saved)],
        stderr=subprocess.PIPE, text=True,
    )
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if re.search(r"listening on", server.stderr.readline()):
                break
        else:
            pytest.fail("the trace server did not start")
        client = liblizard.client_type()
        assert liblizard.lizard_trace_connect(socket.encode(), ctypes.byref(client)) == 0
        payloads = [b"first", b"", bytes(range(256)) * 4]
        for payload in payloads:
            status = liblizard.lizard_trace_record(client, b"pytest", b"test_ring.py", 42, payload, len(payload))
            assert status == 0
        assert liblizard.lizard_trace_close(client) == 0
        server.wait(timeout=30)
    finally:
        if server.poll() is None:
            server.kill()
            server.wait(timeout=10)
    assert server.returncode == 0
    ring = lizard_rs.trace_ring(saved)
    assert len(ring) == 3
    assert [r.payload for r in ring] == payloads
    for record in ring:
        assert (record.module, record.file, record.line) == ("pytest", "test_ring.py", 42)
        assert record.pid == os.getpid()
    assert [r.client_seq for r in ring] == sorted(r.client_seq for r in ring)
    assert list(ring.timestamps) == sorted(ring.timestamps)
    assert any(client["pid"] == os.getpid() for client in ring.clients)


def test_a_shared_ring_reads_while_its_server_runs_and_after_it_is_killed(lizard, liblizard, tmp_path):
    socket = f"@lizard-rs-shared-{os.getpid()}"
    ring_file = tmp_path / "shared.ring"
    server = subprocess.Popen(
        [str(lizard), "trace-server", "--socket", socket, "--no-device", "--capacity", "1MiB",
         "--ring", str(ring_file)],
        stderr=subprocess.PIPE, text=True,
    )
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if re.search(r"listening on", server.stderr.readline()):
                break
        else:
            pytest.fail("the trace server did not start")
        client = liblizard.client_type()
        assert liblizard.lizard_trace_connect(socket.encode(), ctypes.byref(client)) == 0
        payloads = [f"record {n}".encode() * n for n in range(20)]
        for payload in payloads:
            assert liblizard.lizard_trace_record(client, b"pytest", b"shared.py", 7, payload, len(payload)) == 0
        # Read while the server runs: a snapshot holds whole records only, consecutive.
        deadline = time.monotonic() + 20
        while len(lizard_rs.trace_ring(ring_file)) < len(payloads):
            assert time.monotonic() < deadline, "the records never reached the ring"
            time.sleep(0.05)
        assert liblizard.lizard_trace_close(client) == 0
        live = lizard_rs.trace_ring(ring_file)
        assert [r.payload for r in live] == payloads
        assert live.directory["next_seq"] == len(payloads)
        assert live.clients == []
    finally:
        server.kill()
        server.wait(timeout=10)
    # Killed: every record committed is still there, byte for byte.
    after = lizard_rs.trace_ring(ring_file)
    assert [r.payload for r in after] == payloads
    assert [r.seq for r in after] == list(range(len(payloads)))
