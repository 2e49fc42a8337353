"""P4Runtime entities built from the model's plain `TableEntry`s, and back.

Values are encoded in P4Runtime's canonical form (big-endian, no leading zero
bytes, zero as one zero byte) after checking them against the P4Info bit
width. An LPM key of prefix length 0 is omitted from the match, as the
P4Runtime spec requires for a don't-care field. A keyless model entry is the
table's default action (written with MODIFY).
"""

from __future__ import annotations

from finsy.proto.p4.v1 import p4runtime_pb2
from ratelab_model.p4_entries import TableEntry
from ratelab_p4info import MatchKind, Schema, SchemaError

from ratelab_ctl.units import format_ipv4, format_mac

INSERT = p4runtime_pb2.Update.INSERT
MODIFY = p4runtime_pb2.Update.MODIFY
DELETE = p4runtime_pb2.Update.DELETE


class EncodeError(Exception):
    """A value does not fit the P4Info, or an entry does not match its table."""


def encode_uint(value: int, bitwidth: int) -> bytes:
    if not 0 <= value < 1 << bitwidth:
        raise EncodeError(f"value {value} does not fit {bitwidth} bits")
    return value.to_bytes(max(1, (value.bit_length() + 7) // 8), "big")


def decode_uint(data: bytes) -> int:
    return int.from_bytes(data, "big")


def describe(entry: TableEntry) -> str:
    """Short human form: `RouterIngress.ipv4_lpm 10.0.1.0/24`, `... (default)`."""
    if not entry.key:
        return f"{entry.table} (default action)"
    parts = []
    for k in entry.key:
        if isinstance(k, tuple):
            parts.append(f"{format_ipv4(k[0])}/{k[1]}" if k[0] < 1 << 32 else f"{k[0]:#x}/{k[1]}")
        else:
            parts.append(str(k))
    return f"{entry.table} {', '.join(parts)}"


def format_action(schema: Schema, entry: TableEntry) -> str:
    """`set_port(mac=02:00:00:00:00:03, rbcc_capacity=1187500, ...)`: 48-bit
    parameters are shown as MAC addresses."""
    short = entry.action.rsplit(".", 1)[-1]
    try:
        params = schema.actions[entry.action].params
    except SchemaError:
        return f"{short}{entry.params}"
    parts = []
    for p, v in zip(params, entry.params, strict=False):
        text = format_mac(v.to_bytes(6, "big")) if p.bitwidth == 48 and v < 1 << 48 else str(v)
        parts.append(f"{p.name}={text}")
    return f"{short}({', '.join(parts)})"


def table_entry_pb(schema: Schema, entry: TableEntry) -> p4runtime_pb2.TableEntry:
    try:
        table = schema.tables[entry.table]
        action = schema.actions[entry.action]
    except SchemaError as e:
        raise EncodeError(str(e)) from None
    if table.action_ref(action.id) is None:
        raise EncodeError(f"{entry.table}: action {entry.action} is not one of its actions")
    pb = p4runtime_pb2.TableEntry(table_id=table.id)
    if not entry.key:
        if table.match_fields:
            raise EncodeError(f"{entry.table} has match fields: a keyless entry makes no sense")
        pb.is_default_action = True
    else:
        if len(entry.key) != len(table.match_fields):
            raise EncodeError(
                f"{entry.table}: {len(entry.key)} key values for "
                f"{len(table.match_fields)} match fields"
            )
        for mf, k in zip(table.match_fields, entry.key, strict=True):
            where = f"{describe(entry)}: {mf.name}"
            try:
                if mf.kind is MatchKind.EXACT and isinstance(k, int):
                    pb.match.add(field_id=mf.id).exact.value = encode_uint(k, mf.bitwidth)
                elif mf.kind is MatchKind.LPM and isinstance(k, tuple):
                    value, length = k
                    if not 0 <= length <= mf.bitwidth:
                        raise EncodeError(f"prefix length {length} out of range 0..{mf.bitwidth}")
                    if value & ~(((1 << mf.bitwidth) - 1) ^ ((1 << (mf.bitwidth - length)) - 1)):
                        raise EncodeError("prefix has bits set beyond its length")
                    if length:
                        lpm = pb.match.add(field_id=mf.id).lpm
                        lpm.value = encode_uint(value, mf.bitwidth)
                        lpm.prefix_len = length
                else:
                    raise EncodeError(f"a {mf.kind.name} field cannot take {k!r}")
            except EncodeError as e:
                raise EncodeError(f"{where}: {e}") from None
    if len(entry.params) != len(action.params):
        raise EncodeError(
            f"{describe(entry)}: {len(entry.params)} parameters for {entry.action}, "
            f"which takes {len(action.params)}"
        )
    act = pb.action.action
    act.action_id = action.id
    for p, v in zip(action.params, entry.params, strict=True):
        try:
            act.params.add(param_id=p.id, value=encode_uint(v, p.bitwidth))
        except EncodeError as e:
            raise EncodeError(f"{describe(entry)}: {entry.action}.{p.name}: {e}") from None
    return pb


def entry_from_pb(schema: Schema, pb: p4runtime_pb2.TableEntry) -> TableEntry:
    """The model form of an entry read back from a switch."""
    table = schema.tables.get(pb.table_id)
    if table is None:
        raise EncodeError(f"unknown table id {pb.table_id}")
    key: list[int | tuple[int, int]] = []
    if not pb.is_default_action:
        by_id = {m.field_id: m for m in pb.match}
        for mf in table.match_fields:
            m = by_id.get(mf.id)
            if mf.kind is MatchKind.LPM:
                key.append((decode_uint(m.lpm.value), m.lpm.prefix_len) if m else (0, 0))
            elif mf.kind is MatchKind.EXACT and m is not None:
                key.append(decode_uint(m.exact.value))
            else:
                raise EncodeError(f"{table.name}: cannot read back match field {mf.name}")
    act = pb.action.action
    action = schema.actions.get(act.action_id)
    if action is None:
        raise EncodeError(f"{table.name}: unknown action id {act.action_id}")
    values = {p.param_id: decode_uint(p.value) for p in act.params}
    params = tuple(values.get(p.id, 0) for p in action.params)
    return TableEntry(table.name, tuple(key), action.name, params)


def update_pb(schema: Schema, kind: int, entry: TableEntry) -> p4runtime_pb2.Update:
    pb = table_entry_pb(schema, entry)
    if kind == DELETE:
        pb.ClearField("action")
    return p4runtime_pb2.Update(type=kind, entity=p4runtime_pb2.Entity(table_entry=pb))


def counter_read_entity(counter_id: int) -> p4runtime_pb2.Entity:
    """All indices of one counter (an unset index is a wildcard)."""
    return p4runtime_pb2.Entity(counter_entry=p4runtime_pb2.CounterEntry(counter_id=counter_id))


def register_read_entity(register_id: int) -> p4runtime_pb2.Entity:
    return p4runtime_pb2.Entity(register_entry=p4runtime_pb2.RegisterEntry(register_id=register_id))


def table_read_entity(table_id: int, default: bool = False) -> p4runtime_pb2.Entity:
    return p4runtime_pb2.Entity(
        table_entry=p4runtime_pb2.TableEntry(table_id=table_id, is_default_action=default)
    )
