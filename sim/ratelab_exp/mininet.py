"""`backend: mininet`: a run is one `ratelab-net run` of its topology in Mininet
(root; kernel TCP stacks), one at a time, and its results folder read into the
tables the simulator's runs give (flows, ports, drops, counters, router queues
over time, flow samples, ping replies), so the same metrics apply.

What a Mininet run measures differently (sim/experiments/README.md "Mininet"):
the queue is router.p4's `last_q` gauge (the queue an arriving packet saw,
polled every `poll_interval`), not the queue's length at the sample; a flow's
samples are on the sender's clock from its connection, placed at the flow's
`start`; a kernel TCP flow reports no retransmission timeouts.
"""

from __future__ import annotations

import csv
import json
import re
import shutil
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from ratelab_model.counters import DROP_CAUSES
from ratelab_net.results import NO_RATE
from ratelab_net.topology import Flow, Topology, load_variants

# router.p4's counters in the poller's CSV other than packets in/out and drops
_COUNTERS = ("rbcc_packets", "abt_hits", "abt_updates", "abt_inserts", "abt_removals")
_COUNTERS += ("abt_collisions",)
_PING_REPLY = re.compile(r"icmp_seq=(?P<seq>\d+) .*time=(?P<rtt>[0-9.]+) ms")
Q16 = 65536.0  # last_avg is Q16.16 packets
TEARDOWN_S = 60.0  # how long ratelab-net may take its network down after a Ctrl-C

# Metrics a Mininet run cannot give, and why (n/a in the report, with the reason).
UNAVAILABLE = {
    "delivered_pct": "a generator's fixed-size transfers are given to the simulator only",
}
KERNEL_RTOS = "the kernel's TCP_INFO samples carry no retransmission-timeout count"


class MininetRunError(Exception):
    """`ratelab-net run` failed; one line (its own error line)."""


@dataclass
class MininetTables:
    """One Mininet run as rows (lists of dicts), in the simulator tables' columns."""

    flows: list[dict[str, Any]]
    ports: list[dict[str, Any]]
    drops: list[dict[str, Any]]
    counters: list[dict[str, Any]]
    queues: list[dict[str, Any]]  # time_s, router, port, queue_packets, last_avg
    samples: list[dict[str, Any]]  # time_s, flow, cwnd, ssthresh, srtt_ms, rate
    pings: list[dict[str, Any]]  # flow, seq, sent_s, rtt_ms


def run(topology: dict[str, Any], folder: Path, timeout_s: float) -> tuple[Topology, Path]:
    """Runs `topology` with `ratelab-net run` (its output under folder/out, its
    log in folder/ratelab-net.log); returns the loaded topology and the
    results folder. Raises MininetRunError with ratelab-net's error line."""
    if folder.exists():
        shutil.rmtree(folder)  # a failed run's leftovers, when it is run again
    folder.mkdir(parents=True)
    path = folder / "topology.yaml"
    path.write_text(yaml.safe_dump(topology, sort_keys=False))
    topo = load_variants(path, [], None)[0][1]
    out = folder / "out"
    cmd = [sys.executable, "-m", "ratelab_net.cli", "run", str(path), "--out", str(out)]
    cmd += ["--backend", "mininet", "--no-plots"]
    returncode, stdout, stderr = _run_network(cmd, timeout_s)
    (folder / "ratelab-net.log").write_text(stdout + stderr)
    if returncode != 0:
        lines = [line for line in stderr.splitlines() if line.strip()]
        last = lines[-1] if lines else f"exit status {returncode}"
        raise MininetRunError(last.removeprefix("ratelab-net: error: "))
    return topo, out


def _run_network(cmd: list[str], timeout_s: float) -> tuple[int, str, str]:
    """Runs `ratelab-net run` in its own session, so that a Ctrl-C here (or the
    time limit) reaches it as one SIGINT it answers by taking its network down,
    waited for; only if it does not, it is killed and `ratelab-net clean` run.
    A KeyboardInterrupt goes on up once the network is down."""
    proc = subprocess.Popen(
        cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True
    )
    try:
        stdout, stderr = proc.communicate(timeout=timeout_s)
    except BaseException as e:  # the time limit, or Ctrl-C / SIGTERM as an exception
        proc.send_signal(signal.SIGINT)
        try:
            proc.communicate(timeout=TEARDOWN_S)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
            clean = [sys.executable, "-m", "ratelab_net.cli", "clean"]
            subprocess.run(clean, capture_output=True, check=False)
        if isinstance(e, subprocess.TimeoutExpired):
            raise MininetRunError(f"ratelab-net run took more than {timeout_s:g} s") from None
        raise
    return proc.returncode, stdout, stderr


