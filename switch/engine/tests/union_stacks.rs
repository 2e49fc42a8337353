//! BMv2 `header_union_stacks`: extraction into the next element's member,
//! `union_stack_field` transition keys, run-time element access, validity,
//! `size_stack` / `last_stack_index`, push / pop and `assign_union_stack`.
//! Every program runs compiled (the JIT falls back to the interpreter for
//! union stacks) and interpreted; both must give the expected bytes.
mod inline;
use inline::*;
use ratelab_engine::Switch;
use serde_json::{json, Value};

/// Packet: cmd {idx:8} then elements, each a tag byte (1: member `a`
/// {x:8}, 2: member `b` {y:16}, anything else ends the stack) and its
/// member; an `a` whose x is 0xff also ends it (a `union_stack_field` key).
/// The union stack `us` has 3 elements; `vs` is a second one of the same
/// shape, never parsed. Ingress runs `prims`, then `report` fills
/// `out` {size, last, valid, a_valid} for `us` (element `cmd.idx`),
/// then sends to port 1. Deparser: cmd, out, us[0..3] (a, b), vs[0..3].
fn program(prims: Vec<Value>) -> String {
    let mut headers = vec![
        json!({"name": "standard_metadata", "id": 0, "header_type": "standard_metadata", "metadata": true}),
        json!({"name": "cmd", "id": 1, "header_type": "cmd_t", "metadata": false}),
        json!({"name": "tag", "id": 2, "header_type": "tag_t", "metadata": false}),
        json!({"name": "out", "id": 3, "header_type": "out_t", "metadata": false}),
    ];
    let mut unions = Vec::new();
    let mut order = vec![json!("cmd"), json!("out")];
    for (s, base) in [("us", 0u64), ("vs", 3)] {
        for i in 0..3u64 {
            let hid = 4 + 2 * (base + i);
            for (k, (m, t)) in [("a", "a_t"), ("b", "b_t")].iter().enumerate() {
                let name = format!("{s}[{i}].{m}");
                headers.push(json!({"name": name, "id": hid + k as u64,
                                    "header_type": t, "metadata": false}));
                order.push(json!(name));
            }
            unions.push(
                json!({"name": format!("{s}[{i}]"), "id": base + i, "union_type": "u_t",
                               "header_ids": [hid, hid + 1]}),
            );
        }
    }
    let us_extract = |m: &str| json!({"op": "extract", "parameters": [{"type": "union_stack", "value": ["us", m]}]});
    let mut all = prims;
    let elem = || {
        un(
            "valid_union",
            e("dereference_union_stack", ush("us"), f("cmd", "idx")),
        )
    };
    all.extend([
        prim("add_header", vec![hdr("out")]),
        assign(f("out", "size"), un("size_stack", ush("us"))),
        assign(f("out", "last"), un("last_stack_index", ush("us"))),
        assign(f("out", "valid"), un("b2d", elem())),
        assign(
            f("out", "a_valid"),
            un("b2d", un("valid", member("us", f("cmd", "idx"), 0))),
        ),
        assign(f("standard_metadata", "egress_spec"), hx(1)),
    ]);
    json!({
        "header_types": [
            {"name": "standard_metadata", "id": 0, "fields": sm_fields()},
            {"name": "cmd_t", "id": 1, "fields": [["idx", 8, false]]},
            {"name": "tag_t", "id": 2, "fields": [["k", 8, false]]},
            {"name": "out_t", "id": 3, "fields": [["size", 8, false], ["last", 8, false],
                                                  ["valid", 8, false], ["a_valid", 8, false]]},
            {"name": "a_t", "id": 4, "fields": [["x", 8, false]]},
            {"name": "b_t", "id": 5, "fields": [["y", 16, false]]}
        ],
        "headers": headers,
        "header_union_types": [{"name": "u_t", "id": 0, "headers": [["a", "a_t"], ["b", "b_t"]]}],
        "header_unions": unions,
        "header_union_stacks": [
            {"name": "us", "id": 0, "union_type": "u_t", "size": 3, "header_union_ids": [0, 1, 2]},
            {"name": "vs", "id": 1, "union_type": "u_t", "size": 3, "header_union_ids": [3, 4, 5]}
        ],
        "parsers": [{"name": "parser", "id": 0, "init_state": "start", "parse_states": [
            state("start", vec![extract("cmd")], vec![], vec![dflt(Some("elem"))]),
            state("elem", vec![extract("tag")], vec![f("tag", "k")],
                  vec![tr("0x01", Some("pa")), tr("0x02", Some("pb")), dflt(None)]),
            state("pa", vec![us_extract("a")],
                  vec![json!({"type": "union_stack_field", "value": ["us", "a", "x"]})],
                  vec![tr("0xff", None), dflt(Some("elem"))]),
            state("pb", vec![us_extract("b")], vec![], vec![dflt(Some("elem"))])
        ]}],
        "deparsers": [{"name": "deparser", "id": 0, "order": order}],
        "actions": [{"name": "act", "id": 0, "runtime_data": [], "primitives": all}],
        "pipelines": one_action_pipelines("act")
    })
    .to_string()
}

