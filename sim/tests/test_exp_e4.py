"""ratelab-exp's E4 (sim/experiments/e4.yaml) and its mininet backend: the
quick study in the simulator (no root) and in Mininet (root, as CI runs it),
the Mininet results folder read into the simulator's tables, and bad input."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pytest
from ratelab_exp import mininet, run_experiment
from ratelab_exp.runner import UsageError
from ratelab_net.topology import load_variants

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
E4 = ROOT / "sim" / "experiments" / "e4.yaml"


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(BIN / "ratelab-exp"), *args], capture_output=True, text=True, timeout=600
    )


def _check_quick(out: Path, cases: set[str]) -> pd.DataFrame:
    """What both backends' quick E4 must show: the large FIFO's long queue and
    pings, the priority queue's short ones (and, with `small`, the small FIFO's
    shorter queue), the downloads finished, the tables and figures written."""
    runs = pd.read_parquet(out / "runs.parquet")
    assert (runs["status"] == "ok").all(), runs[["case", "error"]]
    by_case = runs.set_index("case")
    assert set(by_case.index) == cases
    large, prio = by_case.loc["large"], by_case.loc["large-prio"]
    # a standing queue of tens of packets at 1.5 Mbit/s (8 ms each) is on every ping
    assert large["max_avg_queue"] > 20 and large["ping_rtt_ms"] > 150
    # in their own queue the pings pass the long flow's, and so does the download
    assert 20 < prio["ping_rtt_ms"] < 60  # the base RTT is 20 ms
    assert prio["download_time_s"] < large["download_time_s"] / 2
    assert prio["max_avg_queue"] > 20  # the long flow's own
    assert (runs["downloads_done_pct"] == 100).all()
    assert runs["download_time_s"].between(0.2, 4.5).all()  # 50 kB at 1.5 Mbit/s and more
    assert runs["long_flow_goodput"].between(0.8e6, 1.5e6).all()
    pings = pd.read_parquet(out / "pings.parquet")
    assert pings.groupby("run_id")["seq"].min().eq(0).all()
    assert pings.groupby("run_id")["rtt_ms"].count().ge(40).all()  # 5 s at 10 a second
    queues = pd.read_parquet(out / "queues.parquet")
    assert set(queues["router"] + "." + queues["port"].astype(str)) == {"r1.2"}
    downloads = pd.read_parquet(out / "downloads.parquet")
    assert list(downloads["flow"]) == ["web01"] * len(cases)
    samples = pd.read_parquet(out / "samples.parquet")
    assert samples[samples["flow"] == "long"]["cwnd"].max() > 10
    report = (out / "report.md").read_text()
    # the report's contrasts are the runs' own medians
    a, b = large["download_time_s"], prio["download_time_s"]
    assert (
        f"web download time (mean) from large to large-prio (medians): cubic {a:.3g} -> {b:.3g} s"
        in report
    )
    if "small" in cases:
        small = by_case.loc["small"]
        assert large["max_avg_queue"] > 1.8 * small["max_avg_queue"] > 9
        assert large["ping_rtt_ms"] > small["ping_rtt_ms"] + 80 > 100
        assert prio["ping_rtt_ms"] < small["ping_rtt_ms"]
        a, b = small["ping_rtt_ms"], large["ping_rtt_ms"]
        line = f"ping RTT (mean) from small to large (medians): cubic {a:.3g} -> {b:.3g} ms"
        assert line in report
    for name in ("series-cwnd", "series-queue", "series-ping_rtt_ms", "series-download_s"):
        assert (out / f"{name}.png").stat().st_size > 0 and (out / f"{name}.pdf").exists()
    assert (out / "ping_rtt_ms-box.png").exists()
    return runs


def test_e4_quick_in_the_simulator(tmp_path: Path) -> None:
    out = tmp_path / "e4"
    proc = _run("run", str(E4), "--quick", "--workers", "2", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    assert "e4: 3/3 runs, 0 failed" in proc.stderr
    runs = _check_quick(out, {"small", "large", "large-prio"})
    assert not (out / "net").exists()  # the simulator keeps no network folders
    assert runs["tcp_rtos"].notna().all()  # ratelab's stack counts them
    assert "Not measured" not in (out / "report.md").read_text()


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root (Mininet)")
def test_e4_quick_in_mininet(tmp_path: Path) -> None:
    """The quick's first two cases (large, large-prio: 2 runs, about 25 s)."""
    out = tmp_path / "e4m"
    args = ("--quick", "--backend", "mininet", "--max-runs", "2", "--out", str(out))
    proc = _run("run", str(E4), *args)
    assert proc.returncode == 0, proc.stderr
    assert "e4: 2/3 runs, 0 failed" in proc.stderr
    assert "Mininet run c000-cubic" in proc.stderr
    runs = _check_quick(out, {"large", "large-prio"})
    assert runs["tcp_rtos"].isna().all()  # n/a with kernel TCP flows, and why
    report = (out / "report.md").read_text()
    assert "2 ok, 0 failed, 1 not run yet." in report
    assert "## Not measured on mininet (n/a)\n\n- tcp_rtos: the kernel's TCP_INFO" in report
    for run_id in runs["run_id"]:  # ratelab-net's own folder is kept per run
        folder = out / "net" / run_id
        assert "conserved" in (folder / "ratelab-net.log").read_text()
        assert (folder / "out" / "r1.csv").stat().st_size > 0
    # the report again from the runs on disk, as the mininet backend's
    assert json.loads((out / "experiment.json").read_text())["backend"] == "mininet"
    assert _run("report", str(out)).returncode == 0
    assert (out / "report.md").read_text() == report


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root (Mininet)")
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_ctrl_c_in_mininet_takes_the_network_down(
    tmp_path: Path, r1_r2_leftovers: Callable[[], list[str]], signum: int
) -> None:
    """A Ctrl-C (SIGINT to ratelab-exp alone) or a SIGTERM in the middle of a
    Mininet run: the run's network is taken down, nothing is recorded for it,
    one line."""
    assert not r1_r2_leftovers(), "a previous run left something behind"
    out = tmp_path / "e4m"
    cmd = [str(BIN / "ratelab-exp"), "run", str(E4), "--quick", "--backend", "mininet"]
    proc = subprocess.Popen(
        [*cmd, "--out", str(out)], stderr=subprocess.PIPE, text=True, start_new_session=True
    )
    assert proc.stderr is not None
    for line in proc.stderr:
        if "Mininet run c000" in line:
            break
    time.sleep(5)  # the network is up and the traffic running (5 s of it)
    proc.send_signal(signum)
    rest = proc.stderr.read()
    assert proc.wait(timeout=120) == 130, rest
    assert rest.strip().splitlines()[-1] == "ratelab-exp: interrupted; the finished runs are kept"
    assert "Traceback" not in rest
    assert not r1_r2_leftovers()
    assert not list((out / "runs").glob("*.json"))


