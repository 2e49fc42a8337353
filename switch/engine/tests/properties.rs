//! Property tests over the project's program corpus: the two fixtures, the
//! parser test program, and every P4 test program of the compiler
//! (compiler/tests/programs) and router.p4 as ratelab-p4c compiles them.
//! For each program, arbitrary frames and table operations go through a
//! compiled switch and an interpreted one: neither panics, and frames,
//! digests, statistics, counters, registers and the result of every control
//! operation agree.
//!
//! `PROPTEST_CASES` sets the cases per program (default 2, a few seconds in
//! all; `make fuzz` runs many more). A failure names the program and the
//! smallest sequence of operations that shows it.
mod common;
mod inline;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestError, TestRunner};
use ratelab_engine::{CloneSession, MatchKind, MatchValue, Replica, Switch, MAX_DESCENDANTS};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// One step of a case. Indexes and values are reduced to what the program
/// has when the step runs, so one strategy serves every program.
#[derive(Debug, Clone)]
enum Op {
    Packet {
        port: u32,
        frame: Vec<u8>,
        dt: u64,
    },
    Entry {
        table: usize,
        action: usize,
        key: Vec<(u128, u128)>,
        params: Vec<u128>,
        priority: i32,
    },
    Default {
        table: usize,
        action: usize,
        params: Vec<u128>,
    },
    Delete {
        table: usize,
        nth: usize,
    },
    /// A multicast group (`clone` false) or clone session of that id.
    Replicas {
        id: u32,
        clone: bool,
        replicas: Vec<(u32, u32)>,
        truncate: Option<usize>,
    },
    Register {
        nth: usize,
        index: usize,
        value: u128,
    },
    ValueSet {
        nth: usize,
        value: u128,
    },
    Check {
        dt: u64,
    },
}

/// EtherTypes the corpus parses (IPv4, IPv6, ARP, VLAN, the tutorials' own).
const ETHERTYPES: [u16; 9] = [
    0x0800, 0x86dd, 0x0806, 0x8100, 0x1212, 0x1234, 0x88b5, 0x9000, 0x0801,
];

/// Ethernet, then an IPv4 header whose version, length and protocol (one
/// the corpus parses) are right and whose other fields are arbitrary, then
/// arbitrary bytes.
fn structured_frame() -> impl Strategy<Value = Vec<u8>> {
    (
        any::<[u8; 12]>(),
        prop::sample::select(&ETHERTYPES[..]),
        any::<[u8; 20]>(),
        prop::sample::select(&[1u8, 6, 17, 0xfd, 0x92][..]),
        prop::collection::vec(any::<u8>(), 0..48),
    )
        .prop_map(|(macs, ethertype, mut ip, proto, rest)| {
            let mut p = macs.to_vec();
            p.extend_from_slice(&ethertype.to_be_bytes());
            ip[0] = 0x45;
            ip[9] = proto;
            // Destinations the tutorials' and router's examples route.
            if ip[16] & 1 == 0 {
                let dst = [10, 0, ip[18] & 3, ip[19] & 3];
                ip[16..20].copy_from_slice(&dst);
            }
            let total = (20 + rest.len()) as u16;
            ip[2..4].copy_from_slice(&total.to_be_bytes());
            p.extend_from_slice(&ip);
            p.extend_from_slice(&rest);
            p
        })
}

fn frame() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        4 => structured_frame(),
        // A structured frame with a few bytes changed and cut somewhere.
        2 => (structured_frame(), prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..4), any::<prop::sample::Index>())
            .prop_map(|(mut p, edits, cut)| {
                for (i, b) in edits {
                    let i = i.index(p.len());
                    p[i] = b;
                }
                p.truncate(cut.index(p.len() + 1));
                p
            }),
        1 => prop::collection::vec(any::<u8>(), 0..120),
    ]
}

/// Key and parameter values: small ones (they hit), the addresses the
/// frames carry, and arbitrary ones.
fn value() -> impl Strategy<Value = u128> {
    prop_oneof![
        0u128..4,
        (0u128..4, 0u128..4).prop_map(|(a, b)| 0x0a00_0000 | a << 8 | b),
        any::<u128>(),
    ]
}

