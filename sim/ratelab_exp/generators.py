"""Seeded scenario generators: a run's topology (docs/NET.md, as a dict, so
the same scenario could run in Mininet) drawn from its seed.

A generator may also give fixed-size transfers (flow name -> packets): the
topology format has no transfer size yet, so the simulator run adds them to
the scenario (TCP: a transfer of packets x 1,448 data bytes; RBCC: that many
segments); see sim/experiments/README.md.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass
class RunInput:
    topology: dict[str, Any]
    transfers: dict[str, int] = field(default_factory=dict)  # flow -> packets


@dataclass(frozen=True)
class Generator:
    defaults: dict[str, Any]
    make: Callable[[dict[str, Any], int], RunInput]
    doc: str

    def check(self, params: dict[str, Any], names_only: bool = False) -> tuple[str, str] | None:
        """(param, problem) for a bad parameter, None if all are fine."""
        for key, value in params.items():
            if key not in self.defaults:
                known = ", ".join(self.defaults)
                return str(key), f"unknown parameter; expected one of {known}"
            if names_only:
                continue
            want = type(self.defaults[key])
            ok = isinstance(value, (int, float)) if want is float else isinstance(value, want)
            if not ok or isinstance(value, bool) or (want in (int, float) and value < 0):
                return str(key), f"expected a {want.__name__} >= 0, got {value!r}"
        return None


# E1 (../shared/EXPERIMENTS.md). The study gives routers, hosts, link ranges,
# packets and start spread; the rest is chosen here, with the reason:
E1_DEFAULTS: dict[str, Any] = {
    "routers": 9,
    # "randomly interconnected into one connected network": a random spanning
    # tree plus 3 random extra links, so some pairs have alternative paths
    # (as sim/netsim/tools/e1_scenario.py draws it for the speed benchmark)
    "extra_links": 3,
    "pairs": 15,
    "packets": 1500,
    "start_spread_s": 100.0,
    "fast_probability": 0.6,
    # long enough for 1,500 packets over a 32 kbit/s link (about 600 s) plus
    # slow links' 5 s delays and losses; the simulator stops early when idle
    "duration_s": 1200.0,
    # not given by the study: ratelab's default router queue (100 packets)
    "queue_limit": 100,
    # the smallest share an RBCC router stamps (B/s; RBCC.md MIN_RATE, 1,500
    # by default): below every share E1 can give (a 32 kbit/s link's 3,800
    # B/s over 15 data and 15 ACK flows, 126 B/s). With the default, four
    # flows on a 40 kbit/s link were held at 4 x 1,500 B/s > its 4,750 B/s:
    # its queue stood full, lost packets and held SYNs past the 30 s give-up
    "rbcc_min_rate": 100,
}


def _e1_link(rng: random.Random, a: str, b: str, p: dict[str, Any]) -> dict[str, Any]:
    if rng.random() < p["fast_probability"]:
        rate_kbit, delay_us = rng.randint(1000, 10000), rng.randint(100, 10_000)
    else:
        rate_kbit, delay_us = rng.randint(32, 250), rng.randint(10_000, 5_000_000)
    link: dict[str, Any] = {"ends": [a, b], "rate": f"{rate_kbit}kbit", "delay": f"{delay_us}us"}
    link["queue_limit"] = p["queue_limit"]
    return link


def e1(params: dict[str, Any], seed: int) -> RunInput:
    """9 routers in one connected random network, 15 source/destination pairs
    on random routers, each source sending 1,500 packets, starts spread evenly
    over 0-100 s; every link fast (1-10 Mbit/s, 0.1-10 ms) with probability
    0.6, else slow (32-250 kbit/s, 10-5,000 ms), the same both ways."""
    p = {**E1_DEFAULTS, **params}
    rng = random.Random(seed)
    routers = [f"r{i}" for i in range(1, p["routers"] + 1)]
    pairs: set[tuple[str, str]] = set()
    for i in range(1, len(routers)):
        pairs.add((routers[rng.randrange(i)], routers[i]))
    most = len(routers) * (len(routers) - 1) // 2
    while len(pairs) < min(most, len(routers) - 1 + p["extra_links"]):
        a, b = sorted(rng.sample(routers, 2), key=routers.index)
        pairs.add((a, b))
    n = p["pairs"]
    hosts = [f"src{i}" for i in range(1, n + 1)] + [f"dst{i}" for i in range(1, n + 1)]
    links = [_e1_link(rng, a, b, p) for a, b in sorted(pairs)]
    host_links = [_e1_link(rng, h, rng.choice(routers), p) for h in hosts]
    links += host_links
    flows = []
    for i in range(n):
        start = i * p["start_spread_s"] / (n - 1) if n > 1 else 0.0
        flows.append(
            {
                "name": f"f{i + 1}",
                "from": f"src{i + 1}",
                "to": f"dst{i + 1}",
                "transport": "tcp",
                "stack": "ratelab",
                "cc": "reno",
                # what a rate-based source asks for: its own link's rate. The
                # routers never stamp the source's link (it is no router's
                # port), so a source asking for more overflows its own queue
                # (E1 lost ~15,000 packets per scenario there at 10 Mbit/s,
                # sim/experiments/README.md "E1"). A bulk TCP flow ignores it.
                "rate": host_links[i]["rate"],
                "start": f"{start:.6f}s",
            }
        )
    topology = {
        "duration": f"{p['duration_s']:g}s",
        # queues sampled every 2 s: 600 samples per port over 1,200 s give the
        # average queue; finer sampling doubles the run's time (results parsing)
        "poll_interval": "2s",
        "routers": {
            r: {"router_id": f"10.255.0.{i + 1}", "rbcc": {"min_rate": p["rbcc_min_rate"]}}
            for i, r in enumerate(routers)
        },
        "hosts": hosts,
        "links": links,
        "flows": flows,
    }
    return RunInput(topology, {f["name"]: p["packets"] for f in flows})


GENERATORS: dict[str, Generator] = {
    "e1": Generator(E1_DEFAULTS, e1, e1.__doc__ or ""),
}

# E2's network (its own module: it imports RunInput from here)
from ratelab_exp.generators_e2 import E2_DEFAULTS, e2  # noqa: E402

GENERATORS["e2"] = Generator(E2_DEFAULTS, e2, e2.__doc__ or "")
