//! Connection tests over the in-crate deterministic simulator: transfers
//! with loss, reordering, duplication and corruption must deliver exactly
//! the bytes written; RTO, backoff, spurious timeouts, delayed ACKs, RSTs.

use ratelab_stack::cc::{CcKind, CubicParams, VegasParams};
use ratelab_stack::tcp::{Config, Connection, Endpoint, RtoFormula, State};
use ratelab_stack::testbed::{LinkConfig, Testbed, A, B};
use ratelab_stack::wire::{self, Flags, TcpHeader, TcpOptions};
use ratelab_stack::{Nanos, MILLIS, SECONDS};

fn pattern(i: u64) -> u8 {
    (i.wrapping_mul(2_654_435_761) >> 13) as u8
}

/// Writes `total` bytes of a pattern at A, closes; B reads and checks them, closes back.
struct Transfer {
    total: u64,
    written: u64,
    read: u64,
    done_at: Option<Nanos>,
    b_closed: bool,
    read_block: bool,
    check_each_step: bool,
}

impl Transfer {
    fn new(total: u64) -> Transfer {
        Transfer {
            total,
            written: 0,
            read: 0,
            done_at: None,
            b_closed: false,
            read_block: false,
            check_each_step: true,
        }
    }

    fn step(&mut self, now: Nanos, a: &mut Connection, b: &mut Connection) -> Option<Nanos> {
        let mut chunk = [0u8; 8192];
        while self.written < self.total && a.send_capacity() > 0 {
            let n = ((self.total - self.written) as usize).min(chunk.len());
            for (k, c) in chunk[..n].iter_mut().enumerate() {
                *c = pattern(self.written + k as u64);
            }
            let took = a.send(&chunk[..n]);
            if took == 0 {
                break;
            }
            self.written += took as u64;
        }
        if self.written == self.total {
            a.close();
        }
        if !self.read_block {
            loop {
                let n = b.recv(&mut chunk);
                if n == 0 {
                    break;
                }
                for (k, &c) in chunk[..n].iter().enumerate() {
                    assert_eq!(
                        c,
                        pattern(self.read + k as u64),
                        "byte {} differs",
                        self.read + k as u64
                    );
                }
                self.read += n as u64;
            }
        }
        if b.peer_closed() && !self.b_closed {
            b.close();
            self.b_closed = true;
            self.done_at = Some(now);
        }
        if self.check_each_step {
            a.check_invariants().unwrap();
            b.check_invariants().unwrap();
        }
        None
    }
}

fn run(
    cfg: Config,
    ab: LinkConfig,
    ba: LinkConfig,
    total: u64,
    until: Nanos,
) -> (Testbed, Transfer) {
    let mut tb = Testbed::with_config(cfg, ab, ba).unwrap();
    let mut t = Transfer::new(total);
    tb.run_until(until, &mut |now, a: &mut Connection, b: &mut Connection| {
        t.step(now, a, b)
    });
    (tb, t)
}

fn assert_complete(tb: &Testbed, t: &Transfer) {
    assert_eq!(t.read, t.total, "all bytes read");
    assert!(t.done_at.is_some(), "FIN arrived");
    assert!(
        matches!(tb.a.state(), State::TimeWait | State::Closed),
        "A ends in {:?}",
        tb.a.state()
    );
    assert_eq!(tb.b.state(), State::Closed, "B ends closed");
}

/// 20 Mb/s, 20 ms one way, a 100-packet drop-tail queue, random loss.
fn lossy(loss: f64, seed: u64) -> LinkConfig {
    LinkConfig {
        delay: 20 * MILLIS,
        rate_bps: 20_000_000,
        queue: 100,
        loss,
        seed,
        ..LinkConfig::default()
    }
}

/// 20 Mb/s, 20 ms one way, no queue limit, no loss.
fn clean() -> LinkConfig {
    LinkConfig {
        queue: 0,
        ..lossy(0.0, 1)
    }
}

