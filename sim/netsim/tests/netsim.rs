//! The simulator on router.p4 as ratelab-p4c compiles it, configured with
//! the entries the controller plans for the project's example topologies
//! (sim/netsim/tools/router_plans.py, one Python process from `.venv`;
//! `RATELAB_PYTHON` names another interpreter).

use ratelab_netsim::examples::{dumbbell, three_routers, Plans};
use ratelab_netsim::scenario::{AppSpec, FlowSpec, SampleSpec, SendBufferKnob, TcpSpec, UdpSpec};
use ratelab_netsim::{Results, Scenario, ScenarioError, Simulator};
use std::path::Path;
use std::process::Command;
use std::sync::OnceLock;

mod common;
use common::{python, repo, MS, S};

struct Fixtures {
    program: String,
    dumbbell: String,
    dumbbell_large: String,
    three_routers: String,
}

/// Compiles router.p4 and writes the example topologies' router plans.
fn fixtures() -> &'static Fixtures {
    static F: OnceLock<Fixtures> = OnceLock::new();
    F.get_or_init(|| {
        let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("netsim");
        let (program, plans) = common::compile_and_plan(
            &out,
            &[
                ("dumbbell", "sim/examples/dumbbell.yaml", &[]),
                (
                    "dumbbell_large",
                    "sim/examples/dumbbell.yaml",
                    &["links[1].queue_limit=200"],
                ),
                ("three_routers", "sim/examples/three_routers.yaml", &[]),
            ],
        );
        let [dumbbell, dumbbell_large, three_routers] = <[String; 3]>::try_from(plans).unwrap();
        Fixtures {
            program,
            dumbbell,
            dumbbell_large,
            three_routers,
        }
    })
}

fn plans(text: &str) -> Plans {
    Plans::from_json(text, "plans").unwrap()
}

fn tcp(name: &str, from: &str, to: &str, cc: &str, app: AppSpec) -> FlowSpec {
    FlowSpec {
        port: None,
        name: name.into(),
        from: from.into(),
        to: to.into(),
        start_ns: 0,
        stop_ns: None,
        tcp: Some(TcpSpec {
            cc: cc.into(),
            app,
            mss: None,
            knobs: Default::default(),
            packet_delays: false,
        }),
        udp: None,
        rbcc: None,
        ping: None,
    }
}

fn bulk() -> AppSpec {
    AppSpec::Bulk { message_size: None }
}

fn udp(name: &str, from: &str, to: &str, pattern: &str, rate_bps: u64) -> FlowSpec {
    FlowSpec {
        port: None,
        name: name.into(),
        from: from.into(),
        to: to.into(),
        start_ns: 0,
        stop_ns: None,
        tcp: None,
        udp: Some(UdpSpec {
            pattern: pattern.into(),
            rate_bps,
            size: None,
            on_ns: None,
            off_ns: None,
        }),
        rbcc: None,
        ping: None,
    }
}

fn run(s: &Scenario) -> Results {
    Simulator::new(s, &fixtures().program).unwrap().run()
}

fn error(s: &Scenario) -> ScenarioError {
    match Simulator::new(s, &fixtures().program) {
        Ok(_) => panic!("the scenario was accepted"),
        Err(e) => e,
    }
}

fn port<'a>(r: &'a Results, node: &str, port: u32) -> &'a ratelab_netsim::results::PortResult {
    r.ports
        .iter()
        .find(|p| p.node == node && p.port == port)
        .unwrap()
}

fn mixed_dumbbell(seed: u64) -> Scenario {
    let mut s = dumbbell(
        plans(&fixtures().dumbbell),
        vec![
            tcp("reno", "sender", "receiver", "reno", bulk()),
            udp("poisson", "sender", "receiver", "poisson", 2_000_000),
        ],
        3 * S,
    );
    s.seed = seed;
    s.sample = Some(SampleSpec {
        interval_ns: 100 * MS,
        registers: vec!["queue_length".into()],
        queues: true,
        flows: true,
    });
    s
}

#[test]
fn same_scenario_and_seed_give_byte_identical_results() {
    let a = run(&mixed_dumbbell(7));
    let b = run(&mixed_dumbbell(7));
    assert_eq!(a.to_json(), b.to_json());
    assert_eq!(a.flows_csv(), b.flows_csv());
    assert_eq!(a.queue_csv(), b.queue_csv());
    assert_eq!(a.drops_csv(), b.drops_csv());
    assert!(a.delivered_packets > 1000, "{}", a.delivered_packets);
    // The seed reaches the components: the Poisson source's gaps change.
    let c = run(&mixed_dumbbell(8));
    assert_ne!(a.flows[1].udp, c.flows[1].udp);
    // The scenario survives its own JSON.
    let s = mixed_dumbbell(7);
    let back = Scenario::from_json(&s.to_json(), "s.json").unwrap();
    assert_eq!(run(&back).to_json(), a.to_json());
}

