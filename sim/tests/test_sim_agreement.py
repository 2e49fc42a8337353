"""The simulator's kernel-flow settings and the agreement table's arithmetic
(ratelab_net.agreement, docs/NET.md "Simulation"); no root. The Mininet
comparison itself is test_sim_agreement_mininet.py."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from ratelab_net import agreement, sim_scenario
from ratelab_net.agreement import Case, Measured, main, measure, same_order, table_rows, within
from ratelab_net.cli import main as net_run
from ratelab_net.routers import plan_routers
from ratelab_net.sim_scenario import build_scenario
from ratelab_net.topology import load_variants
from ratelab_sim.build import ROOT

DUMBBELL = ROOT / "sim" / "examples" / "dumbbell.yaml"
THREE = ROOT / "sim" / "examples" / "three_routers.yaml"


def _tcp_specs(path: Path, sets: list[str], variant: str | None = None) -> dict[str, dict]:
    [(_, topo)] = load_variants(str(path), sets, variant)
    scenario = build_scenario(topo, plan_routers(topo))
    return {f["name"]: f["tcp"] for f in scenario["flows"] if "tcp" in f}


def test_kernel_flows_run_as_linux_does() -> None:
    # the dumbbell's kernel Cubic: Linux's HyStart, its RTO formula, PRR,
    # its receiver's quick ACKs
    linux = {"rto_formula": "linux", "prr": True, "quickack": True}
    bulk = _tcp_specs(DUMBBELL, [], "small-fifo")["bulk"]
    assert bulk["cc"] == "cubic-linux"
    assert bulk["knobs"] == linux
    # the three-router example's kernel Reno: no HyStart in Linux's Reno
    reno = _tcp_specs(THREE, [])["reno"]
    assert reno["cc"] == "reno" and reno["knobs"] == linux


def test_ratelab_stack_flows_keep_their_own_settings() -> None:
    sets = ["flows[0].stack=ratelab"]
    assert "knobs" not in _tcp_specs(DUMBBELL, sets, "small-fifo")["bulk"]
    assert _tcp_specs(DUMBBELL, sets, "small-fifo")["bulk"]["cc"] == "cubic"
    sets += ["flows[0].hystart=true"]
    assert _tcp_specs(DUMBBELL, sets, "small-fifo")["bulk"] == {
        "cc": "cubic",
        "app": {"kind": "bulk"},
        "knobs": {"hystart": True},
    }
    # the send buffer: a size is a fixed buffer in bytes; auto, the stack's default
    for value, knob in (("256kB", 256_000), ("auto", "auto")):
        spec = _tcp_specs(DUMBBELL, [*sets, f"flows[0].send_buffer={value}"], "small-fifo")
        assert spec["bulk"]["knobs"] == {"hystart": True, "send_buffer": knob}


def test_kernel_cubic_loses_less_in_slow_start_than_rfc_cubic(tmp_path: Path) -> None:
    """The large FIFO: RFC 9438 Cubic's slow start overflows 200 packets and
    loses hundreds; as Linux's (its HyStart) it leaves slow start first."""
    for stack, most in (("kernel", 60), ("ratelab", None)):
        out = tmp_path / stack
        args = ["run", str(DUMBBELL), "--backend", "sim", "--variant", "large-fifo"]
        args += ["--out", str(out), "--no-plots", "--set", f"flows[0].stack={stack}"]
        assert net_run(args) == 0
        [(_, topo)] = load_variants(str(DUMBBELL), [f"flows[0].stack={stack}"], "large-fifo")
        drops = measure(topo, out / "large-fifo").drops["r1.2"]
        if most is not None:
            assert drops <= most, drops
        else:
            assert drops > 200, drops


