"""End to end over real sockets: `python -m ratelab_hosts` in two network
namespaces joined by a veth pair (no switch). Needs root; skipped otherwise."""

from __future__ import annotations

import json
import signal
import subprocess
from pathlib import Path

import pytest
from ratelab_hosts.netns import ADDR_A, ADDR_B, VethPair, can_make_namespaces, veth_pair

pytestmark = pytest.mark.skipif(
    can_make_namespaces() is not None, reason=str(can_make_namespaces())
)

TIMEOUT = 30


def wait_ready(proc: subprocess.Popen[str]) -> None:
    assert proc.stderr is not None
    line = proc.stderr.readline()
    assert "listening on" in line, line + proc.stderr.read()


def finish(proc: subprocess.Popen[str]) -> tuple[str, str]:
    out, err = proc.communicate(timeout=TIMEOUT)
    assert proc.returncode == 0, err
    assert len(out.splitlines()) == 1  # the one-line summary
    return out, err


def test_rbcc_and_udp_traffic_is_accounted_for_end_to_end(tmp_path: Path) -> None:
    files = {name: tmp_path / f"{name}.json" for name in ("send", "recv", "usend", "usink")}
    pair: VethPair
    with veth_pair() as pair:
        recv = pair.spawn(
            pair.ns_b,
            *("rbcc-recv", "--listen", ADDR_B, "--json-out", str(files["recv"])),
            *("--emulate-loss", "0.05", "--loss-seed", "7"),
        )
        sink = pair.spawn(
            pair.ns_b, "udp-sink", "--listen", f"{ADDR_B}:5001", "--json-out", str(files["usink"])
        )
        wait_ready(recv)
        wait_ready(sink)
        send = pair.spawn(
            pair.ns_a,
            *("rbcc-send", "--dst", ADDR_B, "--rate", "2mbit", "--initial-rate", "1mbit"),
            *("--duration", "1", "--json-out", str(files["send"])),
        )
        usend = pair.spawn(
            pair.ns_a,
            *("udp-send", "--dst", f"{ADDR_B}:5001", "--rate", "1mbit", "--duration", "1"),
            *("--poisson", "--seed", "5", "--json-out", str(files["usend"])),
        )
        send_out, _ = finish(send)
        finish(recv)
        finish(usend)
        sink.send_signal(signal.SIGTERM)  # no --duration: runs until told to stop
        sink_out, _ = finish(sink)

    assert send_out.startswith(f"rbcc-send to {ADDR_B}") and ": closed," in send_out
    assert sink_out.startswith(f"udp-sink on {ADDR_B}:5001: 1 flow(s)")
    sent = json.loads(files["send"].read_text())["flows"][0]
    recv_result = json.loads(files["recv"].read_text())
    [got] = recv_result["flows"]
    assert got["src"] == ADDR_A and got["flow_id"] == sent["flow_id"]
    # Every data transmission either arrived or was counted lost by the receiver.
    assert sent["packets_sent"] == got["packets_received"] + got["lost"]
    assert sent["bytes_sent"] == got["bytes_received"] + got["lost"] * sent["size"]
    # The emulated path loss was recovered: every segment delivered, in order,
    # and each retransmission made up for a loss or arrived twice.
    assert got["lost"] >= recv_result["emulated_drops"] > 0
    assert got["complete"] and got["segments_delivered"] == sent["segments"] > 0
    assert sent["retransmissions"] == got["lost"] + got["duplicates"]
    assert sent["state"] == "closed" and sent["fin_acked"]
    # No router on the path: the network echoes the desired rate, unlowered.
    assert sent["rates"][0] == {
        "t_s": 0.0,
        "rate": 125_000,
        "return_rate": 0xFFFFFFFF,
        "return_bottle_node": 0,
    }
    assert sent["rates"][-1]["return_rate"] == 250_000 == sent["rate"]
    assert got["rates"] == [{"t_s": got["rates"][0]["t_s"], "rate": 250_000, "bottle_node": 0}]

    usent = json.loads(files["usend"].read_text())["flows"][0]
    [ugot] = json.loads(files["usink"].read_text())["flows"]
    assert ugot["flow_id"] == usent["flow_id"] and ugot["src"] == ADDR_A
    assert usent["packets_sent"] > 0 and usent["send_errors"] == 0
    assert usent["packets_sent"] == ugot["packets_received"] + ugot["lost"]
    assert usent["bytes_sent"] == ugot["bytes_received"] + ugot["lost"] * usent["size"]
    assert ugot["highest_seq"] == usent["packets_sent"] - 1  # nothing lost at the tail either


def test_runtime_errors_are_one_line_without_traceback() -> None:
    with veth_pair() as pair:
        recv = pair.spawn(pair.ns_b, "rbcc-recv", "--listen", ADDR_B, "--duration", "20")
        wait_ready(recv)
        cases = [
            (("rbcc-recv", "--listen", "10.201.9.9"), "address not available"),
            (("rbcc-send", "--dst", "192.0.2.1", "--rate", "1mbit"), "unreachable"),
            (("udp-sink", "--listen", "10.201.9.9:5001"), "address not available"),
            (("rbcc-send", "--dst", ADDR_B, "--rate", "1mbit", "--size", "1600"), "path mtu"),
        ]
        for args, message in cases:
            proc = pair.spawn(pair.ns_a, *args)
            out, err = proc.communicate(timeout=TIMEOUT)
            assert proc.returncode == 1, err
            assert out == ""
            assert len(err.splitlines()) == 1 and message in err.lower(), err
            assert "Traceback" not in err