#[test]
fn queue_taps_sample_at_the_interval_and_cost_no_events_when_off() {
    let on = run(&mixed_dumbbell(7));
    // Samples at 0, 0.1, ..., 3.0 s for each of r1's two ports.
    assert_eq!(on.queue_samples.len(), 31 * 2);
    assert_eq!(on.queue_samples[2].time_ns, 100 * MS);
    // The program's own queue count agrees with the engine's queue at each sample.
    let busy: Vec<_> = on.queue_samples.iter().filter(|q| q.port == 2).collect();
    assert!(busy.iter().any(|q| q.queue_packets > 0));
    for q in &busy {
        assert_eq!(
            q.registers[0], q.queue_packets as u128,
            "at {} ns",
            q.time_ns
        );
    }
    let mut s = mixed_dumbbell(7);
    s.sample = None;
    let off = run(&s);
    assert!(off.queue_samples.is_empty());
    assert_eq!(off.events + 31, on.events);
    assert_eq!(off.flows, on.flows);
}

#[test]
fn sample_records_only_the_series_asked_for() {
    let both = run(&mixed_dumbbell(7));
    assert!(!both.queue_samples.is_empty() && !both.flow_samples.is_empty());
    let mut s = mixed_dumbbell(7);
    s.sample.as_mut().unwrap().queues = false;
    let flows_only = run(&s);
    assert!(flows_only.queue_samples.is_empty());
    assert_eq!(flows_only.flow_samples, both.flow_samples);
    assert_eq!(flows_only.flows, both.flows);
    s.sample.as_mut().unwrap().queues = true;
    s.sample.as_mut().unwrap().flows = false;
    let queues_only = run(&s);
    assert!(queues_only.flow_samples.is_empty());
    assert_eq!(queues_only.queue_samples, both.queue_samples);
    assert_eq!(queues_only.events, both.events);
    // Absent keys mean both; both off is refused (sample absent records none).
    let mut value: serde_json::Value = serde_json::from_str(&s.to_json()).unwrap();
    let sample = value["sample"].as_object_mut().unwrap();
    assert!(sample.remove("queues").is_some() && sample.remove("flows").is_some());
    let back = Scenario::from_json(&value.to_string(), "s.json").unwrap();
    assert!(back.sample.as_ref().is_some_and(|x| x.queues && x.flows));
    s.sample.as_mut().unwrap().queues = false;
    let e = error(&s);
    assert_eq!(e.field, "sample", "{e}");
}

#[test]
fn one_reno_flow_fills_the_bottleneck_and_a_small_queue_drops() {
    let s = dumbbell(
        plans(&fixtures().dumbbell),
        vec![tcp("reno", "sender", "receiver", "reno", bulk())],
        10 * S,
    );
    let r = run(&s);
    let f = &r.flows[0];
    // 10 Mbit/s of 1514-byte frames carrying 1448 bytes of data (timestamps on).
    let ceiling = 10e6 * 1448.0 / 1514.0;
    assert!(f.goodput_bps > 0.85 * ceiling, "goodput {}", f.goodput_bps);
    assert!(
        f.goodput_bps <= ceiling * 1.001,
        "goodput {}",
        f.goodput_bps
    );
    // Queue limit 20 packets (below the 35-packet BDP): the router drops.
    let full = r.drops_of("queue_full");
    assert!(full > 0, "{:?}", r.drops);
    assert_eq!(r.drops_of("switch_queue_full"), 0);
    let t = f.tcp.as_ref().unwrap();
    assert!(t.retransmissions > 0);
    assert!(t.min_rtt_ns.unwrap() >= 42 * MS);
    // Each loss recovery waits for its retransmission's ACK: at least the
    // smallest RTT; Reno ends it on that ACK, well within a second.
    let episodes = t.recoveries_ended;
    assert!(episodes > 0 && t.rtos == 0, "{t:?}");
    let mean = t.recovery_ns / episodes;
    assert!((t.min_rtt_ns.unwrap()..S).contains(&mean), "{t:?}");
    // Every frame the router sent toward the receiver, the receiver got,
    // but those still on the 20 ms link at the end (at most 18 of 1514 bytes).
    let on_link = port(&r, "r1", 2).tx_packets - port(&r, "receiver", 0).rx_packets;
    assert!(on_link <= 18, "{on_link}");

    // Ten times the queue (above the BDP): the link stays as full; the drops
    // come from slow start's overshoot, at the queue limit.
    let large = dumbbell(
        plans(&fixtures().dumbbell_large),
        vec![tcp("reno", "sender", "receiver", "reno", bulk())],
        10 * S,
    );
    let l = run(&large);
    assert!(l.drops_of("queue_full") > 0, "{:?}", l.drops);
    assert!(l.flows[0].goodput_bps > 0.9 * ceiling);
}

