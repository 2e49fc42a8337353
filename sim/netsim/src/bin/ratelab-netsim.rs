//! Runs one scenario file on one router program and writes the results.
//!
//! ratelab-netsim SCENARIO_JSON ROUTER_JSON OUT_DIR
//!
//! OUT_DIR gets results.json, flows.csv, ports.csv, drops.csv, counters.csv,
//! queue.csv and flow_samples.csv (the samples written as they are taken);
//! a one-line summary per flow goes to stdout. Bad input: one line on stderr
//! naming the file and field, exit status 1, nothing written. A run that
//! takes more than 2 s reports its progress on stderr every tenth.
//!
//! ratelab-netsim --batch ROUTER_JSON
//!
//! Many scenarios on one router program, compiled once (compiling it is most
//! of a small run's time): each line of stdin is a JSON object
//! `{"scenario": SCENARIO_JSON, "out": OUT_DIR}`, run as above (without the
//! summary and the progress), answered by one line on stdout: `{"ok": true}`,
//! or `{"error": MESSAGE}` with the line the single run prints on stderr.
//! Ends at the end of stdin; a router program that does not load is one
//! line on stderr and exit status 1.

use ratelab_engine::LoadedProgram;
use ratelab_netsim::{Results, Scenario, Simulator};
use serde::Deserialize;
use std::io::{BufRead, Write};
use std::path::Path;
use std::process::ExitCode;
use std::time::Instant;

const USAGE: &str = "usage: ratelab-netsim SCENARIO_JSON ROUTER_JSON OUT_DIR \
                     | ratelab-netsim --batch ROUTER_JSON";

fn read(path: &str) -> Result<String, String> {
    std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))
}

/// The router program: its text, or loaded once for every scenario (--batch).
enum Program<'a> {
    Text(&'a str),
    Loaded(&'a LoadedProgram),
}

/// Runs one scenario file into `out`; `progress`: report on stderr.
fn simulate(
    scenario: &str,
    program: Program,
    out: &str,
    progress: bool,
) -> Result<Results, String> {
    let text = read(scenario)?;
    let s = Scenario::from_json(&text, scenario).map_err(|e| e.to_string())?;
    let sim = match program {
        Program::Text(json) => Simulator::new(&s, json),
        Program::Loaded(loaded) => Simulator::with_program(&s, loaded),
    };
    let sim = sim.map_err(|e| format!("{scenario}: {e}"))?;
    // Progress on stderr every tenth of the run, once it has taken 2 s.
    let started = Instant::now();
    let tenth = (s.duration_ns / 10).max(1);
    // The samples go to their files as they are taken: memory stays flat.
    let results = sim.run_into_dir(Path::new(out), tenth, |t, events| {
        if progress && started.elapsed().as_secs() >= 2 {
            eprintln!(
                "ratelab-netsim: {} % ({:.1} of {:.1} s simulated, {events} events, {:.1} s)",
                t / tenth * 10,
                t as f64 / 1e9,
                s.duration_ns as f64 / 1e9,
                started.elapsed().as_secs_f64()
            );
        }
    });
    results.map_err(|e| format!("{out}: {e}"))
}

fn run(args: &[String]) -> Result<String, String> {
    let [scenario, router, out] = args else {
        return Err(USAGE.into());
    };
    let program = read(router)?;
    let results = simulate(scenario, Program::Text(&program), out, true)?;
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

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Job {
    scenario: String,
    out: String,
}

/// --batch: the program compiled once, then a scenario per line of stdin.
fn batch(router: &str) -> Result<(), String> {
    let loaded = Simulator::load_program(&read(router)?).map_err(|e| format!("{router}: {e}"))?;
    let mut stdout = std::io::stdout().lock();
    for (n, line) in std::io::stdin().lock().lines().enumerate() {
        let line = line.map_err(|e| format!("stdin: {e}"))?;
        let answer = match serde_json::from_str::<Job>(&line) {
            Ok(job) => simulate(&job.scenario, Program::Loaded(&loaded), &job.out, false),
            Err(e) => Err(format!(
                "stdin line {}: expected {{\"scenario\": PATH, \"out\": DIR}}: {e}",
                n + 1
            )),
        };
        let reply = match answer {
            Ok(_) => serde_json::json!({"ok": true}),
            Err(e) => serde_json::json!({ "error": e }),
        };
        writeln!(stdout, "{reply}")
            .and_then(|()| stdout.flush())
            .map_err(|e| format!("stdout: {e}"))?;
    }
    Ok(())
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("--batch") {
        let [_, router] = &args[..] else {
            eprintln!("ratelab-netsim: {USAGE}");
            return ExitCode::FAILURE;
        };
        return match batch(router) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("ratelab-netsim: {e}");
                ExitCode::FAILURE
            }
        };
    }
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
