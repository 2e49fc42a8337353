"""--port-trace PORT=FILE: a port drained by a mahimahi trace (one 1,500-byte delivery
opportunity per line, in ms, looping), in simulated time through the binding and in
real time through the daemon's pcap-file ports. Needs the ratelab_engine extension."""

from __future__ import annotations

import itertools
import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("ratelab_engine", reason="the ratelab_engine extension is not built")

import ratelab_engine as rust
from ratelab_p4info import MatchKind
from ratelab_switch.engine_api import ActionCall, KeyField
from ratelab_switch.engine_binding import open_engine
from ratelab_switch.options import OptionsError, parse_options
from ratelab_switch.pcap import read_pcap, write_pcap
from switch_basic_program import BASIC_JSON, ipv4_packet
from switch_process import daemon_env
from test_switch_pcap_files import _eth, _wire_program


def _trace(tmp_path: Path, text: str, name: str = "t.mahi") -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def _full_size_packet() -> bytes:
    """A 1,514-byte frame to 10.0.2.7: a 1,500-byte IP packet, one opportunity."""
    return ipv4_packet(bytes([10, 0, 2, 7]), payload=bytes(1480))


def test_the_option_reads_and_checks_the_trace(tmp_path: Path) -> None:
    good = _trace(tmp_path, "2\n2\n7\n")
    opts = parse_options(["--no-p4", "--port-trace", f"2={good}"])
    t = opts.port_trace[2]
    assert (t.path, t.opportunities, t.period_ms) == (good, 3, 7)
    assert t.mean_rate_bps == 3 * 1500 * 8 * 1000 // 7


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "{path}: expected at least one line (a delivery opportunity in ms), the trace is "
         "empty"),
        ("1\n5\n4\n", "{path}:3: expected a time of at least 5 ms (the line before: lines never "
         "decrease), got 4"),
        ("1\nten\n", '{path}:2: expected a whole number of milliseconds (0 or more), got "ten"'),
        ("0\n", "{path}:1: expected a last line above 0 ms (it is the period the trace repeats "
         "with), got 0"),
    ],
)  # fmt: skip
def test_a_bad_trace_is_one_line_naming_file_and_line(
    tmp_path: Path, text: str, message: str
) -> None:
    path = _trace(tmp_path, text)
    with pytest.raises(OptionsError) as e:
        parse_options(["--no-p4", "--port-trace", f"3={path}"])
    assert str(e.value) == "--port-trace: " + message.format(path=path)


def test_bad_port_trace_options(tmp_path: Path) -> None:
    with pytest.raises(OptionsError, match=r"^--port-trace: expected PORT=VALUE, got '3'$"):
        parse_options(["--no-p4", "--port-trace", "3"])
    with pytest.raises(OptionsError, match=r"^--port-trace port: 600 is out of range"):
        parse_options(["--no-p4", "--port-trace", f"600={_trace(tmp_path, '1')}"])
    missing = str(tmp_path / "none.mahi")
    with pytest.raises(OptionsError, match=r"^--port-trace: cannot read trace '.*none.mahi'"):
        parse_options(["--no-p4", "--port-trace", f"3={missing}"])


def test_the_binding_drains_a_port_by_the_trace_in_simulated_time() -> None:
    sw = rust.Switch(BASIC_JSON.read_bytes(), 0)
    sw.table_add("MyIngress.ipv4_lpm", [("lpm", 0x0A000200, 24)], "MyIngress.ipv4_forward",
                 [0x0222, 2], 0)  # fmt: skip
    # Opportunities at 2, 2 and 7 ms after 1 s, then 9, 9, 14 ms, ...
    sw.set_port_trace(2, "2\n2\n7\n", "t.mahi", 1_000_000)
    assert sw.port_trace(2) == (3, 7)
    assert sw.process([(1, _full_size_packet()) for _ in range(5)], 1_000_000) == []
    departures = []
    while (t := sw.next_event_time()) is not None:
        departures += [(t, dequeued) for _, _, dequeued in sw.poll(t)]
    ms = [(t - 1_000_000) / 1000 for t, _ in departures]
    assert ms == [2, 2, 7, 9, 9]
    # Each frame is dequeued when the one before it is delivered.
    assert [d for _, d in departures] == [1_000_000, 1_002_000, 1_002_000, 1_007_000, 1_009_000]
    # Removed: back to the port's rate (unlimited), leaving at once.
    sw.set_port_trace(2, None, "", 0)
    assert sw.port_trace(2) is None
    assert len(sw.process([(1, _full_size_packet())], 2_000_000)) == 1
    with pytest.raises(rust.EngineError) as e:
        sw.set_port_trace(2, "5\n3\n", "bad.mahi", 0)
    assert e.value.args == (
        "invalid_argument",
        "bad.mahi:2: expected a time of at least 5 ms (the line before: lines never "
        "decrease), got 3",
    )


