"""Fuzzing the P4Runtime server with random WriteRequests: valid and malformed table
entries (bad ids, wrong widths, missing or extra fields, const tables), duplicates and
mixed batches. Each update gets the canonical code the spec asks for, computed here from
a model of the tables; the state read back afterwards is the state before plus exactly
the updates answered OK (a refused update leaves no trace), in the server and in the
engine; a batch asking for an atomicity the server does not offer changes nothing.

`make fuzz` runs many more examples (the hypothesis profile `fuzz`, see ../../conftest.py).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

import grpc
import pytest
from finsy.proto.p4.v1 import p4runtime_pb2 as p4r
from finsy.proto.p4.v1.p4runtime_pb2_grpc import P4RuntimeStub
from hypothesis import given
from hypothesis import strategies as st
from ratelab_switch.arbitration import to_uint128
from ratelab_switch.device import Device
from ratelab_switch.server import P4RuntimeServer
from switch_client import (
    DEVICE_ID,
    ELECTION_ID,
    ManualClock,
    StreamClient,
    commit_pipeline,
    write_errors,
)
from switch_fake_engine import FakeEngine
from switch_program import (
    A_DEFAULT_ONLY,
    A_DROP,
    A_NOACTION,
    A_SET_NHOP,
    R_REG,
    T_ACL,
    T_CONST,
    T_LPM,
    T_SMALL,
    bmv2_json,
    p4info,
)

E = grpc.StatusCode
INSERT, MODIFY, DELETE = p4r.Update.INSERT, p4r.Update.MODIFY, p4r.Update.DELETE
TABLES = {T_LPM: "ingress.ipv4_lpm", T_ACL: "ingress.acl", T_SMALL: "ingress.small"}
SIZES = {T_LPM: 1024, T_ACL: 64, T_SMALL: 2}


@dataclass
class Switch:
    stub: P4RuntimeStub
    engine: FakeEngine


@pytest.fixture(scope="module")
def switch() -> Iterator[Switch]:
    """One server for all examples: each example starts from whatever state the ones
    before it left, read back first."""
    engine = FakeEngine()
    device = Device(engine, device_id=DEVICE_ID, cpu_port=64, clock_ns=ManualClock())
    server = P4RuntimeServer(device, "127.0.0.1:0", max_workers=4)
    server.start()
    channel = grpc.insecure_channel(f"127.0.0.1:{server.port}")
    stub = P4RuntimeStub(channel)
    primary = StreamClient(stub)
    try:
        primary.arbitrate(ELECTION_ID)
        assert primary.get().arbitration.status.code == 0
        commit_pipeline(stub, p4info(), bmv2_json())
        yield Switch(stub, engine)
    finally:
        primary.close()
        channel.close()
        server.stop(grace=0)


def _bytes(v: int) -> bytes:
    """The canonical (shortest) P4Runtime byte string of v."""
    return v.to_bytes(max(1, (v.bit_length() + 7) // 8), "big")


# ---------------------------------------------------------------- well-formed entries
def _action(te: p4r.TableEntry, action: int, port: int = 0, mac: int = 0) -> None:
    te.action.action.action_id = action
    if action == A_SET_NHOP:
        te.action.action.params.add(param_id=1, value=_bytes(port))
        te.action.action.params.add(param_id=2, value=_bytes(mac))


@st.composite
def lpm_entry(draw: st.DrawFn) -> p4r.TableEntry:
    te = p4r.TableEntry(table_id=T_LPM)
    plen = draw(st.sampled_from([8, 16, 24, 32]))
    addr = draw(st.sampled_from([0x0A000000, 0x0A010000, 0x0A010100, 0x0A010101]))
    addr &= ~((1 << (32 - plen)) - 1) & 0xFFFFFFFF
    te.match.add(field_id=1).lpm.CopyFrom(p4r.FieldMatch.LPM(value=_bytes(addr), prefix_len=plen))
    action = draw(st.sampled_from([A_SET_NHOP, A_DROP, A_NOACTION]))
    _action(te, action, draw(st.integers(0, 511)), draw(st.integers(0, 2**48 - 1)))
    return te


@st.composite
def acl_entry(draw: st.DrawFn) -> p4r.TableEntry:
    te = p4r.TableEntry(table_id=T_ACL, priority=draw(st.integers(1, 3)))
    if draw(st.booleans()):
        mask = draw(st.sampled_from([0xFFFF, 0xFF00, 0x0001]))
        value = draw(st.sampled_from([0x0800, 0x86DD, 0x0001])) & mask
        te.match.add(field_id=1).ternary.CopyFrom(
            p4r.FieldMatch.Ternary(value=_bytes(value), mask=_bytes(mask))
        )
    if draw(st.booleans()):
        low, high = sorted(draw(st.lists(st.sampled_from([0, 80, 443, 1000]), min_size=2)))[:2]
        te.match.add(field_id=2).range.CopyFrom(
            p4r.FieldMatch.Range(low=_bytes(low), high=_bytes(high))
        )
    if draw(st.booleans()):
        te.match.add(field_id=3).optional.value = _bytes(draw(st.integers(0, 3)))
    _action(te, draw(st.sampled_from([A_DROP, A_NOACTION])))
    return te


@st.composite
def small_entry(draw: st.DrawFn) -> p4r.TableEntry:
    te = p4r.TableEntry(table_id=T_SMALL)
    te.match.add(field_id=1).exact.value = _bytes(draw(st.integers(0, 3)))
    action = draw(st.sampled_from([A_SET_NHOP, A_NOACTION]))
    _action(te, action, draw(st.integers(0, 511)), draw(st.integers(0, 2**48 - 1)))
    return te


# ---------------------------------------------------------------- what can go wrong
def _widen_match(te: p4r.TableEntry) -> None:
    fm = te.match[0]
    which = fm.WhichOneof("field_match_type")
    if which == "range":
        fm.range.high = b"\x01\x00\x00"  # the fields are 16 bits
    else:
        # One whole byte more than the field has, with its top bit set.
        getattr(fm, which).value = b"\x80" + b"\x00" * 4
        if which == "ternary":
            fm.ternary.mask = b"\xff" * 5


def _widen_param(te: p4r.TableEntry) -> None:
    te.action.action.params[0].value = b"\x02\x00"  # port is 9 bits


# (name, applies to (entry, op), change, code): a malformed entity is INVALID_ARGUMENT;
# an unknown table NOT_FOUND; writing a const table, or an entry running a @defaultonly
# action, PERMISSION_DENIED.
CORRUPTIONS: list[tuple[str, object, object, E]] = [
    ("match field too wide", lambda t, op: len(t.match) > 0, _widen_match, E.INVALID_ARGUMENT),
    (
        "unknown match field",
        lambda t, op: len(t.match) > 0,
        lambda te: setattr(te.match[0], "field_id", 9),
        E.INVALID_ARGUMENT,
    ),
    (
        "match field twice",
        lambda t, op: len(t.match) > 0,
        lambda te: te.match.append(te.match[0]),
        E.INVALID_ARGUMENT,
    ),
    (
        "parameter too wide",
        lambda t, op: op != DELETE and t.action.action.action_id == A_SET_NHOP,
        _widen_param,
        E.INVALID_ARGUMENT,
    ),
    (
        "parameter missing",
        lambda t, op: op != DELETE and t.action.action.action_id == A_SET_NHOP,
        lambda te: te.action.action.params.pop(),
        E.INVALID_ARGUMENT,
    ),
    (
        "unknown action",
        lambda t, op: op != DELETE,
        lambda te: setattr(te.action.action, "action_id", 0x01000099),
        E.INVALID_ARGUMENT,
    ),
    (
        "default-only action",
        lambda t, op: op != DELETE and t.table_id == T_ACL,
        lambda te: setattr(te.action.action, "action_id", A_DEFAULT_ONLY),
        E.PERMISSION_DENIED,
    ),
    (
        "action of another table",
        lambda t, op: op != DELETE and t.table_id != T_ACL,
        lambda te: setattr(te.action.action, "action_id", A_DEFAULT_ONLY),
        E.INVALID_ARGUMENT,
    ),
    (
        "no action",  # a MODIFY without one keeps the entry's action
        lambda t, op: op == INSERT,
        lambda te: te.ClearField("action"),
        E.INVALID_ARGUMENT,
    ),
    (
        "priority where none applies",
        lambda t, op: t.table_id != T_ACL,
        lambda te: setattr(te, "priority", 7),
        E.INVALID_ARGUMENT,
    ),
    (
        "no priority where one is needed",
        lambda t, op: t.table_id == T_ACL,
        lambda te: setattr(te, "priority", 0),
        E.INVALID_ARGUMENT,
    ),
    (
        "unknown table",
        lambda t, op: True,
        lambda te: setattr(te, "table_id", 0x02000099),
        E.NOT_FOUND,
    ),
    (
        "const table",
        lambda t, op: t.table_id == T_SMALL,
        lambda te: setattr(te, "table_id", T_CONST),
        E.PERMISSION_DENIED,
    ),
]


@dataclass
class TableCase:
    op: int
    entry: p4r.TableEntry
    # Index into CORRUPTIONS, or None for a well-formed entry.
    corruption: int | None

    def entity(self) -> p4r.Entity:
        return p4r.Entity(table_entry=self.entry)

    def what(self) -> str:
        return CORRUPTIONS[self.corruption][0] if self.corruption is not None else "table entry"

    def expect(self, model: Model) -> E:
        return _expected(model.tables, self)


@st.composite
def table_case(draw: st.DrawFn) -> TableCase:
    entry = draw(st.one_of(lpm_entry(), acl_entry(), small_entry()))
    op = draw(st.sampled_from([INSERT, INSERT, MODIFY, DELETE]))
    corruption = None
    if draw(st.integers(0, 3)) == 0:
        usable = [i for i, (_, fits, _, _) in enumerate(CORRUPTIONS) if fits(entry, op)]  # type: ignore[operator]
        corruption = draw(st.sampled_from(usable))
        CORRUPTIONS[corruption][2](entry)  # type: ignore[operator]
    return TableCase(op, entry, corruption)


# ---------------------------------------------------------------- replication, registers
Replicas = tuple[tuple[int, int], ...]
MAX_PORT = 511  # v1model's 9-bit ports
R_SIZE, R_WIDTH = 8, 32  # ingress.last_seen


@dataclass
class ReplicationCase:
    """A multicast group or clone session: ids 0 (reserved) to 3, replicas on ports up to
    just past the last one, instances up to just past 16 bits, repeats possible."""

    op: int
    clone: bool
    id: int
    replicas: list[tuple[int, int]]
    length: int  # clone sessions' packet_length_bytes

    def entity(self) -> p4r.Entity:
        pre = p4r.PacketReplicationEngineEntry()
        msg = pre.clone_session_entry if self.clone else pre.multicast_group_entry
        if self.clone:
            msg.session_id = self.id
            msg.packet_length_bytes = self.length
        else:
            msg.multicast_group_id = self.id
        for port, instance in self.replicas:
            msg.replicas.add(egress_port=port, instance=instance)
        return p4r.Entity(packet_replication_engine_entry=pre)

    def what(self) -> str:
        return "clone session" if self.clone else "multicast group"

    def expect(self, model: Model) -> E:
        entries = model.sessions if self.clone else model.groups
        if self.id == 0:
            return E.INVALID_ARGUMENT
        present = self.id in entries
        if self.op == INSERT and present:
            return E.ALREADY_EXISTS
        if self.op != INSERT and not present:
            return E.NOT_FOUND
        if self.op == DELETE:
            del entries[self.id]
            return E.OK
        if self.clone and self.length < 0:
            return E.INVALID_ARGUMENT
        if any(p > MAX_PORT or i > 0xFFFF for p, i in self.replicas):
            return E.INVALID_ARGUMENT
        if len(set(self.replicas)) != len(self.replicas):
            return E.INVALID_ARGUMENT
        entries[self.id] = tuple(self.replicas)
        return E.OK


replication_case = st.builds(
    ReplicationCase,
    op=st.sampled_from([INSERT, INSERT, MODIFY, DELETE]),
    clone=st.booleans(),
    id=st.integers(0, 3),
    replicas=st.lists(
        st.tuples(
            st.sampled_from([0, 1, 2, MAX_PORT, MAX_PORT + 1]), st.sampled_from([0, 1, 0x10000])
        ),
        max_size=3,
    ),
    length=st.sampled_from([0, 64, -1]),
)


@dataclass
class RegisterCase:
    """A register cell (or, with no index, every cell) written with a value that may not
    fit, at an index that may be past the end, by an update type that may be wrong."""

    op: int
    index: int | None
    value: int

    def entity(self) -> p4r.Entity:
        r = p4r.RegisterEntry(register_id=R_REG)
        if self.index is not None:
            r.index.index = self.index
        r.data.bitstring = _bytes(self.value)
        return p4r.Entity(register_entry=r)

    def what(self) -> str:
        return "register"

    def expect(self, model: Model) -> E:
        if self.op != MODIFY or self.value.bit_length() > R_WIDTH:
            return E.INVALID_ARGUMENT
        if self.index is not None and self.index >= R_SIZE:
            return E.OUT_OF_RANGE
        for i in range(R_SIZE) if self.index is None else [self.index]:
            model.registers[i] = self.value
        return E.OK


register_case = st.builds(
    RegisterCase,
    op=st.sampled_from([MODIFY, MODIFY, MODIFY, INSERT, DELETE]),
    index=st.none() | st.integers(0, R_SIZE),
    value=st.sampled_from([0, 1, 2**32 - 1, 2**32]),
)

Case = TableCase | ReplicationCase | RegisterCase
cases = st.one_of(table_case(), table_case(), replication_case, register_case)


Key = tuple[int, tuple[bytes, ...], int]


def _key(te: p4r.TableEntry) -> Key:
    fields = sorted(te.match, key=lambda m: m.field_id)
    return te.table_id, tuple(m.SerializeToString(deterministic=True) for m in fields), te.priority


@dataclass
class Model:
    """What the switch holds: table entries (key -> action), multicast groups and clone
    sessions (id -> replicas), the register's cells."""

    tables: dict[Key, bytes]
    groups: dict[int, Replicas]
    sessions: dict[int, Replicas]
    registers: dict[int, int]


