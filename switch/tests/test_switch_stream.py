"""StreamChannel traffic: PacketOut, PacketIn, digests and their acks."""

from __future__ import annotations

import time

import grpc
from finsy.proto.p4.v1 import p4runtime_pb2 as p4r
from finsy.proto.p4.v1.p4runtime_pb2_grpc import P4RuntimeStub
from ratelab_switch.server import P4RuntimeServer
from switch_client import DELETE, INSERT, ManualClock, StreamClient, write
from switch_fake_engine import FakeEngine
from switch_program import D_LEARN


def _packet_out(payload: bytes, port: int) -> p4r.StreamMessageRequest:
    msg = p4r.StreamMessageRequest()
    msg.packet.payload = payload
    msg.packet.metadata.add(metadata_id=1, value=port.to_bytes(2, "big"))
    msg.packet.metadata.add(metadata_id=2, value=b"\x00")
    return msg


def _wait_for(predicate: object, timeout: float = 5.0) -> None:
    import time

    deadline = time.monotonic() + timeout
    while not predicate():  # type: ignore[operator]
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


def test_packet_out_is_injected_on_the_cpu_port_with_header(
    primary: StreamClient, engine: FakeEngine
) -> None:
    primary.send(_packet_out(b"hello", 259))
    _wait_for(lambda: engine.injected)
    assert engine.injected == [(64, b"\x81\x80hello")]


def test_packet_out_errors_come_back_as_stream_errors(
    stub: P4RuntimeStub, primary: StreamClient, streams: list[StreamClient], engine: FakeEngine
) -> None:
    bad = p4r.StreamMessageRequest()
    bad.packet.payload = b"x"
    primary.send(bad)
    err = primary.get().error
    assert err.canonical_code == grpc.StatusCode.INVALID_ARGUMENT.value[0]
    assert err.packet_out.packet_out.payload == b"x"
    backup = StreamClient(stub)
    streams.append(backup)
    backup.arbitrate(3)
    backup.get()
    backup.send(_packet_out(b"y", 1))
    assert backup.get().error.canonical_code == grpc.StatusCode.PERMISSION_DENIED.value[0]
    assert engine.injected == []


def test_packet_in_goes_to_the_primary_only(
    stub: P4RuntimeStub, primary: StreamClient, streams: list[StreamClient], server: P4RuntimeServer
) -> None:
    backup = StreamClient(stub)
    streams.append(backup)
    backup.arbitrate(3)
    backup.get()
    server.device.deliver_packet_in(b"\x00\x80frame")  # ingress_port 1
    pin = primary.get().packet
    assert pin.payload == b"frame"
    assert [(m.metadata_id, m.value) for m in pin.metadata] == [(1, b"\x01"), (2, b"\x00")]
    assert backup.responses.empty()


def _configure_digest(stub: P4RuntimeStub, op: int, **config: int) -> None:
    de = p4r.DigestEntry(digest_id=D_LEARN)
    for k, v in config.items():
        setattr(de.config, k, v)
    write(stub, (op, p4r.Entity(digest_entry=de)))


def test_digests_are_batched_sent_and_suppressed_until_acked(
    stub: P4RuntimeStub, primary: StreamClient, server: P4RuntimeServer, clock: ManualClock
) -> None:
    device = server.device
    device.deliver_digest("mac_learn_t", (0xAA, 1))  # not configured yet: dropped
    _configure_digest(stub, INSERT, max_list_size=2, max_timeout_ns=10**9, ack_timeout_ns=10**9)
    device.deliver_digest("mac_learn_t", (0xAA, 1))
    device.deliver_digest("mac_learn_t", (0xBB, 2))  # list full: sent now
    dl = primary.get().digest
    assert dl.digest_id == D_LEARN
    assert abs(dl.timestamp - time.time_ns()) < 60 * 10**9  # wall clock, ns since the Epoch
    members = [[m.bitstring for m in d.struct.members] for d in dl.data]
    assert members == [[b"\xaa", b"\x01"], [b"\xbb", b"\x02"]]

    # Until acked, the same data is not reported again.
    device.deliver_digest("mac_learn_t", (0xAA, 1))
    device.deliver_digest("mac_learn_t", (0xCC, 3))
    clock.now += 10**9  # the open list's timeout passes
    device.flush_digests()
    dl2 = primary.get().digest
    assert [[m.bitstring for m in d.struct.members] for d in dl2.data] == [[b"\xcc", b"\x03"]]

    ack = p4r.StreamMessageRequest()
    ack.digest_ack.digest_id = D_LEARN
    ack.digest_ack.list_id = dl.list_id
    primary.send(ack)
    _wait_for(lambda: not device._digests._unacked.get(dl.list_id))
    device.deliver_digest("mac_learn_t", (0xAA, 1))
    clock.now += 10**9
    device.flush_digests()
    dl3 = primary.get().digest
    assert [[m.bitstring for m in d.struct.members] for d in dl3.data] == [[b"\xaa", b"\x01"]]

    read = stub.Read(
        p4r.ReadRequest(device_id=1, entities=[p4r.Entity(digest_entry=p4r.DigestEntry())])
    )
    [entity] = [e for r in read for e in r.entities]
    assert entity.digest_entry.config.max_list_size == 2
    _configure_digest(stub, DELETE)
    device.deliver_digest("mac_learn_t", (0xDD, 4))
    clock.now += 10**9
    device.flush_digests()
    assert primary.responses.empty()


def test_flusher_thread_sends_on_timeout(
    stub: P4RuntimeStub, primary: StreamClient, server: P4RuntimeServer, clock: ManualClock
) -> None:
    _configure_digest(stub, INSERT, max_list_size=100, max_timeout_ns=1)
    server.device.deliver_digest("mac_learn_t", (0x01, 1))
    clock.now += 10
    with server.device._wake:
        server.device._wake.notify_all()
    assert len(primary.get().digest.data) == 1


def test_unknown_stream_message_is_unimplemented(primary: StreamClient) -> None:
    msg = p4r.StreamMessageRequest()
    msg.other.type_url = "type.googleapis.com/x"
    primary.send(msg)
    assert primary.get().error.canonical_code == grpc.StatusCode.UNIMPLEMENTED.value[0]


def test_ack_for_an_unknown_digest_is_a_stream_error(primary: StreamClient) -> None:
    ack = p4r.StreamMessageRequest()
    ack.digest_ack.digest_id = 0x17FFFFFF
    ack.digest_ack.list_id = 1
    primary.send(ack)
    err = primary.get().error
    assert err.canonical_code == grpc.StatusCode.INVALID_ARGUMENT.value[0]
    assert err.digest_list_ack.digest_list_ack.digest_id == 0x17FFFFFF
