//! The compiled controls against the interpreter: the same packets and
//! control operations through a compiled and an interpreted switch give the
//! same frames, digests, counters, registers and statistics.
mod common;
mod inline;
use common::*;
use inline::*;
use ratelab_engine::{MatchValue, Switch};

/// A compiled switch and an interpreted one, driven identically.
struct Pair {
    compiled: Switch,
    reference: Switch,
}

impl Pair {
    fn new(make: impl Fn() -> Switch) -> Pair {
        let compiled = make();
        assert!(
            compiled.compiled(),
            "the controls did not compile: {:?}",
            compiled.compile_error()
        );
        let mut reference = make();
        assert!(!reference.set_compiled(false));
        Pair {
            compiled,
            reference,
        }
    }

    fn inject(&mut self, port: u32, data: &[u8], t: u64) {
        self.compiled.inject(port, data, t);
        self.reference.inject(port, data, t);
    }

    /// Polls both and checks that everything observable agrees.
    fn check(&mut self, t: u64, registers: &[(&str, usize)], counters: &[(&str, usize)]) -> usize {
        let got = self.compiled.poll(t);
        let want = self.reference.poll(t);
        if let Some(i) = (0..got.len().max(want.len())).find(|&i| got.get(i) != want.get(i)) {
            panic!(
                "frame {i} of those due at {t}: compiled {:?}, interpreted {:?}",
                got.get(i),
                want.get(i)
            );
        }
        assert_eq!(self.compiled.take_digests(), self.reference.take_digests());
        assert_eq!(self.compiled.stats(), self.reference.stats());
        for &(name, size) in registers {
            for i in 0..size {
                assert_eq!(
                    self.compiled.register_read(name, i).unwrap(),
                    self.reference.register_read(name, i).unwrap(),
                    "{name}[{i}]"
                );
            }
        }
        for &(name, size) in counters {
            for i in 0..size {
                assert_eq!(
                    self.compiled.counter_read(name, i).unwrap(),
                    self.reference.counter_read(name, i).unwrap(),
                    "{name}[{i}]"
                );
            }
        }
        got.len()
    }
}

/// Valid packets of every kind the fixtures parse, then mutated and cut ones.
fn random_packets(rng: &mut Lcg, seeds: &[Vec<u8>], n: usize) -> Vec<(u32, Vec<u8>)> {
    (0..n)
        .map(|_| {
            let mut p = seeds[rng.next() as usize % seeds.len()].clone();
            if rng.next().is_multiple_of(3) {
                for _ in 0..=rng.next() % 4 {
                    let i = rng.next() as usize % p.len();
                    p[i] = rng.next() as u8;
                }
            }
            if rng.next().is_multiple_of(5) {
                p.truncate(rng.next() as usize % (p.len() + 1));
            }
            ((rng.next() % 4) as u32, p)
        })
        .collect()
}

#[test]
fn the_fixtures_compile() {
    let sw = switch("basic.json");
    // basic.json's egress is empty.
    assert_eq!(
        sw.compiled_stages(),
        [
            "parser",
            "verify_checksum",
            "ingress",
            "update_checksum",
            "deparser"
        ],
        "{:?}",
        sw.compile_error()
    );
    let sw = switch("features.json");
    // No checksums, and a value set in its parser.
    assert_eq!(sw.compiled_stages(), ["ingress", "egress", "deparser"]);
    // Stacks, lookahead and advance: that parser is interpreted.
    let sw = Switch::new(&parser_program(), 1).unwrap();
    assert_eq!(sw.compiled_stages(), ["ingress", "deparser"]);
    assert_eq!(
        Switch::new(&compilable_parser_program(), 1)
            .unwrap()
            .compiled_stages(),
        ["parser", "ingress", "deparser"]
    );
    let mut sw = switch("basic.json");
    sw.set_compiled(false);
    assert!(sw.compiled_stages().is_empty());
}

/// The parser test program without the states only the interpreter runs
/// (header stack, lookahead, advance): verify, no match, masks and
/// variable-length fields, compiled.
fn compilable_parser_program() -> String {
    let gone = ["stk", "la", "la2", "adv"];
    let mut j: serde_json::Value = serde_json::from_str(&parser_program()).unwrap();
    let states = j["parsers"][0]["parse_states"].as_array_mut().unwrap();
    states.retain(|s| !gone.contains(&s["name"].as_str().unwrap()));
    for (i, s) in states.iter_mut().enumerate() {
        s["id"] = json!(i);
        for t in s["transitions"].as_array_mut().unwrap() {
            if gone.contains(&t["next_state"].as_str().unwrap_or("")) {
                t["next_state"] = serde_json::Value::Null;
            }
        }
    }
    j.to_string()
}

