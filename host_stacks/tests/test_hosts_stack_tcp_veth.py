"""tcp-send --stack ratelab end to end: ratelab-stack's TCP over raw packet
I/O from its own address (10.201.0.3, which namespace a does not own) to the
kernel's tcp-sink in namespace b, over a veth pair whose sending side is a
20 Mbit/s token bucket with a 10-packet queue (drop-tail losses in slow
start, which the packet socket reports as local drops). As on ratelab-net's
hosts, the sender has a permanent neighbour entry for its next hop and
ip_forward 0; the receiver reaches 10.201.0.3 by a permanent neighbour entry
for the sender's MAC. A capture in namespace a
counts RSTs both ways: none may be seen. Needs root; skipped otherwise."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from ratelab_hosts.netns import ADDR_B, VethPair, can_make_namespaces, veth_pair

pytestmark = pytest.mark.skipif(
    can_make_namespaces() is not None, reason=str(can_make_namespaces())
)

STACK_ADDR = "10.201.0.3"
DST = f"{ADDR_B}:5001"
TIMEOUT = 60
SAMPLE_S = 0.05
TRANSFER = 3_000_000  # bytes: about 1.2 s at 20 Mbit/s

# Counts TCP frames and TCP RSTs seen on an interface (both directions) until
# SIGTERM, then prints them as JSON with the frames the socket dropped
# (PACKET_STATISTICS). Python's own AF_PACKET capture: no tcpdump.
CAPTURE = """
import json, signal, socket, struct, sys
# ETH_P_ALL: only such sockets see outgoing frames
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(3))
s.setsockopt(socket.SOL_SOCKET, 33, 64 << 20)  # SO_RCVBUFFORCE
s.bind((sys.argv[1], 3))
s.settimeout(0.05)
counts = {"tcp": 0, "rst": 0}
stop = []
signal.signal(signal.SIGTERM, lambda *a: stop.append(1))
print("capturing", file=sys.stderr, flush=True)
while not stop:
    try:
        f = s.recv(65536)
    except OSError:
        continue
    ip = f[14:]
    if f[12:14] == b"\\x08\\x00" and len(ip) >= 20 and ip[9] == 6:
        tcp = ip[(ip[0] & 15) * 4:]
        counts["tcp"] += 1
        counts["rst"] += len(tcp) > 13 and bool(tcp[13] & 4)
