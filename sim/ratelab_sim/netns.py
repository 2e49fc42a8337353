"""Network namespaces and veth pairs that are always removed again.

Every name the harness creates starts with ``rl<pid>`` (the creating process's
id), so parallel runs never collide and `sweep()` can tell leftovers of a dead
run (safe to remove) from the objects of a live one (left alone). Interface
names are at most 15 characters (IFNAMSIZ - 1).

Interfaces are brought up with IPv6 disabled (no router solicitations or MLD
reports leaking into a test's packet counts) and with every offload off
(TSO/GSO/GRO, checksum and VLAN offloads), so that a frame written on one end
arrives byte for byte on the other.
"""

from __future__ import annotations

import contextlib
import ctypes
import itertools
import os
import re
import shutil
import subprocess
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from types import TracebackType
from typing import TypeVar

NAME_PREFIX = "rl"
IFNAMSIZ = 16
NETNS_DIR = Path("/var/run/netns")
_CLONE_NEWNET = 0x40000000
_OFFLOADS = ("rx", "tx", "sg", "tso", "gso", "gro", "rxvlan", "txvlan")
_counter = itertools.count()
_NAME_RE = re.compile(r"^[A-Za-z0-9_.-]+$")
_OWNER_RE = re.compile(rf"^{NAME_PREFIX}(\d+)")

T = TypeVar("T")


class HarnessError(Exception):
    """A namespace, link or tool operation failed; str() is one line."""


def _check_name(name: str, limit: int) -> str:
    if not _NAME_RE.match(name) or len(name) > limit:
        raise HarnessError(f"bad name {name!r}: letters, digits, _ . - and at most {limit} chars")
    return name


def _run(cmd: Sequence[str], check: bool = True) -> subprocess.CompletedProcess[str]:
    try:
        proc = subprocess.run(list(cmd), capture_output=True, text=True, timeout=30)
    except FileNotFoundError:
        raise HarnessError(f"{cmd[0]} not found (apt-get install iproute2 ethtool)") from None
    if check and proc.returncode != 0:
        msg = (proc.stderr or proc.stdout).strip().replace("\n", " ")
        raise HarnessError(f"`{' '.join(cmd)}` failed: {msg}")
    return proc


def ns_prefix(netns: str | None) -> list[str]:
    """The command prefix that runs a program inside `netns` (nothing for the root one)."""
    return ["ip", "netns", "exec", netns] if netns else []


def unique_prefix() -> str:
    """A fresh name prefix for this process: rl<pid> then letters (a..z, aa..zz, ...).
    Letters only after the pid, so that sweep() reads the pid back unambiguously."""
    n = next(_counter)
    tag = ""
    while True:
        tag = chr(ord("a") + n % 26) + tag
        n = n // 26 - 1
        if n < 0:
            break
    return f"{NAME_PREFIX}{os.getpid()}{tag}"


def _set_sysctl(netns: str | None, key: str, value: str, required: bool = False) -> None:
    path = "/proc/sys/" + key.replace(".", "/")
    if netns is None:
        try:
            Path(path).write_text(value)
        except OSError as e:
            if required:
                raise HarnessError(f"cannot set {key}: {e.strerror}") from None
        return
    proc = _run([*ns_prefix(netns), "sh", "-c", f"echo {value} > {path}"], check=False)
    if required and proc.returncode != 0:
        raise HarnessError(f"cannot set {key} in {netns}: {proc.stderr.strip()}")


def disable_ipv6(iface: str, netns: str | None = None) -> None:
    """No IPv6 on `iface` (absent IPv6 support in the kernel is fine too)."""
    if Path("/proc/sys/net/ipv6").exists():
        _set_sysctl(netns, f"net.ipv6.conf.{iface}.disable_ipv6", "1")


