//! Stacks, unions, egress clones and drops, direct meters, custom CRCs.
mod common;
mod inline;
use inline::*;
use ratelab_engine::{instance_type, CloneSession, CrcParams, MatchValue, Replica, Switch};
use serde_json::{json, Value};

/// action_program with a stack `st` of two `h_t` (h2 and w cannot be used)
/// and a union `u` of {h2, h3}.
fn program(prims: Vec<Value>, egress: Vec<Value>) -> String {
    let mut v: Value = serde_json::from_str(&action_program(prims)).unwrap();
    let hs = v["headers"].as_array_mut().unwrap();
    hs.push(json!({"name": "h3", "id": 5, "header_type": "h_t", "metadata": false}));
    hs.push(json!({"name": "st[0]", "id": 6, "header_type": "h_t", "metadata": false}));
    hs.push(json!({"name": "st[1]", "id": 7, "header_type": "h_t", "metadata": false}));
    hs.push(json!({"name": "st2[0]", "id": 8, "header_type": "h_t", "metadata": false}));
    hs.push(json!({"name": "st2[1]", "id": 9, "header_type": "h_t", "metadata": false}));
    v["header_stacks"] = json!([
        {"name": "st", "id": 0, "header_type": "h_t", "size": 2, "header_ids": [6, 7]},
        {"name": "st2", "id": 1, "header_type": "h_t", "size": 2, "header_ids": [8, 9]}]);
    v["header_union_types"] =
        json!([{"name": "u_t", "id": 0, "headers": [["x", "h_t"], ["y", "h_t"]]}]);
    v["header_unions"] = json!([{"name": "u", "id": 0, "union_type": "u_t", "header_ids": [3, 5]}]);
    v["deparsers"][0]["order"] = json!(["h", "h2", "h3", "st[0]", "st[1]", "st2[0]", "st2[1]"]);
    if !egress.is_empty() {
        v["actions"].as_array_mut().unwrap().push(json!(
            {"name": "eg", "id": 1, "runtime_data": [], "primitives": egress}));
        v["pipelines"][1]["init_table"] = json!("tbl_eg");
        v["pipelines"][1]["tables"] = json!([
            {"name": "tbl_eg", "id": 1, "key": [], "match_type": "exact", "type": "simple", "max_size": 1,
             "action_ids": [1], "next_tables": {"eg": null},
             "default_entry": {"action_id": 1, "action_const": true, "action_data": []}}]);
    }
    v.to_string()
}

fn input() -> Vec<u8> {
    h_bytes(1, 2, 3, 4, 5, 6, 7)
}

fn run(prims: Vec<Value>) -> Vec<u8> {
    let mut sw = Switch::new(&program(prims, vec![]), 1).unwrap_or_else(|e| panic!("{e}"));
    sw.inject(0, &input(), 0);
    sw.poll(0).remove(0).data
}

fn stack(s: &str) -> Value {
    json!({"type": "header_stack", "value": s})
}

fn elem(s: &str, i: i128) -> Value {
    json!({"type": "expression", "value": {"op": "dereference_header_stack",
        "left": {"type": "header_stack", "value": s}, "right": hx(i)}})
}

fn elem_field(s: &str, idx: Value, off: u32) -> Value {
    json!({"type": "expression", "value": {"type": "expression", "value": {"op": "access_field",
        "left": {"type": "expression", "value": {"op": "dereference_header_stack",
            "left": {"type": "header_stack", "value": s}, "right": idx}}, "right": off}}})
}

#[test]
fn push_pop_and_dynamic_index() {
    // push_front(1) twice on an empty stack, fill st[h.a] (a = 1) dynamically
    let prims = vec![
        prim("push", vec![stack("st"), hx(1)]),
        prim("add_header", vec![elem("st", 0)]),
        assign(elem_field("st", hx(0), 0), hx(0x11)),
        prim("push", vec![stack("st"), hx(1)]),
        prim("add_header", vec![elem("st", 0)]),
        assign(elem_field("st", f("h", "a"), 0), hx(0x22)),
        assign(elem_field("st", hx(0), 0), hx(0x33)),
    ];
    let o = run(prims);
    assert_eq!(o.len(), 17 * 3);
    assert_eq!(o[17], 0x33, "st[0].a");
    assert_eq!(
        o[34], 0x22,
        "st[1].a (was 0x11, moved by push, then set via h.a)"
    );
    // pop removes st[0]
    let prims = vec![
        prim("add_header", vec![elem("st", 0)]),
        prim("add_header", vec![elem("st", 1)]),
        assign(elem_field("st", hx(1), 0), hx(0x44)),
        prim("pop", vec![stack("st"), hx(1)]),
    ];
    let o = run(prims);
    assert_eq!(o.len(), 17 * 2);
    assert_eq!(o[17], 0x44);
    // out-of-range dynamic index: ignored, no panic
    let o = run(vec![
        assign(elem_field("st", hx(0), 0), hx(1)),
        assign(elem_field("st", f("h", "d"), 0), hx(1)),
    ]);
    assert_eq!(o.len(), 17);
}

