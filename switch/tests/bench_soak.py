"""Soak benchmark (not a test): ratelab-switch running router.p4 (compiled by
ratelab-p4c) forwards flat out between two veth pairs for --duration seconds
(600 in `make bench`) while P4Runtime reads and writes go on, and a controller
reconnects every few seconds. Needs root and the ratelab_engine extension.

What runs at once:
- traffic: ratelab-pktgen sends 64-byte IPv4/UDP frames as fast as it can into
  port 1 (one run after another until the end); a second ratelab-pktgen counts
  what comes out of port 2;
- a reconnecting controller: every --session seconds a new StreamChannel,
  arbitration (always election id 10, so a stream the switch kept from an earlier
  session would refuse it), batches of inserts, modifies and deletes of routes
  in RouterIngress.ipv4_lpm, then a disconnect: mostly a normal close, every
  fourth session a child process SIGKILLed once its writes are acknowledged (the
  connection dies without a goodbye);
- a reader on its own channel: all counters and the queue registers
  (ratelab_ctl's read_counters) and the whole LPM table, over and over;
- a sampler, every --sample seconds: the daemon's RSS, threads and open files
  (psutil), its port counters (ratelab.SwitchTarget GetPortStats) and its open
  streams (GetArbitration).

At the end a last controller arbitrates with the same election id, reads back
every configuration table and compares it with what the configuration and the
acknowledged writes say it must hold.

Fails (exit status 1, the reasons in "failures") if: an entry is lost, changed or
unexpected; a session cannot arbitrate within --stale-timeout seconds of the last
one leaving (the switch kept its stream); the switch does not show exactly one open
stream, the last controller's, as primary, and none once it leaves; a write or
read fails; the daemon dies; or the RSS is clearly unbounded: a slope above
--max-rss-slope KiB/min (default 4096: 5.6 GiB a day) fitted after the warm-up
(the first fifth of the run), on runs whose fitted part is 2 minutes or more. The
RSS slope is reported in any case.

    python switch/tests/bench_soak.py --pktgen target/release/ratelab-pktgen \\
        --duration 600 --out bench/results/switch_soak.json
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent
sys.path[:0] = [str(HERE.parent), str(HERE)]

import grpc  # noqa: E402
import psutil  # noqa: E402
from finsy.proto.p4.v1 import p4runtime_pb2  # noqa: E402
from ratelab_ctl.configfile import ControllerConfig, parse_config  # noqa: E402
from ratelab_ctl.connection import SwitchConnection, SwitchError, WriteError  # noqa: E402
from ratelab_ctl.controller import Controller  # noqa: E402
from ratelab_ctl.entities import DELETE, INSERT, MODIFY, describe, update_pb  # noqa: E402
from ratelab_ctl.switch_options import switch_options  # noqa: E402
from ratelab_model.p4_entries import TableEntry, all_entries  # noqa: E402
from ratelab_p4info import Schema  # noqa: E402
from ratelab_sim import VethPair, sweep, unique_prefix  # noqa: E402
from ratelab_sim.build import compile_router, default_p4c  # noqa: E402

ROOT = HERE.parents[1]
_TAG = unique_prefix()
PAIRS = [(f"{_TAG}s1", f"{_TAG}h1"), (f"{_TAG}s2", f"{_TAG}h2")]
DST = "10.0.2.9"
ELECTION_ID = 10
LPM_TABLE = "RouterIngress.ipv4_lpm"
NEXT_HOP_ACTION = "RouterIngress.set_next_hop"
CHURN_KEYS = 1024  # 172.16.0.0/24 .. 172.19.255.0/24
CHURN_TARGET = 512  # entries the churn keeps around
BATCH = 8  # updates per Write

CONFIG = """\
router_id: 10.0.0.1
device_id: 0
address: 127.0.0.1:9559
rbcc: {min_rate: 1500, idle_timeout: 1s, abt_slots: 1024}
ports:
  1: {mac: "02:00:00:00:00:01", rate: 10gbit, queue_limit: 64, aqm: fifo}
  2: {mac: "02:00:00:00:00:02", rate: 10gbit, queue_limit: 64, aqm: fifo}
