"""Arm's Mali counter database: a GPU's counters, their equations and constants.

::

    from lizard_rs import mali
    g78 = mali.gpu("Mali-G78")
    g78.evaluate("MaliGPUActiveUtil", {"MaliGPUActiveCy": 900, "MaliGPUCy": 1000})
"""

from ._native import mali as _mali

MaliGpu = _mali.MaliGpu
MaliCounter = _mali.MaliCounter
gpu = _mali.gpu
gpus = _mali.gpus

__all__ = ["MaliCounter", "MaliGpu", "gpu", "gpus"]
