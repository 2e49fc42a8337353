//! Parser semantics: transitions with masks, errors, stacks, lookahead,
//! verify, advance, variable-length fields; checksums with payload.
mod inline;
use inline::*;
use ratelab_engine::Switch;
use serde_json::json;

/// (parser_error, m, stack size, e1 valid, bytes after `out`)
fn run(input: &[u8]) -> (u32, u8, u8, u8, Vec<u8>) {
    let mut sw = Switch::new(&parser_program(), 1).unwrap_or_else(|e| panic!("{e}"));
    sw.inject(0, input, 0);
    let o = sw.poll(0).remove(0).data;
    (
        u32::from_be_bytes(o[0..4].try_into().unwrap()),
        o[4],
        o[5],
        o[6],
        o[7..].to_vec(),
    )
}

#[test]
fn empty_packet_is_packet_too_short() {
    assert_eq!(run(&[]).0, 1);
}

#[test]
fn default_transition_accepts() {
    let (err, m, n, v, rest) = run(&[0x99, 1, 2]);
    assert_eq!((err, m, n, v), (0, 0, 0, 0));
    assert_eq!(rest, vec![0x99, 1, 2]);
}

#[test]
fn masked_transition() {
    assert_eq!(run(&[0x5c]).1, 0x55);
    assert_eq!(run(&[0x6c]).1, 0);
}

#[test]
fn header_stack_and_stack_out_of_bounds() {
    let (err, _, n, _, rest) = run(&[1, 0, 7, 0xee]);
    assert_eq!((err, n), (0, 2));
    assert_eq!(rest, vec![1, 0, 7, 0xee]);
    // three zero elements: the third does not fit the stack of two
    let (err, _, n, ..) = run(&[1, 0, 0, 0]);
    assert_eq!((err, n), (3, 2));
}

#[test]
fn verify_raises_program_error() {
    assert_eq!(run(&[2, 0x42]).0, 0);
    let (err, _, _, v, _) = run(&[2, 0x41]);
    assert_eq!((err, v), (9, 1));
}

#[test]
fn lookahead_in_key_and_set() {
    // key = top 4 bits of next byte (0xa_), m = the byte after it
    let (err, m, _, v, _) = run(&[3, 0xa1, 0x77]);
    assert_eq!((err, m, v), (0, 0x77, 1));
    let (_, _, _, v, _) = run(&[3, 0xb1, 0x77]);
    assert_eq!(v, 0);
    // lookahead past the end
    assert_eq!(run(&[3, 0xa1]).0, 1);
}

#[test]
fn advance_skips_bytes() {
    let (err, _, _, v, rest) = run(&[4, 9, 9, 0x33]);
    assert_eq!((err, v), (0, 1));
    // advanced bytes are dropped from the output (not part of any header)
    assert_eq!(rest, vec![4, 0x33]);
    assert_eq!(run(&[4, 9]).0, 1);
}

#[test]
fn no_matching_transition_is_no_match() {
    assert_eq!(run(&[6, 1]).0, 0);
    assert_eq!(run(&[6, 2]).0, 2);
}

#[test]
fn truncated_header_is_packet_too_short() {
    let (err, _, _, v, rest) = run(&[2]);
    assert_eq!((err, v), (1, 0));
    assert_eq!(rest, vec![2]);
}

#[test]
fn variable_length_field() {
    // e1.v = 2 -> 16 bits of options after var.k
    let (err, _, _, _, rest) = run(&[7, 2, 0xaa, 1, 2, 0xff]);
    assert_eq!(err, 0);
    assert_eq!(rest, vec![7, 2, 0xaa, 1, 2, 0xff]);
    // length above max_length (9 bytes = k + 8 bytes of options)
    assert_eq!(run(&[7, 9, 0xaa, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]).0, 4);
    // not enough bytes for the options
    assert_eq!(run(&[7, 2, 0xaa, 1]).0, 1);
}

