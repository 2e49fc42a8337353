"""End to end over real sockets: `python -m ratelab_hosts` in two network
namespaces joined by a veth pair (no switch). Needs root; skipped otherwise."""

from __future__ import annotations

import json
import signal
import subprocess
from pathlib import Path

import pytest
from ratelab_hosts.netns import ADDR_A, ADDR_B, VethPair, can_make_namespaces, veth_pair
from ratelab_hosts.tcp_driver import available_congestion_control

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
            (("tcp-send", "--dst", f"{ADDR_B}:5999", "--cc", "reno"), "refused"),
            (("tcp-sink", "--listen", "10.201.9.9:5001"), "address not available"),
        ]
        for args, message in cases:
            proc = pair.spawn(pair.ns_a, *args)
            out, err = proc.communicate(timeout=TIMEOUT)
            assert proc.returncode == 1, err
            assert out == ""
            assert len(err.splitlines()) == 1 and message in err.lower(), err
            assert "Traceback" not in err


def test_kernel_tcp_flows_are_accounted_for_per_connection(tmp_path: Path) -> None:
    missing_cc = "vegas" if "vegas" not in available_congestion_control() else "no-such-cc"
    dst = f"{ADDR_B}:5201"
    flows = {
        "reno": ("--cc", "reno"),
        "cubic": ("--cc", "cubic"),
        "stream": ("--cc", "cubic", "--pattern", "stream", "--rate", "2mbit"),
    }
    with veth_pair() as pair:
        sink = pair.spawn(
            pair.ns_b, "tcp-sink", "--listen", dst, "--json-out", str(tmp_path / "sink.json")
        )
        wait_ready(sink)
        senders = {
            name: pair.spawn(
                pair.ns_a,
                *("tcp-send", "--dst", dst, "--duration", "1", *args),
                *("--json-out", str(tmp_path / f"{name}.json")),
            )
            for name, args in flows.items()
        }
        refused = pair.spawn(pair.ns_a, "tcp-send", "--dst", dst, "--cc", missing_cc)
        out, err = refused.communicate(timeout=TIMEOUT)
        assert refused.returncode == 2 and out == ""
        assert err.startswith(f"ratelab_hosts: error: --cc {missing_cc}: not available")
        assert len(err.splitlines()) == 1 and "reno" in err and "cubic" in err
        summaries = {name: finish(proc)[0] for name, proc in senders.items()}
        sink.send_signal(signal.SIGTERM)  # no --duration: runs until told to stop
        sink_out, _ = finish(sink)

    assert sink_out.startswith(f"tcp-sink on {dst}: 3 connection(s)")  # none for {missing_cc}
    by_src = {f["src"]: f for f in json.loads((tmp_path / "sink.json").read_text())["flows"]}
    assert len(by_src) == 3
    for name, args in flows.items():
        sent = json.loads((tmp_path / f"{name}.json").read_text())["flows"][0]
        got = by_src[sent["src"]]
        assert summaries[name].startswith(f"tcp-send to {dst} from {sent['src']}")
        assert sent["state"] == "closed" and sent["error"] is None
        assert sent["cc"] == args[1]  # what the kernel reports for the socket
        # Every byte written reached the sink, was acknowledged, and the sink saw the FIN.
        assert sent["bytes_sent"] == got["bytes_received"] == sent["bytes_acked"] > 0
        assert got["end"] == "fin"
        assert isinstance(sent["retransmissions"], int) and sent["retransmissions"] >= 0
        samples = sent["samples"]
        assert len(samples) >= 2 and samples[0]["t_s"] < samples[-1]["t_s"]
        assert all(s["rtt_us"] > 0 and s["snd_cwnd"] > 0 for s in samples)
        assert samples[-1]["written"] == sent["bytes_sent"]
        assert 0 < sent["rtt_min_us"] <= sent["rtt_mean_us"] <= sent["rtt_max_us"]
        assert sent["goodput_bps"] > 0
    stream = json.loads((tmp_path / "stream.json").read_text())["flows"][0]
    # application-limited: never ahead of 2 Mbit/s for 1 s, in whole paced writes
    assert stream["bytes_sent"] <= 250_000
    assert stream["bytes_sent"] % stream["stream_write"] == 0
