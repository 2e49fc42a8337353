"""A TCP flow's `bytes` (docs/NET.md "Fixed-size transfers"): the loader's
sizes and errors, the Mininet command, the simulator's scenario and its
completion time."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import ratelab_net
from ratelab_ctl.configfile import ConfigError
from ratelab_net.cli import main
from ratelab_net.routers import plan_routers
from ratelab_net.sim_scenario import build_scenario
from ratelab_net.topology import parse_topology
from ratelab_net.traffic import plan_commands

RTT_S = 0.022  # 2 x (1 ms + 10 ms)
RATE_BPS = 10_000_000


def _topology(flows: list[dict[str, Any]], duration: str = "3s") -> dict[str, Any]:
    return {
        "duration": duration,
        "routers": {"r1": {}},
        "hosts": ["sender", "receiver"],
        "links": [
            {"ends": ["sender", "r1"], "rate": "100mbit", "delay": "1ms"},
            {"ends": ["r1", "receiver"], "rate": "10mbit", "delay": "10ms", "queue_limit": 100},
        ],
        "flows": flows,
    }


def _text(flow: str) -> str:
    return f"""\
duration: 5s
routers: {{r1: {{}}}}
hosts: [a, b]
links:
  - {{ends: [a, r1], rate: 100mbit}}
  - {{ends: [r1, b], rate: 10mbit}}
flows:
  - {flow}
"""


@pytest.mark.parametrize(
    ("size", "expected"),
    [
        ("180000", 180_000),
        ("180kB", 180_000),
        ("64KiB", 65_536),
        ("1.5MB", 1_500_000),
        ("2MiB", 2 * 2**20),
        ("1448B", 1448),
        ("1500x1448", 1500 * 1448),
        ("1GB", 10**9),
    ],
)
def test_sizes(size: str, expected: int) -> None:
    flow = "{from: a, to: b, transport: tcp, cc: reno, bytes: " + size + "}"
    topo = parse_topology(_text(flow), "t.yaml")
    assert topo.flows[0].transfer_bytes == expected


def test_without_bytes_a_flow_is_no_transfer() -> None:
    topo = parse_topology(_text("{from: a, to: b, transport: tcp, cc: reno}"), "t.yaml")
    assert topo.flows[0].transfer_bytes is None


@pytest.mark.parametrize(
    ("flow", "message"),
    [
        ("{from: a, to: b, transport: tcp, cc: reno, bytes: 0}", "expected 1 byte to 1TiB"),
        ("{from: a, to: b, transport: tcp, cc: reno, bytes: -5}", "expected a size like 180kB"),
        ("{from: a, to: b, transport: tcp, cc: reno, bytes: 180kb}", "got '180kb'"),
        ("{from: a, to: b, transport: tcp, cc: reno, bytes: 0.5B}", "a whole number of bytes"),
        ("{from: a, to: b, transport: tcp, cc: reno, bytes: 2000GiB}", "expected 1 byte to 1TiB"),
        ("{from: a, to: b, transport: tcp, cc: reno, bytes: [1]}", "expected a size like"),
        ("{from: a, to: b, transport: tcp, cc: reno, bytes: 10x}", "got '10x'"),
        ("{from: a, to: b, transport: udp, rate: 1mbit, bytes: 10kB}", "only tcp flows"),
        ("{from: a, to: b, transport: rbcc, rate: 1mbit, bytes: 10kB}", "only tcp flows"),
        (
            "{from: a, to: b, transport: tcp, cc: reno, pattern: stream, rate: 1mbit, bytes: 1kB}",
            "a transfer needs pattern: bulk",
        ),
    ],
)
def test_bad_sizes_name_the_field(flow: str, message: str) -> None:
    with pytest.raises(ConfigError) as err:
        parse_topology(_text(flow), "t.yaml")
    text = str(err.value)
    assert text.startswith("t.yaml:8:") and "error: flows[0].bytes: " in text, text
    assert message in text and "\n" not in text


def test_bad_size_on_the_command_line_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "t.yaml"
    path.write_text(_text("{from: a, to: b, transport: tcp, cc: reno, bytes: lots}"))
    assert main(["check", str(path), "--backend", "sim"]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and f"{path}:8:" in err and "flows[0].bytes: expected a size" in err


def test_check_prints_the_transfer(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "t.yaml"
    path.write_text(_text("{from: a, to: b, transport: tcp, cc: reno, bytes: 180kB}"))
    assert main(["check", str(path), "--backend", "sim"]) == 0
    assert "a transfer of 180000 bytes" in capsys.readouterr().out


def test_mininet_command_and_scenario(tmp_path: Path) -> None:
    text = _text("{name: page, from: a, to: b, transport: tcp, cc: reno, bytes: 180kB}")
    text += "  - {name: bulk, from: a, to: b, transport: tcp, cc: reno}\n"
    topo = parse_topology(text, "t.yaml")
    _, senders = plan_commands(topo, tmp_path)
    page, bulk = (s.args for s in senders)
    assert page[page.index("--bytes") + 1] == "180000"
    assert "--duration" in page  # stop still bounds it
    assert "--bytes" not in bulk
    scenario = build_scenario(topo, plan_routers(topo))
    apps = [f["tcp"]["app"] for f in scenario["flows"]]
    assert apps == [{"kind": "transfer", "bytes": 180_000}, {"kind": "bulk"}]
    # a transfer's packet delays are recorded (a bounded list), a bulk flow's not
    assert [f["tcp"].get("packet_delays") for f in scenario["flows"]] == [True, None]


def test_simulated_transfer_completes_and_has_its_time() -> None:
    flows = [
        {"name": "page", "from": "sender", "to": "receiver", "transport": "tcp", "cc": "reno"},
        # runs for the whole 3 s: no completion time
        {"name": "bulk", "from": "sender", "to": "receiver", "transport": "tcp", "cc": "reno"},
        # 20 MB at 10 Mbit/s need 16 s: not done by the end
        {"name": "big", "from": "sender", "to": "receiver", "transport": "tcp", "cc": "reno"},
    ]
    flows[0] |= {"bytes": "180kB", "stack": "ratelab", "iw": 10}
    flows[1] |= {"start": "1s", "stop": "2s"}
    flows[2] |= {"bytes": "20MB", "start": "0.1s"}
    res = ratelab_net.simulate(_topology(flows), seed=1).flows.set_index("flow")
    page = res.loc["page"]
    assert page["bytes_received"] == 180_000
    # at least the handshake, a round trip for the data and its serialisation at
    # 10 Mbit/s; a few round trips of slow start at most beside the other flows
    low = 2 * RTT_S + 180_000 * 8 / RATE_BPS
    assert low < page["completion_s"] < 2.0, page["completion_s"]
    assert res["completion_s"].isna().tolist() == [False, True, True]
    assert res.loc["big", "bytes_received"] < 20_000_000


def test_lone_transfer_time_is_first_byte_plus_receiving() -> None:
    """Alone on the link: the completion time is the time to the first byte
    (the handshake's round trip, then the first segment's one-way trip) plus
    the receiver's first-to-last-byte time its goodput gives."""
    flow = {"name": "t", "from": "sender", "to": "receiver", "transport": "tcp", "cc": "reno"}
    flow |= {"bytes": "180kB", "stack": "ratelab", "iw": 10, "start": "0.25s"}
    row = ratelab_net.simulate(_topology([flow]), seed=1).flows.iloc[0]
    receiving = row["bytes_received"] * 8 / row["goodput_bps"]
    first_byte = row["completion_s"] - receiving
    # 1.5 round trips, and a segment's serialisation on both links (1.3 ms)
    assert 1.5 * RTT_S < first_byte < 1.5 * RTT_S + 0.002, first_byte


