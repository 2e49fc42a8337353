"""The P4Runtime service over the real Rust engine (needs the ratelab_engine extension)."""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator

import grpc
import pytest

pytest.importorskip("ratelab_engine", reason="the ratelab_engine extension is not built")

from finsy.proto.p4.config.v1 import p4info_pb2 as p4i
from finsy.proto.p4.v1 import p4runtime_pb2 as p4r
from finsy.proto.p4.v1.p4runtime_pb2_grpc import P4RuntimeStub
from ratelab_p4info import MatchKind
from ratelab_switch.device import Device
from ratelab_switch.engine_api import ActionCall, EngineError, KeyField
from ratelab_switch.engine_binding import RustEngine, _RxDropWatch
from ratelab_switch.server import P4RuntimeServer
from switch_basic_program import (
    A_FORWARD,
    BASIC_JSON,
    F_ACL,
    F_ACL_DENY,
    F_ACL_PERMIT,
    F_CTL,
    F_CTR,
    F_DIGEST,
    F_DO_CLONE,
    F_DO_COUNT,
    F_DO_DIGEST,
    F_DO_MCAST,
    F_FWD,
    F_PVS,
    F_REG,
    FEATURES_JSON,
    T_IPV4_LPM,
    basic_p4info,
    cmd_packet,
    features_p4info,
    ipv4_packet,
    route,
)
from switch_client import (
    INSERT,
    MODIFY,
    StreamClient,
    code,
    commit_pipeline,
    read,
    write,
    write_errors,
)

CPU_PORT = 64


def now_us() -> int:
    """The clock the data plane stamps packets with (CLOCK_MONOTONIC, µs)."""
    return time.monotonic_ns() // 1000


@pytest.fixture
def rust_engine() -> RustEngine:
    return RustEngine(seed=1, cpu_port=CPU_PORT)


@pytest.fixture
def rust_server(rust_engine: RustEngine) -> Iterator[P4RuntimeServer]:
    device = Device(rust_engine, device_id=1, cpu_port=CPU_PORT)
    srv = P4RuntimeServer(device, "127.0.0.1:0", max_workers=8)
    srv.start()
    rust_engine.start(device)
    try:
        yield srv
    finally:
        rust_engine.stop()
        srv.stop(grace=0)


@pytest.fixture
def rust_stub(rust_server: P4RuntimeServer) -> Iterator[P4RuntimeStub]:
    with grpc.insecure_channel(f"127.0.0.1:{rust_server.port}") as ch:
        yield P4RuntimeStub(ch)


def _primary_with(
    stub: P4RuntimeStub, p4info: p4i.P4Info, program: bytes
) -> Iterator[StreamClient]:
    s = StreamClient(stub)
    s.arbitrate(10)
    assert s.get().arbitration.status.code == 0
    commit_pipeline(stub, p4info, program, device_id=1, election_id=10)
    try:
        yield s
    finally:
        s.close()


@pytest.fixture
def controller(rust_stub: P4RuntimeStub) -> Iterator[StreamClient]:
    """The primary controller of a switch running basic.json."""
    yield from _primary_with(rust_stub, basic_p4info(), BASIC_JSON.read_bytes())


@pytest.fixture
def features(rust_stub: P4RuntimeStub) -> Iterator[StreamClient]:
    """The primary controller of a switch running features.json."""
    yield from _primary_with(rust_stub, features_p4info(), FEATURES_JSON.read_bytes())


def test_verify_and_load_errors_are_invalid_argument(rust_engine: RustEngine) -> None:
    with pytest.raises(EngineError) as e:
        rust_engine.verify_config(b'{"header_types": 5}')
    assert e.value.code == grpc.StatusCode.INVALID_ARGUMENT
    rust_engine.verify_config(BASIC_JSON.read_bytes())