TOPOLOGY = """\
duration: 4s
poll_interval: 0.5s
routers:
  r1: {}
hosts: [a, b]
links:
  - {ends: [a, r1], rate: 100mbit}
  - {ends: [r1, b], rate: 10mbit, delay: 5ms}
flows:
  - {name: bulk, from: a, to: b, transport: tcp, cc: reno, start: 1s}
  - {name: page, from: a, to: b, transport: tcp, cc: reno, bytes: 20000, start: 2s}
  - {name: cbr, from: a, to: b, transport: udp, rate: 1mbit}
  - {name: ping, from: b, to: a, transport: ping, interval: 0.5s, start: 1s}
"""

CSV_HEAD = (
    "time,elapsed_s,port,packets_in,drop_not_ipv4,drop_malformed,drop_bad_checksum,"
    "drop_ttl_expired,drop_no_route,packets_out,bytes_out,drop_queue_full,drop_red_early,"
    "drop_red_forced,last_q,last_avg,rbcc_packets,abt_hits,abt_updates,abt_inserts,"
    "abt_removals,abt_collisions"
)


def _tcp(samples: list[dict], **extra: object) -> dict:
    return {"command": "tcp-send", "flows": [{"samples": samples, **extra}]}


def test_mininet_folder_as_the_simulators_tables(tmp_path: Path) -> None:
    """A ratelab-net results folder (files as the hosts and the poller write
    them) read into flows, ports, drops, counters, queues, samples, pings."""
    path = tmp_path / "t.yaml"
    path.write_text(TOPOLOGY)
    topo = load_variants(path, [], None)[0][1]
    out = tmp_path / "out"
    out.mkdir()
    rows = [
        "1.0,0.0,1,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0",
        "1.0,0.0,2,5,0,0,0,0,0,5,500,0,0,0,0,0,0,0,0,0,0,0",
        "1.5,0.5,1,10,0,0,0,0,0,900,0,0,0,0,0,0,0,0,0,0,0,0",
        "1.5,0.5,2,905,0,0,0,0,0,885,1300500,7,0,0,12,786432,0,0,0,0,0,0",
    ]
    (out / "r1.csv").write_text("\n".join([CSV_HEAD, *rows]) + "\n")
    bulk_samples = [
        {"t_s": 0.0, "rtt_us": 10000, "snd_cwnd": 10, "snd_ssthresh": None},
        {"t_s": 0.5, "rtt_us": 14000, "snd_cwnd": 30, "snd_ssthresh": 20},
    ]
    bulk = _tcp(bulk_samples, bytes_acked=900000, goodput_bps=2e6, rtt_min_us=10000)
    bulk["flows"][0] |= {"ssthresh_changes": 1, "retransmissions": 7, "bytes_limit": None}
    (out / "bulk.json").write_text(json.dumps(bulk))
    sink = {"start_monotonic_s": 100.0, "flows": [{"bytes_received": 900000, "goodput_bps": 1.9e6}]}
    (out / "bulk.sink.json").write_text(json.dumps(sink))
    page = _tcp([{"t_s": 0.0, "rtt_us": 10000, "snd_cwnd": 10}], bytes_limit=20000)
    page["flows"][0] |= {"established_monotonic_s": 102.0, "retransmissions": 0}
    (out / "page.json").write_text(json.dumps(page))
    page_sink = {
        "start_monotonic_s": 100.0,
        "flows": [{"bytes_received": 20000, "last_byte_s": 2.25, "goodput_bps": 1e6}],
    }
    (out / "page.sink.json").write_text(json.dumps(page_sink))
    (out / "cbr.json").write_text(json.dumps({"flows": [{"packets_sent": 100}]}))
    udp_sink = {"flows": [{"packets_received": 90, "bytes_received": 9000, "delay_mean_us": 6000}]}
    (out / "cbr.sink.json").write_text(json.dumps(udp_sink))
    (out / "ping.ping.txt").write_text(
        "PING 10.0.1.1 (10.0.1.1) 56(84) bytes of data.\n"
        "[1.1] 64 bytes from 10.0.1.1: icmp_seq=1 ttl=63 time=10.5 ms\n"
        "[2.1] 64 bytes from 10.0.1.1: icmp_seq=3 ttl=63 time=22.0 ms\n"
        "\n--- 10.0.1.1 ping statistics ---\n"
        "3 packets transmitted, 2 received, 33% packet loss, time 1000ms\n"
    )
    got = mininet.tables(topo, out)
    flows = {f["flow"]: f for f in got.flows}
    assert flows["bulk"]["transport"] == "tcp/reno"
    assert flows["bulk"]["bytes_received"] == 900000 and flows["bulk"]["goodput_bps"] == 1.9e6
    assert flows["bulk"]["tcp_retransmissions"] == 7 and flows["bulk"]["tcp_cwnd"] == 30
    assert flows["bulk"]["tcp_rtos"] is None  # the kernel does not count them
    assert flows["bulk"]["completion_s"] is None  # no transfer
    # SYN (established at 102 s less the 10 ms handshake) to the last byte at 102.25 s
    assert flows["page"]["completion_s"] == pytest.approx(0.26)
    assert flows["cbr"]["udp_lost"] == 10 and flows["cbr"]["one_way_delay_mean_ns"] == 6e6
    assert flows["ping"]["ping_sent"] == 3 and flows["ping"]["ping_received"] == 2
    assert got.pings == [
        {"flow": "ping", "seq": 0, "sent_s": 1.0, "rtt_ms": 10.5},
        {"flow": "ping", "seq": 2, "sent_s": 2.0, "rtt_ms": 22.0},
    ]
    # the bulk flow's samples at its start, the page's at its own
    times = [(s["flow"], s["time_s"]) for s in got.samples]
    assert times == [("bulk", 1.0), ("bulk", 1.5), ("page", 2.0)]
    assert got.samples[1]["srtt_ms"] == 14.0 and got.samples[1]["ssthresh"] == 20
    # counters are the last sample less the first
    port2 = next(p for p in got.ports if p["port"] == 2)
    assert (port2["rx_packets"], port2["tx_packets"], port2["tx_bytes"]) == (900, 880, 1300000)
    assert got.drops == [{"node": "r1", "port": 2, "cause": "queue_full", "packets": 7}]
    assert got.queues[-1] == {
        "time_s": 0.5,
        "router": "r1",
        "port": 2,
        "queue_packets": 12,
        "last_avg": 12.0,
    }


