"""A random router case for the full-core test: a configuration with RED and FIFO
ports, shaped and unlimited, and a mix of routed IPv4/RBCC frames (with options,
TTL edges, FIN) and broken ones; the expected results come from the model."""

from __future__ import annotations

import random
from decimal import Decimal
from typing import Any

from ratelab_model.config import AqmConfig, NextHop, PortConfig, Route, RouterConfig
from ratelab_model.vectors.runner import expected_results
from ratelab_model.vectors.schema import InputFrame, VectorCase

from frames import IPPROTO_RBCC, RbccFields, ipv4_frame, random_frame

ROUTER_ID = 0x0A0000FE


def random_case(seed: int, n_packets: int = 150) -> tuple[VectorCase, dict[str, Any]]:
    rng = random.Random(seed)
    ports = (
        PortConfig(1, bytes([2, 0, 0, 0, 0, 1]), 0, 64, 1_000_000, AqmConfig("fifo")),
        PortConfig(
            2,
            bytes([2, 0, 0, 0, 0, 2]),
            1_000_000,
            30,
            50_000,
            AqmConfig("red", Decimal("0.2"), Decimal("0.5"), 2, 10, seed=rng.getrandbits(32)),
        ),
        PortConfig(3, bytes([2, 0, 0, 0, 0, 3]), 500_000, 2, 20_000, AqmConfig("fifo")),
        PortConfig(
            4,
            bytes([2, 0, 0, 0, 0, 4]),
            0,
            100,
            300_000,
            AqmConfig("red", Decimal("0.02"), Decimal("0.65"), 3, 20, seed=5),
        ),
    )
    hops = tuple(NextHop(p, p, bytes([2, 0, 0, 0, 1, p])) for p in range(1, 5))
    routes = (
        *(Route((10 << 24) | (p << 8), 24, p) for p in range(1, 5)),
        Route(10 << 24, 16, 3),
        Route((10 << 24) | (2 << 8) | 128, 25, 4),
    )
    config = RouterConfig(ROUTER_ID, ports, hops, routes, abt_slots=1024, min_rate=1500)
    # half the flows go through the RED port 2 (10.0.2.0/25), so that queues build
    third_octets = [2, 2, 2, 2, 2, 2, 1, 3, 3, 4, 5, 2]
    flows = [
        ((10 << 24) | rng.getrandbits(16), (10 << 24) | (o << 8) | rng.randrange(100))
        for o in third_octets
    ]
    packets = []
    now = 0
    for _ in range(n_packets):
        now += rng.choice([0, 0, 1, 1, 5, 20, 100, 3000])
        port = rng.randrange(1, 5)
        kind = rng.random()
        if kind < 0.2:
            frame = random_frame(rng)
        else:
            src, dst = rng.choice(flows)
            opts = bytes(4 * rng.choice([0, 0, 0, 1, 4]))
            ttl = rng.choice([64] * 10 + [2, 1])
            if kind < 0.6:
                rb = RbccFields(
                    flags=rng.choice([0, 0, 0, 0, 1, 2, 4]),
                    rate=rng.choice([0xFFFFFFFF, 10_000, 200_000]),
                    return_bottle_node=rng.choice([ROUTER_ID, 0]),
                    current_rate=rng.choice([5_000, 20_000, 100_000]),
                )
                frame = ipv4_frame(src, dst, IPPROTO_RBCC, rb.encode(), ttl, opts)
            else:
                n = rng.choice([10, 100, 400])
                frame = ipv4_frame(
                    src, dst, 17, bytes(rng.getrandbits(8) for _ in range(n)), ttl, opts
                )
        packets.append(InputFrame(now, port, frame))
    case = VectorCase(f"random{seed}", "random traffic", "exact", config, tuple(packets))
    return case, expected_results(case)
