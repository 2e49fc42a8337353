"""The experiment's tables (run, flow, port; Parquet and CSV) and its report
(Markdown and HTML, figures as PNG and PDF), from the runs on disk. What the
report says it found is computed from the runs, never written in."""

from __future__ import annotations

import html
import json
import math
from pathlib import Path
from typing import Any

import pandas as pd

from ratelab_exp import report_e2
from ratelab_exp.metrics import METRICS
from ratelab_exp.runner import Task
from ratelab_exp.spec import Experiment


def load_tables(tasks: list[Task], runs_dir: Path) -> dict[str, pd.DataFrame]:
    """runs (one row per run: parameters, status, metrics), flows, ports, and
    samples, queues, pings where the file keeps those series."""
    runs, flows, ports, samples, queues, pings, downloads = [], [], [], [], [], [], []
    for t in tasks:
        path = runs_dir / f"{t.run_id}.json"
        if not path.exists():
            continue
        rec = json.loads(path.read_text())
        row: dict[str, Any] = {
            "run_id": t.run_id,
            "case": t.case,
            "transport": t.transport,
            "replication": t.replication,
            "seed": t.seed,
            "status": rec["status"],
            "error": rec.get("error", ""),
            "wall_s": rec.get("wall_s"),
        }
        row.update({f"param.{k}": str(v) for k, v in t.case_overrides.items()})
        row.update(rec.get("metrics") or {})
        if rec.get("notes"):  # metrics n/a on the run's backend, and why
            row["notes"] = "; ".join(f"{m}: {why}" for m, why in sorted(rec["notes"].items()))
        runs.append(row)
        keys = {"run_id": t.run_id, "case": t.case, "transport": t.transport, "seed": t.seed}
        flows += [{**keys, **f} for f in rec.get("flows", [])]
        ports += [{**keys, **p} for p in rec.get("ports", [])]
        samples += [{**keys, **s} for s in rec.get("samples", [])]
        queues += [{**keys, **q} for q in rec.get("queues", [])]
        pings += [{**keys, **p} for p in rec.get("pings", [])]
        downloads += [{**keys, **d} for d in rec.get("downloads", [])]
    tables = {"runs": runs, "flows": flows, "ports": ports}
    if samples:  # the file's series: flows over time
        tables["samples"] = samples
    if queues:  # series queue: the router ports that queued, over time
        tables["queues"] = queues
    if pings:  # series ping_rtt_ms: every ping reply
        tables["pings"] = pings
    if downloads:  # series download_s: each fixed-size transfer's time by its start
        tables["downloads"] = downloads
    return {name: pd.DataFrame(rows) for name, rows in tables.items()}


def _fmt(value: float) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    if abs(value) >= 1e6:
        return f"{value / 1e6:.3g} M"
    if abs(value) >= 1e3:
        return f"{value / 1e3:.3g} k"
    return f"{value:.3g}"


def summary(runs: pd.DataFrame, metrics: list[str]) -> pd.DataFrame:
    """Median and 90 % range (5th-95th percentile) per case, transport, metric."""
    ok = runs[runs["status"] == "ok"]
    rows = []
    for (case, transport), group in ok.groupby(["case", "transport"], sort=False):
        for m in metrics:
            values = pd.to_numeric(group[m], errors="coerce").dropna() if m in group else []
            n = len(values)
            rows.append(
                {
                    "case": case,
                    "transport": transport,
                    "metric": m,
                    "runs": n,
                    "median": float(values.median()) if n else math.nan,
                    "p5": float(values.quantile(0.05)) if n else math.nan,
                    "p95": float(values.quantile(0.95)) if n else math.nan,
                }
            )
    return pd.DataFrame(
        rows, columns=["case", "transport", "metric", "runs", "median", "p5", "p95"]
    )


def findings(table: pd.DataFrame) -> list[str]:
    """Per case and metric: which transport did best by the median, and all medians."""
    lines = []
    for (case, metric), group in table.groupby(["case", "metric"], sort=False):
        group = group.dropna(subset=["median"])
        if group.empty:
            continue
        m = METRICS[metric]
        unit = f" {m.unit}" if m.unit else ""
        where = f"[{case}] " if case != "base" else ""
        if len(group) > 1 and group["median"].nunique() == 1:
            value = _fmt(group["median"].iloc[0])
            lines.append(f"{where}median {m.title}: the same for every transport ({value}{unit})")
            continue
        best = group.sort_values("median", ascending=(m.better == "lower")).iloc[0]
        word = "lowest" if m.better == "lower" else "highest"
        others = " vs ".join(
            f"{r.transport} ({_fmt(r.median)})"
            for r in group.itertuples()
            if r.transport != best["transport"]
        )
        tail = f" vs {others}" if others else ""
        head = f"{best['transport']} ({_fmt(best['median'])}{unit})"
        lines.append(f"{where}{word} median {m.title}: {head}{tail}")
    return lines


