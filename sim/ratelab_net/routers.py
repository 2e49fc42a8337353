"""From a topology to each router's configuration, as `ratelab-ctl` reads it.

Port numbers: a router's links in file order get ports 1, 2, ...; MACs are
02:00:00:00:<router>:<port> for router ports and 02:00:00:01:00:<host> for
hosts. Routes: every host's /24 (topology.HOST_NET) is routed along a
shortest path in router hops (ties: the lowest port). A link direction that
leaves a router becomes that port's rate, delay, queue limit, utilisation,
AQM and strict-priority queues; the configuration is built as YAML nodes that
reuse the topology file's own nodes, so the controller's validation reports
errors at their place in the topology file.
"""

from __future__ import annotations

import re
from collections import deque
from dataclasses import dataclass

import yaml
from ratelab_ctl.configfile import ConfigError, ControllerConfig, load_config_node

from ratelab_net.topology import Direction, Link, Topology

# what a direction leaving a router gives its port (the controller's port keys)
_PORT_KEYS = ("rate", "delay", "queue_limit", "utilisation", "aqm", "priority_queues", "priority")
_STR = "tag:yaml.org,2002:str"
_MAP = "tag:yaml.org,2002:map"


@dataclass(frozen=True)
class RouterPort:
    router: str
    port: int
    mac: str
    peer: str  # the host or router at the other end
    peer_port: int | None  # the peer router's port; None for a host
    out: Direction  # settings of the direction leaving this port
    link: Link
    link_index: int  # its place in the file's `links`


@dataclass(frozen=True)
class RouterPlan:
    name: str
    index: int  # 1-based
    router_id: str
    ports: tuple[RouterPort, ...]
    config: ControllerConfig


def host_mac(topo: Topology, host: str) -> str:
    return f"02:00:00:01:00:{topo.hosts.index(host) + 1:02x}"


def router_ports(topo: Topology) -> dict[str, list[RouterPort]]:
    ports: dict[str, list[RouterPort]] = {r: [] for r in topo.routers}
    index = {r: i + 1 for i, r in enumerate(topo.routers)}
    numbers: dict[tuple[str, int], int] = {}  # (router, link index) -> port
    for li, link in enumerate(topo.links):
        for end in (link.a, link.b):
            if end in ports:
                numbers[(end, li)] = len([k for k in numbers if k[0] == end]) + 1
    for li, link in enumerate(topo.links):
        for end, peer, out in ((link.a, link.b, link.forward), (link.b, link.a, link.reverse)):
            if end not in ports:
                continue
            port = numbers[(end, li)]
            ports[end].append(
                RouterPort(
                    router=end,
                    port=port,
                    mac=f"02:00:00:00:{index[end]:02x}:{port:02x}",
                    peer=peer,
                    peer_port=numbers.get((peer, li)),
                    out=out,
                    link=link,
                    link_index=li,
                )
            )
    return ports


def _next_ports(
    topo: Topology, ports: dict[str, list[RouterPort]], target: str
) -> dict[str, RouterPort]:
    """For every router that can reach `target` (the router a host hangs off), the port of
    its first hop on a shortest path (breadth first, lowest port first)."""
    dist = {target: 0}
    queue = deque([target])
    while queue:
        r = queue.popleft()
        for p in sorted(ports[r], key=lambda p: p.port):
            if p.peer in ports and p.peer not in dist:
                dist[p.peer] = dist[r] + 1
                queue.append(p.peer)
    out: dict[str, RouterPort] = {}
    for r, d in dist.items():
        if d == 0:
            continue
        for p in sorted(ports[r], key=lambda p: p.port):
            if p.peer in dist and dist[p.peer] == d - 1:
                out[r] = p
                break
    return out


def _scalar(value: str, at: yaml.Node) -> yaml.ScalarNode:
    return yaml.ScalarNode(_STR, value, at.start_mark, at.end_mark)


def _mapping(items: list[tuple[str, yaml.Node]], at: yaml.Node) -> yaml.MappingNode:
    pairs = [(_scalar(k, at), v) for k, v in items]
    return yaml.MappingNode(_MAP, pairs, at.start_mark, at.end_mark)


def _port_node(p: RouterPort) -> yaml.MappingNode:
    items: list[tuple[str, yaml.Node]] = [("mac", _scalar(p.mac, p.link.node))]
    nodes = dict(p.out.nodes)
    for key in _PORT_KEYS:
        if key in nodes:
            items.append((key, nodes[key]))
    if "queue_limit" not in nodes:
        items.append(("queue_limit", _scalar("100", p.link.node)))
    return _mapping(items, p.link.node)


def _topology_path(router: str, ports: list[RouterPort], path: str) -> str:
    """The controller's field path (`ports.2.rate`) as the topology file's."""
    m = re.match(r"^ports\.(\d+)(.*)$", path)
    if m:
        for p in ports:
            if p.port == int(m[1]):
                return f"links[{p.link_index}] ({router} -> {p.peer}){m[2]}"
    return f"routers.{router}.{path}"


def plan_routers(topo: Topology) -> list[RouterPlan]:
    ports = router_ports(topo)
    routes_to = {host: _next_ports(topo, ports, topo.host_link(host)[1]) for host in topo.hosts}
    plans = []
    for i, (name, settings) in enumerate(topo.routers.items(), start=1):
        at = topo.node
        router_id = str(settings["router_id"].value) if "router_id" in settings else f"10.255.0.{i}"
        hops: list[tuple[str, yaml.Node]] = []
        routes: list[tuple[str, yaml.Node]] = []
        for host in topo.hosts:
            _, attached = topo.host_link(host)
            if attached == name:
                port = next(p for p in ports[name] if p.peer == host)
                hop, mac = f"host_{host}", host_mac(topo, host)
            elif name in routes_to[host]:
                port = routes_to[host][name]
                hop = f"router_{port.peer}_p{port.port}"
                mac = next(q.mac for q in ports[port.peer] if q.port == port.peer_port)
            else:
                continue  # unreachable from this router: no route, packets are dropped
            if hop not in dict(hops):
                hops.append(
                    (
                        hop,
                        _mapping(
                            [("port", _scalar(str(port.port), at)), ("mac", _scalar(mac, at))],
                            at,
                        ),
                    )
                )
            address, _ = topo.host_address(host)
            prefix = address.rsplit(".", 1)[0] + ".0/24"
            routes.append((prefix, _scalar(hop, at)))
        top: list[tuple[str, yaml.Node]] = [
            ("router_id", settings.get("router_id", _scalar(router_id, at))),
        ]
        if "rbcc" in settings:
            top.append(("rbcc", settings["rbcc"]))
        top.append(("ports", _mapping([(str(p.port), _port_node(p)) for p in ports[name]], at)))
        top.append(("next_hops", _mapping(hops, at)))
        top.append(("routes", _mapping(routes, at)))
        try:
            config = load_config_node(_mapping(top, at), topo.filename)
        except ConfigError as e:
            raise ConfigError(
                e.location, _topology_path(name, ports[name], e.path), e.message
            ) from None
        plans.append(RouterPlan(name, i, router_id, tuple(ports[name]), config))
    return plans