#[test]
fn assign_header_stack_copies_elements() {
    let prims = vec![
        prim("add_header", vec![elem("st", 1)]),
        assign(elem_field("st", hx(1), 1), hx(0xabcd)),
        prim("assign_header_stack", vec![stack("st2"), stack("st")]),
    ];
    let o = run(prims);
    // h, st[1], st2[1]
    assert_eq!(o.len(), 17 * 3);
    assert_eq!(&o[18..20], &[0xab, 0xcd]);
    assert_eq!(&o[35..37], &[0xab, 0xcd]);
}

#[test]
fn union_members_are_exclusive() {
    let valid_union = json!({"type": "expression", "value": {"op": "valid_union", "left": null,
        "right": {"type": "header_union", "value": "u"}}});
    let prims = vec![
        assign(f("h", "b"), un("b2d", valid_union.clone())),
        prim("add_header", vec![hdr("h2")]),
        prim("add_header", vec![hdr("h3")]),
        assign(f("h", "c"), un("b2d", valid_union)),
        assign(f("h3", "a"), hx(9)),
    ];
    let o = run(prims);
    assert_eq!(o.len(), 34, "h and h3 only: h2 invalidated by h3");
    let (_, b, c, ..) = h_fields(&o);
    assert_eq!((b, c), (0, 1));
    assert_eq!(o[17], 9);
}

#[test]
fn egress_clone_and_egress_drop() {
    // egress: clone E2E to session 3 unless this is the clone; originals dropped
    let eg = vec![
        json!({"op": "_jump_if_zero", "parameters": [
            e("==", f("standard_metadata", "instance_type"), hx(0)), hx(3)]}),
        prim("clone_egress_pkt_to_egress", vec![hx(3), hx(0)]),
        prim("mark_to_drop", vec![hdr("standard_metadata")]),
        assign(f("h", "a"), f("standard_metadata", "instance_type")),
        assign(f("h", "b"), f("standard_metadata", "egress_rid")),
        assign(f("h", "c"), f("standard_metadata", "egress_port")),
        assign(f("h", "d"), f("standard_metadata", "ingress_port")),
    ];
    let mut sw = Switch::new(&program(vec![], eg), 1).unwrap_or_else(|e| panic!("{e}"));
    sw.clone_session_set(
        3,
        CloneSession {
            replicas: vec![Replica { port: 6, rid: 4 }],
            truncate: None,
        },
    )
    .unwrap();
    sw.inject(5, &input(), 0);
    let out = sw.poll(0);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].port, 6);
    let (a, b, c, d, ..) = h_fields(&out[0].data);
    assert_eq!(a as u32, instance_type::EGRESS_CLONE);
    assert_eq!(b, 4);
    assert_eq!(c, 6, "egress_port");
    assert_eq!(d, 0, "E2E clones start with fresh metadata");
    assert_eq!(sw.stats().egress_drops, 1);
}