#[test]
fn clean_transfer_delivers_everything_and_closes() {
    let (tb, t) = run(Config::default(), clean(), clean(), 1_000_000, 30 * SECONDS);
    assert_complete(&tb, &t);
    let s = tb.a.stats();
    assert_eq!(s.retransmissions, 0);
    assert_eq!(s.bytes_sent, 1_000_000);
    assert_eq!(s.bytes_acked, 1_000_000);
    assert_eq!(tb.b.stats().bytes_received, 1_000_000);
    assert!(tb.a.sack_enabled() && tb.a.timestamps_enabled());
    assert_eq!(tb.a.smss(), 1448, "MSS less the timestamp option");
    assert_eq!(s.malformed, 0);
    // Base RTT 40 ms plus serialization (the queue adds to the smoothed RTT).
    let min_rtt = tb.a.rtt().min_rtt().unwrap();
    assert!(
        (40 * MILLIS..42 * MILLIS).contains(&min_rtt),
        "min RTT {min_rtt}"
    );
    assert!(tb.a.rtt().srtt().unwrap() >= min_rtt);
}

fn loss_case(cfg: Config, seed: u64) {
    let (tb, t) = run(
        cfg,
        lossy(0.02, seed),
        lossy(0.01, seed + 100),
        1_000_000,
        120 * SECONDS,
    );
    assert_complete(&tb, &t);
    let s = tb.a.stats();
    assert!(s.retransmissions > 0, "{s:?}");
    assert!(s.recoveries > 0 || s.rtos > 0, "{s:?}");
}

#[test]
fn random_loss_with_sack() {
    for seed in 1..=4 {
        loss_case(Config::default(), seed);
    }
}

#[test]
fn random_loss_without_sack_newreno_and_reno() {
    for cc in [CcKind::NewReno, CcKind::Reno] {
        for seed in 1..=3 {
            loss_case(
                Config {
                    sack: false,
                    cc,
                    ..Config::default()
                },
                seed,
            );
        }
    }
}

#[test]
fn random_loss_with_prr_cubic_vegas_and_no_timestamps() {
    let cases = [
        Config {
            prr: true,
            ..Config::default()
        },
        Config {
            prr: true,
            sack: false,
            ..Config::default()
        },
        Config {
            cc: CcKind::Cubic(CubicParams::default()),
            ..Config::default()
        },
        Config {
            cc: CcKind::Vegas(VegasParams::default()),
            ..Config::default()
        },
        Config {
            timestamps: false,
            window_scale: false,
            recv_buffer: 60_000,
            ..Config::default()
        },
    ];
    for (i, cfg) in cases.into_iter().enumerate() {
        loss_case(cfg, 10 + i as u64);
    }
}

#[test]
fn sack_recovery_retransmits_only_the_holes() {
    // No queue drops, moderate random loss: with SACK every retransmission
    // should repair a real loss (few spurious resends).
    let (tb, t) = run(
        Config::default(),
        lossy(0.01, 7),
        lossy(0.0, 8),
        2_000_000,
        60 * SECONDS,
    );
    assert_complete(&tb, &t);
    let (ab, _) = tb.link_stats();
    let lost = ab.random_drops + ab.queue_drops;
    let s = tb.a.stats();
    assert!(s.fast_retransmits > 0);
    assert!(
        s.retransmissions <= lost + lost / 2 + 2,
        "{} retransmissions for {lost} losses",
        s.retransmissions
    );
}

#[test]
fn slow_start_overshoot_is_repaired_without_a_timeout() {
    // The first slow start overflows the 100-packet queue by about every
    // other packet of a window: SACK recovery resends exactly the drops.
    for cfg in [
        Config::default(),
        Config {
            prr: true,
            ..Config::default()
        },
    ] {
        let (tb, t) = run(cfg, lossy(0.0, 1), lossy(0.0, 2), 1_500_000, 60 * SECONDS);
        assert_complete(&tb, &t);
        let (ab, _) = tb.link_stats();
        let s = tb.a.stats();
        assert!(ab.queue_drops > 50, "{ab:?}");
        assert_eq!(s.rtos, 0, "{s:?}");
        assert_eq!(s.retransmissions, ab.queue_drops, "{s:?}");
    }
}

