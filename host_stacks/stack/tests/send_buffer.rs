//! The send buffer's policy: Linux-like autotuning and a fixed size.

use ratelab_stack::app::{Application, Bulk, Sink, Transfer};
use ratelab_stack::metrics::FlowMeter;
use ratelab_stack::tcp::{auto_size, segment_memory, Config, Connection, SendBufferPolicy};
use ratelab_stack::testbed::{LinkConfig, Testbed, A, B};
use ratelab_stack::{Nanos, MILLIS, SECONDS};

/// 20 Mb/s, 20 ms one way, a 100-packet queue (BDP 66 segments).
fn link() -> LinkConfig {
    LinkConfig {
        delay: 20 * MILLIS,
        rate_bps: 20_000_000,
        queue: 100,
        ..LinkConfig::default()
    }
}

fn policy(p: SendBufferPolicy, bytes: usize) -> Config {
    Config {
        send_buffer_policy: p,
        send_buffer: bytes,
        ..Config::default()
    }
}

/// What a bulk run saw: the limits the buffer took (in order), the largest
/// congestion window in segments, the largest queue, goodput, the app's
/// and the stack's written bytes, the sink's mean one-way delay.
struct BulkRun {
    limits: Vec<usize>,
    max_cwnd: u64,
    max_queued: usize,
    goodput_bps: f64,
    app_written: u64,
    stack_written: u64,
    acked: u64,
    owd_mean: f64,
}

fn bulk(cfg: Config, until: Nanos) -> BulkRun {
    let mut tb = Testbed::with_config(cfg, link(), link()).unwrap();
    let mut app = Bulk::new(1448);
    let mut sink = Sink::new(false);
    let mut meter = FlowMeter::new(false);
    let (mut limits, mut max_cwnd, mut max_queued) = (vec![], 0, 0);
    tb.run_until(until, &mut |now, a: &mut Connection, b: &mut Connection| {
        app.poll(now, a);
        sink.poll(now, b);
        meter.observe(now, a);
        if limits.last() != Some(&a.send_buffer_limit()) {
            limits.push(a.send_buffer_limit());
        }
        if a.is_established() {
            max_cwnd = max_cwnd.max(a.cwnd() / a.smss());
        }
        max_queued = max_queued.max(a.send_queue());
        None
    });
    BulkRun {
        limits,
        max_cwnd,
        max_queued,
        goodput_bps: meter.summary(&tb.a).goodput_bps,
        app_written: app.bytes_written(),
        stack_written: tb.a.stats().bytes_written,
        acked: tb.a.stats().bytes_acked,
        owd_mean: sink.delay.mean().unwrap(),
    }
}

#[test]
fn auto_starts_at_16_kib_and_grows_with_the_window() {
    let r = bulk(Config::default(), 10 * SECONDS);
    let per_segment = 2 * segment_memory(1448) as usize;
    // 16 KiB before the handshake, the initial window's 87,040 bytes after it.
    assert_eq!(r.limits[0], 16_384, "{:?}", r.limits);
    assert_eq!(r.limits[1], auto_size(1448, 10) as usize, "{:?}", r.limits);
    // Slow start outgrows it (once the window holds all of it), and the
    // buffer then holds several windows: it grows no more.
    assert!(r.limits.len() >= 3, "it grew: {:?}", r.limits);
    // Never shrinks; each size is 2 x a window the flow had, in Linux's memory.
    assert!(r.limits.windows(2).all(|w| w[0] < w[1]), "{:?}", r.limits);
    for &l in &r.limits[1..] {
        assert_eq!(l % per_segment, 0, "{l}");
        let segments = (l / per_segment) as u64;
        assert!(
            (10..=r.max_cwnd.max(10)).contains(&segments),
            "{l} vs cwnd {}",
            r.max_cwnd
        );
    }
    assert!(r.max_queued <= *r.limits.last().unwrap());
    // Every byte the application wrote was counted.
    assert_eq!(r.app_written, r.stack_written);
    assert!(r.stack_written >= r.acked);
}

