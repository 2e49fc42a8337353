"""E2's part of the report: what the runs found in the study's own terms
(IW10 vs IW3, a 1 s vs a 3 s initial RTO, spurious RTOs, one-way delay, the
bursts' fairness) and its figures (box plots of each burst's longest flow by
case, RTO counts, one-way delay CDFs). Everything is computed from the runs table; it applies to an
experiment that measures E2's burst times (generators_e2's cases)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
from ratelab_ctl import units

from ratelab_exp.generators_e2 import QUEUES
from ratelab_exp.spec import Experiment

SETUP, FLOWS = "param.generator.setup", "param.generator.flows"
BURSTS = (("e2_first_burst_s", "first burst"), ("e2_later_burst_s", "later burst"))
LINK_NAMES = {"edge": "EDGE", "hspa": "HSPA", "lte": "LTE"}


@dataclass(frozen=True)
class Knobs:
    """A transport's initial window (segments) and initial RTO (s), from its overrides."""

    iw: int | None
    rto_s: float | None


def transport_knobs(exp: Experiment) -> dict[str, Knobs]:
    out = {}
    for name, over in exp.transports.items():
        iw = over.get("flows[*].iw")
        rto = over.get("flows[*].initial_rto")
        out[name] = Knobs(
            None if iw is None else int(iw),
            None if rto is None else units.parse_delay_us(str(rto)) / 1e6,
        )
    return out


def applies(exp: Experiment) -> bool:
    return all(m in exp.metrics for m, _ in BURSTS)


def _ok_runs(runs: pd.DataFrame) -> pd.DataFrame:
    ok = runs[runs["status"] == "ok"].copy()
    if ok.empty or SETUP not in ok or FLOWS not in ok:
        return ok.iloc[0:0]
    ok["link"] = ok[SETUP].str.split("-").str[0]
    ok["queue"] = ok[SETUP].str.split("-", n=1).str[1]
    ok["flows_n"] = pd.to_numeric(ok[FLOWS])
    return ok


def _fmt_s(value: float) -> str:
    return f"{value:.3g} s"


def _case(setup: str, flows: int) -> str:
    return f"{setup}, {flows} flow{'s' * (flows != 1)}"


def _label(knob: Knobs, key: str) -> str:
    if key == "iw":
        return f"IW{knob.iw}"
    return f"IRTO{knob.rto_s:g}"  # the study's name: IRTO1 is a 1 s initial RTO


def _compare(ok: pd.DataFrame, knobs: dict[str, Knobs], key: str) -> list[str]:
    """Transports that differ only in `key` (iw or rto_s), the larger IW or
    the shorter RTO against the other: per burst, in how many cases it
    finished faster by the median, the median ratio, the largest gain and loss."""
    pairs = []
    for a, ka in knobs.items():
        for b, kb in knobs.items():
            same = "rto_s" if key == "iw" else "iw"
            if getattr(ka, same) != getattr(kb, same) or getattr(ka, key) == getattr(kb, key):
                continue
            if key == "iw" and (ka.iw or 0) > (kb.iw or 0):
                pairs.append((a, b))  # (larger IW, smaller IW)
            if key == "rto_s" and (ka.rto_s or 0) < (kb.rto_s or 0):
                pairs.append((a, b))  # (shorter RTO, longer RTO)
    if not pairs:
        return []
    names = {(_label(knobs[a], key), _label(knobs[b], key)) for a, b in pairs}
    one, other = names.pop() if len(names) == 1 else ("the larger", "the smaller")
    held = "initial RTO" if key == "iw" else "IW"
    what = f"{one} vs {other} (same {held})"
    lines = []
    for metric, burst in BURSTS:
        med = ok.groupby([SETUP, "flows_n", "transport"])[metric].median()
        rows = []
        for a, b in pairs:
            for (setup, n), _ in ok.groupby([SETUP, "flows_n"], sort=False):
                ma, mb = med.get((setup, n, a), math.nan), med.get((setup, n, b), math.nan)
                if not (math.isnan(ma) or math.isnan(mb)) and mb > 0:
                    rows.append((setup, n, a, b, ma, mb))
        if not rows:
            continue
        faster = sum(r[4] < r[5] for r in rows)
        slower = sum(r[4] > r[5] for r in rows)
        ratios = pd.Series([r[4] / r[5] for r in rows])
        links = pd.Series([r[0].split("-")[0] for r in rows])
        per_link = ", ".join(
            f"{LINK_NAMES.get(link, link)} {ratios[links == link].median():.3g}"
            for link in dict.fromkeys(links)
        )
        line = (
            f"{what}, {burst}: {one} finished faster in {faster} of {len(rows)} cases, "
            f"slower in {slower}, the same in {len(rows) - faster - slower} (median of each "
            f"case's runs); median time ratio {ratios.median():.3g} ({per_link})"
        )
        gain = min(rows, key=lambda r: r[4] / r[5])
        loss = max(rows, key=lambda r: r[4] / r[5])
        if gain[4] < gain[5]:
            line += (
                f"; largest gain {_case(gain[0], gain[1])} ({gain[2]} vs {gain[3]}): "
                f"{_fmt_s(gain[5])} -> {_fmt_s(gain[4])}"
            )
        if loss[4] > loss[5]:
            line += (
                f"; largest loss {_case(loss[0], loss[1])} ({loss[2]} vs {loss[3]}): "
                f"{_fmt_s(loss[5])} -> {_fmt_s(loss[4])}"
            )
        lines.append(line)
    return lines


