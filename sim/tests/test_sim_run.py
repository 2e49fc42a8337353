"""`ratelab-net run --backend sim`: a topology file in ratelab's simulator (no
root): the Mininet run's report and files, variants, determinism, bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from ratelab_net.cli import main
from ratelab_net.topology import kernel_congestion_controls
from ratelab_sim.build import ROOT

DUMBBELL = """\
duration: 6s
poll_interval: 0.1s
routers:
  r1: {router_id: 10.0.0.1}
hosts: [sender, receiver]
links:
  - {ends: [sender, r1], rate: 100mbit, delay: 1ms}
  - ends: [r1, receiver]
    rate: 10mbit
    delay: 20ms
    queue_limit: 20
    aqm: fifo
    reverse: {rate: 100mbit, queue_limit: 100}
flows:
  - {name: bulk, from: sender, to: receiver, transport: tcp, cc: cubic, start: 1s, stop: 5s}
  - {name: vegas, from: sender, to: receiver, transport: tcp, stack: ratelab, cc: vegas, iw: 4,
     rto_formula: linux, hystart: true, prr: true, delayed_ack: false}
  - {name: cbr, from: sender, to: receiver, transport: udp, rate: 1mbit, size: 1000}
variants:
  small: {}
  large:
    links[1].queue_limit: 200