fn ush(s: &str) -> Value {
    json!({"type": "header_union_stack", "value": s})
}

/// Member `m` (offset) of element `idx` of union stack `s`, a header.
fn member(s: &str, idx: Value, m: u64) -> Value {
    json!({"type": "expression", "value": {"op": "access_union_header",
        "left": e("dereference_union_stack", ush(s), idx), "right": m}})
}

/// Field 0 of member `m` of element `idx` of `s`.
fn member_field(s: &str, idx: Value, m: u64) -> Value {
    json!({"type": "expression", "value": {"op": "access_field",
        "left": member(s, idx, m), "right": 0}})
}

/// The frame out of port 1, the same compiled and interpreted.
fn run(prims: Vec<Value>, input: &[u8]) -> Vec<u8> {
    let prog = program(prims);
    let mut compiled = Switch::new(&prog, 2).unwrap_or_else(|e| panic!("{e}"));
    assert!(
        compiled.compiled_stages().contains(&"ingress"),
        "ingress runs compiled: {:?}",
        compiled.compiled_stages()
    );
    let mut reference = Switch::new(&prog, 2).unwrap();
    reference.set_compiled(false);
    let out = |sw: &mut Switch| {
        sw.inject(0, input, 0);
        let mut frames = sw.poll(0);
        assert_eq!(frames.len(), 1, "one frame out");
        frames.remove(0).data
    };
    let (c, i) = (out(&mut compiled), out(&mut reference));
    assert_eq!(c, i, "compiled and interpreted differ on {input:02x?}");
    c
}

/// out {size, last, valid, a_valid} for element cmd.idx.
fn out(size: u8, last: u8, valid: u8, a_valid: u8) -> [u8; 4] {
    [size, last, valid, a_valid]
}

#[test]
fn the_parser_extracts_each_element_into_the_member_its_tag_names() {
    // cmd idx 1; elements a(0x11), b(0x2233), end tag 0, payload 0xee.
    // us[0].a and us[1].b valid: size 2, last 1; element 1 valid, its a not.
    let got = run(vec![], &[1, 1, 0x11, 2, 0x22, 0x33, 0, 0xee]);
    let mut want = vec![1];
    want.extend(out(2, 1, 1, 0));
    want.extend([0x11, 0x22, 0x33, 0xee]);
    assert_eq!(got, want);
    // Element 2 was never extracted: invalid.
    let got = run(vec![], &[2, 1, 0x11, 0]);
    assert_eq!(got, [&[2][..], &out(1, 0, 0, 0), &[0x11]].concat());
}