fn op() -> impl Strategy<Value = Op> {
    let idx = || 0usize..64;
    prop_oneof![
        8 => (0u32..6, frame(), 0u64..200).prop_map(|(port, frame, dt)| Op::Packet { port, frame, dt }),
        3 => (idx(), idx(), prop::collection::vec((value(), value()), 0..5), prop::collection::vec(value(), 0..5), -2i32..8)
            .prop_map(|(table, action, key, params, priority)| Op::Entry { table, action, key, params, priority }),
        1 => (idx(), idx(), prop::collection::vec(value(), 0..5))
            .prop_map(|(table, action, params)| Op::Default { table, action, params }),
        1 => (idx(), idx()).prop_map(|(table, nth)| Op::Delete { table, nth }),
        1 => (0u32..8, any::<bool>(), prop::collection::vec((0u32..8, 0u32..4), 0..4), prop::option::of(0usize..80))
            .prop_map(|(id, clone, replicas, truncate)| Op::Replicas { id, clone, replicas, truncate }),
        1 => (idx(), 0usize..2048, value()).prop_map(|(nth, index, value)| Op::Register { nth, index, value }),
        1 => (idx(), value()).prop_map(|(nth, value)| Op::ValueSet { nth, value }),
        1 => (0u64..100_000).prop_map(|dt| Op::Check { dt }),
    ]
}

fn mask(width: u32) -> u128 {
    if width >= 128 {
        u128::MAX
    } else {
        (1u128 << width) - 1
    }
}

/// A compiled switch and an interpreted one, driven identically.
struct Pair {
    compiled: Switch,
    reference: Switch,
    tables: Vec<String>,
    now: u64,
}

impl Pair {
    fn new(json: &str) -> Pair {
        let compiled = Switch::new(json, 7).unwrap();
        let mut reference = Switch::new(json, 7).unwrap();
        reference.set_compiled(false);
        let mut tables = compiled.table_names();
        tables.sort();
        Pair {
            compiled,
            reference,
            tables,
            now: 0,
        }
    }

    fn table(&self, i: usize) -> Option<ratelab_engine::TableInfo> {
        if self.tables.is_empty() {
            return None;
        }
        let t = self
            .compiled
            .table_info(&self.tables[i % self.tables.len()])
            .unwrap();
        (!t.const_entries && t.action_profile.is_none() && !t.actions.is_empty()).then_some(t)
    }

    fn params(&self, action: &str, values: &[u128]) -> Vec<u128> {
        let info = self.compiled.action_info(action).unwrap();
        (0..info.params.len())
            .map(|i| values.get(i).copied().unwrap_or(0) & mask(info.params[i].1))
            .collect()
    }

    fn apply(&mut self, op: &Op) -> Result<(), TestCaseError> {
        match op {
            Op::Packet { port, frame, dt } => {
                self.now += dt;
                self.compiled.inject(*port, frame, self.now);
                self.reference.inject(*port, frame, self.now);
            }
            Op::Entry {
                table,
                action,
                key,
                params,
                priority,
            } => {
                let Some(t) = self.table(*table) else {
                    return Ok(());
                };
                let action = &t.actions[action % t.actions.len()];
                let params = self.params(action, params);
                let key: Vec<MatchValue> = t
                    .key
                    .iter()
                    .enumerate()
                    .map(|(i, k)| {
                        let (a, b) = key.get(i).copied().unwrap_or((0, 0));
                        let m = mask(k.width);
                        match k.kind {
                            MatchKind::Exact => MatchValue::Exact(a & m),
                            MatchKind::Lpm => {
                                MatchValue::Lpm(a & m, (b % (k.width as u128 + 1)) as u32)
                            }
                            MatchKind::Ternary => MatchValue::Ternary(a & m, b & m),
                            MatchKind::Range => {
                                MatchValue::Range((a & m).min(b & m), (a & m).max(b & m))
                            }
                            MatchKind::Optional => {
                                MatchValue::Optional((b & 1 == 0).then_some(a & m))
                            }
                            MatchKind::Valid => MatchValue::Valid(a & 1 == 1),
                        }
                    })
                    .collect();
                let got = self
                    .compiled
                    .table_add(&t.name, key.clone(), action, &params, *priority);
                let want = self
                    .reference
                    .table_add(&t.name, key, action, &params, *priority);
                prop_assert_eq!(
                    format!("{got:?}"),
                    format!("{want:?}"),
                    "table_add on {}",
                    t.name
                );
            }
            Op::Default {
                table,
                action,
                params,
            } => {
                let Some(t) = self.table(*table) else {
                    return Ok(());
                };
                let action = &t.actions[action % t.actions.len()];
                let params = self.params(action, params);
                let got = self.compiled.table_set_default(&t.name, action, &params);
                let want = self.reference.table_set_default(&t.name, action, &params);
                prop_assert_eq!(
                    format!("{got:?}"),
                    format!("{want:?}"),
                    "default of {}",
                    t.name
                );
            }
            Op::Delete { table, nth } => {
                let Some(t) = self.table(*table) else {
                    return Ok(());
                };
                let entries = self.compiled.table_entries(&t.name).unwrap();
                if let Some(e) = entries.get(nth % entries.len().max(1)) {
                    let got = self.compiled.table_delete(&t.name, e.handle);
                    let want = self.reference.table_delete(&t.name, e.handle);
                    prop_assert_eq!(format!("{got:?}"), format!("{want:?}"));
                }
            }
            Op::Replicas {
                id,
                clone,
                replicas,
                truncate,
            } => {
                let replicas: Vec<Replica> = replicas
                    .iter()
                    .map(|&(port, rid)| Replica { port, rid })
                    .collect();
                let (got, want) = if *clone {
                    let s = CloneSession {
                        replicas,
                        truncate: *truncate,
                    };
                    (
                        self.compiled.clone_session_set(*id, s.clone()),
                        self.reference.clone_session_set(*id, s),
                    )
                } else {
                    (
                        self.compiled.mc_group_set(*id, replicas.clone()),
                        self.reference.mc_group_set(*id, replicas),
                    )
                };
                prop_assert_eq!(format!("{got:?}"), format!("{want:?}"));
            }
            Op::Register { nth, index, value } => {
                let names = self.compiled.register_names();
                if let Some(name) = names.get(nth % names.len().max(1)) {
                    let (size, width) = self.compiled.register_shape(name).unwrap();
                    let (index, value) = (index % size.max(1), value & mask(width));
                    let got = self.compiled.register_write(name, index, value);
                    let want = self.reference.register_write(name, index, value);
                    prop_assert_eq!(format!("{got:?}"), format!("{want:?}"));
                }
            }
            Op::ValueSet { nth, value } => {
                let names = self.compiled.value_set_names();
                if let Some(name) = names.get(nth % names.len().max(1)) {
                    let got = self.compiled.value_set_add(name, *value & 0xffff);
                    let want = self.reference.value_set_add(name, *value & 0xffff);
                    prop_assert_eq!(format!("{got:?}"), format!("{want:?}"));
                }
            }
            Op::Check { dt } => {
                self.now += dt;
                self.check()?;
            }
        }
        Ok(())
    }

