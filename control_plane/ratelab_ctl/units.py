"""Parsers for the values a router configuration file holds: rates, delays, MACs,
IPv4 addresses and prefixes, integers and decimals.

Each parser takes the scalar's text exactly as written and raises `ValueError`
whose message says what was expected; the loader adds the file position.
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation

_RATE_UNITS = {"bit": 1, "kbit": 10**3, "mbit": 10**6, "gbit": 10**9}
_DELAY_UNITS_US = {"us": Decimal(1), "ms": Decimal(1000), "s": Decimal(1_000_000)}
_NUMBER_UNIT = re.compile(r"^\s*([0-9]+(?:\.[0-9]+)?)\s*([a-z]*)\s*$")
_MAC = re.compile(r"^[0-9a-fA-F]{2}(?::[0-9a-fA-F]{2}){5}$")

RATE_EXPECTED = "a link rate like 160kbit, 10mbit or 1gbit (bit/s; units bit, kbit, mbit, gbit)"
DELAY_EXPECTED = "a delay like 250ms, 1s or 500us"


def parse_int(text: str, expected: str = "an integer") -> int:
    """A decimal or 0x-prefixed hexadecimal integer (underscores allowed)."""
    t = text.strip().replace("_", "")
    try:
        if t.lower().startswith(("0x", "-0x")):
            return int(t, 16)
        if not re.fullmatch(r"-?[0-9]+", t):
            raise ValueError
        return int(t, 10)
    except ValueError:
        raise ValueError(f"expected {expected}, got {text!r}") from None


def parse_decimal(text: str, expected: str = "a decimal number") -> Decimal:
    t = text.strip()
    if not re.fullmatch(r"-?[0-9]+(\.[0-9]*)?|-?\.[0-9]+", t):
        raise ValueError(f"expected {expected}, got {text!r}")
    try:
        return Decimal(t)
    except InvalidOperation:
        raise ValueError(f"expected {expected}, got {text!r}") from None


def parse_rate(text: str) -> int:
    """Link rate in bit/s. "unlimited" (or 0) means the port is not rate limited."""
    t = text.strip().lower()
    if t == "unlimited":
        return 0
    m = _NUMBER_UNIT.match(t)
    if m is None or (m.group(2) not in _RATE_UNITS and m.group(2) != ""):
        raise ValueError(f"expected {RATE_EXPECTED}, got {text!r}")
    unit = _RATE_UNITS[m.group(2) or "bit"]
    value = Decimal(m.group(1)) * unit
    if value != value.to_integral_value():
        raise ValueError(f"expected a whole number of bit/s, got {text!r}")
    return int(value)


def format_rate(bps: int) -> str:
    if bps == 0:
        return "unlimited"
    for unit, scale in (("gbit", 10**9), ("mbit", 10**6), ("kbit", 10**3)):
        if bps % scale == 0:
            return f"{bps // scale}{unit}"
    return f"{bps}bit"


def parse_delay_us(text: str) -> int:
    """A delay in whole microseconds; a bare number is microseconds."""
    t = text.strip().lower()
    m = _NUMBER_UNIT.match(t)
    if m is None or (m.group(2) not in _DELAY_UNITS_US and m.group(2) != ""):
        raise ValueError(f"expected {DELAY_EXPECTED}, got {text!r}")
    value = Decimal(m.group(1)) * _DELAY_UNITS_US[m.group(2) or "us"]
    if value != value.to_integral_value():
        raise ValueError(f"expected a whole number of microseconds, got {text!r}")
    return int(value)


def parse_mac(text: str) -> bytes:
    t = text.strip()
    if not _MAC.match(t):
        raise ValueError(f"expected a MAC address like 02:00:00:00:00:01, got {text!r}")
    return bytes(int(b, 16) for b in t.split(":"))


def format_mac(mac: bytes) -> str:
    return ":".join(f"{b:02x}" for b in mac)


def parse_ipv4(text: str) -> int:
    parts = text.strip().split(".")
    if len(parts) != 4 or not all(re.fullmatch(r"[0-9]{1,3}", p) for p in parts):
        raise ValueError(f"expected an IPv4 address like 10.0.0.1, got {text!r}")
    octets = [int(p) for p in parts]
    if any(o > 255 for o in octets):
        raise ValueError(f"expected an IPv4 address like 10.0.0.1, got {text!r}")
    return int.from_bytes(bytes(octets), "big")


def format_ipv4(value: int) -> str:
    return ".".join(str(b) for b in value.to_bytes(4, "big"))


def parse_prefix(text: str) -> tuple[int, int]:
    """An IPv4 prefix "a.b.c.d/len" with its host bits zero, as (address, length)."""
    expected = "an IPv4 prefix like 10.0.1.0/24"
    addr, sep, length = text.strip().partition("/")
    if not sep or not re.fullmatch(r"[0-9]{1,2}", length):
        raise ValueError(f"expected {expected}, got {text!r}")
    try:
        value = parse_ipv4(addr)
    except ValueError:
        raise ValueError(f"expected {expected}, got {text!r}") from None
    n = int(length)
    if n > 32:
        raise ValueError(f"expected a prefix length 0..32, got /{n}")
    mask = (0xFFFFFFFF << (32 - n)) & 0xFFFFFFFF
    if value & ~mask & 0xFFFFFFFF:
        raise ValueError(
            f"expected the host bits beyond /{n} to be zero "
            f"(did you mean {format_ipv4(value & mask)}/{n}?)"
        )
    return value, n
