//! What a run measured, as plain structs with a JSON and CSV writer. The
//! writers depend on nothing but the values, so equal runs give equal bytes.

use crate::events::Nanos;
use serde::Serialize;
use std::fmt::Write as _;
use std::io;
use std::path::Path;

/// Everything a run measured.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Results {
    pub seed: u64,
    pub duration_ns: Nanos,
    /// Events handled.
    pub events: u64,
    /// Packets delivered to a host's endpoint.
    pub delivered_packets: u64,
    pub flows: Vec<FlowResult>,
    pub ports: Vec<PortResult>,
    /// Every drop, by where and why (only nonzero counts).
    pub drops: Vec<DropCount>,
    /// The router program's other counters per port (only nonzero ones):
    /// router.p4's packets_in, port_out, rbcc_packets, abt_hits, abt_updates, ...
    pub counters: Vec<CounterValue>,
    /// Queue taps (empty when off).
    pub sample_registers: Vec<String>,
    pub queue_samples: Vec<QueueSample>,
    /// Each running sender's state at every queue tap (empty when off).
    pub flow_samples: Vec<FlowSample>,
}

/// One flow's sender at one sample time: TCP's window and smoothed RTT, or
/// an RBCC sender's rates (the other fields absent).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FlowSample {
    pub time_ns: Nanos,
    pub flow: String,
    /// TCP: congestion window and slow-start threshold in segments
    /// (ssthresh absent before the first congestion event), smoothed RTT.
    pub cwnd: Option<u64>,
    pub ssthresh: Option<u64>,
    pub srtt_ns: Option<Nanos>,
    /// RBCC: the rate it paces at and the rate the routers echoed (B/s;
    /// absent before the first ACK), and the router id that set it.
    pub rate: Option<u32>,
    pub return_rate: Option<u32>,
    pub bottle_node: Option<u32>,
    /// TCP: bytes in flight (the stack's RFC 6675 pipe: sent, not acked,
    /// not SACKed, not deemed lost, plus retransmissions in flight) and the
    /// data bytes the peer has cumulatively acknowledged so far.
    pub in_flight: Option<u64>,
    pub delivered: Option<u64>,
    /// TCP: the data bytes the application has written into the connection
    /// so far (what its send buffer took).
    pub written: Option<u64>,
}

/// One flow's results: the receiver's view, and the sender's stack's own.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FlowResult {
    pub name: String,
    pub from: String,
    pub to: String,
    /// `tcp/<cc>` or `udp/<pattern>`.
    pub transport: String,
    /// Application bytes the receiver read.
    pub bytes_received: u64,
    /// Receiver goodput between its first and last byte (bit/s; 0 if none).
    pub goodput_bps: f64,
    /// Mean one-way delay at the receiving application (0 if none).
    pub one_way_delay_mean_ns: f64,
    /// A TCP transfer (`app.kind` `transfer`) the receiver read in full: from
    /// the flow's `start_ns` (its SYN) to the last byte read; null otherwise.
    pub completion_ns: Option<Nanos>,
    /// Each data segment's one-way delay in arrival order (retransmissions
    /// included), for a TCP flow with `packet_delays`; empty otherwise.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub packet_delays_ns: Vec<Nanos>,
    pub tcp: Option<TcpResult>,
    pub udp: Option<UdpResult>,
    pub rbcc: Option<RbccResult>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ping: Option<PingResult>,
}

/// A ping's requests and each reply's round trip.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PingResult {
    pub sent: u64,
    pub received: u64,
    pub replies: Vec<crate::ping::Reply>,
}

/// A rate-based flow's sender and receiver summaries (ratelab-rbcc-host).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RbccResult {
    /// The rate the sender paced at last (B/s): its own, or what the routers echoed.
    pub rate: u32,
    /// The router that set the echoed rate (its router id; 0: none).
    pub bottle_node: u32,
    pub packets_sent: u64,
    pub segments_acked: u64,
    pub retransmissions: u64,
    pub srtt_us: Option<u64>,
    /// Data transmissions the receiver saw missing.
    pub lost: u64,
    /// FIN seen and everything before it delivered.
    pub complete: bool,
}

