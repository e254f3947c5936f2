"""`stm()` with what `lizard stm-report` reads beside a dump: the target's ELF image (printf format strings),
a KeyStone II device's masters, spans, the `.dcm` sidecar, a buffer held whole with its write pointer, and what
each refuses. The dump is written here packet by packet (MIPI STPv2, as docs/stm.md lays the nibbles out), from
a program compiled here whose format strings the messages name; frames are written here as CoreSight's
formatter lays them out (stp-decode/src/formatter.rs)."""

import pathlib
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


def test_one_elf_image_is_a_path_or_a_str(tmp_path, program):
    exe, start, end = program
    path = dump(tmp_path, start, end)
    for elf in (str(exe), pathlib.Path(exe), [pathlib.Path(exe)], (str(exe),)):
        trace = lizard_rs.stm(path, device="k2h", elf=elf)
        assert all(m.kind == "stmlib" for m in trace.messages), elf
    one = lizard_rs.stm(path, device="k2h", elf=f"dsp1={exe}")
    assert {(m.master, m.kind) for m in one.messages} == {(0, "undecodable"), (1, "stmlib")}
    with pytest.raises(TypeError):
        lizard_rs.stm(path, elf=42)


def test_a_master_the_device_does_not_have_makes_a_path(tmp_path, program):
    exe, start, end = program
    path = dump(tmp_path, start, end)
    # K2H has DSP0 to DSP7: "dsp9=…" is read as a file name, as `--elf` reads it.
    with pytest.raises(FileNotFoundError):
        lizard_rs.stm(path, device="k2h", elf=f"dsp9={exe}")
    with pytest.raises(FileNotFoundError):
        lizard_rs.stm(path, device="k2h", elf=f"dsp1={tmp_path / 'missing.out'}")


def words(path):
    """The dump at `path`, padded with NULL packets to whole 32-bit words, as a trace buffer holds it."""
    data = path.read_bytes()
    return data + bytes(-len(data) % 4)


def test_a_buffer_with_its_write_pointer_is_put_in_order(tmp_path, program):
    exe, start, end = program
    data = words(dump(tmp_path, start, end))
    in_order = tmp_path / "in_order.bin"
    in_order.write_bytes(data)
    expected = [m.text for m in lizard_rs.stm(in_order, elf=str(exe)).messages]
    assert len(expected) == 20
    count = len(data) // 4
    # Not wrapped: words 0 to N-1 are the data.
    unwrapped = lizard_rs.stm(in_order, elf=str(exe), write_pointer=count)
    assert [m.text for m in unwrapped.messages] == expected
    # Wrapped: the oldest word is at the write pointer.
    pointer = 3
    wrapped = tmp_path / "wrapped.bin"
    wrapped.write_bytes(data[4 * (count - pointer) :] + data[: 4 * (count - pointer)])
    trace = lizard_rs.stm(wrapped, elf=str(exe), write_pointer=pointer, wrapped=True)
    assert [m.text for m in trace.messages] == expected
    assert trace.trace_id is None


def test_a_bad_write_pointer_or_combination_is_refused(tmp_path, program):
    exe, start, end = program
    path = tmp_path / "buffer.bin"
    path.write_bytes(words(dump(tmp_path, start, end)))
    count = path.stat().st_size // 4
    with pytest.raises(lizard_rs.FormatError, match="cannot be put in order") as outside:
        lizard_rs.stm(path, write_pointer=count + 1, wrapped=True)
    assert outside.value.kind == "Order"
    with pytest.raises(ValueError, match="write_pointer"):
        lizard_rs.stm(path, wrapped=True)
    dcm = tmp_path / "dump.dcm"
    dcm.write_text(DCM)
    with pytest.raises(ValueError, match="dcm"):
        lizard_rs.stm(path, dcm=dcm, write_pointer=count)
    with pytest.raises(ValueError, match="first is above the last"):
        lizard_rs.stm(path, hardware_masters=(0x90, 0x80))
    with pytest.raises(ValueError, match="layout"):
        lizard_rs.stm(path, window_ns=1_000_000)
    bad_layout = tmp_path / "bad.layout"
    bad_layout.write_text("bytes 15:0 bytes\n")
    with pytest.raises(lizard_rs.FormatError, match="master"):
        lizard_rs.stm(path, cptracer_layout=bad_layout)
    for trace_id in (0, 0x80, "bogus"):
        with pytest.raises((ValueError, OverflowError)):
            lizard_rs.stm(path, trace_id=trace_id)


