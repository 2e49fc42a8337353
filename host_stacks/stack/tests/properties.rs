//! Property tests: no input sequence panics the connection or breaks its
//! bookkeeping (scoreboard sums, in-flight accounting, sequence space), and
//! any path (loss, duplication, reordering, corruption) delivers exactly
//! the bytes written. PROPTEST_CASES sets the number of cases.

use proptest::prelude::*;
use ratelab_stack::cc::{CcKind, CubicParams, VegasParams};
use ratelab_stack::tcp::{Config, Connection, RtoFormula};
use ratelab_stack::testbed::{LinkConfig, Testbed, A, B};
use ratelab_stack::wire::{self, Flags, TcpHeader, TcpOptions};
use ratelab_stack::{Nanos, MILLIS, SECONDS};

fn cases(default: u32) -> ProptestConfig {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default);
    ProptestConfig {
        cases,
        ..ProptestConfig::default()
    }
}

/// An established pair with `inflight` bytes sent by A and not yet delivered.
fn pair(cfg: &Config, inflight: usize) -> (Connection, Connection) {
    let mut a = Connection::connect(cfg.clone(), A, B, 0xffff_f000, 0).unwrap();
    let mut b = Connection::listen(cfg.clone(), B, 0x8000_0000, 0).unwrap();
    let mut buf = [0u8; 2048];
    for _ in 0..3 {
        while let Some(t) = a.poll_transmit(0, &mut buf) {
            b.handle_segment(0, A.addr, &buf[..t.len]);
        }
        while let Some(t) = b.poll_transmit(0, &mut buf) {
            a.handle_segment(0, B.addr, &buf[..t.len]);
        }
    }
    a.send(&vec![7u8; inflight]);
    while a.poll_transmit(1, &mut buf).is_some() {}
    (a, b)
}

fn drain(c: &mut Connection, now: Nanos) {
    let mut buf = [0u8; 2048];
    let mut n = 0;
    while c.poll_transmit(now, &mut buf).is_some() {
        n += 1;
        assert!(n < 10_000, "endless output");
    }
}

#[derive(Clone, Debug)]
struct Seg {
    flags: u8,
    seq_off: i32,
    ack_off: i32,
    window: u16,
    payload: usize,
    sack: Vec<(i32, u16)>,
    ts: Option<i32>,
    dt: u32,
}

fn seg_strategy() -> impl Strategy<Value = Seg> {
    (
        any::<u8>(),
        prop_oneof![-70_000i32..70_000, -3_000i32..3_000, Just(0)],
        prop_oneof![-70_000i32..70_000, 0i32..20_000, Just(0)],
        any::<u16>(),
        prop_oneof![Just(0usize), 1usize..1600],
        proptest::collection::vec((-5_000i32..30_000, 1u16..10_000), 0..4),
        proptest::option::of(-1_000i32..1_000),
        0u32..2_000_000_000,
    )
        .prop_map(
            |(flags, seq_off, ack_off, window, payload, sack, ts, dt)| Seg {
                flags,
                seq_off,
                ack_off,
                window,
                payload,
                sack,
                ts,
                dt,
            },
        )
}

/// A well-formed segment from the peer, its fields near what `to` expects.
fn build(to: &Connection, from_addr: [u8; 4], s: &Seg) -> Vec<u8> {
    let mut o = TcpOptions::default();
    if let Some(ts) = s.ts {
        o.timestamps = Some(((1u32 << 31).wrapping_add(ts as u32), 0));
    }
    for (i, &(l, len)) in s.sack.iter().take(3).enumerate() {
        let left = to.snd_una().wrapping_add(l as u32);
        o.sack[i] = (left, left.wrapping_add(len as u32));
        o.sack_len = i as u8 + 1;
    }
    let h = TcpHeader {
        src_port: to.remote().port,
        dst_port: to.local().port,
        seq: to.rcv_nxt().wrapping_add(s.seq_off as u32),
        ack: to.snd_una().wrapping_add(s.ack_off as u32),
        flags: Flags(s.flags),
        window: s.window,
        options: o,
    };
    let payload = vec![0xabu8; s.payload];
    let mut buf = vec![0u8; 2048];
    let n = wire::emit_tcp(&h, &payload, from_addr, to.local().addr, &mut buf).unwrap();
    buf.truncate(n);
    buf
}