next_hops:
  sender: {port: 1, mac: "02:00:00:00:01:01"}
  receiver: {port: 2, mac: "02:00:00:00:01:02"}
routes:
  10.0.1.0/24: sender
  10.0.2.0/24: receiver
"""


class SoakFailure(Exception):
    """Something the soak must not see; the message is one line."""


# ------------------------------------------------------------------ the switch


@contextlib.contextmanager
def veth_pairs() -> Iterator[None]:
    sweep()
    with contextlib.ExitStack() as stack:
        for a, b in PAIRS:
            stack.enter_context(VethPair(a, b))
        yield


@dataclass
class Daemon:
    proc: subprocess.Popen[str]
    address: str
    log: Path

    @property
    def alive(self) -> bool:
        return self.proc.poll() is None


def start_daemon(json_path: Path, cfg: ControllerConfig, log: Path) -> Daemon:
    cmd = [
        sys.executable, "-m", "ratelab_switch.daemon", str(json_path),
        "-i", f"1@{PAIRS[0][0]}", "-i", f"2@{PAIRS[1][0]}",
        *switch_options(cfg.router),
        "--grpc-server-addr", "127.0.0.1:0", "--device-id", str(cfg.device_id),
    ]  # fmt: skip
    log_file = log.open("w")
    proc = subprocess.Popen(
        cmd,
        stdout=subprocess.PIPE,
        stderr=log_file,
        text=True,
        start_new_session=True,  # its own autogroup: see bench_daemon.py
        env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)),
    )
    assert proc.stdout is not None
    line = proc.stdout.readline().strip()
    if "listening on" not in line:
        proc.kill()
        raise SoakFailure(f"the daemon did not start: {line!r} (log: {log})")

    def drain() -> None:  # a full stdout pipe would stop the daemon
        assert proc.stdout is not None
        for text in proc.stdout:
            log_file.write(text)

    threading.Thread(target=drain, daemon=True).start()
    return Daemon(proc, line.rsplit(" ", 1)[1], log)


def target_call(channel: grpc.Channel, method: str, body: dict[str, Any]) -> Any:
    reply = channel.unary_unary(f"/ratelab.SwitchTarget/{method}")(
        json.dumps(body).encode(), timeout=10
    )
    return json.loads(reply)


# ------------------------------------------------------------------ the churn


def churn_entry(key: int, mac: int) -> TableEntry:
    prefix = (172 << 24) | (16 << 16) | (key << 8)
    return TableEntry(LPM_TABLE, ((prefix, 24),), NEXT_HOP_ACTION, (2, mac))


@dataclass
class Churn:
    """The routes the writers own, as acknowledged by the switch."""

    rng: random.Random
    entries: dict[int, TableEntry] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=lambda: {"insert": 0, "modify": 0, "delete": 0})

    def batch(self) -> list[tuple[str, int, TableEntry]]:
        """BATCH changes on distinct keys (a batch's order is the switch's choice)."""
        out: list[tuple[str, int, TableEntry]] = []
        used: set[int] = set()
        for _ in range(BATCH):
            fill = len(self.entries) / CHURN_TARGET
            kind = self.rng.choices(["insert", "modify", "delete"], [2 - fill, 1, fill])[0]
            present = [k for k in self.entries if k not in used]
            if kind != "insert" and present:
                key = self.rng.choice(present)
            else:
                kind = "insert"
                free = [k for k in range(CHURN_KEYS) if k not in self.entries and k not in used]
                key = self.rng.choice(free)
            used.add(key)
            out.append((kind, key, churn_entry(key, self.rng.getrandbits(47) << 1)))
        return out

    def acknowledged(self, batch: list[tuple[str, int, TableEntry]]) -> None:
        for kind, key, entry in batch:
            self.counts[kind] += 1
            if kind == "delete":
                del self.entries[key]
            else:
                self.entries[key] = entry


_KINDS = {"insert": INSERT, "modify": MODIFY, "delete": DELETE}


def encode(schema: Schema, batch: list[tuple[str, int, TableEntry]]) -> list[p4runtime_pb2.Update]:
    return [update_pb(schema, _KINDS[kind], entry) for kind, _, entry in batch]


def open_session(address: str, stale_timeout: float) -> tuple[SwitchConnection, float]:
    """A primary connection with ELECTION_ID and how long it took: the switch refuses
    the id while it still holds the previous session's stream."""
    start = time.monotonic()
    while True:
        conn = SwitchConnection(address, device_id=0, election_id=ELECTION_ID, timeout=5)
        try:
            conn.open()
            return conn, time.monotonic() - start
        except SwitchError as e:
            if time.monotonic() - start > stale_timeout:
                raise SoakFailure(
                    f"no arbitration with election id {ELECTION_ID} within {stale_timeout:g} s "
                    f"of the last session leaving (a stale stream?): {e}"
                ) from None
            time.sleep(0.05)


