"""One P4Runtime Update applied to the pipeline state and the engine."""

from __future__ import annotations

from finsy.proto.p4.v1 import p4runtime_pb2 as p4r
from ratelab_p4info import MatchKind, TableInfo

from . import codec
from .engine_api import CounterValue, IndirectTarget
from .errors import (
    P4RuntimeError,
    already_exists,
    failed_precondition,
    invalid,
    not_found,
    out_of_range,
    permission_denied,
    resource_exhausted,
    unimplemented,
)
from .state import PipelineState, StoredEntry, StoredGroup, StoredMember
from .translate import (
    check_priority,
    decode_scalar,
    parse_action,
    parse_counter_data,
    parse_match,
    parse_meter_config,
    parse_replicas,
    parse_table_action,
)

INSERT = p4r.Update.INSERT
MODIFY = p4r.Update.MODIFY
DELETE = p4r.Update.DELETE


def apply_update(state: PipelineState, update: p4r.Update) -> None:
    """Apply one update; raises P4RuntimeError with the code the spec asks for."""
    if update.type not in (INSERT, MODIFY, DELETE):
        raise invalid("update type must be INSERT, MODIFY or DELETE")
    entity = update.entity
    which = entity.WhichOneof("entity")
    handler = _HANDLERS.get(which or "")
    if handler is None:
        raise unimplemented(f"writing {which or 'an empty entity'} is not supported")
    handler(state, update.type, getattr(entity, which))  # type: ignore[arg-type]


# ---------------------------------------------------------------- table entries
def _table_entry(state: PipelineState, op: int, msg: p4r.TableEntry) -> None:
    table = state.schema.tables[msg.table_id]
    if msg.is_const:
        raise invalid(f"table {table.name}: is_const must be false in a write")
    if op != DELETE:  # a DELETE looks at the key only, whatever else it carries
        if msg.idle_timeout_ns or msg.HasField("time_since_last_hit"):
            raise invalid(f"table {table.name}: idle timeout is not supported by the table")
        if msg.HasField("counter_data") and not table.direct_counter_id:
            raise invalid(f"table {table.name}: counter_data given but it has no direct counter")
        if msg.HasField("meter_config") and not table.direct_meter_id:
            raise invalid(f"table {table.name}: meter_config given but it has no direct meter")
        if msg.HasField("meter_counter_data"):
            _check_meter_counter_data(table, msg.meter_counter_data)
    if msg.is_default_action:
        _default_entry(state, op, table, msg)
        return
    # A const table's entries only take direct-resource MODIFYs (no action).
    if table.is_const and (op != MODIFY or msg.HasField("action")):
        raise permission_denied(
            f"table {table.name} is const: only direct resources and the default entry change"
        )
    if not table.match_fields and op == INSERT:
        raise invalid(f"table {table.name} has no key: only its default entry can be set")
    parsed = parse_match(table, list(msg.match))
    check_priority(table, msg.priority)
    key = (parsed.key, msg.priority)
    entries = state.tables[table.id].entries
    existing = entries.get(key)
    engine = state.engine
    if op == DELETE:
        if existing is None:
            raise not_found(f"table {table.name}: no such entry")
        engine.table_delete(table.name, existing.handle)
        del entries[key]
        _count_reference(state, table, existing.entry.action, -1)
        return
    if op == MODIFY and existing is None:
        raise not_found(f"table {table.name}: no such entry")
    # MODIFY may leave the action unset: the entry keeps its action.
    keep_action = op == MODIFY and not msg.HasField("action")
    target: IndirectTarget | None = None
    if keep_action:
        assert existing is not None
        call, action = None, existing.entry.action
    elif table.implementation_id:
        call = None
        target, action = _indirect_target(state, table, msg.action)
    else:
        call, action = parse_action(state.schema, table, msg.action, default=False)
    meter = (
        parse_meter_config(msg.meter_config, table.name) if msg.HasField("meter_config") else None
    )
    counter = (
        parse_counter_data(msg.counter_data, table.name) if msg.HasField("counter_data") else None
    )
    canonical = p4r.TableEntry(
        table_id=table.id,
        match=parsed.canonical,
        action=action,
        priority=msg.priority,
        metadata=msg.metadata,
        controller_metadata=msg.controller_metadata,
        is_const=table.is_const,
    )
    if op == INSERT:
        if existing is not None:
            raise already_exists(f"table {table.name}: entry already exists")
        if table.size and len(entries) >= table.size:
            raise resource_exhausted(f"table {table.name} is full ({table.size} entries)")
        if target is not None:
            handle = engine.table_add_indirect(table.name, parsed.key, target, msg.priority)
            _count_reference(state, table, action, +1)
        else:
            assert call is not None
            handle = engine.table_add(table.name, parsed.key, call, msg.priority)
        stored = StoredEntry(handle, canonical)
        entries[key] = stored
        # A new entry's direct resources start at zero / all-green unless given.
        if counter is not None:
            engine.direct_counter_write(table.name, handle, counter)
        if meter is not None:
            engine.direct_meter_set(table.name, handle, meter)
            stored.meter = meter
        return
    assert existing is not None
    if call is not None:
        engine.table_modify(table.name, existing.handle, call)
    elif target is not None:
        engine.table_modify_indirect(table.name, existing.handle, target)
        _count_reference(state, table, existing.entry.action, -1)
        _count_reference(state, table, action, +1)
    if not table.is_const:
        existing.entry = canonical
    if counter is not None:
        engine.direct_counter_write(table.name, existing.handle, counter)
    if meter is not None or existing.meter is not None:
        # MODIFY without meter_config resets the direct meter to its default.
        engine.direct_meter_set(table.name, existing.handle, meter)
        existing.meter = meter