EXPERIMENT = """\
name: tiny
base: t.yaml
cases:
  short: {duration: 3s}
  long: {duration: 4s}
transports:
  reno: {}
metrics: [ping_rtt_ms, download_time_s]
contrasts:
  - {metric: ping_rtt_ms, from: short, to: long}
"""


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (
            ("from: short", "from: medium"),
            "exp.yaml:10:33: error: contrasts[0].from: unknown case 'medium'; cases: short, long",
        ),
        (
            ("metric: ping_rtt_ms, from", "metric: tcp_rtos, from"),
            "contrasts[0].metric: 'tcp_rtos' is not in metrics",
        ),
        (("to: long", "to: short"), "contrasts[0].to: expected another case than from"),
        (("  short: {duration: 3s}", "  sh ort: {duration: 3s}"), "cases.sh ort: a case name"),
        (("  long: {duration: 4s}", "  long: [4s]"), "cases.long: expected a mapping"),
        (("transports:", "backend: ns3\ntransports:"), "backend: expected one of sim, mininet"),
        (
            (
                "contrasts:\n  - {metric: ping_rtt_ms, from: short, to: long}\n",
                "series: [queue]\nfigures:\n  - {series: queue, flows: r1}\n",
            ),
            "figures[0].flows: expected a list of flow names",
        ),
    ],
)
def test_bad_e4_style_file_is_one_line(
    tmp_path: Path, change: tuple[str, str], expected: str
) -> None:
    (tmp_path / "t.yaml").write_text(TOPOLOGY)
    assert change[0] in EXPERIMENT
    text = EXPERIMENT.replace(*change)
    path = tmp_path / "exp.yaml"
    path.write_text(text)
    out = tmp_path / "out"
    proc = _run("run", str(path), "--out", str(out), "--workers", "1")
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and expected in lines[0], proc.stderr
    assert not out.exists()


