//! Small programs built in the tests, in p4c-bm2-ss conventions.
#![allow(dead_code)]

use ratelab_engine::Switch;
use serde_json::{json, Value};

/// Runs `prog` compiled and interpreted on `input` (port 0); both must give
/// the same frames and stats. Returns the frames out of port 0's poll.
pub fn run_both(prog: &str, input: &[u8]) -> Vec<Vec<u8>> {
    let mut compiled = Switch::new(prog, 1).unwrap_or_else(|e| panic!("{e}"));
    assert!(compiled.compiled(), "{:?}", compiled.compile_error());
    let mut reference = Switch::new(prog, 1).unwrap();
    reference.set_compiled(false);
    compiled.inject(0, input, 0);
    reference.inject(0, input, 0);
    let got: Vec<_> = compiled.poll(0).into_iter().map(|f| f.data).collect();
    let want: Vec<_> = reference.poll(0).into_iter().map(|f| f.data).collect();
    assert_eq!(got, want, "compiled and interpreted differ");
    assert_eq!(compiled.stats(), reference.stats());
    want
}

/// `pipelines` of a program whose ingress runs `action` (id 0) once, from a
/// keyless table "tbl", and whose egress is empty.
pub fn one_action_pipelines(action: &str) -> Value {
    json!([
        {"name": "ingress", "id": 0, "init_table": "tbl", "tables": [
            {"name": "tbl", "id": 0, "key": [], "match_type": "exact", "type": "simple",
             "max_size": 1, "action_ids": [0], "actions": [action], "base_default_next": null,
             "next_tables": {action: null},
             "default_entry": {"action_id": 0, "action_const": true, "action_data": [],
                               "action_entry_const": true}}],
         "conditionals": []},
        {"name": "egress", "id": 1, "init_table": null, "tables": [], "conditionals": []}])
}

pub fn f(h: &str, x: &str) -> Value {
    json!({"type": "field", "value": [h, x]})
}
pub fn hx(v: i128) -> Value {
    let s = if v < 0 {
        format!("-0x{:x}", -v)
    } else {
        format!("0x{v:x}")
    };
    json!({"type": "hexstr", "value": s})
}
pub fn e(op: &str, l: Value, r: Value) -> Value {
    json!({"type": "expression", "value": {"op": op, "left": l, "right": r}})
}
pub fn un(op: &str, r: Value) -> Value {
    json!({"type": "expression", "value": {"op": op, "left": null, "right": r}})
}
pub fn prim(op: &str, params: Vec<Value>) -> Value {
    json!({"op": op, "parameters": params})
}
pub fn assign(dst: Value, src: Value) -> Value {
    prim("assign", vec![dst, src])
}
pub fn hdr(h: &str) -> Value {
    json!({"type": "header", "value": h})
}

pub fn sm_fields() -> Value {
    json!([
        ["ingress_port", 9, false],
        ["egress_spec", 9, false],
        ["egress_port", 9, false],
        ["instance_type", 32, false],
        ["packet_length", 32, false],
        ["enq_timestamp", 32, false],
        ["enq_qdepth", 19, false],
        ["deq_timedelta", 32, false],
        ["deq_qdepth", 19, false],
        ["ingress_global_timestamp", 48, false],
        ["egress_global_timestamp", 48, false],
        ["mcast_grp", 16, false],
        ["egress_rid", 16, false],
        ["checksum_error", 1, false],
        ["parser_error", 32, false],
        ["priority", 3, false],
        ["_padding_0", 3, false]
    ])
}

