//! The simulator: builds routers, hosts and links from a scenario and runs
//! the event loop. Nothing reads a clock: the event queue's time is the only
//! time, and every random choice comes from a seed derived from the scenario's.

use crate::events::{EventQueue, Nanos};
use crate::flows::{app, endpoint, rbcc_config, rbcc_flow_id, tcp_config, udp_source, SENDER_PORT};
use crate::frame::{self, Addresses, HEADERS};
use crate::host::{Endpoint, EndpointKind, Host};
use crate::jitter::Jitter;
use crate::ping::{self, Pinger, DEFAULT_PING_SIZE, PROTO_ICMP};
use crate::results::{
    CounterValue, DropCount, FlowResult, FlowSample, PingResult, PortResult, QueueSample,
    RbccResult, Results, TcpResult, UdpResult,
};
use crate::router::{engine_us, Router};
use crate::scenario::{AppSpec, Scenario, ScenarioError};
use crate::seeds::{derive, Kind};
use crate::stream::SampleFiles;
use crate::topology::{Direction, Node, Topology};
use ratelab_engine::{Frame, LoadedProgram, TraceCursor};
use ratelab_stack::app::{Application, Sink};
use ratelab_stack::metrics::FlowMeter;
use ratelab_stack::tcp::{Config, Connection};
use ratelab_stack::udp::UdpSink;
use ratelab_stack::wire::{PROTO_TCP, PROTO_UDP};
use rbcc_host::wire::IPPROTO_RBCC;
use rbcc_host::{Receiver, Sender, SenderConfig};
use std::collections::{BTreeMap, HashMap};
use std::io;
use std::path::Path;
use std::sync::Arc;

/// Destination MAC of every host's frames (router.p4 does not check it).
pub const GATEWAY_MAC: [u8; 6] = [0xff; 6];

enum Event {
    /// A frame's last bit reaches `to`.
    Deliver {
        to: Node,
        frame: Vec<u8>,
    },
    HostTimer {
        host: usize,
        ep: usize,
    },
    RouterWake {
        router: usize,
    },
    FlowStart(usize),
    FlowStop(usize),
    Sample,
}

/// Per host: packets and bytes through its one port.
#[derive(Default, Clone, Copy)]
struct HostCounters {
    rx_packets: u64,
    rx_bytes: u64,
    tx_packets: u64,
    tx_bytes: u64,
}

/// Where a flow's two ends live: (host, endpoint index) of sender and receiver.
#[derive(Clone, Copy)]
struct FlowEnds {
    sender: (usize, usize),
    receiver: (usize, usize),
}

/// A built simulation, ready to run.
pub struct Simulator {
    scenario: Scenario,
    topo: Topology,
    routers: Vec<Router>,
    hosts: Vec<Host>,
    host_counters: Vec<HostCounters>,
    flows: Vec<FlowEnds>,
    tcp_configs: Vec<Option<Config>>,
    rbcc_configs: Vec<Option<SenderConfig>>,
    queue: EventQueue<Event>,
    now: Nanos,
    /// Drops outside the router program, by place and cause.
    drops: BTreeMap<(Node, &'static str), u64>,
    /// The samples, kept for [`Results`] or, when `sample_files` is set,
    /// written there as they are taken.
    samples: Vec<QueueSample>,
    flow_samples: Vec<FlowSample>,
    sample_files: Option<SampleFiles>,
    events: u64,
    delivered: u64,
    /// Transmit buffer: headers, then the transport bytes the stack writes.
    scratch: Vec<u8>,
    frames: Vec<Frame>,
    pool: Vec<Vec<u8>>,
    /// Per flow, the one-way delay of each data segment its receiver got
    /// (flows without `packet_delays`: none); empty when no flow records them.
    packet_delays: Vec<Vec<Nanos>>,
    /// (host, endpoint) of each receiver whose flow records packet delays.
    delay_receivers: HashMap<(usize, usize), usize>,
}

/// The next call a machine in µs asks for at `at_us`, in ns, after `now`.
fn wake_from_us(at_us: u64, now: Nanos) -> Nanos {
    let at = at_us.saturating_mul(1000);
    if at > now {
        at
    } else {
        (now / 1000 + 1) * 1000
    }
}

/// Gives each link direction with a trace its cursor: a host's egress
/// follows it in ns, a router port's traffic manager in µs (from time 0).
fn follow_traces(topo: &Topology, routers: &mut [Router], hosts: &mut [Host]) {
    for (h, d) in topo.host_out.iter().enumerate() {
        if let Some(t) = d.trace {
            let trace = Arc::clone(&topo.traces[t]);
            hosts[h].egress.trace = Some(TraceCursor::new(trace, 1_000_000));
        }
    }
    for (r, out) in topo.router_out.iter().enumerate() {
        for (&port, d) in out {
            if let Some(t) = d.trace {
                let trace = Arc::clone(&topo.traces[t]);
                // Ports are checked (1..=510) when the topology is built.
                let set = routers[r].sw.set_port_trace(port, Some(trace), 0);
                set.expect("a router port in range");
            }
        }
    }
}

/// Gives each link direction with jitter its generator, seeded from the
/// run's seed and the direction (hosts by index, routers by index and port).
fn follow_jitters(topo: &Topology, seed: u64, routers: &mut [Router], hosts: &mut [Host]) {
    for (h, d) in topo.host_out.iter().enumerate() {
        if d.jitter_ns > 0 {
            hosts[h].egress.jitter = Jitter::new(d.jitter_ns, derive(seed, Kind::Jitter, h));
        }
    }
    for (r, out) in topo.router_out.iter().enumerate() {
        for (&port, d) in out {
            if d.jitter_ns > 0 {
                let index = (r + 1) << 16 | port as usize;
                routers[r].jitter[port as usize] =
                    Jitter::new(d.jitter_ns, derive(seed, Kind::Jitter, index));
            }
        }
    }
}

impl Simulator {
    /// Checks the scenario and builds every router (`program`, the router's
    /// BMv2 JSON, loaded and compiled once and shared by all), host and flow.
    pub fn new(scenario: &Scenario, program: &str) -> Result<Simulator, ScenarioError> {
        Simulator::build(scenario, None, program)
    }

