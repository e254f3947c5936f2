#!/usr/bin/env python3
"""Decodes a Perfetto trace with Perfetto's own protobuf module and prints what lizard-cli/tests/perfetto.rs
checks, as JSON: the tracks, each counter track's values, the GPU counters and their values, the instants,
the slices, and the clock.

    python3 decode.py TRACE.pftrace

Interned names, categories and argument names are resolved per sequence as Perfetto's trace processor
does: a packet's `interned_data` is defined for it and the later packets of its sequence, until a packet
that clears the sequence's state. A reference to an id not defined, or from a packet without
`SEQ_NEEDS_INCREMENTAL_STATE`, or before the sequence's state was cleared, is an error (exit 1).

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


class Sequence:
    """The interned strings of one sequence, by kind and id."""

    def __init__(self):
        self.cleared = False
        self.tables = {"category": {}, "name": {}, "arg": {}}

    def clear(self):
        self.cleared = True
        for table in self.tables.values():
            table.clear()

    def define(self, interned):
        for kind, entries in (
            ("category", interned.event_categories),
            ("name", interned.event_names),
            ("arg", interned.debug_annotation_names),
        ):
            for e in entries:
                self.tables[kind][e.iid] = e.name


class Undefined(Exception):
    pass


def resolve(sequence, packet, index, kind, iid):
    """The string of `iid`, checked as Perfetto uses it."""
    if not packet.sequence_flags & pb.TracePacket.SEQ_NEEDS_INCREMENTAL_STATE:
        raise Undefined(f"packet {index} refers to {kind} {iid} without SEQ_NEEDS_INCREMENTAL_STATE")
    if not sequence.cleared:
        raise Undefined(f"packet {index} refers to {kind} {iid} before its sequence's state was cleared")
    try:
        return sequence.tables[kind][iid]
    except KeyError:
        raise Undefined(f"packet {index} refers to {kind} {iid}, not defined on its sequence") from None


def event_name(sequence, packet, index):
    e = packet.track_event
    if e.HasField("name_iid"):
        return resolve(sequence, packet, index, "name", e.name_iid)
    return e.name


def event_categories(sequence, packet, index):
    e = packet.track_event
    return [resolve(sequence, packet, index, "category", c) for c in e.category_iids] + list(
        e.categories
    )


def main() -> int:
    try:
        return decode()
    except Undefined as e:
        print(f"interned data: {e}", file=sys.stderr)
        return 1


def decode() -> int:
    trace = pb.Trace()
    with open(sys.argv[1], "rb") as f:
        trace.ParseFromString(f.read())
    # A field the schema does not know at that number would be a wrong field number in the writer.
    unknown = [i for i, p in enumerate(trace.packet) if has_unknown_fields(p)]
    tracks, values, instants, slices = {}, {}, [], []
    gpu_specs, gpu_values, clock, first_flags = [], [], None, None
    sequences = {}
    for i, p in enumerate(trace.packet):
        if i == 0:
            first_flags = p.sequence_flags
        sequence = sequences.setdefault(p.trusted_packet_sequence_id, Sequence())
        if (
            p.sequence_flags & pb.TracePacket.SEQ_INCREMENTAL_STATE_CLEARED
            or p.incremental_state_cleared
        ):
            sequence.clear()
        if p.HasField("interned_data"):
            sequence.define(p.interned_data)
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
            elif e.type in (pb.TrackEvent.TYPE_INSTANT, pb.TrackEvent.TYPE_SLICE_BEGIN):
                args = {}
                for a in e.debug_annotations:
                    kind = a.WhichOneof("value")
                    if a.HasField("name_iid"):
                        name = resolve(sequence, p, i, "arg", a.name_iid)
                    else:
                        name = a.name
                    args[name] = getattr(a, kind) if kind else None
                event = {
                    "track": e.track_uuid,
                    "name": event_name(sequence, p, i),
                    "categories": event_categories(sequence, p, i),
                    "args": args,
                }
                if e.type == pb.TrackEvent.TYPE_INSTANT:
                    instants.append({"ts": p.timestamp, **event})
                else:
                    slices.append({"begin": p.timestamp, **event})
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