def _indirect_target(
    state: PipelineState, table: TableInfo, ta: p4r.TableAction
) -> tuple[IndirectTarget, p4r.TableAction]:
    """The member or group an entry of an indirect table runs (NOT_FOUND if unknown)."""
    profile = state.schema.action_profiles[table.implementation_id]
    ps = state.profiles[profile.id]
    which = ta.WhichOneof("type")
    if which == "action_profile_member_id":
        member = ps.members.get(ta.action_profile_member_id)
        if member is None:
            raise not_found(f"{profile.name}: no member {ta.action_profile_member_id}")
        return IndirectTarget("member", member.handle), ta
    if which == "action_profile_group_id":
        if not profile.with_selector:
            raise invalid(f"table {table.name}: {profile.name} has no groups (no selector)")
        group = ps.groups.get(ta.action_profile_group_id)
        if group is None:
            raise not_found(f"{profile.name}: no group {ta.action_profile_group_id}")
        return IndirectTarget("group", group.handle), ta
    if which == "action_profile_action_set":
        raise unimplemented(f"table {table.name}: one-shot action sets are not supported")
    raise invalid(f"table {table.name} is indirect: give a member or group id, not {which}")


def _count_reference(
    state: PipelineState, table: TableInfo, ta: p4r.TableAction, delta: int
) -> None:
    """Keep count of the entries that run each member / group (they cannot go meanwhile)."""
    if not table.implementation_id:
        return
    ps = state.profiles[table.implementation_id]
    which = ta.WhichOneof("type")
    if which == "action_profile_member_id":
        ps.members[ta.action_profile_member_id].entries += delta
    elif which == "action_profile_group_id":
        ps.groups[ta.action_profile_group_id].entries += delta


def _check_meter_counter_data(table: TableInfo, data: p4r.MeterCounterData) -> None:
    """Writes may only reset the per-colour counters (all zero), and there are none here
    beyond what the meter itself keeps."""
    if not table.direct_meter_id:
        raise invalid(f"table {table.name}: meter_counter_data given but it has no direct meter")
    for colour in (data.green, data.yellow, data.red):
        if colour.packet_count or colour.byte_count:
            raise invalid(f"table {table.name}: meter_counter_data can only be written as zeros")


def _default_entry(state: PipelineState, op: int, table: TableInfo, msg: p4r.TableEntry) -> None:
    if op != MODIFY:
        raise invalid(f"table {table.name}: the default entry can only be modified")
    if msg.match or msg.priority:
        raise invalid(f"table {table.name}: the default entry has no match fields or priority")
    if table.const_default_action_id:
        raise permission_denied(f"table {table.name}: the default action is const")
    if table.implementation_id:
        # P4Runtime fixes the default entry of an indirect table to a const NoAction.
        raise permission_denied(f"table {table.name} is indirect: its default entry is const")
    if msg.HasField("counter_data") or msg.HasField("meter_config"):
        raise unimplemented(f"table {table.name}: direct resources of the default entry")
    if not msg.HasField("action"):
        # Back to the program's default, metadata included.
        state.engine.table_reset_default(table.name)
        state.default_metadata.pop(table.id, None)
        return
    call, _ = parse_action(state.schema, table, msg.action, default=True)
    state.engine.table_set_default(table.name, call)
    state.default_metadata[table.id] = (msg.controller_metadata, bytes(msg.metadata))


