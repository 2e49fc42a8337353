"""`ratelab_net.simulate`: run a topology file in ratelab's simulator
(`ratelab-netsim`, sim/netsim) and get the results as pandas DataFrames, for
notebooks:

    import ratelab_net
    res = ratelab_net.simulate("sim/examples/three_routers.yaml", seed=1)
    res.flows          # one row per flow: goodput, delay, TCP / UDP / RBCC columns
    res.ports          # packets and bytes in and out of every router and host port
    res.samples        # per flow over time: cwnd, ssthresh, srtt (TCP); rates (RBCC)
    res.queues         # per router port over time: queue length; queue and RED
                       # average at the last admission (last_q, last_avg)
    res.pings          # every ping reply: when its request left, round trip
    res.drops          # every drop by place and cause
    res.to_parquet("out/")   # or to_csv: one file per table

No root, no network: the routers are router.p4 in ratelab's engine, the hosts
ratelab's stacks, in simulated time. The same file and seed give byte-identical
results.
"""

from __future__ import annotations

import atexit
import hashlib
import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
import yaml
from ratelab_ctl.configfile import ConfigError, Location
from ratelab_sim.build import ROOT, ROUTER_P4, BuildError, compile_router, default_p4c

from ratelab_net.routers import plan_routers
from ratelab_net.sim_scenario import SAMPLE_REGISTERS, build_scenario, field_location
from ratelab_net.topology import OVERRIDE, Topology, load_variants

NETSIM_ENV = "RATELAB_NETSIM"  # another ratelab-netsim binary than the workspace's
NETSIM = ROOT / "target" / "release" / "ratelab-netsim"


class SimError(Exception):
    """The simulator could not be run or failed (not the topology's fault); one line."""


def netsim_binary() -> Path:
    path = Path(os.environ.get(NETSIM_ENV) or NETSIM)
    if not path.exists():
        raise SimError(f"{path} is not built (make deps builds it)")
    return path


_PROGRAMS: dict[tuple[str | None, str], Path] = {}


