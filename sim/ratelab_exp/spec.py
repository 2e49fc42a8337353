"""An experiment file (sim/experiments/README.md) read and checked.

Everything is checked before anything runs; a mistake is a ConfigError (one
line: file, line, column, field, what was expected).
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from ratelab_ctl.configfile import ConfigError, Location

from ratelab_exp.generators import GENERATORS
from ratelab_exp.metrics import METRICS
from ratelab_exp.overrides import OverrideError, parse_path

TOP_KEYS = (
    "name",
    "description",
    "base",
    "generator",
    "sweep",
    "cases",
    "replications",
    "seed",
    "transports",
    "backend",
    "metrics",
    "figures",
    "series",
    "contrasts",
    "quick",
)
# sim: ratelab's simulator (Dask); mininet: `ratelab-net run`, one run at a time, as root
BACKENDS = ("sim", "mininet")
# scatter: metric against x, a run a dot; bag: the same with each group's median and 50 % hull
FIGURE_KINDS = ("hist", "cdf", "box", "scatter", "bag")
MAX_RUNS = 1_000_000
# kept over time per run: flow samples (ratelab_net.simulate's samples columns), the
# router ports' queue lengths, each ping reply's round trip, and each fixed-size
# transfer's completion time by its start
FLOW_SERIES = (
    *("cwnd", "ssthresh", "srtt_ms", "rate", "in_flight", "throughput_mbps"),
    "app_rate_mbps",  # the bytes the application wrote per interval (flow samples' written)
)
SERIES = (*FLOW_SERIES, "queue", "ping_rtt_ms", "download_s")
_PARENT = re.compile(r"(\.[^.\[]*|\[\d+\])$")  # the last step of a field path


@dataclass
class Case:
    """One point of the sweep: its label and overrides (topology paths, and
    `generator.<param>` for the generator's parameters)."""

    label: str
    overrides: dict[str, Any]


@dataclass
class Figure:
    metric: str
    kinds: tuple[str, ...]
    x: str | None = None  # scatter's horizontal metric
    series: str | None = None  # a time series of every flow (first replication)
    flows: tuple[str, ...] | None = None  # series: only these flows (ping_rtt_ms: pings)


@dataclass(frozen=True)
class Contrast:
    """A metric's median in case `to` against case `source`, per transport (what
    a change of the network adds or removes)."""

    metric: str
    source: str
    to: str


@dataclass
class Experiment:
    path: Path
    name: str
    description: str
    base: Path | None
    generator: str | None
    generator_params: dict[str, Any]
    cases: list[Case]
    replications: int
    seed: int
    transports: dict[str, dict[str, Any]]
    backend: str
    metrics: list[str]
    figures: list[Figure] = field(default_factory=list)
    series: list[str] = field(default_factory=list)
    contrasts: list[Contrast] = field(default_factory=list)
    locations: dict[str, Location] = field(default_factory=dict)  # top keys, transports.X


def field_error(exp: Experiment, task: Any, message: str) -> ConfigError:
    """A problem of one run's topology, at the transport's overrides (or the
    case's, when the transport has none) in the experiment file."""
    where = f"transports.{task.transport}"
    if not exp.transports.get(task.transport) and task.case_overrides:
        where = "sweep" if exp.cases and "cases" not in exp.locations else "cases"
    loc = exp.locations.get(where, Location(str(exp.path), 1, 1))
    return ConfigError(loc, where, f"{message} (case {task.case}, seed {task.seed})")


def _loc(node: yaml.Node) -> Location:
    m = node.start_mark
    return Location(m.name, m.line + 1, m.column + 1)


class _Nodes:
    """The file's nodes by field path, for errors at the right line."""

    def __init__(self, root: yaml.Node) -> None:
        self.root = root
        self.at: dict[str, yaml.Node] = {}
        self._walk(root, "")

    def _walk(self, node: yaml.Node, path: str) -> None:
        self.at[path] = node
        if isinstance(node, yaml.MappingNode):
            for k, v in node.value:
                self._walk(v, f"{path}.{k.value}" if path else str(k.value))
                self.at[f"{path}.{k.value}@key" if path else f"{k.value}@key"] = k
        elif isinstance(node, yaml.SequenceNode):
            for i, v in enumerate(node.value):
                self._walk(v, f"{path}[{i}]")

    def error(self, path: str, message: str, key: bool = False) -> ConfigError:
        node = self.at.get(f"{path}@key" if key else path)
        where = path
        while node is None and _PARENT.search(where):  # a missing field: its parent
            where = _PARENT.sub("", where)
            node = self.at.get(where)
        return ConfigError(_loc(node if node is not None else self.root), path, message)


# what a quick: section gives whole (a case's or a transport's overrides are one
# unit; a quick run may compare fewer of them)
QUICK_REPLACES = ("cases", "transports")


def _merge(base: dict[str, Any], quick: dict[str, Any], top: bool = True) -> dict[str, Any]:
    """`quick:` over the file: mappings merged key by key (cases and
    transports replaced), anything else replaced."""
    out = dict(base)
    for k, v in quick.items():
        if top and k in QUICK_REPLACES:
            out[k] = v
        elif isinstance(v, dict) and isinstance(out.get(k), dict):
            out[k] = _merge(out[k], v, top=False)
        else:
            out[k] = v
    return out


def _label(overrides: dict[str, Any]) -> str:
    return ",".join(f"{k}={v}" for k, v in overrides.items()) or "base"


def load_experiment(
    path: str | Path, quick: bool = False, backend: str | None = None
) -> Experiment:
    """Reads and checks an experiment file; `quick` applies its `quick:` section,
    `backend` replaces the file's."""
    if backend is not None and backend not in BACKENDS:
        raise ValueError(f"backend: expected one of {', '.join(BACKENDS)}, got {backend!r}")
    exp = _load(Path(path), quick)
    if backend is not None:
        exp.backend = backend
    return exp


def _load(path: Path, quick: bool) -> Experiment:
    try:
        text = path.read_text()
    except OSError as e:
        raise ConfigError(Location(str(path), 1, 1), "", f"cannot read: {e.strerror}") from None
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
        data = yaml.safe_load(text)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        line, col = (mark.line + 1, mark.column + 1) if mark else (1, 1)
        problem = getattr(e, "problem", None) or str(e)
        raise ConfigError(Location(str(path), line, col), "", f"not YAML: {problem}") from None
    if root is None or not isinstance(data, dict):
        raise ConfigError(Location(str(path), 1, 1), "", "expected a mapping (name, sweep, ...)")
    _fix_names(root, str(path))
    nodes = _Nodes(root)
    for key in data:
        if key not in TOP_KEYS:
            raise nodes.error(str(key), "unknown key; expected one of " + ", ".join(TOP_KEYS), True)
    q = data.get("quick") or {}  # checked with or without --quick
    if not isinstance(q, dict):
        raise nodes.error("quick", "expected a mapping of the keys --quick changes")
    for key in q:
        if key not in TOP_KEYS or key == "quick":
            raise nodes.error(f"quick.{key}", "unknown key; expected top-level keys", True)
    if quick:
        data = _merge(data, q)
    return _check(path, data, nodes)


def _fix_names(node: yaml.Node, name: str) -> None:
    """yaml.compose names the stream "<unicode string>": put the file's name in."""
    stack = [node]
    while stack:
        n = stack.pop()
        n.start_mark.name = name
        if isinstance(n, yaml.MappingNode):
            for k, v in n.value:
                k.start_mark.name = name
                stack.append(v)
        elif isinstance(n, yaml.SequenceNode):
            stack.extend(n.value)


def _check(path: Path, data: dict[str, Any], nodes: _Nodes) -> Experiment:
    def err(key: str, message: str) -> ConfigError:
        # a value --quick replaced is reported where the quick section sets it
        where = f"quick.{key}" if f"quick.{key}" in nodes.at else key
        return ConfigError(nodes.error(where, message).location, key, message)

    name = data.get("name")
    if (
        not isinstance(name, str)
        or not name
        or not name.replace("-", "").replace("_", "").isalnum()
    ):
        raise err("name", "expected a name (letters, digits, - and _)")
    has_base, has_gen = "base" in data, "generator" in data
    if has_base == has_gen:
        raise err("base", "give exactly one of base (a topology file) or generator")
    base = None
    generator = None
    params: dict[str, Any] = {}
    if has_base:
        if not isinstance(data["base"], str):
            raise err("base", "expected a topology file (relative to the experiment file)")
        base = (path.parent / data["base"]).resolve()
        if not base.is_file():
            raise err("base", f"{data['base']!r} is not a file")
    else:
        gen = data["generator"]
        if not isinstance(gen, dict) or not isinstance(gen.get("name"), str):
            raise err("generator", "expected {name: GENERATOR, params: {...}}")
        for k in gen:
            if k not in ("name", "params"):
                raise err(f"generator.{k}", "unknown key; expected name, params")
        generator = gen["name"]
        if generator not in GENERATORS:
            known = ", ".join(sorted(GENERATORS))
            raise err("generator.name", f"unknown generator {generator!r}; known: {known}")
        params = dict(gen.get("params") or {})
        problem = GENERATORS[generator].check(params)
        if problem is not None:
            key, message = problem
            raise err(f"generator.params.{key}", message)
    cases = _cases(data, err, generator)
    reps = data.get("replications", 1)
    if not isinstance(reps, int) or isinstance(reps, bool) or reps < 1:
        raise err("replications", "expected a whole number of replications, at least 1")
    seed = data.get("seed", 0)
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        raise err("seed", "expected a whole number >= 0")
    transports = data.get("transports")
    if not isinstance(transports, dict) or not transports:
        raise err("transports", "expected a mapping of transport name -> overrides")
    checked: dict[str, dict[str, Any]] = {}
    for tname, overrides in transports.items():
        if not isinstance(tname, str) or not tname.replace("-", "").replace("_", "").isalnum():
            raise err(f"transports.{tname}", "a transport name is letters, digits, - and _")
        if overrides is None:
            overrides = {}
        if not isinstance(overrides, dict):
            raise err(f"transports.{tname}", "expected a mapping of overrides (path: value)")
        for key in overrides:
            _path_ok(err, f"transports.{tname}.{key}", str(key), generator)
        checked[tname] = dict(overrides)
    backend = data.get("backend", "sim")
    if backend not in BACKENDS:
        raise err("backend", f"expected one of {', '.join(BACKENDS)}, got {backend!r}")
    metrics = data.get("metrics")
    if not isinstance(metrics, list) or not metrics:
        raise err("metrics", "expected a list of metric names")
    for i, m in enumerate(metrics):
        if m not in METRICS:
            raise err(f"metrics[{i}]", f"unknown metric {m!r}; known: {', '.join(METRICS)}")
    series = data.get("series") or []
    if not isinstance(series, list) or any(s not in SERIES for s in series):
        raise err("series", f"expected a list of {', '.join(SERIES)} (kept per flow over time)")
    figures = []
    for i, f in enumerate(data.get("figures") or []):
        if isinstance(f, str):
            f = {"metric": f}
        if isinstance(f, dict) and "series" in f:
            if set(f) - {"series", "flows"} or f["series"] not in series:
                raise err(
                    f"figures[{i}].series",
                    "expected {series: NAME, flows: [FLOW, ...]} of a name in series",
                )
            drawn = f.get("flows")
            if drawn is not None and (
                not isinstance(drawn, list)
                or not drawn
                or not all(isinstance(x, str) for x in drawn)
            ):
                raise err(f"figures[{i}].flows", "expected a list of flow names")
            figures.append(
                Figure(
                    f["series"],
                    ("series",),
                    series=f["series"],
                    flows=None if drawn is None else tuple(drawn),
                )
            )
            continue
        if not isinstance(f, dict) or "metric" not in f:
            raise err(f"figures[{i}]", "expected {metric: NAME, kinds: [hist, cdf, box]}")
        for k in f:
            if k not in ("metric", "kinds", "x"):
                raise err(f"figures[{i}].{k}", "unknown key; expected metric, kinds, x")
        for k in ("metric", "x"):
            if k in f and f[k] not in metrics:
                raise err(f"figures[{i}].{k}", f"{f[k]!r} is not in metrics")
        kinds = f.get("kinds", ["hist", "cdf"])
        if not isinstance(kinds, list) or not kinds or any(k not in FIGURE_KINDS for k in kinds):
            raise err(f"figures[{i}].kinds", f"expected a list of {', '.join(FIGURE_KINDS)}")
        if bool({"scatter", "bag"} & set(kinds)) != ("x" in f):
            raise err(
                f"figures[{i}].x",
                "a scatter needs x (the metric across), as a bag does; only those",
            )
        figures.append(Figure(f["metric"], tuple(kinds), f.get("x")))
    contrasts = _contrasts(data, err, cases, metrics)
    if len(cases) * reps * len(checked) > MAX_RUNS:
        raise err("sweep", f"more than {MAX_RUNS} runs")
    return Experiment(
        path=path,
        name=name,
        description=str(data.get("description") or ""),
        base=base,
        generator=generator,
        generator_params=params,
        cases=cases,
        replications=reps,
        seed=seed,
        transports=checked,
        backend=backend,
        metrics=list(metrics),
        figures=figures,
        series=list(series),
        contrasts=contrasts,
        locations={
            k: _loc(n)
            for k, n in nodes.at.items()
            if not k.endswith("@key") and (k.count(".") == 0 or k.startswith("transports."))
        },
    )


def _path_ok(err: Any, where: str, key: str, generator: str | None) -> None:
    if key.startswith("generator."):
        if generator is None:
            raise err(where, "generator.* overrides need a generator")
        param = key.removeprefix("generator.")
        problem = GENERATORS[generator].check({param: None}, names_only=True)
        if problem is not None:
            raise err(where, problem[1])
        return
    try:
        parse_path(key)
    except OverrideError as e:
        raise err(where, str(e)) from None


def _contrasts(data: dict[str, Any], err: Any, cases: list[Case], metrics: list[str]) -> list:
    """`contrasts: [{metric: M, from: CASE, to: CASE}]`, each case a case's label."""
    items = data.get("contrasts") or []
    if not isinstance(items, list):
        raise err("contrasts", "expected a list of {metric, from, to}")
    labels = [c.label for c in cases]
    out = []
    for i, c in enumerate(items):
        where = f"contrasts[{i}]"
        if not isinstance(c, dict) or set(c) != {"metric", "from", "to"}:
            raise err(where, "expected {metric: NAME, from: CASE, to: CASE}")
        if c["metric"] not in metrics:
            raise err(f"{where}.metric", f"{c['metric']!r} is not in metrics")
        for k in ("from", "to"):
            if c[k] not in labels:
                raise err(f"{where}.{k}", f"unknown case {c[k]!r}; cases: {', '.join(labels)}")
        if c["from"] == c["to"]:
            raise err(f"{where}.to", "expected another case than from")
        out.append(Contrast(c["metric"], c["from"], c["to"]))
    return out


def _case_name_ok(name: Any) -> bool:
    return isinstance(name, str) and bool(name) and name.replace("-", "").replace("_", "").isalnum()


def _cases(data: dict[str, Any], err: Any, generator: str | None) -> list[Case]:
    if "sweep" in data and "cases" in data:
        raise err("cases", "give sweep (a grid) or cases (a list), not both")
    if isinstance(data.get("cases"), dict):  # named cases: name -> overrides
        if not data["cases"]:
            raise err("cases", "expected a non-empty mapping of case name -> overrides")
        named = []
        for name, c in data["cases"].items():
            if not _case_name_ok(name):
                raise err(f"cases.{name}", "a case name is letters, digits, - and _")
            if c is None:
                c = {}
            if not isinstance(c, dict):
                raise err(f"cases.{name}", "expected a mapping of overrides (path: value)")
            for key in c:
                _path_ok(err, f"cases.{name}.{key}", str(key), generator)
            named.append(Case(name, dict(c)))
        return named
    if "cases" in data:
        items = data["cases"]
        if not isinstance(items, list) or not items:
            raise err("cases", "expected a non-empty list (or a mapping) of override mappings")
        out = []
        for i, c in enumerate(items):
            if not isinstance(c, dict):
                raise err(f"cases[{i}]", "expected a mapping of overrides (path: value)")
            for key in c:
                _path_ok(err, f"cases[{i}].{key}", str(key), generator)
            out.append(Case(_label(c), dict(c)))
        return out
    sweep = data.get("sweep", {})
    if sweep is None or not isinstance(sweep, dict):
        raise err("sweep", "expected a mapping of path -> list of values")
    if "sweep" in data and not sweep:
        raise err("sweep", "empty sweep: give at least one path with values (or leave sweep out)")
    for key, values in sweep.items():
        _path_ok(err, f"sweep.{key}", str(key), generator)
        if not isinstance(values, list) or not values:
            raise err(f"sweep.{key}", "expected a non-empty list of values")
    keys = list(sweep)
    return [
        Case(_label(dict(zip(keys, combo, strict=True))), dict(zip(keys, combo, strict=True)))
        for combo in itertools.product(*(sweep[k] for k in keys))
    ]