# ---------------------------------------------------------------- direct resources
def _find_entry(
    state: PipelineState, msg: p4r.TableEntry, what: str
) -> tuple[TableInfo, StoredEntry]:
    table = state.schema.tables[msg.table_id]
    if msg.is_default_action:
        raise unimplemented(f"{what} of table {table.name}'s default entry")
    parsed = parse_match(table, list(msg.match))
    check_priority(table, msg.priority)
    stored = state.tables[table.id].entries.get((parsed.key, msg.priority))
    if stored is None:
        raise not_found(f"table {table.name}: no such entry")
    return table, stored


def _direct_counter_entry(state: PipelineState, op: int, msg: p4r.DirectCounterEntry) -> None:
    if op != MODIFY:
        raise invalid("direct counter entries can only be modified")
    table, stored = _find_entry(state, msg.table_entry, "direct counter")
    if not table.direct_counter_id:
        raise invalid(f"table {table.name} has no direct counter")
    value = parse_counter_data(msg.data, table.name)
    state.engine.direct_counter_write(table.name, stored.handle, value)


def _direct_meter_entry(state: PipelineState, op: int, msg: p4r.DirectMeterEntry) -> None:
    if op != MODIFY:
        raise invalid("direct meter entries can only be modified")
    table, stored = _find_entry(state, msg.table_entry, "direct meter")
    if not table.direct_meter_id:
        raise invalid(f"table {table.name} has no direct meter")
    cfg = parse_meter_config(msg.config, table.name) if msg.HasField("config") else None
    state.engine.direct_meter_set(table.name, stored.handle, cfg)
    stored.meter = cfg


# ---------------------------------------------------------------- indexed externs
def _index_range(index: p4r.Index | None, size: int, what: str) -> range:
    """The indices an entry addresses: one, or all of them when the index is unset."""
    if index is None:
        return range(size)
    if index.index < 0:
        raise invalid(f"{what}: index {index.index} is negative")
    if index.index >= size:
        raise out_of_range(f"{what}: index {index.index} is not in 0..{size - 1}")
    return range(index.index, index.index + 1)


def _counter_entry(state: PipelineState, op: int, msg: p4r.CounterEntry) -> None:
    if op != MODIFY:
        raise invalid("counter entries can only be modified")
    counter = state.schema.counters[msg.counter_id]
    idx = msg.index if msg.HasField("index") else None
    value = parse_counter_data(msg.data, counter.name) if msg.HasField("data") else CounterValue()
    for i in _index_range(idx, counter.size, f"counter {counter.name}"):
        state.engine.counter_write(counter.name, i, value)


def _register_entry(state: PipelineState, op: int, msg: p4r.RegisterEntry) -> None:
    if op != MODIFY:
        raise invalid("register entries can only be modified")
    reg = state.schema.registers[msg.register_id]
    what = f"register {reg.name}"
    if reg.value is None:
        raise unimplemented(f"{what}: its value type is not supported")
    value = decode_scalar(msg.data, reg.value, what)
    idx = msg.index if msg.HasField("index") else None
    for i in _index_range(idx, reg.size, what):
        state.engine.register_write(reg.name, i, value)


def _meter_entry(state: PipelineState, op: int, msg: p4r.MeterEntry) -> None:
    if op != MODIFY:
        raise invalid("meter entries can only be modified")
    meter = state.schema.meters[msg.meter_id]
    if msg.HasField("counter_data"):
        raise unimplemented(f"meter {meter.name}: counter_data is not supported")
    cfg = parse_meter_config(msg.config, meter.name) if msg.HasField("config") else None
    idx = msg.index if msg.HasField("index") else None
    for i in _index_range(idx, meter.size, f"meter {meter.name}"):
        state.engine.meter_set(meter.name, i, cfg)
        if cfg is None:
            state.meters.pop((meter.id, i), None)
        else:
            state.meters[(meter.id, i)] = cfg


# ---------------------------------------------------------------- packet replication
def _pre_entry(state: PipelineState, op: int, msg: p4r.PacketReplicationEngineEntry) -> None:
    which = msg.WhichOneof("type")
    if which == "multicast_group_entry":
        _multicast_group(state, op, msg.multicast_group_entry)
    elif which == "clone_session_entry":
        _clone_session(state, op, msg.clone_session_entry)
    else:
        raise invalid("packet replication engine entry without a type")


def _check_exists(op: int, exists: bool, what: str) -> None:
    """INSERT needs `what` absent; MODIFY and DELETE need it present."""
    if op == INSERT and exists:
        raise already_exists(f"{what} already exists")
    if op in (MODIFY, DELETE) and not exists:
        raise not_found(f"{what} does not exist")


