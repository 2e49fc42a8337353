"""One P4Runtime read filter -> the matching entities, wildcards expanded."""

from __future__ import annotations

from collections.abc import Iterator

from finsy.proto.p4.v1 import p4runtime_pb2 as p4r
from ratelab_p4info import TableInfo

from .errors import invalid, out_of_range, unimplemented
from .state import PipelineState, StoredEntry
from .translate import (
    action_to_proto,
    counter_data_to_proto,
    encode_scalar,
    meter_config_to_proto,
    parse_match,
)


def read_entity(state: PipelineState, entity: p4r.Entity) -> Iterator[p4r.Entity]:
    which = entity.WhichOneof("entity")
    reader = _READERS.get(which or "")
    if reader is None:
        raise unimplemented(f"reading {which or 'an empty entity'} is not supported")
    return reader(state, getattr(entity, which))  # type: ignore[arg-type]


def _tables(state: PipelineState, table_id: int) -> list[TableInfo]:
    if table_id == 0:
        return list(state.schema.tables)
    return [state.schema.tables[table_id]]


def _matching_entries(
    state: PipelineState, flt: p4r.TableEntry
) -> Iterator[tuple[TableInfo, StoredEntry]]:
    """The non-default entries a TableEntry read filter selects (spec: "Wildcard Reads")."""
    filtered = flt.match or flt.priority or flt.HasField("action")
    if flt.table_id == 0 and (filtered or flt.metadata or flt.controller_metadata):
        raise invalid("a read of all tables (table_id 0) takes no other filter")
    action_id = flt.action.action.action_id if flt.HasField("action") else 0
    if flt.HasField("action") and flt.action.WhichOneof("type") != "action":
        raise invalid("reads filter on a direct action_id only")
    for table in _tables(state, flt.table_id):
        entries = state.tables[table.id].entries
        # A read naming the match fields selects that key (all priorities unless given).
        key = parse_match(table, list(flt.match)).key if flt.match else None
        for (k, prio), stored in entries.items():
            e = stored.entry
            if key is not None and k != key:
                continue
            if flt.priority and prio != flt.priority:
                continue
            if action_id and e.action.action.action_id != action_id:
                continue
            if flt.controller_metadata and e.controller_metadata != flt.controller_metadata:
                continue
            if flt.metadata and e.metadata != flt.metadata:
                continue
            yield table, stored


def _read_table_entries(state: PipelineState, flt: p4r.TableEntry) -> Iterator[p4r.Entity]:
    want_counter = flt.HasField("counter_data")
    want_meter = flt.HasField("meter_config")
    if flt.HasField("meter_counter_data"):
        raise unimplemented("reading meter_counter_data (per-colour meter counters)")
    if flt.HasField("time_since_last_hit"):
        raise invalid("time_since_last_hit: no table supports idle timeout here")
    if flt.is_default_action:
        if flt.table_id == 0:
            raise invalid("reading default entries needs a table id")
        table = state.schema.tables[flt.table_id]
        out = p4r.TableEntry(table_id=table.id, is_default_action=True)
        current = state.engine.table_get_default(table.name)
        out.action.CopyFrom(action_to_proto(state.schema, current))
        cookie, metadata = state.default_metadata.get(table.id, (0, b""))
        out.controller_metadata, out.metadata = cookie, metadata
        yield p4r.Entity(table_entry=out)
        return
    for table, stored in _matching_entries(state, flt):
        out = p4r.TableEntry()
        out.CopyFrom(stored.entry)
        if want_counter and table.direct_counter_id:
            value = state.engine.direct_counter_read(table.name, stored.handle)
            out.counter_data.CopyFrom(counter_data_to_proto(value))
        if want_meter and table.direct_meter_id and stored.meter is not None:
            out.meter_config.CopyFrom(meter_config_to_proto(stored.meter))
        yield p4r.Entity(table_entry=out)


def _read_direct_counters(
    state: PipelineState, flt: p4r.DirectCounterEntry
) -> Iterator[p4r.Entity]:
    if flt.table_entry.is_default_action:
        raise unimplemented("direct counters of default entries")
    for table, stored in _matching_entries(state, flt.table_entry):
        if not table.direct_counter_id:
            if flt.table_entry.table_id:
                raise invalid(f"table {table.name} has no direct counter")
            continue
        value = state.engine.direct_counter_read(table.name, stored.handle)
        out = p4r.DirectCounterEntry(data=counter_data_to_proto(value))
        out.table_entry.CopyFrom(stored.entry)
        yield p4r.Entity(direct_counter_entry=out)


def _read_direct_meters(state: PipelineState, flt: p4r.DirectMeterEntry) -> Iterator[p4r.Entity]:
    if flt.table_entry.is_default_action:
        raise unimplemented("direct meters of default entries")
    for table, stored in _matching_entries(state, flt.table_entry):
        if not table.direct_meter_id:
            if flt.table_entry.table_id:
                raise invalid(f"table {table.name} has no direct meter")
            continue
        out = p4r.DirectMeterEntry()
        out.table_entry.CopyFrom(stored.entry)
        if stored.meter is not None:
            out.config.CopyFrom(meter_config_to_proto(stored.meter))
        yield p4r.Entity(direct_meter_entry=out)


