//! Resolves a scenario's names into indices and checks it: every error
//! names the field (`links[2].forward.rate_bps: ...`) and nothing is built
//! from a scenario that fails a check.

use crate::events::Nanos;
use crate::scenario::{DirectionSpec, LinkEnd, Scenario, ScenarioError};
use ratelab_engine::Trace;
use std::collections::HashMap;
use std::sync::Arc;

/// Packets a host's egress FIFO holds when the scenario does not say.
pub const DEFAULT_HOST_QUEUE: usize = 100;

/// A node a link direction ends at.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Node {
    Host(usize),
    Router(usize, u32),
}

/// One direction of a link, as the simulator runs it.
#[derive(Clone, Copy, Debug)]
pub struct Direction {
    /// 0 when a trace gives the capacity.
    pub rate_bps: u64,
    /// Index into [`Topology::traces`]: the capacity follows it.
    pub trace: Option<usize>,
    pub delay_ns: Nanos,
    /// Largest random extra delay per frame ([`crate::jitter`]).
    pub jitter_ns: Nanos,
    pub queue_limit: usize,
    pub to: Node,
}

impl Direction {
    /// Time the frame's bits take on the wire at `rate_bps`, rounded up to
    /// the nanosecond (a direction without a trace).
    pub fn serialization_ns(&self, bytes: usize) -> Nanos {
        (bytes as u128 * 8 * 1_000_000_000).div_ceil(self.rate_bps as u128) as Nanos
    }
}

/// The scenario's wiring.
pub struct Topology {
    /// Per host: the direction leaving it.
    pub host_out: Vec<Direction>,
    /// Per router: port -> the direction leaving it.
    pub router_out: Vec<HashMap<u32, Direction>>,
    /// Per router: its linked ports, ascending.
    pub router_ports: Vec<Vec<u32>>,
    pub host_index: HashMap<String, usize>,
    /// The traces links follow, each file read once.
    pub traces: Vec<Arc<Trace>>,
}

/// Trace files read so far: path -> index into `list`.
#[derive(Default)]
struct Traces {
    index: HashMap<String, usize>,
    list: Vec<Arc<Trace>>,
}

impl Traces {
    fn load(&mut self, path: &str, field: &str) -> Result<usize, ScenarioError> {
        if let Some(&i) = self.index.get(path) {
            return Ok(i);
        }
        let trace = Trace::load(std::path::Path::new(path))
            .map_err(|e| ScenarioError::new(field, e.to_string()))?;
        self.list.push(Arc::new(trace));
        self.index.insert(path.to_string(), self.list.len() - 1);
        Ok(self.list.len() - 1)
    }
}

fn err<T>(field: impl Into<String>, message: impl Into<String>) -> Result<T, ScenarioError> {
    Err(ScenarioError::new(field, message))
}

fn direction(
    d: &DirectionSpec,
    field: &str,
    to: Node,
    traces: &mut Traces,
) -> Result<Direction, ScenarioError> {
    let trace = match &d.trace {
        Some(_) if d.rate_bps > 0 => {
            return err(
                format!("{field}.trace"),
                "expected either rate_bps or trace, not both",
            )
        }
        Some(path) => Some(traces.load(path, &format!("{field}.trace"))?),
        None if d.rate_bps == 0 => {
            return err(
                format!("{field}.rate_bps"),
                "expected a rate above 0 bit/s, got 0",
            )
        }
        None => None,
    };
    if d.queue_limit == Some(0) {
        return err(
            format!("{field}.queue_limit"),
            "expected at least 1 packet, got 0",
        );
    }
    Ok(Direction {
        rate_bps: d.rate_bps,
        trace,
        delay_ns: d.delay_ns,
        jitter_ns: d.jitter_ns,
        queue_limit: d.queue_limit.unwrap_or(DEFAULT_HOST_QUEUE),
        to,
    })
}

fn unique(names: &[&str], field: &str) -> Result<HashMap<String, usize>, ScenarioError> {
    let mut map = HashMap::new();
    for (i, n) in names.iter().enumerate() {
        if n.is_empty() {
            return err(format!("{field}[{i}].name"), "expected a name, got \"\"");
        }
        if map.insert(n.to_string(), i).is_some() {
            return err(
                format!("{field}[{i}].name"),
                format!("the name {n:?} is used twice"),
            );
        }
    }
    Ok(map)
}

