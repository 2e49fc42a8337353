"""The base class of every ratelab PTF test, and the reference model run in lockstep.

A test gets a fresh pipeline (pushed over P4Runtime, so tables, counters and
registers start empty), configures it through `ratelab_ctl` from a model
`RouterConfig`, sends frames with ptf.testutils and compares what comes out,
and the counters read back over P4Runtime, with what `ratelab_model.Router`
does with the same frames. Nothing here is specific to ratelab's switch: it is
standard P4Runtime and packets, so the same tests run against BMv2.

Test parameters (ptf --test-params, set by ptf_tests/run.py): grpc_addr,
device_id, json, p4info, target, plain_ports (unlimited ports), tail_port /
tail_pps (a slow port for tail drop), red_port / red_pps (a rate-limited port
for RED), queue_depth (the switch's own queue depth on those two ports).
"""

from __future__ import annotations

import itertools
import time
from dataclasses import replace
from decimal import Decimal
from typing import Any

import ptf
from ptf import testutils
from ptf.base_tests import BaseTest
from ratelab_ctl import Controller, ControllerConfig, SwitchConnection
from ratelab_ctl.configfile import PortSettings
from ratelab_model.config import (
    AqmConfig,
    NextHop,
    PortConfig,
    Route,
    RouterConfig,
    prefix_mask,
)
from ratelab_model.counters import PortCounters
from ratelab_model.packet import ip_to_int
from ratelab_model.router import PacketRecord, Router
from scapy.layers.l2 import Ether

GAUGES = ("last_q", "last_avg")
ROUTER_ID = ip_to_int("10.0.0.1")
_ELECTION = itertools.count(1)


def params() -> dict[str, Any]:
    p = testutils.test_params_get()
    missing = [k for k in ("grpc_addr", "json", "p4info") if k not in p]
    if missing:
        raise RuntimeError(
            f"test parameters {missing} missing: run the suite with ptf_tests/run.py"
        )
    return p


def port_mac(port: int) -> bytes:
    return bytes([2, 0, 0, 0, 0, port])


def hop_mac(port: int) -> bytes:
    return bytes([2, 0, 0, 0, 1, port])


def simple_config(
    ports: list[int],
    routes: dict[str, int],
    *,
    router_id: int = ROUTER_ID,
    capacity: dict[int, int] | None = None,
    rate_bps: dict[int, int] | None = None,
    queue_limit: dict[int, int] | None = None,
    aqm: dict[int, AqmConfig] | None = None,
    min_rate: int = 1500,
) -> RouterConfig:
    """Ports with MAC 02:00:00:00:00:<port>; each route "a.b.c.d/len" -> a port whose
    next hop has MAC 02:00:00:00:01:<port>."""
    capacity, rate_bps = capacity or {}, rate_bps or {}
    queue_limit, aqm = queue_limit or {}, aqm or {}
    port_cfgs = tuple(
        PortConfig(
            port=p,
            mac=port_mac(p),
            rate_bps=rate_bps.get(p, 0),
            queue_limit=queue_limit.get(p, 64),
            rbcc_capacity=capacity.get(p, 1_000_000),
            aqm=aqm.get(p, AqmConfig()),
        )
        for p in ports
    )
    hops = tuple(NextHop(p, p, hop_mac(p)) for p in ports)
    route_list = []
    for prefix, port in routes.items():
        addr, _, length = prefix.partition("/")
        n = int(length)
        route_list.append(Route(ip_to_int(addr) & prefix_mask(n), n, port))
    return RouterConfig(
        router_id=router_id,
        ports=port_cfgs,
        next_hops=hops,
        routes=tuple(route_list),
        min_rate=min_rate,
    )


def controller_config(router: RouterConfig, address: str, device_id: int) -> ControllerConfig:
    """Wrap a model configuration as the controller's (what a config file gives)."""
    ports = tuple(
        PortSettings(
            port=p.port,
            link_rate_bps=p.rate_bps,
            utilisation=Decimal("0.95"),
            aqm_name=p.aqm.mode,
        )
        for p in router.ports
    )
    return ControllerConfig(
        router=router,
        ports=ports,
        next_hop_names=tuple((f"hop{h.id}", h.id) for h in router.next_hops),
        device_id=device_id,
        address=address,
        filename="<ptf>",
    )


def counters_dict(c: PortCounters, gauges: bool) -> dict[str, int]:
    d = c.as_dict()
    if not gauges:
        for g in GAUGES:
            d.pop(g)
    return d


