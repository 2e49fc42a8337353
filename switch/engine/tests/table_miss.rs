//! A table that cannot hit (no entries, or no key) runs its default action
//! without a lookup: the default set at run time, the node after it chosen
//! by that action, entries added and deleted again, and a table without a
//! default action; compiled and interpreted alike.
mod inline;
use inline::*;
use ratelab_engine::{MatchValue, Switch};
use serde_json::{json, Value};

fn rd(i: u32) -> Value {
    json!({"type": "runtime_data", "value": i})
}

fn action(name: &str, id: u32, params: Value, prims: Vec<Value>) -> Value {
    json!({"name": name, "id": id, "runtime_data": params, "primitives": prims})
}

fn entry(action_id: u32, data: &[&str]) -> Value {
    json!({"action_id": action_id, "action_const": false, "action_data": data,
           "action_entry_const": false})
}

/// Header h {a:8, b:16, c:32, ...} parsed and emitted. Ingress: `t_none`
/// (key h.a, action note_c, no default action) goes on to `t1` (key h.a;
/// set_b then `t2`, to_port ends ingress; default set_b(0x11)), `t2` (no
/// key; set_port, default set_port(1)).
fn program() -> String {
    let mut p: Value = serde_json::from_str(&action_program(vec![])).unwrap();
    p["actions"] = json!([
        action(
            "set_b",
            0,
            json!([{"name": "v", "bitwidth": 16}]),
            vec![assign(f("h", "b"), rd(0))]
        ),
        action(
            "to_port",
            1,
            json!([{"name": "p", "bitwidth": 9}]),
            vec![assign(f("standard_metadata", "egress_spec"), rd(0))]
        ),
        action(
            "set_port",
            2,
            json!([{"name": "p", "bitwidth": 9}]),
            vec![assign(f("standard_metadata", "egress_spec"), rd(0))]
        ),
        action(
            "note_c",
            3,
            json!([]),
            vec![assign(f("h", "c"), hx(0xc0ffee))]
        ),
    ]);
    let key_a = json!([{"match_type": "exact", "name": "h.a", "target": ["h", "a"], "mask": null}]);
    p["pipelines"][0]["init_table"] = json!("t_none");
    p["pipelines"][0]["tables"] = json!([
        {"name": "t_none", "id": 0, "key": key_a, "match_type": "exact", "type": "simple",
         "max_size": 16, "with_counters": false, "support_timeout": false, "direct_meters": null,
         "action_ids": [3], "actions": ["note_c"], "base_default_next": "t1",
         "next_tables": {"note_c": "t1"}},
        {"name": "t1", "id": 1, "key": key_a, "match_type": "exact", "type": "simple",
         "max_size": 16, "with_counters": false, "support_timeout": false, "direct_meters": null,
         "action_ids": [0, 1], "actions": ["set_b", "to_port"], "base_default_next": "t2",
         "next_tables": {"set_b": "t2", "to_port": null},
         "default_entry": entry(0, &["0x11"])},
        {"name": "t2", "id": 2, "key": [], "match_type": "exact", "type": "simple",
         "max_size": 1, "with_counters": false, "support_timeout": false, "direct_meters": null,
         "action_ids": [2], "actions": ["set_port"], "base_default_next": null,
         "next_tables": {"set_port": null},
         "default_entry": entry(2, &["0x1"])},
    ]);
    p.to_string()
}

/// A compiled and an interpreted switch, configured alike.
struct Both([Switch; 2]);

impl Both {
    fn new() -> Both {
        let prog = program();
        let compiled = Switch::new(&prog, 1).unwrap_or_else(|e| panic!("{e}"));
        assert!(compiled.compiled(), "{:?}", compiled.compile_error());
        let mut interpreted = Switch::new(&prog, 1).unwrap();
        interpreted.set_compiled(false);
        Both([compiled, interpreted])
    }

    fn each(&mut self, f: impl Fn(&mut Switch)) {
        self.0.iter_mut().for_each(f);
    }

    /// The packet with h.a = `a`, b = 0x7777, c = 5: the port it leaves
    /// by and its (b, c), the same from both switches.
    fn send(&mut self, a: u8) -> (u32, u16, u32) {
        let out: Vec<_> = self
            .0
            .iter_mut()
            .map(|sw| {
                sw.inject(0, &h_bytes(a, 0x7777, 5, 0, 0, 0, 0), 0);
                let frames = sw.poll(0);
                assert_eq!(frames.len(), 1, "one frame out");
                let (_, b, c, ..) = h_fields(&frames[0].data);
                (frames[0].port, b, c)
            })
            .collect();
        assert_eq!(out[0], out[1], "compiled and interpreted differ");
        out[0]
    }
}

#[test]
fn empty_and_keyless_tables_run_their_defaults() {
    let mut sw = Both::new();
    // t_none misses with no action; t1's default set_b(0x11), then t2's set_port(1).
    assert_eq!(sw.send(5), (1, 0x11, 5));
}

#[test]
fn a_default_set_at_run_time_runs_and_chooses_the_next_node() {
    let mut sw = Both::new();
    sw.each(|s| s.table_set_default("t2", "set_port", &[3]).unwrap());
    assert_eq!(sw.send(5), (3, 0x11, 5));
    sw.each(|s| s.table_set_default("t1", "set_b", &[0x4242]).unwrap());
    assert_eq!(sw.send(5), (3, 0x4242, 5));
    // to_port ends ingress: t2 does not run, b is untouched.
    sw.each(|s| s.table_set_default("t1", "to_port", &[2]).unwrap());
    assert_eq!(sw.send(5), (2, 0x7777, 5));
    sw.each(|s| s.table_reset_default("t1").unwrap());
    assert_eq!(sw.send(5), (3, 0x11, 5));
}

#[test]
fn entries_added_and_deleted_again() {
    let mut sw = Both::new();
    let key = vec![MatchValue::Exact(5)];
    let handles: Vec<u32> =
        sw.0.iter_mut()
            .map(|s| s.table_add("t1", key.clone(), "to_port", &[4], 0).unwrap())
            .collect();
    sw.each(|s| {
        s.table_add("t_none", vec![MatchValue::Exact(5)], "note_c", &[], 0)
            .unwrap();
    });
    assert_eq!(sw.send(5), (4, 0x7777, 0xc0ffee), "both hit");
    assert_eq!(sw.send(6), (1, 0x11, 5), "both miss");
    for (s, h) in sw.0.iter_mut().zip(handles) {
        s.table_delete("t1", h).unwrap();
    }
    sw.each(|s| s.table_clear("t_none").unwrap());
    assert_eq!(sw.send(5), (1, 0x11, 5), "empty again: the defaults");
}
