"""RBCC: rate stamping on data and ACK packets, the ABT counters, and convergence
of several flows' echoed rates on one port in a closed loop (RBCC.md).

Each packet is sent after the previous one came out, so the switch's queues stay
empty and the model (fed the wall-clock arrival time) must agree exactly.
"""

from __future__ import annotations

import itertools
import time
from dataclasses import replace

from ratelab_model.hosts import RateSender, ack_for
from ratelab_model.packet import FLAG_ACK, FLAG_FIN, RbccHeader, ip_to_int, ip_to_str
from ratelab_model.rbcc import slot_index
from ratelab_ptf.base import ROUTER_ID, RouterTest, simple_config
from ratelab_ptf.packets import RATE_UNLIMITED, rbcc_fields, rbcc_frame

SENDER_PORT, RECEIVER_PORT = 1, 3
RECEIVER = "10.0.3.1"
ROUTES = {"10.0.1.0/24": SENDER_PORT, "10.0.2.0/24": 2, "10.0.3.0/24": RECEIVER_PORT}


def header_frame(src: str, dst: str, h: RbccHeader) -> bytes:
    return rbcc_frame(
        src,
        dst,
        flags=h.flags,
        next_proto=h.next_proto,
        rate=h.rate,
        bottle_node=h.bottle_node,
        return_rate=h.return_rate,
        return_bottle_node=h.return_bottle_node,
        current_rate=h.current_rate,
    )


def decode(frame: bytes) -> RbccHeader:
    f = rbcc_fields(frame)
    return RbccHeader(
        flags=f.flags,
        next_proto=f.next_proto,
        rate=f.rate,
        bottle_node=f.bottle_node,
        return_rate=f.return_rate,
        return_bottle_node=f.return_bottle_node,
        current_rate=f.current_rate,
        version=f.version,
        reserved=f.reserved,
    )


class Stamping(RouterTest):
    """rate/bottle_node lowered to the port's share on data and ACK packets, and
    left alone when the packet's rate is already below the share."""

    def runTest(self) -> None:
        cfg = simple_config(
            self.p["plain_ports"],
            ROUTES,
            capacity={SENDER_PORT: 70_000, RECEIVER_PORT: 40_000},
        )
        model = self.configure(cfg)
        sender = "10.0.1.7"
        stamped = unstamped = 0
        packets = [
            # data, unlimited desired rate: stamped with port 3's share
            (SENDER_PORT, sender, RECEIVER, dict(rate=RATE_UNLIMITED, current_rate=10_000)),
            # data that already asks for less than the share: untouched
            (SENDER_PORT, sender, RECEIVER, dict(rate=5_000, current_rate=5_000, bottle_node=9)),
            # ACK (receiver -> sender): stamped with port 1's share
            (
                RECEIVER_PORT,
                RECEIVER,
                sender,
                dict(flags=FLAG_ACK, rate=RATE_UNLIMITED, current_rate=0, return_rate=40_000),
            ),
            # a second data flow: the share halves
            (SENDER_PORT, "10.0.1.8", RECEIVER, dict(rate=RATE_UNLIMITED, current_rate=10_000)),
        ]
        for port, src, dst, fields in packets:
            frame = rbcc_frame(src, dst, **fields)
            record = self.check_packet(model, port, frame)
            assert record.output is not None
            sent, out = decode(frame), decode(record.output.frame)
            if out.rate < sent.rate:
                self.assertEqual(out.bottle_node, ROUTER_ID)
                self.assertEqual(out.rate, record.share)
                stamped += 1
            else:
                self.assertEqual((out.rate, out.bottle_node), (sent.rate, sent.bottle_node))
                unstamped += 1
        self.expect_nothing()
        self.assertEqual((stamped, unstamped), (3, 1))
        self.assert_counters(model.counters())


def colliding_sources(dst: str, port: int, slots: int) -> tuple[str, str]:
    """Two senders whose flows to `dst` via `port` share an ABT slot."""
    seen: dict[int, str] = {}
    d = ip_to_int(dst)
    for a, b in itertools.product(range(1, 255), repeat=2):
        src = f"10.0.{a}.{b}"
        index = slot_index(ip_to_int(src), d, port, slots)
        if index in seen:
            return seen[index], src
        seen[index] = src
    raise AssertionError("no colliding pair found")


