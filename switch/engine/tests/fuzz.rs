//! Random and truncated packets and random control operations never panic,
//! on every fixture and path. The random parts are proptest properties
//! (`PROPTEST_CASES` cases each, 16 by default); a failure is shrunk to the
//! smallest case and kept in proptest-regressions/.
mod common;
mod inline;
use common::*;
use proptest::prelude::*;
use proptest::sample::Index;
use ratelab_engine::{MatchValue, Switch};

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(16)
}

/// Valid packets of every kind the fixtures parse.
fn seeds() -> Vec<Vec<u8>> {
    let mut v = vec![ipv4_packet([10, 0, 0, 1], 64, b"abcdefgh")];
    for op in 0..16u8 {
        v.push(cmd_packet(op, (op as u16) % 3, 0x1ff));
    }
    v
}

/// A seed with up to four bytes changed, cut somewhere, on any port; or
/// random bytes.
fn packet() -> impl Strategy<Value = (u32, Vec<u8>)> {
    let n = seeds().len();
    prop_oneof![
        3 => (0u32..512, 0..n, prop::collection::vec((any::<Index>(), any::<u8>()), 0..5), any::<Index>())
            .prop_map(|(port, seed, edits, cut)| {
                let mut p = seeds()[seed].clone();
                for (i, b) in edits {
                    let i = i.index(p.len());
                    p[i] = b;
                }
                p.truncate(cut.index(p.len() + 1));
                (port, p)
            }),
        1 => (0u32..4, prop::collection::vec(any::<u8>(), 0..100)),
    ]
}

#[test]
fn every_truncation_never_panics() {
    let mut frames = 0usize;
    for mut sw in [basic_switch(), features_switch()] {
        let mut t = 0u64;
        for s in &seeds() {
            for cut in 0..=s.len() {
                sw.inject((cut % 4) as u32, &s[..cut], t);
                t += 7;
            }
        }
        frames += sw.poll(t + 10_000_000).len();
        assert_eq!(sw.next_event_time(), None);
        let _ = sw.take_digests();
    }
    assert!(frames > 0);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    #[test]
    fn mutated_and_random_packets_never_panic(
        packets in prop::collection::vec((packet(), 0u64..50), 1..300),
    ) {
        for mut sw in [basic_switch(), features_switch()] {
            let mut t = 0u64;
            for ((port, p), dt) in &packets {
                sw.inject(*port, p, t);
                t += dt;
            }
            let _ = sw.poll(t + 10_000_000);
            prop_assert_eq!(sw.next_event_time(), None);
            let _ = sw.take_digests();
        }
    }

    /// The parser test program (stacks, lookahead, varbit, verify, advance)
    /// and the action program take any bytes: one frame out per packet in.
    #[test]
    fn parser_program_takes_any_bytes(
        packets in prop::collection::vec((0u8..8, prop::collection::vec(any::<u8>(), 0..24)), 1..300),
    ) {
        let mut sw = Switch::new(&inline::parser_program(), 3).unwrap();
        for (first, p) in &packets {
            let mut p = p.clone();
            if let Some(b) = p.first_mut() {
                *b = *first; // steer into every path
            }
            sw.inject(0, &p, 0);
        }
        prop_assert_eq!(sw.poll(0).len(), packets.len());
        let mut sw = Switch::new(&inline::action_program(vec![]), 3).unwrap();
        for (_, p) in &packets {
            sw.inject(0, p, 0);
        }
        prop_assert_eq!(sw.poll(0).len(), packets.len());
    }

    /// Random control operations (valid and invalid) never panic, and the
    /// table contents stay consistent with what was accepted.
    #[test]
    fn random_control_operations(ops in prop::collection::vec(control_op(), 1..400)) {
        let mut sw = features_switch();
        let tables = ["MyIngress.ctl", "MyIngress.acl", "tbl_resubmit", "nope"];
        let actions = [
            "MyIngress.fwd",
            "MyIngress.acl_permit",
            "MyIngress.acl_deny",
            "NoAction",
            "bad",
        ];
        let mut live: Vec<(usize, u32)> = Vec::new();
        for (t, name) in tables.iter().enumerate().take(2) {
            live.extend(sw.table_entries(name).unwrap().iter().map(|e| (t, e.handle)));
        }
        for op in ops {
            let (t, a) = (op.table % tables.len(), actions[op.action % actions.len()]);
            let r = |i: usize| op.values[i % op.values.len()];
            let key = match op.key_kind {
                0 => vec![MatchValue::Exact(r(0))],
                1 => vec![MatchValue::Ternary(r(0), r(1)), MatchValue::Range(r(2), r(3))],
                2 => vec![MatchValue::Lpm(r(0), (r(1) % 40) as u32)],
                _ => vec![],
            };
            let params: Vec<u128> = op.values[..op.nparams].to_vec();
            match op.kind {
                0 | 1 => {
                    if let Ok(h) = sw.table_add(tables[t], key, a, &params, op.priority) {
                        live.push((t, h));
                    }
                }
                2 if !live.is_empty() => {
                    let (t, h) = live.swap_remove(op.pick.index(live.len()));
                    sw.table_delete(tables[t], h).unwrap();
                }
                3 if !live.is_empty() => {
                    let (t, h) = live[op.pick.index(live.len())];
                    let _ = sw.table_modify(tables[t], h, a, &params);
                }
                4 => {
                    let _ = sw.table_set_default(tables[t], a, &params);
                    let _ = sw.register_write("MyIngress.reg", r(0) as usize % 20, r(1));
                    let _ = sw.counter_write("MyIngress.ctr", r(2) as usize % 10, 1, 2);
                    let _ = sw.value_set_add("MyParser.pvs", r(3));
                }
                _ => sw.inject(1, &cmd_packet(op.action as u8 % 16, r(0) as u16, r(1) as u32), 0),
            }
        }
        for (t, name) in tables.iter().enumerate().take(2) {
            let want = live.iter().filter(|(x, _)| *x == t).count();
            prop_assert_eq!(sw.table_entries(name).unwrap().len(), want, "{}", name);
        }
        let _ = sw.poll(u64::MAX / 2);
    }
}

#[derive(Debug, Clone)]
struct ControlOp {
    kind: u8,
    table: usize,
    action: usize,
    key_kind: u8,
    values: [u128; 4],
    nparams: usize,
    priority: i32,
    pick: Index,
}

fn control_op() -> impl Strategy<Value = ControlOp> {
    (
        0u8..6,
        0usize..4,
        0usize..5,
        0u8..4,
        [0u128..70_000, 0u128..70_000, 0u128..70_000, 0u128..70_000],
        0usize..3,
        0i32..10,
        any::<Index>(),
    )
        .prop_map(
            |(kind, table, action, key_kind, values, nparams, priority, pick)| ControlOp {
                kind,
                table,
                action,
                key_kind,
                values,
                nparams,
                priority,
                pick,
            },
        )
}
