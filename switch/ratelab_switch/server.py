"""The gRPC P4Runtime service: moves messages between gRPC and a Device."""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Iterator
from concurrent import futures
from contextlib import contextmanager

import grpc
from finsy.proto.p4.v1 import p4runtime_pb2 as p4r
from finsy.proto.p4.v1 import p4runtime_pb2_grpc

from . import target_service
from .arbitration import Controller
from .device import P4RUNTIME_API_VERSION, Device, batch_error_status, stream_error
from .errors import P4RuntimeError, failed_precondition, permission_denied, unimplemented

log = logging.getLogger("ratelab_switch")

# Entities per ReadResponse: keeps each message well under gRPC's 4 MiB default.
READ_CHUNK = 1000
_STATUS_DETAILS_KEY = "grpc-status-details-bin"


@contextmanager
def _rpc_errors(context: grpc.ServicerContext) -> Iterator[None]:
    """End the RPC with the error's own code, or INTERNAL for anything unexpected."""
    try:
        yield
    except P4RuntimeError as e:
        context.abort(e.code, e.message)
    except Exception as e:
        log.exception("internal error")
        context.abort(grpc.StatusCode.INTERNAL, f"internal error: {e}")


def _abort_batch(
    context: grpc.ServicerContext, results: list[P4RuntimeError | None], what: str
) -> None:
    """UNKNOWN with one p4.v1.Error per batch item in grpc-status-details-bin."""
    status = batch_error_status(results, what)
    context.set_trailing_metadata(((_STATUS_DETAILS_KEY, status.SerializeToString()),))
    context.abort(grpc.StatusCode.UNKNOWN, status.message)


class P4RuntimeServicer(p4runtime_pb2_grpc.P4RuntimeServicer):
    def __init__(self, device: Device) -> None:
        self.device = device

    def Write(self, request: p4r.WriteRequest, context: grpc.ServicerContext) -> p4r.WriteResponse:
        with _rpc_errors(context):
            results = self.device.write(request)
        if any(r is not None for r in results):
            _abort_batch(context, results, "Write")
        return p4r.WriteResponse()

    def Read(
        self, request: p4r.ReadRequest, context: grpc.ServicerContext
    ) -> Iterator[p4r.ReadResponse]:
        with _rpc_errors(context):
            entities, results = self.device.read(request)
        for start in range(0, max(len(entities), 1), READ_CHUNK):
            yield p4r.ReadResponse(entities=entities[start : start + READ_CHUNK])
        if any(r is not None for r in results):
            _abort_batch(context, results, "Read")

    def SetForwardingPipelineConfig(
        self, request: p4r.SetForwardingPipelineConfigRequest, context: grpc.ServicerContext
    ) -> p4r.SetForwardingPipelineConfigResponse:
        with _rpc_errors(context):
            self.device.set_pipeline(request)
        return p4r.SetForwardingPipelineConfigResponse()

    def GetForwardingPipelineConfig(
        self, request: p4r.GetForwardingPipelineConfigRequest, context: grpc.ServicerContext
    ) -> p4r.GetForwardingPipelineConfigResponse:
        with _rpc_errors(context):
            return self.device.get_pipeline(request)
        raise AssertionError("unreachable")  # _rpc_errors aborts

    def Capabilities(
        self, request: p4r.CapabilitiesRequest, context: grpc.ServicerContext
    ) -> p4r.CapabilitiesResponse:
        return p4r.CapabilitiesResponse(p4runtime_api_version=P4RUNTIME_API_VERSION)

    def StreamChannel(
        self, request_iterator: Iterator[p4r.StreamMessageRequest], context: grpc.ServicerContext
    ) -> Iterator[p4r.StreamMessageResponse]:
        outbox: queue.SimpleQueue[object] = queue.SimpleQueue()
        ctrl = Controller(send=outbox.put)
        end = object()
        reader = threading.Thread(
            target=self._read_stream,
            args=(request_iterator, ctrl, outbox, end),
            name="p4rt-stream",
            daemon=True,
        )
        context.add_callback(lambda: outbox.put(end))
        reader.start()
        try:
            while True:
                item = outbox.get()
                if item is end:
                    return
                if isinstance(item, P4RuntimeError):
                    context.abort(item.code, item.message)
                yield item  # type: ignore[misc]
        finally:
            self.device.arbiter.remove(ctrl)

    def _read_stream(
        self,
        requests: Iterator[p4r.StreamMessageRequest],
        ctrl: Controller,
        outbox: queue.SimpleQueue[object],
        end: object,
    ) -> None:
        try:
            for req in requests:
                self._handle_stream_message(ctrl, req)
        except P4RuntimeError as e:
            outbox.put(e)  # fatal for this stream (bad arbitration)
        except grpc.RpcError:
            pass  # the client went away
        except Exception as e:
            log.exception("stream handling failed")
            outbox.put(P4RuntimeError(grpc.StatusCode.INTERNAL, f"internal error: {e}"))
        finally:
            outbox.put(end)

    def _handle_stream_message(self, ctrl: Controller, req: p4r.StreamMessageRequest) -> None:
        which = req.WhichOneof("update")
        if which == "arbitration":
            self.device.arbiter.arbitrate(ctrl, req.arbitration)
            return
        if which == "packet":
            try:
                if not ctrl.arbitrated:
                    raise permission_denied("send a MasterArbitrationUpdate first")
                self.device.packet_out(ctrl, req.packet)
            except P4RuntimeError as e:
                ctrl.send(stream_error(e, packet_out=p4r.PacketOutError(packet_out=req.packet)))
            return
        if which == "digest_ack":
            try:
                if not ctrl.arbitrated:
                    raise failed_precondition("send a MasterArbitrationUpdate first")
                self.device.ack_digest(req.digest_ack)
            except P4RuntimeError as e:
                detail = p4r.DigestListAckError(digest_list_ack=req.digest_ack)
                ctrl.send(stream_error(e, digest_list_ack=detail))
            return
        err = unimplemented(f"stream message {which or 'without content'} is not supported")
        ctrl.send(stream_error(err, other=p4r.StreamOtherError(other=req.other)))


class P4RuntimeServer:
    """A gRPC server hosting one Device; `port` is the port actually bound."""

    def __init__(
        self,
        device: Device,
        address: str,
        max_workers: int = 32,
        credentials: grpc.ServerCredentials | None = None,
    ) -> None:
        self.device = device
        self._server = grpc.server(
            futures.ThreadPoolExecutor(max_workers=max_workers, thread_name_prefix="p4rt"),
            options=[
                ("grpc.max_receive_message_length", 256 << 20),
                ("grpc.max_send_message_length", 256 << 20),
            ],
        )
        p4runtime_pb2_grpc.add_P4RuntimeServicer_to_server(P4RuntimeServicer(device), self._server)
        # Port and link settings P4Runtime has no message for (target_service.py).
        self._server.add_generic_rpc_handlers((target_service.handler(device),))
        if credentials is None:
            self.port = self._server.add_insecure_port(address)
        else:
            self.port = self._server.add_secure_port(address, credentials)
        if self.port == 0:
            raise OSError(f"cannot listen on {address}")

    def start(self) -> None:
        self.device.start()
        self._server.start()

    def stop(self, grace: float | None = 0.5) -> None:
        self._server.stop(grace).wait()
        self.device.stop()

    def wait(self, timeout: float | None = None) -> bool:
        return self._server.wait_for_termination(timeout)
