"""`pattern: poisson` for udp flows (docs/NET.md): checked by the topology
loader, a Poisson source in the simulator, `udp-send --poisson` in Mininet."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import ratelab_net
from ratelab_ctl.configfile import ConfigError
from ratelab_net.routers import plan_routers
from ratelab_net.sim_scenario import build_scenario
from ratelab_net.topology import load_variants
from ratelab_net.traffic import plan_commands


def _topology(udp: dict[str, Any]) -> dict[str, Any]:
    return {
        "duration": "2s",
        "routers": {"r1": {}},
        "hosts": ["a", "b"],
        "links": [
            {"ends": ["a", "r1"], "rate": "100mbit", "delay": "1ms"},
            {"ends": ["r1", "b"], "rate": "100mbit", "delay": "1ms"},
        ],
        "flows": [{"name": "u", "from": "a", "to": "b", "transport": "udp", **udp}],
    }


def _load(tmp_path: Path, topo: dict[str, Any]) -> Any:
    import yaml

    path = tmp_path / "t.yaml"
    path.write_text(yaml.safe_dump(topo, sort_keys=False))
    return load_variants(path, [], None)[0][1]


def test_poisson_udp_in_the_scenario_and_in_mininet(tmp_path: Path) -> None:
    topo = _load(tmp_path, _topology({"pattern": "poisson", "rate": "4mbit"}))
    assert topo.flows[0].pattern == "poisson"
    scenario = build_scenario(topo, plan_routers(topo), 1)
    assert scenario["flows"][0]["udp"]["pattern"] == "poisson"
    cbr = _load(tmp_path, _topology({"rate": "4mbit"}))
    assert build_scenario(cbr, plan_routers(cbr), 1)["flows"][0]["udp"]["pattern"] == "cbr"
    _, senders = plan_commands(topo, tmp_path)
    args = list(senders[0].args)
    assert "--poisson" in args and args[args.index("--seed") + 1] == "1"
    _, cbr_senders = plan_commands(cbr, tmp_path)
    assert "--poisson" not in cbr_senders[0].args


def test_poisson_runs_and_differs_from_cbr() -> None:
    poisson = ratelab_net.simulate(_topology({"pattern": "poisson", "rate": "4mbit"}), seed=3)
    cbr = ratelab_net.simulate(_topology({"rate": "4mbit"}), seed=3)
    sent_p = int(poisson.flows["udp_sent"].iloc[0])
    sent_c = int(cbr.flows["udp_sent"].iloc[0])
    # about 4 Mbit/s for 2 s of 1,000-byte packets either way, spaced differently
    assert 800 <= sent_p <= 1200 and 950 <= sent_c <= 1050
    other = ratelab_net.simulate(_topology({"pattern": "poisson", "rate": "4mbit"}), seed=4)
    assert int(other.flows["udp_sent"].iloc[0]) != sent_p


def test_poisson_is_for_udp_only() -> None:
    topo = _topology({})
    topo["flows"] = [
        {"from": "a", "to": "b", "transport": "tcp", "stack": "ratelab", "cc": "reno",
         "pattern": "poisson"}
    ]  # fmt: skip
    with pytest.raises(ConfigError, match=r"flows\[0\].pattern: poisson is a pattern of udp"):
        ratelab_net.simulate(topo)
