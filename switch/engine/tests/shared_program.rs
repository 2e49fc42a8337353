//! One loaded program shared by several switches (`LoadedProgram`,
//! `Switch::with_program`): each behaves as a switch built by `Switch::new`,
//! and their tables, queues and statistics stay their own.
mod common;
use common::*;
use ratelab_engine::{LoadedProgram, MatchValue, Switch};

fn route(sw: &mut Switch, prefix: u128, port: u128) {
    sw.table_add(
        "MyIngress.ipv4_lpm",
        vec![MatchValue::Lpm(prefix, 24)],
        "MyIngress.ipv4_forward",
        &[0x0000_0000_0222, port],
        0,
    )
    .unwrap();
}

#[test]
fn switches_of_one_program_forward_like_new_ones_and_keep_their_own_tables() {
    let program = LoadedProgram::new(&fixture("basic.json")).unwrap();
    assert!(program.compiled());
    let mut a = Switch::with_program(&program, 1).unwrap();
    let mut b = Switch::with_program(&program, 2).unwrap();
    let mut fresh = Switch::new(&fixture("basic.json"), 1).unwrap();
    assert!(a.compiled() && b.compiled());
    route(&mut a, 0x0a000200, 2);
    route(&mut fresh, 0x0a000200, 2);
    route(&mut b, 0x0a000300, 3);
    let to_2 = ipv4_packet([10, 0, 2, 7], 64, b"hello");
    let to_3 = ipv4_packet([10, 0, 3, 7], 64, b"hello");
    for sw in [&mut a, &mut b, &mut fresh] {
        sw.inject(1, &to_2, 10);
        sw.inject(1, &to_3, 10);
    }
    let from_a = a.poll(10);
    assert_eq!(
        from_a,
        fresh.poll(10),
        "a shared program forwards as a fresh one"
    );
    assert_eq!(from_a.len(), 1);
    assert_eq!(from_a[0].port, 2);
    let from_b = b.poll(10);
    assert_eq!(from_b.len(), 1, "b has only its own route");
    assert_eq!(from_b[0].port, 3);
    assert_eq!(a.stats().ingress_drops, 1);
    assert_eq!(b.stats().ingress_drops, 1);
    assert_eq!(a.table_entries("MyIngress.ipv4_lpm").unwrap().len(), 1);
}

#[test]
fn switches_of_one_program_run_on_several_threads() {
    let program = LoadedProgram::new(&fixture("basic.json")).unwrap();
    let workers: Vec<_> = (0..4u128)
        .map(|i| {
            let mut sw = Switch::with_program(&program, 0).unwrap();
            route(&mut sw, 0x0a000200, i + 1);
            std::thread::spawn(move || {
                let mut ports = Vec::new();
                for t in 0..2_000 {
                    sw.inject(1, &ipv4_packet([10, 0, 2, 7], 64, b"x"), t);
                    ports.extend(sw.poll(t).iter().map(|f| f.port));
                }
                ports
            })
        })
        .collect();
    for (i, w) in workers.into_iter().enumerate() {
        let ports = w.join().unwrap();
        assert_eq!(ports.len(), 2_000);
        assert!(ports.iter().all(|&p| p == i as u32 + 1), "worker {i}");
    }
}

#[test]
fn a_bad_program_fails_to_load_as_switch_new_does() {
    let err = LoadedProgram::new("{\"headers\": 5}").err().unwrap();
    let same = Switch::new("{\"headers\": 5}", 0).err().unwrap();
    assert_eq!(err.to_string(), same.to_string());
}