#[test]
fn every_algorithm_and_application_delivers() {
    let apps = [
        ("reno", bulk()),
        (
            "newreno",
            AppSpec::OnOff {
                on_ns: 200 * MS,
                off_ns: 300 * MS,
                message_size: None,
            },
        ),
        (
            "cubic",
            AppSpec::Stream {
                rate_bps: 2_000_000,
                message_size: None,
            },
        ),
        (
            "vegas",
            AppSpec::Transfer {
                bytes: 200_000,
                message_size: None,
            },
        ),
    ];
    for (cc, app) in apps {
        let s = dumbbell(
            plans(&fixtures().dumbbell),
            vec![tcp(cc, "sender", "receiver", cc, app.clone())],
            2 * S,
        );
        let r = run(&s);
        let f = &r.flows[0];
        assert_eq!(f.transport, format!("tcp/{cc}"));
        assert!(f.bytes_received > 50_000, "{cc} {app:?}: {f:?}");
        assert!(f.one_way_delay_mean_ns > 21.0e6, "{cc}: {f:?}");
        if let AppSpec::Transfer { bytes, .. } = app {
            assert_eq!(f.bytes_received, bytes);
        }
        if let AppSpec::Stream { rate_bps, .. } = app {
            let got = f.goodput_bps;
            assert!(
                (got - rate_bps as f64).abs() < 0.1 * rate_bps as f64,
                "{got}"
            );
        }
    }
}

/// A one-packet UDP flow: a rate so low that the second packet is due after the run.
fn single_packet(s: &mut Scenario, size: usize) {
    let mut f = udp(
        "one",
        &s.hosts[0].name.clone(),
        &s.hosts[1].name.clone(),
        "cbr",
        1,
    );
    f.udp.as_mut().unwrap().size = Some(size);
    s.flows = vec![f];
}

#[test]
fn a_host_link_serializes_and_delays_to_the_nanosecond() {
    let mut s = dumbbell(plans(&fixtures().dumbbell), vec![], S);
    s.routers.clear();
    s.links.truncate(1);
    s.links[0].b = ratelab_netsim::scenario::LinkEnd {
        node: "receiver".into(),
        port: None,
    };
    s.links[0].forward.rate_bps = 3_000_000;
    s.links[0].forward.delay_ns = 1_000_333;
    single_packet(&mut s, 100);
    let r = run(&s);
    // 14 + 20 + 8 + 100 = 142 bytes = 1136 bits at 3 Mbit/s: 378,666.7 ns, rounded up.
    assert_eq!(
        r.flows[0].one_way_delay_mean_ns,
        (378_667 + 1_000_333) as f64
    );
    assert_eq!(r.flows[0].udp.as_ref().unwrap().received, 1);
}

#[test]
fn a_router_hop_adds_its_link_exactly_with_microsecond_engine_time() {
    let mut s = dumbbell(plans(&fixtures().dumbbell), vec![], S);
    s.links[0].forward.rate_bps = 10_000_000;
    s.links[0].forward.delay_ns = 1_000_333;
    s.links[1].forward.rate_bps = 3_000_000;
    s.links[1].forward.delay_ns = 7 * MS;
    single_packet(&mut s, 100);
    let r = run(&s);
    // Reaches r1 at 113,600 + 1,000,333 ns; the engine sees it at the next
    // whole µs (1,114 µs), forwards it at once (idle port), and port 2
    // serializes 142 bytes at 3 Mbit/s (378,667 ns) before the 7 ms delay.
    let expected = 1_114_000 + 378_667 + 7 * MS;
    assert_eq!(r.flows[0].one_way_delay_mean_ns, expected as f64);
    assert_eq!(port(&r, "r1", 1).rx_packets, 1);
    assert_eq!(port(&r, "r1", 2).tx_packets, 1);
}

