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
