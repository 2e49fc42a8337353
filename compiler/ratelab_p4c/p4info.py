"""P4Info (P4Runtime pipeline description) as p4c writes it for v1model, and its three
file formats (protobuf text, JSON, binary)."""

from __future__ import annotations

from google.protobuf import json_format, text_format

from . import p4rt_ids as ids
from . import types as T
from .backend.model import ControlPlaneModel, MatchFieldInfo
from .errors import CompileError
from .p4info_proto import p4info_pb2, p4types_pb2

_MATCH_TYPES = {
    "exact": p4info_pb2.MatchField.EXACT,
    "lpm": p4info_pb2.MatchField.LPM,
    "ternary": p4info_pb2.MatchField.TERNARY,
    "range": p4info_pb2.MatchField.RANGE,
    "optional": p4info_pb2.MatchField.OPTIONAL,
}
_SCOPES = {
    "TABLE_AND_DEFAULT": p4info_pb2.ActionRef.TABLE_AND_DEFAULT,
    "TABLE_ONLY": p4info_pb2.ActionRef.TABLE_ONLY,
    "DEFAULT_ONLY": p4info_pb2.ActionRef.DEFAULT_ONLY,
}
_COUNTER_UNITS = {
    "BYTES": p4info_pb2.CounterSpec.BYTES,
    "PACKETS": p4info_pb2.CounterSpec.PACKETS,
    "BOTH": p4info_pb2.CounterSpec.BOTH,
}
_METER_UNITS = {"BYTES": p4info_pb2.MeterSpec.BYTES, "PACKETS": p4info_pb2.MeterSpec.PACKETS}

# File extension -> format name, as p4c chooses it for --p4runtime-files.
FORMATS = {
    ".txt": "text",
    ".txtpb": "text",
    ".pbtxt": "text",
    ".json": "json",
    ".bin": "binary",
    ".pb": "binary",
}