/// A program computing a TCP-style checksum over a pseudo header field, a
/// header and the payload (`payload` input), verified and updated.
fn csum_program() -> String {
    json!({
        "header_types": [
            {"name": "scalars_0", "id": 0, "fields": []},
            {"name": "standard_metadata", "id": 1, "fields": sm_fields()},
            {"name": "p_t", "id": 2, "fields": [["src", 16, false]]},
            {"name": "t_t", "id": 3, "fields": [["x", 16, false], ["ck", 16, false]]},
            {"name": "r_t", "id": 4, "fields": [["err", 8, false]]}
        ],
        "headers": [
            {"name": "scalars", "id": 0, "header_type": "scalars_0", "metadata": true},
            {"name": "standard_metadata", "id": 1, "header_type": "standard_metadata", "metadata": true},
            {"name": "p", "id": 2, "header_type": "p_t", "metadata": false},
            {"name": "t", "id": 3, "header_type": "t_t", "metadata": false},
            {"name": "r", "id": 4, "header_type": "r_t", "metadata": false}
        ],
        "parsers": [{"name": "parser", "id": 0, "init_state": "start", "parse_states": [
            state("start", vec![extract("p"), extract("t")], vec![], vec![dflt(None)])]}],
        "deparsers": [{"name": "deparser", "id": 0, "order": ["r", "p", "t"]}],
        "calculations": [{"name": "c", "id": 0, "algo": "csum16", "input": [
            f("p", "src"), {"type": "hexstr", "value": "0x0006", "bitwidth": 16}, f("t", "x"),
            {"type": "payload", "value": null}]}],
        "checksums": [{"name": "ck", "id": 0, "target": ["t", "ck"], "type": "generic", "calculation": "c",
                       "verify": true, "update": true, "if_cond": null}],
        "actions": [{"name": "a", "id": 0, "runtime_data": [], "primitives": [
            prim("add_header", vec![hdr("r")]),
            assign(f("r", "err"), f("standard_metadata", "checksum_error")),
            assign(f("t", "x"), e("&", e("+", f("t", "x"), hx(1)), hx(0xffff))),
            assign(f("standard_metadata", "egress_spec"), hx(1))]}],
        "pipelines": [
            {"name": "ingress", "id": 0, "init_table": "tbl_a", "tables": [
                {"name": "tbl_a", "id": 0, "key": [], "match_type": "exact", "type": "simple", "max_size": 1,
                 "action_ids": [0], "next_tables": {"a": null},
                 "default_entry": {"action_id": 0, "action_const": true, "action_data": []}}]},
            {"name": "egress", "id": 1, "init_table": null, "tables": []}]
    })
    .to_string()
}

fn csum_ref(b: &[u8]) -> u16 {
    let mut s: u32 = 0;
    for c in b.chunks(2) {
        s += ((c[0] as u32) << 8) | *c.get(1).unwrap_or(&0) as u32;
    }
    while s > 0xffff {
        s = (s & 0xffff) + (s >> 16);
    }
    !(s as u16)
}

#[test]
fn checksum_with_constant_and_payload() {
    let mut sw = Switch::new(&csum_program(), 1).unwrap_or_else(|e| panic!("{e}"));
    let payload = [1u8, 2, 3, 4, 5];
    let ck = |src: u16, x: u16| {
        let mut b = src.to_be_bytes().to_vec();
        b.extend_from_slice(&[0, 6]);
        b.extend_from_slice(&x.to_be_bytes());
        b.extend_from_slice(&payload);
        csum_ref(&b)
    };
    let mut pkt = vec![0x0a, 0x0b, 0x00, 0x10];
    pkt.extend_from_slice(&ck(0x0a0b, 0x10).to_be_bytes());
    pkt.extend_from_slice(&payload);
    sw.inject(0, &pkt, 0);
    let mut bad = pkt.clone();
    bad[4] ^= 1;
    sw.inject(0, &bad, 0);
    let out = sw.poll(0);
    for (i, o) in out.iter().enumerate() {
        assert_eq!(o.data[0], i as u8, "checksum_error");
        let x = u16::from_be_bytes([o.data[3], o.data[4]]);
        assert_eq!(x, 0x11);
        assert_eq!(
            u16::from_be_bytes([o.data[5], o.data[6]]),
            ck(0x0a0b, 0x11),
            "updated"
        );
    }
}
