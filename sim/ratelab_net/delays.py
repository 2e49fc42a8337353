"""Link delays where the router switch cannot delay (BMv2's simple_switch_grpc has
no `--link-delay`): netem qdiscs as Mininet's TCLink adds them, or a refusal.

Each direction of a link is delayed on the interface it leaves from, after that
direction's queue, so every one-way delay is the topology's:

- a direction leaving a router: BMv2 drains its egress queue at the port's
  rate onto the router's interface, whose root qdisc is netem: the frame is
  held there for the delay after the switch's queue released it;
- a direction leaving a host: the host's interface has a tbf root qdisc for
  the rate (handle 5:) and netem as its child (parent 5:1), as TCLink does.
  tbf then drains netem, so the delay comes before the rate there; for a FIFO
  that only moves the same delay in front of the queue (every frame leaves at
  the same time), but the host's buffer is netem's limit, which also holds
  the frames still in their delay. Without a rate, netem is the root qdisc.

netem's limit (packets it holds at once): behind a router port, the frames of
two delays at the rate BMv2 drains the port (it drains in packets per second,
whatever their size), at least 1000 (netem's default), so netem itself never
drops there. Below a host's tbf, the host's queue limit plus the full-size
frames of one delay at the rate, so the host's buffer stays about its queue
limit. A direction without a rate: sized for 1,000,000 packets per second.
"""

from __future__ import annotations

import math
import subprocess
from dataclasses import dataclass

from ratelab_ctl import units

from ratelab_net.routers import RouterPlan
from ratelab_net.topology import Direction, Link, Topology

NETEM_HANDLE = "10:"
HOST_TBF_HANDLE = "5:"  # the host's tbf root; netem hangs below its class 5:1
NETEM_MIN_LIMIT = 1000  # netem's own default limit
BMV2_PACKET_BYTES = 1500  # BMv2 drains in packets/s: a bit rate in full-size packets
UNLIMITED_PPS = 1_000_000  # a port or host without a rate: netem sized for this
MTU_FRAME = 1514  # bytes of the largest Ethernet frame (no FCS)
NETEM_PROBE = ("tc", "qdisc", "add", "dev", "lo", "root", "netem", "delay", "1ms")


class NetemProbeError(Exception):
    """Could not tell whether the kernel has netem; one line."""


@dataclass(frozen=True)
class NetemQdisc:
    """One netem qdisc: the delay of one link direction."""

    iface: str
    host: str | None  # the host whose namespace holds `iface`; None: the root namespace
    direction: str  # "a -> b", the link direction it delays
    delay_us: int
    limit: int  # packets netem holds at once
    parent: str | None  # "5:1": below the host's tbf; None: the interface's root qdisc

    def command(self) -> str:
        where = f"parent {self.parent}" if self.parent else "root"
        return (
            f"tc qdisc add dev {self.iface} {where} handle {NETEM_HANDLE} netem "
            f"delay {self.delay_us}us limit {self.limit}"
        )


def router_iface(router: str, port: int) -> str:
    return f"{router}-eth{port}"


def host_iface(host: str) -> str:
    return f"{host}-eth0"


