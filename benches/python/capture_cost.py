"""What a capture through Python costs against the Rust engine's own capture of the same counters.

Each round captures the same counters for the same time at the same interval twice, in alternating order:

* the Rust engine's own capture: `lizard capture --no-gatord --format json -o /dev/null` (a child process:
  its wall time, and its CPU time from RUSAGE_CHILDREN);
* `lizard_rs.capture(...)` in this process, every counter's samples materialised as NumPy arrays (wall
  time, and this process's CPU time over the call, the engine's sampler threads included).

It prints both and their ratios per round, and the median ratio; the goal is at most 1.2. Run it with the
package installed (`bash .ci/python-tests` leaves a venv with it in target/python-ci/venv) and a release
`lizard` (`cargo build --release -p lizard-cli`):

    target/python-ci/venv/bin/python benches/python/capture_cost.py --lizard target/release/lizard
"""

import argparse
import resource
import statistics
import subprocess
import time

import numpy as np

import lizard_rs


def cpu_seconds(who):
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


def rust_capture(lizard, counters, duration, interval):
    """The CLI's capture: (wall s, CPU s)."""
    before = cpu_seconds(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(
        [
            lizard, "capture", "--no-gatord", "--duration", f"{duration}s",
            "--interval", f"{interval * 1e6:.0f}us", "--counters", ",".join(counters),
            "--format", "json", "-o", "/dev/null",
        ],
        check=True,
        stderr=subprocess.DEVNULL,
    )
    return time.perf_counter() - started, cpu_seconds(resource.RUSAGE_CHILDREN) - before


def python_capture(counters, duration, interval):
    """The Python capture, arrays included: (wall s, CPU s, samples)."""
    before = cpu_seconds(resource.RUSAGE_SELF)
    started = time.perf_counter()
    capture = lizard_rs.capture(duration=duration, counters=counters, gatord=False, interval=interval)
    samples = sum(int(np.isfinite(c.values).sum()) for c in capture.counters)
    return time.perf_counter() - started, cpu_seconds(resource.RUSAGE_SELF) - before, samples


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lizard", default="target/release/lizard")
    parser.add_argument("--counters", default="TaskClock,ContextSwitches,PageFaults")
    parser.add_argument("--duration", type=float, default=10.0)
    parser.add_argument("--interval", type=float, default=0.001)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    counters = args.counters.split(",")
    wall_ratios, cpu_ratios = [], []
    for round_ in range(args.rounds):
        if round_ % 2 == 0:
            rust = rust_capture(args.lizard, counters, args.duration, args.interval)
            python = python_capture(counters, args.duration, args.interval)
        else:
            python = python_capture(counters, args.duration, args.interval)
            rust = rust_capture(args.lizard, counters, args.duration, args.interval)
        wall_ratios.append(python[0] / rust[0])
        cpu_ratios.append(python[1] / rust[1])
        print(
            f"round {round_ + 1}: Rust {rust[0]:.3f} s wall, {rust[1]:.3f} s CPU; "
            f"Python {python[0]:.3f} s wall, {python[1]:.3f} s CPU, {python[2]} samples; "
            f"ratio wall {wall_ratios[-1]:.3f}, CPU {cpu_ratios[-1]:.3f}"
        )
    print(
        f"median ratio (Python ÷ Rust): wall {statistics.median(wall_ratios):.3f}, "
        f"CPU {statistics.median(cpu_ratios):.3f} (goal ≤ 1.2)"
    )


if __name__ == "__main__":
    main()
