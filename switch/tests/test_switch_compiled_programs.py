"""Programs compiled by ratelab-p4c (snapshots in data/) driven over P4Runtime on the
real engine: controller headers and digests as the compiler lays them out."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest

pytest.importorskip("ratelab_engine", reason="the ratelab_engine extension is not built")

from finsy.proto.p4.config.v1 import p4info_pb2
from finsy.proto.p4.v1 import p4runtime_pb2 as p4r
from finsy.proto.p4.v1.p4runtime_pb2_grpc import P4RuntimeStub
from google.protobuf import text_format
from ratelab_switch.arbitration import to_uint128
from ratelab_switch.device import Device
from ratelab_switch.engine_binding import RustEngine
from ratelab_switch.schema import Schema
from ratelab_switch.server import P4RuntimeServer
from switch_client import INSERT, StreamClient, write

DATA = Path(__file__).parent / "data"
CPU_PORT = 255


def _program(name: str) -> tuple[p4info_pb2.P4Info, bytes]:
    info = text_format.Parse((DATA / f"{name}.p4info.txtpb").read_text(), p4info_pb2.P4Info())
    return info, (DATA / f"{name}.json").read_bytes()


@pytest.fixture
def switch() -> Iterator[tuple[P4RuntimeStub, RustEngine]]:
    engine = RustEngine(cpu_port=CPU_PORT)
    device = Device(engine, device_id=1, cpu_port=CPU_PORT)
    server = P4RuntimeServer(device, "127.0.0.1:0", max_workers=8)
    server.start()
    engine.start(device)
    channel = grpc.insecure_channel(f"127.0.0.1:{server.port}")
    try:
        yield P4RuntimeStub(channel), engine
    finally:
        channel.close()
        engine.stop()
        server.stop(grace=0)


def _controller(stub: P4RuntimeStub, name: str) -> tuple[StreamClient, Schema]:
    info, program = _program(name)
    s = StreamClient(stub)
    s.arbitrate(10)
    assert s.get().arbitration.status.code == 0
    req = p4r.SetForwardingPipelineConfigRequest(
        device_id=1,
        election_id=to_uint128(10),
        action=p4r.SetForwardingPipelineConfigRequest.VERIFY_AND_COMMIT,
    )
    req.config.p4info.CopyFrom(info)
    req.config.p4_device_config = program
    stub.SetForwardingPipelineConfig(req)
    return s, Schema(info)


ETH = bytes.fromhex("0200000000aa0200000000bb88b5") + b"payload"


def test_packet_out_and_packet_in_headers_of_a_compiled_program(
    switch: tuple[P4RuntimeStub, RustEngine],
) -> None:
    stub, engine = switch
    ctl, schema = _controller(stub, "p4runtime_cpu")
    try:
        out_header = schema.packet_out
        assert out_header is not None
        ids = {f.name: f.id for f in out_header.fields}
        # PacketOut naming the CPU port as egress: the program sends it back to us, and
        # its egress adds a packet_in header carrying the ingress port (the CPU port).
        msg = p4r.StreamMessageRequest()
        msg.packet.payload = ETH
        msg.packet.metadata.add(metadata_id=ids["egress_port"], value=bytes([0, CPU_PORT]))
        msg.packet.metadata.add(metadata_id=ids["_pad"], value=b"\x00")
        ctl.send(msg)
        packet_in = ctl.get().packet
        assert packet_in.payload == ETH
        in_ids = {f.id: f.name for f in schema.packet_in.fields}  # type: ignore[union-attr]
        got = {in_ids[m.metadata_id]: m.value for m in packet_in.metadata}
        assert got == {"ingress_port": bytes([CPU_PORT]), "_pad": b"\x00"}
        # A frame from a port that misses l2_exact goes to the CPU with that port.
        [(port, data, _)] = engine.switch.process([(3, ETH)], 10)
        assert port == CPU_PORT
        assert data[:2] == bytes([0x01, 0x80]) and data[2:] == ETH  # 9-bit port 3, 7-bit pad
    finally:
        ctl.close()


def test_digests_of_a_compiled_program_carry_enum_members(
    switch: tuple[P4RuntimeStub, RustEngine],
) -> None:
    stub, _ = switch
    ctl, schema = _controller(stub, "digest_learn")
    try:
        digest = schema.digests["mac_learn_digest_t"]
        de = p4r.DigestEntry(digest_id=digest.id)
        de.config.max_list_size = 1
        write(stub, (INSERT, p4r.Entity(digest_entry=de)))
        msg = p4r.StreamMessageRequest()
        msg.packet.payload = ETH  # enters on the CPU port, misses smac: learn()
        ctl.send(msg)
        dl = ctl.get().digest
        [data] = dl.data
        src, port, kind = data.struct.members
        assert src.bitstring == bytes.fromhex("0200000000bb")
        assert port.bitstring == bytes([CPU_PORT])
        assert kind.enum_value == b"\x01"  # FrameKind.UNICAST
    finally:
        ctl.close()


def _ipv4_l4(ttl: int, src: int, dst: int, sport: int, dport: int) -> bytes:
    """The action_profiles program's headers: ttl, protocol, addresses, then ports."""
    return (
        bytes([ttl, 6])
        + src.to_bytes(4, "big")
        + dst.to_bytes(4, "big")
        + sport.to_bytes(2, "big")
        + dport.to_bytes(2, "big")
    )


