"""Type stubs of the extension module `lizard_rs._native` (re-exported by `lizard_rs`)."""

import pathlib
from os import PathLike
from typing import Any, Dict, Iterator, List, Literal, Optional, Sequence, Tuple, Union, final

import numpy as np
from typing_extensions import disjoint_base
import numpy.typing as npt

__all__ = [
    "__version__",
    "LizardError",
    "LizardWarning",
    "SourceError",
    "GatordError",
    "CounterError",
    "CaptureError",
    "StatError",
    "FormatError",
    "MaliError",
    "InputLimitError",
    "CounterInfo",
    "Counter",
    "Capture",
    "counters",
    "capture",
    "load",
    "Session",
    "stat",
    "ApcRecording",
    "ApcSeries",
    "apc",
    "TraceRing",
    "TraceRecord",
    "TraceRingIter",
    "trace_ring",
    "StmTrace",
    "StmMessage",
    "stm",
    "events",
    "mali",
]

__version__: str

_StrPath = Union[str, "PathLike[str]"]
_Gatord = Union[None, bool, str]
_Target = Union[None, int, str]

class LizardError(Exception):
    """The base of every error lizard_rs raises (besides OSError for files that cannot be read)."""

    kind: str
    """The name of the Rust error's variant: what went wrong, without reading the message."""

class SourceError(LizardError):
    """No counter source could be opened: gatord, the local CPU counters, the target to count."""

class GatordError(SourceError):
    """The gatord named could not be used, or it failed during a capture."""

class CounterError(LizardError):
    """A counter named is unknown, or the counters named do not fit the hardware's slots together."""

class CaptureError(LizardError):
    """The engine could not start, run or stop a capture."""

class StatError(LizardError):
    """A command or process could not be counted."""

class FormatError(LizardError):
    """A file's contents are not what its format says."""

class MaliError(LizardError):
    """Arm's Mali database has no such GPU or counter, or an equation cannot be evaluated."""

class InputLimitError(LizardError):
    """An input file is over the limit for its kind (LIZARD_MAX_INPUT raises it), there is no memory to
    hold it, or a text input is not UTF-8."""

class LizardWarning(UserWarning):
    """A capture ended early or with a source's error; what was captured until then is kept."""

@disjoint_base
class CounterInfo:
    """What a counter is: its name, units, class and source."""

    @property
    def id(self) -> int: ...
    @property
    def name(self) -> str:
        """The name a user types: gatord's counter name or the local counter's name."""
    @property
    def title(self) -> str: ...
    @property
    def description(self) -> str: ...
    @property
    def category(self) -> str: ...
    @property
    def units(self) -> str:
        """The unit of the values ("" when none is given; MHz counters are read in Hz)."""
    @property
    def counter_class(self) -> str:
        """"delta", "absolute" or "derived"."""
    @property
    def source(self) -> str:
        """"gatord", "cpu" or "gpu"."""
    @property
    def scope(self) -> str:
        """What the counter counts: "system", "gpu", "process 42, all threads", …"""
    @property
    def event(self) -> Optional[str]: ...
    @property
    def multiplier(self) -> float: ...

@final

class Counter(CounterInfo):
    """One captured counter: what it is, its reading over the capture, its samples as NumPy arrays."""

    @property
    def timestamps(self) -> npt.NDArray[np.uint64]:
        """Sample timestamps, ns on the capture's time base."""
    @property
    def values(self) -> npt.NDArray[np.float64]:
        """Sample values, scaled like the reading (NaN where a value is not a number)."""
    @property
    def per_core(self) -> Optional[Dict[int, Tuple[npt.NDArray[np.uint64], npt.NDArray[np.float64]]]]: ...
    @property
    def value(self) -> Optional[float]:
        """The reading over the capture, or None (`no_value` says why)."""
    @property
    def no_value(self) -> Optional[str]: ...
    @property
    def unavailable(self) -> Optional[str]: ...
    @property
    def implausible(self) -> Optional[str]: ...
    @property
    def dropped(self) -> int: ...
    @property
    def covered_s(self) -> Optional[float]: ...
    def __len__(self) -> int: ...

