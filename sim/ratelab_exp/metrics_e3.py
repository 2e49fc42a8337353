"""The rest of E3's metric catalogue (../shared/EXPERIMENTS.md, E3) that the
simulator's results give, beside metrics.py's (throughput, Jain's and entropy
fairness, sRTT, cwnd, retransmissions, RTOs, queue, queueing delay, link
utilisation, drops, UDP loss). Per flow quantities are averaged over the TCP
flows (the algorithm under test); the bottleneck is the router egress port
that sent the largest share of its capacity. Bytes in flight and the
delivery rate come from the flow samples (metrics.flow_means), recovery
times from the stack's stats, the application's sending rate from the
bytes it wrote into its connection (the stack's `bytes_written`)."""

from __future__ import annotations

import math

import pandas as pd
from ratelab_ctl import units

from ratelab_exp.metrics import Metric, RunData, _duration_s, router_port_rates


def _tcp(d: RunData) -> pd.DataFrame:
    return d.flows[d.flows["transport"].str.startswith("tcp")]


def _mbit(d: RunData) -> pd.Series:
    """The TCP flows' throughputs (the receivers' goodput) in Mbit/s."""
    return _tcp(d)["goodput_bps"].astype(float) / 1e6


def _mean(values: pd.Series) -> float:
    values = values.dropna()
    return float(values.mean()) if len(values) else math.nan


def tcp_queueing_delay_ms(d: RunData) -> float:
    """Each TCP sender's estimated queueing delay, its sRTT averaged over time
    less its smallest RTT sample (ms), averaged over the flows."""
    tcp = _tcp(d).set_index("flow")
    srtt = d.flow_means["srtt_ms"].reindex(tcp.index)
    return _mean(srtt - tcp["tcp_min_rtt_ns"].astype(float) / 1e6)


def tcp_owd_ms(d: RunData) -> float:
    """The TCP flows' mean one-way delay at the application (write to read, ms)."""
    tcp = _tcp(d)
    got = tcp[tcp["bytes_received"] > 0]
    return _mean(got["one_way_delay_mean_ns"].astype(float) / 1e6)


def tcp_completion_s(d: RunData) -> float:
    """Each TCP flow's time from the first to the last byte its receiver read
    (bytes over the receiver's goodput, s), averaged over the flows."""
    tcp = _tcp(d)
    tcp = tcp[tcp["goodput_bps"].astype(float) > 0]
    return _mean(tcp["bytes_received"].astype(float) * 8 / tcp["goodput_bps"].astype(float))


def tcp_send_rate(d: RunData) -> float:
    """The transport's sending rate: the bits each TCP sender's host put on its
    link (headers and retransmissions included) over the whole run (duration
    and drain, as a sender empties its buffer after its stop), averaged over
    the flows; n/a unless every TCP flow has its sender host to itself (the
    host's counters are then the flow's)."""
    senders = d.flows["from"]
    tcp = _tcp(d)
    if tcp.empty or senders[senders.isin(tcp["from"])].duplicated().any():
        return math.nan
    hosts = d.ports[d.ports["node"].isin(tcp["from"])].set_index("node")["tx_bytes"]
    return _mean(hosts.astype(float) * 8 / _duration_s(d))


def _writing_s(d: RunData) -> dict[str, float]:
    """Each flow's time writing: from its start to its stop (the traffic's end
    when it has none), s."""
    end = units.parse_delay_us(str(d.topology["duration"])) / 1e6
    out = {}
    for f in d.topology.get("flows", []):
        start = units.parse_delay_us(str(f.get("start", "0s"))) / 1e6
        stop = units.parse_delay_us(str(f["stop"])) / 1e6 if "stop" in f else end
        out[str(f["name"])] = min(stop, end) - start
    return out


def tcp_app_send_rate(d: RunData) -> float:
    """The application's sending rate: the bytes each TCP flow's application
    wrote into its connection (what the send buffer took) over the flow's
    time writing, averaged over the flows (bit/s); n/a where the run has no
    written bytes (Mininet)."""
    tcp = _tcp(d)
    if "tcp_bytes_written" not in tcp:
        return math.nan
    seconds = tcp["flow"].map(_writing_s(d)).astype(float)
    written = tcp["tcp_bytes_written"].astype(float)
    return _mean(written * 8 / seconds.where(seconds > 0))