def router_sources_digest() -> str:
    """router.p4 and its include folder's files, by content."""
    digest = hashlib.sha256()
    include = ROUTER_P4.parent / "include"
    for path in [ROUTER_P4, *sorted(p for p in include.rglob("*") if p.is_file())]:
        digest.update(f"{path.relative_to(ROUTER_P4.parent)}\0".encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def router_program(p4c: str | None = None) -> Path:
    """router.p4 compiled (ratelab-p4c unless `p4c` names another compiler), once
    per process and content of its sources (a long-lived Dask worker compiles
    an edited router.p4 again), into a private temporary folder (removed at exit)."""
    key = (p4c, router_sources_digest())
    if key in _PROGRAMS:
        return _PROGRAMS[key]
    compiler = p4c or default_p4c()
    if compiler is None:
        raise SimError("ratelab-p4c is not installed (make deps)")
    folder = Path(tempfile.mkdtemp(prefix="ratelab-router-"))
    atexit.register(shutil.rmtree, folder, True)
    try:
        _PROGRAMS[key] = compile_router(compiler, folder, quiet=True)[0]
    except BuildError as e:
        raise SimError(str(e)) from None
    return _PROGRAMS[key]


def topology_error(topo: Topology, message: str) -> ConfigError | None:
    """netsim's `flows[N].field: message` / `links[N]...` as an error at that
    item of the topology file (the scenario's flows and links are the file's, in
    order); None for anything else."""
    for kind, items in (("flows", [f.node for f in topo.flows]), ("links", topo.links)):
        prefix = f"{kind}["
        if not message.startswith(prefix):
            continue
        index_text, _, rest = message[len(prefix) :].partition("]")
        if not index_text.isdigit() or int(index_text) >= len(items):
            return None
        item = items[int(index_text)]
        node = item if isinstance(item, yaml.Node) else item.node
        path, _, what = f"{kind}[{index_text}]{rest}".partition(": ")
        return ConfigError(field_location(node), path, what)
    return None


def run_netsim(
    topo: Topology,
    scenario: dict[str, Any],
    program: Path,
    on_progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Runs one scenario; returns results.json as a dict and the CSVs' folder
    contents under "files" (name -> text). A scenario the simulator refuses is a
    ConfigError at the flow or link it names; nothing is written anywhere."""
    with tempfile.TemporaryDirectory(prefix="ratelab-netsim-") as tmp:
        scenario_path = Path(tmp) / "scenario.json"
        scenario_path.write_text(json.dumps(scenario) + "\n")
        out = Path(tmp) / "out"
        cmd = [str(netsim_binary()), str(scenario_path), str(program), str(out)]
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert proc.stderr is not None and proc.stdout is not None
        last = ""
        for line in proc.stderr:
            last = line.strip()
            if on_progress is not None and "% (" in last:
                on_progress(last.removeprefix("ratelab-netsim: "))
        proc.stdout.read()
        if proc.wait() != 0:
            raise netsim_failure(topo, last.removeprefix("ratelab-netsim: "), scenario_path)
        return read_netsim_results(out)


def netsim_failure(topo: Topology, message: str, scenario_path: Path) -> Exception:
    """The error for a scenario ratelab-netsim refused: a ConfigError at the
    flow or link its message names, else a SimError with the message."""
    message = message.removeprefix(f"{scenario_path}: ")
    problem = topology_error(topo, message)
    if problem is not None:
        return problem
    return SimError(f"ratelab-netsim failed: {message}")


def read_netsim_results(out: Path) -> dict[str, Any]:
    """results.json of a finished run as a dict, every file of `out` under
    "files" (name -> text)."""
    results = json.loads((out / "results.json").read_text())
    results["files"] = {p.name: p.read_text() for p in sorted(out.iterdir())}
    return results


@dataclass
class Results:
    """A simulated run's tables (pandas DataFrames); times in seconds from the
    start of the run."""

    flows: pd.DataFrame
    ports: pd.DataFrame
    samples: pd.DataFrame
    queues: pd.DataFrame
    pings: pd.DataFrame
    drops: pd.DataFrame
    counters: pd.DataFrame
    raw: dict[str, Any]  # ratelab-netsim's results.json

    TABLES = ("flows", "ports", "samples", "queues", "pings", "drops", "counters")

    def _tables(self) -> Iterable[tuple[str, pd.DataFrame]]:
        return ((name, getattr(self, name)) for name in self.TABLES)

    def to_csv(self, directory: str | Path) -> list[Path]:
        """One CSV per table; returns the files."""
        out = Path(directory)
        out.mkdir(parents=True, exist_ok=True)
        paths = []
        for name, df in self._tables():
            path = out / f"{name}.csv"
            df.to_csv(path, index=False, lineterminator="\n")
            paths.append(path)
        return paths

    def to_parquet(self, directory: str | Path) -> list[Path]:
        """One Parquet file per table; returns the files."""
        out = Path(directory)
        out.mkdir(parents=True, exist_ok=True)
        paths = []
        for name, df in self._tables():
            path = out / f"{name}.parquet"
            df.to_parquet(path, index=False, engine="pyarrow")
            paths.append(path)
        return paths


_FLOW_COLUMNS = {
    "tcp": (
        *("bytes_acked", "goodput_bps", "srtt_ns", "min_rtt_ns", "rtt_samples", "cwnd"),
        *("ssthresh_changes", "retransmissions", "rtos", "spurious_rtos"),
        *("recoveries_ended", "recovery_ns", "bytes_written"),
    ),
    "udp": ("sent", "received", "lost", "duplicates", "reordered"),
    "ping": ("sent", "received"),
    "rbcc": (
        *("rate", "bottle_node", "packets_sent", "segments_acked", "retransmissions"),
        *("srtt_us", "lost", "complete"),
    ),
}


def _frame(rows: list[dict[str, Any]], columns: list[str]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=columns)


def results_frames(raw: dict[str, Any]) -> Results:
    """ratelab-netsim's results.json as DataFrames (nullable integer columns
    where a value may be absent)."""
    flow_cols = ["flow", "from", "to", "transport", "bytes_received", "goodput_bps"]
    flow_cols.append("one_way_delay_mean_ns")
    flow_cols += [f"{kind}_{c}" for kind, cols in _FLOW_COLUMNS.items() for c in cols]
    rows = []
    for f in raw["flows"]:
        row = {k: f[k] for k in ("from", "to", "transport", "bytes_received", "goodput_bps")}
        row["flow"] = f["name"]
        row["one_way_delay_mean_ns"] = f["one_way_delay_mean_ns"]
        for kind, cols in _FLOW_COLUMNS.items():
            part = f.get(kind) or {}
            row.update({f"{kind}_{c}": part.get(c) for c in cols})
        rows.append(row)
    flows = _frame(rows, flow_cols)
    # a TCP transfer read in full: its start (SYN) to the last byte read, else NA
    completion = [f.get("completion_ns") for f in raw["flows"]]
    flows["completion_s"] = pd.array(
        [None if c is None else c / 1e9 for c in completion], dtype="Float64"
    )
    _packet_delay_columns(flows, raw["flows"])
    for col in flow_cols[7:]:
        if col in ("tcp_goodput_bps",):
            flows[col] = flows[col].astype("Float64")
        elif col == "rbcc_complete":
            flows[col] = flows[col].astype("boolean")
        else:
            flows[col] = flows[col].astype("Int64")
    sample_cols = ["time_s", "flow", "cwnd", "ssthresh", "srtt_ms", "rate", "return_rate"]
    sample_cols += ["bottle_node", "in_flight", "delivered", "written"]
    samples = _frame(
        [
            {
                "time_s": s["time_ns"] / 1e9,
                "flow": s["flow"],
                "cwnd": s["cwnd"],
                "ssthresh": s["ssthresh"],
                "srtt_ms": None if s["srtt_ns"] is None else s["srtt_ns"] / 1e6,
                "rate": s["rate"],
                "return_rate": s["return_rate"],
                "bottle_node": s["bottle_node"],
                "in_flight": s.get("in_flight"),
                "delivered": s.get("delivered"),
                "written": s.get("written"),
            }
            for s in raw["flow_samples"]
        ],
        sample_cols,
    )
    sample_cols_int = ("cwnd", "ssthresh", "rate", "return_rate", "bottle_node")
    for col in (*sample_cols_int, "in_flight", "delivered", "written"):
        samples[col] = samples[col].astype("Int64")
    samples["srtt_ms"] = samples["srtt_ms"].astype("Float64")
    registers = raw["sample_registers"]
    queues = _frame(
        [
            {
                "time_s": q["time_ns"] / 1e9,
                "router": q["router"],
                "port": q["port"],
                "queue_packets": q["queue_packets"],
                **{_register_column(r): v for r, v in zip(registers, q["registers"], strict=True)},
            }
            for q in raw["queue_samples"]
        ],
        ["time_s", "router", "port", "queue_packets", *map(_register_column, registers)],
    )
    for col in ("last_avg", "red_avg"):  # Q16.16 packets
        if col in queues:
            queues[col] = queues[col] / 65536
    port_cols = ["node", "port", "rx_packets", "rx_bytes", "tx_packets", "tx_bytes"]
    ports = _frame(raw["ports"], port_cols)
    pings = _frame(
        [
            {
                "flow": f["name"],
                "seq": r["seq"],
                "sent_s": r["sent_ns"] / 1e9,
                "rtt_ms": r["rtt_ns"] / 1e6,
            }
            for f in raw["flows"]
            for r in (f.get("ping") or {}).get("replies", [])
        ],
        ["flow", "seq", "sent_s", "rtt_ms"],
    )
    drops = _frame(raw["drops"], ["node", "port", "cause", "packets"])
    counters = _frame(raw["counters"], ["router", "port", "name", "packets", "bytes"])
    counters = counters.rename(columns={"name": "counter"})
    raw = {k: v for k, v in raw.items() if k != "files"}
    return Results(flows, ports, samples, queues, pings, drops, counters, raw)


# per flow, from each data segment's one-way delay (a transfer's: sim_scenario)
PACKET_DELAY_COLUMNS = ("owd_packets", "owd_mean_ms", "owd_p50_ms", "owd_p95_ms", "owd_max_ms")


def _packet_delay_columns(flows: pd.DataFrame, raw_flows: list[dict[str, Any]]) -> None:
    """The flows' one-way delay statistics over their data segments (NA where
    the simulator recorded none): count, mean, median, 95th percentile, max."""
    stats: dict[str, list[float | None]] = {c: [] for c in PACKET_DELAY_COLUMNS}
    for f in raw_flows:
        ms = pd.Series(f.get("packet_delays_ns") or [], dtype=float) / 1e6
        got = len(ms) > 0
        stats["owd_packets"].append(len(ms) if got else None)
        stats["owd_mean_ms"].append(float(ms.mean()) if got else None)
        stats["owd_p50_ms"].append(float(ms.quantile(0.5)) if got else None)
        stats["owd_p95_ms"].append(float(ms.quantile(0.95)) if got else None)
        stats["owd_max_ms"].append(float(ms.max()) if got else None)
    for col, values in stats.items():
        flows[col] = pd.array(values, dtype="Int64" if col == "owd_packets" else "Float64")


def _register_column(name: str) -> str:
    """`RouterIngress.admission.red_avg` -> `red_avg`."""
    return name.rsplit(".", 1)[-1]


def _topologies(
    topology: str | Path | dict[str, Any], variant: str | None, sets: Iterable[str]
) -> list[tuple[str | None, Topology]]:
    if not isinstance(topology, dict):
        return load_variants(topology, list(sets), variant)
    with tempfile.TemporaryDirectory(prefix="ratelab-topology-") as tmp:
        path = Path(tmp) / "topology.yaml"
        path.write_text(yaml.safe_dump(topology, sort_keys=False))
        return load_variants(path, list(sets), variant)


def simulate(
    topology: str | Path | dict[str, Any],
    *,
    variant: str | None = None,
    seed: int = 0,
    sets: Iterable[str] = (),
) -> Results:
    """Runs a topology (a file, or the same content as a dict) in the simulator.
    A file with `variants` needs `variant=`; `sets` are `ratelab-net --set`
    overrides (`"links[1].queue_limit=200"`). Bad input raises ConfigError
    (str(): one line naming the file, line and field); SimError: the
    simulator is not built or failed. A dict's errors name `<dict>` and the
    line in `yaml.safe_dump(topology, sort_keys=False)`."""
    try:
        return _simulate(topology, variant, seed, sets)
    except ConfigError as e:
        if not isinstance(topology, dict) or e.location.filename == OVERRIDE:
            raise
        where = Location("<dict>", e.location.line, e.location.col)
        raise ConfigError(where, e.path, e.message) from None


def _simulate(
    topology: str | Path | dict[str, Any], variant: str | None, seed: int, sets: Iterable[str]
) -> Results:
    runs = _topologies(topology, variant, sets)
    if len(runs) > 1:
        names = ", ".join(str(v) for v, _ in runs)
        where = runs[0][1].filename
        raise ConfigError(
            Location(where, 1, 1), "variants", f"the file has variants ({names}): pass variant="
        )
    _, topo = runs[0]
    scenario = build_scenario(topo, plan_routers(topo), seed)
    return results_frames(run_netsim(topo, scenario, router_program()))


__all__ = ["SAMPLE_REGISTERS", "Results", "SimError", "results_frames", "run_netsim", "simulate"]
