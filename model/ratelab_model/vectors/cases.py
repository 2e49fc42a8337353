"""The vector cases: each builds its control-plane state and input frames.

Expected results are never written here: runner.py computes them with the model.
One topology serves all cases (docs/ROUTER_MODEL.md "Test vectors"): ports 1-4,
next hop i on port i, and routes chosen so that longest-prefix match matters.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from dataclasses import replace
from decimal import Decimal

from ratelab_model import red
from ratelab_model.config import AqmConfig, NextHop, PortConfig, Route, RouterConfig
from ratelab_model.hosts import RateSender, ack_for
from ratelab_model.packet import (
    ETH_HEADER_LEN,
    FLAG_FIN,
    FLAG_SYN,
    IPPROTO_RBCC,
    RATE_UNLIMITED,
    ROUTER_MAC,
    RbccHeader,
    build_frame,
    ip_to_int,
    ipv4_frame,
    ipv4_header,
    ones_complement_checksum,
    rbcc_frame,
)
from ratelab_model.presets import PRESETS
from ratelab_model.rbcc import slot_index
from ratelab_model.router import Router
from ratelab_model.vectors.schema import InputFrame, Timing, VectorCase

ROUTER_ID = ip_to_int("10.255.0.1")
OTHER_ROUTER = ip_to_int("10.255.0.2")
H1 = ip_to_int("10.0.1.10")  # behind port 1 (10.0.1.0/24)
H2 = ip_to_int("10.0.2.10")  # behind port 2 (10.0.2.0/24)
H3 = ip_to_int("10.0.3.10")  # behind port 3 (10.0.0.0/16 only)
H4 = ip_to_int("10.0.2.200")  # behind port 4 (10.0.2.128/25 beats the /24)
H1_HOST_ROUTE = ip_to_int("10.0.2.192")  # a /32 inside port 4's /25, sent to port 1
UNROUTED = ip_to_int("192.168.1.1")
UDP = 17


def port_mac(port: int) -> bytes:
    return bytes([2, 0, 0, 0, 0, port])


def hop_mac(port: int) -> bytes:
    return bytes([2, 0, 0, 0, 1, port])


def port(
    number: int,
    rate_bps: int = 0,
    queue_limit: int = 64,
    capacity: int = 1_000_000,
    aqm: AqmConfig | None = None,
) -> PortConfig:
    return PortConfig(number, port_mac(number), rate_bps, queue_limit, capacity, aqm or AqmConfig())


def topology(*overrides: PortConfig, **settings: int) -> RouterConfig:
    """Ports 1-4 (unlimited FIFO unless overridden), next hop i on port i, the routes."""
    ports = {p: port(p) for p in range(1, 5)}
    ports.update({p.port: p for p in overrides})
    routes = (
        Route(ip_to_int("10.0.1.0"), 24, 1),
        Route(ip_to_int("10.0.2.0"), 24, 2),
        Route(ip_to_int("10.0.0.0"), 16, 3),
        Route(ip_to_int("10.0.2.128"), 25, 4),
        Route(H1_HOST_ROUTE, 32, 1),
    )
    return RouterConfig(
        router_id=ROUTER_ID,
        ports=tuple(ports[p] for p in sorted(ports)),
        next_hops=tuple(NextHop(p, p, hop_mac(p)) for p in range(1, 5)),
        routes=routes,
        **settings,
    )


def udp(src: int, dst: int, size: int = 60, **kw: object) -> bytes:
    """A UDP-protocol frame of `size` bytes (the router never reads the UDP header)."""
    body_len = max(0, size - ETH_HEADER_LEN - 20)
    payload = bytes((i * 7) & 0xFF for i in range(body_len))
    return ipv4_frame(src, dst, UDP, payload, **kw)  # type: ignore[arg-type]


def data(
    current_rate: int,
    return_bottle_node: int = 0,
    rate: int = RATE_UNLIMITED,
    flags: int = 0,
    bottle_node: int = 0,
) -> RbccHeader:
    return RbccHeader(
        flags, UDP, rate, bottle_node, RATE_UNLIMITED, return_bottle_node, current_rate
    )


def case(
    name: str, description: str, timing: Timing, config: RouterConfig, packets: list[InputFrame]
) -> VectorCase:
    return VectorCase(name, description, timing, config, tuple(packets))


# ---------------------------------------------------------------- forwarding


def fwd_lpm() -> VectorCase:
    dsts = [H1, H2, H4, H1_HOST_ROUTE, H3, ip_to_int("10.0.2.127"), ip_to_int("10.1.0.1")]
    dsts.append(UNROUTED)
    packets = [InputFrame(10 * i, 1 + i % 4, udp(H1, d)) for i, d in enumerate(dsts)]
    return case(
        "fwd_lpm",
        "Longest-prefix match: /32 over /25 over /24 over /16, hairpin, no route.",
        "any",
        topology(),
        packets,
    )


def _patched(header: bytes, offset: int, value: bytes) -> bytes:
    """`header` with bytes changed at `offset` and its checksum made correct again."""
    out = bytearray(header)
    out[offset : offset + len(value)] = value
    out[10:12] = b"\x00\x00"
    out[10:12] = struct.pack("!H", ones_complement_checksum(bytes(out)))
    return bytes(out)


def fwd_drops() -> VectorCase:
    good = udp(H1, H2)
    header = ipv4_header(H1, H2, UDP, 26)

    def frame(ip_header: bytes) -> bytes:
        return build_frame(ROUTER_MAC, hop_mac(1), ip_header, bytes(26))

    frames = [
        good[:12] + b"\x08\x06" + good[14:],  # ARP ethertype
        good[:12] + b"\x86\xdd" + good[14:],  # IPv6 ethertype
        good[:30],  # shorter than Ethernet + IPv4
        good[:10],  # shorter than Ethernet
        frame(_patched(header, 0, b"\x65")),  # version 6 behind the IPv4 ethertype
        frame(_patched(header, 0, b"\x44")),  # IHL 4
        frame(_patched(header, 0, b"\x4f")),  # IHL 15: header longer than the packet
        frame(_patched(header, 2, struct.pack("!H", 100))),  # total length past the frame
        frame(_patched(header, 2, struct.pack("!H", 16))),  # total length below IHL * 4
        udp(H1, H2, checksum=0x1234),
        udp(H1, H2, ttl=1, checksum=0x1234),  # checksum is checked before TTL
        udp(H1, H2, ttl=1),
        udp(H1, H2, ttl=0),
        udp(H1, UNROUTED, ttl=1),  # TTL is checked before the route
        udp(H1, UNROUTED),
        good,
    ]
    packets = [InputFrame(i, 1, f) for i, f in enumerate(frames)]
    return case(
        "fwd_drops",
        "Forwarding drops by cause and their order: not_ipv4, malformed, bad_checksum, "
        "ttl_expired, no_route.",
        "any",
        topology(),
        packets,
    )


def _ident_with_output_checksum(target: int) -> int:
    """An IP id whose forwarded header (TTL 64 -> 63) has checksum `target`."""
    for ident in range(1 << 16):
        header = ipv4_header(H1, H2, UDP, 26, ttl=63, ident=ident)
        if struct.unpack_from("!H", header, 10)[0] == target:
            return ident
    raise AssertionError("no IP id gives that checksum")


def fwd_ttl_options() -> VectorCase:
    nops = bytes([1, 1, 1, 0])  # NOP NOP NOP EOL
    record_route = bytes([7, 39, 4]) + bytes(36) + bytes([0])  # 40 bytes: IHL 15
    frames = [
        udp(H1, H2, ttl=2),
        udp(H1, H2, ttl=255),
        udp(H1, H2, options=nops),
        udp(H1, H4, size=100, options=record_route),
        ipv4_frame(H1, H2, UDP, bytes(26), ident=_ident_with_output_checksum(0x0000)),
        udp(H1, H2, size=200),  # no padding: frame longer than 60
    ]
    packets = [InputFrame(i, 3, f) for i, f in enumerate(frames)]
    return case(
        "fwd_ttl_options",
        "TTL decrement with checksum update (TTL 2 and 255, a result checksum of 0), "
        "IPv4 options of 4 and 40 bytes.",
        "any",
        topology(),
        packets,
    )


# ---------------------------------------------------------------- queues


def _burst(start_us: int, gap_us: int, count: int, size: int = 60) -> list[InputFrame]:
    """`count` frames from port 1 to port 2, `gap_us` apart."""
    return [InputFrame(start_us + i * gap_us, 1, udp(H1, H2, size)) for i in range(count)]


def fifo_tail_drop() -> VectorCase:
    # 1.1 Mbit/s: a 60 B frame takes ceil(436.36) = 437 us, a 1000 B frame 7273 us.
    out = port(2, rate_bps=1_100_000, queue_limit=3)
    packets = _burst(0, 1, 8)
    packets += _burst(1000, 0, 2, size=1000)
    packets += _burst(20_000, 50, 6)
    return case(
        "fifo_tail_drop",
        "FIFO: drain schedule with rounded-up transmission times, tail drop at q >= limit.",
        "exact",
        topology(out),
        packets,
    )


def _red_port(
    w_q: str, max_p: str, th_min: int, th_max: int, limit: int, seed: int = 7
) -> PortConfig:
    aqm = AqmConfig("red", Decimal(w_q), Decimal(max_p), th_min, th_max, seed)
    return port(2, rate_bps=1_000_000, queue_limit=limit, aqm=aqm)


def red_early() -> VectorCase:
    # 480 us per frame, arrivals every 200 us: the queue grows by ~0.6 per arrival.
    return case(
        "red_early",
        "RED between th_min and th_max: count, draws and early drops (also count * p_b >= 1).",
        "exact",
        topology(_red_port("0.2", "0.5", 2, 20, 60)),
        _burst(0, 200, 48),
    )


def red_forced() -> VectorCase:
    return case(
        "red_forced",
        "RED forced drops once avg >= th_max, then recovery; draws with q = 0 and a "
        "zero seed (replaced by the documented constant).",
        "exact",
        topology(_red_port("0.2", "0.1", 1, 3, 60, seed=0)),
        _burst(0, 100, 30) + _burst(30_000, 600, 10),
    )


def red_count_limit() -> VectorCase:
    """max_p = 1 and a fast-rising avg: p_b can grow enough between arrivals that
    count * p_b >= 1 (a drop without a draw). Whether it happens depends on the
    draws, so the generator searches for the first seed that gets there."""
    burst = _burst(0, 50, 30)
    for seed in range(1, 1000):
        config = topology(_red_port("0.2", "1", 1, 12, 60, seed=seed))
        router = Router(config)
        branches = {router.process_packet(p.port, p.frame, p.time_us).red_branch for p in burst}
        if red.RedBranch.COUNT_LIMIT in branches:
            return case(
                "red_count_limit",
                f"RED with max_p 1 (slope 2^32 / 11): draws and a count * p_b >= 1 drop "
                f"(seed {seed}, the first that reaches it).",
                "exact",
                config,
                burst,
            )
    raise AssertionError("no seed reaches the count limit")


def red_idle_decay() -> VectorCase:
    # s = 12000 us at 1 Mbit/s: idle gaps of 0, a few and ~2^32 us packet times.
    packets = _burst(0, 100, 15)
    packets += _burst(60_000, 100, 3)  # decay after ~4 idle packet times
    packets += _burst(400_000, 100, 3)
    packets += _burst(400_000 + 5_000_000_000, 100, 2)  # idle clamped to 2^32 - 1 us
    return case(
        "red_idle_decay",
        "RED average decay over idle time: m = idle * s_recip >> 32, table lookups, clamps.",
        "exact",
        topology(_red_port("0.02", "0.1", 5, 15, 60)),
        packets,
    )


def red_queue_full_low_avg() -> VectorCase:
    return case(
        "red_queue_full_low_avg",
        "RED admits (avg < th_min) but the queue limit drops: queue_full, count untouched.",
        "exact",
        topology(_red_port("0.002", "0.1", 5, 15, 4)),
        _burst(0, 10, 12),
    )


def red_preset(name: str, size: int, gap_us: int, count: int) -> Callable[[], VectorCase]:
    preset = PRESETS[name]

    def build() -> VectorCase:
        out = port(2, preset.link.rate_bps, preset.queue_limit, aqm=preset.aqm(seed=12345))
        return case(
            f"preset_{name.replace('-', '_')}",
            f"The {name} preset on its link ({preset.link.rate_bps} bit/s), overloaded.",
            "exact",
            topology(out),
            _burst(0, gap_us, count, size),
        )

    return build


# ---------------------------------------------------------------- RBCC


def _rbcc(time_us: int, ingress: int, src: int, dst: int, header: RbccHeader) -> InputFrame:
    return InputFrame(time_us, ingress, rbcc_frame(src, dst, header))


def rbcc_cache() -> VectorCase:
    headers = [
        data(100),  # insert: limited (return_bottle_node 0)
        data(100),  # hit
        data(200),  # limited and current_rate changed: update
        data(200, ROUTER_ID),  # limited bit changed: update; share = capacity
        data(300, ROUTER_ID),  # not limited: current_rate is ignored, hit
        data(300, ROUTER_ID, rate=5000, bottle_node=OTHER_ROUTER),  # rate below share: kept
        data(300, ROUTER_ID, rate=10_000, bottle_node=OTHER_ROUTER),  # rate == share: kept
        data(300, OTHER_ROUTER),  # limited by another router: update
        data(300, OTHER_ROUTER, flags=FLAG_SYN),  # SYN is an ordinary RBCC packet: hit
    ]
    packets = [_rbcc(i * 10, 1, H1, H2, h) for i, h in enumerate(headers)]
    # A second flow on the same port: the shares now depend on both.
    packets.append(_rbcc(100, 3, H3, H2, data(2500)))
    packets.append(_rbcc(110, 1, H1, H2, data(300, OTHER_ROUTER)))
    packets.append(_rbcc(120, 3, H3, H2, data(2500, ROUTER_ID)))
    return case(
        "rbcc_cache",
        "ABT insert, cache hit and miss rules (limited bit, recorded rate), stamping only "
        "when share < rate.",
        "any",
        topology(port(2, capacity=10_000)),
        packets,
    )


def rbcc_share_edges() -> VectorCase:
    packets = [
        _rbcc(0, 1, H1, H2, data(2000)),  # share 3000 - 2000 = 1000 < MIN_RATE 1200
        _rbcc(1, 3, H3, H2, data(2500)),  # capacity <= sum_limited: capacity / n
        _rbcc(2, 1, H1, H4, data(5000, ROUTER_ID)),  # port 4: unlimited flows split evenly
        _rbcc(3, 3, H3, H4, data(5000, ROUTER_ID)),
        _rbcc(4, 2, H2, H4, data(5000, ROUTER_ID)),  # 10000 * recip[3] >> 32 = 3333
        _rbcc(5, 1, H1, H2, data(500)),  # sum_limited 3000 == capacity: capacity / n
        _rbcc(6, 1, H1, H2, data(RATE_UNLIMITED)),  # sum_limited needs more than 32 bits
        _rbcc(7, 3, H3, H2, data(RATE_UNLIMITED)),
        _rbcc(8, 2, H2, H3, data(100, rate=0)),  # port 3 capacity 0: share = MIN_RATE
        _rbcc(9, 2, H2, H1, data(1, rate=1)),  # rate 1 B/s is never raised
    ]
    return case(
        "rbcc_share_edges",
        "Fair share edges: below MIN_RATE (configured 1200), capacity <= sum_limited, "
        "floors with recip[3], unlimited rates, capacity 0.",
        "any",
        topology(
            port(2, capacity=3000), port(3, capacity=0), port(4, capacity=10_000), min_rate=1200
        ),
        packets,
    )


def _colliding_source(flow: tuple[int, int, int], dst: int, egress: int, slots: int) -> int:
    """A source address in 10.3.0.0/16 whose flow to `dst` via port `egress` takes
    the slot of `flow` (src, dst, port). Sources are not routed, so any will do."""
    target = slot_index(*flow, slots)
    for offset in range(1, 1 << 16):
        src = ip_to_int("10.3.0.0") + offset
        if slot_index(src, dst, egress, slots) == target:
            return src
    raise AssertionError("no colliding flow found")


def rbcc_collision_eviction() -> VectorCase:
    slots = 1024  # the default, so one P4 build runs every vector
    # X = H1 -> H4 (leaves on port 4); Y = some 10.3.x.y -> H4 (also port 4) in the
    # same slot; Z = another 10.3.x.y -> H2 (port 2) in that slot too.
    y_src = _colliding_source((H1, H4, 4), H4, 4, slots)
    z_src = _colliding_source((H1, H4, 4), H2, 2, slots)
    timeout = 1_000_000
    packets = [
        _rbcc(0, 1, H1, H4, data(4000)),  # X inserted
        _rbcc(10, 3, y_src, H4, data(1000)),  # Y collides: stamped, ABT untouched
        _rbcc(20, 3, y_src, H4, data(1000, flags=FLAG_FIN)),  # FIN of a collision: no-op
        _rbcc(500_000, 1, H1, H4, data(4000)),  # X hit, last_seen refreshed
        _rbcc(500_000 + timeout, 3, z_src, H2, data(700)),  # exactly idle_timeout: collision
        _rbcc(500_001 + timeout, 3, z_src, H2, data(700)),  # X stale: evicted, Z inserted
        _rbcc(500_002 + timeout, 1, H1, H4, data(4000)),  # X now collides with Z
        _rbcc(500_003 + timeout, 3, y_src, H4, data(1000)),
    ]
    return case(
        "rbcc_collision_eviction",
        "Slot collisions between live flows (counted, stamped, ABT untouched) and eviction "
        "of a flow idle for longer than idle_timeout (removal counted at its own port).",
        "exact",
        topology(port(2, capacity=9000), port(4, capacity=5000)),
        packets,
    )


def rbcc_fin() -> VectorCase:
    packets = [
        _rbcc(0, 1, H1, H2, data(1000, flags=FLAG_SYN)),
        _rbcc(1, 3, H3, H2, data(1000)),
        _rbcc(2, 1, H1, H2, data(1000)),
        _rbcc(3, 1, H1, H2, data(1000, flags=FLAG_FIN)),  # hit, stamped, then removed
        _rbcc(4, 3, H3, H2, data(1000)),  # the share no longer counts H1's flow
        _rbcc(5, 1, H1, H4, data(1000, flags=FLAG_FIN)),  # unknown flow's FIN: in and out
        _rbcc(6, 1, H1, H2, data(1000)),  # the slot is free again: insert
    ]
    return case(
        "rbcc_fin",
        "FIN frees the flow's slot and removes its contribution after stamping.",
        "any",
        topology(port(2, capacity=6000), port(4, capacity=6000)),
        packets,
    )


def rbcc_closed_loop() -> VectorCase:
    """Two senders (H1, H3) to H2 through port 2, ACKs back through ports 1 and 3;
    hosts echo as RBCC.md "Hosts" says, so the inputs follow the model's outputs."""
    config = topology(port(2, capacity=20_000))
    router = Router(config)
    senders = {(H1, 1): RateSender(initial_rate=3000), (H3, 3): RateSender(initial_rate=12_000)}
    packets: list[InputFrame] = []
    now = 0
    for _round in range(6):
        for (src, ingress), sender in senders.items():
            frame = rbcc_frame(src, H2, sender.data_header())
            packets.append(InputFrame(now, ingress, frame))
            (out,) = router.process(ingress, frame, now)
            stamped = RbccHeader.decode(out.frame[ETH_HEADER_LEN + 20 :])
            ack = rbcc_frame(H2, src, ack_for(stamped))
            now += 100
            packets.append(InputFrame(now, 2, ack))
            (back,) = router.process(2, ack, now)
            sender.on_ack(RbccHeader.decode(back.frame[ETH_HEADER_LEN + 20 :]))
            now += 100
    return case(
        "rbcc_closed_loop",
        "Data and ACK paths: two flows settle to 10000 B/s each; ACK flows are RBCC flows "
        "of their own on the reverse ports; misses only while settling.",
        "any",
        config,
        packets,
    )


