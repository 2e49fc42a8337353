"""A simulator scenario from a topology file's routers, hosts and links, with flows given
in the scenario's own form (sim/netsim/README.md "Scenario format").

The routers are `router_plans.py`'s (the controller's entries, the switch's queue
depths); the links are the file's, direction by direction: `rate` in bit/s, `delay` in
ns, and for a direction leaving a host its `queue_limit` (a router's queue limit is in
its entries; a host's queue limit must be a number of packets, not N x BDP). No delay is
0, as in Mininet. Port numbers are ratelab-net's (a router's links in file order). The
benchmarks and the ns-3 comparison (bench/ns3) build their scenarios with it; flows
stay the caller's because some (Poisson UDP) are not in the file format.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ratelab_ctl import units
from ratelab_ctl.configfile import ConfigError, Location
from ratelab_net.routers import router_ports
from ratelab_net.topology import Direction, Topology, load_variants
from router_plans import router_plans


def _direction(d: Direction, path: str, leaves_host: bool, at: Location) -> dict[str, int]:
    # The topology loader has checked both values and requires a rate; no delay is 0,
    # as in Mininet.
    out = {
        "rate_bps": units.parse_rate(d.text("rate") or ""),
        "delay_ns": round(units.parse_delay_us(d.text("delay") or "0us") * 1000),
    }
    limit = d.text("queue_limit")
    if leaves_host and limit is not None:
        if not limit.isdigit():
            raise ConfigError(
                at,
                f"{path}.queue_limit",
                f"expected a number of packets for a host's queue, got {limit!r}",
            )
        out["queue_limit"] = int(limit)
    return out


def links_of(topo: Topology) -> list[dict[str, Any]]:
    """The file's links in the scenario's form."""
    ports = router_ports(topo)
    links = []
    for li, link in enumerate(topo.links):
        mark = link.node.start_mark
        at = Location(topo.filename, mark.line + 1, mark.column + 1)
        ends = []
        for end in (link.a, link.b):
            if end in ports:
                port = next(p.port for p in ports[end] if p.link_index == li)
                ends.append({"node": end, "port": port})
            else:
                ends.append({"node": end})
        links.append(
            {
                "a": ends[0],
                "b": ends[1],
                "forward": _direction(link.forward, f"links[{li}]", link.a in topo.hosts, at),
                "reverse": _direction(link.reverse, f"links[{li}]", link.b in topo.hosts, at),
            }
        )
    return links


def scenario(
    path: str | Path,
    flows: list[dict[str, Any]],
    duration_ns: int,
    seed: int,
    sample_interval_ns: int | None = None,
) -> dict[str, Any]:
    """The whole scenario of the topology file at `path` with `flows`."""
    topo = load_variants(str(path), [])[0][1]
    plans = router_plans(str(path), [])
    out: dict[str, Any] = {"seed": seed, "duration_ns": duration_ns}
    if sample_interval_ns is not None:
        out["sample"] = {"interval_ns": sample_interval_ns, "registers": []}
    out |= {
        "routers": plans["routers"],
        "hosts": plans["hosts"],
        "links": links_of(topo),
        "flows": flows,
    }
    return out