# series kept outside the flow samples: (table, x, y, what one line is, y label)
_OTHER_SERIES = {
    "queue": ("queues", "time_s", "queue_packets", "port", "queue (packets)"),
    "ping_rtt_ms": ("pings", "sent_s", "rtt_ms", "flow", "ping RTT (ms)"),
    "download_s": ("downloads", "start_s", "completion_s", "kind", "download time (s)"),
}


def contrast_lines(exp: Experiment, table: pd.DataFrame) -> list[str]:
    """Each of the file's contrasts: per transport, the metric's median in the
    `from` case, in the `to` case, the difference and the ratio."""
    lines = []
    for c in exp.contrasts:
        m = METRICS[c.metric]
        unit = f" {m.unit}" if m.unit else ""
        rows = table[table["metric"] == c.metric]
        parts = []
        for transport in exp.transports:
            mine = rows[rows["transport"] == transport].set_index("case")["median"]
            a, b = mine.get(c.source, math.nan), mine.get(c.to, math.nan)
            if math.isnan(a) or math.isnan(b):
                parts.append(f"{transport} n/a")
                continue
            ratio = f", x{b / a:.3g}" if a else ""
            sign = "+" if b >= a else "-"
            parts.append(
                f"{transport} {_fmt(a)} -> {_fmt(b)}{unit} ({sign}{_fmt(abs(b - a))}{ratio})"
            )
        lines.append(f"{m.title} from {c.source} to {c.to} (medians): " + "; ".join(parts))
    return lines


def _notes(runs: pd.DataFrame) -> list[str]:
    """What the runs' backend could not measure (n/a), once each."""
    if "notes" not in runs:
        return []
    found: list[str] = []
    for text in runs["notes"].dropna():
        found += [n for n in str(text).split("; ") if n and n not in found]
    return found


def _series_figure(
    column: str,
    runs: pd.DataFrame,
    samples: pd.DataFrame,
    folder: Path,
    plt: Any,
    flows: tuple[str, ...] | None = None,
    tables: dict[str, pd.DataFrame] | None = None,
) -> tuple[str, str] | None:
    """Every flow's `column` over time (only `flows` where given; `queue`: each
    router port that queued, `ping_rtt_ms`: each ping's replies) in the first
    replication of each case and transport, one panel each; None without data."""
    ok = runs[runs["status"] == "ok"]
    x, y, line, ylabel = "time_s", column, "flow", column
    if column in _OTHER_SERIES:
        name, x, y, line, ylabel = _OTHER_SERIES[column]
        samples = (tables or {}).get(name, pd.DataFrame())
        if column == "queue" and not samples.empty:
            samples = samples.assign(port=samples["router"] + "." + samples["port"].astype(str))
    if flows is not None and not samples.empty:
        samples = samples[samples[line].isin(flows)]
    if samples.empty or y not in samples or ok.empty:
        return None
    firsts = ok.sort_values("replication").groupby(["case", "transport"], sort=False).head(1)
    fig, axes = plt.subplots(len(firsts), 1, figsize=(6, 2.2 * len(firsts)), sharex=True)
    axes = [axes] if len(firsts) == 1 else list(axes)
    for ax, run in zip(axes, firsts.itertuples(), strict=True):
        rows = samples[samples["run_id"] == run.run_id]
        for flow, group in rows.groupby(line, sort=False):
            values = pd.to_numeric(group[y], errors="coerce")
            style = "o-" if column == "download_s" else "-"  # a point per download
            ax.plot(group[x], values, style, label=str(flow), linewidth=0.8, markersize=3)
        name = run.transport if run.case == "base" else f"{run.transport} [{run.case}]"
        ax.set_title(f"{name}, seed {run.seed}", fontsize="small")
        ax.set_ylabel(ylabel)
        if column in _OTHER_SERIES:  # from 0: a panel's small spread is not blown up
            ax.set_ylim(bottom=0)
    axes[-1].set_xlabel("start (s)" if column == "download_s" else "time (s)")
    axes[0].legend(fontsize="x-small", ncol=4)
    fig.tight_layout()
    stem = f"series-{column}"
    fig.savefig(folder / f"{stem}.png", dpi=100, metadata={"Software": None})
    fig.savefig(folder / f"{stem}.pdf", metadata={"CreationDate": None})
    plt.close(fig)
    return f"{column} over time (first replication)", f"{stem}.png"


