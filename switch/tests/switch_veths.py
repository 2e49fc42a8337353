"""Veth pairs and raw sockets for the tests that run the daemon on real interfaces."""

from __future__ import annotations

import contextlib
import os
import socket
from collections.abc import Iterator

import pytest
from ratelab_sim import HarnessError, VethPair, unique_prefix


def veth_pairs(count: int) -> Iterator[list[tuple[str, str]]]:
    """`count` veth pairs (switch side, host side) from ratelab_sim's harness: up, IPv6
    and offloads off, names unique to this process, removed afterwards. Skips the test
    without root or where veth pairs cannot be made. Yield from it in a fixture."""
    if os.geteuid() != 0:
        pytest.skip("needs root to create veth pairs")
    tag = unique_prefix()
    pairs = [(f"{tag}s{i}", f"{tag}h{i}") for i in range(1, count + 1)]
    with contextlib.ExitStack() as stack:
        for a, b in pairs:
            try:
                stack.enter_context(VethPair(a, b))
            except HarnessError as e:
                pytest.skip(f"cannot create veth pairs here: {e}")
        yield pairs


def raw_socket(iface: str) -> socket.socket:
    """An AF_PACKET socket bound to `iface` that sends and receives every protocol."""
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x0003))
    s.bind((iface, 0))
    return s
