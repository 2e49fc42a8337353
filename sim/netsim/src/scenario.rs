//! The scenario format (JSON, serde): routers with the controller's table
//! entries, hosts, links, flows. `sim/netsim/README.md` "Scenario format"
//! documents every field. [`Scenario::from_json`] reads one;
//! `Simulator::new` checks it ([`ScenarioError`] names the field).

use crate::events::Nanos;
use crate::flows::RECEIVER_PORT;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::net::Ipv4Addr;

/// A whole run.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// Seeds every random choice of the run (each component's own seed is derived from it).
    #[serde(default)]
    pub seed: u64,
    /// The run ends at this time.
    pub duration_ns: Nanos,
    /// Queue taps; absent: off (no sampling events at all).
    #[serde(default)]
    pub sample: Option<SampleSpec>,
    #[serde(default)]
    pub routers: Vec<RouterSpec>,
    pub hosts: Vec<HostSpec>,
    pub links: Vec<LinkSpec>,
    #[serde(default)]
    pub flows: Vec<FlowSpec>,
}

/// Per-port queue sampling.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SampleSpec {
    /// Time between samples (above 0).
    pub interval_ns: Nanos,
    /// Register arrays of the router program read at index = port in every
    /// sample (router.p4: `queue_length`, `RouterIngress.admission.red_avg`).
    #[serde(default)]
    pub registers: Vec<String>,
    /// Record the per-port queue samples (default true).
    #[serde(default = "yes")]
    pub queues: bool,
    /// Record each started sender's state at every sample (default true).
    #[serde(default = "yes")]
    pub flows: bool,
}

fn yes() -> bool {
    true
}

/// One router: a v1model switch running the router program.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RouterSpec {
    pub name: String,
    /// Table writes in order, as the controller computes them
    /// (`ratelab_model.p4_entries.TableEntry`); an empty key sets the
    /// table's default action.
    #[serde(default)]
    pub entries: Vec<EntrySpec>,
    /// Register writes after the entries.
    #[serde(default)]
    pub registers: Vec<RegisterWrite>,
    /// Traffic-manager settings per port (the switch's command-line options).
    #[serde(default)]
    pub ports: Vec<RouterPortSpec>,
}

/// One table write.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EntrySpec {
    pub table: String,
    /// One item per key field: a number (exact), or a pair: `[value,
    /// prefix length]` (lpm), `[value, mask]` (ternary), `[low, high]` (range).
    pub key: Vec<serde_json::Value>,
    pub action: String,
    #[serde(default)]
    pub params: Vec<u128>,
    /// BMv2 priority (lower wins) for ternary / range tables.
    #[serde(default)]
    pub priority: i32,
}

/// One register write.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RegisterWrite {
    pub name: String,
    pub index: usize,
    pub value: u128,
}

/// Traffic-manager settings of one router port.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RouterPortSpec {
    pub port: u32,
    /// The engine's queue limit in packets (default 64, simple_switch's).
    #[serde(default)]
    pub queue_depth: Option<usize>,
    /// Strict-priority queues, 1..=8 (default 1), simple_switch's
    /// `--priority-queues`: each has `queue_depth`, the highest is served first.
    #[serde(default)]
    pub priority_queues: Option<usize>,
}

/// A host: one address, one link.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HostSpec {
    pub name: String,
    pub address: Ipv4Addr,
}

/// A link between two nodes, with its two directions.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkSpec {
    pub a: LinkEnd,
    pub b: LinkEnd,
    /// a -> b.
    pub forward: DirectionSpec,
    /// b -> a; absent: the same as `forward`.
    #[serde(default)]
    pub reverse: Option<DirectionSpec>,
}

/// One end of a link: a host, or a router's port.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkEnd {
    pub node: String,
    /// The router's port number (required for a router, absent for a host).
    #[serde(default)]
    pub port: Option<u32>,
}

/// One direction of a link: its capacity is `rate_bps` or a `trace`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DirectionSpec {
    /// Bits per second (above 0), unless a trace gives the capacity.
    #[serde(default)]
    pub rate_bps: u64,
    /// A mahimahi trace file (absolute, or relative to the working
    /// directory) in place of `rate_bps`: one 1,500-byte delivery
    /// opportunity per line, in ms, looping (`ratelab_engine::trace`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<String>,
    /// Propagation delay.
    pub delay_ns: Nanos,
    /// Largest random extra delay per frame (uniform, never reordering; 0:
    /// none). Seeded per direction from the scenario's seed.
    #[serde(default)]
    pub jitter_ns: Nanos,
    /// Packets a host's egress FIFO holds, the one in transmission included
    /// (default 100). A router's queue limit is in its entries.
    #[serde(default)]
    pub queue_limit: Option<usize>,
}

/// A flow between two hosts: exactly one of `tcp`, `udp`, `rbcc` and `ping`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FlowSpec {
    pub name: String,
    pub from: String,
    pub to: String,
    #[serde(default)]
    pub start_ns: Nanos,
    /// The sender stops here (TCP: the application stops writing and the
    /// connection closes); absent: it runs to the end.
    #[serde(default)]
    pub stop_ns: Option<Nanos>,
    #[serde(default)]
    pub tcp: Option<TcpSpec>,
    #[serde(default)]
    pub udp: Option<UdpSpec>,
    #[serde(default)]
    pub rbcc: Option<RbccSpec>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ping: Option<PingSpec>,
    /// The receiver's TCP or UDP port; absent: [`RECEIVER_PORT`] plus the
    /// flow's index. ratelab-net sets the port its Mininet flows listen on,
    /// so a rule naming a flow's port classifies it alike in both.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub port: Option<u16>,
}

