//! Vegas's slow start on the ns-3 comparison's dumbbell (bench/ns3): it must
//! leave slow start on the queue it builds, before the queue overflows.

use ratelab_stack::app::{Application, Bulk, Sink};
use ratelab_stack::cc::{CcKind, VegasParams};
use ratelab_stack::tcp::{Config, Connection};
use ratelab_stack::testbed::{LinkConfig, Testbed};
use ratelab_stack::{Nanos, MILLIS, SECONDS};

/// 20 Mbit/s, 42.1 ms base RTT, 100 packets of queue: 72 segments' BDP.
fn dumbbell(delayed_ack: bool, iss: u32, rate_bps: u64) -> Testbed {
    let forward = LinkConfig {
        delay: 21 * MILLIS + 120_000,
        rate_bps,
        queue: 101,
        ..LinkConfig::default()
    };
    let reverse = LinkConfig {
        delay: 21 * MILLIS,
        rate_bps: 20_000_000,
        ..LinkConfig::default()
    };
    let cfg = Config {
        cc: CcKind::Vegas(VegasParams::default()),
        delayed_ack: if delayed_ack {
            Config::default().delayed_ack
        } else {
            None
        },
        ..Config::default()
    };
    Testbed::with_iss(cfg.clone(), cfg, forward, reverse, iss).unwrap()
}

struct Run {
    /// When ssthresh was first set, and the window then (segments).
    exit: Option<(Nanos, u64)>,
    /// Largest queue (packets) before and after the exit.
    queue_before_exit: usize,
    max_window: u64,
    drops: u64,
    /// Mean queue over the last 5 s.
    settled_queue: f64,
    goodput_bps: f64,
}

fn run(delayed_ack: bool, iss: u32, rate_bps: u64) -> Run {
    let mut tb = dumbbell(delayed_ack, iss, rate_bps);
    let (mut bulk, mut sink) = (Bulk::new(1448), Sink::new(false));
    let mut r = Run {
        exit: None,
        queue_before_exit: 0,
        max_window: 0,
        drops: 0,
        settled_queue: 0.0,
        goodput_bps: 0.0,
    };
    let (mut queue_sum, mut samples, mut acked_at_10s) = (0usize, 0usize, 0);
    let mut t = 0;
    while t < 15 * SECONDS {
        t += MILLIS;
        tb.run_until(t, &mut |now, a: &mut Connection, b: &mut Connection| {
            bulk.poll(now, a);
            sink.poll(now, b);
            None
        });
        let smss = tb.a.smss();
        r.max_window = r.max_window.max(tb.a.cwnd() / smss);
        if r.exit.is_none() {
            r.queue_before_exit = r.queue_before_exit.max(tb.queue_ab());
            if tb.a.ssthresh() != u64::MAX {
                r.exit = Some((t, tb.a.cwnd() / smss));
            }
        }
        if t > 10 * SECONDS {
            queue_sum += tb.queue_ab();
            samples += 1;
        } else if t == 10 * SECONDS {
            acked_at_10s = tb.a.stats().bytes_acked;
        }
    }
    r.drops = tb.link_stats().0.queue_drops;
    r.settled_queue = queue_sum as f64 / samples as f64;
    r.goodput_bps = (tb.a.stats().bytes_acked - acked_at_10s) as f64 * 8.0 / 5.0;
    r
}

#[test]
fn vegas_leaves_slow_start_before_the_queue_overflows() {
    for delayed_ack in [true, false] {
        for iss in [1, 3_000_000_000] {
            let r = run(delayed_ack, iss, 20_000_000);
            let what = format!("delayed ACKs {delayed_ack}, ISS {iss}");
            let (at, window) = r
                .exit
                .unwrap_or_else(|| panic!("{what}: never left slow start"));
            eprintln!(
                "{what}: exit at {} ms with {window} segments, queue before {}, max window {}, drops {}, settled queue {:.1}, goodput {:.2} Mbit/s",
                at / MILLIS,
                r.queue_before_exit,
                r.max_window,
                r.drops,
                r.settled_queue,
                r.goodput_bps / 1e6
            );
            assert_eq!(r.drops, 0, "{what}: no drops");
            assert!(at < SECONDS, "{what}: exit at {at} ns");
            assert!(
                r.queue_before_exit <= 90,
                "{what}: queue {}",
                r.queue_before_exit
            );
            assert!((60..=90).contains(&window), "{what}: exit window {window}");
            assert!(
                r.settled_queue < 6.0,
                "{what}: settled queue {}",
                r.settled_queue
            );
            assert!(r.goodput_bps > 18e6, "{what}: goodput {}", r.goodput_bps);
        }
    }
}

#[test]
fn vegas_exits_near_the_path_window_on_other_rates() {
    for rate in [5_000_000u64, 10_000_000, 15_000_000, 25_000_000] {
        // Segments the path holds: rate * base RTT / 1520 bytes on the wire.
        let bdp = (rate as f64 * 0.0423 / (1520.0 * 8.0)) as u64;
        for delayed_ack in [true, false] {
            let r = run(delayed_ack, 1, rate);
            let what = format!("{rate} bit/s, delayed ACKs {delayed_ack}");
            let (_, window) = r
                .exit
                .unwrap_or_else(|| panic!("{what}: never left slow start"));
            assert_eq!(r.drops, 0, "{what}: no drops");
            assert!(
                window >= bdp && window <= bdp + bdp / 10 + 3,
                "{what}: exit window {window}, path {bdp}"
            );
            assert!(
                r.settled_queue < 6.0,
                "{what}: settled queue {}",
                r.settled_queue
            );
            assert!(
                r.goodput_bps > 0.93 * rate as f64,
                "{what}: goodput {}",
                r.goodput_bps
            );
        }
    }
}
