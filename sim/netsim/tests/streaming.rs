//! `Simulator::run_into_dir` (what the command line runs): the samples and
//! a ping's replies go to their files as they are taken, and every file is
//! byte for byte what `Results::write_dir` writes from them kept in memory.

use ratelab_netsim::examples::{dumbbell, Plans};
use ratelab_netsim::{Scenario, Simulator};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

mod common;
use common::{MS, S};

fn out_dir() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join("netsim_streaming")
}

/// router.p4 compiled, and sim/examples/dumbbell.yaml's router plans.
fn fixtures() -> &'static (String, String) {
    static F: OnceLock<(String, String)> = OnceLock::new();
    F.get_or_init(|| {
        let (program, mut plans) = common::compile_and_plan(
            &out_dir(),
            &[("dumbbell", "sim/examples/dumbbell.yaml", &[])],
        );
        (program, plans.remove(0))
    })
}

/// The dumbbell with a Reno flow, a Poisson UDP flow and a ping, 3 s,
/// `sample` as given (JSON: the flows' optional fields keep their defaults).
fn scenario(sample: Option<Value>) -> Scenario {
    let plans = Plans::from_json(&fixtures().1, "plans").unwrap();
    let mut v: Value = serde_json::from_str(&dumbbell(plans, vec![], 3 * S).to_json()).unwrap();
    v["seed"] = json!(5);
    v["flows"] = json!([
        {"name": "reno", "from": "sender", "to": "receiver",
         "tcp": {"cc": "reno", "app": {"kind": "bulk"}}},
        {"name": "bg", "from": "sender", "to": "receiver",
         "udp": {"pattern": "poisson", "rate_bps": 2_000_000}},
        {"name": "rtt", "from": "sender", "to": "receiver", "stop_ns": 2 * S,
         "ping": {"interval_ns": 200 * MS}},
    ]);
    match sample {
        Some(s) => v["sample"] = s,
        None => {
            v.as_object_mut().unwrap().remove("sample");
        }
    }
    Scenario::from_json(&v.to_string(), "scenario.json").unwrap()
}

fn files(dir: &Path) -> BTreeMap<String, String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read_to_string(&p).unwrap())
        })
        .collect()
}

/// The files of `s` written from memory and streamed: equal, byte for byte
/// (the same names: no spool file is left behind).
fn streamed_equals_kept(s: &Scenario, name: &str) {
    let program = &fixtures().0;
    let (kept, streamed) = (out_dir().join(name), out_dir().join(format!("{name}-s")));
    let _ = std::fs::remove_dir_all(&kept);
    let _ = std::fs::remove_dir_all(&streamed);
    let expected = Simulator::new(s, program).unwrap().run();
    expected.write_dir(&kept).unwrap();
    let got = Simulator::new(s, program).unwrap();
    let got = got.run_into_dir(&streamed, 0, |_, _| {}).unwrap();
    assert!(got.queue_samples.is_empty() && got.flow_samples.is_empty());
    // The returned flows are the kept ones without the ping's replies.
    let mut flows = expected.flows.clone();
    for f in &mut flows {
        if let Some(p) = &mut f.ping {
            assert!(!p.replies.is_empty(), "{name}: something to stream");
            p.replies.clear();
        }
    }
    assert_eq!(got.flows, flows);
    assert_eq!(got.events, expected.events);
    let (a, b) = (files(&kept), files(&streamed));
    assert_eq!(a.keys().collect::<Vec<_>>(), b.keys().collect::<Vec<_>>());
    for (file, text) in &a {
        assert!(text == &b[file], "{name}: {file} differs");
    }
}

#[test]
fn streamed_samples_give_the_same_bytes_as_kept_ones() {
    let all = json!({"interval_ns": 100 * MS, "registers": ["queue_length"]});
    let s = scenario(Some(all));
    // Both series, and a register column: something to splice in each array.
    let r = Simulator::new(&s, &fixtures().0).unwrap().run();
    assert_eq!(r.queue_samples.len(), 31 * 2);
    assert_eq!(r.flow_samples.len(), 31); // the TCP sender: UDP and ping are not sampled
    streamed_equals_kept(&s, "both");
}

#[test]
fn an_empty_sample_series_streams_as_an_empty_array() {
    let flows_only = json!({"interval_ns": 100 * MS, "queues": false});
    streamed_equals_kept(&scenario(Some(flows_only)), "flows-only");
    let queues_only = json!({"interval_ns": 250 * MS, "flows": false});
    streamed_equals_kept(&scenario(Some(queues_only)), "queues-only");
    streamed_equals_kept(&scenario(None), "no-sample");
}

#[test]
fn a_folder_that_cannot_be_made_is_an_error_not_a_panic() {
    fixtures();
    let file = out_dir().join("a-file");
    std::fs::write(&file, "").unwrap();
    let sim = Simulator::new(&scenario(None), &fixtures().0).unwrap();
    let e = sim.run_into_dir(&file.join("out"), 0, |_, _| {});
    assert!(e.is_err());
}