def _hull(points: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """The convex hull of `points`, counter-clockwise (Andrew's monotone chain)."""
    pts = sorted(set(points))
    if len(pts) < 3:
        return pts

    def turn(o: tuple[float, float], a: tuple[float, float], b: tuple[float, float]) -> float:
        return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0])

    lower: list[tuple[float, float]] = []
    upper: list[tuple[float, float]] = []
    for p in pts:
        while len(lower) >= 2 and turn(lower[-2], lower[-1], p) <= 0:
            lower.pop()
        lower.append(p)
    for p in reversed(pts):
        while len(upper) >= 2 and turn(upper[-2], upper[-1], p) <= 0:
            upper.pop()
        upper.append(p)
    return lower[:-1] + upper[:-1]


def _bag(ax: Any, xs: pd.Series, ys: pd.Series, color: Any) -> None:
    """Bag-plot style, over a scatter's group: its median (a diamond) and the
    convex hull of the half of its points nearest the median, each axis scaled
    by the group's interquartile range (not Tukey's halfspace depth)."""
    mx, my = float(xs.median()), float(ys.median())
    ax.scatter([mx], [my], s=70, marker="D", color=color, edgecolors="black", zorder=3)
    sx = float(xs.quantile(0.75) - xs.quantile(0.25)) or 1.0
    sy = float(ys.quantile(0.75) - ys.quantile(0.25)) or 1.0
    near = (((xs - mx) / sx) ** 2 + ((ys - my) / sy) ** 2).sort_values()
    inner = near.index[: math.ceil(len(near) / 2)]
    hull = _hull(list(zip(xs[inner].astype(float), ys[inner].astype(float), strict=True)))
    if len(hull) >= 3:
        ax.fill(*zip(*hull, strict=True), color=color, alpha=0.25, linewidth=0)
    elif len(hull) == 2:
        ax.plot(*zip(*hull, strict=True), color=color, alpha=0.5)


