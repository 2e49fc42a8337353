import pytest
from ratelab_hosts.units import parse_endpoint, parse_ipv4, parse_rate, parse_seconds


@pytest.mark.parametrize(
    ("text", "bytes_per_s"),
    [
        ("1mbit", 125_000),
        ("2Mbit", 250_000),
        ("800kbit", 100_000),
        ("1.5gbit", 187_500_000),
        ("8000", 1_000),
        ("8000bit", 1_000),
        ("125000B/s", 125_000),
        ("1.25kB/s", 1_250),
        ("2MB/s", 2_000_000),
    ],
)
def test_parse_rate(text: str, bytes_per_s: int) -> None:
    assert parse_rate(text) == bytes_per_s


@pytest.mark.parametrize("text", ["", "fast", "1 furlong", "-1mbit", "0", "4bit", "35gbit"])
def test_parse_rate_rejects(text: str) -> None:
    with pytest.raises(ValueError):
        parse_rate(text)


@pytest.mark.parametrize(
    ("text", "us"), [("3", 3_000_000), ("1.5s", 1_500_000), ("200ms", 200_000), ("7us", 7)]
)
def test_parse_seconds(text: str, us: int) -> None:
    assert parse_seconds(text) == us


def test_parse_addresses() -> None:
    assert parse_ipv4("10.0.0.1") == "10.0.0.1"
    assert parse_endpoint("10.0.0.2:5001") == ("10.0.0.2", 5001)
    for bad in ("10.0.0", "10.0.0.256", "::1"):
        with pytest.raises(ValueError):
            parse_ipv4(bad)
    for bad in ("10.0.0.2", "10.0.0.2:0", "10.0.0.2:65536", "10.0.0.2:x", "x:1"):
        with pytest.raises(ValueError):
            parse_endpoint(bad)
    with pytest.raises(ValueError):
        parse_seconds("soon")