#[test]
fn routers_forward_by_the_installed_routes() {
    let s = three_routers(
        plans(&fixtures().three_routers),
        vec![
            udp("a", "src1", "dst", "cbr", 1_000_000),
            udp("b", "src2", "dst", "cbr", 1_000_000),
            udp("c", "src3", "dst", "cbr", 1_000_000),
            udp("back", "dst", "src2", "cbr", 500_000),
        ],
        S,
    );
    let mut s = s;
    // The sources stop 0.9 s in, so nothing is in flight at the end.
    s.flows.iter_mut().for_each(|f| f.stop_ns = Some(900 * MS));
    let r = run(&s);
    let sent = |i: usize| r.flows[i].udp.as_ref().unwrap().sent;
    for (i, f) in r.flows.iter().enumerate() {
        assert_eq!(f.udp.as_ref().unwrap().lost, 0, "{f:?}");
        assert_eq!(f.udp.as_ref().unwrap().received, sent(i), "{f:?}");
        assert!(sent(i) > 30, "{f:?}");
    }
    // r1 sends src1's and src2's packets to r2 on port 3; src2 gets the way back on port 2.
    assert_eq!(port(&r, "r1", 3).rx_packets, port(&r, "r1", 2).tx_packets);
    assert_eq!(port(&r, "r1", 1).tx_packets, 0);
    assert_eq!(port(&r, "r2", 1).tx_packets, 0);
    let to_dst = port(&r, "r3", 2).tx_packets;
    assert_eq!(to_dst, port(&r, "dst", 0).rx_packets);
    assert_eq!(
        port(&r, "r2", 3).tx_packets,
        port(&r, "r1", 3).tx_packets + port(&r, "r2", 1).rx_packets
    );
    assert!(r.drops.is_empty(), "{:?}", r.drops);

    // Point r2's route to dst's /24 at port 1 (src3): dst's packets go there
    // and src3 drops them as not its own.
    let mut wrong = s.clone();
    wrong.flows.truncate(1);
    for e in &mut wrong.routers[1].entries {
        if e.table.ends_with("ipv4_lpm") && e.key[0][0] == 167_773_184u64 {
            e.params = vec![1, 0x0200_0001_0003];
        }
    }
    let err = error(&wrong);
    assert_eq!(err.field, "flows[0].to");
    assert!(err.message.contains("lead to host \"src3\""), "{err}");
}

#[test]
fn bad_scenarios_name_the_field() {
    let base = || {
        dumbbell(
            plans(&fixtures().dumbbell),
            vec![tcp("reno", "sender", "receiver", "reno", bulk())],
            S,
        )
    };
    let mut s = base();
    s.links[1].forward.rate_bps = 0;
    let e = error(&s);
    assert_eq!(
        e.to_string(),
        "links[1].forward.rate_bps: expected a rate above 0 bit/s, got 0"
    );

    let mut s = base();
    s.flows[0].to = "nobody".into();
    assert_eq!(
        error(&s).to_string(),
        "flows[0].to: unknown host \"nobody\""
    );

    let mut s = base();
    s.links[0].a.node = "sendr".into();
    assert_eq!(error(&s).field, "links[0].a.node");

    let mut s = base();
    s.routers[0]
        .entries
        .retain(|e| !(e.table.ends_with("ipv4_lpm") && e.params[0] == 2));
    let e = error(&s);
    assert_eq!(e.field, "flows[0].to");
    assert!(
        e.message.contains("router \"r1\" has no route to 10.0.2.1"),
        "{e}"
    );

    let mut s = base();
    s.routers[0]
        .entries
        .retain(|e| !(e.table.ends_with("ipv4_lpm") && e.params[0] == 1));
    let e = error(&s);
    assert_eq!(e.field, "flows[0].from"); // TCP needs the ACKs' way back
    assert!(e.message.contains("way back"), "{e}");

    let mut s = base();
    s.flows[0].tcp.as_mut().unwrap().cc = "bbr".into();
    assert_eq!(error(&s).field, "flows[0].tcp.cc");

    // Two TCP flows to one host on the port the first one takes.
    let mut s = base();
    let mut second = s.flows[0].clone();
    second.name = "second".into();
    second.port = Some(5001);
    s.flows.push(second);
    let e = error(&s);
    assert_eq!(e.field, "flows[1].port", "{e}");
    assert!(e.message.contains("port 5001 of host"), "{e}");
    s.flows[1].port = Some(6001);
    Simulator::new(&s, &fixtures().program).expect("a port of its own");

    let mut s = base();
    s.routers[0].entries[3].table = "RouterIngress.no_such_table".into();
    assert_eq!(error(&s).field, "routers[0].entries[3].table");

    let mut s = base();
    s.routers[0].entries[1].key = vec![serde_json::json!(5)];
    let e = error(&s);
    assert_eq!(e.field, "routers[0].entries[1].key[0]");
    assert!(e.message.contains("[value, prefix length]"), "{e}");

    let mut s = base();
    s.links[1].forward.queue_limit = Some(5); // r1 -> receiver: the router's entries say
    let e = error(&s);
    assert_eq!(e.field, "links[1].forward.queue_limit");
    assert!(e.message.contains("leaving router \"r1\""), "{e}");
    let mut s = base();
    s.links[0].forward.queue_limit = Some(5); // sender -> r1, copied to r1 -> sender
    let e = error(&s);
    assert_eq!(e.field, "links[0].forward.queue_limit");
    assert!(e.message.contains("copies `forward`"), "{e}");
    s.links[0].reverse = Some(s.links[1].reverse.clone().unwrap());
    Simulator::new(&s, &fixtures().program).unwrap();

    let mut s = base();
    s.flows[0].start_ns = S;
    assert_eq!(
        error(&s).to_string(),
        "flows[0].start_ns: expected a time before duration_ns (1000000000)"
    );

    let mut s = base();
    let again = s.routers[0].ports[0].clone();
    s.routers[0].ports.push(again);
    assert_eq!(error(&s).field, "routers[0].ports[2].port");

    let mut s = base();
    s.routers[0].ports[0].priority_queues = Some(9);
    assert_eq!(
        error(&s).to_string(),
        "routers[0].ports[0].priority_queues: invalid argument: 9 priority queues (1..=8)"
    );

    let mut s = base();
    s.links[1].a.port = None;
    assert_eq!(error(&s).field, "links[1].a.port");

    let mut s = base();
    s.flows
        .push(udp("u", "receiver", "sender", "gaussian", 1_000));
    assert_eq!(error(&s).field, "flows[1].udp.pattern");

    let mut s = base();
    s.flows[0].tcp = None;
    s.flows[0].rbcc = Some(ratelab_netsim::scenario::RbccSpec {
        rate_bps: 7,
        initial_rate_bps: None,
        size: None,
        segments: None,
        adopt_synack_rate: false,
    });
    let e = error(&s);
    assert_eq!(e.field, "flows[0].rbcc.rate_bps");
    assert!(e.message.starts_with("expected 8 to "), "{e}");

    let mut s = base();
    s.flows.push(udp("u", "receiver", "sender", "cbr", 1_000));
    s.flows[1].tcp = s.flows[0].tcp.clone();
    assert_eq!(
        error(&s).to_string(),
        "flows[1]: expected exactly one of `tcp`, `udp`, `rbcc` and `ping`"
    );

    let e = Scenario::from_json(
        "{\"duration_ns\": 5,\n \"hosts\": [], \"links\": [], \"speed\": 1}",
        "x.json",
    )
    .unwrap_err();
    assert!(e.field.starts_with("x.json:2:"), "{e}");
    assert!(e.message.contains("unknown field `speed`"), "{e}");
}