#[test]
fn a_union_stack_field_key_reads_the_last_extracted_element() {
    // a(0xff) ends the stack at once: the key is us.last.a.x; the byte after
    // it is payload, not a tag.
    let got = run(vec![], &[0, 1, 0xff, 2, 0x22, 0x33]);
    assert_eq!(
        got,
        [&[0][..], &out(1, 0, 1, 1), &[0xff, 2, 0x22, 0x33]].concat()
    );
}

#[test]
fn a_fourth_element_is_stack_out_of_bounds() {
    // Three elements fit; the fourth extract fails the parser with
    // StackOutOfBounds (3), which v1model hands to ingress in parser_error.
    let prog = program(vec![assign(
        f("cmd", "idx"),
        f("standard_metadata", "parser_error"),
    )]);
    for compiled in [true, false] {
        let mut sw = Switch::new(&prog, 2).unwrap();
        sw.set_compiled(compiled);
        sw.inject(0, &[0, 1, 1, 1, 2, 1, 3, 1, 4, 0], 0);
        let frames = sw.poll(0);
        assert_eq!(frames.len(), 1);
        assert_eq!(frames[0].data[0], 3, "StackOutOfBounds");
        assert_eq!(frames[0].data[1], 3, "three elements extracted");
    }
}

#[test]
fn run_time_indices_read_and_write_members() {
    // us[cmd.idx].b.y = 0xbeef with idx 1 (b valid there): the deparsed
    // us[1].b carries it.
    let prims = vec![assign(member_field("us", f("cmd", "idx"), 1), hx(0xbeef))];
    let got = run(prims, &[1, 1, 0x11, 2, 0x22, 0x33, 0]);
    assert_eq!(
        got,
        [&[1][..], &out(2, 1, 1, 0), &[0x11, 0xbe, 0xef]].concat()
    );
}

#[test]
fn setting_a_member_valid_invalidates_the_others() {
    // add_header(us[idx].b) on element 0 (a valid): a becomes invalid and b
    // valid with zeroed fields.
    let prims = vec![prim("add_header", vec![member("us", f("cmd", "idx"), 1)])];
    let got = run(prims, &[0, 1, 0x11, 0]);
    assert_eq!(got, [&[0][..], &out(1, 0, 1, 0), &[0, 0]].concat());
}

#[test]
fn push_front_moves_elements_up_and_invalidates_the_first() {
    // [a 0x11, b 0x2233, -] push 1: [-, a 0x11, b 0x2233], next 3.
    let prims = vec![prim("push", vec![ush("us"), hx(1)])];
    let got = run(prims, &[0, 1, 0x11, 2, 0x22, 0x33, 0]);
    assert_eq!(
        got,
        [&[0][..], &out(3, 2, 0, 0), &[0x11, 0x22, 0x33]].concat()
    );
    // push 2 on two elements: [-, -, a 0x11]; the next index stays at most
    // the size (3).
    let prims = vec![prim("push", vec![ush("us"), hx(2)])];
    let got = run(prims, &[2, 1, 0x11, 2, 0x22, 0x33, 0]);
    assert_eq!(got, [&[2][..], &out(3, 2, 1, 1), &[0x11]].concat());
}

#[test]
fn pop_front_moves_elements_down_and_invalidates_the_last() {
    // [a 0x11, b 0x2233, a 0x44] pop 1: [b 0x2233, a 0x44, -], next 2.
    let prims = vec![prim("pop", vec![ush("us"), hx(1)])];
    let got = run(prims, &[1, 1, 0x11, 2, 0x22, 0x33, 1, 0x44, 0]);
    assert_eq!(
        got,
        [&[1][..], &out(2, 1, 1, 1), &[0x22, 0x33, 0x44]].concat()
    );
    // pop past the size: empty, last_stack_index is -1 (0xff in 8 bits).
    let prims = vec![prim("pop", vec![ush("us"), hx(5)])];
    let got = run(prims, &[0, 1, 0x11, 0]);
    assert_eq!(got, [&[0][..], &out(0, 0xff, 0, 0)].concat());
}