def build_p4info(cp: ControlPlaneModel) -> p4info_pb2.P4Info:
    """The P4Info message for a compiled program."""
    alloc = ids.IdAllocator()
    for t in cp.tables:
        alloc.add(ids.TABLE, t.name, t.explicit_id, t.loc)
    for a in cp.actions:
        alloc.add(ids.ACTION, a.name, a.explicit_id, a.loc)
    for c in cp.counters:
        alloc.add(ids.COUNTER, c.name, c.explicit_id, c.loc)
    for c in cp.direct_counters:
        alloc.add(ids.DIRECT_COUNTER, c.name, c.explicit_id, c.loc)
    for m in cp.meters:
        alloc.add(ids.METER, m.name, m.explicit_id, m.loc)
    for m in cp.direct_meters:
        alloc.add(ids.DIRECT_METER, m.name, m.explicit_id, m.loc)
    for r in cp.registers:
        alloc.add(ids.REGISTER, r.name, r.explicit_id, r.loc)
    for p in cp.action_profiles:
        alloc.add(ids.ACTION_PROFILE, p.name, p.explicit_id, p.loc)
    for d in cp.digests:
        alloc.add(ids.DIGEST, d.name, d.explicit_id, d.loc)
    for v in cp.value_sets:
        alloc.add(ids.VALUE_SET, v.name, v.explicit_id, v.loc)
    for h in cp.controller_headers:
        alloc.add(ids.CONTROLLER_HEADER, h.type_name or h.name, h.explicit_id)
    alloc.assign()

    all_names = (
        [t.name for t in cp.tables]
        + [a.name for a in cp.actions]
        + [c.name for c in cp.counters + cp.direct_counters]
        + [m.name for m in cp.meters + cp.direct_meters]
        + [r.name for r in cp.registers]
        + [p.name for p in cp.action_profiles]
        + [d.name for d in cp.digests]
        + [v.name for v in cp.value_sets]
        + [h.type_name or h.name for h in cp.controller_headers]
    )
    alias = ids.shortest_unique_suffixes(all_names)

    def preamble(msg: p4info_pb2.Preamble, kind: int, name: str, anns: list[str]) -> None:
        msg.id = alloc.id_of(kind, name)
        msg.name = name
        msg.alias = alias.get(name, name)
        msg.annotations.extend(anns)

    info = p4info_pb2.P4Info()
    info.pkg_info.arch = "v1model"
    for t in cp.tables:
        tm = info.tables.add()
        preamble(tm.preamble, ids.TABLE, t.name, t.annotations)
        for i, mf in enumerate(t.match_fields, start=1):
            _match_field(tm.match_fields.add(), i, mf)
        for ref in t.action_refs:
            ar = tm.action_refs.add()
            ar.id = alloc.id_of(ids.ACTION, ref.action.name)
            ar.scope = _SCOPES[ref.scope]
            # p4c lists the scope annotation itself too.
            if ref.scope == "DEFAULT_ONLY":
                ar.annotations.append("@defaultonly")
            elif ref.scope == "TABLE_ONLY":
                ar.annotations.append("@tableonly")
            ar.annotations.extend(ref.annotations)
        if t.const_default_action is not None:
            tm.const_default_action_id = alloc.id_of(ids.ACTION, t.const_default_action.name)
        if t.implementation is not None:
            tm.implementation_id = alloc.id_of(ids.ACTION_PROFILE, t.implementation)
        if t.direct_counter is not None:
            tm.direct_resource_ids.append(alloc.id_of(ids.DIRECT_COUNTER, t.direct_counter))
        if t.direct_meter is not None:
            tm.direct_resource_ids.append(alloc.id_of(ids.DIRECT_METER, t.direct_meter))
        tm.size = t.size
        if t.support_timeout:
            tm.idle_timeout_behavior = p4info_pb2.Table.NOTIFY_CONTROL
        tm.is_const_table = t.is_const
        tm.has_initial_entries = t.has_initial_entries
    for a in cp.actions:
        am = info.actions.add()
        preamble(am.preamble, ids.ACTION, a.name, a.annotations)
        for i, p in enumerate(a.params, start=1):
            pm = am.params.add()
            pm.id = i
            pm.name = p.name
            pm.bitwidth = p.width
            pm.annotations.extend(p.annotations)
            if p.type_name:
                pm.type_name.name = p.type_name
    for prof in cp.action_profiles:
        pm = info.action_profiles.add()
        preamble(pm.preamble, ids.ACTION_PROFILE, prof.name, prof.annotations)
        pm.table_ids.extend(
            alloc.id_of(ids.TABLE, n) for n in prof.tables if any(t.name == n for t in cp.tables)
        )
        pm.with_selector = prof.with_selector
        pm.size = prof.size
        if prof.max_group_size is not None:
            pm.max_group_size = prof.max_group_size
    for c in cp.counters:
        cm = info.counters.add()
        preamble(cm.preamble, ids.COUNTER, c.name, c.annotations)
        cm.spec.unit = _COUNTER_UNITS[c.unit]
        cm.size = c.size
        if c.index_type_name:
            cm.index_type_name.name = c.index_type_name
    for c in cp.direct_counters:
        dm = info.direct_counters.add()
        preamble(dm.preamble, ids.DIRECT_COUNTER, c.name, c.annotations)
        dm.spec.unit = _COUNTER_UNITS[c.unit]
        if c.direct_table is not None and any(t.name == c.direct_table for t in cp.tables):
            dm.direct_table_id = alloc.id_of(ids.TABLE, c.direct_table)
    for m in cp.meters:
        mm = info.meters.add()
        preamble(mm.preamble, ids.METER, m.name, m.annotations)
        mm.spec.unit = _METER_UNITS[m.unit]
        mm.size = m.size
        if m.index_type_name:
            mm.index_type_name.name = m.index_type_name
    for m in cp.direct_meters:
        dmm = info.direct_meters.add()
        preamble(dmm.preamble, ids.DIRECT_METER, m.name, m.annotations)
        dmm.spec.unit = _METER_UNITS[m.unit]
        if m.direct_table is not None and any(t.name == m.direct_table for t in cp.tables):
            dmm.direct_table_id = alloc.id_of(ids.TABLE, m.direct_table)
    for h in cp.controller_headers:
        hm = info.controller_packet_metadata.add()
        hm.preamble.id = alloc.id_of(ids.CONTROLLER_HEADER, h.type_name or h.name)
        hm.preamble.name = h.name
        hm.preamble.alias = h.name
        hm.preamble.annotations.append(f'@controller_header("{h.name}")')
        hm.preamble.annotations.extend(h.annotations)
        for i, (fname, width, anns) in enumerate(h.fields, start=1):
            md = hm.metadata.add()
            md.id = i
            md.name = fname
            md.bitwidth = width
            md.annotations.extend(anns)
    for v in cp.value_sets:
        vm = info.value_sets.add()
        preamble(vm.preamble, ids.VALUE_SET, v.name, v.annotations)
        for i, mf in enumerate(v.match_fields, start=1):
            _match_field(vm.match.add(), i, mf)
        vm.size = v.size
    for r in cp.registers:
        rm = info.registers.add()
        preamble(rm.preamble, ids.REGISTER, r.name, r.annotations)
        if r.type_spec is not None and r.type_spec[0] == "named":
            rm.type_spec.new_type.name = r.type_spec[1]
        else:
            rm.type_spec.bitstring.bit.bitwidth = r.width
        rm.size = r.size
        if r.index_type_name:
            rm.index_type_name.name = r.index_type_name
    for d in cp.digests:
        dg = info.digests.add()
        preamble(dg.preamble, ids.DIGEST, d.name, [])
        dg.type_spec.struct.name = d.struct_name
        st = info.type_info.structs[d.struct_name]
        for fname, ftype in d.fields:
            member = st.members.add()
            member.name = fname
            _type_spec(member.type_spec, ftype)
    for e in cp.enums:
        se = info.type_info.serializable_enums[e.name]
        se.underlying_type.bitwidth = e.width
        for mname, value in e.members:
            mem = se.members.add()
            mem.name = mname
            mem.value = value.to_bytes(max(1, (e.width + 7) // 8), "big", signed=value < 0)
    _new_types(info, cp)
    return info


def _new_types(info: p4info_pb2.P4Info, cp: ControlPlaneModel) -> None:
    """type_info.new_types for every `type` the P4Info names, and the control-plane
    width of translated ones (p4c: the SDN width replaces the data-plane width)."""
    by_name = {nt.name: nt for nt in cp.new_types}
    used: set[str] = set()

    def visit(msg: object, width_field: str | None) -> None:
        tn = getattr(msg, "type_name", None)
        if tn is None or not tn.name or tn.name not in by_name:
            return
        used.add(tn.name)
        nt = by_name[tn.name]
        if width_field and nt.translation_uri is not None:
            setattr(
                msg,
                width_field,
                0 if nt.translation_is_string else (nt.translation_width or nt.width),
            )

    for t in info.tables:
        for mf in t.match_fields:
            visit(mf, "bitwidth")
    for a in info.actions:
        for p in a.params:
            visit(p, "bitwidth")
    for v in info.value_sets:
        for mf in v.match:
            visit(mf, "bitwidth")
    for c in list(info.counters) + list(info.meters) + list(info.registers):
        if c.index_type_name.name in by_name:
            used.add(c.index_type_name.name)
    for r in info.registers:
        if r.type_spec.HasField("new_type"):
            used.add(r.type_spec.new_type.name)
    for st in info.type_info.structs.values():
        for m in st.members:
            if m.type_spec.HasField("new_type"):
                used.add(m.type_spec.new_type.name)
    for name in sorted(used):
        nt = by_name[name]
        spec = info.type_info.new_types[name]
        if nt.translation_uri is None:
            spec.original_type.bitstring.bit.bitwidth = nt.width
            continue
        tr = spec.translated_type
        tr.uri = nt.translation_uri
        if nt.translation_is_string:
            tr.sdn_string.SetInParent()
        else:
            tr.sdn_bitwidth = nt.translation_width or nt.width


def _type_spec(spec: p4types_pb2.P4DataTypeSpec, t: T.Type) -> None:
    """The P4Info type spec of a scalar P4 type (digest struct members)."""
    if isinstance(t, T.NewType):
        spec.new_type.name = t.name
    elif isinstance(t, T.EnumType) and t.underlying is not None:
        spec.serializable_enum.name = t.name
    elif isinstance(t, T.EnumType):
        spec.enum.name = t.name
    elif isinstance(t, T.BoolType):
        spec.bool.SetInParent()
    elif isinstance(t, T.ErrorType):
        spec.error.SetInParent()
    elif isinstance(t, T.BitsType) and t.signed:
        spec.bitstring.int.bitwidth = t.width
    elif isinstance(t, T.BitsType):
        spec.bitstring.bit.bitwidth = t.width
    else:
        raise CompileError(f"type {t} cannot be sent to the control plane")


def _match_field(msg: p4info_pb2.MatchField, ident: int, mf: MatchFieldInfo) -> None:
    msg.id = ident
    msg.name = mf.name
    msg.bitwidth = mf.width
    mt = _MATCH_TYPES.get(mf.match_kind)
    if mt is None:
        msg.other_match_type = mf.match_kind
    else:
        msg.match_type = mt
    msg.annotations.extend(mf.annotations)
    if mf.type_name:
        msg.type_name.name = mf.type_name


def format_for(path: str, default: str | None = None) -> str:
    """The P4Info format for an output file name (by extension, like p4c)."""
    for ext, fmt in FORMATS.items():
        if path.endswith(ext):
            return fmt
    if default is not None:
        return default
    raise CompileError(
        f"{path}: cannot tell the P4Runtime file format from its extension "
        "(use .txt/.txtpb, .json or .bin)"
    )


def serialize(info: p4info_pb2.P4Info, fmt: str) -> bytes:
    """The P4Info in one of the formats `text`, `json`, `binary`."""
    if fmt == "text":
        return text_format.MessageToString(info).encode()
    if fmt == "json":
        return (json_format.MessageToJson(info, indent=2) + "\n").encode()
    if fmt == "binary":
        return info.SerializeToString()
    raise CompileError(f"unknown P4Runtime file format `{fmt}` (expected binary, json or text)")


__all__ = ["build_p4info", "format_for", "p4types_pb2", "serialize"]