def test_entries_written_over_p4runtime_forward_packets(
    rust_stub: P4RuntimeStub, controller: StreamClient, rust_engine: RustEngine
) -> None:
    write(rust_stub, (INSERT, route(b"\x0a\x00\x02\x00", 24, 2)))
    write(rust_stub, (INSERT, route(b"\x0a\x00\x00\x00", 8, 3, mac=0x0333)))
    frames = rust_engine.switch.process([(1, ipv4_packet(bytes([10, 0, 2, 7])))], now_us())
    [(port, data, _)] = frames
    assert port == 2 and data[:6] == bytes.fromhex("000000000222")
    assert data[14 + 8] == 63  # TTL decremented by the program
    write(rust_stub, (MODIFY, route(b"\x0a\x00\x02\x00", 24, 4)))
    [(port, _, _)] = rust_engine.switch.process([(1, ipv4_packet(bytes([10, 0, 2, 7])))], now_us())
    assert port == 4
    [got] = read(rust_stub, route(b"\x0a\x00\x02\x00", 24, 0))
    assert got.table_entry.action.action.params[1].value == b"\x04"
    # The default action (drop) read back from the engine.
    default = p4r.TableEntry(table_id=T_IPV4_LPM, is_default_action=True)
    [got] = read(rust_stub, p4r.Entity(table_entry=default))
    assert got.table_entry.action.action.action_id != A_FORWARD


def test_engine_refusals_become_per_update_errors(
    rust_stub: P4RuntimeStub, controller: StreamClient
) -> None:
    write(rust_stub, (INSERT, route(b"\x0a\x00\x02\x00", 24, 2)))
    with pytest.raises(grpc.RpcError) as e:
        write(
            rust_stub,
            (INSERT, route(b"\x0a\x00\x02\x00", 24, 2)),
            (INSERT, route(b"\x0b\x00\x00\x00", 8, 600)),
        )
    assert [c for c, _ in write_errors(e.value)] == [
        code(grpc.StatusCode.ALREADY_EXISTS),
        code(grpc.StatusCode.INVALID_ARGUMENT),  # 600 does not fit the 9-bit port
    ]


def test_unknown_handle_is_not_found(rust_engine: RustEngine) -> None:
    rust_engine.load_config(BASIC_JSON.read_bytes())
    h = rust_engine.table_add(
        "MyIngress.ipv4_lpm",
        [KeyField(MatchKind.LPM, 0x0A000000, prefix_len=8)],
        ActionCall("MyIngress.drop"),
        0,
    )
    assert isinstance(h, int)
    with pytest.raises(EngineError) as e:
        rust_engine.table_delete("MyIngress.ipv4_lpm", h + 100)
    assert e.value.code == grpc.StatusCode.NOT_FOUND


def test_packet_out_runs_the_pipeline_and_cpu_port_frames_become_packet_in(
    rust_stub: P4RuntimeStub, controller: StreamClient
) -> None:
    # basic.p4 has no controller headers: PacketOut payloads enter on the CPU port as they
    # are, and frames the pipeline sends to the CPU port reach the controller whole.
    write(rust_stub, (INSERT, route(b"\x0a\x00\x09\x00", 24, CPU_PORT, mac=0x0999)))
    msg = p4r.StreamMessageRequest()
    msg.packet.payload = ipv4_packet(bytes([10, 0, 9, 1]), payload=b"to-cpu")
    controller.send(msg)
    packet_in = controller.get().packet
    assert packet_in.payload.endswith(b"to-cpu")
    assert packet_in.payload[:6] == bytes.fromhex("000000000999")


def _ctl(op: int, action_id: int, *params: bytes) -> p4r.Entity:
    te = p4r.TableEntry(table_id=F_CTL)
    te.match.add(field_id=1).exact.value = bytes([op])
    te.action.action.action_id = action_id
    for i, v in enumerate(params, start=1):
        te.action.action.params.add(param_id=i, value=v)
    return p4r.Entity(table_entry=te)