@dataclass
class WriterStats:
    sessions: int = 0
    killed_sessions: int = 0
    arbitration_waits: list[float] = field(default_factory=list)


def session_in_process(
    address: str, schema: Schema, churn: Churn, args: argparse.Namespace
) -> float:
    """A session that ends with a normal close."""
    conn, waited = open_session(address, args.stale_timeout)
    until = time.monotonic() + args.session
    try:
        while time.monotonic() < until:
            batch = churn.batch()
            try:
                conn.write(encode(schema, batch))
            except WriteError as e:  # the updates that went through still count
                refused = {u.index for u in e.errors}
                churn.acknowledged([c for i, c in enumerate(batch) if i not in refused])
                raise
            churn.acknowledged(batch)
            time.sleep(args.write_interval)
    finally:
        conn.close()
    return waited


def session_killed(address: str, schema: Schema, churn: Churn, args: argparse.Namespace) -> float:
    """A session in a child process, SIGKILLed once its last write is acknowledged:
    the connection dies without a goodbye."""
    planned = Churn(churn.rng, dict(churn.entries))  # the state changes only as acknowledged
    batches = []
    for _ in range(max(1, round(args.session / args.write_interval))):
        b = planned.batch()
        planned.acknowledged(b)
        batches.append(b)
    child = subprocess.Popen(
        [sys.executable, __file__, "--session-child", address],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)),
    )
    assert child.stdin is not None and child.stdout is not None
    job = {
        "batches": [
            [base64.b64encode(u.SerializeToString()).decode() for u in encode(schema, b)]
            for b in batches
        ],
        "stale_timeout": args.stale_timeout,
        "write_interval": args.write_interval,
    }
    child.stdin.write(json.dumps(job))
    child.stdin.close()
    waited, acked = 0.0, 0
    try:
        for line in child.stdout:
            word, _, rest = line.strip().partition(" ")
            if word == "arbitrated":
                waited = float(rest)
            elif word == "ack":
                churn.acknowledged(batches[acked])
                acked += 1
            elif word == "refused":
                refused = set(json.loads(rest))
                churn.acknowledged([c for i, c in enumerate(batches[acked]) if i not in refused])
            elif word == "idle":
                break
            else:
                raise SoakFailure(f"killed session: {line.strip()}")
    finally:
        child.kill()
        child.wait()
    if acked != len(batches):
        raise SoakFailure(f"killed session: {acked} of {len(batches)} writes acknowledged")
    return waited


