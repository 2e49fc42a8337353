"""--use-files WAIT: ports backed by pcap files, as BMv2's (each `-i N@NAME` reads
NAME_in.pcap and writes NAME_out.pcap). Frames shorter than an Ethernet header go
through. Needs the ratelab_engine extension (no root, no interfaces).
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("ratelab_engine", reason="the ratelab_engine extension is not built")

from ratelab_switch.pcap import read_pcap, write_pcap
from switch_process import daemon_env

NEW_SRC = bytes.fromhex("0200000000aa")

_SM_FIELDS = [
    ["ingress_port", 9, False], ["egress_spec", 9, False], ["egress_port", 9, False],
    ["instance_type", 32, False], ["packet_length", 32, False],
    ["enq_timestamp", 32, False], ["enq_qdepth", 19, False], ["deq_timedelta", 32, False],
    ["deq_qdepth", 19, False], ["ingress_global_timestamp", 48, False],
    ["egress_global_timestamp", 48, False], ["mcast_grp", 16, False],
    ["egress_rid", 16, False], ["checksum_error", 1, False], ["parser_error", 32, False],
    ["priority", 3, False], ["_padding_0", 3, False],
]  # fmt: skip


def _field(h: str, f: str) -> dict[str, object]:
    return {"type": "field", "value": [h, f]}


def _wire_program() -> dict[str, object]:
    """Port 1 <-> port 2; the Ethernet source address (when parsed) is rewritten."""
    port_swap = {"type": "expression", "value": {"op": "-",
        "left": {"type": "hexstr", "value": "0x3"},
        "right": _field("standard_metadata", "ingress_port")}}  # fmt: skip
    return {
        "header_types": [
            {"name": "standard_metadata", "id": 0, "fields": _SM_FIELDS},
            {"name": "ethernet_t", "id": 1,
             "fields": [["dst", 48, False], ["src", 48, False], ["type", 16, False]]},
        ],
        "headers": [
            {"name": "standard_metadata", "id": 0, "header_type": "standard_metadata",
             "metadata": True},
            {"name": "ethernet", "id": 1, "header_type": "ethernet_t", "metadata": False},
        ],
        "errors": [["NoError", 0], ["PacketTooShort", 1]],
        "parsers": [{"name": "parser", "id": 0, "init_state": "start", "parse_states": [
            {"name": "start", "id": 0,
             "parser_ops": [{"op": "extract",
                             "parameters": [{"type": "regular", "value": "ethernet"}]}],
             "transition_key": [],
             "transitions": [{"type": "default", "value": None, "mask": None,
                              "next_state": None}]}]}],
        "deparsers": [{"name": "deparser", "id": 0, "order": ["ethernet"]}],
        "actions": [{"name": "wire", "id": 0, "runtime_data": [], "primitives": [
            {"op": "assign", "parameters": [_field("standard_metadata", "egress_spec"),
                                            port_swap]},
            {"op": "assign", "parameters": [_field("ethernet", "src"),
                                            {"type": "hexstr", "value": "0x" + NEW_SRC.hex()}]},
        ]}],
        "pipelines": [
            {"name": "ingress", "id": 0, "init_table": "tbl_wire", "tables": [
                {"name": "tbl_wire", "id": 0, "key": [], "match_type": "exact",
                 "type": "simple", "max_size": 1, "action_ids": [0], "actions": ["wire"],
                 "base_default_next": None, "next_tables": {"wire": None},
                 "default_entry": {"action_id": 0, "action_const": True, "action_data": [],
                                   "action_entry_const": True}}],
             "conditionals": []},
            {"name": "egress", "id": 1, "init_table": None, "tables": [], "conditionals": []},
        ],
    }  # fmt: skip


def _eth(dst: int, payload: bytes) -> bytes:
    return bytes([0, 0, 0, 0, 0, dst]) + bytes.fromhex("020000000001") + b"\x08\x00" + payload


def _start(args: list[str], cwd: Path) -> subprocess.Popen[str]:
    env = daemon_env()
    return subprocess.Popen(
        [sys.executable, "-m", "ratelab_switch.daemon", *args],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=cwd,
    )  # fmt: skip


def _records(path: Path) -> list[bytes]:
    return [d for _, d in read_pcap(str(path))] if path.exists() else []


def test_file_ports_carry_every_frame_and_the_switch_keeps_running(tmp_path: Path) -> None:
    (tmp_path / "wire.json").write_text(json.dumps(_wire_program()))
    short = bytes(range(10))  # shorter than an Ethernet header
    p1_in = [
        (1_000, _eth(1, b"first")),
        (2_000, short),
        (4_000, _eth(3, b"third" * 20)),
    ]
    p2_in = [(3_000, _eth(2, b"from port 2"))]
    write_pcap(str(tmp_path / "p1_in.pcap"), p1_in)
    write_pcap(str(tmp_path / "p2_in.pcap"), p2_in)
    proc = _start(
        ["wire.json", "--use-files", "0", "-i", "1@p1", "-i", "2@p2",
         "--", "--grpc-server-addr", "127.0.0.1:0", "--thrift-port", "0"],
        tmp_path,
    )  # fmt: skip

    def rewritten(frame: bytes) -> bytes:
        return frame[:6] + NEW_SRC + frame[12:]

    want_p2 = [rewritten(p1_in[0][1]), short, rewritten(p1_in[2][1])]
    want_p1 = [rewritten(p2_in[0][1])]
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            assert proc.poll() is None, proc.communicate()[1]
            if len(_records(tmp_path / "p2_out.pcap")) >= 3:
                break
            time.sleep(0.1)
        time.sleep(0.3)  # anything extra would show up too
        assert _records(tmp_path / "p2_out.pcap") == want_p2
        assert _records(tmp_path / "p1_out.pcap") == want_p1
        # The input is drained; the switch goes on serving, as BMv2 does.
        assert proc.poll() is None
    finally:
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=20)
    assert proc.returncode == 0, err


def test_file_ports_wait_before_reading(tmp_path: Path) -> None:
    (tmp_path / "wire.json").write_text(json.dumps(_wire_program()))
    write_pcap(str(tmp_path / "a_in.pcap"), [(0, _eth(1, b"late"))])
    write_pcap(str(tmp_path / "b_in.pcap"), [])
    started = time.monotonic()
    proc = _start(
        ["wire.json", "--use-files", "2", "-i", "1@a", "-i", "2@b",
         "--", "--grpc-server-addr", "127.0.0.1:0", "--thrift-port", "0"],
        tmp_path,
    )  # fmt: skip
    try:
        while not _records(tmp_path / "b_out.pcap"):
            assert proc.poll() is None, proc.communicate()[1]
            assert time.monotonic() - started < 20
            time.sleep(0.05)
        assert time.monotonic() - started >= 2.0
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=20)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["-i", "1@missing"], "-i: pcap file 'missing_in.pcap' does not exist"),
        (["-i", "1@a", "--pcap", "."], "--pcap and --use-files cannot be combined"),
        (["-i", "1@a", "--use-files", "soon"], "--use-files: 'soon' is not an integer"),
    ],
)
def test_bad_file_port_options(tmp_path: Path, args: list[str], message: str) -> None:
    (tmp_path / "wire.json").write_text(json.dumps(_wire_program()))
    write_pcap(str(tmp_path / "a_in.pcap"), [])
    if "--use-files" not in args:
        args = [*args, "--use-files", "0"]
    proc = _start(["wire.json", *args], tmp_path)
    _, err = proc.communicate(timeout=20)
    assert proc.returncode == 2, err
    assert err.strip() == f"ratelab-switch: error: {message}"


def test_a_rate_limited_port_paces_the_input_instead_of_dropping_it(tmp_path: Path) -> None:
    # Port 2 drains 50 frames/s into a queue of one: fed all at once, five of six
    # frames would be dropped; fed as the queue empties, all leave, 20 ms apart.
    (tmp_path / "wire.json").write_text(json.dumps(_wire_program()))
    frames = [_eth(1, b"paced %d" % i) for i in range(6)]
    write_pcap(str(tmp_path / "a_in.pcap"), [(i, f) for i, f in enumerate(frames)])
    write_pcap(str(tmp_path / "b_in.pcap"), [])
    proc = _start(
        ["wire.json", "--use-files", "0", "-i", "1@a", "-i", "2@b",
         "--queue-depth", "2=1", "--queue-rate", "2=50pps",
         "--", "--grpc-server-addr", "127.0.0.1:0", "--thrift-port", "0"],
        tmp_path,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 20
        while len(_records(tmp_path / "b_out.pcap")) < len(frames):
            assert proc.poll() is None, proc.communicate()[1]
            assert time.monotonic() < deadline, _records(tmp_path / "b_out.pcap")
            time.sleep(0.05)
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=20)
    out = read_pcap(str(tmp_path / "b_out.pcap"))
    assert [d[12:] for _, d in out] == [f[12:] for f in frames]
    # Written as they leave (wall clock), 20 ms apart. A writer woken late shortens
    # the next gap, so on a loaded machine only the whole span is reliable: five
    # departures at 50 pps take 100 ms; half of it leaves room for a late first write.
    stamps = [t for t, _ in out]
    assert stamps[-1] - stamps[0] >= 50_000, stamps
