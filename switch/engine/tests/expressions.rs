//! Expression operators, widths and signedness, and action primitives.
mod inline;
use inline::*;
use ratelab_engine::Switch;
use serde_json::Value;

/// Runs one action on h = (a, b, c, d, s, e, g) and returns the output bytes.
fn run(prims: Vec<Value>, input: &[u8]) -> Vec<u8> {
    let mut sw = Switch::new(&action_program(prims), 1).unwrap_or_else(|e| panic!("{e}"));
    sw.inject(0, input, 0);
    let out = sw.poll(0);
    assert_eq!(out.len(), 1);
    out[0].data.clone()
}

const A: u8 = 200;
const B: u16 = 0x1234;
const C: u32 = 0x8000_0001;
const S: i8 = -3;

fn input() -> Vec<u8> {
    h_bytes(A, B, C, 0, S, 0xa, 0x5)
}

/// Value of h.d after `h.d = expr`.
fn d_of(expr: Value) -> u64 {
    h_fields(&run(vec![assign(f("h", "d"), expr)], &input())).3
}

#[test]
fn arithmetic_and_truncation_to_destination_width() {
    assert_eq!(d_of(e("+", f("h", "a"), f("h", "b"))), A as u64 + B as u64);
    // a - b is negative: stored modulo 2^64
    assert_eq!(
        d_of(e("-", f("h", "a"), f("h", "b"))),
        (A as u64).wrapping_sub(B as u64)
    );
    assert_eq!(d_of(e("*", f("h", "b"), f("h", "c"))), B as u64 * C as u64);
    // into 8 bits: (a + a) truncated
    let o = run(
        vec![assign(f("h", "a"), e("+", f("h", "a"), f("h", "a")))],
        &input(),
    );
    assert_eq!(h_fields(&o).0, A.wrapping_add(A));
    // p4c's explicit masking of bit<8> arithmetic
    assert_eq!(
        d_of(e("&", e("+", f("h", "a"), hx(0xff)), hx(0xff))),
        (A as u64 + 0xff) & 0xff
    );
    // 4-bit fields
    let o = run(
        vec![assign(f("h", "e"), e("+", f("h", "e"), f("h", "g")))],
        &input(),
    );
    assert_eq!(h_fields(&o).5, (0xa + 0x5) & 0xf);
    assert_eq!(h_fields(&o).6, 0x5, "neighbouring field untouched");
}

#[test]
fn shifts_bitwise_and_not() {
    assert_eq!(d_of(e("<<", f("h", "c"), hx(4))), (C as u64) << 4);
    assert_eq!(d_of(e(">>", f("h", "c"), hx(4))), (C as u64) >> 4);
    assert_eq!(d_of(e("<<", f("h", "c"), hx(200))), 0);
    assert_eq!(d_of(e("&", f("h", "c"), hx(0xff))), 1);
    assert_eq!(
        d_of(e("|", f("h", "a"), f("h", "b"))),
        (A as u64) | B as u64
    );
    assert_eq!(
        d_of(e("^", f("h", "a"), f("h", "b"))),
        (A as u64) ^ B as u64
    );
    // ~ on an unbounded value, then masked as p4c does
    assert_eq!(d_of(e("&", un("~", f("h", "a")), hx(0xff))), !A as u64);
    // unmasked ~a stored into 64 bits: all ones above
    assert_eq!(d_of(un("~", f("h", "a"))), !(A as u64));
    assert_eq!(d_of(un("-", f("h", "a"))), (A as u64).wrapping_neg());
}

fn b(x: Value) -> u64 {
    d_of(un("b2d", x))
}

#[test]
fn comparisons_logic_and_conditional() {
    assert_eq!(b(e("<", f("h", "a"), f("h", "b"))), 1);
    assert_eq!(b(e(">", f("h", "a"), f("h", "b"))), 0);
    assert_eq!(b(e("<=", f("h", "a"), hx(A as i128))), 1);
    assert_eq!(b(e(">=", f("h", "a"), hx(A as i128 + 1))), 0);
    assert_eq!(b(e("==", f("h", "b"), hx(0x1234))), 1);
    assert_eq!(b(e("!=", f("h", "b"), hx(0x1234))), 0);
    assert_eq!(
        b(e(
            "and",
            e("==", f("h", "a"), hx(A as i128)),
            e("!=", f("h", "c"), hx(0))
        )),
        1
    );
    assert_eq!(
        b(e(
            "or",
            e("==", f("h", "a"), hx(1)),
            e("==", f("h", "c"), hx(0))
        )),
        0
    );
    assert_eq!(b(un("not", e("==", f("h", "a"), hx(1)))), 1);
    assert_eq!(b(un("d2b", f("h", "a"))), 1);
    assert_eq!(b(un("valid", hdr("h"))), 1);
    assert_eq!(b(un("valid", hdr("h2"))), 0);
    assert_eq!(b(un("d2b", f("h2", "$valid$"))), 0);
    let cond = serde_json::json!({"type": "expression", "value": {"op": "?",
        "left": hx(11), "right": hx(22), "cond": e("==", f("h", "a"), hx(A as i128))}});
    assert_eq!(d_of(cond), 11);
    // bool constants
    assert_eq!(b(serde_json::json!({"type": "bool", "value": true})), 1);
}

