"""Small client-side helpers the gRPC tests share."""

from __future__ import annotations

import queue
import threading

import grpc
from finsy.proto.google.rpc import status_pb2
from finsy.proto.p4.config.v1 import p4info_pb2 as p4i
from finsy.proto.p4.v1 import p4runtime_pb2 as p4r
from finsy.proto.p4.v1 import p4runtime_pb2_grpc
from ratelab_switch.arbitration import to_uint128
from switch_program import A_DROP, A_SET_NHOP, T_LPM

DEVICE_ID = 1
ELECTION_ID = 10
INSERT, MODIFY, DELETE = p4r.Update.INSERT, p4r.Update.MODIFY, p4r.Update.DELETE


def write(
    stub: p4runtime_pb2_grpc.P4RuntimeStub,
    *updates: tuple[int, p4r.Entity],
    election_id: int = ELECTION_ID,
    device_id: int = DEVICE_ID,
) -> None:
    req = p4r.WriteRequest(device_id=device_id, election_id=to_uint128(election_id))
    for op, entity in updates:
        req.updates.add(type=op, entity=entity)
    stub.Write(req)


def write_errors(err: grpc.RpcError) -> list[tuple[int, str]]:
    """(canonical_code, message) per update (or read filter), from grpc-status-details-bin."""
    assert err.code() == grpc.StatusCode.UNKNOWN
    raw = dict(err.trailing_metadata())["grpc-status-details-bin"]
    status = status_pb2.Status.FromString(raw)
    assert status.code == grpc.StatusCode.UNKNOWN.value[0]
    out = []
    for any_msg in status.details:
        e = p4r.Error()
        assert any_msg.Unpack(e)
        out.append((e.canonical_code, e.message))
    return out


def read(stub: p4runtime_pb2_grpc.P4RuntimeStub, *entities: p4r.Entity) -> list[p4r.Entity]:
    req = p4r.ReadRequest(device_id=DEVICE_ID, entities=entities)
    return [e for resp in stub.Read(req) for e in resp.entities]


def read_batch(
    stub: p4runtime_pb2_grpc.P4RuntimeStub, *entities: p4r.Entity
) -> tuple[list[p4r.Entity], list[tuple[int, str]]]:
    """A Read expected to fail in part: the entities streamed, then the per-filter errors."""
    got: list[p4r.Entity] = []
    call = stub.Read(p4r.ReadRequest(device_id=DEVICE_ID, entities=entities))
    try:
        for resp in call:
            got.extend(resp.entities)
    except grpc.RpcError as e:
        return got, write_errors(e)
    raise AssertionError("the Read did not fail")


def lpm_entry(addr: int, plen: int, port: int | None = 1, mac: int = 0xAABBCCDDEEFF) -> p4r.Entity:
    te = p4r.TableEntry(table_id=T_LPM)
    te.match.add(field_id=1).lpm.CopyFrom(
        p4r.FieldMatch.LPM(value=addr.to_bytes(4, "big"), prefix_len=plen)
    )
    if port is None:
        te.action.action.action_id = A_DROP
    else:
        te.action.action.action_id = A_SET_NHOP
        te.action.action.params.add(param_id=1, value=port.to_bytes(2, "big"))
        te.action.action.params.add(param_id=2, value=mac.to_bytes(6, "big"))
    return p4r.Entity(table_entry=te)


def commit_pipeline(
    stub: p4runtime_pb2_grpc.P4RuntimeStub,
    p4info: p4i.P4Info,
    device_config: bytes,
    device_id: int = DEVICE_ID,
    election_id: int = ELECTION_ID,
) -> None:
    """SetForwardingPipelineConfig(VERIFY_AND_COMMIT) as the primary controller
    `election_id` (the caller has arbitrated)."""
    req = p4r.SetForwardingPipelineConfigRequest(
        device_id=device_id,
        election_id=to_uint128(election_id),
        action=p4r.SetForwardingPipelineConfigRequest.VERIFY_AND_COMMIT,
    )
    req.config.p4info.CopyFrom(p4info)
    req.config.p4_device_config = device_config
    stub.SetForwardingPipelineConfig(req)


def code(c: grpc.StatusCode) -> int:
    return int(c.value[0])


class ManualClock:
    def __init__(self) -> None:
        self.now = 1_000_000_000

    def __call__(self) -> int:
        return self.now


class StreamClient:
    """One StreamChannel: send requests, wait for responses."""

    def __init__(self, stub: p4runtime_pb2_grpc.P4RuntimeStub) -> None:
        self._requests: queue.SimpleQueue[p4r.StreamMessageRequest | None] = queue.SimpleQueue()
        self.responses: queue.SimpleQueue[p4r.StreamMessageResponse | grpc.RpcError] = (
            queue.SimpleQueue()
        )
        self._call = stub.StreamChannel(iter(self._requests.get, None))
        self._thread = threading.Thread(target=self._pump, daemon=True)
        self._thread.start()

    def _pump(self) -> None:
        try:
            for r in self._call:
                self.responses.put(r)
        except grpc.RpcError as e:
            self.responses.put(e)

    def send(self, msg: p4r.StreamMessageRequest) -> None:
        self._requests.put(msg)

    def arbitrate(self, election_id: int, device_id: int = DEVICE_ID, role: str = "") -> None:
        msg = p4r.StreamMessageRequest()
        msg.arbitration.device_id = device_id
        msg.arbitration.election_id.CopyFrom(to_uint128(election_id))
        if role:
            msg.arbitration.role.name = role
        self.send(msg)

    def get(self, timeout: float = 5.0) -> p4r.StreamMessageResponse:
        item = self.responses.get(timeout=timeout)
        if isinstance(item, grpc.RpcError):
            raise item
        return item

    def error(self, timeout: float = 5.0) -> grpc.RpcError:
        item = self.responses.get(timeout=timeout)
        assert isinstance(item, grpc.RpcError), f"expected the stream to fail, got {item}"
        return item

    def close(self) -> None:
        self._requests.put(None)
        self._call.cancel()
        self._thread.join(timeout=5)
