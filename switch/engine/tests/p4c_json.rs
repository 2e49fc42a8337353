//! JSON as the real p4c writes it that the engine once refused: a field's
//! signedness written as an integer, and comparisons of whole headers,
//! header unions, variable-length and wide fields. Each program runs
//! compiled and interpreted, with the results compared.
mod inline;
use inline::*;
use ratelab_engine::Switch;
use serde_json::{json, Value};

fn b2d(x: Value) -> Value {
    un("b2d", x)
}

fn input() -> Vec<u8> {
    h_bytes(1, 2, 3, 4, -3, 6, 7)
}

/// action_program with h_t's signedness flags written as integers.
fn with_int_signedness(prims: Vec<Value>, s_flag: Value) -> String {
    let mut v: Value = serde_json::from_str(&action_program(prims)).unwrap();
    for fld in v["header_types"][2]["fields"].as_array_mut().unwrap() {
        let signed = fld[0] == "s";
        fld[2] = if signed { s_flag.clone() } else { json!(0) };
    }
    v.to_string()
}

#[test]
fn signedness_may_be_an_integer() {
    // d = s: sign-extended when s is signed (-3), not when it is not (0xfd).
    let prims = vec![assign(f("h", "d"), f("h", "s"))];
    let out = run_both(&with_int_signedness(prims.clone(), json!(1)), &input());
    assert_eq!(h_fields(&out[0]).3, (-3i64) as u64);
    let out = run_both(&with_int_signedness(prims.clone(), json!(0)), &input());
    assert_eq!(h_fields(&out[0]).3, 0xfd);
    let e = Switch::new(&with_int_signedness(prims, json!("yes")), 1)
        .err()
        .unwrap()
        .to_string();
    assert_eq!(
        e,
        "header_types[2].fields[4][2]: expected a boolean or an integer (0 / 1)"
    );
}

/// action_program plus header h3 (type h_t), a stack `st` and unions
/// u = {h2, h3} and u2 = {h4, h5}, all of h_t; deparsed h, h2, h3, h4, h5.
fn union_program(prims: Vec<Value>) -> String {
    let mut v: Value = serde_json::from_str(&action_program(prims)).unwrap();
    let hs = v["headers"].as_array_mut().unwrap();
    for (i, n) in ["h3", "h4", "h5", "st[0]"].iter().enumerate() {
        hs.push(json!({"name": n, "id": 5 + i, "header_type": "h_t", "metadata": false}));
    }
    v["header_stacks"] =
        json!([{"name": "st", "id": 0, "header_type": "h_t", "size": 1, "header_ids": [8]}]);
    v["header_union_types"] =
        json!([{"name": "u_t", "id": 0, "headers": [["x", "h_t"], ["y", "h_t"]]}]);
    v["header_unions"] = json!([
        {"name": "u", "id": 0, "union_type": "u_t", "header_ids": [3, 5]},
        {"name": "u2", "id": 1, "union_type": "u_t", "header_ids": [6, 7]}]);
    v["deparsers"][0]["order"] = json!(["h", "h2", "h3", "h4", "h5"]);
    v.to_string()
}

/// Runs `prims` and returns h.a (the comparison result is stored there).
fn result_in_a(prims: Vec<Value>) -> u8 {
    run_both(&union_program(prims), &input())[0][0]
}

fn eq(l: Value, r: Value) -> Value {
    b2d(e("==", l, r))
}

fn ne(l: Value, r: Value) -> Value {
    b2d(e("!=", l, r))
}

