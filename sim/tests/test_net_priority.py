"""Strict-priority queues from a topology file (docs/NET.md "Strict-priority
queues"): the keys reach the router's configuration, the simulator's router
and the switch's command line; a ping beside a bulk TCP flow that fills a
large FIFO waits behind it with one queue and passes it with two."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import ratelab_net
from ratelab_ctl.configfile import ConfigError, PortPriority
from ratelab_ctl.priority import priority_queues
from ratelab_ctl.switch_options import switch_options
from ratelab_net.cli import main
from ratelab_net.routers import plan_routers
from ratelab_net.sim_scenario import build_scenario, router_spec
from ratelab_net.topology import parse_topology

BOTTLENECK = {
    "ends": ["r1", "receiver"],
    "rate": "10mbit",
    "delay": "20ms",
    "queue_limit": 200,
    "reverse": {"rate": "100mbit", "queue_limit": 100},
}
TOPOLOGY: dict[str, Any] = {
    "duration": "8s",
    "routers": {"r1": {"router_id": "10.0.0.1"}},
    "hosts": ["sender", "receiver"],
    "links": [{"ends": ["sender", "r1"], "rate": "100mbit", "delay": "1ms"}, BOTTLENECK],
    "flows": [
        {"name": "bulk", "from": "sender", "to": "receiver", "transport": "tcp", "cc": "cubic"},
        {"name": "ping", "from": "sender", "to": "receiver", "transport": "ping"},
    ],
}
BASE_RTT_MS = 42  # 2 x (1 ms + 20 ms)


def with_priority(**keys: Any) -> dict[str, Any]:
    topo = copy.deepcopy(TOPOLOGY)
    topo["links"][1].update(keys)
    return topo


TWO_QUEUES = with_priority(priority_queues=2, priority={"protocols": {"icmp": 1}})


def _text(keys: str) -> str:
    return f"""\
duration: 5s
routers: {{r1: {{}}}}
hosts: [a, b]
links:
  - {{ends: [a, r1], rate: 100mbit}}
  - {{ends: [r1, b], rate: 10mbit, {keys}}}
flows:
  - {{from: a, to: b, transport: ping}}
