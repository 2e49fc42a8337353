"""A link direction's capacity from a mahimahi trace in the topology file (`trace:`,
docs/NET.md "Links from traces"): checked where it is written, given to the switch
for a router's port (Mininet), to the simulator for any direction, and the example
traces are what their script makes."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
import ratelab_net
from ratelab_ctl.configfile import ConfigError
from ratelab_net.cli import main
from ratelab_net.network import mininet_trace_error, router_traces
from ratelab_net.routers import plan_routers
from ratelab_net.sim_scenario import build_scenario
from ratelab_net.topology import Topology, parse_topology
from ratelab_sim.build import ROOT

EXAMPLES = ROOT / "sim" / "examples"

CELL = """\
duration: 5s
routers:
  r1: {{}}
hosts: [sender, receiver]
links:
  - {{ends: [sender, r1], {sender_side}, delay: 1ms}}
  - ends: [r1, receiver]
    {bottleneck}
    delay: 20ms
    reverse: {{rate: 100mbit}}
flows:
  - {{name: bulk, from: sender, to: receiver, transport: tcp, cc: reno}}
"""


def _topology(tmp_path: Path, bottleneck: str, sender_side: str = "rate: 100mbit") -> str:
    (tmp_path / "traces").mkdir(exist_ok=True)
    (tmp_path / "traces" / "twelve.mahi").write_text("1\n")
    (tmp_path / "traces" / "bad.mahi").write_text("5\n7\n6\n")
    path = tmp_path / "cell.yaml"
    path.write_text(CELL.format(bottleneck=bottleneck, sender_side=sender_side))
    return str(path)


def _load(path: str) -> Topology:
    return parse_topology(Path(path).read_text(), path)


def test_a_trace_relative_to_the_file_gives_the_router_its_mean_rate(tmp_path: Path) -> None:
    path = _topology(tmp_path, "trace: traces/twelve.mahi")
    topo = _load(path)
    link = topo.links[1]
    assert link.forward.trace is not None and link.reverse.trace is None
    assert link.forward.trace.path == str((tmp_path / "traces" / "twelve.mahi").resolve())
    assert link.forward.trace.mean_rate_bps == 12_000_000
    (plan,) = plan_routers(topo)
    ports = {p.port: p for p in plan.config.router.ports}
    # The controller configures the port (RBCC capacity, AQM) at the trace's mean rate.
    assert (ports[2].rate_bps, ports[1].rate_bps) == (12_000_000, 100_000_000)
    assert router_traces(plan) == {2: link.forward.trace.path}
    assert mininet_trace_error(topo, "ratelab") is None
    # The simulator gets the trace, not a rate, for that direction.
    links = build_scenario(topo, [plan])["links"]
    assert links[1]["forward"] == {"delay_ns": 20_000_000, "trace": link.forward.trace.path}
    assert links[1]["reverse"]["rate_bps"] == 100_000_000


def test_check_shows_the_trace_and_its_mean_rate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _topology(tmp_path, "trace: traces/twelve.mahi")
    assert main(["check", path]) == 0
    out = capsys.readouterr().out
    assert "r1 port 2 -> receiver: trace twelve.mahi (mean 12 Mbit/s), 40 ms" in out, out


def test_a_directions_own_rate_or_trace_replaces_the_links_other(tmp_path: Path) -> None:
    path = _topology(tmp_path, "trace: traces/twelve.mahi")
    topo = _load(path)
    assert "trace" not in topo.links[1].reverse.nodes  # reverse: {rate: 100mbit}
    path = _topology(tmp_path, "rate: 10mbit\n    forward: {trace: traces/twelve.mahi}")
    forward = _load(path).links[1].forward
    assert forward.trace is not None and forward.trace.mean_rate_bps == 12_000_000


@pytest.mark.parametrize(
    ("bottleneck", "message"),
    [
        (
            "trace: traces/bad.mahi",
            "cell.yaml:8:12: error: links[1] (r1 -> receiver).trace: {dir}/traces/bad.mahi:3: "
            "expected a time of at least 7 ms (the line before: lines never decrease), got 6",
        ),
        (
            "trace: traces/none.mahi",
            "cell.yaml:8:12: error: links[1] (r1 -> receiver).trace: cannot read trace "
            "'{dir}/traces/none.mahi': [Errno 2] No such file or directory: "
            "'{dir}/traces/none.mahi'",
        ),
        (
            "forward: {rate: 1mbit, trace: traces/twelve.mahi}",
            "cell.yaml:8:35: error: links[1] (r1 -> receiver).trace: expected either rate or "
            "trace, not both",
        ),
        (
            "trace: [traces/twelve.mahi]",
            "cell.yaml:8:12: error: links[1] (r1 -> receiver).trace: expected a trace file name",
        ),
    ],
)
def test_bad_traces_name_the_field_and_the_traces_line(
    tmp_path: Path, bottleneck: str, message: str
) -> None:
    path = _topology(tmp_path, bottleneck)
    with pytest.raises(ConfigError) as e:
        _load(path)
    assert str(e.value) == str(tmp_path) + "/" + message.format(dir=tmp_path.resolve())


def test_mininet_refuses_a_host_egress_trace_and_bmv2_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _topology(tmp_path, "rate: 10mbit", sender_side="trace: traces/twelve.mahi")
    topo = _load(path)
    error = mininet_trace_error(topo, "ratelab")
    assert error is not None
    expected = (
        f"{path}:6:33: error: links[0] (sender -> r1).trace: a host's egress cannot follow "
        "a trace in Mininet (host 'sender' shapes with a rate only): put the trace on the "
        "router's side, or use --backend sim"
    )
    assert str(error) == expected
    # The command line says so before building anything (no root check, no Mininet).
    assert main(["run", path]) == 2
    assert capsys.readouterr().err.strip().splitlines() == [expected]
    assert main(["check", path]) == 2, "check says what run would refuse"
    assert capsys.readouterr().err.strip().splitlines() == [expected]
    router_side = _load(_topology(tmp_path, "trace: traces/twelve.mahi"))
    bmv2 = mininet_trace_error(router_side, "bmv2")
    assert bmv2 is not None and str(bmv2).endswith(
        "links[1] (r1 -> receiver).trace: BMv2 has no trace-driven ports: use --target ratelab"
    )


def test_the_simulator_runs_a_host_egress_trace(tmp_path: Path) -> None:
    # 1,448 data bytes per 1,500-byte packet, one packet a ms: 11.58 Mbit/s at most.
    path = _topology(tmp_path, "rate: 100mbit", sender_side="trace: traces/twelve.mahi")
    flows = ratelab_net.simulate(path, seed=1).flows
    goodput = float(flows.loc[0, "goodput_bps"])
    assert 0.85 * 11_584_000 < goodput <= 11_584_000, goodput


def test_the_cellular_example_follows_its_traces_in_the_simulator() -> None:
    by_variant = {}
    for variant in ("const12", "edge"):
        flows = ratelab_net.simulate(EXAMPLES / "cellular.yaml", variant=variant).flows
        by_variant[variant] = float(flows.loc[0, "goodput_bps"])
    # Goodput over the 18 s flow: near the constant trace's 11.58 Mbit/s of data,
    # and the EDGE-like trace's about 0.17 Mbit/s.
    assert 0.9 * 11_584_000 < by_variant["const12"] <= 11_584_000, by_variant
    assert 0.03e6 < by_variant["edge"] <= 0.17e6, by_variant


def test_the_example_traces_are_what_their_script_makes(tmp_path: Path) -> None:
    spec = importlib.util.spec_from_file_location(
        "make_traces", EXAMPLES / "traces" / "make_traces.py"
    )
    assert spec is not None and spec.loader is not None
    make = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(make)
    make.HERE = tmp_path
    make.main()
    for name in ("const12.mahi", "lte_steps.mahi", "edge_slow.mahi"):
        assert (tmp_path / name).read_text() == (EXAMPLES / "traces" / name).read_text(), name