def _acl(priority: int, action_id: int, val: tuple[int, int] | None, arg: tuple[int, int] | None,
         *params: bytes) -> p4r.Entity:  # fmt: skip
    te = p4r.TableEntry(table_id=F_ACL, priority=priority)
    if val is not None:
        te.match.add(field_id=1).ternary.CopyFrom(
            p4r.FieldMatch.Ternary(value=val[0].to_bytes(4, "big"), mask=val[1].to_bytes(4, "big"))
        )
    if arg is not None:
        te.match.add(field_id=2).range.CopyFrom(
            p4r.FieldMatch.Range(low=arg[0].to_bytes(2, "big"), high=arg[1].to_bytes(2, "big"))
        )
    te.action.action.action_id = action_id
    for i, v in enumerate(params, start=1):
        te.action.action.params.add(param_id=i, value=v)
    return p4r.Entity(table_entry=te)


def test_higher_p4runtime_priority_wins_and_direct_counters_count(
    rust_stub: P4RuntimeStub, features: StreamClient, rust_engine: RustEngine
) -> None:
    write(
        rust_stub,
        (INSERT, _ctl(1, F_FWD, b"\x02")),
        (INSERT, _acl(10, F_ACL_PERMIT, None, (0, 100), b"\x11")),
        (INSERT, _acl(20, F_ACL_PERMIT, (5, 0xFFFFFFFF), None, b"\x22")),
    )
    [(port, data, _)] = rust_engine.switch.process([(1, cmd_packet(1, 50, 5))], now_us())
    assert port == 2 and data[14 + 3 : 14 + 7] == b"\x00\x00\x00\x22"  # priority 20 won
    write(rust_stub, (INSERT, _acl(30, F_ACL_DENY, None, (40, 60))))
    assert rust_engine.switch.process([(1, cmd_packet(1, 50, 5))], now_us()) == []
    flt = p4r.TableEntry(table_id=F_ACL)
    flt.counter_data.SetInParent()
    counts = {
        e.table_entry.priority: e.table_entry.counter_data.packet_count
        for e in read(rust_stub, p4r.Entity(table_entry=flt))
    }
    assert counts == {10: 0, 20: 1, 30: 1}


def test_indexed_counters_and_registers(
    rust_stub: P4RuntimeStub, features: StreamClient, rust_engine: RustEngine
) -> None:
    write(rust_stub, (INSERT, _ctl(7, F_DO_COUNT)))
    rust_engine.switch.process([(1, cmd_packet(7, 3, 0)), (1, cmd_packet(7, 3, 0))], now_us())
    [got] = read(
        rust_stub,
        p4r.Entity(counter_entry=p4r.CounterEntry(counter_id=F_CTR, index=p4r.Index(index=3))),
    )
    assert got.counter_entry.data.packet_count == 2
    assert got.counter_entry.data.byte_count == 2 * len(cmd_packet(7, 3, 0))
    reg = p4r.RegisterEntry(register_id=F_REG, index=p4r.Index(index=2))
    reg.data.bitstring = b"\x12\x34"
    write(rust_stub, (MODIFY, p4r.Entity(register_entry=reg)))
    assert rust_engine.switch.register_read("MyIngress.reg", 2) == 0x1234
    [got] = read(rust_stub, p4r.Entity(register_entry=reg))
    assert got.register_entry.data.bitstring == b"\x12\x34"
    bad = p4r.RegisterEntry(register_id=F_REG, index=p4r.Index(index=16))
    bad.data.bitstring = b"\x01"
    with pytest.raises(grpc.RpcError) as e:
        write(rust_stub, (MODIFY, p4r.Entity(register_entry=bad)))
    assert [c for c, _ in write_errors(e.value)] == [code(grpc.StatusCode.OUT_OF_RANGE)]