/// A program with header `h` {a:8, b:16, c:32, d:64, s:8 signed, e:4, g:4}
/// (17 bytes), parsed and emitted; ingress runs one action with `prims`,
/// then sends to port 1.
pub fn action_program(prims: Vec<Value>) -> String {
    let mut all = prims;
    all.push(assign(f("standard_metadata", "egress_spec"), hx(1)));
    json!({
        "__meta__": {"version": [2, 23]},
        "header_types": [
            {"name": "scalars_0", "id": 0, "fields": [["m", 32, false]]},
            {"name": "standard_metadata", "id": 1, "fields": sm_fields()},
            {"name": "h_t", "id": 2, "fields": [["a", 8, false], ["b", 16, false], ["c", 32, false],
                ["d", 64, false], ["s", 8, true], ["e", 4, false], ["g", 4, false]]},
            {"name": "w_t", "id": 3, "fields": [["x", 128, false]]}
        ],
        "headers": [
            {"name": "scalars", "id": 0, "header_type": "scalars_0", "metadata": true},
            {"name": "standard_metadata", "id": 1, "header_type": "standard_metadata", "metadata": true},
            {"name": "h", "id": 2, "header_type": "h_t", "metadata": false},
            {"name": "h2", "id": 3, "header_type": "h_t", "metadata": false},
            {"name": "w", "id": 4, "header_type": "w_t", "metadata": false}
        ],
        "header_stacks": [], "header_union_types": [], "header_unions": [],
        "errors": [["NoError", 0], ["PacketTooShort", 1], ["NoMatch", 2], ["StackOutOfBounds", 3], ["HeaderTooShort", 4]],
        "parsers": [{"name": "parser", "id": 0, "init_state": "start", "parse_states": [
            {"name": "start", "id": 0, "parser_ops": [{"op": "extract", "parameters": [{"type": "regular", "value": "h"}]}],
             "transition_key": [], "transitions": [{"type": "default", "value": null, "mask": null, "next_state": null}]}]}],
        "deparsers": [{"name": "deparser", "id": 0, "order": ["h", "h2", "w"]}],
        "actions": [{"name": "act", "id": 0, "runtime_data": [], "primitives": all}],
        "pipelines": [
            {"name": "ingress", "id": 0, "init_table": "tbl_act", "tables": [
                {"name": "tbl_act", "id": 0, "key": [], "match_type": "exact", "type": "simple", "max_size": 1024,
                 "with_counters": false, "support_timeout": false, "direct_meters": null,
                 "action_ids": [0], "actions": ["act"], "base_default_next": null,
                 "next_tables": {"act": null},
                 "default_entry": {"action_id": 0, "action_const": true, "action_data": [], "action_entry_const": true}}],
             "action_profiles": [], "conditionals": []},
            {"name": "egress", "id": 1, "init_table": null, "tables": [], "action_profiles": [], "conditionals": []}],
        "checksums": [], "calculations": [], "field_lists": [], "learn_lists": [],
        "register_arrays": [], "counter_arrays": [], "meter_arrays": [], "extern_instances": [],
        "field_aliases": []
    })
    .to_string()
}

/// Input for `action_program`: h with the given values.
pub fn h_bytes(a: u8, b: u16, c: u32, d: u64, s: i8, e: u8, g: u8) -> Vec<u8> {
    let mut v = vec![a];
    v.extend_from_slice(&b.to_be_bytes());
    v.extend_from_slice(&c.to_be_bytes());
    v.extend_from_slice(&d.to_be_bytes());
    v.push(s as u8);
    v.push((e << 4) | (g & 0xf));
    v
}

/// Fields of h from output bytes: (a, b, c, d, s, e, g).
pub fn h_fields(o: &[u8]) -> (u8, u16, u32, u64, i8, u8, u8) {
    (
        o[0],
        u16::from_be_bytes([o[1], o[2]]),
        u32::from_be_bytes(o[3..7].try_into().unwrap()),
        u64::from_be_bytes(o[7..15].try_into().unwrap()),
        o[15] as i8,
        o[16] >> 4,
        o[16] & 0xf,
    )
}

pub fn extract(h: &str) -> Value {
    json!({"op": "extract", "parameters": [{"type": "regular", "value": h}]})
}
pub fn tr(v: &str, next: Option<&str>) -> Value {
    json!({"type": "hexstr", "value": v, "mask": null, "next_state": next})
}
pub fn dflt(next: Option<&str>) -> Value {
    json!({"type": "default", "value": null, "mask": null, "next_state": next})
}
pub fn state(name: &str, ops: Vec<Value>, key: Vec<Value>, trs: Vec<Value>) -> Value {
    json!({"name": name, "id": 0, "parser_ops": ops, "transition_key": key, "transitions": trs})
}