# A `.dcm` sidecar as TI's tools write it (stp-decode's `Dcm::stpv2`), for a dump of TWP frames.
DCM = """STM_data_flip=0
STM_Buffer_Wrapped=0
HEAD_Present_0=0
HEAD_Pointer_0=0
HEAD_Present_1=0
HEAD_Pointer_1=0
STM_STP_Version=2
TWP_Protocol=1
"""


def frames(trace_id, data):
    """`data` in CoreSight formatter frames of `trace_id`: each frame an ID change, then 14 bytes (even ones
    with bit 0 in the auxiliary byte), the last padded with zeros (NULL packets of the STP stream)."""
    out = bytearray()
    for at in range(0, len(data), 14):
        chunk = list(data[at : at + 14])
        chunk += [0] * (14 - len(chunk))
        frame = [(trace_id << 1) | 1]
        aux = 0
        for i, byte in enumerate(chunk):
            position = 1 + i
            if position % 2 == 0:
                aux |= (byte & 1) << (position // 2)
                byte &= 0xFE
            frame.append(byte)
        frame.append(aux)
        out += bytes(frame)
    return bytes(out)


def test_a_dcm_says_the_dump_holds_twp_frames(tmp_path, program):
    exe, start, end = program
    bare = dump(tmp_path, start, end).read_bytes()
    framed = tmp_path / "framed.bin"
    framed.write_bytes(frames(0x40, bare))
    dcm = tmp_path / "framed.dcm"
    dcm.write_text(DCM)
    expected = [m.text for m in lizard_rs.stm(tmp_path / "keystone.stp", elf=str(exe)).messages]
    trace = lizard_rs.stm(framed, dcm=dcm, elf=str(exe))
    assert trace.trace_id == 0x40
    assert [m.text for m in trace.messages] == expected
    # The file's first bytes say the same without the sidecar.
    auto = lizard_rs.stm(framed, trace_id="auto", elf=str(exe))
    assert auto.trace_id == 0x40 and [m.text for m in auto.messages] == expected
    # Another trace ID than KeyStone II's, with the sidecar.
    other = tmp_path / "other.bin"
    other.write_bytes(frames(0x21, bare))
    assert len(lizard_rs.stm(other, dcm=dcm, trace_id=0x21, elf=str(exe))) == 20
    with pytest.raises(ValueError, match="dcm"):
        lizard_rs.stm(other, dcm=dcm, trace_id="auto")


def test_frames_of_several_sources_need_a_trace_id(tmp_path, program):
    exe, start, end = program
    bare = dump(tmp_path, start, end).read_bytes()
    path = tmp_path / "two.bin"
    path.write_bytes(frames(0x10, bytes(range(2, 200, 2))) + frames(0x21, bare))
    with pytest.raises(ValueError, match="several trace IDs"):
        lizard_rs.stm(path, trace_id="auto")
    assert len(lizard_rs.stm(path, trace_id=0x21)) == 20


def test_a_bad_or_missing_dcm_is_refused(tmp_path, program):
    exe, start, end = program
    path = dump(tmp_path, start, end)
    bad = tmp_path / "bad.dcm"
    bad.write_text("STM_data_flip=zero\n")
    with pytest.raises(lizard_rs.FormatError, match="not a decimal number") as raised:
        lizard_rs.stm(path, dcm=bad)
    assert raised.value.kind == "BadValue"
    stpv1 = tmp_path / "v1.dcm"
    stpv1.write_text(DCM.replace("STM_STP_Version=2", "STM_STP_Version=1"))
    with pytest.raises(lizard_rs.FormatError, match="STM_STP_Version=1"):
        lizard_rs.stm(path, dcm=stpv1)
    with pytest.raises(FileNotFoundError):
        lizard_rs.stm(path, dcm=tmp_path / "absent.dcm")


def test_a_stream_with_nothing_in_its_first_16_mib_is_given_up_on(tmp_path):
    path = tmp_path / "zeros.bin"
    path.write_bytes(bytes(17 << 20))
    with pytest.raises(lizard_rs.FormatError, match="nothing found") as raised:
        lizard_rs.stm(path)
    assert raised.value.kind == "NothingFound"
