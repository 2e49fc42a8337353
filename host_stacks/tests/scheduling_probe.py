"""Runs a live loop in a fresh interpreter and reports how its thread was
scheduled before, during (a watcher thread reads /proc 0.1 s in) and after
the call; "nobody" drops root first, so SCHED_FIFO is refused. Shared by
the RBCC sender's and run_raw's scheduling tests (sys.rs `LowLatency`)."""

from __future__ import annotations

import json
import subprocess
import sys

# The script's head: `sched()` reads the policy and slice of the thread that
# will run the loop, `look()` samples it while the loop runs.
_PRELUDE = """
import json, os, socket, sys, threading, time
import ratelab_hoststack  # loaded before dropping root: nobody may not read the checkout
if sys.argv[1] == "nobody":
    os.setuid(65534)  # no CAP_SYS_NICE: SCHED_FIFO is refused
tid = threading.get_native_id()
def sched():
    with open(f"/proc/self/task/{tid}/sched") as f:
        fields = dict(line.split(":", 1) for line in f if ":" in line)
    return {k.strip(): int(fields[k]) for k in fields if k.strip() in ("policy", "se.slice")}
seen = []
def look():
    time.sleep(0.1)
    seen.append(sched())
"""


def probe(body: str, user: str) -> dict[str, object]:
    """Runs `_PRELUDE + body` as `user` ("self" or "nobody"); `body` sets
    `before = sched()`, starts `threading.Thread(target=look)`, runs the loop
    and prints its findings as one JSON object, which is returned."""
    out = subprocess.run(
        [sys.executable, "-c", _PRELUDE + body, user], capture_output=True, text=True, timeout=30
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)