def figures(
    exp: Experiment,
    runs: pd.DataFrame,
    samples: pd.DataFrame,
    folder: Path,
    tables: dict[str, pd.DataFrame] | None = None,
) -> list[tuple[str, str]]:
    """Each figure of the file as PNG and PDF; returns (title, PNG file name)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ok = runs[runs["status"] == "ok"]
    out = []
    for fig_spec in exp.figures:
        if fig_spec.series is not None:
            drawn_series = _series_figure(
                fig_spec.series, runs, samples, folder, plt, fig_spec.flows, tables
            )
            if drawn_series is not None:
                out.append(drawn_series)
            continue
        m = METRICS[fig_spec.metric]
        for kind in fig_spec.kinds:
            fig, ax = plt.subplots(figsize=(6, 3.6))
            drawn = False
            series = []
            for (case, transport), group in ok.groupby(["case", "transport"], sort=False):
                values = pd.to_numeric(group[fig_spec.metric], errors="coerce").dropna()
                label = transport if case == "base" else f"{transport} [{case}]"
                series.append((label, values))
            if kind in ("scatter", "bag") and fig_spec.x is not None:
                mx = METRICS[fig_spec.x]
                for (case, transport), group in ok.groupby(["case", "transport"], sort=False):
                    xs = pd.to_numeric(group[fig_spec.x], errors="coerce")
                    ys = pd.to_numeric(group[fig_spec.metric], errors="coerce")
                    keep = xs.notna() & ys.notna()
                    if keep.any():
                        label = transport if case == "base" else f"{transport} [{case}]"
                        dots = ax.scatter(xs[keep], ys[keep], s=12, label=label)
                        if kind == "bag":
                            _bag(ax, xs[keep], ys[keep], dots.get_facecolor()[0])
                        drawn = True
                ax.set_xlabel(f"{mx.title} ({mx.unit})" if mx.unit else mx.title)
                ax.set_ylabel(f"{m.title} ({m.unit})" if m.unit else m.title)
                if drawn:
                    ax.legend(fontsize="small")
            elif kind == "box":
                kept = [(lbl, v) for lbl, v in series if len(v)]
                if kept:
                    ax.boxplot([v for _, v in kept], tick_labels=[lbl for lbl, _ in kept])
                    drawn = True
                ax.set_ylabel(f"{m.title} ({m.unit})" if m.unit else m.title)
            else:
                for label, values in series:
                    if not len(values):
                        continue
                    drawn = True
                    if kind == "hist":
                        ax.hist(values, bins=20, alpha=0.5, label=label)
                    else:
                        ax.ecdf(values.to_numpy(), label=label)
                ax.set_xlabel(f"{m.title} ({m.unit})" if m.unit else m.title)
                ax.set_ylabel("runs" if kind == "hist" else "fraction of runs")
                if drawn:
                    ax.legend(fontsize="small")
            title = f"{m.title}: {'histogram' if kind == 'hist' else kind.upper()}"
            if kind == "box":
                title = f"{m.title}: box plot"
            if kind == "scatter" and fig_spec.x is not None:
                title = f"{m.title} against {METRICS[fig_spec.x].title}"
            if kind == "bag" and fig_spec.x is not None:
                title = f"{m.title} against {METRICS[fig_spec.x].title}: bag plot"
            ax.set_title(title, fontsize="medium")
            if not drawn:
                ax.text(0.5, 0.5, "no values (n/a for every run)", ha="center", va="center")
            fig.tight_layout()
            stem = f"{fig_spec.metric}-{kind}"
            if kind == "scatter":
                stem = f"{fig_spec.metric}-vs-{fig_spec.x}"
            fig.savefig(folder / f"{stem}.png", dpi=100, metadata={"Software": None})
            fig.savefig(folder / f"{stem}.pdf", metadata={"CreationDate": None})
            plt.close(fig)
            out.append((title, f"{stem}.png"))
    return out


def write_report(exp: Experiment, tasks: list[Task], folder: Path) -> Path:
    """Tables and report for the runs of `tasks` under `folder`; returns report.md."""
    tables = load_tables(tasks, folder / "runs")
    for name, df in tables.items():
        df.to_csv(folder / f"{name}.csv", index=False, lineterminator="\n")
        df.to_parquet(folder / f"{name}.parquet", index=False)
    runs = tables["runs"]
    if runs.empty:
        runs = pd.DataFrame(columns=["run_id", "case", "transport", "replication", "status"])
    for m in exp.metrics:  # every run failed: no values, but the columns
        if m not in runs:
            runs[m] = math.nan
    table = summary(runs, exp.metrics)
    table.to_csv(folder / "summary.csv", index=False, lineterminator="\n")
    found = findings(table) + contrast_lines(exp, table)
    figs = figures(exp, runs, tables.get("samples", pd.DataFrame()), folder, tables)
    e2_found, e2_figs = report_e2.section(exp, tables, folder)  # E2's terms, E2's figures
    found, figs = e2_found + found, e2_figs + figs
    failed = runs[runs["status"] != "ok"]
    missing = len(tasks) - len(runs)
    md = _markdown(exp, tasks, runs, table, found, figs, failed, missing)
    (folder / "report.md").write_text(md)
    (folder / "report.html").write_text(
        _html(exp, tasks, runs, table, found, figs, failed, missing)
    )
    return folder / "report.md"


def _header(exp: Experiment, tasks: list[Task], runs: pd.DataFrame, missing: int) -> str:
    ok = int((runs["status"] == "ok").sum()) if len(runs) else 0
    cases = len(exp.cases)
    text = (
        f"{len(tasks)} runs ({cases} case{'s' * (cases != 1)} x {exp.replications} "
        f"replication{'s' * (exp.replications != 1)} x {len(exp.transports)} transports: "
        f"{', '.join(exp.transports)}), seeds from {exp.seed}; {ok} ok, "
        f"{len(runs) - ok} failed"
    )
    if missing:
        text += f", {missing} not run yet"
    return text + "."


def _rows(table: pd.DataFrame) -> list[list[str]]:
    rows = []
    for r in table.itertuples():
        m = METRICS[r.metric]
        unit = f" ({m.unit})" if m.unit else ""
        rng = "n/a" if math.isnan(r.p5) else f"{_fmt(r.p5)} - {_fmt(r.p95)}"
        rows.append([r.case, r.transport, f"{m.title}{unit}", str(r.runs), _fmt(r.median), rng])
    return rows


HEAD = ["case", "transport", "metric", "runs", "median", "90 % range (5th-95th pct)"]


def _markdown(
    exp: Experiment,
    tasks: list[Task],
    runs: pd.DataFrame,
    table: pd.DataFrame,
    found: list[str],
    figs: list[tuple[str, str]],
    failed: pd.DataFrame,
    missing: int,
) -> str:
    out = [f"# {exp.name}", ""]
    if exp.description:
        out += [exp.description.strip(), ""]
    out += [_header(exp, tasks, runs, missing), "", "## Findings", ""]
    out += [f"- {line}" for line in found] or ["- no run finished"]
    out += ["", "## Medians and 90 % ranges", ""]
    out += ["| " + " | ".join(HEAD) + " |", "|" + "---|" * len(HEAD)]
    out += ["| " + " | ".join(row) + " |" for row in _rows(table)]
    if notes := _notes(runs):
        out += ["", f"## Not measured on {exp.backend} (n/a)", ""]
        out += [f"- {n}" for n in notes]
    if len(failed):
        out += ["", "## Failed runs", ""]
        for r in failed.itertuples():
            out.append(f"- {r.run_id} (case {r.case}, {r.transport}, seed {r.seed}): {r.error}")
    out += ["", "## Figures", ""]
    out += [f"![{title}]({png})" for title, png in figs]
    out += ["", "Tables: runs, flows, ports (.parquet, .csv); summary.csv; figures also as PDF."]
    return "\n".join(out) + "\n"


def _html(
    exp: Experiment,
    tasks: list[Task],
    runs: pd.DataFrame,
    table: pd.DataFrame,
    found: list[str],
    figs: list[tuple[str, str]],
    failed: pd.DataFrame,
    missing: int,
) -> str:
    e = html.escape
    out = [f"<!doctype html><html><head><meta charset='utf-8'><title>{e(exp.name)}</title>"]
    out.append("<style>td,th{padding:2px 8px;border:1px solid #ccc}</style></head><body>")
    out.append(f"<h1>{e(exp.name)}</h1>")
    if exp.description:
        out.append(f"<p>{e(exp.description.strip())}</p>")
    out.append(f"<p>{e(_header(exp, tasks, runs, missing))}</p><h2>Findings</h2><ul>")
    out += [f"<li>{e(line)}</li>" for line in found] or ["<li>no run finished</li>"]
    out.append("</ul><h2>Medians and 90 % ranges</h2><table><tr>")
    out += [f"<th>{e(h)}</th>" for h in HEAD]
    out.append("</tr>")
    for row in _rows(table):
        out.append("<tr>" + "".join(f"<td>{e(c)}</td>" for c in row) + "</tr>")
    out.append("</table>")
    if notes := _notes(runs):
        out.append(f"<h2>Not measured on {e(exp.backend)} (n/a)</h2><ul>")
        out += [f"<li>{e(n)}</li>" for n in notes]
        out.append("</ul>")
    if len(failed):
        out.append("<h2>Failed runs</h2><ul>")
        for r in failed.itertuples():
            text = f"{r.run_id} (case {r.case}, {r.transport}, seed {r.seed}): {r.error}"
            out.append(f"<li>{e(text)}</li>")
        out.append("</ul>")
    out.append("<h2>Figures</h2>")
    out += [f"<figure><img src='{e(png)}' alt='{e(t)}'></figure>" for t, png in figs]
    out.append("</body></html>")
    return "\n".join(out) + "\n"


def rebuild(folder: str | Path) -> Path:
    """`ratelab-exp report DIR`: the report again from DIR's runs (the file's
    path and --quick are kept in DIR/experiment.json)."""
    from ratelab_exp.runner import plan
    from ratelab_exp.spec import load_experiment

    folder = Path(folder)
    if not (folder / "experiment.json").is_file():
        raise ValueError(f"{folder}: not a folder `ratelab-exp run` wrote (no experiment.json)")
    meta = json.loads((folder / "experiment.json").read_text())
    exp = load_experiment(meta["path"], meta["quick"], meta.get("backend"))
    return write_report(exp, plan(exp), folder)
