//! HyStart++ (RFC 9406) on the testbed dumbbell: the initial slow start of
//! Reno, NewReno and Cubic ends on the RTT rise, before the queue overflows.

use ratelab_stack::app::{Application, Bulk, Sink};
use ratelab_stack::cc::{CcKind, CubicParams};
use ratelab_stack::tcp::{Config, Connection};
use ratelab_stack::testbed::{LinkConfig, Testbed};
use ratelab_stack::{MILLIS, SECONDS};

/// 20 Mbit/s, 42 ms base RTT, 100 packets of queue (72 segments' BDP).
fn link(queue: usize) -> LinkConfig {
    LinkConfig {
        delay: 21 * MILLIS,
        rate_bps: 20_000_000,
        queue,
        ..LinkConfig::default()
    }
}

struct Run {
    /// cwnd (segments) when ssthresh was first set, and the drops by then.
    exit: Option<(u64, u64)>,
    drops: u64,
    goodput_bps: f64,
}

fn run(cc: CcKind, hystart: bool, delayed_ack: bool, queue: usize) -> Run {
    let cfg = Config {
        cc,
        hystart,
        delayed_ack: if delayed_ack {
            Config::default().delayed_ack
        } else {
            None
        },
        ..Config::default()
    };
    let mut tb = Testbed::with_config(cfg, link(queue), link(0)).unwrap();
    let (mut bulk, mut sink) = (Bulk::new(1448), Sink::new(false));
    let mut exit = None;
    let mut t = 0;
    while t < 10 * SECONDS {
        t += MILLIS;
        tb.run_until(t, &mut |now, a: &mut Connection, b: &mut Connection| {
            bulk.poll(now, a);
            sink.poll(now, b);
            None
        });
        if exit.is_none() && tb.a.ssthresh() != u64::MAX {
            exit = Some((tb.a.cwnd() / tb.a.smss(), tb.link_stats().0.queue_drops));
        }
    }
    Run {
        exit,
        drops: tb.link_stats().0.queue_drops,
        goodput_bps: tb.a.stats().bytes_acked as f64 * 8.0 / 10.0,
    }
}

fn algorithms() -> [CcKind; 3] {
    [
        CcKind::Reno,
        CcKind::NewReno,
        CcKind::Cubic(CubicParams::default()),
    ]
}

#[test]
fn without_a_queue_limit_hystart_leaves_slow_start_on_the_rtt_rise() {
    for cc in algorithms() {
        for delayed_ack in [true, false] {
            let what = format!("{cc:?}, delayed ACKs {delayed_ack}");
            // Standard slow start never ends: nothing is lost.
            let off = run(cc, false, delayed_ack, 0);
            assert_eq!(off.exit, None, "{what}");
            // HyStart++: CSS after the RTT rose, then congestion avoidance
            // with ssthresh = cwnd, no loss.
            let on = run(cc, true, delayed_ack, 0);
            let (window, drops) = on.exit.unwrap_or_else(|| panic!("{what}: never left"));
            assert_eq!((drops, on.drops), (0, 0), "{what}");
            // The path holds 72 segments; the RTT rise shows one to two
            // doublings past it (at most ~300), and CSS's five rounds grow
            // by at most a quarter each: 300 * 1.25^5 = 916.
            assert!(
                (144..=916).contains(&window),
                "{what}: exit window {window}"
            );
            assert!(on.goodput_bps > 18e6, "{what}: {}", on.goodput_bps);
        }
    }
}

#[test]
fn on_the_dumbbell_hystart_loses_less_in_slow_start() {
    for cc in algorithms() {
        for delayed_ack in [true, false] {
            let what = format!("{cc:?}, delayed ACKs {delayed_ack}");
            let (off, on) = (
                run(cc, false, delayed_ack, 101),
                run(cc, true, delayed_ack, 101),
            );
            let lost = |r: &Run| r.exit.expect("a loss ends slow start").1;
            eprintln!(
                "{what}: slow-start drops {} without HyStart++, {} with",
                lost(&off),
                lost(&on)
            );
            assert!(lost(&off) > 150, "{what}: {}", lost(&off));
            // The RTT rise shows a round after the window passed the path
            // (72 segments): with delayed ACKs the doubling to ~150 has
            // begun; ACKing every segment, CSS starts before it ends.
            let most = if delayed_ack {
                lost(&off) * 9 / 10
            } else {
                lost(&off) / 3
            };
            assert!(lost(&on) < most, "{what}: {} vs {}", lost(&on), lost(&off));
            assert!(on.goodput_bps > 0.99 * off.goodput_bps, "{what}");
        }
    }
}
