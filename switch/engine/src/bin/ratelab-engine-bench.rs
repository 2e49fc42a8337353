//! Engine throughput benchmark (inject + poll, 32 packets per poll): basic
//! IPv4 forwarding (LPM, checksum verify and update, TTL decrement) with
//! 1,000 and 10,000 routes of mixed prefix lengths, no I/O, one thread.
//!
//! Usage: `ratelab-engine-bench [RESULTS_FILE] [PACKETS]`. Prints a table and,
//! when RESULTS_FILE is given, writes the same lines there.

use ratelab_engine::{MatchValue, Switch};
use std::fmt::Write as _;
use std::time::Instant;

const PROGRAM: &str = include_str!("../../tests/fixtures/basic.json");

struct Lcg(u64);
impl Lcg {
    fn next(&mut self) -> u32 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) as u32
    }
}

fn csum(b: &[u8]) -> u16 {
    let mut s: u32 = b
        .chunks(2)
        .map(|c| u16::from_be_bytes([c[0], *c.get(1).unwrap_or(&0)]) as u32)
        .sum();
    while s > 0xffff {
        s = (s & 0xffff) + (s >> 16);
    }
    !(s as u16)
}

fn packet(dst: u32, len: usize) -> Vec<u8> {
    let mut p = vec![0, 0, 0, 0, 0, 0xaa, 0, 0, 0, 0, 0, 0xbb, 0x08, 0x00];
    let total = (len - 14) as u16;
    let mut ip = vec![
        0x45,
        0,
        (total >> 8) as u8,
        total as u8,
        0,
        1,
        0x40,
        0,
        64,
        17,
        0,
        0,
        192,
        168,
        0,
        1,
    ];
    ip.extend_from_slice(&dst.to_be_bytes());
    let c = csum(&ip);
    ip[10] = (c >> 8) as u8;
    ip[11] = c as u8;
    p.extend_from_slice(&ip);
    p.resize(len, 0x5a);
    p
}

/// Builds a switch with `n` routes of mixed prefix lengths; returns the
/// switch and destination addresses that hit them.
fn setup(n: usize) -> (Switch, Vec<u32>) {
    // basic.json sizes the route table for 1,024 entries; allow more here.
    let program = PROGRAM.replace("\"max_size\": 1024", "\"max_size\": 65536");
    let mut sw = Switch::new(&program, 1).expect("basic.json loads");
    let mut rng = Lcg(42);
    let mut dsts = Vec::new();
    let lens = [8u32, 12, 16, 20, 22, 24, 24, 24, 24, 28, 32];
    let mut added = 0;
    while added < n {
        let len = lens[rng.next() as usize % lens.len()];
        let addr = rng.next() & (u32::MAX << (32 - len));
        let port = 1 + rng.next() % 8;
        if sw
            .table_add(
                "MyIngress.ipv4_lpm",
                vec![MatchValue::Lpm(addr as u128, len)],
                "MyIngress.ipv4_forward",
                &[0x0000_0000_1000 + port as u128, port as u128],
                0,
            )
            .is_ok()
        {
            added += 1;
            let host = if len == 32 { 0 } else { u32::MAX >> len };
            dsts.push(addr | (rng.next() & host));
        }
    }
    (sw, dsts)
}

/// CPU time this thread has run, in ns (Linux: /proc/thread-self/schedstat),
/// so the result does not depend on other processes sharing the cores.
fn thread_cpu_ns() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    s.split_whitespace().next()?.parse().ok()
}

/// Returns (packets/s by wall clock, packets/s by thread CPU time, forwarded).
fn run(routes: usize, pkt_len: usize, total: usize) -> (f64, Option<f64>, usize) {
    let (mut sw, dsts) = setup(routes);
    let pkts: Vec<Vec<u8>> = dsts
        .iter()
        .take(1024)
        .map(|&d| packet(d, pkt_len))
        .collect();
    let mut out = Vec::with_capacity(64);
    let batch = 32;
    let mut t = 0u64;
    let mut forwarded = 0usize;
    // warm-up
    for p in pkts.iter().take(256) {
        sw.inject(1, p, t);
    }
    sw.poll_into(t, &mut out);
    out.clear();
    let start = Instant::now();
    let cpu0 = thread_cpu_ns();
    let mut i = 0usize;
    while i < total {
        for _ in 0..batch {
            sw.inject(1, &pkts[i % pkts.len()], t);
            i += 1;
        }
        t += 1;
        sw.poll_into(t, &mut out);
        forwarded += out.len();
        out.clear();
    }
    let secs = start.elapsed().as_secs_f64();
    let cpu = match (cpu0, thread_cpu_ns()) {
        (Some(a), Some(b)) if b > a => Some(total as f64 / ((b - a) as f64 / 1e9)),
        _ => None,
    };
    (total as f64 / secs, cpu, forwarded)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let total: usize = args
        .get(2)
        .and_then(|s| s.parse().ok())
        .unwrap_or(3_000_000);
    let mut report = String::new();
    writeln!(
        report,
        "# ratelab-engine bench: basic IPv4 forwarding, engine only, 1 thread, best of 3 runs"
    )
    .unwrap();
    writeln!(
        report,
        "# Mpps_wall: by wall clock; Mpps_cpu: by this thread's CPU time (one core)"
    )
    .unwrap();
    writeln!(
        report,
        "# routes  pkt_bytes  packets  forwarded  Mpps_wall  Mpps_cpu"
    )
    .unwrap();
    for (routes, len) in [(1000usize, 64usize), (1000, 512), (10_000, 64)] {
        // Best of three runs: the machine may be shared.
        let (pps, cpu, fwd) = (0..3)
            .map(|_| run(routes, len, total))
            .max_by(|a, b| a.1.unwrap_or(a.0).total_cmp(&b.1.unwrap_or(b.0)))
            .expect("three runs");
        let cpu = cpu.map_or("n/a".to_string(), |c| format!("{:.3}", c / 1e6));
        let line = format!(
            "{routes:>8}  {len:>9}  {total:>7}  {fwd:>9}  {:>9.3}  {cpu:>8}",
            pps / 1e6
        );
        println!("{line}");
        writeln!(report, "{line}").unwrap();
    }
    if let Some(path) = args.get(1) {
        if let Some(dir) = std::path::Path::new(path).parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        std::fs::write(path, &report).expect("write results");
    }
    print!(
        "{}",
        if args.get(1).is_none() {
            report.as_str()
        } else {
            ""
        }
    );
}