#[test]
fn header_equality_is_bmv2s_validity_and_fields() {
    let a = || f("h", "a");
    // h2 invalid: not equal (BMv2 wants both valid).
    assert_eq!(result_in_a(vec![assign(a(), eq(hdr("h"), hdr("h2")))]), 0);
    assert_eq!(result_in_a(vec![assign(a(), ne(hdr("h"), hdr("h2")))]), 1);
    // Two invalid headers are not equal either.
    assert_eq!(result_in_a(vec![assign(a(), eq(hdr("h4"), hdr("h2")))]), 0);
    // A valid copy is equal, itself included.
    let copy = || prim("assign_header", vec![hdr("h2"), hdr("h")]);
    assert_eq!(
        result_in_a(vec![copy(), assign(a(), eq(hdr("h"), hdr("h2")))]),
        1
    );
    assert_eq!(result_in_a(vec![assign(a(), eq(hdr("h"), hdr("h")))]), 1);
    // One field differs.
    assert_eq!(
        result_in_a(vec![
            copy(),
            assign(f("h2", "g"), hx(0)),
            assign(a(), eq(hdr("h"), hdr("h2")))
        ]),
        0
    );
    // A stack element, by a constant index.
    let st0 = json!({"type": "expression", "value": {"op": "dereference_header_stack",
        "left": {"type": "header_stack", "value": "st"}, "right": hx(0)}});
    assert_eq!(
        result_in_a(vec![
            prim("assign_header", vec![st0.clone(), hdr("h")]),
            assign(a(), eq(st0, hdr("h")))
        ]),
        1
    );
    // Different header types are never equal.
    assert_eq!(
        result_in_a(vec![
            prim("add_header", vec![hdr("w")]),
            assign(a(), eq(hdr("h"), hdr("w")))
        ]),
        0
    );
}

#[test]
fn header_equality_in_a_condition() {
    // ingress: if (h == h2) a = 0xee, after copying h into h2 or not.
    for (copy, want) in [(true, 0xee), (false, 1)] {
        let prims = if copy {
            vec![prim("assign_header", vec![hdr("h2"), hdr("h")])]
        } else {
            vec![]
        };
        let mut v: Value = serde_json::from_str(&union_program(prims)).unwrap();
        v["actions"].as_array_mut().unwrap().push(json!(
            {"name": "mark", "id": 1, "runtime_data": [],
             "primitives": [assign(f("h", "a"), hx(0xee))]}));
        let ingress = &mut v["pipelines"][0];
        ingress["tables"][0]["next_tables"] = json!({"act": "cond"});
        ingress["tables"][0]["base_default_next"] = json!("cond");
        ingress["tables"].as_array_mut().unwrap().push(json!(
            {"name": "tbl_mark", "id": 1, "key": [], "match_type": "exact", "type": "simple",
             "max_size": 1, "action_ids": [1], "actions": ["mark"], "base_default_next": null,
             "next_tables": {"mark": null},
             "default_entry": {"action_id": 1, "action_const": true, "action_data": [],
                               "action_entry_const": true}}));
        ingress["conditionals"] = json!([{"name": "cond", "id": 0,
            "expression": e("==", hdr("h"), hdr("h2")),
            "true_next": "tbl_mark", "false_next": null}]);
        let out = run_both(&v.to_string(), &input());
        assert_eq!(out[0][0], want, "copy {copy}");
    }
}

#[test]
fn union_equality_is_bmv2s() {
    let a = || f("h", "a");
    let u = |n: &str| json!({"type": "header_union", "value": n});
    // Both invalid: not equal.
    assert_eq!(result_in_a(vec![assign(a(), eq(u("u"), u("u2")))]), 0);
    // The same member valid with equal fields: equal.
    let copy = |d: &str| prim("assign_header", vec![hdr(d), hdr("h")]);
    assert_eq!(
        result_in_a(vec![
            copy("h2"),
            copy("h4"),
            assign(a(), eq(u("u"), u("u2")))
        ]),
        1
    );
    // Different members valid: not equal, even with the same fields.
    assert_eq!(
        result_in_a(vec![
            copy("h2"),
            copy("h5"),
            assign(a(), eq(u("u"), u("u2")))
        ]),
        0
    );
    assert_eq!(
        result_in_a(vec![
            copy("h2"),
            copy("h5"),
            assign(a(), ne(u("u"), u("u2")))
        ]),
        1
    );
}