impl Topology {
    /// Checks names, links and port numbers (flows: [`Topology::check_flows`]).
    pub fn new(s: &Scenario) -> Result<Topology, ScenarioError> {
        if s.duration_ns == 0 {
            return err("duration_ns", "expected a duration above 0, got 0");
        }
        if let Some(sample) = &s.sample {
            if sample.interval_ns == 0 {
                return err("sample.interval_ns", "expected an interval above 0, got 0");
            }
            if !sample.queues && !sample.flows {
                return err(
                    "sample",
                    "expected queues or flows to be true (leave sample out to record no time series)",
                );
            }
        }
        let host_names: Vec<&str> = s.hosts.iter().map(|h| h.name.as_str()).collect();
        let router_names: Vec<&str> = s.routers.iter().map(|r| r.name.as_str()).collect();
        let host_index = unique(&host_names, "hosts")?;
        let router_index = unique(&router_names, "routers")?;
        if let Some(i) = s
            .hosts
            .iter()
            .position(|h| router_index.contains_key(&h.name))
        {
            return err(
                format!("hosts[{i}].name"),
                format!("{:?} is also a router's name", s.hosts[i].name),
            );
        }
        let resolve = |end: &LinkEnd, field: String| -> Result<Node, ScenarioError> {
            if let Some(&h) = host_index.get(&end.node) {
                if end.port.is_some() {
                    return err(
                        format!("{field}.port"),
                        format!("{:?} is a host: a host has no port numbers", end.node),
                    );
                }
                return Ok(Node::Host(h));
            }
            if let Some(&r) = router_index.get(&end.node) {
                return match end.port {
                    Some(p) if (1..=510).contains(&p) => Ok(Node::Router(r, p)),
                    Some(p) => err(
                        format!("{field}.port"),
                        format!("expected a port in 1..=510, got {p}"),
                    ),
                    None => err(
                        format!("{field}.port"),
                        format!("{:?} is a router: expected its port number", end.node),
                    ),
                };
            }
            err(
                format!("{field}.node"),
                format!("unknown node {:?} (not in hosts or routers)", end.node),
            )
        };
        let mut host_out: Vec<Option<Direction>> = vec![None; s.hosts.len()];
        let mut router_out: Vec<HashMap<u32, Direction>> = vec![HashMap::new(); s.routers.len()];
        let mut traces = Traces::default();
        for (li, link) in s.links.iter().enumerate() {
            let a = resolve(&link.a, format!("links[{li}].a"))?;
            let b = resolve(&link.b, format!("links[{li}].b"))?;
            if a == b {
                return err(format!("links[{li}].b"), "a link joins two different ends");
            }
            let fwd = direction(
                &link.forward,
                &format!("links[{li}].forward"),
                b,
                &mut traces,
            )?;
            let rev = match &link.reverse {
                Some(r) => direction(r, &format!("links[{li}].reverse"), a, &mut traces)?,
                None => Direction { to: a, ..fwd },
            };
            let reverse_field = match link.reverse {
                Some(_) => "reverse",
                None => "forward", // b -> a copies a -> b
            };
            let leaving = [
                (a, &link.forward, "forward"),
                (
                    b,
                    link.reverse.as_ref().unwrap_or(&link.forward),
                    reverse_field,
                ),
            ];
            for (i, (end, spec, key)) in leaving.into_iter().enumerate() {
                if let (Node::Router(r, _), Some(_)) = (end, spec.queue_limit) {
                    let copied = if i == 1 && link.reverse.is_none() {
                        " (b -> a copies `forward` when `reverse` is absent)"
                    } else {
                        ""
                    };
                    return err(
                        format!("links[{li}].{key}.queue_limit"),
                        format!(
                            "expected no queue_limit on a direction leaving router {:?}{copied}: \
                             a router's queue limit is in its entries",
                            s.routers[r].name
                        ),
                    );
                }
            }
            for (end, out, side) in [(a, fwd, "a"), (b, rev, "b")] {
                let taken = match end {
                    Node::Host(h) => host_out[h].replace(out).is_some(),
                    Node::Router(r, p) => router_out[r].insert(p, out).is_some(),
                };
                if taken {
                    let what = match end {
                        Node::Host(h) => format!("host {:?} has a link already", s.hosts[h].name),
                        Node::Router(r, p) => {
                            format!("port {p} of {:?} has a link already", s.routers[r].name)
                        }
                    };
                    return err(format!("links[{li}].{side}"), what);
                }
            }
        }
        let host_out = host_out
            .into_iter()
            .enumerate()
            .map(|(h, d)| {
                d.ok_or_else(|| {
                    ScenarioError::new(
                        format!("hosts[{h}]"),
                        format!("host {:?} has no link: expected one", s.hosts[h].name),
                    )
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        for (ri, r) in s.routers.iter().enumerate() {
            for (pi, p) in r.ports.iter().enumerate() {
                if r.ports[..pi].iter().any(|q| q.port == p.port) {
                    return err(
                        format!("routers[{ri}].ports[{pi}].port"),
                        format!("port {} is listed twice", p.port),
                    );
                }
                if !router_out[ri].contains_key(&p.port) {
                    return err(
                        format!("routers[{ri}].ports[{pi}].port"),
                        format!("port {} of {:?} has no link", p.port, r.name),
                    );
                }
            }
        }
        let router_ports = router_out
            .iter()
            .map(|m| {
                let mut v: Vec<u32> = m.keys().copied().collect();
                v.sort_unstable();
                v
            })
            .collect();
        Ok(Topology {
            host_out,
            router_out,
            router_ports,
            host_index,
            traces: traces.list,
        })
    }

    /// Where a packet to `dst` leaving router `r` goes, by the router's
    /// installed routes (`*ipv4_lpm` entries whose first parameter is the
    /// egress port, as router.p4's `set_next_hop`): the longest match.
    fn next_port(s: &Scenario, r: usize, dst: u32) -> Option<u32> {
        let mut best: Option<(u32, u32)> = None;
        for e in &s.routers[r].entries {
            if !e.table.ends_with("ipv4_lpm") || !e.action.ends_with("set_next_hop") {
                continue;
            }
            let Some(pair) = e.key.first().and_then(|k| k.as_array()) else {
                continue;
            };
            let (Some(v), Some(len)) = (
                pair.first().and_then(|x| x.as_u64()),
                pair.get(1).and_then(|x| x.as_u64()),
            ) else {
                continue;
            };
            let len = len.min(32) as u32;
            let mask = if len == 0 { 0 } else { u32::MAX << (32 - len) };
            if (dst & mask) == (v as u32 & mask) && best.is_none_or(|(l, _)| len > l) {
                if let Some(&port) = e.params.first() {
                    best = Some((len, port as u32));
                }
            }
        }
        best.map(|(_, p)| p)
    }

    /// Follows the installed routes from host `from` to host `to`; the
    /// reason it does not get there otherwise.
    fn path_error(&self, s: &Scenario, from: usize, to: usize) -> Option<String> {
        let dst = u32::from(s.hosts[to].address);
        let mut at = self.host_out[from].to;
        for _ in 0..=s.routers.len() {
            match at {
                Node::Host(h) if h == to => return None,
                Node::Host(h) => {
                    return Some(format!(
                        "the routes lead to host {:?} instead",
                        s.hosts[h].name
                    ))
                }
                Node::Router(r, _) => {
                    let name = &s.routers[r].name;
                    let Some(port) = Topology::next_port(s, r, dst) else {
                        return Some(format!(
                            "router {name:?} has no route to {}",
                            s.hosts[to].address
                        ));
                    };
                    let Some(d) = self.router_out[r].get(&port) else {
                        return Some(format!(
                            "router {name:?} routes it to port {port}, which has no link"
                        ));
                    };
                    at = d.to;
                }
            }
        }
        Some("the routes loop".to_string())
    }

    /// Checks every flow: hosts known and distinct, settings valid, and the
    /// installed routes lead from sender to receiver (and back, for TCP).
    pub fn check_flows(&self, s: &Scenario) -> Result<(), ScenarioError> {
        let mut names = HashMap::new();
        for (fi, f) in s.flows.iter().enumerate() {
            let field = format!("flows[{fi}]");
            if names.insert(f.name.as_str(), fi).is_some() {
                return err(
                    format!("{field}.name"),
                    format!("the name {:?} is used twice", f.name),
                );
            }
            let host = |name: &str, key: &str| {
                self.host_index.get(name).copied().ok_or_else(|| {
                    ScenarioError::new(format!("{field}.{key}"), format!("unknown host {name:?}"))
                })
            };
            let (a, b) = (host(&f.from, "from")?, host(&f.to, "to")?);
            if a == b {
                return err(format!("{field}.to"), "expected another host than `from`");
            }
            if f.start_ns >= s.duration_ns {
                return err(
                    format!("{field}.start_ns"),
                    format!("expected a time before duration_ns ({})", s.duration_ns),
                );
            }
            if f.stop_ns.is_some_and(|t| t <= f.start_ns) {
                return err(format!("{field}.stop_ns"), "expected a time after start_ns");
            }
            let kinds = [
                f.tcp.is_some(),
                f.udp.is_some(),
                f.rbcc.is_some(),
                f.ping.is_some(),
            ];
            if kinds.iter().filter(|&&k| k).count() != 1 {
                return err(
                    &field,
                    "expected exactly one of `tcp`, `udp`, `rbcc` and `ping`",
                );
            }
            if let Some(p) = &f.ping {
                if p.interval_ns == 0 {
                    return err(
                        format!("{field}.ping.interval_ns"),
                        "expected a time above 0",
                    );
                }
                if p.size.is_some_and(|n| n > 1472) {
                    return err(
                        format!("{field}.ping.size"),
                        "expected at most 1472 data bytes (a 1,500-byte IPv4 packet)",
                    );
                }
            }
            if let Some(why) = self.path_error(s, a, b) {
                return err(
                    format!("{field}.to"),
                    format!("{:?} cannot reach {:?}: {why}", f.from, f.to),
                );
            }
            if f.udp.is_none() {
                if let Some(why) = self.path_error(s, b, a) {
                    return err(
                        format!("{field}.from"),
                        format!(
                            "{:?} cannot reach {:?} (its acknowledgements need the way back): {why}",
                            f.to, f.from
                        ),
                    );
                }
            }
        }
        if s.flows.len() > 20_000 {
            return err(
                "flows",
                format!("expected at most 20000 flows, got {}", s.flows.len()),
            );
        }
        Ok(())
    }
}
