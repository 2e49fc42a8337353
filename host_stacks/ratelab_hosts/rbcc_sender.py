"""The TRUMP-style RBCC sender (RBCC.md "Hosts"): the Rust state machine of
host_stacks/rbcc (crate ratelab-rbcc-host) through its Python binding
``ratelab_hoststack``. host_stacks/README.md "Protocol decisions" describes it.

``SenderConfig(desired_rate, initial_rate, size=1000, segments=None,
duration_us=None, flow_id=1, adopt_synack_rate=False, syn_interval_us=1 s,
give_up_us=30 s, max_lateness_us=1 ms)`` raises ValueError (one line) on bad
values. ``RbccSender(config, now_us)``: ``poll_at()``, ``on_timer(now_us)``
and ``on_datagram(now_us, data)`` (lists of datagrams to send), ``state``
(a ``SenderState``), ``error``, ``rate``, ``return_rate``,
``return_bottle_node``, ``done``, ``metrics`` (a live view of the counters,
``rates`` a list of ``RateSample``) and ``summary()``.
"""

from ratelab_hoststack import RateSample, RbccSender, SenderConfig, SenderMetrics, SenderState

__all__ = ["RateSample", "RbccSender", "SenderConfig", "SenderMetrics", "SenderState"]
