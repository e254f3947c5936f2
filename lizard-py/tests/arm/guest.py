"""What the emulated Arm systems of .ci/python-arm-tests give the tests of this folder: the Arm CPU with its
PMU, the `arm_loop` program whose every instruction is known, the real gatord 9.7.2, Arm's kbase driver over
its dummy GPU model. Each is found from the environment the stage sets; without it a test skips, saying why
(a failure where LIZARD_REQUIRE_FIXTURES is set, as the stage sets it).

Imported by the test modules of this folder (fixtures included), not a conftest: the folder's tests run apart
from the x86 ones, and `conftest` is the parent folder's.
"""

import ctypes
import errno
import os
import platform
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from conftest import skip

# Instructions one run of `arm_loop` (lizard-cli/examples/arm_loop.rs) executes, all at EL0: two to load the
# count, 1 000 000 iterations of a two-instruction loop, three to call exit.
ARM_LOOP_INSTRUCTIONS = 2_000_005

# The port of the issue's `capture(gatord="127.0.0.1:8080")`, gatord's own default.
GATORD_PORT = 8080

# Deadlines: under the emulator a second of the guest takes a few of the host.
GATORD_LISTEN_S = 90
STOP_S = 20


def note(text):
    """Prints a figure of the stage's summary (a line starting "python-arm: ", which the stage shows)."""
    print(f"python-arm: {text}", flush=True)


def on_arm():
    """Skips unless this is a 64-bit Arm Linux machine."""
    if platform.machine() != "aarch64":
        skip(
            f"an aarch64 test (this machine is {platform.machine()}): it runs in the emulated Arm system of "
            ".ci/python-arm-tests"
        )


@pytest.fixture
def icount():
    """The emulated Arm system under -icount, where counts are exact and one instruction is one cycle."""
    on_arm()
    if os.environ.get("LIZARD_ARM_VM") != "icount":
        skip("exact counts need the emulated Arm system under -icount (.ci/arm-vm --icount sets LIZARD_ARM_VM)")


@pytest.fixture
def arm_loop():
    """`arm_loop`, copied into memory (a program read over the 9p share makes the CPU wait for the host) in a
    folder every user may read, so that an unprivileged process can run it too."""
    on_arm()
    named = os.environ.get("LIZARD_ARM_LOOP")
    if not named or not Path(named).is_file():
        skip("LIZARD_ARM_LOOP does not name the static aarch64 arm_loop (.ci/python-arm-tests builds it)")
    folder = Path(tempfile.mkdtemp(prefix="arm-loop-"))
    try:
        folder.chmod(0o755)
        program = folder / "arm_loop"
        shutil.copyfile(named, program)
        program.chmod(0o755)
        yield program
    finally:
        shutil.rmtree(folder, ignore_errors=True)


class Busy:
    """`arm_loop` run over and over by a shell until stopped, so that the only CPU never idles."""

    def __init__(self, program):
        self.process = subprocess.Popen(
            ["sh", "-c", f"while :; do {program}; done"], start_new_session=True
        )

    def stop(self):
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=STOP_S)


def listening(port):
    """Whether something listens on TCP `port` here (read from /proc/net/tcp*, disturbing no daemon)."""
    wanted = f":{port:04X}"
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if len(fields) > 3 and fields[1].endswith(wanted) and fields[3] == "0A":
                return True
    return False


