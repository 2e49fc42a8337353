"""Closed loop: RBCC senders and receivers through the reference model's Router
(ratelab_model.router), which stamps the rate fields as every target must."""

from __future__ import annotations

import struct

from hosts_simnet import Link, SimNet
from ratelab_hosts.pacing import ceil_div
from ratelab_hosts.rbcc_receiver import RbccListener
from ratelab_hosts.rbcc_sender import RbccSender, SenderConfig, SenderState
from ratelab_hosts.wire import RbccPacket
from ratelab_model.config import NextHop, PortConfig, Route, RouterConfig
from ratelab_model.packet import IPPROTO_RBCC, ip_to_int, ipv4_frame
from ratelab_model.router import Router

ROUTER_ID = ip_to_int("10.255.0.1")
RECEIVER = ip_to_int("10.0.2.1")
CAPACITY = 95_000  # B/s handed out on the bottleneck port 2
LINK_BPS = 1_000_000  # port 2 drains at 125 kB/s
SECOND = 1_000_000


def sender_address(flow_id: int) -> int:
    return ip_to_int(f"10.0.1.{flow_id}")


def router_config() -> RouterConfig:
    return RouterConfig(
        router_id=ROUTER_ID,
        ports=(
            PortConfig(1, bytes.fromhex("020000000101"), 0, 100, 10_000_000),
            PortConfig(2, bytes.fromhex("020000000102"), LINK_BPS, 100, CAPACITY),
        ),
        next_hops=(
            NextHop(1, 1, bytes.fromhex("020000000201")),
            NextHop(2, 2, bytes.fromhex("020000000202")),
        ),
        routes=(
            Route(ip_to_int("10.0.1.0"), 24, 1),
            Route(ip_to_int("10.0.2.0"), 24, 2),
        ),
        min_rate=1,
    )


class RouterPath(Link):
    """One direction through the model router: IPv4 addressing by flow id,
    the router's queue and stamping, then the link's serialization and delay."""

    def __init__(self, router: Router, ingress_port: int, towards_receiver: bool) -> None:
        super().__init__(delay_us=5_000)
        self.router = router
        self.ingress_port = ingress_port
        self.towards_receiver = towards_receiver
        self.queue_seen: list[int] = []

    def transmit(self, now_us: int, data: bytes) -> tuple[int, bytes] | None:
        self.sent.append((now_us, data))
        flow_id = RbccPacket.decode(data).trump.flow_id
        src, dst = sender_address(flow_id), RECEIVER
        if not self.towards_receiver:
            src, dst = dst, src
        frame = ipv4_frame(src, dst, IPPROTO_RBCC, data)
        record = self.router.process_packet(self.ingress_port, frame, now_us)
        if record.output is None:
            self.dropped.append((now_us, data))
            return None
        if self.towards_receiver:
            assert record.q is not None
            self.queue_seen.append(record.q)
        out = record.output
        rate = self.router.config.port(out.port).rate_bps
        done = out.t_deq_us + (ceil_div(len(out.frame) * 8 * SECOND, rate) if rate else 0)
        total = struct.unpack_from("!H", out.frame, 16)[0]
        return done + self.delay_us, out.frame[34 : 14 + total]


class Hosts:
    """Several senders on one side, as one endpoint of the simulated network;
    each sender is created at its start time."""

    def __init__(self, configs: list[tuple[int, SenderConfig]]) -> None:
        self.pending = sorted(configs, key=lambda item: item[0])
        self.senders: list[RbccSender] = []

    def poll_at(self) -> int | None:
        times = [t for s in self.senders if (t := s.poll_at()) is not None]
        times.extend(start for start, _ in self.pending)
        return min(times, default=None)

    def on_timer(self, now_us: int) -> list[bytes]:
        while self.pending and self.pending[0][0] <= now_us:
            self.senders.append(RbccSender(self.pending.pop(0)[1], now_us))
        out = []
        for sender in self.senders:
            due = sender.poll_at()
            if due is not None and due <= now_us:
                out.extend(sender.on_timer(now_us))
        return out

    def on_datagram(self, now_us: int, data: bytes) -> list[bytes]:
        return [d for s in self.senders for d in s.on_datagram(now_us, data)]