def _replicas(rs: Iterable[p4r.Replica]) -> Replicas:
    def port(r: p4r.Replica) -> int:
        return (
            r.egress_port
            if r.WhichOneof("port_kind") == "egress_port"
            else int.from_bytes(r.port, "big")
        )

    return tuple((port(r), r.instance) for r in rs)


def _state(sw: Switch) -> Model:
    """Everything the fuzzed updates can change, as the server reads it back."""
    req = p4r.ReadRequest(device_id=DEVICE_ID)
    for t in TABLES:
        req.entities.add().table_entry.table_id = t
    req.entities.add().packet_replication_engine_entry.multicast_group_entry.SetInParent()
    req.entities.add().packet_replication_engine_entry.clone_session_entry.SetInParent()
    req.entities.add().register_entry.register_id = R_REG
    model = Model({}, {}, {}, {})
    for resp in sw.stub.Read(req):
        for e in resp.entities:
            which = e.WhichOneof("entity")
            if which == "table_entry":
                te = e.table_entry
                model.tables[_key(te)] = te.action.SerializeToString(deterministic=True)
            elif which == "register_entry":
                r = e.register_entry
                model.registers[r.index.index] = int.from_bytes(r.data.bitstring, "big")
            elif e.packet_replication_engine_entry.HasField("clone_session_entry"):
                cs = e.packet_replication_engine_entry.clone_session_entry
                model.sessions[cs.session_id] = _replicas(cs.replicas)
            else:
                mg = e.packet_replication_engine_entry.multicast_group_entry
                model.groups[mg.multicast_group_id] = _replicas(mg.replicas)
    return model


