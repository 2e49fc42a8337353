"""Counters, direct counters and meters, meters, registers, multicast and clone sessions."""

from __future__ import annotations

import grpc
import pytest
from finsy.proto.p4.v1 import p4runtime_pb2 as p4r
from finsy.proto.p4.v1.p4runtime_pb2_grpc import P4RuntimeStub
from ratelab_switch.engine_api import CounterValue, MeterConfig, Replica
from switch_client import (
    DELETE,
    INSERT,
    MODIFY,
    StreamClient,
    code,
    lpm_entry,
    read,
    read_batch,
    write,
    write_errors,
)
from switch_fake_engine import FakeEngine
from switch_program import A_DROP, C_PORT, M_PORT, R_REG, T_ACL, T_LPM, VS_TYPES

E = grpc.StatusCode


def _fails(stub: P4RuntimeStub, *updates: tuple[int, p4r.Entity]) -> list[tuple[int, str]]:
    with pytest.raises(grpc.RpcError) as e:
        write(stub, *updates)
    return write_errors(e.value)


def test_direct_counter_on_entry_and_as_entity(
    stub: P4RuntimeStub, primary: StreamClient, engine: FakeEngine
) -> None:
    entity = lpm_entry(0x0A000000, 8)
    entity.table_entry.counter_data.packet_count = 5
    entity.table_entry.counter_data.byte_count = 500
    write(stub, (INSERT, entity))
    [fake] = engine.tables["ingress.ipv4_lpm"].values()
    assert fake.counter == CounterValue(5, 500)
    fake.counter = CounterValue(7, 700)  # traffic counted by the engine

    flt = p4r.TableEntry(table_id=T_LPM)
    flt.counter_data.SetInParent()
    [got] = read(stub, p4r.Entity(table_entry=flt))
    assert (got.table_entry.counter_data.packet_count, got.table_entry.counter_data.byte_count) == (
        7,
        700,
    )
    [got] = read(stub, p4r.Entity(table_entry=p4r.TableEntry(table_id=T_LPM)))
    assert not got.table_entry.HasField("counter_data")  # only when asked for

    dce = p4r.DirectCounterEntry()
    dce.table_entry.CopyFrom(lpm_entry(0x0A000000, 8).table_entry)
    dce.data.packet_count = 0
    write(stub, (MODIFY, p4r.Entity(direct_counter_entry=dce)))
    assert fake.counter == CounterValue(0, 0)
    got = read(stub, p4r.Entity(direct_counter_entry=p4r.DirectCounterEntry()))
    assert len(got) == 1 and got[0].direct_counter_entry.table_entry.table_id == T_LPM

    missing = p4r.DirectCounterEntry()
    missing.table_entry.CopyFrom(lpm_entry(0x0B000000, 8).table_entry)
    errors = _fails(
        stub,
        (MODIFY, p4r.Entity(direct_counter_entry=missing)),
        (INSERT, p4r.Entity(direct_counter_entry=dce)),
    )
    assert [c for c, _ in errors] == [code(E.NOT_FOUND), code(E.INVALID_ARGUMENT)]


def test_counter_data_on_a_table_without_direct_counter(
    stub: P4RuntimeStub, primary: StreamClient
) -> None:
    te = p4r.TableEntry(table_id=T_ACL, priority=1)
    te.action.action.action_id = A_DROP
    te.counter_data.packet_count = 1
    [(c, msg)] = _fails(stub, (INSERT, p4r.Entity(table_entry=te)))
    assert c == code(E.INVALID_ARGUMENT) and "no direct counter" in msg


def test_direct_meter_config(
    stub: P4RuntimeStub, primary: StreamClient, engine: FakeEngine
) -> None:
    te = p4r.TableEntry(table_id=T_ACL, priority=1)
    te.action.action.action_id = A_DROP
    te.meter_config.CopyFrom(p4r.MeterConfig(cir=100, cburst=10, pir=200, pburst=20))
    write(stub, (INSERT, p4r.Entity(table_entry=te)))
    [fake] = engine.tables["ingress.acl"].values()
    assert fake.meter == MeterConfig(100, 10, 200, 20)
    flt = p4r.TableEntry(table_id=T_ACL)
    flt.meter_config.SetInParent()
    [got] = read(stub, p4r.Entity(table_entry=flt))
    assert got.table_entry.meter_config.pir == 200
    dme = p4r.DirectMeterEntry()
    dme.table_entry.CopyFrom(te)
    dme.table_entry.ClearField("meter_config")
    write(stub, (MODIFY, p4r.Entity(direct_meter_entry=dme)))  # no config: back to default
    assert fake.meter is None
    dme.config.CopyFrom(p4r.MeterConfig(cir=300, cburst=1, pir=200, pburst=1))
    [(c, msg)] = _fails(stub, (MODIFY, p4r.Entity(direct_meter_entry=dme)))
    assert c == code(E.INVALID_ARGUMENT) and "below cir" in msg