@final

class Capture:
    """A capture: its counters, its window, how its sampling went, and its JSON document."""

    @property
    def counters(self) -> List[Counter]: ...
    @property
    def names(self) -> List[str]: ...
    @property
    def interrupted(self) -> bool:
        """Whether Ctrl-C ended the capture early (what was captured until then is kept)."""
    @property
    def window_ns(self) -> Optional[Tuple[int, int]]: ...
    @property
    def started_ns(self) -> Optional[int]: ...
    @property
    def boottime_zero_ns(self) -> Optional[int]: ...
    @property
    def duration_s(self) -> Optional[float]: ...
    @property
    def wall_s(self) -> Optional[float]: ...
    @property
    def warning(self) -> Optional[str]: ...
    @property
    def sampling(self) -> Optional[Dict[str, Any]]:
        """The sampling account: periods expected, delivered, missed; the GPU's under "gpu"."""
    @property
    def run(self) -> Optional[Dict[str, Any]]: ...
    @property
    def trace_records(self) -> List[Dict[str, Any]]: ...
    def to_json(self) -> str: ...
    def save(self, path: _StrPath) -> None: ...
    def to_pandas(self) -> Any:
        """A pandas DataFrame, one row a sample: counter, timestamp_ns, value."""
    def __len__(self) -> int: ...
    def __getitem__(self, key: Union[int, str], /) -> Counter: ...

@final

class Session:
    """Counters read over regions of a program, the per-draw pattern of the C API."""

    def __new__(
        cls,
        counters: Optional[Sequence[str]] = None,
        *,
        gatord: _Gatord = None,
        target: _Target = None,
        interval: float = 0.001,
    ) -> "Session": ...
    def __enter__(self) -> "Session": ...
    def __exit__(self, *exc: object) -> bool: ...
    def start(self) -> None: ...
    def read(self) -> Dict[str, Optional[float]]:
        """Ends the region, returns each counter's reading over it, and starts the next."""
    @property
    def no_value(self) -> Dict[str, str]: ...
    @property
    def counters(self) -> List[str]: ...
    def close(self) -> None: ...

def counters(gatord: _Gatord = None) -> List[CounterInfo]:
    """Every counter the sources give (gatord when one answers, else the local counters); beside the local
    counters, the CPU's Arm PMU events (category "Arm PMU event"), which `capture` counts when named."""

def capture(
    duration: float = 2.0,
    counters: Optional[Sequence[str]] = None,
    *,
    gatord: _Gatord = None,
    interval: float = 0.001,
    target: _Target = None,
    per_core: bool = False,
) -> Capture:
    """Captures the counters for `duration` seconds (Ctrl-C ends it early and keeps what was captured)."""

def stat(
    command: Optional[Sequence[str]] = None,
    counters: Optional[Sequence[str]] = None,
    *,
    target: _Target = None,
    metrics: bool = False,
    user_only: bool = False,
    duration: Optional[float] = None,
) -> Dict[str, Any]:
    """Counts a command (or a process, or CPUs): the document of `lizard stat --format json`."""

def load(path: _StrPath) -> Capture:
    """A capture document as `lizard capture --format json` writes it."""

@final

class ApcSeries:
    """One counter's values in a local capture, in the order recorded. Perf counter values are the increase
    since the previous reading on the same core."""

    @property
    def key(self) -> int:
        """The gatord key."""
    @property
    def timestamps(self) -> npt.NDArray[np.uint64]:
        """Nanoseconds since capture start."""
    @property
    def values(self) -> npt.NDArray[np.float64]:
        """The values."""
    @property
    def cores(self) -> npt.NDArray[np.int64]:
        """The CPU each value was counted on, -1 for a value of the whole system."""
    def __len__(self) -> int: ...

@final

