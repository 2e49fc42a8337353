//! One bulk flow of ratelab-stack across the dumbbell that
//! bench/ns3/stack_dumbbell.cc builds in ns-3, writing the same CSV trace and
//! JSON summary, so bench/ns3/compare.py can put the two side by side.
//!
//!   sender --100 Mbit/s, 1 ms-- router --20 Mbit/s, 20 ms-- receiver
//!
//! The testbed has one link per direction, so the access link is folded into
//! it: its 1 ms and its serialization of a 1500-byte packet (120 us) are added
//! to the propagation delay (at five times the bottleneck's rate it never
//! queues one flow). The drop-tail queue holds 100 packets waiting behind the
//! one being transmitted, as in the ns-3 program. TCP runs with
//! ratelab-stack's defaults (MSS 1460: 1448-byte payloads with timestamps;
//! SACK; delayed ACKs every second segment or 40 ms; minimum RTO 200 ms;
//! initial RTO 1 s).
//!
//! Usage: `ratelab-stack-dumbbell --cc=reno|newreno|cubic|vegas --csv=FILE
//! --summary=FILE [--duration=SECONDS] [--iw=SEGMENTS] [--ack-every-segment=0|1]`
//! (`--ack-every-segment=1`: no delayed ACKs).

use ratelab_stack::app::{Application, Bulk, Sink};
use ratelab_stack::cc::CcKind;
use ratelab_stack::tcp::{Config, Connection};
use ratelab_stack::testbed::{LinkConfig, Testbed};
use ratelab_stack::{Nanos, MILLIS, SECONDS};
use std::fmt::Write as _;
use std::process::ExitCode;

/// Packets waiting at the bottleneck, not counting the one on the wire.
const QUEUE_WAITING: usize = 100;
/// One CSV row every this much simulated time.
const SAMPLE: Nanos = 10 * MILLIS;

struct Args {
    cc_name: String,
    cc: CcKind,
    csv: String,
    summary: String,
    duration: Nanos,
    iw: u32,
    ack_every_segment: bool,
}

fn parse_args(args: impl Iterator<Item = String>) -> Result<Args, String> {
    let (mut cc, mut csv, mut summary) = (None, None, None);
    let (mut duration, mut iw, mut ack_every_segment) = (30 * SECONDS, 10u32, false);
    for arg in args {
        let Some((key, value)) = arg.strip_prefix("--").and_then(|a| a.split_once('=')) else {
            return Err(format!("expected --OPTION=VALUE, got {arg:?}"));
        };
        match key {
            "cc" => cc = Some(value.to_string()),
            "csv" => csv = Some(value.to_string()),
            "summary" => summary = Some(value.to_string()),
            "duration" => {
                duration = match value.parse::<f64>() {
                    Ok(s) if (0.1..=3600.0).contains(&s) => (s * SECONDS as f64).round() as Nanos,
                    _ => {
                        return Err(format!(
                            "--duration: expected 0.1 to 3600 seconds, got {value:?}"
                        ))
                    }
                }
            }
            "iw" => {
                iw = match value.parse::<u32>() {
                    Ok(n) if (1..=1000).contains(&n) => n,
                    _ => return Err(format!("--iw: expected 1 to 1000 segments, got {value:?}")),
                }
            }
            "ack-every-segment" => {
                ack_every_segment = match value {
                    "0" => false,
                    "1" => true,
                    _ => return Err(format!("--ack-every-segment: expected 0 or 1, got {value:?}")),
                }
            }
            _ => {
                return Err(format!(
                    "unknown option --{key} (expected --cc, --csv, --summary, --duration, --iw, --ack-every-segment)"
                ))
            }
        }
    }
    let cc_name = cc.ok_or("--cc: missing (reno, newreno, cubic or vegas)")?;
    let kind = cc_name.parse::<CcKind>().map_err(|e| format!("--{e}"))?;
    Ok(Args {
        cc_name,
        cc: kind,
        csv: csv.ok_or("--csv: missing (the trace file to write)")?,
        summary: summary.ok_or("--summary: missing (the JSON summary file to write)")?,
        duration,
        iw,
        ack_every_segment,
    })
}

fn dumbbell(args: &Args) -> Result<Testbed, String> {
    let forward = LinkConfig {
        // access 1 ms + 1500 bytes at 100 Mbit/s, bottleneck 20 ms
        delay: 21 * MILLIS + 120_000,
        rate_bps: 20_000_000,
        // the testbed's limit counts the packet being transmitted
        queue: QUEUE_WAITING + 1,
        seed: 1,
        ..LinkConfig::default()
    };
    let reverse = LinkConfig {
        delay: 21 * MILLIS,
        rate_bps: 20_000_000,
        queue: 0,
        seed: 2,
        ..LinkConfig::default()
    };
    let cfg = Config {
        cc: args.cc,
        initial_window: args.iw,
        delayed_ack: if args.ack_every_segment {
            None
        } else {
            Config::default().delayed_ack
        },
        ..Config::default()
    };
    Testbed::with_config(cfg, forward, reverse).map_err(|e| e.to_string())
}

fn run(args: &Args) -> Result<(), String> {
    let mut tb = dumbbell(args)?;
    let mut bulk = Bulk::new(1448);
    let mut sink = Sink::new(false);
    let mut csv = String::from("time_s,cwnd_bytes,ssthresh_bytes,bytes_acked,queue_packets\n");
    let (mut queue_sum, mut queue_max, mut samples) = (0u64, 0usize, 0u64);
    let mut at = SAMPLE;
    while at <= args.duration {
        tb.run_until(at, &mut |now, a: &mut Connection, b: &mut Connection| {
            bulk.poll(now, a);
            sink.poll(now, b);
            None
        });
        let waiting = tb.queue_ab().saturating_sub(1);
        queue_sum += waiting as u64;
        queue_max = queue_max.max(waiting);
        samples += 1;
        let ssthresh = match tb.a.ssthresh() {
            u64::MAX => "inf".to_string(),
            s => s.to_string(),
        };
        writeln!(
            csv,
            "{},{},{},{},{}",
            at as f64 / SECONDS as f64,
            tb.a.cwnd(),
            ssthresh,
            tb.a.stats().bytes_acked,
            waiting
        )
        .expect("writing to a String");
        at += SAMPLE;
    }
    std::fs::write(&args.csv, csv)
        .map_err(|e| format!("--csv: cannot write {:?}: {e}", args.csv))?;

    let s = tb.a.stats();
    let seconds = args.duration as f64 / SECONDS as f64;
    let summary = format!(
        "{{\"stack\": \"ratelab\", \"cc\": \"{}\", \"duration_s\": {}, \"bytes_acked\": {}, \
         \"goodput_bps\": {}, \"retransmissions\": {}, \"rtos\": {}, \"recoveries\": {}, \
         \"drops\": {}, \"mean_queue_packets\": {}, \"max_queue_packets\": {}}}\n",
        args.cc_name,
        seconds,
        s.bytes_acked,
        s.bytes_acked as f64 * 8.0 / seconds,
        s.retransmissions,
        s.rtos,
        s.recoveries,
        tb.link_stats().0.queue_drops,
        queue_sum as f64 / samples.max(1) as f64,
        queue_max
    );
    std::fs::write(&args.summary, summary)
        .map_err(|e| format!("--summary: cannot write {:?}: {e}", args.summary))
}

fn main() -> ExitCode {
    match parse_args(std::env::args().skip(1)).and_then(|a| run(&a)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("ratelab-stack-dumbbell: {e}");
            ExitCode::from(2)
        }
    }
}
