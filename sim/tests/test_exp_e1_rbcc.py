"""E1's rate-based sources (sim/experiments/README.md "E1"): each asks for its
own link's rate and starts at the share the routers stamped on its SYN, the
routers' smallest share is below every share E1 can give; one full-size
scenario then loses no packet and every flow starts (with 10 Mbit/s asked
and sent before the first ACK it lost 17,370 and one flow never started)."""

from __future__ import annotations

from pathlib import Path

from ratelab_exp.generators import GENERATORS
from ratelab_exp.runner import Task, execute, plan, run_input
from ratelab_exp.spec import load_experiment

E1 = Path(__file__).resolve().parents[1] / "experiments" / "e1.yaml"


def _task(transport: str, seed: int) -> Task:
    task = next(t for t in plan(load_experiment(E1, False)) if t.transport == transport)
    task.seed = seed
    return task


def test_generator_rates_and_min_rate() -> None:
    made = GENERATORS["e1"].make({}, 7)
    links = {tuple(link["ends"]): link for link in made.topology["links"]}
    for flow in made.topology["flows"]:
        own = next(link for ends, link in links.items() if ends[0] == flow["from"])
        assert flow["rate"] == own["rate"]
    assert all(r["rbcc"] == {"min_rate": 100} for r in made.topology["routers"].values())
    assert GENERATORS["e1"].check({"rbcc_min_rate": "none"}) == (
        "rbcc_min_rate",
        "expected a int >= 0, got 'none'",
    )


def test_transports_of_the_file() -> None:
    rbcc = run_input(_task("rbcc", 7)).topology["flows"]
    assert all(f["adopt_synack_rate"] is True and f["transport"] == "rbcc" for f in rbcc)
    assert all(f["rate"].endswith("kbit") for f in rbcc)  # the generator's, not overridden
    for tcp in ("reno", "vegas"):
        flows = run_input(_task(tcp, 7)).topology["flows"]
        assert all("rate" not in f and "adopt_synack_rate" not in f for f in flows)


def test_a_full_scenario_loses_nothing() -> None:
    record = execute(_task("rbcc", 1))
    assert record["status"] == "ok", record.get("error")
    assert record["metrics"]["packets_lost"] == 0
    assert all(f["rbcc_packets_sent"] > 0 for f in record["flows"])
    assert all(f["rbcc_retransmissions"] == 0 for f in record["flows"])