# The corruptions of the action, checked once the key is known good (after the lookup
# for a MODIFY: a MODIFY of no entry is NOT_FOUND whatever action it carries).
ACTION_CORRUPTIONS = {
    "parameter too wide",
    "parameter missing",
    "unknown action",
    "default-only action",
    "action of another table",
    "no action",
}


def _expected(model: dict[Key, bytes], c: TableCase) -> E:
    """The code for one update, applying it to the model when it succeeds."""
    bad = CORRUPTIONS[c.corruption] if c.corruption is not None else None
    if bad is not None and bad[0] not in ACTION_CORRUPTIONS:
        return bad[3]
    key = _key(c.entry)
    present = key in model
    if c.op == INSERT:
        if bad is not None:
            return bad[3]
        if present:
            return E.ALREADY_EXISTS
        if sum(1 for k in model if k[0] == c.entry.table_id) >= SIZES[c.entry.table_id]:
            return E.RESOURCE_EXHAUSTED
        model[key] = c.entry.action.SerializeToString(deterministic=True)
    elif not present:
        return E.NOT_FOUND
    elif bad is not None:
        return bad[3]
    elif c.op == MODIFY:
        model[key] = c.entry.action.SerializeToString(deterministic=True)
    else:
        del model[key]
    return E.OK


