"""Fuzzing the P4Runtime server over the real engine with router.p4 (as ratelab-p4c
compiles it): table entries and register writes generated from the P4Info, with every
id, width, match kind and priority sometimes wrong. Whatever the update, its code is one
the spec names for a write (never INTERNAL or UNKNOWN: the server and the engine agree
on what is valid), a refused update leaves the state as it was, and an accepted one
changes exactly what it names.

`make fuzz` runs many more examples (the hypothesis profile `fuzz`, see ../../conftest.py).
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import grpc
import pytest

pytest.importorskip("ratelab_engine", reason="the ratelab_engine extension is not built")

from finsy.proto.p4.config.v1 import p4info_pb2 as p4i
from finsy.proto.p4.v1 import p4runtime_pb2 as p4r
from finsy.proto.p4.v1.p4runtime_pb2_grpc import P4RuntimeStub
from google.protobuf import text_format
from hypothesis import event, given
from hypothesis import strategies as st
from ratelab_p4c.cli import run as p4c
from ratelab_switch.arbitration import to_uint128
from ratelab_switch.device import Device
from ratelab_switch.engine_binding import RustEngine
from ratelab_switch.server import P4RuntimeServer
from switch_client import DEVICE_ID, ELECTION_ID, StreamClient, commit_pipeline, write_errors

E = grpc.StatusCode
ROUTER = Path(__file__).resolve().parents[2] / "p4src" / "router.p4"
INSERT, MODIFY, DELETE = p4r.Update.INSERT, p4r.Update.MODIFY, p4r.Update.DELETE
# What a write may answer (P4Runtime "Error reporting" and "Write RPC").
WRITE_CODES = {
    E.OK,
    E.INVALID_ARGUMENT,
    E.NOT_FOUND,
    E.ALREADY_EXISTS,
    E.OUT_OF_RANGE,
    E.RESOURCE_EXHAUSTED,
    E.PERMISSION_DENIED,
    E.FAILED_PRECONDITION,
    E.UNIMPLEMENTED,
}


def _compile_router() -> tuple[p4i.P4Info, bytes]:
    with tempfile.TemporaryDirectory() as tmp:
        info = Path(tmp) / "router.p4info.txtpb"
        rc = p4c(["-o", tmp, "--p4runtime-files", str(info), str(ROUTER)])
        assert rc == 0, "router.p4 did not compile"
        return (
            text_format.Parse(info.read_text(), p4i.P4Info()),
            (Path(tmp) / "router.json").read_bytes(),
        )


INFO, PROGRAM = _compile_router()
# The tables entries can be written to (a keyless table has only its default entry).
TABLES = [
    t for t in INFO.tables if t.match_fields and not t.is_const_table and not t.implementation_id
]
ACTIONS = {a.preamble.id: a for a in INFO.actions}
REGISTERS = list(INFO.registers)


@dataclass
class Switch:
    stub: P4RuntimeStub


@pytest.fixture(scope="module")
def switch() -> Iterator[Switch]:
    engine = RustEngine(cpu_port=255)
    device = Device(engine, device_id=DEVICE_ID, cpu_port=255)
    server = P4RuntimeServer(device, "127.0.0.1:0", max_workers=4)
    server.start()
    engine.start(device)
    channel = grpc.insecure_channel(f"127.0.0.1:{server.port}")
    stub = P4RuntimeStub(channel)
    primary = StreamClient(stub)
    try:
        primary.arbitrate(ELECTION_ID)
        assert primary.get().arbitration.status.code == 0
        commit_pipeline(stub, INFO, PROGRAM)
        yield Switch(stub)
    finally:
        primary.close()
        channel.close()
        engine.stop()
        server.stop(grace=0)


def _bytes(v: int) -> bytes:
    return v.to_bytes(max(1, (v.bit_length() + 7) // 8), "big")


def value(width: int, valid: bool = True) -> st.SearchStrategy[int]:
    """Values of a field: small ones, any, the largest; when not `valid`, also one bit
    too wide."""
    fits = st.one_of(st.integers(0, 3), st.integers(0, (1 << width) - 1), st.just((1 << width) - 1))
    return fits if valid else fits | st.just(1 << width)


def _maybe(draw: st.DrawFn, valid: bool) -> bool:
    """Whether to get one thing wrong: never in a valid entry, 1 in 8 otherwise."""
    return not valid and draw(st.integers(0, 7)) == 0


@st.composite
def field_match(draw: st.DrawFn, mf: p4i.MatchField, valid: bool) -> p4r.FieldMatch:
    w = mf.bitwidth
    fm = p4r.FieldMatch(field_id=99 if _maybe(draw, valid) else mf.id)
    kind = draw(st.sampled_from([1, 2, 3, 4, 5])) if _maybe(draw, valid) else mf.match_type
    if kind == p4i.MatchField.EXACT:
        fm.exact.value = _bytes(draw(value(w, valid)))
    elif kind == p4i.MatchField.LPM:
        plen = draw(st.integers(0, w + 1) if not valid else st.integers(1, w))
        v = draw(value(w, valid))
        if not _maybe(draw, valid) and plen <= w:
            v &= ~((1 << (w - plen)) - 1)  # no bits past the prefix
        fm.lpm.value, fm.lpm.prefix_len = _bytes(v), plen
    elif kind == p4i.MatchField.TERNARY:
        mask = draw(value(w, valid).filter(lambda m: m or not valid))
        v = draw(value(w, valid))
        if not _maybe(draw, valid):
            v &= mask
        fm.ternary.value, fm.ternary.mask = _bytes(v), _bytes(mask)
    elif kind == p4i.MatchField.RANGE:
        low, high = sorted([draw(value(w, valid)), draw(value(w, valid))])
        if valid and (low, high) == (0, (1 << w) - 1):
            high -= 1  # the whole range is a don't-care: it is left out instead
        if _maybe(draw, valid):
            low, high = high + 1, low
        fm.range.low, fm.range.high = _bytes(low), _bytes(high)
    else:
        fm.optional.value = _bytes(draw(value(w, valid)))
    return fm


_WILDCARD_KINDS = (p4i.MatchField.TERNARY, p4i.MatchField.RANGE, p4i.MatchField.OPTIONAL)


@st.composite
def table_update(draw: st.DrawFn) -> p4r.Update:
    """A valid entry (3 in 4), or one with some of its parts wrong."""
    valid = draw(st.integers(0, 3)) > 0
    t = draw(st.sampled_from(TABLES))
    te = p4r.TableEntry(table_id=0x02FFFFFF if _maybe(draw, valid) else t.preamble.id)
    for mf in t.match_fields:
        # Ternary, range and optional fields may be left out (don't care).
        if not (_maybe(draw, valid) or (mf.match_type in _WILDCARD_KINDS and draw(st.booleans()))):
            te.match.append(draw(field_match(mf, valid)))
    needs_priority = any(mf.match_type in _WILDCARD_KINDS for mf in t.match_fields)
    te.priority = draw(st.integers(1, 10)) if needs_priority else 0
    if _maybe(draw, valid):
        te.priority = draw(st.sampled_from([0, 1, 10]))
    usable = [r.id for r in t.action_refs if r.scope != p4i.ActionRef.DEFAULT_ONLY]
    aid = draw(st.sampled_from(list(ACTIONS) if _maybe(draw, valid) else usable))
    te.action.action.action_id = aid
    for p in ACTIONS[aid].params:
        if not _maybe(draw, valid):
            te.action.action.params.add(param_id=p.id, value=_bytes(draw(value(p.bitwidth, valid))))
    op = draw(st.sampled_from([INSERT, INSERT, MODIFY, DELETE]))
    return p4r.Update(type=op, entity=p4r.Entity(table_entry=te))


@st.composite
def register_update(draw: st.DrawFn) -> p4r.Update:
    reg = draw(st.sampled_from(REGISTERS))
    r = p4r.RegisterEntry(register_id=reg.preamble.id)
    index = draw(st.none() | st.integers(0, reg.size) | st.just(reg.size - 1))
    if index is not None:
        r.index.index = index
    r.data.bitstring = _bytes(draw(value(reg.type_spec.bitstring.bit.bitwidth, False)))
    op = draw(st.sampled_from([MODIFY, MODIFY, MODIFY, INSERT]))
    return p4r.Update(type=op, entity=p4r.Entity(register_entry=r))


def _tables(sw: Switch) -> set[bytes]:
    req = p4r.ReadRequest(device_id=DEVICE_ID)
    for t in TABLES:
        req.entities.add().table_entry.table_id = t.preamble.id
    return {
        e.table_entry.SerializeToString(deterministic=True)
        for resp in sw.stub.Read(req)
        for e in resp.entities
    }


def _register(sw: Switch, update: p4r.Update) -> list[int]:
    msg = update.entity.register_entry
    req = p4r.ReadRequest(device_id=DEVICE_ID)
    req.entities.add().register_entry.register_id = msg.register_id
    got = {}
    for resp in sw.stub.Read(req):
        for e in resp.entities:
            got[e.register_entry.index.index] = int.from_bytes(
                e.register_entry.data.bitstring, "big"
            )
    return [got[i] for i in sorted(got)]


def _write(sw: Switch, updates: list[p4r.Update]) -> list[E]:
    req = p4r.WriteRequest(device_id=DEVICE_ID, election_id=to_uint128(ELECTION_ID))
    req.updates.extend(updates)
    by_number = {c.value[0]: c for c in E}
    try:
        sw.stub.Write(req)
    except grpc.RpcError as e:
        return [by_number[code] for code, _ in write_errors(e)]
    return [E.OK] * len(updates)


def _aim_at_an_entry(u: p4r.Update, entries: set[bytes], data: st.DataObject) -> None:
    """Give a MODIFY or DELETE the key of an entry the table has (else most miss). The
    draws do not depend on the switch's state, which the examples before left."""
    aim, pick = data.draw(st.booleans()), data.draw(st.integers(0, 1 << 16))
    te = u.entity.table_entry
    same_table = [
        e
        for e in (p4r.TableEntry.FromString(b) for b in sorted(entries))
        if e.table_id == te.table_id
    ]
    if u.type != INSERT and same_table and aim:
        target = same_table[pick % len(same_table)]
        del te.match[:]
        te.match.extend(target.match)
        te.priority = target.priority


