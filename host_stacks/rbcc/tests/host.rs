//! The rate-based host's rules, sender and receiver joined by a small
//! deterministic network (per-direction delay, drops by predicate, and an
//! optional stand-in router that lowers the rate field).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use rbcc_host::wire::{
    encode_headers, Packet, RbccHeader, TrumpHeader, FLAG_ACK, FLAG_FIN, FLAG_SYN, MAX_RANGES,
    RATE_UNLIMITED,
};
use rbcc_host::{Listener, Receiver, ReceiverState, Sender, SenderConfig, SenderState};

const FLOW: u16 = 7;
const ROUTER: u32 = 9;
const SECOND: u64 = 1_000_000;

fn config(segments: u64) -> SenderConfig {
    let mut c = SenderConfig::new(125_000, 50_000, Some(segments), None);
    c.flow_id = FLOW;
    c
}

type Drop = Box<dyn FnMut(usize, &Packet<'_>) -> bool>;

struct Link {
    delay_us: u64,
    cap: Option<u32>,
    drop: Drop,
    sent: Vec<(u64, Vec<u8>)>,
    dropped: Vec<Vec<u8>>,
}

impl Link {
    fn new(delay_us: u64) -> Self {
        Link {
            delay_us,
            cap: None,
            drop: Box::new(|_, _| false),
            sent: vec![],
            dropped: vec![],
        }
    }

    fn with_drop(mut self, drop: impl FnMut(usize, &Packet<'_>) -> bool + 'static) -> Self {
        self.drop = Box::new(drop);
        self
    }

    fn capped(mut self, cap: u32) -> Self {
        self.cap = Some(cap);
        self
    }

    fn transmit(&mut self, now: u64, data: &[u8]) -> Option<(u64, Vec<u8>)> {
        let index = self.sent.len();
        self.sent.push((now, data.to_vec()));
        let packet = Packet::decode(data).expect("hosts send RBCC/TRUMP");
        if (self.drop)(index, &packet) {
            self.dropped.push(data.to_vec());
            return None;
        }
        let mut data = data.to_vec();
        if let Some(cap) = self.cap {
            let mut h = packet.rbcc;
            if cap < h.rate {
                h.rate = cap;
                h.bottle_node = ROUTER;
                h.encode(&mut data[..24]);
            }
        }
        Some((now + self.delay_us, data))
    }

    fn data_sent(&self) -> Vec<(u64, TrumpHeader, RbccHeader)> {
        self.sent
            .iter()
            .filter_map(|(t, d)| {
                let p = Packet::decode(d).unwrap();
                (p.rbcc.flags == 0).then_some((*t, p.trump, p.rbcc))
            })
            .collect()
    }
}

/// (time, order, to the sender, datagram), earliest first.
type Events = BinaryHeap<Reverse<(u64, u64, bool, Vec<u8>)>>;

struct Net {
    sender: Sender,
    receiver: Receiver,
    forward: Link,
    reverse: Link,
    now: u64,
    events: Events,
    order: u64,
    delivered: Vec<(u64, Vec<u8>)>,
}

impl Net {
    fn new(cfg: SenderConfig, forward: Link, reverse: Link) -> Self {
        Net {
            sender: Sender::new(cfg, 0).unwrap(),
            receiver: Receiver::new(FLOW),
            forward,
            reverse,
            now: 0,
            events: BinaryHeap::new(),
            order: 0,
            delivered: vec![],
        }
    }

    fn push(&mut self, to_sender: bool, data: &[u8]) {
        let link = if to_sender {
            &mut self.reverse
        } else {
            &mut self.forward
        };
        if let Some((t, d)) = link.transmit(self.now, data) {
            self.events.push(Reverse((t, self.order, to_sender, d)));
            self.order += 1;
        }
    }

    fn run(mut self, until: u64) -> Self {
        for _ in 0..1_000_000 {
            let timer = self.sender.poll_at();
            let event = self.events.peek().map(|Reverse(e)| e.0);
            match (timer, event) {
                (None, None) => return self,
                (t, Some(e)) if t.is_none_or(|t| e < t) => {
                    if e > until {
                        return self;
                    }
                    let Reverse((t, _, to_sender, data)) = self.events.pop().unwrap();
                    self.now = self.now.max(t);
                    if to_sender {
                        self.sender.on_datagram(self.now, &data).unwrap();
                    } else if let Some(ack) = self.receiver.on_datagram(self.now, &data) {
                        let ack = ack.to_vec();
                        self.push(true, &ack);
                    }
                    let mut got = vec![];
                    self.receiver
                        .take_delivered(|seq, p| got.push((seq, p.to_vec())));
                    self.delivered.extend(got);
                }
                (Some(t), _) => {
                    if t > until {
                        return self;
                    }
                    self.now = self.now.max(t);
                    let mut out = vec![];
                    self.sender
                        .on_timer(self.now, |d| out.push(d.to_vec()))
                        .unwrap();
                    for d in out {
                        self.push(false, &d);
                    }
                }
                (None, Some(_)) => unreachable!(),
            }
        }
        panic!("the simulation did not settle");
    }

    fn assert_delivered_in_order(&self, count: u64) {
        let payload = self.sender.config().payload_len();
        assert_eq!(self.delivered.len() as u64, count);
        for (k, (seq, data)) in self.delivered.iter().enumerate() {
            assert_eq!(*seq, k as u64);
            assert_eq!(data, &vec![*seq as u8; payload]);
        }
    }
}

fn drop_pns(pns: &'static [u32]) -> impl FnMut(usize, &Packet<'_>) -> bool {
    move |_, p| p.rbcc.flags == 0 && pns.contains(&p.trump.pn)
}

#[test]
fn syn_every_second_then_give_up_after_30_s() {
    let mut sender = Sender::new(config(40), 1000).unwrap();
    let mut syns = vec![];
    while let Some(t) = sender.poll_at() {
        sender
            .on_timer(t, |d| syns.push((t, Packet::decode(d).unwrap().rbcc)))
            .unwrap();
    }
    let times: Vec<u64> = syns.iter().map(|s| s.0).collect();
    assert_eq!(
        times,
        (0..30).map(|k| 1000 + k * SECOND).collect::<Vec<_>>()
    );
    assert_eq!(sender.state(), SenderState::Failed);
    assert_eq!(sender.error(), Some("no SYN-ACK after 30 s, giving up"));
    for (_, h) in syns {
        assert_eq!(
            (
                h.flags,
                h.rate,
                h.bottle_node,
                h.return_rate,
                h.return_bottle_node,
                h.current_rate
            ),
            (FLAG_SYN, 125_000, 0, RATE_UNLIMITED, 0, 50_000)
        );
    }
}

#[test]
fn initial_rate_then_the_first_data_ack_sets_the_rate_and_pacing_is_exact() {
    let net = Net::new(
        config(40),
        Link::new(15_000).capped(30_000),
        Link::new(15_000),
    )
    .run(600 * SECOND);
    let sent = net.forward.data_sent();
    let t0 = 30_000;
    assert_eq!((sent[0].0, sent[1].0), (t0, t0 + 20_000)); // 1000 B at 50_000 B/s
    for (k, (t, _, _)) in sent.iter().enumerate().skip(1) {
        assert_eq!(
            *t,
            t0 + 20_000 + ((k as u64 - 1) * 1_000_000_000).div_ceil(30_000)
        );
    }
    for (_, _, h) in &sent[..2] {
        assert_eq!(
            (h.current_rate, h.return_rate, h.return_bottle_node),
            (50_000, RATE_UNLIMITED, 0)
        );
    }
    for (_, _, h) in &sent[2..] {
        assert_eq!(
            (h.rate, h.current_rate, h.return_rate, h.return_bottle_node),
            (125_000, 30_000, 30_000, ROUTER)
        );
    }
    let rates: Vec<_> = net
        .sender
        .metrics()
        .rates
        .iter()
        .map(|r| (r.t_us, r.rate))
        .collect();
    assert_eq!(rates, vec![(0, 50_000), (t0 + 30_000, 30_000)]);
    assert_eq!(net.sender.state(), SenderState::Closed);
    assert!(net.sender.metrics().fin_acked);
    net.assert_delivered_in_order(40);
}

#[test]
fn adopting_the_synack_rate() {
    let mut cfg = config(20);
    cfg.adopt_synack_rate = true;
    let net = Net::new(cfg, Link::new(15_000).capped(30_000), Link::new(15_000)).run(600 * SECOND);
    for (k, (t, _, h)) in net.forward.data_sent().iter().enumerate() {
        assert_eq!(*t, 30_000 + (k as u64 * 1_000_000_000).div_ceil(30_000));
        assert_eq!((h.current_rate, h.return_rate), (30_000, 30_000));
    }
}

#[test]
fn selective_retransmission_resends_exactly_the_lost_segments() {
    let net = Net::new(
        config(40),
        Link::new(10_000)
            .capped(30_000)
            .with_drop(drop_pns(&[3, 4, 10])),
        Link::new(10_000),
    )
    .run(600 * SECOND);
    let m = net.sender.metrics();
    assert_eq!((m.retransmissions, m.rto_expiries), (3, 0));
    let seqs: Vec<u32> = net
        .forward
        .data_sent()
        .iter()
        .map(|(_, t, _)| t.seq)
        .collect();
    let mut resent: Vec<u32> = seqs
        .iter()
        .copied()
        .filter(|s| seqs.iter().filter(|x| *x == s).count() > 1)
        .collect();
    resent.sort_unstable();
    resent.dedup();
    assert_eq!(resent, vec![3, 4, 8]);
    assert_eq!(net.receiver.lost(), 3);
    assert_eq!(
        m.data_packets_sent,
        net.receiver.metrics().packets_received + net.receiver.lost()
    );
    assert_eq!(net.receiver.metrics().duplicates, 0);
    // losses never change the rate
    assert_eq!(
        m.rates.iter().map(|r| r.rate).collect::<Vec<_>>(),
        vec![50_000, 30_000]
    );
    net.assert_delivered_in_order(40);
}

#[test]
fn a_retransmission_in_flight_is_not_resent_for_older_reports() {
    // 8 ms per packet, 100 ms RTT: a dozen ACKs report segment 3 missing after
    // it was resent; only those caused by later transmissions could resend it.
    let net = Net::new(
        config(40),
        Link::new(50_000).with_drop(drop_pns(&[3])),
        Link::new(50_000),
    )
    .run(600 * SECOND);
    assert_eq!(net.sender.metrics().retransmissions, 1);
    assert_eq!(net.receiver.metrics().duplicates, 0);
    net.assert_delivered_in_order(40);
}

#[test]
fn a_lost_tail_is_recovered_by_the_retransmission_timeout() {
    let net = Net::new(
        config(20),
        Link::new(10_000).with_drop(drop_pns(&[19])),
        Link::new(10_000),
    )
    .run(600 * SECOND);
    assert!(net.sender.metrics().rto_expiries >= 1);
    assert_eq!(net.sender.metrics().retransmissions, 1);
    assert_eq!(net.sender.state(), SenderState::Closed);
    net.assert_delivered_in_order(20);
}

#[test]
fn silent_receiver_fails_the_connection_after_30_s() {
    let net = Net::new(
        config(40),
        Link::new(10_000).with_drop(|i, _| i > 0),
        Link::new(10_000),
    )
    .run(600 * SECOND);
    assert_eq!(net.sender.state(), SenderState::Failed);
    assert_eq!(net.sender.error(), Some("no ACK for 30 s, giving up"));
    assert_eq!(net.now, 20_000 + 30 * SECOND);
}

#[test]
fn unanswered_fin_is_repeated_every_second_for_30_s() {
    let net = Net::new(
        config(5),
        Link::new(10_000).with_drop(|_, p| p.rbcc.flags == FLAG_FIN),
        Link::new(10_000),
    )
    .run(600 * SECOND);
    let fins = net.forward.dropped.len();
    assert_eq!(fins, 30);
    assert_eq!(net.sender.state(), SenderState::Closed);
    assert!(!net.sender.metrics().fin_acked);
    assert_eq!(net.sender.metrics().segments_acked, 5);
}

#[test]
fn duration_bounds_new_data() {
    let mut cfg = SenderConfig::new(50_000, 50_000, None, Some(SECOND));
    cfg.flow_id = FLOW;
    let net = Net::new(cfg, Link::new(10_000), Link::new(10_000)).run(600 * SECOND);
    assert_eq!(net.sender.segments(), 50);
    net.assert_delivered_in_order(50);
}

fn data(flags: u8, seq: u32, pn: u32) -> Vec<u8> {
    let rbcc = RbccHeader {
        rate: 40_000,
        bottle_node: 3,
        ..RbccHeader::trump(flags)
    };
    let trump = TrumpHeader {
        flow_id: FLOW,
        seq,
        pn,
        ts: 1234,
        ..Default::default()
    };
    let mut out = vec![];
    encode_headers(&mut out, &rbcc, &trump, &[]);
    out.extend_from_slice(b"pppppppppp");
    out
}

#[test]
fn receiver_acks_ranges_duplicates_and_exact_losses() {
    let mut r = Receiver::new(FLOW);
    assert!(r.on_datagram(0, &data(0, 0, 0)).is_none()); // no connection yet
    let synack = Packet::decode(r.on_datagram(0, &data(FLAG_SYN, 0, 0)).unwrap())
        .unwrap()
        .rbcc;
    assert_eq!(synack.flags, FLAG_SYN | FLAG_ACK);
    assert_eq!(
        (
            synack.rate,
            synack.return_rate,
            synack.return_bottle_node,
            synack.current_rate
        ),
        (RATE_UNLIMITED, 40_000, 3, 0)
    );
    let mut reports = vec![];
    for (seq, pn) in [(0, 0), (1, 1), (4, 4), (6, 6), (3, 7), (6, 8)] {
        let ack = r
            .on_datagram(pn as u64, &data(0, seq, pn))
            .unwrap()
            .to_vec();
        let p = Packet::decode(&ack).unwrap();
        reports.push((
            p.trump.cum_ack,
            p.trump.high,
            p.ranges.iter().collect::<Vec<_>>(),
        ));
    }
    assert_eq!(
        reports,
        vec![
            (1, 1, vec![]),
            (2, 2, vec![]),
            (2, 5, vec![(2, 4)]),
            (2, 7, vec![(2, 4), (5, 6)]),
            (2, 7, vec![(2, 3), (5, 6)]),
            (2, 7, vec![(2, 3), (5, 6)]),
        ]
    );
    assert_eq!((r.metrics().duplicates, r.lost()), (1, 3));
    r.on_datagram(20, &data(0, 2, 9));
    r.on_datagram(20, &data(0, 5, 10));
    let mut seqs = vec![];
    r.take_delivered(|s, p| {
        assert_eq!(p, b"pppppppppp");
        seqs.push(s)
    });
    assert_eq!(seqs, vec![0, 1, 2, 3, 4, 5, 6]);
    r.on_datagram(30, &data(FLAG_FIN, 7, 13));
    assert_eq!(r.lost(), 5);
    assert!(r.complete() && r.state() == ReceiverState::Closed);
    assert!(r.on_datagram(31, &data(0, 8, 14)).is_none()); // data after FIN
}

#[test]
fn a_receiver_clock_going_backwards_does_not_panic() {
    let mut r = Receiver::new(FLOW);
    r.on_datagram(1_000, &data(FLAG_SYN, 0, 0));
    assert!(r.on_datagram(10, &data(0, 0, 0)).is_some());
    assert_eq!(r.metrics().rates[0].t_us, 0);
}

#[test]
fn range_report_is_cut_at_max_ranges() {
    let mut r = Receiver::new(FLOW);
    r.on_datagram(0, &data(FLAG_SYN, 0, 0));
    for k in 0..MAX_RANGES as u32 + 3 {
        r.on_datagram(u64::from(k), &data(0, 2 * k + 1, k));
    }
    let (high, ranges) = r.missing();
    assert_eq!(
        ranges,
        (0..MAX_RANGES as u32)
            .map(|k| (2 * k, 2 * k + 1))
            .collect::<Vec<_>>()
    );
    assert_eq!(high, u64::from(ranges[MAX_RANGES - 1].1));
}

#[test]
fn time_must_not_go_backwards_and_bad_configurations_are_refused() {
    let mut sender = Sender::new(config(1), 100).unwrap();
    let err = sender.on_timer(99, |_| {}).unwrap_err();
    assert_eq!(err.to_string(), "time went backwards: 99 us after 100 us");
    for (edit, message) in [
        (
            (|c: &mut SenderConfig| c.desired_rate = 0) as fn(&mut SenderConfig),
            "desired_rate",
        ),
        (|c| c.initial_rate = RATE_UNLIMITED, "initial_rate"),
        (|c| c.size = 67, "size must be 68..65535"),
        (|c| c.segments = None, "give segments or duration_us"),
        (|c| c.syn_interval_us = 0, "syn_interval_us"),
    ] {
        let mut c = config(1);
        edit(&mut c);
        assert!(Sender::new(c, 0).err().unwrap().contains(message));
    }
}

#[test]
fn foreign_and_malformed_datagrams_are_ignored() {
    let mut sender = Sender::new(config(3), 0).unwrap();
    sender.on_timer(0, |_| {}).unwrap();
    for junk in [&b""[..], b"\x10", &[0x12; 48][..], &data(FLAG_SYN, 0, 0)] {
        sender.on_datagram(1, junk).unwrap();
    }
    assert_eq!(sender.state(), SenderState::SynSent);
    assert_eq!(sender.metrics().acks_received, 0);
    assert_eq!(sender.metrics().malformed, 3); // the SYN decodes: foreign, not malformed
    let mut r = Receiver::new(FLOW);
    assert!(r.on_datagram(0, b"\x10").is_none());
    assert_eq!(r.state(), ReceiverState::Listen);
    assert_eq!(r.metrics().malformed, 1);
    let mut listener = Listener::new();
    assert!(listener.on_datagram(0, &"a", b"\x10").is_none());
    assert!(listener.on_datagram(0, &"a", &data(0, 0, 0)).is_none()); // no SYN: no connection
    assert_eq!((listener.malformed(), listener.flows().count()), (1, 0));
    assert!(listener
        .on_datagram(0, &"a", &data(FLAG_SYN, 0, 0))
        .is_some());
    assert!(listener
        .on_datagram(0, &"b", &data(FLAG_SYN, 0, 0))
        .is_some());
    assert!(listener.on_datagram(1, &"a", &data(0, 0, 0)).is_some());
    let flows: Vec<_> = listener
        .flows()
        .map(|(k, r)| (k.0, r.metrics().segments_delivered))
        .collect();
    assert_eq!(flows, vec![("a", 1), ("b", 0)]);
}
