"""ratelab-switch-cli: simple_switch_CLI's table, multicast, mirroring, counter,
register, meter and queue commands, carried to a running ratelab-switch over
P4Runtime (and its ratelab.SwitchTarget service for what P4Runtime does not cover:
queue depth and rate, link delay, entry handles).

Once a P4Runtime pipeline is set, it speaks P4Runtime, as the primary of its own
role ("ratelab-switch-cli"), so a controller that is primary of the default role
keeps that standing. A switch started with a JSON alone has no P4Runtime
pipeline: then the lines (but the port commands) are run by BMv2's own CLI code
over the switch's Thrift server, by the JSON's names (cli_thrift.py).

    ratelab-switch-cli [--grpc-addr HOST:PORT] [--device-id N] [--thrift-port N]
                       [COMMANDS_FILE]

Commands come from the file or standard input, one per line (# starts a
comment). Names may be full (MyIngress.ipv4_lpm) or aliases (ipv4_lpm).
Values: decimal, 0x hex, IPv4 (10.0.0.1) or MAC (00:11:22:33:44:55); LPM
value/len, ternary value&&&mask, range low->high. As in BMv2, a smaller
table_add priority wins. Entry handles (table_add's output, table_dump,
table_modify, table_delete) are the switch's own, stable while the entry exists.
"""

from __future__ import annotations

import argparse
import base64
import ipaddress
import json
import queue
import sys
from collections.abc import Iterable, Iterator
from typing import Protocol, TextIO, TypeVar

import grpc
from finsy.proto.google.rpc import status_pb2
from finsy.proto.p4.v1 import p4runtime_pb2 as p4r
from finsy.proto.p4.v1 import p4runtime_pb2_grpc
from ratelab_p4info import ActionInfo, MatchKind, TableInfo

from . import codec, target_service
from .arbitration import to_uint128
from .cli_thrift import ThriftCliError, ThriftCliSession
from .errors import P4RuntimeError
from .options import OptionsError, parse_delay, parse_rate
from .port_settings import PORT_STATS_FIELDS, format_rate
from .schema import Schema

ROLE = "ratelab-switch-cli"
NO_PIPELINE = "the switch has no P4Runtime pipeline config yet"
# Served by the ratelab.SwitchTarget service: no P4Runtime pipeline needed.
PORT_COMMANDS = (
    "set_queue_depth",
    "set_queue_rate",
    "set_link_delay",
    "show_ports",
    "port_stats",
)
_TOP = (1 << 31) - 1  # BMv2 priority 0 (the highest) -> P4Runtime's highest


T = TypeVar("T")


class _Lookup(Protocol[T]):
    def get(self, key: int | str) -> T | None: ...


class CliError(Exception):
    """A command that cannot run; the message is one line."""


def parse_value(text: str, width: int, what: str) -> int:
    """A number, IPv4 address or MAC address that must fit `width` bits."""
    t = text.strip()
    try:
        if t.count(".") == 3:
            value = int(ipaddress.IPv4Address(t))
        elif t.count(":") == 5:
            value = int(t.replace(":", ""), 16)
        else:
            value = int(t, 0)
    except ValueError:
        raise CliError(f"{what}: cannot read {text!r} as a number") from None
    if value < 0 or value.bit_length() > width:
        raise CliError(f"{what}: {text} does not fit in {width} bits")
    return value


