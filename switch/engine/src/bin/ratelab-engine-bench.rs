//! Engine throughput benchmark (inject + poll, 32 packets per poll), no I/O,
//! one thread: basic IPv4 forwarding (LPM, checksum verify and update, TTL
//! decrement) with 1,000 and 10,000 routes of mixed prefix lengths, and,
//! given its JSON, the ratelab router (p4src/router.p4: forwarding checks,
//! LPM, port_config, FIFO admission with its own queue count, counters) with
//! 1,000 routes over 8 configured ports.
//!
//! Usage: `ratelab-engine-bench [RESULTS_FILE] [PACKETS] [ROUTER_JSON]`.
//! Prints a table and, when RESULTS_FILE is given, writes the same lines there.

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

/// The program under test.
#[derive(Clone, Copy)]
enum Program<'a> {
    Basic,
    /// router.p4 compiled to BMv2 JSON.
    Router(&'a str),
}

/// How the controls run: as native code (the default) or interpreted.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Controls {
    Compiled,
    Interpreted,
}

/// The router's entries besides routes (model/ratelab_model/p4_entries.py):
/// router_config's default and a FIFO port_config entry per port 1..=8.
fn router_setup(sw: &mut Switch) {
    sw.table_set_default(
        "RouterIngress.router_config",
        "RouterIngress.set_router",
        &[0x0a00_0001, 1500, 1_000_000],
    )
    .expect("router_config");
    for port in 1..=8u128 {
        // mac, rbcc_capacity, queue_limit, red_enabled, wq16, th_min16, th_max16, slope, s_recip, seed
        let params = [
            0x0200_0000_0000 + port,
            125_000_000,
            4096,
            0,
            0,
            0,
            0,
            0,
            0,
            0,
        ];
        sw.table_add(
            "RouterIngress.port_config",
            vec![MatchValue::Exact(port)],
            "RouterIngress.set_port",
            &params,
            0,
        )
        .expect("port_config");
    }
}

/// Builds a switch with `n` routes of mixed prefix lengths; returns the
/// switch and destination addresses that hit them.
fn setup(program: Program, controls: Controls, n: usize) -> (Switch, Vec<u32>) {
    let (mut sw, table, action) = match program {
        Program::Basic => {
            // basic.json sizes the route table for 1,024 entries; allow more here.
            let json = PROGRAM.replace("\"max_size\": 1024", "\"max_size\": 65536");
            let sw = Switch::new(&json, 1).expect("basic.json loads");
            (sw, "MyIngress.ipv4_lpm", "MyIngress.ipv4_forward")
        }
        Program::Router(json) => {
            let mut sw = Switch::new(json, 1).expect("router.json loads");
            router_setup(&mut sw);
            (sw, "RouterIngress.ipv4_lpm", "RouterIngress.set_next_hop")
        }
    };
    let compiled = sw.set_compiled(controls == Controls::Compiled);
    assert_eq!(
        compiled,
        controls == Controls::Compiled,
        "compiling the controls failed: {:?}",
        sw.compile_error()
    );
    let mut rng = Lcg(42);
    let mut dsts = Vec::new();
    let lens = [8u32, 12, 16, 20, 22, 24, 24, 24, 24, 28, 32];
    let mut added = 0;
    while added < n {
        let len = lens[rng.next() as usize % lens.len()];
        let addr = rng.next() & (u32::MAX << (32 - len));
        let port = 1 + rng.next() % 8;
        let params = match program {
            Program::Basic => [0x0000_0000_1000 + port as u128, port as u128],
            Program::Router(_) => [port as u128, 0x0000_0000_1000 + port as u128],
        };
        if sw
            .table_add(
                table,
                vec![MatchValue::Lpm(addr as u128, len)],
                action,
                &params,
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
fn run(
    program: Program,
    controls: Controls,
    routes: usize,
    pkt_len: usize,
    total: usize,
) -> (f64, Option<f64>, usize) {
    let (mut sw, dsts) = setup(program, controls, routes);
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
        // As a packet loop does once the frames are sent.
        for f in out.drain(..) {
            sw.recycle(f.data);
        }
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
    let router = args.get(3).map(|path| {
        std::fs::read_to_string(path).unwrap_or_else(|e| panic!("cannot read {path}: {e}"))
    });
    let mut report = String::new();
    writeln!(
        report,
        "# ratelab-engine bench: engine only (inject + poll, no I/O), 1 thread, best of 5 runs"
    )
    .unwrap();
    writeln!(
        report,
        "# Mpps_wall: by wall clock; Mpps_cpu: by this thread's CPU time (one core)"
    )
    .unwrap();
    writeln!(
        report,
        "# controls: compiled to native code (the default) or interpreted (the reference)"
    )
    .unwrap();
    writeln!(
        report,
        "# program  controls     routes  pkt_bytes  packets  forwarded  Mpps_wall  Mpps_cpu"
    )
    .unwrap();
    use Controls::{Compiled, Interpreted};
    let mut cases = vec![
        ("basic", Program::Basic, Compiled, 1000usize, 64usize),
        ("basic", Program::Basic, Compiled, 1000, 512),
        ("basic", Program::Basic, Compiled, 10_000, 64),
        ("basic", Program::Basic, Interpreted, 1000, 64),
    ];
    if let Some(json) = &router {
        cases.push(("router", Program::Router(json), Compiled, 1000, 64));
        cases.push(("router", Program::Router(json), Compiled, 1000, 512));
        cases.push(("router", Program::Router(json), Interpreted, 1000, 64));
        cases.push(("router", Program::Router(json), Interpreted, 1000, 512));
    }
    // RATELAB_BENCH_ONLY=router (or basic) runs one program, e.g. under a profiler.
    let only = std::env::var("RATELAB_BENCH_ONLY").ok();
    cases.retain(|c| only.as_deref().is_none_or(|o| o == c.0));
    // RATELAB_BENCH_CONTROLS=compiled (or interpreted) runs one kind of controls.
    let controls = std::env::var("RATELAB_BENCH_CONTROLS").ok();
    cases.retain(|c| {
        controls
            .as_deref()
            .is_none_or(|k| (k == "compiled") == (c.2 == Compiled))
    });
    for (name, program, controls, routes, len) in cases {
        // Best of five runs: the machine is shared, and a virtual one loses
        // CPU to its host even by thread CPU time.
        let (pps, cpu, fwd) = (0..5)
            .map(|_| run(program, controls, routes, len, total))
            .max_by(|a, b| a.1.unwrap_or(a.0).total_cmp(&b.1.unwrap_or(b.0)))
            .expect("five runs");
        // A benchmark of dropped packets would measure the wrong thing.
        assert_eq!(
            fwd, total,
            "{name}: only {fwd} of {total} packets forwarded"
        );
        let cpu = cpu.map_or("n/a".to_string(), |c| format!("{:.3}", c / 1e6));
        let how = match controls {
            Compiled => "compiled",
            Interpreted => "interpreted",
        };
        let line = format!(
            "{name:>9}  {how:<11}  {routes:>6}  {len:>9}  {total:>7}  {fwd:>9}  {:>9.3}  {cpu:>8}",
            pps / 1e6
        );
        println!("{line}");
        writeln!(report, "{line}").unwrap();
    }
    if let Some(json) = &router {
        // What compiling costs when a program loads (SetForwardingPipelineConfig).
        let (mut sw, _) = setup(Program::Router(json), Interpreted, 0);
        let start = Instant::now();
        assert!(sw.set_compiled(true));
        let line = format!(
            "# router.json: controls compiled in {:.1} ms",
            start.elapsed().as_secs_f64() * 1e3
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