    /// The router program (BMv2 JSON) loaded and compiled, for `with_program`.
    pub fn load_program(program: &str) -> Result<LoadedProgram, ScenarioError> {
        Router::load_program(program)
    }

    /// As `new`, with the router program already loaded and compiled
    /// (`load_program`): a process running many scenarios on one program
    /// compiles it once (`ratelab-netsim --batch`).
    pub fn with_program(
        scenario: &Scenario,
        program: &LoadedProgram,
    ) -> Result<Simulator, ScenarioError> {
        Simulator::build(scenario, Some(program), "")
    }

    fn build(
        scenario: &Scenario,
        given: Option<&LoadedProgram>,
        program: &str,
    ) -> Result<Simulator, ScenarioError> {
        let s = scenario;
        let topo = Topology::new(s)?;
        let mut routers = Vec::with_capacity(s.routers.len());
        let own = match s.routers.is_empty() || given.is_some() {
            true => None,
            false => Some(Router::load_program(program)?),
        };
        let loaded = given.or(own.as_ref());
        for (i, (r, loaded)) in s.routers.iter().zip(loaded.into_iter().cycle()).enumerate() {
            let seed = derive(s.seed, Kind::Router, i);
            routers.push(Router::new(r, i, loaded, seed, topo.router_out[i].clone())?);
        }
        // After the entries are in: a flow's route check reads them.
        topo.check_flows(s)?;
        let tcp_configs = s
            .flows
            .iter()
            .enumerate()
            .map(|(i, f)| tcp_config(f, i))
            .collect::<Result<Vec<_>, _>>()?;
        let rbcc_configs = (0..s.flows.len())
            .map(|i| rbcc_config(s, i))
            .collect::<Result<Vec<_>, _>>()?;
        if let Some(sample) = &s.sample {
            for (i, name) in sample.registers.iter().enumerate() {
                if let Some(r) = routers.first() {
                    r.sw.register_shape(name).map_err(|e| {
                        ScenarioError::new(format!("sample.registers[{i}]"), e.to_string())
                    })?;
                }
            }
        }
        let mut hosts: Vec<Host> = s
            .hosts
            .iter()
            .enumerate()
            .map(|(i, h)| Host::new(i, h.address.octets()))
            .collect();
        follow_traces(&topo, &mut routers, &mut hosts);
        follow_jitters(&topo, s.seed, &mut routers, &mut hosts);
        let mut flows = Vec::with_capacity(s.flows.len());
        let mut delay_receivers = HashMap::new();
        let mut queue = EventQueue::default();
        for (fi, f) in s.flows.iter().enumerate() {
            let (a, b) = (topo.host_index[&f.from], topo.host_index[&f.to]);
            let (mut sport, mut dport) = (SENDER_PORT + fi as u16, f.receiver_port(fi));
            let local = endpoint(&hosts[b], dport);
            let (proto, receiver) = if rbcc_configs[fi].is_some() {
                (sport, dport) = (rbcc_flow_id(fi), rbcc_flow_id(fi));
                let r = Receiver::new(rbcc_flow_id(fi));
                (IPPROTO_RBCC, EndpointKind::RbccReceiver(Box::new(r)))
            } else if let Some(cfg) = &tcp_configs[fi] {
                let iss = derive(s.seed, Kind::TcpIss, 2 * fi + 1) as u32;
                let conn = Connection::listen(cfg.clone(), local, iss, 0).map_err(|e| {
                    ScenarioError::new(format!("flows[{fi}].tcp.{}", e.field), e.message)
                })?;
                let kind = EndpointKind::TcpReceiver {
                    conn: Box::new(conn),
                    sink: Sink::new(false),
                };
                (PROTO_TCP, kind)
            } else if f.ping.is_some() {
                // Replies come back to the sender by ICMP identifier = flow index;
                // the receiving host answers requests itself (no endpoint).
                (sport, dport) = (fi as u16, fi as u16);
                (PROTO_ICMP, EndpointKind::Waiting)
            } else {
                // Checked here, started at start_ns.
                udp_source(s, fi, &hosts[a], &hosts[b], 0)?;
                (
                    PROTO_UDP,
                    EndpointKind::UdpReceiver(Box::new(UdpSink::new(local))),
                )
            };
            let add = |h: &mut Host, port: u16, kind: EndpointKind| {
                h.by_port.insert((proto, port), h.endpoints.len());
                h.endpoints.push(Endpoint {
                    kind,
                    stopped: false,
                    armed: None,
                });
                h.endpoints.len() - 1
            };
            for (h, port) in [(a, sport), (b, dport)] {
                if hosts[h].by_port.contains_key(&(proto, port)) {
                    return Err(ScenarioError::new(
                        format!("flows[{fi}].port"),
                        format!(
                            "port {port} of host {:?} is already another flow's",
                            s.hosts[h].name
                        ),
                    ));
                }
            }
            let sender = (a, add(&mut hosts[a], sport, EndpointKind::Waiting));
            let receiver = (b, add(&mut hosts[b], dport, receiver));
            if f.tcp.as_ref().is_some_and(|t| t.packet_delays) {
                delay_receivers.insert(receiver, fi);
                hosts[a].sent_at.resize(1 << 16, 0);
            }
            flows.push(FlowEnds { sender, receiver });
            queue.push(f.start_ns, Event::FlowStart(fi));
            if let Some(stop) = f.stop_ns {
                queue.push(stop, Event::FlowStop(fi));
            }
        }
        if s.sample.is_some() {
            queue.push(0, Event::Sample);
        }
        Ok(Simulator {
            host_counters: vec![HostCounters::default(); hosts.len()],
            scenario: s.clone(),
            topo,
            routers,
            hosts,
            flows,
            tcp_configs,
            rbcc_configs,
            queue,
            now: 0,
            drops: BTreeMap::new(),
            samples: Vec::new(),
            flow_samples: Vec::new(),
            sample_files: None,
            events: 0,
            delivered: 0,
            packet_delays: if delay_receivers.is_empty() {
                Vec::new()
            } else {
                vec![Vec::new(); s.flows.len()]
            },
            delay_receivers,
            scratch: vec![0; HEADERS + 65_536],
            frames: Vec::new(),
            pool: Vec::new(),
        })
    }

