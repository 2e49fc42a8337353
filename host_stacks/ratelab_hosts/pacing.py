"""Pacing without a window: ``Pacer`` is the Rust pacer of host_stacks/rbcc
(module ``ratelab_hoststack``): after an anchor, a packet with B bytes sent
before it leaves at ``anchor + ceil(B * 10^6 / rate)`` us; a rate change
re-anchors at the last departure; a caller late by more than one interval
(and ``max_lateness_us``) restarts the schedule (``restarts``, ``lost_us``).
``ceil_div`` and ``US_PER_S`` are the integer helpers the UDP and TCP
schedules share (units.py).
"""

from ratelab_hoststack import Pacer

from ratelab_hosts.units import US_PER_S, ceil_div

__all__ = ["US_PER_S", "Pacer", "ceil_div"]
