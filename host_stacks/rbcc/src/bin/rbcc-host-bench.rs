//! CPU per data packet of the rate-based host in Rust alone: one sender and
//! one receiver joined in memory (lossless, no delay), the clock advanced to
//! each pacing slot, as host_stacks/benchmarks/rbcc_host_cpu.py does through
//! the Python binding. Usage: rbcc-host-bench [PACKETS] [REPEAT]

use std::time::Instant;

use rbcc_host::{Receiver, Sender, SenderConfig, SenderState};

const FLOW: u16 = 7;
const RATE: u32 = 125_000_000; // 1 Gbit/s of 1000-byte packets: one every 8 us

fn one_run(packets: u64) -> f64 {
    let mut config = SenderConfig::new(RATE, RATE, Some(packets), None);
    config.flow_id = FLOW;
    let mut sender = Sender::new(config, 0).expect("a valid configuration");
    let mut receiver = Receiver::new(FLOW);
    let mut outbox: Vec<Vec<u8>> = Vec::new();
    let mut used = 0;
    let mut delivered = 0u64;
    let start = Instant::now();
    while let Some(now) = sender.poll_at() {
        used = 0;
        sender
            .on_timer(now, |d| {
                if outbox.len() == used {
                    outbox.push(Vec::new());
                }
                outbox[used].clear();
                outbox[used].extend_from_slice(d);
                used += 1;
            })
            .expect("time moves forward");
        for datagram in &outbox[..used] {
            if let Some(ack) = receiver.on_datagram(now, datagram) {
                sender.on_datagram(now, ack).expect("time moves forward");
            }
            receiver.take_delivered(|_, payload| delivered += payload.len() as u64);
        }
    }
    let elapsed = start.elapsed().as_secs_f64();
    let _ = used;
    assert_eq!(sender.state(), SenderState::Closed);
    assert_eq!(receiver.metrics().packets_received, packets);
    assert!(delivered > 0);
    elapsed
}

fn main() {
    let mut args = std::env::args().skip(1);
    let packets: u64 = args
        .next()
        .map_or(2_000_000, |a| a.parse().expect("PACKETS: an integer"));
    let repeat: usize = args
        .next()
        .map_or(5, |a| a.parse().expect("REPEAT: an integer"));
    let best = (0..repeat)
        .map(|_| one_run(packets))
        .fold(f64::INFINITY, f64::min);
    println!(
        "rust (crate ratelab-rbcc-host, no Python): {:.0} ns per data packet ({packets} packets, \
         best of {repeat}; sender + receiver + ACK, in memory; wall time of one thread)",
        best * 1e9 / packets as f64
    );
}