def build_match(table: TableInfo, texts: list[str]) -> list[p4r.FieldMatch]:
    """simple_switch_CLI match fields (one per key field, in order) -> FieldMatches,
    leaving out don't-care values as P4Runtime wants."""
    if len(texts) != len(table.match_fields):
        raise CliError(
            f"table {table.name} takes {len(table.match_fields)} match fields, got {len(texts)}"
        )
    out: list[p4r.FieldMatch] = []
    for info, text in zip(table.match_fields, texts, strict=True):
        w = info.bitwidth
        what = f"match field {info.name}"
        fm = p4r.FieldMatch(field_id=info.id)
        if info.kind in (MatchKind.EXACT, MatchKind.OPTIONAL):
            v = codec.encode(parse_value(text, w, what), w)
            if info.kind is MatchKind.EXACT:
                fm.exact.value = v
            else:
                fm.optional.value = v
        elif info.kind is MatchKind.LPM:
            value, sep, plen_text = text.partition("/")
            plen = parse_value(plen_text, 16, f"{what} prefix length") if sep else w
            if plen > w:
                raise CliError(f"{what}: prefix length {plen} is above {w}")
            if plen == 0:
                continue  # /0 is a don't care
            v = parse_value(value, w, what) & codec.prefix_mask(plen, w)
            fm.lpm.value = codec.encode(v, w)
            fm.lpm.prefix_len = plen
        elif info.kind is MatchKind.TERNARY:
            value, sep, mask_text = text.partition("&&&")
            if not sep:
                raise CliError(f"{what}: a ternary match is value&&&mask")
            m = parse_value(mask_text, w, f"{what} mask")
            if m == 0:
                continue
            fm.ternary.value = codec.encode(parse_value(value, w, what) & m, w)
            fm.ternary.mask = codec.encode(m, w)
        else:
            low, sep, high = text.partition("->")
            if not sep:
                raise CliError(f"{what}: a range match is low->high")
            lo, hi = parse_value(low, w, what), parse_value(high, w, what)
            if lo == 0 and hi == codec.mask_of(w):
                continue
            fm.range.low = codec.encode(lo, w)
            fm.range.high = codec.encode(hi, w)
        out.append(fm)
    return out


