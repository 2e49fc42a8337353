"""An E1-sized scenario (../shared/EXPERIMENTS.md, E1), drawn from a seed.

9 routers joined into one connected network (a random spanning tree plus 3 random extra
links), 15 sources and 15 destinations each on a random router. Every link (host links
included) is fast with probability 0.6 (1-10 Mbit/s, 0.1-10 ms) or slow (32-250 kbit/s,
10-5,000 ms), the same both ways. Source i sends 1,500 packets of 1,500 bytes (TCP Reno,
1,448 data bytes each with timestamps) to destination i, the starts spread evenly over
0-100 s. The same seed gives the same file.

    .venv/bin/python sim/netsim/tools/e1_scenario.py OUT.json [--seed N] [--duration S]
        [--topology OUT.yaml]
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
from pathlib import Path
from typing import Any

from topology_scenario import scenario

ROUTERS = 9
EXTRA_LINKS = 3
PAIRS = 15
PACKETS = 1500
SEGMENT = 1448  # data bytes in a 1,500-byte packet with timestamps
START_SPREAD_S = 100.0


def _link(rng: random.Random, a: str, b: str) -> str:
    if rng.random() < 0.6:
        rate_kbit = rng.randint(1000, 10000)
        delay_us = rng.randint(100, 10_000)
    else:
        rate_kbit = rng.randint(32, 250)
        delay_us = rng.randint(10_000, 5_000_000)
    return f"  - {{ends: [{a}, {b}], rate: {rate_kbit}kbit, delay: {delay_us}us}}\n"


def topology_text(seed: int, duration_s: float) -> str:
    """The random network as a ratelab-net topology file (without flows)."""
    rng = random.Random(seed)
    routers = [f"r{i}" for i in range(1, ROUTERS + 1)]
    pairs: set[tuple[str, str]] = set()
    for i in range(1, ROUTERS):
        pairs.add((routers[rng.randrange(i)], routers[i]))
    while len(pairs) < ROUTERS - 1 + EXTRA_LINKS:
        a, b = sorted(rng.sample(routers, 2), key=routers.index)
        pairs.add((a, b))
    hosts = [f"src{i}" for i in range(1, PAIRS + 1)] + [f"dst{i}" for i in range(1, PAIRS + 1)]
    text = f"# E1-sized, seed {seed} (sim/netsim/tools/e1_scenario.py)\n"
    text += f"duration: {duration_s:g}s\nrouters:\n"
    text += "".join(f"  {r}: {{}}\n" for r in routers)
    text += f"hosts: [{', '.join(hosts)}]\nlinks:\n"
    text += "".join(_link(rng, a, b) for a, b in sorted(pairs))
    text += "".join(_link(rng, h, rng.choice(routers)) for h in hosts)
    return text + "flows: []\n"


def flows() -> list[dict[str, Any]]:
    out = []
    for i in range(PAIRS):
        start_ns = round(i * START_SPREAD_S / (PAIRS - 1) * 1e9)
        out.append(
            {
                "name": f"f{i + 1}",
                "from": f"src{i + 1}",
                "to": f"dst{i + 1}",
                "start_ns": start_ns,
                "tcp": {"cc": "reno", "app": {"kind": "transfer", "bytes": PACKETS * SEGMENT}},
            }
        )
    return out


def e1_scenario(seed: int, duration_s: float, topology: Path | None = None) -> dict[str, Any]:
    text = topology_text(seed, duration_s)
    if topology is not None:
        topology.write_text(text)
        return scenario(topology, flows(), round(duration_s * 1e9), seed)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"e1_seed{seed}.yaml"
        path.write_text(text)
        return scenario(path, flows(), round(duration_s * 1e9), seed)


def main(argv: list[str]) -> int:
    import json

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", help="the scenario JSON to write")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--duration", type=float, default=3000.0, help="simulated seconds")
    ap.add_argument("--topology", type=Path, help="also keep the topology file here")
    args = ap.parse_args(argv)
    if not 0 < args.duration <= 1e6:
        print(f"e1_scenario: --duration: expected 0 to 1e6 s, got {args.duration}", file=sys.stderr)
        return 2
    data = e1_scenario(args.seed, args.duration, args.topology)
    Path(args.out).write_text(json.dumps(data) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
