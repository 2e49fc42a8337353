//! Fast retransmit and fast recovery, driven segment by segment: RFC 5681
//! §3.2 (Reno), RFC 6582 (NewReno partial ACKs), RFC 6675 (SACK), RFC 6937 (PRR).

use ratelab_stack::cc::CcKind;
use ratelab_stack::tcp::{Config, Connection};
use ratelab_stack::testbed::{A, B};
use ratelab_stack::wire;
use ratelab_stack::MILLIS;

type Seg = Vec<u8>;

fn out(c: &mut Connection, now: u64) -> Vec<Seg> {
    let mut buf = [0u8; 2048];
    let mut v = vec![];
    while let Some(t) = c.poll_transmit(now, &mut buf) {
        v.push(buf[..t.len].to_vec());
    }
    v
}

fn seq_of(s: &Seg) -> u32 {
    let (h, _) = wire::parse_tcp(s, A.addr, B.addr).unwrap();
    h.seq
}

fn has_data(s: &Seg) -> bool {
    let (_, p) = wire::parse_tcp(s, A.addr, B.addr).unwrap();
    !p.is_empty()
}

/// Established with 10 ms RTT, and A's initial window of data out (not delivered).
fn setup(cfg: Config) -> (Connection, Connection, Vec<Seg>) {
    let mut a = Connection::connect(cfg.clone(), A, B, 1000, 0).unwrap();
    let mut b = Connection::listen(cfg, B, 5000, 0).unwrap();
    for s in out(&mut a, 0) {
        b.handle_segment(5 * MILLIS, A.addr, &s);
    }
    for s in out(&mut b, 5 * MILLIS) {
        a.handle_segment(10 * MILLIS, B.addr, &s);
    }
    for s in out(&mut a, 10 * MILLIS) {
        b.handle_segment(10 * MILLIS, A.addr, &s);
    }
    // One byte from B so that A has seen B's scaled window once (a window
    // change would make the first duplicate ACK not count, RFC 5681 §2).
    b.send(b"x");
    for s in out(&mut b, 10 * MILLIS) {
        a.handle_segment(10 * MILLIS, B.addr, &s);
    }
    a.send(&vec![1u8; 200_000]);
    // The first segment may be the bare ACK of B's byte.
    let segs: Vec<Seg> = out(&mut a, 10 * MILLIS)
        .into_iter()
        .filter(has_data)
        .collect();
    (a, b, segs)
}

fn cfg(sack: bool, cc: CcKind) -> Config {
    Config {
        sack,
        cc,
        delayed_ack: None,
        ..Config::default()
    }
}

/// Deliver segments 1.. of the window (segment 0 lost) to B and return B's ACKs.
fn dupacks(b: &mut Connection, segs: &[Seg]) -> Vec<Seg> {
    let mut acks = vec![];
    for s in &segs[1..] {
        b.handle_segment(15 * MILLIS, A.addr, s);
        acks.extend(out(b, 15 * MILLIS));
    }
    acks
}