    /// Runs to the scenario's duration and returns what it measured.
    pub fn run(self) -> Results {
        self.run_with_progress(0, |_, _| {})
    }

    /// Like [`Simulator::run`], calling `progress(simulated time, events so
    /// far)` each time another `every_ns` of simulated time has passed, up to
    /// and including the end (0: never). The callback sees the run; it cannot
    /// change it.
    pub fn run_with_progress(
        mut self,
        every_ns: Nanos,
        progress: impl FnMut(Nanos, u64),
    ) -> Results {
        self.run_events(every_ns, progress);
        self.results()
    }

    /// Like [`Simulator::run_with_progress`], and writes the results into
    /// `dir` as [`Results::write_dir`] does, byte for byte; but the queue
    /// and flow samples go to their files (and results.json's arrays) as
    /// they are taken instead of being kept, so memory stays flat however
    /// long the run. The returned results hold no samples.
    pub fn run_into_dir(
        mut self,
        dir: &Path,
        every_ns: Nanos,
        progress: impl FnMut(Nanos, u64),
    ) -> io::Result<Results> {
        let registers = self.sample_registers();
        self.sample_files = Some(SampleFiles::create(dir, &registers)?);
        self.run_events(every_ns, progress);
        let files = self.sample_files.take().expect("set above");
        let results = self.results();
        files.finish(&results)?;
        Ok(results)
    }

    fn sample_registers(&self) -> Vec<String> {
        let sample = self.scenario.sample.as_ref();
        sample.map_or(Vec::new(), |s| s.registers.clone())
    }

    fn run_events(&mut self, every_ns: Nanos, mut progress: impl FnMut(Nanos, u64)) {
        let end = self.scenario.duration_ns;
        let mut next_report = if every_ns == 0 { Nanos::MAX } else { every_ns };
        while let Some(t) = self.queue.peek_time() {
            if t > end {
                break;
            }
            while t >= next_report {
                progress(next_report, self.events);
                next_report = next_report.saturating_add(every_ns);
            }
            let (t, ev) = self.queue.pop().expect("peeked");
            self.now = t;
            self.events += 1;
            self.handle(ev);
        }
        while next_report <= end {
            progress(next_report, self.events);
            next_report = next_report.saturating_add(every_ns);
        }
        self.now = end;
    }