def test_quick_acks_let_kernel_cubic_leave_slow_start_by_the_ack_train(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The small FIFO and RED: Linux's receiver ACKs every segment while its
    window grows, 1.2 ms apart at 10 Mbit/s, so HyStart's ACK train (ACKs
    within 2 ms for half the lowest RTT) ends slow start before the queue
    overflows (Mininet: 24 to 34 drops on a quiet machine). ACKing every
    second segment (2.4 ms apart) breaks every train: the queue overflows."""

    def drops(variant: str) -> int:
        out = tmp_path / str(len(list(tmp_path.iterdir())))
        args = ["run", str(DUMBBELL), "--backend", "sim", "--variant", variant]
        assert net_run([*args, "--out", str(out), "--no-plots"]) == 0
        [(_, topo)] = load_variants(str(DUMBBELL), [], variant)
        return measure(topo, out / variant).drops["r1.2"]

    assert drops("small-fifo") <= 60 and drops("large-red") <= 60
    monkeypatch.delitem(sim_scenario.LINUX_KNOBS, "quickack")
    assert drops("small-fifo") > 120 and drops("large-red") > 200


def test_within_and_same_order() -> None:
    assert within(9.0, 10.0, 0.10) and not within(8.9, 10.0, 0.10)
    assert within(0.0, 0.0, 0.2) and not within(1.0, 0.0, 0.2)
    assert same_order(30, 10) and not same_order(31, 10)
    assert same_order(9, 0), "both under 10: noise"
    assert not same_order(10, 0) and not same_order(154, 34)


def _m(goodput: float, queue: float, drops: int, ping: float) -> Measured:
    return Measured(
        {"bulk": goodput * 1e6},
        {"ping": ping},
        {"r1.1": 0.0, "r1.2": queue},
        {"r1.1": 0, "r1.2": drops},
    )


def test_table_rows_give_means_ratios_and_verdicts() -> None:
    mininet = [_m(9.0, 10.0, 20, 50.0), _m(10.0, 12.0, 40, 54.0)]
    sim = [_m(9.5, 15.0, 200, 52.0)]
    rows = table_rows(Case("x/dumbbell.yaml", "small"), mininet, sim)
    assert rows == [
        "| dumbbell small | bulk goodput Mbit/s | 9.50 (9.00-10.00) | 9.50 | 1.00 | ±10 % | pass |",
        "| dumbbell small | r1.2 mean queue, packets | 11.0 (10.0-12.0) | 15.0 | 1.36 | ±20 % "
        "| **fail** |",
        "| dumbbell small | r1.2 drops | 30 (20-40) | 200 | 6.67 | x3 | **fail** |",
        "| dumbbell small | ping RTT mean, ms | 52.0 (50.0-54.0) | 52.0 | 1.00 | - | - |",
    ]


def test_measure_reads_both_backends_the_same_way(tmp_path: Path) -> None:
    """A simulated run's files and the same numbers in a Mininet run's layout
    (cumulative counters in <router>.csv, no drops.csv) measure the same."""
    sim = tmp_path / "sim"
    assert net_run(["run", str(THREE), "--backend", "sim", "--out", str(sim), "--no-plots"]) == 0
    [(_, topo)] = load_variants(str(THREE), [], None)
    a = measure(topo, sim)
    assert set(a.goodput_bps) == {"rbcc1", "rbcc2", "reno"} and set(a.ping_ms) == {"ping"}
    assert max(a.queue, key=lambda p: a.queue[p]) == "r2.3"
    assert a.drops["r2.3"] > 0
    # the same run as Mininet would leave it: drops in the last row of r2.csv
    mn = tmp_path / "mininet"
    shutil.copytree(sim, mn)
    (mn / "results.json").unlink()
    text = (mn / "r2.csv").read_text().splitlines()
    header = text[0].split(",")
    last = text[-1].split(",")
    last[header.index("drop_queue_full")] = str(a.drops["r2.3"])
    (mn / "r2.csv").write_text("\n".join([*text[:-1], ",".join(last)]) + "\n")
    b = measure(topo, mn)
    assert b.goodput_bps == a.goodput_bps and b.ping_ms == a.ping_ms and b.queue == a.queue
    assert b.drops["r2.3"] == a.drops["r2.3"]


def test_bad_input_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    report = tmp_path / "t.md"
    base = ["--out", str(tmp_path / "runs"), "--report", str(report)]
    assert main([*base, "--runs", "0"]) == 2
    assert capsys.readouterr().err.strip().endswith("--runs: expected at least 1, got 0")
    assert main([*base, "--case", f"{DUMBBELL}:nope", "--summarize-only"]) == 2
    err = capsys.readouterr().err.strip()
    assert "no variant 'nope'" in err and len(err.splitlines()) == 1
    # nothing run yet: the summary names the missing run
    assert main([*base, "--case", str(THREE), "--summarize-only"]) == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert err.startswith(f"{agreement.PROG}: error: ") and "mininet/three_routers/run1" in err
    assert not report.exists()