def test_digests_from_the_packet_loop_reach_the_controller(
    rust_stub: P4RuntimeStub, features: StreamClient
) -> None:
    write(rust_stub, (INSERT, _ctl(9, F_DO_DIGEST)))
    de = p4r.DigestEntry(digest_id=F_DIGEST)
    de.config.max_list_size = 1
    write(rust_stub, (INSERT, p4r.Entity(digest_entry=de)))
    msg = p4r.StreamMessageRequest()
    msg.packet.payload = cmd_packet(9, 0, 0xABCD)
    features.send(msg)  # enters on the CPU port, runs do_digest
    dl = features.get().digest
    assert dl.digest_id == F_DIGEST
    [data] = dl.data
    assert [m.bitstring for m in data.struct.members] == [b"\xab\xcd", bytes([CPU_PORT])]


def test_queue_depth_and_rate_options_reach_the_traffic_manager() -> None:
    from ratelab_switch.engine_binding import open_engine
    from ratelab_switch.options import parse_options

    opts = parse_options(["--no-p4", "--queue-depth", "2=2", "--queue-rate", "2=1pps"])
    engine = open_engine(opts)
    engine.load_config(BASIC_JSON.read_bytes())
    engine.table_add(
        "MyIngress.ipv4_lpm",
        [KeyField(MatchKind.LPM, 0x0A000200, prefix_len=24)],
        ActionCall("MyIngress.ipv4_forward", (0x0222, 2)),
        0,
    )
    packets = [(1, ipv4_packet(bytes([10, 0, 2, 7]))) for _ in range(6)]
    sent = engine.switch.process(packets, 1_000)
    queued = engine.switch.queue_len(2)
    drops = engine.switch.port_stats(2)[4]
    assert queued <= 2 and drops >= 3
    assert len(sent) + queued + drops == 6
    # One packet per second: the next departure is a second after the first.
    later = engine.switch.process([], 1_000 + 1_000_000)
    assert len(later) == 1


def test_const_entries_of_the_program_read_back(
    rust_stub: P4RuntimeStub, rust_engine: RustEngine
) -> None:
    import json

    doc = json.loads(BASIC_JSON.read_bytes())
    [table] = [t for t in doc["pipelines"][0]["tables"] if t["name"] == "MyIngress.ipv4_lpm"]
    forward = next(a["id"] for a in doc["actions"] if a["name"] == "MyIngress.ipv4_forward")
    table["entries"] = [
        {
            "match_key": [{"match_type": "lpm", "key": "0x0a000000", "prefix_length": 8}],
            "action_entry": {"action_id": forward, "action_data": ["0x0333", "0x3"]},
            "priority": 1,
        }
    ]
    info = basic_p4info()
    info.tables[0].is_const_table = True
    gen = _primary_with(rust_stub, info, json.dumps(doc).encode())
    next(gen)
    try:
        [got] = read(rust_stub, p4r.Entity(table_entry=p4r.TableEntry(table_id=T_IPV4_LPM)))
        te = got.table_entry
        assert te.is_const and te.priority == 0
        assert (te.match[0].lpm.value, te.match[0].lpm.prefix_len) == (b"\x0a\x00\x00\x00", 8)
        assert [p.value for p in te.action.action.params] == [b"\x03\x33", b"\x03"]
        [(port, _, _)] = rust_engine.switch.process([(1, ipv4_packet(bytes([10, 9, 9, 9])))], 1)
        assert port == 3
        with pytest.raises(grpc.RpcError) as e:
            write(rust_stub, (INSERT, route(b"\x0b\x00\x00\x00", 8, 2)))
        assert [c for c, _ in write_errors(e.value)] == [code(grpc.StatusCode.PERMISSION_DENIED)]
    finally:
        gen.close()