def test_action_selector_groups_spread_flows_and_profiles_share_members(
    switch: tuple[P4RuntimeStub, RustEngine],
) -> None:
    stub, engine = switch
    ctl, schema = _controller(stub, "action_profiles")
    try:
        selector = schema.action_profiles["ecmp_selector"]
        nexthops = schema.action_profiles["nexthops"]
        set_port = schema.actions["set_port"]
        set_ttl = schema.actions["set_ttl"]

        def member(profile: int, mid: int, action: int, value: int) -> p4r.Entity:
            m = p4r.ActionProfileMember(action_profile_id=profile, member_id=mid)
            m.action.action_id = action
            m.action.params.add(param_id=1, value=bytes([value]))
            return p4r.Entity(action_profile_member=m)

        group = p4r.ActionProfileGroup(action_profile_id=selector.id, group_id=10)
        group.members.add(member_id=1, weight=1)
        group.members.add(member_id=2, weight=1)
        ecmp = p4r.TableEntry(table_id=schema.tables["ecmp"].id)
        ecmp.match.add(field_id=1).lpm.CopyFrom(p4r.FieldMatch.LPM(value=b"\x0a", prefix_len=8))
        ecmp.action.action_profile_group_id = 10
        rewrite = p4r.TableEntry(table_id=schema.tables["rewrite"].id)
        rewrite.match.add(field_id=1).exact.value = b"\x02"
        rewrite.action.action_profile_member_id = 1
        ecmp.match[0].lpm.value = b"\x0a\x00\x00\x00"
        write(
            stub,
            (INSERT, member(selector.id, 1, set_port.id, 2)),
            (INSERT, member(selector.id, 2, set_port.id, 3)),
            (INSERT, p4r.Entity(action_profile_group=group)),
            (INSERT, p4r.Entity(table_entry=ecmp)),
            (INSERT, member(nexthops.id, 1, set_ttl.id, 7)),
            (INSERT, p4r.Entity(table_entry=rewrite)),
        )
        seen: dict[int, set[int]] = {}
        for sport in range(64):
            pkt = _ipv4_l4(64, 0x01020304, 0x0A000001, 1000 + sport, 80)
            [(port, data, _)] = engine.switch.process([(1, pkt)], 10)
            seen.setdefault(port, set()).add(data[0])
        assert set(seen) == {2, 3}  # the selector's hash spreads flows over both members
        assert seen[2] == {7} and seen[3] == {64}  # only port 2 rewrites the ttl
    finally:
        ctl.close()
