#!/usr/bin/env python3
"""Decodes a Perfetto trace with Perfetto's own protobuf module and prints what lizard-cli/tests/perfetto.rs
checks, as JSON: the tracks, each counter track's values, the GPU counters and their values, the instants,
the slices, and the clock.

    python3 decode.py TRACE.pftrace

Needs the `perfetto` package (PyPI), which ships `perfetto_trace_pb2`, and `protobuf`. Exits 3 when the
module is missing, so that the test can say why it skips; 1 when the file is not a trace.
"""

import json
import sys

try:
    from google.protobuf import unknown_fields
    from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb
except ImportError as e:
    print(f"no perfetto_trace_pb2: {e}", file=sys.stderr)
    sys.exit(3)


def has_unknown_fields(message) -> bool:
    """Whether `message` or any message inside it holds fields its schema does not declare."""
    if len(unknown_fields.UnknownFieldSet(message)) > 0:
        return True
    for field, value in message.ListFields():
        if field.message_type is None:
            continue
        items = value if field.is_repeated else [value]
        if any(has_unknown_fields(item) for item in items):
            return True
    return False


def main() -> int:
    trace = pb.Trace()
    with open(sys.argv[1], "rb") as f:
        trace.ParseFromString(f.read())
    # A field the schema does not know at that number would be a wrong field number in the writer.
    unknown = [i for i, p in enumerate(trace.packet) if has_unknown_fields(p)]
    tracks, values, instants, slices = {}, {}, [], []
    gpu_specs, gpu_values, clock, first_flags = [], [], None, None
    for i, p in enumerate(trace.packet):
        if i == 0:
            first_flags = p.sequence_flags
        if p.HasField("clock_snapshot"):
            clock = {
                "clocks": [[c.clock_id, c.timestamp] for c in p.clock_snapshot.clocks],
                "primary": p.clock_snapshot.primary_trace_clock,
            }
        if p.HasField("track_descriptor"):
            d = p.track_descriptor
            track = {"name": d.name, "description": d.description}
            if d.HasField("parent_uuid"):
                track["parent"] = d.parent_uuid
            if d.HasField("process"):
                track["pid"] = d.process.pid
            if d.HasField("counter"):
                c = d.counter
                track["counter"] = {
                    "unit": pb.CounterDescriptor.Unit.Name(c.unit),
                    "unit_name": c.unit_name,
                    "multiplier": c.unit_multiplier if c.HasField("unit_multiplier") else 1,
                    "incremental": c.is_incremental,
                    "categories": list(c.categories),
                }
            tracks[d.uuid] = track
        if p.HasField("track_event"):
            e = p.track_event
            if e.type == pb.TrackEvent.TYPE_COUNTER:
                value = e.double_counter_value if e.HasField("double_counter_value") else e.counter_value
                values.setdefault(e.track_uuid, []).append([p.timestamp, value])
            elif e.type == pb.TrackEvent.TYPE_INSTANT:
                args = {}
                for a in e.debug_annotations:
                    kind = a.WhichOneof("value")
                    args[a.name] = getattr(a, kind) if kind else None
                instants.append(
                    {"track": e.track_uuid, "ts": p.timestamp, "name": e.name, "args": args}
                )
            elif e.type == pb.TrackEvent.TYPE_SLICE_BEGIN:
                slices.append({"track": e.track_uuid, "begin": p.timestamp, "name": e.name})
            elif e.type == pb.TrackEvent.TYPE_SLICE_END:
                # The end closes the slice begun last on its track.
                open_ = [s for s in slices if s["track"] == e.track_uuid and "end" not in s]
                if open_:
                    open_[-1]["end"] = p.timestamp
        if p.HasField("gpu_counter_event"):
            g = p.gpu_counter_event
            if g.HasField("counter_descriptor"):
                for s in g.counter_descriptor.specs:
                    gpu_specs.append(
                        {
                            "id": s.counter_id,
                            "name": s.name,
                            "description": s.description,
                            "units": [
                                pb.GpuCounterDescriptor.MeasureUnit.Name(u) for u in s.numerator_units
                            ],
                        }
                    )
            for c in g.counters:
                value = c.double_value if c.HasField("double_value") else c.int_value
                gpu_values.append([p.timestamp, c.counter_id, value])
    print(
        json.dumps(
            {
                "packets": len(trace.packet),
                "packets_with_unknown_fields": unknown,
                "first_sequence_flags": first_flags,
                "clock": clock,
                "tracks": {str(k): v for k, v in tracks.items()},
                "values": {str(k): v for k, v in values.items()},
                "instants": instants,
                "slices": slices,
                "gpu_specs": gpu_specs,
                "gpu_values": gpu_values,
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