#[test]
fn signed_fields_and_casts() {
    // s = -3 (int<8>): sign-extended when read
    assert_eq!(d_of(f("h", "s")), (-3i64) as u64);
    assert_eq!(b(e("<", f("h", "s"), hx(0))), 1);
    assert_eq!(d_of(e("two_comp_mod", hx(257), hx(8))), 1);
    assert_eq!(d_of(e("two_comp_mod", hx(-129), hx(8))), 127);
    assert_eq!(d_of(e("two_comp_mod", hx(200), hx(8))), (-56i64) as u64);
    assert_eq!(d_of(e("sat_cast", hx(300), hx(8))), 127);
    assert_eq!(d_of(e("sat_cast", hx(-300), hx(8))), (-128i64) as u64);
    assert_eq!(d_of(e("usat_cast", hx(300), hx(8))), 255);
    assert_eq!(d_of(e("usat_cast", hx(-5), hx(8))), 0);
    // signed arithmetic stored into an int<8>: s = s - 126 -> -129 wraps to 127
    let o = run(
        vec![assign(f("h", "s"), e("-", f("h", "s"), hx(126)))],
        &input(),
    );
    assert_eq!(h_fields(&o).4, 127);
    // arithmetic shift of a negative value
    assert_eq!(d_of(e(">>", f("h", "s"), hx(1))), (-2i64) as u64);
}

#[test]
fn wide_fields_up_to_128_bits() {
    let mut inp = input();
    inp.extend_from_slice(&[0u8; 17]); // h2 is not parsed; payload
    let x = u128::MAX - 5;
    let prims = vec![
        prim("add_header", vec![hdr("w")]),
        assign(f("w", "x"), hx(x as i128)),
        assign(
            f("h", "d"),
            e(">>", e("&", f("w", "x"), hx(0xffff_0000_0000_0000)), hx(48)),
        ),
    ];
    let o = run(prims, &inp);
    assert_eq!(h_fields(&o).3, 0xffff);
    assert_eq!(&o[17..33], &x.to_be_bytes());
}

#[test]
fn header_primitives() {
    // add h2, copy h into it, change h2.a, then remove h
    let prims = vec![
        prim("add_header", vec![hdr("h2")]),
        prim("assign_header", vec![hdr("h2"), hdr("h")]),
        assign(f("h2", "a"), hx(7)),
        prim("remove_header", vec![hdr("h")]),
    ];
    let o = run(prims, &input());
    assert_eq!(o.len(), 17);
    let (a, bb, c, ..) = h_fields(&o);
    assert_eq!((a, bb, c), (7, B, C));
}

#[test]
fn jumps_and_exit() {
    // d = 1; if a == 0 goto 3 (skipped: a != 0); d = 2; _jump 5; d = 3; (5) end
    let prims = vec![
        assign(f("h", "d"), hx(1)),
        prim("_jump_if_zero", vec![e("!=", f("h", "a"), hx(0)), hx(4)]),
        assign(f("h", "d"), hx(2)),
        prim("_jump", vec![hx(5)]),
        assign(f("h", "d"), hx(3)),
    ];
    assert_eq!(h_fields(&run(prims, &input())).3, 2);
    let prims = vec![
        assign(f("h", "d"), hx(1)),
        prim("_jump_if_zero", vec![e("==", f("h", "a"), hx(0)), hx(4)]),
        assign(f("h", "d"), hx(2)),
        prim("_jump", vec![hx(5)]),
        assign(f("h", "d"), hx(3)),
    ];
    assert_eq!(h_fields(&run(prims, &input())).3, 3);
}

#[test]
fn assert_failure_drops_packet() {
    let prims = vec![prim("assert", vec![e("==", f("h", "a"), hx(0))])];
    let mut sw = Switch::new(&action_program(prims), 1).unwrap();
    sw.inject(0, &input(), 0);
    assert!(sw.poll(0).is_empty());
    assert_eq!(sw.stats().assert_drops, 1);
}

#[test]
fn log_msg_capture() {
    let prims = vec![prim(
        "log_msg",
        vec![
            serde_json::json!({"type": "string", "value": "a={} b={}"}),
            serde_json::json!({"type": "parameters_vector", "value": [f("h", "a"), f("h", "b")]}),
        ],
    )];
    let mut sw = Switch::new(&action_program(prims), 1).unwrap();
    sw.inject(0, &input(), 0);
    assert!(sw.take_logs().is_empty(), "capture is off by default");
    sw.set_log_capture(true);
    sw.inject(0, &input(), 0);
    assert_eq!(sw.take_logs(), vec![format!("a={A} b={B}")]);
}

#[test]
fn egress_spec_drop_port() {
    let prims = vec![]; // action_program appends egress_spec = 1
    let mut sw = Switch::new(&action_program(prims), 1).unwrap();
    sw.inject(0, &input(), 0);
    assert_eq!(sw.poll(0)[0].port, 1);
    let prims = vec![prim("mark_to_drop", vec![hdr("standard_metadata")])];
    // mark_to_drop before egress_spec = 1 is overridden: like BMv2
    let mut sw = Switch::new(&action_program(prims), 1).unwrap();
    sw.inject(0, &input(), 0);
    assert_eq!(sw.poll(0).len(), 1);
}