def disable_offloads(iface: str, netns: str | None = None) -> None:
    """Turn off TSO/GSO/GRO, checksum and VLAN offloads with ethtool -K."""
    if shutil.which("ethtool") is None:
        raise HarnessError("ethtool not found: apt-get install -y ethtool")
    cmd = [*ns_prefix(netns), "ethtool", "-K", iface]
    for feature in _OFFLOADS:
        cmd += [feature, "off"]
    proc = _run(cmd, check=False)
    # ethtool exits non-zero if one feature is fixed on a driver; check what matters.
    if proc.returncode != 0:
        shown = _run([*ns_prefix(netns), "ethtool", "-k", iface]).stdout
        for line in shown.splitlines():
            name, _, state = line.strip().partition(":")
            if name in (
                "tcp-segmentation-offload",
                "generic-segmentation-offload",
                "generic-receive-offload",
                "tx-checksumming",
                "rx-checksumming",
            ) and state.strip().startswith("on"):
                raise HarnessError(f"cannot turn off {name} on {iface}: {proc.stderr.strip()}")


def link_exists(iface: str, netns: str | None = None) -> bool:
    cmd = ["ip", *(["-n", netns] if netns else []), "link", "show", "dev", iface]
    return _run(cmd, check=False).returncode == 0


def netns_exists(name: str) -> bool:
    return (NETNS_DIR / name).exists()


class Netns:
    """`ip netns add` on entry; on exit, every process still inside is killed (they
    can only be the harness's own) and the namespace deleted, which also deletes
    every interface in it. Loopback is up and IPv6 off by default inside."""

    def __init__(self, name: str | None = None) -> None:
        self.name = _check_name(name or unique_prefix(), 64)
        self._created = False

    def __enter__(self) -> Netns:
        _run(["ip", "netns", "add", self.name])
        self._created = True
        try:
            _run(["ip", "-n", self.name, "link", "set", "lo", "up"])
            if Path("/proc/sys/net/ipv6").exists():
                for scope in ("all", "default"):
                    _set_sysctl(self.name, f"net.ipv6.conf.{scope}.disable_ipv6", "1")
        except BaseException:
            self.delete()
            raise
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.delete()

    def exec_args(self, cmd: Sequence[str]) -> list[str]:
        """`cmd` prefixed to run inside this namespace."""
        return [*ns_prefix(self.name), *cmd]

    def run(self, cmd: Sequence[str], check: bool = True) -> subprocess.CompletedProcess[str]:
        return _run(self.exec_args(cmd), check=check)

    def ip(self, *args: str) -> None:
        """`ip -n <ns> ARGS` (addresses, routes, neighbours, links)."""
        _run(["ip", "-n", self.name, *args])

    def add_address(self, iface: str, cidr: str) -> None:
        self.ip("addr", "add", cidr, "dev", iface)

    def add_route(self, prefix: str, iface: str, via: str | None = None) -> None:
        self.ip("route", "add", prefix, *(["via", via] if via else []), "dev", iface)

    def add_neighbor(self, address: str, mac: str, iface: str) -> None:
        """A permanent ARP entry (the router answers no ARP: hosts need one for it)."""
        self.ip("neigh", "replace", address, "lladdr", mac, "dev", iface, "nud", "permanent")

    def set_mac(self, iface: str, mac: str) -> None:
        self.ip("link", "set", "dev", iface, "address", mac)

    def pids(self) -> list[int]:
        proc = _run(["ip", "netns", "pids", self.name], check=False)
        return [int(p) for p in proc.stdout.split() if p.isdigit()]

    def delete(self) -> None:
        if not self._created:
            return
        _kill_pids(self.pids())
        proc = _run(["ip", "netns", "delete", self.name], check=False)
        if proc.returncode != 0 and netns_exists(self.name):
            raise HarnessError(f"cannot delete namespace {self.name}: {proc.stderr.strip()}")
        self._created = False


def _kill_pids(pids: Sequence[int]) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, 9)


