//! The links of the project's two example topologies (sim/examples/
//! dumbbell.yaml and three_routers.yaml) as scenarios, around the routers
//! and hosts that `tools/router_plans.py` writes from the same files. The
//! tests and the benchmark run them; the next milestone reads every field
//! from the topology file instead.

use crate::events::Nanos;
use crate::scenario::{
    DirectionSpec, FlowSpec, HostSpec, LinkEnd, LinkSpec, RouterSpec, Scenario, ScenarioError,
};
use serde::Deserialize;

const MS: Nanos = 1_000_000;

/// What `tools/router_plans.py` writes: each router's entries and port
/// settings, and each host's address, as the controller plans them.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Plans {
    pub routers: Vec<RouterSpec>,
    pub hosts: Vec<HostSpec>,
}

impl Plans {
    /// Reads the tool's output; `filename` names it in errors.
    pub fn from_json(text: &str, filename: &str) -> Result<Plans, ScenarioError> {
        serde_json::from_str(text).map_err(|e| {
            ScenarioError::new(
                format!("{filename}:{}:{}", e.line(), e.column()),
                e.to_string(),
            )
        })
    }
}

fn end(node: &str, port: Option<u32>) -> LinkEnd {
    LinkEnd {
        node: node.to_string(),
        port,
    }
}

fn dir(rate_bps: u64, delay_ns: Nanos) -> DirectionSpec {
    DirectionSpec {
        rate_bps,
        trace: None,
        delay_ns,
        jitter_ns: 0,
        queue_limit: None,
    }
}

fn link(
    a: LinkEnd,
    b: LinkEnd,
    forward: DirectionSpec,
    reverse: Option<DirectionSpec>,
) -> LinkSpec {
    LinkSpec {
        a,
        b,
        forward,
        reverse,
    }
}

/// sim/examples/dumbbell.yaml: sender -- r1 -- receiver; r1 -> receiver is
/// the 10 Mbit/s, 20 ms bottleneck (port 2), the rest 100 Mbit/s.
pub fn dumbbell(plans: Plans, flows: Vec<FlowSpec>, duration_ns: Nanos) -> Scenario {
    Scenario {
        seed: 1,
        duration_ns,
        sample: None,
        routers: plans.routers,
        hosts: plans.hosts,
        links: vec![
            link(
                end("sender", None),
                end("r1", Some(1)),
                dir(100_000_000, MS),
                None,
            ),
            link(
                end("r1", Some(2)),
                end("receiver", None),
                dir(10_000_000, 20 * MS),
                Some(dir(100_000_000, 20 * MS)),
            ),
        ],
        flows,
    }
}

/// sim/examples/three_routers.yaml: src1, src2 -- r1 -- r2 -- r3 -- dst,
/// src3 -- r2; r2 -> r3 (8 Mbit/s, 10 ms, RED) is the bottleneck.
pub fn three_routers(plans: Plans, flows: Vec<FlowSpec>, duration_ns: Nanos) -> Scenario {
    let fast = || dir(100_000_000, MS);
    Scenario {
        seed: 1,
        duration_ns,
        sample: None,
        routers: plans.routers,
        hosts: plans.hosts,
        links: vec![
            link(end("src1", None), end("r1", Some(1)), fast(), None),
            link(end("src2", None), end("r1", Some(2)), fast(), None),
            link(end("src3", None), end("r2", Some(1)), fast(), None),
            link(
                end("r1", Some(3)),
                end("r2", Some(2)),
                dir(20_000_000, 5 * MS),
                None,
            ),
            link(
                end("r2", Some(3)),
                end("r3", Some(1)),
                dir(8_000_000, 10 * MS),
                None,
            ),
            link(end("r3", Some(2)), end("dst", None), fast(), None),
        ],
        flows,
    }
}
