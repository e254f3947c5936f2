#!/usr/bin/env python3
"""Decodes a trace of VK_LAYER_LIZARD_workloads with Perfetto's own protobuf module and prints, as JSON, what
the layer's tests check: the tracks, the slices with their arguments, the instants, the counter values and
the clock.

    python3 decode.py TRACE.pftrace

The trace is read packet by packet (each a `Trace.packet` field, as Perfetto's trace processor reads a
file), so that a trace whose writer was killed while writing its last packet still decodes up to there: the
bytes of an incomplete last packet are reported as `truncated_tail_bytes`, not an error. Anything else that
is not a packet is an error.

Interned names, categories and argument names are resolved per sequence as Perfetto does: a packet's
`interned_data` is defined for it and the later packets of its sequence until its state is cleared. A
reference to an undefined id, or from a packet without SEQ_NEEDS_INCREMENTAL_STATE, is an error (exit 1).

Needs the `perfetto` package (PyPI), which ships `perfetto_trace_pb2`, and `protobuf`. Exits 3 when the module
is missing, so that a test can say why it skips.
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
    pass


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
    def __init__(self):
        self.cleared = False
        self.tables = {"category": {}, "name": {}, "arg": {}}

    def clear(self):
        self.cleared = True
        for t in self.tables.values():
            t.clear()

    def define(self, interned):
        for kind, entries in (
            ("category", interned.event_categories),
            ("name", interned.event_names),
            ("arg", interned.debug_annotation_names),
        ):
            for e in entries:
                self.tables[kind][e.iid] = e.name


def resolve(sequence, packet, index, kind, iid):
    if not packet.sequence_flags & pb.TracePacket.SEQ_NEEDS_INCREMENTAL_STATE:
        raise Bad(f"packet {index} refers to {kind} {iid} without SEQ_NEEDS_INCREMENTAL_STATE")
    if not sequence.cleared:
        raise Bad(f"packet {index} refers to {kind} {iid} before its sequence's state was cleared")
    try:
        return sequence.tables[kind][iid]
    except KeyError:
        raise Bad(f"packet {index} refers to {kind} {iid}, not defined on its sequence") from None


def decode(data):
    raw, truncated = packets(data)
    tracks, values, instants, slices = {}, {}, [], []
    clock, unknown, sequences = None, [], {}
    for i, bytes_ in enumerate(raw):
        p = pb.TracePacket.FromString(bytes_)
        if has_unknown_fields(p):
            unknown.append(i)
        seq = sequences.setdefault(p.trusted_packet_sequence_id, Sequence())
        if p.sequence_flags & pb.TracePacket.SEQ_INCREMENTAL_STATE_CLEARED:
            seq.clear()
        if p.HasField("interned_data"):
            seq.define(p.interned_data)
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
                track["process_name"] = d.process.process_name
            if d.HasField("counter"):
                c = d.counter
                track["counter"] = {
                    "unit": pb.CounterDescriptor.Unit.Name(c.unit),
                    "unit_name": c.unit_name,
                }
            tracks[d.uuid] = track
        if p.HasField("track_event"):
            e = p.track_event
            if e.type == pb.TrackEvent.TYPE_COUNTER:
                v = e.double_counter_value if e.HasField("double_counter_value") else e.counter_value
                values.setdefault(e.track_uuid, []).append([p.timestamp, v])
            elif e.type in (pb.TrackEvent.TYPE_INSTANT, pb.TrackEvent.TYPE_SLICE_BEGIN):
                args = {}
                for a in e.debug_annotations:
                    kind = a.WhichOneof("value")
                    name = resolve(seq, p, i, "arg", a.name_iid) if a.HasField("name_iid") else a.name
                    args[name] = getattr(a, kind) if kind else None
                name = resolve(seq, p, i, "name", e.name_iid) if e.HasField("name_iid") else e.name
                categories = [resolve(seq, p, i, "category", c) for c in e.category_iids]
                event = {"track": e.track_uuid, "name": name, "categories": categories, "args": args}
                if e.type == pb.TrackEvent.TYPE_INSTANT:
                    instants.append({"ts": p.timestamp, **event})
                else:
                    slices.append({"begin": p.timestamp, **event})
            elif e.type == pb.TrackEvent.TYPE_SLICE_END:
                open_ = [s for s in slices if s["track"] == e.track_uuid and "end" not in s]
                if not open_:
                    raise Bad(f"packet {i}: a slice end on track {e.track_uuid} with no slice open")
                open_[-1]["end"] = p.timestamp
    return {
        "packets": len(raw),
        "truncated_tail_bytes": truncated,
        "packets_with_unknown_fields": unknown,
        "clock": clock,
        "tracks": {str(k): v for k, v in tracks.items()},
        "values": {str(k): v for k, v in values.items()},
        "instants": instants,
        "slices": slices,
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
