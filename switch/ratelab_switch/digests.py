"""Digest batching and acknowledgement, sans-IO: time comes in as `now_ns`.

Per the P4Runtime spec (DigestEntry.Config): digest messages of one kind are
gathered into a DigestList, sent when it holds max_list_size messages (0: no
size limit) or when its oldest message is max_timeout_ns old. A message that
was sent is not sent again while its list awaits an ack, for at most
ack_timeout_ns (0: duplicates are never suppressed).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from finsy.proto.p4.v1 import p4data_pb2
from finsy.proto.p4.v1 import p4runtime_pb2 as p4r
from ratelab_p4info import DigestInfo

from .translate import encode_scalar

Message = tuple[int, ...]


@dataclass
class _Open:
    started_ns: int
    messages: list[Message] = field(default_factory=list)


@dataclass
class _Unacked:
    digest_id: int
    messages: set[Message]
    expires_ns: int


class DigestBatcher:
    def __init__(self, wall_clock_ns: Callable[[], int] = time.time_ns) -> None:
        # DigestList.timestamp is wall-clock time (ns since the Epoch); batching and
        # ack timeouts run on the `now_ns` the caller passes in.
        self._wall_clock_ns = wall_clock_ns
        self._open: dict[int, _Open] = {}
        self._unacked: dict[int, _Unacked] = {}  # by list id
        self._next_list_id = 1

    def add(
        self, digest: DigestInfo, config: p4r.DigestEntry.Config, message: Message, now_ns: int
    ) -> list[p4r.DigestList]:
        """Queue one message; returns the lists that are due now."""
        if config.ack_timeout_ns and any(
            u.digest_id == digest.id and message in u.messages for u in self._unacked.values()
        ):
            return []
        pending = self._open.setdefault(digest.id, _Open(now_ns))
        if message not in pending.messages:
            pending.messages.append(message)
        return self.poll(now_ns, {digest.id: (digest, config)})

    def poll(
        self, now_ns: int, digests: dict[int, tuple[DigestInfo, p4r.DigestEntry.Config]]
    ) -> list[p4r.DigestList]:
        """Lists due at `now_ns`; also forgets unacked lists whose ack timeout passed."""
        for list_id in [k for k, u in self._unacked.items() if u.expires_ns <= now_ns]:
            del self._unacked[list_id]
        out: list[p4r.DigestList] = []
        for digest_id, pending in list(self._open.items()):
            entry = digests.get(digest_id)
            if entry is None:
                continue
            digest, config = entry
            full = config.max_list_size > 0 and len(pending.messages) >= config.max_list_size
            if full or now_ns - pending.started_ns >= config.max_timeout_ns:
                del self._open[digest_id]
                out.append(self._emit(digest, config, pending.messages, now_ns))
        return out

    def poll_at(self, configs: dict[int, p4r.DigestEntry.Config]) -> int | None:
        """The next time `poll` has something to do, or None."""
        times = [u.expires_ns for u in self._unacked.values()]
        for digest_id, pending in self._open.items():
            cfg = configs.get(digest_id)
            if cfg is not None:
                times.append(pending.started_ns + cfg.max_timeout_ns)
        return min(times, default=None)

    def ack(self, digest_id: int, list_id: int) -> bool:
        u = self._unacked.get(list_id)
        if u is None or u.digest_id != digest_id:
            return False
        del self._unacked[list_id]
        return True

    def drop(self, digest_id: int) -> None:
        """Forget a digest that was unconfigured."""
        self._open.pop(digest_id, None)
        for k in [k for k, u in self._unacked.items() if u.digest_id == digest_id]:
            del self._unacked[k]

    def _emit(
        self,
        digest: DigestInfo,
        config: p4r.DigestEntry.Config,
        messages: list[Message],
        now_ns: int,
    ) -> p4r.DigestList:
        list_id = self._next_list_id
        self._next_list_id += 1
        if config.ack_timeout_ns:
            self._unacked[list_id] = _Unacked(
                digest.id, set(messages), now_ns + config.ack_timeout_ns
            )
        out = p4r.DigestList(digest_id=digest.id, list_id=list_id, timestamp=self._wall_clock_ns())
        for m in messages:
            out.data.append(_p4data(digest, m))
        return out


def _p4data(digest: DigestInfo, message: Message) -> p4data_pb2.P4Data:
    assert digest.members is not None
    members = [encode_scalar(v, t) for v, t in zip(message, digest.members, strict=True)]
    if not digest.is_struct:
        return members[0]
    return p4data_pb2.P4Data(struct=p4data_pb2.P4StructLike(members=members))