def test_the_option_reaches_the_traffic_manager(tmp_path: Path) -> None:
    opts = parse_options(["--no-p4", "--port-trace", f"2={_trace(tmp_path, '100')}"])
    engine = open_engine(opts)
    engine.load_config(BASIC_JSON.read_bytes())
    assert engine.switch.port_trace(2) == (1, 100)
    engine.table_add(
        "MyIngress.ipv4_lpm",
        [KeyField(MatchKind.LPM, 0x0A000200, prefix_len=24)],
        ActionCall("MyIngress.ipv4_forward", (0x0222, 2)),
        0,
    )
    now = time.monotonic_ns() // 1000
    assert engine.switch.process([(1, _full_size_packet())], now) == []
    # The trace started when the program was loaded: the next opportunity is at
    # most 100 ms away.
    due = engine.switch.next_event_time()
    assert due is not None and now < due <= now + 100_000


def test_the_daemon_sends_at_the_traces_opportunities_in_real_time(tmp_path: Path) -> None:
    # Opportunities at 100, 300, 400 ms, then 500, 700, 800 ms: six frames fed at once
    # leave at those times (each dequeued when the one before it is delivered).
    (tmp_path / "wire.json").write_text(json.dumps(_wire_program()))
    # 1,500 bytes after the Ethernet header: one opportunity each.
    frames = [_eth(1, (b"traced %d" % i).ljust(1500, b".")) for i in range(6)]
    write_pcap(str(tmp_path / "a_in.pcap"), [(i, f) for i, f in enumerate(frames)])
    write_pcap(str(tmp_path / "b_in.pcap"), [])
    trace = _trace(tmp_path, "100\n300\n400\n")
    proc = subprocess.Popen(
        [sys.executable, "-m", "ratelab_switch.daemon", "wire.json", "--use-files", "0",
         "-i", "1@a", "-i", "2@b", "--port-trace", f"2={trace}", "--log-console",
         "--", "--grpc-server-addr", "127.0.0.1:0", "--thrift-port", "0"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=daemon_env(),
        cwd=tmp_path,
    )  # fmt: skip
    out_file = tmp_path / "b_out.pcap"
    try:
        deadline = time.monotonic() + 20
        while len(read_pcap(str(out_file)) if out_file.exists() else []) < len(frames):
            assert proc.poll() is None, proc.communicate()[1]
            assert time.monotonic() < deadline
            time.sleep(0.05)
    finally:
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=20)
    out = read_pcap(str(out_file))
    assert [d[12:] for _, d in out] == [f[12:] for f in frames]
    # Stamped with the wall clock when written: gaps of 200, 100, 100, 200, 100 ms.
    # A late write shortens the gap after it, so only lower bounds are reliable,
    # with 50 ms left for lateness.
    stamps = [t for t, _ in out]
    gaps = [b - a for a, b in itertools.pairwise(stamps)]
    assert gaps[0] >= 150_000 and gaps[3] >= 150_000, gaps
    assert stamps[-1] - stamps[0] >= 650_000, gaps
    assert "port 2 follows trace" in err, err


def test_the_daemon_rejects_a_bad_trace_in_one_line(tmp_path: Path) -> None:
    (tmp_path / "wire.json").write_text(json.dumps(_wire_program()))
    trace = _trace(tmp_path, "3\n2\n")
    proc = subprocess.run(
        [sys.executable, "-m", "ratelab_switch.daemon", "wire.json",
         "--port-trace", f"2={trace}"],
        capture_output=True, text=True, env=daemon_env(), cwd=tmp_path, timeout=30,
    )  # fmt: skip
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        f"ratelab-switch: error: --port-trace: {trace}:2: expected a time of at least 3 ms "
        "(the line before: lines never decrease), got 2"
    ]
