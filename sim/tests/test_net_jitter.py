"""Link jitter (docs/NET.md "Jitter"): the topology key, what ratelab-switch is
told, BMv2's refusal, and the simulator's random extra delays."""

from __future__ import annotations

from pathlib import Path

import pytest
import ratelab_net
from ratelab_ctl.configfile import ConfigError
from ratelab_net.cli import main
from ratelab_net.network import link_jitters, mininet_jitter_error
from ratelab_net.routers import plan_routers
from ratelab_net.sim_scenario import build_scenario
from ratelab_net.topology import Topology, parse_topology

PATH = """\
duration: 5s
routers:
  r1: {{router_id: 10.0.0.1}}
  r2: {{}}
hosts: [a, b]
links:
  - {{ends: [a, r1], rate: 100mbit, delay: 1ms, jitter: {a_jitter}}}
  - {{ends: [r1, r2], rate: 10mbit, delay: 5ms, forward: {{jitter: 2ms}}}}
  - {{ends: [r2, b], rate: 100mbit, delay: 5ms}}
flows:
  - {{name: p, from: a, to: b, transport: ping, interval: 0.05s}}
"""


def _write(tmp_path: Path, a_jitter: str = "300us", name: str = "j.yaml") -> Path:
    path = tmp_path / name
    path.write_text(PATH.format(a_jitter=a_jitter))
    return path


def _load(path: Path) -> Topology:
    return parse_topology(path.read_text(), str(path))


def test_ratelab_switch_gets_each_ports_jitter(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _write(tmp_path)
    topo = _load(path)
    r1, r2 = plan_routers(topo)
    # r1 -> a carries both directions of the host's link (a host adds none);
    # r1 -> r2 its own (forward only); r2 -> r1 and r2 -> b none.
    assert link_jitters(topo, r1) == {1: 600, 2: 2000}
    assert link_jitters(topo, r2) == {}
    assert mininet_jitter_error(topo, "ratelab") is None
    assert main(["check", str(path)]) == 0
    plan = capsys.readouterr().out.splitlines()
    assert "r1 port 1 -> a: 100 Mbit/s, 2 ms + up to 0.6 ms jitter, queue 100, fifo" in plan
    assert "r2 port 2 -> b: 100 Mbit/s, 10 ms, queue 100, fifo" in plan


def test_bmv2_refuses_jitter_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _write(tmp_path)
    error = mininet_jitter_error(_load(path), "bmv2")
    expected = (
        f"{path}:7:56: error: links[0] (a -> r1).jitter: BMv2 cannot add jitter: "
        "use --target ratelab, or --backend sim"
    )
    assert str(error) == expected
    # Said before anything is built (no root check, no Mininet), and by check.
    for command in ("run", "check"):
        assert main([command, str(path), "--target", "bmv2"]) == 2
        assert capsys.readouterr().err.strip().splitlines() == [expected]


@pytest.mark.parametrize("bad", ["-1ms", "fast", "1.5us"])
def test_a_bad_jitter_names_the_field(tmp_path: Path, bad: str) -> None:
    path = _write(tmp_path, a_jitter=bad)
    with pytest.raises(ConfigError) as e:
        _load(path)
    assert str(e.value).startswith(f"{path}:7:56: error: links[0] (a -> r1).jitter: expected ")
    assert "\n" not in str(e.value)


def test_the_scenario_carries_jitter_only_where_set(tmp_path: Path) -> None:
    topo = _load(_write(tmp_path))
    links = build_scenario(topo, plan_routers(topo))["links"]
    jitters = [(lk["forward"].get("jitter_ns"), lk["reverse"].get("jitter_ns")) for lk in links]
    assert jitters == [(300_000, 300_000), (2_000_000, None), (None, None)]


def test_the_simulator_delays_each_frame_by_a_random_extra(tmp_path: Path) -> None:
    path = _write(tmp_path)
    rtts = ratelab_net.simulate(path, seed=1).pings["rtt_ms"]
    # 22 ms of delay plus serialization; up to 2.6 ms more (300 us each way on
    # a's link, 2 ms r1 -> r2), uniform: about 1.3 ms more on average.
    base = min(ratelab_net.simulate(_write(tmp_path, "0us", "still.yaml"), seed=1).pings["rtt_ms"])
    assert len(rtts) == 100
    assert base < 22.2
    assert all(base - 0.001 <= r <= base + 2.6 + 0.001 for r in rtts), rtts.tolist()
    assert 1.0 < rtts.mean() - base < 1.6
    assert rtts.std() > 0.3
    again = ratelab_net.simulate(path, seed=1).pings["rtt_ms"]
    other = ratelab_net.simulate(path, seed=2).pings["rtt_ms"]
    assert again.tolist() == rtts.tolist()
    assert other.tolist() != rtts.tolist()