#[test]
fn reordering_duplication_and_corruption() {
    let link = |seed| LinkConfig {
        delay: 10 * MILLIS,
        rate_bps: 50_000_000,
        queue: 200,
        loss: 0.005,
        duplicate: 0.02,
        reorder: 0.05,
        reorder_delay: 3 * MILLIS,
        corrupt: 0.02,
        seed,
        ..LinkConfig::default()
    };
    for seed in 1..=3 {
        let (tb, t) = run(
            Config::default(),
            link(seed),
            link(seed + 50),
            1_000_000,
            60 * SECONDS,
        );
        assert_complete(&tb, &t);
        assert!(
            tb.b.stats().malformed + tb.a.stats().malformed > 0,
            "corrupt segments were counted"
        );
    }
}

#[test]
fn rto_backs_off_exponentially_and_recovers() {
    // A->B dead from 0.5 s to 10 s: timeouts at RTO, 2 RTO, 4 RTO...
    let ab = LinkConfig {
        blackout: Some((500 * MILLIS, 10 * SECONDS)),
        ..lossy(0.0, 1)
    };
    let cfg = Config {
        min_rto: SECONDS,
        ..Config::default()
    };
    let (tb, t) = run(cfg, ab, lossy(0.0, 2), 2_000_000, 60 * SECONDS);
    assert_complete(&tb, &t);
    let s = tb.a.stats();
    // RTO 1 s (minimum): timeouts at about 1.5, 3.5 (+2), 7.5 (+4), 15.5 s (+8),
    // which gets through.
    assert_eq!(s.rtos, 4, "{s:?}");
    assert_eq!(s.spurious_rtos, 0);
}

#[test]
fn spurious_rto_is_detected_by_timestamps() {
    // ACKs sent in [0.2 s, 0.5 s) are held back 0.5 s: the RTO (200 ms)
    // fires although nothing was lost, and the late ACKs echo timestamps
    // older than the retransmission's.
    let fast = LinkConfig {
        delay: 20 * MILLIS,
        ..LinkConfig::default()
    };
    let ba = LinkConfig {
        delay_spike: Some((200 * MILLIS, 500 * MILLIS, 500 * MILLIS)),
        ..fast.clone()
    };
    let cfg = Config {
        min_rto: 200 * MILLIS,
        ..Config::default()
    };
    let (tb, t) = run(
        cfg.clone(),
        fast.clone(),
        ba.clone(),
        20_000_000,
        60 * SECONDS,
    );
    assert_complete(&tb, &t);
    let s = tb.a.stats();
    assert!(s.rtos >= 1, "{s:?}");
    assert_eq!(s.spurious_rtos, 1, "{s:?}");
    // Without timestamps the same timeout cannot be told apart.
    let (tb, _) = run(
        Config {
            timestamps: false,
            ..cfg
        },
        fast,
        ba,
        20_000_000,
        60 * SECONDS,
    );
    assert!(tb.a.stats().rtos >= 1);
    assert_eq!(tb.a.stats().spurious_rtos, 0);
}

/// When the handshake completes with the first SYN lost.
fn syn_loss_timing(initial_rto: Nanos) -> (Nanos, u64) {
    let ab = LinkConfig {
        blackout: Some((0, 1)),
        delay: 10 * MILLIS,
        ..LinkConfig::default()
    };
    let cfg = Config {
        initial_rto,
        ..Config::default()
    };
    let mut tb = Testbed::with_config(cfg, ab, LinkConfig::default()).unwrap();
    let mut est = None;
    tb.run_until(
        20 * SECONDS,
        &mut |now, a: &mut Connection, _b: &mut Connection| {
            if est.is_none() && a.state() == State::Established {
                est = Some((now, a.cwnd()));
            }
            None
        },
    );
    assert_eq!(tb.a.stats().syn_retransmits, 1);
    est.unwrap()
}

#[test]
fn initial_rto_one_and_three_seconds_and_iw_after_syn_loss() {
    let (t1, cwnd1) = syn_loss_timing(SECONDS);
    assert_eq!(t1, SECONDS + 20 * MILLIS, "SYN resent after 1 s, RTT 20 ms");
    let (t3, _) = syn_loss_timing(3 * SECONDS);
    assert_eq!(t3, 3 * SECONDS + 20 * MILLIS);
    // RFC 5681 §3.1: one segment after a lost SYN.
    assert_eq!(cwnd1, 1448);
}