def _rto_lines(ok: pd.DataFrame, exp: Experiment) -> list[str]:
    if "tcp_rtos" not in ok or "tcp_spurious_rtos" not in ok:
        return []
    parts = []
    for t in exp.transports:
        mine = ok[ok["transport"] == t]
        if mine.empty:
            continue
        rtos = float(pd.to_numeric(mine["tcp_rtos"]).sum())
        spurious = float(pd.to_numeric(mine["tcp_spurious_rtos"]).sum())
        share = f", {100 * spurious / rtos:.3g} % of them" if rtos else ""
        parts.append(
            f"{t} {rtos / len(mine):.3g} RTOs per run, {spurious:.0f} spurious in "
            f"{len(mine)} runs{share}"
        )
    lines = ["RTOs: " + "; ".join(parts)] if parts else []
    by_link = ok.groupby(["link", "transport"], sort=False)["tcp_spurious_rtos"].sum()
    spurious_links = [
        f"{LINK_NAMES.get(link, link)}: "
        + ", ".join(f"{t} {by_link.get((link, t), 0):.0f}" for t in exp.transports)
        for link in dict.fromkeys(ok["link"])
    ]
    if spurious_links:
        lines.append("spurious RTOs by link: " + "; ".join(spurious_links))
    return lines


def _owd_lines(ok: pd.DataFrame, exp: Experiment) -> list[str]:
    """Per link: the median over runs of each run's mean packet one-way
    delay, by queue setup and by transport."""
    if "e2_owd_mean_ms" not in ok:
        return []
    lines = []
    for link in dict.fromkeys(ok["link"]):
        mine = ok[ok["link"] == link]
        owd = pd.to_numeric(mine["e2_owd_mean_ms"])
        by_queue = owd.groupby(mine["queue"]).median()
        by_transport = owd.groupby(mine["transport"]).median()
        queues = ", ".join(f"{q} {by_queue[q]:.3g}" for q in QUEUES if q in by_queue)
        transports = ", ".join(f"{t} {by_transport[t]:.3g}" for t in exp.transports)
        lines.append(
            f"one-way delay on {LINK_NAMES.get(link, link)} (median of the runs' mean per "
            f"packet, ms): by queue {queues}; by transport {transports}"
        )
    return lines


def _jain_lines(ok: pd.DataFrame, exp: Experiment) -> list[str]:
    if "e2_burst_jain" not in ok:
        return []
    parts = []
    for t in exp.transports:
        values = pd.to_numeric(ok[ok["transport"] == t]["e2_burst_jain"]).dropna()
        if len(values):
            parts.append(f"{t} {values.median():.3g} (lowest {values.min():.3g})")
    return ["Jain's index between the two bursts (median over runs): " + "; ".join(parts)]


def _incomplete_lines(ok: pd.DataFrame) -> list[str]:
    if "e2_incomplete" not in ok:
        return []
    missing = ok[pd.to_numeric(ok["e2_incomplete"]) > 0]
    if missing.empty:
        return ["every flow of every run delivered its whole transfer"]
    cases = ", ".join(
        sorted({f"{r[SETUP]} x{r['flows_n']} {r['transport']}" for _, r in missing.iterrows()})
    )
    total = int(pd.to_numeric(missing["e2_incomplete"]).sum())
    return [f"{total} flows in {len(missing)} runs did not complete by the end ({cases})"]