def _json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError):
        return {}
    return data if isinstance(data, dict) else {}


def _first(data: dict[str, Any]) -> dict[str, Any]:
    flows = data.get("flows") or [{}]
    return flows[0] if isinstance(flows[0], dict) else {}


def _transport(flow: Flow) -> str:
    if flow.transport == "tcp":
        return f"tcp/{flow.cc}"
    if flow.transport == "udp":
        return f"udp/{flow.pattern}"
    return flow.transport


def _us_to_ns(value: Any) -> int | None:
    return None if value is None else int(value) * 1000


def _completion_s(sender: dict[str, Any], sink: dict[str, Any]) -> float | None:
    """A fixed-size transfer read in full: from its SYN to the receiver's last
    byte, as the simulator counts it (both monotonic clocks of one machine; the
    SYN left one handshake round trip, the first sample's RTT, before the
    connection was established); None otherwise."""
    want = sender.get("bytes_limit")
    got = _first(sink)
    raw = sender.get("samples") or [{}]
    handshake_us = raw[0].get("rtt_us")
    if not want or got.get("bytes_received") != want or "last_byte_s" not in got:
        return None
    if None in (sender.get("established_monotonic_s"), sink.get("start_monotonic_s")):
        return None
    last_byte = sink["start_monotonic_s"] + got["last_byte_s"]
    return float(last_byte - sender["established_monotonic_s"] + (handshake_us or 0) / 1e6)


