"""One P4Runtime device: its pipeline config, forwarding state, arbitration and
the controller-bound traffic (packet-in, digests). Transport-free: the gRPC layer
in server.py only moves messages in and out."""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import grpc
from finsy.proto.google.rpc import status_pb2
from finsy.proto.p4.v1 import p4runtime_pb2 as p4r

from .arbitration import Arbiter, Controller
from .device_config import unwrap_device_config
from .digests import DigestBatcher
from .engine_api import EngineAdapter
from .errors import (
    P4RuntimeError,
    failed_precondition,
    invalid,
    not_found,
    permission_denied,
    unimplemented,
)
from .packet_io import build_packet_out, parse_packet_in
from .read_ops import read_entity
from .reconcile import carry_over
from .recording import RecordingEngine
from .schema import Schema
from .state import PipelineState, StoredEntry
from .translate import action_to_proto, key_from_engine
from .write_ops import apply_update

log = logging.getLogger("ratelab_switch")
TRACE = 5  # below DEBUG: per-packet messages
TOP_PRIORITY = (1 << 31) - 1


P4RUNTIME_API_VERSION = "1.4.1"
_Action = p4r.SetForwardingPipelineConfigRequest
_Response = p4r.GetForwardingPipelineConfigRequest


def _describe(update: p4r.Update) -> str:
    which = update.entity.WhichOneof("entity") or "empty entity"
    kind = {1: "INSERT", 2: "MODIFY", 3: "DELETE"}.get(update.type, str(update.type))
    return f"{kind} {which}"


@dataclass
class PipelineConfig:
    """A verified ForwardingPipelineConfig with what was derived from it."""

    config: p4r.ForwardingPipelineConfig
    schema: Schema
    program: bytes  # the BMv2 JSON, unwrapped


@dataclass
class _Saved:
    """A config saved by VERIFY_AND_SAVE, and the writes made against it since."""

    config: PipelineConfig
    state: PipelineState