    fn handle(&mut self, ev: Event) {
        match ev {
            Event::Deliver {
                to: Node::Host(h),
                frame,
            } => self.host_receive(h, frame),
            Event::Deliver {
                to: Node::Router(r, port),
                frame,
            } => {
                // The packet takes the frame's buffer (no copy); the
                // router deparses into its spare buffers.
                let sw = &mut self.routers[r].sw;
                sw.inject_owned(port, frame, engine_us(self.now));
                self.drain_router(r);
            }
            Event::HostTimer { host, ep } => {
                let e = &mut self.hosts[host].endpoints[ep];
                if e.armed == Some(self.now) {
                    e.armed = None;
                    self.service(host, ep);
                }
            }
            Event::RouterWake { router } => {
                if self.routers[router].armed == Some(self.now / 1000) {
                    self.routers[router].armed = None;
                    self.drain_router(router);
                }
            }
            Event::FlowStart(fi) => self.start_flow(fi),
            Event::FlowStop(fi) => {
                let (h, e) = self.flows[fi].sender;
                let ep = &mut self.hosts[h].endpoints[e];
                ep.stopped = true;
                if let EndpointKind::TcpSender { conn, .. } = &mut ep.kind {
                    conn.close();
                }
                self.service(h, e);
            }
            Event::Sample => self.sample(),
        }
    }

    fn recycle(&mut self, mut frame: Vec<u8>) {
        if self.pool.len() < 4096 {
            frame.clear();
            self.pool.push(frame);
        }
    }

    fn start_flow(&mut self, fi: usize) {
        let (h, e) = self.flows[fi].sender;
        let (rh, _) = self.flows[fi].receiver;
        let now = self.now;
        let kind = match &self.tcp_configs[fi] {
            None if self.scenario.flows[fi].ping.is_some() => {
                let spec = self.scenario.flows[fi].ping.as_ref().expect("a ping flow");
                let size = spec.size.unwrap_or(DEFAULT_PING_SIZE);
                EndpointKind::Ping {
                    pinger: Box::new(Pinger::new(fi as u16, spec.interval_ns, size, now)),
                    peer: self.hosts[rh].addr,
                }
            }
            None if self.rbcc_configs[fi].is_some() => {
                let cfg = self.rbcc_configs[fi].clone().expect("an RBCC flow");
                let sender = Sender::new(cfg, now / 1000).expect("checked when built");
                EndpointKind::RbccSender {
                    sender: Box::new(sender),
                    peer: self.hosts[rh].addr,
                }
            }
            Some(cfg) => {
                let spec = self.scenario.flows[fi].tcp.as_ref().expect("a TCP flow");
                let iss = derive(self.scenario.seed, Kind::TcpIss, 2 * fi) as u32;
                let local = endpoint(&self.hosts[h], SENDER_PORT + fi as u16);
                let remote = endpoint(&self.hosts[rh], self.scenario.flows[fi].receiver_port(fi));
                let conn = Connection::connect(cfg.clone(), local, remote, iss, now)
                    .expect("checked when the simulator was built");
                EndpointKind::TcpSender {
                    conn: Box::new(conn),
                    app: app(&spec.app),
                    meter: FlowMeter::new(false),
                }
            }
            None => EndpointKind::UdpSender(
                udp_source(&self.scenario, fi, &self.hosts[h], &self.hosts[rh], now)
                    .expect("checked when the simulator was built"),
            ),
        };
        self.hosts[h].endpoints[e].kind = kind;
        self.service(h, e);
    }

