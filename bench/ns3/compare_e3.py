"""The E3 dumbbell in ns-3 and in ratelab-netsim, side by side.

Builds the simulator's scenario from bench/ns3/e3.yaml (routers planned by the
controller, links from the file) with E3's flows, runs both simulators, checks their
outputs and writes a table (Jain's index, utilisation, drops, mean queue, per-flow
goodput) as OUT.md and the summaries as OUT.json. ns-3 runs twice: with TcpNewReno (E3's
algorithm) and with TcpLinuxReno, whose congestion avoidance counts segments acknowledged
as ratelab-stack's does (bench/ns3/README.md, "E3", explains why that matters):

    .venv/bin/python bench/ns3/compare_e3.py --ns3 build/ns3/e3_dumbbell \\
        --netsim target/release/ratelab-netsim --router build/netsim/router.json \\
        --out bench/results/netsim_e3 [--duration 15] [--seed 42]

Every number is computed the same way for both from what each reports: goodput =
application bytes received / duration; utilisation = bits the bottleneck sent on the
wire (each simulator's own link header: 2 bytes of PPP in ns-3, 14 of Ethernet in
ratelab) / (rate x duration); mean queue = packets waiting at the bottleneck (not the
one being sent), sampled every 10 ms from 10 ms on.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent / "sim" / "netsim" / "tools"))

from ratelab_ctl.configfile import ConfigError  # noqa: E402,F401  (what scenario() raises)
from topology_scenario import scenario  # noqa: E402

TOPOLOGY = HERE / "e3.yaml"
FLOWS_EACH = 3
TCP_APP_BPS = 16_000_000
UDP_BPS = 8_000_000
UDP_PAYLOAD = 1472
SAMPLE_NS = 10_000_000
BOTTLENECK = ("left", 1)  # router and port of the 48 Mbit/s direction
BOTTLENECK_BPS = 48_000_000


class CompareError(Exception):
    """A run failed or wrote something unexpected: one line for the user."""


def e3_flows(prr: bool = False) -> list[dict[str, Any]]:
    """E3's flows: s1..s3 -> d1..d3 NewReno at 16 Mbit/s (with proportional rate reduction
    if `prr`), s4..s6 -> d4..d6 Poisson UDP."""
    flows: list[dict[str, Any]] = []
    for i in range(1, FLOWS_EACH + 1):
        tcp: dict[str, Any] = {"cc": "newreno", "app": {"kind": "stream", "rate_bps": TCP_APP_BPS}}
        if prr:
            tcp["knobs"] = {"prr": True}
        flows.append({"name": f"tcp{i}", "from": f"s{i}", "to": f"d{i}", "tcp": tcp})
    for i in range(1, FLOWS_EACH + 1):
        host = FLOWS_EACH + i
        flows.append(
            {
                "name": f"udp{i}",
                "from": f"s{host}",
                "to": f"d{host}",
                "udp": {"pattern": "poisson", "rate_bps": UDP_BPS, "size": UDP_PAYLOAD},
            }
        )
    return flows


def e3_scenario(duration_s: float, seed: int, prr: bool = False) -> dict[str, Any]:
    return scenario(TOPOLOGY, e3_flows(prr), round(duration_s * 1e9), seed, SAMPLE_NS)


def jain(values: list[float]) -> float:
    squares = sum(v * v for v in values)
    return sum(values) ** 2 / (len(values) * squares) if squares > 0 else 0.0


def _run(cmd: list[str]) -> None:
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["(no message)"])[-1]
        raise CompareError(f"{Path(cmd[0]).name} exited {done.returncode}: {last}")


def _load(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as e:
        raise CompareError(f"{path}: not the expected JSON: {e}") from None
    if not isinstance(data, dict):
        raise CompareError(f"{path}: expected a JSON object")
    return data


def _field(data: dict[str, Any], path: Path, *keys: str) -> Any:
    value: Any = data
    for k in keys:
        if not isinstance(value, dict) or k not in value:
            raise CompareError(f"{path}: missing {'.'.join(keys)}")
        value = value[k]
    return value


def run_ns3(
    binary: str,
    duration_s: float,
    seed: int,
    work: Path,
    cc: str = "newreno",
    recovery: str = "classic",
) -> dict[str, Any]:
    """ns-3's summary in the common form; `cc`: ns-3's newreno or linux-reno model,
    `recovery`: classic or prr."""
    out = work / f"ns3_{cc}.json"
    _run(
        [
            *(binary, f"--out={out}", f"--duration={duration_s:g}", f"--seed={seed}"),
            *(f"--cc={cc}", f"--recovery={recovery}"),
        ]
    )
    data = _load(out)
    flows = _field(data, out, "flows")
    b = _field(data, out, "bottleneck")
    tcp = [f for f in flows if f.get("transport") == "tcp"]
    udp = [f for f in flows if f.get("transport") == "udp"]
    return {
        "goodput_bps": {f["name"]: f["bytes_received"] * 8 / duration_s for f in flows},
        "tcp_retransmissions": sum(f["retransmissions"] for f in tcp),
        "tcp_window_reductions": sum(f["recoveries"] + f["rtos"] for f in tcp),
        "udp_lost": sum(f["sent"] - f["received"] for f in udp),
        "utilisation": _field(b, out, "wire_bytes_out") * 8 / (BOTTLENECK_BPS * duration_s),
        "drops": _field(b, out, "drops"),
        "mean_queue_packets": _field(b, out, "mean_queue_packets"),
        "max_queue_packets": _field(b, out, "max_queue_packets"),
        "delivered_packets": _field(data, out, "delivered_packets"),
        "run_wall_s": _field(data, out, "wall_s"),
    }


def run_netsim(
    binary: str, router: str, duration_s: float, seed: int, work: Path, prr: bool = False
) -> dict[str, Any]:
    """ratelab-netsim's results in the common form."""
    path = work / "e3_scenario.json"
    path.write_text(json.dumps(e3_scenario(duration_s, seed, prr)) + "\n")
    out_dir = work / "netsim"
    _run([binary, str(path), router, str(out_dir)])
    out = out_dir / "results.json"
    data = _load(out)
    router_name, port = BOTTLENECK
    ports = [
        p for p in _field(data, out, "ports") if p["node"] == router_name and p["port"] == port
    ]
    if len(ports) != 1:
        raise CompareError(f"{out}: no port {port} of {router_name}")
    queue = [
        s["queue_packets"]
        for s in _field(data, out, "queue_samples")
        if s["router"] == router_name and s["port"] == port and s["time_ns"] > 0
    ]
    if not queue:
        raise CompareError(f"{out}: no queue samples at {router_name} port {port}")
    drops = sum(
        d["packets"]
        for d in _field(data, out, "drops")
        if d["node"] == router_name and d.get("port") == port
    )
    flows = _field(data, out, "flows")
    tcp = [f["tcp"] for f in flows if f.get("tcp")]
    udp = [f["udp"] for f in flows if f.get("udp")]
    return {
        "goodput_bps": {f["name"]: f["bytes_received"] * 8 / duration_s for f in flows},
        "tcp_retransmissions": sum(t["retransmissions"] for t in tcp),
        "tcp_window_reductions": sum(t["ssthresh_changes"] for t in tcp),
        "udp_lost": sum(u["sent"] - u["received"] for u in udp),
        "utilisation": ports[0]["tx_bytes"] * 8 / (BOTTLENECK_BPS * duration_s),
        "drops": drops,
        "mean_queue_packets": sum(queue) / len(queue),
        "max_queue_packets": max(queue),
        "delivered_packets": _field(data, out, "delivered_packets"),
    }


