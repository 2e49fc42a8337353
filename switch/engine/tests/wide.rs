//! Fields wider than 128 bits: extracted, emitted, copied, set to constants
//! and hashed; anything else is refused with a message.
mod inline;
use inline::*;
use ratelab_engine::Switch;
use serde_json::{json, Value};

/// Header x {a: 8, big: 160, b: 8} parsed and emitted, then y {big: 160}.
fn program(prims: Vec<Value>) -> String {
    let mut all = prims;
    all.push(assign(f("standard_metadata", "egress_spec"), hx(1)));
    json!({
        "header_types": [
            {"name": "scalars_0", "id": 0, "fields": []},
            {"name": "standard_metadata", "id": 1, "fields": sm_fields()},
            {"name": "x_t", "id": 2, "fields": [["a", 8, false], ["big", 160, false], ["b", 8, false]]},
            {"name": "y_t", "id": 3, "fields": [["big", 160, false]]}
        ],
        "headers": [
            {"name": "scalars", "id": 0, "header_type": "scalars_0", "metadata": true},
            {"name": "standard_metadata", "id": 1, "header_type": "standard_metadata", "metadata": true},
            {"name": "x", "id": 2, "header_type": "x_t", "metadata": false},
            {"name": "y", "id": 3, "header_type": "y_t", "metadata": false}
        ],
        "parsers": [{"name": "parser", "id": 0, "init_state": "start", "parse_states": [
            state("start", vec![extract("x")], vec![], vec![dflt(None)])]}],
        "deparsers": [{"name": "deparser", "id": 0, "order": ["x", "y"]}],
        "calculations": [{"name": "c", "id": 0, "algo": "crc32", "input": [f("x", "big")]}],
        "actions": [{"name": "a", "id": 0, "runtime_data": [], "primitives": all}],
        "pipelines": [
            {"name": "ingress", "id": 0, "init_table": "tbl_a", "tables": [
                {"name": "tbl_a", "id": 0, "key": [], "match_type": "exact", "type": "simple", "max_size": 1,
                 "action_ids": [0], "next_tables": {"a": null},
                 "default_entry": {"action_id": 0, "action_const": true, "action_data": []}}]},
            {"name": "egress", "id": 1, "init_table": null, "tables": []}]
    })
    .to_string()
}

fn input() -> Vec<u8> {
    let mut v = vec![0xaa];
    v.extend((1..=20u8).collect::<Vec<_>>());
    v.push(0xbb);
    v.extend_from_slice(b"tail");
    v
}

fn run(prims: Vec<Value>) -> Vec<u8> {
    let mut sw = Switch::new(&program(prims), 1).unwrap_or_else(|e| panic!("{e}"));
    sw.inject(0, &input(), 0);
    sw.poll(0).remove(0).data
}

#[test]
fn extract_and_emit_unchanged() {
    assert_eq!(run(vec![]), input());
}

#[test]
fn copy_and_constant() {
    let big_const = "0x0102030405060708090a0b0c0d0e0f1011121314";
    let o = run(vec![
        prim("add_header", vec![hdr("y")]),
        assign(f("y", "big"), f("x", "big")),
        assign(f("x", "big"), json!({"type": "hexstr", "value": "0xff"})),
    ]);
    let mut want = vec![0xaa];
    want.extend([0u8; 19]);
    want.push(0xff);
    want.push(0xbb);
    want.extend(1..=20u8);
    want.extend_from_slice(b"tail");
    assert_eq!(o, want);
    let o = run(vec![assign(
        f("x", "big"),
        json!({"type": "hexstr", "value": big_const}),
    )]);
    assert_eq!(o, input(), "the constant equals the input bytes");
}

#[test]
fn access_field_positions_skip_chunks() {
    // x.b is JSON field position 2 (after the 160-bit field)
    let acc = json!({"type": "expression", "value": {"op": "access_field",
        "left": {"type": "header", "value": "x"}, "right": 2}});
    let o = run(vec![assign(f("x", "a"), acc)]);
    assert_eq!(o[0], 0xbb);
}

#[test]
fn hash_over_wide_field() {
    let prims = vec![prim(
        "modify_field_with_hash_based_offset",
        vec![
            f("x", "a"),
            hx(0),
            json!({"type": "calculation", "value": "c"}),
            hx(256),
        ],
    )];
    let o = run(prims);
    // reference CRC-32 of the 20 bytes, low byte
    let mut c = 0xffff_ffffu32;
    for b in 1..=20u8 {
        c ^= b as u32;
        for _ in 0..8 {
            c = if c & 1 != 0 {
                (c >> 1) ^ 0xedb8_8320
            } else {
                c >> 1
            };
        }
    }
    assert_eq!(o[0], (!c & 0xff) as u8);
}

#[test]
fn other_uses_are_refused() {
    let e = Switch::new(
        &program(vec![assign(f("x", "a"), e("+", f("x", "big"), hx(1)))]),
        1,
    )
    .err()
    .unwrap()
    .to_string();
    assert!(e.contains("\"x.big\" is 160 bits wide"), "{e}");
    let e = Switch::new(&program(vec![assign(f("x", "big"), f("x", "a"))]), 1)
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("expected a field of 160 bits"), "{e}");
    let e = Switch::new(&program(vec![assign(f("x", "big"), hx(-1))]), 1)
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("non-negative hexstr of at most 160 bits"), "{e}");
    let too_big = format!("0x1{}", "0".repeat(40));
    let e = Switch::new(
        &program(vec![assign(
            f("x", "big"),
            json!({"type": "hexstr", "value": too_big}),
        )]),
        1,
    )
    .err()
    .unwrap()
    .to_string();
    assert!(e.contains("at most 160 bits"), "{e}");
}