class CliSession:
    """One P4Runtime session running CLI commands."""

    def __init__(
        self, channel: grpc.Channel, device_id: int, out: TextIO, need_pipeline: bool = True
    ) -> None:
        self.stub = p4runtime_pb2_grpc.P4RuntimeStub(channel)
        self.channel = channel
        self.device_id = device_id
        self.out = out
        self._stream = self._arbitrate()
        reply = self.stub.GetForwardingPipelineConfig(
            p4r.GetForwardingPipelineConfigRequest(
                device_id=device_id,
                response_type=p4r.GetForwardingPipelineConfigRequest.P4INFO_AND_COOKIE,
            )
        )
        # Port commands need no program; a file of only those runs before one is set.
        self._schema = Schema(reply.config.p4info) if reply.HasField("config") else None
        if self._schema is None and need_pipeline:
            raise CliError(NO_PIPELINE)
        self._mc_nodes: list[tuple[int, list[int]]] = []  # node handle -> (rid, ports)
        self._mc_groups: dict[int, list[int]] = {}  # group -> node handles

    def _arbitrate(self) -> Iterator[p4r.StreamMessageResponse]:
        q: queue.SimpleQueue[p4r.StreamMessageRequest | None] = queue.SimpleQueue()
        self._queue = q
        msg = p4r.StreamMessageRequest()
        msg.arbitration.device_id = self.device_id
        msg.arbitration.role.name = ROLE
        msg.arbitration.election_id.CopyFrom(to_uint128(1))
        q.put(msg)
        stream = self.stub.StreamChannel(iter(q.get, None))  # held open: we stay primary
        reply = next(stream)
        status = reply.arbitration.status
        if status.code != 0:
            raise CliError(f"cannot become primary of role {ROLE!r}: {status.message}")
        return stream

    def close(self) -> None:
        self._queue.put(None)
        self._stream.cancel()  # type: ignore[attr-defined]

    @property
    def has_pipeline(self) -> bool:
        return self._schema is not None

    @property
    def schema(self) -> Schema:
        if self._schema is None:
            raise CliError(NO_PIPELINE)
        return self._schema

    # ------------------------------------------------------------ plumbing
    def _write(self, op: int, entity: p4r.Entity) -> None:
        self._write_all([(op, entity)])

    def _write_all(self, updates: list[tuple[int, p4r.Entity]]) -> None:
        """One Write of all `updates`; the first failed update's error."""
        if not updates:
            return
        req = p4r.WriteRequest(device_id=self.device_id, role=ROLE, election_id=to_uint128(1))
        for op, entity in updates:
            req.updates.add(type=op, entity=entity)
        try:
            self.stub.Write(req)
        except grpc.RpcError as e:
            raise CliError(_write_error(e)) from None

    def _target(self, method: str, body: dict[str, object]) -> dict[str, object]:
        """A ratelab.SwitchTarget call (JSON bodies, see target_service.py)."""
        call = self.channel.unary_unary(f"/{target_service.SERVICE}/{method}")
        try:
            reply = call(json.dumps({"device_id": self.device_id, **body}).encode())
        except grpc.RpcError as e:
            raise CliError(f"{e.code().name}: {e.details()}") from None  # type: ignore[attr-defined]
        return json.loads(reply)  # type: ignore[no-any-return]

    def _entries(self, table: TableInfo) -> list[tuple[int, p4r.TableEntry]]:
        """(handle, canonical entry) of a table's entries."""
        got = self._target("GetEntryHandles", {"table": table.name})
        entries = got["entries"]
        assert isinstance(entries, list)
        return [
            (int(e["handle"]), p4r.TableEntry.FromString(base64.b64decode(e["entry"])))
            for e in entries
        ]

    def _entry(self, table: TableInfo, handle_text: str) -> p4r.TableEntry:
        handle = parse_value(handle_text, 32, "entry handle")
        for h, entry in self._entries(table):
            if h == handle:
                return entry
        raise CliError(f"table {table.name} has no entry with handle {handle}")

    def _read(self, entity: p4r.Entity) -> list[p4r.Entity]:
        req = p4r.ReadRequest(device_id=self.device_id, entities=[entity])
        return [e for resp in self.stub.Read(req) for e in resp.entities]

    def _say(self, text: str) -> None:
        print(text, file=self.out)

    def _action(self, table: TableInfo, name: str, params: list[str]) -> p4r.TableAction:
        action = self.schema.actions.get(name)
        if action is None or table.action_ref(action.id) is None:
            raise CliError(f"table {table.name} has no action {name!r}")
        if len(params) != len(action.params):
            raise CliError(
                f"action {action.name} takes {len(action.params)} parameters, got {len(params)}"
            )
        ta = p4r.TableAction()
        ta.action.action_id = action.id
        for info, text in zip(action.params, params, strict=True):
            v = parse_value(text, info.bitwidth, f"parameter {info.name}")
            ta.action.params.add(param_id=info.id, value=codec.encode(v, info.bitwidth))
        return ta

    def _table(self, name: str) -> TableInfo:
        table = self.schema.tables.get(name)
        if table is None:
            raise CliError(f"no table {name!r}")
        return table

    # ------------------------------------------------------------ commands
    def table_add(self, args: list[str]) -> None:
        if len(args) < 2 or "=>" not in args:
            raise CliError("usage: table_add TABLE ACTION MATCH... => PARAM... [PRIORITY]")
        table = self._table(args[0])
        arrow = args.index("=>")
        match_texts, rest = args[2:arrow], args[arrow + 1 :]
        action = self.schema.actions.get(args[1])
        n_params = len(action.params) if action is not None else 0
        params, extra = rest[:n_params], rest[n_params:]
        te = p4r.TableEntry(table_id=table.id)
        te.match.extend(build_match(table, match_texts))
        te.action.CopyFrom(self._action(table, args[1], params))
        if table.needs_priority:
            if len(extra) != 1:
                raise CliError(f"table {table.name} needs a priority after the parameters")
            bmv2_priority = parse_value(extra[0], 31, "priority")
            te.priority = max(1, _TOP - bmv2_priority)
        elif extra:
            raise CliError(f"unexpected {' '.join(extra)!r} after the action parameters")
        self._write(p4r.Update.INSERT, p4r.Entity(table_entry=te))
        handle = next((h for h, e in self._entries(table) if _same_key(e, te)), None)
        self._say(f"Entry added to {table.name} with handle {handle}")

    def table_delete(self, args: list[str]) -> None:
        if len(args) != 2:
            raise CliError("usage: table_delete TABLE HANDLE")
        table = self._table(args[0])
        self._write(p4r.Update.DELETE, p4r.Entity(table_entry=_key_of(self._entry(table, args[1]))))
        self._say(f"Entry {args[1]} deleted from {table.name}")

    def table_modify(self, args: list[str]) -> None:
        if len(args) < 3:
            raise CliError("usage: table_modify TABLE ACTION HANDLE [PARAM...]")
        table = self._table(args[0])
        action = self._action(table, args[1], args[3:])
        te = _key_of(self._entry(table, args[2]))
        te.action.CopyFrom(action)
        self._write(p4r.Update.MODIFY, p4r.Entity(table_entry=te))
        self._say(f"Entry {args[2]} of {table.name} modified")

    def table_clear(self, args: list[str]) -> None:
        table = self._table(_one(args, "table_clear TABLE"))
        # One Write: the switch applies every delete it can (a const table refuses all).
        self._write_all(
            [
                (p4r.Update.DELETE, p4r.Entity(table_entry=_key_of(e)))
                for _, e in self._entries(table)
            ]
        )
        self._say(f"{table.name} cleared")

    def table_dump(self, args: list[str]) -> None:
        table = self._table(_one(args, "table_dump TABLE"))
        self._say("==========\nTABLE ENTRIES")
        for handle, e in self._entries(table):
            self._say(f"**********\nDumping entry {hex(handle)}\nMatch key:")
            given = {m.field_id: m for m in e.match}
            for f in table.match_fields:
                m = given.get(f.id)
                self._say(f"* {f.name:<20}: {f.kind.name:<10}{_match_text(m, f.bitwidth)}")
            if e.priority:
                self._say(f"Priority: {max(0, _TOP - e.priority)}")
            self._say(f"Action entry: {self._action_text(e.action)}")
        self._say("==========\nDumping default entry")
        flt = p4r.TableEntry(table_id=table.id, is_default_action=True)
        for got in self._read(p4r.Entity(table_entry=flt)):
            self._say(f"Action entry: {self._action_text(got.table_entry.action)}")
        self._say("==========")

    def _action_text(self, ta: p4r.TableAction) -> str:
        if not ta.HasField("action"):
            return "(action profile member or group)"
        info: ActionInfo | None = self.schema.actions.get(ta.action.action_id)
        name = info.name if info is not None else str(ta.action.action_id)
        values = ", ".join(p.value.hex() for p in ta.action.params)
        return f"{name} - {values}"

    def show_tables(self, args: list[str]) -> None:
        if args:
            raise CliError("usage: show_tables")
        for t in sorted(self.schema.tables, key=lambda t: t.name):
            keys = ", ".join(
                f"{f.name}({f.kind.name.lower()}, {f.bitwidth})" for f in t.match_fields
            )
            impl = "None" if not t.implementation_id else str(t.implementation_id)
            self._say(f"{t.name:<30} [implementation={impl}, mk={keys}]")

    def show_actions(self, args: list[str]) -> None:
        if args:
            raise CliError("usage: show_actions")
        for a in sorted(self.schema.actions, key=lambda a: a.name):
            params = ",\t".join(f"{p.name}({p.bitwidth})" for p in a.params)
            self._say(f"{a.name:<30} [{params}]")

    def table_set_default(self, args: list[str]) -> None:
        if len(args) < 2:
            raise CliError("usage: table_set_default TABLE ACTION [PARAM...]")
        table = self._table(args[0])
        te = p4r.TableEntry(table_id=table.id, is_default_action=True)
        te.action.CopyFrom(self._action(table, args[1], args[2:]))
        self._write(p4r.Update.MODIFY, p4r.Entity(table_entry=te))
        self._say(f"Default action of {table.name} set")

    def table_reset_default(self, args: list[str]) -> None:
        table = self._table(_one(args, "table_reset_default TABLE"))
        te = p4r.TableEntry(table_id=table.id, is_default_action=True)
        self._write(p4r.Update.MODIFY, p4r.Entity(table_entry=te))
        self._say(f"Default action of {table.name} reset")

    def table_num_entries(self, args: list[str]) -> None:
        table = self._table(_one(args, "table_num_entries TABLE"))
        n = len(self._read(p4r.Entity(table_entry=p4r.TableEntry(table_id=table.id))))
        self._say(str(n))

    def mc_mgrp_create(self, args: list[str]) -> None:
        group = parse_value(_one(args, "mc_mgrp_create GROUP"), 16, "group")
        self._mc_groups[group] = []
        self._write_group(p4r.Update.INSERT, group)
        self._say(f"Creating multicast group {group}")

    def mc_node_create(self, args: list[str]) -> None:
        if len(args) < 1:
            raise CliError("usage: mc_node_create RID PORT...")
        rid = parse_value(args[0], 16, "rid")
        ports = [parse_value(p, 9, "port") for p in args[1:]]
        self._mc_nodes.append((rid, ports))
        self._say(f"node was created with handle {len(self._mc_nodes) - 1}")

    def mc_node_associate(self, args: list[str]) -> None:
        if len(args) != 2:
            raise CliError("usage: mc_node_associate GROUP NODE_HANDLE")
        group = parse_value(args[0], 16, "group")
        node = parse_value(args[1], 32, "node handle")
        if group not in self._mc_groups:
            raise CliError(f"multicast group {group} was not created in this session")
        if node >= len(self._mc_nodes):
            raise CliError(f"no node with handle {node}")
        self._mc_groups[group].append(node)
        self._write_group(p4r.Update.MODIFY, group)
        self._say(f"Associating node {node} to multicast group {group}")

    def mc_mgrp_destroy(self, args: list[str]) -> None:
        group = parse_value(_one(args, "mc_mgrp_destroy GROUP"), 16, "group")
        self._mc_groups.pop(group, None)
        entry = p4r.MulticastGroupEntry(multicast_group_id=group)
        self._write(
            p4r.Update.DELETE,
            p4r.Entity(
                packet_replication_engine_entry=p4r.PacketReplicationEngineEntry(
                    multicast_group_entry=entry
                )
            ),
        )
        self._say(f"Destroying multicast group {group}")

    def _write_group(self, op: int, group: int) -> None:
        entry = p4r.MulticastGroupEntry(multicast_group_id=group)
        for node in self._mc_groups[group]:
            rid, ports = self._mc_nodes[node]
            for port in ports:
                entry.replicas.add(port=codec.encode(port, 32), instance=rid)
        pre = p4r.PacketReplicationEngineEntry(multicast_group_entry=entry)
        self._write(op, p4r.Entity(packet_replication_engine_entry=pre))

    def mirroring_add(self, args: list[str]) -> None:
        if len(args) != 2:
            raise CliError("usage: mirroring_add SESSION PORT")
        session = parse_value(args[0], 32, "session")
        port = parse_value(args[1], 9, "port")
        entry = p4r.CloneSessionEntry(session_id=session)
        entry.replicas.add(port=codec.encode(port, 32), instance=0)
        pre = p4r.PacketReplicationEngineEntry(clone_session_entry=entry)
        self._write(p4r.Update.INSERT, p4r.Entity(packet_replication_engine_entry=pre))
        self._say(f"Clone session {session} -> port {port}")

    def mirroring_delete(self, args: list[str]) -> None:
        session = parse_value(_one(args, "mirroring_delete SESSION"), 32, "session")
        pre = p4r.PacketReplicationEngineEntry(
            clone_session_entry=p4r.CloneSessionEntry(session_id=session)
        )
        self._write(p4r.Update.DELETE, p4r.Entity(packet_replication_engine_entry=pre))
        self._say(f"Clone session {session} deleted")

    def counter_read(self, args: list[str]) -> None:
        if len(args) != 2:
            raise CliError("usage: counter_read COUNTER INDEX")
        counter = self._named(self.schema.counters, args[0], "counter")
        index = parse_value(args[1], 63, "index")
        flt = p4r.CounterEntry(counter_id=counter.id, index=p4r.Index(index=index))
        [got] = self._read(p4r.Entity(counter_entry=flt))
        data = got.counter_entry.data
        self._say(
            f"{counter.name}[{index}]= BmCounterValue(packets={data.packet_count}, "
            f"bytes={data.byte_count})"
        )

    def counter_reset(self, args: list[str]) -> None:
        counter = self._named(self.schema.counters, _one(args, "counter_reset COUNTER"), "counter")
        entry = p4r.CounterEntry(counter_id=counter.id, data=p4r.CounterData())
        self._write(p4r.Update.MODIFY, p4r.Entity(counter_entry=entry))
        self._say(f"{counter.name} reset")

    def register_read(self, args: list[str]) -> None:
        if len(args) not in (1, 2):
            raise CliError("usage: register_read REGISTER [INDEX]")
        reg = self._named(self.schema.registers, args[0], "register")
        flt = p4r.RegisterEntry(register_id=reg.id)
        if len(args) == 2:
            flt.index.index = parse_value(args[1], 63, "index")
        values = [
            int.from_bytes(e.register_entry.data.bitstring or b"\0", "big")
            for e in self._read(p4r.Entity(register_entry=flt))
        ]
        if len(args) == 2:
            self._say(f"{reg.name}[{args[1]}]= {values[0]}")
        else:
            self._say(f"{reg.name}= {', '.join(str(v) for v in values)}")

    def register_write(self, args: list[str]) -> None:
        if len(args) != 3:
            raise CliError("usage: register_write REGISTER INDEX VALUE")
        reg = self._named(self.schema.registers, args[0], "register")
        if reg.value is None or reg.value.kind != "bitstring":
            raise CliError(f"register {reg.name} does not hold a plain bit<W> value")
        entry = p4r.RegisterEntry(register_id=reg.id)
        entry.index.index = parse_value(args[1], 63, "index")
        value = parse_value(args[2], reg.value.bitwidth, "value")
        entry.data.bitstring = codec.encode(value, reg.value.bitwidth)
        self._write(p4r.Update.MODIFY, p4r.Entity(register_entry=entry))
        self._say(f"{reg.name}[{args[1]}] = {value}")

    def register_reset(self, args: list[str]) -> None:
        reg = self._named(self.schema.registers, _one(args, "register_reset REGISTER"), "register")
        if reg.value is None or reg.value.kind != "bitstring":
            raise CliError(f"register {reg.name} does not hold a plain bit<W> value")
        # No index: P4Runtime's write to every cell.
        entry = p4r.RegisterEntry(register_id=reg.id)
        entry.data.bitstring = codec.encode(0, reg.value.bitwidth)
        self._write(p4r.Update.MODIFY, p4r.Entity(register_entry=entry))
        self._say(f"{reg.name} reset")

    def meter_set_rates(self, args: list[str]) -> None:
        if len(args) != 4:
            raise CliError("usage: meter_set_rates METER INDEX RATE:BURST RATE:BURST")
        meter = self._named(self.schema.meters, args[0], "meter")
        index = parse_value(args[1], 63, "index")
        # BMv2: rates in units per microsecond, bursts in units; P4Runtime: per second.
        (cir, cburst), (pir, pburst) = (_rate_burst(a) for a in args[2:])
        if cir > pir:
            raise CliError("the committed rate (first) must not exceed the peak rate")
        entry = p4r.MeterEntry(meter_id=meter.id, index=p4r.Index(index=index))
        entry.config.cir, entry.config.cburst = cir, cburst
        entry.config.pir, entry.config.pburst = pir, pburst
        self._write(p4r.Update.MODIFY, p4r.Entity(meter_entry=entry))
        self._say(f"{meter.name}[{index}] rates set")

    # ------------------------------------------------------------ ports (ratelab.SwitchTarget)
    def set_queue_depth(self, args: list[str]) -> None:
        if len(args) not in (1, 2):
            raise CliError("usage: set_queue_depth DEPTH [EGRESS_PORT]")
        depth = parse_value(args[0], 31, "depth")
        port = parse_value(args[1], 9, "port") if len(args) == 2 else None
        self._target("SetQueueDepth", {"port": port, "depth": depth})
        self._say(f"queue depth of {_which(port)} set to {depth}")

    def set_queue_rate(self, args: list[str]) -> None:
        if len(args) not in (1, 2):
            raise CliError("usage: set_queue_rate RATE_PPS|RATE [EGRESS_PORT]")
        # simple_switch_CLI's rate is packets per second; ours may carry a unit.
        text = args[0] + "pps" if args[0].isdigit() else args[0]
        try:
            rate = format_rate(parse_rate(text))
        except OptionsError as e:
            raise CliError(str(e).replace("--queue-rate", "rate")) from None
        port = parse_value(args[1], 9, "port") if len(args) == 2 else None
        self._target("SetQueueRate", {"port": port, "rate": rate})
        self._say(f"queue rate of {_which(port)} set to {rate}")

    def set_link_delay(self, args: list[str]) -> None:
        if len(args) != 2:
            raise CliError("usage: set_link_delay EGRESS_PORT DELAY")
        port = parse_value(args[0], 9, "port")
        try:
            delay_us = parse_delay(args[1])
        except OptionsError as e:
            raise CliError(str(e)) from None
        self._target("SetLinkDelay", {"port": port, "delay": delay_us})
        self._say(f"link delay of port {port} set to {delay_us} us")

    def show_ports(self, args: list[str]) -> None:
        if args:
            raise CliError("usage: show_ports")
        got = self._target("GetPortSettings", {})
        default = got["default"]
        ports = got["ports"]
        assert isinstance(default, dict) and isinstance(ports, list)
        self._say(f"{'port':<8}{'queue_depth':<13}{'queue_rate':<16}{'link_delay_us':<15}in_flight")
        for p in [{"port": "default", **default, "in_flight": ""}, *ports]:
            self._say(
                f"{p['port']!s:<8}{p['queue_depth']!s:<13}{p['queue_rate']!s:<16}"
                f"{p['link_delay_us']!s:<15}{p['in_flight']}"
            )

    def port_stats(self, args: list[str]) -> None:
        if len(args) > 1:
            raise CliError("usage: port_stats [PORT]")
        port = parse_value(args[0], 9, "port") if args else None
        got = self._target("GetPortStats", {"port": port})
        ports = got["ports"]
        assert isinstance(ports, list)
        self._say(f"{'port':<6}{'iface':<16}" + "".join(f"{n:>14}" for n in PORT_STATS_FIELDS))
        for p in ports:
            iface = p["iface"] or "-"
            counts = "".join(f"{p[n]!s:>14}" for n in PORT_STATS_FIELDS)
            self._say(f"{p['port']!s:<6}{iface:<16}{counts}")

    @staticmethod
    def _named(index: _Lookup[T], name: str, kind: str) -> T:
        found = index.get(name)
        if found is None:
            raise CliError(f"no {kind} {name!r}")
        return found

    COMMANDS = (
        "table_add",
        "table_delete",
        "table_modify",
        "table_clear",
        "table_dump",
        "table_set_default",
        "table_reset_default",
        "table_num_entries",
        "show_tables",
        "show_actions",
        "mc_mgrp_create",
        "mc_node_create",
        "mc_node_associate",
        "mc_mgrp_destroy",
        "mirroring_add",
        "mirroring_delete",
        "counter_read",
        "counter_reset",
        "register_read",
        "register_write",
        "register_reset",
        "meter_set_rates",
        *PORT_COMMANDS,
    )

    def run(self, line: str) -> None:
        words = line.split("#", 1)[0].split()
        if not words:
            return
        name, args = words[0], words[1:]
        if name not in self.COMMANDS:
            raise CliError(f"unknown or unsupported command {name!r}")
        getattr(self, name)(args)


