"""`ratelab-net run FILE --backend sim`: the topology in ratelab's simulator,
with the report, tables and plots of a Mininet run.

netsim's results are turned into what a Mininet run leaves behind, so that
results.py and plots.py are used unchanged: each sender's JSON in the shape of
ratelab-hosts' (`<flow>.json`: tcp-send's samples of cwnd and RTT, rbcc-send's
rates, udp-send's count; `<flow>.sink.json` for UDP; `<flow>.ping.txt` as
`ping -D` prints), each router's counters over time as `<router>.csv` (the
poller's columns), and CounterSnapshots of the queue taps. netsim's own
results.json and CSVs are kept beside them.

Every variant is simulated before anything is written, so bad input (exit 2)
leaves no files.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ratelab_ctl.counters import GAUGE_REGISTERS, CounterSnapshot
from ratelab_ctl.poller import SeriesWriter
from ratelab_model.counters import DROP_CAUSES, PortCounters

from ratelab_net.results import NO_RATE, Balance, FlowResult, flow_result, render, summarize
from ratelab_net.routers import plan_routers
from ratelab_net.sim_api import router_program, run_netsim
from ratelab_net.sim_scenario import DRAIN_S, build_scenario
from ratelab_net.topology import Flow, Topology

# netsim's counter names (router.p4's, last component) -> PortCounters' fields
_COUNTERS = {"port_out": "packets_out"}
# Drops outside the router program: the engine's queue and MTU, a port without a link.
_SWITCH_LOSSES = ("switch_queue_full", "switch_mtu", "unconnected_port")


@dataclass
class SimRun:
    """One variant, simulated, not yet written."""

    variant: str | None
    topo: Topology
    raw: dict[str, Any]


def simulate_variants(
    runs: list[tuple[str | None, Topology]],
    seed: int,
    p4c: str | None,
    say: Callable[[str], None],
) -> list[SimRun]:
    """Builds every variant's scenario (all checked first), then runs each."""
    scenarios = [build_scenario(topo, plan_routers(topo), seed) for _, topo in runs]
    program = router_program(p4c)
    out = []
    for (variant, topo), scenario in zip(runs, scenarios, strict=True):
        label = f" (variant {variant})" if variant else ""
        say(
            f"simulating {len(topo.routers)} router(s), {len(topo.hosts)} host(s), "
            f"{len(topo.flows)} flow(s) for {topo.duration_s:g} s, seed {seed}{label}"
        )
        out.append(SimRun(variant, topo, run_netsim(topo, scenario, program, say)))
    return out


def _tcp_json(flow: dict[str, Any], samples: list[dict[str, Any]], start_s: float) -> dict:
    t = flow["tcp"]
    return {
        "goodput_bps": t["goodput_bps"],
        "bytes_acked": t["bytes_acked"],
        "retransmissions": t["retransmissions"],
        "rtos": t["rtos"],
        "spurious_rtos": t["spurious_rtos"],
        "ssthresh_changes": t["ssthresh_changes"],
        "samples": [
            {
                "t_s": round(s["time_ns"] / 1e9 - start_s, 9),
                "snd_cwnd": s["cwnd"],
                "snd_ssthresh": s["ssthresh"],
                "rtt_us": None if s["srtt_ns"] is None else s["srtt_ns"] // 1000,
            }
            for s in samples
        ],
    }


def _rbcc_json(flow: dict[str, Any], samples: list[dict[str, Any]], start_s: float) -> dict:
    r = flow["rbcc"]
    rates: list[dict[str, Any]] = []
    for s in samples:
        change = {
            "t_s": round(s["time_ns"] / 1e9 - start_s, 9),
            "rate": s["rate"],
            "return_rate": NO_RATE if s["return_rate"] is None else s["return_rate"],
            "return_bottle_node": s["bottle_node"],
        }
        if not rates or any(rates[-1][k] != change[k] for k in ("rate", "return_rate")):
            rates.append(change)
    return {
        "goodput_bps": flow["goodput_bps"],
        "segments": r["packets_sent"],
        "segments_acked": r["segments_acked"],
        "retransmissions": r["retransmissions"],
        "srtt_us": r["srtt_us"],
        "rate": r["rate"],
        "rates": rates,
    }


