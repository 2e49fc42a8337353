"""Raw packet I/O for a ratelab-stack TCP flow beside the host kernel's TCP.

The flow uses an IPv4 address of its own that the host kernel does not own
(e.g. 10.0.1.2 on host 10.0.1.1's /24). Frames are sent and received on an
AF_PACKET socket bound to the interface that routes to the destination: the
Ethernet header is ours (source: the interface's MAC; destination: the next
hop's MAC from the kernel's neighbour table, a permanent entry for the
gateway on ratelab-net's hosts), the IPv4 header and both checksums are built
by the binding. Segments to the flow's address reach the host kernel too;
with the address not local and ip_forward 0 it drops them silently, so it
never answers them with a RST. ``plan_link`` checks exactly that before any
traffic and fails in one line otherwise.

Each flow's socket carries a classic BPF filter (``flow_filter``) that
passes only IPv4 TCP frames to the flow's own address and port: without it
every sender's socket on a host reads every frame of the interface (the
other flows' ACKs, all outgoing copies), waking each process for the others'
traffic. The filter is attached before the socket is bound, so no frame
reaches it unfiltered.

Receive offloads must be off on the interface (ratelab-net's and the tests'
veth interfaces have them off): with GRO a packet socket sees merged
segments whose TCP checksum covers only the first, and they would be counted
as malformed. ``plan_link`` refuses an interface with GRO on.
"""

from __future__ import annotations

import ctypes
import errno
import ipaddress
import json
import shutil
import socket
import struct
import subprocess
from dataclasses import dataclass

from ratelab_hosts.drivers import DriverError

ETH_P_IP = 0x0800
ETH_HEADER_LEN = 14
PACKET_OUTGOING = 4  # <linux/if_packet.h>: a frame this host sent
IP_FORWARD = "/proc/sys/net/ipv4/ip_forward"
SOCKET_BUFFER = 4 << 20
FRAME_MAX = 65_536
_SOFT_SEND_ERRORS = {errno.ENOBUFS, errno.EAGAIN}
_NO_NEIGHBOUR_STATES = {"INCOMPLETE", "FAILED"}
SO_ATTACH_FILTER = getattr(socket, "SO_ATTACH_FILTER", 26)  # <asm-generic/socket.h>
IPPROTO_TCP = 6

# classic BPF opcodes (<linux/filter.h>)
_LDH_ABS = 0x28  # A = u16 at k
_LDB_ABS = 0x30  # A = u8 at k
_LDW_ABS = 0x20  # A = u32 at k
_LDXB_MSH = 0xB1  # X = 4 * (u8 at k & 0xf): the IPv4 header length
_LDH_IND = 0x48  # A = u16 at X + k
_JEQ_K = 0x15
_JSET_K = 0x45
_RET_K = 0x06
_ACCEPT = 0x40000  # bytes of the frame kept: all of it


def flow_filter(addr: str, port: int) -> list[tuple[int, int, int, int]]:
    """A classic BPF program (code, jt, jf, k) for an Ethernet packet socket
    that passes only unfragmented IPv4 TCP frames to `addr`:`port`. Jumps are
    relative to the next instruction; every failed test jumps to the last
    (drop)."""
    ip = int(ipaddress.IPv4Address(addr))
    prog = [
        (_LDH_ABS, 0, 0, 12),  # EtherType
        (_JEQ_K, 0, 10, ETH_P_IP),
        (_LDB_ABS, 0, 0, ETH_HEADER_LEN + 9),  # IPv4 protocol
        (_JEQ_K, 0, 8, IPPROTO_TCP),
        (_LDW_ABS, 0, 0, ETH_HEADER_LEN + 16),  # IPv4 destination
        (_JEQ_K, 0, 6, ip),
        (_LDH_ABS, 0, 0, ETH_HEADER_LEN + 6),  # flags and fragment offset
        (_JSET_K, 4, 0, 0x1FFF),  # a later fragment has no TCP header
        (_LDXB_MSH, 0, 0, ETH_HEADER_LEN),
        (_LDH_IND, 0, 0, ETH_HEADER_LEN + 2),  # TCP destination port
        (_JEQ_K, 0, 1, port),
        (_RET_K, 0, 0, _ACCEPT),
        (_RET_K, 0, 0, 0),
    ]
    return prog


def _attach_filter(sock: socket.socket, prog: list[tuple[int, int, int, int]]) -> None:
    code = b"".join(struct.pack("HBBI", *insn) for insn in prog)
    buf = ctypes.create_string_buffer(code, len(code))
    fprog = struct.pack("HL", len(prog), ctypes.addressof(buf))  # struct sock_fprog
    sock.setsockopt(socket.SOL_SOCKET, SO_ATTACH_FILTER, fprog)


@dataclass(frozen=True)
class LinkPlan:
    iface: str
    mac: bytes
    next_hop: str
    next_hop_mac: bytes
    mtu: int

    @property
    def ethernet_header(self) -> bytes:
        return self.next_hop_mac + self.mac + ETH_P_IP.to_bytes(2, "big")