#[test]
fn bulk_goodput_is_the_same_and_the_buffer_delay_much_smaller() {
    let auto = bulk(Config::default(), 10 * SECONDS);
    let fixed = bulk(policy(SendBufferPolicy::Fixed, 4 << 20), 10 * SECONDS);
    assert!(
        (auto.goodput_bps - fixed.goodput_bps).abs() / fixed.goodput_bps < 0.01,
        "the buffer never starves the sender: {} vs {}",
        auto.goodput_bps,
        fixed.goodput_bps
    );
    // A fixed 4 MiB buffer fills up (about 1.7 s at 19 Mb/s); the auto-tuned
    // one holds a few windows.
    assert!(fixed.max_queued == 4 << 20, "{}", fixed.max_queued);
    assert!(auto.max_queued < 2 << 20, "{}", auto.max_queued);
    assert!(
        auto.owd_mean < fixed.owd_mean / 3.0,
        "{} vs {}",
        auto.owd_mean,
        fixed.owd_mean
    );
    assert!(
        auto.owd_mean > 20e6,
        "propagation at least: {}",
        auto.owd_mean
    );
}

#[test]
fn auto_never_passes_its_cap() {
    let r = bulk(policy(SendBufferPolicy::Auto, 200_000), 5 * SECONDS);
    assert_eq!(r.limits[0], 16_384);
    assert_eq!(*r.limits.last().unwrap(), 200_000, "{:?}", r.limits);
    assert!(r.max_queued <= 200_000);
    // A cap below tcp_wmem's default is the buffer from the start.
    let small = bulk(policy(SendBufferPolicy::Auto, 8_000), SECONDS);
    assert_eq!(small.limits, vec![8_000]);
    assert!(small.goodput_bps > 0.0);
}

#[test]
fn a_fixed_size_is_honoured() {
    let cfg = policy(SendBufferPolicy::Fixed, 100_000);
    let mut c = Connection::connect(cfg.clone(), A, B, 1, 0).unwrap();
    assert_eq!(c.send_capacity(), 100_000);
    let data = vec![7u8; 150_000];
    assert_eq!(c.send(&data), 100_000, "only what fits is taken");
    assert_eq!(c.send(&data), 0);
    assert_eq!(c.stats().bytes_written, 100_000);
    let r = bulk(cfg, 5 * SECONDS);
    assert_eq!(r.limits, vec![100_000]);
    assert_eq!(r.max_queued, 100_000);
}

#[test]
fn auto_takes_16_kib_before_the_handshake() {
    let mut c = Connection::connect(Config::default(), A, B, 1, 0).unwrap();
    assert_eq!(c.send(&[1u8; 20_000]), 16_384);
    assert_eq!(c.send_capacity(), 0);
}

#[test]
fn no_written_byte_is_lost() {
    // 3 MB through a buffer that starts at 16 KiB and is capped at 50 kB:
    // every write the buffer took arrives, in order, framed.
    for cfg in [
        policy(SendBufferPolicy::Auto, 50_000),
        Config::default(),
        policy(SendBufferPolicy::Fixed, 3000),
    ] {
        let total = 3_000_000;
        let mut tb = Testbed::with_config(cfg, link(), link()).unwrap();
        let mut app = Transfer::bytes(total, 1448);
        let mut sink = Sink::new(false);
        tb.run_until(
            60 * SECONDS,
            &mut |now, a: &mut Connection, b: &mut Connection| {
                app.poll(now, a);
                sink.poll(now, b);
                None
            },
        );
        assert!(app.is_done());
        assert_eq!(sink.bytes, total);
        assert_eq!(sink.framing_errors, 0);
        assert_eq!(tb.a.stats().bytes_written, total);
        assert_eq!(tb.a.stats().bytes_acked, total);
    }
}