#[test]
fn syn_retransmissions_back_off() {
    let ab = LinkConfig {
        blackout: Some((0, 100 * SECONDS)),
        ..LinkConfig::default()
    };
    let cfg = Config {
        initial_rto: SECONDS,
        syn_retries: 4,
        ..Config::default()
    };
    let mut tb = Testbed::with_config(cfg, ab, LinkConfig::default()).unwrap();
    let mut sends = Vec::new();
    let (mut last, mut prev_step) = (0, 0);
    // The driver runs before each round of sending: a count that changed
    // since the previous step was sent at that step's time.
    tb.run_until(
        100 * SECONDS,
        &mut |now, a: &mut Connection, _b: &mut Connection| {
            let n = a.stats().segments_sent;
            if n != last {
                sends.push(prev_step);
                last = n;
            }
            prev_step = now;
            None
        },
    );
    // SYN at 0, 1, 3, 7 s; gives up at 15 s.
    assert_eq!(sends, vec![0, SECONDS, 3 * SECONDS, 7 * SECONDS]);
    assert_eq!(tb.a.state(), State::Closed);
}

#[test]
fn delayed_acks_halve_the_ack_count() {
    let count_acks = |delayed_ack| {
        let cfg = Config {
            delayed_ack,
            ..Config::default()
        };
        let (tb, t) = run(cfg, clean(), clean(), 500_000, 30 * SECONDS);
        assert_complete(&tb, &t);
        (tb.a.stats().segments_sent, tb.b.stats().segments_sent)
    };
    let (data_on, acks_on) = count_acks(Some(40 * MILLIS));
    let (data_off, acks_off) = count_acks(None);
    assert!(
        acks_off + 5 >= data_off,
        "every segment acknowledged: {acks_off} for {data_off}"
    );
    assert!(
        acks_on * 10 < data_on * 6 && acks_on * 10 > data_on * 4,
        "about one ACK per two segments: {acks_on} for {data_on}"
    );
}

#[test]
fn quick_acks_ack_every_segment_while_the_window_grows() {
    let count_acks = |quickack, recv_buffer| {
        let cfg = Config {
            quickack,
            recv_buffer,
            ..Config::default()
        };
        let (tb, t) = run(cfg, clean(), clean(), 500_000, 30 * SECONDS);
        assert_complete(&tb, &t);
        (tb.a.stats().segments_sent, tb.b.stats().segments_sent)
    };
    // A 4 MiB buffer: the window threshold grows (two segments per
    // segment, from 64 KiB) for the whole 500 kB, so every segment is ACKed.
    let (data, acks) = count_acks(true, 4 << 20);
    assert!(
        acks + 5 >= data,
        "every segment acknowledged: {acks} for {data}"
    );
    // 128 KiB: the threshold reaches the buffer's window after about 22
    // segments (16 quick ACKs armed by the first); every second one after.
    let (data, acks) = count_acks(true, 128 << 10);
    let (_, delayed) = count_acks(false, 128 << 10);
    assert!(
        acks >= delayed + 10 && acks <= delayed + 30,
        "about 20 more ACKs than delayed ACKs alone: {acks} against {delayed} for {data}"
    );
}

#[test]
fn lone_segment_is_acked_after_the_delayed_ack_timer() {
    let cfg = Config::default();
    let mut tb = Testbed::with_config(cfg, LinkConfig::default(), LinkConfig::default()).unwrap();
    let mut sent = false;
    let mut acked_at = None;
    tb.run_until(
        2 * SECONDS,
        &mut |now, a: &mut Connection, _b: &mut Connection| {
            if a.state() == State::Established && !sent {
                a.send(b"hello");
                sent = true;
            }
            if sent && acked_at.is_none() && a.stats().bytes_acked == 5 {
                acked_at = Some(now);
            }
            None
        },
    );
    // Handshake 20 ms, data 10 ms out, 40 ms delay at B, 10 ms back.
    assert_eq!(acked_at, Some(80 * MILLIS));
}

#[test]
fn zero_window_then_reading_resumes() {
    let cfg = Config {
        recv_buffer: 20_000,
        ..Config::default()
    };
    let mut tb = Testbed::with_config(cfg, clean(), clean()).unwrap();
    let mut t = Transfer::new(300_000);
    t.read_block = true;
    tb.run_until(
        5 * SECONDS,
        &mut |now, a: &mut Connection, b: &mut Connection| t.step(now, a, b),
    );
    assert_eq!(tb.b.recv_ready(), 20_000, "receiver full");
    assert_eq!(tb.a.stats().bytes_acked, 20_000);
    t.read_block = false;
    tb.run_until(
        60 * SECONDS,
        &mut |now, a: &mut Connection, b: &mut Connection| t.step(now, a, b),
    );
    assert_complete(&tb, &t);
}