impl FlowSpec {
    /// The port the receiver of flow `index` (this flow) listens on.
    pub fn receiver_port(&self, index: usize) -> u16 {
        self.port.unwrap_or(RECEIVER_PORT + index as u16)
    }
}

/// ICMP echo requests every `interval_ns` from `start_ns` until `stop_ns`
/// (or the end); the receiving host answers each.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PingSpec {
    /// Time between requests (above 0).
    pub interval_ns: Nanos,
    /// Data bytes after the 8-byte ICMP header (default 56, ping's).
    #[serde(default)]
    pub size: Option<usize>,
}

/// A rate-based (RBCC/TRUMP) sender and receiver from ratelab-rbcc-host.
/// It sends until `stop_ns` (or the end of the run) or `segments` data
/// packets, whichever comes first.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RbccSpec {
    /// The rate the sender asks for (bit/s; a whole number of bytes per second).
    pub rate_bps: u64,
    /// Paces data before the first ACK (bit/s; default `rate_bps`).
    #[serde(default)]
    pub initial_rate_bps: Option<u64>,
    /// IPv4 total length of each data packet (default 1000, the crate's).
    #[serde(default)]
    pub size: Option<u16>,
    #[serde(default)]
    pub segments: Option<u64>,
    /// The SYN-ACK's echoed rate (the routers' share stamped on the SYN) sets
    /// the first data's rate instead of `initial_rate_bps` (default false).
    #[serde(default)]
    pub adopt_synack_rate: bool,
}

/// A ratelab-stack TCP connection and the application writing into it.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TcpSpec {
    /// reno, newreno, cubic or vegas.
    pub cc: String,
    pub app: AppSpec,
    /// Maximum segment size (default: ratelab-stack's, 1460).
    #[serde(default)]
    pub mss: Option<u16>,
    /// The stack's knobs a topology file's `stack: ratelab` flow may set.
    #[serde(default)]
    pub knobs: TcpKnobs,
    /// Record each data segment's one-way delay (default false): from the
    /// sender handing it to its interface to its arrival at the receiving host.
    #[serde(default)]
    pub packet_delays: bool,
}

/// ratelab-stack settings of one connection; absent: the stack's default
/// (`ratelab_stack::tcp::Config::default()`).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TcpKnobs {
    /// Initial window, segments.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iw: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub initial_rto_ns: Option<Nanos>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_rto_ns: Option<Nanos>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sack: Option<bool>,
    /// false: acknowledge every segment at once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delayed_ack: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prr: Option<bool>,
    /// `rfc6298` or `linux` (ratelab_stack::tcp::RtoFormula).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rto_formula: Option<String>,
    /// RFC 9406 HyStart++ in slow start.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hystart: Option<bool>,
    /// Linux's receiver quick-ACK mode (ratelab_stack::tcp::QuickAck).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quickack: Option<bool>,
    /// The send buffer: `"auto"` (Linux-like autotuning up to 4 MiB, the
    /// stack's default) or a fixed size in bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub send_buffer: Option<SendBufferKnob>,
}

/// A send buffer's setting: a policy name (`auto`) or a fixed size in bytes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum SendBufferKnob {
    Bytes(u64),
    Policy(String),
}

/// The sending application (ratelab-stack's `app`); bytes are written in
/// framed messages of `message_size` (default 1448).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum AppSpec {
    /// Keeps the send buffer full.
    Bulk {
        #[serde(default)]
        message_size: Option<usize>,
    },
    /// Bulk for `on_ns`, silent for `off_ns`, repeating.
    OnOff {
        on_ns: Nanos,
        off_ns: Nanos,
        #[serde(default)]
        message_size: Option<usize>,
    },
    /// Application-limited at `rate_bps`.
    Stream {
        rate_bps: u64,
        #[serde(default)]
        message_size: Option<usize>,
    },
    /// `bytes` in all, then close.
    Transfer {
        bytes: u64,
        #[serde(default)]
        message_size: Option<usize>,
    },
}

/// A ratelab-stack UDP source (the sink is at `to`).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UdpSpec {
    /// cbr, poisson or onoff.
    pub pattern: String,
    /// Whole IPv4 packets per second (payload + 28 header bytes).
    pub rate_bps: u64,
    /// Payload bytes per datagram (default 1472).
    #[serde(default)]
    pub size: Option<usize>,
    /// onoff only.
    #[serde(default)]
    pub on_ns: Option<Nanos>,
    #[serde(default)]
    pub off_ns: Option<Nanos>,
}

/// Bad scenario input: which field, what was expected.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScenarioError {
    /// The field's path (`links[1].forward.rate_bps`), or `FILE:LINE:COLUMN`
    /// for a JSON syntax or type error.
    pub field: String,
    pub message: String,
}

impl ScenarioError {
    pub(crate) fn new(field: impl Into<String>, message: impl Into<String>) -> ScenarioError {
        ScenarioError {
            field: field.into(),
            message: message.into(),
        }
    }
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.field, self.message)
    }
}

impl std::error::Error for ScenarioError {}

impl Scenario {
    /// Reads a scenario; `filename` names it in errors.
    pub fn from_json(text: &str, filename: &str) -> Result<Scenario, ScenarioError> {
        serde_json::from_str(text).map_err(|e| {
            let msg = e.to_string();
            // serde_json appends " at line L column C"; the position goes first instead.
            let msg = msg
                .rsplit_once(" at line ")
                .map_or(msg.as_str(), |(m, _)| m);
            ScenarioError::new(format!("{filename}:{}:{}", e.line(), e.column()), msg)
        })
    }

    /// The scenario as JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("a scenario always serialises")
    }
}