#[test]
fn reno_without_sack_fast_retransmit_inflation_and_exit() {
    let (mut a, mut b, segs) = setup(cfg(false, CcKind::Reno));
    assert_eq!(segs.len(), 10, "IW10 of 1448-byte segments");
    let mss = a.smss();
    let acks = dupacks(&mut b, &segs);
    assert_eq!(acks.len(), 9);
    // Two duplicate ACKs: nothing yet.
    for ack in &acks[..2] {
        a.handle_segment(20 * MILLIS, B.addr, ack);
        assert!(out(&mut a, 20 * MILLIS).is_empty());
    }
    // The third: retransmit the first segment (RFC 5681 §3.2 steps 2-3).
    a.handle_segment(20 * MILLIS, B.addr, &acks[2]);
    let flight = 10 * mss;
    let ssthresh = (flight / 2).max(2 * mss);
    assert_eq!(a.ssthresh(), ssthresh);
    assert_eq!(a.cwnd(), ssthresh + 3 * mss, "cwnd = ssthresh + 3*SMSS");
    let rx = out(&mut a, 20 * MILLIS);
    assert_eq!(rx.len(), 1);
    let data = |s: &Seg| {
        wire::parse_tcp(s, A.addr, B.addr)
            .map(|(h, p)| (h.seq, p.to_vec()))
            .unwrap()
    };
    assert!(data(&rx[0]) == data(&segs[0]), "the same data again");
    assert_eq!(a.stats().fast_retransmits, 1);
    // Each further duplicate inflates by one SMSS (step 4); new data goes
    // out once the inflated window passes the flight (step 5).
    let mut sent_new = 0;
    for (k, ack) in acks[3..].iter().enumerate() {
        a.handle_segment(21 * MILLIS, B.addr, ack);
        assert_eq!(a.cwnd(), ssthresh + (4 + k as u64) * mss);
        sent_new += out(&mut a, 21 * MILLIS).len();
    }
    // cwnd ends at ssthresh + 9 SMSS = 14 SMSS against a flight of 10.
    assert_eq!(sent_new, 4);
    // The retransmission fills the hole: one ACK for everything; deflate (step 6).
    b.handle_segment(25 * MILLIS, A.addr, &rx[0]);
    let ack = out(&mut b, 25 * MILLIS);
    a.handle_segment(30 * MILLIS, B.addr, &ack[0]);
    assert!(!a.in_recovery());
    assert_eq!(a.cwnd(), ssthresh);
    a.check_invariants().unwrap();
}

#[test]
fn newreno_partial_ack_retransmits_the_next_hole() {
    let (mut a, mut b, segs) = setup(cfg(false, CcKind::NewReno));
    let mss = a.smss();
    // Segments 0 and 5 lost.
    let mut acks = vec![];
    for (k, s) in segs.iter().enumerate() {
        if k != 0 && k != 5 {
            b.handle_segment(15 * MILLIS, A.addr, s);
            acks.extend(out(&mut b, 15 * MILLIS));
        }
    }
    for ack in &acks {
        a.handle_segment(20 * MILLIS, B.addr, ack);
    }
    let first = out(&mut a, 20 * MILLIS);
    assert_eq!(seq_of(&first[0]), seq_of(&segs[0]));
    let ssthresh = a.ssthresh();
    // The retransmission arrives: B acknowledges up to segment 5 (a partial ACK).
    b.handle_segment(25 * MILLIS, A.addr, &first[0]);
    let partial = out(&mut b, 25 * MILLIS);
    let inflated = a.cwnd();
    a.handle_segment(30 * MILLIS, B.addr, &partial[0]);
    assert!(
        a.in_recovery(),
        "RFC 6582: a partial ACK does not end recovery"
    );
    assert_eq!((a.stats().recoveries_ended, a.stats().recovery_ns), (0, 0));
    let rx = out(&mut a, 30 * MILLIS);
    assert_eq!(
        seq_of(&rx[0]),
        seq_of(&segs[5]),
        "the next hole is resent at once"
    );
    // Deflated by the 5 segments acknowledged, plus one SMSS back.
    assert_eq!(a.cwnd(), inflated - 5 * mss + mss);
    // Its ACK covers the recovery point: exit with min(ssthresh, FlightSize + SMSS).
    b.handle_segment(35 * MILLIS, A.addr, &rx[0]);
    let full = out(&mut b, 35 * MILLIS);
    a.handle_segment(40 * MILLIS, B.addr, &full[0]);
    assert!(!a.in_recovery());
    // One episode, from the third duplicate (20 ms) to the full ACK (40 ms).
    assert_eq!(a.stats().recoveries, 1);
    assert_eq!(a.stats().recoveries_ended, 1);
    assert_eq!(a.stats().recovery_ns, 20 * MILLIS);
    assert_eq!(a.cwnd(), ssthresh.min(a.flight_size().max(mss) + mss));
    assert_eq!(
        a.stats().ssthresh_changes,
        1,
        "one reduction for the window"
    );
    a.check_invariants().unwrap();
}

