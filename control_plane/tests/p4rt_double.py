"""A test double of a P4Runtime server, in-process, for the controller's tests.

It is not a switch: it keeps the table entries it was sent (so that reading
them back works), answers counter and register reads from dictionaries the
test fills, and records every request. Enough P4Runtime semantics to catch
what a real server would refuse: INSERT of an existing key (ALREADY_EXISTS),
MODIFY/DELETE of a missing one (NOT_FOUND), writes from a non-primary
controller (PERMISSION_DENIED), INSERT on a keyless table. Per-update errors
go back the standard way: status UNKNOWN with a google.rpc.Status holding one
p4.v1.Error per update in the `grpc-status-details-bin` trailer.
"""

from __future__ import annotations

import threading
from concurrent import futures
from dataclasses import dataclass, field

import grpc
from finsy.proto.google.rpc import code_pb2, status_pb2
from finsy.proto.p4.config.v1 import p4info_pb2
from finsy.proto.p4.v1 import p4runtime_pb2, p4runtime_pb2_grpc

_EntryKey = tuple[int, bytes]


def _entry_key(te: p4runtime_pb2.TableEntry) -> _EntryKey:
    match = sorted(m.SerializeToString(deterministic=True) for m in te.match)
    return te.table_id, b"|".join(match) + (b"#default" if te.is_default_action else b"")