def _multicast_group(state: PipelineState, op: int, msg: p4r.MulticastGroupEntry) -> None:
    gid = msg.multicast_group_id
    what = f"multicast group {gid}"
    if gid == 0:
        raise invalid("multicast group id 0 is reserved")
    exists = gid in state.multicast_groups
    _check_exists(op, exists, what)
    if op == DELETE:
        state.engine.multicast_group_delete(gid)
        del state.multicast_groups[gid]
        return
    replicas = parse_replicas(list(msg.replicas), what)
    state.engine.multicast_group_set(gid, replicas)
    stored = p4r.MulticastGroupEntry()
    stored.CopyFrom(msg)
    state.multicast_groups[gid] = stored


def _clone_session(state: PipelineState, op: int, msg: p4r.CloneSessionEntry) -> None:
    sid = msg.session_id
    what = f"clone session {sid}"
    if sid == 0:
        raise invalid("clone session id 0 is reserved")
    exists = sid in state.clone_sessions
    _check_exists(op, exists, what)
    if op == DELETE:
        state.engine.clone_session_delete(sid)
        del state.clone_sessions[sid]
        return
    if msg.packet_length_bytes < 0:
        raise invalid(f"{what}: packet_length_bytes must not be negative")
    replicas = parse_replicas(list(msg.replicas), what)
    state.engine.clone_session_set(sid, replicas, msg.class_of_service, msg.packet_length_bytes)
    stored = p4r.CloneSessionEntry()
    stored.CopyFrom(msg)
    state.clone_sessions[sid] = stored


# ---------------------------------------------------------------- action profiles
def _action_profile_member(state: PipelineState, op: int, msg: p4r.ActionProfileMember) -> None:
    profile = state.schema.action_profiles[msg.action_profile_id]
    ps = state.profiles[profile.id]
    what = f"{profile.name} member {msg.member_id}"
    if msg.member_id == 0:
        raise invalid(f"{profile.name}: member id 0 is not valid")
    existing = ps.members.get(msg.member_id)
    _check_exists(op, existing is not None, what)
    if op == DELETE:
        assert existing is not None  # checked just above
        if existing.groups or existing.entries:
            raise failed_precondition(f"{what} is in use by groups or table entries")
        state.engine.profile_member_delete(profile.name, existing.handle)
        del ps.members[msg.member_id]
        return
    if not msg.HasField("action"):
        raise invalid(f"{what}: an action is needed")
    if not profile.table_ids:
        raise invalid(f"{profile.name} implements no table")
    table = state.schema.tables[profile.table_ids[0]]
    call, action = parse_table_action(state.schema, table, msg.action, default=False)
    canonical = p4r.ActionProfileMember(
        action_profile_id=profile.id, member_id=msg.member_id, action=action
    )
    if existing is not None:
        state.engine.profile_member_modify(profile.name, existing.handle, call)
        existing.entry = canonical
        return
    if profile.size and len(ps.members) >= profile.size:
        raise resource_exhausted(f"{profile.name} is full ({profile.size} members)")
    handle = state.engine.profile_member_add(profile.name, call)
    ps.members[msg.member_id] = StoredMember(handle, canonical)


