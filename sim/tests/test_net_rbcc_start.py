"""An rbcc flow's rate before its first ACK (`initial_rate`, `adopt_synack_rate`):
the topology keys and their errors, the simulator's scenario and rbcc-send's
command line they become, and what they change in a run (the start-up burst
that E1 lost its packets to, sim/experiments/README.md "E1")."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import ratelab_net
from ratelab_ctl.configfile import ConfigError
from ratelab_net.routers import plan_routers
from ratelab_net.sim_scenario import build_scenario
from ratelab_net.topology import RbccOptions, parse_topology
from ratelab_net.traffic import plan_commands

TOPOLOGY = """\
duration: 6s
routers:
  r1: {router_id: 10.0.0.1}
  r2: {router_id: 10.0.0.2}
hosts: [a, b]
links:
  - {ends: [a, r1], rate: 10mbit, delay: 1ms}
  - {ends: [r1, r2], rate: 64kbit, delay: 500ms, queue_limit: 20}
  - {ends: [r2, b], rate: 10mbit, delay: 1ms}
flows:
  - {name: plain, from: a, to: b, transport: rbcc, rate: 10mbit}
  - {name: slow, from: a, to: b, transport: rbcc, rate: 10mbit, initial_rate: 32kbit}
  - {name: adopt, from: a, to: b, transport: rbcc, rate: 10mbit, adopt_synack_rate: true}
  - {name: tcp, from: a, to: b, transport: tcp, stack: ratelab, cc: reno}
"""


def test_keys_and_defaults() -> None:
    plain, slow, adopt, tcp = parse_topology(TOPOLOGY, "s.yaml").flows
    assert plain.rbcc == RbccOptions(None, False)
    assert slow.rbcc == RbccOptions(32_000, False)
    assert adopt.rbcc == RbccOptions(None, True)
    assert tcp.rbcc is None


def test_scenario_and_command_line(tmp_path: Path) -> None:
    topo = parse_topology(TOPOLOGY, "s.yaml")
    specs = [f["rbcc"] for f in build_scenario(topo, plan_routers(topo), 1)["flows"][:3]]
    assert specs[0] == {"rate_bps": 10_000_000, "size": 1000}  # the simulator's defaults
    assert specs[1] == {"rate_bps": 10_000_000, "size": 1000, "initial_rate_bps": 32_000}
    assert specs[2] == {"rate_bps": 10_000_000, "size": 1000, "adopt_synack_rate": True}
    _, senders = plan_commands(topo, tmp_path)
    args = {c.label: c.args for c in senders}
    assert "--initial-rate" not in args["plain"] and "--adopt-synack-rate" not in args["plain"]
    at = args["slow"].index("--initial-rate")
    assert args["slow"][at + 1] == "32000bit"
    assert "--adopt-synack-rate" in args["adopt"] and "--initial-rate" not in args["adopt"]


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ("initial_rate: 32kbit", "initial_rate: fast", "[1].initial_rate: expected a link rate"),
        ("initial_rate: 32kbit", "initial_rate: 0kbit", "[1].initial_rate: expected a rate"),
        ("adopt_synack_rate: true", "adopt_synack_rate: 2", "[2].adopt_synack_rate: expected true"),
        ("cc: reno}", "cc: reno, initial_rate: 1mbit}", "[3].initial_rate: only rbcc flows"),
        ("cc: reno}", "cc: reno, adopt_synack_rate: true}", "[3].adopt_synack_rate: only rbcc"),
    ],
)
def test_bad_keys_name_the_flow_and_field(old: str, new: str, message: str) -> None:
    assert old in TOPOLOGY
    with pytest.raises(ConfigError) as info:
        parse_topology(TOPOLOGY.replace(old, new, 1), "s.yaml")
    text = str(info.value)
    assert text.startswith("s.yaml:") and f"flows{message}" in text and "\n" not in text, text


def _one_flow(**rbcc: Any) -> dict[str, Any]:
    """One rbcc flow asking for 10 Mbit/s over a 64 kbit/s link with a 1 s
    round trip and a 20-packet queue: the routers give it 7,600 B/s."""
    return {
        "duration": "6s",
        "routers": {"r1": {"router_id": "10.0.0.1"}, "r2": {"router_id": "10.0.0.2"}},
        "hosts": ["a", "b"],
        "links": [
            {"ends": ["a", "r1"], "rate": "10mbit", "delay": "1ms"},
            {"ends": ["r1", "r2"], "rate": "64kbit", "delay": "500ms", "queue_limit": 20},
            {"ends": ["r2", "b"], "rate": "10mbit", "delay": "1ms"},
        ],
        "flows": [
            {"name": "f", "from": "a", "to": "b", "transport": "rbcc", "rate": "10mbit", **rbcc}
        ],
    }


def test_the_first_round_trip_decides_the_losses() -> None:
    # Until its first data ACK the sender paces at its initial rate: by default
    # the 10 Mbit/s it asks for, which the 64 kbit/s link's queue cannot hold.
    burst = ratelab_net.simulate(_one_flow(), seed=1)
    assert int(burst.drops["packets"].sum()) > 100
    assert set(burst.drops["node"]) == {"r1"}
    assert int(burst.flows["rbcc_lost"].iloc[0]) > 100
    # Started below the routers' share, or at the share they stamped on the
    # SYN, it loses nothing.
    for start in ({"initial_rate": "32kbit"}, {"adopt_synack_rate": True}):
        res = ratelab_net.simulate(_one_flow(**start), seed=1)
        assert res.drops.empty, (start, res.drops)
        flow = res.flows.iloc[0]
        assert int(flow["rbcc_lost"]) == 0 and int(flow["rbcc_retransmissions"]) == 0
        assert int(flow["rbcc_rate"]) == 7_600  # 64 kbit/s x 0.95, as the router stamps it
        assert int(flow["rbcc_segments_acked"]) > 20
