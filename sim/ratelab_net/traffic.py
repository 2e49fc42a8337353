"""The flows of a topology as host commands, started and stopped on time.

Receivers (rbcc-recv per destination host, one tcp-sink / udp-sink per flow)
start first and are waited for ("listening on" on stderr); senders start at
their flow's start time and run until its stop time. Pings use iputils'
`ping -D` and are parsed by results.py. Every command writes its JSON (or ping
output) into the run's folder, named after the flow.
"""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ratelab_net.topology import Flow, Topology

SINK_LINGER_S = 10.0  # receivers outlive the last flow: retransmissions, FINs
UDP_BASE_PORT = 5000
TCP_BASE_PORT = 6000
TCP_SAMPLE_S = 0.05  # TCP_INFO sampling: several samples per RTT of the studies' links
# How long a sender may run past its stop time: rbcc-send gives up on an unanswered
# FIN and tcp-send on unacknowledged data after 30 s.
SENDER_GRACE_S = 45.0


class TrafficError(Exception):
    """A traffic command failed to start or finish; one line."""


@dataclass
class Command:
    host: str
    args: list[str]
    label: str
    start_s: float = 0.0
    waits_ready: bool = False  # a receiver: wait for its "listening on" line
    ping_out: Path | None = None
    run_s: float = 0.0  # a sender: how long it is meant to run
    stderr_out: Path | None = None  # a sender: where what it printed on stderr goes


def hosts_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "ratelab_hosts", *args]


def _sink(kind: str, flow: Flow, listen: str, total_s: float, out: Path) -> Command:
    """A udp-sink / tcp-sink for one flow, on its destination."""
    args = (kind, "--listen", listen, "--duration", f"{total_s:g}")
    json_out = ("--json-out", str(out / f"{flow.name}.sink.json"))
    return Command(flow.dst, hosts_command(*args, *json_out), f"{flow.name} sink", waits_ready=True)


def _sender(flow: Flow, flow_id: int, out: Path, *args: str) -> Command:
    """A ratelab-hosts sender for one flow: ARGS plus its duration, id and JSON."""
    common = ("--duration", f"{flow.stop_s - flow.start_s:g}", "--flow-id", str(flow_id))
    json_out = ("--json-out", str(out / f"{flow.name}.json"))
    run_s = flow.stop_s - flow.start_s
    command = hosts_command(*args, *common, *json_out)
    stderr_out = out / f"{flow.name}.stderr.txt"
    return Command(flow.src, command, flow.name, flow.start_s, run_s=run_s, stderr_out=stderr_out)


def ratelab_stack_args(topo: Topology, flow: Flow) -> list[str]:
    """tcp-send's arguments that pick the ratelab stack and its knobs (none for a
    kernel flow). A knob not given is left to the stack's default."""
    tcp = flow.tcp
    if tcp is None or tcp.stack != "ratelab":
        return []
    args = ["--stack", "ratelab", "--src", topo.stack_address(flow.src)]
    if tcp.iw is not None:
        args += ["--iw", str(tcp.iw)]
    if tcp.initial_rto_s is not None:
        args += ["--initial-rto", f"{tcp.initial_rto_s:g}"]
    if tcp.min_rto_s is not None:
        args += ["--min-rto", f"{tcp.min_rto_s:g}"]
    if tcp.sack is False:
        args.append("--no-sack")
    if tcp.delayed_ack is False:
        args.append("--no-delayed-ack")
    if tcp.prr:
        args.append("--prr")
    if tcp.rto_formula is not None:
        args += ["--rto-formula", tcp.rto_formula]
    if tcp.hystart:
        args.append("--hystart")
    if tcp.send_buffer is not None:
        args += ["--send-buffer", str(tcp.send_buffer)]
    return args


