"""ratelab-exp run ids and base topologies: a run's id changes with the base
topology's text and the generator's code (so a rerun after an edit does not
reuse old runs), and a base topology's unquoted on:/off: keys stay keys."""

from __future__ import annotations

from pathlib import Path

import pytest
from ratelab_exp import planning
from ratelab_exp.spec import load_experiment

TOPOLOGY = """\
duration: 2s
routers: {r1: {}}
hosts: [a, b]
links:
  - {ends: [a, r1], rate: 100mbit, delay: 1ms}
  - {ends: [r1, b], rate: 5mbit, delay: 5ms}
flows:
  - {name: web, from: a, to: b, transport: tcp, stack: ratelab, cc: reno,
     pattern: onoff, on: 1s, off: 5s}
"""

EXPERIMENT = """\
name: ids
base: topology.yaml
replications: 2
transports: {reno: {}}
metrics: [avg_queue]
"""


def _ids(tmp: Path) -> list[str]:
    (tmp / "exp.yaml").write_text(EXPERIMENT)
    planning._text.cache_clear()
    return [t.run_id for t in planning.plan(load_experiment(tmp / "exp.yaml"))]


def test_run_ids_follow_the_base_topology_text(tmp_path: Path) -> None:
    (tmp_path / "topology.yaml").write_text(TOPOLOGY)
    first = _ids(tmp_path)
    assert first == _ids(tmp_path)  # the same file: the same runs (resume works)
    (tmp_path / "topology.yaml").write_text(TOPOLOGY.replace("5mbit", "6mbit"))
    edited = _ids(tmp_path)
    assert len(set(edited)) == 2
    assert not set(first) & set(edited)


def test_run_ids_follow_the_generator_code(monkeypatch: pytest.MonkeyPatch) -> None:
    task = planning.Task(
        run_id="",
        case="base",
        case_overrides={},
        transport="rbcc",
        replication=0,
        seed=1,
        base=None,
        generator="e1",
        generator_params={},
        transport_overrides={},
        metrics=[],
        series=[],
    )
    before = planning._digest(task)
    monkeypatch.setattr(planning, "_generator_code", lambda name: "changed code")
    assert planning._digest(task) != before


def test_base_topology_on_off_keys_stay_names(tmp_path: Path) -> None:
    (tmp_path / "topology.yaml").write_text(TOPOLOGY)
    flow = planning.read_base(tmp_path / "topology.yaml")["flows"][0]
    assert flow["on"] == "1s" and flow["off"] == "5s"
    (tmp_path / "exp.yaml").write_text(EXPERIMENT)
    task = planning.plan(load_experiment(tmp_path / "exp.yaml"))[0]
    topology = planning.run_input(task).topology
    assert topology["flows"][0]["on"] == "1s"