def _key_of(entry: p4r.TableEntry) -> p4r.TableEntry:
    """What names an entry: table, match, priority."""
    return p4r.TableEntry(table_id=entry.table_id, match=entry.match, priority=entry.priority)


def _same_key(a: p4r.TableEntry, b: p4r.TableEntry) -> bool:
    def key(e: p4r.TableEntry) -> tuple[int, list[bytes]]:
        fields = sorted(e.match, key=lambda m: m.field_id)
        return e.priority, [m.SerializeToString(deterministic=True) for m in fields]

    return key(a) == key(b)


def _match_text(m: p4r.FieldMatch | None, width: int) -> str:
    if m is None:
        return "*"
    which = m.WhichOneof("field_match_type")
    if which == "lpm":
        return f"{m.lpm.value.hex()}/{m.lpm.prefix_len}"
    if which == "ternary":
        return f"{m.ternary.value.hex()} &&& {m.ternary.mask.hex()}"
    if which == "range":
        return f"{m.range.low.hex()} -> {m.range.high.hex()}"
    if which == "optional":
        return m.optional.value.hex()
    return m.exact.value.hex()


def _rate_burst(text: str) -> tuple[int, int]:
    rate, sep, burst = text.partition(":")
    try:
        if not sep:
            raise ValueError
        per_us, units = float(rate), int(burst)
    except ValueError:
        raise CliError(f"cannot read {text!r} as RATE:BURST (units per µs : units)") from None
    if per_us < 0 or units < 0:
        raise CliError(f"{text!r}: rate and burst must not be negative")
    return round(per_us * 1_000_000), units