def rbcc_lone_limited() -> VectorCase:
    """Amendment 1: a lone flow whose desired rate (1,000,000 B/s) is below the
    port's capacity (1,187,500 B/s, 10 Mbit/s at 0.95) but above half of it.
    Counted as limited at its own rate it once got capacity minus itself
    (187,500) and oscillated; offered the share it would get here, it is never
    stamped and its ABT entry settles to hits."""
    config = topology(port(2, capacity=1_187_500))
    router = Router(config)
    sender = RateSender(initial_rate=1_000_000, desired_rate=1_000_000)
    packets: list[InputFrame] = []
    now = 0
    for _round in range(8):
        frame = rbcc_frame(H1, H2, sender.data_header())
        packets.append(InputFrame(now, 1, frame))
        (out,) = router.process(1, frame, now)
        ack = rbcc_frame(H2, H1, ack_for(RbccHeader.decode(out.frame[ETH_HEADER_LEN + 20 :])))
        now += 100
        packets.append(InputFrame(now, 2, ack))
        (back,) = router.process(2, ack, now)
        sender.on_ack(RbccHeader.decode(back.frame[ETH_HEADER_LEN + 20 :]))
        now += 100
    if (sender.return_rate, sender.return_bottle_node) != (1_000_000, 0):
        raise AssertionError(f"the lone flow did not hold its rate: {sender}")
    return case(
        "rbcc_lone_limited",
        "Amendment 1: a lone flow limited by its source below capacity holds its rate "
        "(closed loop; never stamped, no oscillation).",
        "any",
        config,
        packets,
    )