/// The sender's FlowMeter summary (ratelab-stack `metrics::FlowSummary`).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TcpResult {
    pub bytes_acked: u64,
    pub goodput_bps: f64,
    pub srtt_ns: Option<Nanos>,
    pub min_rtt_ns: Option<Nanos>,
    pub rtt_samples: u64,
    pub cwnd: u64,
    pub ssthresh_changes: u64,
    pub retransmissions: u64,
    pub rtos: u64,
    pub spurious_rtos: u64,
    /// Loss recoveries that ended (a full ACK or an RTO) and their total
    /// length (the stack's stats; one still open at the end is left out).
    pub recoveries_ended: u64,
    pub recovery_ns: Nanos,
    /// Data bytes the application wrote into the connection.
    pub bytes_written: u64,
}

/// A UDP flow's counts.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct UdpResult {
    pub sent: u64,
    pub received: u64,
    pub lost: u64,
    pub duplicates: u64,
    pub reordered: u64,
}

/// Traffic through one port (a host's one port is 0).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PortResult {
    pub node: String,
    pub port: u32,
    pub rx_packets: u64,
    pub rx_bytes: u64,
    pub tx_packets: u64,
    pub tx_bytes: u64,
}

/// Packets dropped at one place for one cause.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct DropCount {
    pub node: String,
    pub port: u32,
    pub cause: String,
    pub packets: u64,
}

/// A program counter of a router at one index (= port).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CounterValue {
    pub router: String,
    pub port: u32,
    /// The counter's last name component (`abt_hits`).
    pub name: String,
    pub packets: u64,
    pub bytes: u64,
}

/// One sample of one router port's queue.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct QueueSample {
    pub time_ns: Nanos,
    pub router: String,
    pub port: u32,
    /// Packets in the engine's queue for the port.
    pub queue_packets: u64,
    /// The scenario's `sample.registers` at index `port`, in order.
    pub registers: Vec<u128>,
}

fn opt(v: Option<u64>) -> String {
    v.map_or(String::new(), |x| x.to_string())
}

/// queue.csv's first line: the fixed columns, then the sampled registers.
pub(crate) fn queue_csv_header(registers: &[String]) -> String {
    let mut s = String::from("time_ns,router,port,queue_packets");
    for r in registers {
        s.push(',');
        s.push_str(r);
    }
    s.push('\n');
    s
}

/// Appends one queue sample's line of queue.csv to `s`.
pub(crate) fn queue_csv_line(s: &mut String, q: &QueueSample) {
    let _ = write!(
        s,
        "{},{},{},{}",
        q.time_ns, q.router, q.port, q.queue_packets
    );
    for v in &q.registers {
        let _ = write!(s, ",{v}");
    }
    s.push('\n');
}

/// flow_samples.csv's first line.
pub(crate) const FLOW_SAMPLES_HEADER: &str =
    "time_ns,flow,cwnd,ssthresh,srtt_ns,rate,return_rate,bottle_node,in_flight,delivered,written\n";

/// Appends one flow sample's line of flow_samples.csv to `s`.
pub(crate) fn flow_sample_line(s: &mut String, f: &FlowSample) {
    let _ = writeln!(
        s,
        "{},{},{},{},{},{},{},{},{},{},{}",
        f.time_ns,
        f.flow,
        opt(f.cwnd),
        opt(f.ssthresh),
        opt(f.srtt_ns),
        opt(f.rate.map(u64::from)),
        opt(f.return_rate.map(u64::from)),
        opt(f.bottle_node.map(u64::from)),
        opt(f.in_flight),
        opt(f.delivered),
        opt(f.written),
    );
}