class AbtCounters(RouterTest):
    """Insert, hit, the miss rules, collision and FIN removal, each packet's counter
    changes read back over P4Runtime and compared with the model's."""

    def runTest(self) -> None:
        cfg = simple_config(self.p["plain_ports"], ROUTES, capacity={RECEIVER_PORT: 100_000})
        model = self.configure(cfg)
        a, c = colliding_sources(RECEIVER, RECEIVER_PORT, cfg.abt_slots)
        b = "10.0.1.99"
        rid = cfg.router_id
        steps = [
            (a, dict(current_rate=20_000)),  # insert (update)
            (a, dict(current_rate=20_000)),  # hit: limited, same rate
            (a, dict(current_rate=30_000)),  # update: limited, rate changed
            (a, dict(current_rate=30_000, return_bottle_node=rid)),  # update: now not limited
            (a, dict(current_rate=45_000, return_bottle_node=rid)),  # hit: rate ignored
            (b, dict(current_rate=10_000)),  # second flow: insert
            (c, dict(current_rate=10_000)),  # same slot as a, a is live: collision
            (c, dict(current_rate=10_000, flags=FLAG_FIN)),  # FIN of a colliding flow: ignored
            (a, dict(current_rate=45_000, return_bottle_node=rid, flags=FLAG_FIN)),  # removal
            (c, dict(current_rate=10_000)),  # the slot is free again: insert
            (b, dict(current_rate=10_000, flags=FLAG_FIN)),  # hit, then removal
        ]
        outcomes = []
        for src, fields in steps:
            record = self.check_packet(model, SENDER_PORT, rbcc_frame(src, RECEIVER, **fields))
            outcomes.append(record.rbcc)
            self.assert_counters(model.counters(), what=f"after {src} {fields}")
        self.expect_nothing()
        self.assertEqual(set(outcomes), {"hit", "update", "collision"})
        self.assertEqual(model.router.counters[RECEIVER_PORT].abt_removals, 2)


class AbtIdleEviction(RouterTest):
    """A slot held by a live flow refuses another flow (collision); once the holder
    has been idle longer than idle_timeout (set to 200 ms at run time) the other
    flow evicts it, the removal counted at the evicted flow's port. The gaps are
    about 1 ms and 400 ms, far from the 200 ms boundary, so wall-clock jitter
    cannot change the outcome."""

    IDLE_TIMEOUT_US = 200_000

    def runTest(self) -> None:
        cfg = replace(
            simple_config(self.p["plain_ports"], ROUTES, capacity={2: 50_000, 3: 80_000}),
            idle_timeout_us=self.IDLE_TIMEOUT_US,
        )
        model = self.configure(cfg)
        other_dst = "10.0.2.1"  # leaves on port 2
        d3, d2 = ip_to_int(RECEIVER), ip_to_int(other_dst)
        holders = {
            slot_index(ip_to_int(f"10.0.1.{h}"), d3, RECEIVER_PORT, cfg.abt_slots): f"10.0.1.{h}"
            for h in range(1, 255)
        }
        holder = evictor = ""
        for a, b in itertools.product(range(1, 255), repeat=2):
            src = f"10.0.{a}.{b}"
            index = slot_index(ip_to_int(src), d2, 2, cfg.abt_slots)
            if index in holders:
                holder, evictor = holders[index], src
                break
        self.assertTrue(holder, "no slot shared across ports 3 and 2")
        frame_h = rbcc_frame(holder, RECEIVER, current_rate=1000)
        frame_e = rbcc_frame(evictor, other_dst, current_rate=2000)
        outcomes = [self.check_packet(model, SENDER_PORT, frame_h).rbcc]
        outcomes.append(self.check_packet(model, SENDER_PORT, frame_e).rbcc)
        self.assert_counters(model.counters(), what="collision")
        time.sleep(2 * self.IDLE_TIMEOUT_US / 1e6)
        outcomes.append(self.check_packet(model, SENDER_PORT, frame_e).rbcc)
        self.expect_nothing()
        self.assertEqual(outcomes, ["update", "collision", "update"])
        c = model.router.counters
        self.assertEqual((c[RECEIVER_PORT].abt_removals, c[2].abt_inserts), (1, 1))
        self.assert_counters(model.counters(), what="eviction")


class Convergence(RouterTest):
    """N flows through one bottleneck port, driven in closed loop by TRUMP-style
    senders and receivers (ratelab_model.hosts): every flow's echoed rate reaches
    capacity / N within 1% (RBCC.md "What counts as correct"), and once settled the
    ABT sees no more updates."""

    FLOWS = 3
    ROUNDS = 8

    def runTest(self) -> None:
        capacity = 300_000
        cfg = simple_config(
            self.p["plain_ports"], ROUTES, capacity={RECEIVER_PORT: capacity}, min_rate=1
        )
        model = self.configure(cfg)
        senders = {
            f"10.0.1.{i + 1}": RateSender(initial_rate=capacity // 2) for i in range(self.FLOWS)
        }
        updates_per_round = []
        for _ in range(self.ROUNDS):
            before = model.router.counters[RECEIVER_PORT].abt_updates
            for src, sender in senders.items():
                data = header_frame(src, RECEIVER, sender.data_header())
                record = self.check_packet(model, SENDER_PORT, data)
                assert record.output is not None
                ack = ack_for(decode(record.output.frame))
                back = self.check_packet(model, RECEIVER_PORT, header_frame(RECEIVER, src, ack))
                assert back.output is not None
                sender.on_ack(decode(back.output.frame))
            updates_per_round.append(model.router.counters[RECEIVER_PORT].abt_updates - before)
        self.expect_nothing()
        self.assert_counters(model.counters())
        fair = capacity / self.FLOWS
        for src, sender in senders.items():
            self.assertLessEqual(
                abs(sender.return_rate - fair), 0.01 * fair, f"{src}: {sender.return_rate}"
            )
            self.assertEqual(sender.return_bottle_node, cfg.router_id, ip_to_str(ROUTER_ID))
        self.assertGreater(updates_per_round[0], 0)
        self.assertEqual(updates_per_round[-1], 0, f"ABT updates per round: {updates_per_round}")
