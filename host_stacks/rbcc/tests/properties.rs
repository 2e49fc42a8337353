//! Property tests: whatever the network does (loss, reordering, duplication,
//! corrupted datagrams), the sender and receiver never panic, the receiver
//! delivers a gap-free prefix of the segments with the right payloads, and on
//! a path that only loses and reorders, a closed connection delivered
//! everything with exact loss accounting.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use proptest::prelude::*;
use rbcc_host::{Receiver, Sender, SenderConfig, SenderState};

const FLOW: u16 = 3;

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        // xorshift64*
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn chance(&mut self, percent: u8) -> bool {
        self.next() % 100 < u64::from(percent)
    }
}

#[derive(Debug, Clone)]
struct Path {
    seed: u64,
    loss: u8,
    reorder: u8,
    duplicate: u8,
    corrupt: u8,
    segments: u64,
    rate: u32,
}

fn paths() -> impl Strategy<Value = Path> {
    (
        any::<u64>(),
        0u8..40,
        0u8..30,
        0u8..10,
        0u8..10,
        0u64..60,
        5_000u32..2_000_000,
    )
        .prop_map(
            |(seed, loss, reorder, duplicate, corrupt, segments, rate)| Path {
                seed: seed | 1,
                loss,
                reorder,
                duplicate,
                corrupt,
                segments,
                rate,
            },
        )
}

/// (time, order, to the sender, datagram), earliest first.
type Events = BinaryHeap<Reverse<(u64, u64, bool, Vec<u8>)>>;

struct Outcome {
    sender: Sender,
    receiver: Receiver,
    delivered: Vec<(u64, Vec<u8>)>,
}

fn run(path: &Path) -> Outcome {
    let mut rng = Rng(path.seed);
    let mut cfg = SenderConfig::new(path.rate, path.rate, Some(path.segments), None);
    cfg.flow_id = FLOW;
    cfg.size = 200;
    let mut sender = Sender::new(cfg, 0).unwrap();
    let mut receiver = Receiver::new(FLOW);
    let mut events = Events::new();
    let mut order = 0;
    let mut now = 0;
    let mut delivered = vec![];
    let mut send =
        |events: &mut BinaryHeap<_>, rng: &mut Rng, now: u64, to_sender: bool, data: &[u8]| {
            let copies = if rng.chance(path.duplicate) { 2 } else { 1 };
            for _ in 0..copies {
                if rng.chance(path.loss) {
                    continue;
                }
                let mut data = data.to_vec();
                if rng.chance(path.corrupt) && !data.is_empty() {
                    let at = (rng.next() % data.len() as u64) as usize;
                    data[at] ^= 1 << (rng.next() % 8);
                    if rng.chance(30) {
                        data.truncate(at);
                    }
                }
                let extra = if rng.chance(path.reorder) {
                    rng.next() % 30_000
                } else {
                    0
                };
                order += 1;
                events.push(Reverse((now + 5_000 + extra, order, to_sender, data)));
            }
        };
    for _ in 0..200_000 {
        let timer = sender.poll_at();
        let event = events.peek().map(|Reverse(e)| e.0);
        let next = match (timer, event) {
            (None, None) => break,
            (Some(t), Some(e)) => t.min(e),
            (Some(t), None) => t,
            (None, Some(e)) => e,
        };
        // a pacing slot already due is a poll_at in the past: call at once
        now = now.max(next);
        if event == Some(next) {
            let Reverse((_, _, to_sender, data)) = events.pop().unwrap();
            if to_sender {
                sender.on_datagram(now, &data).unwrap();
            } else if let Some(ack) = receiver.on_datagram(now, &data) {
                let ack = ack.to_vec();
                send(&mut events, &mut rng, now, true, &ack);
            }
            receiver.take_delivered(|seq, p| delivered.push((seq, p.to_vec())));
        } else {
            let mut out = vec![];
            sender.on_timer(now, |d| out.push(d.to_vec())).unwrap();
            for d in out {
                send(&mut events, &mut rng, now, false, &d);
            }
        }
    }
    Outcome {
        sender,
        receiver,
        delivered,
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(
        std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(64)))]

    #[test]
    fn no_panic_and_in_order_delivery_whatever_the_path(path in paths()) {
        let o = run(&path);
        let payload = o.sender.config().payload_len();
        for (k, (seq, data)) in o.delivered.iter().enumerate() {
            prop_assert_eq!(*seq, k as u64);
            if path.corrupt == 0 {
                prop_assert_eq!(data, &vec![*seq as u8; payload]);
            }
        }
        let m = o.sender.metrics();
        prop_assert!(m.segments_acked <= o.sender.segments());
        prop_assert!(o.sender.unacked() as u64 <= o.sender.segments());
        prop_assert!(o.sender.done(), "the sender must close or fail, never hang");
    }

    #[test]
    fn a_lossy_reordering_path_delivers_everything_once(mut path in paths()) {
        path.duplicate = 0;
        path.corrupt = 0;
        let o = run(&path);
        prop_assume!(o.sender.state() == SenderState::Closed);
        prop_assert_eq!(o.delivered.len() as u64, path.segments);
        prop_assert_eq!(o.sender.metrics().segments_acked, path.segments);
        let r = o.receiver.metrics();
        if r.fin_pn.is_some() {
            prop_assert_eq!(o.sender.metrics().data_packets_sent, r.packets_received + o.receiver.lost());
        }
    }
}
