"""Fixtures: a Device over the fake engine, and a real gRPC server + client around it."""

from __future__ import annotations

from collections.abc import Iterator

import grpc
import pytest
from finsy.proto.p4.v1 import p4runtime_pb2 as p4r
from finsy.proto.p4.v1 import p4runtime_pb2_grpc
from ratelab_switch.arbitration import to_uint128
from ratelab_switch.device import Device
from ratelab_switch.server import P4RuntimeServer
from switch_client import ManualClock, StreamClient
from switch_fake_engine import FakeEngine
from switch_program import bmv2_json, p4info

DEVICE_ID = 1


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
def engine() -> FakeEngine:
    return FakeEngine()


@pytest.fixture
def server(engine: FakeEngine, clock: ManualClock) -> Iterator[P4RuntimeServer]:
    device = Device(engine, device_id=DEVICE_ID, cpu_port=64, clock_ns=clock)
    srv = P4RuntimeServer(device, "127.0.0.1:0", max_workers=8)
    srv.start()
    try:
        yield srv
    finally:
        srv.stop(grace=0)


@pytest.fixture
def channel(server: P4RuntimeServer) -> Iterator[grpc.Channel]:
    ch = grpc.insecure_channel(f"127.0.0.1:{server.port}")
    try:
        yield ch
    finally:
        ch.close()


@pytest.fixture
def stub(channel: grpc.Channel) -> p4runtime_pb2_grpc.P4RuntimeStub:
    return p4runtime_pb2_grpc.P4RuntimeStub(channel)


@pytest.fixture
def streams(stub: p4runtime_pb2_grpc.P4RuntimeStub) -> Iterator[list[StreamClient]]:
    """Open StreamClients are closed at the end of the test."""
    opened: list[StreamClient] = []
    yield opened
    for s in opened:
        s.close()


@pytest.fixture
def primary(stub: p4runtime_pb2_grpc.P4RuntimeStub, streams: list[StreamClient]) -> StreamClient:
    """A stream that is the primary (election id 10) of a switch running the test program."""
    s = StreamClient(stub)
    streams.append(s)
    s.arbitrate(10)
    assert s.get().arbitration.status.code == 0
    req = p4r.SetForwardingPipelineConfigRequest(
        device_id=DEVICE_ID,
        election_id=to_uint128(10),
        action=p4r.SetForwardingPipelineConfigRequest.VERIFY_AND_COMMIT,
    )
    req.config.p4info.CopyFrom(p4info())
    req.config.p4_device_config = bmv2_json()
    req.config.cookie.cookie = 42
    stub.SetForwardingPipelineConfig(req)
    return s
