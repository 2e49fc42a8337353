//! Applications and per-flow measurements over the testbed.

use ratelab_stack::app::{Application, Bulk, OnOff, Sink, Stream, Transfer, MESSAGE_HEADER};
use ratelab_stack::cc::{CcKind, CubicParams, VegasParams};
use ratelab_stack::metrics::FlowMeter;
use ratelab_stack::tcp::{Config, Connection};
use ratelab_stack::testbed::{LinkConfig, Testbed};
use ratelab_stack::{Nanos, MILLIS, SECONDS};

/// 20 Mb/s, 20 ms one way, a 100-packet queue.
fn link() -> LinkConfig {
    LinkConfig {
        delay: 20 * MILLIS,
        rate_bps: 20_000_000,
        queue: 100,
        ..LinkConfig::default()
    }
}

struct Run<S: Application> {
    tb: Testbed,
    sender: S,
    sink: Sink,
    meter: FlowMeter,
}

fn run<S: Application>(cfg: Config, sender: S, until: Nanos) -> Run<S> {
    let mut tb = Testbed::with_config(cfg, link(), link()).unwrap();
    let mut sender = sender;
    let mut sink = Sink::new(true);
    let mut meter = FlowMeter::new(true);
    tb.run_until(until, &mut |now, a: &mut Connection, b: &mut Connection| {
        sender.poll(now, a);
        sink.poll(now, b);
        meter.observe(now, a);
        sender.poll_at()
    });
    Run {
        tb,
        sender,
        sink,
        meter,
    }
}

#[test]
fn bulk_saturates_the_link_and_measures() {
    let r = run(Config::default(), Bulk::new(1448), 10 * SECONDS);
    let s = r.meter.summary(&r.tb.a);
    // 1448 of 1520 bytes on the wire are payload: at most 19 Mb/s of goodput.
    assert!(s.goodput_bps > 15e6 && s.goodput_bps < 19.1e6, "{s:?}");
    let sink_goodput = r.sink.goodput_bps().unwrap();
    assert!(
        (sink_goodput - s.goodput_bps).abs() / s.goodput_bps < 0.1,
        "{sink_goodput} vs {}",
        s.goodput_bps
    );
    // Drop-tail losses: saw-tooth with several ssthresh changes.
    assert!(s.ssthresh_changes >= 2 && s.retransmissions > 0, "{s:?}");
    assert!(r.meter.window.len() > 100);
    assert!(r.meter.window.iter().any(|w| w.ssthresh != u64::MAX));
    assert_eq!(
        r.meter.rtt_samples.len() as u64,
        s.rtt_samples,
        "one sample at most per event"
    );
    // One-way delay at the application: 20 ms propagation at least; a bulk
    // sender's messages also wait in its auto-tuned send buffer (about 0.5 MB
    // after slow start: 0.2 s at 19 Mb/s; tests/send_buffer.rs).
    let mean = r.sink.delay.mean().unwrap();
    assert!(r.sink.delay.min >= 20 * MILLIS, "{:?}", r.sink.delay);
    assert!(
        mean > 0.1e9 && mean < 0.5e9 && r.sink.delay.max < SECONDS,
        "{:?}",
        r.sink.delay
    );
    assert_eq!(r.sink.framing_errors, 0);
    assert!(
        s.delivery_rate > 1_500_000 && s.delivery_rate < 2_600_000,
        "bytes/s {}",
        s.delivery_rate
    );
}

#[test]
fn transfer_of_1500_packets_completes_and_closes() {
    let r = run(
        Config::default(),
        Transfer::packets(1500, 1448),
        60 * SECONDS,
    );
    assert!(r.sender.is_done());
    let fct = r.sender.completion_time().unwrap();
    // 2.17 MB at 19 Mb/s is about 0.92 s, plus slow start.
    assert!(fct > 900 * MILLIS && fct < 3 * SECONDS, "fct {fct}");
    assert_eq!(r.sink.bytes, 1500 * 1448);
    assert_eq!(r.sink.messages, 1500);
    assert!(r.sink.closed);
    assert_eq!(r.tb.b.state(), ratelab_stack::tcp::State::Closed);
}

#[test]
fn transfer_with_a_short_last_message() {
    let r = run(
        Config::default(),
        Transfer::bytes(180_000, 1448),
        60 * SECONDS,
    );
    assert_eq!(r.sink.bytes, 180_000);
    // 124 messages of 1448 = 179,552, the last takes the remaining 448.
    assert_eq!(r.sink.messages, 125);
    assert!(r.sender.is_done());
    let tiny = run(Config::default(), Transfer::bytes(5, 1448), 10 * SECONDS);
    assert_eq!(
        tiny.sink.bytes, MESSAGE_HEADER as u64,
        "a message is at least its header"
    );
}

