"""ratelab's rate-based host stack: sans-IO RBCC (TRUMP-style) sender and
receiver (Rust, crate ratelab-rbcc-host, through the ``ratelab_hoststack``
binding), UDP traffic sources and sink, and drivers over Linux sockets.

The state machines never read a clock or touch a socket: time is passed in
as integer microseconds, outputs are datagrams, and ``poll_at()`` says when
the caller must come back (STYLE.md "Transport stacks").
"""