def write_flow_files(run: SimRun, out: Path) -> None:
    """Each flow's sender (and UDP sink) JSON, as ratelab-hosts writes them."""
    by_flow: dict[str, list[dict[str, Any]]] = {}
    for s in run.raw["flow_samples"]:
        by_flow.setdefault(s["flow"], []).append(s)
    for flow, f in zip(run.topo.flows, run.raw["flows"], strict=True):
        samples = by_flow.get(flow.name, [])
        if f.get("ping") is not None:
            (out / f"{flow.name}.ping.txt").write_text(_ping_text(f, run.topo, flow))
            continue
        if f["tcp"] is not None:
            sender = _tcp_json(f, samples, flow.start_s)
        elif f["rbcc"] is not None:
            sender = _rbcc_json(f, samples, flow.start_s)
        else:
            sender = {"packets_sent": f["udp"]["sent"]}
            sink = {
                "packets_received": f["udp"]["received"],
                "throughput_bps": f["goodput_bps"],
            }
            _write_json(out / f"{flow.name}.sink.json", {"flows": [sink]})
        _write_json(out / f"{flow.name}.json", {"flows": [sender]})


def _ping_text(f: dict[str, Any], topo: Topology, flow: Flow) -> str:
    """The replies as `ping -D -n` prints them (results.parse_ping reads them):
    the reply's arrival in simulated seconds, the request's number from 1."""
    dst = topo.host_address(flow.dst)[0]
    p = f["ping"]
    lines = [
        f"[{(r['sent_ns'] + r['rtt_ns']) / 1e9:.6f}] 64 bytes from {dst}: "
        f"icmp_seq={r['seq'] + 1} time={r['rtt_ns'] / 1e6:.3f} ms"
        for r in p["replies"]
    ]
    lost = 100 * (p["sent"] - p["received"]) / p["sent"] if p["sent"] else 0
    lines.append(
        f"{p['sent']} packets transmitted, {p['received']} received, {lost:g}% packet loss"
    )
    return "\n".join(lines) + "\n"


def _write_json(path: Path, data: dict[str, Any]) -> None:
    path.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")


def snapshots(raw: dict[str, Any]) -> dict[str, list[CounterSnapshot]]:
    """The queue taps per router as counter snapshots (the gauges a Mininet run
    polls: queue and RED average at the last admission), at simulated time in
    seconds."""
    registers = raw["sample_registers"]
    out: dict[str, dict[float, dict[int, PortCounters]]] = {}
    for q in raw["queue_samples"]:
        values = dict(zip(registers, q["registers"], strict=True))
        pc = PortCounters(
            last_q=values[GAUGE_REGISTERS["last_q"]],
            last_avg=values[GAUGE_REGISTERS["last_avg"]],
        )
        out.setdefault(q["router"], {}).setdefault(q["time_ns"] / 1e9, {})[q["port"]] = pc
    return {
        router: [CounterSnapshot(t, ports, True) for t, ports in times.items()]
        for router, times in out.items()
    }


def final_counters(raw: dict[str, Any], routers: list[str]) -> dict[str, CounterSnapshot]:
    """Each router's program counters and drops at the end, per port."""
    ports: dict[str, dict[int, PortCounters]] = {r: {} for r in routers}
    for p in raw["ports"]:
        if p["node"] in ports:
            ports[p["node"]][p["port"]] = PortCounters()
    for c in raw["counters"]:
        pc = ports[c["router"]].setdefault(c["port"], PortCounters())
        name = _COUNTERS.get(c["name"], c["name"])
        if hasattr(pc, name):
            setattr(pc, name, c["packets"])
        if c["name"] == "port_out":
            pc.bytes_out = c["bytes"]
    for d in raw["drops"]:
        if d["node"] in ports and d["cause"] in DROP_CAUSES:
            pc = ports[d["node"]].setdefault(d["port"], PortCounters())
            setattr(pc, f"drop_{d['cause']}", d["packets"])
    end = raw["duration_ns"] / 1e9
    return {r: CounterSnapshot(end, dict(sorted(p.items())), True) for r, p in ports.items()}