    /// Polls both and checks that everything observable agrees.
    fn check(&mut self) -> Result<(), TestCaseError> {
        let got = self.compiled.poll(self.now);
        let want = self.reference.poll(self.now);
        prop_assert_eq!(got, want, "frames due at {}", self.now);
        prop_assert_eq!(self.compiled.take_digests(), self.reference.take_digests());
        prop_assert_eq!(self.compiled.stats(), self.reference.stats());
        for name in self.compiled.register_names() {
            let (size, _) = self.compiled.register_shape(&name).unwrap();
            for i in 0..size.min(4096) {
                let got = self.compiled.register_read(&name, i);
                let want = self.reference.register_read(&name, i);
                prop_assert_eq!(got, want, "{}[{}]", name, i);
            }
        }
        for name in self.compiled.counter_names() {
            let size = self.compiled.counter_size(&name).unwrap_or(0);
            for i in 0..size.min(4096) {
                let got = self.compiled.counter_read(&name, i);
                let want = self.reference.counter_read(&name, i);
                prop_assert_eq!(got, want, "{}[{}]", name, i);
            }
        }
        for t in &self.tables {
            let got = self.compiled.table_entries(t).map(|es| es.len());
            let want = self.reference.table_entries(t).map(|es| es.len());
            prop_assert_eq!(got, want, "entries of {}", t);
        }
        Ok(())
    }
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Compiles every P4 test program with ratelab-p4c (one Python process for
/// all of them) into the test's scratch folder; returns (name, JSON).
fn compiled_corpus() -> &'static [(String, String)] {
    static CORPUS: OnceLock<Vec<(String, String)>> = OnceLock::new();
    CORPUS.get_or_init(|| {
        let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("corpus");
        let _ = std::fs::remove_dir_all(&out);
        std::fs::create_dir_all(&out).unwrap();
        let python = std::env::var("RATELAB_PYTHON")
            .map(PathBuf::from)
            .unwrap_or_else(|_| repo().join(".venv/bin/python"));
        let script = r#"
import glob, sys
from ratelab_p4c.cli import run
out = sys.argv[1]
programs = sorted(glob.glob("compiler/tests/programs/*/*.p4")) + ["p4src/router.p4"]
for p in programs:
    if run(["-I", "compiler/tests/programs/cli/incdir", "-o", out, p]) != 0:
        sys.exit(f"{p} did not compile")
"#;
        let status = Command::new(&python)
            .current_dir(repo())
            .arg("-c")
            .arg(script)
            .arg(&out)
            .status()
            .unwrap_or_else(|e| {
                panic!(
                    "{}: {e} (ratelab-p4c compiles the corpus: run `make deps`)",
                    python.display()
                )
            });
        assert!(status.success(), "compiling the corpus failed");
        let mut v: Vec<(String, String)> = std::fs::read_dir(&out)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .map(|p| {
                let name = p.file_stem().unwrap().to_string_lossy().into_owned();
                (name, std::fs::read_to_string(&p).unwrap())
            })
            .collect();
        v.sort();
        assert!(v.len() >= 40, "{} programs compiled", v.len());
        v
    })
}

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(2)
}