class VethPair:
    """A veth pair `a` <-> `b`, each end optionally in a namespace, up, IPv6 off,
    offloads off. Deleting one end deletes both; exit does that."""

    def __init__(
        self,
        a: str,
        b: str,
        netns_a: str | None = None,
        netns_b: str | None = None,
        mtu: int | None = None,
    ) -> None:
        self.a = _check_name(a, IFNAMSIZ - 1)
        self.b = _check_name(b, IFNAMSIZ - 1)
        self.netns_a, self.netns_b, self.mtu = netns_a, netns_b, mtu
        self._created = False

    def __enter__(self) -> VethPair:
        _run(["ip", "link", "add", self.a, "type", "veth", "peer", "name", self.b])
        self._created = True
        try:
            for iface, netns in ((self.a, self.netns_a), (self.b, self.netns_b)):
                if netns is not None:
                    _run(["ip", "link", "set", iface, "netns", netns])
                disable_ipv6(iface, netns)
                disable_offloads(iface, netns)
                ip = ["ip", *(["-n", netns] if netns else []), "link", "set", iface]
                if self.mtu is not None:
                    _run([*ip, "mtu", str(self.mtu)])
                _run([*ip, "up"])
        except BaseException:
            self.delete()
            raise
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.delete()

    def delete(self) -> None:
        if not self._created:
            return
        for iface, netns in ((self.a, self.netns_a), (self.b, self.netns_b)):
            if netns is not None and not netns_exists(netns):
                continue  # the namespace went, and its interfaces with it
            for where in (netns, None):  # before the move the end is still in the root
                if link_exists(iface, where):
                    ip = ["ip", *(["-n", where] if where else []), "link", "del", iface]
                    _run(ip, check=False)
        self._created = False


def _pid_alive(pid: int) -> bool:
    return Path(f"/proc/{pid}").exists()


def sweep(include_own: bool = False) -> list[str]:
    """Remove namespaces and root-namespace links named rl<pid>... whose creating
    process is gone (with `include_own`, also this process's). Returns what went."""
    removed: list[str] = []

    def stale(name: str) -> bool:
        m = _OWNER_RE.match(name)
        if m is None:
            return False
        pid = int(m.group(1))
        return (include_own and pid == os.getpid()) or (pid != os.getpid() and not _pid_alive(pid))

    if NETNS_DIR.is_dir():
        for entry in sorted(NETNS_DIR.iterdir()):
            if stale(entry.name):
                ns = Netns(entry.name)
                ns._created = True
                try:
                    ns.delete()
                    removed.append(f"netns {entry.name}")
                except HarnessError:
                    pass
    out = _run(["ip", "-o", "link", "show"], check=False).stdout
    for line in out.splitlines():
        parts = line.split(":")
        if len(parts) < 2:
            continue
        name = parts[1].strip().split("@")[0]
        if stale(name) and _run(["ip", "link", "del", name], check=False).returncode == 0:
            removed.append(f"link {name}")
    return removed


def run_in_netns(netns: str | None, fn: Callable[[], T]) -> T:
    """Call `fn` on a fresh thread that has joined `netns` (sockets it opens live
    there). The thread ends afterwards, so no other thread changes namespace."""
    if netns is None:
        return fn()
    libc = ctypes.CDLL(None, use_errno=True)
    result: list[T] = []
    error: list[BaseException] = []

    def body() -> None:
        try:
            fd = os.open(NETNS_DIR / netns, os.O_RDONLY)
            try:
                if libc.setns(fd, _CLONE_NEWNET) != 0:
                    err = ctypes.get_errno()
                    raise HarnessError(f"setns({netns}) failed: {os.strerror(err)}")
            finally:
                os.close(fd)
            result.append(fn())
        except BaseException as e:
            error.append(e)

    thread = threading.Thread(target=body, name=f"netns-{netns}")
    thread.start()
    thread.join()
    if error:
        raise error[0]
    return result[0]
