"""The configuration file: the good example, and each class of bad input with its
exact position and message."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest
from ratelab_ctl.configfile import ConfigError, load_config, parse_config
from ratelab_model.config import AqmConfig, NextHop, PortConfig, Route, RouterConfig
from ratelab_model.presets import PRESETS
from ratelab_model.router import Router

BASE = """\
router_id: 10.0.0.1
ports:
  1:
    mac: 02:00:00:00:00:01
    rate: 1gbit
    queue_limit: 64
  3:
    mac: 02:00:00:00:00:03
    rate: 10mbit
    queue_limit: 50
    aqm: redok-hspa
next_hops:
  a: {port: 1, mac: 02:00:00:00:01:01}
  b: {port: 3, mac: 02:00:00:00:01:03}
routes:
  10.0.1.0/24: a
  10.0.3.0/24: b
"""


def edit(line: int, new: str | None, insert: bool = False) -> str:
    lines = BASE.splitlines()
    if insert:
        lines.insert(line - 1, new or "")
    elif new is None:
        del lines[line - 1]
    else:
        lines[line - 1] = new
    return "\n".join(lines) + "\n"


def error_of(text: str, overrides: tuple[str, ...] = ()) -> str:
    with pytest.raises(ConfigError) as info:
        parse_config(text, "r.yaml", overrides)
    return str(info.value)


def test_example_converts_to_the_model_config(example_path: Path) -> None:
    cfg = load_config(example_path)
    hops = (
        NextHop(1, 1, bytes.fromhex("020000000101")),
        NextHop(2, 2, bytes.fromhex("020000000102")),
        NextHop(3, 3, bytes.fromhex("020000000103")),
    )
    expected = RouterConfig(
        router_id=0x0A000001,
        ports=(
            PortConfig(1, bytes.fromhex("020000000001"), 10**9, 64, 118_750_000, AqmConfig()),
            PortConfig(2, bytes.fromhex("020000000002"), 10**9, 64, 118_750_000, AqmConfig()),
            # 2 x ceil(10e6 * 0.040 / 12000) = 68; 10e6 * 0.95 / 8 = 1187500 B/s
            PortConfig(
                3, bytes.fromhex("020000000003"), 10**7, 68, 1_187_500, PRESETS["redok-hspa"].aqm(7)
            ),
        ),
        next_hops=hops,
        routes=(
            Route(0x0A000100, 24, 1),
            Route(0x0A000200, 24, 2),
            Route(0x0A000300, 24, 3),
        ),
        abt_slots=1024,
        idle_timeout_us=1_000_000,
        min_rate=1500,
    )
    assert cfg.router == expected
    assert cfg.device_id == 0 and cfg.address == "127.0.0.1:9559"
    assert dict(cfg.next_hop_names) == {"sender1": 1, "sender2": 2, "receiver": 3}
    assert cfg.port_settings(3).aqm_name == "redok-hspa"
    assert cfg.port_settings(3).utilisation == Decimal("0.95")
    Router(cfg.router)  # the model accepts it as it is


def test_defaults_and_presets() -> None:
    cfg = parse_config(BASE, "r.yaml")
    r = cfg.router
    assert (r.min_rate, r.idle_timeout_us, r.abt_slots, r.decay_len) == (1500, 10**6, 1024, 16384)
    assert r.port(1).aqm == AqmConfig("fifo")
    assert r.port(3).aqm == PRESETS["redok-hspa"].aqm(1)
    assert r.port(3).queue_limit == 50  # given explicitly, wins over the preset's 100
    no_limit = parse_config(edit(10, None), "r.yaml")
    assert no_limit.router.port(3).queue_limit == 100  # the preset's
    assert r.port(3).rbcc_capacity == 10_000_000 * 95 // 100 // 8


def test_other_forms() -> None:
    text = BASE.replace("router_id: 10.0.0.1", "router_id: 7\ndevice_id: 3\naddress: sw:50001")
    text += "rbcc: {min_rate: 1, idle_timeout: 250ms, abt_slots: 512}\ndecay_len: 100\n"
    text = text.replace(
        "    aqm: redok-hspa",
        "    aqm: {w_q: 0.2, max_p: 1, th_min: 0, th_max: 3, seed: 0x10}\n"
        "    utilisation: 0.5\n    delay: 70ms",
    ).replace("queue_limit: 50", "queue_limit: 2xBDP")
    cfg = parse_config(text, "r.yaml")
    r = cfg.router
    assert (r.router_id, cfg.device_id, cfg.address) == (7, 3, "sw:50001")
    assert (r.min_rate, r.idle_timeout_us, r.abt_slots, r.decay_len) == (1, 250_000, 512, 100)
    assert r.port(3).aqm == AqmConfig("red", Decimal("0.2"), Decimal("1"), 0, 3, 16)
    assert r.port(3).rbcc_capacity == 625_000
    assert r.port(3).queue_limit == 2 * 117  # ceil(10e6 * 0.14 / 12000) = 117
    unlimited = parse_config(BASE.replace("rate: 1gbit", "rate: unlimited"), "r.yaml")
    assert unlimited.router.port(1).rate_bps == 0
    assert unlimited.router.port(1).rbcc_capacity == 0xFFFFFFFF
    default_route = parse_config(BASE + "  0.0.0.0/0: a\n", "r.yaml")
    assert default_route.router.routes[-1] == Route(0, 0, 1)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        # unknown port
        (
            edit(14, "  b: {port: 4, mac: 02:00:00:00:01:03}"),
            "r.yaml:14:13: error: next_hops.b.port: expected a configured port "
            "(one of 1, 3), got 4",
        ),
        # duplicate route, written the same way and differently
        (
            edit(18, "  10.0.1.0/24: b", insert=True),
            "r.yaml:18:3: error: routes.10.0.1.0/24: duplicate key (first given at line 16)",
        ),
        (
            edit(18, "  10.0.1.000/24: b", insert=True),
            "r.yaml:18:3: error: routes.10.0.1.000/24: duplicate route: "
            "the same prefix as routes.10.0.1.0/24",
        ),
        # a preset that does not exist
        (
            edit(11, "    aqm: redok-foo"),
            "r.yaml:11:10: error: ports.3.aqm: expected fifo, a preset (red-edge, red-hspa, "
            "red-lte, redok-edge, redok-hspa, redok-lte) or a mapping of RED parameters, "
            "got 'redok-foo'",
        ),
        (
            edit(11, "    aqm: {preset: red-wifi}"),
            "r.yaml:11:19: error: ports.3.aqm.preset: expected one of red-edge, red-hspa, "
            "red-lte, redok-edge, redok-hspa, redok-lte, got 'red-wifi'",
        ),
        # values out of range
        (
            edit(6, "    queue_limit: 70000"),
            "r.yaml:6:18: error: ports.1.queue_limit: expected a queue limit in packets "
            "in 0..65535, got 70000",
        ),
        (
            edit(3, "  600:"),
            "r.yaml:3:3: error: ports.600: expected a port number 0..511, got 600",
        ),
        (
            edit(1, "router_id: 10.0.0.300"),
            "r.yaml:1:12: error: router_id: expected a router id (a 32-bit number or a dotted "
            "quad like 10.0.0.1), got '10.0.0.300'",
        ),
        (
            edit(11, "    aqm: {w_q: 0.002, max_p: 0.1, th_min: 9, th_max: 9}"),
            "r.yaml:11:54: error: ports.3.aqm.th_max: expected more than th_min (9), got 9",
        ),
        (
            edit(11, "    utilisation: 1.2"),
            "r.yaml:11:18: error: ports.3.utilisation: expected a fraction in (0, 1], got 1.2",
        ),
        # wrong types
        (
            edit(5, "    rate: [1, 2]"),
            "r.yaml:5:11: error: ports.1.rate: expected a link rate like 160kbit, 10mbit or "
            "1gbit (bit/s; units bit, kbit, mbit, gbit), got a list",
        ),
        (
            edit(5, "    rate: 10mbps"),
            "r.yaml:5:11: error: ports.1.rate: expected a link rate like 160kbit, 10mbit or "
            "1gbit (bit/s; units bit, kbit, mbit, gbit), got '10mbps'",
        ),
        (
            edit(4, "    mac: 02:00:00:00:01"),
            "r.yaml:4:10: error: ports.1.mac: expected a MAC address like 02:00:00:00:00:01, "
            "got '02:00:00:00:01'",
        ),
        (
            "- 1\n- 2\n",
            "r.yaml:1:1: error: expected a mapping of router settings, got a list",
        ),
        # unknown keys
        (
            edit(7, "    colour: red", insert=True),
            "r.yaml:7:5: error: ports.1.colour: unknown key; expected one of: mac, rate, delay, "
            "queue_limit, utilisation, rbcc_capacity, aqm, priority_queues, priority",
        ),
        (
            "rooter_id: 1\n" + BASE,
            "r.yaml:1:1: error: rooter_id: unknown key; expected one of: router_id, device_id, "
            "address, rbcc, decay_len, ports, next_hops, routes",
        ),
        # missing keys, bad references
        (
            edit(4, None),
            "r.yaml:4:5: error: ports.1: missing required key 'mac'",
        ),
        (
            edit(17, "  10.0.3.0/24: c"),
            "r.yaml:17:16: error: routes.10.0.3.0/24: expected a next hop name (a, b), got 'c'",
        ),
        (
            edit(16, "  10.0.1.1/24: a"),
            "r.yaml:16:3: error: routes.10.0.1.1/24: expected the host bits beyond /24 to be "
            "zero (did you mean 10.0.1.0/24?)",
        ),
        (
            edit(6, "    queue_limit: 2xBDP"),
            "r.yaml:6:18: error: ports.1.queue_limit: 2xBDP needs the port's rate and one-way "
            "delay (delay: 50ms)",
        ),
        (
            edit(3, "  3:"),
            "r.yaml:7:3: error: ports.3: duplicate key (first given at line 3)",
        ),
        (
            edit(3, "  03:"),
            "r.yaml:7:3: error: ports.3: port 3 is given twice",
        ),
    ],
)
def test_bad_input(text: str, message: str) -> None:
    assert error_of(text) == message


def test_invalid_yaml_and_empty_file() -> None:
    msg = error_of(edit(13, "  a: {port: 1, mac: 02:00:00:00:01:01"))
    assert msg == "r.yaml:14:4: error: invalid YAML: expected ',' or '}', but got ':'"
    assert error_of("") == "r.yaml:1:1: error: empty file: expected a mapping"


def test_missing_file(tmp_path: Path) -> None:
    path = tmp_path / "nope.yaml"
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert str(info.value) == f"{path}:1:1: error: cannot read: No such file or directory"


def test_overrides_change_settings() -> None:
    cfg = parse_config(
        BASE,
        "r.yaml",
        (
            "ports.3.aqm=red-lte",
            "ports.1.utilisation=0.5",
            "routes.10.0.9.0/24=b",
            "routes.10.0.1.0/24=~",
            "rbcc.min_rate=2000",
        ),
    )
    r = cfg.router
    assert r.port(3).aqm == PRESETS["red-lte"].aqm()
    assert r.port(1).rbcc_capacity == 10**9 // 2 // 8
    assert r.routes == (Route(0x0A000300, 24, 2), Route(0x0A000900, 24, 2))
    assert r.min_rate == 2000
    everywhere = parse_config(
        BASE, "r.yaml", ("rbcc.utilisation=0.5", "ports.3.utilisation=1", "router_id=10.0.0.2")
    )
    assert everywhere.router.port(1).rbcc_capacity == 10**9 // 2 // 8
    assert everywhere.router.port(3).rbcc_capacity == 10**7 // 8
    assert everywhere.router.router_id == 0x0A000002


@pytest.mark.parametrize(
    ("override", "message"),
    [
        (
            "ports.3.aqm=redok-foo",
            "<command line>:1:13: error: ports.3.aqm: expected fifo, a preset (red-edge, "
            "red-hspa, red-lte, redok-edge, redok-hspa, redok-lte) or a mapping of RED "
            "parameters, got 'redok-foo'",
        ),
        (
            "ports.1.rat=1gbit",
            "<command line>:1:13: error: ports.1.rat: unknown key; expected one of: mac, rate, "
            "delay, queue_limit, utilisation, rbcc_capacity, aqm, priority_queues, priority",
        ),
        ("ports.1", "<command line>:1:1: error: expected key=value, got 'ports.1'"),
        (
            "router_id.x=1",
            "<command line>:1:1: error: router_id: is not a mapping, cannot set 'router_id.x'",
        ),
        (
            "ports.1.queue_limit=[1",
            "<command line>:1:23: error: invalid YAML: expected ',' or ']', but got '<stream end>'",
        ),
    ],
)
def test_bad_overrides(override: str, message: str) -> None:
    assert error_of(BASE, (override,)) == message