#[test]
fn basic_forwarding_agrees() {
    let mut rng = Lcg(3);
    let mut pair = Pair::new(basic_switch);
    let seeds: Vec<Vec<u8>> = (0..8u8)
        .map(|i| ipv4_packet([10, i, 0, 1], i % 3, &[i; 20]))
        .chain([ipv4_packet([11, 0, 0, 1], 64, b"no route")])
        .collect();
    let mut t = 0;
    let mut frames = 0;
    for (port, p) in random_packets(&mut rng, &seeds, 3000) {
        pair.inject(port, &p, t);
        t += rng.next() % 3;
        if rng.next().is_multiple_of(50) {
            frames += pair.check(t, &[], &[]);
        }
    }
    frames += pair.check(t + 1_000_000, &[], &[]);
    assert!(frames > 1000, "{frames} frames");
}

#[test]
fn every_feature_agrees() {
    let mut rng = Lcg(11);
    let mut pair = Pair::new(features_switch);
    let seeds: Vec<Vec<u8>> = (0..16u8)
        .map(|op| cmd_packet(op, (op as u16) % 3, 0x1ff))
        .chain([ipv4_packet([10, 0, 0, 1], 64, b"abcdefgh")])
        .collect();
    let (registers, counters) = ([("MyIngress.reg", 16)], [("MyIngress.ctr", 8)]);
    let mut t = 0;
    let mut frames = 0;
    for (i, (port, p)) in random_packets(&mut rng, &seeds, 4000)
        .into_iter()
        .enumerate()
    {
        pair.inject(port, &p, t);
        t += rng.next() % 40;
        if i % 500 == 250 {
            // The control plane changes something between packets.
            let key = vec![MatchValue::Exact(rng.next() as u128 % 16)];
            for sw in [&mut pair.compiled, &mut pair.reference] {
                let _ = sw.table_add("MyIngress.ctl", key.clone(), "MyIngress.fwd", &[7], 0);
            }
        }
        if rng.next().is_multiple_of(40) {
            frames += pair.check(t, &registers, &counters);
        }
    }
    frames += pair.check(t + 10_000_000, &registers, &counters);
    assert!(frames > 1000, "{frames} frames");
}

/// The compilable parser program with its variable-length header emitted
/// twice: the deparser must make room for its bytes twice.
fn twice_deparsed_varbit_program() -> String {
    let mut j: serde_json::Value = serde_json::from_str(&compilable_parser_program()).unwrap();
    j["deparsers"][0]["order"] = json!(["out", "sel", "e1", "var", "var"]);
    j.to_string()
}

#[test]
fn a_variable_length_header_deparsed_twice() {
    let mut pair = Pair::new(|| Switch::new(&twice_deparsed_varbit_program(), 3).unwrap());
    assert!(pair.compiled.compiled_stages().contains(&"deparser"));
    for n in 0..=8u8 {
        // state vl: e1 = n, then var: k and n bytes, nothing after them.
        let mut p = vec![7, n, 0xab];
        p.extend((0..n).map(|i| 0xc0 | i));
        pair.inject(0, &p, 0);
    }
    assert_eq!(pair.check(0, &[], &[]), 9);
}

/// A parser of more states than the interpreter runs for one packet (it
/// stops with ParserInvalidArgument): left to the interpreter.
#[test]
fn a_parser_longer_than_the_state_limit_is_interpreted() {
    let mut j: serde_json::Value = serde_json::from_str(&action_program(vec![])).unwrap();
    let n = 4100;
    let mut states: Vec<serde_json::Value> = (0..n)
        .map(|i| {
            json!({"name": format!("s{i}"), "id": i, "parser_ops": [], "transition_key": [],
                "transitions": [{"type": "default", "value": null, "mask": null,
                                 "next_state": format!("s{}", i + 1)}]})
        })
        .collect();
    states.push(json!({"name": format!("s{n}"), "id": n,
        "parser_ops": [{"op": "extract", "parameters": [{"type": "regular", "value": "h"}]}],
        "transition_key": [],
        "transitions": [{"type": "default", "value": null, "mask": null, "next_state": null}]}));
    j["parsers"][0]["parse_states"] = json!(states);
    j["parsers"][0]["init_state"] = json!("s0");
    let json = j.to_string();
    let mut pair = Pair::new(|| Switch::new(&json, 1).unwrap());
    assert!(!pair.compiled.compiled_stages().contains(&"parser"));
    pair.inject(0, &h_bytes(1, 2, 3, 4, 5, 6, 7), 0);
    let frames = pair.compiled.poll(0);
    assert_eq!(frames, pair.reference.poll(0));
    // The header was never extracted: the frame is the packet as it came.
    assert_eq!(frames[0].data, h_bytes(1, 2, 3, 4, 5, 6, 7));
}

#[test]
fn parser_programs_agree() {
    for json in [
        parser_program(),
        compilable_parser_program(),
        twice_deparsed_varbit_program(),
    ] {
        let mut rng = Lcg(5);
        let mut pair = Pair::new(|| Switch::new(&json, 3).unwrap());
        for i in 0..3000 {
            let len = rng.next() as usize % 24;
            let mut p: Vec<u8> = (0..len).map(|_| rng.next() as u8).collect();
            // Every state, and the masked transition (0x5_).
            if let Some(b) = p.first_mut() {
                *b = [0, 1, 2, 3, 4, 5, 6, 7, 0x53, 0x5f][i % 10];
            }
            // Lengths around the variable-length field's limit (9 bytes).
            if let Some(b) = p.get_mut(1) {
                *b = (rng.next() % 12) as u8;
            }
            pair.inject(0, &p, 0);
        }
        assert_eq!(pair.check(0, &[], &[]), 3000);
    }
}

