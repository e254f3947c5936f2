"""`stm()` with what `lizard stm-report` reads beside a dump: the target's ELF image (printf format strings),
a KeyStone II device's masters, and spans. The dump is written here packet by packet (MIPI STPv2, as
docs/stm.md lays the nibbles out), from a program compiled here whose format strings the messages name."""

import shutil
import subprocess

import pytest

import lizard_rs
from conftest import skip

PROGRAM = r"""
const char fmt_start[] = "frame %u start";
const char fmt_end[] = "frame %u end, %d us late";
int main(void) { return fmt_start[0] + fmt_end[0] - 2 * 'f'; }
"""


class Stp:
    """A raw STPv2 stream, nibble by nibble (each byte holds two, the first in its low half)."""

    def __init__(self):
        self.nibbles = [0xF] * 21 + [0]  # ASYNC
        self.nibbles += [0xF, 0, 0, 3]  # VERSION 3: natural binary timestamps

    def value(self, value, count):
        self.nibbles += [(value >> (4 * i)) & 0xF for i in reversed(range(count))]

    def master(self, master):
        self.nibbles.append(1)  # M8
        self.value(master, 2)

    def channel(self, channel):
        self.nibbles.append(3)  # C8
        self.value(channel, 2)

    def message(self, words, timestamp):
        """D32 words, the last one marked and timestamped (D32MTS): one STMLib message."""
        for word in words[:-1]:
            self.nibbles.append(6)
            self.value(word, 8)
        self.nibbles.append(0xA)
        self.value(words[-1], 8)
        self.nibbles.append(8)  # an 8-nibble timestamp
        self.value(timestamp, 8)

    def bytes(self):
        nibbles = self.nibbles + [0] * (len(self.nibbles) % 2)
        return bytes(lo | (hi << 4) for lo, hi in zip(nibbles[::2], nibbles[1::2]))


def printf(address, *args):
    """An STMLib printf message: its header (protocol 0x80, the payload's bytes), the format's address, the
    arguments."""
    return [0x0101_8000 | (4 + 4 * len(args)), address, *[a & 0xFFFF_FFFF for a in args]]


@pytest.fixture
def program(tmp_path):
    gcc, nm = shutil.which("gcc"), shutil.which("nm")
    if not gcc or not nm:
        skip("no gcc and nm to compile the test program")
    source, exe = tmp_path / "app.c", tmp_path / "app"
    source.write_text(PROGRAM)
    subprocess.run([gcc, "-O0", "-no-pie", "-o", str(exe), str(source)], check=True)
    symbols = {}
    for line in subprocess.run([nm, str(exe)], capture_output=True, text=True, check=True).stdout.splitlines():
        parts = line.split()
        if len(parts) == 3:
            symbols[parts[2]] = int(parts[0], 16)
    return exe, symbols["fmt_start"], symbols["fmt_end"]


def dump(tmp_path, start, end):
    """DSP0 and DSP1 each log 5 frames: start, then end 1,000·(DSP+1) ticks later."""
    stp = Stp()
    events = []
    for frame in range(5):
        for dsp in range(2):
            begin = 10_000 + 5_000 * frame + 100 * dsp
            events.append((begin, dsp, printf(start, frame)))
            events.append((begin + 1_000 * (dsp + 1), dsp, printf(end, frame, dsp - 1)))
    for time, dsp, words in sorted(events):
        stp.master(dsp)
        stp.channel(1)
        stp.message(words, time)
    path = tmp_path / "keystone.stp"
    path.write_bytes(stp.bytes())
    return path


def test_printf_messages_are_formatted_with_the_elf_image(tmp_path, program):
    exe, start, end = program
    path = dump(tmp_path, start, end)
    without = lizard_rs.stm(path)
    assert len(without) == 20
    assert all(m.kind == "undecodable" for m in without.messages)
    trace = lizard_rs.stm(path, device="k2h", elf=[str(exe)], spans=["frame=start..end"])
    texts = [m.text for m in trace.messages]
    assert texts[:2] == ["frame 0 start", "frame 0 start"]
    assert "frame 4 end, 0 us late" in texts and "frame 0 end, -1 us late" in texts
    assert all(m.kind == "stmlib" and m.protocol == "printf" for m in trace.messages)
    assert {m.master for m in trace.messages} == {0, 1}
    durations = sorted(s["end"] - s["begin"] for s in trace.spans)
    assert durations == [1_000] * 5 + [2_000] * 5


def test_an_image_for_one_master_formats_only_its_messages(tmp_path, program):
    exe, start, end = program
    trace = lizard_rs.stm(dump(tmp_path, start, end), device="k2h", elf=[f"dsp1={exe}"])
    kinds = {(m.master, m.kind) for m in trace.messages}
    assert kinds == {(0, "undecodable"), (1, "stmlib")}


def test_what_is_not_an_elf_image_is_a_format_error(tmp_path, program):
    exe, start, end = program
    path = dump(tmp_path, start, end)
    not_elf = tmp_path / "not.elf"
    not_elf.write_bytes(b"\x7fELF but no more")
    with pytest.raises(lizard_rs.FormatError):
        lizard_rs.stm(path, elf=[str(not_elf)])
    with pytest.raises(FileNotFoundError):
        lizard_rs.stm(path, elf=[str(tmp_path / "missing.out")])


def test_a_bad_device_span_or_dictionary_is_refused(tmp_path, program):
    exe, start, end = program
    path = dump(tmp_path, start, end)
    with pytest.raises(ValueError, match="KeyStone"):
        lizard_rs.stm(path, device="k3x")
    with pytest.raises(ValueError, match="span"):
        lizard_rs.stm(path, spans=["no range here"])
    bad_dict = tmp_path / "bad.dict"
    bad_dict.write_text("this is = not [ a dictionary\n")
    with pytest.raises(lizard_rs.FormatError):
        lizard_rs.stm(path, dictionary=bad_dict)
