//! CPU per data packet of the TCP state machine: two endpoints in memory,
//! one thread, bulk transfer of 1448-byte segments. Each data packet costs
//! the sender's emit (header, checksum, copy from the send buffer), the
//! receiver's parse/verify and copy into its buffer, and the sender's ACK
//! processing (one ACK per two segments with delayed ACKs, one per segment
//! without). Also the same transfer through the testbed simulator (event
//! heap, link model), for the overhead a simulator adds.
//!
//! Usage: `ratelab-stack-bench [RESULTS_FILE] [PACKETS]`. Prints a table
//! and, when RESULTS_FILE is given, writes the same lines there.

use ratelab_stack::cc::{CcKind, CubicParams, VegasParams};
use ratelab_stack::tcp::{Config, Connection, State};
use ratelab_stack::testbed::{LinkConfig, Testbed, A, B};
use ratelab_stack::{Nanos, MILLIS, SECONDS};
use std::fmt::Write as _;
use std::time::Instant;

/// Direct hand-off: A sends what its window allows, B takes it and reads,
/// B's ACKs go back; time moves 10 µs per round. Returns (ns per data packet, data packets).
fn direct(cfg: &Config, packets: u64) -> (f64, u64) {
    let mut a = Connection::connect(cfg.clone(), A, B, 1, 0).expect("valid config");
    let mut b = Connection::listen(cfg.clone(), B, 2, 0).expect("valid config");
    let mut buf = vec![0u8; 2048];
    let mut held: Vec<(Vec<u8>, usize)> = (0..4096).map(|_| (vec![0u8; 2048], 0)).collect();
    let chunk = vec![0x5au8; 64 * 1024];
    let mut sink = vec![0u8; 256 * 1024];
    let mut now: Nanos = 0;
    // Handshake.
    for _ in 0..3 {
        while let Some(t) = a.poll_transmit(now, &mut buf) {
            b.handle_segment(now, A.addr, &buf[..t.len]);
        }
        while let Some(t) = b.poll_transmit(now, &mut buf) {
            a.handle_segment(now, B.addr, &buf[..t.len]);
        }
    }
    assert_eq!(a.state(), State::Established);
    let start_segs = a.stats().segments_sent;
    let t0 = Instant::now();
    while a.stats().segments_sent - start_segs < packets {
        while a.send_capacity() > 0 && a.send(&chunk) > 0 {}
        // A's segments "in the network" for this round, then B's ACKs.
        let mut n = 0;
        while n < held.len() {
            let Some(t) = a.poll_transmit(now, &mut held[n].0) else {
                break;
            };
            held[n].1 = t.len;
            n += 1;
        }
        now += 10_000;
        for (p, len) in &held[..n] {
            b.handle_segment(now, A.addr, &p[..*len]);
            while b.recv(&mut sink) > 0 {}
        }
        let mut m = 0;
        while m < held.len() {
            let Some(t) = b.poll_transmit(now, &mut held[m].0) else {
                break;
            };
            held[m].1 = t.len;
            m += 1;
        }
        now += 10_000;
        for (p, len) in &held[..m] {
            a.handle_segment(now, B.addr, &p[..*len]);
        }
        if n == 0 && m == 0 {
            // Only timers left (delayed ACK): jump to them.
            now = [a.poll_at(), b.poll_at()]
                .into_iter()
                .flatten()
                .min()
                .unwrap_or(now + MILLIS)
                .max(now);
        }
    }
    let el = t0.elapsed().as_nanos() as f64;
    let sent = a.stats().segments_sent - start_segs;
    assert_eq!(a.stats().retransmissions, 0);
    (el / sent as f64, sent)
}

/// The same bulk transfer through the testbed (10 Gb/s, 50 µs each way, no loss).
fn simulated(cfg: &Config, packets: u64) -> (f64, u64) {
    let link = LinkConfig {
        delay: 50_000,
        rate_bps: 10_000_000_000,
        queue: 0,
        ..LinkConfig::default()
    };
    let mut tb = Testbed::new(cfg.clone(), cfg.clone(), link.clone(), link).expect("valid config");
    let chunk = vec![0x5au8; 64 * 1024];
    let mut sink = vec![0u8; 256 * 1024];
    let t0 = Instant::now();
    let mut step = |_now: Nanos, a: &mut Connection, b: &mut Connection| {
        while a.send_capacity() > 0 && a.send(&chunk) > 0 {}
        while b.recv(&mut sink) > 0 {}
        None
    };
    let mut until = 0;
    while tb.a.stats().segments_sent < packets {
        until += 10 * MILLIS;
        tb.run_until(until, &mut step);
        assert!(until < 3600 * SECONDS, "no progress");
    }
    let el = t0.elapsed().as_nanos() as f64;
    let sent = tb.a.stats().segments_sent;
    (el / sent as f64, sent)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let out = args.get(1).cloned();
    let packets: u64 = match args.get(2).map(|s| s.parse()) {
        None => 2_000_000,
        Some(Ok(n)) if n > 0 => n,
        Some(_) => {
            eprintln!(
                "ratelab-stack-bench: PACKETS must be a positive integer, got {:?}",
                args[2]
            );
            std::process::exit(2);
        }
    };
    // 1 MB buffers: the window of a 10 Gb/s path with an 800 us RTT.
    let base = Config {
        send_buffer: 1 << 20,
        recv_buffer: 1 << 20,
        ..Config::default()
    };
    let cases: Vec<(&str, Config)> = vec![
        ("newreno, delayed ACKs", base.clone()),
        (
            "newreno, ACK every segment",
            Config {
                delayed_ack: None,
                ..base.clone()
            },
        ),
        (
            "cubic, delayed ACKs",
            Config {
                cc: CcKind::Cubic(CubicParams::default()),
                ..base.clone()
            },
        ),
        (
            "vegas, delayed ACKs",
            Config {
                cc: CcKind::Vegas(VegasParams::default()),
                ..base.clone()
            },
        ),
    ];
    let mut text = String::new();
    let _ = writeln!(text, "ratelab-stack TCP: CPU per data packet (1448-byte segments, 1 MB buffers, send + receive + ACK processing, one thread)");
    for (name, cfg) in &cases {
        let (ns, n) = direct(cfg, packets);
        let _ = writeln!(
            text,
            "  in memory, {name:<28} {ns:>7.1} ns/packet  ({n} packets)"
        );
    }
    let (ns, n) = simulated(&base, packets / 2);
    let _ = writeln!(text, "  through the testbed simulator, newreno  {ns:>7.1} ns/packet  ({n} packets, event heap and link model included)");
    print!("{text}");
    if let Some(path) = out {
        if let Err(e) = std::fs::write(&path, &text) {
            eprintln!("ratelab-stack-bench: cannot write {path}: {e}");
            std::process::exit(1);
        }
    }
}
