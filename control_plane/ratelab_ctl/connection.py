"""A small synchronous P4Runtime client over grpcio (generated modules from finsy).

One `SwitchConnection` is one gRPC channel to one device. `open()` connects
and, unless asked not to, opens the StreamChannel and takes part in
primary-controller arbitration with the given election id; writes and
pipeline pushes need the primary role, reads do not. The stream is drained by
a background thread for as long as the connection is open. Nothing here is
global: two connections are two independent objects.

gRPC failures become `SwitchError` with one line of text; a failed Write is a
`WriteError` listing the per-update errors the server put in the status
details (P4Runtime canonical codes), each tied to the update it concerns.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from types import TracebackType

import grpc
from finsy.proto.google.rpc import code_pb2, status_pb2
from finsy.proto.p4.config.v1 import p4info_pb2
from finsy.proto.p4.v1 import p4runtime_pb2, p4runtime_pb2_grpc

DEFAULT_TIMEOUT = 10.0
WRITE_BATCH = 1000
_MAX_MESSAGE = 64 * 1024 * 1024


class SwitchError(Exception):
    """Talking to the switch failed; str() is one line."""


@dataclass(frozen=True)
class UpdateError:
    index: int  # position in the list of updates given to write()
    code: str  # canonical code name, e.g. ALREADY_EXISTS
    message: str
    label: str  # what the update was, e.g. "insert RouterIngress.ipv4_lpm 10.0.1.0/24"


class WriteError(SwitchError):
    def __init__(self, summary: str, errors: Sequence[UpdateError]) -> None:
        self.errors = list(errors)
        if self.errors:
            first = self.errors[0]
            more = f" (and {len(self.errors) - 1} more)" if len(self.errors) > 1 else ""
            msg = f"write failed: {first.label}: {first.code}: {first.message}{more}"
        else:
            msg = f"write failed: {summary}"
        super().__init__(msg)


def _code_name(code: int) -> str:
    try:
        return code_pb2.Code.Name(code)
    except ValueError:
        return f"code {code}"


def _rpc_message(e: grpc.RpcError) -> str:
    code = e.code() if hasattr(e, "code") else None
    details = e.details() if hasattr(e, "details") else str(e)
    name = code.name if code is not None else "ERROR"
    return f"{name}: {details}" if details else name


class SwitchConnection:
    def __init__(
        self,
        address: str,
        device_id: int = 0,
        election_id: int = 1,
        timeout: float = DEFAULT_TIMEOUT,
    ) -> None:
        self.address = address
        self.device_id = device_id
        self.election_id = election_id
        self.timeout = timeout
        self.is_primary = False
        self._channel: grpc.Channel | None = None
        self._stub: p4runtime_pb2_grpc.P4RuntimeStub | None = None
        self._requests: queue.Queue[p4runtime_pb2.StreamMessageRequest | None] = queue.Queue()
        self._responses: queue.Queue[p4runtime_pb2.StreamMessageResponse | Exception] = (
            queue.Queue()
        )
        self._stream: grpc.Future | None = None
        self._reader: threading.Thread | None = None
        self._closing = False

    # -- lifecycle --------------------------------------------------------------

    def open(self, arbitrate: bool = True) -> SwitchConnection:
        self._channel = grpc.insecure_channel(
            self.address,
            options=[
                ("grpc.max_receive_message_length", _MAX_MESSAGE),
                ("grpc.max_send_message_length", _MAX_MESSAGE),
                # a failed batch carries one p4.v1.Error per update in the trailers
                ("grpc.max_metadata_size", _MAX_MESSAGE),
            ],
        )
        try:
            grpc.channel_ready_future(self._channel).result(timeout=self.timeout)
        except grpc.FutureTimeoutError:
            self.close()
            raise SwitchError(
                f"cannot reach the switch at {self.address} (no answer in {self.timeout:g} s)"
            ) from None
        self._stub = p4runtime_pb2_grpc.P4RuntimeStub(self._channel)
        if arbitrate:
            try:
                self._arbitrate()
            except BaseException:
                self.close()
                raise
        return self

    def close(self) -> None:
        self._closing = True
        if self._stream is not None:
            self._requests.put(None)
            self._stream.cancel()
            self._stream = None
        if self._reader is not None:
            self._reader.join(timeout=1.0)
            self._reader = None
        if self._channel is not None:
            self._channel.close()
            self._channel = None
        self.is_primary = False

    def __enter__(self) -> SwitchConnection:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    @property
    def stub(self) -> p4runtime_pb2_grpc.P4RuntimeStub:
        if self._stub is None:
            raise SwitchError("the connection is not open")
        return self._stub

    # -- arbitration --------------------------------------------------------------

    def _request_iter(self) -> Iterator[p4runtime_pb2.StreamMessageRequest]:
        while True:
            item = self._requests.get()
            if item is None:
                return
            yield item

    def _drain(self, stream: Iterator[p4runtime_pb2.StreamMessageResponse]) -> None:
        try:
            for msg in stream:
                # only arbitration answers are waited for; router.p4 has no CPU port,
                # so anything else (packet-ins, digests) is dropped here
                if msg.WhichOneof("update") == "arbitration":
                    self._responses.put(msg)
        except grpc.RpcError as e:
            if not self._closing:
                self._responses.put(e)

    def _arbitrate(self) -> None:
        stream = self.stub.StreamChannel(self._request_iter())
        self._stream = stream
        self._reader = threading.Thread(target=self._drain, args=(stream,), daemon=True)
        self._reader.start()
        req = p4runtime_pb2.StreamMessageRequest()
        req.arbitration.device_id = self.device_id
        req.arbitration.election_id.high = self.election_id >> 64
        req.arbitration.election_id.low = self.election_id & ((1 << 64) - 1)
        self._requests.put(req)
        while True:
            try:
                msg = self._responses.get(timeout=self.timeout)
            except queue.Empty:
                raise SwitchError(
                    f"{self.address}: no arbitration answer in {self.timeout:g} s"
                ) from None
            if isinstance(msg, grpc.RpcError):
                raise SwitchError(f"{self.address}: arbitration failed: {_rpc_message(msg)}")
            if isinstance(msg, Exception):
                raise SwitchError(f"{self.address}: arbitration failed: {msg}")
            if msg.WhichOneof("update") != "arbitration":
                continue
            status = msg.arbitration.status
            if status.code != code_pb2.OK:
                raise SwitchError(
                    f"{self.address}: not the primary controller of device {self.device_id} "
                    f"(election id {self.election_id}): {status.message or _code_name(status.code)}"
                )
            self.is_primary = True
            return

    def _election(self) -> p4runtime_pb2.Uint128:
        return p4runtime_pb2.Uint128(
            high=self.election_id >> 64, low=self.election_id & ((1 << 64) - 1)
        )

    # -- RPCs ---------------------------------------------------------------------

    def set_pipeline(
        self, p4info: p4info_pb2.P4Info, device_config: bytes, cookie: int = 0
    ) -> None:
        req = p4runtime_pb2.SetForwardingPipelineConfigRequest(
            device_id=self.device_id,
            election_id=self._election(),
            action=p4runtime_pb2.SetForwardingPipelineConfigRequest.VERIFY_AND_COMMIT,
        )
        req.config.p4info.CopyFrom(p4info)
        req.config.p4_device_config = device_config
        req.config.cookie.cookie = cookie
        try:
            self.stub.SetForwardingPipelineConfig(req, timeout=max(self.timeout, 60.0))
        except grpc.RpcError as e:
            raise SwitchError(f"pipeline push failed: {_rpc_message(e)}") from None

    def get_p4info(self) -> p4info_pb2.P4Info:
        req = p4runtime_pb2.GetForwardingPipelineConfigRequest(
            device_id=self.device_id,
            response_type=p4runtime_pb2.GetForwardingPipelineConfigRequest.P4INFO_AND_COOKIE,
        )
        try:
            resp = self.stub.GetForwardingPipelineConfig(req, timeout=self.timeout)
        except grpc.RpcError as e:
            raise SwitchError(f"cannot get the switch's pipeline: {_rpc_message(e)}") from None
        if not resp.config.HasField("p4info"):
            raise SwitchError(f"{self.address}: no pipeline installed (push one first)")
        return resp.config.p4info

    def write(
        self,
        updates: Sequence[p4runtime_pb2.Update],
        labels: Sequence[str] | None = None,
        batch: int = WRITE_BATCH,
        progress: Callable[[int], None] | None = None,
    ) -> None:
        """Send `updates` in batches of `batch`; stop at the first failed batch."""
        for start in range(0, len(updates), batch):
            chunk = updates[start : start + batch]
            req = p4runtime_pb2.WriteRequest(
                device_id=self.device_id,
                election_id=self._election(),
                updates=chunk,
                atomicity=p4runtime_pb2.WriteRequest.CONTINUE_ON_ERROR,
            )
            try:
                self.stub.Write(req, timeout=max(self.timeout, 60.0))
            except grpc.RpcError as e:
                raise self._write_error(e, start, len(chunk), labels) from None
            if progress is not None:
                progress(start + len(chunk))

    def _write_error(
        self, e: grpc.RpcError, offset: int, count: int, labels: Sequence[str] | None
    ) -> WriteError:
        errors: list[UpdateError] = []
        trailers = e.trailing_metadata() if hasattr(e, "trailing_metadata") else None
        for key, value in trailers or ():
            if key != "grpc-status-details-bin":
                continue
            status = status_pb2.Status.FromString(value)
            for i, detail in enumerate(status.details[:count]):
                err = p4runtime_pb2.Error()
                if not detail.Unpack(err) or err.canonical_code == code_pb2.OK:
                    continue
                index = offset + i
                label = labels[index] if labels is not None else f"update {index}"
                errors.append(
                    UpdateError(index, _code_name(err.canonical_code), err.message, label)
                )
        return WriteError(_rpc_message(e), errors)

    def read(self, entities: Sequence[p4runtime_pb2.Entity]) -> list[p4runtime_pb2.Entity]:
        req = p4runtime_pb2.ReadRequest(device_id=self.device_id, entities=entities)
        out: list[p4runtime_pb2.Entity] = []
        try:
            for resp in self.stub.Read(req, timeout=max(self.timeout, 60.0)):
                out.extend(resp.entities)
        except grpc.RpcError as e:
            raise SwitchError(f"read failed: {_rpc_message(e)}") from None
        return out