/// Runs the property on one program; a failure names it and its smallest case.
fn check_program(name: &str, json: &str) {
    let mut runner = TestRunner::new(Config {
        cases: cases(),
        failure_persistence: None,
        ..Config::default()
    });
    let ops = prop::collection::vec(op(), 1..120);
    let result = runner.run(&ops, |ops| {
        let mut pair = Pair::new(json);
        for op in &ops {
            pair.apply(op)?;
        }
        pair.now += 10_000_000;
        pair.check()
    });
    match result {
        Ok(()) => {}
        Err(TestError::Fail(why, ops)) => panic!("{name}: {why}\nsmallest case: {ops:#?}"),
        Err(e) => panic!("{name}: {e}"),
    }
}

/// What `make fuzz` quotes (the output shows with `--nocapture`).
fn report(what: &str, programs: usize, start: std::time::Instant) {
    println!(
        "{what}: {programs} programs x {} cases, {:.1} s",
        cases(),
        start.elapsed().as_secs_f64()
    );
}

#[test]
fn fixtures_agree_compiled_and_interpreted() {
    let start = std::time::Instant::now();
    check_program("basic.json", &common::fixture("basic.json"));
    check_program("features.json", &common::fixture("features.json"));
    check_program("parser program", &inline::parser_program());
    report("fixtures", 3, start);
}

/// Programs the engine refuses to load, and why (a clean LoadError, checked
/// below). folding.p4 only tests the compiler's constant folding, in a header
/// of 124 bits; the engine, like BMv2, needs whole-byte headers.
const REFUSED: [(&str, &str); 1] = [(
    "folding",
    "headers[2]: header \"r\" is 124 bits wide, not a whole number of bytes",
)];

#[test]
fn compiled_test_programs_agree_compiled_and_interpreted() {
    let start = std::time::Instant::now();
    let mut refused = Vec::new();
    for (name, json) in compiled_corpus() {
        match Switch::new(json, 1) {
            Ok(_) => check_program(name, json),
            Err(e) => refused.push((name.as_str(), e.to_string())),
        }
    }
    let want: Vec<(&str, String)> = REFUSED.iter().map(|&(n, e)| (n, e.to_string())).collect();
    assert_eq!(refused, want);
    report(
        "compiled test programs",
        compiled_corpus().len() - refused.len(),
        start,
    );
}

/// Found by the property above: clone_recirc.p4 mirrors every packet in
/// ingress, mirrors the mirror copies again in egress and recirculates them.
/// With two replicas in each clone session one packet made 3.3 million
/// frames at one instant; with three, `poll` did not return. What one packet
/// gives rise to is bounded now, the same compiled and interpreted.
#[test]
fn clones_of_clones_are_bounded() {
    let (_, json) = compiled_corpus()
        .iter()
        .find(|(name, _)| name == "clone_recirc")
        .unwrap();
    let mut pair = Pair::new(json);
    let replicas: Vec<Replica> = (1..=3).map(|port| Replica { port, rid: 0 }).collect();
    for sw in [&mut pair.compiled, &mut pair.reference] {
        let key = vec![MatchValue::Exact(0xbb)];
        sw.table_add("MyIngress.mirror", key, "MyIngress.plain_clone", &[], 0)
            .unwrap();
        for session in [5, 6] {
            let s = CloneSession {
                replicas: replicas.clone(),
                truncate: None,
            };
            sw.clone_session_set(session, s).unwrap();
        }
    }
    let mut p = vec![0, 0, 0, 0, 0, 0xaa, 0, 0, 0, 0, 0, 0xbb, 0x90, 0x00];
    p.extend_from_slice(&[0x55; 50]);
    pair.apply(&Op::Packet {
        port: 0,
        frame: p,
        dt: 0,
    })
    .unwrap();
    let frames = pair.compiled.poll(0);
    assert!(frames.len() <= MAX_DESCENDANTS as usize, "{}", frames.len());
    assert!(pair.compiled.stats().loop_drops > 0);
    assert_eq!(frames, pair.reference.poll(0));
    assert_eq!(pair.compiled.stats(), pair.reference.stats());
}
