"""Pacing accuracy of the host stacks over real sockets: RBCC and UDP CBR
between two network namespaces joined by a veth pair, at several rates.

For each rate it reports the rate the RBCC sender achieved (from its own send
times), how often it fell behind its pacing schedule, what arrived, and the
same for a UDP CBR source. Writes JSON to --out and prints a table. Needs
root. The RBCC sender runs its loop in Rust (`run_rbcc_sender`), at SCHED_FIFO
priority 1 as root; see README.md "Live: the RBCC sender's loop in Rust".

    PYTHONPATH=host_stacks .venv/bin/python host_stacks/benchmarks/pacing.py --out F
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from ratelab_hosts.netns import ADDR_B, can_make_namespaces, veth_pair

RATES_MBIT = (1, 10, 50)
SIZE = 1000
DURATION = 2.0


def _run(pair, ns: str, *args: str) -> None:  # type: ignore[no-untyped-def]
    proc = pair.spawn(ns, *args)
    _out, err = proc.communicate(timeout=60)
    if proc.returncode != 0:
        raise SystemExit(f"{args[0]} failed: {err.strip()}")


def measure(mbit: int, tmp: Path) -> dict[str, object]:
    rate = f"{mbit}mbit"
    with veth_pair() as pair:
        recv = pair.spawn(
            pair.ns_b, "rbcc-recv", "--listen", ADDR_B, "--json-out", str(tmp / "recv.json")
        )
        assert recv.stderr is not None
        recv.stderr.readline()
        _run(
            pair, pair.ns_a, "rbcc-send", "--dst", ADDR_B, "--rate", rate, "--size", str(SIZE),
            "--duration", str(DURATION), "--json-out", str(tmp / "send.json"),
        )  # fmt: skip
        recv.communicate(timeout=60)
        sink = pair.spawn(
            pair.ns_b, "udp-sink", "--listen", f"{ADDR_B}:5001", "--idle", "0.5",
            "--json-out", str(tmp / "sink.json"),
        )  # fmt: skip
        assert sink.stderr is not None
        sink.stderr.readline()
        _run(
            pair, pair.ns_a, "udp-send", "--dst", f"{ADDR_B}:5001", "--rate", rate,
            "--size", str(SIZE), "--duration", str(DURATION), "--json-out", str(tmp / "usend.json"),
        )  # fmt: skip
        sink.communicate(timeout=60)
    sent = json.loads((tmp / "send.json").read_text())["flows"][0]
    got = json.loads((tmp / "recv.json").read_text())["flows"][0]
    usent = json.loads((tmp / "usend.json").read_text())["flows"][0]
    ugot = json.loads((tmp / "sink.json").read_text())["flows"][0]
    target = mbit * 1e6
    span = sent["send_span_s"] or 0.0
    rbcc_rate = (sent["packets_sent"] - 1) * SIZE * 8 / span if span else 0.0
    return {
        "rate_mbit": mbit,
        "rbcc_send_mbit": round(rbcc_rate / 1e6, 4),
        "rbcc_send_error_pct": round(100 * (rbcc_rate - target) / target, 2),
        "rbcc_pacing_restarts": sent["pacing_restarts"],
        "rbcc_pacing_lost_s": sent["pacing_lost_s"],
        "rbcc_lost": got["lost"],
        "rbcc_retransmissions": sent["retransmissions"],
        "rbcc_goodput_mbit": round((got["goodput_bps"] or 0) / 1e6, 4),
        "udp_sent": usent["packets_sent"],
        "udp_expected": int(target / 8 / SIZE * DURATION),
        "udp_received": ugot["packets_received"],
        "udp_lost": ugot["lost"] + usent["packets_sent"] - ugot["packets_received"] - ugot["lost"],
        "udp_send_errors": usent["send_errors"],
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="bench/results/host_stacks_pacing.json")
    out = Path(parser.parse_args().out)
    why_not = can_make_namespaces()
    if why_not:
        print(f"pacing benchmark skipped: {why_not}", file=sys.stderr)
        return 0
    out.parent.mkdir(parents=True, exist_ok=True)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for mbit in RATES_MBIT:
            rows.append(measure(mbit, Path(tmp)))
    out.write_text(json.dumps({"size": SIZE, "duration_s": DURATION, "rows": rows}, indent=1))
    print(f"{'rate':>8} {'rbcc sent':>10} {'err %':>7} {'restarts':>8} {'lost':>5} "
          f"{'goodput':>9} {'udp sent':>9} {'expected':>9} {'recv':>6}")  # fmt: skip
    for r in rows:
        print(
            f"{r['rate_mbit']:>6}Mb {r['rbcc_send_mbit']:>10} {r['rbcc_send_error_pct']:>7} "
            f"{r['rbcc_pacing_restarts']:>8} {r['rbcc_lost']:>5} {r['rbcc_goodput_mbit']:>9} "
            f"{r['udp_sent']:>9} {r['udp_expected']:>9} {r['udp_received']:>6}"
        )
    print(f"written to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