impl Results {
    /// The results as JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("results always serialise") + "\n"
    }

    /// One line per flow.
    pub fn flows_csv(&self) -> String {
        let mut s = String::from(
            "flow,from,to,transport,bytes_received,goodput_bps,one_way_delay_mean_ns,\
             bytes_acked,srtt_ns,min_rtt_ns,retransmissions,rtos,udp_sent,udp_lost,\
             rbcc_rate,rbcc_bottle_node,rbcc_lost,completion_ns\n",
        );
        for f in &self.flows {
            let t = f.tcp.as_ref();
            let u = f.udp.as_ref();
            let r = f.rbcc.as_ref();
            let _ = writeln!(
                s,
                "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
                f.name,
                f.from,
                f.to,
                f.transport,
                f.bytes_received,
                f.goodput_bps,
                f.one_way_delay_mean_ns,
                opt(t.map(|t| t.bytes_acked)),
                opt(t.and_then(|t| t.srtt_ns)),
                opt(t.and_then(|t| t.min_rtt_ns)),
                opt(t.map(|t| t.retransmissions)),
                opt(t.map(|t| t.rtos)),
                opt(u.map(|u| u.sent)),
                opt(u.map(|u| u.lost)),
                opt(r.map(|r| u64::from(r.rate))),
                opt(r.map(|r| u64::from(r.bottle_node))),
                opt(r.map(|r| r.lost)),
                opt(f.completion_ns),
            );
        }
        s
    }

    /// One line per port.
    pub fn ports_csv(&self) -> String {
        let mut s = String::from("node,port,rx_packets,rx_bytes,tx_packets,tx_bytes\n");
        for p in &self.ports {
            let _ = writeln!(
                s,
                "{},{},{},{},{},{}",
                p.node, p.port, p.rx_packets, p.rx_bytes, p.tx_packets, p.tx_bytes
            );
        }
        s
    }

    /// One line per (place, cause).
    pub fn drops_csv(&self) -> String {
        let mut s = String::from("node,port,cause,packets\n");
        for d in &self.drops {
            let _ = writeln!(s, "{},{},{},{}", d.node, d.port, d.cause, d.packets);
        }
        s
    }

    /// One line per router, port and counter.
    pub fn counters_csv(&self) -> String {
        let mut s = String::from("router,port,counter,packets,bytes\n");
        for c in &self.counters {
            let _ = writeln!(
                s,
                "{},{},{},{},{}",
                c.router, c.port, c.name, c.packets, c.bytes
            );
        }
        s
    }

    /// One line per sample and port.
    pub fn queue_csv(&self) -> String {
        let mut s = queue_csv_header(&self.sample_registers);
        for q in &self.queue_samples {
            queue_csv_line(&mut s, q);
        }
        s
    }

    /// One line per sample and running sender.
    pub fn flow_samples_csv(&self) -> String {
        let mut s = String::from(FLOW_SAMPLES_HEADER);
        for f in &self.flow_samples {
            flow_sample_line(&mut s, f);
        }
        s
    }

    /// Writes results.json, flows.csv, ports.csv, drops.csv, counters.csv,
    /// queue.csv and flow_samples.csv into `dir`.
    pub fn write_dir(&self, dir: &Path) -> io::Result<()> {
        std::fs::create_dir_all(dir)?;
        std::fs::write(dir.join("results.json"), self.to_json())?;
        self.write_tables(dir)?;
        std::fs::write(dir.join("queue.csv"), self.queue_csv())?;
        std::fs::write(dir.join("flow_samples.csv"), self.flow_samples_csv())
    }

    /// flows.csv, ports.csv, drops.csv and counters.csv into `dir`.
    pub(crate) fn write_tables(&self, dir: &Path) -> io::Result<()> {
        std::fs::write(dir.join("flows.csv"), self.flows_csv())?;
        std::fs::write(dir.join("ports.csv"), self.ports_csv())?;
        std::fs::write(dir.join("drops.csv"), self.drops_csv())?;
        std::fs::write(dir.join("counters.csv"), self.counters_csv())
    }

    /// Packets dropped for `cause` anywhere.
    pub fn drops_of(&self, cause: &str) -> u64 {
        self.drops
            .iter()
            .filter(|d| d.cause == cause)
            .map(|d| d.packets)
            .sum()
    }
}
