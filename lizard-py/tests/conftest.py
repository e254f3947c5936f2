"""Fixtures shared by the tests: the `lizard` binary, the gatord simulator, the recordings of ../shared/data."""

import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def lizard_bin():
    """The `lizard` command-line binary: $LIZARD_BIN, else the workspace's debug or release build."""
    named = os.environ.get("LIZARD_BIN")
    if named:
        return Path(named)
    for profile in ("debug", "release"):
        candidate = REPO / "target" / profile / "lizard"
        if candidate.exists():
            return candidate
    found = shutil.which("lizard")
    return Path(found) if found else None


def skip(reason):
    """Skips the test, or fails it where CI requires every fixture (LIZARD_REQUIRE_FIXTURES set)."""
    if os.environ.get("LIZARD_REQUIRE_FIXTURES"):
        pytest.fail(f"a skip is a failure here: {reason}")
    pytest.skip(reason)


def require(module):
    """Imports `module`, or skips through `skip` (a failure where CI requires every fixture)."""
    try:
        return __import__(module)
    except ImportError as error:
        skip(f"no {module} module ({error})")


@pytest.fixture
def lizard():
    path = lizard_bin()
    if path is None or not path.exists():
        skip("the lizard binary is not built (cargo build -p lizard-cli, or set LIZARD_BIN)")
    return path


@pytest.fixture
def gatord_sim(lizard):
    """A `lizard gatord-sim` serving a Mali-G78's counters on a free port: yields "127.0.0.1:PORT"."""
    process = subprocess.Popen(
        [str(lizard), "gatord-sim", "--port", "0", "--gpu", "G78"],
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 20
        line = ""
        while time.monotonic() < deadline:
            line = process.stderr.readline()
            match = re.search(r"listening on (\S+:\d+)", line)
            if match:
                yield match.group(1)
                break
        else:
            pytest.fail(f"the gatord simulator did not start: {line!r}")
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


@pytest.fixture
def shared_data():
    """../shared/data (or $LIZARD_TEST_DATA): the real recordings."""
    root = Path(os.environ.get("LIZARD_TEST_DATA", REPO.parent / "shared" / "data"))
    if not root.is_dir():
        skip(f"no test data at {root} (set LIZARD_TEST_DATA)")
    return root


def run_python(code, timeout=60, **kwargs):
    """Runs `code` in a fresh interpreter with this package importable."""
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout, **kwargs
    )
