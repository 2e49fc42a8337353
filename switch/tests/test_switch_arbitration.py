"""Client arbitration over a real StreamChannel."""

from __future__ import annotations

import json
import time

import grpc
import pytest
from finsy.proto.p4.v1 import p4runtime_pb2 as p4r
from finsy.proto.p4.v1.p4runtime_pb2_grpc import P4RuntimeStub
from ratelab_switch.arbitration import to_uint128, uint128
from switch_client import StreamClient, code, lpm_entry, write


def _open(stub: P4RuntimeStub, streams: list[StreamClient]) -> StreamClient:
    s = StreamClient(stub)
    streams.append(s)
    return s


def test_primary_and_backup_statuses(stub: P4RuntimeStub, streams: list[StreamClient]) -> None:
    a = _open(stub, streams)
    a.arbitrate(5)
    r = a.get().arbitration
    assert r.status.code == code(grpc.StatusCode.OK)
    assert uint128(r.election_id) == 5 and r.device_id == 1

    b = _open(stub, streams)
    b.arbitrate(3)
    r = b.get().arbitration
    assert r.status.code == code(grpc.StatusCode.ALREADY_EXISTS)
    assert uint128(r.election_id) == 5  # the primary's

    # A higher id takes over: both hear about it.
    c = _open(stub, streams)
    c.arbitrate(9)
    assert c.get().arbitration.status.code == code(grpc.StatusCode.OK)
    assert a.get().arbitration.status.code == code(grpc.StatusCode.ALREADY_EXISTS)
    assert b.get().arbitration.status.code == code(grpc.StatusCode.ALREADY_EXISTS)


def test_duplicate_election_id_is_invalid(stub: P4RuntimeStub, streams: list[StreamClient]) -> None:
    a = _open(stub, streams)
    a.arbitrate(5)
    a.get()
    b = _open(stub, streams)
    b.arbitrate(5)
    assert b.error().code() == grpc.StatusCode.INVALID_ARGUMENT


def test_wrong_device_id_ends_stream_with_not_found(
    stub: P4RuntimeStub, streams: list[StreamClient]
) -> None:
    a = _open(stub, streams)
    a.arbitrate(5, device_id=77)
    assert a.error().code() == grpc.StatusCode.NOT_FOUND


def test_changing_role_is_failed_precondition(
    stub: P4RuntimeStub, streams: list[StreamClient]
) -> None:
    a = _open(stub, streams)
    a.arbitrate(5)
    a.get()
    a.arbitrate(5, role="other")
    assert a.error().code() == grpc.StatusCode.FAILED_PRECONDITION


def test_primary_leaving_leaves_no_primary_until_rearbitration(
    stub: P4RuntimeStub, streams: list[StreamClient]
) -> None:
    a = _open(stub, streams)
    a.arbitrate(5)
    a.get()
    b = _open(stub, streams)
    b.arbitrate(3)
    b.get()
    a.close()
    r = b.get().arbitration
    assert r.status.code == code(grpc.StatusCode.NOT_FOUND)
    assert uint128(r.election_id) == 5  # highest seen
    b.arbitrate(4)  # still below the departed primary's id: stays backup
    assert b.get().arbitration.status.code == code(grpc.StatusCode.NOT_FOUND)
    b.arbitrate(6)
    assert b.get().arbitration.status.code == code(grpc.StatusCode.OK)


def test_roles_are_arbitrated_separately(stub: P4RuntimeStub, streams: list[StreamClient]) -> None:
    a = _open(stub, streams)
    a.arbitrate(5)
    assert a.get().arbitration.status.code == 0
    b = _open(stub, streams)
    b.arbitrate(1, role="monitor")
    r = b.get().arbitration
    assert r.status.code == 0 and r.role.name == "monitor"


def test_only_the_primary_may_write(
    stub: P4RuntimeStub, primary: StreamClient, streams: list[StreamClient]
) -> None:
    backup = _open(stub, streams)
    backup.arbitrate(3)
    backup.get()
    with pytest.raises(grpc.RpcError) as e:
        write(stub, (p4r.Update.INSERT, lpm_entry(0x0A000000, 8)), election_id=3)
    assert e.value.code() == grpc.StatusCode.PERMISSION_DENIED
    with pytest.raises(grpc.RpcError) as e:
        write(stub, (p4r.Update.INSERT, lpm_entry(0x0A000000, 8)), election_id=11)
    assert e.value.code() == grpc.StatusCode.PERMISSION_DENIED
    write(stub, (p4r.Update.INSERT, lpm_entry(0x0A000000, 8)), election_id=10)