def session_child(address: str) -> int:
    """--session-child: arbitrate, write the batches from stdin, say so, wait to die."""
    job = json.loads(sys.stdin.read())
    try:
        conn, waited = open_session(address, job["stale_timeout"])
    except SoakFailure as e:
        print(f"error {e}", flush=True)
        return 1
    print(f"arbitrated {waited:.3f}", flush=True)
    for batch in job["batches"]:
        updates = [p4runtime_pb2.Update.FromString(base64.b64decode(u)) for u in batch]
        try:
            conn.write(updates)
        except SwitchError as e:
            if isinstance(e, WriteError):  # the others went through
                print(f"refused {json.dumps(sorted(u.index for u in e.errors))}", flush=True)
            print(f"error write: {e}", flush=True)
            return 1
        print("ack", flush=True)
        time.sleep(job["write_interval"])
    print("idle", flush=True)
    time.sleep(3600)  # the parent kills us
    return 0


def writer(
    address: str,
    schema: Schema,
    churn: Churn,
    stop: threading.Event,
    stats: WriterStats,
    failures: list[str],
    args: argparse.Namespace,
) -> None:
    try:
        while not stop.is_set():
            killed = stats.sessions % 4 == 3
            run = session_killed if killed else session_in_process
            stats.arbitration_waits.append(run(address, schema, churn, args))
            stats.sessions += 1
            stats.killed_sessions += killed
    except (SoakFailure, SwitchError) as e:
        failures.append(f"writer: {e}")
        stop.set()


@dataclass
class ReaderStats:
    rounds: int = 0
    entities: int = 0


def reader(
    address: str,
    schema: Schema,
    stop: threading.Event,
    stats: ReaderStats,
    failures: list[str],
    interval: float,
) -> None:
    try:
        with SwitchConnection(address, device_id=0, timeout=10).open(arbitrate=False) as conn:
            ctl = Controller(conn, schema)
            while not stop.is_set():
                snap = ctl.read_counters(ports=[1, 2])
                if not snap.gauges:
                    raise SoakFailure("the queue registers could not be read")
                stats.entities += len(ctl.routes_installed())
                stats.rounds += 1
                stop.wait(interval)
    except (SoakFailure, SwitchError) as e:
        failures.append(f"reader: {e}")
        stop.set()


# ------------------------------------------------------------------ sampling


@dataclass
class Sample:
    t: float
    rss_kib: int
    threads: int
    fds: int
    rx_port1: int
    tx_port2: int
    rx_drops: int
    streams: int


def sampler(
    daemon: Daemon,
    stop: threading.Event,
    samples: list[Sample],
    failures: list[str],
    interval: float,
    t0: float,
) -> None:
    proc = psutil.Process(daemon.proc.pid)
    with grpc.insecure_channel(daemon.address) as ch:
        while not stop.is_set():
            try:
                mem = proc.memory_info().rss // 1024
                threads, fds = proc.num_threads(), proc.num_fds()
                ports = {
                    p["port"]: p for p in target_call(ch, "GetPortStats", {"device_id": 0})["ports"]
                }
                roles = target_call(ch, "GetArbitration", {"device_id": 0})["roles"]
            except (psutil.Error, grpc.RpcError) as e:
                failures.append(f"sampler: the daemon stopped answering: {e}")
                stop.set()
                return
            samples.append(
                Sample(
                    round(time.monotonic() - t0, 3),
                    mem,
                    threads,
                    fds,
                    ports[1]["rx_packets"],
                    ports[2]["tx_packets"],
                    sum(p["rx_drops"] for p in ports.values()),
                    sum(r["streams"] for r in roles),
                )
            )
            stop.wait(interval)


def slope_per_minute(points: list[tuple[float, float]]) -> float | None:
    """Least-squares slope of (seconds, value) points, per minute."""
    if len(points) < 2:
        return None
    n = len(points)
    mx = sum(t for t, _ in points) / n
    my = sum(v for _, v in points) / n
    sxx = sum((t - mx) ** 2 for t, _ in points)
    if sxx == 0:
        return None
    return 60 * sum((t - mx) * (v - my) for t, v in points) / sxx


