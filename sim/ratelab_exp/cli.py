"""`ratelab-exp run FILE` and `ratelab-exp report DIR` (sim/experiments/README.md)."""

from __future__ import annotations

import argparse
import sys

import pandas as pd
from ratelab_ctl.configfile import ConfigError

from ratelab_exp.spec import BACKENDS


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="ratelab-exp", description=__doc__)
    sub = ap.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="run what is missing of an experiment, then its report")
    run.add_argument("file", help="the experiment file (YAML)")
    run.add_argument("--quick", action="store_true", help="the file's quick: sizes")
    run.add_argument("--scheduler", help="an existing Dask scheduler (tcp://HOST:PORT)")
    run.add_argument("--workers", type=int, help="local workers (default: one per core)")
    run.add_argument("--out", help="results folder (default build/exp/NAME[-quick])")
    run.add_argument("--retry-failed", action="store_true", help="run failed runs again")
    run.add_argument(
        "--max-runs",
        type=int,
        metavar="N",
        help="run at most N of the missing runs, then the report (a later call goes on)",
    )
    run.add_argument(
        "--backend",
        help="sim (ratelab's simulator, on Dask) or mininet (ratelab-net run, as root, one "
        "run at a time); default: the file's backend",
    )
    rep = sub.add_parser("report", help="rebuild the report of a results folder")
    rep.add_argument("dir")
    args = ap.parse_args(argv)
    from ratelab_sim.signals import Terminated

    from ratelab_exp import rebuild, run_experiment
    from ratelab_exp.runner import UsageError

    try:
        if args.command == "run":
            if args.workers is not None and args.workers < 1:
                print("ratelab-exp: --workers: expected 1 or more", file=sys.stderr)
                return 2
            if args.backend is not None and args.backend not in BACKENDS:
                expected = ", ".join(BACKENDS)
                print(f"ratelab-exp: --backend: expected one of {expected}", file=sys.stderr)
                return 2
            if args.max_runs is not None and args.max_runs < 1:
                print("ratelab-exp: --max-runs: expected 1 or more", file=sys.stderr)
                return 2
            if args.workers is not None and args.scheduler:
                print("ratelab-exp: --workers and --scheduler exclude each other", file=sys.stderr)
                return 2
            out = run_experiment(
                args.file,
                quick=args.quick,
                scheduler=args.scheduler,
                workers=args.workers,
                out=args.out,
                retry_failed=args.retry_failed,
                backend=args.backend,
                max_runs=args.max_runs,
            )
        else:
            out = rebuild(args.dir).parent
    except ConfigError as e:
        print(str(e), file=sys.stderr)
        return 2
    except UsageError as e:
        print(f"ratelab-exp: {e}", file=sys.stderr)
        return 2
    except (KeyboardInterrupt, Terminated):
        print("ratelab-exp: interrupted; the finished runs are kept", file=sys.stderr)
        return 130
    except (OSError, KeyError, ValueError) as e:
        print(f"ratelab-exp: {e}", file=sys.stderr)
        return 1
    print(f"report: {out / 'report.md'} (and report.html)")
    runs = pd.read_parquet(out / "runs.parquet")
    failed = int((runs["status"] != "ok").sum()) if "status" in runs else 0
    if failed:  # the sweep finished, but not every run: say so in the status too
        print(f"ratelab-exp: {failed} runs failed (listed in the report)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