#[test]
fn direct_meter_writes_color() {
    let mut v: Value = serde_json::from_str(&common::fixture("basic.json")).unwrap();
    v["meter_arrays"] = json!([{"name": "MyIngress.dm", "id": 0, "is_direct": true, "rate_count": 2,
        "type": "packets", "size": 1024, "binding": "MyIngress.ipv4_lpm", "result_target": ["ipv4", "diffserv"]}]);
    let mut sw = Switch::new(&v.to_string(), 1).unwrap();
    let h = sw
        .table_add(
            "MyIngress.ipv4_lpm",
            vec![MatchValue::Lpm(0x0a000000, 8)],
            "MyIngress.ipv4_forward",
            &[1, 1],
            0,
        )
        .unwrap();
    assert!(
        sw.meter_set_rates("MyIngress.dm", 0, [(1, 1), (1, 1)])
            .is_err(),
        "direct meter"
    );
    sw.table_set_entry_meter("MyIngress.ipv4_lpm", h, [(1, 1), (2, 2)])
        .unwrap();
    for _ in 0..3 {
        sw.inject(0, &common::ipv4_packet([10, 0, 0, 1], 9, b""), 0);
    }
    let colors: Vec<u8> = sw.poll(0).iter().map(|f| f.data[15]).collect();
    assert_eq!(colors, vec![0, 1, 2]);
    assert_eq!(
        sw.table_info("MyIngress.ipv4_lpm")
            .unwrap()
            .direct_meter
            .as_deref(),
        Some("MyIngress.dm")
    );
}

#[test]
fn custom_crc_parameters() {
    let mut v: Value = serde_json::from_str(&common::fixture("features.json")).unwrap();
    v["calculations"][0]["algo"] = json!("crc16_custom");
    let mut sw = Switch::new(&v.to_string(), 1).unwrap();
    sw.table_add(
        "MyIngress.ctl",
        vec![MatchValue::Exact(5)],
        "MyIngress.do_hash",
        &[],
        0,
    )
    .unwrap();
    let hash = |sw: &mut Switch| {
        sw.inject(
            1,
            &common::cmd_packet(5, 0, u32::from_be_bytes(*b"1234")),
            0,
        );
        common::report(&sw.poll(0)[0].data).result
    };
    // default crc16_custom = CRC-16/ARC
    let arc = hash(&mut sw);
    let xmodem = CrcParams {
        width: 16,
        poly: 0x1021,
        init: 0,
        xor_out: 0,
        reflect_in: false,
        reflect_out: false,
    };
    sw.set_crc_params("calc_crc32", xmodem).unwrap();
    let x = hash(&mut sw);
    assert_ne!(arc, x);
    assert_eq!(x, ratelab_engine::calc::Crc::new(xmodem).compute(b"1234"));
    assert_eq!(
        arc,
        ratelab_engine::calc::Crc::new(CrcParams::CRC16).compute(b"1234")
    );
    assert!(sw.set_crc_params("nope", xmodem).is_err());
}

/// basic.json with a table `tbl_mark` (diffserv = 0x2a) after the route
/// table, reached through `next_tables`.
fn next_tables_program(next: Value) -> Switch {
    let mut v: Value = serde_json::from_str(&common::fixture("basic.json")).unwrap();
    v["actions"]
        .as_array_mut()
        .unwrap()
        .push(json!({"name": "mark", "id": 9, "runtime_data": [],
        "primitives": [assign(f("ipv4", "diffserv"), hx(0x2a))]}));
    let tables = v["pipelines"][0]["tables"].as_array_mut().unwrap();
    tables.push(
        json!({"name": "tbl_mark", "id": 5, "key": [], "match_type": "exact", "type": "simple",
        "max_size": 1, "action_ids": [9], "actions": ["mark"], "next_tables": {"mark": null},
        "default_entry": {"action_id": 9, "action_const": true, "action_data": []}}),
    );
    tables[0]["next_tables"] = next;
    tables[0]["default_entry"]["action_id"] = json!(0); // NoAction on a miss
    let mut sw = Switch::new(&v.to_string(), 1).unwrap_or_else(|e| panic!("{e}"));
    sw.table_add(
        "MyIngress.ipv4_lpm",
        vec![MatchValue::Lpm(0x0a000000, 8)],
        "MyIngress.ipv4_forward",
        &[1, 1],
        0,
    )
    .unwrap();
    sw
}

/// diffserv of a hit (10.0.0.1) and of a miss (11.0.0.1).
fn marks(sw: &mut Switch) -> (u8, u8) {
    sw.inject(0, &common::ipv4_packet([10, 0, 0, 1], 9, b""), 0);
    sw.inject(0, &common::ipv4_packet([11, 0, 0, 1], 9, b""), 0);
    let out = sw.poll(0);
    (out[0].data[15], out[1].data[15])
}

