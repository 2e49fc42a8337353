"""Forwarding: longest-prefix match, TTL, checksum, drops by cause.

Every expected frame and counter comes from the reference model fed the same
frames; the extra assertions check that each case really exercises what it is
named after (a test that could pass on a router that does nothing fails them).
"""

from __future__ import annotations

from ratelab_model.forwarding import ForwardDrop
from ratelab_ptf.base import RouterTest, simple_config
from ratelab_ptf.packets import HOST_MAC, ROUTER_MAC, pad60, udp_frame
from scapy.layers.inet import IP, UDP
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import ARP, Ether
from scapy.packet import Raw

ROUTES = {
    "10.1.0.0/16": 1,
    "10.1.2.0/24": 2,
    "10.1.2.128/25": 3,
    "10.1.2.200/32": 4,
    "10.9.0.0/16": 2,
}


def _ip_checksum_ok(frame: bytes) -> bool:
    ip = Ether(frame)[IP]
    fresh = IP(bytes(ip))
    fresh.chksum = None
    return IP(bytes(fresh)).chksum == ip.chksum


class LongestPrefixMatch(RouterTest):
    """/32 over /25 over /24 over /16; a hairpin; no route."""

    def runTest(self) -> None:
        ports = self.p["plain_ports"]
        model = self.configure(simple_config(ports, ROUTES))
        cases = [
            (1, "10.1.9.9"),  # /16 only
            (2, "10.1.2.5"),  # /24
            (1, "10.1.2.130"),  # /25
            (3, "10.1.2.200"),  # /32
            (4, "10.1.2.201"),  # /25 next to the /32
            (2, "10.9.1.1"),  # back out of the port it came in on
            (1, "10.8.0.1"),  # no route
        ]
        egress = []
        for ingress, dst in cases:
            record = self.check_packet(model, ingress, udp_frame("192.168.0.1", dst))
            egress.append(record.egress_port)
        self.expect_nothing()
        # every prefix length won somewhere, and the last case had no route
        self.assertEqual(set(egress[:-1]), set(ports))
        self.assertIsNone(egress[-1])
        self.assert_counters(model.counters())


class TtlAndChecksum(RouterTest):
    """TTL - 1 with the checksum updated; TTL <= 1 dropped."""

    def runTest(self) -> None:
        ports = self.p["plain_ports"]
        model = self.configure(simple_config(ports, ROUTES))
        forwarded = 0
        for ttl in (64, 255, 2, 1, 0, 128):
            frame = udp_frame("192.168.0.1", "10.1.2.5", ttl=ttl)
            record = self.check_packet(model, 1, frame)
            if ttl > 1:
                out = record.output
                self.assertIsNotNone(out)
                assert out is not None
                self.assertEqual(Ether(out.frame)[IP].ttl, ttl - 1)
                self.assertTrue(_ip_checksum_ok(out.frame))
                forwarded += 1
            else:
                self.assertEqual(record.decision, ForwardDrop.TTL_EXPIRED.value)
        self.expect_nothing()
        got = self.assert_counters(model.counters())
        self.assertEqual(got[2]["packets_out"], forwarded)
        self.assertEqual(got[1]["drop_ttl_expired"], 2)


class DropCauses(RouterTest):
    """One frame per drop cause; the per-cause counters read over P4Runtime."""

    def runTest(self) -> None:
        ports = self.p["plain_ports"]
        model = self.configure(simple_config(ports, ROUTES))
        good = udp_frame("192.168.0.1", "10.1.2.5")
        ip = Ether(good)[IP]
        bad_sum = Ether(dst=ROUTER_MAC, src=HOST_MAC) / IP(bytes(ip))
        bad_sum[IP].chksum ^= 0x5A5A
        short_ihl = bytearray(good)
        short_ihl[14] = 0x44  # IHL 4: malformed
        frames = [
            ("bad_checksum", 1, pad60(bad_sum)),
            (
                "not_ipv4 (ARP)",
                2,
                pad60(
                    Ether(dst="ff:ff:ff:ff:ff:ff", src=HOST_MAC)
                    / ARP(hwsrc=HOST_MAC, psrc="192.168.0.1", pdst="192.168.0.2")
                ),
            ),
            (
                "not_ipv4 (IPv6)",
                2,
                pad60(
                    Ether(dst=ROUTER_MAC, src=HOST_MAC) / IPv6(src="fd00::1", dst="fd00::2") / UDP()
                ),
            ),
            ("malformed (IHL 4)", 3, bytes(short_ihl)),
            ("malformed (truncated)", 3, good[:30]),
            ("ttl_expired", 4, udp_frame("192.168.0.1", "10.1.2.5", ttl=1)),
            ("no_route", 4, udp_frame("192.168.0.1", "172.16.0.1")),
            ("forwarded", 1, good),
            (
                "forwarded (payload)",
                1,
                pad60(
                    Ether(dst=ROUTER_MAC, src=HOST_MAC)
                    / IP(src="192.168.0.1", dst="10.1.2.200")
                    / UDP()
                    / Raw(b"x" * 200)
                ),
            ),
        ]
        decisions = []
        for what, port, frame in frames:
            record = self.check_packet(model, port, frame)
            decisions.append(record.decision)
            if not what.startswith("forwarded"):
                self.assertIsNone(record.output, what)
        self.expect_nothing()
        self.assertEqual(
            set(decisions), {c.value for c in ForwardDrop} | {"forwarded"}, "every cause covered"
        )
        got = self.assert_counters(model.counters())
        for cause in ForwardDrop:
            self.assertGreater(sum(c[f"drop_{cause.value}"] for c in got.values()), 0, cause)
