"""RbccReceiver and RbccListener driven directly with hand-made packets."""

from __future__ import annotations

from dataclasses import replace

from ratelab_hosts.rbcc_receiver import RbccListener, RbccReceiver, ReceiverState
from ratelab_hosts.wire import MAX_RANGES, NEXT_PROTO_TRUMP, RbccPacket, TrumpHeader
from ratelab_model.hosts import ack_for
from ratelab_model.packet import FLAG_ACK, FLAG_FIN, FLAG_SYN, RATE_UNLIMITED, RbccHeader

FLOW = 3


def packet(flags: int, seq: int = 0, pn: int = 0, rate: int = 40_000, node: int = 0) -> bytes:
    rbcc = RbccHeader(flags, NEXT_PROTO_TRUMP, rate, node, 55_000, 8, 60_000)
    return RbccPacket(rbcc, TrumpHeader(FLOW, seq=seq, pn=pn, ts=1234 + pn), b"p" * 10).encode()


def connected() -> RbccReceiver:
    receiver = RbccReceiver(FLOW)
    receiver.on_datagram(0, packet(FLAG_SYN))
    return receiver


def ack(data: list[bytes]) -> RbccPacket:
    assert len(data) == 1
    return RbccPacket.decode(data[0])


def test_ack_copies_rate_and_bottle_node_and_carries_no_rate_of_its_own() -> None:
    receiver = connected()
    reply = ack(receiver.on_datagram(10, packet(0, seq=0, pn=0, rate=31_000, node=77)))
    assert reply.rbcc == RbccHeader(
        flags=FLAG_ACK,
        next_proto=NEXT_PROTO_TRUMP,
        rate=RATE_UNLIMITED,
        bottle_node=0,
        return_rate=31_000,
        return_bottle_node=77,
        current_rate=0,
    )
    # the same header the reference model's host helper writes
    data_header = RbccPacket.decode(packet(0, rate=31_000, node=77)).rbcc
    assert reply.rbcc == ack_for(data_header, NEXT_PROTO_TRUMP)
    assert reply.trump == TrumpHeader(FLOW, seq=0, pn=0, ts=1234, cum_ack=1, high=1)
    assert reply.payload == b""


def test_syn_and_fin_are_answered_with_their_flags_and_echo() -> None:
    receiver = RbccReceiver(FLOW)
    synack = ack(receiver.on_datagram(0, packet(FLAG_SYN, rate=9_000, node=4)))
    assert synack.rbcc.flags == FLAG_SYN | FLAG_ACK
    assert (synack.rbcc.return_rate, synack.rbcc.return_bottle_node) == (9_000, 4)
    assert receiver.state is ReceiverState.ESTABLISHED
    # a repeated SYN is answered again, without resetting anything
    receiver.on_datagram(1, packet(0, seq=0, pn=0))
    assert ack(receiver.on_datagram(2, packet(FLAG_SYN))).trump.cum_ack == 1
    finack = ack(receiver.on_datagram(3, packet(FLAG_FIN, seq=1, pn=1)))
    assert finack.rbcc.flags == FLAG_FIN | FLAG_ACK
    assert receiver.state is ReceiverState.CLOSED and receiver.complete
    assert (
        ack(receiver.on_datagram(4, packet(FLAG_FIN, seq=1, pn=1))).rbcc.flags
        == FLAG_FIN | FLAG_ACK
    )


def test_data_before_setup_and_foreign_packets_are_ignored() -> None:
    receiver = RbccReceiver(FLOW)
    assert receiver.on_datagram(0, packet(0)) == []
    assert receiver.on_datagram(0, b"\x10") == []
    other = RbccPacket.decode(packet(FLAG_SYN))
    assert receiver.on_datagram(0, replace(other, trump=TrumpHeader(FLOW + 1)).encode()) == []
    is_ack = replace(other, rbcc=replace(other.rbcc, flags=FLAG_ACK))
    assert receiver.on_datagram(0, is_ack.encode()) == []
    assert receiver.metrics.packets_received == 0 and receiver.state is ReceiverState.LISTEN


