//! CPU per data packet of the TCP state machine: bulk transfer of 1448-byte
//! segments, one thread, two endpoints in memory.
//!
//! Two measurements per congestion control:
//! - **both**: sender and receiver together. A data packet costs the
//!   sender's emit (header, checksum, copy from the send buffer), the
//!   receiver's parse/verify and copy into its buffer, the application's
//!   copies, and the sender's ACK processing (one ACK per two segments with
//!   delayed ACKs, one per segment without).
//! - **sender**: the "send + ACK processing" alone. The transfer is
//!   run once with both ends and everything the receiver sends is recorded
//!   (with the times and the sender's segment count per round); then a fresh
//!   sender repeats exactly the same calls, its ACKs replayed from the
//!   recording, and only that run is timed. The replayed sender must send
//!   the same segments per round and end with the same counters.
//!
//! Also the transfer through the testbed simulator (event heap, link
//! model), for the overhead a simulator adds. Times are the thread's CPU
//! time (CLOCK_THREAD_CPUTIME_ID), best of REPEAT runs.
//!
//! Usage: `ratelab-stack-bench [PACKETS [REPEAT]]` (default 1,000,000 and 3).
//! Prints tab-separated lines: a header, then `case sender_ns both_ns packets`
//! (`-` where not measured); host_stacks/benchmarks/host_stacks_cpu.py
//! reads them.

use ratelab_stack::cc::{CcKind, CubicParams, VegasParams};
use ratelab_stack::tcp::{Config, Connection, SendBufferPolicy, State, TcpStats};
use ratelab_stack::testbed::{LinkConfig, Testbed, A, B};
use ratelab_stack::{Nanos, MILLIS, SECONDS};

/// CPU nanoseconds this thread has run (CLOCK_THREAD_CPUTIME_ID).
fn cpu_ns() -> u64 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes into the timespec we pass and nothing else.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
    assert_eq!(rc, 0, "clock_gettime(CLOCK_THREAD_CPUTIME_ID) failed");
    t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
}

/// What the receiver sent during one round of the direct transfer.
struct Round {
    /// When the sender was asked for segments, and how many it gave.
    send_at: Nanos,
    sent: u32,
    /// When the receiver's segments reached the sender, and how many.
    ack_at: Nanos,
    acks: u32,
}

/// The receiver's side of a whole transfer, for replaying to a lone sender.
#[derive(Default)]
struct Recording {
    rounds: Vec<Round>,
    /// The receiver's segments, back to back; `lens` splits them.
    bytes: Vec<u8>,
    lens: Vec<u16>,
    /// The sender's counters at the end.
    end: TcpStats,
}

/// Two connected endpoints (handshake done at time 0).
fn connected(cfg: &Config) -> (Connection, Connection) {
    let mut a = Connection::connect(cfg.clone(), A, B, 1, 0).expect("valid config");
    let mut b = Connection::listen(cfg.clone(), B, 2, 0).expect("valid config");
    let mut buf = vec![0u8; 2048];
    for _ in 0..3 {
        while let Some(t) = a.poll_transmit(0, &mut buf) {
            b.handle_segment(0, A.addr, &buf[..t.len]);
        }
        while let Some(t) = b.poll_transmit(0, &mut buf) {
            a.handle_segment(0, B.addr, &buf[..t.len]);
        }
    }
    assert_eq!(a.state(), State::Established);
    (a, b)
}