class ApcRecording:
    """A Streamline local capture directory read whole: its values per counter and what the walk summed up."""

    @property
    def path(self) -> pathlib.Path:
        """The directory read."""
    @property
    def protocol(self) -> Optional[int]:
        """The protocol version captured.xml gives; None without one (950 is assumed)."""
    @property
    def counters(self) -> dict[str, ApcSeries]:
        """Counter name -> ApcSeries, in the order of their gatord keys."""
    @property
    def summary(self) -> dict[str, Any]:
        """clocks, attributes, frames (count per type), perf_events, errors (texts): as
        `lizard apc-dump --format json` writes them."""
    @property
    def issues(self) -> list[str]:
        """What could not be read in the frame file, one text each."""
    @property
    def samples(self) -> int:
        """How many values the capture holds (over every counter)."""

def apc(path: _StrPath) -> ApcRecording:
    """Reads a Streamline local capture directory (x.apc). FormatError: not a directory, malformed
    captured.xml/events.xml; OSError: missing path or frame file, unreadable file. Undecodable frames are
    `issues`, not errors."""

@final

class TraceRecord:
    """One record of a saved trace ring, as its client made it."""

    @property
    def seq(self) -> int: ...
    @property
    def timestamp_ns(self) -> int:
        """When the client made the record (CLOCK_MONOTONIC_RAW, ns)."""
    @property
    def stored_ns(self) -> int:
        """When the server copied the payload (0: not known)."""
    @property
    def module(self) -> str: ...
    @property
    def file(self) -> str: ...
    @property
    def line(self) -> int: ...
    @property
    def pid(self) -> int: ...
    @property
    def client_seq(self) -> int: ...
    @property
    def payload(self) -> bytes: ...
    @property
    def origin(self) -> dict[str, Any]:
        """{"kind": "unknown" | "inline" | "memfd" | "device"}; a device record also has mode, device, offset."""

@final

class TraceRing:
    """A saved trace ring: its records oldest first, its directory and every client's account."""

    @property
    def path(self) -> pathlib.Path:
        """The file read."""
    @property
    def directory(self) -> dict[str, int]:
        """capacity, first_seq, next_seq, record_count, bytes_used, records_overwritten."""
    @property
    def clients(self) -> list[dict[str, int]]:
        """pid, stored, overwritten, refused, connections_refused, device_sync, device_async, held."""
    @property
    def timestamps(self) -> npt.NDArray[np.uint64]:
        """Each record's timestamp_ns, oldest first."""
    def __len__(self) -> int: ...
    def __getitem__(self, index: int, /) -> TraceRecord: ...
    def __iter__(self) -> TraceRingIter: ...

@final

class TraceRingIter:
    """An iterator over a TraceRing's records, oldest first."""

    def __iter__(self) -> TraceRingIter: ...
    def __next__(self) -> TraceRecord: ...

def trace_ring(path: _StrPath) -> TraceRing:
    """Reads a trace ring saved by `lizard trace-server --output`, or the shared ring file of `lizard
    trace-server --ring` while its server may write it (a consistent snapshot). OSError: cannot be opened
    or read; FormatError: not a valid ring file."""

@final

class StmMessage:
    """One message of an STM trace, decoded (or kept raw, with the reason)."""

    @property
    def time(self) -> int:
        """When its last packet was written (ns with clock_hz, else STM timestamp ticks)."""
    @property
    def master(self) -> int: ...
    @property
    def channel(self) -> int: ...
    @property
    def timestamp(self) -> Optional[int]:
        """The absolute STM timestamp of its last packet, None without one."""
    @property
    def offset(self) -> int:
        """Nibble offset of its first packet."""
    @property
    def packets(self) -> int: ...
    @property
    def text(self) -> str: ...
    @property
    def kind(self) -> str:
        """"stmlib", "values" or "undecodable"."""
    @property
    def protocol(self) -> Optional[str]:
        """The STMLib protocol ("printf", "putMsg", ...), None for values."""
    @property
    def reason(self) -> Optional[str]:
        """Why an undecodable message could not be decoded, None otherwise."""
    @property
    def data(self) -> bytes:
        """Its bytes as assembled, header included."""
    @property
    def values(self) -> list[int]:
        """For a "values" message: each packet's value."""

@final