#[test]
fn reno_exits_on_the_partial_ack() {
    let (mut a, mut b, segs) = setup(cfg(false, CcKind::Reno));
    let mut acks = vec![];
    for (k, s) in segs.iter().enumerate() {
        if k != 0 && k != 5 {
            b.handle_segment(15 * MILLIS, A.addr, s);
            acks.extend(out(&mut b, 15 * MILLIS));
        }
    }
    for ack in &acks {
        a.handle_segment(20 * MILLIS, B.addr, ack);
    }
    let first = out(&mut a, 20 * MILLIS);
    b.handle_segment(25 * MILLIS, A.addr, &first[0]);
    let partial = out(&mut b, 25 * MILLIS);
    a.handle_segment(30 * MILLIS, B.addr, &partial[0]);
    assert!(
        !a.in_recovery(),
        "RFC 5681: the first new ACK ends fast recovery"
    );
    assert_eq!(a.cwnd(), a.ssthresh());
}

#[test]
fn sack_recovery_resends_every_hole_without_waiting() {
    let (mut a, mut b, segs) = setup(cfg(true, CcKind::NewReno));
    // Segments 0, 3 and 6 lost.
    let mut acks = vec![];
    for (k, s) in segs.iter().enumerate() {
        if ![0, 3, 6].contains(&k) {
            b.handle_segment(15 * MILLIS, A.addr, s);
            acks.extend(out(&mut b, 15 * MILLIS));
        }
    }
    let mut resent = vec![];
    for ack in &acks {
        a.handle_segment(20 * MILLIS, B.addr, ack);
        resent.extend(out(&mut a, 20 * MILLIS).iter().map(seq_of));
        a.check_invariants().unwrap();
    }
    // RFC 6675 IsLost: 0 and 3 have three SACKed segments above them; 6 has
    // two (7, 8, 9 -> three once 9 arrives).
    let holes: Vec<u32> = [0, 3, 6].iter().map(|&k| seq_of(&segs[k])).collect();
    for h in &holes {
        assert!(resent.contains(h), "hole {h} resent: {resent:?}");
    }
    assert_eq!(a.stats().recoveries, 1);
    assert_eq!(a.stats().retransmissions, 3, "only the holes");
    // cwnd = ssthresh = FlightSize / 2 (RFC 6675 §5 step 4.2). The first
    // two duplicates each let a new segment out (pipe-based sending, like
    // limited transmit); RFC 5681 §3.2 step 2 leaves those out of the
    // FlightSize that is halved: 10 segments, not 12.
    assert_eq!(a.flight_size(), 12 * a.smss());
    assert_eq!(a.ssthresh(), 5 * a.smss());
    assert_eq!(a.cwnd(), a.ssthresh());
}

#[test]
fn prr_spreads_the_reduction_over_the_acks() {
    let (mut a, mut b, segs) = setup(Config {
        prr: true,
        ..cfg(true, CcKind::NewReno)
    });
    let acks = dupacks(&mut b, &segs);
    let mut per_ack = vec![];
    for ack in &acks {
        a.handle_segment(20 * MILLIS, B.addr, ack);
        per_ack.push(out(&mut a, 20 * MILLIS).len());
    }
    // The first two duplicates send new data (pipe-based, like limited
    // transmit); the third starts recovery (the retransmission) with
    // RecoverFS = 12 segments and ssthresh = 5. PRR then sends at most one
    // segment per ACK and brings pipe down to ssthresh, not below
    // (RFC 6937 §3.1, PRR-SSRB).
    let mss = a.smss();
    assert_eq!(a.ssthresh(), 5 * mss);
    assert_eq!(per_ack[..3], [1, 1, 1]);
    assert!(
        per_ack.iter().all(|&n| n <= 1),
        "never a burst: {per_ack:?}"
    );
    assert_eq!(a.bytes_in_flight(), a.ssthresh(), "{per_ack:?}");
    assert_eq!(a.stats().retransmissions, 1);
}