fn cli(args: &[&Path]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_ratelab-netsim"))
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn the_command_line_writes_the_results_and_rejects_bad_input_in_one_line() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("netsim-cli");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let router = dir.join("router.json");
    std::fs::write(&router, &fixtures().program).unwrap();
    let good = dir.join("good.json");
    let s = mixed_dumbbell(3);
    std::fs::write(&good, s.to_json()).unwrap();
    let out = dir.join("out");
    let o = cli(&[&good, &router, &out]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let stdout = String::from_utf8(o.stdout).unwrap();
    assert!(
        stdout.starts_with("reno sender -> receiver (tcp/reno): "),
        "{stdout}"
    );
    let expected = run(&s);
    let written = |n: &str| std::fs::read_to_string(out.join(n)).unwrap();
    assert_eq!(written("results.json"), expected.to_json());
    assert_eq!(written("flows.csv"), expected.flows_csv());
    assert_eq!(written("ports.csv"), expected.ports_csv());
    assert_eq!(written("drops.csv"), expected.drops_csv());
    assert_eq!(written("counters.csv"), expected.counters_csv());
    assert_eq!(written("queue.csv"), expected.queue_csv());

    let mut bad = s.clone();
    bad.links[0].reverse = Some(ratelab_netsim::scenario::DirectionSpec {
        rate_bps: 0,
        trace: None,
        delay_ns: 0,
        jitter_ns: 0,
        queue_limit: None,
    });
    let bad_file = dir.join("bad.json");
    std::fs::write(&bad_file, bad.to_json()).unwrap();
    let bad_out = dir.join("bad_out");
    let o = cli(&[&bad_file, &router, &bad_out]);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8(o.stderr).unwrap();
    assert_eq!(
        err,
        format!(
            "ratelab-netsim: {}: links[0].reverse.rate_bps: expected a rate above 0 bit/s, got 0\n",
            bad_file.display()
        )
    );
    assert!(!bad_out.exists());

    std::fs::write(&bad_file, "{\"duration_ns\": 1,").unwrap();
    let o = cli(&[&bad_file, &router, &bad_out]);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8(o.stderr).unwrap();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("bad.json:1:"), "{err}");
    assert!(!bad_out.exists());
}

fn rbcc(name: &str, from: &str, rate_bps: u64) -> FlowSpec {
    FlowSpec {
        port: None,
        name: name.into(),
        from: from.into(),
        to: "dst".into(),
        start_ns: 0,
        stop_ns: None,
        tcp: None,
        udp: None,
        rbcc: Some(ratelab_netsim::scenario::RbccSpec {
            rate_bps,
            initial_rate_bps: None,
            size: Some(1500),
            segments: None,
            adopt_synack_rate: false,
        }),
        ping: None,
    }
}

