"""The Mininet network of a topology: hosts in namespaces, each router one
`ratelab-switch` (or `simple_switch_grpc`) process, no Open vSwitch and no
OpenFlow controller.

Link emulation (docs/NET.md): the direction leaving a router is the switch
port's drain rate, queue limit and AQM. The direction leaving a host is shaped
by a tbf qdisc on the host's interface (rate and a packet limit). Delays:
ratelab-switch delays the direction leaving each router port itself
(`--link-delay`); as a host has no netem on this kernel, the delay of its
direction is added to the router's direction toward it: the round trip is the
topology's, the one-way delay toward the router is not. BMv2 cannot delay:
there every direction's delay is a netem qdisc (`Network.netem`, planned by
delays.py), where the kernel has netem.
"""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ratelab_ctl import units
from ratelab_ctl.configfile import ConfigError, Location
from ratelab_ctl.priority import priority_queues
from ratelab_ctl.switch_options import switch_options
from ratelab_sim.switch import QueueSetting, SwitchError, SwitchProcess

from ratelab_net.delays import (
    HOST_TBF_HANDLE,
    NetemQdisc,
    bmv2_pps,
    host_iface,
    router_iface,
)
from ratelab_net.routers import RouterPlan, host_mac
from ratelab_net.topology import Topology

DEBIAN_MININET = "/usr/lib/python3/dist-packages"
MTU_FRAME = 1514  # bytes of the largest Ethernet frame (no FCS), for byte limits


class NetError(Exception):
    """Building or running the network failed; str() is one line (plus a log tail)."""


def import_mininet() -> Any:
    """Debian's Mininet (python3-mininet's files); appended to sys.path, so the
    project's own pinned packages win wherever both have a module."""
    try:
        import mininet.net
    except ImportError:
        if DEBIAN_MININET not in sys.path:
            sys.path.append(DEBIAN_MININET)
        try:
            import mininet.net
        except ImportError:
            raise NetError("Mininet is not installed (apt-get install mininet)") from None
    import mininet

    return mininet


def _delay_us(text: str | None) -> int:
    return 0 if text is None else units.parse_delay_us(text)


def _port_times_us(topo: Topology, plan: RouterPlan, key: str) -> dict[int, int]:
    """Per router port, a time setting (`delay`, `jitter`) its switch port adds, in
    µs: its own direction's plus, toward a host, the host's direction's (a host
    has no netem here), so the round trip's is the topology's."""
    out: dict[int, int] = {}
    for p in plan.ports:
        total = _delay_us(p.out.text(key))
        if p.peer in topo.hosts:
            back = p.link.forward if p.link.a == p.peer else p.link.reverse
            total += _delay_us(back.text(key))
        if total:
            out[p.port] = total
    return out


def link_delays(topo: Topology, plan: RouterPlan) -> dict[int, int]:
    """Per router port, the propagation delay its switch port adds, in µs."""
    return _port_times_us(topo, plan, "delay")


def link_jitters(topo: Topology, plan: RouterPlan) -> dict[int, int]:
    """Per router port, the largest random extra delay its switch port adds, in µs
    (a host's direction's is one draw up to the sum with the router's)."""
    return _port_times_us(topo, plan, "jitter")


def mininet_jitter_error(topo: Topology, target: str) -> ConfigError | None:
    """Why Mininet cannot add a link's jitter (None: it can): ratelab's switch adds
    it to its ports' delay lines (--link-jitter); BMv2 cannot."""
    if target == "ratelab":
        return None
    for i, link in enumerate(topo.links):
        for x, y, out in ((link.a, link.b, link.forward), (link.b, link.a, link.reverse)):
            node = out.nodes.get("jitter")
            if node is None:
                continue
            mark = node.start_mark
            where = Location(mark.name, mark.line + 1, mark.column + 1)
            why = "BMv2 cannot add jitter: use --target ratelab, or --backend sim"
            return ConfigError(where, f"links[{i}] ({x} -> {y}).jitter", why)
    return None


def mininet_trace_error(topo: Topology, target: str) -> ConfigError | None:
    """Why Mininet cannot run a link's trace (None: it can). ratelab's switch drains
    a router port by its trace (--port-trace); a host's egress is a kernel qdisc with
    a rate only, and BMv2 has no trace-driven ports."""
    for i, link in enumerate(topo.links):
        for x, y, out in ((link.a, link.b, link.forward), (link.b, link.a, link.reverse)):
            node = out.nodes.get("trace")
            if out.trace is None or node is None:
                continue
            if x in topo.hosts:
                why = (
                    f"a host's egress cannot follow a trace in Mininet (host {x!r} shapes "
                    "with a rate only): put the trace on the router's side, or use "
                    "--backend sim"
                )
            elif target != "ratelab":
                why = "BMv2 has no trace-driven ports: use --target ratelab"
            else:
                continue
            mark = node.start_mark
            where = Location(mark.name, mark.line + 1, mark.column + 1)
            return ConfigError(where, f"links[{i}] ({x} -> {y}).trace", why)
    return None