def test_multicast_groups_and_clone_sessions_replicate_packets(
    rust_stub: P4RuntimeStub, features: StreamClient, rust_engine: RustEngine
) -> None:
    group = p4r.MulticastGroupEntry(multicast_group_id=1)
    group.replicas.add(port=b"\x02", instance=5)
    group.replicas.add(port=b"\x03", instance=6)
    clone = p4r.CloneSessionEntry(session_id=4)
    clone.replicas.add(port=b"\x07", instance=0)
    write(
        rust_stub,
        (INSERT, _ctl(2, F_DO_MCAST, b"\x01")),
        (INSERT, _ctl(3, F_DO_CLONE, b"\x04", b"\x01")),
        (
            INSERT,
            p4r.Entity(
                packet_replication_engine_entry=p4r.PacketReplicationEngineEntry(
                    multicast_group_entry=group
                )
            ),
        ),
        (
            INSERT,
            p4r.Entity(
                packet_replication_engine_entry=p4r.PacketReplicationEngineEntry(
                    clone_session_entry=clone
                )
            ),
        ),
    )
    frames = rust_engine.switch.process([(9, cmd_packet(2, 0, 0))], now_us())
    assert sorted(port for port, _, _ in frames) == [2, 3]
    frames = rust_engine.switch.process([(9, cmd_packet(3, 0, 0))], now_us())
    assert sorted(port for port, _, _ in frames) == [1, 7]
    # Deleting the group stops the replication.
    write(
        rust_stub,
        (
            p4r.Update.DELETE,
            p4r.Entity(
                packet_replication_engine_entry=p4r.PacketReplicationEngineEntry(
                    multicast_group_entry=p4r.MulticastGroupEntry(multicast_group_id=1)
                )
            ),
        ),
    )
    assert rust_engine.switch.process([(9, cmd_packet(2, 0, 0))], now_us()) == []


def test_parser_value_sets_steer_the_parser(
    rust_stub: P4RuntimeStub, features: StreamClient, rust_engine: RustEngine
) -> None:
    write(rust_stub, (INSERT, _ctl(1, F_FWD, b"\x02")))
    frame = bytearray(cmd_packet(1, 0, 0))
    frame[12:14] = b"\x12\x34"  # not the cmd EtherType: only the value set can match
    [(port, _, _)] = rust_engine.switch.process([(1, bytes(frame))], now_us())
    assert port == 0  # not parsed as cmd: no table ran
    vs = p4r.ValueSetEntry(value_set_id=F_PVS)
    vs.members.add().match.add(field_id=1).exact.value = b"\x12\x34"
    write(rust_stub, (MODIFY, p4r.Entity(value_set_entry=vs)))
    [(port, _, _)] = rust_engine.switch.process([(1, bytes(frame))], now_us())
    assert port == 2


def test_receive_drops_are_logged_once_each_as_they_grow(
    caplog: pytest.LogCaptureFixture,
) -> None:
    def stats(drops1: int, drops2: int) -> dict[str, object]:
        return {
            "ports": {
                1: {"iface": "veth1", "rx_drops": drops1},
                2: {"iface": "veth2", "rx_drops": drops2},
            }
        }

    watch = _RxDropWatch()
    with caplog.at_level(logging.WARNING, logger="ratelab_switch"):
        watch.check(stats(0, 0))
        watch.check(stats(5, 0))
        watch.check(stats(5, 0))
        watch.check(stats(12, 3))
    assert [r.getMessage() for r in caplog.records] == [
        "port 1 (veth1): the kernel dropped 5 frames the switch did not read in time"
        " (5 in all); the switch is overloaded",
        "port 1 (veth1): the kernel dropped 7 frames the switch did not read in time"
        " (12 in all); the switch is overloaded",
        "port 2 (veth2): the kernel dropped 3 frames the switch did not read in time"
        " (3 in all); the switch is overloaded",
    ]


def test_link_jitter_from_the_options_reaches_the_engine() -> None:
    """--link-jitter is applied when the program loads, beside the link delay."""
    engine = RustEngine(seed=1, link_delay={2: 20_000}, link_jitter={2: 1_000, 3: 0})
    engine.load_config(BASIC_JSON.read_bytes())
    assert engine.switch.link_jitter(2) == 1_000
    assert engine.switch.link_delay(2) == 20_000
    assert engine.switch.link_jitter(3) == 0
    assert engine.switch.link_jitter(1) == 0
    assert engine.port_settings()[1][2].link_jitter_us == 1_000
