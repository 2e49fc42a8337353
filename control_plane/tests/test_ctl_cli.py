"""`ratelab-ctl`: exit codes, one-line messages, and what reaches the switch."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import pytest
from ctl_support import Compiled
from finsy.proto.p4.v1 import p4runtime_pb2
from p4rt_double import FakeServer
from ratelab_ctl.cli import main


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def push_args(server: FakeServer, compiled: Compiled, config: Path) -> list[str]:
    return [
        "push",
        "--addr",
        server.address,
        "--json",
        str(compiled.json),
        "--p4info",
        str(compiled.p4info),
        str(config),
    ]


def test_check(capsys, example_path: Path, compiled: Compiled) -> None:
    code, out, err = run(capsys, "check", str(example_path))
    assert (code, err) == (0, "")
    assert out == (f"{example_path}: ok: 3 ports, 3 next hops, 3 routes, 1580 table entries\n")
    code, out, _ = run(capsys, "check", str(example_path), "--p4info", str(compiled.p4info))
    assert code == 0 and out.rstrip().endswith(f"fits {compiled.p4info}")


def test_check_errors_are_one_line(capsys, example_path: Path, tmp_path: Path, compiled) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(example_path.read_text().replace("aqm: {preset: redok-hspa", "aqm: {preset: x"))
    code, out, err = run(capsys, "check", str(bad))
    assert (code, out) == (2, "")
    assert err == (
        f"{bad}:37:19: error: ports.3.aqm.preset: expected one of red-edge, red-hspa, red-lte, "
        "redok-edge, redok-hspa, redok-lte, got 'x'\n"
    )
    code, _, err = run(
        capsys, "check", str(example_path), "--set", "rbcc.abt_slots=256", "--p4info",
        str(compiled.p4info),
    )  # fmt: skip
    assert code == 2
    assert err == (
        "<command line>:1:16: error: rbcc.abt_slots: expected the compiled program's ABT_SLOTS "
        "(1024), got 256\n"
    )
    code, _, err = run(capsys, "frobnicate")
    assert code == 2 and err.count("\n") == 1 and err.startswith("ratelab-ctl: error: ")
    code, _, err = run(capsys, "check", str(example_path), "--p4info", str(tmp_path / "no"))
    assert (
        code == 2
        and err
        == f"ratelab-ctl: error: {tmp_path / 'no'}: cannot read P4Info: No such file or directory\n"
    )


def test_no_traceback_from_the_command(example_path: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("router_id: 1\nports: {1: {mac: x, rate: 1gbit, queue_limit: 1}}\n")
    result = subprocess.run(
        [sys.executable, "-m", "ratelab_ctl", "check", str(bad)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2
    assert result.stderr == (
        f"{bad}:2:18: error: ports.1.mac: expected a MAC address like 02:00:00:00:00:01, got 'x'\n"
    )


def test_push(capsys, fake_switch: FakeServer, compiled: Compiled, example_path: Path) -> None:
    code, out, err = run(capsys, *push_args(fake_switch, compiled, example_path))
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert lines[0] == f"connected to {fake_switch.address} (device 0, primary)"
    assert lines[1].startswith(f"pipeline pushed to {fake_switch.address} (")
    assert lines[2] == (
        "configuration applied: 1 modify, 1579 insert "
        "(ipv4_lpm, port_config, recip, red_decay, router_config)"
    )
    assert len(fake_switch.servicer.pipelines) == 1
    assert len(fake_switch.servicer.updates()) == 1580


def test_push_writes_nothing_on_a_bad_config(
    capsys, fake_switch: FakeServer, compiled: Compiled, example_path: Path, tmp_path: Path
) -> None:
    for text in (
        example_path.read_text().replace("10.0.3.0/24: receiver", "10.0.3.0/24: nobody"),
        example_path.read_text().replace("abt_slots: 1024", "abt_slots: 2048"),
        example_path.read_text().replace("  3:\n", "  99:\n").replace("port: 3,", "port: 99,"),
    ):
        bad = tmp_path / "bad.yaml"
        bad.write_text(text)
        code, out, err = run(capsys, *push_args(fake_switch, compiled, bad))
        assert code == 2 and out == "" and err.count("\n") == 1
        assert err.startswith(f"{bad}:")
    assert fake_switch.servicer.pipelines == [] and fake_switch.servicer.writes == []
    code, _, err = run(
        capsys, *push_args(fake_switch, compiled, example_path)[:-3], "x", str(example_path)
    )
    assert code == 2 and err.startswith("ratelab-ctl: error: ") and err.count("\n") == 1
    assert fake_switch.servicer.pipelines == []


def test_set_and_apply(
    capsys, fake_switch: FakeServer, compiled: Compiled, example_path: Path, tmp_path: Path
) -> None:
    assert run(capsys, *push_args(fake_switch, compiled, example_path))[0] == 0
    fake = fake_switch.servicer
    n = len(fake.writes)
    code, out, err = run(
        capsys, "set", "--addr", fake_switch.address, "--dry-run", str(example_path),
        "ports.3.utilisation=0.5",
    )  # fmt: skip
    assert (code, err) == (0, "")
    assert out.splitlines() == [
        "  modify RouterIngress.port_config 3 -> set_port(mac=02:00:00:00:00:03, "
        "rbcc_capacity=625000, queue_limit=68, red_enabled=1, wq16=1311, th_min16=196608, "
        "th_max16=3276800, slope=59398483, s_recip=3579139, seed=7)",
        "dry run: 1 modify (nothing written)",
    ]
    assert len(fake.writes) == n
    code, out, _ = run(
        capsys, "set", "--addr", fake_switch.address, str(example_path), "ports.3.utilisation=0.5"
    )
    assert code == 0 and out.splitlines()[-1] == f"{fake_switch.address}: 1 modify"
    (u,) = fake.writes[-1].updates
    assert u.type == p4runtime_pb2.Update.MODIFY
    # a changed file: the switch's state is the "old" side of the diff
    changed = tmp_path / "changed.yaml"
    changed.write_text(example_path.read_text().replace("10.0.2.0/24: sender2", ""))
    code, out, _ = run(capsys, "apply", "--addr", fake_switch.address, str(changed))
    assert code == 0
    assert out.splitlines() == [
        "  delete RouterIngress.ipv4_lpm 10.0.2.0/24",
        "  modify RouterIngress.port_config 3 -> set_port(mac=02:00:00:00:00:03, "
        "rbcc_capacity=1187500, queue_limit=68, red_enabled=1, wq16=1311, th_min16=196608, "
        "th_max16=3276800, slope=59398483, s_recip=3579139, seed=7)",
        f"{fake_switch.address}: 1 delete, 1 modify",
    ]
    code, out, _ = run(capsys, "apply", "--addr", fake_switch.address, str(changed))
    assert out.splitlines() == [f"{fake_switch.address}: no change"]
    code, out, _ = run(
        capsys, "set", "--addr", fake_switch.address, str(changed), "ports.3.aqm.seed=8"
    )
    assert "note: port 3: the new RED seed takes effect after the next pipeline push" in out


def test_counters_and_poll(
    capsys, fake_switch: FakeServer, compiled: Compiled, example_path: Path, tmp_path: Path
) -> None:
    assert run(capsys, *push_args(fake_switch, compiled, example_path))[0] == 0
    s = compiled.schema
    fake_switch.servicer.counters[s.counters["RouterEgress.port_out"].id, 3] = (7, 10_500)
    code, out, _ = run(capsys, "counters", "--addr", fake_switch.address)
    lines = out.splitlines()
    assert code == 0
    assert lines[0].split() == ["counter", "port", "1", "port", "2", "port", "3"]
    table = {line.split()[0]: line.split()[1:] for line in lines[1:]}
    assert table["packets_out"] == ["0", "0", "7"]
    assert table["bytes_out"] == ["0", "0", "10500"]
    assert table["drop_red_early"] == ["0", "0", "0"]
    code, out, _ = run(capsys, "counters", "--addr", fake_switch.address, "--json", "--ports", "3")
    data = json.loads(out)
    assert data["gauges"] is True and data["ports"]["3"]["bytes_out"] == 10_500

    series = tmp_path / "series.csv"
    code, out, err = run(
        capsys, "poll", "--addr", fake_switch.address, "--interval", "0.1", "--duration", "0.2",
        "--out", str(series),
    )  # fmt: skip
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert lines[0] == f"polling {fake_switch.address} ports 1,2,3 every 0.1 s -> {series}"
    assert lines[-1] == f"3 samples, 9 rows written to {series}"
    assert len(lines) == 2 + 9  # one summary line per port per sample
    rows = list(csv.DictReader(series.open()))
    assert [r["port"] for r in rows] == ["1", "2", "3"] * 3
    assert rows[2]["packets_out"] == "7"
    code, _, err = run(
        capsys, "poll", "--addr", fake_switch.address, "--interval", "0", "--out", "x"
    )
    assert code == 2 and err == "ratelab-ctl: error: --interval must be above 0\n"


def test_unreachable_switch_is_one_line(capsys, example_path: Path) -> None:
    code, out, err = run(capsys, "counters", "--addr", "127.0.0.1:1", "--timeout", "0.2")
    assert code == 1 and out == ""
    assert (
        err == "ratelab-ctl: error: cannot reach the switch at 127.0.0.1:1 (no answer in 0.2 s)\n"
    )


def test_switch_args(capsys, example_path: Path) -> None:
    code, out, _ = run(capsys, "switch-args", str(example_path))
    assert code == 0
    assert out == (
        "--queue-rate 1=1gbit --queue-depth 1=128 --queue-rate 2=1gbit --queue-depth 2=128 "
        "--queue-rate 3=10mbit --queue-depth 3=136\n"
    )


def test_address_from_the_file_and_bad_overrides_send_nothing(
    capsys, fake_switch: FakeServer, compiled: Compiled, example_path: Path, tmp_path: Path
) -> None:
    own = tmp_path / "own.yaml"
    own.write_text(example_path.read_text().replace("127.0.0.1:9559", fake_switch.address))
    args = push_args(fake_switch, compiled, own)
    del args[1:3]  # no --addr: the file's address
    assert run(capsys, *args)[0] == 0
    fake = fake_switch.servicer
    n = len(fake.writes)
    code, out, err = run(capsys, "set", str(own), "ports.3.utilisation=2")
    assert (code, out) == (2, "")
    assert err == (
        "<command line>:1:21: error: ports.3.utilisation: expected a fraction in (0, 1], got 2\n"
    )
    code, out, err = run(capsys, "set", str(own), "rbcc.abt_slots=2048")
    assert (code, out) == (2, "")
    assert err.startswith("<command line>:1:16: error: rbcc.abt_slots: expected the compiled")
    assert len(fake.writes) == n
    code, out, _ = run(capsys, "set", str(own), "ports.3.utilisation=1")
    assert code == 0 and out.splitlines()[-1] == f"{fake_switch.address}: 1 modify"
