import itertools

from ratelab_hosts.pacing import Pacer, ceil_div


def test_departures_are_exact_multiples_of_size_over_rate() -> None:
    rate, size = 30_000, 1000  # 33333.3 us per packet
    pacer = Pacer(rate)
    assert pacer.next_at() is None  # the first packet may leave at once
    times = []
    now = 500
    for _ in range(10):
        times.append(now)
        pacer.on_send(now, size)
        now = pacer.next_at()
        assert now is not None
    assert times == [500 + ceil_div(k * size * 1_000_000, rate) for k in range(10)]
    gaps = {b - a for a, b in itertools.pairwise(times)}
    assert gaps <= {33_333, 33_334}
    assert times[-1] - times[0] == ceil_div(9 * size * 1_000_000, rate)


def test_rate_change_spaces_the_next_packet_at_the_new_rate() -> None:
    pacer = Pacer(100_000)
    pacer.on_send(0, 1000)
    assert pacer.next_at() == 10_000
    pacer.on_send(10_000, 1000)
    pacer.set_rate(50_000)
    assert pacer.next_at() == 30_000  # 10_000 + 1000 B / 50_000 B/s
    pacer.on_send(30_000, 500)
    assert pacer.next_at() == 40_000


def test_a_late_caller_restarts_the_schedule_instead_of_bursting() -> None:
    pacer = Pacer(100_000, max_lateness_us=1_000)
    pacer.on_send(0, 1000)
    pacer.on_send(10_500, 1000)  # 500 us late: within tolerance, schedule kept
    assert pacer.next_at() == 20_000
    assert pacer.restarts == 0
    pacer.on_send(50_000, 1000)  # three intervals late: restart at now
    assert pacer.next_at() == 60_000
    assert (pacer.restarts, pacer.lost_us) == (1, 30_000)
    assert not pacer.ready(59_999)
    assert pacer.ready(60_000)