    /// Lets one endpoint act at `now`: its application, then everything its
    /// stack has to send, then arms its next timer.
    fn service(&mut self, h: usize, e: usize) {
        let now = self.now;
        let Simulator {
            hosts,
            topo,
            queue,
            scratch,
            pool,
            drops,
            host_counters,
            ..
        } = self;
        let Host {
            addr,
            mac,
            egress,
            endpoints,
            next_id,
            sent_at,
            ..
        } = &mut hosts[h];
        let mut tx = Tx {
            host: h,
            addr: *addr,
            mac: *mac,
            out: topo.host_out[h],
            egress,
            next_id,
            sent_at,
            queue,
            drops,
            counters: &mut host_counters[h],
            pool,
            now,
        };
        let ep = &mut endpoints[e];
        let wake = match &mut ep.kind {
            EndpointKind::Waiting | EndpointKind::UdpReceiver(_) => None,
            EndpointKind::TcpSender { conn, app, meter } => {
                if !ep.stopped {
                    app.poll(now, conn.as_mut());
                }
                while let Some(t) = conn.poll_transmit(now, &mut scratch[HEADERS..]) {
                    tx.send(scratch, t.len, PROTO_TCP, t.dst);
                }
                meter.observe(now, conn);
                let app_at = if ep.stopped { None } else { app.poll_at() };
                [conn.poll_at(), app_at].into_iter().flatten().min()
            }
            EndpointKind::TcpReceiver { conn, sink } => {
                sink.poll(now, conn.as_mut());
                while let Some(t) = conn.poll_transmit(now, &mut scratch[HEADERS..]) {
                    tx.send(scratch, t.len, PROTO_TCP, t.dst);
                }
                conn.poll_at()
            }
            EndpointKind::UdpSender(src) if !ep.stopped => {
                while let Some(t) = src.poll_transmit(now, &mut scratch[HEADERS..]) {
                    tx.send(scratch, t.len, PROTO_UDP, t.dst);
                }
                src.poll_at()
            }
            EndpointKind::UdpSender(_) | EndpointKind::RbccReceiver(_) => None,
            EndpointKind::Ping { pinger, peer } if !ep.stopped => {
                let dst = *peer;
                while let Some(len) = pinger.poll_transmit(now, &mut scratch[HEADERS..]) {
                    tx.send(scratch, len, PROTO_ICMP, dst);
                }
                Some(pinger.poll_at())
            }
            EndpointKind::Ping { .. } => None,
            EndpointKind::RbccSender { sender, peer } => {
                let dst = *peer;
                // Time only goes forwards, so the µs call cannot fail.
                let _ = sender.on_timer(now / 1000, |d| {
                    scratch[HEADERS..HEADERS + d.len()].copy_from_slice(d);
                    tx.send(scratch, d.len(), IPPROTO_RBCC, dst);
                });
                sender.poll_at().map(|at| wake_from_us(at, now))
            }
        };
        if let Some(w) = wake {
            // A machine that wants to be called at `now` again has just
            // been: the next call is one nanosecond on.
            let w = w.max(now + 1);
            if ep.armed.is_none_or(|a| w < a) {
                ep.armed = Some(w);
                tx.queue.push(w, Event::HostTimer { host: h, ep: e });
            }
        }
    }
}

/// A host's way out: frames its stacks write go into its egress FIFO.
struct Tx<'a> {
    host: usize,
    addr: [u8; 4],
    mac: [u8; 6],
    out: Direction,
    egress: &'a mut crate::host::Egress,
    next_id: &'a mut u16,
    sent_at: &'a mut [Nanos],
    queue: &'a mut EventQueue<Event>,
    drops: &'a mut BTreeMap<(Node, &'static str), u64>,
    counters: &'a mut HostCounters,
    pool: &'a mut Vec<Vec<u8>>,
    now: Nanos,
}

impl Tx<'_> {
    /// Frames the `len` transport bytes at `scratch[HEADERS..]` and queues them.
    fn send(&mut self, scratch: &mut [u8], len: usize, protocol: u8, dst: [u8; 4]) {
        let a = Addresses {
            src_mac: self.mac,
            dst_mac: GATEWAY_MAC,
            src: self.addr,
            dst,
            protocol,
            id: *self.next_id,
        };
        *self.next_id = self.next_id.wrapping_add(1);
        if let Some(t) = self.sent_at.get_mut(usize::from(a.id)) {
            *t = self.now; // packet delays recorded: when this id left
        }
        frame::write_headers(scratch, &a, len);
        let bytes = HEADERS + len;
        let (now, limit) = (self.now, self.out.queue_limit);
        let offered = match self.out.trace {
            Some(_) => self.egress.offer_trace(now, bytes, limit),
            None => self
                .egress
                .offer(now, self.out.serialization_ns(bytes), limit),
        };
        let Some(depart) = offered else {
            *self
                .drops
                .entry((Node::Host(self.host), "host_queue_full"))
                .or_default() += 1;
            return;
        };
        let mut buf = self.pool.pop().unwrap_or_default();
        buf.extend_from_slice(&scratch[..bytes]);
        self.counters.tx_packets += 1;
        self.counters.tx_bytes += bytes as u64;
        self.queue.push(
            self.egress.jitter.arrival(depart + self.out.delay_ns),
            Event::Deliver {
                to: self.out.to,
                frame: buf,
            },
        );
    }
}

impl Simulator {
    /// Sends the `len` transport bytes at `scratch[HEADERS..]` from host `h`.
    fn send_scratch(&mut self, h: usize, len: usize, protocol: u8, dst: [u8; 4]) {
        let host = &mut self.hosts[h];
        let mut tx = Tx {
            host: h,
            addr: host.addr,
            mac: host.mac,
            out: self.topo.host_out[h],
            egress: &mut host.egress,
            next_id: &mut host.next_id,
            sent_at: &mut host.sent_at,
            queue: &mut self.queue,
            drops: &mut self.drops,
            counters: &mut self.host_counters[h],
            pool: &mut self.pool,
            now: self.now,
        };
        tx.send(&mut self.scratch, len, protocol, dst);
    }

    /// A data segment for a receiver whose flow records packet delays: its
    /// one-way delay, from when its IPv4 id last left the sending host.
    fn note_delay(&mut self, h: usize, e: usize, frame: &[u8], segment: &[u8]) {
        let Some(&fi) = self.delay_receivers.get(&(h, e)) else {
            return;
        };
        let header = segment
            .get(12)
            .map_or(usize::MAX, |b| usize::from(b >> 4) * 4);
        if segment.len() <= header {
            return; // no data: a SYN, a pure ACK, a FIN
        }
        let id = usize::from(u16::from_be_bytes([frame[18], frame[19]])); // IPv4 id
        let sent = self.hosts[self.flows[fi].sender.0].sent_at[id];
        self.packet_delays[fi].push(self.now - sent);
    }