class Server:
    def __init__(self) -> None:
        self.listener = RbccListener()

    def poll_at(self) -> int | None:
        return None

    def on_timer(self, now_us: int) -> list[bytes]:
        return []

    def on_datagram(self, now_us: int, data: bytes) -> list[bytes]:
        flow_id = RbccPacket.decode(data).trump.flow_id
        return self.listener.on_datagram(now_us, str(flow_id), data)


def run_flows(
    flow_ids: list[int], segments: list[int], starts: list[int] | None = None
) -> tuple[list[RbccSender], Server, RouterPath]:
    router = Router(router_config())
    starts = starts or [0] * len(flow_ids)
    hosts = Hosts(
        [
            (start, SenderConfig(125_000, 20_000, size=1000, segments=count, flow_id=f))
            for f, count, start in zip(flow_ids, segments, starts, strict=True)
        ]
    )
    server = Server()
    forward = RouterPath(router, 1, towards_receiver=True)
    net = SimNet(hosts, server, forward, RouterPath(router, 2, towards_receiver=False))
    net.run(120 * SECOND)
    senders = sorted(hosts.senders, key=lambda s: s.config.flow_id)
    assert len(senders) == len(flow_ids)
    for sender in senders:
        assert sender.state is SenderState.CLOSED
    for port in (1, 2):
        counters = router.counters[port]
        assert counters.drop_queue_full == 0
        assert counters.abt_hits + counters.abt_updates + counters.abt_collisions == (
            counters.rbcc_packets
        )
    return senders, server, forward


def test_one_flow_takes_the_bottleneck_capacity() -> None:
    [sender], server, forward = run_flows([1], segments=[150])
    assert sender.rate == CAPACITY
    assert (sender.return_rate, sender.return_bottle_node) == (CAPACITY, ROUTER_ID)
    receiver = server.listener.flows[("1", 1)]
    assert receiver.complete and receiver.lost == 0
    assert receiver.metrics.rates[-1].rate == CAPACITY
    # paced below the drain rate: the queue never builds past one packet
    assert max(forward.queue_seen) <= 1


def test_two_flows_share_the_bottleneck_equally() -> None:
    senders, server, forward = run_flows([1, 2], segments=[150, 150])
    # max-min: each gets half of the capacity (recip[2] = 2^31 makes it exact)
    assert [s.return_rate for s in senders] == [CAPACITY // 2, CAPACITY // 2]
    assert all(s.return_bottle_node == ROUTER_ID for s in senders)
    for flow in (1, 2):
        receiver = server.listener.flows[(str(flow), flow)]
        assert receiver.complete and receiver.metrics.segments_delivered == 150
    assert max(forward.queue_seen[len(forward.queue_seen) // 2 :]) <= 1


def test_a_flow_joining_and_leaving_halves_then_restores_the_share() -> None:
    # Flow 1 sends for about 6 s; flow 2 starts at 1 s and sends 100 packets.
    # Flow 2's FIN frees its ABT slot, so flow 1 gets the whole port back.
    [first, second], server, _ = run_flows([1, 2], segments=[500, 100], starts=[0, SECOND])
    rates = [(s.t_us, s.rate) for s in first.metrics.rates]
    assert rates[-1][1] == CAPACITY
    halved = [t for t, r in rates if r == CAPACITY // 2]
    assert halved and SECOND < halved[0] < 2 * SECOND
    restored = [t for t, r in rates if r == CAPACITY and t > halved[0]]
    assert restored
    assert second.metrics.rates[-1].rate == CAPACITY // 2
    assert second.metrics.fin_acked
    for flow, count in ((1, 500), (2, 100)):
        assert server.listener.flows[(str(flow), flow)].metrics.segments_delivered == count
