"""RbccSender driven directly and over the deterministic simulated link."""

from __future__ import annotations

import random

import pytest
from hosts_simnet import Link, SimNet, drop_pns, rate_cap
from ratelab_hosts.pacing import ceil_div
from ratelab_hosts.rbcc_receiver import RbccReceiver
from ratelab_hosts.rbcc_sender import RbccSender, SenderConfig, SenderState
from ratelab_hosts.wire import NEXT_PROTO_TRUMP, RbccPacket, TrumpHeader
from ratelab_model.packet import FLAG_ACK, FLAG_FIN, FLAG_SYN, RATE_UNLIMITED, RbccHeader

FLOW = 7
ROUTER = 9
SECOND = 1_000_000


def config(**kw: object) -> SenderConfig:
    base: dict[str, object] = dict(
        desired_rate=125_000, initial_rate=50_000, size=1000, segments=40, flow_id=FLOW
    )
    base.update(kw)
    return SenderConfig(**base)  # type: ignore[arg-type]


def data_sent(link: Link) -> list[tuple[int, RbccPacket]]:
    out = []
    for t, data in link.sent:
        packet = RbccPacket.decode(data)
        if packet.rbcc.flags == 0:
            out.append((t, packet))
    return out


def run(
    cfg: SenderConfig,
    forward: Link | None = None,
    reverse: Link | None = None,
    until: int = 600 * SECOND,
) -> tuple[RbccSender, RbccReceiver, SimNet]:
    sender = RbccSender(cfg, 0)
    receiver = RbccReceiver(FLOW)
    net = SimNet(sender, receiver, forward or Link(), reverse or Link())
    net.run(until)
    return sender, receiver, net


def assert_delivered_in_order(receiver: RbccReceiver, cfg: SenderConfig, count: int) -> None:
    delivered = receiver.take_delivered()
    assert [seq for seq, _ in delivered] == list(range(count))
    for seq, payload in delivered:
        assert payload == bytes([seq & 0xFF]) * cfg.payload_len


# ---------------------------------------------------------------- connection setup
def test_syn_every_second_then_give_up_after_30_s() -> None:
    cfg = config()
    sender = RbccSender(cfg, 1000)
    syns: list[tuple[int, RbccPacket]] = []
    while (t := sender.poll_at()) is not None:
        syns.extend((t, RbccPacket.decode(d)) for d in sender.on_timer(t))
    assert [t for t, _ in syns] == [1000 + k * SECOND for k in range(30)]
    assert sender.state is SenderState.FAILED
    assert sender.error == "no SYN-ACK after 30 s, giving up"
    assert sender.metrics.syn_sent == 30
    for _, packet in syns:
        assert packet.rbcc == RbccHeader(
            flags=FLAG_SYN,
            next_proto=NEXT_PROTO_TRUMP,
            rate=125_000,
            bottle_node=0,
            return_rate=RATE_UNLIMITED,
            return_bottle_node=0,
            current_rate=50_000,
        )
        assert packet.trump.flow_id == FLOW


def test_a_late_caller_gets_one_syn_and_the_grid_is_kept() -> None:
    sender = RbccSender(config(), 0)
    assert len(sender.on_timer(0)) == 1
    assert sender.poll_at() == SECOND
    assert len(sender.on_timer(3 * SECOND + 500_000)) == 1  # woken 2.5 s late
    assert sender.poll_at() == 4 * SECOND
    assert sender.on_timer(3 * SECOND + 600_000) == []


def test_syn_retry_connects_when_the_receiver_answers_late() -> None:
    forward = Link(delay_us=5_000, drop=lambda index, data: index < 2)  # first two SYNs lost
    sender, receiver, _ = run(config(segments=3), forward)
    assert sender.metrics.syn_sent == 3
    assert sender.metrics.established_us == 2 * SECOND + 5_000 + 10_000  # third SYN's RTT
    assert sender.state is SenderState.CLOSED
    assert receiver.metrics.segments_delivered == 3