def test_write_for_an_unknown_role_is_not_found(stub: P4RuntimeStub, primary: StreamClient) -> None:
    req = p4r.WriteRequest(device_id=1, role="nobody", election_id=to_uint128(10))
    req.updates.add(type=p4r.Update.INSERT, entity=lpm_entry(0x0A000000, 8))
    with pytest.raises(grpc.RpcError) as e:
        stub.Write(req)
    assert e.value.code() == grpc.StatusCode.NOT_FOUND


def test_write_for_another_device_is_not_found(stub: P4RuntimeStub, primary: StreamClient) -> None:
    with pytest.raises(grpc.RpcError) as e:
        write(stub, (p4r.Update.INSERT, lpm_entry(0x0A000000, 8)), device_id=2)
    assert e.value.code() == grpc.StatusCode.NOT_FOUND


def test_primary_downgrading_itself_leaves_no_primary(
    stub: P4RuntimeStub, streams: list[StreamClient]
) -> None:
    a = _open(stub, streams)
    a.arbitrate(5)
    a.get()
    b = _open(stub, streams)
    b.arbitrate(3)
    b.get()
    a.arbitrate(5)  # same id again: only a hears back
    assert a.get().arbitration.status.code == code(grpc.StatusCode.OK)
    assert b.responses.empty()
    a.arbitrate(4)  # below the highest id seen: a downgrades itself, everyone hears
    for s in (a, b):
        r = s.get().arbitration
        assert r.status.code == code(grpc.StatusCode.NOT_FOUND)
        assert uint128(r.election_id) == 5
    with pytest.raises(grpc.RpcError) as e:
        write(stub, (p4r.Update.INSERT, lpm_entry(0x0A000000, 8)), election_id=4)
    assert e.value.code() == grpc.StatusCode.PERMISSION_DENIED


def test_no_election_id_means_backup_and_unset_id_before_any_primary(
    stub: P4RuntimeStub, streams: list[StreamClient]
) -> None:
    a = _open(stub, streams)
    msg = p4r.StreamMessageRequest()
    msg.arbitration.device_id = 1
    a.send(msg)
    r = a.get().arbitration
    assert r.status.code == code(grpc.StatusCode.NOT_FOUND)
    assert not r.HasField("election_id")


def test_role_config_and_device_change_end_the_stream(
    stub: P4RuntimeStub, streams: list[StreamClient]
) -> None:
    a = _open(stub, streams)
    msg = p4r.StreamMessageRequest()
    msg.arbitration.device_id = 1
    msg.arbitration.role.name = "r"
    msg.arbitration.role.config.type_url = "type.googleapis.com/x.RoleConfig"
    a.send(msg)
    assert a.error().code() == grpc.StatusCode.INVALID_ARGUMENT
    b = _open(stub, streams)
    b.arbitrate(5)
    b.get()
    b.arbitrate(5, device_id=2)
    assert b.error().code() == grpc.StatusCode.FAILED_PRECONDITION


def _arbitration(channel: grpc.Channel, device_id: int = 1) -> list[dict[str, object]]:
    body = json.dumps({"device_id": device_id}).encode()
    reply = channel.unary_unary("/ratelab.SwitchTarget/GetArbitration")(body)
    return json.loads(reply)["roles"]


def _wait_for(channel: grpc.Channel, expected: list[dict[str, object]]) -> None:
    """Stream teardown runs on the server's threads: give it a moment."""
    deadline = time.monotonic() + 5
    while _arbitration(channel) != expected and time.monotonic() < deadline:
        time.sleep(0.02)
    assert _arbitration(channel) == expected


def test_get_arbitration_counts_open_streams_per_role(
    stub: P4RuntimeStub, channel: grpc.Channel, streams: list[StreamClient]
) -> None:
    assert _arbitration(channel) == []
    a = _open(stub, streams)
    a.arbitrate(5)
    a.get()
    b = _open(stub, streams)
    b.arbitrate(3)
    b.get()
    c = _open(stub, streams)
    c.arbitrate(7, role="other")
    c.get()
    _wait_for(
        channel,
        [
            {"role": "", "streams": 2, "primary_election_id": 5},
            {"role": "other", "streams": 1, "primary_election_id": 7},
        ],
    )
    a.close()  # the primary leaves: no primary, one stream left
    _wait_for(
        channel,
        [
            {"role": "", "streams": 1, "primary_election_id": None},
            {"role": "other", "streams": 1, "primary_election_id": 7},
        ],
    )
    b.close()
    c.close()
    _wait_for(
        channel,
        [
            {"role": "", "streams": 0, "primary_election_id": None},
            {"role": "other", "streams": 0, "primary_election_id": None},
        ],
    )
    with pytest.raises(grpc.RpcError) as e:
        _arbitration(channel, device_id=9)
    assert e.value.code() == grpc.StatusCode.NOT_FOUND
