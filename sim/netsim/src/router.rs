//! A router: one engine `Switch` running the router program, configured by
//! writing the scenario's entries straight into it, fed frames with the
//! simulated time.
//!
//! Time: the engine counts microseconds (BMv2's timestamps, what the P4
//! program sees). A frame arriving at `t` ns is injected at engine time
//! `ceil(t / 1000)` µs, never before it arrived; the engine's traffic
//! manager drains each port at the link's rate in its own µs schedule, and
//! a frame it dequeues at `T` µs starts on the wire at `T * 1000` ns.

use crate::jitter::Jitter;
use crate::scenario::{EntrySpec, RouterSpec, ScenarioError};
use crate::topology::Direction;
use ratelab_engine::{LoadedProgram, MatchKind, MatchValue, Rate, Switch};
use std::collections::HashMap;

/// Engine time (µs) of simulated time `ns`: rounded up.
pub fn engine_us(ns: u64) -> u64 {
    ns.div_ceil(1000)
}

fn key_value(
    v: &serde_json::Value,
    kind: MatchKind,
    field: &str,
) -> Result<MatchValue, ScenarioError> {
    let bad = |expected: &str| {
        Err(ScenarioError::new(
            field,
            format!("expected {expected} for a {kind:?} key, got {v}"),
        ))
    };
    let num = |x: &serde_json::Value| x.as_u64().map(u128::from);
    let pair = || -> Option<(u128, u128)> {
        let a = v.as_array()?;
        if a.len() != 2 {
            return None;
        }
        Some((num(&a[0])?, num(&a[1])?))
    };
    match kind {
        MatchKind::Exact => num(v).map_or_else(|| bad("a number"), |x| Ok(MatchValue::Exact(x))),
        MatchKind::Lpm => pair().map_or_else(
            || bad("[value, prefix length]"),
            |(x, l)| Ok(MatchValue::Lpm(x, l as u32)),
        ),
        MatchKind::Ternary => pair().map_or_else(
            || bad("[value, mask]"),
            |(x, m)| Ok(MatchValue::Ternary(x, m)),
        ),
        MatchKind::Range => pair().map_or_else(
            || bad("[low, high]"),
            |(lo, hi)| Ok(MatchValue::Range(lo, hi)),
        ),
        MatchKind::Optional => match v {
            serde_json::Value::Null => Ok(MatchValue::Optional(None)),
            _ => num(v).map_or_else(
                || bad("a number or null"),
                |x| Ok(MatchValue::Optional(Some(x))),
            ),
        },
        MatchKind::Valid => v
            .as_bool()
            .map_or_else(|| bad("true or false"), |b| Ok(MatchValue::Valid(b))),
    }
}

fn install(sw: &mut Switch, e: &EntrySpec, field: &str) -> Result<(), ScenarioError> {
    let info = sw
        .table_info(&e.table)
        .map_err(|err| ScenarioError::new(format!("{field}.table"), err.to_string()))?;
    let control = |err: ratelab_engine::ControlError| ScenarioError::new(field, err.to_string());
    if e.key.is_empty() {
        return sw
            .table_set_default(&e.table, &e.action, &e.params)
            .map_err(control);
    }
    if e.key.len() != info.key.len() {
        return Err(ScenarioError::new(
            format!("{field}.key"),
            format!(
                "expected {} key fields for {}, got {}",
                info.key.len(),
                e.table,
                e.key.len()
            ),
        ));
    }
    let key = e
        .key
        .iter()
        .zip(&info.key)
        .enumerate()
        .map(|(i, (v, k))| key_value(v, k.kind, &format!("{field}.key[{i}]")))
        .collect::<Result<Vec<_>, _>>()?;
    sw.table_add(&e.table, key, &e.action, &e.params, e.priority)
        .map(|_| ())
        .map_err(control)
}

/// A router in the simulation.
pub struct Router {
    pub sw: Switch,
    /// The wake-up event scheduled for it (engine µs), if any.
    pub armed: Option<u64>,
    /// port -> the link direction leaving it (indexed by port: a lookup per
    /// frame the router sends).
    pub out: Vec<Option<Direction>>,
    /// port -> the jitter of the link direction leaving it (none unless set).
    pub jitter: Vec<Jitter>,
}

impl Router {
    /// Loads and compiles the router program, once for all routers (the
    /// switches share it: loading it per router took most of a 9-router run).
    pub fn load_program(program: &str) -> Result<LoadedProgram, ScenarioError> {
        LoadedProgram::new(program).map_err(|e| {
            ScenarioError::new("routers", format!("the router program does not load: {e}"))
        })
    }

    /// Builds the switch and writes the scenario's configuration into it:
    /// entries, registers, queue depths and strict-priority queues, and each
    /// linked port's drain rate (the link's rate).
    pub fn new(
        spec: &RouterSpec,
        index: usize,
        program: &LoadedProgram,
        seed: u64,
        out: HashMap<u32, Direction>,
    ) -> Result<Router, ScenarioError> {
        let field = format!("routers[{index}]");
        let mut sw = Switch::with_program(program, seed).map_err(|e| {
            ScenarioError::new(
                field.clone(),
                format!("the router program does not load: {e}"),
            )
        })?;
        for (i, e) in spec.entries.iter().enumerate() {
            install(&mut sw, e, &format!("{field}.entries[{i}]"))?;
        }
        for (i, r) in spec.registers.iter().enumerate() {
            sw.register_write(&r.name, r.index, r.value).map_err(|e| {
                ScenarioError::new(format!("{field}.registers[{i}]"), e.to_string())
            })?;
        }
        for (i, p) in spec.ports.iter().enumerate() {
            if let Some(depth) = p.queue_depth {
                if depth == 0 {
                    return Err(ScenarioError::new(
                        format!("{field}.ports[{i}].queue_depth"),
                        "expected at least 1 packet, got 0",
                    ));
                }
                sw.set_queue_depth(p.port, depth).map_err(|e| {
                    ScenarioError::new(format!("{field}.ports[{i}].port"), e.to_string())
                })?;
            }
            if let Some(queues) = p.priority_queues {
                sw.set_priority_queues(p.port, queues).map_err(|e| {
                    ScenarioError::new(format!("{field}.ports[{i}].priority_queues"), e.to_string())
                })?;
            }
        }
        for (&port, d) in &out {
            sw.set_port_rate(port, Rate::Bps(d.rate_bps))
                .map_err(|e| ScenarioError::new(field.clone(), e.to_string()))?;
        }
        let size = out.keys().max().map_or(0, |&p| p as usize + 1);
        let mut by_port = vec![None; size];
        for (&port, d) in &out {
            by_port[port as usize] = Some(*d);
        }
        Ok(Router {
            sw,
            armed: None,
            jitter: vec![Jitter::default(); by_port.len()],
            out: by_port,
        })
    }
}