def tcp_utility_pf(d: RunData) -> float:
    """Proportional-fair utility: the sum of log(throughput in Mbit/s) over the
    TCP flows; n/a when a flow got nothing (log 0)."""
    x = _mbit(d)
    if not len(x) or (x <= 0).any():
        return math.nan
    return float(x.map(math.log).sum())


def tcp_utility_mpd(d: RunData) -> float:
    """Minimum-potential-delay utility: minus the sum of 1 / throughput (Mbit/s)
    over the TCP flows; n/a when a flow got nothing."""
    x = _mbit(d)
    if not len(x) or (x <= 0).any():
        return math.nan
    return float(-(1 / x).sum())


def tcp_product_fairness(d: RunData) -> float:
    """The product of the TCP flows' throughputs over their mean to the n-th
    power (1: equal shares; by the inequality of the means never above 1)."""
    x = _mbit(d)
    if len(x) < 2 or x.mean() <= 0:
        return math.nan
    return float((x / x.mean()).prod())


def _bottleneck(d: RunData) -> tuple[tuple[str, int], int, float] | None:
    """(router, port), rate (bit/s) and bits sent of the router egress port
    that sent the largest share of its rate."""
    rates = router_port_rates(d.topology)
    best = None
    for row in d.ports.itertuples(index=False):
        rate = rates.get((row.node, row.port))
        bits = float(row.tx_bytes * 8)
        if rate and (best is None or bits / rate > best[2] / best[1]):
            best = ((row.node, row.port), rate, bits)
    return best


def bottleneck_send_rate(d: RunData) -> float:
    """The bottleneck port's bits sent over the whole run (duration and drain)."""
    found = _bottleneck(d)
    return found[2] / _duration_s(d) if found else math.nan


def bottleneck_drops(d: RunData) -> float:
    """Packets the bottleneck port dropped (every cause)."""
    found = _bottleneck(d)
    if found is None:
        return math.nan
    if d.drops.empty:
        return 0.0
    (node, port), _, _ = found
    mine = d.drops[(d.drops["node"] == node) & (d.drops["port"] == port)]
    return float(mine["packets"].sum())


def tcp_bandwidth_share_pct(d: RunData) -> float:
    """The TCP flows' mean throughput over the bottleneck's rate (%): each
    flow's utilisation of the bandwidth."""
    found = _bottleneck(d)
    x = _tcp(d)["goodput_bps"].astype(float)
    if found is None or not len(x):
        return math.nan
    return 100.0 * float(x.mean()) / found[1]


def _tcp_means(d: RunData, column: str) -> pd.Series:
    """flow_means' `column` of the TCP flows (NaN for a flow never sampled)."""
    return (
        d.flow_means[column].reindex(_tcp(d)["flow"])
        if column in d.flow_means
        else pd.Series(dtype=float)
    )


def tcp_throughput_cov(d: RunData) -> float:
    """Each TCP flow's coefficient of variation of its throughput over the
    sample intervals (bytes acknowledged per interval), averaged over the flows."""
    return _mean(_tcp_means(d, "delivery_cov"))


def tcp_in_flight_cov(d: RunData) -> float:
    """Each TCP flow's coefficient of variation of its bytes in flight over
    the samples, averaged over the flows."""
    return _mean(_tcp_means(d, "in_flight_cov"))


def tcp_mean_in_flight(d: RunData) -> float:
    """Each TCP sender's bytes in flight averaged over the samples, averaged
    over the flows (bytes)."""
    return _mean(_tcp_means(d, "in_flight"))


def tcp_delivery_rate(d: RunData) -> float:
    """Each TCP sender's delivery rate, the bytes acknowledged per sample
    interval over the interval, averaged over time and over the flows (bit/s)."""
    return _mean(_tcp_means(d, "delivery_bps"))


def tcp_bdp_utilisation_pct(d: RunData) -> float:
    """Each TCP flow's mean bytes in flight over the bottleneck's
    bandwidth-delay product (its rate times the flow's smallest RTT sample),
    in percent, averaged over the flows."""
    found = _bottleneck(d)
    if found is None:
        return math.nan
    tcp = _tcp(d).set_index("flow")
    bdp = found[1] / 8 * tcp["tcp_min_rtt_ns"].astype(float) / 1e9
    flight = _tcp_means(d, "in_flight")
    return _mean(100.0 * flight / bdp.where(bdp > 0))