    fn drop(&mut self, at: Node, cause: &'static str) {
        *self.drops.entry((at, cause)).or_default() += 1;
    }

    fn host_receive(&mut self, h: usize, frame: Vec<u8>) {
        let c = &mut self.host_counters[h];
        c.rx_packets += 1;
        c.rx_bytes += frame.len() as u64;
        let host = &mut self.hosts[h];
        let Some(p) = frame::parse(&frame) else {
            self.recycle(frame);
            return self.drop(Node::Host(h), "malformed");
        };
        if p.dst != host.addr {
            self.recycle(frame);
            return self.drop(Node::Host(h), "not_for_host");
        }
        let port = match p.payload.get(2..4) {
            Some(b) if p.protocol == PROTO_TCP || p.protocol == PROTO_UDP => {
                u16::from_be_bytes([b[0], b[1]])
            }
            _ if p.protocol == PROTO_ICMP => match ping::parse_echo(p.payload) {
                Some((true, _, _)) => {
                    // A request for this host: answered at once, as a kernel does.
                    let len = ping::reply(p.payload, &mut self.scratch[HEADERS..]);
                    let src = p.src;
                    self.delivered += 1;
                    self.recycle(frame);
                    return self.send_scratch(h, len, PROTO_ICMP, src);
                }
                Some((false, ident, _)) => ident,
                None => {
                    self.recycle(frame);
                    return self.drop(Node::Host(h), "malformed");
                }
            },
            _ if p.protocol == IPPROTO_RBCC => match rbcc_host::receiver::demux(p.payload) {
                Some((flow_id, _)) => flow_id,
                None => {
                    self.recycle(frame);
                    return self.drop(Node::Host(h), "malformed");
                }
            },
            _ => {
                self.recycle(frame);
                return self.drop(Node::Host(h), "no_endpoint");
            }
        };
        let Some(&e) = host.by_port.get(&(p.protocol, port)) else {
            self.recycle(frame);
            return self.drop(Node::Host(h), "no_endpoint");
        };
        if !self.delay_receivers.is_empty() && p.protocol == PROTO_TCP {
            self.note_delay(h, e, &frame, p.payload);
        }
        let host = &mut self.hosts[h];
        let now = self.now;
        match &mut host.endpoints[e].kind {
            EndpointKind::TcpSender { conn, .. } | EndpointKind::TcpReceiver { conn, .. } => {
                conn.handle_segment(now, p.src, p.payload)
            }
            EndpointKind::UdpReceiver(sink) => sink.handle_datagram(now, p.src, p.payload),
            EndpointKind::Ping { pinger, .. } => {
                if let Some((_, _, seq)) = ping::parse_echo(p.payload) {
                    pinger.on_reply(now, seq);
                    if let Some(files) = &mut self.sample_files {
                        files.ping_replies(pinger.ident(), pinger.replies.drain(..));
                    }
                }
            }
            EndpointKind::RbccSender { sender, .. } => {
                let _ = sender.on_datagram(now / 1000, p.payload);
            }
            EndpointKind::RbccReceiver(r) => {
                // The receiver only answers: its ACK goes straight out.
                let ack_len = match r.on_datagram(now / 1000, p.payload) {
                    Some(ack) => {
                        self.scratch[HEADERS..HEADERS + ack.len()].copy_from_slice(ack);
                        ack.len()
                    }
                    None => 0,
                };
                r.take_delivered(|_, _| {});
                let src = p.src;
                self.delivered += 1;
                self.recycle(frame);
                if ack_len > 0 {
                    self.send_scratch(h, ack_len, IPPROTO_RBCC, src);
                }
                return;
            }
            EndpointKind::Waiting | EndpointKind::UdpSender(_) => {
                self.recycle(frame);
                return self.drop(Node::Host(h), "no_endpoint");
            }
        }
        self.delivered += 1;
        self.recycle(frame);
        self.service(h, e);
    }

    /// Takes every frame the router's traffic manager has released by now
    /// onto its link, and arms the router's next wake-up.
    fn drain_router(&mut self, r: usize) {
        let now = self.now;
        let router = &mut self.routers[r];
        router.sw.poll_into(engine_us(now), &mut self.frames);
        for f in self.frames.drain(..) {
            let Some(Some(d)) = router.out.get(f.port as usize) else {
                *self
                    .drops
                    .entry((Node::Router(r, f.port), "unconnected_port"))
                    .or_default() += 1;
                continue;
            };
            let arrival = match d.trace {
                // The engine held it until the opportunity carrying its last byte.
                Some(_) => f.emit_us * 1000 + d.delay_ns,
                None => (f.time_us * 1000).max(now) + d.serialization_ns(f.data.len()) + d.delay_ns,
            };
            let arrival = router.jitter[f.port as usize].arrival(arrival);
            self.queue.push(
                arrival,
                Event::Deliver {
                    to: d.to,
                    frame: f.data,
                },
            );
        }
        if let Some(t) = router.sw.next_event_time() {
            if router.armed.is_none_or(|a| t < a) {
                router.armed = Some(t);
                self.queue.push(t * 1000, Event::RouterWake { router: r });
            }
        }
    }

