//! A flow's two ends as the host stacks build them: settings checked
//! against the scenario (each error names the field), applications, ports.

use crate::events::Nanos;
use crate::host::Host;
use crate::scenario::{AppSpec, FlowSpec, Scenario, ScenarioError, SendBufferKnob};
use crate::seeds::{derive, Kind};
use ratelab_stack::app::{Application, Bulk, OnOff, Stream, Transfer};
use ratelab_stack::tcp::{Config, Endpoint as StackEndpoint, SendBufferPolicy};
use ratelab_stack::udp::{self, Pattern, SourceConfig, UdpSource};
use rbcc_host::SenderConfig;

/// Message size of the applications when the scenario does not say.
pub const DEFAULT_MESSAGE_SIZE: usize = 1448;
/// UDP payload bytes per datagram when the scenario does not say.
pub const DEFAULT_UDP_SIZE: usize = 1472;
/// A flow's sender port is this plus its index; its receiver's port is
/// [`RECEIVER_PORT`] plus its index.
pub const SENDER_PORT: u16 = 40_000;
/// See [`SENDER_PORT`].
pub const RECEIVER_PORT: u16 = 5_001;

pub(crate) fn tcp_config(f: &FlowSpec, fi: usize) -> Result<Option<Config>, ScenarioError> {
    let Some(t) = &f.tcp else { return Ok(None) };
    let field = format!("flows[{fi}].tcp");
    let cc = t.cc.parse().map_err(|_| {
        ScenarioError::new(
            format!("{field}.cc"),
            format!("expected reno, newreno, cubic or vegas, got {:?}", t.cc),
        )
    })?;
    let mut cfg = Config {
        cc,
        ..Config::default()
    };
    if let Some(mss) = t.mss {
        cfg.mss = mss;
    }
    let k = &t.knobs;
    cfg.initial_window = k.iw.unwrap_or(cfg.initial_window);
    cfg.initial_rto = k.initial_rto_ns.unwrap_or(cfg.initial_rto);
    cfg.min_rto = k.min_rto_ns.unwrap_or(cfg.min_rto);
    cfg.sack = k.sack.unwrap_or(cfg.sack);
    cfg.prr = k.prr.unwrap_or(cfg.prr);
    cfg.hystart = k.hystart.unwrap_or(cfg.hystart);
    cfg.quickack = k.quickack.unwrap_or(cfg.quickack);
    if let Some(formula) = &k.rto_formula {
        cfg.rto_formula = formula.parse().map_err(|_| {
            ScenarioError::new(
                format!("{field}.knobs.rto_formula"),
                format!("expected rfc6298 or linux, got {formula:?}"),
            )
        })?;
    }
    if k.delayed_ack == Some(false) {
        cfg.delayed_ack = None;
    }
    match &k.send_buffer {
        None => {}
        Some(SendBufferKnob::Policy(p)) if p == "auto" => {
            cfg.send_buffer_policy = SendBufferPolicy::Auto;
        }
        Some(SendBufferKnob::Policy(p)) => {
            return Err(ScenarioError::new(
                format!("{field}.knobs.send_buffer"),
                format!("expected \"auto\" or a size in bytes, got {p:?}"),
            ));
        }
        Some(SendBufferKnob::Bytes(n)) => {
            cfg.send_buffer_policy = SendBufferPolicy::Fixed;
            cfg.send_buffer = usize::try_from(*n).unwrap_or(usize::MAX);
        }
    }
    cfg.validate()
        .map_err(|e| ScenarioError::new(format!("{field}.{}", e.field), e.message))?;
    let (size, app_field) = match &t.app {
        AppSpec::Bulk { message_size }
        | AppSpec::OnOff { message_size, .. }
        | AppSpec::Stream { message_size, .. }
        | AppSpec::Transfer { message_size, .. } => (*message_size, format!("{field}.app")),
    };
    if size.is_some_and(|s| s < ratelab_stack::app::MESSAGE_HEADER) {
        return Err(ScenarioError::new(
            format!("{app_field}.message_size"),
            format!(
                "expected at least {} bytes (the message header)",
                ratelab_stack::app::MESSAGE_HEADER
            ),
        ));
    }
    let zero = match &t.app {
        AppSpec::OnOff { on_ns: 0, .. } => Some("on_ns"),
        AppSpec::Stream { rate_bps: 0, .. } => Some("rate_bps"),
        AppSpec::Transfer { bytes: 0, .. } => Some("bytes"),
        _ => None,
    };
    if let Some(key) = zero {
        return Err(ScenarioError::new(
            format!("{app_field}.{key}"),
            "expected a value above 0, got 0",
        ));
    }
    Ok(Some(cfg))
}

