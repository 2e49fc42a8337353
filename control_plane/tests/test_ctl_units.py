"""Value parsers of the configuration file."""

from __future__ import annotations

import pytest
from ratelab_ctl import units


@pytest.mark.parametrize(
    ("text", "bps"),
    [
        ("160kbit", 160_000),
        ("10mbit", 10_000_000),
        ("1gbit", 10**9),
        ("1.5mbit", 1_500_000),
        ("2 Mbit", 2_000_000),
        ("9600", 9600),
        ("9600bit", 9600),
        ("unlimited", 0),
    ],
)
def test_rates(text: str, bps: int) -> None:
    assert units.parse_rate(text) == bps


@pytest.mark.parametrize("text", ["10mbps", "10MB", "fast", "-1mbit", "1.0000001bit", ""])
def test_bad_rates(text: str) -> None:
    with pytest.raises(ValueError, match="expected"):
        units.parse_rate(text)


def test_format_rate() -> None:
    assert [units.format_rate(r) for r in (0, 160_000, 10**7, 10**9, 1_500_000, 999)] == [
        "unlimited", "160kbit", "10mbit", "1gbit", "1500kbit", "999bit"
    ]  # fmt: skip


def test_delays() -> None:
    assert units.parse_delay_us("250ms") == 250_000
    assert units.parse_delay_us("1s") == 1_000_000
    assert units.parse_delay_us("0.5s") == 500_000
    assert units.parse_delay_us("500us") == 500
    assert units.parse_delay_us("42") == 42
    for bad in ("1min", "1.5us", "soon"):
        with pytest.raises(ValueError):
            units.parse_delay_us(bad)


def test_addresses() -> None:
    assert units.parse_mac("02:00:00:00:0A:ff") == bytes.fromhex("020000000aff")
    assert units.format_mac(bytes.fromhex("020000000aff")) == "02:00:00:00:0a:ff"
    assert units.parse_ipv4("10.0.0.1") == 0x0A000001
    assert units.format_ipv4(0x0A000001) == "10.0.0.1"
    assert units.parse_prefix("10.0.1.0/24") == (0x0A000100, 24)
    assert units.parse_prefix("0.0.0.0/0") == (0, 0)
    assert units.parse_prefix("10.0.1.7/32") == (0x0A000107, 32)
    for bad in ("10.0.1.0", "10.0.1.0/33", "10.0.1/24", "10.0.256.0/24", "10.0.1.0/x"):
        with pytest.raises(ValueError, match="expected"):
            units.parse_prefix(bad)
    with pytest.raises(ValueError, match=r"did you mean 10\.0\.0\.0/8\?"):
        units.parse_prefix("10.0.1.0/8")


def test_integers_and_decimals() -> None:
    assert units.parse_int("0x10") == 16
    assert units.parse_int("1_000") == 1000
    assert str(units.parse_decimal("0.002")) == "0.002"
    for bad in ("1e3", "0.1.2", "nan"):
        with pytest.raises(ValueError):
            units.parse_decimal(bad)
    with pytest.raises(ValueError):
        units.parse_int("12abc")