#[test]
fn lost_window_update_is_recovered_by_zero_window_probes() {
    let cfg = Config {
        recv_buffer: 20_000,
        ..Config::default()
    };
    // The window update B sends when reading resumes at 5 s is lost.
    let ba = LinkConfig {
        blackout: Some((5 * SECONDS, 5 * SECONDS + 100 * MILLIS)),
        ..clean()
    };
    let mut tb = Testbed::with_config(cfg, clean(), ba).unwrap();
    let mut t = Transfer::new(300_000);
    t.read_block = true;
    tb.run_until(
        5 * SECONDS,
        &mut |now, a: &mut Connection, b: &mut Connection| t.step(now, a, b),
    );
    assert_eq!(tb.a.stats().bytes_acked, 20_000);
    assert!(
        tb.a.stats().zero_window_probes > 0,
        "probing while the window is zero"
    );
    t.read_block = false;
    tb.run_until(
        60 * SECONDS,
        &mut |now, a: &mut Connection, b: &mut Connection| t.step(now, a, b),
    );
    assert_complete(&tb, &t);
}

// ---- nonsense and resets ----

const C: [u8; 4] = [10, 0, 0, 9];

fn segment(from: [u8; 4], to: [u8; 4], h: TcpHeader, payload: &[u8]) -> Vec<u8> {
    let mut buf = vec![0u8; 2000];
    let n = wire::emit_tcp(&h, payload, from, to, &mut buf).unwrap();
    buf.truncate(n);
    buf
}

fn out(c: &mut Connection, now: Nanos) -> Vec<TcpHeader> {
    let mut buf = [0u8; 2000];
    let mut v = Vec::new();
    while let Some(t) = c.poll_transmit(now, &mut buf) {
        v.push(wire::parse_tcp(&buf[..t.len], t.src, t.dst).unwrap().0);
    }
    v
}

#[test]
fn listener_resets_a_stray_ack_and_closed_port_resets() {
    let mut l = Connection::listen(Config::default(), B, 1, 0).unwrap();
    let h = TcpHeader {
        src_port: 999,
        dst_port: B.port,
        seq: 5,
        ack: 777,
        flags: Flags(Flags::ACK),
        window: 100,
        options: TcpOptions::default(),
    };
    l.handle_segment(0, C, &segment(C, B.addr, h, b""));
    let o = out(&mut l, 0);
    assert_eq!(o.len(), 1);
    assert_eq!(
        (o[0].flags.0, o[0].seq, o[0].dst_port),
        (Flags::RST, 777, 999)
    );
    assert_eq!(l.state(), State::Listen);
    // A SYN to another port: RST|ACK acknowledging it.
    let syn = TcpHeader {
        dst_port: 81,
        flags: Flags(Flags::SYN),
        ..h
    };
    l.handle_segment(0, C, &segment(C, B.addr, syn, b""));
    let o = out(&mut l, 0);
    assert_eq!(
        (o[0].flags.0, o[0].ack, o[0].src_port),
        (Flags::RST | Flags::ACK, 6, 81)
    );
    // A RST is never answered.
    let rst = TcpHeader {
        flags: Flags(Flags::RST),
        ..h
    };
    l.handle_segment(0, C, &segment(C, B.addr, rst, b""));
    assert!(out(&mut l, 0).is_empty());
}

/// An established pair, driven by hand with zero delay.
fn established() -> (Connection, Connection) {
    let mut a = Connection::connect(Config::default(), A, B, 100, 0).unwrap();
    let mut b = Connection::listen(Config::default(), B, 900, 0).unwrap();
    let mut buf = [0u8; 2000];
    for _ in 0..4 {
        while let Some(t) = a.poll_transmit(0, &mut buf) {
            b.handle_segment(0, A.addr, &buf[..t.len]);
        }
        while let Some(t) = b.poll_transmit(0, &mut buf) {
            a.handle_segment(0, B.addr, &buf[..t.len]);
        }
    }
    assert_eq!(
        (a.state(), b.state()),
        (State::Established, State::Established)
    );
    (a, b)
}