def test_synack_for_another_flow_or_non_ack_is_ignored() -> None:
    sender = RbccSender(config(), 0)
    sender.on_timer(0)
    wrong_flow = RbccPacket(
        RbccHeader(FLAG_SYN | FLAG_ACK, NEXT_PROTO_TRUMP, RATE_UNLIMITED, 0, 1, 0, 0),
        TrumpHeader(FLOW + 1),
    )
    not_ack = RbccPacket(
        RbccHeader(FLAG_SYN, NEXT_PROTO_TRUMP, RATE_UNLIMITED, 0, 1, 0, 0), TrumpHeader(FLOW)
    )
    for packet in (wrong_flow, not_ack):
        assert sender.on_datagram(10, packet.encode()) == []
    assert sender.on_datagram(10, b"junk") == []
    assert sender.state is SenderState.SYN_SENT


# ---------------------------------------------------------------- rate control and pacing
def test_initial_rate_then_rate_adoption_after_the_first_ack() -> None:
    # RTT 30 ms: two data packets leave at the initial rate (20 ms apart)
    # before the first data ACK brings the router's 30_000 B/s.
    cfg = config()
    forward = Link(delay_us=15_000, transform=rate_cap(30_000, ROUTER))
    sender, receiver, _ = run(cfg, forward, Link(delay_us=15_000))
    sent = data_sent(forward)
    t0 = 30_000  # SYN-ACK arrival
    times = [t for t, _ in sent]
    assert times[:2] == [t0, t0 + 20_000]  # 1000 B / 50_000 B/s
    # From the second packet on, spaced 1000 B / 30_000 B/s, exactly.
    assert times[1:] == [t0 + 20_000 + ceil_div(k * 10**9, 30_000) for k in range(len(sent) - 1)]
    for _, packet in sent[:2]:
        h = packet.rbcc
        assert (h.rate, h.bottle_node, h.current_rate) == (125_000, 0, 50_000)
        assert (h.return_rate, h.return_bottle_node) == (RATE_UNLIMITED, 0)
    for _, packet in sent[2:]:
        h = packet.rbcc
        assert (h.rate, h.bottle_node, h.current_rate) == (125_000, 0, 30_000)
        assert (h.return_rate, h.return_bottle_node) == (30_000, ROUTER)
    assert sender.rate == 30_000
    assert [(s.rate, s.return_rate, s.return_bottle_node) for s in sender.metrics.rates] == [
        (50_000, RATE_UNLIMITED, 0),
        (30_000, 30_000, ROUTER),
    ]
    assert sender.metrics.rates[1].t_us == t0 + 30_000  # when the first data ACK came
    assert [(s.rate, s.bottle_node) for s in receiver.metrics.rates] == [(30_000, ROUTER)]
    assert sender.state is SenderState.CLOSED
    assert_delivered_in_order(receiver, cfg, 40)


def test_adopting_the_synack_rate_makes_it_the_first_ack() -> None:
    forward = Link(delay_us=15_000, transform=rate_cap(30_000, ROUTER))
    run(config(adopt_synack_rate=True), forward, Link(delay_us=15_000))
    sent = data_sent(forward)
    fields = {(p.rbcc.current_rate, p.rbcc.return_rate, p.rbcc.return_bottle_node) for _, p in sent}
    assert fields == {(30_000, 30_000, ROUTER)}
    times = [t for t, _ in sent]
    assert times == [30_000 + ceil_div(k * 10**9, 30_000) for k in range(len(sent))]


def test_desired_rate_below_the_network_rate_limits_the_sender() -> None:
    forward = Link(transform=rate_cap(30_000, ROUTER))
    sender, _, _ = run(config(desired_rate=20_000, initial_rate=20_000), forward)
    last = data_sent(forward)[-1][1].rbcc
    # The router's 30_000 is above the desired 20_000: it does not lower the
    # rate field, so the echo is the desired rate and no router is named.
    assert (last.current_rate, last.return_rate, last.return_bottle_node) == (20_000, 20_000, 0)
    assert sender.rate == 20_000


def test_no_router_on_the_path_echoes_the_desired_rate() -> None:
    forward = Link()
    sender, _, _ = run(config(initial_rate=10_000), forward)
    assert sender.rate == 125_000
    assert data_sent(forward)[-1][1].rbcc.return_rate == 125_000


def test_duration_bounds_new_data() -> None:
    # 50_000 B/s, 1000 B, no router: a packet every 20 ms for 1 s is 50 packets.
    cfg = config(desired_rate=50_000, initial_rate=50_000, segments=None, duration_us=SECOND)
    sender, receiver, _ = run(cfg)
    assert sender.summary()["segments"] == 50
    assert receiver.metrics.segments_delivered == 50
    assert sender.state is SenderState.CLOSED