/// The RBCC sender's settings of flow `fi` (rates in B/s, times in µs).
pub(crate) fn rbcc_config(s: &Scenario, fi: usize) -> Result<Option<SenderConfig>, ScenarioError> {
    let f = &s.flows[fi];
    let Some(r) = &f.rbcc else { return Ok(None) };
    let field = format!("flows[{fi}].rbcc");
    let bytes_per_s = |bps: u64, key: &str| {
        u32::try_from(bps / 8)
            .ok()
            .filter(|b| (1..u32::MAX).contains(b))
            .ok_or_else(|| {
                ScenarioError::new(
                    format!("{field}.{key}"),
                    format!(
                        "expected 8 to {} bit/s, got {bps}",
                        (u64::from(u32::MAX) - 1) * 8
                    ),
                )
            })
    };
    let desired = bytes_per_s(r.rate_bps, "rate_bps")?;
    let initial = match r.initial_rate_bps {
        Some(bps) => bytes_per_s(bps, "initial_rate_bps")?,
        None => desired,
    };
    let until = f.stop_ns.unwrap_or(s.duration_ns);
    let duration_us = until.saturating_sub(f.start_ns) / 1000;
    let mut cfg = SenderConfig::new(desired, initial, r.segments, Some(duration_us));
    cfg.flow_id = rbcc_flow_id(fi);
    cfg.adopt_synack_rate = r.adopt_synack_rate;
    if let Some(size) = r.size {
        cfg.size = size;
    }
    cfg.validate()
        .map_err(|message| ScenarioError::new(field, message))?;
    Ok(Some(cfg))
}

/// RBCC flows are told apart by the TRUMP header's flow id: flow index + 1.
pub(crate) fn rbcc_flow_id(fi: usize) -> u16 {
    fi as u16 + 1
}

pub(crate) fn app(spec: &AppSpec) -> Box<dyn Application> {
    let size = |s: &Option<usize>| s.unwrap_or(DEFAULT_MESSAGE_SIZE);
    match spec {
        AppSpec::Bulk { message_size } => Box::new(Bulk::new(size(message_size))),
        AppSpec::OnOff {
            on_ns,
            off_ns,
            message_size,
        } => Box::new(OnOff::new(*on_ns, *off_ns, size(message_size))),
        AppSpec::Stream {
            rate_bps,
            message_size,
        } => Box::new(Stream::new(*rate_bps, size(message_size))),
        AppSpec::Transfer {
            bytes,
            message_size,
        } => Box::new(Transfer::bytes(*bytes, size(message_size))),
    }
}

pub(crate) fn endpoint(host: &Host, port: u16) -> StackEndpoint {
    StackEndpoint {
        addr: host.addr,
        port,
    }
}

pub(crate) fn udp_source(
    s: &Scenario,
    fi: usize,
    from: &Host,
    to: &Host,
    now: Nanos,
) -> Result<UdpSource, ScenarioError> {
    let u = s.flows[fi].udp.as_ref().expect("a UDP flow");
    let field = format!("flows[{fi}].udp");
    let pattern = match u.pattern.as_str() {
        "cbr" => Pattern::Cbr {
            rate_bps: u.rate_bps,
        },
        "poisson" => Pattern::Poisson {
            rate_bps: u.rate_bps,
            seed: derive(s.seed, Kind::Udp, fi),
        },
        other => {
            return Err(ScenarioError::new(
                format!("{field}.pattern"),
                format!("expected cbr or poisson, got {other:?}"),
            ))
        }
    };
    let on_off = match (u.on_ns, u.off_ns) {
        (None, None) => None,
        (Some(on), Some(off)) => Some(udp::OnOff { on, off }),
        _ => {
            return Err(ScenarioError::new(
                format!("{field}.on_ns"),
                "expected both on_ns and off_ns, or neither",
            ))
        }
    };
    let cfg = SourceConfig {
        local: endpoint(from, SENDER_PORT + fi as u16),
        remote: endpoint(to, s.flows[fi].receiver_port(fi)),
        flow_id: fi as u32,
        size: u.size.unwrap_or(DEFAULT_UDP_SIZE),
        pattern,
        on_off,
        count: None,
        duration: None,
    };
    UdpSource::new(cfg, now)
        .map_err(|e| ScenarioError::new(format!("{field}.{}", e.field), e.message))
}
