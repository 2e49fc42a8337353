"""A chain-of-routers harness for the RBCC convergence tests: each router has a
host-side port 1 and a forward port 2 whose capacity is the one under test.
Data goes in on port 1 and out on port 2; ACKs come back the other way.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ratelab_model.config import NextHop, PortConfig, Route, RouterConfig
from ratelab_model.hosts import RateSender, ack_for
from ratelab_model.packet import ETH_HEADER_LEN, RbccHeader, ip_to_int, rbcc_frame
from ratelab_model.router import Router

FORWARD, BACKWARD = 2, 1
DST_NET, SRC_NET = ip_to_int("10.1.0.0"), ip_to_int("10.2.0.0")


def chain_router(router_id: int, capacity: int, min_rate: int = 1) -> Router:
    config = RouterConfig(
        router_id=router_id,
        ports=(
            PortConfig(BACKWARD, bytes(5) + b"\x01", 0, 1000, 1_000_000),
            PortConfig(FORWARD, bytes(5) + b"\x02", 0, 1000, capacity),
        ),
        next_hops=(
            NextHop(1, BACKWARD, bytes(5) + b"\x11"),
            NextHop(2, FORWARD, bytes(5) + b"\x12"),
        ),
        routes=(Route(SRC_NET, 16, 1), Route(DST_NET, 16, 2)),
        min_rate=min_rate,
    )
    return Router(config)


def rbcc_of(frame: bytes) -> RbccHeader:
    return RbccHeader.decode(frame[ETH_HEADER_LEN + 20 :])


@dataclass
class Flow:
    number: int
    path: list[Router]
    sender: RateSender
    echoed: list[int] = field(default_factory=list)  # return_rate after each ACK

    @property
    def src(self) -> int:
        return SRC_NET + self.number

    @property
    def dst(self) -> int:
        return DST_NET + self.number

    def round_trip(self, now_us: int) -> None:
        """One data packet along the path and its ACK back along it."""
        frame = rbcc_frame(self.src, self.dst, self.sender.data_header())
        for router in self.path:
            (out,) = router.process(BACKWARD, frame, now_us)
            frame = out.frame
        ack = rbcc_frame(self.dst, self.src, ack_for(rbcc_of(frame)))
        for router in reversed(self.path):
            (out,) = router.process(FORWARD, ack, now_us)
            ack = out.frame
        self.sender.on_ack(rbcc_of(ack))
        self.echoed.append(self.sender.return_rate)


def run_rounds(flows: list[Flow], rounds: int, start_us: int = 0, step_us: int = 1000) -> int:
    now = start_us
    for _ in range(rounds):
        for flow in flows:
            flow.round_trip(now)
            now += step_us
    return now
