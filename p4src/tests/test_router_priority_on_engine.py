"""router.p4's strict-priority queues on ratelab's engine: the classification
tables set standard_metadata.priority (and with it the switch's queue), each
queue is admitted against its own count, and a port without rules is one FIFO
as before. Configured with the controller's entries (`ratelab_ctl.priority`)
and the switch's own `--priority-queues` option (`ratelab_switch.options`).
"""

from __future__ import annotations

import struct

import pytest
from engine_router import compile_router, install_entries
from ratelab_ctl.configfile import ControllerConfig, parse_config
from ratelab_ctl.priority import config_entries, priority_queues
from ratelab_ctl.switch_options import switch_options
from ratelab_model.packet import ipv4_frame

ratelab_engine = pytest.importorskip("ratelab_engine")

MAX_PORTS = 64  # router.p4's default: queue q of port p is register index p + 64 q
IN, OUT = 1, 3
SENDER, RECEIVER = 0x0A000101, 0x0A000301  # 10.0.1.1, 10.0.3.1
ICMP, TCP, UDP = 1, 6, 17
BULK_PORT = 5001

CONFIG = """
router_id: 10.0.0.1
ports:
  1: {mac: 02:00:00:00:00:01, rate: 1gbit, queue_limit: 64}
  3:
    mac: 02:00:00:00:00:03
    rate: 1mbit
    queue_limit: 5
    priority_queues: 2
    priority: {protocols: {icmp: 1}, ports: {80: 1}, dscp: {46: 1}}
next_hops:
  sender: {port: 1, mac: 02:00:00:00:01:01}
  receiver: {port: 3, mac: 02:00:00:00:01:03}
routes:
  10.0.1.0/24: sender
  10.0.3.0/24: receiver
"""