#[test]
fn stream_sends_at_its_rate() {
    let rate = 2_000_000;
    let r = run(Config::default(), Stream::new(rate, 1000), 10 * SECONDS);
    let got = r.sink.bytes as f64 * 8.0 / 10.0;
    assert!((got - rate as f64).abs() / (rate as f64) < 0.03, "{got}");
    assert_eq!(
        r.tb.a.stats().retransmissions,
        0,
        "application-limited: no queue build-up"
    );
    // Unloaded path: one-way delay is propagation plus serialization of one packet.
    assert!(r.sink.delay.max < 25 * MILLIS, "{:?}", r.sink.delay);
}

#[test]
fn on_off_is_silent_while_off() {
    let cfg = Config::default();
    let mut tb = Testbed::with_config(cfg, link(), link()).unwrap();
    let mut app = OnOff::new(SECONDS, 5 * SECONDS, 1448);
    let mut sink = Sink::new(false);
    // Bytes the sender had written at each second.
    let mut written = vec![];
    let mut next = SECONDS;
    tb.run_until(
        13 * SECONDS,
        &mut |now, a: &mut Connection, b: &mut Connection| {
            app.poll(now, a);
            sink.poll(now, b);
            while now >= next {
                written.push(app.bytes_written());
                next += SECONDS;
            }
            [app.poll_at(), Some(next)].into_iter().flatten().min()
        },
    );
    // On during [0.02, 1.02) and [6.02, 7.02) and [12.02, ...): the writes
    // stop after 1 s and start again at 6 s.
    assert!(written[0] > 0);
    assert_eq!(written[1], written[5], "idle from 1 s to 6 s: {written:?}");
    assert!(written[6] > written[5]);
    assert_eq!(written[7], written[11]);
    // Idle longer than the RTO: the window restarts (RFC 5681 §4.1), so the
    // second burst starts from the initial window again.
    assert!(sink.bytes > 0);
}

#[test]
fn vegas_keeps_the_queue_short_where_reno_fills_it() {
    // Mean queue over 5..15 s (after slow start), goodput, drops.
    let measure_iss = |cc: CcKind, iss: u32| {
        let cfg = Config {
            cc,
            ..Config::default()
        };
        let mut tb = Testbed::with_iss(cfg.clone(), cfg, link(), link(), iss).unwrap();
        let mut bulk = Bulk::new(1448);
        let mut sink = Sink::new(false);
        let mut step = |now, a: &mut Connection, b: &mut Connection| {
            bulk.poll(now, a);
            sink.poll(now, b);
            None
        };
        tb.run_until(5 * SECONDS, &mut step);
        let (before, _) = tb.link_stats();
        let acked = tb.a.stats().bytes_acked;
        tb.run_until(15 * SECONDS, &mut step);
        let (after, _) = tb.link_stats();
        let mean =
            (after.queue_sum - before.queue_sum) as f64 / (after.offered - before.offered) as f64;
        let goodput = (tb.a.stats().bytes_acked - acked) as f64 * 8.0 / 10.0;
        (mean, goodput, after.queue_drops - before.queue_drops)
    };
    let measure = |cc: CcKind| measure_iss(cc, 0x1000_0000);
    let (q_reno, g_reno, drops_reno) = measure(CcKind::Reno);
    let (q_vegas, g_vegas, drops_vegas) = measure(CcKind::Vegas(VegasParams::default()));
    let (q_cubic, _, _) = measure(CcKind::Cubic(CubicParams::default()));
    assert!(q_reno > 30.0, "Reno fills the queue: mean {q_reno}");
    assert!(q_cubic > 30.0, "Cubic too: mean {q_cubic}");
    assert!(
        q_vegas < 6.0,
        "Vegas keeps a few packets (alpha 2 to beta 4): mean {q_vegas}"
    );
    assert!(
        drops_reno > 0 && drops_vegas == 0,
        "{drops_reno} {drops_vegas}"
    );
    assert!(
        g_vegas > 0.95 * g_reno,
        "without losing goodput: {g_vegas} vs {g_reno}"
    );
    // The same above 2^31 and across the wrap of the sequence space.
    for iss in [3_000_000_000, u32::MAX - 20_000] {
        let (q, g, drops) = measure_iss(CcKind::Vegas(VegasParams::default()), iss);
        assert!(
            q < 6.0 && drops == 0 && g > 0.95 * g_reno,
            "ISS {iss}: mean queue {q}, drops {drops}, goodput {g}"
        );
    }
}