def _which(port: int | None) -> str:
    return "every port" if port is None else f"port {port}"


def _write_error(err: grpc.RpcError) -> str:
    """The update's own error out of a failed one-update Write."""
    for key, value in err.trailing_metadata() or ():  # type: ignore[attr-defined]
        if key == "grpc-status-details-bin":
            status = status_pb2.Status.FromString(value)
            for detail in status.details:
                e = p4r.Error()
                if detail.Unpack(e) and e.canonical_code:
                    name = _CODE_NAMES.get(e.canonical_code, str(e.canonical_code))
                    return f"{name}: {e.message}"
    return f"{err.code().name}: {err.details()}"  # type: ignore[attr-defined]


_CODE_NAMES = {c.value[0]: c.name for c in grpc.StatusCode}


def _one(args: list[str], usage: str) -> str:
    if len(args) != 1:
        raise CliError(f"usage: {usage}")
    return args[0]


class _JsonOnlySession:
    """A switch without a P4Runtime pipeline: port commands over gRPC as always,
    the rest by BMv2's own CLI over the switch's Thrift server (the JSON's names)."""

    def __init__(self, grpc_session: CliSession, thrift: ThriftCliSession) -> None:
        self.grpc_session = grpc_session
        self.thrift = thrift

    def run(self, line: str) -> None:
        words = line.split("#", 1)[0].split()
        if words and words[0] in PORT_COMMANDS:
            self.grpc_session.run(line)
        else:
            self.thrift.run(line)