def _indices(flt_index: p4r.Index | None, size: int, what: str) -> range:
    if flt_index is None:
        return range(size)
    if flt_index.index < 0:
        raise invalid(f"{what}: index {flt_index.index} is negative")
    if flt_index.index >= size:
        raise out_of_range(f"{what}: index {flt_index.index} is not in 0..{size - 1}")
    return range(flt_index.index, flt_index.index + 1)


def _read_counters(state: PipelineState, flt: p4r.CounterEntry) -> Iterator[p4r.Entity]:
    counters = state.schema.counters.selected(flt.counter_id)
    idx = flt.index if flt.HasField("index") else None
    for c in counters:
        for i in _indices(idx, c.size, f"counter {c.name}"):
            value = state.engine.counter_read(c.name, i)
            out = p4r.CounterEntry(
                counter_id=c.id, index=p4r.Index(index=i), data=counter_data_to_proto(value)
            )
            yield p4r.Entity(counter_entry=out)


def _read_registers(state: PipelineState, flt: p4r.RegisterEntry) -> Iterator[p4r.Entity]:
    regs = state.schema.registers.selected(flt.register_id)
    idx = flt.index if flt.HasField("index") else None
    for r in regs:
        if r.value is None:
            if flt.register_id:
                raise unimplemented(f"register {r.name}: its value type is not supported")
            continue
        for i in _indices(idx, r.size, f"register {r.name}"):
            value = state.engine.register_read(r.name, i)
            out = p4r.RegisterEntry(register_id=r.id, index=p4r.Index(index=i))
            out.data.CopyFrom(encode_scalar(value, r.value))
            yield p4r.Entity(register_entry=out)


def _read_meters(state: PipelineState, flt: p4r.MeterEntry) -> Iterator[p4r.Entity]:
    meters = state.schema.meters.selected(flt.meter_id)
    idx = flt.index if flt.HasField("index") else None
    for m in meters:
        for i in _indices(idx, m.size, f"meter {m.name}"):
            out = p4r.MeterEntry(meter_id=m.id, index=p4r.Index(index=i))
            cfg = state.meters.get((m.id, i))
            if cfg is not None:
                out.config.CopyFrom(meter_config_to_proto(cfg))
            yield p4r.Entity(meter_entry=out)


def _read_pre(state: PipelineState, flt: p4r.PacketReplicationEngineEntry) -> Iterator[p4r.Entity]:
    which = flt.WhichOneof("type")
    if which == "multicast_group_entry":
        gid = flt.multicast_group_entry.multicast_group_id
        groups = state.multicast_groups
        for key in sorted(groups) if gid == 0 else [gid] if gid in groups else []:
            yield p4r.Entity(
                packet_replication_engine_entry=p4r.PacketReplicationEngineEntry(
                    multicast_group_entry=groups[key]
                )
            )
    elif which == "clone_session_entry":
        sid = flt.clone_session_entry.session_id
        sessions = state.clone_sessions
        for key in sorted(sessions) if sid == 0 else [sid] if sid in sessions else []:
            yield p4r.Entity(
                packet_replication_engine_entry=p4r.PacketReplicationEngineEntry(
                    clone_session_entry=sessions[key]
                )
            )
    else:
        raise invalid("packet replication engine read without a type")


def _read_digests(state: PipelineState, flt: p4r.DigestEntry) -> Iterator[p4r.Entity]:
    ids = (
        [state.schema.digests[flt.digest_id].id] if flt.digest_id else sorted(state.digest_configs)
    )
    for did in ids:
        cfg = state.digest_configs.get(did)
        if cfg is not None:
            yield p4r.Entity(digest_entry=p4r.DigestEntry(digest_id=did, config=cfg))


def _read_members(state: PipelineState, flt: p4r.ActionProfileMember) -> Iterator[p4r.Entity]:
    profiles = state.schema.action_profiles.selected(flt.action_profile_id)
    for profile in profiles:
        members = state.profiles[profile.id].members
        ids = sorted(members) if flt.member_id == 0 else [flt.member_id]
        for mid in ids:
            if mid in members:
                yield p4r.Entity(action_profile_member=members[mid].entry)


def _read_groups(state: PipelineState, flt: p4r.ActionProfileGroup) -> Iterator[p4r.Entity]:
    profiles = state.schema.action_profiles.selected(flt.action_profile_id)
    for profile in profiles:
        groups = state.profiles[profile.id].groups
        ids = sorted(groups) if flt.group_id == 0 else [flt.group_id]
        for gid in ids:
            if gid in groups:
                yield p4r.Entity(action_profile_group=groups[gid].entry)


def _read_value_sets(state: PipelineState, flt: p4r.ValueSetEntry) -> Iterator[p4r.Entity]:
    sets = state.schema.value_sets.selected(flt.value_set_id)
    for vs in sets:
        entry = state.value_sets.get(vs.id) or p4r.ValueSetEntry(value_set_id=vs.id)
        yield p4r.Entity(value_set_entry=entry)


_READERS = {
    "value_set_entry": _read_value_sets,
    "table_entry": _read_table_entries,
    "action_profile_member": _read_members,
    "action_profile_group": _read_groups,
    "direct_counter_entry": _read_direct_counters,
    "direct_meter_entry": _read_direct_meters,
    "counter_entry": _read_counters,
    "register_entry": _read_registers,
    "meter_entry": _read_meters,
    "packet_replication_engine_entry": _read_pre,
    "digest_entry": _read_digests,
}
