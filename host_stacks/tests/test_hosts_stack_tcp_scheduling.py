"""TcpConnection.run_raw's scheduling: while a call runs, its thread is at
SCHED_FIFO priority 1 where the process may (root), else has the
scheduler's shortest slice, and the policy it had comes back when the call
returns (sys.rs `LowLatency`, as the RBCC sender's loop). Each case runs in
a fresh interpreter (one that drops root for the unprivileged case); a
watcher thread reads the loop thread's policy from /proc meanwhile."""

from __future__ import annotations

import os

from scheduling_probe import probe

SCHEDULING = """
from ratelab_hoststack import TcpConfig, TcpConnection
ours, _theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
conn = TcpConnection.connect(TcpConfig(), ("10.0.1.2", 40000), ("10.0.2.1", 5001), 7,
                             time.monotonic_ns())
conn.set_link_header(bytes(range(12)) + b"\\x08\\x00")
unset = conn.scheduling
before = sched()
watcher = threading.Thread(target=look)
watcher.start()
result = conn.run_raw(ours.fileno(), time.monotonic_ns() + 300_000_000)
watcher.join()
print(json.dumps({"result": result, "unset": unset, "scheduling": conn.scheduling,
                  "before": before, "during": seen[0], "after": sched()}))
"""


def _scheduling(user: str) -> dict[str, object]:
    return probe(SCHEDULING, user)


def test_run_raw_runs_at_sched_fifo_where_it_may_and_gives_it_back() -> None:
    got = _scheduling("self")
    assert got["result"] == ["deadline", 0, None] and got["unset"] is None
    if os.geteuid() != 0:  # without CAP_SYS_NICE: the next test's case
        assert got["scheduling"] in ("short-slice", "unchanged")
        return
    assert got["scheduling"] == "fifo"
    assert got["before"]["policy"] == got["after"]["policy"] == 0  # SCHED_OTHER
    assert got["during"]["policy"] == 1  # SCHED_FIFO


def test_without_privilege_run_raw_takes_the_shortest_slice() -> None:
    got = _scheduling("nobody" if os.geteuid() == 0 else "self")
    assert got["result"] == ["deadline", 0, None]
    assert got["before"]["policy"] == got["during"]["policy"] == got["after"]["policy"] == 0
    if "se.slice" not in got["before"]:  # a kernel before 6.12 has no per-task slice
        assert got["scheduling"] == "unchanged"
        return
    assert got["scheduling"] == "short-slice"
    assert got["during"]["se.slice"] == 100_000 != got["before"]["se.slice"]
    assert got["after"]["se.slice"] == got["before"]["se.slice"]