def balance(raw: dict[str, Any], topo: Topology) -> Balance:
    """Hosts' packets out and in, the router program's drops, and the drops
    outside it (the engine's own queue or MTU, a port without a link). A
    host's stack drops before it counts a packet out (its FIFO) or after it
    counted it in, so those are not losses here."""
    hosts = [p for p in raw["ports"] if p["node"] in topo.hosts]
    router_drops = sum(
        d["packets"]
        for d in raw["drops"]
        if d["node"] in topo.routers and d["cause"] in DROP_CAUSES
    )
    other = sum(d["packets"] for d in raw["drops"] if d["cause"] in _SWITCH_LOSSES)
    return Balance(
        sum(p["tx_packets"] for p in hosts),
        sum(p["rx_packets"] for p in hosts),
        router_drops,
        other,
    )


def notes(topo: Topology, seed: int) -> list[str]:
    lines = [
        f"simulated (ratelab-netsim, seed {seed}): router.p4 in ratelab's engine, "
        "ratelab's host stacks, simulated time"
    ]
    kernel = [f.name for f in topo.flows if f.tcp is not None and f.tcp.stack == "kernel"]
    if kernel:
        lines.append(
            "kernel TCP flows run on ratelab's TCP stack with the same congestion control "
            "in the simulator, set up as Linux's (its RTO formula, PRR, Cubic's HyStart): "
            f"{', '.join(kernel)}"
        )
    return lines


def report_run(
    run: SimRun, out: Path, title: str, seed: int, plots: bool
) -> tuple[str, str, Path | None]:
    """Writes a variant's files into `out`; returns (report, summary line, plot)."""
    out.mkdir(parents=True, exist_ok=True)
    for name, text in run.raw["files"].items():
        (out / name).write_text(text)
    write_flow_files(run, out)
    samples = snapshots(run.raw)
    for router, snaps in samples.items():
        writer = SeriesWriter.for_path(out / f"{router}.csv")
        try:
            for snap in snaps:
                writer.write(snap)
        finally:
            writer.close()
    flows: list[FlowResult] = []
    for f in run.topo.flows:
        r = flow_result(f, out)
        if f.transport == "tcp":
            data = json.loads((out / f"{f.name}.json").read_text())["flows"][0]
            r.stack = "ratelab"
            r.rtos, r.spurious_rtos = data["rtos"], data["spurious_rtos"]
        flows.append(r)
    final = final_counters(run.raw, list(run.topo.routers))
    bal = balance(run.raw, run.topo)
    report = render(run.topo, flows, samples, final, bal, notes(run.topo, seed))
    if bal.unaccounted > 0:
        # the simulator counts every drop: the rest had not arrived yet
        report += (
            f"\n  (simulated: the {bal.unaccounted} were still in a queue or on a link when "
            f"the run ended, {DRAIN_S:g} s after the traffic's {run.topo.duration_s:g} s)"
        )
    png = None
    if plots:
        from ratelab_net.plots import plot_run

        png = plot_run(out, flows, samples, title)
    return report, summarize(flows, samples, final, bal), png


def run_sim(
    topology: str,
    sets: list[str],
    variant: str | None,
    out_dir: str | None,
    seed: int,
    p4c: str | None,
    plots: bool,
    say: Callable[[str], None],
) -> int:
    """`ratelab-net run --backend sim`: every variant simulated, then each one's
    report printed and its files written to build/net/<name>/[<variant>/]."""
    from ratelab_sim.build import ROOT

    from ratelab_net.topology import load_variants

    runs = simulate_variants(load_variants(topology, sets, variant), seed, p4c, say)
    name = Path(topology).stem
    base = Path(out_dir or ROOT / "build" / "net" / name).resolve()
    summaries = []
    for run in runs:
        out = base / run.variant if run.variant else base
        if run.variant:
            say(f"== variant {run.variant} ==")
        title = f"{name}{' ' + run.variant if run.variant else ''} (simulated)"
        report, summary, png = report_run(run, out, title, seed, plots)
        print(report)
        if png is not None:
            print(f"plots: {png}")
        print(
            f"results: {out} (netsim's results.json and CSVs, per-router counters "
            "<router>.csv, per-flow JSON)"
        )
        summaries.append((run.variant, summary))
    if len(summaries) > 1:
        print("\n== comparison ==")
        for v, summary in summaries:
            print(f"{v}: {summary}")
    return 0
