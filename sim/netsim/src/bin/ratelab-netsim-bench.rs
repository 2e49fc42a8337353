//! Delivered packets per wall-clock second on the dumbbell
//! (sim/examples/dumbbell.yaml's links: 100 Mbit/s access, a 10 Mbit/s,
//! 20 ms bottleneck with a 20-packet FIFO): three Reno bulk flows and a
//! 2 Mbit/s Poisson UDP flow.
//!
//! ratelab-netsim-bench ROUTER_JSON PLANS_JSON [SIMULATED_SECONDS [OUT_FILE]]
//!
//! ROUTER_JSON: router.p4 compiled (ratelab-p4c); PLANS_JSON: what
//! sim/netsim/tools/router_plans.py writes for sim/examples/dumbbell.yaml.
//! Only `run` is timed (not loading and compiling the router program).

use ratelab_netsim::examples::{dumbbell, Plans};
use ratelab_netsim::scenario::{AppSpec, FlowSpec, TcpSpec, UdpSpec};
use ratelab_netsim::Simulator;
use std::process::ExitCode;
use std::time::Instant;

fn flow(name: &str) -> FlowSpec {
    FlowSpec {
        port: None,
        name: name.into(),
        from: "sender".into(),
        to: "receiver".into(),
        start_ns: 0,
        stop_ns: None,
        tcp: None,
        udp: None,
        rbcc: None,
        ping: None,
    }
}

fn run(args: &[String]) -> Result<String, String> {
    let [router, plans, rest @ ..] = args else {
        return Err(
            "usage: ratelab-netsim-bench ROUTER_JSON PLANS_JSON [SIMULATED_SECONDS [OUT_FILE]]"
                .into(),
        );
    };
    let read = |p: &str| std::fs::read_to_string(p).map_err(|e| format!("{p}: {e}"));
    let program = read(router)?;
    let plans = Plans::from_json(&read(plans)?, plans).map_err(|e| e.to_string())?;
    let seconds: u64 = match rest.first() {
        Some(s) => s.parse().ok().filter(|&n| n > 0).ok_or_else(|| {
            format!("SIMULATED_SECONDS: expected a whole number above 0, got {s:?}")
        })?,
        None => 30,
    };
    let mut flows: Vec<FlowSpec> = (1..=3)
        .map(|i| FlowSpec {
            port: None,
            tcp: Some(TcpSpec {
                cc: "reno".into(),
                app: AppSpec::Bulk { message_size: None },
                mss: None,
                knobs: Default::default(),
                packet_delays: false,
            }),
            ..flow(&format!("reno{i}"))
        })
        .collect();
    flows.push(FlowSpec {
        port: None,
        udp: Some(UdpSpec {
            pattern: "poisson".into(),
            rate_bps: 2_000_000,
            size: None,
            on_ns: None,
            off_ns: None,
        }),
        ..flow("udp")
    });
    let scenario = dumbbell(plans, flows, seconds * 1_000_000_000);
    let sim = Simulator::new(&scenario, &program).map_err(|e| e.to_string())?;
    let start = Instant::now();
    let results = sim.run();
    let wall = start.elapsed().as_secs_f64();
    let text = format!(
        "netsim dumbbell (3 reno + 1 poisson udp, {seconds} s simulated): {} packets delivered, \
         {} events in {wall:.3} s wall: {:.0} delivered packets/s, {:.0} events/s, {:.1}x real time\n",
        results.delivered_packets,
        results.events,
        results.delivered_packets as f64 / wall,
        results.events as f64 / wall,
        seconds as f64 / wall,
    );
    if let Some(out) = rest.get(1) {
        std::fs::write(out, &text).map_err(|e| format!("{out}: {e}"))?;
    }
    Ok(text)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match run(&args) {
        Ok(text) => {
            print!("{text}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("ratelab-netsim-bench: {e}");
            ExitCode::FAILURE
        }
    }
}
