//! Times one scenario: building the simulator (reading nothing else; the
//! router program loaded and compiled once, the routers configured) and the
//! run, separately. Prints one JSON line:
//! `{"build_s", "run_s", "simulated_s", "delivered_packets", "events"}`.
//!
//! ratelab-netsim-time SCENARIO_JSON ROUTER_JSON
//!
//! The speed benchmark (bench/ns3/bench_netsim.py, `make bench-netsim`) runs
//! it beside ns-3 on the same scenario.

use ratelab_netsim::{Scenario, Simulator};
use std::process::ExitCode;
use std::time::Instant;

fn run(args: &[String]) -> Result<String, String> {
    let [scenario, router] = args else {
        return Err("usage: ratelab-netsim-time SCENARIO_JSON ROUTER_JSON".into());
    };
    let read = |p: &str| std::fs::read_to_string(p).map_err(|e| format!("{p}: {e}"));
    let text = read(scenario)?;
    let program = read(router)?;
    let start = Instant::now();
    let s = Scenario::from_json(&text, scenario).map_err(|e| e.to_string())?;
    let sim = Simulator::new(&s, &program).map_err(|e| format!("{scenario}: {e}"))?;
    let built = Instant::now();
    let results = sim.run();
    let done = Instant::now();
    Ok(format!(
        "{{\"build_s\": {:.6}, \"run_s\": {:.6}, \"simulated_s\": {}, \"delivered_packets\": {}, \"events\": {}}}\n",
        (built - start).as_secs_f64(),
        (done - built).as_secs_f64(),
        s.duration_ns as f64 / 1e9,
        results.delivered_packets,
        results.events,
    ))
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match run(&args) {
        Ok(text) => {
            print!("{text}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("ratelab-netsim-time: {e}");
            ExitCode::FAILURE
        }
    }
}