"""

# 1,448 data bytes in a 1,514-byte frame
TCP_PAYLOAD_SHARE = 1448 / 1514


def _write(tmp_path: Path, text: str, name: str = "topo.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def _run(path: Path, out: Path, *extra: str) -> int:
    return main(["run", str(path), "--backend", "sim", "--out", str(out), *extra])


def test_dumbbell_example_runs_and_reports(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """The shipped dumbbell file runs every variant, with the Mininet run's
    report, files and comparison."""
    out = tmp_path / "out"
    assert _run(ROOT / "sim" / "examples" / "dumbbell.yaml", out) == 0
    report = capsys.readouterr().out
    assert "note: kernel TCP flows run on ratelab's TCP stack" in report
    assert "set up as Linux's (its RTO formula, PRR, Cubic's HyStart): bulk" in report
    assert report.count("== ratelab-net:") == 3
    assert "== comparison ==" in report
    assert "small-fifo: bulk " in report and "large-red: bulk " in report
    assert "; ping rtt mean " in report
    for variant in ("small-fifo", "large-fifo", "large-red"):
        folder = out / variant
        for name in ("results.json", "r1.csv", "bulk.json", "ping.ping.txt", "plots.png"):
            assert (folder / name).is_file(), f"{variant}/{name}"
        res = json.loads((folder / "results.json").read_text())
        bulk = res["flows"][0]
        # one Cubic flow nearly fills the 10 Mbit/s bottleneck; with the large
        # queue (above the path's BDP of 35 packets) it fills it
        share = 0.9 if variant == "large-fifo" else 0.7
        assert bulk["tcp"]["goodput_bps"] > share * 10e6 * TCP_PAYLOAD_SHARE, variant
    small = json.loads((out / "small-fifo" / "results.json").read_text())
    large = json.loads((out / "large-fifo" / "results.json").read_text())
    queue = {
        name: max(q["queue_packets"] for q in r["queue_samples"] if q["port"] == 2)
        for name, r in (("small", small), ("large", large))
    }
    assert queue["small"] <= 20 < queue["large"]
    # a ping every 0.1 s for 20 s, nearly all answered (the full queue drops a
    # few), over the 42 ms path plus the queue: the bufferbloat of the large one
    pings = {name: r["flows"][1]["ping"] for name, r in (("small", small), ("large", large))}
    assert all(p["sent"] == 200 and p["received"] > 180 for p in pings.values())

    def mean(p: dict) -> float:
        return sum(r["rtt_ns"] for r in p["replies"]) / len(p["replies"]) / 1e6

    assert 42 < mean(pings["small"]) < mean(pings["large"])


def test_report_tables_and_flow_files(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    out = tmp_path / "out"
    assert _run(_write(tmp_path, DUMBBELL), out, "--variant", "small", "--no-plots") == 0
    report = capsys.readouterr().out
    lines = {line.split()[0]: line for line in report.splitlines() if line.strip()}
    # the flows' table: the kernel flow is labelled as the file says, the note tells
    assert "tcp cubic" in lines["bulk"] and "ssthresh changes" in lines["bulk"]
    assert "ratelab vegas" in lines["vegas"]
    assert "/" in lines["cbr"] and "received" in lines["cbr"]
    # the ports' table: r1's two ports, drops by cause at the bottleneck
    assert "queue_full" in lines["r1.2"]
    assert lines["r1.1"].split()[1] != "0"
    assert "packets: hosts sent" in report
    assert not (out / "large").exists()  # --variant: that one only, in its folder
    out = out / "small"
    assert not (out / "plots.png").exists()
    # tcp-send-shaped JSON: cwnd and RTT over time from the flow's start
    bulk = json.loads((out / "bulk.json").read_text())["flows"][0]
    assert bulk["samples"][0]["t_s"] == 0
    assert all(s["snd_cwnd"] > 0 for s in bulk["samples"])
    assert any(s["rtt_us"] for s in bulk["samples"])
    vegas = json.loads((out / "vegas.json").read_text())["flows"][0]
    assert vegas["samples"][0]["snd_cwnd"] == 4  # iw: 4 reached the stack
    sink = json.loads((out / "cbr.sink.json").read_text())["flows"][0]
    assert sink["packets_received"] > 0
    series = (out / "r1.csv").read_text().splitlines()
    assert series[0].startswith("time,elapsed_s,port,")
    assert len(series) == 1 + 2 * 71  # 2 ports, a sample every 0.1 s for 6 s + 1 s drain


def test_same_seed_same_bytes(tmp_path: Path) -> None:
    path = _write(tmp_path, DUMBBELL)
    a, b = tmp_path / "a", tmp_path / "b"
    assert _run(path, a, "--seed", "3") == 0
    assert _run(path, b, "--seed", "3") == 0
    files = sorted(p.relative_to(a) for p in a.rglob("*") if p.is_file())
    assert len(files) > 20
    assert files == sorted(p.relative_to(b) for p in b.rglob("*") if p.is_file())
    for f in files:
        assert (a / f).read_bytes() == (b / f).read_bytes(), f
    c = tmp_path / "c"
    assert _run(path, c, "--seed", "4", "--variant", "small") == 0
    assert json.loads((c / "small" / "results.json").read_text())["seed"] == 4


def test_set_overrides_apply(tmp_path: Path) -> None:
    path = _write(tmp_path, DUMBBELL)
    out = tmp_path / "out"
    args = ("--variant", "small", "--no-plots", "--set", "links[1].rate=2mbit")
    assert _run(path, out, *args) == 0
    bulk = json.loads((out / "small" / "results.json").read_text())["flows"][0]
    assert bulk["tcp"]["goodput_bps"] < 2e6


# a kernel-only congestion control: the simulator runs ratelab's stacks (a kernel
# without BBR refuses it when the file is read)
BBR_ERROR = (
    "flows[0].cc: 'bbr' is a kernel-only congestion control"
    if "bbr" in (kernel_congestion_controls() or ["bbr"])
    else "flows[0].cc: 'bbr' is not available in this kernel"
)
BAD = [
    (
        "  - {name: b, from: sender, to: receiver, transport: tcp, cc: bbr}\n",
        ":11:",
        BBR_ERROR,
    ),
    # the other host hangs off r2, which has no link to r1
    (
        "  - {name: u, from: sender, to: other, transport: udp, rate: 1mbit}\n",
        ":11:",
        'flows[0].to: "sender" cannot reach "other"',
    ),
]

BAD_BASE = """\
duration: 2s
routers:
  r1: {}
  r2: {}
hosts: [sender, receiver, other]
links:
  - {ends: [sender, r1], rate: 100mbit}
  - {ends: [r1, receiver], rate: 10mbit, delay: 5ms}
  - {ends: [r2, other], rate: 10mbit}
flows:
  - {name: ok, from: sender, to: receiver, transport: udp, rate: 1mbit}
variants:
  v1: {}
  v2: {}
