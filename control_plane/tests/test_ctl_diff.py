"""Run-time changes produce the minimal set of writes."""

from __future__ import annotations

from pathlib import Path

from ratelab_ctl.configfile import load_config
from ratelab_ctl.diff import Change, diff_configs, diff_entries, initial_changes, seed_notes
from ratelab_model import red
from ratelab_model.p4_entries import TableEntry, all_entries
from ratelab_model.presets import PRESETS

DECAY = "RouterIngress.admission.red_decay"
PORT = "RouterIngress.port_config"
LPM = "RouterIngress.ipv4_lpm"


def kinds(changes: list[Change]) -> dict[tuple[str, str], int]:
    out: dict[tuple[str, str], int] = {}
    for c in changes:
        out[c.kind, c.entry.table] = out.get((c.kind, c.entry.table), 0) + 1
    return out


def test_identical_configs_need_nothing(example_path: Path) -> None:
    assert diff_configs(load_config(example_path), load_config(example_path)) == []


def test_utilisation_change_is_one_modify(example_path: Path) -> None:
    old = load_config(example_path)
    new = load_config(example_path, ["ports.3.utilisation=0.5"])
    changes = diff_configs(old, new)
    assert len(changes) == 1
    (c,) = changes
    assert (c.kind, c.entry.table, c.entry.key) == ("modify", PORT, (3,))
    assert c.entry.params[1] == 10_000_000 // 2 // 8
    before = next(e for e in all_entries(old.router) if e.table == PORT and e.key == (3,))
    assert c.entry.params[:1] + c.entry.params[2:] == before.params[:1] + before.params[2:]


def test_preset_change_rewrites_the_port_and_only_the_decay_entries_that_differ(
    example_path: Path,
) -> None:
    old = load_config(example_path)  # port 3: redok-hspa, w_q 0.02
    new = load_config(example_path, ["ports.3.aqm.preset=redok-edge"])  # w_q 0.2, seed kept
    changes = diff_configs(old, new)
    old_decay = red.decay_table(PRESETS["redok-hspa"].w_q, 16384)
    new_decay = red.decay_table(PRESETS["redok-edge"].w_q, 16384)
    n_old = sum(1 for v in old_decay if v)
    n_new = sum(1 for v in new_decay if v)
    assert n_new < n_old
    changed = sum(1 for i in range(n_new) if old_decay[i] != new_decay[i])
    assert kinds(changes) == {
        ("delete", DECAY): n_old - n_new,
        ("modify", DECAY): changed,
        ("modify", PORT): 1,
    }
    assert [c.kind for c in changes] == sorted(
        (c.kind for c in changes), key=["delete", "modify", "insert"].index
    )
    # the deleted keys are exactly the tail that is zero now
    assert {c.entry.key for c in changes if c.kind == "delete"} == {
        (3, m) for m in range(n_new, n_old)
    }
    # RED to FIFO drops every decay entry of the port; FIFO to RED inserts them
    fifo = load_config(example_path, ["ports.3.aqm=fifo"])
    assert kinds(diff_configs(old, fifo)) == {("delete", DECAY): n_old, ("modify", PORT): 1}
    assert kinds(diff_configs(fifo, old)) == {("insert", DECAY): n_old, ("modify", PORT): 1}


def test_route_changes(example_path: Path) -> None:
    old = load_config(example_path)
    added = load_config(example_path, ["routes.10.0.9.0/24=receiver"])
    assert [(c.kind, c.entry.key) for c in diff_configs(old, added)] == [
        ("insert", ((0x0A000900, 24),))
    ]
    removed = load_config(example_path, ["routes.10.0.2.0/24=~"])
    assert [(c.kind, c.entry.key) for c in diff_configs(old, removed)] == [
        ("delete", ((0x0A000200, 24),))
    ]
    moved = load_config(example_path, ["routes.10.0.2.0/24=receiver"])
    (c,) = diff_configs(old, moved)
    assert (c.kind, c.entry.table, c.entry.params) == ("modify", LPM, (3, 0x020000000103))


def test_router_settings_modify_the_default_entry(example_path: Path) -> None:
    old = load_config(example_path)
    new = load_config(example_path, ["rbcc.min_rate=3000", "router_id=9"])
    (c,) = diff_configs(old, new)
    assert (c.kind, c.entry.key, c.entry.params) == ("modify", (), (9, 3000, 1_000_000))


def test_default_entries_are_never_inserted_or_deleted() -> None:
    default = TableEntry("T", (), "A", (1,))
    assert diff_entries([], [default]) == [Change("modify", default)]
    assert diff_entries([default], []) == []
    assert initial_changes([default, TableEntry("T2", (1,), "A", ())])[0].kind == "modify"
    assert initial_changes([TableEntry("T2", (1,), "A", ())])[0].kind == "insert"


def test_seed_change_is_noted(example_path: Path) -> None:
    old = load_config(example_path)
    new = load_config(example_path, ["ports.3.aqm.seed=99"])
    installed = all_entries(old.router)
    changes = diff_configs(old, new)
    assert kinds(changes) == {("modify", PORT): 1}
    assert seed_notes(installed, changes) == [
        "port 3: the new RED seed takes effect after the next pipeline push"
    ]
    assert seed_notes(installed, diff_configs(old, load_config(example_path))) == []
