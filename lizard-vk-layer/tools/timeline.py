#!/usr/bin/env python3
"""Draws a stretch of a VK_LAYER_LIZARD_workloads trace as a timeline picture (PNG), from the trace as
Perfetto's own protobuf module decodes it (perfetto-writer/tools/decode_trace.py): the frames, each queue's workloads with their
GPU times, the pipeline statistics per render pass and lizard's counters per frame, on one time axis.

    python3 timeline.py TRACE.pftrace OUT.png [FIRST_FRAME [FRAMES]]

Perfetto's UI shows the same trace interactively (ui.perfetto.dev, "Open trace file"); this picture is
drawn here, with matplotlib, for where the UI cannot run.
"""

import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

sys.path.insert(
    0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "perfetto-writer", "tools")
)
import decode_trace as decode  # noqa: E402


def main():
    path, out = sys.argv[1], sys.argv[2]
    first = int(sys.argv[3]) if len(sys.argv) > 3 else 100
    count = int(sys.argv[4]) if len(sys.argv) > 4 else 8
    with open(path, "rb") as f:
        trace = decode.decode(f.read())
    tracks = trace["tracks"]
    name = lambda uuid: tracks[str(uuid)]["name"]  # noqa: E731
    frames = [s for s in trace["slices"] if name(s["track"]) == "frames"]
    shown = [f for f in frames if first <= f["args"]["frame"] < first + count]
    if not shown:
        sys.exit(f"no frames {first}..{first + count} in the trace")
    t0, t1 = shown[0]["begin"], shown[-1]["end"]
    ms = lambda t: (t - t0) / 1e6  # noqa: E731
    queues = sorted({s["track"] for s in trace["slices"] if "type" in s["args"]})
    counter_rows = []
    for uuid, t in tracks.items():
        parent = tracks.get(str(t.get("parent")), {})
        if "counter" in t and (
            parent.get("name") == "lizard counters per frame" or t["name"].startswith("input_assembly_vertices")
        ):
            counter_rows.append(uuid)
    keep = {"TaskClock", "ContextSwitches", "PageFaults"}
    counter_rows = [u for u in counter_rows if tracks[u]["name"] in keep or "per" in tracks[u]["name"]]
    rows = 1 + len(queues) + len(counter_rows)
    fig, axes = plt.subplots(rows, 1, figsize=(13, 1.25 * rows + 1.2), sharex=True)
    process = next((t.get("process_name") for t in tracks.values() if t.get("process_name")), "")
    fig.suptitle(
        f"{process} with VK_LAYER_LIZARD_workloads: frames {first} to {first + count - 1}\n"
        "drawn by tools/timeline.py from the trace as Perfetto's perfetto_trace_pb2 decodes it "
        "(not a Perfetto UI screenshot)",
        fontsize=10,
    )
    ax = axes[0]
    for f in shown:
        ax.broken_barh([(ms(f["begin"]), ms(f["end"]) - ms(f["begin"]))], (0, 1), color="#8fb3d9", edgecolor="k")
        ax.text(ms(f["begin"]) + 0.05, 0.5, f"frame {f['args']['frame']}", va="center", fontsize=7)
    ax.set_yticks([])
    ax.set_ylabel("frames\n(CPU)", rotation=0, ha="right", va="center", fontsize=8)
    for i, q in enumerate(queues):
        ax = axes[1 + i]
        for s in trace["slices"]:
            if s["track"] != q or s["end"] < t0 or s["begin"] > t1:
                continue
            ax.broken_barh(
                [(ms(s["begin"]), ms(s["end"]) - ms(s["begin"]))], (0, 1), color="#f2a65a", edgecolor="k"
            )
            a = s["args"]
            label = f"{s['name']}, frame {a.get('frame')}\n{a.get('gpu_ns', 0) / 1e6:.2f} ms"
            if "input_assembly_vertices" in a:
                label += f", {a['input_assembly_vertices']} vertices"
            ax.text(ms(s["begin"]) + 0.02, 0.5, label, va="center", fontsize=6)
        ax.set_yticks([])
        ax.set_ylabel(name(q).replace(" index", "\nindex"), rotation=0, ha="right", va="center", fontsize=8)
    for i, u in enumerate(counter_rows):
        ax = axes[1 + len(queues) + i]
        points = [p for p in trace["values"].get(u, []) if t0 <= p[0] <= t1]
        if points:
            xs = [ms(p[0]) for p in points] + [ms(t1)]
            ys = [p[1] for p in points] + [points[-1][1]]
            ax.step(xs, ys, where="post", color="#4c8c4a")
            ax.fill_between(xs, ys, step="post", alpha=0.3, color="#4c8c4a")
        t = tracks[u]
        unit = t["counter"]["unit_name"] or t["counter"]["unit"].replace("UNIT_", "").lower()
        ax.set_ylabel(f"{t['name']}\n({unit})", rotation=0, ha="right", va="center", fontsize=8)
        ax.tick_params(axis="y", labelsize=7)
    axes[-1].set_xlabel("ms")
    fig.tight_layout()
    fig.savefig(out, dpi=110)


if __name__ == "__main__":
    main()