@dataclass
class FakeP4Runtime(p4runtime_pb2_grpc.P4RuntimeServicer):
    serve_registers: bool = True
    device_id: int = 0
    p4info: p4info_pb2.P4Info | None = None
    entries: dict[_EntryKey, p4runtime_pb2.TableEntry] = field(default_factory=dict)
    counters: dict[tuple[int, int], tuple[int, int]] = field(default_factory=dict)
    registers: dict[tuple[int, int], int] = field(default_factory=dict)
    writes: list[p4runtime_pb2.WriteRequest] = field(default_factory=list)
    pipelines: list[p4runtime_pb2.SetForwardingPipelineConfigRequest] = field(default_factory=list)
    reads: list[p4runtime_pb2.ReadRequest] = field(default_factory=list)
    primary: tuple[int, int] | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)

    # -- helpers for tests --------------------------------------------------------

    def updates(self) -> list[p4runtime_pb2.Update]:
        return [u for w in self.writes for u in w.updates]

    def _is_primary(self, election: p4runtime_pb2.Uint128) -> bool:
        return self.primary is not None and (election.high, election.low) == self.primary

    # -- RPCs -------------------------------------------------------------------

    def StreamChannel(self, request_iterator, context):
        for req in request_iterator:
            if not req.HasField("arbitration"):
                continue
            eid = (req.arbitration.election_id.high, req.arbitration.election_id.low)
            with self.lock:
                if self.primary is None or eid >= self.primary:
                    self.primary = eid
                    code = code_pb2.OK
                else:
                    code = code_pb2.ALREADY_EXISTS
            resp = p4runtime_pb2.StreamMessageResponse()
            resp.arbitration.device_id = req.arbitration.device_id
            resp.arbitration.election_id.high = self.primary[0]
            resp.arbitration.election_id.low = self.primary[1]
            resp.arbitration.status.code = code
            yield resp

    def SetForwardingPipelineConfig(self, request, context):
        if not self._is_primary(request.election_id):
            context.abort(grpc.StatusCode.PERMISSION_DENIED, "not primary")
        with self.lock:
            self.pipelines.append(request)
            self.p4info = request.config.p4info
            self.entries.clear()
        return p4runtime_pb2.SetForwardingPipelineConfigResponse()

    def GetForwardingPipelineConfig(self, request, context):
        resp = p4runtime_pb2.GetForwardingPipelineConfigResponse()
        if self.p4info is not None:
            resp.config.p4info.CopyFrom(self.p4info)
        return resp

    def Write(self, request, context):
        if not self._is_primary(request.election_id):
            context.abort(grpc.StatusCode.PERMISSION_DENIED, "not primary")
        errors = []
        with self.lock:
            self.writes.append(request)
            for u in request.updates:
                errors.append(self._apply(u))
        if any(code != code_pb2.OK for code, _ in errors):
            status = status_pb2.Status(code=code_pb2.UNKNOWN, message="write failed")
            for code, msg in errors:
                status.details.add().Pack(p4runtime_pb2.Error(canonical_code=code, message=msg))
            context.set_trailing_metadata(
                (("grpc-status-details-bin", status.SerializeToString()),)
            )
            context.abort(grpc.StatusCode.UNKNOWN, "write failed")
        return p4runtime_pb2.WriteResponse()

    def _apply(self, u: p4runtime_pb2.Update) -> tuple[int, str]:
        te = u.entity.table_entry
        key = _entry_key(te)
        if te.is_default_action:
            if u.type != p4runtime_pb2.Update.MODIFY:
                return code_pb2.INVALID_ARGUMENT, "a default entry can only be modified"
            self.entries[key] = te
            return code_pb2.OK, ""
        if u.type == p4runtime_pb2.Update.INSERT:
            if key in self.entries:
                return code_pb2.ALREADY_EXISTS, "entry exists"
            self.entries[key] = te
        elif u.type == p4runtime_pb2.Update.MODIFY:
            if key not in self.entries:
                return code_pb2.NOT_FOUND, "no such entry"
            self.entries[key] = te
        elif u.type == p4runtime_pb2.Update.DELETE and self.entries.pop(key, None) is None:
            return code_pb2.NOT_FOUND, "no such entry"
        return code_pb2.OK, ""

    def Read(self, request, context):
        with self.lock:
            self.reads.append(request)
        resp = p4runtime_pb2.ReadResponse()
        for ent in request.entities:
            kind = ent.WhichOneof("entity")
            if kind == "table_entry":
                want = ent.table_entry
                for te in list(self.entries.values()):
                    if want.table_id not in (0, te.table_id):
                        continue
                    if te.is_default_action != want.is_default_action:
                        continue
                    resp.entities.add().table_entry.CopyFrom(te)
            elif kind == "counter_entry":
                cid = ent.counter_entry.counter_id
                for c in self.p4info.counters:
                    if c.preamble.id != cid:
                        continue
                    for i in range(c.size):
                        pkts, byts = self.counters.get((cid, i), (0, 0))
                        ce = resp.entities.add().counter_entry
                        ce.counter_id = cid
                        ce.index.index = i
                        ce.data.packet_count = pkts
                        ce.data.byte_count = byts
            elif kind == "register_entry":
                if not self.serve_registers:
                    context.abort(grpc.StatusCode.UNIMPLEMENTED, "registers are not served")
                rid = ent.register_entry.register_id
                for r in self.p4info.registers:
                    if r.preamble.id != rid:
                        continue
                    for i in range(r.size):
                        value = self.registers.get((rid, i), 0)
                        re_ = resp.entities.add().register_entry
                        re_.register_id = rid
                        re_.index.index = i
                        re_.data.bitstring = value.to_bytes(max(1, (value.bit_length() + 7) // 8))
            else:
                context.abort(grpc.StatusCode.UNIMPLEMENTED, f"{kind} not supported")
        yield resp

    def Capabilities(self, request, context):
        return p4runtime_pb2.CapabilitiesResponse(p4runtime_api_version="1.4.0")


class FakeServer:
    """The double on 127.0.0.1, on a free port."""

    def __init__(self, servicer: FakeP4Runtime) -> None:
        self.servicer = servicer
        self.server = grpc.server(futures.ThreadPoolExecutor(max_workers=8))
        p4runtime_pb2_grpc.add_P4RuntimeServicer_to_server(servicer, self.server)
        port = self.server.add_insecure_port("127.0.0.1:0")
        self.address = f"127.0.0.1:{port}"

    def __enter__(self) -> FakeServer:
        self.server.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.stop(grace=None)