# ---------------------------------------------------------------- loss recovery
def test_selective_retransmission_resends_exactly_the_lost_segments() -> None:
    cfg = config()
    lost_pns = {3, 4, 10}
    forward = Link(drop=drop_pns(lost_pns), transform=rate_cap(30_000, ROUTER))
    sender, receiver, _ = run(cfg, forward)
    sent = data_sent(forward)
    lost_seqs = {p.trump.seq for _, p in sent if p.trump.pn in lost_pns}
    resent = [p.trump.seq for _, p in sent]
    assert sorted(s for s in set(resent) if resent.count(s) > 1) == sorted(lost_seqs)
    m = sender.metrics
    assert m.retransmissions == 3
    assert m.rto_expiries == 0  # recovered from the ACKs' missing ranges, not by timeout
    assert receiver.lost == 3
    assert m.data_packets_sent == receiver.metrics.packets_received + receiver.lost
    assert receiver.metrics.duplicates == 0
    assert_delivered_in_order(receiver, cfg, 40)
    # rate control is not touched by loss
    assert [s.rate for s in m.rates] == [50_000, 30_000]
    assert {p.rbcc.current_rate for _, p in sent[2:]} == {30_000}


def test_missing_ranges_in_acks_name_the_lost_segments() -> None:
    forward = Link(drop=drop_pns({3, 4, 10}))
    reverse = Link()
    run(config(), forward, reverse)
    lost = sorted(RbccPacket.decode(d).trump.seq for _, d in forward.dropped)
    assert lost == [3, 4, 8]  # pn 10 was segment 8: 3 and 4 were resent as pn 8, 9
    reports = set()
    for _, data in reverse.sent:
        reports.update(RbccPacket.decode(data).trump.ranges)
    assert reports == {(3, 5), (4, 5), (8, 9)}  # (4, 5) once 3 had been resent


def test_a_lost_tail_is_recovered_by_the_retransmission_timeout() -> None:
    cfg = config(segments=20)
    sender, receiver, _ = run(cfg, Link(drop=drop_pns({19})))
    assert sender.metrics.rto_expiries >= 1
    assert sender.metrics.retransmissions == 1
    assert receiver.lost == 1
    assert sender.state is SenderState.CLOSED
    assert_delivered_in_order(receiver, cfg, 20)


def test_lost_acks_alone_cause_no_retransmission() -> None:
    cfg = config(segments=30)
    reverse = Link(drop=lambda index, data: index in (5, 6, 7, 12))  # index 0 is the SYN-ACK
    sender, receiver, _ = run(cfg, Link(), reverse)
    assert sender.metrics.retransmissions == 0
    assert receiver.lost == 0
    assert_delivered_in_order(receiver, cfg, 30)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_random_loss_both_ways_still_delivers_everything_once(seed: int) -> None:
    cfg = config(segments=150)
    rng = random.Random(seed)
    forward = Link(delay_us=7_000, drop=lambda i, d: rng.random() < 0.15)
    reverse = Link(delay_us=7_000, drop=lambda i, d: rng.random() < 0.15)
    sender, receiver, _ = run(cfg, forward, reverse)
    assert sender.state is SenderState.CLOSED
    assert_delivered_in_order(receiver, cfg, 150)
    assert sender.metrics.segments_acked == 150
    assert sender.metrics.retransmissions > 0
    dropped_data = sum(1 for _, d in forward.dropped if RbccPacket.decode(d).rbcc.flags == 0)
    assert receiver.lost == dropped_data
    assert sender.metrics.data_packets_sent == receiver.metrics.packets_received + receiver.lost


def test_receiver_silent_after_setup_fails_after_30_s() -> None:
    forward = Link(drop=lambda index, data: index > 0)  # only the SYN gets through
    sender, _, net = run(config(), forward)
    assert sender.state is SenderState.FAILED
    assert sender.error == "no ACK for 30 s, giving up"
    assert net.now_us == 20_000 + 30 * SECOND  # 30 s after the SYN-ACK
    assert sender.metrics.rto_expiries >= 4  # 1 s, then doubling


