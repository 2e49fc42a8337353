"""Command-line input errors: one line on stderr, exit status 2, no traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from ratelab_hosts import tcp_driver
from ratelab_hosts.cli import main

HOST_STACKS = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        ([], "required: command"),
        (["fly"], "invalid choice"),
        (["rbcc-send", "--rate", "1mbit"], "required: --dst"),
        (["rbcc-send", "--dst", "10.0.0", "--rate", "1mbit"], "not an IPv4 address"),
        (["rbcc-send", "--dst", "10.0.0.2", "--rate", "quick"], "not a rate"),
        (["rbcc-send", "--dst", "10.0.0.2", "--rate", "1mbit", "--size", "20"], "size must be"),
        (["rbcc-send", "--dst", "10.0.0.2", "--rate", "1mbit", "--duration", "x"], "duration"),
        (["rbcc-send", "--dst", "10.0.0.2", "--rate", "1mbit", "--flow-id", "0"], "flow-id"),
        (
            ["rbcc-send", "--dst", "10.0.0.2", "--rate", "1mbit", "--json-out", "/no/such/x"],
            "/no/such",
        ),
        (["rbcc-recv", "--listen", "10.0.0.1", "--emulate-loss", "1.5"], "emulate-loss"),
        (["rbcc-recv", "--listen", "10.0.0.1", "--flows", "-1"], "--flows"),
        (["udp-send", "--dst", "10.0.0.2", "--rate", "1mbit"], "IP:PORT"),
        (["udp-send", "--dst", "10.0.0.2:9", "--rate", "1mbit", "--on", "1"], "on and off"),
        (["udp-send", "--dst", "10.0.0.2:9", "--rate", "1mbit", "--size", "30"], "size must be"),
        (["udp-send", "--dst", "10.0.0.2:9", "--rate", "1mbit", "--seed", "-1"], "seed must be"),
        (
            ["udp-send", "--dst", "10.0.0.2:9", "--rate", "1mbit", "--on", "0", "--off", "1"],
            "on must be > 0",
        ),
        (["udp-sink", "--listen", "10.0.0.2:70000"], "IP:PORT"),
        (["udp-sink", "--listen", "10.0.0.2:9", "--bogus"], "unrecognized"),
        (["tcp-send", "--dst", "10.0.0.2", "--cc", "reno"], "not IP:PORT"),
        (["tcp-send", "--dst", "10.0.0.2:9"], "required: --cc"),
        (["tcp-send", "--dst", "10.0.0.2:9", "--cc", "reno", "--duration", "-1"], "duration"),
        (["tcp-send", "--dst", "10.0.0.2:9", "--cc", "reno", "--duration", "0"], "duration"),
        (["tcp-send", "--dst", "10.0.0.2:9", "--cc", "reno", "--bytes", "-5"], "--bytes"),
        (
            ["tcp-send", "--dst", "10.0.0.2:9", "--cc", "reno", "--pattern", "onoff"],
            "--pattern onoff needs --on and --off",
        ),
        (
            ["tcp-send", "--dst", "10.0.0.2:9", "--cc", "reno", "--pattern", "onoff", "--on", "1"],
            "--pattern onoff needs --on and --off",
        ),
        (
            ["tcp-send", "--dst", "10.0.0.2:9", "--cc", "reno", "--pattern", "stream"],
            "needs --rate",
        ),
        (["tcp-send", "--dst", "10.0.0.2:9", "--cc", "reno", "--rate", "1mbit"], "stream only"),
        (["tcp-send", "--dst", "10.0.0.2:9", "--cc", "reno", "--pattern", "x"], "invalid choice"),
        (
            ["tcp-send", "--dst", "10.0.0.2:9", "--cc", "reno", "--sample-interval", "0"],
            "sample interval",
        ),
        (["tcp-sink", "--listen", "10.0.0.2"], "not IP:PORT"),
        (["tcp-sink", "--listen", "10.0.0.2:9", "--idle", "-1"], "--idle"),
    ],
)
def test_bad_input_is_one_line_and_status_2(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert len(err.splitlines()) == 1, err
    assert err.startswith("ratelab_hosts: error: ") and message in err


def test_module_entry_point_reports_without_traceback() -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HOST_STACKS), *sys.path])}
    proc = subprocess.run(
        [sys.executable, "-m", "ratelab_hosts", "udp-send", "--dst", "nowhere", "--rate", "1mbit"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr == (
        "ratelab_hosts: error: argument --dst: not IP:PORT: 'nowhere' (example: 10.0.0.2:5001)\n"
    )


@pytest.mark.parametrize("cc", ["vegas", "no-such-cc"])
def test_congestion_control_the_kernel_lacks_is_refused_with_what_it_offers(
    cc: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    available = tmp_path / "tcp_available_congestion_control"
    available.write_text("reno cubic bbr\n")
    monkeypatch.setattr(tcp_driver, "AVAILABLE_CC", str(available))
    # 10.0.0.2:9 is never contacted: the check comes before any socket
    assert main(["tcp-send", "--dst", "10.0.0.2:9", "--cc", cc]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err == (
        f"ratelab_hosts: error: --cc {cc}: not available in this kernel"
        " (available: reno cubic bbr)\n"
    )