def tcp_recovery_ms(d: RunData) -> float:
    """Each TCP sender's mean loss-recovery length (the stack's time in
    recoveries that ended over their count, ms), averaged over the flows
    that recovered at least once; n/a without one (or from Mininet)."""
    tcp = _tcp(d)
    if "tcp_recovery_ns" not in tcp:
        return math.nan
    ended = tcp["tcp_recoveries_ended"].astype(float)
    mean = tcp["tcp_recovery_ns"].astype(float) / ended.where(ended > 0) / 1e6
    return _mean(mean)


def net_in_flight(d: RunData) -> float:
    """The network's bytes in flight: the TCP senders' mean bytes in flight
    summed (the flows are sampled at the same times, so this is the mean of
    their sum); n/a when a TCP flow was never sampled."""
    flight = _tcp_means(d, "in_flight")
    if not len(flight) or flight.isna().any():
        return math.nan
    return float(flight.sum())


def net_throughput(d: RunData) -> float:
    """The network's throughput: the bytes every flow's receiver got (TCP and
    UDP) over the whole run (duration and drain). Not the flows' goodputs
    summed: each is over its own active time, and a TCP sender drains its
    buffer after the UDP flows have stopped."""
    data = d.flows[d.flows["transport"] != "ping"]
    if data.empty:
        return math.nan
    return float(data["bytes_received"].astype(float).sum()) * 8 / _duration_s(d)


def net_utilisation_pct(d: RunData) -> float:
    """The network's throughput over the bottleneck's rate (%)."""
    found = _bottleneck(d)
    return 100.0 * net_throughput(d) / found[1] if found else math.nan


METRICS_E3: dict[str, Metric] = {
    "tcp_queueing_delay_ms": Metric(
        tcp_queueing_delay_ms, "ms", "lower", "TCP estimated queueing delay (sRTT - min RTT)"
    ),
    "tcp_owd_ms": Metric(tcp_owd_ms, "ms", "lower", "TCP one-way delay at the application"),
    "tcp_completion_s": Metric(
        tcp_completion_s, "s", "lower", "TCP flow completion time (first to last byte read)"
    ),
    "tcp_send_rate": Metric(tcp_send_rate, "bit/s", "higher", "TCP transport sending rate"),
    "tcp_app_send_rate": Metric(
        tcp_app_send_rate, "bit/s", "higher", "TCP application sending rate"
    ),
    "tcp_utility_pf": Metric(
        tcp_utility_pf, "", "higher", "proportional-fair utility (sum of log Mbit/s)"
    ),
    "tcp_utility_mpd": Metric(
        tcp_utility_mpd, "", "higher", "minimum-potential-delay utility (-sum of 1/Mbit/s)"
    ),
    "tcp_product_fairness": Metric(
        tcp_product_fairness, "", "higher", "product fairness (TCP throughput)"
    ),
    "tcp_bandwidth_share_pct": Metric(
        tcp_bandwidth_share_pct, "%", "higher", "TCP throughput of the bottleneck's bandwidth"
    ),
    "bottleneck_send_rate": Metric(
        bottleneck_send_rate, "bit/s", "higher", "bottleneck sending rate"
    ),
    "bottleneck_drops": Metric(bottleneck_drops, "packets", "lower", "bottleneck drops"),
    "tcp_throughput_cov": Metric(
        tcp_throughput_cov, "", "lower", "CoV of TCP throughput over time"
    ),
    "tcp_in_flight_cov": Metric(
        tcp_in_flight_cov, "", "lower", "CoV of TCP bytes in flight over time"
    ),
    # in flight beyond what keeps the link busy only waits in a queue: fewer is better
    "tcp_mean_in_flight": Metric(tcp_mean_in_flight, "bytes", "lower", "TCP bytes in flight"),
    "tcp_delivery_rate": Metric(tcp_delivery_rate, "bit/s", "higher", "TCP delivery rate"),
    "tcp_bdp_utilisation_pct": Metric(
        tcp_bdp_utilisation_pct, "%", "lower", "TCP bytes in flight of the bottleneck's BDP"
    ),
    "tcp_recovery_ms": Metric(tcp_recovery_ms, "ms", "lower", "TCP loss-recovery time"),
    "net_in_flight": Metric(net_in_flight, "bytes", "lower", "network bytes in flight"),
    "net_throughput": Metric(net_throughput, "bit/s", "higher", "network throughput"),
    "net_utilisation_pct": Metric(
        net_utilisation_pct, "%", "higher", "network throughput of the bottleneck's bandwidth"
    ),
}