#[test]
fn rbcc_flows_get_the_bottleneck_routers_fair_share() {
    let s = three_routers(
        plans(&fixtures().three_routers),
        vec![
            rbcc("rbcc1", "src1", 8_000_000),
            rbcc("rbcc2", "src2", 8_000_000),
        ],
        6 * S,
    );
    let mut s = s;
    s.flows.iter_mut().for_each(|f| f.stop_ns = Some(5 * S));
    let r = run(&s);
    // r2 -> r3: 8 Mbit/s, utilisation 0.9: 900,000 B/s for RBCC, two flows.
    for f in &r.flows {
        let x = f.rbcc.as_ref().unwrap();
        assert_eq!(x.rate, 450_000, "{f:?}");
        assert_eq!(x.bottle_node, u32::from_be_bytes([10, 0, 0, 2]), "{f:?}");
        assert!(x.complete && x.lost == 0 && x.retransmissions == 0, "{f:?}");
        // 1,432 data bytes in every 1,500-byte packet at 450,000 B/s.
        let paced = 450_000.0 * 8.0 * 1432.0 / 1500.0;
        assert!((f.goodput_bps - paced).abs() < 0.03 * paced, "{f:?}");
    }
    assert!(r.drops.is_empty(), "{:?}", r.drops);
    let counter = |router: &str, port: u32, name: &str| {
        r.counters
            .iter()
            .find(|c| c.router == router && c.port == port && c.name == name)
            .map_or(0, |c| c.packets)
    };
    // At the bottleneck each RBCC packet is an ABT hit or an update; each
    // flow was inserted once and updated only while the shares settled.
    let rbcc_packets = counter("r2", 3, "rbcc_packets");
    assert!(rbcc_packets > 3000, "{rbcc_packets}");
    let updates = counter("r2", 3, "abt_updates");
    assert_eq!(counter("r2", 3, "abt_hits") + updates, rbcc_packets);
    assert_eq!(counter("r2", 3, "abt_inserts"), 2);
    assert!((2..=6).contains(&updates), "{:?}", r.counters);
}

#[test]
fn the_plan_tool_rejects_a_bad_topology_in_one_line_and_writes_nothing() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("netsim-plans");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let topology = dir.join("bad.yaml");
    std::fs::write(
        &topology,
        "duration: 1s\nrouters: {r1: {}}\nhosts: [a, b]\nlinks:\n  - {ends: [a, r9], rate: 1mbit}\n  - {ends: [r1, b], rate: 1mbit}\nflows: []\n",
    )
    .unwrap();
    let out = dir.join("plans.json");
    let python = python();
    let tool = repo().join("sim/netsim/tools/router_plans.py");
    let o = Command::new(&python)
        .arg(&tool)
        .arg(&topology)
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8(o.stderr).unwrap();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("bad.yaml:5:"), "{err}");
    assert!(!out.exists());
    let o = Command::new(&python)
        .arg(&tool)
        .arg(&topology)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn senders_stop_at_stop_ns_and_on_off_sources_pause() {
    let mut stopping = tcp("bulk", "sender", "receiver", "cubic", bulk());
    stopping.stop_ns = Some(S);
    let r = run(&dumbbell(
        plans(&fixtures().dumbbell),
        vec![stopping],
        8 * S,
    ));
    // TCP: what the application wrote by 1 s (up to its send buffer beyond
    // what was acknowledged) is delivered and acknowledged, then nothing more.
    let t = &r.flows[0];
    let tcp_result = t.tcp.as_ref().unwrap();
    assert!(t.bytes_received > 1 << 20, "{t:?}");
    assert!(t.bytes_received < 3 << 20, "{t:?}");
    assert_eq!(t.bytes_received, tcp_result.bytes_acked);
    assert_eq!(t.bytes_received, tcp_result.bytes_written);
    let on = run(&dumbbell(
        plans(&fixtures().dumbbell),
        vec![tcp("bulk", "sender", "receiver", "cubic", bulk())],
        8 * S,
    ));
    assert!(on.flows[0].bytes_received > 8 << 20, "{:?}", on.flows[0]);

    // UDP on-off: on a quarter of the time at 1 Mbit/s of 1500-byte packets
    // (83.3 a second while on): about 167 packets in 8 s, none lost. The run
    // ends just before the on period at 8 s (its first packet would be in flight).
    let mut onoff = udp("onoff", "sender", "receiver", "cbr", 1_000_000);
    let u = onoff.udp.as_mut().unwrap();
    (u.on_ns, u.off_ns) = (Some(100 * MS), Some(300 * MS));
    let r = run(&dumbbell(
        plans(&fixtures().dumbbell),
        vec![onoff],
        8 * S - MS,
    ));
    let o = r.flows[0].udp.as_ref().unwrap();
    assert!((150..=185).contains(&o.sent), "{o:?}");
    assert_eq!(o.received, o.sent);
}