/// Direct hand-off: A sends what its window allows, B takes it and reads,
/// B's segments go back; time moves 10 µs per hop. Returns CPU ns per data
/// packet and the data packets sent; with `record`, what B sent (the copy
/// costs time, so a recording run is not a measurement).
fn direct(cfg: &Config, packets: u64, mut record: Option<&mut Recording>) -> (f64, u64) {
    let (mut a, mut b) = connected(cfg);
    let mut held: Vec<(Vec<u8>, usize)> = (0..4096).map(|_| (vec![0u8; 2048], 0)).collect();
    let chunk = vec![0x5au8; 64 * 1024];
    let mut sink = vec![0u8; 256 * 1024];
    let mut now: Nanos = 0;
    let start_segs = a.stats().segments_sent;
    let t0 = cpu_ns();
    while a.stats().segments_sent - start_segs < packets {
        let send_at = now;
        while a.send_capacity() > 0 && a.send(&chunk) > 0 {}
        // A's segments "in the network" for this round, then B's answers.
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
        if let Some(rec) = record.as_deref_mut() {
            rec.rounds.push(Round {
                send_at,
                sent: n as u32,
                ack_at: now,
                acks: m as u32,
            });
            for (p, len) in &held[..m] {
                rec.bytes.extend_from_slice(&p[..*len]);
                rec.lens.push(*len as u16);
            }
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
    let el = (cpu_ns() - t0) as f64;
    let sent = a.stats().segments_sent - start_segs;
    assert_eq!(a.stats().retransmissions, 0);
    if let Some(rec) = record {
        rec.end = *a.stats();
    }
    (el / sent as f64, sent)
}

/// The sender alone, making the recorded run's calls with its ACKs
/// replayed. Returns CPU ns per data packet.
fn sender_only(cfg: &Config, rec: &Recording) -> f64 {
    let (mut a, _) = connected(cfg);
    let chunk = vec![0x5au8; 64 * 1024];
    let mut buf = vec![0u8; 2048];
    let start_segs = a.stats().segments_sent;
    let (mut at, mut k) = (0usize, 0usize);
    let t0 = cpu_ns();
    for r in &rec.rounds {
        while a.send_capacity() > 0 && a.send(&chunk) > 0 {}
        let mut n = 0;
        while a.poll_transmit(r.send_at, &mut buf).is_some() {
            n += 1;
        }
        assert_eq!(n, r.sent, "the replayed sender diverged");
        for _ in 0..r.acks {
            let len = rec.lens[k] as usize;
            a.handle_segment(r.ack_at, B.addr, &rec.bytes[at..at + len]);
            at += len;
            k += 1;
        }
    }
    let el = (cpu_ns() - t0) as f64;
    assert_eq!(*a.stats(), rec.end, "the replayed sender diverged");
    el / (a.stats().segments_sent - start_segs) as f64
}

/// The same bulk transfer through the testbed (10 Gb/s, 50 µs each way, no loss).
fn simulated(cfg: &Config, packets: u64) -> (f64, u64) {
    let link = LinkConfig {
        delay: 50_000,
        rate_bps: 10_000_000_000,
        queue: 0,
        ..LinkConfig::default()
    };
    let mut tb = Testbed::with_config(cfg.clone(), link.clone(), link).expect("valid config");
    let chunk = vec![0x5au8; 64 * 1024];
    let mut sink = vec![0u8; 256 * 1024];
    let t0 = cpu_ns();
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
    let el = (cpu_ns() - t0) as f64;
    let sent = tb.a.stats().segments_sent;
    (el / sent as f64, sent)
}

fn positive(args: &[String], i: usize, name: &str, default: u64) -> u64 {
    match args.get(i).map(|s| s.parse::<u64>()) {
        None => default,
        Some(Ok(n)) if n > 0 => n,
        Some(_) => {
            eprintln!(
                "ratelab-stack-bench: {name} must be a positive integer, got {:?}",
                args[i]
            );
            std::process::exit(2);
        }
    }
}

fn best<T>(repeat: u64, mut run: impl FnMut() -> (f64, T)) -> (f64, T) {
    let mut out = run();
    for _ in 1..repeat {
        let next = run();
        if next.0 < out.0 {
            out = next;
        }
    }
    out
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let packets = positive(&args, 1, "PACKETS", 1_000_000);
    let repeat = positive(&args, 2, "REPEAT", 3);
    // 1 MB buffers: the window of a 10 Gb/s path with an 800 us RTT. The
    // send buffer fixed, as in the results measured before the auto-tuned
    // one became the default: the same work per packet.
    let base = Config {
        send_buffer: 1 << 20,
        recv_buffer: 1 << 20,
        send_buffer_policy: SendBufferPolicy::Fixed,
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
    println!("case\tsender_ns\tboth_ns\tpackets");
    for (name, cfg) in &cases {
        let mut rec = Recording::default();
        let (_, n) = direct(cfg, packets, Some(&mut rec));
        let (sender, ()) = best(repeat, || (sender_only(cfg, &rec), ()));
        drop(rec);
        let (both, m) = best(repeat, || direct(cfg, packets, None));
        assert_eq!(n, m, "the same transfer each time");
        println!("{name}\t{sender:.1}\t{both:.1}\t{n}");
    }
    let (ns, n) = best(repeat, || simulated(&base, packets / 2));
    println!("newreno through the testbed simulator\t-\t{ns:.1}\t{n}");
}