    fn sample(&mut self) {
        let Some(spec) = &self.scenario.sample else {
            return;
        };
        let routers = if spec.queues { &self.routers[..] } else { &[] };
        for (ri, router) in routers.iter().enumerate() {
            for &port in &self.topo.router_ports[ri] {
                let registers = spec
                    .registers
                    .iter()
                    .map(|n| router.sw.register_read(n, port as usize).unwrap_or(0))
                    .collect();
                let q = QueueSample {
                    time_ns: self.now,
                    router: self.scenario.routers[ri].name.clone(),
                    port,
                    queue_packets: router.sw.queue_len(port) as u64,
                    registers,
                };
                match &mut self.sample_files {
                    Some(files) => files.queue(&q),
                    None => self.samples.push(q),
                }
            }
        }
        let next = self.now + spec.interval_ns;
        if spec.flows {
            self.sample_flows();
        }
        if next <= self.scenario.duration_ns {
            self.queue.push(next, Event::Sample);
        }
    }

    /// Each sender that has started: TCP's window and RTT, RBCC's rates.
    fn sample_flows(&mut self) {
        for fi in 0..self.flows.len() {
            let (h, e) = self.flows[fi].sender;
            let mut s = FlowSample {
                time_ns: self.now,
                flow: self.scenario.flows[fi].name.clone(),
                cwnd: None,
                ssthresh: None,
                srtt_ns: None,
                rate: None,
                return_rate: None,
                bottle_node: None,
                in_flight: None,
                delivered: None,
                written: None,
            };
            match &self.hosts[h].endpoints[e].kind {
                EndpointKind::TcpSender { conn, .. } => {
                    let smss = conn.smss().max(1);
                    s.cwnd = Some(conn.cwnd() / smss);
                    s.ssthresh = Some(conn.ssthresh())
                        .filter(|&t| t != u64::MAX)
                        .map(|t| t / smss);
                    s.srtt_ns = conn.rtt().srtt();
                    s.in_flight = Some(conn.bytes_in_flight());
                    s.delivered = Some(conn.stats().bytes_acked);
                    s.written = Some(conn.stats().bytes_written);
                }
                EndpointKind::RbccSender { sender, .. } => {
                    s.rate = Some(sender.rate());
                    s.return_rate = Some(sender.return_rate()).filter(|&r| r != u32::MAX);
                    s.bottle_node = Some(sender.return_bottle_node());
                }
                _ => continue,
            }
            match &mut self.sample_files {
                Some(files) => files.flow(&s),
                None => self.flow_samples.push(s),
            }
        }
    }

    fn flow_result(&self, fi: usize) -> FlowResult {
        let f = &self.scenario.flows[fi];
        let ends = self.flows[fi];
        let sender = &self.hosts[ends.sender.0].endpoints[ends.sender.1].kind;
        let receiver = &self.hosts[ends.receiver.0].endpoints[ends.receiver.1].kind;
        let mut r = FlowResult {
            name: f.name.clone(),
            from: f.from.clone(),
            to: f.to.clone(),
            transport: match (&f.tcp, &f.udp) {
                (Some(t), _) => format!("tcp/{}", t.cc),
                (_, Some(u)) => format!("udp/{}", u.pattern),
                _ if f.ping.is_some() => "ping".to_string(),
                _ => "rbcc".to_string(),
            },
            bytes_received: 0,
            goodput_bps: 0.0,
            one_way_delay_mean_ns: 0.0,
            completion_ns: None,
            packet_delays_ns: self.packet_delays.get(fi).cloned().unwrap_or_default(),
            tcp: None,
            udp: None,
            rbcc: None,
            ping: None,
        };
        match receiver {
            EndpointKind::TcpReceiver { sink, .. } => {
                r.bytes_received = sink.bytes;
                r.goodput_bps = sink.goodput_bps().unwrap_or(0.0);
                r.one_way_delay_mean_ns = sink.delay.mean().unwrap_or(0.0);
                if let Some(AppSpec::Transfer { bytes, .. }) = f.tcp.as_ref().map(|t| &t.app) {
                    if sink.bytes >= *bytes {
                        r.completion_ns = sink.last_byte_at.map(|t| t - f.start_ns);
                    }
                }
            }
            EndpointKind::UdpReceiver(sink) => {
                r.bytes_received = sink.bytes;
                r.goodput_bps = sink.goodput_bps().unwrap_or(0.0);
                r.one_way_delay_mean_ns = sink.delay.mean().unwrap_or(0.0);
                let sent = match sender {
                    EndpointKind::UdpSender(src) => src.sent().0,
                    _ => 0,
                };
                r.udp = Some(UdpResult {
                    sent,
                    received: sink.received,
                    lost: sink.lost(),
                    duplicates: sink.duplicates,
                    reordered: sink.reordered,
                });
            }
            EndpointKind::RbccReceiver(rx) => {
                let got = rx.summary();
                r.bytes_received = got.bytes_delivered;
                r.goodput_bps = got.goodput_bps.unwrap_or(0) as f64;
                if let EndpointKind::RbccSender { sender, .. } = sender {
                    let sent = sender.summary();
                    r.rbcc = Some(RbccResult {
                        rate: sender.rate(),
                        bottle_node: sender.return_bottle_node(),
                        packets_sent: sent.packets_sent,
                        segments_acked: sent.segments_acked,
                        retransmissions: sent.retransmissions,
                        srtt_us: sent.srtt_us,
                        lost: got.lost,
                        complete: got.complete,
                    });
                }
            }
            _ => {}
        }
        if let EndpointKind::Ping { pinger, .. } = sender {
            r.ping = Some(PingResult {
                sent: pinger.sent(),
                received: pinger.received,
                replies: pinger.replies.clone(),
            });
        }
        if let EndpointKind::TcpSender { conn, meter, .. } = sender {
            let s = meter.summary(conn);
            r.tcp = Some(TcpResult {
                bytes_acked: s.bytes_acked,
                goodput_bps: s.goodput_bps,
                srtt_ns: s.srtt,
                min_rtt_ns: s.min_rtt,
                rtt_samples: s.rtt_samples,
                cwnd: s.cwnd,
                ssthresh_changes: s.ssthresh_changes,
                retransmissions: s.retransmissions,
                rtos: s.rtos,
                spurious_rtos: s.spurious_rtos,
                recoveries_ended: conn.stats().recoveries_ended,
                recovery_ns: conn.stats().recovery_ns,
                bytes_written: conn.stats().bytes_written,
            });
        }
        r
    }