@given(st.lists(table_update() | register_update(), min_size=1, max_size=6), st.data())
def test_any_update_gets_a_write_code_and_changes_only_what_it_names(
    switch: Switch, updates: list[p4r.Update], data: st.DataObject
) -> None:
    for u in updates:
        is_table = u.entity.HasField("table_entry")
        before = _tables(switch) if is_table else _register(switch, u)
        if is_table:
            _aim_at_an_entry(u, before, data)
        [code] = _write(switch, [u])
        event(f"{u.entity.WhichOneof('entity')} {p4r.Update.Type.Name(u.type)}: {code.name}")
        assert code in WRITE_CODES, (code, u)
        after = _tables(switch) if is_table else _register(switch, u)
        if code != E.OK:
            assert after == before, u
        elif is_table:
            grown = {INSERT: 1, MODIFY: 0, DELETE: -1}[u.type]
            assert len(after) == len(before) + grown, u
            assert (after != before) or u.type == MODIFY
        else:
            msg = u.entity.register_entry
            v = int.from_bytes(msg.data.bitstring, "big")
            cells = [msg.index.index] if msg.HasField("index") else range(len(after))
            assert all(after[i] == v for i in cells), u
            assert all(
                a == b for i, (a, b) in enumerate(zip(after, before, strict=True)) if i not in cells
            )


@given(st.lists(table_update(), min_size=2, max_size=8))
def test_a_mixed_batch_changes_the_tables_by_its_accepted_updates(
    switch: Switch, updates: list[p4r.Update]
) -> None:
    before = _tables(switch)
    codes = _write(switch, updates)
    assert len(codes) == len(updates) and set(codes) <= WRITE_CODES, codes
    grown = sum(
        {INSERT: 1, MODIFY: 0, DELETE: -1}[u.type]
        for u, c in zip(updates, codes, strict=True)
        if c == E.OK
    )
    assert len(_tables(switch)) == len(before) + grown
