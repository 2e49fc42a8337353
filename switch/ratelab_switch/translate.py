"""P4Runtime messages -> engine values (validated against the schema), and back."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from finsy.proto.p4.v1 import p4data_pb2
from finsy.proto.p4.v1 import p4runtime_pb2 as p4r
from ratelab_p4info import ActionInfo, MatchKind, ScalarType, TableInfo

from . import codec
from .engine_api import ActionCall, CounterValue, KeyField, MeterConfig, Replica
from .errors import invalid, permission_denied, unimplemented
from .schema import Schema

# v1model: egress_spec / egress_port are 9 bits wide, egress_rid 16 bits.
MAX_PORT = 511
MAX_INSTANCE = 0xFFFF

# Identity of a table entry inside its table: the normalised key and the priority.
EntryKey = tuple[tuple[KeyField, ...], int]


@dataclass(frozen=True)
class ParsedMatch:
    key: tuple[KeyField, ...]
    # The match fields as a client should read them back (canonical bytestrings).
    canonical: tuple[p4r.FieldMatch, ...]


def parse_match(table: TableInfo, matches: list[p4r.FieldMatch]) -> ParsedMatch:
    """Validate the match fields of an entry and fill in the omitted (don't care) ones."""
    given: dict[int, p4r.FieldMatch] = {}
    for fm in matches:
        info = table.match_field(fm.field_id)
        if info is None:
            raise invalid(f"table {table.name}: unknown match field id {fm.field_id}")
        if fm.field_id in given:
            raise invalid(f"table {table.name}: match field {info.name} given twice")
        given[fm.field_id] = fm
    key: list[KeyField] = []
    canonical: list[p4r.FieldMatch] = []
    for info in table.match_fields:
        fm = given.get(info.id)
        what = f"table {table.name}: match field {info.name}"
        width = info.bitwidth
        if fm is None:
            if info.kind is MatchKind.EXACT:
                raise invalid(f"{what}: exact match field is missing")
            key.append(_wildcard(info.kind, width))
            continue
        which = fm.WhichOneof("field_match_type")
        if which != info.kind.value:
            raise invalid(f"{what}: expected a {info.kind.value} match, got {which}")
        out = p4r.FieldMatch(field_id=info.id)
        if info.kind is MatchKind.EXACT:
            v = codec.decode(fm.exact.value, width, what)
            key.append(KeyField(MatchKind.EXACT, v, mask=codec.mask_of(width)))
            out.exact.value = codec.encode(v, width)
        elif info.kind is MatchKind.LPM:
            plen = fm.lpm.prefix_len
            if plen <= 0 or plen > width:
                raise invalid(
                    f"{what}: prefix length {plen} not in 1..{width} (omit the field for /0)"
                )
            v = codec.decode(fm.lpm.value, width, what)
            if v & ~codec.prefix_mask(plen, width):
                raise invalid(f"{what}: value has bits set beyond the /{plen} prefix")
            key.append(KeyField(MatchKind.LPM, v, prefix_len=plen))
            out.lpm.value = codec.encode(v, width)
            out.lpm.prefix_len = plen
        elif info.kind is MatchKind.TERNARY:
            v = codec.decode(fm.ternary.value, width, what)
            m = codec.decode(fm.ternary.mask, width, f"{what} mask")
            if len(fm.ternary.value) > len(fm.ternary.mask):
                raise invalid(f"{what}: value bytestring is longer than the mask's")
            if m == 0:
                raise invalid(f"{what}: mask is zero (omit the field for a wildcard)")
            if v & ~m:
                raise invalid(f"{what}: value has bits set outside the mask")
            key.append(KeyField(MatchKind.TERNARY, v, mask=m))
            out.ternary.value = codec.encode(v, width)
            out.ternary.mask = codec.encode(m, width)
        elif info.kind is MatchKind.RANGE:
            lo = codec.decode(fm.range.low, width, f"{what} low")
            hi = codec.decode(fm.range.high, width, f"{what} high")
            if lo > hi:
                raise invalid(f"{what}: low {lo} is above high {hi}")
            if lo == 0 and hi == codec.mask_of(width):
                raise invalid(f"{what}: full range (omit the field for a wildcard)")
            key.append(KeyField(MatchKind.RANGE, lo, high=hi))
            out.range.low = codec.encode(lo, width)
            out.range.high = codec.encode(hi, width)
        else:  # OPTIONAL: a ternary with an all-ones mask when present
            v = codec.decode(fm.optional.value, width, what)
            key.append(KeyField(MatchKind.OPTIONAL, v, mask=codec.mask_of(width)))
            out.optional.value = codec.encode(v, width)
        canonical.append(out)
    return ParsedMatch(tuple(key), tuple(canonical))


def key_from_engine(table: TableInfo, key: Sequence[KeyField]) -> ParsedMatch:
    """A key the engine reports (the program's own entries), normalised as `parse_match`
    normalises a client's, with the canonical FieldMatches a client reads back."""
    if len(key) != len(table.match_fields):
        raise invalid(f"table {table.name}: engine key has {len(key)} fields")
    norm: list[KeyField] = []
    canonical: list[p4r.FieldMatch] = []
    for info, k in zip(table.match_fields, key, strict=True):
        if info.kind is MatchKind.OPTIONAL and k.kind is MatchKind.TERNARY:
            # BMv2 JSON may spell an optional entry as a ternary one (all-ones or zero mask).
            k = KeyField(MatchKind.OPTIONAL, k.value, mask=1 if k.mask else 0)
        if k.kind is not info.kind:
            raise invalid(f"table {table.name}: engine key field {info.name} is {k.kind.value}")
        width = info.bitwidth
        full = codec.mask_of(width)
        out = p4r.FieldMatch(field_id=info.id)
        if info.kind is MatchKind.EXACT:
            v = k.value & full
            norm.append(KeyField(MatchKind.EXACT, v, mask=full))
            out.exact.value = codec.encode(v, width)
        elif info.kind is MatchKind.LPM:
            if k.prefix_len == 0:
                norm.append(_wildcard(info.kind, width))
                continue
            v = k.value & codec.prefix_mask(k.prefix_len, width)
            norm.append(KeyField(MatchKind.LPM, v, prefix_len=k.prefix_len))
            out.lpm.value = codec.encode(v, width)
            out.lpm.prefix_len = k.prefix_len
        elif info.kind is MatchKind.TERNARY:
            m = k.mask & full
            if m == 0:
                norm.append(_wildcard(info.kind, width))
                continue
            v = k.value & m
            norm.append(KeyField(MatchKind.TERNARY, v, mask=m))
            out.ternary.value = codec.encode(v, width)
            out.ternary.mask = codec.encode(m, width)
        elif info.kind is MatchKind.RANGE:
            lo, hi = k.value & full, k.high & full
            if lo == 0 and hi == full:
                norm.append(_wildcard(info.kind, width))
                continue
            norm.append(KeyField(MatchKind.RANGE, lo, high=hi))
            out.range.low = codec.encode(lo, width)
            out.range.high = codec.encode(hi, width)
        else:
            if k.mask == 0:
                norm.append(_wildcard(info.kind, width))
                continue
            v = k.value & full
            norm.append(KeyField(MatchKind.OPTIONAL, v, mask=full))
            out.optional.value = codec.encode(v, width)
        canonical.append(out)
    return ParsedMatch(tuple(norm), tuple(canonical))


def _wildcard(kind: MatchKind, width: int) -> KeyField:
    if kind is MatchKind.RANGE:
        return KeyField(kind, 0, high=codec.mask_of(width))
    return KeyField(kind, 0)


def check_priority(table: TableInfo, priority: int) -> None:
    if table.needs_priority:
        if priority <= 0:
            raise invalid(
                f"table {table.name}: priority must be > 0 (it has ternary/range/optional fields)"
            )
    elif priority != 0:
        raise invalid(f"table {table.name}: priority must be 0 (no ternary/range/optional fields)")


def parse_action(
    schema: Schema, table: TableInfo, table_action: p4r.TableAction, *, default: bool
) -> tuple[ActionCall, p4r.TableAction]:
    """Validate a direct action for `table`; returns the engine call and its canonical form."""
    which = table_action.WhichOneof("type")
    if which is None:
        raise invalid(f"table {table.name}: entry has no action")
    if which != "action":
        raise invalid(f"table {table.name}: {which} given but the table is a direct table")
    call, canonical = parse_table_action(schema, table, table_action.action, default=default)
    return call, p4r.TableAction(action=canonical)


def parse_table_action(
    schema: Schema, table: TableInfo, msg: p4r.Action, *, default: bool
) -> tuple[ActionCall, p4r.Action]:
    """An action (and its parameters) that `table` may run, as entry or as default."""
    ref = table.action_ref(msg.action_id)
    if ref is None:
        raise invalid(f"table {table.name}: action id {msg.action_id} is not one of its actions")
    action = schema.actions[ref.id]
    if default and not ref.default_ok:
        raise permission_denied(
            f"table {table.name}: action {action.name} is @tableonly (not a default action)"
        )
    if not default and not ref.table_ok:
        raise permission_denied(
            f"table {table.name}: action {action.name} is @defaultonly (default action only)"
        )
    args, canonical = parse_params(action, msg)
    return ActionCall(action.name, args), canonical


def parse_params(action: ActionInfo, msg: p4r.Action) -> tuple[tuple[int, ...], p4r.Action]:
    given: dict[int, bytes] = {}
    for p in msg.params:
        info = action.param(p.param_id)
        if info is None:
            raise invalid(f"action {action.name}: unknown parameter id {p.param_id}")
        if p.param_id in given:
            raise invalid(f"action {action.name}: parameter {info.name} given twice")
        given[p.param_id] = p.value
    args: list[int] = []
    out = p4r.Action(action_id=action.id)
    for info in action.params:
        raw = given.get(info.id)
        if raw is None:
            raise invalid(f"action {action.name}: parameter {info.name} is missing")
        v = codec.decode(raw, info.bitwidth, f"action {action.name}: parameter {info.name}")
        args.append(v)
        out.params.add(param_id=info.id, value=codec.encode(v, info.bitwidth))
    return tuple(args), out


def action_to_proto(schema: Schema, call: ActionCall) -> p4r.TableAction:
    """An engine ActionCall (e.g. the program's own default) as a P4Runtime TableAction."""
    action = schema.actions.get(call.name)
    if action is None:
        # BMv2 JSON may spell the no-op action without its control prefix.
        action = next((a for a in schema.actions if a.name.split(".")[-1] == call.name), None)
    if action is None:
        raise invalid(f"engine default action {call.name!r} is not in the P4Info")
    out = p4r.Action(action_id=action.id)
    for info, v in zip(action.params, call.args, strict=False):
        out.params.add(param_id=info.id, value=codec.encode(v, info.bitwidth))
    return p4r.TableAction(action=out)


def parse_meter_config(msg: p4r.MeterConfig, what: str) -> MeterConfig:
    if min(msg.cir, msg.cburst, msg.pir, msg.pburst) < 0:
        raise invalid(f"{what}: meter rates and bursts must not be negative")
    if msg.pir < msg.cir:
        raise invalid(f"{what}: pir {msg.pir} is below cir {msg.cir}")
    if msg.eburst:
        raise unimplemented(f"{what}: eburst (single-rate meters) is not supported")
    return MeterConfig(msg.cir, msg.cburst, msg.pir, msg.pburst)


def meter_config_to_proto(cfg: MeterConfig) -> p4r.MeterConfig:
    return p4r.MeterConfig(cir=cfg.cir, cburst=cfg.cburst, pir=cfg.pir, pburst=cfg.pburst)


def parse_counter_data(msg: p4r.CounterData, what: str) -> CounterValue:
    if msg.packet_count < 0 or msg.byte_count < 0:
        raise invalid(f"{what}: counts must not be negative")
    return CounterValue(packets=msg.packet_count, bytes=msg.byte_count)


def counter_data_to_proto(v: CounterValue) -> p4r.CounterData:
    return p4r.CounterData(packet_count=v.packets, byte_count=v.bytes)


def parse_replicas(replicas: list[p4r.Replica], what: str) -> tuple[Replica, ...]:
    out: list[Replica] = []
    seen: set[tuple[int, int]] = set()
    for r in replicas:
        kind = r.WhichOneof("port_kind")
        if kind == "port":
            port = codec.decode(r.port, 32, f"{what}: replica port")
        elif kind == "egress_port":
            port = r.egress_port
        else:
            raise invalid(f"{what}: replica without a port")
        if port > MAX_PORT:
            raise invalid(f"{what}: replica port {port} is not a v1model port (0..{MAX_PORT})")
        if r.instance > MAX_INSTANCE:
            raise invalid(
                f"{what}: replica instance {r.instance} does not fit egress_rid (16 bits)"
            )
        if r.backup_replicas:
            raise unimplemented(f"{what}: backup replicas are not supported")
        if (port, r.instance) in seen:
            raise invalid(f"{what}: replica (port {port}, instance {r.instance}) given twice")
        seen.add((port, r.instance))
        out.append(Replica(port, r.instance))
    return tuple(out)


def replica_to_proto(r: Replica) -> p4r.Replica:
    return p4r.Replica(port=codec.encode(r.port, 32), instance=r.instance)


def decode_scalar(data: p4data_pb2.P4Data, t: ScalarType, what: str) -> int:
    """A P4Data holding one scalar of type `t` (register data)."""
    which = data.WhichOneof("data")
    if t.kind == "bool":
        if which != "bool":
            raise invalid(f"{what}: expected a bool")
        return int(data.bool)
    expected = "enum_value" if t.kind == "enum" else "bitstring"
    if which != expected:
        raise invalid(f"{what}: expected a {expected}, got {which or 'nothing'}")
    return codec.decode(getattr(data, expected), t.bitwidth, what)


def encode_scalar(value: int, t: ScalarType) -> p4data_pb2.P4Data:
    if t.kind == "bool":
        return p4data_pb2.P4Data(bool=bool(value))
    raw = codec.encode(value & codec.mask_of(t.bitwidth), t.bitwidth)
    if t.kind == "enum":
        return p4data_pb2.P4Data(enum_value=raw)
    return p4data_pb2.P4Data(bitstring=raw)