def test_in_order_delivery_ranges_duplicates_and_losses() -> None:
    receiver = connected()
    replies = []
    # segments 0 1 _ _ 4 _ 6 arrive (pn = seq), then 3 as pn 7, then 6 again (pn 8)
    for seq, pn in [(0, 0), (1, 1), (4, 4), (6, 6), (3, 7), (6, 8)]:
        replies.append(ack(receiver.on_datagram(pn, packet(0, seq=seq, pn=pn))).trump)
    assert [(t.cum_ack, t.high, t.ranges) for t in replies] == [
        (1, 1, ()),
        (2, 2, ()),
        (2, 5, ((2, 4),)),
        (2, 7, ((2, 4), (5, 6))),
        (2, 7, ((2, 3), (5, 6))),
        (2, 7, ((2, 3), (5, 6))),
    ]
    assert [seq for seq, _ in receiver.take_delivered()] == [0, 1]
    m = receiver.metrics
    assert m.duplicates == 1
    assert m.packets_received == 6
    assert receiver.lost == 3  # pn 2, 3, 5 never arrived
    for seq, pn in [(2, 9), (5, 10)]:
        receiver.on_datagram(20, packet(0, seq=seq, pn=pn))
    assert [seq for seq, _ in receiver.take_delivered()] == [2, 3, 4, 5, 6]
    assert receiver.take_delivered() == []
    # the FIN says 13 transmissions were made: 11, 12 were lost too
    receiver.on_datagram(30, packet(FLAG_FIN, seq=7, pn=13))
    assert receiver.lost == 5
    assert m.packets_received + receiver.lost == 13
    assert receiver.complete


def test_range_report_is_cut_at_max_ranges() -> None:
    receiver = connected()
    for k in range(MAX_RANGES + 3):
        receiver.on_datagram(k, packet(0, seq=2 * k + 1, pn=k))
    high, ranges = receiver.missing()
    assert len(ranges) == MAX_RANGES
    assert ranges == tuple((2 * k, 2 * k + 1) for k in range(MAX_RANGES))
    assert high == ranges[-1][1]  # the report covers [cum_ack, high) only


def test_echoed_rates_are_recorded_on_change() -> None:
    receiver = connected()
    for pn, (rate, node) in enumerate([(50_000, 1), (50_000, 1), (40_000, 2), (40_000, 2)]):
        receiver.on_datagram(100 * (pn + 1), packet(0, seq=pn, pn=pn, rate=rate, node=node))
    assert [(s.t_us, s.rate, s.bottle_node) for s in receiver.metrics.rates] == [
        (100, 50_000, 1),
        (300, 40_000, 2),
    ]


def test_listener_separates_flows_by_source_and_flow_id() -> None:
    listener = RbccListener()
    assert listener.on_datagram(0, "10.0.0.1", packet(0)) == []  # no connection yet
    assert len(listener.on_datagram(0, "10.0.0.1", packet(FLAG_SYN))) == 1
    assert len(listener.on_datagram(0, "10.0.0.2", packet(FLAG_SYN))) == 1
    listener.on_datagram(1, "10.0.0.1", packet(0, seq=0, pn=0))
    listener.on_datagram(1, "10.0.0.1", packet(0, seq=1, pn=1))
    listener.on_datagram(1, "10.0.0.2", packet(0, seq=0, pn=0))
    assert sorted(listener.flows) == [("10.0.0.1", FLOW), ("10.0.0.2", FLOW)]
    assert listener.flows[("10.0.0.1", FLOW)].metrics.segments_delivered == 2
    assert listener.flows[("10.0.0.2", FLOW)].metrics.segments_delivered == 1
    assert len(listener.take_delivered()) == 3
    assert listener.on_datagram(2, "10.0.0.3", b"short") == []
