//! Link directions whose capacity follows a mahimahi trace (`trace` in
//! place of `rate_bps`): a host's egress and a router port's traffic
//! manager deliver frames at the trace's opportunities, exactly.

use ratelab_netsim::examples::{dumbbell, Plans};
use ratelab_netsim::scenario::{FlowSpec, LinkEnd, UdpSpec};
use ratelab_netsim::{Scenario, Simulator};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

mod common;
use common::{MS, S};

fn out_dir() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join("netsim_traces")
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

/// A trace file with `text` in the test's folder: its path.
fn trace_file(name: &str, text: &str) -> String {
    fixtures();
    let path = out_dir().join(name);
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

fn dumbbell_scenario() -> Scenario {
    let plans = Plans::from_json(&fixtures().1, "plans").unwrap();
    dumbbell(plans, vec![], S)
}

/// sender -> receiver over one link (no router).
fn direct_scenario() -> Scenario {
    let mut s = dumbbell_scenario();
    s.routers.clear();
    s.links.truncate(1);
    s.links[0].b = LinkEnd {
        node: "receiver".into(),
        port: None,
    };
    s
}

/// A CBR UDP flow sender -> receiver of `payload` bytes per datagram at
/// `rate_bps` of IPv4 packets, stopping at `stop_ns`.
fn cbr(payload: usize, rate_bps: u64, stop_ns: u64) -> FlowSpec {
    FlowSpec {
        port: None,
        name: "cbr".into(),
        from: "sender".into(),
        to: "receiver".into(),
        start_ns: 0,
        stop_ns: Some(stop_ns),
        tcp: None,
        udp: Some(UdpSpec {
            pattern: "cbr".into(),
            rate_bps,
            size: Some(payload),
            on_ns: None,
            off_ns: None,
        }),
        rbcc: None,
        ping: None,
    }
}

fn run(s: &Scenario) -> ratelab_netsim::Results {
    Simulator::new(s, &fixtures().0).unwrap().run()
}

fn error(s: &Scenario) -> String {
    match Simulator::new(s, &fixtures().0) {
        Ok(_) => panic!("the scenario was accepted"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn a_host_link_delivers_full_frames_at_the_opportunities_and_loops() {
    let mut s = direct_scenario();
    // Opportunities at 3, 3, 10 ms, then 13, 13, 20, 23, 23, 30 ms, ...
    s.links[0].forward.rate_bps = 0;
    s.links[0].forward.trace = Some(trace_file("host.mahi", "3\n3\n10\n"));
    s.links[0].forward.delay_ns = 1_000_333;
    // 1,500-byte IP packets (1,514-byte frames) every 1 ms from 0 to 6 ms.
    s.flows = vec![cbr(1472, 12_000_000, 6 * MS + 1)];
    let r = run(&s);
    // Sent at 0..=6 ms, delivered at 3, 3, 10, 13, 13, 20, 23 ms.
    let delays_ms = [3, 2, 8, 10, 9, 15, 17];
    let mean = delays_ms.iter().sum::<u64>() as f64 * MS as f64 / 7.0 + 1_000_333.0;
    let udp = r.flows[0].udp.as_ref().unwrap();
    assert_eq!((udp.sent, udp.received), (7, 7));
    assert!(
        (r.flows[0].one_way_delay_mean_ns - mean).abs() < 1e-6,
        "{} vs {mean}",
        r.flows[0].one_way_delay_mean_ns
    );
}

#[test]
fn small_frames_share_an_opportunity() {
    let mut s = direct_scenario();
    s.links[0].forward.rate_bps = 0;
    s.links[0].forward.trace = Some(trace_file("small.mahi", "1\n"));
    s.links[0].forward.delay_ns = 0;
    // 500-byte IP packets every 0.5 ms (8 Mbit/s): sent at 0, 0.5, 1, 1.5 ms;
    // the 1 ms opportunity carries the first three, the 2 ms one the fourth.
    s.flows = vec![cbr(472, 8_000_000, 1_750_000)];
    let r = run(&s);
    let udp = r.flows[0].udp.as_ref().unwrap();
    assert_eq!((udp.sent, udp.received), (4, 4));
    // Delays 1, 0.5, 0 and 0.5 ms.
    assert_eq!(r.flows[0].one_way_delay_mean_ns, 500_000.0);
}

#[test]
fn a_router_port_drains_by_the_trace() {
    let mut s = dumbbell_scenario();
    // sender -> r1: 100 Mbit/s, 1 ms; r1 -> receiver: the trace, 20 ms.
    s.links[1].forward.rate_bps = 0;
    s.links[1].forward.trace = Some(trace_file("router.mahi", "2\n2\n7\n"));
    s.flows = vec![cbr(1472, 12_000_000, 4 * MS + 500_000)];
    let r = run(&s);
    // Sent at 0..=4 ms; at r1 121,120 ns + 1 ms later, at the engine's next
    // whole µs: 1.122, 2.122, 3.122, 4.122, 5.122 ms. Opportunities at 2, 2,
    // 7, 9, 9, 14 ms: the first goes at 2 ms; the second, ready after both
    // 2 ms ones, at 7; then 9, 9 and 14 ms.
    let delays_ms = [2, 6, 7, 6, 10];
    let mean = (delays_ms.iter().sum::<u64>() * MS / 5 + 20 * MS) as f64;
    let udp = r.flows[0].udp.as_ref().unwrap();
    assert_eq!((udp.sent, udp.received), (5, 5));
    assert_eq!(r.flows[0].one_way_delay_mean_ns, mean);
    let p2 = r.ports.iter().find(|p| p.node == "r1" && p.port == 2);
    assert_eq!(p2.unwrap().tx_packets, 5);
}

#[test]
fn tcp_over_a_trace_bottleneck_gets_the_traces_capacity() {
    let mut s = dumbbell_scenario();
    // One opportunity a ms: 12 Mbit/s of IP packets.
    s.links[1].forward.rate_bps = 0;
    s.links[1].forward.trace = Some(trace_file("twelve.mahi", "1\n"));
    s.duration_ns = 10 * S;
    s.flows = vec![FlowSpec {
        port: None,
        name: "bulk".into(),
        from: "sender".into(),
        to: "receiver".into(),
        start_ns: 0,
        stop_ns: None,
        tcp: Some(ratelab_netsim::scenario::TcpSpec {
            cc: "reno".into(),
            app: ratelab_netsim::scenario::AppSpec::Bulk { message_size: None },
            mss: None,
            knobs: Default::default(),
            packet_delays: false,
        }),
        udp: None,
        rbcc: None,
        ping: None,
    }];
    let r = run(&s);
    // 1,448 data bytes per 1,500-byte packet at 1,000 packets/s.
    let capacity = 1448.0 * 8.0 * 1000.0;
    let goodput = r.flows[0].goodput_bps;
    assert!(
        goodput > 0.85 * capacity && goodput <= capacity,
        "{goodput}"
    );
}

#[test]
fn bad_traces_and_conflicting_capacities_are_one_line_errors() {
    let mut s = direct_scenario();
    s.flows = vec![cbr(1472, 12_000_000, MS)];
    let bad = trace_file("bad.mahi", "1\n5\n4\n");
    s.links[0].forward.rate_bps = 0;
    s.links[0].forward.trace = Some(bad.clone());
    assert_eq!(
        error(&s),
        format!(
            "links[0].forward.trace: {bad}:3: expected a time of at least 5 ms (the line \
             before: lines never decrease), got 4"
        )
    );
    let empty = trace_file("empty.mahi", "");
    s.links[0].forward.trace = Some(empty.clone());
    assert!(error(&s).starts_with(&format!(
        "links[0].forward.trace: {empty}: expected at least"
    )));
    s.links[0].forward.trace = Some(trace_file("zero.mahi", "0\n0\n"));
    assert!(error(&s).contains("zero.mahi:2: expected a last line above 0 ms"));
    s.links[0].forward.trace = Some("/nonexistent/none.mahi".into());
    assert!(error(&s)
        .starts_with("links[0].forward.trace: /nonexistent/none.mahi: cannot read the trace"));
    s.links[0].forward.trace = Some(trace_file("ok.mahi", "1\n"));
    s.links[0].forward.rate_bps = 1_000_000;
    assert_eq!(
        error(&s),
        "links[0].forward.trace: expected either rate_bps or trace, not both"
    );
    // Read back from JSON: the same field, and nothing else changes.
    s.links[0].forward.rate_bps = 0;
    let again = Scenario::from_json(&s.to_json(), "s.json").unwrap();
    assert_eq!(again.links[0].forward.trace, s.links[0].forward.trace);
    let text = r#"{"duration_ns": 1, "hosts": [], "links": [{"a": {"node": "x"}, "b": {"node": "y"},
        "forward": {"delay_ns": 0, "trace": 5}}]}"#;
    let e = Scenario::from_json(text, "s.json").unwrap_err().to_string();
    assert!(e.starts_with("s.json:2:"), "{e}");
}