counts["dropped"] = struct.unpack("II", s.getsockopt(263, 6, 8))[1]  # SOL_PACKET, STATISTICS
print(json.dumps(counts))
"""


def sh(ns: str, *cmd: str) -> str:
    proc = subprocess.run(["ip", "netns", "exec", ns, *cmd], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip()


def mac(ns: str) -> str:
    return sh(ns, "cat", f"/sys/class/net/{ns}/address")  # the veth end is named as its netns


@pytest.fixture
def pair() -> Iterator[VethPair]:
    with veth_pair() as p:
        sh(p.ns_a, "ip", "neigh", "replace", ADDR_B, "lladdr", mac(p.ns_b), "dev", p.ns_a)
        sh(p.ns_a, "ip", "neigh", "change", ADDR_B, "nud", "permanent", "dev", p.ns_a)
        sh(p.ns_b, "ip", "neigh", "replace", STACK_ADDR, "lladdr", mac(p.ns_a), "dev", p.ns_b)
        sh(p.ns_b, "ip", "neigh", "change", STACK_ADDR, "nud", "permanent", "dev", p.ns_b)
        sh(p.ns_a, "sysctl", "-qw", "net.ipv4.ip_forward=0")
        yield p


def wait_line(proc: subprocess.Popen[str], text: str) -> None:
    assert proc.stderr is not None
    line = proc.stderr.readline()
    assert text in line, line + proc.stderr.read()


@pytest.mark.parametrize("cc", ["reno", "vegas"])
def test_ratelab_tcp_to_the_kernel_sink_without_rst(
    cc: str, pair: VethPair, tmp_path: Path
) -> None:
    tbf = ("tbf", "rate", "20mbit", "burst", "3000", "limit", "15000")
    sh(pair.ns_a, "tc", "qdisc", "replace", "dev", pair.ns_a, "root", *tbf)
    sent_file, sink_file = tmp_path / "send.json", tmp_path / "sink.json"
    capture = subprocess.Popen(
        ["ip", "netns", "exec", pair.ns_a, sys.executable, "-c", CAPTURE, pair.ns_a],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    pair.procs.append(capture)  # killed on the way out if a check fails
    wait_line(capture, "capturing")
    sink = pair.spawn(
        pair.ns_b, "tcp-sink", "--listen", DST, "--idle", "2", "--json-out", str(sink_file)
    )
    wait_line(sink, "listening on")
    # vegas: a fixed source port and Linux's RTO formula; reno: a random port, RFC 6298's
    src, formula = (f"{STACK_ADDR}:40123", "linux") if cc == "vegas" else (STACK_ADDR, None)
    send = pair.spawn(
        pair.ns_a,
        *("tcp-send", "--stack", "ratelab", "--src", src, "--dst", DST, "--cc", cc),
        *("--iw", "10", "--initial-rto", "1s", "--bytes", str(TRANSFER)),
        *("--sample-interval", str(SAMPLE_S), "--json-out", str(sent_file)),
        *(("--rto-formula", formula) if formula else ()),
    )
    out, err = send.communicate(timeout=TIMEOUT)
    assert send.returncode == 0, err
    _, sink_err = sink.communicate(timeout=TIMEOUT)
    assert sink.returncode == 0, sink_err
    capture.send_signal(signal.SIGTERM)
    counts = json.loads(capture.communicate(timeout=TIMEOUT)[0])

    assert out.startswith(f"tcp-send to {DST} from {STACK_ADDR}:") and f"(ratelab {cc}," in out
    [flow] = json.loads(sent_file.read_text())["flows"]
    [got] = json.loads(sink_file.read_text())["flows"]
    assert (flow["stack"], flow["cc"], flow["state"], flow["error"]) == (
        "ratelab",
        cc,
        "closed",
        None,
    )
    assert (flow["iw"], flow["initial_rto_s"], flow["min_rto_s"]) == (10, 1.0, 0.2)
    assert flow["rto_formula"] == (formula or "rfc6298")
    if cc == "vegas":
        assert flow["src"] == src
    assert (flow["resets_received"], flow["resets_sent"]) == (0, 0)
    assert flow["bytes_sent"] == flow["bytes_acked"] == got["bytes_received"] == TRANSFER
    assert got["src"] == flow["src"] and got["end"] == "fin"  # closed by our FIN, no reset
    # the capture saw every frame of the flow (data, and the receiver's ACKs: about
    # one per two segments, PSH being only on a write's last), and no RST among them
    assert counts["dropped"] == 0 and counts["tcp"] > TRANSFER // 1448 * 7 // 5, counts
    assert counts["rst"] == 0
    assert flow["malformed"] == 0
    # The token bucket is on the sender's own interface: what it drops, the packet
    # socket reports (ENOBUFS), counted as local drops; each was retransmitted.
    assert flow["retransmissions"] >= flow["local_drops"]
    assert flow["scheduling"] == "fifo"  # run_raw's loop, as root (sys.rs LowLatency)
    samples = flow["samples"]
    # on the grid of the stack's time: 0, 0.05, 0.1, ... exactly; one more at the end
    grid = [s["t_s"] for s in samples[:-1]]
    assert grid == [pytest.approx(i * SAMPLE_S, abs=1e-9) for i in range(len(grid))]
    assert len(grid) >= 10 and samples[-1]["t_s"] >= grid[-1]
    assert all(isinstance(s["snd_cwnd"], int) and s["snd_cwnd"] >= 1 for s in samples)
    assert samples[0]["snd_cwnd"] == 10 and samples[0]["snd_ssthresh"] is None
    acked = [s["bytes_acked"] for s in samples]
    assert acked == sorted(acked) and acked[-1] == TRANSFER
    assert samples[-1]["state"] in ("FIN_WAIT2", "TIME_WAIT")
    assert set(samples[0]) == {
        *("t_s", "state", "ca_state", "rtt_us", "rttvar_us", "min_rtt_us", "snd_cwnd"),
        *("snd_ssthresh", "unacked", "retrans", "lost", "total_retrans", "bytes_acked"),
        *("bytes_sent", "notsent_bytes", "delivery_rate", "pacing_rate", "written"),
    }
    # 20 Mbit/s is the bottleneck
    assert 10e6 < flow["goodput_bps"] < 21e6
    if cc == "reno":  # slow start overflows the 10-packet queue: SACK recovery repairs it
        assert flow["local_drops"] > 0 and flow["ssthresh_changes"] > 0
        assert samples[-1]["snd_ssthresh"] is not None


def test_setups_where_the_kernel_would_answer_are_refused_in_one_line(pair: VethPair) -> None:
    def run(*extra: str, src: str = STACK_ADDR, dst: str = DST) -> str:
        proc = pair.spawn(
            pair.ns_a,
            *("tcp-send", "--stack", "ratelab", "--src", src, "--dst", dst, "--cc", "reno"),
            *("--bytes", "1000", *extra),
        )
        out, err = proc.communicate(timeout=TIMEOUT)
        assert proc.returncode == 1, err
        assert out == "" and len(err.splitlines()) == 1 and "Traceback" not in err, err
        return err

    assert "is an address of this host" in run(src="10.201.0.1")
    # nothing listens on port 5999: the receiving kernel answers the SYN with a RST
    assert "cannot connect to 10.201.0.2:5999: connection refused" in run(dst=f"{ADDR_B}:5999")
    assert "no route to 192.0.2.1" in run(dst="192.0.2.1:5001")
    sh(pair.ns_a, "ip", "neigh", "del", ADDR_B, "dev", pair.ns_a)
    assert f"no neighbour entry for {ADDR_B} on {pair.ns_a}" in run()
    sh(pair.ns_a, "sysctl", "-qw", "net.ipv4.ip_forward=1")
    assert "ip_forward is 1 on this host" in run()


def test_a_sink_that_stops_early_fails_the_flow_with_its_json(
    pair: VethPair, tmp_path: Path
) -> None:
    sent_file = tmp_path / "send.json"
    sink = pair.spawn(pair.ns_b, "tcp-sink", "--listen", DST, "--duration", "0.5")
    wait_line(sink, "listening on")
    send = pair.spawn(
        pair.ns_a,
        *("tcp-send", "--stack", "ratelab", "--src", STACK_ADDR, "--dst", DST, "--cc", "cubic"),
        *("--duration", "5", "--json-out", str(sent_file)),
    )
    out, err = send.communicate(timeout=TIMEOUT)
    sink.communicate(timeout=TIMEOUT)
    assert send.returncode == 1, err
    assert len(out.splitlines()) == 1 and ": failed (" in out and "Traceback" not in err
    [flow] = json.loads(sent_file.read_text())["flows"]
    # the sink closes with data unread (a RST) or all read (a FIN)
    assert flow["error"] in (
        "connection reset by the receiver",
        "the receiver closed the connection early",
    )
    assert flow["state"] == "failed" and flow["elapsed_s"] < 4
    if flow["error"] == "connection reset by the receiver":
        assert flow["resets_received"] >= 1, flow
    assert isinstance(flow["resets_sent"], int)
    assert 0 < flow["bytes_acked"] <= flow["bytes_sent"] and flow["samples"]


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["sigterm", "sigint"])
def test_a_signal_mid_flow_ends_it_with_its_json(
    signum: int, pair: VethPair, tmp_path: Path
) -> None:
    """The flow runs in TcpConnection.run_raw (Rust, GIL released) nearly all
    the time: a signal there must end the flow at once, cleanly."""
    sent_file = tmp_path / "send.json"
    sink = pair.spawn(pair.ns_b, "tcp-sink", "--listen", DST, "--idle", "2")
    wait_line(sink, "listening on")
    send = pair.spawn(
        pair.ns_a,
        *("tcp-send", "--stack", "ratelab", "--src", STACK_ADDR, "--dst", DST, "--cc", "reno"),
        *("--duration", "30", "--sample-interval", "1", "--json-out", str(sent_file)),
    )
    deadline = time.monotonic() + TIMEOUT
    while STACK_ADDR not in sh(pair.ns_b, "ss", "-Htn", "state", "established"):
        assert time.monotonic() < deadline, "the flow never connected"
        time.sleep(0.1)
    time.sleep(1.0)
    signalled = time.monotonic()
    send.send_signal(signum)
    out, err = send.communicate(timeout=TIMEOUT)
    assert time.monotonic() - signalled < 5, "the signal did not end the flow at once"
    assert send.returncode == 1, err
    assert "Traceback" not in err and ": failed (interrupted)" in out, out + err
    [flow] = json.loads(sent_file.read_text())["flows"]
    assert (flow["state"], flow["error"]) == ("failed", "interrupted")
    assert flow["bytes_acked"] > 0 and flow["samples"]