def router_traces(plan: RouterPlan) -> dict[int, str]:
    """Per router port, the trace file its switch port drains by (--port-trace)."""
    return {p.port: p.out.trace.path for p in plan.ports if p.out.trace is not None}


@dataclass
class HostShaping:
    rate_bps: int | None
    limit_packets: int


def host_shaping(topo: Topology, host: str) -> HostShaping:
    link, _ = topo.host_link(host)
    out = link.forward if link.a == host else link.reverse
    rate = out.text("rate")
    limit = out.text("queue_limit")
    rate_bps = units.parse_rate(rate) if rate else None
    packets = int(limit) if limit and limit.isdigit() else 100
    return HostShaping(rate_bps or None, packets)


@dataclass
class Network:
    """A built and started network; `stop()` takes every piece down again."""

    topo: Topology
    plans: list[RouterPlan]
    json_path: Path
    log_dir: Path
    target: str = "ratelab"
    netem: list[NetemQdisc] = field(default_factory=list)  # delays the switch cannot add
    net: Any = None
    switches: dict[str, SwitchProcess] = field(default_factory=dict)
    host_ifaces: dict[str, str] = field(default_factory=dict)

    def start(self) -> None:
        import_mininet()
        from mininet.link import Link
        from mininet.net import Mininet
        from mininet.node import Host

        self._check_leftovers()
        self.net = Mininet(
            topo=None,
            controller=None,
            build=False,
            autoSetMacs=False,
            autoStaticArp=False,
            waitConnected=False,
            link=Link,
        )
        router_class = _router_class()
        for host in self.topo.hosts:
            self.net.addHost(host, cls=Host, ip=None)
        for plan in self.plans:
            self.net.addSwitch(plan.name, cls=router_class, dpid=f"{plan.index:x}")
        for plan in self.plans:
            for p in plan.ports:
                if p.peer in self.topo.hosts:
                    self.net.addLink(
                        plan.name, p.peer, port1=p.port, port2=0, intfName2=host_iface(p.peer)
                    )
                elif plan.name < p.peer:  # router-router links once, from the first name
                    self.net.addLink(plan.name, p.peer, port1=p.port, port2=p.peer_port)
        self.net.build()
        for host in self.topo.hosts:
            self._configure_host(host)
        for qdisc in self.netem:  # after the hosts' tbf: a host's netem hangs below it
            self._add_netem(qdisc)
        for plan in self.plans:
            self._start_router(plan)

    def _add_netem(self, qdisc: NetemQdisc) -> None:
        cmd = qdisc.command()
        if qdisc.host is None:
            _root(cmd)
            return
        self._host_run(qdisc.host, cmd)

    def _host_run(self, name: str, cmd: str) -> None:
        """`cmd` in host `name`'s namespace; NetError with what it said if it fails."""
        out = self.net.get(name).cmd(cmd + " 2>&1; echo rc=$?").strip()
        if not out.endswith("rc=0"):
            said = " ".join(out.rsplit("rc=", 1)[0].split())
            raise NetError(f"host {name}: `{cmd}` failed" + (f": {said}" if said else ""))

    def _check_leftovers(self) -> None:
        names = [router_iface(p.name, q.port) for p in self.plans for q in p.ports]
        shown = subprocess.run(["ip", "-o", "link", "show"], capture_output=True, text=True)
        taken = [n for n in names if f" {n}:" in shown.stdout or f" {n}@" in shown.stdout]
        if taken:
            raise NetError(
                f"interface {taken[0]} exists (left by an earlier run?): "
                "remove it with `ratelab-net clean`"
            )

    def _configure_host(self, name: str) -> None:
        iface = host_iface(name)
        self.host_ifaces[name] = iface
        address, gateway = self.topo.host_address(name)
        _, router = self.topo.host_link(name)
        plan = next(p for p in self.plans if p.name == router)
        port = next(p for p in plan.ports if p.peer == name)
        commands = [
            "sysctl -qw net.ipv6.conf.all.disable_ipv6=1",
            "sysctl -qw net.ipv6.conf.default.disable_ipv6=1",
            # Segments to a ratelab-stack flow's address (Topology.stack_address) reach
            # this kernel too: not its address and no forwarding, so it drops them
            # silently (no RST, no ICMP redirect) and the stack's raw socket has them.
            "sysctl -qw net.ipv4.ip_forward=0",
            f"ip link set dev {iface} address {host_mac(self.topo, name)}",
            f"ip addr add {address}/24 dev {iface}",
            f"ip route add default via {gateway} dev {iface}",
            f"ip neigh replace {gateway} lladdr {port.mac} dev {iface} nud permanent",
            f"ethtool -K {iface} rx off tx off sg off tso off gso off gro off",
        ]
        shaping = host_shaping(self.topo, name)
        if shaping.rate_bps:
            burst = max(2 * MTU_FRAME, shaping.rate_bps // 8 // 250)  # one 4 ms tick of data
            limit = shaping.limit_packets * MTU_FRAME
            commands.append(
                f"tc qdisc replace dev {iface} root handle {HOST_TBF_HANDLE} tbf "
                f"rate {shaping.rate_bps}bit "
                f"burst {burst} limit {limit}"
            )
        for cmd in commands:
            self._host_run(name, cmd)
        peer_iface = router_iface(router, port.port)
        _root(f"ethtool -K {peer_iface} rx off tx off sg off tso off gso off gro off")
        _root(f"sysctl -qw net.ipv6.conf.{peer_iface}.disable_ipv6=1", check=False)

    def _start_router(self, plan: RouterPlan) -> None:
        ifaces = {p.port: router_iface(plan.name, p.port) for p in plan.ports}
        for p in plan.ports:
            if p.peer not in self.topo.hosts:
                _root(f"ethtool -K {ifaces[p.port]} rx off tx off sg off tso off gso off gro off")
                _root(f"sysctl -qw net.ipv6.conf.{ifaces[p.port]}.disable_ipv6=1", check=False)
        extra = list(switch_options(plan.config.router, priority_queues(plan.config)))
        for port, delay in sorted(link_delays(self.topo, plan).items()):
            extra += ["--link-delay", f"{port}={delay}us"]
        for port, jitter in sorted(link_jitters(self.topo, plan).items()):
            extra += ["--link-jitter", f"{port}={jitter}us"]
        for port, trace in sorted(router_traces(plan).items()):
            extra += ["--port-trace", f"{port}={trace}"]
        # BMv2 drains in packets/s: a bit rate becomes full-size packets per second.
        queues = [
            QueueSetting(
                p.port,
                pps=bmv2_pps(p.rate_bps),
                depth=max(64, 2 * p.queue_limit),
            )
            for p in plan.config.router.ports
        ]
        proc = SwitchProcess(
            self.json_path,
            ifaces,
            self.log_dir / f"{plan.name}.log",
            target=self.target,
            extra_args=extra if self.target == "ratelab" else [],
            queues=queues if self.target == "bmv2" else [],
        )
        try:
            proc.start()
        except SwitchError as e:
            raise NetError(f"router {plan.name}: {e}") from None
        self.switches[plan.name] = proc

    def host(self, name: str) -> Any:
        return self.net.get(name)

    def interface_counters(self) -> dict[str, tuple[int, int]]:
        """(tx_packets, rx_packets) of every host's interface."""
        out = {}
        for name, iface in self.host_ifaces.items():
            text = self.host(name).cmd(
                f"cat /sys/class/net/{iface}/statistics/tx_packets "
                f"/sys/class/net/{iface}/statistics/rx_packets"
            )
            tx, rx = (int(v) for v in text.split()[:2])
            out[name] = (tx, rx)
        return out

    def stop(self) -> None:
        for proc in self.switches.values():
            proc.stop()
        self.switches.clear()
        if self.net is not None:
            net, self.net = self.net, None
            net.stop()


def _router_class() -> type:
    """A Mininet switch for which Mininet only creates the interfaces (in the root
    namespace); `Network` starts and stops the router process itself."""
    from mininet.node import Switch

    class RouterSwitch(Switch):  # type: ignore[misc]  # Mininet has no type hints
        def start(self, controllers: list[Any]) -> None:
            pass

    return RouterSwitch


def _root(cmd: str, check: bool = True) -> None:
    proc = subprocess.run(cmd.split(), capture_output=True, text=True)
    if check and proc.returncode != 0:
        raise NetError(f"`{cmd}` failed: {(proc.stderr or proc.stdout).strip()}")