def _ip_json(*args: str) -> list[dict[str, object]]:
    if shutil.which("ip") is None:
        raise DriverError("--stack ratelab needs iproute2's ip (not found)")
    proc = subprocess.run(["ip", "-j", *args], capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        said = (proc.stderr.strip().splitlines() or ["failed"])[0]
        raise DriverError(f"ip {' '.join(args)}: {said}")
    try:
        data = json.loads(proc.stdout or "[]")
    except ValueError:
        raise DriverError(f"ip {' '.join(args)}: output is not JSON") from None
    return data if isinstance(data, list) else []


def _read(path: str) -> str:
    try:
        with open(path, encoding="ascii") as f:
            return f.read().strip()
    except OSError as exc:
        raise DriverError(f"cannot read {path}: {exc.strerror or exc}") from None


def _mac(text: object, what: str) -> bytes:
    try:
        mac = bytes.fromhex(str(text).replace(":", ""))
    except ValueError:
        mac = b""
    if len(mac) != 6:
        raise DriverError(f"{what}: not an Ethernet address: {text!r}")
    return mac


def local_addresses() -> set[str]:
    """The IPv4 addresses this host (network namespace) owns."""
    found: set[str] = set()
    for link in _ip_json("-4", "addr", "show"):
        for info in link.get("addr_info", []) or []:  # type: ignore[union-attr]
            if isinstance(info, dict) and "local" in info:
                found.add(str(info["local"]))
    return found


def _gro_on(iface: str) -> bool:
    """Whether generic receive offload is on (False if ethtool is missing)."""
    if shutil.which("ethtool") is None:
        return False
    proc = subprocess.run(["ethtool", "-k", iface], capture_output=True, text=True, check=False)
    for line in proc.stdout.splitlines():
        name, _, value = line.partition(":")
        if name.strip() == "generic-receive-offload":
            return value.strip().startswith("on")
    return False


def _usable(neigh: dict[str, object]) -> bool:
    """A neighbour entry with a link-layer address that is not failed."""
    states = neigh.get("state")
    names = {str(s) for s in states} if isinstance(states, list) else set()
    return bool(neigh.get("lladdr")) and not names & _NO_NEIGHBOUR_STATES


def plan_link(src: str, dst: str) -> LinkPlan:
    """Check that a flow from `src` (an address this host does not own) to
    `dst` can run over raw I/O without the kernel answering it; DriverError
    with one line naming what is wrong."""
    if src in local_addresses():
        raise DriverError(
            f"--src {src} is an address of this host: its kernel would answer the flow's"
            " segments (RST); give an address it does not own (e.g. .2 of the host's /24)"
        )
    if ipaddress.IPv4Address(src).is_loopback or ipaddress.IPv4Address(dst).is_loopback:
        raise DriverError(f"--stack ratelab cannot use loopback ({src} to {dst})")
    if _read(IP_FORWARD) != "0":
        raise DriverError(
            f"{IP_FORWARD} is 1 on this host: its kernel would forward the flow's segments;"
            " set net.ipv4.ip_forward=0"
        )
    try:
        routes = _ip_json("-4", "route", "get", dst)
    except DriverError as exc:
        raise DriverError(f"no route to {dst} on this host ({exc})") from None
    if not routes or "dev" not in routes[0]:
        raise DriverError(f"no route to {dst} on this host")
    route = routes[0]
    iface = str(route["dev"])
    if iface == "lo":
        raise DriverError(f"{dst} is an address of this host (route via lo)")
    next_hop = str(route.get("gateway", dst))
    neigh = [n for n in _ip_json("-4", "neigh", "show", "to", next_hop, "dev", iface) if _usable(n)]
    if not neigh:
        raise DriverError(
            f"no neighbour entry for {next_hop} on {iface}: add one, e.g."
            f" ip neigh replace {next_hop} lladdr MAC dev {iface} nud permanent"
        )
    if _gro_on(iface):
        raise DriverError(
            f"generic receive offload is on on {iface}: turn it off"
            f" (ethtool -K {iface} gro off), merged segments fail their checksum"
        )
    return LinkPlan(
        iface=iface,
        mac=_mac(_read(f"/sys/class/net/{iface}/address"), iface),
        next_hop=next_hop,
        next_hop_mac=_mac(neigh[0]["lladdr"], f"neighbour {next_hop}"),
        mtu=int(_read(f"/sys/class/net/{iface}/mtu")),
    )


class RawLink:
    """An AF_PACKET socket on `plan.iface`, non-blocking, that receives only
    the frames to `addr`:`port` (the flow's own end)."""

    def __init__(self, plan: LinkPlan, addr: str, port: int) -> None:
        self.plan = plan
        self.local_drops = 0
        try:
            # protocol 0: receives nothing until bound, after the filter is on
            self.sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0)
        except PermissionError:
            raise DriverError(
                "cannot open a packet socket: permission denied (needs root or CAP_NET_RAW)"
            ) from None
        except OSError as exc:
            raise DriverError(f"cannot open a packet socket: {exc.strerror or exc}") from None
        try:
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, SOCKET_BUFFER)
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, SOCKET_BUFFER)
            _attach_filter(self.sock, flow_filter(addr, port))
            self.sock.bind((plan.iface, ETH_P_IP))
            self.sock.setblocking(False)
        except OSError as exc:
            self.sock.close()
            raise DriverError(
                f"cannot bind a packet socket to {plan.iface}: {exc.strerror}"
            ) from None

    def send(self, frame: bytes) -> None:
        """Send one frame; a full device queue (ENOBUFS, EAGAIN) is a local
        drop, counted, and TCP repairs it as a loss."""
        try:
            self.sock.send(frame)
        except OSError as exc:
            if exc.errno in _SOFT_SEND_ERRORS:
                self.local_drops += 1
                return
            raise DriverError(f"cannot send on {self.plan.iface}: {exc.strerror or exc}") from None

    def receive(self) -> bytes | None:
        """The next frame to the flow that another host sent (the filter
        passes no outgoing ones, but they are skipped also here); None when
        nothing is waiting."""
        while True:
            try:
                frame, addr = self.sock.recvfrom(FRAME_MAX)
            except (BlockingIOError, InterruptedError):
                return None
            except OSError as exc:
                raise DriverError(f"cannot receive on {self.plan.iface}: {exc.strerror}") from None
            if addr[2] != PACKET_OUTGOING:
                return frame

    def close(self) -> None:
        self.sock.close()
