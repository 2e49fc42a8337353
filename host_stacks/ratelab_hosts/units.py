"""Command-line values: rates, durations, addresses. Errors are ValueError with
a message fit to show the user as is."""

from __future__ import annotations

import ipaddress
import re

# tc(8) conventions: bits per second unless the unit says bytes; SI prefixes.
_RATE_UNITS = {
    "": 1 / 8,
    "bit": 1 / 8,
    "kbit": 1e3 / 8,
    "mbit": 1e6 / 8,
    "gbit": 1e9 / 8,
    "b/s": 1,
    "kb/s": 1e3,
    "mb/s": 1e6,
    "gb/s": 1e9,
}
_NUMBER = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*([a-zA-Z/]*)\s*$")

MAX_RATE = 0xFFFFFFFE  # 0xFFFFFFFF means "unlimited" in the RBCC header
US_PER_S = 1_000_000


def ceil_div(a: int, b: int) -> int:
    """ceil(a / b) in exact integer arithmetic (schedules in microseconds)."""
    return -(-a // b)


def parse_rate(text: str) -> int:
    """'1mbit' -> 125000 bytes/s. Units: bit, kbit, mbit, gbit (bits/s, the
    default), B/s, kB/s, MB/s, GB/s (bytes/s), case-insensitive. Decimal (SI)
    prefixes, as tc(8) uses them."""
    match = _NUMBER.match(text)
    unit = match.group(2).lower() if match else ""
    if match is None or unit not in _RATE_UNITS:
        raise ValueError(f"not a rate: {text!r} (examples: 800kbit, 2mbit, 125000B/s)")
    value = round(float(match.group(1)) * _RATE_UNITS[unit])
    if not 1 <= value <= MAX_RATE:
        raise ValueError(f"rate {text!r} out of range (1 B/s to {MAX_RATE} B/s)")
    return value


def parse_seconds(text: str) -> int:
    """'1.5' or '1.5s' or '200ms' -> microseconds (>= 0)."""
    match = re.match(r"^\s*([0-9]*\.?[0-9]+)\s*(s|ms|us)?\s*$", text)
    if match is None:
        raise ValueError(f"not a duration: {text!r} (examples: 3, 1.5s, 200ms)")
    scale = {"s": 1_000_000, None: 1_000_000, "ms": 1_000, "us": 1}[match.group(2)]
    return round(float(match.group(1)) * scale)


def parse_ipv4(text: str) -> str:
    try:
        return str(ipaddress.IPv4Address(text))
    except ValueError:
        raise ValueError(f"not an IPv4 address: {text!r}") from None


def parse_source(text: str) -> tuple[str, int | None]:
    """'10.0.1.2' -> ('10.0.1.2', None); '10.0.1.2:40001' -> ('10.0.1.2', 40001)."""
    if ":" not in text:
        return parse_ipv4(text), None
    host, _, port = text.rpartition(":")
    if not port.isdigit() or not 1 <= int(port) <= 65535:
        raise ValueError(f"not IP or IP:PORT: {text!r} (example: 10.0.1.2 or 10.0.1.2:40001)")
    return parse_ipv4(host), int(port)


def parse_endpoint(text: str) -> tuple[str, int]:
    """'10.0.0.2:5001' -> ('10.0.0.2', 5001)."""
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit() or not 1 <= int(port) <= 65535:
        raise ValueError(f"not IP:PORT: {text!r} (example: 10.0.0.2:5001)")
    return parse_ipv4(host), int(port)
