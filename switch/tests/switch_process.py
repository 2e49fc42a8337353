"""The ratelab-switch daemon as a child process of a test."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

SWITCH_DIR = Path(__file__).parent.parent


def daemon_env() -> dict[str, str]:
    """This environment with switch/ on PYTHONPATH, for `python -m ratelab_switch.daemon`."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(SWITCH_DIR), env.get("PYTHONPATH", "")])
    return env


def stop_daemon(proc: subprocess.Popen[Any]) -> None:
    """SIGTERM, SIGKILL after 10 s; its pipes closed."""
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    for stream in (proc.stdout, proc.stderr):
        if stream is not None:
            stream.close()
