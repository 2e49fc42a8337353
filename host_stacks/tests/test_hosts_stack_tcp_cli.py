"""tcp-send --stack ratelab's bad input: one line on stderr naming the option,
exit status 2, no traceback, before any packet (the addresses below are
never contacted); the ratelab-only options are bad input with --stack kernel."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from ratelab_hosts.cli import _stack_options, build_parser, main
from ratelab_hoststack import TcpConfig

HOST_STACKS = Path(__file__).resolve().parents[1]
SEND = ["tcp-send", "--dst", "10.0.0.2:9"]
RATELAB = [*SEND, "--stack", "ratelab", "--src", "10.0.1.2"]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        ([*RATELAB, "--cc", "bbr"], '--cc: unknown algorithm "bbr" (expected reno, newreno,'),
        ([*RATELAB, "--cc", "Reno"], '--cc: unknown algorithm "Reno"'),
        ([*RATELAB, "--cc", "reno", "--iw", "0"], "--iw: must be 1 to 1000 segments, got 0"),
        ([*RATELAB, "--cc", "reno", "--iw", "-4"], "--iw: must be 1 to 1000 segments, got -4"),
        ([*RATELAB, "--cc", "reno", "--iw", "1001"], "--iw: must be 1 to 1000 segments, got 1001"),
        ([*RATELAB, "--cc", "reno", "--iw", "ten"], "argument --iw: not a whole number: 'ten'"),
        (
            [*RATELAB, "--cc", "reno", "--initial-rto", "0"],
            "--initial-rto: must be 1 ms to 60 s, got 0 ms",
        ),
        (
            [*RATELAB, "--cc", "reno", "--initial-rto", "61s"],
            "--initial-rto: must be 1 ms to 60 s, got 61000 ms",
        ),
        ([*RATELAB, "--cc", "reno", "--initial-rto", "-1"], "argument --initial-rto: not a dur"),
        (
            [*RATELAB, "--cc", "reno", "--min-rto", "500us"],
            "--min-rto: must be 1 ms to 60 s, got 0.5 ms",
        ),
        ([*SEND, "--stack", "ratelab", "--cc", "reno"], "--stack ratelab needs --src"),
        ([*SEND, "--stack", "quic", "--cc", "reno"], "argument --stack: invalid choice: 'quic'"),
        ([*RATELAB, "--cc", "reno", "--src", "10.0.1"], "argument --src: not an IPv4 address"),
        (
            [*RATELAB, "--cc", "reno", "--src", "10.0.1.2:0"],
            "argument --src: not IP or IP:PORT: '10.0.1.2:0'",
        ),
        (
            [*RATELAB, "--cc", "reno", "--src", "10.0.1.2:65536"],
            "argument --src: not IP or IP:PORT: '10.0.1.2:65536'",
        ),
        ([*RATELAB, "--cc", "reno", "--src", "10.0.1.2:x"], "argument --src: not IP or IP:PORT"),
        ([*RATELAB, "--cc", "reno", "--src", "10.0.1:80"], "argument --src: not an IPv4 address"),
        (
            [*RATELAB, "--cc", "reno", "--rto-formula", "bsd"],
            "argument --rto-formula: invalid choice: 'bsd' (choose from",
        ),
        ([*SEND, "--cc", "reno", "--rto-formula", "linux"], "--rto-formula goes with --stack"),
        ([*RATELAB, "--cc", "reno", "--pattern", "stream"], "needs --rate"),
        ([*SEND, "--cc", "reno", "--iw", "10"], "--iw goes with --stack ratelab only"),
        ([*SEND, "--cc", "reno", "--initial-rto", "1s"], "--initial-rto goes with --stack ratelab"),
        ([*SEND, "--cc", "reno", "--min-rto", "1s"], "--min-rto goes with --stack ratelab only"),
        ([*SEND, "--cc", "reno", "--no-sack"], "--no-sack goes with --stack ratelab only"),
        ([*SEND, "--cc", "reno", "--no-delayed-ack"], "--no-delayed-ack goes with --stack ratelab"),
        ([*SEND, "--cc", "reno", "--prr"], "--prr goes with --stack ratelab only"),
        ([*SEND, "--cc", "cubic", "--hystart"], "--hystart goes with --stack ratelab only"),
        ([*SEND, "--cc", "reno", "--src", "10.0.1.2"], "--src goes with --stack ratelab only"),
        ([*SEND, "--cc", "reno", "--send-buffer", "auto"], "--send-buffer goes with --stack rat"),
        (
            [*RATELAB, "--cc", "reno", "--send-buffer", "big"],
            "argument --send-buffer: expected auto or a size in bytes, got 'big'",
        ),
        (
            [*RATELAB, "--cc", "reno", "--send-buffer", "100"],
            "--send-buffer: must be 2*mss (2920) to 1 GiB, got 100",
        ),
        (
            [*SEND, "--stack", "kernel", "--cc", "reno", "--iw", "3"],
            "--iw goes with --stack ratelab only",
        ),
    ],
)
def test_bad_input_is_one_line_naming_the_option_and_status_2(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert len(err.splitlines()) == 1, err
    assert err.startswith("ratelab_hosts: error: ") and message in err, err


def test_module_entry_point_reports_without_traceback() -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HOST_STACKS), *sys.path])}
    proc = subprocess.run(
        [sys.executable, "-m", "ratelab_hosts", *RATELAB, "--cc", "vegas", "--iw", "5000"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr == "ratelab_hosts: error: --iw: must be 1 to 1000 segments, got 5000\n"


def test_rto_formula_reaches_the_stack_config() -> None:
    for formula in ("linux", "rfc6298"):
        args = build_parser().parse_args([*RATELAB, "--cc", "reno", "--rto-formula", formula])
        options = _stack_options(args)
        assert options["rto_formula"] == formula
        assert TcpConfig(**options).rto_formula == formula  # type: ignore[arg-type]
    args = build_parser().parse_args([*RATELAB, "--cc", "reno"])
    assert "rto_formula" not in _stack_options(args)
    assert TcpConfig().rto_formula == "rfc6298"


def test_src_takes_an_optional_port() -> None:
    parse = build_parser().parse_args
    assert parse([*SEND, "--cc", "reno", "--src", "10.0.1.2"]).src == ("10.0.1.2", None)
    assert parse([*SEND, "--cc", "reno", "--src", "10.0.1.2:40001"]).src == ("10.0.1.2", 40001)


def test_hystart_reaches_the_stack_config() -> None:
    args = build_parser().parse_args([*RATELAB, "--cc", "cubic", "--hystart"])
    options = _stack_options(args)
    assert TcpConfig(**options).hystart is True  # type: ignore[arg-type]
    args = build_parser().parse_args([*RATELAB, "--cc", "cubic"])
    assert TcpConfig(**_stack_options(args)).hystart is False  # type: ignore[arg-type]


def test_send_buffer_reaches_the_stack_config() -> None:
    args = build_parser().parse_args([*RATELAB, "--cc", "reno", "--send-buffer", "300000"])
    config = TcpConfig(**_stack_options(args))  # type: ignore[arg-type]
    assert (config.send_buffer_policy, config.send_buffer) == ("fixed", 300_000)
    for argv in ([*RATELAB, "--cc", "reno", "--send-buffer", "auto"], [*RATELAB, "--cc", "reno"]):
        config = TcpConfig(**_stack_options(build_parser().parse_args(argv)))  # type: ignore[arg-type]
        assert (config.send_buffer_policy, config.send_buffer) == ("auto", 4 << 20)