/// Every operator and operand shape the code generator handles itself, and
/// the ones it hands back (division, modulo), on random field values. Each
/// expression's full 128-bit value is folded into `w.x` (a header made
/// valid first, so that it is emitted).
#[test]
fn expressions_agree_on_random_values() {
    let ops = [
        "+", "-", "*", "/", "%", "<<", ">>", "&", "|", "^", "==", "!=", "<", ">", "<=", ">=",
        "and", "or",
    ];
    let operands = [
        f("h", "a"),
        f("h", "c"),
        f("h", "d"),
        f("h", "s"),
        f("h", "s"),
        hx(0),
        hx(3),
        hx(-2),
        hx(-200),
        hx(64),
        hx(126),
        hx(127),
        hx(128),
        hx(200),
        hx(0x7fff_ffff_ffff_ffff_ffff),
        hx(-0x7fff_ffff_ffff_ffff_ffff),
        hx((1 << 126) + 5),
        f("w", "x"),
    ];
    let mut rng = Lcg(21);
    let mut prims = vec![prim("add_header", vec![hdr("w")])];
    for i in 0..400 {
        let op = ops[i % ops.len()];
        let pick = |rng: &mut Lcg| operands[rng.next() as usize % operands.len()].clone();
        let l = pick(&mut rng);
        let r = pick(&mut rng);
        let mut ex = e(op, l, r);
        match rng.next() % 8 {
            0 => ex = un("~", ex),
            1 => ex = un("not", un("d2b", ex)),
            2 => {
                let cond = un("d2b", e(">", f("h", "a"), hx(100)));
                let other = pick(&mut rng);
                ex = json!({"type": "expression",
                    "value": {"op": "?", "left": ex, "right": other, "cond": cond}});
            }
            3 => ex = e(">>", ex, pick(&mut rng)),
            4 => ex = un("-", ex),
            _ => {}
        }
        prims.push(assign(f("w", "x"), e("^", f("w", "x"), ex)));
    }
    prims.push(assign(f("h", "a"), un("d2b", f("h", "$valid$"))));
    let json = action_program(prims);
    let mut pair = Pair::new(|| Switch::new(&json, 1).unwrap());
    for _ in 0..2000 {
        let p = h_bytes(
            rng.next() as u8,
            rng.next() as u16,
            rng.next() as u32,
            rng.next(),
            rng.next() as i8,
            rng.next() as u8 & 0xf,
            rng.next() as u8 & 0xf,
        );
        pair.inject(0, &p, 0);
    }
    let frames = pair.compiled.poll(0);
    assert_eq!(frames.len(), 2000);
    assert!(
        frames.iter().all(|f| f.data.len() == 17 + 16),
        "w is emitted"
    );
    assert_eq!(frames, pair.reference.poll(0));
}

/// Every operator on every pair of edge values (signs, shift amounts around
/// 128, 127-bit magnitudes), as constants and as fields.
#[test]
fn operators_agree_on_edge_values() {
    let ops = [
        "+", "-", "*", "/", "%", "<<", ">>", "&", "|", "^", "==", "!=", "<", ">", "<=", ">=",
        "and", "or",
    ];
    let edges = [
        hx(0),
        hx(1),
        hx(-1),
        hx(127),
        hx(128),
        hx(-129),
        hx((1 << 126) + 5),
        hx(-(1 << 126) - 3),
        f("h", "s"),
        f("h", "d"),
    ];
    let mut prims = vec![prim("add_header", vec![hdr("w")])];
    for op in ops {
        for l in &edges {
            for r in &edges {
                let x = e("^", f("w", "x"), e(op, l.clone(), r.clone()));
                prims.push(assign(f("w", "x"), e("*", x, hx(3))));
            }
        }
    }
    let json = action_program(prims);
    let mut pair = Pair::new(|| Switch::new(&json, 1).unwrap());
    for s in [0i8, 1, -1, 127, -128] {
        pair.inject(0, &h_bytes(1, 2, 3, u64::MAX - s as u64, s, 0, 0), 0);
    }
    assert_eq!(pair.check(0, &[], &[]), 5);
}

#[test]
fn reload_keeps_the_choice_of_compiled_or_interpreted() {
    let mut sw = features_switch();
    assert!(sw.compiled());
    assert!(!sw.set_compiled(false));
    assert!(!sw.compiled());
    sw.reload(&fixture("features.json")).unwrap();
    assert!(!sw.compiled(), "reload keeps the interpreter once chosen");
    assert!(sw.set_compiled(true));
    sw.reload(&fixture("features.json")).unwrap();
    assert!(sw.compiled());
}

use serde_json::json;
