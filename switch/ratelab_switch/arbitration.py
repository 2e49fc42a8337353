"""Client arbitration: which StreamChannel is the primary controller of each role.

Rules (P4Runtime spec, "Client Arbitration and Controller Replication"):
- a first MasterArbitrationUpdate for another device ends the stream with
  NOT_FOUND; a later one that changes the device or the role, with
  FAILED_PRECONDITION; an election id used by another live stream of the same
  role, with INVALID_ARGUMENT; so does a role config (no scheme is agreed on);
- a controller whose election id is >= the highest id seen for the role
  (`election_id_past`) becomes or stays primary; otherwise it is a backup, and a
  primary that lowers its id below that downgrades itself, leaving no primary;
- when the primary changes (new primary, downgrade, disconnect) every stream of
  the role is told; a backup that joins is told alone. The primary hears OK,
  the others ALREADY_EXISTS (a primary exists) or NOT_FOUND (none); the
  election id reported is the highest seen, or unset if there never was a
  primary;
- no backup is promoted by itself when the primary leaves;
- a stream without an election id is a backup that never becomes primary.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field

import grpc
from finsy.proto.google.rpc import status_pb2
from finsy.proto.p4.v1 import p4runtime_pb2 as p4r

from .errors import failed_precondition, invalid, not_found, permission_denied

Send = Callable[[p4r.StreamMessageResponse], None]
log = logging.getLogger("ratelab_switch")


def uint128(msg: p4r.Uint128) -> int:
    return (msg.high << 64) | msg.low


def to_uint128(value: int) -> p4r.Uint128:
    return p4r.Uint128(high=value >> 64, low=value & ((1 << 64) - 1))


@dataclass(eq=False)
class Controller:
    """One StreamChannel, as arbitration knows it."""

    send: Send
    arbitrated: bool = False
    role: str = ""
    election_id: int | None = None


@dataclass(frozen=True)
class RoleState:
    role: str
    streams: int  # arbitrated StreamChannels still open
    primary_election_id: int | None  # None: no primary


@dataclass
class _Role:
    streams: list[Controller] = field(default_factory=list)
    primary: Controller | None = None
    election_id_past: int | None = None  # highest id of any primary so far


class Arbiter:
    def __init__(self, device_id: int) -> None:
        self.device_id = device_id
        self._lock = threading.Lock()
        self._roles: dict[str, _Role] = {}

    def arbitrate(self, ctrl: Controller, msg: p4r.MasterArbitrationUpdate) -> None:
        """Handle one MasterArbitrationUpdate; raising ends the stream with that error."""
        role_name = msg.role.name
        if ctrl.arbitrated:
            if msg.device_id != self.device_id:
                raise failed_precondition("a stream cannot change its device id")
            if role_name != ctrl.role:
                raise failed_precondition("a stream cannot change its role; open a new one")
        elif msg.device_id != self.device_id:
            raise not_found(f"device id {msg.device_id} is not this switch ({self.device_id})")
        if msg.role.HasField("config"):
            raise invalid("role configs are not supported (no role scheme is configured)")
        election_id = uint128(msg.election_id) if msg.HasField("election_id") else None
        with self._lock:
            role = self._roles.setdefault(role_name, _Role())
            if election_id is not None and any(
                s is not ctrl and s.election_id == election_id for s in role.streams
            ):
                raise invalid(f"election id {election_id} is already used by another controller")
            if not ctrl.arbitrated:
                ctrl.arbitrated = True
                ctrl.role = role_name
                role.streams.append(ctrl)
            ctrl.election_id = election_id
            past = role.election_id_past
            if election_id is not None and (past is None or election_id >= past):
                changed = role.primary is not ctrl
                role.primary = ctrl
                role.election_id_past = election_id
                # An already-primary controller re-sending its id hears back alone.
                told = role.streams if changed else [ctrl]
            elif role.primary is ctrl:
                role.primary = None  # downgraded itself
                told = role.streams
            else:
                told = [ctrl]
            if role.primary is not None and told is role.streams:
                log.info("role %r: primary is election id %s", role_name, role.election_id_past)
            for s in told:
                s.send(self._update_for(role_name, role, s))

    def remove(self, ctrl: Controller) -> None:
        """A stream ended."""
        with self._lock:
            if not ctrl.arbitrated:
                return
            role = self._roles[ctrl.role]
            role.streams.remove(ctrl)
            if role.primary is ctrl:
                role.primary = None
                log.info("role %r: the primary left; no primary", ctrl.role)
                for s in role.streams:
                    s.send(self._update_for(ctrl.role, role, s))

    def check_primary(self, role_name: str, election_id: p4r.Uint128 | None) -> None:
        """PERMISSION_DENIED unless `election_id` is the role's current primary's; NOT_FOUND
        for a named role no controller ever arbitrated for (the default role always exists)."""
        with self._lock:
            role = self._roles.get(role_name)
            if role is None and role_name:
                raise not_found(f"role {role_name!r} is not known to this switch")
            primary = role.primary if role else None
            if primary is None:
                raise permission_denied(f"role {role_name!r} has no primary controller")
            if election_id is None or uint128(election_id) != primary.election_id:
                raise permission_denied("the request's election id is not the primary's")

    def primaries(self) -> list[Controller]:
        with self._lock:
            return [r.primary for r in self._roles.values() if r.primary is not None]

    def roles(self) -> list[RoleState]:
        """Each role a controller arbitrated for: its open streams and its primary's
        election id, so that a client can see that controllers gone leave nothing behind."""
        with self._lock:
            return [
                RoleState(name, len(r.streams), r.primary.election_id if r.primary else None)
                for name, r in sorted(self._roles.items())
            ]

    def _update_for(self, role_name: str, role: _Role, s: Controller) -> p4r.StreamMessageResponse:
        if role.primary is s:
            code, text = grpc.StatusCode.OK, "you are the primary"
        elif role.primary is not None:
            code, text = grpc.StatusCode.ALREADY_EXISTS, "another controller is the primary"
        else:
            code, text = grpc.StatusCode.NOT_FOUND, "there is no primary"
        update = p4r.MasterArbitrationUpdate(
            device_id=self.device_id,
            status=status_pb2.Status(code=code.value[0], message=text),
        )
        if role.election_id_past is not None:
            update.election_id.CopyFrom(to_uint128(role.election_id_past))
        if role_name:
            update.role.name = role_name
        return p4r.StreamMessageResponse(arbitration=update)
