"""v1model extern instances: registers, counters, meters, action profiles/selectors."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .. import ast as A
from .. import types as T
from ..errors import CompileError
from .model import ActionProfileInfo, CounterInfo, MeterInfo, RegisterInfo
from .names import annotation_int, annotations_of, cp_name, id_annotation
from .scope import ExternRef
from .storage import value_width

if TYPE_CHECKING:
    from .control import Pipeline
    from .lower import Lowering

_COUNTER_UNITS = {"packets": "PACKETS", "bytes": "BYTES", "packets_and_bytes": "BOTH"}
_METER_UNITS = {"packets": "PACKETS", "bytes": "BYTES"}


def _args(d: A.InstanceDecl) -> list[A.Expression | None]:
    return [a.value if a is not None else None for a in d.params_to_args]


def _const(d: A.InstanceDecl, i: int, what: str) -> Any:
    args = _args(d)
    if i >= len(args) or args[i] is None:
        raise CompileError(f"missing {what}", d.loc)
    v = args[i].const_value  # type: ignore[union-attr]
    if v is None:
        raise CompileError(f"the {what} must be a compile-time constant", args[i].loc)  # type: ignore[union-attr]
    return v


def _enum_member(d: A.InstanceDecl, i: int, what: str, allowed: dict[str, str]) -> str:
    v = _const(d, i, what)
    if not isinstance(v, T.EnumValue) or v.member not in allowed:
        raise CompileError(f"invalid {what}", d.loc)
    return v.member


def _index_type_name(t: T.ExternType, pos: int) -> str | None:
    if len(t.type_args) > pos and isinstance(t.type_args[pos], T.NewType):
        return t.type_args[pos].name
    return None


def declare_instance(
    lw: Lowering, d: A.InstanceDecl, prefix: str, pipe: Pipeline | None
) -> ExternRef:
    """Create the JSON object(s) and control-plane entry of an extern instance."""
    lw.at(d)
    t = d.type
    if not isinstance(t, T.ExternType):
        raise CompileError(f"instances of `{t}` are not supported here", d.loc)
    kind = t.name
    name = cp_name(d, prefix)
    ref = ExternRef(name, kind, d)
    common = {
        "explicit_id": id_annotation(d),
        "annotations": annotations_of(d),
        "loc": d.loc,
    }
    from .lower import source_info

    src = source_info(d.loc, d.name)
    if kind == "register":
        if not t.type_args:
            raise CompileError("register needs its element type", d.loc)
        elem = T.strip_newtype(t.type_args[0])
        if not isinstance(elem, T.BitsType | T.BoolType | T.EnumType):
            raise CompileError("register cells must be bit<N> / int<N> on this target", d.loc)
        width = value_width(elem)
        size = _const(d, 0, "register size")
        j = {
            "name": name,
            "id": len(lw.register_arrays),
            "source_info": src,
            "size": size,
            "bitwidth": width,
        }
        lw.register_arrays.append(j)
        info = RegisterInfo(name, width, size, index_type_name=_index_type_name(t, 1), **common)
        if isinstance(t.type_args[0], T.NewType):
            info.type_spec = ("named", t.type_args[0].name)
        lw.cp.registers.append(info)
        ref.info = {"json": j, "width": width}
    elif kind == "counter":
        size = _const(d, 0, "counter size")
        unit = _enum_member(d, 1, "counter type", _COUNTER_UNITS)
        j = {
            "name": name,
            "id": len(lw.counter_arrays),
            "source_info": src,
            "size": size,
            "is_direct": False,
        }
        lw.counter_arrays.append(j)
        cinfo = CounterInfo(
            name, _COUNTER_UNITS[unit], size, index_type_name=_index_type_name(t, 0), **common
        )
        lw.cp.counters.append(cinfo)
        ref.info = {"json": j, "cp": cinfo}
    elif kind == "direct_counter":
        unit = _enum_member(d, 0, "counter type", _COUNTER_UNITS)
        j = {
            "name": name,
            "id": len(lw.counter_arrays),
            "source_info": src,
            "is_direct": True,
            "binding": None,
        }
        lw.counter_arrays.append(j)
        cinfo = CounterInfo(name, _COUNTER_UNITS[unit], **common)
        lw.cp.direct_counters.append(cinfo)
        ref.info = {"json": j, "cp": cinfo}
    elif kind == "meter":
        size = _const(d, 0, "meter size")
        unit = _enum_member(d, 1, "meter type", _METER_UNITS)
        j = {
            "name": name,
            "id": len(lw.meter_arrays),
            "source_info": src,
            "is_direct": False,
            "size": size,
            "rate_count": 2,
            "type": unit,
        }
        lw.meter_arrays.append(j)
        minfo = MeterInfo(
            name, _METER_UNITS[unit], size, index_type_name=_index_type_name(t, 0), **common
        )
        lw.cp.meters.append(minfo)
        ref.info = {"json": j, "cp": minfo}
    elif kind == "direct_meter":
        unit = _enum_member(d, 0, "meter type", _METER_UNITS)
        j = {
            "name": name,
            "id": len(lw.meter_arrays),
            "source_info": src,
            "is_direct": True,
            "rate_count": 2,
            "type": unit,
            "size": 1024,
            "binding": None,
            "result_target": None,
        }
        lw.meter_arrays.append(j)
        minfo = MeterInfo(name, _METER_UNITS[unit], **common)
        lw.cp.direct_meters.append(minfo)
        ref.info = {"json": j, "cp": minfo}
    elif kind in ("action_profile", "action_selector"):
        if kind == "action_profile":
            size = _const(d, 0, "action profile size")
            algo = None
        else:
            algo_v = _const(d, 0, "selector algorithm")
            if not isinstance(algo_v, T.EnumValue):
                raise CompileError("expected a HashAlgorithm", d.loc)
            algo = algo_v.member
            size = _const(d, 1, "action selector size")
        j: dict[str, Any] = {
            "name": name,
            "id": lw.next_profile_id(),
            "source_info": src,
            "max_size": size,
        }
        pinfo = ActionProfileInfo(name, size, with_selector=kind == "action_selector", **common)
        group = d.annotation("max_group_size")
        if group is not None:
            pinfo.max_group_size = annotation_int(group)
            if pinfo.max_group_size is None:
                raise CompileError("@max_group_size needs an integer", group.loc)
        lw.cp.action_profiles.append(pinfo)
        ref.info = {"json": j, "cp": pinfo, "algo": algo}
    else:
        raise CompileError(f"extern `{kind}` is not supported on this target", d.loc)
    return ref


def finish_externs(lw: Lowering) -> None:
    """Fill what tables decided (direct meter result fields and sizes), drop direct
    resources no table uses."""
    for j in lw.meter_arrays:
        if j.get("is_direct"):
            ref_tbl = None
            for info in lw.cp.direct_meters:
                if info.name == j["name"]:
                    ref_tbl = info.direct_table
            if j.get("result_target") is None and ref_tbl is not None:
                raise CompileError(
                    f"direct meter `{j['name']}` is never read (direct_meter.read) in an "
                    "action of its table"
                )
    lw.counter_arrays[:] = [
        j for j in lw.counter_arrays if not (j["is_direct"] and j["binding"] is None)
    ]
    lw.meter_arrays[:] = [
        j for j in lw.meter_arrays if not (j["is_direct"] and j["binding"] is None)
    ]
    for i, j in enumerate(lw.counter_arrays):
        j["id"] = i
    for i, j in enumerate(lw.meter_arrays):
        j["id"] = i
    lw.cp.direct_counters[:] = [c for c in lw.cp.direct_counters if c.direct_table]
    lw.cp.direct_meters[:] = [m for m in lw.cp.direct_meters if m.direct_table]
