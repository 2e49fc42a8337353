//! The primitives of P4_14 compilers' JSON that BMv2 still runs
//! (`add_to_field`, `subtract_from_field`, `add`, `subtract`, `bit_and`,
//! `bit_or`, `bit_xor`, `shift_left`, `shift_right`, masked `modify_field`,
//! `copy_header`, `add_header` / `add_header_fast`, `no_op`, `drop`, the
//! size-0 hash offset), each run compiled and interpreted with the results
//! compared; expected values are worked out by hand from BMv2's semantics
//! (arbitrary precision, truncated to the destination's width).
mod inline;
use inline::*;
use ratelab_engine::Switch;
use serde_json::{json, Value};

fn input() -> Vec<u8> {
    // a=1 b=2 c=3 d=4 s=5 e=6 g=7
    h_bytes(1, 2, 3, 4, 5, 6, 7)
}

/// h's fields after running `prims` once.
fn h_after(prims: Vec<Value>) -> (u8, u16, u32, u64, i8, u8, u8) {
    let out = run_both(&action_program(prims), &input());
    assert_eq!(out.len(), 1, "one frame out");
    h_fields(&out[0])
}

#[test]
fn add_to_field_and_subtract_from_field_wrap_at_the_field_width() {
    let (a, b, c, d, s, _, _) = h_after(vec![
        prim("add_to_field", vec![f("h", "a"), hx(0xff)]),
        prim("add_to_field", vec![f("h", "b"), hx(-1)]),
        prim("subtract_from_field", vec![f("h", "c"), hx(5)]),
        prim("subtract_from_field", vec![f("h", "d"), f("h", "a")]),
        prim("add_to_field", vec![f("h", "s"), hx(-9)]),
    ]);
    assert_eq!(a, 0, "1 + 0xff in 8 bits");
    assert_eq!(b, 1, "2 - 1");
    assert_eq!(c, 0xffff_fffe, "3 - 5 in 32 bits");
    assert_eq!(d, 4, "4 - a, a already 0");
    assert_eq!(s, -4, "signed 5 - 9");
}

#[test]
fn three_operand_arithmetic_and_bitwise_primitives() {
    let (a, b, c, d, _, e, g) = h_after(vec![
        prim("add", vec![f("h", "d"), f("h", "b"), hx(0x10)]),
        prim("subtract", vec![f("h", "e"), f("h", "g"), hx(9)]),
        prim("bit_and", vec![f("h", "g"), hx(0x7), hx(0xc)]),
        prim("bit_or", vec![f("h", "a"), f("h", "a"), hx(0xf0)]),
        prim("bit_xor", vec![f("h", "c"), f("h", "c"), hx(0xff)]),
        prim("shift_left", vec![f("h", "b"), hx(0x81), hx(8)]),
    ]);
    assert_eq!(d, 2 + 0x10);
    assert_eq!(e, 0xe, "7 - 9 in 4 bits");
    assert_eq!(g, 0x4);
    assert_eq!(a, 0xf1);
    assert_eq!(c, 0xfc, "3 ^ 0xff");
    assert_eq!(b, 0x8100);
    let (a, b, ..) = h_after(vec![
        prim("shift_left", vec![f("h", "a"), hx(0x81), hx(1)]),
        prim("shift_right", vec![f("h", "b"), hx(0x8100), hx(4)]),
    ]);
    assert_eq!(a, 0x02, "0x102 in 8 bits");
    assert_eq!(b, 0x0810);
}

#[test]
fn masked_modify_field_changes_only_the_mask_bits() {
    // c = 3: (3 & ~0xff00) | (0xabcd & 0xff00)
    let (_, b, c, ..) = h_after(vec![
        prim("modify_field", vec![f("h", "c"), hx(0xabcd), hx(0xff00)]),
        prim("modify_field", vec![f("h", "b"), hx(0x1234)]),
    ]);
    assert_eq!(c, 0xab03);
    assert_eq!(b, 0x1234);
}

