"""Run ratelab's PTF suite: compile router.p4, build a namespace with one veth pair
per switch port, start the switch on one end of each pair, run `ptf` on the
other ends, and remove everything again (also on failure, Ctrl-C or SIGTERM).

    python ptf_tests/run.py [--target ratelab|bmv2] [--p4c CMD] [TEST ...]

The switch, PTF and the P4Runtime session all live in one network namespace
(rl<pid>...), so parallel runs never share an address, port or interface.
Switch ports 1-4 are unlimited; port 5 drains slowly (tail drop) and port 6 at a
moderate rate (RED). Those queue rates are switch settings, set here on the
switch's command line (ratelab) or through simple_switch_CLI (BMv2), and passed
to the tests as parameters so that the reference model drains the same way.
"""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import subprocess
import sys
from contextlib import ExitStack
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
try:
    import ratelab_sim  # noqa: F401
except ImportError:  # until sim/ is an installed package
    sys.path.insert(0, str(ROOT / "sim"))

from ratelab_sim import (  # noqa: E402
    HarnessError,
    Netns,
    QueueSetting,
    SwitchError,
    SwitchProcess,
    VethPair,
    resolve_target,
    sweep,
    terminate_as_exception,
)
from ratelab_sim.build import BuildError, compile_router  # noqa: E402
from ratelab_sim.signals import Terminated  # noqa: E402

PLAIN_PORTS = (1, 2, 3, 4)
TAIL_PORT, TAIL_PPS = 5, 4  # 250 ms per packet: a burst is all in before the 2nd leaves
RED_PORT, RED_PPS = 6, 200  # 5 ms per packet
QUEUE_DEPTH = 128  # the switch's own queues: deeper than any queue_limit the tests set
# Two strict-priority queues on the slow port (tests/priority.py); simple_switch's
# option is one count for every port. Packets of priority 0 see one FIFO either way.
PRIORITY_QUEUES = {
    "ratelab": ["--priority-queues", f"{TAIL_PORT}=2"],
    "bmv2": ["--priority-queues", "2"],
}
TEST_DIR = ROOT / "ptf_tests" / "tests"


def _tool(name: str) -> str | None:
    """`name` next to this Python (the venv's bin), else on PATH."""
    local = Path(sys.executable).parent / name
    return str(local) if local.exists() else shutil.which(name)


def test_params(sw: SwitchProcess, json_path: Path, p4info: Path) -> str:
    values = {
        "grpc_addr": sw.grpc_address,
        "device_id": sw.device_id,
        "json": str(json_path),
        "p4info": str(p4info),
        "target": sw.target,
        "plain_ports": list(PLAIN_PORTS),
        "tail_port": TAIL_PORT,
        "tail_pps": TAIL_PPS,
        "red_port": RED_PORT,
        "red_pps": RED_PPS,
        "queue_depth": QUEUE_DEPTH,
    }
    return ";".join(f"{k}={v!r}" for k, v in values.items())


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--target",
        choices=("ratelab", "bmv2"),
        help="switch to test: ratelab-switch (default) or simple_switch_grpc "
        "(also $RATELAB_TARGET)",
    )
    ap.add_argument(
        "--p4c",
        default=os.environ.get("RATELAB_P4C"),
        help="compiler command (p4c's command line; default ratelab-p4c, or $RATELAB_P4C)",
    )
    ap.add_argument("--build-dir", default=str(ROOT / "build" / "ptf"), type=Path)
    ap.add_argument("--ptf-args", default="", help="extra ptf options, one string")
    ap.add_argument("--timeout", type=float, default=600.0, help="stop PTF after this many seconds")
    ap.add_argument("tests", nargs="*", help="ptf test names (default: the whole suite)")
    args = ap.parse_args(argv)

    try:
        target = resolve_target(args.target)
    except SwitchError as e:
        print(f"run.py: {e}", file=sys.stderr)
        return 2
    if target == "bmv2" and shutil.which("simple_switch_grpc") is None:
        print("run.py: target bmv2: simple_switch_grpc is not on PATH", file=sys.stderr)
        return 2
    ptf = _tool("ptf")
    p4c = args.p4c or _tool("ratelab-p4c")
    if ptf is None or p4c is None:
        print("run.py: ptf and ratelab-p4c must be installed (make deps)", file=sys.stderr)
        return 2
    if os.geteuid() != 0:
        print("run.py: needs root (network namespaces, veth pairs)", file=sys.stderr)
        return 2

    build: Path = args.build_dir.resolve()
    try:
        json_path, p4info = compile_router(p4c, build)
    except BuildError as e:
        print(f"run.py: {e}", file=sys.stderr)
        return 1
    logs = build / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    for leftover in sweep():
        print(f"removed a leftover of an earlier run: {leftover}")

    ports = (*PLAIN_PORTS, TAIL_PORT, RED_PORT)
    queues = [QueueSetting(p, depth=QUEUE_DEPTH) for p in PLAIN_PORTS]
    queues += [
        QueueSetting(TAIL_PORT, pps=TAIL_PPS, depth=QUEUE_DEPTH),
        QueueSetting(RED_PORT, pps=RED_PPS, depth=QUEUE_DEPTH),
    ]
    try:
        with terminate_as_exception(), ExitStack() as stack:
            ns = stack.enter_context(Netns())
            switch_side: dict[int, str] = {}
            ptf_side: dict[int, str] = {}
            for p in ports:
                pair = stack.enter_context(
                    VethPair(f"{ns.name}s{p}", f"{ns.name}p{p}", ns.name, ns.name)
                )
                switch_side[p], ptf_side[p] = pair.a, pair.b
            sw = stack.enter_context(
                SwitchProcess(
                    json_path,
                    switch_side,
                    logs / "switch.log",
                    target=target,
                    netns=ns.name,
                    queues=queues,
                    extra_args=PRIORITY_QUEUES[target],
                )
            )
            print(f"{target} switch up at {sw.grpc_address} in namespace {ns.name}", flush=True)
            cmd = [ptf, "--test-dir", str(TEST_DIR), "--log-file", str(logs / "ptf.log")]
            for p in ports:
                cmd += ["-i", f"{p}@{ptf_side[p]}"]
            cmd += ["--test-params", test_params(sw, json_path, p4info)]
            cmd += [*shlex.split(args.ptf_args), *args.tests]
            env = dict(os.environ)
            extra = [str(ROOT / "ptf_tests"), str(ROOT / "sim")]
            env["PYTHONPATH"] = os.pathsep.join([*extra, env.get("PYTHONPATH", "")]).rstrip(
                os.pathsep
            )
            try:
                proc = subprocess.run(
                    ns.exec_args(cmd), env=env, cwd=str(build), timeout=args.timeout
                )
            except subprocess.TimeoutExpired:
                print(f"run.py: PTF did not finish in {args.timeout:g} s", file=sys.stderr)
                return 1
            if not sw.alive():
                print(f"run.py: the switch died during the tests:\n{sw.log_tail()}")
                return 1
            return proc.returncode
    except (HarnessError, SwitchError) as e:
        print(f"run.py: {e}", file=sys.stderr)
        return 1
    except (KeyboardInterrupt, Terminated) as e:
        print(f"run.py: interrupted ({e or 'Ctrl-C'}); everything was removed", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
