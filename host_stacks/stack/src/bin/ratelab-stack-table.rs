//! A regression table from the testbed: one bulk flow per algorithm on the
//! same path (20 Mb/s, 20 ms each way, 100-packet drop-tail queue, optional
//! random loss), 30 s of simulated time. Deterministic: the same build
//! prints the same table.
//!
//! Usage: `ratelab-stack-table [LOSS]` (LOSS: probability per packet, default 0).

use ratelab_stack::app::{Application, Bulk, Sink};
use ratelab_stack::cc::{CcKind, CubicParams, VegasParams};
use ratelab_stack::metrics::FlowMeter;
use ratelab_stack::tcp::{Config, Connection};
use ratelab_stack::testbed::{LinkConfig, Testbed};
use ratelab_stack::{MILLIS, SECONDS};

fn main() {
    let loss: f64 = match std::env::args().nth(1).map(|s| s.parse::<f64>()) {
        None => 0.0,
        Some(Ok(p)) if (0.0..1.0).contains(&p) => p,
        Some(_) => {
            eprintln!("ratelab-stack-table: LOSS must be a probability in [0, 1)");
            std::process::exit(2);
        }
    };
    let link = |seed| LinkConfig {
        delay: 20 * MILLIS,
        rate_bps: 20_000_000,
        queue: 100,
        loss,
        seed,
        ..LinkConfig::default()
    };
    let rows: Vec<(&str, Config)> = vec![
        (
            "reno",
            Config {
                cc: CcKind::Reno,
                ..Config::default()
            },
        ),
        ("newreno", Config::default()),
        (
            "newreno+prr",
            Config {
                prr: true,
                ..Config::default()
            },
        ),
        (
            "newreno, no SACK",
            Config {
                sack: false,
                ..Config::default()
            },
        ),
        (
            "cubic",
            Config {
                cc: CcKind::Cubic(CubicParams::default()),
                ..Config::default()
            },
        ),
        (
            "vegas",
            Config {
                cc: CcKind::Vegas(VegasParams::default()),
                ..Config::default()
            },
        ),
    ];
    println!("bulk flow, 20 Mb/s, 40 ms RTT, 100-packet queue, loss {loss}, 30 s simulated");
    println!(
        "{:<18} {:>9} {:>10} {:>7} {:>7} {:>6} {:>6} {:>10} {:>9}",
        "algorithm", "goodput", "mean queue", "drops", "retx", "RTOs", "ssth.", "srtt", "sim time"
    );
    for (name, cfg) in rows {
        let mut tb = Testbed::with_config(cfg, link(1), link(2)).expect("valid config");
        let mut bulk = Bulk::new(1448);
        let mut sink = Sink::new(false);
        let mut meter = FlowMeter::new(false);
        let t0 = std::time::Instant::now();
        tb.run_until(
            30 * SECONDS,
            &mut |now, a: &mut Connection, b: &mut Connection| {
                bulk.poll(now, a);
                sink.poll(now, b);
                meter.observe(now, a);
                None
            },
        );
        let s = meter.summary(&tb.a);
        let (ab, _) = tb.link_stats();
        println!(
            "{:<18} {:>6.2} Mb {:>8.1} p {:>7} {:>7} {:>6} {:>6} {:>7.1} ms {:>7.2} s",
            name,
            s.goodput_bps / 1e6,
            ab.queue_sum as f64 / ab.offered.max(1) as f64,
            ab.queue_drops + ab.random_drops,
            s.retransmissions,
            s.rtos,
            s.ssthresh_changes,
            s.srtt.unwrap_or(0) as f64 / 1e6,
            t0.elapsed().as_secs_f64()
        );
    }
}