# ---------------------------------------------------------------- FIN
def test_fin_follows_the_last_ack_and_fin_ack_closes() -> None:
    cfg = config(segments=5)
    forward = Link()
    sender, receiver, _ = run(cfg, forward)
    packets = [RbccPacket.decode(d) for _, d in forward.sent]
    assert [p.rbcc.flags for p in packets] == [FLAG_SYN, 0, 0, 0, 0, 0, FLAG_FIN]
    fin = packets[-1].trump
    assert (fin.seq, fin.pn) == (5, 5)  # segments, data transmissions
    assert sender.state is SenderState.CLOSED and sender.metrics.fin_acked
    assert sender.poll_at() is None
    assert receiver.complete


def test_lost_fin_is_repeated_every_second() -> None:
    fins: list[int] = []

    def drop(index: int, data: bytes) -> bool:
        if RbccPacket.decode(data).rbcc.flags == FLAG_FIN and not fins:
            fins.append(index)
            return True
        return False

    forward = Link(drop=drop)
    sender, _, _ = run(config(segments=5), forward)
    fin_times = [t for t, d in forward.sent if RbccPacket.decode(d).rbcc.flags == FLAG_FIN]
    assert len(fin_times) == 2
    assert fin_times[1] - fin_times[0] == SECOND
    assert sender.metrics.fin_acked and sender.state is SenderState.CLOSED


def test_unanswered_fin_gives_up_after_30_s_but_the_data_was_delivered() -> None:
    forward = Link(drop=lambda i, d: RbccPacket.decode(d).rbcc.flags == FLAG_FIN)
    sender, receiver, _ = run(config(segments=5), forward)
    fin_times = [t for t, d in forward.sent if RbccPacket.decode(d).rbcc.flags == FLAG_FIN]
    assert len(fin_times) == 30
    assert sender.state is SenderState.CLOSED
    assert not sender.metrics.fin_acked
    assert sender.metrics.segments_acked == 5
    assert receiver.metrics.segments_delivered == 5


# ---------------------------------------------------------------- misuse
def test_time_must_not_go_backwards() -> None:
    sender = RbccSender(config(), 100)
    with pytest.raises(ValueError, match="backwards"):
        sender.on_timer(99)


@pytest.mark.parametrize(
    "kw",
    [
        {"desired_rate": 0},
        {"initial_rate": RATE_UNLIMITED},
        {"size": 67},
        {"size": 65536},
        {"segments": None, "duration_us": None},
        {"segments": -1},
        {"flow_id": 1 << 16},
    ],
)
def test_bad_configuration_is_rejected(kw: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        config(**kw)


def test_summary_reports_rates_over_time() -> None:
    forward = Link(delay_us=15_000, transform=rate_cap(30_000, ROUTER))
    sender, receiver, _ = run(config(), forward, Link(delay_us=15_000))
    s = sender.summary()
    assert s["state"] == "closed" and s["packets_sent"] == 40 and s["bytes_sent"] == 40_000
    assert s["rates"] == [
        {"t_s": 0.0, "rate": 50_000, "return_rate": RATE_UNLIMITED, "return_bottle_node": 0},
        {"t_s": 0.06, "rate": 30_000, "return_rate": 30_000, "return_bottle_node": ROUTER},
    ]
    r = receiver.summary()
    assert r["packets_received"] == 40 and r["lost"] == 0 and r["complete"]
    assert r["rates"] == [{"t_s": 0.03, "rate": 30_000, "bottle_node": ROUTER}]


def test_segments_acknowledged_while_queued_are_not_resent() -> None:
    # The ACKs of the first 31 data packets are lost: the retransmission timer
    # fires (200, 400, 800, 1600 ms backoff) and queues segments that the first
    # ACK to get through then acknowledges while they still wait. They must
    # not be resent, and nothing past the 32 segments may be sent.
    cfg = config(desired_rate=10_000, initial_rate=10_000, segments=32)
    sender = RbccSender(cfg, 0)
    receiver = RbccReceiver(FLOW)
    forward = Link()
    reverse = Link(drop=lambda index, data: 1 <= index <= 31)  # index 0 is the SYN-ACK
    SimNet(sender, receiver, forward, reverse).run(600 * SECOND)
    assert sender.metrics.acked_while_queued > 0  # it happened
    assert sender.metrics.rto_expiries >= 4
    assert receiver.lost == 0
    assert receiver.metrics.duplicates == sender.metrics.retransmissions > 0
    assert max(p.trump.seq for _, p in data_sent(forward)) == 31
    assert sender.state is SenderState.CLOSED
    assert_delivered_in_order(receiver, cfg, 32)