def summarize(side: dict[str, Any]) -> dict[str, Any]:
    """Adds Jain's index over all flows and over the TCP flows."""
    goodput = side["goodput_bps"]
    tcp = [v for k, v in goodput.items() if k.startswith("tcp")]
    return side | {"jain_all": jain(list(goodput.values())), "jain_tcp": jain(tcp)}


def table(
    ns3: dict[str, Any],
    netsim: dict[str, Any],
    duration_s: float,
    seed: int,
    linux_reno: dict[str, Any] | None = None,
    recovery: str = "classic",
) -> str:
    """Markdown: ns-3 (TcpNewReno), ratelab-netsim, and ns-3 with TcpLinuxReno if given."""
    sides = [ns3, netsim] + ([linux_reno] if linux_reno else [])
    rows = [
        ("Jain's index, all 6 flows", "jain_all", "{:.4f}"),
        ("Jain's index, 3 TCP flows", "jain_tcp", "{:.4f}"),
        ("bottleneck utilisation", "utilisation", "{:.4f}"),
        ("drops at the bottleneck (packets)", "drops", "{}"),
        ("mean queue (packets)", "mean_queue_packets", "{:.1f}"),
        ("max queue (packets)", "max_queue_packets", "{}"),
        ("UDP packets not received (lost, or in flight at the end)", "udp_lost", "{}"),
        ("TCP window reductions (recoveries + RTOs)", "tcp_window_reductions", "{}"),
        ("TCP retransmissions", "tcp_retransmissions", "{}"),
        ("packets delivered to hosts", "delivered_packets", "{}"),
    ]
    head = "| | ns-3 3.37 TcpNewReno | ratelab-netsim newreno |"
    lines = [
        f"E3 dumbbell, {duration_s:g} s simulated, seed {seed}, {recovery} recovery",
        "",
        head + (" ns-3 TcpLinuxReno |" if linux_reno else ""),
        "|---|---:|---:|" + ("---:|" if linux_reno else ""),
    ]
    for label, key, fmt in rows:
        lines.append(f"| {label} | " + " | ".join(fmt.format(x[key]) for x in sides) + " |")
    for name in ns3["goodput_bps"]:
        values = " | ".join(f"{x['goodput_bps'].get(name, 0.0) / 1e6:.2f}" for x in sides)
        lines.append(f"| goodput {name} (Mbit/s) | {values} |")
    return "\n".join(lines) + "\n"


