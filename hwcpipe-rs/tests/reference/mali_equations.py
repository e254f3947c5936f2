#!/usr/bin/env python3
"""Reference evaluator of Arm's counter equations, independent of the Rust parser.

Usage: mali_equations.py DATABASE GPU < inputs.json > values.json

inputs.json: {"hardware": {"MachineName": value, ...}, "constants": {"MALI_CONFIG_...": value, ...}}.
Reads counterinfo/*.xml of DATABASE, keeps the entries of GPU, and evaluates every equation with Python's
own expression evaluator over numbers whose division by zero is undefined (null in the output), and nothing
else: a difference can be negative, as in Arm's library. Prints {"MachineName": value or null, ...} for every entry.
"""
import glob
import json
import os
import sys
import xml.etree.ElementTree as ET


class Undefined:
    """The value of an equation that divided by zero: every operation on it is undefined too."""

    def _same(self, *_):
        return self

    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __truediv__ = __rtruediv__ = _same


UNDEFINED = Undefined()


class Count(float):
    """A count: division by zero is undefined; nothing is clamped."""

    def __add__(self, o):
        return o if o is UNDEFINED else Count(float(self) + float(o))

    __radd__ = __add__

    def __sub__(self, o):
        return o if o is UNDEFINED else Count(float(self) - float(o))

    def __rsub__(self, o):
        return Count(float(o) - float(self))

    def __mul__(self, o):
        return o if o is UNDEFINED else Count(float(self) * float(o))

    __rmul__ = __mul__

    def __truediv__(self, o):
        if o is UNDEFINED:
            return o
        return UNDEFINED if float(o) == 0.0 else Count(float(self) / float(o))

    def __rtruediv__(self, o):
        return UNDEFINED if float(self) == 0.0 else Count(float(o) / float(self))


def main():
    db, gpu = sys.argv[1], sys.argv[2]
    inputs = json.load(sys.stdin)
    entries = {}
    for path in sorted(glob.glob(os.path.join(db, "counterinfo", "*.xml"))):
        for c in ET.parse(path).getroot().iter("CounterInfo"):
            if gpu in [g.text for g in c.find("SupportedGPUs")]:
                eq = c.find("Equation")
                entries[c.find("MachineName").text] = " ".join(eq.text.split()) if eq is not None else None
    values = {k: Count(v) for k, v in inputs["constants"].items()}
    values.update({k: Count(v) for k, v in inputs["hardware"].items()})

    def value(name, depth=0):
        if name not in values:
            scope = _Scope(value, depth)
            result = eval(entries[name], {"__builtins__": {}}, scope)
            values[name] = result if result is UNDEFINED else Count(result)
        return values[name]

    class _Scope(dict):
        def __init__(self, get, depth):
            super().__init__()
            self.get_value, self.depth = get, depth

        def __missing__(self, key):
            if key in ("max", "min"):
                f = max if key == "max" else min
                return lambda *a: UNDEFINED if UNDEFINED in a else Count(f(float(x) for x in a))
            return self.get_value(key, self.depth + 1)

    out = {name: value(name) for name in entries}
    json.dump({k: (None if v is UNDEFINED else float(v)) for k, v in out.items()}, sys.stdout)


if __name__ == "__main__":
    main()