class Device:
    def __init__(
        self,
        engine: EngineAdapter,
        device_id: int = 0,
        cpu_port: int | None = None,
        clock_ns: Callable[[], int] = time.monotonic_ns,
    ) -> None:
        self.device_id = device_id
        self.engine = engine
        self.cpu_port = cpu_port
        self.arbiter = Arbiter(device_id)
        self._clock_ns = clock_ns
        self._lock = threading.RLock()
        self._committed: PipelineConfig | None = None
        self._saved: _Saved | None = None
        self._state: PipelineState | None = None
        self._digests = DigestBatcher()
        self._wake = threading.Condition(self._lock)
        self._stopping = False
        self._flusher: threading.Thread | None = None

    # ------------------------------------------------------------ lifecycle
    def start(self) -> None:
        """Start the thread that sends digest lists whose timeout expires."""
        self._flusher = threading.Thread(target=self._flush_loop, name="digests", daemon=True)
        self._flusher.start()

    def stop(self) -> None:
        with self._wake:
            self._stopping = True
            self._wake.notify_all()
        if self._flusher is not None:
            self._flusher.join()

    # ------------------------------------------------------------ checks
    def _check_device(self, device_id: int) -> None:
        if device_id != self.device_id:
            raise not_found(f"device id {device_id} is not this switch ({self.device_id})")

    def _require_state(self) -> PipelineState:
        """The state Read and Write act on: a saved config's, else the committed one's."""
        if self._saved is not None:
            return self._saved.state
        if self._state is None:
            raise failed_precondition("no forwarding pipeline config has been set")
        return self._state

    # ------------------------------------------------------------ pipeline config
    def set_pipeline(self, req: p4r.SetForwardingPipelineConfigRequest) -> None:
        self._check_device(req.device_id)
        self.arbiter.check_primary(
            req.role, req.election_id if req.HasField("election_id") else None
        )
        action = req.action
        log.info("SetForwardingPipelineConfig action %d", action)
        with self._lock:
            if action == _Action.COMMIT:
                if req.HasField("config"):
                    raise invalid("COMMIT takes no config: it commits the one saved before")
                if self._saved is None:
                    raise not_found("no saved config to COMMIT (send VERIFY_AND_SAVE first)")
                saved = self._saved
                try:
                    self._load(saved.config, saved.state)
                finally:
                    if self._committed is saved.config:  # loaded, even if its state was not
                        self._saved = None
                return
            if action not in (
                _Action.VERIFY,
                _Action.VERIFY_AND_SAVE,
                _Action.VERIFY_AND_COMMIT,
                _Action.RECONCILE_AND_COMMIT,
            ):
                raise invalid("SetForwardingPipelineConfig needs an action")
            verified = self._verify(req.config)
            if action == _Action.VERIFY:
                return
            if action == _Action.VERIFY_AND_SAVE:
                # Later writes refer to this config; COMMIT replays them on the new program.
                shadow = PipelineState(verified.schema, RecordingEngine(verified.program))
                self._saved = _Saved(verified, shadow)
                return
            self._saved = None
            if action == _Action.VERIFY_AND_COMMIT:
                self._load(
                    verified, PipelineState(verified.schema, RecordingEngine(verified.program))
                )
            else:
                self._reconcile(verified)

    def _verify(self, config: p4r.ForwardingPipelineConfig) -> PipelineConfig:
        if not config.HasField("p4info"):
            raise invalid("ForwardingPipelineConfig has no p4info")
        schema = Schema(config.p4info)
        program = unwrap_device_config(config.p4_device_config)
        _check_program_matches(schema, program)
        self.engine.verify_config(program)
        kept = p4r.ForwardingPipelineConfig()
        kept.CopyFrom(config)
        return PipelineConfig(kept, schema, program)

    def _load(self, cfg: PipelineConfig, shadow: PipelineState) -> None:
        """Load the program, then replay onto it what `shadow` (over a RecordingEngine)
        recorded; `shadow` becomes the live state."""
        recorder = shadow.engine
        assert isinstance(recorder, RecordingEngine)
        self.engine.load_config(cfg.program)
        try:
            handles = recorder.replay(self.engine)
        except P4RuntimeError as e:
            # The program runs, but its state could not be rebuilt: it starts empty.
            self.engine.load_config(cfg.program)
            self._install(cfg, PipelineState(cfg.schema, self.engine))
            raise P4RuntimeError(
                grpc.StatusCode.INTERNAL,
                f"program committed with empty state; replaying its writes failed: {e.message}",
            ) from None
        for table in shadow.tables.values():
            for stored in table.entries.values():
                stored.handle = handles.entries[stored.handle]
        for profile in shadow.profiles.values():
            for member in profile.members.values():
                member.handle = handles.members[member.handle]
            for group in profile.groups.values():
                group.handle = handles.groups[group.handle]
        shadow.engine = self.engine
        self._install(cfg, shadow)

    def _install(self, cfg: PipelineConfig, state: PipelineState) -> None:
        self._import_program_entries(state)
        self._committed = cfg
        self._state = state
        self._digests = DigestBatcher()
        log.info("pipeline committed: %d tables", len(cfg.schema.tables))

    def _import_program_entries(self, state: PipelineState) -> None:
        """Make the program's own entries (`entries`, `const entries`) part of the
        P4Runtime view, so they read back and clients can address them."""
        known = {e.handle for t in state.tables.values() for e in t.entries.values()}
        for table in state.schema.tables:
            if table.implementation_id:
                continue  # the program's own entries of indirect tables are not shown
            try:
                installed = self.engine.table_entries(table.name)
            except P4RuntimeError as e:
                log.warning("cannot list the entries of %s: %s", table.name, e.message)
                continue
            for item in installed:
                if item.handle in known:
                    continue
                try:
                    parsed = key_from_engine(table, item.key)
                    action = action_to_proto(state.schema, item.action)
                except P4RuntimeError as e:
                    log.warning(
                        "table %s: an entry of the program is not shown: %s", table.name, e.message
                    )
                    continue
                priority = item.priority if table.needs_priority else 0
                if table.needs_priority and priority <= 0:
                    priority = TOP_PRIORITY
                entry = p4r.TableEntry(
                    table_id=table.id,
                    match=parsed.canonical,
                    action=action,
                    priority=priority,
                    is_const=table.is_const,
                )
                stored = StoredEntry(item.handle, entry, initial=True)
                state.tables[table.id].entries[(parsed.key, priority)] = stored

    def _reconcile(self, cfg: PipelineConfig) -> None:
        """Commit `cfg` keeping the forwarding state (INVALID_ARGUMENT if it cannot be)."""
        cur = self._committed
        if cur is None or self._state is None:
            self._load(cfg, PipelineState(cfg.schema, RecordingEngine(cfg.program)))
            return
        if cur.program == cfg.program and cur.config.p4info == cfg.config.p4info:
            self._committed = PipelineConfig(cfg.config, cur.schema, cur.program)
            return  # the same program: nothing to rebuild
        recorder = RecordingEngine(cfg.program)
        shadow = PipelineState(cfg.schema, recorder)
        updates = carry_over(self._state, cfg.schema, recorder.table_get_default)
        for update in updates:
            try:
                apply_update(shadow, update)
            except P4RuntimeError as e:
                raise invalid(f"the forwarding state cannot be kept: {e.message}") from None
        self._load(cfg, shadow)

    def get_pipeline(
        self, req: p4r.GetForwardingPipelineConfigRequest
    ) -> p4r.GetForwardingPipelineConfigResponse:
        self._check_device(req.device_id)
        with self._lock:
            current = self._saved.config if self._saved is not None else self._committed
            if current is None:
                # The spec: a server with no config yet answers with `config` unset.
                return p4r.GetForwardingPipelineConfigResponse()
            src = current.config
            out = p4r.ForwardingPipelineConfig()
            if src.HasField("cookie"):
                out.cookie.CopyFrom(src.cookie)
            kind = req.response_type
            if kind in (_Response.ALL, _Response.P4INFO_AND_COOKIE):
                out.p4info.CopyFrom(src.p4info)
            if kind in (_Response.ALL, _Response.DEVICE_CONFIG_AND_COOKIE):
                out.p4_device_config = src.p4_device_config
            if kind not in (
                _Response.ALL,
                _Response.COOKIE_ONLY,
                _Response.P4INFO_AND_COOKIE,
                _Response.DEVICE_CONFIG_AND_COOKIE,
            ):
                raise invalid(f"unknown response_type {kind}")
            return p4r.GetForwardingPipelineConfigResponse(config=out)

    # ------------------------------------------------------------ write / read
    def write(self, req: p4r.WriteRequest) -> list[P4RuntimeError | None]:
        """Apply the updates in order; one result per update (None = OK).

        Batch-level problems raise instead (wrong device, not primary, no pipeline).
        """
        self._check_device(req.device_id)
        self.arbiter.check_primary(
            req.role, req.election_id if req.HasField("election_id") else None
        )
        if req.atomicity != p4r.WriteRequest.CONTINUE_ON_ERROR:
            raise unimplemented("only CONTINUE_ON_ERROR atomicity is supported")
        results: list[P4RuntimeError | None] = []
        log.debug("write: %d updates", len(req.updates))
        with self._lock:
            state = self._require_state()
            for update in req.updates:
                try:
                    apply_update(state, update)
                    results.append(None)
                except P4RuntimeError as e:
                    log.debug("write %s refused: %s", _describe(update), e)
                    results.append(e)
                except Exception as e:  # an engine binding failing unexpectedly
                    log.exception("engine failure")
                    results.append(P4RuntimeError(grpc.StatusCode.INTERNAL, str(e)))
            if state is self._state:
                for digest_id in list(self._digest_ids_dropped(state)):
                    self._digests.drop(digest_id)
        return results

    def _digest_ids_dropped(self, state: PipelineState) -> Iterator[int]:
        for d in state.schema.digests:
            if d.id not in state.digest_configs:
                yield d.id

    def read(self, req: p4r.ReadRequest) -> tuple[list[p4r.Entity], list[P4RuntimeError | None]]:
        """The entities the request's filters select, and one result per filter (None =
        OK): a filter that fails adds nothing, the others still answer (spec: "Batch
        Processing" of Read). Batch-level problems raise instead."""
        self._check_device(req.device_id)
        with self._lock:
            state = self._require_state()
            out: list[p4r.Entity] = []
            results: list[P4RuntimeError | None] = []
            for entity in req.entities:
                try:
                    out.extend(list(read_entity(state, entity)))
                    results.append(None)
                except P4RuntimeError as e:
                    results.append(e)
                except Exception as e:  # an engine binding failing unexpectedly
                    log.exception("engine failure")
                    results.append(P4RuntimeError(grpc.StatusCode.INTERNAL, str(e)))
            return out, results

    def table_id(self, device_id: int, name: str) -> int:
        """A table's P4Info id from its name or alias."""
        self._check_device(device_id)
        with self._lock:
            table = self._require_state().schema.tables.get(name)
        if table is None:
            raise not_found(f"no table {name!r}")
        return table.id

    def entry_handles(self, device_id: int, table_id: int) -> list[tuple[int, p4r.TableEntry]]:
        """(engine handle, canonical entry) of a table's entries, by handle: the
        stable names simple_switch_CLI's handle-taking commands need."""
        self._check_device(device_id)
        with self._lock:
            state = self._require_state()
            table = state.tables.get(table_id)
            if table is None:
                raise not_found(f"no table with id {table_id}")
            return sorted(((e.handle, e.entry) for e in table.entries.values()), key=lambda x: x[0])

    # ------------------------------------------------------------ stream traffic
    def packet_out(self, ctrl: Controller, msg: p4r.PacketOut) -> None:
        if ctrl not in self.arbiter.primaries():
            raise permission_denied("only a primary controller may send packets")
        if self.cpu_port is None:
            raise failed_precondition("the switch was started without --cpu-port")
        with self._lock:
            state = self._require_state()
            data = build_packet_out(state.schema.packet_out, msg)
        if log.isEnabledFor(TRACE):
            log.log(TRACE, "packet-out, %d bytes, into port %d", len(data), self.cpu_port)
        self.engine.inject_packet(self.cpu_port, data)

    def ack_digest(self, ack: p4r.DigestListAck) -> None:
        """Clear an acknowledged list from the duplicate cache; INVALID_ARGUMENT for a
        digest id the program does not have (an unknown or expired list is fine)."""
        with self._lock:
            state = self._state
            if state is None or state.schema.digests.get(ack.digest_id) is None:
                raise invalid(f"DigestListAck: unknown digest id {ack.digest_id}")
            self._digests.ack(ack.digest_id, ack.list_id)

    def deliver_packet_in(self, data: bytes) -> None:
        """A packet the pipeline sent to the CPU port: to every primary controller."""
        with self._lock:
            state = self._state
        if state is None:
            return
        try:
            msg = parse_packet_in(state.schema.packet_in, data)
        except P4RuntimeError as e:
            log.warning("dropping packet to the CPU port: %s", e.message)
            return
        response = p4r.StreamMessageResponse(packet=msg)
        primaries = self.arbiter.primaries()
        if log.isEnabledFor(TRACE):
            log.log(TRACE, "packet-in, %d bytes, to %d controllers", len(data), len(primaries))
        for ctrl in primaries:
            ctrl.send(response)

    def deliver_digest(self, name: str, values: tuple[int, ...]) -> None:
        """One digest message from the pipeline (learn list `name`)."""
        with self._lock:
            state = self._state
            if state is None:
                return
            digest = state.schema.digests.get(name)
            if digest is None or digest.id not in state.digest_configs:
                return  # not configured by any controller: dropped, as the spec says
            if digest.members is None or len(values) != len(digest.members):
                log.warning("digest %s: cannot carry these %d values", name, len(values))
                return
            lists = self._digests.add(
                digest, state.digest_configs[digest.id], values, self._clock_ns()
            )
            self._wake.notify_all()
        self._send_digests(lists)

    def flush_digests(self) -> None:
        """Send the digest lists whose timeout has passed (the flusher thread calls this)."""
        with self._lock:
            lists = self._due_digests()
        self._send_digests(lists)

    def _due_digests(self) -> list[p4r.DigestList]:
        state = self._state
        if state is None:
            return []
        known = {
            d.id: (d, state.digest_configs[d.id])
            for d in state.schema.digests
            if d.id in state.digest_configs
        }
        return self._digests.poll(self._clock_ns(), known)

    def _send_digests(self, lists: list[p4r.DigestList]) -> None:
        if not lists:
            return
        primaries = self.arbiter.primaries()
        for dl in lists:
            response = p4r.StreamMessageResponse(digest=dl)
            for ctrl in primaries:
                ctrl.send(response)

    def _flush_loop(self) -> None:
        with self._wake:
            while not self._stopping:
                lists = self._due_digests()
                if lists:
                    self._wake.release()
                    try:
                        self._send_digests(lists)
                    finally:
                        self._wake.acquire()
                    continue
                configs = self._state.digest_configs if self._state else {}
                due = self._digests.poll_at(configs)
                timeout = None if due is None else max(0.0, (due - self._clock_ns()) / 1e9)
                self._wake.wait(timeout)