fn from_a(b: &Connection, seq: u32, ack: u32, flags: u8) -> Vec<u8> {
    let h = TcpHeader {
        src_port: A.port,
        dst_port: B.port,
        seq,
        ack,
        flags: Flags(flags),
        window: 1000,
        options: TcpOptions {
            timestamps: Some((u32::MAX / 2, 0)),
            ..TcpOptions::default()
        },
    };
    let _ = b;
    segment(A.addr, B.addr, h, b"")
}

#[test]
fn rst_in_window_but_not_exact_gets_a_challenge_ack_exact_rst_closes() {
    let (_a, mut b) = established();
    let nxt = b.rcv_nxt();
    b.handle_segment(0, A.addr, &from_a(&b, nxt + 10, 0, Flags::RST));
    assert_eq!(b.state(), State::Established);
    assert_eq!(b.stats().challenge_acks, 1);
    let o = out(&mut b, 0);
    assert_eq!((o.len(), o[0].flags.0), (1, Flags::ACK));
    // RST outside the window: dropped.
    b.handle_segment(
        0,
        A.addr,
        &from_a(&b, nxt.wrapping_sub(1_000_000), 0, Flags::RST),
    );
    assert_eq!(b.state(), State::Established);
    b.handle_segment(0, A.addr, &from_a(&b, nxt, 0, Flags::RST));
    assert_eq!(b.state(), State::Closed);
    assert_eq!(b.stats().resets_received, 1);
    // Closed: anything else is answered with a RST.
    b.handle_segment(0, A.addr, &from_a(&b, nxt, 5, Flags::ACK));
    assert_eq!(out(&mut b, 0)[0].flags.0, Flags::RST);
}

#[test]
fn syn_in_established_and_ack_of_unsent_data_get_acks() {
    let (_a, mut b) = established();
    let nxt = b.rcv_nxt();
    b.handle_segment(0, A.addr, &from_a(&b, nxt, 0, Flags::SYN));
    assert_eq!(b.state(), State::Established);
    assert_eq!(b.stats().challenge_acks, 1);
    assert_eq!(out(&mut b, 0).len(), 1);
    let far = b.snd_nxt().wrapping_add(100_000);
    b.handle_segment(0, A.addr, &from_a(&b, nxt, far, Flags::ACK));
    assert_eq!(b.snd_una(), b.snd_nxt(), "nothing acknowledged");
    assert_eq!(out(&mut b, 0)[0].flags.0, Flags::ACK);
    b.check_invariants().unwrap();
}

#[test]
fn malformed_and_foreign_segments_are_counted_and_dropped() {
    let (mut a, mut b) = established();
    let before = b.stats().malformed;
    let mut buf = [0u8; 2000];
    a.send(b"abcdef");
    let t = a.poll_transmit(0, &mut buf).unwrap();
    let mut bad = buf[..t.len].to_vec();
    bad[t.len - 1] ^= 0x40;
    b.handle_segment(0, A.addr, &bad);
    b.handle_segment(0, A.addr, &bad[..10]);
    b.handle_segment(0, A.addr, &[]);
    assert_eq!(b.stats().malformed, before + 3);
    assert_eq!(b.recv_ready(), 0);
    // The intact copy is taken.
    b.handle_segment(0, A.addr, &buf[..t.len]);
    assert_eq!(b.recv_ready(), 6);
    // Same ports, other address: RST, connection untouched.
    let h = TcpHeader {
        src_port: A.port,
        dst_port: B.port,
        seq: 1,
        ack: 1,
        flags: Flags(Flags::ACK),
        window: 10,
        options: TcpOptions::default(),
    };
    b.handle_segment(0, C, &segment(C, B.addr, h, b"x"));
    let o = out(&mut b, 0);
    assert!(o.iter().any(|h| h.flags.has(Flags::RST)));
    assert_eq!(b.state(), State::Established);
    let _ = Endpoint::default();
}