def _engine_counts(sw: Switch) -> dict[int, int]:
    return {t: len(sw.engine.tables.get(name, {})) for t, name in TABLES.items()}


def _request(cases: list[Case], atomicity: int) -> p4r.WriteRequest:
    req = p4r.WriteRequest(
        device_id=DEVICE_ID, election_id=to_uint128(ELECTION_ID), atomicity=atomicity
    )
    for c in cases:
        req.updates.add(type=c.op).entity.CopyFrom(c.entity())
    return req


def _send(sw: Switch, cases: list[Case], atomicity: int) -> list[int]:
    req = _request(cases, atomicity)
    try:
        sw.stub.Write(req)
    except grpc.RpcError as e:
        return [code for code, _ in write_errors(e)]
    return [E.OK.value[0]] * len(cases)


def _engine_state(sw: Switch) -> tuple[dict[int, int], dict[int, Replicas], dict[int, Replicas]]:
    """Entries per table, multicast groups and clone sessions as the engine holds them."""
    groups = {g: tuple((r.port, r.instance) for r in rs) for g, rs in sw.engine.mc_groups.items()}
    sessions = {
        s: tuple((r.port, r.instance) for r in rs)
        for s, (rs, _, _) in sw.engine.clone_sessions.items()
    }
    return _engine_counts(sw), groups, sessions


@given(st.lists(cases, min_size=1, max_size=8))
def test_each_update_gets_its_code_and_only_accepted_ones_change_the_state(
    switch: Switch, batch: list[Case]
) -> None:
    model = _state(switch)
    want = [c.expect(model).value[0] for c in batch]
    got = _send(switch, batch, p4r.WriteRequest.CONTINUE_ON_ERROR)
    assert got == want, [c.what() for c in batch]
    assert _state(switch) == model
    counts = {t: sum(1 for k in model.tables if k[0] == t) for t in TABLES}
    assert _engine_state(switch) == (counts, model.groups, model.sessions)


@given(
    st.lists(cases, min_size=1, max_size=4),
    st.sampled_from([p4r.WriteRequest.ROLLBACK_ON_ERROR, p4r.WriteRequest.DATAPLANE_ATOMIC]),
)
def test_an_atomicity_the_server_lacks_refuses_the_whole_batch(
    switch: Switch, batch: list[Case], atomicity: int
) -> None:
    before = _state(switch)
    with pytest.raises(grpc.RpcError) as e:
        switch.stub.Write(_request(batch, atomicity))
    assert e.value.code() == E.UNIMPLEMENTED
    assert _state(switch) == before
