"""The ns-3 comparison: both programs build, run each algorithm briefly, and
write well-formed, plausible traces; bad input gives a one-line error."""

from __future__ import annotations

import subprocess
from pathlib import Path

import compare
import pytest
from build_programs import build

ROOT = Path(__file__).resolve().parents[2]
NS3_BINARY = ROOT / "build/ns3/stack_dumbbell"
RATELAB_BINARY = ROOT / "target/debug/ratelab-stack-dumbbell"
DURATION_S = 3.0


@pytest.fixture(scope="module")
def binaries() -> dict[str, Path]:
    """Build both programs as make and cargo would (incrementally)."""
    build(NS3_BINARY, "ratelab-stack", "ratelab-stack-dumbbell")
    return {"ns-3": NS3_BINARY, "ratelab": RATELAB_BINARY}


def _plausible(run: compare.Run) -> None:
    trace, s = run.trace, run.summary
    assert len(trace) == round(DURATION_S / 0.010)
    assert trace[-1].time_s == pytest.approx(DURATION_S)
    # the summary is the trace's
    assert s["bytes_acked"] == trace[-1].bytes_acked
    assert s["goodput_bps"] == pytest.approx(trace[-1].bytes_acked * 8 / DURATION_S)
    queue = [x.queue_packets for x in trace]
    assert s["mean_queue_packets"] == pytest.approx(sum(queue) / len(queue))
    assert s["max_queue_packets"] == max(queue) <= 100
    assert max(x.cwnd_bytes for x in trace) > 0


@pytest.mark.parametrize("variant", compare.VARIANTS, ids=lambda v: v.label.replace(" ", "_"))
def test_each_algorithm_runs_in_both_stacks(
    binaries: dict[str, Path], variant: compare.Variant, tmp_path: Path
) -> None:
    for stack, binary in binaries.items():
        run = compare.run_stack(stack, binary, variant, DURATION_S, 10, tmp_path)
        _plausible(run)
        share = float(run.summary["goodput_bps"]) / compare.BOTTLENECK_BPS
        if stack == "ns-3" and variant == compare.Variant("vegas"):
            # host_stacks/README.md, "Compared with ns-3": ns-3's Vegas with delayed
            # ACKs stops growing at about 23 segments with an empty queue.
            assert 0.2 < share < 0.5, run.summary
            assert float(run.summary["mean_queue_packets"]) < 1, run.summary
            assert run.trace[-1].cwnd_bytes == run.trace[len(run.trace) // 2].cwnd_bytes
        else:
            assert 0.5 < share < 1, run.summary
        # a lone flow loses only at the bottleneck's queue, and retransmits what it lost
        assert int(run.summary["retransmissions"]) >= int(run.summary["drops"]) - 10


def test_compare_writes_table_and_figure(binaries: dict[str, Path], tmp_path: Path) -> None:
    out = tmp_path / "results" / "ns3_stacks"
    rc = compare.main(
        [
            *("--ns3", str(binaries["ns-3"]), "--ratelab", str(binaries["ratelab"])),
            *("--out", str(out), "--duration", "1"),
        ]
    )
    assert rc == 0
    table = out.with_suffix(".md").read_text()
    rows = [line for line in table.splitlines() if line.startswith("| ") and "Mbit" not in line]
    assert len(rows) == 2 * len(compare.VARIANTS)
    assert "| vegas | ns-3 TcpVegas |" in table and "| cubic | ratelab |" in table
    assert out.with_suffix(".png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--cc=vegs"], "--cc"),
        (["--cc=reno", "--duration=abc"], "--duration"),
        (["--cc=reno", "--duration=0"], "--duration"),
        (["--cc=reno", "--iw=0"], "--iw"),
        (["--cc=reno", "--iw=2.5"], "--iw"),
        (["--cc=reno", "--ack-every-segment=2"], "--ack-every-segment"),
        (["--cc=reno", "--bogus=1"], "unknown option --bogus"),
        (["--cc=reno", "iw"], "expected --OPTION=VALUE"),
    ],
)
def test_programs_reject_bad_options(
    binaries: dict[str, Path], tmp_path: Path, args: list[str], message: str
) -> None:
    outputs = [f"--csv={tmp_path / 't.csv'}", f"--summary={tmp_path / 's.json'}"]
    for binary in binaries.values():
        done = subprocess.run(
            [str(binary), *args, *outputs], capture_output=True, text=True, check=False
        )
        assert done.returncode == 2
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and message in lines[0], done.stderr
        assert not (tmp_path / "s.json").exists()


def test_programs_report_unwritable_output(binaries: dict[str, Path], tmp_path: Path) -> None:
    for binary in binaries.values():
        done = subprocess.run(
            [
                *(str(binary), "--cc=reno", "--duration=0.2", "--csv=/nonexistent/t.csv"),
                f"--summary={tmp_path / 's.json'}",
            ],
            capture_output=True,
            text=True,
            check=False,
        )
        assert done.returncode == 2
        assert done.stderr.count("\n") == 1 and "--csv" in done.stderr, done.stderr


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "t.csv:1: expected the header"),
        ("time,cwnd\n", "t.csv:1: expected the header"),
        ("time_s,cwnd_bytes,ssthresh_bytes,bytes_acked,queue_packets\n", "no samples"),
        (
            "time_s,cwnd_bytes,ssthresh_bytes,bytes_acked,queue_packets\n0.01,1448,inf,0\n",
            "t.csv:2: expected 5 fields, got 4",
        ),
        (
            "time_s,cwnd_bytes,ssthresh_bytes,bytes_acked,queue_packets\n0.01,x,inf,0,0\n",
            "t.csv:2: cwnd_bytes: expected a number",
        ),
        (
            "time_s,cwnd_bytes,ssthresh_bytes,bytes_acked,queue_packets\n0.01,1448,inf,0,-1\n",
            "t.csv:2: queue_packets: expected a number >= 0",
        ),
        (
            "time_s,cwnd_bytes,ssthresh_bytes,bytes_acked,queue_packets\n"
            "0.02,1448,inf,0,0\n0.01,1448,inf,0,0\n",
            "t.csv:3: time_s: not after",
        ),
        (
            "time_s,cwnd_bytes,ssthresh_bytes,bytes_acked,queue_packets\n"
            "0.01,1448,inf,5,0\n0.02,1448,inf,4,0\n",
            "t.csv:3: bytes_acked: below",
        ),
    ],
)
def test_malformed_trace_names_file_and_line(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "t.csv"
    path.write_text(text)
    with pytest.raises(compare.CompareError, match=message.replace(".", r"\.")):
        compare.read_trace(path)


def test_malformed_summary_names_the_field(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    path.write_text('{"stack": "ns-3", "cc": "reno"}')
    with pytest.raises(compare.CompareError, match="duration_s: missing"):
        compare.read_summary(path)
    path.write_text("{")
    with pytest.raises(compare.CompareError, match=r"s\.json:1: not JSON"):
        compare.read_summary(path)


def test_missing_program_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "nothing"
    rc = compare.main(["--ns3", str(missing), "--ratelab", str(missing), "--out", str(tmp_path)])
    err = capsys.readouterr().err
    assert rc == 2
    assert err.count("\n") == 1 and "nothing: cannot run" in err
