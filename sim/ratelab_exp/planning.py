"""Planning an experiment: its runs (cases x replications x transports) as
Tasks with ids that change with everything a run depends on, each run's
topology (generated or read, then the overrides), and the check of every case
and transport's topology before anything runs. runner.py runs the Tasks."""

from __future__ import annotations

import functools
import hashlib
import inspect
import json
import re
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import yaml
from ratelab_ctl.configfile import ConfigError

from ratelab_exp import overrides
from ratelab_exp.generators import GENERATORS, RunInput
from ratelab_exp.spec import Experiment


@dataclass
class Task:
    """One run, everything a worker needs (plain data: it travels by pickle)."""

    run_id: str
    case: str
    case_overrides: dict[str, Any]
    transport: str
    replication: int
    seed: int
    base: str | None
    generator: str | None
    generator_params: dict[str, Any]
    transport_overrides: dict[str, Any]
    metrics: list[str]
    series: list[str]  # sample columns kept per flow over time; queue; ping_rtt_ms
    backend: str = "sim"


def _digest(task: Task) -> str:
    """What the run depends on: the file's settings for it, the base
    topology's text and the generator's code (an edited base or generator
    makes other runs, so a rerun must not reuse the old ones)."""
    fields: dict[str, Any] = asdict(task)
    if task.backend == "sim":
        del fields["backend"]
    if task.base is not None:
        fields["base_text"] = _text(task.base)
    if task.generator is not None:
        fields["generator_code"] = _generator_code(task.generator)
    return hashlib.sha256(json.dumps(fields, sort_keys=True, default=str).encode()).hexdigest()[:8]


@functools.cache
def _text(path: str) -> str:
    return Path(path).read_text()


@functools.cache
def _generator_code(name: str) -> str:
    """The source of the module that defines the generator (its helpers too)."""
    module = inspect.getmodule(GENERATORS[name].make)
    return inspect.getsource(module) if module is not None else ""


class _TopologyLoader(yaml.SafeLoader):
    """YAML 1.1 reads `on:` and `off:` (an on-off flow's keys) as booleans;
    the topology loader reads them as the names they are, so a base topology
    is read here with only true/false as booleans, as YAML 1.2 does."""


_TopologyLoader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:bool"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_TopologyLoader.add_implicit_resolver(
    "tag:yaml.org,2002:bool",
    re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"),
    list("tTfF"),
)


def read_base(path: str | Path) -> dict[str, Any]:
    """A base topology file as a dict (on/off stay strings)."""
    return yaml.load(Path(path).read_text(), Loader=_TopologyLoader)  # a SafeLoader subclass


def plan(exp: Experiment) -> list[Task]:
    """Every run of the experiment: cases x replications x transports."""
    tasks = []
    for ci, case in enumerate(exp.cases):
        for rep in range(exp.replications):
            for tname, tover in exp.transports.items():
                seed = exp.seed + rep
                task = Task(
                    run_id="",
                    case=case.label,
                    case_overrides=case.overrides,
                    transport=tname,
                    replication=rep,
                    seed=seed,
                    base=str(exp.base) if exp.base else None,
                    generator=exp.generator,
                    generator_params=exp.generator_params,
                    transport_overrides=tover,
                    metrics=exp.metrics,
                    series=exp.series,
                    backend=exp.backend,
                )
                task.run_id = f"c{ci:03d}-{tname}-r{rep:04d}-{_digest(task)}"
                tasks.append(task)
    return tasks


def run_input(task: Task) -> RunInput:
    """The run's topology: generated or read, then the case's and the
    transport's overrides (a case's `generator.X` sets the generator's X)."""
    case = task.case_overrides
    gen_over = {
        k.removeprefix("generator."): v for k, v in case.items() if k.startswith("generator.")
    }
    topo_over = {k: v for k, v in case.items() if not k.startswith("generator.")}
    if task.generator is not None:
        params = {**task.generator_params, **gen_over}
        problem = GENERATORS[task.generator].check(params)
        if problem is not None:
            raise ValueError(f"generator.{problem[0]}: {problem[1]}")
        made = GENERATORS[task.generator].make(params, task.seed)
    else:
        assert task.base is not None
        made = RunInput(read_base(task.base))
        made.topology.pop("variants", None)
        made.topology.pop("backend", None)
    topology = overrides.apply(made.topology, {**topo_over, **task.transport_overrides})
    if task.base is not None:
        _anchor_traces(topology, Path(task.base).parent)
    return RunInput(topology, made.transfers)


def _anchor_traces(topology: dict[str, Any], folder: Path) -> None:
    """A link's `trace` is a file relative to the base topology: made absolute,
    as the run's topology is written to a temporary folder."""
    for link in topology.get("links") or []:
        if not isinstance(link, dict):
            continue
        for where in (link, link.get("forward"), link.get("reverse")):
            if isinstance(where, dict) and isinstance(where.get("trace"), str):
                where["trace"] = str(folder / where["trace"])


def precheck(exp: Experiment, tasks: list[Task]) -> None:
    """Every case and transport's topology (first replication) through the
    topology loader before anything runs: a bad override or an unknown
    transport is a ConfigError at the transport (or case) in the experiment
    file. What only the simulator refuses fails the run instead."""
    from ratelab_net.topology import load_variants

    from ratelab_exp.spec import field_error

    seen: set[tuple[str, str]] = set()
    for task in tasks:
        if (task.case, task.transport) in seen:
            continue
        seen.add((task.case, task.transport))
        try:
            inp = run_input(task)
            with tempfile.TemporaryDirectory(prefix="ratelab-exp-") as tmp:
                path = Path(tmp) / "topology.yaml"
                path.write_text(yaml.safe_dump(inp.topology, sort_keys=False))
                topo = load_variants(path, [], None)[0][1]
                if task.backend == "mininet":
                    from ratelab_net.network import mininet_trace_error

                    if (problem := mininet_trace_error(topo, "ratelab")) is not None:
                        raise problem
        except ConfigError as e:
            raise field_error(
                exp, task, f"{e.path}: {e.message}" if e.path else e.message
            ) from None
        except (overrides.OverrideError, ValueError, KeyError, TypeError) as e:
            raise field_error(exp, task, str(e)) from None