/// First byte `sel` picks a path; ingress writes parser_error, scalars.m,
/// the stack size and validity bits into header `out`, emitted first.
pub fn parser_program() -> String {
    let states = vec![
        state(
            "start",
            vec![extract("sel")],
            vec![f("sel", "v")],
            vec![
                tr("0x01", Some("stk")),
                tr("0x02", Some("vrf")),
                tr("0x03", Some("la")),
                tr("0x04", Some("adv")),
                tr("0x06", Some("nomatch")),
                tr("0x07", Some("vl")),
                json!({"type": "hexstr", "value": "0x50", "mask": "0xf0", "next_state": "masked"}),
                dflt(None),
            ],
        ),
        state(
            "stk",
            vec![json!({"op": "extract", "parameters": [{"type": "stack", "value": "st"}]})],
            vec![json!({"type": "stack_field", "value": ["st", "v"]})],
            vec![tr("0x00", Some("stk")), dflt(None)],
        ),
        state(
            "vrf",
            vec![
                extract("e1"),
                json!({"op": "verify", "parameters": [
              e("==", f("e1", "v"), hx(0x42)), hx(9)]}),
            ],
            vec![],
            vec![dflt(None)],
        ),
        state(
            "la",
            vec![json!({"op": "set", "parameters": [f("scalars", "m"),
              {"type": "lookahead", "value": [8, 8]}]})],
            vec![json!({"type": "lookahead", "value": [0, 4]})],
            vec![tr("0x0a", Some("la2")), dflt(None)],
        ),
        state("la2", vec![extract("e1")], vec![], vec![dflt(None)]),
        state(
            "adv",
            vec![
                json!({"op": "advance", "parameters": [hx(16)]}),
                extract("e1"),
            ],
            vec![],
            vec![dflt(None)],
        ),
        state(
            "nomatch",
            vec![extract("e1")],
            vec![f("e1", "v")],
            vec![tr("0x01", None)],
        ),
        state(
            "masked",
            vec![json!({"op": "set", "parameters": [f("scalars", "m"), hx(0x55)]})],
            vec![],
            vec![dflt(None)],
        ),
        state(
            "vl",
            vec![
                extract("e1"),
                json!({"op": "extract_VL", "parameters": [
              {"type": "regular", "value": "var"}, e("<<", f("e1", "v"), hx(3))]}),
            ],
            vec![],
            vec![dflt(None)],
        ),
    ];
    let mut states = states;
    for (i, s) in states.iter_mut().enumerate() {
        s["id"] = json!(i);
    }
    let act = vec![
        prim("add_header", vec![hdr("out")]),
        assign(f("out", "err"), f("standard_metadata", "parser_error")),
        assign(f("out", "m"), f("scalars", "m")),
        assign(
            f("out", "n"),
            un("size_stack", json!({"type": "header_stack", "value": "st"})),
        ),
        assign(f("out", "valid_e1"), un("b2d", un("valid", hdr("e1")))),
        assign(f("standard_metadata", "egress_spec"), hx(1)),
    ];
    json!({
        "header_types": [
            {"name": "scalars_0", "id": 0, "fields": [["m", 8, false]]},
            {"name": "standard_metadata", "id": 1, "fields": sm_fields()},
            {"name": "b_t", "id": 2, "fields": [["v", 8, false]]},
            {"name": "o_t", "id": 3, "fields": [["err", 32, false], ["m", 8, false], ["n", 8, false], ["valid_e1", 8, false]]},
            {"name": "var_t", "id": 4, "fields": [["k", 8, false], ["opts", "*"]], "max_length": 9}
        ],
        "headers": [
            {"name": "scalars", "id": 0, "header_type": "scalars_0", "metadata": true},
            {"name": "standard_metadata", "id": 1, "header_type": "standard_metadata", "metadata": true},
            {"name": "sel", "id": 2, "header_type": "b_t", "metadata": false},
            {"name": "e1", "id": 3, "header_type": "b_t", "metadata": false},
            {"name": "st[0]", "id": 4, "header_type": "b_t", "metadata": false},
            {"name": "st[1]", "id": 5, "header_type": "b_t", "metadata": false},
            {"name": "out", "id": 6, "header_type": "o_t", "metadata": false},
            {"name": "var", "id": 7, "header_type": "var_t", "metadata": false}
        ],
        "header_stacks": [{"name": "st", "id": 0, "header_type": "b_t", "size": 2, "header_ids": [4, 5]}],
        "errors": [["NoError", 0], ["PacketTooShort", 1], ["NoMatch", 2], ["StackOutOfBounds", 3],
                   ["HeaderTooShort", 4], ["ParserTimeout", 5], ["ParserInvalidArgument", 6], ["MyErr", 9]],
        "parsers": [{"name": "parser", "id": 0, "init_state": "start", "parse_states": states}],
        "deparsers": [{"name": "deparser", "id": 0, "order": ["out", "sel", "e1", "st[0]", "st[1]", "var"]}],
        "actions": [{"name": "rep", "id": 0, "runtime_data": [], "primitives": act}],
        "pipelines": [
            {"name": "ingress", "id": 0, "init_table": "tbl_rep", "tables": [
                {"name": "tbl_rep", "id": 0, "key": [], "match_type": "exact", "type": "simple", "max_size": 1024,
                 "action_ids": [0], "actions": ["rep"], "base_default_next": null, "next_tables": {"rep": null},
                 "default_entry": {"action_id": 0, "action_const": true, "action_data": [], "action_entry_const": true}}],
             "conditionals": []},
            {"name": "egress", "id": 1, "init_table": null, "tables": [], "conditionals": []}]
    })
    .to_string()
}