def test_mininet_backend_refuses_dask_options_and_non_root(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "t.yaml").write_text(TOPOLOGY)
    path = tmp_path / "exp.yaml"
    path.write_text(EXPERIMENT)
    out = tmp_path / "out"
    proc = _run("run", str(path), "--backend", "mininet", "--workers", "2", "--out", str(out))
    assert proc.returncode == 2
    assert proc.stderr.strip() == (
        "ratelab-exp: --scheduler and --workers are for the sim backend: Mininet runs are "
        "run one at a time on this machine"
    )
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    with pytest.raises(UsageError, match="backend mininet needs root"):
        run_experiment(path, backend="mininet", out=out)
    assert not out.exists()


def test_max_runs_runs_part_and_a_later_call_the_rest(tmp_path: Path) -> None:
    (tmp_path / "t.yaml").write_text(TOPOLOGY)
    path = tmp_path / "exp.yaml"
    path.write_text(EXPERIMENT)
    out = tmp_path / "out"
    first = _run("run", str(path), "--out", str(out), "--workers", "1", "--max-runs", "1")
    assert first.returncode == 0, first.stderr
    assert "tiny: running 1 of the 2 missing (--max-runs)" in first.stderr
    assert "tiny: 1/2 runs, 0 failed" in first.stderr
    assert len(pd.read_parquet(out / "runs.parquet")) == 1
    assert "1 ok, 0 failed, 1 not run yet." in (out / "report.md").read_text()
    rest = _run("run", str(path), "--out", str(out), "--workers", "1")
    assert rest.returncode == 0 and "2 runs, 1 already done" in rest.stderr
    runs = pd.read_parquet(out / "runs.parquet")
    assert len(runs) == 2 and runs["download_time_s"].notna().all()
    bad = _run("run", str(path), "--out", str(out), "--max-runs", "0")
    assert (
        bad.returncode == 2 and bad.stderr.strip() == "ratelab-exp: --max-runs: expected 1 or more"
    )
    bad = _run("run", str(path), "--out", str(out), "--backend", "ns3")
    assert bad.returncode == 2
    assert bad.stderr.strip() == "ratelab-exp: --backend: expected one of sim, mininet"