def rbcc_limited_beside() -> VectorCase:
    """Amendment 1 with flows set here: a limited flow is stamped with the share
    it would get here (its own rate out of sum_limited, itself among the
    sharers); flows set here and collisions get the port's plain share."""
    other = ip_to_int("10.0.1.20")  # a third source behind port 1
    packets = [
        _rbcc(0, 1, H1, H2, data(2000, ROUTER_ID)),  # set here: share 10000
        _rbcc(1, 3, H3, H2, data(2000, ROUTER_ID)),  # set here: 10000 / 2
        _rbcc(2, 1, other, H2, data(1000, OTHER_ROUTER)),  # limited at 1000: 10000 / 3
        _rbcc(3, 1, H1, H2, data(2000, ROUTER_ID)),  # plain share (10000 - 1000) / 2
        _rbcc(4, 1, other, H2, data(1000, OTHER_ROUTER, rate=1000)),  # below 3333: kept
        _rbcc(5, 1, other, H2, data(4000, OTHER_ROUTER)),  # recorded 4000: still 3333
        _rbcc(6, 3, H3, H2, data(2000, ROUTER_ID)),  # plain share (10000 - 4000) / 2
        _rbcc(7, 1, other, H2, data(4000, OTHER_ROUTER, rate=5000)),  # 5000 > 3333: stamped
        _rbcc(8, 2, H2, H4, data(9000)),  # alone on port 4: the whole 8000
        _rbcc(9, 1, H1, H4, data(3000)),  # the rest 9000 >= capacity 8000: 8000 / 2
        _rbcc(10, 2, H2, H4, data(9000)),  # the rest 3000: (8000 - 3000) / 1
        _rbcc(11, 3, H3, H4, data(500, ROUTER_ID)),  # plain: capacity <= 12000: 8000 / 3
        _rbcc(12, 1, H1, H4, data(3000, flags=FLAG_FIN)),  # stamped as limited, then freed
        _rbcc(13, 2, H2, H4, data(9000, rate=2000)),  # the rest 0: 8000 / 2, rate kept
    ]
    return case(
        "rbcc_limited_beside",
        "Amendment 1: flows limited elsewhere beside flows set here; the share a limited "
        "flow would get here (both branches), the plain share for the others, FIN.",
        "any",
        topology(port(2, capacity=10_000), port(4, capacity=8000)),
        packets,
    )