def run_commands(session: CliSession | _JsonOnlySession, lines: Iterable[str], err: TextIO) -> int:
    """Run every line; report each failure on one line; 1 if any failed."""
    failed = 0
    for number, line in enumerate(lines, start=1):
        try:
            session.run(line)
        except (CliError, P4RuntimeError, ThriftCliError) as e:
            print(f"Error (line {number}): {e}", file=err)
            failed += 1
        except grpc.RpcError as e:
            print(f"Error (line {number}): {e.code().name}: {e.details()}", file=err)
            failed += 1
    return 1 if failed else 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="ratelab-switch-cli",
        description="simple_switch_CLI-style commands over P4Runtime to ratelab-switch",
    )
    ap.add_argument("commands", nargs="?", help="file of commands (default: standard input)")
    ap.add_argument("--grpc-addr", default="127.0.0.1:9559", help="the switch's P4Runtime")
    ap.add_argument("--device-id", type=int, default=0)
    ap.add_argument(
        "--thrift-port",
        type=int,
        default=9090,
        help="the switch's Thrift port, used when it has no P4Runtime pipeline (default 9090)",
    )
    args = ap.parse_args(argv)
    try:
        lines = open(args.commands).readlines() if args.commands else sys.stdin.readlines()  # noqa: SIM115
    except OSError as e:
        print(f"ratelab-switch-cli: error: {args.commands}: {e.strerror}", file=sys.stderr)
        return 2
    channel = grpc.insecure_channel(args.grpc_addr)
    try:
        grpc.channel_ready_future(channel).result(timeout=10)
        words = (line.split("#", 1)[0].split() for line in lines)
        need_pipeline = any(w and w[0] not in PORT_COMMANDS for w in words)
        session = CliSession(channel, args.device_id, sys.stdout, need_pipeline=False)
    except grpc.FutureTimeoutError:
        print(f"ratelab-switch-cli: error: no switch at {args.grpc_addr}", file=sys.stderr)
        return 1
    except (CliError, P4RuntimeError) as e:
        print(f"ratelab-switch-cli: error: {e}", file=sys.stderr)
        return 1
    except grpc.RpcError as e:
        print(f"ratelab-switch-cli: error: {e.code().name}: {e.details()}", file=sys.stderr)
        return 1
    runner: CliSession | _JsonOnlySession = session
    if need_pipeline and not session.has_pipeline:
        # Started with a JSON alone: BMv2's runtime API by the JSON's names.
        host = args.grpc_addr.rpartition(":")[0] or "127.0.0.1"
        try:
            runner = _JsonOnlySession(session, ThriftCliSession(host, args.thrift_port, sys.stdout))
        except ThriftCliError as e:
            session.close()
            channel.close()
            print(f"ratelab-switch-cli: error: {NO_PIPELINE}, and {e}", file=sys.stderr)
            return 1
    try:
        return run_commands(runner, lines, sys.stderr)
    finally:
        session.close()
        channel.close()


if __name__ == "__main__":
    sys.exit(main())
