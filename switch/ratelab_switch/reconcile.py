"""RECONCILE_AND_COMMIT: the forwarding state of one pipeline re-expressed for another.

Entities are matched by name (tables, match fields, actions, parameters,
meters, digests), since ids may differ between the two P4Infos. What is carried
over: table entries (with their direct counter values and direct meter
configs), default actions, indexed meter configs, multicast groups, clone
sessions and digest configs. Indexed counters and registers are data-plane
statistics and state, not forwarding state, and start afresh.
"""

from __future__ import annotations

from collections.abc import Callable

from finsy.proto.p4.v1 import p4runtime_pb2 as p4r

from .engine_api import ActionCall
from .errors import P4RuntimeError, invalid
from .schema import Schema
from .state import PipelineState
from .translate import action_to_proto, counter_data_to_proto, meter_config_to_proto

INSERT = p4r.Update.INSERT
MODIFY = p4r.Update.MODIFY


def carry_over(
    old: PipelineState, new: Schema, new_default: Callable[[str], ActionCall]
) -> list[p4r.Update]:
    """Updates that rebuild `old`'s forwarding state under `new`; INVALID_ARGUMENT if an
    entity in use has no counterpart there. `new_default(table)` is the new program's
    own default action, which needs no update."""
    out: list[p4r.Update] = []
    schema = old.schema
    # Members and groups first: table entries may run them.
    for profile in schema.action_profiles:
        ps = old.profiles[profile.id]
        if not ps.members and not ps.groups:
            continue
        target_profile = new.action_profiles.get(profile.name)
        if target_profile is None:
            raise invalid(f"action profile {profile.name} is in use but not in the new program")
        for member in ps.members.values():
            m = p4r.ActionProfileMember(
                action_profile_id=target_profile.id, member_id=member.entry.member_id
            )
            ta = _translate_action(schema, new, p4r.TableAction(action=member.entry.action))
            m.action.CopyFrom(ta.action)
            out.append(p4r.Update(type=INSERT, entity=p4r.Entity(action_profile_member=m)))
        for group in ps.groups.values():
            g = p4r.ActionProfileGroup()
            g.CopyFrom(group.entry)
            g.action_profile_id = target_profile.id
            out.append(p4r.Update(type=INSERT, entity=p4r.Entity(action_profile_group=g)))
    for table in schema.tables:
        stored_entries = old.tables[table.id].entries
        target = new.tables.get(table.name)
        default = old.engine.table_get_default(table.name)
        if target is None:
            if any(not e.initial for e in stored_entries.values()):
                raise invalid(f"table {table.name} has entries but is not in the new program")
            continue
        for stored in stored_entries.values():
            if stored.initial:
                continue  # the new program brings its own
            entry = _translate_entry(schema, new, stored.entry)
            if table.direct_counter_id and target.direct_counter_id:
                value = old.engine.direct_counter_read(table.name, stored.handle)
                entry.counter_data.CopyFrom(counter_data_to_proto(value))
            if stored.meter is not None:
                entry.meter_config.CopyFrom(meter_config_to_proto(stored.meter))
            out.append(p4r.Update(type=INSERT, entity=p4r.Entity(table_entry=entry)))
        if (
            not target.const_default_action_id
            and not target.implementation_id
            and default != new_default(table.name)
        ):
            proto = action_to_proto(schema, default)
            entry = p4r.TableEntry(table_id=target.id, is_default_action=True)
            entry.action.CopyFrom(_translate_action(schema, new, proto))
            out.append(p4r.Update(type=MODIFY, entity=p4r.Entity(table_entry=entry)))
    for (meter_id, index), cfg in sorted(old.meters.items()):
        name = schema.meters[meter_id].name
        target_meter = new.meters.get(name)
        if target_meter is None:
            raise invalid(f"meter {name} is configured but is not in the new program")
        me = p4r.MeterEntry(meter_id=target_meter.id, index=p4r.Index(index=index))
        me.config.CopyFrom(meter_config_to_proto(cfg))
        out.append(p4r.Update(type=MODIFY, entity=p4r.Entity(meter_entry=me)))
    for group in old.multicast_groups.values():
        pre = p4r.PacketReplicationEngineEntry(multicast_group_entry=group)
        out.append(p4r.Update(type=INSERT, entity=p4r.Entity(packet_replication_engine_entry=pre)))
    for session in old.clone_sessions.values():
        pre = p4r.PacketReplicationEngineEntry(clone_session_entry=session)
        out.append(p4r.Update(type=INSERT, entity=p4r.Entity(packet_replication_engine_entry=pre)))
    for vs_id, entry in old.value_sets.items():
        name = schema.value_sets[vs_id].name
        target_vs = new.value_sets.get(name)
        if target_vs is None:
            raise invalid(f"value set {name} has members but is not in the new program")
        copy = p4r.ValueSetEntry()
        copy.CopyFrom(entry)
        copy.value_set_id = target_vs.id
        out.append(p4r.Update(type=MODIFY, entity=p4r.Entity(value_set_entry=copy)))
    for digest_id, cfg in old.digest_configs.items():
        name = schema.digests[digest_id].name
        target_digest = new.digests.get(name)
        if target_digest is None:
            raise invalid(f"digest {name} is configured but is not in the new program")
        de = p4r.DigestEntry(digest_id=target_digest.id, config=cfg)
        out.append(p4r.Update(type=INSERT, entity=p4r.Entity(digest_entry=de)))
    return out


def _translate_entry(old: Schema, new: Schema, entry: p4r.TableEntry) -> p4r.TableEntry:
    table = old.tables[entry.table_id]
    target = new.tables[table.name]
    out = p4r.TableEntry(
        table_id=target.id,
        priority=entry.priority,
        metadata=entry.metadata,
        controller_metadata=entry.controller_metadata,
    )
    for fm in entry.match:
        name = table.match_field(fm.field_id).name  # type: ignore[union-attr]
        field = next((f for f in target.match_fields if f.name == name), None)
        if field is None:
            raise invalid(f"table {table.name}: match field {name} is not in the new program")
        copy = p4r.FieldMatch()
        copy.CopyFrom(fm)
        copy.field_id = field.id
        out.match.append(copy)
    out.action.CopyFrom(_translate_action(old, new, entry.action))
    return out


def _translate_action(old: Schema, new: Schema, ta: p4r.TableAction) -> p4r.TableAction:
    if ta.WhichOneof("type") != "action":
        out_indirect = p4r.TableAction()
        out_indirect.CopyFrom(ta)  # member / group ids are the client's, kept as they are
        return out_indirect
    action = old.actions[ta.action.action_id]
    target = new.actions.get(action.name)
    if target is None:
        raise invalid(f"action {action.name} is in use but is not in the new program")
    out = p4r.TableAction()
    out.action.action_id = target.id
    for p in ta.action.params:
        name = action.param(p.param_id).name  # type: ignore[union-attr]
        param = next((q for q in target.params if q.name == name), None)
        if param is None:
            raise invalid(f"action {action.name}: parameter {name} is not in the new program")
        out.action.params.add(param_id=param.id, value=p.value)
    return out


__all__ = ["P4RuntimeError", "carry_over"]