proptest! {
    #![proptest_config(cases(48))]

    #[test]
    fn arbitrary_bytes_are_counted_never_panic(
        inputs in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..120), 1..40),
    ) {
        let cfg = Config::default();
        let (mut a, mut b) = pair(&cfg, 20_000);
        let mut now = 10;
        for bytes in &inputs {
            now += MILLIS;
            b.handle_segment(now, A.addr, bytes);
            a.handle_segment(now, B.addr, bytes);
            drain(&mut a, now);
            drain(&mut b, now);
            a.check_invariants().map_err(TestCaseError::fail)?;
            b.check_invariants().map_err(TestCaseError::fail)?;
        }
        // Random bytes almost never carry a valid checksum: counted as malformed.
        prop_assert!(a.stats().malformed + a.stats().segments_received > 0);
    }

    #[test]
    fn arbitrary_segments_keep_the_bookkeeping(
        sack in any::<bool>(),
        segs in proptest::collection::vec(seg_strategy(), 1..60),
    ) {
        let cfg = Config { sack, ..Config::default() };
        let (mut a, mut b) = pair(&cfg, 60_000);
        let mut now = 10;
        for s in &segs {
            now += s.dt as u64 / 1000;
            let to_a = build(&a, B.addr, s);
            a.handle_segment(now, B.addr, &to_a);
            let to_b = build(&b, A.addr, s);
            b.handle_segment(now, A.addr, &to_b);
            drain(&mut a, now);
            drain(&mut b, now);
            a.check_invariants().map_err(TestCaseError::fail)?;
            b.check_invariants().map_err(TestCaseError::fail)?;
            prop_assert!(a.bytes_in_flight() <= a.flight_size());
        }
    }

    #[test]
    fn any_path_delivers_exactly_the_bytes_written(
        seed in any::<u64>(),
        loss in 0.0f64..0.08,
        duplicate in 0.0f64..0.05,
        reorder in 0.0f64..0.1,
        corrupt in 0.0f64..0.03,
        sack in any::<bool>(),
        timestamps in any::<bool>(),
        prr in any::<bool>(),
        delack in any::<bool>(),
        hystart in any::<bool>(),
        linux_rto in any::<bool>(),
        iss in any::<u32>(),
        cc in 0u8..5,
        total in 1usize..120_000,
    ) {
        let cc = match cc {
            0 => CcKind::Reno,
            1 => CcKind::NewReno,
            2 => CcKind::Cubic(CubicParams::default()),
            3 => CcKind::Cubic(CubicParams { linux: true, ..CubicParams::default() }),
            _ => CcKind::Vegas(VegasParams::default()),
        };
        // cubic-linux has its own HyStart: HyStart++ on top is refused.
        let hystart = hystart && !matches!(cc, CcKind::Cubic(p) if p.linux);
        let cfg = Config {
            sack,
            timestamps,
            prr,
            delayed_ack: delack.then_some(40 * MILLIS),
            hystart,
            rto_formula: if linux_rto { RtoFormula::Linux } else { RtoFormula::Rfc6298 },
            cc,
            recv_buffer: 64_000,
            ..Config::default()
        };
        let link = |s| LinkConfig {
            delay: 5 * MILLIS,
            rate_bps: 10_000_000,
            queue: 30,
            loss,
            duplicate,
            reorder,
            reorder_delay: 2 * MILLIS,
            corrupt,
            seed: s,
            ..LinkConfig::default()
        };
        let mut tb = Testbed::with_iss(cfg.clone(), cfg, link(seed), link(seed ^ 0x55), iss).unwrap();
        let data: Vec<u8> = (0..total).map(|i| (i * 7 + i / 251) as u8).collect();
        let (mut written, mut got) = (0usize, Vec::with_capacity(total));
        let mut err = None;
        tb.run_until(600 * SECONDS, &mut |_now, a: &mut Connection, b: &mut Connection| {
            if written < total {
                written += a.send(&data[written..]);
                if written == total {
                    a.close();
                }
            }
            let mut buf = [0u8; 4096];
            loop {
                let n = b.recv(&mut buf);
                if n == 0 { break; }
                got.extend_from_slice(&buf[..n]);
            }
            if b.peer_closed() { b.close(); }
            if err.is_none() {
                err = a.check_invariants().err().or_else(|| b.check_invariants().err());
            }
            None
        });
        prop_assert_eq!(err, None);
        prop_assert_eq!(got.len(), total);
        prop_assert!(got == data, "bytes differ");
        prop_assert!(tb.b.peer_closed());
    }
}