#[test]
fn copy_header_no_op_and_add_header_reset() {
    // h2 is invalid: copy_header makes it a valid copy of h.
    let out = run_both(
        &action_program(vec![
            prim("no_op", vec![]),
            prim("copy_header", vec![hdr("h2"), hdr("h")]),
        ]),
        &input(),
    );
    assert_eq!(out[0].len(), 34);
    assert_eq!(out[0][..17], out[0][17..]);
    // add_header on an invalid header zeroes its fields (BMv2's add_header,
    // which p4c also writes for setValid); on a valid one it changes nothing.
    let out = run_both(
        &action_program(vec![
            prim("copy_header", vec![hdr("h2"), hdr("h")]),
            prim("remove_header", vec![hdr("h2")]),
            prim("add_header", vec![hdr("h2")]),
            prim("add_header", vec![hdr("h")]),
        ]),
        &input(),
    );
    assert_eq!(out[0][..17], input()[..]);
    assert_eq!(out[0][17..], [0u8; 17]);
    // add_header_fast only marks it valid.
    let out = run_both(
        &action_program(vec![
            prim("copy_header", vec![hdr("h2"), hdr("h")]),
            prim("remove_header", vec![hdr("h2")]),
            prim("add_header_fast", vec![hdr("h2")]),
        ]),
        &input(),
    );
    assert_eq!(out[0][17..], input()[..]);
}

#[test]
fn p4_14_drop_drops() {
    let mut prims = vec![prim("drop", vec![])];
    // action_program sends to port 1 after the primitives: drop last.
    let mut v: Value = serde_json::from_str(&action_program(vec![])).unwrap();
    v["actions"][0]["primitives"]
        .as_array_mut()
        .unwrap()
        .append(&mut prims);
    assert!(run_both(&v.to_string(), &input()).is_empty());
}

#[test]
fn hash_offset_with_size_zero_gives_the_base() {
    let prims = vec![
        prim(
            "modify_field_with_hash_based_offset",
            vec![
                f("h", "d"),
                hx(100),
                json!({"type": "calculation", "value": "calc"}),
                hx(0),
            ],
        ),
        prim(
            "modify_field_with_hash_based_offset",
            vec![
                f("h", "c"),
                hx(100),
                json!({"type": "calculation", "value": "calc"}),
                hx(4),
            ],
        ),
    ];
    let mut v: Value = serde_json::from_str(&action_program(prims)).unwrap();
    v["calculations"] = json!([{"name": "calc", "id": 0, "algo": "identity",
        "input": [f("h", "c")]}]);
    let out = run_both(&v.to_string(), &input());
    let (_, _, c, d, ..) = h_fields(&out[0]);
    assert_eq!(d, 100, "size 0 counts as 1 (BMv2)");
    let identity_of_c: u32 = 3;
    assert_eq!(c, 100 + identity_of_c % 4);
}

#[test]
fn bad_parameter_counts_are_refused_with_the_path() {
    for (op, params) in [
        ("add_to_field", vec![f("h", "a")]),
        ("add", vec![f("h", "a"), hx(1)]),
        ("no_op", vec![hx(1)]),
        ("bit_xor", vec![f("h", "a"), hx(1), hx(2), hx(3)]),
    ] {
        let e = Switch::new(&action_program(vec![prim(op, params)]), 1)
            .err()
            .unwrap_or_else(|| panic!("{op} loaded"))
            .to_string();
        assert!(
            e.starts_with("actions[0].primitives[0].parameters:") && e.contains(op),
            "{e}"
        );
    }
    // The destination must be a field.
    let e = Switch::new(
        &action_program(vec![prim("add_to_field", vec![hx(1), hx(1)])]),
        1,
    )
    .err()
    .unwrap()
    .to_string();
    assert!(e.contains("expected a field reference"), "{e}");
}