def findings(exp: Experiment, runs: pd.DataFrame) -> list[str]:
    """E2's findings, each computed from the runs."""
    ok = _ok_runs(runs)
    if ok.empty:
        return []
    knobs = transport_knobs(exp)
    lines = _compare(ok, knobs, "iw") + _compare(ok, knobs, "rto_s")
    lines += _rto_lines(ok, exp) + _owd_lines(ok, exp) + _jain_lines(ok, exp)
    return lines + _incomplete_lines(ok)


def _save(fig: Any, folder: Path, stem: str) -> str:
    fig.savefig(folder / f"{stem}.png", dpi=100, metadata={"Software": None})
    fig.savefig(folder / f"{stem}.pdf", metadata={"CreationDate": None})
    return f"{stem}.png"


def _burst_boxes(ok: pd.DataFrame, exp: Experiment, link: str, folder: Path, plt: Any) -> str:
    """One row per queue setup of the link, one column per burst; in each
    panel the burst sizes, each with a box per transport."""
    mine = ok[ok["link"] == link]
    queues = [q for q in QUEUES if q in set(mine["queue"])]
    transports = list(exp.transports)
    sizes = sorted(set(mine["flows_n"]))
    fig, axes = plt.subplots(
        len(queues), 2, figsize=(11, 2.6 * len(queues)), squeeze=False, sharey="row"
    )
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    width = 0.8 / max(len(transports), 1)
    for row, queue in enumerate(queues):
        for col, (metric, burst) in enumerate(BURSTS):
            ax = axes[row][col]
            for ti, t in enumerate(transports):
                data, where = [], []
                for si, n in enumerate(sizes):
                    sel = mine[(mine["queue"] == queue) & (mine["flows_n"] == n)]
                    values = pd.to_numeric(sel[sel["transport"] == t][metric]).dropna()
                    if len(values):
                        data.append(values.to_numpy())
                        where.append(si + (ti - (len(transports) - 1) / 2) * width)
                if data:
                    parts = ax.boxplot(
                        data,
                        positions=where,
                        widths=width * 0.9,
                        patch_artist=True,
                        medianprops={"color": "black"},
                    )
                    for box in parts["boxes"]:
                        box.set_facecolor(colours[ti % len(colours)])
            ax.set_xticks(range(len(sizes)), [str(n) for n in sizes])
            ax.set_title(f"{LINK_NAMES.get(link, link)} {queue}: {burst}", fontsize="small")
            if row == len(queues) - 1:
                ax.set_xlabel("flows per burst")
            if col == 0:
                ax.set_ylabel("longest flow (s)")
    handles = [
        plt.Rectangle((0, 0), 1, 1, color=colours[i % len(colours)]) for i in range(len(transports))
    ]
    fig.legend(handles, transports, loc="upper center", ncol=len(transports), fontsize="small")
    fig.tight_layout(rect=(0, 0, 1, 1 - 0.4 / fig.get_figheight()))  # room for the legend
    png = _save(fig, folder, f"e2-bursts-{link}")
    plt.close(fig)
    return png


def _rto_bars(ok: pd.DataFrame, exp: Experiment, folder: Path, plt: Any) -> str:
    """RTOs per run (mean) by link and queue setup, a bar per transport; the
    spurious ones hatched at the bottom of each bar."""
    links = list(dict.fromkeys(ok["link"]))
    transports = list(exp.transports)
    fig, axes = plt.subplots(1, len(links), figsize=(4.5 * len(links), 3.4), squeeze=False)
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    width = 0.8 / max(len(transports), 1)
    for ax, link in zip(axes[0], links, strict=True):
        mine = ok[ok["link"] == link]
        queues = [q for q in QUEUES if q in set(mine["queue"])]
        for ti, t in enumerate(transports):
            sel = mine[mine["transport"] == t]
            means = sel.groupby("queue")[["tcp_rtos", "tcp_spurious_rtos"]].mean()
            xs = [qi + (ti - (len(transports) - 1) / 2) * width for qi in range(len(queues))]
            total = [float(means["tcp_rtos"].get(q, 0.0)) for q in queues]
            spurious = [float(means["tcp_spurious_rtos"].get(q, 0.0)) for q in queues]
            colour = colours[ti % len(colours)]
            ax.bar(xs, total, width, color=colour, label=t)
            ax.bar(xs, spurious, width, color="none", edgecolor="black", hatch="//")
        ax.set_xticks(range(len(queues)), queues)
        ax.set_title(LINK_NAMES.get(link, link), fontsize="small")
        ax.set_ylabel("RTOs per run (mean)")
    axes[0][0].legend(fontsize="x-small")
    fig.suptitle("RTOs per run; hatched: the spurious ones", fontsize="small")
    fig.tight_layout()
    png = _save(fig, folder, "e2-rtos")
    plt.close(fig)
    return png