/// (PSH set, payload length) of every data segment `c` sends now.
fn data_segments(c: &mut Connection, now: Nanos) -> Vec<(bool, usize)> {
    let mut buf = [0u8; 2000];
    let mut v = Vec::new();
    while let Some(t) = c.poll_transmit(now, &mut buf) {
        let (h, payload) = wire::parse_tcp(&buf[..t.len], t.src, t.dst).unwrap();
        if !payload.is_empty() {
            v.push((h.flags.has(Flags::PSH), payload.len()));
        }
    }
    v
}

#[test]
fn psh_ends_each_two_segment_run_and_the_send_buffer() {
    // What goes out at one instant is skbs of two segments at low rates,
    // each ending with PSH (push.rs); the segment that empties the send
    // buffer is pushed too.
    let (mut a, _b) = established();
    let mss = a.smss() as usize;
    assert_eq!(a.send(&vec![7u8; 4 * mss + 100]), 4 * mss + 100);
    let segs = data_segments(&mut a, 0);
    assert_eq!(
        segs,
        vec![
            (false, mss),
            (true, mss),
            (false, mss),
            (true, mss),
            (true, 100)
        ]
    );
    // A write that ends exactly on a segment boundary: its last segment.
    a.send(&vec![7u8; 3 * mss]);
    assert_eq!(
        data_segments(&mut a, 0),
        vec![(false, mss), (true, mss), (true, mss)]
    );
}

#[test]
fn a_new_instant_starts_a_new_push_run() {
    // Three segments at one instant (.P.), then the rest at the next: the
    // run restarts there (.P.P...), as Linux cuts each transmission anew.
    let (mut a, _b) = established();
    let mss = a.smss() as usize;
    a.send(&vec![7u8; 20 * mss]);
    let mut buf = [0u8; 2000];
    let mut pushes = |now: Nanos, n: usize| -> Vec<bool> {
        (0..n)
            .map(|_| {
                let t = a.poll_transmit(now, &mut buf).unwrap();
                let (h, _) = wire::parse_tcp(&buf[..t.len], t.src, t.dst).unwrap();
                h.flags.has(Flags::PSH)
            })
            .collect()
    };
    assert_eq!(pushes(0, 3), [false, true, false]);
    assert_eq!(pushes(1, 4), [false, true, false, true]);
}

/// Spurious RTOs of an application-limited flow (a segment every 50 ms over
/// a 40 ms RTT, RTTVAR decayed to ~0) whose segments sent in [2.0 s, 2.3 s)
/// take 190 ms longer, with `formula`.
fn spurious_rtos_with_a_delay_spike(formula: RtoFormula) -> (u64, u64) {
    let ab = LinkConfig {
        delay: 20 * MILLIS,
        delay_spike: Some((2 * SECONDS, 2 * SECONDS + 300 * MILLIS, 190 * MILLIS)),
        ..LinkConfig::default()
    };
    let ba = LinkConfig {
        delay: 20 * MILLIS,
        ..LinkConfig::default()
    };
    let cfg = Config {
        rto_formula: formula,
        delayed_ack: None,
        ..Config::default()
    };
    let mut tb = Testbed::with_config(cfg, ab, ba).unwrap();
    let mut next = 0;
    tb.run_until(
        5 * SECONDS,
        &mut |now, a: &mut Connection, b: &mut Connection| {
            let mut buf = [0u8; 2048];
            while b.recv(&mut buf) > 0 {}
            if a.state() != State::Established {
                return Some(now + MILLIS);
            }
            if now >= next {
                a.send(&[1u8; 1000]);
                next = now + 50 * MILLIS;
            }
            Some(next)
        },
    );
    let s = tb.a.stats();
    (s.rtos, s.spurious_rtos)
}

#[test]
fn linux_rto_formula_rides_out_a_delay_spike_that_rfc6298_times_out_on() {
    // RFC 6298: RTO = max(40 ms + 4*RTTVAR, 200 ms) = 200 ms < 230 ms: spurious.
    let (rtos, spurious) = spurious_rtos_with_a_delay_spike(RtoFormula::Rfc6298);
    assert!(rtos >= 1 && spurious >= 1, "{rtos} {spurious}");
    // Linux: RTO = 40 ms + max(4*RTTVAR, 200 ms) = 240 ms > 230 ms.
    assert_eq!(spurious_rtos_with_a_delay_spike(RtoFormula::Linux), (0, 0));
}
