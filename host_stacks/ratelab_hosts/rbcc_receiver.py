"""The TRUMP-style RBCC receiver (RBCC.md "Hosts"): the Rust state machine of
host_stacks/rbcc (crate ratelab-rbcc-host) through its Python binding
``ratelab_hoststack``.

``RbccReceiver(flow_id)`` answers every data packet, SYN and FIN with one
ACK (``on_datagram(now_us, data)`` returns it in a list), delivers data in
order (``take_delivered()``: (segment, payload) pairs), reports missing
ranges (``missing()``) and counts losses exactly (``lost``); ``state`` is a
``ReceiverState``, ``metrics`` a live view (``rates``: ``EchoSample``s),
``summary()`` the per-flow results. ``RbccListener()`` keeps one receiver
per (source address, flow id), opened by a SYN: ``on_datagram(now_us, src,
data)``, ``flows``, ``take_delivered()``.
"""

from ratelab_hoststack import (
    EchoSample,
    RbccListener,
    RbccReceiver,
    ReceiverMetrics,
    ReceiverState,
)

__all__ = ["EchoSample", "RbccListener", "RbccReceiver", "ReceiverMetrics", "ReceiverState"]