def test_transfer_packet_delays() -> None:
    """Each data segment's one-way delay, from the sender's interface to the
    receiving host: the first one crosses empty queues (the links' delays and
    both serialisations of its 1,514-byte frame); a bulk flow records none."""
    flow = {"name": "t", "from": "sender", "to": "receiver", "transport": "tcp", "cc": "reno"}
    flow |= {"bytes": "180kB", "stack": "ratelab", "iw": 10, "start": "0.25s"}
    bulk = {"name": "bulk", "from": "sender", "to": "receiver", "transport": "tcp", "cc": "reno"}
    bulk |= {"start": "1s"}
    res = ratelab_net.simulate(_topology([flow, bulk]), seed=1)
    delays = res.raw["flows"][0]["packet_delays_ns"]
    first_ms = 11 + 1514 * 8 / 100e6 * 1e3 + 1514 * 8 / RATE_BPS * 1e3
    # the router's engine keeps whole microseconds
    assert delays[0] / 1e6 == pytest.approx(first_ms, abs=0.002)
    # the initial window's next segment waits one 10 Mbit/s serialisation more
    assert (delays[1] - delays[0]) / 1e6 == pytest.approx(1514 * 8 / RATE_BPS * 1e3, abs=0.002)
    t, b = res.flows.iloc[0], res.flows.iloc[1]
    assert (
        t["tcp_retransmissions"] == 0 and t["owd_packets"] == len(delays) == 125
    )  # 180 kB / 1,448
    assert t["owd_max_ms"] == max(delays) / 1e6 and t["owd_p50_ms"] <= t["owd_p95_ms"]
    assert t["owd_mean_ms"] == pytest.approx(sum(delays) / len(delays) / 1e6)
    assert "packet_delays_ns" not in res.raw["flows"][1]
    assert pd.isna(b["owd_packets"]) and pd.isna(b["owd_mean_ms"])