@pytest.fixture(scope="module")
def real_gatord():
    """Arm's gatord 9.7.2 (LIZARD_REAL_GATORD names the binary), started here as a user starts it on a
    device, listening on 127.0.0.1:8080 with the Cortex-A72's cycle counter configured: yields its address."""
    on_arm()
    binary = os.environ.get("LIZARD_REAL_GATORD")
    if not binary or not Path(binary).is_file():
        skip("LIZARD_REAL_GATORD does not name gatord (.ci/python-arm-tests runs the real gatord 9.7.2)")
    if listening(GATORD_PORT):
        pytest.fail(f"something already listens on port {GATORD_PORT}")
    folder = Path(tempfile.mkdtemp(prefix="gatord-"))
    configuration = folder / "configuration.xml"
    configuration.write_text(
        '<?xml version="1.0" encoding="UTF-8"?>\n<configurations revision="3">\n'
        '<configuration counter="ARMv8_Cortex_A72_ccnt" />\n</configurations>\n'
    )
    log = folder / "gatord.log"
    with open(log, "wb") as out:
        daemon = subprocess.Popen(
            [binary, "-p", str(GATORD_PORT), "-c", str(configuration), "-O", "yes"],
            cwd=folder,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        deadline = time.monotonic() + GATORD_LISTEN_S
        while not listening(GATORD_PORT):
            if daemon.poll() is not None:
                pytest.fail(f"gatord exited ({daemon.returncode}) before listening: {log.read_text()}")
            if time.monotonic() > deadline:
                pytest.fail(f"gatord did not listen within {GATORD_LISTEN_S} s: {log.read_text()}")
            time.sleep(0.1)
        yield f"127.0.0.1:{GATORD_PORT}"
    finally:
        daemon.kill()
        daemon.wait(timeout=STOP_S)
        shutil.rmtree(folder, ignore_errors=True)


# Arm's kbase driver over its dummy GPU model: `KBASE_IOCTL_HWCNT_SET` (a NO_MALI-only ioctl of the driver's
# uapi, include/uapi/gpu/arm/midgard/mali_kbase_ioctl.h) sets every counter of the model from user space.
def _ioc(direction, number, size):
    return (direction << 30) | (size << 16) | (0x80 << 8) | number


_WRITE, _READ = 1, 2
VERSION_CHECK_JM = _ioc(_READ | _WRITE, 0, 4)
VERSION_CHECK_CSF = _ioc(_READ | _WRITE, 0x34, 4)
SET_FLAGS = _ioc(_WRITE, 1, 4)
HWCNT_SET = _ioc(_WRITE, 32, 16)
# Counters 4..63 of every block, in the model's slot order: front end, tiler, 8 memory-system, 32 shader cores.
VALUES_PER_BLOCK = 60
MEMSYS_SLOTS = 8
SHADER_SLOTS = 32
BLOCKS = 2 + MEMSYS_SLOTS + SHADER_SLOTS
# What the model has present (DUMMY_IMPLEMENTATION_SHADER_PRESENT 0xF, one L2 slice).
SHADER_CORES = 4
L2_SLICES = 1
_SLOT_OF_BLOCK = {"FrontEnd": 0, "Tiler": 1, "Memory": 2, "ShaderCore": 2 + MEMSYS_SLOTS}
_PRESENT = {"FrontEnd": 1, "Tiler": 1, "Memory": L2_SLICES, "ShaderCore": SHADER_CORES}


def distinct(slot, index):
    """The value injected into counter `index` (4..63) of block `slot`: distinct in every block and counter."""
    return (slot + 1) * 1000 + index


def one_dump(block, index):
    """What a hardware counter of `block` ("FrontEnd", "Tiler", "Memory", "ShaderCore") and `index` reads in
    one dump after `set_counters(distinct)`: the injected values of the present blocks of its kind, summed."""
    first = _SLOT_OF_BLOCK[block]
    return sum(distinct(first + i, index) for i in range(_PRESENT[block]))


@pytest.fixture(scope="module")
def kbase_gpu():
    """The dummy GPU the guest loaded (`insmod mali_kbase.ko no_mali_gpu=NAME`; LIZARD_KBASE_GPU names it)."""
    on_arm()
    if not Path("/dev/mali0").exists():
        skip("no /dev/mali0: the Mali part runs in the emulated Arm system with Arm's kbase driver loaded")
    name = os.environ.get("LIZARD_KBASE_GPU")
    if not name:
        skip("/dev/mali0 exists but LIZARD_KBASE_GPU does not name the dummy GPU loaded")
    return name


def _ioctl(fd, request, buffer):
    libc = ctypes.CDLL(None, use_errno=True)
    libc.ioctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_void_p]
    if libc.ioctl(fd, request, ctypes.addressof(buffer)) < 0:
        code = ctypes.get_errno()
        raise OSError(code, f"ioctl {request:#x}: {os.strerror(code)}")


def set_counters(value):
    """Sets every counter of the dummy model: `value(slot, index)` for counters 4..63 of each block slot. The
    values stay until set again, and every dump reports them again."""
    fd = os.open("/dev/mali0", os.O_RDWR | os.O_CLOEXEC)
    try:
        for request in (VERSION_CHECK_JM, VERSION_CHECK_CSF):
            version = (ctypes.c_uint16 * 2)(0, 0)
            try:
                _ioctl(fd, request, version)
            except OSError as error:
                if error.errno in (errno.EINVAL, errno.ENOTTY, errno.EPERM):
                    continue
                raise
            if tuple(version) != (0, 0):
                break
        else:
            raise OSError(errno.ENOTTY, "/dev/mali0 answers neither version check")
        _ioctl(fd, SET_FLAGS, ctypes.c_uint32(1 << 1))
        data = (ctypes.c_uint32 * (BLOCKS * VALUES_PER_BLOCK))(
            *[value(slot, 4 + i) for slot in range(BLOCKS) for i in range(VALUES_PER_BLOCK)]
        )
        arg = (ctypes.c_uint64 * 2)(ctypes.addressof(data), ctypes.sizeof(data))
        _ioctl(fd, HWCNT_SET, arg)
    finally:
        os.close(fd)
