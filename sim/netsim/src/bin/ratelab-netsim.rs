//! Runs one scenario file on one router program and writes the results.
//!
//! ratelab-netsim SCENARIO_JSON ROUTER_JSON OUT_DIR
//!
//! OUT_DIR gets results.json, flows.csv, ports.csv, drops.csv, counters.csv,
//! queue.csv and flow_samples.csv (the samples written as they are taken);
//! a one-line summary per flow goes to stdout. Bad input: one line on stderr
//! naming the file and field, exit status 1, nothing written. A run that
//! takes more than 2 s reports its progress on stderr every tenth.

use ratelab_netsim::{Scenario, Simulator};
use std::path::Path;
use std::process::ExitCode;
use std::time::Instant;

fn run(args: &[String]) -> Result<String, String> {
    let [scenario, router, out] = args else {
        return Err("usage: ratelab-netsim SCENARIO_JSON ROUTER_JSON OUT_DIR".into());
    };
    let read = |p: &str| std::fs::read_to_string(p).map_err(|e| format!("{p}: {e}"));
    let text = read(scenario)?;
    let s = Scenario::from_json(&text, scenario).map_err(|e| e.to_string())?;
    let program = read(router)?;
    let sim = Simulator::new(&s, &program).map_err(|e| format!("{scenario}: {e}"))?;
    // Progress on stderr every tenth of the run, once it has taken 2 s.
    let started = Instant::now();
    let tenth = (s.duration_ns / 10).max(1);
    // The samples go to their files as they are taken: memory stays flat.
    let results = sim.run_into_dir(Path::new(out), tenth, |t, events| {
        if started.elapsed().as_secs() >= 2 {
            eprintln!(
                "ratelab-netsim: {} % ({:.1} of {:.1} s simulated, {events} events, {:.1} s)",
                t / tenth * 10,
                t as f64 / 1e9,
                s.duration_ns as f64 / 1e9,
                started.elapsed().as_secs_f64()
            );
        }
    });
    let results = results.map_err(|e| format!("{out}: {e}"))?;
    let mut summary = String::new();
    for f in &results.flows {
        summary += &format!(
            "{} {} -> {} ({}): {} bytes, goodput {:.3} Mbit/s\n",
            f.name,
            f.from,
            f.to,
            f.transport,
            f.bytes_received,
            f.goodput_bps / 1e6
        );
    }
    Ok(summary)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match run(&args) {
        Ok(text) => {
            print!("{text}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("ratelab-netsim: {e}");
            ExitCode::FAILURE
        }
    }
}
