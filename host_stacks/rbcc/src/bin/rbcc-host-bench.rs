//! CPU per data packet of the rate-based host in Rust alone: one sender and
//! one receiver joined in memory (lossless, no delay), the clock advanced to
//! each pacing slot, as host_stacks/benchmarks/rbcc_host_cpu.py does through
//! the Python binding. Usage: rbcc-host-bench [PACKETS] [REPEAT]

use rbcc_host::{Receiver, Sender, SenderConfig, SenderState};

const FLOW: u16 = 7;
const RATE: u32 = 125_000_000; // 1 Gbit/s of 1000-byte packets: one every 8 us

/// CPU seconds of this process (CLOCK_PROCESS_CPUTIME_ID, as Python's process_time).
fn cpu_seconds() -> f64 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes into the timespec we pass and nothing else.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut t) };
    assert_eq!(rc, 0, "clock_gettime(CLOCK_PROCESS_CPUTIME_ID) failed");
    t.tv_sec as f64 + t.tv_nsec as f64 * 1e-9
}

fn one_run(packets: u64) -> f64 {
    let mut config = SenderConfig::new(RATE, RATE, Some(packets), None);
    config.flow_id = FLOW;
    let mut sender = Sender::new(config, 0).expect("a valid configuration");
    let mut receiver = Receiver::new(FLOW);
    let mut outbox: Vec<Vec<u8>> = Vec::new();
    let mut used = 0;
    let mut delivered = 0u64;
    let start = cpu_seconds();
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
    let elapsed = cpu_seconds() - start;
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
        "rust (crate ratelab-rbcc-host, no Python): {:.0} ns CPU per data packet ({packets} \
         packets, best of {repeat}; sender + receiver + ACK, in memory)",
        best * 1e9 / packets as f64
    );
}