def _flow_row(flow: Flow, out: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The flow's row in the simulator's flows columns, and its samples."""
    row: dict[str, Any] = {
        "flow": flow.name,
        "from": flow.src,
        "to": flow.dst,
        "transport": _transport(flow),
        "bytes_received": None,
        "goodput_bps": None,
        "one_way_delay_mean_ns": None,
        "completion_s": None,
    }
    samples: list[dict[str, Any]] = []
    if flow.transport == "ping":
        return row, samples
    sender = _first(_json(out / f"{flow.name}.json"))
    sink = _json(out / f"{flow.name}.sink.json")
    received = _first(sink)
    if flow.transport == "tcp":
        row["bytes_received"] = received.get("bytes_received")
        row["goodput_bps"] = received.get("goodput_bps")
        row["completion_s"] = _completion_s(sender, sink)
        raw = sender.get("samples") or []
        last = raw[-1] if raw else {}
        kernel = flow.tcp is None or flow.tcp.stack == "kernel"
        row |= {
            "tcp_bytes_acked": sender.get("bytes_acked"),
            "tcp_goodput_bps": sender.get("goodput_bps"),
            "tcp_srtt_ns": _us_to_ns(last.get("rtt_us")),
            "tcp_min_rtt_ns": _us_to_ns(sender.get("rtt_min_us")),
            "tcp_rtt_samples": len(raw),
            "tcp_cwnd": last.get("snd_cwnd"),
            "tcp_ssthresh_changes": sender.get("ssthresh_changes"),
            "tcp_retransmissions": sender.get("retransmissions"),
            "tcp_rtos": None if kernel else sender.get("rtos"),
            "tcp_spurious_rtos": None if kernel else sender.get("spurious_rtos"),
        }
        samples = [
            {
                "time_s": flow.start_s + s["t_s"],
                "flow": flow.name,
                "cwnd": s.get("snd_cwnd"),
                "ssthresh": s.get("snd_ssthresh"),
                "srtt_ms": None if not s.get("rtt_us") else s["rtt_us"] / 1000,
                "rate": None,
            }
            for s in raw
        ]
    elif flow.transport == "udp":
        flows = sink.get("flows") or []
        got = sum(int(f.get("packets_received", 0)) for f in flows)
        sent = sender.get("packets_sent")
        row["bytes_received"] = sum(int(f.get("bytes_received", 0)) for f in flows)
        row["goodput_bps"] = sum(float(f.get("throughput_bps", 0)) for f in flows)
        delays = [f["delay_mean_us"] for f in flows if f.get("delay_mean_us") is not None]
        if delays:
            row["one_way_delay_mean_ns"] = sum(delays) / len(delays) * 1000
        row |= {
            "udp_sent": sent,
            "udp_received": got,
            "udp_lost": None if sent is None else max(int(sent) - got, 0),
        }
    else:  # rbcc
        row["goodput_bps"] = sender.get("goodput_bps")
        rates = sender.get("rates") or []
        row |= {
            "rbcc_rate": sender.get("rate"),
            "rbcc_segments_acked": sender.get("segments_acked"),
            "rbcc_retransmissions": sender.get("retransmissions"),
            "rbcc_srtt_us": sender.get("srtt_us"),
        }
        samples = [
            {
                "time_s": flow.start_s + c["t_s"],
                "flow": flow.name,
                "cwnd": None,
                "ssthresh": None,
                "srtt_ms": None,
                "rate": c.get("rate"),
                "return_rate": None if c.get("return_rate") == NO_RATE else c.get("return_rate"),
            }
            for c in rates
        ]
    return row, samples


def _pings(flow: Flow, out: Path) -> tuple[list[dict[str, Any]], int, int]:
    """Every reply of `ping -D` (seq from 0, as the simulator numbers them; a
    request leaves at start + seq x interval), requests sent, replies."""
    try:
        text = (out / f"{flow.name}.ping.txt").read_text()
    except OSError:
        return [], 0, 0
    rows = []
    for line in text.splitlines():
        m = _PING_REPLY.search(line)
        if m:
            seq = int(m["seq"]) - 1
            rows.append(
                {
                    "flow": flow.name,
                    "seq": seq,
                    "sent_s": round(flow.start_s + seq * flow.interval_s, 9),
                    "rtt_ms": float(m["rtt"]),
                }
            )
    stats = re.search(r"(\d+) packets transmitted, (\d+) received", text)
    sent, got = (int(stats[1]), int(stats[2])) if stats else (0, len(rows))
    return rows, sent, got


def _router_rows(router: str, path: Path) -> tuple[list[dict], list[dict], list[dict], list[dict]]:
    """ports, drops, counters (last sample less the first) and queues over time
    from a router's poller CSV."""
    with path.open() as f:
        rows = list(csv.DictReader(f))
    by_port: dict[int, list[dict[str, str]]] = {}
    for r in rows:
        by_port.setdefault(int(r["port"]), []).append(r)
    ports, drops, counters, queues = [], [], [], []
    for port, series in sorted(by_port.items()):
        first, last = series[0], series[-1]

        def delta(key: str, first: dict = first, last: dict = last) -> int:
            return int(last[key] or 0) - int(first[key] or 0)

        ports.append(
            {
                "node": router,
                "port": port,
                "rx_packets": delta("packets_in"),
                "rx_bytes": None,
                "tx_packets": delta("packets_out"),
                "tx_bytes": delta("bytes_out"),
            }
        )
        for cause in DROP_CAUSES:
            if (n := delta(f"drop_{cause}")) > 0:
                drops.append({"node": router, "port": port, "cause": cause, "packets": n})
        for name in _COUNTERS:
            counters.append(
                {"router": router, "port": port, "counter": name, "packets": delta(name)}
            )
        for r in series:
            if r["last_q"] == "":  # the target serves no gauges (BMv2)
                continue
            queues.append(
                {
                    "time_s": float(r["elapsed_s"]),
                    "router": router,
                    "port": port,
                    "queue_packets": int(r["last_q"]),
                    "last_avg": int(r["last_avg"] or 0) / Q16,
                }
            )
    return ports, drops, counters, queues


def tables(topo: Topology, out: Path) -> MininetTables:
    """A finished `ratelab-net run`'s folder as the simulator's tables."""
    result = MininetTables([], [], [], [], [], [], [])
    for flow in topo.flows:
        row, samples = _flow_row(flow, out)
        if flow.transport == "ping":
            replies, sent, got = _pings(flow, out)
            row |= {"ping_sent": sent, "ping_received": got}
            result.pings += replies
        result.flows.append(row)
        result.samples += samples
    for router in topo.routers:
        ports, drops, counters, queues = _router_rows(router, out / f"{router}.csv")
        result.ports += ports
        result.drops += drops
        result.counters += counters
        result.queues += queues
    return result
