//! Random and truncated packets never panic, on every fixture and path.
mod common;
mod inline;
use common::*;
use ratelab_engine::{MatchValue, Switch};

#[test]
fn truncations_and_random_bytes_never_panic() {
    let mut rng = Lcg(99);
    let mut switches = vec![basic_switch(), features_switch()];
    let seeds: Vec<Vec<u8>> = {
        let mut v = vec![ipv4_packet([10, 0, 0, 1], 64, b"abcdefgh")];
        for op in 0..16u8 {
            v.push(cmd_packet(op, (op as u16) % 3, 0x1ff));
        }
        v
    };
    let mut t = 0u64;
    let mut frames = 0usize;
    for sw in &mut switches {
        for s in &seeds {
            for cut in 0..=s.len() {
                sw.inject((cut % 4) as u32, &s[..cut], t);
                t += 7;
            }
            for _ in 0..200 {
                let mut p = s.clone();
                let n = rng.next() as usize % 4;
                for _ in 0..=n {
                    let i = rng.next() as usize % p.len();
                    p[i] = rng.next() as u8;
                }
                let cut = rng.next() as usize % (p.len() + 1);
                sw.inject(rng.next() as u32 % 512, &p[..cut], t);
                t += rng.next() % 50;
            }
        }
        for _ in 0..500 {
            let len = rng.next() as usize % 100;
            let p: Vec<u8> = (0..len).map(|_| rng.next() as u8).collect();
            sw.inject(1, &p, t);
        }
        frames += sw.poll(t + 10_000_000).len();
        assert_eq!(sw.next_event_time(), None);
        let _ = sw.take_digests();
    }
    assert!(frames > 0);
}

#[test]
fn parser_program_random_packets() {
    // the parser test program: stacks, lookahead, varbit, verify, advance
    let mut rng = Lcg(5);
    let mut sw = Switch::new(&inline::parser_program(), 3).unwrap();
    for i in 0..3000 {
        let len = rng.next() as usize % 24;
        let mut p: Vec<u8> = (0..len).map(|_| rng.next() as u8).collect();
        if let Some(b) = p.first_mut() {
            *b = (i % 8) as u8; // steer into every path
        }
        sw.inject(0, &p, 0);
    }
    assert_eq!(sw.poll(0).len(), 3000);
    let mut sw = Switch::new(&inline::action_program(vec![]), 3).unwrap();
    for _ in 0..500 {
        let len = rng.next() as usize % 40;
        let p: Vec<u8> = (0..len).map(|_| rng.next() as u8).collect();
        sw.inject(0, &p, 0);
    }
    assert_eq!(sw.poll(0).len(), 500);
}

/// Random control operations (valid and invalid) never panic, and the
/// table contents stay consistent with what was accepted.
#[test]
fn random_control_operations() {
    let mut rng = Lcg(17);
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
        live.extend(
            sw.table_entries(name)
                .unwrap()
                .iter()
                .map(|e| (t, e.handle)),
        );
    }
    for _ in 0..3000 {
        let t = rng.next() as usize % tables.len();
        let a = actions[rng.next() as usize % actions.len()];
        let r = |rng: &mut Lcg| rng.next() as u128 % 70_000;
        let key = match rng.next() % 4 {
            0 => vec![MatchValue::Exact(r(&mut rng))],
            1 => vec![
                MatchValue::Ternary(r(&mut rng), r(&mut rng)),
                MatchValue::Range(r(&mut rng), r(&mut rng)),
            ],
            2 => vec![MatchValue::Lpm(r(&mut rng), rng.next() as u32 % 40)],
            _ => vec![],
        };
        let params: Vec<u128> = (0..rng.next() % 3).map(|_| r(&mut rng)).collect();
        match rng.next() % 6 {
            0 | 1 => {
                if let Ok(h) = sw.table_add(tables[t], key, a, &params, rng.next() as i32 % 10) {
                    live.push((t, h));
                }
            }
            2 if !live.is_empty() => {
                let i = rng.next() as usize % live.len();
                let (t, h) = live.swap_remove(i);
                sw.table_delete(tables[t], h).unwrap();
            }
            3 if !live.is_empty() => {
                let (t, h) = live[rng.next() as usize % live.len()];
                let _ = sw.table_modify(tables[t], h, a, &params);
            }
            4 => {
                let _ = sw.table_set_default(tables[t], a, &params);
                let _ = sw.register_write("MyIngress.reg", r(&mut rng) as usize % 20, r(&mut rng));
                let _ = sw.counter_write("MyIngress.ctr", r(&mut rng) as usize % 10, 1, 2);
                let _ = sw.value_set_add("MyParser.pvs", r(&mut rng));
            }
            _ => {
                let op = rng.next() as u8 % 16;
                sw.inject(
                    1,
                    &cmd_packet(op, r(&mut rng) as u16, r(&mut rng) as u32),
                    0,
                );
            }
        }
    }
    for (t, name) in tables.iter().enumerate().take(2) {
        let want = live.iter().filter(|(x, _)| *x == t).count();
        assert_eq!(sw.table_entries(name).unwrap().len(), want, "{name}");
    }
    let _ = sw.poll(u64::MAX / 2);
}