def plan_commands(topo: Topology, out: Path) -> tuple[list[Command], list[Command]]:
    """(receivers, senders) for every flow."""
    receivers: list[Command] = []
    senders: list[Command] = []
    total = topo.duration_s + SINK_LINGER_S
    rbcc_destinations: dict[str, None] = {}  # one rbcc-recv per host, in flow order
    for i, flow in enumerate(topo.flows):
        dst, _ = topo.host_address(flow.dst)
        rate = f"{flow.rate_bps}bit"
        if flow.transport == "rbcc":
            rbcc_destinations[flow.dst] = None
            start = []
            if flow.rbcc is not None and flow.rbcc.initial_rate_bps is not None:
                start += ["--initial-rate", f"{flow.rbcc.initial_rate_bps}bit"]
            if flow.rbcc is not None and flow.rbcc.adopt_synack_rate:
                start.append("--adopt-synack-rate")
            senders.append(
                _sender(flow, 1000 + i, out, "rbcc-send", "--dst", dst, "--rate", rate,
                        "--size", str(flow.size), *start)
            )  # fmt: skip
        elif flow.transport == "udp":
            listen = f"{dst}:{UDP_BASE_PORT + i}"
            receivers.append(_sink("udp-sink", flow, listen, total, out))
            pattern = ["--on", f"{flow.on_s:g}", "--off", f"{flow.off_s:g}"] if flow.on_s else []
            if flow.pattern == "poisson":  # each flow its own seed: no two alike
                pattern += ["--poisson", "--seed", str(i + 1)]
            senders.append(
                _sender(flow, 2000 + i, out, "udp-send", "--dst", listen, "--rate", rate,
                        "--size", str(flow.size), *pattern)
            )  # fmt: skip
        elif flow.transport == "tcp":
            listen = f"{dst}:{TCP_BASE_PORT + i}"
            receivers.append(_sink("tcp-sink", flow, listen, total, out))
            pattern = ["--pattern", flow.pattern]
            if flow.pattern == "onoff":
                pattern += ["--on", f"{flow.on_s:g}", "--off", f"{flow.off_s:g}"]
            if flow.pattern == "stream":
                pattern += ["--rate", rate]
            if flow.transfer_bytes is not None:  # a transfer: it closes when written
                pattern += ["--bytes", str(flow.transfer_bytes)]
            stack = ratelab_stack_args(topo, flow)
            senders.append(
                _sender(flow, 3000 + i, out, "tcp-send", *stack, "--dst", listen,
                        "--cc", str(flow.cc), *pattern, "--sample-interval", f"{TCP_SAMPLE_S:g}")
            )  # fmt: skip
        else:  # ping
            count = max(1, round((flow.stop_s - flow.start_s) / flow.interval_s))
            senders.append(
                Command(
                    flow.src,
                    ["ping", "-D", "-n", "-i", f"{flow.interval_s:g}", "-c", str(count), dst],
                    flow.name,
                    flow.start_s,
                    ping_out=out / f"{flow.name}.ping.txt",
                    run_s=flow.stop_s - flow.start_s,
                )
            )
    for host in rbcc_destinations:
        address, _ = topo.host_address(host)
        args = ("rbcc-recv", "--listen", address, "--duration", f"{total:g}")
        json_out = ("--json-out", str(out / f"rbcc-recv-{host}.json"))
        label = f"rbcc receiver on {host}"
        receivers.append(Command(host, hosts_command(*args, *json_out), label, waits_ready=True))
    return receivers, senders


class TrafficRun:
    """Runs the commands through `popen(host, args)`: a Mininet host's popen, or a
    command run in a network namespace (ratelab_sim.router_run)."""

    def __init__(self, popen: Callable[[str, list[str]], subprocess.Popen[Any]]) -> None:
        self.popen = popen
        self.procs: list[tuple[Command, subprocess.Popen[Any]]] = []
        self._stop = threading.Event()

    def start_receivers(self, receivers: list[Command]) -> None:
        for cmd in receivers:
            proc = self.popen(cmd.host, cmd.args)
            self.procs.append((cmd, proc))
            if cmd.waits_ready:
                line = proc.stderr.readline() if proc.stderr else ""
                if "listening on" not in line:
                    rest = proc.stderr.read() if proc.stderr else ""
                    raise TrafficError(f"{cmd.label} did not start: {(line + rest).strip()}")

    def run_senders(self, senders: list[Command], on_progress: Callable[[str], None]) -> None:
        """Start each sender at its time and wait for all of them."""
        t0 = time.monotonic()
        running: list[tuple[Command, subprocess.Popen[Any]]] = []
        for cmd in sorted(senders, key=lambda c: c.start_s):
            wait = t0 + cmd.start_s - time.monotonic()
            if wait > 0 and self._stop.wait(wait):
                return
            proc = self.popen(cmd.host, cmd.args)
            self.procs.append((cmd, proc))
            running.append((cmd, proc))
            on_progress(f"{time.monotonic() - t0:5.1f} s: started {cmd.label} on {cmd.host}")
        for cmd, proc in running:
            deadline = t0 + cmd.start_s + cmd.run_s + SENDER_GRACE_S
            try:
                out, err = proc.communicate(timeout=max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.communicate()
                late = f"{cmd.run_s + SENDER_GRACE_S:g} s"
                raise TrafficError(f"{cmd.label} did not finish within {late}") from None
            text = err if isinstance(err, str) else (err or b"").decode()
            if cmd.stderr_out is not None and text.strip():
                cmd.stderr_out.write_text(text)  # why a sender wrote no results
            if cmd.ping_out is not None:
                cmd.ping_out.write_text(out if isinstance(out, str) else out.decode())
            # 1 is a failure the command reports in its JSON (e.g. a flow that did not
            # complete): the report shows it. Anything else is a failure of the run.
            elif proc.returncode not in (0, 1):
                raise TrafficError(f"{cmd.label} failed (status {proc.returncode}): {text.strip()}")

    def stop_receivers(self) -> None:
        """Receivers have --duration; interrupting them makes them write their JSON now."""
        for cmd, proc in self.procs:
            if proc.poll() is None and not cmd.ping_out:
                proc.send_signal(2)  # SIGINT: a clean end with results
        for _, proc in self.procs:
            try:
                proc.communicate(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.communicate()

    def kill_all(self) -> None:
        self._stop.set()
        for _, proc in self.procs:
            if proc.poll() is None:
                proc.kill()
