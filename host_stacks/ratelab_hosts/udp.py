"""UDP traffic: constant bit rate and Poisson sources with optional on-off
patterns, and a sink that counts what arrives. The Rust machines of
host_stacks/stack (crate ratelab-stack, module ``udp``) through the binding
``ratelab_hoststack``; host_stacks/README.md "UDP" describes them.

``UdpSourceConfig(rate, size=1000, duration_us=1 s, poisson=False, seed=1,
on_us=None, off_us=None, flow_id=1)``: ``rate`` in B/s of IPv4 datagrams
while on, ``size`` the IPv4 total length (48..65535); ValueError (one line)
on bad values. ``UdpSource(config, now_us)``: ``poll_at()``,
``on_timer(now_us)`` (the UDP payloads due, stamped with ``now_us``),
``done``, ``packets_sent``, ``bytes_sent`` (IPv4 bytes), ``summary()``.
``UdpSink(now_us)``: ``on_datagram(now_us, src, payload)``, ``malformed``,
``summary()`` (one dict per source address and flow id).

Each payload starts with the probe header (wire.py ``udp_probe``: flow id,
sequence number, send time in ns), then zeros.
"""

from ratelab_hoststack import UdpSink, UdpSource, UdpSourceConfig

__all__ = ["UdpSink", "UdpSource", "UdpSourceConfig"]
