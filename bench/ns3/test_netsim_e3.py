"""The E3 dumbbell in ns-3 and in ratelab-netsim, 3 simulated seconds: both run and agree
within loose bounds; bad input gives a one-line error.

The bounds: the bottleneck is offered 72 Mbit/s (3 x 16 TCP + 3 x 8 UDP) for 48, so
both must keep it busy (> 98 %) with its 120-packet FIFO mostly full. The UDP flows
are Poisson at 8 Mbit/s and lose the same few percent in both, so each one's goodput
agrees within 10 %, and so does the TCP flows' sum (what the UDP flows leave). How the
TCP flows split it moves with the seed in 3 s (Jain's index over all six flows stays
above 0.9 in both); drops differ by about 2x (bench/ns3/README.md, "E3"), so only the
order is checked (within 4x).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import compare_e3
import e1_scenario
import pytest
from build_programs import build

ROOT = Path(__file__).resolve().parents[2]
NS3_BINARY = ROOT / "build/ns3/e3_dumbbell"
NETSIM_BINARY = ROOT / "target/debug/ratelab-netsim"
DURATION_S = 3.0


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Both simulators and router.p4 compiled, as make and cargo would (incrementally)."""
    build(NS3_BINARY, "ratelab-netsim", "ratelab-netsim")
    out = tmp_path_factory.mktemp("router")
    subprocess.run(
        [str(ROOT / ".venv/bin/ratelab-p4c"), "-o", str(out), str(ROOT / "p4src/router.p4")],
        check=True,
    )
    return {
        "ns3": str(NS3_BINARY),
        "netsim": str(NETSIM_BINARY),
        "router": str(out / "router.json"),
    }


@pytest.mark.parametrize("recovery", ["classic", "prr"])
def test_both_run_the_e3_dumbbell_and_agree(
    built: dict[str, str], tmp_path: Path, recovery: str
) -> None:
    out = tmp_path / "e3"
    code = compare_e3.main(
        [
            *("--ns3", built["ns3"], "--netsim", built["netsim"], "--router", built["router"]),
            *("--out", str(out), "--duration", str(DURATION_S), "--recovery", recovery),
        ]
    )
    assert code == 0
    assert "| Jain's index, all 6 flows |" in out.with_suffix(".md").read_text()
    both = compare_e3.json.loads(out.with_suffix(".json").read_text())
    ns3, netsim = both["ns3"], both["netsim"]
    for side in (ns3, netsim):
        assert side["utilisation"] > 0.98
        assert side["jain_all"] > 0.9
        assert 60 < side["mean_queue_packets"] < 120
        assert side["max_queue_packets"] <= 120
        assert side["drops"] > 0
    for name in ("udp1", "udp2", "udp3"):
        assert netsim["goodput_bps"][name] == pytest.approx(ns3["goodput_bps"][name], rel=0.10)
    tcp = [
        sum(v for k, v in s["goodput_bps"].items() if k.startswith("tcp")) for s in (ns3, netsim)
    ]
    assert tcp[1] == pytest.approx(tcp[0], rel=0.10)
    assert netsim["mean_queue_packets"] == pytest.approx(ns3["mean_queue_packets"], rel=0.20)
    assert 0.25 < netsim["drops"] / ns3["drops"] < 4
    assert netsim["delivered_packets"] == pytest.approx(ns3["delivered_packets"], rel=0.05)


def test_jain() -> None:
    assert compare_e3.jain([1.0, 1.0, 1.0]) == pytest.approx(1.0)
    assert compare_e3.jain([1.0, 0.0, 0.0]) == pytest.approx(1 / 3)


@pytest.mark.parametrize(
    "args, message",
    [
        (["--duration=abc"], "--duration: expected a number from 0.1 to 36000, got 'abc'"),
        (["--seed=0"], "--seed: expected a number from 1 to 4294967295, got '0'"),
        (["--recovery=fast"], "--recovery: expected classic or prr, got 'fast'"),
        (["--cc=cubic"], "--cc: expected newreno or linux-reno, got 'cubic'"),
        (["--bogus=1"], "unknown option --bogus"),
        (["duration"], "expected --OPTION=VALUE, got 'duration'"),
        ([], "--out: the output file must be given"),
    ],
)
def test_ns3_bad_options_are_one_line(
    built: dict[str, str], tmp_path: Path, args: list[str], message: str
) -> None:
    out = [f"--out={tmp_path / 'o.json'}"] if args else []
    done = subprocess.run([built["ns3"], *out, *args], capture_output=True, text=True)
    assert done.returncode == 2
    assert len(done.stderr.splitlines()) == 1
    assert message in done.stderr
    assert not (tmp_path / "o.json").exists()


def test_compare_names_a_failing_simulator(built: dict[str, str], tmp_path: Path, capsys) -> None:
    code = compare_e3.main(
        [
            *("--ns3", built["ns3"], "--netsim", built["netsim"]),
            *("--router", str(tmp_path / "missing.json"), "--out", str(tmp_path / "e3")),
            *("--duration", "0.5"),
        ]
    )
    assert code == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert err.startswith("compare_e3: ratelab-netsim exited 1:") and "missing.json" in err
    assert not (tmp_path / "e3.md").exists()


def _topology(tmp_path: Path, first_link: str) -> Path:
    topo = tmp_path / "t.yaml"
    topo.write_text(
        "duration: 1s\nrouters: {r1: {}}\nhosts: [a, b]\n"
        f"links:\n  - {first_link}\n  - {{ends: [r1, b], rate: 10mbit}}\nflows: []\n"
    )
    return topo


def test_topology_links_become_scenario_links(tmp_path: Path) -> None:
    topo = _topology(tmp_path, "{ends: [a, r1], rate: 1gbit, delay: 1ms, queue_limit: 30}")
    links = compare_e3.scenario(topo, [], 10**9, 1)["links"]
    assert links[0] == {
        "a": {"node": "a"},
        "b": {"node": "r1", "port": 1},
        "forward": {"rate_bps": 10**9, "delay_ns": 10**6, "queue_limit": 30},
        "reverse": {"rate_bps": 10**9, "delay_ns": 10**6},
    }
    # no delay is none, as in Mininet; a router's queue limit stays in its entries
    assert links[1]["forward"] == {"rate_bps": 10**7, "delay_ns": 0}
    assert links[1]["a"] == {"node": "r1", "port": 2}


def test_a_host_queue_in_bdp_is_a_one_line_error(tmp_path: Path) -> None:
    topo = _topology(tmp_path, "{ends: [a, r1], rate: 1gbit, delay: 1ms, queue_limit: 2xBDP}")
    with pytest.raises(compare_e3.ConfigError) as e:
        compare_e3.scenario(topo, [], 10**9, 1)
    assert str(e.value) == (
        f"{topo}:5:5: error: links[0].queue_limit: "
        "expected a number of packets for a host's queue, got '2xBDP'"
    )


def test_e1_scenario_is_seeded_and_runs(built: dict[str, str], tmp_path: Path) -> None:
    first = e1_scenario.e1_scenario(1, 150.0)
    assert first == e1_scenario.e1_scenario(1, 150.0)
    assert first["links"] != e1_scenario.e1_scenario(2, 150.0)["links"]
    assert len(first["routers"]) == 9 and len(first["flows"]) == 15
    assert [f["start_ns"] for f in first["flows"]][-1] == 100 * 10**9
    path = tmp_path / "e1.json"
    path.write_text(compare_e3.json.dumps(first))
    done = subprocess.run(
        [built["netsim"], str(path), built["router"], str(tmp_path / "out")],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    assert len(done.stdout.splitlines()) == 15