def _owd_cdfs(
    ok: pd.DataFrame, flows: pd.DataFrame, exp: Experiment, folder: Path, plt: Any
) -> str | None:
    """One panel per link and queue setup: the CDF over flows of each flow's
    median packet one-way delay, a line per transport."""
    if flows.empty or "owd_p50_ms" not in flows:
        return None
    # the run's transport (a flow row's own `transport` is its protocol, tcp/newreno)
    setup = ok.set_index("run_id")[["link", "queue", "transport"]]
    rows = flows.drop(columns=["transport"]).join(setup, on="run_id", how="inner")
    rows = rows[pd.to_numeric(rows["owd_p50_ms"], errors="coerce").notna()]
    if rows.empty:
        return None
    links = list(dict.fromkeys(ok["link"]))
    queues = [q for q in QUEUES if q in set(rows["queue"])]
    fig, axes = plt.subplots(
        len(links), len(queues), figsize=(3.2 * len(queues), 2.6 * len(links)), squeeze=False
    )
    for r, link in enumerate(links):
        for c, queue in enumerate(queues):
            ax = axes[r][c]
            panel = rows[(rows["link"] == link) & (rows["queue"] == queue)]
            for t in exp.transports:
                values = pd.to_numeric(panel[panel["transport"] == t]["owd_p50_ms"]).dropna()
                if len(values):
                    ax.ecdf(values.to_numpy(dtype=float), label=t)
            ax.set_title(f"{LINK_NAMES.get(link, link)} {queue}", fontsize="small")
            if panel.empty:
                ax.set_axis_off()
            if r == len(links) - 1:
                ax.set_xlabel("flow's median one-way delay (ms)", fontsize="small")
            if c == 0:
                ax.set_ylabel("fraction of flows")
    legend: dict[str, Any] = {}  # every transport drawn, from whichever panel has it
    for ax in axes.flat:
        for handle, label in zip(*ax.get_legend_handles_labels(), strict=True):
            legend.setdefault(label, handle)
    if legend:
        fig.legend(list(legend.values()), list(legend), loc="upper center", ncol=len(legend))
    fig.tight_layout(rect=(0, 0, 1, 1 - 0.4 / fig.get_figheight()))
    png = _save(fig, folder, "e2-owd")
    plt.close(fig)
    return png


def figures(
    exp: Experiment, runs: pd.DataFrame, folder: Path, flows: pd.DataFrame | None = None
) -> list[tuple[str, str]]:
    """E2's figures as PNG and PDF; (title, PNG file name) each."""
    ok = _ok_runs(runs)
    if ok.empty:
        return []
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out = []
    for link in dict.fromkeys(ok["link"]):
        name = LINK_NAMES.get(link, link)
        title = f"{name}: each burst's longest flow by queue setup and burst size (box plots)"
        out.append((title, _burst_boxes(ok, exp, link, folder, plt)))
    if "tcp_rtos" in ok and "tcp_spurious_rtos" in ok:
        out.append(("RTOs and spurious RTOs per run", _rto_bars(ok, exp, folder, plt)))
    owd = _owd_cdfs(ok, flows if flows is not None else pd.DataFrame(), exp, folder, plt)
    if owd is not None:
        out.append(("one-way delay: CDF of each flow's median packet delay", owd))
    return out


def section(
    exp: Experiment, tables: dict[str, pd.DataFrame], folder: Path
) -> tuple[list[str], list[tuple[str, str]]]:
    """(findings, figures) of an E2 experiment; nothing for any other."""
    if not applies(exp):
        return [], []
    runs = tables.get("runs", pd.DataFrame())
    if runs.empty or "status" not in runs:
        return [], []
    flows = tables.get("flows", pd.DataFrame())
    return findings(exp, runs), figures(exp, runs, folder, flows)
