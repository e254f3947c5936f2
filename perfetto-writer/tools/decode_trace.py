#!/usr/bin/env python3
"""Decodes a Perfetto trace with Perfetto's own protobuf module and prints, as JSON, what the tests of the
crates that write traces check: the tracks, each counter track's values, the instants, the slices with their
arguments, the GPU counters and their values, and the clock.

    python3 decode_trace.py TRACE.pftrace

The trace is read packet by packet (each a `Trace.packet` field, as Perfetto's trace processor reads a
file), so that a trace whose writer was killed while writing its last packet still decodes up to there: the
bytes of an incomplete last packet are reported as `truncated_tail_bytes`, not an error. Anything else that
is not a packet is an error, and so is a slice end on a track with no slice open.

Interned names, categories and argument names are resolved per sequence as Perfetto does: a packet's
`interned_data` is defined for it and the later packets of its sequence, until a packet that clears the
sequence's state. A reference to an id not defined, or from a packet without SEQ_NEEDS_INCREMENTAL_STATE,
or before the sequence's state was cleared, is an error.

Exits 0 with the JSON; 1 when the file is not a valid trace (the reason on stderr, `interned data: ...` for
an interned string); 3 when Perfetto's module is missing, so that a test can say why it skips. It needs the
`perfetto` package (PyPI), which ships `perfetto_trace_pb2`, and `protobuf`. `decode(data)` gives the same
document to Python callers.
"""

import json
import sys

try:
    from google.protobuf import unknown_fields
    from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb
except ImportError as e:
    print(f"no perfetto_trace_pb2: {e}", file=sys.stderr)
    sys.exit(3)


class Bad(Exception):
    """The bytes are not a valid trace."""


def varint(data, at):
    """The varint at `at`, and where it ends; None when the data ends first."""
    value, shift = 0, 0
    while at < len(data):
        b = data[at]
        at += 1
        value |= (b & 0x7F) << shift
        if b < 0x80:
            return value, at
        shift += 7
        if shift > 63:
            raise Bad(f"a varint longer than 10 bytes at {at}")
    return None


def packets(data):
    """Each packet's bytes, and the length of an incomplete tail."""
    at, out = 0, []
    while at < len(data):
        key = varint(data, at)
        if key is None:
            return out, len(data) - at
        tag, after_tag = key
        if tag != 0x0A:
            raise Bad(f"byte {at}: field key {tag:#x}, not Trace.packet")
        length = varint(data, after_tag)
        if length is None:
            return out, len(data) - at
        size, start = length
        if start + size > len(data):
            return out, len(data) - at
        out.append(data[start : start + size])
        at = start + size
    return out, 0


def has_unknown_fields(message):
    """Whether `message` or any message inside it holds fields its schema does not declare (a wrong field
    number in the writer)."""
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

    def resolve(self, packet, index, kind, iid):
        """The string of `iid`, checked as Perfetto uses it."""
        if not packet.sequence_flags & pb.TracePacket.SEQ_NEEDS_INCREMENTAL_STATE:
            raise Bad(
                f"interned data: packet {index} refers to {kind} {iid} without SEQ_NEEDS_INCREMENTAL_STATE"
            )
        if not self.cleared:
            raise Bad(
                f"interned data: packet {index} refers to {kind} {iid} before its sequence's state was cleared"
            )
        try:
            return self.tables[kind][iid]
        except KeyError:
            raise Bad(
                f"interned data: packet {index} refers to {kind} {iid}, not defined on its sequence"
            ) from None


def track(d):
    """A track descriptor as the tests read it."""
    out = {"name": d.name, "description": d.description}
    if d.HasField("parent_uuid"):
        out["parent"] = d.parent_uuid
    if d.HasField("process"):
        out["pid"] = d.process.pid
        out["process_name"] = d.process.process_name
    if d.HasField("counter"):
        c = d.counter
        out["counter"] = {
            "unit": pb.CounterDescriptor.Unit.Name(c.unit),
            "unit_name": c.unit_name,
            "multiplier": c.unit_multiplier if c.HasField("unit_multiplier") else 1,
            "incremental": c.is_incremental,
            "categories": list(c.categories),
        }
    return out


