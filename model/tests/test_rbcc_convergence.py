"""RBCC.md "What counts as correct": the worked example and N flows on one bottleneck."""

from __future__ import annotations

from ratelab_model.hosts import RateSender
from ratelab_model.router import Router
from ratelab_model.vectors.cases import (
    WORKED_ALLOCATION,
    worked_example_config,
    worked_example_run,
)
from rbcc_network import FORWARD, Flow, chain_router, run_rounds


def test_worked_example_settles_at_max_min_allocation() -> None:
    # MIN_RATE is set to 1 B/s: the example's capacities are below the default 1500.
    r1, r2, r3 = (chain_router(i + 1, c) for i, c in enumerate((1000, 100, 1000)))
    paths = {"A": [r1, r2], "B": [r1], "C": [r1, r3], "D": [r3], "E": [r2]}
    flows = {
        name: Flow(i + 1, path, RateSender(100)) for i, (name, path) in enumerate(paths.items())
    }
    now = run_rounds(list(flows.values()), 10)
    # Every share here is an exact division (950 / 2, 100 / 2, 1000 - 475), and
    # floor(x * floor(2^32 / k) / 2^32) is floor(x / k) or one less, so each
    # rate is within 1 B/s of the real-valued max-min allocation.
    expected = {"A": 50, "B": 475, "C": 475, "D": 525, "E": 50}
    for name, rate in expected.items():
        assert abs(flows[name].echoed[-1] - rate) <= 1, name
        assert flows[name].sender.rate == flows[name].echoed[-1]

    updates_settled = [r.counters[p].abt_updates for r in (r1, r2, r3) for p in (1, FORWARD)]
    hits_settled = sum(r.counters[FORWARD].abt_hits for r in (r1, r2, r3))
    run_rounds(list(flows.values()), 10, start_us=now)
    assert [r.counters[p].abt_updates for r in (r1, r2, r3) for p in (1, FORWARD)] == (
        updates_settled
    )
    assert sum(r.counters[FORWARD].abt_hits for r in (r1, r2, r3)) == hits_settled + 10 * 7
    for name, rate in expected.items():
        assert set(flows[name].echoed[-10:]) == {rate}


def _one_bottleneck(capacity: int, senders: list[RateSender], rounds: int) -> list[Flow]:
    router = chain_router(1, capacity, min_rate=1500)
    flows = [Flow(i + 1, [router], s) for i, s in enumerate(senders)]
    run_rounds(flows, rounds)
    return flows


def test_n_flows_converge_to_capacity_over_n() -> None:
    capacity, n = 1_000_000, 12
    senders = [RateSender(initial_rate=1000 * (i + 1) ** 2) for i in range(n)]
    flows = _one_bottleneck(capacity, senders, rounds=6)
    for flow in flows:
        assert abs(flow.echoed[-1] - capacity / n) <= capacity / n / 100


def test_flow_held_down_by_its_source_leaves_the_rest_to_the_others() -> None:
    capacity, n = 900_000, 4
    senders = [RateSender(initial_rate=5000) for _ in range(n)]
    senders[0].desired_rate = 60_000  # never lowered by the router: limited at 60000
    flows = _one_bottleneck(capacity, senders, rounds=6)
    assert flows[0].sender.rate == 60_000
    fair = (capacity - 60_000) // (n - 1)  # 280000; the reciprocal floors may give 1 less
    for flow in flows[1:]:
        assert fair - 1 <= flow.echoed[-1] <= fair


def test_lone_flow_limited_by_its_source_holds_its_rate() -> None:
    """Amendment 1: a lone flow whose desired rate is below capacity but above
    half of it once oscillated between its rate and capacity minus its rate
    (1,000,000 <-> 187,500 B/s on a 10 Mbit/s port at 0.95)."""
    sender = RateSender(initial_rate=1_000_000, desired_rate=1_000_000)
    (flow,) = _one_bottleneck(1_187_500, [sender], rounds=20)
    assert set(flow.echoed) == {1_000_000}
    assert sender.return_bottle_node == 0


def test_flow_limited_elsewhere_beside_flows_set_here_is_never_stamped() -> None:
    capacity = 900_000
    senders = [RateSender(initial_rate=5000) for _ in range(3)]
    senders[0].desired_rate = 200_000  # below the fair share of 300000
    flows = _one_bottleneck(capacity, senders, rounds=8)
    assert set(flows[0].echoed) == {200_000}
    for flow in flows[1:]:
        assert set(flow.echoed[-4:]) == {350_000}


def test_worked_example_vectors_settle_with_misses_only_while_settling() -> None:
    """The closed loop behind the rbcc_worked_example_* vectors: the max-min
    allocation, then only ABT hits at every router for the second half."""
    seen, senders, _routers = worked_example_run()
    assert {flow: s.rate for flow, s in senders.items()} == WORKED_ALLOCATION
    assert {flow: s.return_rate for flow, s in senders.items()} == WORKED_ALLOCATION
    for name, packets in seen.items():
        router = Router(worked_example_config(name))
        outcomes = [router.process_packet(p.port, p.frame, p.time_us).rbcc for p in packets]
        assert set(outcomes[len(outcomes) // 2 :]) == {"hit"}, name
        assert "update" in outcomes[: len(outcomes) // 2], name