#[test]
fn stack_equality_and_mixed_comparisons_are_refused() {
    let st = json!({"type": "header_stack", "value": "st"});
    let e1 = Switch::new(
        &union_program(vec![assign(f("h", "a"), eq(st.clone(), st))]),
        1,
    )
    .err()
    .unwrap()
    .to_string();
    assert_eq!(
        e1,
        "actions[0].primitives[0].parameters[1].value.right.value.left: \
         header stacks cannot be compared (BMv2 has no stack equality)"
    );
    let e2 = Switch::new(
        &union_program(vec![assign(f("h", "a"), eq(hdr("h"), f("h", "b")))]),
        1,
    )
    .err()
    .unwrap()
    .to_string();
    assert!(
        e2.ends_with("the two sides of the comparison are of different kinds"),
        "{e2}"
    );
}

/// sel {v:8}; p and q {len:8, data: varbit} with `sel.v` bytes of data
/// each; w1 and w2 {x: 256 bits}. Ingress stores (p.data == q.data) in
/// sel.v, and (w1.x == w2.x) << 1 on top: as p4c compares such headers,
/// field by field.
fn varbit_program() -> String {
    let vl = |h: &str| {
        json!({"op": "extract_VL", "parameters": [{"type": "regular", "value": h},
            e("<<", f("sel", "v"), hx(3))]})
    };
    let result = e(
        "|",
        b2d(e("==", f("p", "data"), f("q", "data"))),
        e("<<", b2d(e("==", f("w1", "x"), f("w2", "x"))), hx(1)),
    );
    json!({
        "header_types": [
            {"name": "standard_metadata", "id": 0, "fields": sm_fields()},
            {"name": "b_t", "id": 1, "fields": [["v", 8, false]]},
            {"name": "o_t", "id": 2, "fields": [["len", 8, 0], ["data", "*"]], "max_length": 9},
            {"name": "wd_t", "id": 3, "fields": [["x", 256, 0]]}
        ],
        "headers": [
            {"name": "standard_metadata", "id": 0, "header_type": "standard_metadata", "metadata": true},
            {"name": "sel", "id": 1, "header_type": "b_t", "metadata": false},
            {"name": "p", "id": 2, "header_type": "o_t", "metadata": false},
            {"name": "q", "id": 3, "header_type": "o_t", "metadata": false},
            {"name": "w1", "id": 4, "header_type": "wd_t", "metadata": false},
            {"name": "w2", "id": 5, "header_type": "wd_t", "metadata": false}
        ],
        "parsers": [{"name": "parser", "id": 0, "init_state": "start", "parse_states": [
            state("start", vec![extract("sel"), vl("p"), vl("q"), extract("w1"), extract("w2")],
                  vec![], vec![dflt(None)])]}],
        "deparsers": [{"name": "deparser", "id": 0, "order": ["sel", "p", "q", "w1", "w2"]}],
        "actions": [{"name": "cmp", "id": 0, "runtime_data": [], "primitives": [
            assign(f("sel", "v"), result),
            assign(f("standard_metadata", "egress_spec"), hx(1))]}],
        "pipelines": one_action_pipelines("cmp")
    })
    .to_string()
}

#[test]
fn variable_length_and_wide_fields_compare_by_value() {
    let prog = varbit_program();
    let frame = |p: &[u8], q: &[u8], w1: u8, w2: u8| {
        let mut v = vec![p.len() as u8 - 1];
        v.extend_from_slice(p);
        v.extend_from_slice(q);
        v.extend_from_slice(&[w1; 32]);
        v.extend_from_slice(&[w2; 32]);
        v
    };
    for (p, q, w1, w2, want) in [
        (&[9u8, 0xaa, 0xbb][..], &[9u8, 0xaa, 0xbb][..], 5, 5, 3),
        (&[9, 0xaa, 0xbb], &[9, 0xaa, 0xbc], 5, 5, 2),
        (&[9, 0xaa, 0xbb], &[9, 0xaa, 0xbb], 5, 6, 1),
        (&[1, 0x00, 0x01], &[1, 0x00, 0x01], 0, 1, 1),
        (&[1, 0x01, 0x01], &[1, 0x00, 0x01], 7, 7, 2),
    ] {
        let input = frame(p, q, w1, w2);
        let out = run_both(&prog, &input);
        assert_eq!(out[0][0], want, "{input:02x?}");
        assert_eq!(out[0][1..], input[1..]);
    }
}