"""


def test_the_keys_reach_the_router_configuration() -> None:
    topo = parse_topology(_text("priority_queues: 2, priority: {ports: {80: 1}}"), "t.yaml")
    [plan] = plan_routers(topo)
    # r1's port 2 leads to b; the direction leaving the host (a -> r1) has none
    assert plan.config.priority == (PortPriority(2, 2, l4_ports=((80, 1),)),)
    assert switch_options(plan.config.router, priority_queues(plan.config))[-2:] == [
        "--priority-queues",
        "2=2",
    ]
    spec = router_spec(plan)
    assert {"port": 2, "queue_depth": 200, "priority_queues": 2} in spec["ports"]
    classify = [e for e in spec["entries"] if ".classify." in e["table"]]
    assert [(e["table"].rsplit(".", 1)[1], e["key"], e["params"]) for e in classify] == [
        ("priority_src_port", [2, 80], [1]),
        ("priority_dst_port", [2, 80], [1]),
    ]


def test_without_the_keys_one_fifo() -> None:
    [plan] = plan_routers(parse_topology(_text("queue_limit: 50"), "t.yaml"))
    assert plan.config.priority == ()
    assert all("priority_queues" not in p for p in router_spec(plan)["ports"])


@pytest.mark.parametrize(
    ("keys", "message"),
    [
        (
            "priority_queues: 9",
            "t.yaml:6:52: error: links[1] (r1 -> b).priority_queues: expected a number of "
            "strict-priority queues in 1..8, got 9",
        ),
        (
            "priority: {protocols: {icmp: 1}}",
            "t.yaml:6:45: error: links[1] (r1 -> b).priority: needs priority_queues (2..8) "
            "beside it to put packets in",
        ),
        (
            "priority_queues: 2, priority: {protocols: {icmp: 2}}",
            "t.yaml:6:84: error: links[1] (r1 -> b).priority.protocols.icmp: expected a "
            "priority (priority_queues is 2; 0 is every other packet's) in 1..1, got 2",
        ),
    ],
)
def test_bad_values_name_the_link(keys: str, message: str) -> None:
    with pytest.raises(ConfigError) as info:
        plan_routers(parse_topology(_text(keys), "t.yaml"))
    assert str(info.value) == message


def _ping_rtt_ms(topo: dict[str, Any]) -> tuple[float, float]:
    """(mean ping RTT while the bulk flow runs after its first seconds, bulk Mbit/s)."""
    res = ratelab_net.simulate(topo, seed=1)
    pings = res.pings[(res.pings["flow"] == "ping") & (res.pings["sent_s"] >= 3)]
    assert len(pings) > 20
    bulk = res.flows.set_index("flow").loc["bulk", "goodput_bps"] / 1e6
    return float(pings["rtt_ms"].mean()), float(bulk)


def test_a_ping_passes_a_full_fifo_in_its_own_queue() -> None:
    one_rtt, one_bulk = _ping_rtt_ms(TOPOLOGY)
    two_rtt, two_bulk = _ping_rtt_ms(TWO_QUEUES)
    # one FIFO: the pings wait behind up to 200 bulk packets (1.2 ms each)
    assert one_rtt > BASE_RTT_MS + 100
    # their own queue: at most one bulk packet ahead of them
    assert two_rtt < BASE_RTT_MS + 5
    # the bulk flow is not slowed by the pings' queue
    assert two_bulk > 0.9 * one_bulk


def test_check_shows_the_queues(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "t.yaml"
    path.write_text(_text("priority_queues: 2, priority: {protocols: {icmp: 1}, ports: {80: 1}}"))
    assert main(["check", str(path)]) == 0
    out = capsys.readouterr().out
    assert "r1 port 2 -> b: 10 Mbit/s, 0 ms, queue 100, fifo, 2 priority queues " in out
    assert "(protocol 1 -> 1, port 80 -> 1)" in out


WEB = {
    "name": "web",
    "from": "sender",
    "to": "receiver",
    "transport": "tcp",
    "cc": "cubic",
    "bytes": "100kB",
    "start": "4s",
}


def _with_web(rules: dict[str, Any]) -> dict[str, Any]:
    topo = with_priority(priority_queues=2, priority=rules)
    topo["flows"].insert(1, dict(WEB))
    return topo


def test_flow_rules_are_the_flows_ports_in_both_backends() -> None:
    topo = parse_topology(
        _text("priority_queues: 2, priority: {flows: {f2: 1}}")
        + "  - {from: a, to: b, transport: tcp, cc: reno}\n"
        + "  - {from: a, to: b, transport: udp, rate: 1mbit}\n",
        "t.yaml",
    )
    # flow f2 (index 1) is tcp: Mininet's tcp-sink listens on 6000 + 1, and the
    # simulator's receiver of that flow is given the same port
    [plan] = plan_routers(topo)
    assert plan.config.priority[0].l4_ports == ((6001, 1),)
    assert router_spec(plan)["ports"][1]["priority_queues"] == 2
    flows = build_scenario(topo, [plan])["flows"]
    assert [f.get("port") for f in flows] == [None, 6001, 5002]  # ping, tcp, udp


@pytest.mark.parametrize(
    ("rules", "message"),
    [
        (
            "{flows: {f9: 1}}",
            "t.yaml:6:74: error: links[1] (r1 -> b).priority.flows.f9: expected a flow's name "
            "(f1), got 'f9'",
        ),
        (
            "{flows: {f1: 1}}",
            "t.yaml:6:74: error: links[1] (r1 -> b).priority.flows.f1: a ping flow has no TCP/UDP "
            "port: give protocols: {icmp: N} instead",
        ),
        (
            "{flows: [f1]}",
            "t.yaml:6:73: error: links[1] (r1 -> b).priority.flows: expected a mapping of flow "
            "name to priority",
        ),
    ],
)
def test_bad_flow_rules(rules: str, message: str) -> None:
    with pytest.raises(ConfigError) as info:
        plan_routers(parse_topology(_text(f"priority_queues: 2, priority: {rules}"), "t.yaml"))
    assert str(info.value) == message


def _web_completion_s(topo: dict[str, Any]) -> float:
    flows = ratelab_net.simulate(topo, seed=1).flows.set_index("flow")
    return float(flows.loc["web", "completion_s"])


def test_a_short_transfer_in_its_own_queue_completes_sooner() -> None:
    """A 100 kB download beside the bulk flow: about 0.9 s behind a full FIFO
    (several round trips of 240 ms of queue), 0.2 s in the high queue."""
    own_queue = _web_completion_s(_with_web({"protocols": {"icmp": 1}, "flows": {"web": 1}}))
    behind_bulk = _web_completion_s(_with_web({"protocols": {"icmp": 1}}))
    assert own_queue < 0.3
    assert behind_bulk > 0.6


def test_check_shows_the_flow_ports_alike_in_both_backends(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "t.yaml"
    path.write_text(
        _text("priority_queues: 2, priority: {flows: {f2: 1}}")
        + "  - {from: a, to: b, transport: tcp, cc: reno}\n"
    )
    assert main(["check", str(path)]) == 0
    assert "2 priority queues (port 6001 -> 1)" in capsys.readouterr().out
    assert main(["check", str(path), "--backend", "sim"]) == 0
    assert "2 priority queues (port 6001 -> 1)" in capsys.readouterr().out
