"""Strict-priority queues (docs/CONTROLLER.md "Priority queues") on a live switch:
the controller installs the classification rules over P4Runtime, and on the
slow port, which ptf_tests/run.py starts with two priority queues, a ping and a
packet of a classified TCP port overtake bulk packets queued before them.

The reference model has one FIFO per port and no classification: it still
says what each frame looks like when it leaves (the router changes no byte for
its queue), the switch decides the order.
"""

from __future__ import annotations

import math
from dataclasses import replace

from ratelab_ctl.configfile import PortPriority
from ratelab_ptf.base import ModelLockstep, RouterTest, controller_config, simple_config
from ratelab_ptf.packets import HOST_MAC, ROUTER_MAC, pad60
from scapy.layers.inet import ICMP, IP, TCP, UDP
from scapy.layers.l2 import Ether
from scapy.packet import Raw

FRAME_LEN = 100
WEB_PORT = 80
BULK_PORT = 5001


def _frame(l4: object, seq: int) -> bytes:
    head = Ether(dst=ROUTER_MAC, src=HOST_MAC) / IP(src="10.0.1.1", dst="10.5.0.1", id=seq) / l4
    frame = pad60(head / Raw(bytes(FRAME_LEN - len(head))))
    assert len(frame) == FRAME_LEN
    return frame


def bulk(seq: int) -> bytes:
    return _frame(UDP(sport=40000, dport=BULK_PORT), seq)


def ping(seq: int) -> bytes:
    return _frame(ICMP(type=8, id=7, seq=seq), seq)


def web(seq: int) -> bytes:
    """A web server's data segment: source port 80."""
    return _frame(TCP(sport=WEB_PORT, dport=40000, flags="A"), seq)


class PingAndWebOvertakeBulk(RouterTest):
    """Bulk UDP queued on the slow port, then a ping and a port-80 TCP segment:
    those two leave right after the bulk packet on the wire, the rest of the bulk
    after them, every frame as the model forwards it."""

    BULK = 4

    def runTest(self) -> None:
        port, pps = self.p["tail_port"], self.p["tail_pps"]
        router = simple_config(
            [*self.p["plain_ports"], port],
            {"10.5.0.0/16": port},
            rate_bps={port: pps * FRAME_LEN * 8},
            queue_limit={port: 8},
        )
        rules = PortPriority(port, 2, protocols=((1, 1),), l4_ports=((WEB_PORT, 1),))
        cfg = replace(
            controller_config(router, self.p["grpc_addr"], self.device_id), priority=(rules,)
        )
        self.ctl.apply_config(cfg)
        model = ModelLockstep(router)
        frames = [bulk(i) for i in range(self.BULK)] + [ping(50), web(60)]
        out = {}
        for f in frames:
            record = model.process(1, f)
            assert record.output is not None, record.decision
            out[f] = record.output.frame
            self.send(1, f)
        # the first bulk packet was on the wire already; then the priority queue
        order = [frames[0], frames[-2], frames[-1], *frames[1 : self.BULK]]
        timeout = 2 + math.ceil(len(frames) / pps)
        for i, f in enumerate(order):
            got = self.next_frame(timeout)
            if got is None:
                self.fail(f"frame {i} of {len(order)} did not come out")
            self.assertEqual(got, (port, out[f]), f"frame {i} out of order")
        self.expect_nothing()
