"""PNG plots of a `ratelab-net` run: queue length at the router ports, cwnd of the
TCP flows (kernel and ratelab stack), the rate-based (rbcc) flows' sending and
echoed rates, and RTT of every flow that measures one, over time (matplotlib)."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files only: no display on a server
import matplotlib.pyplot as plt
from matplotlib.axes import Axes
from ratelab_ctl.counters import CounterSnapshot

from ratelab_net.results import FlowResult


def _label(r: FlowResult) -> str:
    if r.stack is None:
        return r.flow.name
    return f"{r.flow.name} ({r.stack} {r.flow.cc})"


def _plot_rates(ax: Axes, flows: list[FlowResult]) -> None:
    """Each rbcc flow's sending rate (solid) and the rate the routers echoed
    (wide, pale, dashed; the legend names the routers that set it), as steps
    until the flow's stop time."""
    for r in flows:
        if not r.rates:
            continue
        shift, end = r.flow.start_s, r.flow.stop_s
        times = [c.t_s + shift for c in r.rates] + [end]
        sent = [c.rate * 8 / 1e6 for c in r.rates]
        (line,) = ax.step(
            times, [*sent, sent[-1]], where="post", zorder=3, label=f"{r.flow.name} sending"
        )
        echoed = [c for c in r.rates if c.return_rate is not None]
        if not echoed:
            continue
        routers = list(dict.fromkeys(c.bottle_router for c in echoed))
        values = [c.return_rate * 8 / 1e6 for c in echoed if c.return_rate is not None]
        # wide and pale under the sending rate, which follows it one RTT later
        ax.step(
            [c.t_s + shift for c in echoed] + [end],
            [*values, values[-1]],
            "--",
            where="post",
            linewidth=4,
            alpha=0.4,
            color=line.get_color(),
            label=f"{r.flow.name} echoed (set by {', '.join(routers)})",
        )


def plot_run(
    out: Path,
    flows: list[FlowResult],
    samples: dict[str, list[CounterSnapshot]],
    title: str,
) -> Path:
    has_rates = any(r.rates for r in flows)
    rows = 4 if has_rates else 3
    fig, axes = plt.subplots(rows, 1, figsize=(9, 3 * rows), sharex=True)
    ax_q, ax_c, ax_r = axes[0], axes[1], axes[-1]
    t0 = min((s[0].time for s in samples.values() if s), default=0.0)
    for router, snaps in samples.items():
        ports = sorted({p for s in snaps for p in s.ports})
        for port in ports:
            q = [(s.time - t0, s.ports[port].last_q) for s in snaps if port in s.ports]
            if any(v for _, v in q):
                ax_q.plot([t for t, _ in q], [v for _, v in q], label=f"{router} port {port}")
    ax_q.set_ylabel("queue (packets)")
    for r in flows:
        # hosts count time from their own start: place it at the flow's start
        shift = r.flow.start_s
        if r.cwnd:
            ax_c.plot([t + shift for t, _ in r.cwnd], [c for _, c in r.cwnd], label=_label(r))
        if r.rtt_ms:
            ax_r.plot(
                [t + shift for t, _ in r.rtt_ms],
                [v for _, v in r.rtt_ms],
                ".",
                markersize=3,
                label=r.flow.name,
            )
    if not any(r.cwnd for r in flows):
        ax_c.text(0.5, 0.5, "no TCP flows", ha="center", va="center", transform=ax_c.transAxes)
    ax_c.set_ylabel("cwnd (segments)")
    if has_rates:
        _plot_rates(axes[2], flows)
        axes[2].set_ylabel("rbcc rate (Mbit/s)")
        axes[2].set_ylim(bottom=0)
    ax_r.set_ylabel("RTT (ms)")
    ax_r.set_xlabel("time (s)")
    for ax in axes:
        if ax.get_legend_handles_labels()[0]:
            ax.legend(loc="upper right", fontsize="small")
        ax.grid(alpha=0.3)
    shown = "queue, cwnd, rbcc rates and RTT" if has_rates else "queue, cwnd and RTT"
    fig.suptitle(f"{title}: {shown} over time")
    fig.tight_layout()
    path = out / "plots.png"
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path
