"""Many simulator runs from one process: a long-lived `ratelab-netsim --batch`
per router program (sim/netsim/README.md), which compiles router.p4 with LLVM
once instead of once per run. For sweeps of small runs (ratelab-exp's E2: a
run's own simulation takes a few milliseconds, compiling the router about 70).

    results = netsim_batch.run(topo, scenario, router_program())

gives what `sim_api.run_netsim` gives, byte for byte. The process is kept per
(binary, program): a rebuilt binary or a changed program file (by content)
starts a new one, and a process that died is started again on the next run.
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import json
import subprocess
import tempfile
import threading
from pathlib import Path
from typing import IO, Any

from ratelab_net.sim_api import (
    SimError,
    netsim_binary,
    netsim_failure,
    read_netsim_results,
)
from ratelab_net.topology import Topology


def _identity(binary: Path, program: Path) -> tuple[Any, ...]:
    """What a batch process depends on: the binary (path and file) and the
    router program's content."""
    st = binary.stat()
    try:
        digest = hashlib.sha256(program.read_bytes()).hexdigest()
    except OSError as e:
        raise SimError(f"{program}: cannot read the router program: {e.strerror}") from None
    return (str(binary), st.st_ino, st.st_size, st.st_mtime_ns, str(program), digest)


class BatchSimulator:
    """One `ratelab-netsim --batch BINARY PROGRAM` process; `run` is one scenario."""

    def __init__(self, binary: Path, program: Path) -> None:
        self.binary, self.program = binary, program
        # lives as long as the process (closed in close()); a file, not a pipe
        # nobody reads, so a chatty process cannot block on it
        self._stderr: IO[bytes] = tempfile.TemporaryFile()  # noqa: SIM115
        self._proc = subprocess.Popen(
            [str(binary), "--batch", str(program)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            text=True,
        )
        self._lock = threading.Lock()

    def alive(self) -> bool:
        return self._proc.poll() is None

    def run(self, topo: Topology, scenario: dict[str, Any]) -> dict[str, Any]:
        """As sim_api.run_netsim (without progress)."""
        with self._lock, tempfile.TemporaryDirectory(prefix="ratelab-netsim-") as tmp:
            scenario_path = Path(tmp) / "scenario.json"
            scenario_path.write_text(json.dumps(scenario) + "\n")
            out = Path(tmp) / "out"
            reply = self._ask({"scenario": str(scenario_path), "out": str(out)})
            if "error" in reply:
                raise netsim_failure(topo, str(reply["error"]), scenario_path)
            return read_netsim_results(out)

    def _ask(self, job: dict[str, str]) -> dict[str, Any]:
        assert self._proc.stdin is not None and self._proc.stdout is not None
        try:
            self._proc.stdin.write(json.dumps(job) + "\n")
            self._proc.stdin.flush()
            line = self._proc.stdout.readline()
        except OSError:
            line = ""
        if not line:  # the process ended: its last words
            self._proc.wait()
            self._stderr.seek(0)
            said = self._stderr.read().decode(errors="replace").strip().splitlines()
            last = said[-1].removeprefix("ratelab-netsim: ") if said else ""
            status = self._proc.returncode
            raise SimError(f"ratelab-netsim --batch ended (status {status}): {last}".rstrip(": "))
        reply: dict[str, Any] = json.loads(line)
        return reply

    def close(self) -> None:
        if self._proc.stdin is not None and not self._proc.stdin.closed:
            with contextlib.suppress(OSError):  # it may have died
                self._proc.stdin.close()
        try:
            self._proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
        if self._proc.stdout is not None:
            self._proc.stdout.close()
        self._stderr.close()


_SERVERS: dict[tuple[Any, ...], BatchSimulator] = {}
_SERVERS_LOCK = threading.Lock()


def server(program: Path) -> BatchSimulator:
    """The batch process for this binary and program, started if there is
    none (or the one there ended); processes of an older binary or program
    are ended."""
    binary = netsim_binary()
    key = _identity(binary, program)
    with _SERVERS_LOCK:
        current = _SERVERS.get(key)
        if current is not None and current.alive():
            return current
        # this program file's process of an older binary or content, or dead
        for old in [k for k in _SERVERS if k[4] == key[4]]:
            _SERVERS.pop(old).close()
        _SERVERS[key] = BatchSimulator(binary, program)
        return _SERVERS[key]


def run(topo: Topology, scenario: dict[str, Any], program: Path) -> dict[str, Any]:
    """One scenario on `program` in this process's batch simulator; as
    sim_api.run_netsim. A batch process that died is ended and the error
    raised; the next run starts a new one."""
    sim = server(program)
    try:
        return sim.run(topo, scenario)
    except SimError:
        if not sim.alive():
            with _SERVERS_LOCK:
                for key in [k for k, v in _SERVERS.items() if v is sim]:
                    _SERVERS.pop(key).close()
        raise


def close_all() -> None:
    with _SERVERS_LOCK:
        while _SERVERS:
            _SERVERS.popitem()[1].close()


atexit.register(close_all)