class StmTrace:
    """An STM trace decoded: its messages, the data that did not make a message, the trace lost, the stats."""

    @property
    def path(self) -> pathlib.Path:
        """The file read."""
    @property
    def trace_id(self) -> Optional[int]:
        """The trace ID whose frames were decoded; None for a bare STP stream."""
    @property
    def messages(self) -> list[StmMessage]: ...
    @property
    def torn(self) -> list[dict[str, Any]]:
        """time, master, channel, packets, bytes, offset, cause."""
    @property
    def losses(self) -> list[dict[str, Any]]:
        """time, kind ("unsynced", "decode", "frame", "master_overflow", "global_overflow") and, by kind,
        nibbles, error, master, value (stp_decode's serialized losses)."""
    @property
    def spans(self) -> list[dict[str, Any]]:
        """span (its position in `spans`), name, master, begin, end."""
    @property
    def stats(self) -> dict[str, Any]:
        """As `lizard stm-report --format json` writes its stats."""
    @property
    def times(self) -> npt.NDArray[np.uint64]:
        """Each message's time, in stream order."""
    def __len__(self) -> int: ...

def stm(
    path: _StrPath,
    *,
    trace_id: Union[int, Literal["auto"], None] = None,
    clock_hz: Optional[int] = None,
    mid_stream: bool = False,
    device: Optional[str] = None,
    elf: Union[_StrPath, Sequence[_StrPath], None] = None,
    dictionary: Optional[_StrPath] = None,
    spans: Optional[Sequence[str]] = None,
    dcm: Optional[_StrPath] = None,
    write_pointer: Optional[int] = None,
    wrapped: bool = False,
    hardware_masters: Optional[Tuple[int, int]] = None,
    cptracer_layout: Optional[_StrPath] = None,
    window_ns: Optional[int] = None,
) -> StmTrace:
    """Decodes an STM (MIPI STPv2) dump as `lizard stm-report` does, with every input it takes. Framing: raw
    STP without trace_id, CoreSight / TWP frames of trace_id, trace_id="auto" as the file's first 64 KiB
    say, or as the `dcm` sidecar says (frames on trace_id, default 0x40). `write_pointer` (32-bit words)
    reads the file whole as a trace buffer, its oldest word at the pointer when `wrapped`. `device` ("k2h",
    "k2e", "k2l") and `hardware_masters` ((first, last)) name the masters; `elf`: a path or a list of them
    (a str may be "MASTER=PATH") whose format strings decode STMLib printf; a `dictionary` naming values;
    `spans` ("NAME=START..END"); `cptracer_layout` and `window_ns` for CP Tracer throughput. OSError: a
    file cannot be read; FormatError: a dump, sidecar, image, dictionary or layout is not one, or a stream
    gives nothing in its first 16 MiB; ValueError: a bad trace ID, device, span or combination. Garbage in
    the dump decodes as losses."""

def events(path: _StrPath) -> list[dict[str, Any]]:
    """A gatord events XML file as one dict per event: category, counter_set, counter, event, title, name,
    description, units, class, multiplier. OSError: cannot be read; FormatError: malformed XML."""

class _Mali:
    @final
    class MaliCounter:
        name: str
        human_name: str
        group: str
        units: str
        description: str
        hardware: bool
        block: Optional[str]
        index: Optional[int]
        equation: Optional[str]
        inputs: List[str]
        unavailable: Optional[str]
        caveat: Optional[str]

    @final

    class MaliGpu:
        @property
        def name(self) -> str: ...
        @property
        def architecture(self) -> Optional[str]: ...
        @property
        def counters(self) -> List["_Mali.MaliCounter"]: ...
        @property
        def constants(self) -> List[Tuple[str, str]]: ...
        def counter_named(self, name: str) -> "_Mali.MaliCounter": ...
        def evaluate(
            self,
            name: str,
            values: Dict[str, float],
            constants: Optional[Dict[str, float]] = None,
        ) -> float: ...
        def __len__(self) -> int: ...

    @staticmethod
    def gpu(name: str) -> "_Mali.MaliGpu": ...
    @staticmethod
    def gpus() -> List[str]: ...

mali: _Mali