@pytest.fixture(scope="module")
def router_json(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    return compile_router(tmp_path_factory.mktemp("router"))


def configured(json: bytes, cfg: ControllerConfig, queues: dict[int, int]) -> object:
    engine = ratelab_engine.Switch(json)
    install(engine, cfg)
    for port, n in queues.items():
        engine.set_priority_queues(port, n)
    return engine


def install(engine: object, cfg: ControllerConfig) -> None:
    install_entries(engine, config_entries(cfg))
    for port in cfg.router.ports:
        engine.set_queue_depth(port.port, 4096)  # type: ignore[attr-defined]
        engine.set_port_rate(port.port, "bps", port.rate_bps)  # type: ignore[attr-defined]


def l4(protocol: int, src_port: int, dst_port: int, size: int = 200) -> bytes:
    return ipv4_frame(
        SENDER, RECEIVER, protocol, struct.pack("!HH", src_port, dst_port) + bytes(size)
    )


def ping() -> bytes:
    return ipv4_frame(SENDER, RECEIVER, ICMP, bytes([8, 0, 0, 0]) + bytes(60))


def order_out(engine: object, frames: list[bytes]) -> list[int]:
    """Sends the frames at once; the indices of those that left, in the order they left."""
    out = engine.process([(IN, f) for f in frames], 1_000)  # type: ignore[attr-defined]
    out += engine.poll(1 << 40)  # type: ignore[attr-defined]
    tags = [f[18:20] for f in frames]
    return [tags.index(bytes(data)[18:20]) for port, data, _ in out if port == OUT]


def tagged(frame: bytes, tag: int) -> bytes:
    """`frame` with `tag` as its IPv4 identification (which the router leaves alone)."""
    ident = struct.pack("!H", tag)
    head = bytearray(frame)
    head[18:20] = ident
    # fix the IPv4 checksum for the new identification
    head[24:26] = b"\0\0"
    words = struct.unpack("!10H", bytes(head[14:34]))
    total = sum(words)
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    head[24:26] = struct.pack("!H", ~total & 0xFFFF)
    return bytes(head)


def config() -> ControllerConfig:
    return parse_config(CONFIG, "priority.yaml")


def test_a_ping_overtakes_queued_bulk_with_two_queues(router_json: bytes) -> None:
    cfg = config()
    assert priority_queues(cfg) == {OUT: 2}
    frames = [tagged(l4(UDP, 40000, BULK_PORT), i) for i in range(4)] + [tagged(ping(), 99)]
    engine = configured(router_json, cfg, priority_queues(cfg))
    # the first bulk packet is on the wire at once; the ping leaves next
    assert order_out(engine, frames) == [0, 4, 1, 2, 3]


def test_the_switch_started_with_the_controllers_options_has_the_queues(
    router_json: bytes,
) -> None:
    """`ratelab-ctl switch-args` -> `ratelab-switch --priority-queues 3=2` -> the engine."""
    from ratelab_switch.engine_binding import open_engine
    from ratelab_switch.options import parse_options

    cfg = config()
    args = switch_options(cfg.router, priority_queues(cfg))
    assert args[-2:] == ["--priority-queues", "3=2"]
    switch = open_engine(parse_options(["--no-p4", *args]))
    switch.load_config(router_json)
    install(switch.switch, cfg)
    frames = [tagged(l4(UDP, 40000, BULK_PORT), i) for i in range(4)] + [tagged(ping(), 99)]
    assert order_out(switch.switch, frames) == [0, 4, 1, 2, 3]


def test_one_fifo_without_the_switch_option(router_json: bytes) -> None:
    frames = [tagged(l4(UDP, 40000, BULK_PORT), i) for i in range(4)] + [tagged(ping(), 99)]
    engine = configured(router_json, config(), {})
    assert order_out(engine, frames) == [0, 1, 2, 3, 4]


@pytest.mark.parametrize(
    ("frame", "queue"),
    [
        (ping(), 1),
        (l4(TCP, 80, 40000), 1),  # a web server's data: source port 80
        (l4(TCP, 40000, 80), 1),  # and the client's ACKs: destination port 80
        (l4(UDP, 40000, 80), 1),
        (l4(TCP, 40000, BULK_PORT), 0),
        (l4(UDP, 81, 79), 0),
        (ipv4_frame(SENDER, RECEIVER, 253, bytes(24)), 0),
    ],
    ids=["icmp", "tcp-src-80", "tcp-dst-80", "udp-dst-80", "tcp-bulk", "udp-other", "rbcc"],
)
def test_classification_picks_the_queue(router_json: bytes, frame: bytes, queue: int) -> None:
    engine = configured(router_json, config(), {OUT: 2})
    # a blocker on the wire keeps the classified packet queued where we can see it
    engine.process([(IN, l4(UDP, 40000, BULK_PORT)), (IN, frame)], 1_000)
    lengths = [engine.register_read("queue_length", OUT + MAX_PORTS * q) for q in (0, 1)]
    assert lengths == [1 - queue, queue]


def test_dscp_rule(router_json: bytes) -> None:
    engine = configured(router_json, config(), {OUT: 2})
    ef = bytearray(l4(UDP, 40000, BULK_PORT))
    ef[15] = 46 << 2
    engine.process([(IN, l4(UDP, 40000, BULK_PORT)), (IN, tagged(bytes(ef), 7))], 1_000)
    assert engine.register_read("queue_length", OUT + MAX_PORTS) == 1


def test_each_queue_has_the_port_limit(router_json: bytes) -> None:
    """queue_limit 5: the bulk queue fills and drops, the ping's queue admits."""
    engine = configured(router_json, config(), {OUT: 2})
    bulk = [tagged(l4(UDP, 40000, BULK_PORT), i) for i in range(10)]
    engine.process([(IN, f) for f in [*bulk, tagged(ping(), 99)]], 1_000)
    full, _ = engine.counter_read("RouterIngress.admission.drop_queue_full", OUT)
    assert full == 4  # one on the wire, five queued, four refused
    assert engine.register_read("queue_length", OUT) == 5
    assert engine.register_read("queue_length", OUT + MAX_PORTS) == 1
    assert engine.register_read("RouterIngress.admission.last_q", OUT + MAX_PORTS) == 0


def test_without_rules_the_ping_waits_behind_a_full_queue(router_json: bytes) -> None:
    fifo = CONFIG.replace("priority: {protocols: {icmp: 1}, ports: {80: 1}, dscp: {46: 1}}", "")
    engine = configured(router_json, parse_config(fifo, "fifo.yaml"), {})
    bulk = [tagged(l4(UDP, 40000, BULK_PORT), i) for i in range(10)]
    engine.process([(IN, f) for f in [*bulk, tagged(ping(), 99)]], 1_000)
    full, _ = engine.counter_read("RouterIngress.admission.drop_queue_full", OUT)
    assert full == 5  # the ping too


def test_a_frame_ending_inside_the_ports_is_forwarded(router_json: bytes) -> None:
    """The reference model does not read L4 ports: a UDP packet whose frame stops
    after two bytes of them is forwarded, not counted malformed."""
    engine = configured(router_json, config(), {OUT: 2})
    short = ipv4_frame(SENDER, RECEIVER, UDP, b"\x00\x50")[:36]
    out = engine.process([(IN, short)], 1_000) + engine.poll(1 << 40)
    assert [port for port, _, _ in out] == [OUT]
    malformed, _ = engine.counter_read("RouterIngress.drop_malformed", IN)
    assert malformed == 0