class ModelLockstep:
    """The reference model fed the same frames as the switch, with the wall-clock
    time since the test started as arrival time (what a live switch sees)."""

    def __init__(self, config: RouterConfig) -> None:
        self.router = Router(config)
        self.t0 = time.monotonic()

    def now_us(self) -> int:
        return int((time.monotonic() - self.t0) * 1e6)

    def process(self, port: int, frame: bytes, now_us: int | None = None) -> PacketRecord:
        return self.router.process_packet(port, frame, self.now_us() if now_us is None else now_us)

    def counters(self, ports: list[int] | None = None) -> dict[int, PortCounters]:
        wanted = sorted(self.router.counters) if ports is None else ports
        return {p: replace(self.router.counters[p]) for p in wanted}


class RouterTest(BaseTest):
    """One P4Runtime session per test; a fresh pipeline pushed in setUp."""

    def setUp(self) -> None:
        super().setUp()
        self.dataplane = ptf.dataplane_instance
        self.p = params()
        self.target: str = self.p.get("target", "ratelab")
        self.device_id = int(self.p.get("device_id", 0))
        # a fresh election id per test: the previous session's stream may still be
        # closing on the switch side when this one arbitrates
        self.conn = SwitchConnection(
            self.p["grpc_addr"], device_id=self.device_id, election_id=next(_ELECTION)
        ).open()
        self.addCleanup(self.conn.close)
        self.addCleanup(self.dataplane.flush)
        self.ctl = Controller(self.conn)
        self.ctl.push_pipeline(self.p["json"], self.p["p4info"])
        self.dataplane.flush()

    # -- configuration --------------------------------------------------------------

    def configure(self, router: RouterConfig) -> ModelLockstep:
        """Install `router` through the controller; returns the model to run beside it."""
        self.ctl.apply_config(controller_config(router, self.p["grpc_addr"], self.device_id))
        return ModelLockstep(router)

    # -- packets --------------------------------------------------------------------

    def send(self, port: int, frame: bytes) -> None:
        testutils.send_packet(self, port, frame)

    def next_frame(self, timeout: float | None = None) -> tuple[int, bytes] | None:
        """The next frame out of the switch on any port, or None after `timeout`."""
        result = testutils.dp_poll(self, timeout=timeout or ptf.ptfutils.default_timeout)
        if isinstance(result, self.dataplane.PollFailure):
            return None
        return int(result.port), bytes(result.packet)

    def expect_frame(self, port: int, frame: bytes, what: str = "") -> None:
        """The next frame on any port must be `frame` on `port` (exact bytes)."""
        got = self.next_frame()
        label = f" ({what})" if what else ""
        if got is None:
            self.fail(f"expected a frame on port {port}{label}, nothing came out")
        got_port, got_frame = got
        if (got_port, got_frame) != (port, frame):
            self.fail(
                f"expected on port {port}{label}:\n{Ether(frame).show2(dump=True)}\n"
                f"got on port {got_port}:\n{Ether(got_frame).show2(dump=True)}\n"
                f"expected {frame.hex()}\ngot      {got_frame.hex()}"
            )

    def expect_nothing(self) -> None:
        testutils.verify_no_other_packets(self)

    def check_packet(self, model: ModelLockstep, port: int, frame: bytes) -> PacketRecord:
        """Send one frame; what comes out must be what the model forwards (or nothing)."""
        record = model.process(port, frame)
        self.send(port, frame)
        if record.output is not None:
            self.expect_frame(record.output.port, record.output.frame, record.decision)
        return record

    # -- counters -------------------------------------------------------------------

    def read_counters(self, ports: list[int]) -> tuple[dict[int, dict[str, int]], bool]:
        snap = self.ctl.read_counters(ports)
        return {p: counters_dict(c, snap.gauges) for p, c in snap.ports.items()}, snap.gauges

    def assert_counters(
        self, expected: dict[int, PortCounters], timeout: float = 3.0, what: str = ""
    ) -> dict[int, dict[str, int]]:
        """Counters read over P4Runtime must reach `expected` (drops are counted with
        no packet to wait for, so poll until they agree or `timeout` passes)."""
        ports = sorted(expected)
        deadline = time.monotonic() + timeout
        while True:
            got, gauges = self.read_counters(ports)
            want = {p: counters_dict(c, gauges) for p, c in expected.items()}
            if got == want or time.monotonic() > deadline:
                break
            time.sleep(0.02)
        if got != want:
            lines = [
                f"port {p} {name}: switch {got[p][name]}, model {want[p][name]}"
                for p in ports
                for name in want[p]
                if got[p][name] != want[p][name]
            ]
            label = f" ({what})" if what else ""
            self.fail("counters differ from the model" + label + ":\n" + "\n".join(lines))
        return got
