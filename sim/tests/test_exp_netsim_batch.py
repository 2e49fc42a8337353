"""netsim_batch (one `ratelab-netsim --batch` process per worker, router.p4
compiled once) against a process per run (sim_api.run_netsim): the same
results byte for byte, the same refusals; a new process when the program
file's content or the binary changes, or the process died; router_program
compiled again when router.p4's sources change."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from ratelab_ctl.configfile import ConfigError
from ratelab_net import netsim_batch, sim_api
from ratelab_net.routers import plan_routers
from ratelab_net.sim_api import SimError, router_program, run_netsim
from ratelab_net.sim_scenario import build_scenario
from ratelab_net.topology import Topology, parse_topology


def _topology(rate: str = "2mbit") -> Topology:
    """Two hosts through one router: a Reno flow and a little UDP."""
    topology: dict[str, Any] = {
        "duration": "2s",
        "routers": {"r1": {"router_id": "10.255.0.1"}},
        "hosts": ["a", "b"],
        "links": [
            {"ends": ["a", "r1"], "rate": "100mbit", "delay": "1ms"},
            {"ends": ["r1", "b"], "rate": rate, "delay": "10ms", "queue_limit": 20},
        ],
        "flows": [
            {"name": "reno", "from": "a", "to": "b", "transport": "tcp", "cc": "reno"},
            {"name": "udp", "from": "a", "to": "b", "transport": "udp", "rate": "200kbit"},
        ],
    }
    return parse_topology(yaml.safe_dump(topology, sort_keys=False), "t.yaml")


def _scenario(topo: Topology, seed: int) -> dict[str, Any]:
    return build_scenario(topo, plan_routers(topo), seed)


@pytest.fixture(autouse=True)
def _fresh() -> Any:
    netsim_batch.close_all()
    yield
    netsim_batch.close_all()


def test_batch_gives_what_a_process_per_run_gives() -> None:
    topo, program = _topology(), router_program()
    # seeds 1, 2, 1 in one process: nothing of a run stays for the next
    fresh = {seed: run_netsim(topo, _scenario(topo, seed), program) for seed in (1, 2)}
    assert fresh[1] != fresh[2]  # the seeds make different runs
    for seed in (1, 2, 1):
        got = netsim_batch.run(topo, _scenario(topo, seed), program)
        assert json.dumps(got, sort_keys=True) == json.dumps(fresh[seed], sort_keys=True)
    assert len(netsim_batch._SERVERS) == 1  # one process for all three


def test_batch_refusal_is_the_same_error() -> None:
    topo, program = _topology(rate="0kbit"), router_program()
    with pytest.raises(ConfigError) as single:
        run_netsim(topo, _scenario(topo, 1), program)
    with pytest.raises(ConfigError) as batch:
        netsim_batch.run(topo, _scenario(topo, 1), program)
    assert str(batch.value) == str(single.value)
    assert "links[1]" in str(batch.value)
    # the process goes on after a refused scenario
    good = _topology()
    assert netsim_batch.run(good, _scenario(good, 1), program)["flows"]


def test_new_process_for_a_changed_program(tmp_path: Path) -> None:
    topo = _topology()
    program = tmp_path / "router.json"
    shutil.copy(router_program(), program)
    first = netsim_batch.server(program)
    assert netsim_batch.run(topo, _scenario(topo, 1), program)["flows"]
    assert netsim_batch.server(program) is first  # compiled once, kept
    # the same file, other content: a program that does not load
    program.write_text('{"header_types": 1}\n')
    with pytest.raises(SimError, match=r"ended \(status 1\): .*router\.json"):
        netsim_batch.run(topo, _scenario(topo, 1), program)
    assert not first.alive()  # the old program's process was ended
    assert netsim_batch._SERVERS == {}  # the dead one is not kept either
    shutil.copy(router_program(), program)  # good again: a new process
    expected = run_netsim(topo, _scenario(topo, 3), router_program())
    assert netsim_batch.run(topo, _scenario(topo, 3), program) == expected


def test_new_process_for_a_rebuilt_binary(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    topo, program = _topology(), router_program()
    binary = tmp_path / "ratelab-netsim"
    shutil.copy(sim_api.netsim_binary(), binary)
    monkeypatch.setenv(sim_api.NETSIM_ENV, str(binary))
    first = netsim_batch.server(program)
    netsim_batch.run(topo, _scenario(topo, 1), program)
    binary.unlink()  # "rebuilt": another file at the same path
    shutil.copy(sim_api.NETSIM, binary)
    second = netsim_batch.server(program)
    assert second is not first and not first.alive()
    netsim_batch.run(topo, _scenario(topo, 1), program)


def test_a_process_that_died_is_started_again() -> None:
    topo, program = _topology(), router_program()
    first = netsim_batch.server(program)
    first._proc.kill()
    first._proc.wait()
    got = netsim_batch.run(topo, _scenario(topo, 1), program)
    assert got == run_netsim(topo, _scenario(topo, 1), program)
    assert netsim_batch.server(program) is not first


def test_batch_mode_bad_line_and_usage() -> None:
    binary = str(sim_api.netsim_binary())
    proc = subprocess.run(
        [binary, "--batch", str(router_program())],
        input='not json\n{"scenario": "/nonexistent.json", "out": "/tmp/x"}\n',
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    lines = [json.loads(line) for line in proc.stdout.splitlines()]
    assert lines[0]["error"].startswith("stdin line 1: expected {")
    assert lines[1] == {"error": "/nonexistent.json: No such file or directory (os error 2)"}
    usage = subprocess.run([binary, "--batch"], capture_output=True, text=True)
    assert usage.returncode == 1
    assert usage.stderr.startswith("ratelab-netsim: usage: ")


def test_router_program_compiled_again_when_router_p4_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import ratelab_sim.build as build

    sources = tmp_path / "p4src"
    shutil.copytree(build.ROUTER_P4.parent, sources, ignore=shutil.ignore_patterns("tests"))
    router = sources / "router.p4"
    monkeypatch.setattr(build, "ROUTER_P4", router)  # what compile_router compiles
    monkeypatch.setattr(sim_api, "ROUTER_P4", router)  # what the cache is keyed by
    monkeypatch.setattr(sim_api, "_PROGRAMS", {})
    first = router_program()
    assert router_program() == first  # unchanged: not compiled again
    (sources / "include" / "defines.p4").write_text(
        (sources / "include" / "defines.p4").read_text() + "\n// edited\n"
    )
    second = router_program()
    assert second != first and second.exists()