def test_indexed_counters(stub: P4RuntimeStub, primary: StreamClient, engine: FakeEngine) -> None:
    engine.counters[("ingress.port_pkts", 3)] = CounterValue(4, 256)
    [got] = read(
        stub,
        p4r.Entity(counter_entry=p4r.CounterEntry(counter_id=C_PORT, index=p4r.Index(index=3))),
    )
    assert got.counter_entry.data.packet_count == 4 and got.counter_entry.data.byte_count == 256
    everything = read(stub, p4r.Entity(counter_entry=p4r.CounterEntry()))
    assert [e.counter_entry.index.index for e in everything] == list(range(16))
    ce = p4r.CounterEntry(counter_id=C_PORT, index=p4r.Index(index=3))
    ce.data.packet_count = 0
    write(stub, (MODIFY, p4r.Entity(counter_entry=ce)))
    assert engine.counters[("ingress.port_pkts", 3)] == CounterValue(0, 0)
    bad = p4r.CounterEntry(counter_id=C_PORT, index=p4r.Index(index=16))
    errors = _fails(
        stub, (MODIFY, p4r.Entity(counter_entry=bad)), (INSERT, p4r.Entity(counter_entry=ce))
    )
    assert [c for c, _ in errors] == [code(E.OUT_OF_RANGE), code(E.INVALID_ARGUMENT)]
    # A bad filter fails alone: the others are still answered, then UNKNOWN with details.
    good = p4r.CounterEntry(counter_id=C_PORT, index=p4r.Index(index=0))
    entities, errors = read_batch(
        stub, p4r.Entity(counter_entry=good), p4r.Entity(counter_entry=bad)
    )
    assert [e.counter_entry.index.index for e in entities] == [0]
    assert [c for c, _ in errors] == [code(E.OK), code(E.OUT_OF_RANGE)]


def test_registers(stub: P4RuntimeStub, primary: StreamClient, engine: FakeEngine) -> None:
    re = p4r.RegisterEntry(register_id=R_REG, index=p4r.Index(index=2))
    re.data.bitstring = b"\x00\x01\x02\x03"
    write(stub, (MODIFY, p4r.Entity(register_entry=re)))
    assert engine.registers[("ingress.last_seen", 2)] == 0x010203
    [got] = read(
        stub,
        p4r.Entity(register_entry=p4r.RegisterEntry(register_id=R_REG, index=p4r.Index(index=2))),
    )
    assert got.register_entry.data.bitstring == b"\x01\x02\x03"
    assert len(read(stub, p4r.Entity(register_entry=p4r.RegisterEntry(register_id=R_REG)))) == 8
    re.data.bitstring = b"\x01\x00\x00\x00\x00"
    [(c, msg)] = _fails(stub, (MODIFY, p4r.Entity(register_entry=re)))
    assert c == code(E.INVALID_ARGUMENT) and "32 bits" in msg
    # No index: every cell.
    all_cells = p4r.RegisterEntry(register_id=R_REG)
    all_cells.data.bitstring = b"\x09"
    write(stub, (MODIFY, p4r.Entity(register_entry=all_cells)))
    assert {engine.registers[("ingress.last_seen", i)] for i in range(8)} == {9}


def test_meters(stub: P4RuntimeStub, primary: StreamClient, engine: FakeEngine) -> None:
    me = p4r.MeterEntry(meter_id=M_PORT, index=p4r.Index(index=1))
    me.config.CopyFrom(p4r.MeterConfig(cir=1000, cburst=100, pir=2000, pburst=200))
    write(stub, (MODIFY, p4r.Entity(meter_entry=me)))
    assert engine.meters[("ingress.port_meter", 1)] == MeterConfig(1000, 100, 2000, 200)
    got = read(stub, p4r.Entity(meter_entry=p4r.MeterEntry(meter_id=M_PORT)))
    assert [e.meter_entry.HasField("config") for e in got] == [False, True, False, False]
    me.ClearField("config")
    write(stub, (MODIFY, p4r.Entity(meter_entry=me)))
    assert engine.meters[("ingress.port_meter", 1)] is None


def _mc(gid: int, *ports: int) -> p4r.Entity:
    g = p4r.MulticastGroupEntry(multicast_group_id=gid)
    for i, p in enumerate(ports):
        g.replicas.add(port=p.to_bytes(2, "big"), instance=i + 1)
    return p4r.Entity(
        packet_replication_engine_entry=p4r.PacketReplicationEngineEntry(multicast_group_entry=g)
    )