def _action_profile_group(state: PipelineState, op: int, msg: p4r.ActionProfileGroup) -> None:
    profile = state.schema.action_profiles[msg.action_profile_id]
    ps = state.profiles[profile.id]
    what = f"{profile.name} group {msg.group_id}"
    if not profile.with_selector:
        raise invalid(f"{profile.name} is an action profile without selector: no groups")
    if msg.group_id == 0:
        raise invalid(f"{profile.name}: group id 0 is not valid")
    existing = ps.groups.get(msg.group_id)
    _check_exists(op, existing is not None, what)
    if op == DELETE:
        assert existing is not None  # checked just above
        if existing.entries:
            raise failed_precondition(f"{what} is in use by table entries")
        state.engine.profile_group_delete(profile.name, existing.handle)
        for m in existing.entry.members:
            ps.members[m.member_id].groups.discard(msg.group_id)
        del ps.groups[msg.group_id]
        return
    expanded: list[int] = []
    seen: set[int] = set()
    for m in msg.members:
        if m.WhichOneof("watch_kind") is not None:
            raise unimplemented(f"{what}: watch ports are not supported")
        if m.weight <= 0:
            raise invalid(f"{what}: member {m.member_id} has weight {m.weight} (must be > 0)")
        if m.member_id in seen:
            raise invalid(f"{what}: member {m.member_id} given twice")
        seen.add(m.member_id)
        member = ps.members.get(m.member_id)
        if member is None:
            raise not_found(f"{what}: member {m.member_id} does not exist")
        expanded.extend([member.handle] * m.weight)  # weight n: listed n times
    if msg.max_size < 0 or (profile.max_group_size and msg.max_size > profile.max_group_size):
        raise invalid(f"{what}: max_size {msg.max_size} is beyond {profile.max_group_size}")
    limit = msg.max_size or profile.max_group_size
    if limit and len(expanded) > limit:
        raise resource_exhausted(f"{what}: total weight {len(expanded)} is above {limit}")
    canonical = p4r.ActionProfileGroup()
    canonical.CopyFrom(msg)
    if existing is None:
        handle = state.engine.profile_group_create(profile.name)
        try:
            state.engine.profile_group_set_members(profile.name, handle, expanded)
        except P4RuntimeError:
            state.engine.profile_group_delete(profile.name, handle)
            raise
        ps.groups[msg.group_id] = StoredGroup(handle, canonical)
    else:
        state.engine.profile_group_set_members(profile.name, existing.handle, expanded)
        for m in existing.entry.members:
            ps.members[m.member_id].groups.discard(msg.group_id)
        existing.entry = canonical
    for m in msg.members:
        ps.members[m.member_id].groups.add(msg.group_id)


# ---------------------------------------------------------------- value sets
def _value_set_entry(state: PipelineState, op: int, msg: p4r.ValueSetEntry) -> None:
    vs = state.schema.value_sets[msg.value_set_id]
    what = f"value set {vs.name}"
    if op != MODIFY:
        raise invalid(f"{what}: value sets are only modified (the members given replace all)")
    if len(vs.fields) != 1 or vs.fields[0].kind is not MatchKind.EXACT:
        raise unimplemented(f"{what}: only single-field exact value sets are supported")
    field = vs.fields[0]
    values: list[int] = []
    canonical = p4r.ValueSetEntry(value_set_id=vs.id)
    for member in msg.members:
        if len(member.match) != 1 or member.match[0].field_id != field.id:
            raise invalid(f"{what}: each member has one match on field id {field.id}")
        fm = member.match[0]
        if fm.WhichOneof("field_match_type") != "exact":
            raise invalid(f"{what}: {field.name} is an exact match")
        v = codec.decode(fm.exact.value, field.bitwidth, f"{what} {field.name}")
        if v in values:
            raise already_exists(f"{what}: value {v} given twice")
        values.append(v)
        canonical.members.add().match.add(field_id=field.id).exact.value = codec.encode(
            v, field.bitwidth
        )
    if vs.size and len(values) > vs.size:
        raise resource_exhausted(f"{what} holds at most {vs.size} values")
    state.engine.value_set_set(vs.name, values)
    state.value_sets[vs.id] = canonical


# ---------------------------------------------------------------- digests
def _digest_entry(state: PipelineState, op: int, msg: p4r.DigestEntry) -> None:
    digest = state.schema.digests[msg.digest_id]
    what = f"digest {digest.name}"
    if digest.members is None and op != DELETE:
        raise unimplemented(f"{what}: a member type is not supported")
    exists = digest.id in state.digest_configs
    if op == DELETE:
        if not exists:
            raise not_found(f"{what} is not configured")
        del state.digest_configs[digest.id]
        return
    if op == INSERT and exists:
        raise already_exists(f"{what} is already configured")
    if op == MODIFY and not exists:
        raise not_found(f"{what} is not configured")
    cfg = msg.config
    if cfg.max_timeout_ns < 0 or cfg.ack_timeout_ns < 0 or cfg.max_list_size < 0:
        raise invalid(f"{what}: timeouts and list size must not be negative")
    stored = p4r.DigestEntry.Config()
    stored.CopyFrom(cfg)
    state.digest_configs[digest.id] = stored


_HANDLERS = {
    "table_entry": _table_entry,
    "action_profile_member": _action_profile_member,
    "action_profile_group": _action_profile_group,
    "direct_counter_entry": _direct_counter_entry,
    "direct_meter_entry": _direct_meter_entry,
    "counter_entry": _counter_entry,
    "register_entry": _register_entry,
    "meter_entry": _meter_entry,
    "packet_replication_engine_entry": _pre_entry,
    "digest_entry": _digest_entry,
    "value_set_entry": _value_set_entry,
}

__all__ = ["P4RuntimeError", "apply_update"]