"""


@pytest.mark.parametrize(("flow", "where", "message"), BAD)
def test_bad_input_is_one_line_status_2_nothing_written(
    tmp_path: Path, capsys: pytest.CaptureFixture, flow: str, where: str, message: str
) -> None:
    text = BAD_BASE.replace(
        "  - {name: ok, from: sender, to: receiver, transport: udp, rate: 1mbit}\n", flow
    )
    path = _write(tmp_path, text)
    out = tmp_path / "out"
    assert _run(path, out) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert err.startswith(f"{path}{where}"), err
    assert message in err
    assert not out.exists()


def test_a_bad_later_variant_writes_nothing(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """v1 runs, v2 sends to an unreachable host: neither leaves files."""
    text = BAD_BASE.replace("  v2: {}\n", "  v2:\n    flows[0].to: other\n")
    path = _write(tmp_path, text)
    out = tmp_path / "out"
    assert _run(path, out) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and 'flows[0].to: "sender" cannot reach "other"' in err
    assert not out.exists()


def test_zero_rate_link_names_the_field(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    path = _write(tmp_path, BAD_BASE.replace("rate: 10mbit, delay: 5ms", "rate: 0, delay: 5ms"))
    out = tmp_path / "out"
    assert _run(path, out) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith(f"{path}:8:")
    assert "links[1] (r1 -> receiver).rate: expected a rate above 0" in err
    assert not out.exists()


def test_progress_lines_are_passed_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    """ratelab-netsim reports progress on stderr on long runs (every tenth once a
    run has taken 2 s); ratelab-net prints each line as it comes. A wrapper
    around the real binary stands in for a long run."""
    from ratelab_net.sim_api import NETSIM

    wrapper = tmp_path / "netsim"
    wrapper.write_text(
        "#!/bin/sh\n"
        'echo "ratelab-netsim: 50 % (3.0 of 6.0 s simulated, 1234 events, 2.1 s)" >&2\n'
        f'exec {NETSIM} "$@"\n'
    )
    wrapper.chmod(0o755)
    monkeypatch.setenv("RATELAB_NETSIM", str(wrapper))
    out = tmp_path / "out"
    assert _run(_write(tmp_path, DUMBBELL), out, "--variant", "small", "--no-plots") == 0
    assert (
        "ratelab-net: 50 % (3.0 of 6.0 s simulated, 1234 events, 2.1 s)\n"
        in capsys.readouterr().out
    )


def test_a_missing_simulator_is_one_line_status_1(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    monkeypatch.setenv("RATELAB_NETSIM", str(tmp_path / "nothing"))
    out = tmp_path / "out"
    assert _run(_write(tmp_path, DUMBBELL), out) == 1
    err = capsys.readouterr().err
    assert err == f"ratelab-net: error: {tmp_path / 'nothing'} is not built (make deps builds it)\n"
    assert not out.exists()


def test_check_with_the_sim_backend(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """`check --backend sim` also refuses what only the simulator cannot run:
    a rate of 0 (the controller's "unlimited")."""
    path = _write(tmp_path, BAD_BASE.replace("rate: 10mbit, delay: 5ms", "rate: 0, delay: 5ms"))
    assert main(["check", str(path)]) == 0
    capsys.readouterr()
    assert main(["check", str(path), "--backend", "sim"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"{path}:8:") and "links[1] (r1 -> receiver).rate: expected" in err


def test_options_of_the_other_backend_are_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    path = _write(tmp_path, DUMBBELL)
    assert main(["run", str(path), "--seed", "1"]) == 2
    assert capsys.readouterr().err == (
        "ratelab-net: error: --seed is for --backend sim (a Mininet run has no seed)\n"
    )
    out = tmp_path / "out"
    assert _run(path, out, "--target", "bmv2") == 2
    assert capsys.readouterr().err == (
        "ratelab-net: error: --target and --allow-no-delay are for Mininet runs, "
        "not --backend sim\n"
    )
    assert not out.exists()


def test_a_knob_the_simulator_lacks_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    """A ratelab-stack knob the scenario format does not carry (hystart stands in
    for a future one) is refused in one line, not silently dropped."""
    from ratelab_net import sim_scenario

    knobs = tuple(k for k in sim_scenario._SIM_KNOBS if k != "hystart")
    monkeypatch.setattr(sim_scenario, "_SIM_KNOBS", knobs)
    path = _write(tmp_path, DUMBBELL)
    assert _run(path, tmp_path / "out") == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith(f"{path}:17:35:")
    assert "flows[1].hystart: the simulator does not take this knob yet" in err


def test_the_file_can_choose_the_simulator(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """`backend: sim` in the file runs it simulated without --backend; a bad
    value is one line naming the key."""
    path = _write(tmp_path, "backend: sim\n" + DUMBBELL)
    out = tmp_path / "out"
    assert main(["run", str(path), "--out", str(out), "--variant", "small", "--no-plots"]) == 0
    assert "note: simulated (ratelab-netsim, seed 0)" in capsys.readouterr().out
    assert (out / "small" / "results.json").is_file()
    bad = _write(tmp_path, "backend: ns3\n" + DUMBBELL, "bad.yaml")
    assert main(["check", str(bad)]) == 2
    err = capsys.readouterr().err
    assert err == f"{bad}:1:10: error: backend: expected mininet or sim, got 'ns3'\n"