#[test]
fn progress_is_reported_at_every_interval_and_changes_nothing() {
    let s = mixed_dumbbell(7);
    let mut seen = Vec::new();
    let with = Simulator::new(&s, &fixtures().program)
        .unwrap()
        .run_with_progress(S / 2, |t, events| seen.push((t, events)));
    let times: Vec<u64> = seen.iter().map(|p| p.0).collect();
    assert_eq!(times, (1..=6).map(|i| i * S / 2).collect::<Vec<_>>());
    assert!(seen.windows(2).all(|w| w[0].1 < w[1].1), "{seen:?}");
    assert_eq!(with.to_json(), run(&s).to_json());
}

fn ping(name: &str, from: &str, to: &str, interval_ns: u64, stop_ns: u64) -> FlowSpec {
    FlowSpec {
        port: None,
        tcp: None,
        udp: None,
        stop_ns: Some(stop_ns),
        ping: Some(ratelab_netsim::scenario::PingSpec {
            interval_ns,
            size: None,
        }),
        ..udp(name, from, to, "cbr", 1)
    }
}

#[test]
fn a_ping_is_answered_with_the_exact_round_trip() {
    let mut s = dumbbell(plans(&fixtures().dumbbell), vec![], S);
    s.routers.clear();
    s.links.truncate(1);
    s.links[0].b = ratelab_netsim::scenario::LinkEnd {
        node: "receiver".into(),
        port: None,
    };
    s.links[0].forward.rate_bps = 3_000_000;
    s.links[0].forward.delay_ns = 1_000_333;
    s.flows = vec![ping("p", "sender", "receiver", 100 * MS, 500 * MS)];
    let r = run(&s);
    let p = r.flows[0].ping.as_ref().unwrap();
    // 14 + 20 + 8 + 56 = 98 bytes at 3 Mbit/s: 261,333.3 ns, rounded up; each way.
    let rtt = 2 * (261_334 + 1_000_333);
    assert_eq!((p.sent, p.received), (5, 5));
    for (i, reply) in p.replies.iter().enumerate() {
        assert_eq!(reply.seq, i as u64);
        assert_eq!(reply.sent_ns, i as u64 * 100 * MS);
        assert_eq!(reply.rtt_ns, rtt);
    }
    assert_eq!(r.flows[0].transport, "ping");
}

#[test]
fn pings_cross_the_router_both_ways() {
    let flows = vec![ping("p", "sender", "receiver", 100 * MS, S)];
    let r = run(&dumbbell(plans(&fixtures().dumbbell), flows, S));
    let p = r.flows[0].ping.as_ref().unwrap();
    assert_eq!((p.sent, p.received), (10, 10));
    // 1 ms + 20 ms each way, the frames' serialization and the engine's µs on top
    assert!(p
        .replies
        .iter()
        .all(|x| (42 * MS..43 * MS).contains(&x.rtt_ns)));
    assert_eq!(port(&r, "r1", 1).rx_packets, 10);
    assert_eq!(port(&r, "r1", 2).rx_packets, 10);
    assert!(r.drops.is_empty(), "{:?}", r.drops);
}

#[test]
fn tcp_knobs_reach_the_stack_and_flows_are_sampled() {
    let mut f = tcp("t", "sender", "receiver", "cubic", bulk());
    let knobs = &mut f.tcp.as_mut().unwrap().knobs;
    knobs.iw = Some(3);
    knobs.hystart = Some(true);
    knobs.rto_formula = Some("linux".into());
    let mut s = dumbbell(plans(&fixtures().dumbbell), vec![f], S);
    s.sample = Some(SampleSpec {
        interval_ns: 100 * MS,
        registers: vec![],
        queues: true,
        flows: true,
    });
    let r = run(&s);
    // The flow starts at 0, before the first sample: its initial window.
    assert_eq!(r.flow_samples.len(), 11);
    assert_eq!(r.flow_samples[0].cwnd, Some(3));
    assert!(r
        .flow_samples
        .iter()
        .all(|x| x.flow == "t" && x.rate.is_none()));
    assert!(r.flow_samples[10].srtt_ns.is_some_and(|t| t > 42 * MS));
    // Nothing sent or acked at 0 (the SYN is not data); then the acked bytes
    // only grow, up to the flow's total, with data in flight on the way.
    assert_eq!(
        (r.flow_samples[0].in_flight, r.flow_samples[0].delivered),
        (Some(0), Some(0))
    );
    let delivered: Vec<u64> = r
        .flow_samples
        .iter()
        .map(|x| x.delivered.unwrap())
        .collect();
    assert!(delivered.windows(2).all(|w| w[0] <= w[1]), "{delivered:?}");
    let acked = r.flows[0].tcp.as_ref().unwrap().bytes_acked;
    assert!(delivered[10] > 0 && delivered[10] <= acked);
    assert!(r.flow_samples.iter().any(|x| x.in_flight > Some(0)));
    s.flows[0].tcp.as_mut().unwrap().knobs.rto_formula = Some("bsd".into());
    let e = error(&s);
    assert_eq!(e.field, "flows[0].tcp.knobs.rto_formula");
    assert_eq!(e.message, "expected rfc6298 or linux, got \"bsd\"");
}

