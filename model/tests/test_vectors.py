"""The vector files agree with the model, and bad files get one-line errors."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from ratelab_model.router import Router
from ratelab_model.vectors.__main__ import main
from ratelab_model.vectors.cases import CASES
from ratelab_model.vectors.schema import VectorError, load_file
from ratelab_model.vectors.tool import DEFAULT_DIR, check


def test_files_match_the_model() -> None:
    assert check() == []


def test_cli_check_exit_status(tmp_path: Path) -> None:
    assert main(["--check"]) == 0
    assert main(["--check", "--dir", str(tmp_path)]) == 1  # every file missing


def test_a_changed_expectation_is_reported(tmp_path: Path) -> None:
    shutil.copytree(DEFAULT_DIR, tmp_path, dirs_exist_ok=True)
    path = tmp_path / "rbcc_cache.json"
    data = json.loads(path.read_text())
    data["expected"]["counters"]["2"]["abt_hits"] += 1
    path.write_text(json.dumps(data))
    (problem,) = check(tmp_path)
    assert "rbcc_cache.json" in problem and "$.expected.counters.2.abt_hits" in problem


def _broken(tmp_path: Path, edit: str, value: object) -> str:
    data = json.loads((DEFAULT_DIR / "red_early.json").read_text())
    target = data
    *parents, last = edit.split(".")
    for key in parents:
        target = target[int(key)] if isinstance(target, list) else target[key]
    target[last] = value
    path = tmp_path / "red_early.json"
    path.write_text(json.dumps(data))
    with pytest.raises(VectorError) as err:
        load_file(path)
    message = str(err.value)
    assert "\n" not in message and str(path) in message
    return message


def test_malformed_files_name_file_and_field(tmp_path: Path) -> None:
    assert "$.config.ports[1].mac" in _broken(tmp_path, "config.ports.1.mac", "zz")
    assert "$.packets[3].frame" in _broken(tmp_path, "packets.3.frame", "0g")
    assert "$.packets[0].time_us" in _broken(tmp_path, "packets.0.time_us", -1)
    assert "$.config.ports[1].aqm.w_q" in _broken(tmp_path, "config.ports.1.aqm.w_q", "x")
    assert "$.timing" in _broken(tmp_path, "timing", "sometimes")
    assert "abt_slots" in _broken(tmp_path, "config.abt_slots", 1000)
    (tmp_path / "bad.json").write_text("{")
    with pytest.raises(VectorError, match=r"bad\.json: not readable JSON"):
        load_file(tmp_path / "bad.json")


def test_vectors_cover_every_rule() -> None:
    """The suite exercises each decision, RED rule and ABT outcome at least once."""
    decisions, branches, outcomes, timings = set(), set(), set(), set()
    for build in CASES:
        case = build()
        timings.add(case.timing)
        router = Router(case.config)
        for p in case.packets:
            record = router.process_packet(p.port, p.frame, p.time_us)
            decisions.add(record.decision)
            branches.add(record.red_branch and record.red_branch.value)
            outcomes.add(record.rbcc)
        removals = sum(c.abt_removals for c in router.counters.values())
        if case.name == "rbcc_collision_eviction":
            assert removals == 1
    assert decisions == {
        "forwarded",
        "not_ipv4",
        "malformed",
        "bad_checksum",
        "ttl_expired",
        "no_route",
        "queue_full",
        "red_early",
        "red_forced",
    }
    assert branches == {None, "below_min", "above_max", "count_limit", "draw_drop", "draw_admit"}
    assert outcomes == {None, "hit", "update", "collision"}
    assert timings == {"any", "exact"}


def test_vectors_fit_one_default_p4_build() -> None:
    """Compile-time sizes of router.p4 (ABT_SLOTS, DECAY_LEN, MAX_PORTS) are the
    same in every case, so one build of the program runs the whole suite."""
    for build in CASES:
        config = build().config
        assert (config.abt_slots, config.decay_len) == (1024, 16384), config
        assert all(p.port < 64 for p in config.ports)
