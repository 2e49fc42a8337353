"""ratelab-switch-cli: simple_switch_CLI's table, multicast, mirroring, counter and
register commands, carried over P4Runtime to a running ratelab-switch.

BMv2's CLI talks Thrift, which ratelab-switch does not serve; this one speaks
P4Runtime instead, as the primary of its own role ("ratelab-switch-cli"), so a
controller that is primary of the default role keeps that standing.

    ratelab-switch-cli [--grpc-addr HOST:PORT] [--device-id N] [COMMANDS_FILE]

Commands come from the file or standard input, one per line (# starts a
comment). Names may be full (MyIngress.ipv4_lpm) or aliases (ipv4_lpm).
Values: decimal, 0x hex, IPv4 (10.0.0.1) or MAC (00:11:22:33:44:55); LPM
value/len, ternary value&&&mask, range low->high. As in BMv2, a smaller
table_add priority wins.
"""

from __future__ import annotations

import argparse
import ipaddress
import queue
import sys
from collections.abc import Iterable, Iterator
from typing import Protocol, TextIO, TypeVar

import grpc
from finsy.proto.google.rpc import status_pb2
from finsy.proto.p4.v1 import p4runtime_pb2 as p4r
from finsy.proto.p4.v1 import p4runtime_pb2_grpc

from . import codec
from .arbitration import to_uint128
from .errors import P4RuntimeError
from .schema import MatchKind, Schema, TableInfo

ROLE = "ratelab-switch-cli"
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

    def __init__(self, channel: grpc.Channel, device_id: int, out: TextIO) -> None:
        self.stub = p4runtime_pb2_grpc.P4RuntimeStub(channel)
        self.device_id = device_id
        self.out = out
        self._stream = self._arbitrate()
        reply = self.stub.GetForwardingPipelineConfig(
            p4r.GetForwardingPipelineConfigRequest(
                device_id=device_id,
                response_type=p4r.GetForwardingPipelineConfigRequest.P4INFO_AND_COOKIE,
            )
        )
        if not reply.HasField("config"):
            raise CliError("the switch has no P4Runtime pipeline config yet")
        self.schema = Schema(reply.config.p4info)
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

    # ------------------------------------------------------------ plumbing
    def _write(self, op: int, entity: p4r.Entity) -> None:
        req = p4r.WriteRequest(device_id=self.device_id, role=ROLE, election_id=to_uint128(1))
        req.updates.add(type=op, entity=entity)
        try:
            self.stub.Write(req)
        except grpc.RpcError as e:
            raise CliError(_write_error(e)) from None

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
        self._say(f"Entry added to {table.name}")

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

    @staticmethod
    def _named(index: _Lookup[T], name: str, kind: str) -> T:
        found = index.get(name)
        if found is None:
            raise CliError(f"no {kind} {name!r}")
        return found

    COMMANDS = (
        "table_add",
        "table_set_default",
        "table_reset_default",
        "table_num_entries",
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
    )

    def run(self, line: str) -> None:
        words = line.split("#", 1)[0].split()
        if not words:
            return
        name, args = words[0], words[1:]
        if name not in self.COMMANDS:
            raise CliError(f"unknown or unsupported command {name!r}")
        getattr(self, name)(args)


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


def run_commands(session: CliSession, lines: Iterable[str], err: TextIO) -> int:
    """Run every line; report each failure on one line; 1 if any failed."""
    failed = 0
    for number, line in enumerate(lines, start=1):
        try:
            session.run(line)
        except (CliError, P4RuntimeError) as e:
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
    ap.add_argument("--thrift-port", help="accepted and ignored (P4Runtime is used)")
    args = ap.parse_args(argv)
    try:
        lines = open(args.commands).readlines() if args.commands else sys.stdin.readlines()  # noqa: SIM115
    except OSError as e:
        print(f"ratelab-switch-cli: error: {args.commands}: {e.strerror}", file=sys.stderr)
        return 2
    channel = grpc.insecure_channel(args.grpc_addr)
    try:
        grpc.channel_ready_future(channel).result(timeout=10)
        session = CliSession(channel, args.device_id, sys.stdout)
    except grpc.FutureTimeoutError:
        print(f"ratelab-switch-cli: error: no switch at {args.grpc_addr}", file=sys.stderr)
        return 1
    except (CliError, P4RuntimeError) as e:
        print(f"ratelab-switch-cli: error: {e}", file=sys.stderr)
        return 1
    except grpc.RpcError as e:
        print(f"ratelab-switch-cli: error: {e.code().name}: {e.details()}", file=sys.stderr)
        return 1
    try:
        return run_commands(session, lines, sys.stderr)
    finally:
        session.close()
        channel.close()


if __name__ == "__main__":
    sys.exit(main())