# The worked example of RBCC.md: three routers, each with host side port 1
# and forward port 2 of the example's capacity; data goes in on port 1 and
# out on port 2, ACKs back the other way. MIN_RATE is 1 B/s (the capacities
# are below the default 1500).
WORKED_CAPACITY = {"R1": 1000, "R2": 100, "R3": 1000}
WORKED_PATHS = {"A": ("R1", "R2"), "B": ("R1",), "C": ("R1", "R3"), "D": ("R3",), "E": ("R2",)}
WORKED_ALLOCATION = {"A": 50, "B": 475, "C": 475, "D": 525, "E": 50}
WORKED_ROUNDS = 8


def worked_example_config(name: str) -> RouterConfig:
    router_id = ROUTER_ID + sorted(WORKED_CAPACITY).index(name)
    return replace(
        topology(port(2, capacity=WORKED_CAPACITY[name]), min_rate=1), router_id=router_id
    )


def worked_example_run(
    rounds: int = WORKED_ROUNDS,
) -> tuple[dict[str, list[InputFrame]], dict[str, RateSender], dict[str, Router]]:
    """Every flow sends one data packet along its path per round, starting at
    100 B/s, and its ACK comes back along the same routers. Returns what each
    router saw, the senders and the routers."""
    routers = {name: Router(worked_example_config(name)) for name in WORKED_CAPACITY}
    seen: dict[str, list[InputFrame]] = {name: [] for name in WORKED_CAPACITY}
    senders = {flow: RateSender(initial_rate=100) for flow in WORKED_PATHS}
    now = 0

    def hop(name: str, ingress: int, frame: bytes) -> bytes:
        seen[name].append(InputFrame(now, ingress, frame))
        (out,) = routers[name].process(ingress, frame, now)
        return out.frame

    for _round in range(rounds):
        for number, (flow, path) in enumerate(WORKED_PATHS.items()):
            src = ip_to_int("10.0.1.0") + 10 + number  # behind port 1
            dst = ip_to_int("10.0.2.0") + 10 + number  # behind port 2
            frame = rbcc_frame(src, dst, senders[flow].data_header())
            for name in path:
                frame = hop(name, 1, frame)
            stamped = RbccHeader.decode(frame[ETH_HEADER_LEN + 20 :])
            ack = rbcc_frame(dst, src, ack_for(stamped))
            now += 10
            for name in reversed(path):
                ack = hop(name, 2, ack)
            senders[flow].on_ack(RbccHeader.decode(ack[ETH_HEADER_LEN + 20 :]))
            now += 10
    return seen, senders, routers


