"""A P4Runtime software switch as a child process: ratelab's `ratelab-switch` or
BMv2's `simple_switch_grpc` (same command line), optionally inside a network
namespace. Started on entry, ready once its gRPC port accepts connections,
stopped on exit (SIGTERM, then SIGKILL), its output captured in a log file.

Egress queue rates and depths are switch settings, not P4Runtime ones: ratelab's
switch takes them as command-line options (`--queue-rate`, `--queue-depth`),
BMv2 through its Thrift CLI (`simple_switch_CLI`: set_queue_rate in packets per
second, set_queue_depth). `QueueSetting` expresses a rate in packets per second
so both targets drain a port the same way.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

import grpc

from ratelab_sim.netns import ns_prefix, run_in_netns

TARGETS = ("ratelab", "bmv2")
# ratelab-switch's own gRPC service (queue settings, port counters).
SWITCH_TARGET = "ratelab.SwitchTarget"
# The port counters (GetPortStats) of frames a ratelab-switch loses outside the
# router program: its packet thread fell behind (rx_drops), a frame did not fit the
# interface (mtu_drops), a send failed (tx_errors).
SWITCH_LOSSES = ("rx_drops", "mtu_drops", "tx_errors")
REPO_ROOT = Path(__file__).resolve().parents[2]


class SwitchError(Exception):
    """The switch could not be started (or died); str() is one line plus a log tail."""


@dataclass(frozen=True)
class QueueSetting:
    port: int
    pps: int | None = None  # drain rate in packets per second; None: the target's default
    depth: int | None = None  # the switch's own queue depth in packets


def resolve_target(target: str | None = None) -> str:
    """`target`, else $RATELAB_TARGET, else "ratelab"."""
    value = target or os.environ.get("RATELAB_TARGET") or "ratelab"
    if value not in TARGETS:
        raise SwitchError(f"unknown target {value!r}: expected one of {', '.join(TARGETS)}")
    return value


def switch_command(target: str) -> tuple[list[str], dict[str, str]]:
    """The program to run for `target` and extra environment it needs.

    ratelab: $RATELAB_SWITCH (a command line) if set, else `ratelab-switch` on PATH,
    else `python -m ratelab_switch.daemon` (with switch/ on PYTHONPATH if needed).
    bmv2: `simple_switch_grpc` on PATH, else a clear error."""
    env: dict[str, str] = {}
    if target == "bmv2":
        exe = shutil.which("simple_switch_grpc")
        if exe is None:
            raise SwitchError(
                "target bmv2: simple_switch_grpc is not on PATH (install BMv2, or use "
                "--target ratelab / RATELAB_TARGET=ratelab)"
            )
        return [exe], env
    if os.environ.get("RATELAB_SWITCH"):
        return shlex.split(os.environ["RATELAB_SWITCH"]), env
    exe = shutil.which("ratelab-switch")
    if exe is not None:
        return [exe], env
    if importlib.util.find_spec("ratelab_switch") is None:
        path = os.environ.get("PYTHONPATH", "")
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO_ROOT / "switch"), path) if p)
    return [sys.executable, "-m", "ratelab_switch.daemon"], env


def free_port(netns: str | None = None) -> int:
    """A TCP port nobody listens on now (in `netns`)."""

    def pick() -> int:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            s.bind(("127.0.0.1", 0))
            return int(s.getsockname()[1])

    return run_in_netns(netns, pick)


def port_open(host: str, port: int, netns: str | None = None) -> bool:
    def probe() -> bool:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            s.settimeout(0.5)
            return s.connect_ex((host, port)) == 0

    return run_in_netns(netns, probe)


class SwitchProcess:
    """Run a switch with `interfaces` ({switch port: interface name}) attached.

    `json_path` None starts it without a program (--no-p4; ratelab only). The
    P4Runtime address is `grpc_address` once entered."""

    def __init__(
        self,
        json_path: str | Path | None,
        interfaces: Mapping[int, str],
        log_path: str | Path,
        *,
        target: str | None = None,
        netns: str | None = None,
        grpc_port: int | None = None,
        device_id: int = 0,
        queues: Sequence[QueueSetting] = (),
        extra_args: Sequence[str] = (),
        startup_timeout: float = 60.0,
    ) -> None:
        self.target = resolve_target(target)
        self.json_path = None if json_path is None else Path(json_path)
        self.interfaces = dict(interfaces)
        self.log_path = Path(log_path)
        self.netns = netns
        self.grpc_port = grpc_port
        self.device_id = device_id
        self.queues = list(queues)
        self.extra_args = list(extra_args)
        self.startup_timeout = startup_timeout
        self.thrift_port: int | None = None
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def grpc_address(self) -> str:
        return f"127.0.0.1:{self.grpc_port}"

    def port_stats(self) -> dict[int, dict[str, Any]] | None:
        """ratelab-switch's counters per port (`GetPortStats` of its ratelab.SwitchTarget
        service: switch/ratelab_switch/README.md), or None on BMv2, which has no such
        service."""
        if self.target != "ratelab":
            return None
        call = f"/{SWITCH_TARGET}/GetPortStats"
        body = json.dumps({"device_id": self.device_id}).encode()
        try:
            with grpc.insecure_channel(self.grpc_address) as channel:
                reply = channel.unary_unary(call)(body, timeout=10)
        except grpc.RpcError as e:
            raise SwitchError(f"reading the switch's port counters failed: {e}") from None
        return {int(p["port"]): p for p in json.loads(reply)["ports"]}

    def command(self) -> tuple[list[str], dict[str, str]]:
        program, env = switch_command(self.target)
        args = list(program)
        for port, iface in sorted(self.interfaces.items()):
            args += ["-i", f"{port}@{iface}"]
        args += ["--device-id", str(self.device_id)]
        if self.thrift_port is not None:
            args += ["--thrift-port", str(self.thrift_port)]
        if self.json_path is not None:
            args.append(str(self.json_path))
        elif self.target == "bmv2":
            raise SwitchError("target bmv2 needs a JSON program")
        else:
            args.append("--no-p4")
        args += ["--", "--grpc-server-addr", self.grpc_address]
        if self.target == "ratelab":
            for q in self.queues:
                if q.pps is not None:
                    args += ["--queue-rate", f"{q.port}={q.pps}pps"]
                if q.depth is not None:
                    args += ["--queue-depth", f"{q.port}={q.depth}"]
        args += self.extra_args
        return args, env

    # -- lifecycle --------------------------------------------------------------

    def start(self) -> None:
        if self.grpc_port is None:
            self.grpc_port = free_port(self.netns)
        # Each switch its own Thrift port: several on one machine would all ask for 9090.
        self.thrift_port = free_port(self.netns)
        args, extra_env = self.command()
        env = {**os.environ, **extra_env}
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.log_path, "wb") as log:
            log.write(f"$ {shlex.join(args)}\n".encode())
            log.flush()
            self.proc = subprocess.Popen(
                [*ns_prefix(self.netns), *args],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                env=env,
                start_new_session=True,  # Ctrl-C reaches us; we stop it in order
            )
        try:
            self._wait_ready()
            if self.target == "bmv2":
                self._bmv2_queues()
        except BaseException:
            self.stop()
            raise

    def _wait_ready(self) -> None:
        assert self.proc is not None and self.grpc_port is not None
        deadline = time.monotonic() + self.startup_timeout
        delay = 0.02
        while True:
            code = self.proc.poll()
            if code is not None:
                raise SwitchError(
                    f"{self.target} switch exited with status {code} during startup\n"
                    f"{self.log_tail()}"
                )
            if port_open("127.0.0.1", self.grpc_port, self.netns):
                return
            if time.monotonic() > deadline:
                raise SwitchError(
                    f"{self.target} switch: no gRPC server on {self.grpc_address} after "
                    f"{self.startup_timeout:g} s\n{self.log_tail()}"
                )
            time.sleep(delay)
            delay = min(delay * 1.5, 0.25)

    def _bmv2_queues(self) -> None:
        lines = []
        for q in self.queues:
            if q.pps is not None:
                lines.append(f"set_queue_rate {q.pps} {q.port}")
            if q.depth is not None:
                lines.append(f"set_queue_depth {q.depth} {q.port}")
        if not lines:
            return
        cli = shutil.which("simple_switch_CLI")
        if cli is None:
            raise SwitchError("target bmv2: simple_switch_CLI is not on PATH (queue settings)")
        cmd = [*ns_prefix(self.netns), cli, "--thrift-port", str(self.thrift_port)]
        proc = subprocess.run(
            cmd, input="\n".join(lines) + "\n", capture_output=True, text=True, timeout=60
        )
        if proc.returncode != 0 or "Error" in proc.stdout:
            raise SwitchError(f"simple_switch_CLI failed: {(proc.stdout + proc.stderr).strip()}")

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def stop(self, timeout: float = 5.0) -> int | None:
        """SIGTERM, then SIGKILL after `timeout` s. Returns the exit status."""
        proc = self.proc
        if proc is None:
            return None
        if proc.poll() is None:
            try:
                proc.send_signal(signal.SIGTERM)
                proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        self.proc = None
        return proc.returncode

    def log_tail(self, lines: int = 20) -> str:
        try:
            text = self.log_path.read_text(errors="replace")
        except OSError:
            return f"(no log at {self.log_path})"
        return "\n".join(text.splitlines()[-lines:])

    def __enter__(self) -> SwitchProcess:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
