"""The router: forwarding, then queue admission (FIFO or RED), then RBCC for
admitted RBCC packets, all decided when the packet arrives (docs/ROUTER_MODEL.md
"Pipeline"). A dropped packet never touches the ABT.
"""

from __future__ import annotations

from dataclasses import dataclass

from ratelab_model import red
from ratelab_model.config import RouterConfig
from ratelab_model.counters import PortCounters
from ratelab_model.drain import DrainQueue
from ratelab_model.forwarding import ForwardDrop, RoutingTable, parse_ipv4, rewrite
from ratelab_model.packet import RBCC_HEADER_LEN, RbccHeader
from ratelab_model.rbcc import Abt

FORWARDED = "forwarded"
QUEUE_FULL = "queue_full"


@dataclass(frozen=True)
class Output:
    port: int
    frame: bytes
    t_deq_us: int  # when the packet starts transmission on `port`


@dataclass(frozen=True)
class PacketRecord:
    """What the router did with one input frame; AQM checks read q and avg from here."""

    ingress_port: int
    time_us: int
    decision: str  # "forwarded", a ForwardDrop value, "queue_full", "red_early", "red_forced"
    egress_port: int | None = None
    q: int | None = None  # queue length the arrival saw
    avg: int | None = None  # RED avg after this arrival's update (Q16.16)
    red_branch: red.RedBranch | None = None  # the RED rule that decided (RED ports)
    rbcc: str | None = None  # "hit", "update" or "collision" for admitted RBCC packets
    share: int | None = None  # the fair share RBCC stamped with
    output: Output | None = None


class _EgressPort:
    """Per-port queue state: drain schedule plus RED registers."""

    def __init__(self, config: RouterConfig, number: int) -> None:
        port = config.port(number)
        self.limit = port.queue_limit
        self.drain = DrainQueue(port.rate_bps)
        self.red: red.RedInstalled | None = None
        self.decay: tuple[int, ...] = ()
        self.red_state = red.RedState()
        if port.aqm.mode == "red":
            self.red = red.install(port.aqm, port.rate_bps)
            self.decay = red.decay_table(port.aqm.w_q, config.decay_len)
            self.red_state.rng = self.red.seed

    def admission(self, now_us: int) -> tuple[int, str, red.RedBranch | None]:
        """AQM.md: RED first (if enabled), then the queue limit.
        Returns (q, decision, the RED rule that applied)."""
        q = self.drain.length_at(now_us)
        branch = None
        if self.red is not None:
            red.update_avg(
                self.red_state, self.red, self.decay, q, now_us - self.drain.idle_since_us
            )
            branch = red.decide(self.red_state, self.red)
            if branch.decision is not red.RedDecision.ADMIT:
                return q, branch.decision.value, branch
        if q >= self.limit:
            return q, QUEUE_FULL, branch
        return q, FORWARDED, branch


class Router:
    def __init__(self, config: RouterConfig) -> None:
        self.config = config
        self.counters = {p.port: PortCounters() for p in config.ports}
        self._routes = RoutingTable(config.routes, config.next_hops)
        self._mac = {p.port: p.mac for p in config.ports}
        self._egress = {p.port: _EgressPort(config, p.port) for p in config.ports}
        self.abt = Abt(
            config.abt_slots,
            config.idle_timeout_us,
            config.router_id,
            config.min_rate,
            {p.port: p.rbcc_capacity for p in config.ports},
        )
        self._now_us = 0

    def process(self, port: int, frame: bytes, now_us: int) -> list[Output]:
        record = self.process_packet(port, frame, now_us)
        return [] if record.output is None else [record.output]

    def red_avg(self, port: int) -> int:
        return self._egress[port].red_state.avg

    def process_packet(self, port: int, frame: bytes, now_us: int) -> PacketRecord:
        if port not in self.counters:
            raise ValueError(f"frame arrived on unconfigured port {port}")
        if now_us < self._now_us:
            raise ValueError(f"time went backwards: {now_us} us after {self._now_us} us")
        self._now_us = now_us
        ingress = self.counters[port]
        ingress.packets_in += 1

        # 1. Forwarding: checks and route lookup; drops counted at the ingress port.
        view = parse_ipv4(frame)
        hop = None if isinstance(view, ForwardDrop) else self._routes.lookup(view.dst)
        if isinstance(view, ForwardDrop) or hop is None:
            cause = view if isinstance(view, ForwardDrop) else ForwardDrop.NO_ROUTE
            ingress.count_drop(cause.value)
            return PacketRecord(port, now_us, cause.value)

        # 2. Queue admission at the egress port.
        egress = self._egress[hop.port]
        out_count = self.counters[hop.port]
        q, decision, branch = egress.admission(now_us)
        avg = egress.red_state.avg
        out_count.last_q, out_count.last_avg = q, avg
        if decision != FORWARDED:
            out_count.count_drop(decision)
            return PacketRecord(
                port, now_us, decision, egress_port=hop.port, q=q, avg=avg, red_branch=branch
            )

        # 3. RBCC, for admitted RBCC packets only.
        out = rewrite(frame, view.header_len, self._mac[hop.port], hop.mac)
        rbcc_outcome = share = None
        if view.rbcc_offset is not None:
            start, end = view.rbcc_offset, view.rbcc_offset + RBCC_HEADER_LEN
            result = self.abt.process(
                hop.port,
                view.src,
                view.dst,
                RbccHeader.decode(bytes(out[start:end])),
                now_us,
                self.counters,
            )
            out[start:end] = result.header.encode()
            rbcc_outcome, share = result.outcome.value, result.share

        # 4. Join the queue.
        t_deq = egress.drain.admit(now_us, len(out))
        out_count.packets_out += 1
        out_count.bytes_out += len(out)
        output = Output(hop.port, bytes(out), t_deq)
        return PacketRecord(
            port,
            now_us,
            FORWARDED,
            egress_port=hop.port,
            q=q,
            avg=avg,
            red_branch=branch,
            rbcc=rbcc_outcome,
            share=share,
            output=output,
        )