def bmv2_pps(rate_bps: int | None) -> int | None:
    """The packets per second BMv2 drains a port of `rate_bps` at (None: unlimited)."""
    return max(1, rate_bps // (8 * BMV2_PACKET_BYTES)) if rate_bps else None


def _delay_us(direction: Direction) -> int:
    text = direction.text("delay")
    return 0 if text is None else units.parse_delay_us(text)


def _frames(pps: float, delay_us: int) -> int:
    """Frames sent in one delay at `pps`."""
    return math.ceil(pps * delay_us / 1e6)


def plan_netem(topo: Topology, plans: list[RouterPlan]) -> list[NetemQdisc]:
    """The netem qdiscs that give every link direction with a delay its delay, with
    the switch (BMv2) adding none: routers' ports first, then hosts."""
    out: list[NetemQdisc] = []
    for plan in plans:
        rates = {c.port: c.rate_bps for c in plan.config.router.ports}
        for p in plan.ports:
            delay = _delay_us(p.out)
            if not delay:
                continue
            pps = bmv2_pps(rates.get(p.port)) or UNLIMITED_PPS
            out.append(
                NetemQdisc(
                    router_iface(plan.name, p.port),
                    None,
                    f"{plan.name} -> {p.peer}",
                    delay,
                    max(NETEM_MIN_LIMIT, 2 * _frames(pps, delay)),
                    None,
                )
            )
    for host in topo.hosts:
        link, router = topo.host_link(host)
        direction = link.forward if link.a == host else link.reverse
        delay = _delay_us(direction)
        if not delay:
            continue
        rate_text = direction.text("rate")
        rate_bps = units.parse_rate(rate_text) if rate_text else 0
        if rate_bps:  # below the host's tbf; the queue limit as network.host_shaping reads it
            queue = direction.text("queue_limit")
            packets = int(queue) if queue and queue.isdigit() else 100
            limit = packets + _frames(rate_bps / (8 * MTU_FRAME), delay)
            parent: str | None = f"{HOST_TBF_HANDLE}1"
        else:
            limit = max(NETEM_MIN_LIMIT, 2 * _frames(UNLIMITED_PPS, delay))
            parent = None
        out.append(NetemQdisc(host_iface(host), host, f"{host} -> {router}", delay, limit, parent))
    return out


@dataclass(frozen=True)
class DelayedLink:
    index: int  # its place in the file's `links`
    link: Link
    forward_us: int
    reverse_us: int

    @property
    def name(self) -> str:
        return f"{self.link.a}-{self.link.b}"

    def delay_text(self) -> str:
        """The link's delay as the topology gives it: one value, or one per direction."""
        fwd, rev = self.link.forward.text("delay"), self.link.reverse.text("delay")
        if self.forward_us == self.reverse_us:
            return str(fwd)
        a, b = self.link.a, self.link.b
        return f"{fwd or 0} ({a} -> {b}), {rev or 0} ({b} -> {a})"


def delayed_links(topo: Topology) -> list[DelayedLink]:
    """The links with a delay in either direction, in file order."""
    out = []
    for i, link in enumerate(topo.links):
        fwd, rev = _delay_us(link.forward), _delay_us(link.reverse)
        if fwd or rev:
            out.append(DelayedLink(i, link, fwd, rev))
    return out


def refusal(links: list[DelayedLink]) -> str:
    """The one-line error for a run that would lose these links' delays."""
    first = links[0]
    more = f" (and {len(links) - 1} more link(s))" if len(links) > 1 else ""
    return (
        f"link {first.name} (links[{first.index}]) has delay {first.delay_text()}{more} but "
        "the bmv2 target cannot delay and this kernel has no netem; pass --allow-no-delay "
        "to run without delays"
    )


def ignored_note(links: list[DelayedLink]) -> str:
    """The report's top line when a run goes on without these links' delays."""
    names = ", ".join(f"{d.name} ({d.delay_text()})" for d in links)
    return (
        f"delays ignored on links {names}: the bmv2 target cannot delay and this kernel "
        "has no netem (--allow-no-delay); round trips and queues are not the topology's"
    )


def kernel_has_netem() -> bool:
    """Whether this kernel offers the netem qdisc: one added to the loopback of a
    throwaway network namespace (`unshare --net`; gone when tc exits). Needs root."""
    try:
        proc = subprocess.run(
            ["unshare", "--net", *NETEM_PROBE],
            capture_output=True,
            text=True,
            timeout=30,
        )
    except (OSError, subprocess.TimeoutExpired) as e:
        raise NetemProbeError(f"cannot tell whether this kernel has netem: {e}") from None
    if proc.returncode == 0:
        return True
    said = (proc.stderr or proc.stdout).strip()
    # iproute2 with extended acks says "Specified qdisc kind is unknown"; older
    # ones pass the kernel's ENOENT on ("No such file or directory").
    if "qdisc kind is unknown" in said or "RTNETLINK answers: No such file or directory" in said:
        return False
    line = said.splitlines()[-1] if said else f"exit status {proc.returncode}"
    raise NetemProbeError(f"cannot tell whether this kernel has netem: {line}")
