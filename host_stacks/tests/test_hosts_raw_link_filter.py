"""raw_link.RawLink receives only its own flow's frames: over a veth pair,
namespace b sends hand-made frames to namespace a, where a RawLink for
10.201.0.3:4000 reads them. Only IPv4 TCP to that address and port may come
through (also behind IPv4 options); other ports, other addresses, UDP and
later fragments are filtered out by the socket's BPF program, and the link's
own outgoing frames are never returned. Needs root; skipped otherwise."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from ratelab_hosts.netns import VethPair, can_make_namespaces, veth_pair
from ratelab_hosts.raw_link import flow_filter

pytestmark = pytest.mark.skipif(
    can_make_namespaces() is not None, reason=str(can_make_namespaces())
)

FLOW_ADDR = "10.201.0.3"
FLOW_PORT = 4000

# In namespace a: a RawLink for the flow; it sends one frame to its own flow
# address (an outgoing copy it must not read back), then prints the tags of
# the frames it receives until the tag "last" or 5 s.
RECEIVER = """
import json, socket, sys, time
from ratelab_hosts.raw_link import LinkPlan, RawLink
iface, addr, port, peer_mac = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
mac = bytes.fromhex(open(f"/sys/class/net/{iface}/address").read().strip().replace(":", ""))
plan = LinkPlan(iface, mac, "10.201.0.2", bytes.fromhex(peer_mac), 1500)
link = RawLink(plan, addr, port)
sys.path.insert(0, sys.argv[5])
from frames import frame
link.send(frame(plan.ethernet_header, addr, port, b"own"))
print("ready", file=sys.stderr, flush=True)
tags, deadline = [], time.monotonic() + 5
while time.monotonic() < deadline and "last" not in tags:
    f = link.receive()
    if f is None:
        time.sleep(0.001)
    elif b"#T:" in f:
        tags.append(f.split(b"#T:")[-1].decode())
print(json.dumps(tags))
"""

FRAMES = """
import socket, struct

def frame(eth, dst, port, tag, proto=6, frag=0, options=b"", port_in_options=None):
    ihl = (20 + len(options)) // 4
    payload = b"#T:" + tag
    l4 = struct.pack("!HHII", 12345, port, 0, 0) + bytes(8)  # ports, seq, ack, rest
    total = ihl * 4 + len(l4) + len(payload)
    ip = struct.pack("!BBHHHBBH4s4s", 0x40 | ihl, 0, total, 1, frag, 64, proto, 0,
                     socket.inet_aton("10.201.0.2"), socket.inet_aton(dst))
    return eth + ip + options + l4 + payload
"""

# In namespace b: each case's frame to namespace a's MAC.
SENDER = """
import socket, struct, sys
sys.path.insert(0, sys.argv[3])
from frames import frame
iface, dst_mac = sys.argv[1], bytes.fromhex(sys.argv[2])
mac = bytes.fromhex(open(f"/sys/class/net/{iface}/address").read().strip().replace(":", ""))
eth = dst_mac + mac + b"\\x08\\x00"
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind((iface, 0))
opt = struct.pack("!HH", 0, 4000)  # 4 bytes of options whose second half reads 4000
for f in (
    frame(eth, "10.201.0.3", 4000, b"ours"),
    frame(eth, "10.201.0.3", 4001, b"other-port"),
    frame(eth, "10.201.0.4", 4000, b"other-addr"),
    frame(eth, "10.201.0.3", 4000, b"udp", proto=17),
    frame(eth, "10.201.0.3", 4000, b"fragment", frag=0x0010),
    frame(eth, "10.201.0.3", 4000, b"options", options=bytes(4)),
    frame(eth, "10.201.0.3", 4001, b"options-other-port", options=opt),
    frame(eth, "10.201.0.3", 4000, b"last"),
):
    s.send(f)
"""


def sh(ns: str, *cmd: str) -> str:
    proc = subprocess.run(["ip", "netns", "exec", ns, *cmd], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip()


def mac_hex(ns: str) -> str:
    return sh(ns, "cat", f"/sys/class/net/{ns}/address").replace(":", "")


@pytest.fixture
def pair() -> Iterator[VethPair]:
    with veth_pair() as p:
        yield p


def test_only_the_flows_own_frames_are_received(pair: VethPair, tmp_path: Path) -> None:
    lib = tmp_path
    (lib / "frames.py").write_text(FRAMES)
    receiver = subprocess.Popen(
        [
            *("ip", "netns", "exec", pair.ns_a, sys.executable, "-c", RECEIVER, pair.ns_a),
            *(FLOW_ADDR, str(FLOW_PORT), mac_hex(pair.ns_b), str(lib)),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert receiver.stderr is not None
    line = receiver.stderr.readline()
    assert "ready" in line, line + receiver.stderr.read()
    sh(pair.ns_b, sys.executable, "-c", SENDER, pair.ns_b, mac_hex(pair.ns_a), str(lib))
    out, err = receiver.communicate(timeout=30)
    assert receiver.returncode == 0, err
    assert json.loads(out) == ["ours", "options", "last"]


def test_the_filter_program_jumps_only_to_the_next_test_or_to_drop() -> None:
    prog = flow_filter(FLOW_ADDR, FLOW_PORT)
    drop = len(prog) - 1
    assert prog[drop] == (0x06, 0, 0, 0)  # ret 0
    assert prog[drop - 1][0] == 0x06 and prog[drop - 1][3] > 0  # ret: accept
    for i, (code, jt, jf, _k) in enumerate(prog):
        if code & 0x07 == 0x05:  # a jump
            assert {i + 1 + jt, i + 1 + jf} <= {i + 1, drop}, i
    assert (0x15, 0, 6, 0x0AC90003) in prog  # the address, as a big-endian word
    assert (0x15, 0, 1, FLOW_PORT) in prog
