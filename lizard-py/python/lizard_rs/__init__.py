"""Arm CPU and Mali GPU counters from Python: live, and from every file lizard-rs reads or writes.

Live counters::

    import lizard_rs
    capture = lizard_rs.capture(duration=1.0, counters=["CPUCycles"])
    cycles = capture["CPUCycles"]
    cycles.timestamps, cycles.values   # NumPy arrays

Files: ``load`` (a capture document), ``apc`` (a gatord / Streamline local capture), ``trace_ring`` (a saved
trace ring), ``stm`` (an STM trace dump), ``events`` (a gatord events file). Arm's Mali database:
``lizard_rs.mali.gpu("Mali-G78")``.

Errors are ``LizardError`` subclasses, one per concern, each with ``kind`` (the cause's name) and
``__cause__`` (its causes); files that cannot be read raise ``OSError``. Every file is read under the limit of
its kind, as the ``lizard`` command reads it (``LIZARD_MAX_INPUT=4GiB`` raises them): over it,
``InputLimitError``.
"""

from . import _native
from ._native import (
    Capture,
    CaptureError,
    Counter,
    CounterError,
    CounterInfo,
    FormatError,
    GatordError,
    InputLimitError,
    LizardError,
    LizardWarning,
    MaliError,
    Session,
    SourceError,
    StatError,
    apc,
    capture,
    counters,
    events,
    load,
    stat,
    stm,
    trace_ring,
)
from . import mali

__version__ = _native.__version__

__all__ = [
    "Capture",
    "CaptureError",
    "Counter",
    "CounterError",
    "CounterInfo",
    "FormatError",
    "GatordError",
    "InputLimitError",
    "LizardError",
    "LizardWarning",
    "MaliError",
    "Session",
    "SourceError",
    "StatError",
    "apc",
    "capture",
    "counters",
    "events",
    "load",
    "mali",
    "stat",
    "stm",
    "trace_ring",
]
