"""The RBCC header fields a TRUMP-style host writes (RBCC.md "Hosts"), without
pacing, timers or loss recovery: enough to drive routers in closed loop for
the convergence tests and the generated vectors.
"""

from __future__ import annotations

from dataclasses import dataclass

from ratelab_model.packet import FLAG_ACK, RATE_UNLIMITED, RbccHeader


@dataclass
class RateSender:
    """Sends at min(desired, last return_rate); before the first ACK at `initial_rate`."""

    initial_rate: int
    desired_rate: int = RATE_UNLIMITED
    return_rate: int = RATE_UNLIMITED
    return_bottle_node: int = 0
    acked: bool = False

    @property
    def rate(self) -> int:
        if not self.acked:
            return min(self.desired_rate, self.initial_rate)
        return min(self.desired_rate, self.return_rate)

    def data_header(self, flags: int = 0, next_proto: int = 17) -> RbccHeader:
        return RbccHeader(
            flags=flags,
            next_proto=next_proto,
            rate=self.desired_rate,
            bottle_node=0,
            return_rate=self.return_rate,
            return_bottle_node=self.return_bottle_node,
            current_rate=self.rate,
        )

    def on_ack(self, ack: RbccHeader) -> None:
        self.return_rate = ack.return_rate
        self.return_bottle_node = ack.return_bottle_node
        self.acked = True


def ack_for(data: RbccHeader, next_proto: int = 17) -> RbccHeader:
    """The receiver's ACK: the data packet's rate and bottle_node echoed back.

    RBCC.md leaves the ACK flow's own fields open. Here `rate` says "no
    limit" and `current_rate` is 0: routers on the way back record the ACK
    flow as limited (unless return_bottle_node names them) at 0 B/s, so it
    takes nothing from the data flows sharing that port. (0xFFFFFFFF would
    push sum_limited past capacity and halve everyone's share.)
    """
    return RbccHeader(
        flags=FLAG_ACK,
        next_proto=next_proto,
        rate=RATE_UNLIMITED,
        bottle_node=0,
        return_rate=data.rate,
        return_bottle_node=data.bottle_node,
        current_rate=0,
    )