#[test]
fn initial_window_of_three_and_ten_segments() {
    // RFC 6928 §2 / RFC 5681 §3.1: the first flight is the initial window.
    for (iw, expect) in [(1, 1), (3, 3), (4, 4), (10, 10)] {
        let (_, _, segs) = setup(Config {
            initial_window: iw,
            ..cfg(true, CcKind::NewReno)
        });
        assert_eq!(segs.len(), expect, "IW{iw}");
    }
}

/// A fixed window with a pacing rate: the connection spaces its sends.
struct Paced;

impl ratelab_stack::cc::CongestionControl for Paced {
    fn name(&self) -> &'static str {
        "paced"
    }
    fn on_ack(&mut self, _: &ratelab_stack::cc::AckSample) {}
    fn on_congestion_event(&mut self, _: u64, _: u64) {}
    fn on_recovery_exit(&mut self, _: u64, _: u64) {}
    fn on_rto(&mut self, _: u64, _: u64) {}
    fn on_idle_restart(&mut self, _: u64, _: u64) {}
    fn window(&self) -> u64 {
        1 << 20
    }
    fn ssthresh(&self) -> u64 {
        u64::MAX
    }
    fn pacing_rate(&self) -> Option<u64> {
        Some(1_000_000) // bytes per second
    }
}

#[test]
fn a_pacing_rate_spaces_the_segments() {
    use ratelab_stack::testbed::{LinkConfig, Testbed};
    let cfg = Config::default();
    let mut tb = Testbed::with_config(cfg, LinkConfig::default(), LinkConfig::default()).unwrap();
    tb.a.set_congestion_control(|_, _| Box::new(Paced));
    let mut sends = vec![];
    let (mut last, mut prev_step) = (0, 0);
    tb.run_until(
        200 * MILLIS,
        &mut |now, a: &mut Connection, _b: &mut Connection| {
            if a.is_established() {
                a.send(&[9u8; 10_000]);
            }
            let n = a.stats().bytes_sent;
            if n != last {
                sends.push(prev_step);
                last = n;
            }
            prev_step = now;
            None
        },
    );
    assert_eq!(tb.a.cc().name(), "paced");
    // 1448 data + 32 header bytes at 1 MB/s: one segment every 1.48 ms.
    let gaps: Vec<u64> = sends.windows(2).map(|w| w[1] - w[0]).collect();
    assert!(gaps.len() > 50, "{}", gaps.len());
    assert!(gaps.iter().all(|&g| g == 1_480_000), "{gaps:?}");
}

#[test]
fn karn_no_rtt_sample_from_a_retransmitted_segment() {
    let (mut a, mut b, segs) = setup(cfg(true, CcKind::NewReno));
    let samples = a.stats().rtt_samples;
    let srtt = a.rtt().srtt();
    // Nothing is acknowledged: the RTO (200 ms minimum) fires and resends the first segment.
    let rx = out(&mut a, 211 * MILLIS);
    assert_eq!(a.stats().rtos, 1);
    assert_eq!(rx.len(), 1);
    // The original arrives after all; its ACK follows 1 ms after the retransmission.
    b.handle_segment(211 * MILLIS, A.addr, &segs[0]);
    for ack in out(&mut b, 211 * MILLIS) {
        a.handle_segment(212 * MILLIS, B.addr, &ack);
    }
    assert!(
        a.snd_una() != seq_of(&segs[0]),
        "the first segment is acknowledged"
    );
    // RFC 6298 §3 (Karn): no sample from it (it would say 1 ms) ...
    assert_eq!(a.stats().rtt_samples, samples);
    assert_eq!(a.rtt().srtt(), srtt);
    // ... and its timestamp echo shows the timeout was spurious (RFC 3522).
    assert_eq!(a.stats().spurious_rtos, 1);
}