def test_multicast_groups(stub: P4RuntimeStub, primary: StreamClient, engine: FakeEngine) -> None:
    write(stub, (INSERT, _mc(1, 1, 2)), (INSERT, _mc(2, 3)))
    assert engine.mc_groups[1] == (Replica(1, 1), Replica(2, 2))
    write(stub, (MODIFY, _mc(1, 4)))
    assert engine.mc_groups[1] == (Replica(4, 1),)
    got = read(stub, _mc(0))
    assert [
        e.packet_replication_engine_entry.multicast_group_entry.multicast_group_id for e in got
    ] == [1, 2]
    [one] = read(stub, _mc(2))
    assert one.packet_replication_engine_entry.multicast_group_entry.replicas[0].port == b"\x00\x03"
    errors = _fails(
        stub,
        (INSERT, _mc(1, 1)),
        (MODIFY, _mc(9, 1)),
        (DELETE, _mc(9)),
        (DELETE, _mc(2)),
        (INSERT, _mc(3, 1, 1)),
    )
    assert [c for c, _ in errors] == [
        code(E.ALREADY_EXISTS),
        code(E.NOT_FOUND),
        code(E.NOT_FOUND),
        code(E.OK),
        code(E.OK),
    ]
    assert 2 not in engine.mc_groups
    dup = _mc(4)
    dup.packet_replication_engine_entry.multicast_group_entry.replicas.add(port=b"\x01", instance=1)
    dup.packet_replication_engine_entry.multicast_group_entry.replicas.add(port=b"\x01", instance=1)
    [(c, msg)] = _fails(stub, (INSERT, dup))
    assert c == code(E.INVALID_ARGUMENT) and "given twice" in msg


def test_clone_sessions(stub: P4RuntimeStub, primary: StreamClient, engine: FakeEngine) -> None:
    cs = p4r.CloneSessionEntry(session_id=5, class_of_service=1, packet_length_bytes=64)
    cs.replicas.add(egress_port=7, instance=0)  # the deprecated spelling still works
    entity = p4r.Entity(
        packet_replication_engine_entry=p4r.PacketReplicationEngineEntry(clone_session_entry=cs)
    )
    write(stub, (INSERT, entity))
    assert engine.clone_sessions[5] == ((Replica(7, 0),), 1, 64)
    flt = p4r.Entity(
        packet_replication_engine_entry=p4r.PacketReplicationEngineEntry(
            clone_session_entry=p4r.CloneSessionEntry()
        )
    )
    [got] = read(stub, flt)
    assert got.packet_replication_engine_entry.clone_session_entry.packet_length_bytes == 64
    write(stub, (DELETE, entity))
    assert engine.clone_sessions == {}
    assert read(stub, flt) == []


def test_negative_index_is_invalid_and_too_large_is_out_of_range(
    stub: P4RuntimeStub, primary: StreamClient
) -> None:
    neg = p4r.RegisterEntry(register_id=R_REG, index=p4r.Index(index=-1))
    neg.data.bitstring = b"\x01"
    big = p4r.RegisterEntry(register_id=R_REG, index=p4r.Index(index=8))
    big.data.bitstring = b"\x01"
    errors = _fails(
        stub, (MODIFY, p4r.Entity(register_entry=neg)), (MODIFY, p4r.Entity(register_entry=big))
    )
    assert [c for c, _ in errors] == [code(E.INVALID_ARGUMENT), code(E.OUT_OF_RANGE)]
    _, errors = read_batch(stub, p4r.Entity(register_entry=neg))
    assert [c for c, _ in errors] == [code(E.INVALID_ARGUMENT)]


def test_multicast_metadata_round_trips_and_replica_limits(
    stub: P4RuntimeStub, primary: StreamClient
) -> None:
    entity = _mc(7, 1, 2)
    entity.packet_replication_engine_entry.multicast_group_entry.metadata = b"opaque"
    write(stub, (INSERT, entity))
    [got] = read(stub, _mc(7))
    assert got.packet_replication_engine_entry.multicast_group_entry.metadata == b"opaque"
    too_big = _mc(8)
    too_big.packet_replication_engine_entry.multicast_group_entry.replicas.add(
        port=b"\x01", instance=0x10000
    )
    bad_port = _mc(9, 512)
    errors = _fails(stub, (INSERT, too_big), (INSERT, bad_port))
    assert [c for c, _ in errors] == [code(E.INVALID_ARGUMENT)] * 2


def _value_set(*values: int) -> p4r.Entity:
    entry = p4r.ValueSetEntry(value_set_id=VS_TYPES)
    for v in values:
        entry.members.add().match.add(field_id=1).exact.value = v.to_bytes(2, "big")
    return p4r.Entity(value_set_entry=entry)


def test_value_sets(stub: P4RuntimeStub, primary: StreamClient, engine: FakeEngine) -> None:
    write(stub, (MODIFY, _value_set(0x88B5, 0x1234)))
    assert engine.value_sets["ingress.parser.types"] == (0x88B5, 0x1234)
    [got] = read(stub, p4r.Entity(value_set_entry=p4r.ValueSetEntry()))
    assert [m.match[0].exact.value for m in got.value_set_entry.members] == [
        b"\x88\xb5",
        b"\x12\x34",
    ]
    write(stub, (MODIFY, _value_set()))  # empty: back to the initial state
    assert engine.value_sets["ingress.parser.types"] == ()
    errors = _fails(
        stub,
        (INSERT, _value_set(1)),
        (MODIFY, _value_set(1, 1)),
        (MODIFY, _value_set(1, 2, 3, 4)),
    )
    assert [c for c, _ in errors] == [
        code(E.INVALID_ARGUMENT),
        code(E.ALREADY_EXISTS),
        code(E.RESOURCE_EXHAUSTED),
    ]