#[test]
fn next_tables_hit_miss_and_by_action() {
    let mut sw = next_tables_program(json!({"__HIT__": "tbl_mark", "__MISS__": null}));
    assert_eq!(marks(&mut sw), (0x2a, 0));
    let mut sw = next_tables_program(json!({"__HIT__": null, "__MISS__": "tbl_mark"}));
    assert_eq!(marks(&mut sw), (0, 0x2a));
    let mut sw = next_tables_program(
        json!({"MyIngress.ipv4_forward": null, "MyIngress.drop": null,
        "NoAction": "tbl_mark"}),
    );
    assert_eq!(marks(&mut sw), (0, 0x2a));
    let mut sw = next_tables_program(json!({"MyIngress.ipv4_forward": "tbl_mark",
        "MyIngress.drop": null, "NoAction": null}));
    assert_eq!(marks(&mut sw), (0x2a, 0));
}

/// `action_program` with a second action `other` (h.a = 2) in `tbl_act`,
/// whose default `act` (h.a = 1) is const or not.
fn keyless_program(default_const: bool) -> String {
    let mut p: Value = serde_json::from_str(&action_program(vec![assign(f("h", "a"), hx(1))]))
        .expect("inline program is JSON");
    p["actions"].as_array_mut().unwrap().push(json!({
        "name": "other", "id": 1, "runtime_data": [],
        "primitives": [assign(f("h", "a"), hx(2)), assign(f("standard_metadata", "egress_spec"), hx(1))]
    }));
    let t = &mut p["pipelines"][0]["tables"][0];
    t["action_ids"] = json!([0, 1]);
    t["actions"] = json!(["act", "other"]);
    t["next_tables"] = json!({"act": null, "other": null});
    t["default_entry"]["action_const"] = json!(default_const);
    t["default_entry"]["action_entry_const"] = json!(default_const);
    p.to_string()
}

fn first_byte_out(sw: &mut Switch) -> u8 {
    sw.inject(0, &h_bytes(9, 0, 0, 0, 0, 0, 0), 0);
    sw.poll(0).pop().expect("forwarded").data[0]
}

// A keyless table with a const default runs that action directly (a fast
// path); one whose default may change must run whatever default is set.
#[test]
fn keyless_table_runs_its_current_default() {
    let mut fixed = Switch::new(&keyless_program(true), 1).unwrap();
    assert_eq!(first_byte_out(&mut fixed), 1);
    assert!(fixed.table_set_default("tbl_act", "other", &[]).is_err());
    assert_eq!(first_byte_out(&mut fixed), 1);

    let mut changeable = Switch::new(&keyless_program(false), 1).unwrap();
    assert_eq!(first_byte_out(&mut changeable), 1);
    changeable
        .table_set_default("tbl_act", "other", &[])
        .unwrap();
    assert_eq!(first_byte_out(&mut changeable), 2);
}

// Two fixed (keyless, const default) tables in a row: the first's next node
// and the second's action data must be honoured on the direct path.
#[test]
fn fixed_keyless_tables_chain_and_pass_their_action_data() {
    let mut p: Value = serde_json::from_str(&action_program(vec![assign(f("h", "a"), hx(1))]))
        .expect("inline program is JSON");
    p["actions"].as_array_mut().unwrap().push(json!({
        "name": "set", "id": 2, "runtime_data": [{"name": "v", "bitwidth": 16}],
        "primitives": [assign(f("h", "b"), json!({"type": "runtime_data", "value": 0}))]
    }));
    let tables = p["pipelines"][0]["tables"].as_array_mut().unwrap();
    tables[0]["next_tables"] = json!({"act": "tbl_set"});
    tables.push(json!({
        "name": "tbl_set", "id": 1, "key": [], "match_type": "exact", "type": "simple",
        "max_size": 1, "with_counters": false, "support_timeout": false, "direct_meters": null,
        "action_ids": [2], "actions": ["set"], "base_default_next": null,
        "next_tables": {"set": null},
        "default_entry": {"action_id": 2, "action_const": true, "action_data": ["0x1234"],
                          "action_entry_const": true}
    }));
    let mut sw = Switch::new(&p.to_string(), 1).unwrap();
    sw.inject(0, &h_bytes(9, 0, 0, 0, 0, 0, 0), 0);
    let out = sw.poll(0).pop().expect("forwarded").data;
    assert_eq!(out[..3], [1, 0x12, 0x34]);
}
