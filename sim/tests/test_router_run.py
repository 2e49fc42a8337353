"""`make run`'s main job (ratelab_sim.router_run): the topology it derives from a
configuration, its report, bad input, and one short end-to-end run that must
conserve packets and leave nothing behind (needs root, as CI runs)."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest
from ratelab_ctl.configfile import ControllerConfig, load_config
from ratelab_ctl.counters import CounterSnapshot
from ratelab_model.counters import PortCounters
from ratelab_sim.build import ROOT
from ratelab_sim.report import RunResults, fair_share, held_longest, percentile, render
from ratelab_sim.router_plan import Plan, PlanError, plan_hosts
from ratelab_sim.router_run import main

EXAMPLE = ROOT / "control_plane" / "examples" / "router.yaml"


def _plan(overrides: list[str] | None = None) -> tuple[ControllerConfig, Plan]:
    cfg = load_config(EXAMPLE, overrides or [])
    return cfg, plan_hosts(cfg.router, {hop: name for name, hop in cfg.next_hop_names})


def test_plan_of_the_example() -> None:
    _, plan = _plan()
    assert plan.bottleneck.port == 3
    assert (plan.receiver.name, plan.receiver.address, plan.receiver.port) == (
        "receiver",
        "10.0.3.1",
        3,
    )
    assert plan.receiver.mac == "02:00:00:00:01:03"  # the next hop's: the router writes it
    assert (plan.receiver.gateway, plan.receiver.gateway_mac) == ("10.0.3.254", "02:00:00:00:00:03")
    assert [(h.name, h.address, h.port) for h in plan.senders] == [
        ("sender1", "10.0.1.1", 1),
        ("sender2", "10.0.2.1", 2),
    ]


def test_plan_picks_the_slowest_limited_port() -> None:
    _, plan = _plan(["ports.1.rate=1mbit"])
    assert plan.receiver.name == "sender1"
    assert {h.name for h in plan.senders} == {"sender2", "receiver"}


def test_plan_needs_a_bottleneck() -> None:
    with pytest.raises(PlanError, match="no rate-limited port"):
        _plan(
            [
                *(f"ports.{p}.rate=unlimited" for p in (1, 2, 3)),
                "ports.3.queue_limit=68",  # 2xBDP needs a rate
            ]
        )


def test_held_longest() -> None:
    rates = [{"t_s": 0.0, "v": 1}, {"t_s": 1.0, "v": 2}, {"t_s": 1.5, "v": 3}]
    assert held_longest(rates, 4.0) == ({"t_s": 1.5, "v": 3}, 2.5)
    assert held_longest(rates, 1.6)[0]["v"] == 1
    assert held_longest([], 3.0) == ({}, 0.0)


def test_fair_share_and_percentile() -> None:
    assert fair_share(1_187_500, 2, 1500) == 593_750
    assert fair_share(1_000, 3, 1) == 333  # floor(2^32/3) loses one: as the router computes
    assert fair_share(1_000, 0, 1) == 1_000
    assert fair_share(3_000, 4, 1500) == 1500  # never below min_rate
    assert percentile([5, 1, 3, 2, 4], 0.95) == 5
    assert percentile([5, 1, 3, 2, 4], 0.5) == 3


def _snapshot(ports: dict[int, PortCounters]) -> CounterSnapshot:
    return CounterSnapshot(time=0.0, ports=ports, gauges=True)


def test_report_shows_drops_queue_share_and_misses() -> None:
    cfg, plan = _plan()
    final = {p: PortCounters() for p in (1, 2, 3)}
    final[1].packets_in = 100
    final[3] = PortCounters(
        packets_out=90,
        bytes_out=90_000,
        drop_red_early=7,
        drop_queue_full=3,
        rbcc_packets=200,
        abt_hits=198,
        abt_updates=2,
        abt_inserts=2,
    )
    samples = [_snapshot({3: PortCounters(last_q=q, last_avg=q << 16)}) for q in (0, 4, 8)]
    flow = {
        "flow_id": 101,
        "desired_rate": 1_250_000,
        "rates": [
            {"t_s": 0.0, "return_rate": 0xFFFFFFFF, "return_bottle_node": 0},
            {"t_s": 0.1, "return_rate": 593_750, "return_bottle_node": 0x0A000001},
            {"t_s": 1.9, "return_rate": 1_187_500, "return_bottle_node": 0x0A000001},
        ],
        "send_span_s": 2.0,
        "goodput_bps": 4_000_000,
        "retransmissions": 3,
        "state": "closed",
    }
    results = RunResults(
        config=cfg,
        plan=plan,
        duration_s=2.0,
        elapsed_s=3.0,
        final=_snapshot(final),
        samples=samples,
        rbcc_senders={"sender1": {"flows": [flow]}},
        rbcc_receiver={"flows": []},
        udp_sender={"flows": [{"packets_sent": 10}]},
        udp_sink={"flows": [{"packets_received": 8, "throughput_bps": 1e6, "delay_mean_us": 2e3}]},
        udp_sender_name="sender2",
        poll_interval_s=0.1,
    )
    text = render(results)
    assert "queue_full 3, red_early 7" in text
    assert "mean 4.0, p95 8, max 8 packets" in text
    assert "1 flow(s): fair share 1187500 B/s" in text
    assert "echoed rate 593750 B/s from 10.0.0.1 for 1.8 of 2.0 s" in text
    assert "2 updates = 1.00 % cache misses" in text
    assert "10 sent, 8 received (20.0 % lost)" in text
    assert "switch:" not in text  # a target without port counters: nothing said


def test_report_names_what_the_switch_itself_lost() -> None:
    cfg, plan = _plan()
    quiet = {"rx_drops": 0, "mtu_drops": 0, "tx_errors": 0, "tx_packets": 9}
    results = RunResults(
        config=cfg,
        plan=plan,
        duration_s=1.0,
        elapsed_s=2.0,
        final=_snapshot({p: PortCounters() for p in (1, 2, 3)}),
        samples=[],
        rbcc_senders={},
        rbcc_receiver={"flows": []},
        udp_sender=None,
        udp_sink=None,
        udp_sender_name="sender2",
        poll_interval_s=0.1,
        switch_ports={1: quiet, 3: quiet},
    )
    assert render(results).endswith(
        "switch: no frames lost outside the router program "
        "(rx_drops, mtu_drops and tx_errors 0 on every port)"
    )
    results = replace(
        results, switch_ports={1: {**quiet, "rx_drops": 52}, 3: {**quiet, "mtu_drops": 1}}
    )
    assert "not counted above: port 1 rx_drops 52, port 3 mtu_drops 1 (" in render(results)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--config", "/nonexistent.yaml"], "/nonexistent.yaml:1:1: error"),
        (["--set", "ports.3.aqm.preset=nonesuch"], "nonesuch"),
        (["--set", "ports.9.rate=1mbit"], "ports.9"),
        (["--duration", "0"], "--duration must be above 0"),
        (["--udp-rate", "fast"], "fast"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(args) == 2
    err = capsys.readouterr().err.strip()
    assert message in err
    assert len(err.splitlines()) == 1 and "Traceback" not in err


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root (network namespaces)")
def test_short_run_conserves_packets_and_cleans_up(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    ours: Callable[[], set[str]],
) -> None:
    code = main(["--duration", "1.5", "--out", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == 0, out
    assert not ours()
    assert "ratelab router run" in out and "cache misses" in out
    # The switch's own losses are reported (none expected at these rates; not
    # asserted, as a starved CI machine may make the switch drop a few).
    assert "\nswitch: " in out
    rows = (tmp_path / "series.csv").read_text().splitlines()
    header = rows[0].split(",")
    last: dict[int, dict[str, int]] = {}
    for row in rows[1:]:
        values = dict(zip(header, row.split(","), strict=True))
        last[int(values["port"])] = {k: int(float(v)) for k, v in values.items() if k != "time"}
    # Everything that arrived was forwarded or dropped for a counted cause: the senders'
    # packets leave through port 3, the receiver's ACKs through ports 1 and 2.
    arrived = sum(last[p]["packets_in"] for p in (1, 2, 3))
    left = sum(last[p]["packets_out"] for p in (1, 2, 3))
    dropped = sum(last[p][k] for p in (1, 2, 3) for k in last[p] if k.startswith("drop_"))
    assert arrived > 0 and arrived == left + dropped
    assert last[3]["rbcc_packets"] > 0