def stream_error(err: P4RuntimeError, **detail: object) -> p4r.StreamMessageResponse:
    """A StreamError naming what went wrong (e.g. packet_out=PacketOutError(...))."""
    se = p4r.StreamError(canonical_code=err.canonical_code, message=err.message)
    for name, value in detail.items():
        getattr(se, name).CopyFrom(value)
    return p4r.StreamMessageResponse(error=se)


def batch_error_status(results: list[P4RuntimeError | None], what: str) -> status_pb2.Status:
    """google.rpc.Status for a batch with failures: UNKNOWN, one p4.v1.Error per item in
    order (OK for those that succeeded)."""
    status = status_pb2.Status(code=grpc.StatusCode.UNKNOWN.value[0], message=f"{what} failure.")
    for r in results:
        err = p4r.Error(canonical_code=0)
        if r is not None:
            err.canonical_code = r.canonical_code
            err.message = r.message
        status.details.add().Pack(err)
    return status


def _check_program_matches(schema: Schema, program: bytes) -> None:
    """Every P4Info table must exist in the BMv2 JSON: catches mismatched file pairs early."""
    try:
        doc = json.loads(program)
    except (ValueError, UnicodeDecodeError) as e:
        raise invalid(f"p4_device_config is not valid JSON: {e}") from None
    if not isinstance(doc, dict):
        raise invalid("p4_device_config: a BMv2 JSON program is a JSON object")
    names: set[str] = set()
    for pipe in doc.get("pipelines", []) or []:
        for t in pipe.get("tables", []) if isinstance(pipe, dict) else []:
            if isinstance(t, dict) and isinstance(t.get("name"), str):
                names.add(t["name"])
    missing = [t.name for t in schema.tables if t.name not in names]
    if missing:
        raise invalid(f"P4Info tables not in the BMv2 JSON: {', '.join(sorted(missing))}")