def traffic(
    pktgen: str, size: int, chunk: int, stop: threading.Event, sent: list[int], failures: list[str]
) -> None:
    while not stop.is_set():
        proc = subprocess.run(
            [pktgen, "send", PAIRS[0][1], DST, str(size), str(chunk), "0"],
            capture_output=True, text=True, start_new_session=True,
        )  # fmt: skip
        if proc.returncode != 0:
            failures.append(f"pktgen send: {proc.stderr.strip() or proc.returncode}")
            stop.set()
            return
        sent.append(int(json.loads(proc.stdout)["sent"]))


# ------------------------------------------------------------------ the run


def _example(entries: set[TableEntry]) -> str:
    entry = min(entries, key=str)
    return f"{describe(entry)} -> {entry.action}{entry.params}"


def _streams_closed(ch: grpc.Channel, timeout: float) -> list[dict[str, Any]]:
    """GetArbitration once no stream is open, or after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        roles = target_call(ch, "GetArbitration", {"device_id": 0})["roles"]
        if all(r["streams"] == 0 for r in roles) or time.monotonic() > deadline:
            return roles
        time.sleep(0.05)


def final_checks(
    daemon: Daemon, schema: Schema, cfg: ControllerConfig, churn: Churn, args: argparse.Namespace
) -> tuple[dict[str, Any], list[str]]:
    failures: list[str] = []
    with grpc.insecure_channel(daemon.address) as ch:
        roles_before = _streams_closed(ch, args.stale_timeout)
        if any(r["streams"] for r in roles_before):
            failures.append(f"streams left open by departed controllers: {roles_before}")
        try:
            conn, waited = open_session(daemon.address, args.stale_timeout)
        except SoakFailure as e:
            failures.append(f"last controller: {e}")
            return {"arbitration_before_last_controller": roles_before}, failures
        try:
            roles = target_call(ch, "GetArbitration", {"device_id": 0})["roles"]
            expected_roles = [{"role": "", "streams": 1, "primary_election_id": ELECTION_ID}]
            if roles != expected_roles:
                failures.append(f"with one controller connected the switch shows {roles}")
            installed = Controller(conn, schema).installed_entries()
        finally:
            conn.close()
        roles_after = _streams_closed(ch, args.stale_timeout)
        if any(r["streams"] for r in roles_after):
            failures.append(f"streams left open after the last controller left: {roles_after}")
    expected = set(all_entries(cfg.router)) | set(churn.entries.values())
    got = set(installed)
    missing, unexpected = expected - got, got - expected
    if missing:
        failures.append(f"{len(missing)} entries lost, e.g. {_example(missing)}")
    if unexpected:
        failures.append(f"{len(unexpected)} entries never written, e.g. {_example(unexpected)}")
    if len(installed) != len(got):
        failures.append(f"{len(installed) - len(got)} entries read back twice")
    return {
        "entries_expected": len(expected),
        "entries_read_back": len(installed),
        "entries_missing": len(missing),
        "entries_unexpected": len(unexpected),
        "final_arbitration_wait_s": round(waited, 3),
        "arbitration_before_last_controller": roles_before,
        "arbitration_with_one_controller": roles,
        "arbitration_after_it_left": roles_after,
    }, failures


def summarize(samples: list[Sample], args: argparse.Namespace) -> tuple[dict[str, Any], list[str]]:
    failures: list[str] = []
    if len(samples) < 3:
        return {"samples": len(samples)}, ["too few samples to report on"]
    t_end = samples[-1].t
    warm = max(10.0, t_end / 5)
    fitted = [s for s in samples if s.t >= warm]
    rss_all = slope_per_minute([(s.t, s.rss_kib) for s in samples])
    rss_fit = slope_per_minute([(s.t, s.rss_kib) for s in fitted])
    fitted_span = fitted[-1].t - fitted[0].t if fitted else 0.0
    if rss_fit is not None and fitted_span >= 120 and rss_fit > args.max_rss_slope:
        failures.append(
            f"RSS grows {rss_fit:.0f} KiB/min after the warm-up (limit {args.max_rss_slope:g})"
        )
    # Forwarded rate per report interval.
    series = []
    last = samples[0]
    for s in samples[1:]:
        if s.t - last.t >= args.report_interval or s is samples[-1]:
            dt = s.t - last.t
            series.append(
                {
                    "t_s": round(s.t, 1),
                    "forwarded_pps": round((s.tx_port2 - last.tx_port2) / dt),
                    "port1_rx_pps": round((s.rx_port1 - last.rx_port1) / dt),
                    "rss_kib": s.rss_kib,
                    "threads": s.threads,
                    "fds": s.fds,
                }
            )
            last = s
    first, final = samples[0], samples[-1]
    span = final.t - first.t
    minute = [r["forwarded_pps"] for r in series]
    head = [r["forwarded_pps"] for r in series if r["t_s"] <= series[0]["t_s"] + 60]
    tail = [r["forwarded_pps"] for r in series if r["t_s"] >= series[-1]["t_s"] - 60]
    return {
        "samples": len(samples),
        "sample_interval_s": args.sample,
        "rss_kib_first": first.rss_kib,
        "rss_kib_last": final.rss_kib,
        "rss_kib_max": max(s.rss_kib for s in samples),
        "rss_slope_kib_per_min_all": None if rss_all is None else round(rss_all, 1),
        "rss_slope_kib_per_min_after_warmup": None if rss_fit is None else round(rss_fit, 1),
        "rss_warmup_s": round(warm, 1),
        "rss_slope_limit_kib_per_min": args.max_rss_slope,
        "threads_first_last_max": [first.threads, final.threads, max(s.threads for s in samples)],
        "fds_first_last_max": [first.fds, final.fds, max(s.fds for s in samples)],
        "max_open_streams": max(s.streams for s in samples),
        "forwarded_pps_mean": round((final.tx_port2 - first.tx_port2) / span) if span else 0,
        "forwarded_pps_min_max": [min(minute), max(minute)] if minute else None,
        "forwarded_pps_first_minute": round(sum(head) / len(head)) if head else None,
        "forwarded_pps_last_minute": round(sum(tail) / len(tail)) if tail else None,
        "rx_drops": final.rx_drops,
        "series": series,
    }, failures


def run(args: argparse.Namespace) -> dict[str, Any]:
    out_dir = ROOT / "build" / "bench" / "soak"
    json_path, p4info = compile_router(default_p4c() or "ratelab-p4c", out_dir, quiet=True)
    cfg = parse_config(CONFIG, "<soak config>")
    schema = Schema.load(p4info)
    failures: list[str] = []
    with veth_pairs():
        daemon = start_daemon(json_path, cfg, out_dir / "daemon.log")
        try:
            with SwitchConnection(daemon.address, device_id=0, election_id=ELECTION_ID).open() as c:
                ctl = Controller(c, schema)
                ctl.push_pipeline(json_path, p4info)
                ctl.apply_config(cfg)
            receiver = subprocess.Popen(
                [args.pktgen, "recv", PAIRS[1][1], str(args.duration + 3), str(args.duration)],
                stdout=subprocess.PIPE, text=True, start_new_session=True,
            )  # fmt: skip
            time.sleep(0.3)  # the receiver's socket is bound
            stop = threading.Event()
            churn = Churn(random.Random(args.seed))
            wstats, rstats = WriterStats(), ReaderStats()
            samples: list[Sample] = []
            sent: list[int] = []
            t0 = time.monotonic()
            threads = [
                threading.Thread(target=f, args=a, daemon=True)
                for f, a in (
                    (sampler, (daemon, stop, samples, failures, args.sample, t0)),
                    (traffic, (args.pktgen, args.size, args.chunk, stop, sent, failures)),
                    (writer, (daemon.address, schema, churn, stop, wstats, failures, args)),
                    (reader, (daemon.address, schema, stop, rstats, failures, args.read_interval)),
                )
            ]
            for t in threads:
                t.start()
            stop.wait(args.duration)
            stop.set()
            for t in threads:
                t.join(timeout=args.session + 60)
            elapsed = time.monotonic() - t0
            recv_out = receiver.communicate(timeout=60)[0]  # it stops 3 s after the end
            if not daemon.alive:
                failures.append(f"the daemon died (exit status {daemon.proc.returncode})")
                checks: dict[str, Any] = {}
            else:
                checks, more = final_checks(daemon, schema, cfg, churn, args)
                failures += more
            summary, more = summarize(samples, args)
            failures += more
        finally:
            daemon.proc.send_signal(signal.SIGTERM)
            try:
                daemon.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                daemon.proc.kill()
    waits = wstats.arbitration_waits
    return {
        "program": "router.p4 (ratelab-p4c), 2 ports, FIFO",
        "machine_cpus": os.cpu_count(),
        "duration_s": round(elapsed, 1),
        "frame_bytes": args.size,
        "offered_packets": sum(sent),
        # ratelab-pktgen's count at port 2's far end (a check on the port counters)
        "receiver": json.loads(recv_out) if recv_out.strip() else None,
        "controller_sessions": wstats.sessions,
        "killed_sessions": wstats.killed_sessions,
        "session_s": args.session,
        "updates_acknowledged": churn.counts,
        "arbitration_wait_s_max": round(max(waits), 3) if waits else None,
        "reader_rounds": rstats.rounds,
        "reader_entries_read": rstats.entities,
        **checks,
        **summary,
        "failures": failures,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--session-child", metavar="ADDR", help=argparse.SUPPRESS)
    ap.add_argument("--pktgen", help="the ratelab-pktgen binary")
    ap.add_argument("--duration", type=float, default=600.0, help="seconds (default 600)")
    ap.add_argument("--session", type=float, default=3.0, help="seconds per controller session")
    ap.add_argument("--write-interval", type=float, default=0.05, help="seconds between writes")
    ap.add_argument("--read-interval", type=float, default=0.1, help="seconds between reads")
    ap.add_argument("--sample", type=float, default=1.0, help="seconds between samples")
    ap.add_argument("--report-interval", type=float, default=10.0, help="series step, seconds")
    ap.add_argument("--stale-timeout", type=float, default=5.0, help="seconds (see above)")
    ap.add_argument("--max-rss-slope", type=float, default=4096.0, help="KiB/min (see above)")
    ap.add_argument("--size", type=int, default=64, help="frame size in bytes")
    ap.add_argument("--chunk", type=int, default=1_000_000, help="frames per pktgen run")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", help="JSON result file")
    args = ap.parse_args()
    if args.session_child:
        return session_child(args.session_child)
    if not args.pktgen or not args.out:
        ap.error("--pktgen and --out are required")
    for name in ("duration", "session", "write_interval", "sample", "report_interval", "chunk"):
        if getattr(args, name) <= 0:
            ap.error(f"--{name.replace('_', '-')} must be above 0")
    if args.read_interval < 0 or args.stale_timeout < 0:
        ap.error("--read-interval and --stale-timeout must not be negative")
    if os.geteuid() != 0:
        result: dict[str, Any] = {"skipped": "needs root to create veth pairs"}
    else:
        try:
            result = run(args)
        except SoakFailure as e:
            result = {"failures": [str(e)]}
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=2) + "\n")
    shown = {k: v for k, v in result.items() if k != "series"}
    print(json.dumps(shown, indent=2))
    for f in result.get("failures", []):
        print(f"bench_soak: FAILED: {f}", file=sys.stderr)
    return 1 if result.get("failures") else 0


if __name__ == "__main__":
    sys.exit(main())