def event(sequence, p, index):
    """An instant's or a slice begin's track, name, categories and arguments."""
    e = p.track_event
    args = {}
    for a in e.debug_annotations:
        kind = a.WhichOneof("value")
        name = sequence.resolve(p, index, "arg", a.name_iid) if a.HasField("name_iid") else a.name
        args[name] = getattr(a, kind) if kind else None
    name = sequence.resolve(p, index, "name", e.name_iid) if e.HasField("name_iid") else e.name
    categories = [sequence.resolve(p, index, "category", c) for c in e.category_iids]
    return {
        "track": e.track_uuid,
        "name": name,
        "categories": categories + list(e.categories),
        "args": args,
    }


def gpu_specs(g):
    """The GPU counters a GpuCounterEvent describes."""
    return [
        {
            "id": s.counter_id,
            "name": s.name,
            "description": s.description,
            "units": [pb.GpuCounterDescriptor.MeasureUnit.Name(u) for u in s.numerator_units],
        }
        for s in g.counter_descriptor.specs
    ]


def decode(data):
    """The trace `data` as the JSON document the script prints; raises Bad where it is not a valid trace."""
    raw, truncated = packets(data)
    tracks, values, instants, slices = {}, {}, [], []
    specs, gpu_values, clock, unknown, sequences = [], [], None, [], {}
    first_flags = None
    for i, bytes_ in enumerate(raw):
        try:
            p = pb.TracePacket.FromString(bytes_)
        except Exception as e:  # protobuf's DecodeError, whose module differs between its backends
            raise Bad(f"packet {i}: {e}") from None
        if i == 0:
            first_flags = p.sequence_flags
        if has_unknown_fields(p):
            unknown.append(i)
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
            tracks[p.track_descriptor.uuid] = track(p.track_descriptor)
        if p.HasField("track_event"):
            e = p.track_event
            if e.type == pb.TrackEvent.TYPE_COUNTER:
                v = e.double_counter_value if e.HasField("double_counter_value") else e.counter_value
                values.setdefault(e.track_uuid, []).append([p.timestamp, v])
            elif e.type == pb.TrackEvent.TYPE_INSTANT:
                instants.append({"ts": p.timestamp, **event(sequence, p, i)})
            elif e.type == pb.TrackEvent.TYPE_SLICE_BEGIN:
                slices.append({"begin": p.timestamp, **event(sequence, p, i)})
            elif e.type == pb.TrackEvent.TYPE_SLICE_END:
                # The end closes the slice begun last on its track.
                open_ = [s for s in slices if s["track"] == e.track_uuid and "end" not in s]
                if not open_:
                    raise Bad(f"packet {i}: a slice end on track {e.track_uuid} with no slice open")
                open_[-1]["end"] = p.timestamp
        if p.HasField("gpu_counter_event"):
            g = p.gpu_counter_event
            if g.HasField("counter_descriptor"):
                specs.extend(gpu_specs(g))
            for c in g.counters:
                v = c.double_value if c.HasField("double_value") else c.int_value
                gpu_values.append([p.timestamp, c.counter_id, v])
    return {
        "packets": len(raw),
        "truncated_tail_bytes": truncated,
        "packets_with_unknown_fields": unknown,
        "first_sequence_flags": first_flags,
        "clock": clock,
        "tracks": {str(k): v for k, v in tracks.items()},
        "values": {str(k): v for k, v in values.items()},
        "instants": instants,
        "slices": slices,
        "gpu_specs": specs,
        "gpu_values": gpu_values,
    }


def main():
    with open(sys.argv[1], "rb") as f:
        data = f.read()
    try:
        out = decode(data)
    except Bad as e:
        print(f"not a valid trace: {e}", file=sys.stderr)
        return 1
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
