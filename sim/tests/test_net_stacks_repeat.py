"""ratelab_net.repeat without a network: the summary of repeated runs read back
from results folders (goodput spread, pair ratios, settled queue, load) and its
figures, and its errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from ratelab_net.repeat import main

TOPOLOGY = """\
duration: 20s
routers:
  r1: {}
hosts: [a, b]
links:
  - {ends: [a, r1], rate: 100mbit}
  - {ends: [r1, b], rate: 10mbit, delay: 20ms}
flows:
  - {name: k, from: a, to: b, transport: tcp, cc: reno, start: 1s, stop: 19s}
  - {name: rl, from: a, to: b, transport: tcp, stack: ratelab, cc: reno, start: 1s, stop: 19s}
variants:
  pair: {}
  alone:
    flows:
      - {name: k, from: a, to: b, transport: tcp, cc: reno, start: 1s, stop: 19s}
"""
HEADER = "time,elapsed_s,port,last_q\n"


def _flow(path: Path, goodput: float, extra: dict[str, object] | None = None) -> None:
    samples = [{"t_s": 0.5 * i, "snd_cwnd": 10 + i} for i in range(4)]
    flow = {"goodput_bps": goodput, "retransmissions": 10, "samples": samples, **(extra or {})}
    path.write_text(json.dumps({"flows": [flow]}))


def _queue(path: Path, port2: list[int]) -> None:
    """r1.csv: port 1 nearly empty, port 2 the bottleneck, a sample per second."""
    rows = [f"0,{t},1,{1 if t == 3 else 0}\n0,{t},2,{q}\n" for t, q in enumerate(port2)]
    path.write_text(HEADER + "".join(rows))


def _results(out: Path) -> None:
    """Two runs: the ratelab flow gets 4 then 6 Mbit/s beside the kernel's 5 and 4."""
    for k, (rl, kernel, q) in enumerate([(4e6, 5e6, [0, 50, 60, 70]), (6e6, 4e6, [0, 90, 80, 40])]):
        pair = out / f"run{k + 1}" / "pair"
        alone = out / f"run{k + 1}" / "alone"
        for d in (pair, alone):
            d.mkdir(parents=True)
        extra = {"rtos": k, "spurious_rtos": k, "resets_received": 0}
        _flow(pair / "rl.json", rl, {**extra, "established_monotonic_s": 100.5 + k})
        _flow(pair / "k.json", kernel, {"established_monotonic_s": 100.46 + k})
        _flow(alone / "k.json", 9.5e6)
        _queue(pair / "r1.csv", q)
        _queue(alone / "r1.csv", [0, 10, 20, 30])
        (pair / "load.txt").write_text(f"{k + 1}.00 0.50 0.25\n")


def test_summary_of_earlier_runs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    topo = tmp_path / "t.yaml"
    topo.write_text(TOPOLOGY)
    out = tmp_path / "out"
    _results(out)
    figures = tmp_path / "img"
    args = [str(topo), "--repeat", "2", "--out", str(out), "--summarize-only"]
    assert main([*args, "--settle", "2", "--figures", str(figures)]) == 0
    text = capsys.readouterr().out
    lines = text.splitlines()
    assert "| pair | k | kernel reno | 4.50 (4.00-5.00) | 10 | - | - |" in lines
    assert "| pair | rl | ratelab reno | 5.00 (4.00-6.00) | 10 | 1 (1) | 0 |" in lines
    assert "| alone | k | kernel reno | 9.50 (9.50-9.50) | 10 | - | - |" in lines
    # ratelab / kernel whatever the order of the flows: 0.8 and 1.5
    # ... and the ratelab flow connected 40 ms after the kernel's in both
    assert "| pair | rl/k | 1.15 (0.80-1.50) | 0.80, 1.50 | 40, 40 |" in lines
    # the bottleneck port from 2 s on: (60 + 70) / 2 and (80 + 40) / 2; max 80
    assert "| pair | r1.2 | 62.5 (60.0-65.0) | 80 | 1.00 0.50 0.25; 2.00 0.50 0.25 |" in lines
    assert "| alone | r1.2 | 25.0 (25.0-25.0) | 30 | ?; ? |" in lines
    assert (out / "summary.md").read_text() == text.split("figure:")[0]
    names = sorted(p.name for p in figures.iterdir())
    assert names == ["net-t-alone.png", "net-t-pair.png", "net-t-queues.png"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--repeat", "0"], "--repeat: expected 1 or more runs, got 0"),
        (["--repeat", "3"], "run3/pair/k.json: cannot read the flow's results"),
    ],
)
def test_bad_input_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    topo = tmp_path / "t.yaml"
    topo.write_text(TOPOLOGY)
    out = tmp_path / "out"
    _results(out)
    assert main([str(topo), "--out", str(out), "--summarize-only", *args]) == 1
    captured = capsys.readouterr()
    assert message in captured.err and captured.err.count("\n") == 1, captured.err
    assert captured.out == "" and not (out / "summary.md").exists()


def test_a_failed_flow_and_a_bad_topology(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    topo = tmp_path / "t.yaml"
    topo.write_text(TOPOLOGY)
    out = tmp_path / "out"
    _results(out)
    (out / "run1" / "pair" / "rl.json").write_text(json.dumps({"flows": [{"error": "reset"}]}))
    assert main([str(topo), "--out", str(out), "--summarize-only", "--repeat", "1"]) == 1
    assert "rl.json: no goodput_bps (the flow failed: reset)" in capsys.readouterr().err
    assert main([str(topo), "--out", str(out), "--summarize-only", "--variant", "trio"]) == 2
    assert capsys.readouterr().err.endswith(
        "error: variants: no variant 'trio' (the file has: pair, alone)\n"
    )
    # --set need fit only the variants asked for (pair's two flows would not fit it)
    alone = [
        "--variant",
        "alone",
        "--repeat",
        "2",
        "--set",
        "duration=10s",
        "--set",
        "flows[0].stop=9s",
    ]
    assert main([str(topo), "--out", str(out), "--summarize-only", *alone]) == 0
    assert "| alone | k | kernel reno |" in capsys.readouterr().out
    topo.write_text(TOPOLOGY.replace("cc: reno, start", "cc: bogus, start", 1))
    assert main([str(topo), "--out", str(out), "--summarize-only"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"{topo}:") and "flows[0].cc" in err and err.count("\n") == 1
