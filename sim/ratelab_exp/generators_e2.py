"""E2's network (../shared/EXPERIMENTS.md E2): a server 11 ms from one
wireless-like bottleneck (EDGE, HSPA or LTE) and a mobile host behind it; two
bursts of fixed-size downloads from the server to the mobile host. The link
figures are the AQM presets' (ratelab_model.presets.LINKS), so "BDP" is the
same packet count the presets use.

The study leaves some things open; each choice and its reason is written next
to it here and in sim/experiments/README.md "E2".
"""

from __future__ import annotations

import random
from typing import Any

from ratelab_model.presets import LINKS, PRESETS

FIRST, LATER = "a", "b"  # flow names: a1..aN the first burst, b1..bN the later one

# The bottleneck's queue at the router's egress toward the mobile host:
# FIFO of BDP, 2 x BDP or 50 packets (the study's EDGE-only size), or the RED /
# REDok preset of the link with the preset's own queue limit (AQM.md).
QUEUES = ("bdp", "2xbdp", "50", "red", "redok")
SETUPS = tuple(
    f"{link}-{queue}" for link in LINKS for queue in QUEUES if queue != "50" or link == "edge"
)

# Simulated seconds per link: far beyond the slowest download seen (EDGE, 18
# flows, 3 s initial RTO, SYNs lost and backed off twice), so a burst that does
# not finish is a finding (e2_incomplete), not a cut-off run.
DURATION_S = {"edge": 300.0, "hspa": 60.0, "lte": 30.0}

E2_DEFAULTS: dict[str, Any] = {
    "setup": "hspa-bdp",  # one of SETUPS
    "flows": 1,  # flows per burst: the study's 1, 2, 6 or 18
    "total_bytes": 180_000,  # per burst, split evenly between its flows
    # When the later burst starts: one round trip plus this fraction of the
    # time the link needs for a whole burst, after the first. The study says
    # only "later"; its Jain's index between the bursts needs them to share
    # the link, and the first burst cannot be done before one round trip plus
    # its full serialisation time, so 0.5 always makes them overlap (EDGE
    # 5.02 s, HSPA 0.52 s, LTE 0.066 s).
    "later_fraction": 0.5,
    # "simultaneous" flows: each starts at its burst's time plus a draw from
    # the run's seed, uniform over this many packet times (1,500 bytes) of the
    # link. Without it every replication of a FIFO case would be the same run
    # (the simulator has no other chance); one packet time varies where the
    # SYNs fall between the link's departures and keeps the flows together.
    "start_jitter_packets": 1.0,
    # "plus 11 ms from the sender to the link": the server's own link, fast
    # (100 Mbit/s) so that only the wireless link queues
    "sender_delay_ms": 11,
}


def setup_parts(setup: str) -> tuple[str, str]:
    """`edge-2xbdp` -> ("edge", "2xbdp"); ValueError naming the choices."""
    if setup not in SETUPS:
        raise ValueError(f"generator.setup: expected one of {', '.join(SETUPS)}, got {setup!r}")
    link, queue = setup.split("-", 1)
    return link, queue


def _queue(link: str, queue: str) -> dict[str, Any]:
    if queue in ("red", "redok"):
        preset = PRESETS[f"{queue}-{link}"]
        # the preset's limit, written out: without one the topology's default
        # (100 packets) would replace it
        return {"aqm": preset.name, "queue_limit": preset.queue_limit}
    return {"aqm": "fifo", "queue_limit": {"bdp": "BDP", "2xbdp": "2xBDP"}.get(queue, queue)}


def later_start_s(p: dict[str, Any]) -> float:
    link = LINKS[setup_parts(p["setup"])[0]]
    rtt = 2 * (p["sender_delay_ms"] + link.one_way_delay_ms) / 1000
    return rtt + p["later_fraction"] * p["total_bytes"] * 8 / link.rate_bps


def _burst(
    prefix: str, n: int, total: int, start_s: float, jitter_s: float, rng: random.Random
) -> list[dict[str, Any]]:
    sizes = [total // n + (1 if i < total % n else 0) for i in range(n)]
    starts = [start_s + rng.uniform(0.0, jitter_s) for _ in sizes]
    return [
        {
            "name": f"{prefix}{i + 1}",
            "from": "server",
            "to": "mobile",
            "transport": "tcp",
            # ratelab's stack with SACK (RFC 6675 recovery); NewReno's window
            # arithmetic, as the ns-2 SACK agents of the study's time used
            "stack": "ratelab",
            "cc": "newreno",
            "sack": True,
            "bytes": size,
            "start": f"{start:.6f}s",  # the topology's resolution: 1 us
        }
        for i, (size, start) in enumerate(zip(sizes, starts, strict=True))
    ]


def e2(params: dict[str, Any], seed: int) -> Any:
    """Server -- 11 ms, 100 Mbit/s -- router -- EDGE / HSPA / LTE -- mobile;
    a burst of `flows` downloads of `total_bytes` in all at 0 s and another
    one later (later_start_s). The seed draws each flow's start within its
    burst (start_jitter_packets) and the router's RED draws. Returns a
    generators.RunInput (imported here: generators.py registers this one)."""
    from ratelab_exp.generators import RunInput

    p = {**E2_DEFAULTS, **params}
    link_name, queue = setup_parts(p["setup"])
    if p["flows"] < 1 or p["total_bytes"] < p["flows"]:
        raise ValueError("generator.flows: expected 1 to total_bytes flows per burst")
    link = LINKS[link_name]
    wireless = {
        "ends": ["r1", "mobile"],
        "rate": f"{link.rate_bps}bit",
        "delay": f"{link.one_way_delay_ms}ms",
        # the router's egress toward the mobile host; the way back (ACKs)
        # leaves the mobile host through its own 100-packet FIFO
        "forward": _queue(link_name, queue),
    }
    aqm = wireless["forward"]["aqm"]
    if aqm != "fifo":  # each run its own RED draws
        wireless["forward"]["aqm"] = {"preset": aqm, "seed": 1 + seed % (2**32 - 1)}
    rng = random.Random(seed)
    jitter = p["start_jitter_packets"] * 1500 * 8 / link.rate_bps
    flows = _burst(FIRST, p["flows"], p["total_bytes"], 0.0, jitter, rng)
    flows += _burst(LATER, p["flows"], p["total_bytes"], later_start_s(p), jitter, rng)
    topology = {
        "duration": f"{DURATION_S[link_name]:g}s",
        # E2's metrics need no time series: one sample at the start and one at
        # the end (each sample of every flow is parsed; 1 s samples made an
        # EDGE run 2.5 times slower). A file that adds queue metrics sets
        # poll_interval in its cases.
        "poll_interval": f"{DURATION_S[link_name]:g}s",
        "routers": {"r1": {"router_id": "10.255.0.1"}},
        "hosts": ["server", "mobile"],
        "links": [
            {"ends": ["server", "r1"], "rate": "100mbit", "delay": f"{p['sender_delay_ms']}ms"},
            wireless,
        ],
        "flows": flows,
    }
    return RunInput(topology)