def compare(
    ns3_bin: str,
    netsim_bin: str,
    router: str,
    duration_s: float,
    seed: int,
    recovery: str = "classic",
) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """ns-3 with TcpNewReno, ratelab-netsim, and ns-3 with TcpLinuxReno; `recovery`:
    classic or prr (proportional rate reduction) in all three."""
    prr = recovery == "prr"
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        ns3 = summarize(run_ns3(ns3_bin, duration_s, seed, work, "newreno", recovery))
        netsim = summarize(run_netsim(netsim_bin, router, duration_s, seed, work, prr))
        linux_reno = summarize(run_ns3(ns3_bin, duration_s, seed, work, "linux-reno", recovery))
    if set(ns3["goodput_bps"]) != set(netsim["goodput_bps"]):
        raise CompareError(
            f"the flows differ: ns-3 {sorted(ns3['goodput_bps'])}, "
            f"ratelab-netsim {sorted(netsim['goodput_bps'])}"
        )
    return ns3, netsim, linux_reno


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ns3", required=True, help="build/ns3/e3_dumbbell")
    ap.add_argument("--netsim", required=True, help="target/release/ratelab-netsim")
    ap.add_argument("--router", required=True, help="router.p4 compiled (router.json)")
    ap.add_argument("--out", required=True, help="writes OUT.md and OUT.json")
    ap.add_argument("--duration", type=float, default=15.0, help="simulated seconds")
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument(
        "--recovery", choices=("classic", "prr"), default="classic", help="TCP loss recovery"
    )
    args = ap.parse_args(argv)
    if not 0 < args.duration <= 36000:
        message = f"--duration: expected 0 to 36000 s, got {args.duration}"
        print(f"compare_e3: {message}", file=sys.stderr)
        return 2
    try:
        ns3, netsim, linux_reno = compare(
            args.ns3, args.netsim, args.router, args.duration, args.seed, args.recovery
        )
    except CompareError as e:
        print(f"compare_e3: {e}", file=sys.stderr)
        return 1
    text = table(ns3, netsim, args.duration, args.seed, linux_reno, args.recovery)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.with_suffix(".md").write_text(text)
    out.with_suffix(".json").write_text(
        json.dumps(
            {"ns3": ns3, "netsim": netsim, "ns3_linux_reno": linux_reno}, indent=1, sort_keys=True
        )
        + "\n"
    )
    print(text, end="")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