#[test]
fn quickack_knob_acks_every_segment_while_the_window_grows() {
    // (data segments r1 passed on to the receiver, ACKs back from it)
    let counts = |quickack| {
        let mut f = tcp("t", "sender", "receiver", "cubic", bulk());
        f.tcp.as_mut().unwrap().knobs.quickack = quickack;
        let r = run(&dumbbell(plans(&fixtures().dumbbell), vec![f], S));
        (port(&r, "r1", 2).tx_packets, port(&r, "r1", 2).rx_packets)
    };
    // 1 s at 10 Mbit/s, under 900 segments: Linux's receiver window
    // threshold is still growing towards the 4 MiB buffer, every segment
    // is ACKed; without, every second one (749 and 747 segments, 715 and
    // 529 ACKs)
    let (data, acks) = counts(Some(true));
    assert!(acks * 10 >= data * 9, "{acks} ACKs for {data} segments");
    // (the losses' out-of-order segments are ACKed at once too)
    let (data, acks) = counts(None);
    assert!(acks * 4 <= data * 3, "{acks} ACKs for {data} segments");
}

#[test]
fn send_buffer_knob_reaches_the_stack_and_written_bytes_are_sampled() {
    let sampled = |knob: Option<SendBufferKnob>| {
        let mut f = tcp("t", "sender", "receiver", "newreno", bulk());
        f.tcp.as_mut().unwrap().knobs.send_buffer = knob;
        let mut s = dumbbell(plans(&fixtures().dumbbell), vec![f], S);
        s.sample = Some(SampleSpec {
            interval_ns: 100 * MS,
            registers: vec![],
            queues: false,
            flows: true,
        });
        (run(&s), s)
    };
    // After the handshake (the RTT is 42 ms) the application has filled what
    // the buffer takes: the initial window's 87,040 bytes auto-tuned, all of
    // a fixed 100 kB.
    let queued = |r: &Results, i: usize| {
        let x = &r.flow_samples[i];
        x.written.unwrap() - x.delivered.unwrap()
    };
    let (auto, _) = sampled(None);
    assert_eq!(queued(&auto, 1), 87_040);
    let (same, _) = sampled(Some(SendBufferKnob::Policy("auto".into())));
    assert_eq!(same.flow_samples, auto.flow_samples);
    let (fixed, mut s) = sampled(Some(SendBufferKnob::Bytes(100_000)));
    assert_eq!(queued(&fixed, 1), 100_000);
    // Written bytes only grow, stay ahead of the acknowledged ones by at most
    // the buffer, and end at the flow's total.
    let written: Vec<u64> = fixed
        .flow_samples
        .iter()
        .map(|x| x.written.unwrap())
        .collect();
    assert!(written.windows(2).all(|w| w[0] <= w[1]), "{written:?}");
    for x in &fixed.flow_samples {
        let (w, d) = (x.written.unwrap(), x.delivered.unwrap());
        assert!(w >= d && w - d <= 100_000, "{x:?}");
    }
    let t = fixed.flows[0].tcp.as_ref().unwrap();
    assert!(t.bytes_written >= *written.last().unwrap() && t.bytes_written >= t.bytes_acked);
    assert!(fixed.flow_samples_csv().starts_with(
        "time_ns,flow,cwnd,ssthresh,srtt_ns,rate,return_rate,bottle_node,in_flight,delivered,written\n"
    ));
    // Bad values name the field.
    s.flows[0].tcp.as_mut().unwrap().knobs.send_buffer = Some(SendBufferKnob::Policy("big".into()));
    let e = error(&s);
    assert_eq!(e.field, "flows[0].tcp.knobs.send_buffer");
    assert_eq!(
        e.message,
        "expected \"auto\" or a size in bytes, got \"big\""
    );
    s.flows[0].tcp.as_mut().unwrap().knobs.send_buffer = Some(SendBufferKnob::Bytes(100));
    let e = error(&s);
    assert_eq!(e.field, "flows[0].tcp.send_buffer");
    assert!(e.message.starts_with("must be 2*mss"), "{e}");
}