#[test]
fn assign_union_stack_copies_elements_and_next_index() {
    // vs = us; then us pops everything: vs keeps the elements (deparsed
    // after us), us is empty.
    let prims = vec![
        prim("assign_union_stack", vec![ush("vs"), ush("us")]),
        prim("pop", vec![ush("us"), hx(3)]),
    ];
    let got = run(prims, &[0, 1, 0x11, 2, 0x22, 0x33, 0]);
    assert_eq!(
        got,
        [&[0][..], &out(0, 0xff, 0, 0), &[0x11, 0x22, 0x33]].concat()
    );
    // And the other way: us = vs (empty) after parsing leaves us empty.
    let prims = vec![prim("assign_union_stack", vec![ush("us"), ush("vs")])];
    let got = run(prims, &[0, 1, 0x11, 0]);
    assert_eq!(got, [&[0][..], &out(0, 0xff, 0, 0)].concat());
}

#[test]
fn a_member_picked_at_run_time_compares_as_a_header() {
    // cmd.idx = (us[cmd.idx].a == us[0].a): BMv2's ==h, both valid and equal fields.
    // idx 0 compares us[0].a with itself (valid): 1; idx 1 picks us[1].a, invalid
    // (its b is valid): 0; idx 2 picks us[2].a, valid with the same x: 1.
    let eq = e("==", member("us", f("cmd", "idx"), 0), hdr("us[0].a"));
    let prims = vec![assign(f("cmd", "idx"), un("b2d", eq))];
    for (idx, want) in [(0u8, 1u8), (1, 0), (2, 1)] {
        let got = run(prims.clone(), &[idx, 1, 0x11, 2, 0x22, 0x33, 1, 0x11, 0]);
        assert_eq!(got[0], want, "idx {idx}");
    }
}

#[test]
fn bad_union_stacks_are_refused_with_their_path() {
    let good: Value = serde_json::from_str(&program(vec![])).unwrap();
    type Edit = Box<dyn Fn(&mut Value)>;
    let cases: Vec<(&str, Edit, &str)> = vec![
        (
            "unknown union id",
            Box::new(|v| v["header_union_stacks"][0]["header_union_ids"][1] = json!(42)),
            "unknown header union id 42",
        ),
        (
            "unknown union type",
            Box::new(|v| v["header_union_stacks"][0]["union_type"] = json!("zz")),
            "unknown header union type",
        ),
        (
            "empty",
            Box::new(|v| v["header_union_stacks"][0]["header_union_ids"] = json!([])),
            "at least one element",
        ),
        (
            "== on a whole element",
            Box::new(|v| {
                v["actions"][0]["primitives"][0] = assign(
                    f("cmd", "idx"),
                    un(
                        "b2d",
                        e(
                            "==",
                            e("dereference_union_stack", ush("us"), hx(0)),
                            e("dereference_union_stack", ush("us"), hx(1)),
                        ),
                    ),
                )
            }),
            "== on a header union stack element is not supported",
        ),
        (
            "unknown member",
            Box::new(|v| {
                v["parsers"][0]["parse_states"][2]["parser_ops"][0]["parameters"][0]["value"] =
                    json!(["us", "c"])
            }),
            "no member \"c\"",
        ),
        (
            "unknown union stack",
            Box::new(|v| {
                v["parsers"][0]["parse_states"][2]["parser_ops"][0]["parameters"][0]["value"] =
                    json!(["ws", "a"])
            }),
            "unknown header union stack \"ws\"",
        ),
    ];
    for (what, edit, msg) in cases {
        let mut v = good.clone();
        edit(&mut v);
        let err = Switch::new(&v.to_string(), 2)
            .err()
            .unwrap_or_else(|| panic!("{what}: loaded"));
        assert!(err.to_string().contains(msg), "{what}: {err}");
    }
}