def rbcc_worked_example(name: str) -> Callable[[], VectorCase]:
    def build() -> VectorCase:
        seen, senders, routers = worked_example_run()
        rates = {flow: sender.rate for flow, sender in senders.items()}
        if rates != WORKED_ALLOCATION:
            raise AssertionError(f"the worked example did not settle: {rates}")
        if any(c.abt_collisions for c in routers[name].counters.values()):
            raise AssertionError(f"{name}: flows collide in the ABT")
        flows = ", ".join(f for f, path in WORKED_PATHS.items() if name in path)
        return case(
            f"rbcc_worked_example_{name.lower()}",
            f"RBCC.md's worked example in closed loop, the packets router {name} "
            f"(capacity {WORKED_CAPACITY[name]} B/s) sees: flows {flows} settle at "
            "A = E = 50, B = C = 475, D = 525 B/s.",
            "any",
            worked_example_config(name),
            seen[name],
        )

    return build


def rbcc_queue_drops() -> VectorCase:
    frames = [
        rbcc_frame(H1, H2, data(1000)),
        rbcc_frame(H1, H2, data(1000)),
        rbcc_frame(H3, H2, data(2000)),  # dropped: never inserted
        rbcc_frame(H1, H2, data(1000, flags=FLAG_FIN)),  # dropped: the flow stays
        udp(H3, H2),  # non-RBCC traffic loads the same queue
    ]
    packets = [InputFrame(i, 1, f) for i, f in enumerate(frames)]
    packets += [_rbcc(5000, 3, H3, H2, data(2000)), _rbcc(5001, 1, H1, H2, data(1000))]
    return case(
        "rbcc_queue_drops",
        "Admission before RBCC: a packet the queue drops never touches the ABT.",
        "exact",
        topology(port(2, rate_bps=1_000_000, queue_limit=1, capacity=9000)),
        packets,
    )