    fn node_port(&self, n: Node) -> (String, u32) {
        match n {
            Node::Host(h) => (self.scenario.hosts[h].name.clone(), 0),
            Node::Router(r, p) => (self.scenario.routers[r].name.clone(), p),
        }
    }

    fn results(&self) -> Results {
        let mut ports = Vec::new();
        let mut counters = Vec::new();
        let mut drops: Vec<DropCount> = Vec::new();
        let mut add_drop = |node: (String, u32), cause: &str, packets: u64| {
            if packets > 0 {
                drops.push(DropCount {
                    node: node.0,
                    port: node.1,
                    cause: cause.to_string(),
                    packets,
                });
            }
        };
        for (ri, router) in self.routers.iter().enumerate() {
            let name = &self.scenario.routers[ri].name;
            // The program's counters by last name component; router.p4's
            // drop_* ones (indexed by port) are drops by cause.
            let mut names: Vec<(String, String)> = router
                .sw
                .counter_names()
                .into_iter()
                .map(|c| (c.rsplit('.').next().unwrap_or(&c).to_string(), c))
                .collect();
            names.sort();
            for &port in &self.topo.router_ports[ri] {
                let st = router.sw.port_stats(port);
                ports.push(PortResult {
                    node: name.clone(),
                    port,
                    rx_packets: st.rx_packets,
                    rx_bytes: st.rx_bytes,
                    tx_packets: st.tx_packets,
                    tx_bytes: st.tx_bytes,
                });
                for (short, counter) in &names {
                    let Ok((packets, bytes)) = router.sw.counter_read(counter, port as usize)
                    else {
                        continue; // an index past the counter array
                    };
                    if let Some(cause) = short.strip_prefix("drop_") {
                        add_drop((name.clone(), port), cause, packets);
                    } else if packets > 0 || bytes > 0 {
                        counters.push(CounterValue {
                            router: name.clone(),
                            port,
                            name: short.clone(),
                            packets,
                            bytes,
                        });
                    }
                }
                add_drop((name.clone(), port), "switch_queue_full", st.queue_drops);
                add_drop((name.clone(), port), "switch_mtu", st.mtu_drops);
            }
        }
        for (h, c) in self.host_counters.iter().enumerate() {
            ports.push(PortResult {
                node: self.scenario.hosts[h].name.clone(),
                port: 0,
                rx_packets: c.rx_packets,
                rx_bytes: c.rx_bytes,
                tx_packets: c.tx_packets,
                tx_bytes: c.tx_bytes,
            });
        }
        for (&(at, cause), &n) in &self.drops {
            add_drop(self.node_port(at), cause, n);
        }
        drops.sort();
        Results {
            seed: self.scenario.seed,
            duration_ns: self.scenario.duration_ns,
            events: self.events,
            delivered_packets: self.delivered,
            flows: (0..self.flows.len())
                .map(|fi| self.flow_result(fi))
                .collect(),
            ports,
            drops,
            counters,
            sample_registers: self.sample_registers(),
            queue_samples: self.samples.clone(),
            flow_samples: self.flow_samples.clone(),
        }
    }
}
