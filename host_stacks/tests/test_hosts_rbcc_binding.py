"""What the Rust binding (ratelab_hoststack) adds to the Python API it keeps:
state members that compare with `is`, live metrics, one-line ValueErrors for
any bad integer, malformed datagrams counted, JSON-ready summaries."""

from __future__ import annotations

import json

import pytest
from ratelab_hosts.rbcc_receiver import RbccListener, RbccReceiver, ReceiverState
from ratelab_hosts.rbcc_sender import RbccSender, SenderConfig, SenderState
from ratelab_hosts.wire import NEXT_PROTO_TRUMP, RbccPacket, TrumpHeader
from ratelab_model.packet import FLAG_SYN, RbccHeader


def config(**kw: object) -> SenderConfig:
    base: dict[str, object] = dict(desired_rate=125_000, initial_rate=50_000, segments=3)
    base.update(kw)
    return SenderConfig(**base)  # type: ignore[arg-type]


def syn(flow_id: int = 1) -> bytes:
    rbcc = RbccHeader(FLAG_SYN, NEXT_PROTO_TRUMP, 50_000, 0, 0, 0, 50_000)
    return RbccPacket(rbcc, TrumpHeader(flow_id)).encode()


def test_states_are_members_with_their_summary_value() -> None:
    sender = RbccSender(config(), 0)
    assert sender.state is SenderState.SYN_SENT
    assert sender.state.value == sender.summary()["state"] == "syn_sent"
    receiver = RbccReceiver(1)
    assert receiver.state is ReceiverState.LISTEN
    receiver.on_datagram(0, syn())
    assert receiver.state is ReceiverState.ESTABLISHED
    assert receiver.state.value == receiver.summary()["state"] == "established"


def test_metrics_are_a_live_view() -> None:
    sender = RbccSender(config(), 0)
    metrics = sender.metrics
    assert metrics.syn_sent == 0
    sender.on_timer(0)
    assert metrics.syn_sent == 1
    assert [(s.t_us, s.rate) for s in metrics.rates] == [(0, 50_000)]


@pytest.mark.parametrize(
    ("kw", "message"),
    [
        ({"desired_rate": 1 << 70}, "desired_rate must be 1..0xFFFFFFFF B/s"),
        ({"initial_rate": -5}, "initial_rate must be 1..0xFFFFFFFE B/s"),
        ({"size": "big"}, "size must be 68..65535 bytes (IPv4 total length)"),
        ({"segments": 1 << 32}, "segments must be >= 0"),
        ({"segments": None, "duration_us": -1}, "duration_us must be >= 0"),
        ({"flow_id": -1}, "flow_id must fit 16 bits"),
        ({"syn_interval_us": 0}, "syn_interval_us must be >= 1"),
    ],
)
def test_bad_values_are_one_line_value_errors(kw: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        config(**kw)


def test_time_going_backwards_names_both_times() -> None:
    sender = RbccSender(config(), 100)
    with pytest.raises(ValueError, match=r"^time went backwards: 99 us after 100 us$"):
        sender.on_datagram(99, syn())


def test_malformed_datagrams_are_counted_and_ignored() -> None:
    sender = RbccSender(config(), 0)
    assert sender.on_datagram(0, b"\x10junk") == []
    assert sender.metrics.malformed == 1
    receiver = RbccReceiver(1)
    assert receiver.on_datagram(0, syn()[:30]) == []  # TRUMP header cut short
    assert receiver.metrics.malformed == 1
    listener = RbccListener()
    assert listener.on_datagram(0, "10.0.0.1", b"") == []
    assert listener.on_datagram(0, "10.0.0.1", syn()) != []
    assert listener.malformed == 1
    assert list(listener.flows) == [("10.0.0.1", 1)]


def test_summaries_are_fresh_json_ready_dicts() -> None:
    sender = RbccSender(config(), 0)
    summary = sender.summary()
    summary["error"] = "interrupted"  # the driver does this
    assert sender.summary()["error"] is None
    assert json.loads(json.dumps(summary))["rates"][0]["rate"] == 50_000
    assert json.loads(json.dumps(RbccReceiver(1).summary()))["lost"] == 0
