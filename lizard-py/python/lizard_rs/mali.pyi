from typing import List

from ._native import _Mali

__all__ = ["MaliCounter", "MaliGpu", "gpu", "gpus"]

MaliGpu = _Mali.MaliGpu
MaliCounter = _Mali.MaliCounter

def gpu(name: str) -> _Mali.MaliGpu:
    """The GPU called `name` in Arm's database ("Mali-G78", any case)."""

def gpus() -> List[str]:
    """The names of every GPU in Arm's database."""
