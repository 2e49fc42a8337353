"""PNG plots of a `ratelab-net` run: queue length at the router ports, cwnd of the
TCP flows and RTT of every flow that measures one, over time (matplotlib)."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files only: no display on a server
import matplotlib.pyplot as plt
from ratelab_ctl.counters import CounterSnapshot

from ratelab_net.results import FlowResult


def plot_run(
    out: Path,
    flows: list[FlowResult],
    samples: dict[str, list[CounterSnapshot]],
    title: str,
) -> Path:
    fig, (ax_q, ax_c, ax_r) = plt.subplots(3, 1, figsize=(9, 9), sharex=True)
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
            ax_c.plot([t + shift for t, _ in r.cwnd], [c for _, c in r.cwnd], label=r.flow.name)
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
    ax_r.set_ylabel("RTT (ms)")
    ax_r.set_xlabel("time (s)")
    for ax in (ax_q, ax_c, ax_r):
        if ax.get_legend_handles_labels()[0]:
            ax.legend(loc="upper right", fontsize="small")
        ax.grid(alpha=0.3)
    fig.suptitle(title)
    fig.tight_layout()
    path = out / "plots.png"
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path
