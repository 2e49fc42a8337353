"""Which hosts a router configuration implies, for `make run`.

Every next hop that a route points at becomes one host, attached to the next
hop's port, with the next hop's MAC (the router rewrites the destination MAC to
it) and the first address of the first route through it. The host behind the
slowest rate-limited port is the receiver (that port is the bottleneck); every
other host sends to it.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

from ratelab_model.config import PortConfig, RouterConfig


class PlanError(ValueError):
    """The configuration cannot be turned into the demo's topology; one line."""


@dataclass(frozen=True)
class Host:
    name: str
    port: int  # the router port it hangs off
    mac: str  # its own MAC (the next hop's)
    address: str  # its IPv4 address
    prefix_len: int
    gateway: str  # the address it sends through (the router answers no ARP)
    gateway_mac: str  # the router port's MAC, installed as a permanent neighbour


@dataclass(frozen=True)
class Plan:
    receiver: Host
    senders: tuple[Host, ...]
    bottleneck: PortConfig


def _mac(raw: bytes) -> str:
    return ":".join(f"{b:02x}" for b in raw)


def plan_hosts(router: RouterConfig, hop_names: dict[int, str]) -> Plan:
    ports = {p.port: p for p in router.ports}
    hosts: list[Host] = []
    for hop in router.next_hops:
        routes = [r for r in router.routes if r.next_hop == hop.id]
        if not routes:
            continue  # nothing routed there: no host needed
        net = ipaddress.IPv4Network((routes[0].prefix, routes[0].length))
        if net.num_addresses < 4:
            raise PlanError(
                f"route {net} to next hop {hop_names.get(hop.id, hop.id)}: a demo host "
                "needs a prefix of /30 or shorter (a host and a gateway address)"
            )
        hosts.append(
            Host(
                name=hop_names.get(hop.id, f"hop{hop.id}"),
                port=hop.port,
                mac=_mac(hop.mac),
                address=str(net.network_address + 1),
                prefix_len=net.prefixlen,
                gateway=str(net.broadcast_address - 1),
                gateway_mac=_mac(ports[hop.port].mac),
            )
        )
    limited = [p for p in router.ports if p.rate_bps and any(h.port == p.port for h in hosts)]
    if not limited:
        raise PlanError("no rate-limited port with a host behind it: nothing is a bottleneck")
    bottleneck = min(limited, key=lambda p: (p.rate_bps, p.port))
    receivers = [h for h in hosts if h.port == bottleneck.port]
    senders = tuple(h for h in hosts if h.port != bottleneck.port)
    if not senders:
        raise PlanError(f"no host on any port but the bottleneck (port {bottleneck.port})")
    return Plan(receiver=receivers[0], senders=senders, bottleneck=bottleneck)