def rbcc_parse_variants() -> VectorCase:
    header = data(1000)
    record_route = bytes([7, 7, 4]) + bytes(4) + bytes([0])  # 8 bytes of options
    v2 = bytearray(header.encode())
    v2[0] = 0x20
    frames = [
        rbcc_frame(H1, H2, header, options=record_route),  # RBCC after IPv4 options
        ipv4_frame(H1, H2, IPPROTO_RBCC, bytes(v2)),  # version 2: plain IPv4
        rbcc_frame(H1, H4, header, flags_frag=0x0010),  # later fragment: plain IPv4
        rbcc_frame(H1, H4, header, flags_frag=0x2000),  # first fragment (MF): RBCC
        ipv4_frame(H1, H2, IPPROTO_RBCC, header.encode()[:20]),  # truncated: malformed
        rbcc_frame(H1, H2, replace(header, reserved=0xBEEF)),  # reserved kept as is
        rbcc_frame(H1, H2, header, ttl=1),  # dropped before RBCC
        rbcc_frame(H1, UNROUTED, header),
    ]
    packets = [InputFrame(i, 1, f) for i, f in enumerate(frames)]
    return case(
        "rbcc_parse_variants",
        "Which packets are RBCC packets: after options, version 1 only, fragment offset 0 "
        "only, whole header required; forwarding drops come first.",
        "any",
        topology(port(2, capacity=5000), port(4, capacity=5000)),
        packets,
    )


CASES: tuple[Callable[[], VectorCase], ...] = (
    fwd_lpm,
    fwd_drops,
    fwd_ttl_options,
    fifo_tail_drop,
    red_early,
    red_forced,
    red_count_limit,
    red_idle_decay,
    red_queue_full_low_avg,
    red_preset("redok-edge", 200, 5000, 60),
    red_preset("redok-hspa", 100, 200, 80),
    rbcc_cache,
    rbcc_share_edges,
    rbcc_collision_eviction,
    rbcc_fin,
    rbcc_closed_loop,
    rbcc_queue_drops,
    rbcc_parse_variants,
    rbcc_lone_limited,
    rbcc_limited_beside,
    rbcc_worked_example("R1"),
    rbcc_worked_example("R2"),
    rbcc_worked_example("R3"),
)
