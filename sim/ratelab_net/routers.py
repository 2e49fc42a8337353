"""From a topology to each router's configuration, as `ratelab-ctl` reads it.

Port numbers: a router's links in file order get ports 1, 2, ...; MACs are
02:00:00:00:<router>:<port> for router ports and 02:00:00:01:00:<host> for
hosts. Routes: every host's /24 (topology.HOST_NET) is routed along a
shortest path in router hops (ties: the lowest port). A link direction that
leaves a router becomes that port's rate, delay, queue limit, utilisation,
AQM and strict-priority queues; the configuration is built as YAML nodes that
reuse the topology file's own nodes, so the controller's validation reports
errors at their place in the topology file.

A priority rule may name flows (`priority: {flows: {web: 1}}`): each becomes
a rule for the flow's destination port (`flow_port`), the same in Mininet and
in the simulator (sim_scenario gives each simulated flow that port).
"""

from __future__ import annotations

import re
from collections import deque
from dataclasses import dataclass

import yaml
from ratelab_ctl.configfile import ConfigError, ControllerConfig, Location, load_config_node

from ratelab_net.topology import Direction, Link, Topology
from ratelab_net.traffic import TCP_BASE_PORT, UDP_BASE_PORT

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


def flow_port(topo: Topology, index: int) -> int | None:
    """The destination port of flow `index`, in Mininet and in the simulator
    (None: a ping or rbcc flow, which has no TCP/UDP port). A port rule matches
    it as source or destination, so both directions of the flow are classified."""
    flow = topo.flows[index]
    if flow.transport not in ("tcp", "udp"):
        return None
    return (TCP_BASE_PORT if flow.transport == "tcp" else UDP_BASE_PORT) + index


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


def _flow_rules(node: yaml.Node, port: int, topo: Topology) -> yaml.Node:
    """A direction's `priority` with its `flows` rules turned into `ports` rules
    (new nodes: the topology's own are left as they are for the next plan)."""
    if not isinstance(node, yaml.MappingNode):
        return node  # the controller's loader reports it
    rules = [(k, v) for k, v in node.value if getattr(k, "value", None) != "flows"]
    flows = [v for k, v in node.value if getattr(k, "value", None) == "flows"]
    if not flows:
        return node
    path = f"ports.{port}.priority.flows"
    if not isinstance(flows[0], yaml.MappingNode):
        raise ConfigError(_loc(flows[0]), path, "expected a mapping of flow name to priority")
    index = {f.name: i for i, f in enumerate(topo.flows)}
    generated: list[tuple[yaml.Node, yaml.Node]] = []
    for name_node, level in flows[0].value:
        name = str(getattr(name_node, "value", ""))
        if name not in index:
            known = ", ".join(index) or "none"
            raise ConfigError(
                _loc(name_node), f"{path}.{name}", f"expected a flow's name ({known}), got {name!r}"
            )
        number = flow_port(topo, index[name])
        if number is None:
            kind = topo.flows[index[name]].transport
            other = "icmp" if kind == "ping" else "rbcc"
            raise ConfigError(
                _loc(name_node),
                f"{path}.{name}",
                f"a {kind} flow has no TCP/UDP port: give protocols: {{{other}: N}} instead",
            )
        generated.append((_scalar(str(number), name_node), level))
    given = [v for k, v in rules if getattr(k, "value", None) == "ports"]
    rules = [(k, v) for k, v in rules if getattr(k, "value", None) != "ports"]
    if given and isinstance(given[0], yaml.MappingNode):
        generated = [*given[0].value, *generated]
    elif given:
        return node  # `ports` is not a mapping: the controller's loader reports it
    ports = yaml.MappingNode(_MAP, generated, flows[0].start_mark, flows[0].end_mark)
    rules.append((_scalar("ports", flows[0]), ports))
    return yaml.MappingNode(_MAP, rules, node.start_mark, node.end_mark)


def _loc(node: yaml.Node) -> Location:
    m = node.start_mark
    return Location(m.name, m.line + 1, m.column + 1)


def _port_node(p: RouterPort, topo: Topology) -> yaml.MappingNode:
    items: list[tuple[str, yaml.Node]] = [("mac", _scalar(p.mac, p.link.node))]
    nodes = dict(p.out.nodes)
    if "priority" in nodes:
        nodes["priority"] = _flow_rules(nodes["priority"], p.port, topo)
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
    """Each router's configuration, the same for Mininet and the simulator."""
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
        try:
            port_nodes = [(str(p.port), _port_node(p, topo)) for p in ports[name]]
        except ConfigError as e:
            raise ConfigError(
                e.location, _topology_path(name, ports[name], e.path), e.message
            ) from None
        top.append(("ports", _mapping(port_nodes, at)))
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
