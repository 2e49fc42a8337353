//! The v1model switch (as simple_switch runs it): ingress, traffic manager,
//! egress and replication. The control API is in `control.rs`.

mod control;

use crate::error::{ControlError, LoadError};
use crate::exec::{self, Digest, Flags, Pkt, State};
use crate::jit::{Jit, Pipeline};
use crate::load::load;
use crate::phv::{Phv, Val};
use crate::program::{ActionRef, MatchKind, Program};
use crate::rng::Rng;
use crate::table::MatchValue;
use crate::trace::{Trace, TraceCursor};
use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

/// `standard_metadata.instance_type` values, as simple_switch sets them.
pub mod instance_type {
    /// A packet received on a port.
    pub const NORMAL: u32 = 0;
    /// An ingress-to-egress clone.
    pub const INGRESS_CLONE: u32 = 1;
    /// An egress-to-egress clone.
    pub const EGRESS_CLONE: u32 = 2;
    /// A recirculated packet.
    pub const RECIRC: u32 = 4;
    /// A multicast replica.
    pub const REPLICATION: u32 = 5;
    /// A resubmitted packet.
    pub const RESUBMIT: u32 = 6;
}

/// The drop port: `egress_spec == 511` (or `mark_to_drop`) drops the packet.
pub const DROP_PORT: u32 = 511;
/// Port numbers are 0..=511 (9 bits).
pub const MAX_PORTS: usize = 512;
/// Default queue depth in packets (simple_switch's default).
pub const DEFAULT_QUEUE_DEPTH: usize = 64;
/// Frame buffers [`Switch::recycle`] keeps for reuse.
pub const SPARE_BUFFERS: usize = 1024;
/// Resubmit / recirculate passes allowed per received packet before it is
/// dropped (counted in [`SwitchStats::loop_drops`]).
pub const MAX_LOOPS: u32 = 32;
/// Packets one received packet may give rise to over all generations
/// (clones, multicast copies, resubmits, recirculations); copies past it are
/// dropped (counted in [`SwitchStats::loop_drops`]). Without it a program
/// that clones its own clones makes work growing exponentially at one
/// instant: `poll` would not return.
pub const MAX_DESCENDANTS: u32 = 1 << 16;

/// A frame leaving the switch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    /// Egress port.
    pub port: u32,
    /// Bytes on the wire.
    pub data: Vec<u8>,
    /// Time (µs) its transmission starts (= its dequeue time).
    pub time_us: u64,
    /// Time (µs) it leaves the engine: `time_us` on a port without a link
    /// delay; with one, when its last bit reaches the far end of the link
    /// (`time_us` + transmission time + delay). On a port with a trace
    /// ([`Switch::set_port_trace`]): its delivery opportunity + delay.
    pub emit_us: u64,
}

/// Drain rate of a port queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Rate {
    /// No limit: a packet is dequeued when it arrives.
    #[default]
    Unlimited,
    /// Packets per second.
    Pps(u64),
    /// Bits per second.
    Bps(u64),
}

impl Rate {
    /// Transmission time in µs of a frame of `bytes` bytes (rounded up).
    pub fn tx_time_us(self, bytes: usize) -> u64 {
        match self {
            Rate::Unlimited | Rate::Pps(0) | Rate::Bps(0) => 0,
            Rate::Pps(r) => 1_000_000u64.div_ceil(r),
            Rate::Bps(r) => ((bytes as u128 * 8 * 1_000_000).div_ceil(r as u128)) as u64,
        }
    }
}

/// A replication target: egress port and replication id (`egress_rid`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Replica {
    /// Egress port.
    pub port: u32,
    /// Value of `standard_metadata.egress_rid` for this copy.
    pub rid: u32,
}

/// A clone (mirror) session.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CloneSession {
    /// Where clones go (one port, or several like a multicast group).
    pub replicas: Vec<Replica>,
    /// Truncate clones to this many bytes.
    pub truncate: Option<usize>,
}

/// Per-port counters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PortStats {
    /// Packets received (inject).
    pub rx_packets: u64,
    /// Bytes received.
    pub rx_bytes: u64,
    /// Frames transmitted.
    pub tx_packets: u64,
    /// Bytes transmitted.
    pub tx_bytes: u64,
    /// Packets dropped because the queue was full.
    pub queue_drops: u64,
    /// Frames dropped because they exceeded the port MTU.
    pub mtu_drops: u64,
}

/// Switch-wide counters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SwitchStats {
    /// Packets dropped at the end of ingress (egress_spec 511, no mcast).
    pub ingress_drops: u64,
    /// Packets dropped at the end of egress (mark_to_drop in egress).
    pub egress_drops: u64,
    /// Packets dropped because an `assert`/`assume` failed.
    pub assert_drops: u64,
    /// Packets dropped after [`MAX_LOOPS`] resubmits / recirculations, or
    /// past [`MAX_DESCENDANTS`] copies of one received packet.
    pub loop_drops: u64,
    /// Packets sent to a port number > 511 (dropped).
    pub bad_port_drops: u64,
    /// Packets whose multicast group or clone session does not exist.
    pub no_target_drops: u64,
}

/// An entry as read back from a table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EntryInfo {
    /// Entry handle.
    pub handle: u32,
    /// Match key.
    pub key: Vec<MatchValue>,
    /// Priority (BMv2 convention: lower wins; 0 for tables without priorities).
    pub priority: i32,
    /// Action name.
    pub action: String,
    /// Action parameters.
    pub params: Vec<u128>,
    /// Direct counter: packets.
    pub packets: u64,
    /// Direct counter: bytes.
    pub bytes: u64,
    /// Time (µs) the entry last matched a packet (`None`: never), so a
    /// caller can implement entry ageing / idle timeouts.
    pub last_hit_us: Option<u64>,
    /// For indirect tables: the action profile member the entry runs.
    pub member: Option<u32>,
    /// For indirect tables with a selector: the group the entry runs.
    pub group: Option<u32>,
}

/// A key component of a table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyInfo {
    /// Name (the JSON `name`, e.g. `hdr.ipv4.dstAddr`).
    pub name: String,
    /// Match kind.
    pub kind: MatchKind,
    /// Width in bits.
    pub width: u32,
}

/// Static description of a table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableInfo {
    /// Fully qualified name.
    pub name: String,
    /// JSON id.
    pub id: u64,
    /// Key components.
    pub key: Vec<KeyInfo>,
    /// Names of the actions the table may run.
    pub actions: Vec<String>,
    /// `max_size`.
    pub max_size: usize,
    /// Whether entries carry priorities (ternary / range / optional keys).
    pub uses_priority: bool,
    /// Whether entries come from the program and cannot be changed.
    pub const_entries: bool,
    /// Whether the default action cannot be changed.
    pub const_default: bool,
    /// Action profile of an indirect table.
    pub action_profile: Option<String>,
    /// Whether entries have direct counters (`with_counters`).
    pub with_counters: bool,
    /// Name of the direct meter array, if any.
    pub direct_meter: Option<String>,
    /// Current number of entries.
    pub entries: usize,
}

/// Static description of an action.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ActionInfo {
    /// Fully qualified name.
    pub name: String,
    /// JSON id.
    pub id: u64,
    /// Parameters: (name, width in bits).
    pub params: Vec<(String, u32)>,
}

struct Queued {
    pkt: Box<Pkt>,
    enq_time: u64,
    enq_depth: u32,
    loops: u32,
    /// Packets it may still give rise to (see [`MAX_DESCENDANTS`]).
    budget: u32,
}

/// Where a packet stands against the limits: resubmit / recirculate passes
/// so far ([`MAX_LOOPS`]) and the packets it may still give rise to
/// ([`MAX_DESCENDANTS`]).
#[derive(Clone, Copy)]
struct Lineage {
    loops: u32,
    budget: u32,
}

/// The frame a packet enters ingress with: borrowed (copied into the
/// packet) or a buffer the packet takes.
enum Input<'a> {
    Borrowed(&'a [u8]),
    Owned(Vec<u8>),
}

impl Input<'_> {
    fn bytes(&self) -> &[u8] {
        match self {
            Input::Borrowed(data) => data,
            Input::Owned(frame) => frame,
        }
    }
}

/// The budget each of `successors` packets gets once `new` packets are made
/// from one with `budget`: equal shares of what is left, so that one received
/// packet gives rise to at most [`MAX_DESCENDANTS`]. None: `new` is over
/// budget (the new packets are dropped).
fn share(budget: u32, new: usize, successors: usize) -> Option<u32> {
    let left = budget.checked_sub(u32::try_from(new).ok()?)?;
    Some(left / successors.max(1) as u32)
}

struct Port {
    /// Priority queues; index = priority, the highest index is served first.
    qs: Vec<VecDeque<Queued>>,
    depth: usize,
    rate: Rate,
    mtu: usize,
    next_free: u64,
    /// Link propagation delay (µs); 0: frames leave at their dequeue time.
    delay: u64,
    /// Largest random extra delay per frame (µs), uniform in 0..=jitter and
    /// drawn from `jitter_rng`; 0: none.
    jitter: u64,
    jitter_rng: Rng,
    /// Frames transmitted but not yet at the far end, in `emit_us` order.
    line: VecDeque<Frame>,
    /// Capacity from a mahimahi trace (µs cursor), in place of `rate`, and
    /// the engine time the trace starts at.
    trace: Option<(TraceCursor, u64)>,
    stats: PortStats,
}

impl Port {
    fn new() -> Port {
        Port {
            qs: vec![VecDeque::new()],
            depth: DEFAULT_QUEUE_DEPTH,
            rate: Rate::Unlimited,
            mtu: 0,
            next_free: 0,
            delay: 0,
            jitter: 0,
            jitter_rng: Rng::new(0),
            line: VecDeque::new(),
            trace: None,
            stats: PortStats::default(),
        }
    }
}

/// A v1model software switch running one BMv2 JSON program.
///
/// Sans-IO: time is passed in as microseconds (`u64`) and must not go
/// backwards (an earlier time is treated as the latest time seen).
/// `Switch` is `Send`: wrap it in a `Mutex` to share it between a packet
/// thread and a control thread; every method is short and non-blocking.
pub struct Switch {
    /// Shared with every switch built from the same [`LoadedProgram`].
    prog: Arc<Program>,
    /// The program's controls as native code; `None`: interpreted.
    jit: Option<Arc<Jit>>,
    /// Why the controls are interpreted, when compiling was tried and failed.
    jit_error: Option<String>,
    st: State,
    ports: Vec<Port>,
    active: Vec<u32>,
    /// Ports whose delay line holds frames.
    delayed: Vec<u32>,
    mc_groups: HashMap<u32, Vec<Replica>>,
    clone_sessions: HashMap<u32, CloneSession>,
    out: Vec<Frame>,
    now: u64,
    // Boxed so that packets move between queues and the pool without copying.
    #[allow(clippy::vec_box)]
    pool: Vec<Box<Pkt>>,
    stats: SwitchStats,
    seed: u64,
    /// Frame buffers to deparse into: given back by [`Switch::recycle`] so
    /// that a frame costs no allocation.
    spare_bufs: Vec<Vec<u8>>,
}

/// The program's controls compiled, or why not.
fn compile(prog: &Program) -> (Option<Arc<Jit>>, Option<String>) {
    match Jit::compile(prog) {
        Ok(j) => (Some(Arc::new(j)), None),
        Err(e) => (None, Some(e)),
    }
}

/// A BMv2 JSON program loaded and its controls compiled (or why they are
/// not): the costly part of [`Switch::new`]. Cloning it is cheap (shared,
/// immutable), so many switches running one program — a simulated network's
/// routers — load and compile it once ([`Switch::with_program`]).
#[derive(Clone)]
pub struct LoadedProgram {
    prog: Arc<Program>,
    jit: Option<Arc<Jit>>,
    jit_error: Option<String>,
}

impl LoadedProgram {
    /// Loads, checks (the program's constant entries included) and compiles
    /// a BMv2 JSON program.
    pub fn new(json: &str) -> Result<LoadedProgram, LoadError> {
        let prog = load(json)?;
        Switch::fresh_state(&prog, 0)?;
        let (jit, jit_error) = compile(&prog);
        Ok(LoadedProgram {
            prog: Arc::new(prog),
            jit,
            jit_error,
        })
    }

    /// Whether the controls are compiled ([`Switch::compiled`]).
    pub fn compiled(&self) -> bool {
        self.jit.is_some()
    }
}

pub(super) fn nf<T>(kind: &'static str, name: &str) -> Result<T, ControlError> {
    Err(ControlError::NotFound(kind, name.to_string()))
}

impl Switch {
    /// Loads a BMv2 JSON program. `seed` seeds the generator behind
    /// `random`, `modify_field_rng_uniform` and the `random` hash.
    pub fn new(json: &str, seed: u64) -> Result<Switch, LoadError> {
        Self::with_program(&LoadedProgram::new(json)?, seed)
    }

    /// A switch running an already loaded program: the same as
    /// [`Switch::new`] on its JSON, without loading and compiling it again.
    /// The switches share the program and its native code, nothing else
    /// (tables, registers, queues and the random generator are each one's).
    pub fn with_program(program: &LoadedProgram, seed: u64) -> Result<Switch, LoadError> {
        let st = Self::fresh_state(&program.prog, seed)?;
        Ok(Switch {
            prog: Arc::clone(&program.prog),
            jit: program.jit.clone(),
            jit_error: program.jit_error.clone(),
            st,
            ports: (0..MAX_PORTS).map(|_| Port::new()).collect(),
            active: Vec::new(),
            delayed: Vec::new(),
            mc_groups: HashMap::new(),
            clone_sessions: HashMap::new(),
            out: Vec::new(),
            now: 0,
            pool: Vec::new(),
            stats: SwitchStats::default(),
            seed,
            spare_bufs: Vec::new(),
        })
    }

    fn fresh_state(prog: &Program, seed: u64) -> Result<State, LoadError> {
        let mut st = State::new(prog, seed);
        for (ti, t) in prog.tables.iter().enumerate() {
            if let Some(entries) = &t.const_entries {
                for (i, e) in entries.iter().enumerate() {
                    st.tables[ti]
                        .mt
                        .add(
                            e.key.clone(),
                            e.priority,
                            ActionRef::Direct(e.action.clone()),
                        )
                        .map_err(|err| {
                            LoadError::new(
                                format!("table {:?} entries[{i}]", t.name),
                                err.to_string(),
                            )
                        })?;
                }
            }
        }
        Ok(st)
    }

    /// Replaces the program after validating the new one completely. On
    /// error nothing changes. On success, table entries, registers,
    /// counters, meters and value sets start empty, and queued packets
    /// (built for the old program) are discarded; multicast groups, clone
    /// sessions, port settings and frames already on a delayed link stay.
    pub fn reload(&mut self, json: &str) -> Result<(), LoadError> {
        let prog = load(json)?;
        let st = Self::fresh_state(&prog, self.seed)?;
        (self.jit, self.jit_error) = if self.jit.is_some() || self.jit_error.is_some() {
            compile(&prog)
        } else {
            (None, None)
        };
        self.prog = Arc::new(prog);
        self.st = st;
        for p in &mut self.ports {
            p.qs.iter_mut().for_each(|q| q.clear());
        }
        self.active.clear();
        self.pool.clear();
        Ok(())
    }

    // ================================================================ packets

    /// Whether the ingress and egress controls run as native code (the
    /// default) or through the interpreter. Both give the same results; the
    /// interpreter is the reference the compiled code is tested against.
    pub fn compiled(&self) -> bool {
        self.jit.is_some()
    }

    /// The parts of the pipeline that run as native code, in packet order:
    /// `parser`, `verify_checksum`, `ingress`, `egress`, `update_checksum`,
    /// `deparser`. A part is missing when the program has none (no
    /// checksums, say) or uses something only the interpreter runs (a
    /// parser with header stacks, lookahead or value sets; a header whose
    /// fields do not fall into whole bytes); it then runs interpreted, with
    /// the same results. Empty when nothing is compiled.
    pub fn compiled_stages(&self) -> Vec<&'static str> {
        self.jit.as_ref().map_or_else(Vec::new, |j| j.stages())
    }

    /// Why the controls are interpreted although compiling was asked for.
    pub fn compile_error(&self) -> Option<&str> {
        self.jit_error.as_deref()
    }

    /// Compiles the controls (`true`) or goes back to interpreting them
    /// (`false`); a later `reload` keeps the choice. Returns whether they are
    /// compiled now: compiling can fail (see [`Switch::compile_error`]), and
    /// the switch then goes on interpreting.
    pub fn set_compiled(&mut self, on: bool) -> bool {
        (self.jit, self.jit_error) = if on {
            compile(&self.prog)
        } else {
            (None, None)
        };
        self.jit.is_some()
    }

    /// Latest time seen (µs).
    pub fn now(&self) -> u64 {
        self.now
    }

    /// A packet arrives on `port` (0..=511; larger numbers are truncated to
    /// the width of `standard_metadata.ingress_port`) at `now_us`: first
    /// everything due by `now_us` is dequeued (its frames wait for
    /// [`Switch::poll`]), then the packet runs through the parser, checksum
    /// verification and ingress, and is enqueued (or replicated, cloned,
    /// resubmitted, dropped).
    pub fn inject(&mut self, port: u32, data: &[u8], now_us: u64) {
        self.arrive(port, Input::Borrowed(data), now_us);
    }

    /// Like [`Switch::inject`], the packet taking `data`'s buffer instead of
    /// a copy of it (a simulator hands each frame on: one copy less per
    /// packet). The buffer comes back out in a polled frame or stays among
    /// the spare ones.
    pub fn inject_owned(&mut self, port: u32, data: Vec<u8>, now_us: u64) {
        self.arrive(port, Input::Owned(data), now_us);
    }

    /// What `inject` and `inject_owned` do with the frame, however it is held.
    fn arrive(&mut self, port: u32, input: Input<'_>, now_us: u64) {
        let now = now_us.max(self.now);
        self.advance(now);
        if let Some(p) = self.ports.get_mut(port as usize) {
            p.stats.rx_packets += 1;
            p.stats.rx_bytes += input.bytes().len() as u64;
        }
        let first = Lineage {
            loops: 0,
            budget: MAX_DESCENDANTS,
        };
        self.ingress(port, input, instance_type::NORMAL, &[], first, now);
    }

    /// Dequeues every packet due by `now_us`, runs egress on each and
    /// returns the frames to transmit, in time order.
    pub fn poll(&mut self, now_us: u64) -> Vec<Frame> {
        let mut v = Vec::new();
        self.poll_into(now_us, &mut v);
        v
    }

    /// Like [`Switch::poll`], appending to `out` (no allocation when `out`
    /// has room).
    pub fn poll_into(&mut self, now_us: u64, out: &mut Vec<Frame>) {
        let now = now_us.max(self.now);
        self.advance(now);
        if out.is_empty() {
            // Hands the frames over without copying them; `out`'s room stays here.
            std::mem::swap(out, &mut self.out);
        } else {
            out.append(&mut self.out);
        }
    }

    /// Gives a polled frame's buffer back for a later frame to reuse (keeps
    /// up to [`SPARE_BUFFERS`] of them).
    pub fn recycle(&mut self, data: Vec<u8>) {
        if self.spare_bufs.len() < SPARE_BUFFERS {
            self.spare_bufs.push(data);
        }
    }

    /// When the next queued packet becomes due or the next frame on a
    /// delayed link reaches its far end (µs), if ever. Frames already
    /// produced but not yet polled are due now.
    pub fn next_event_time(&self) -> Option<u64> {
        if !self.out.is_empty() {
            return Some(self.now);
        }
        let deq = self.active.iter().filter_map(|&p| self.due(p)).min();
        let line = self.delayed.iter().filter_map(|&p| self.line_due(p)).min();
        match (deq, line) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    fn line_due(&self, port: u32) -> Option<u64> {
        self.ports[port as usize].line.front().map(|f| f.emit_us)
    }

    fn due(&self, port: u32) -> Option<u64> {
        let p = &self.ports[port as usize];
        p.qs.iter()
            .filter_map(|q| q.front().map(|h| h.enq_time))
            .min()
            .map(|t| t.max(p.next_free))
    }

    fn advance(&mut self, now: u64) {
        self.now = now;
        loop {
            let mut best: Option<(u64, u32)> = None;
            for &p in &self.active {
                if let Some(d) = self.due(p) {
                    if d <= now && best.is_none_or(|b| (d, p) < b) {
                        best = Some((d, p));
                    }
                }
            }
            // A frame reaching the far end goes out before a dequeue at the
            // same time, so `out` stays in emission order.
            let mut arrival: Option<(u64, u32)> = None;
            for &p in &self.delayed {
                if let Some(d) = self.line_due(p) {
                    if d <= now && arrival.is_none_or(|b| (d, p) < b) {
                        arrival = Some((d, p));
                    }
                }
            }
            match (best, arrival) {
                (_, Some((a, port))) if best.is_none_or(|(t, _)| a <= t) => {
                    self.release(port);
                }
                (Some((t, port)), _) => self.dequeue(port, t),
                _ => break,
            }
        }
    }

    /// Hands the head of a port's delay line out of the engine.
    fn release(&mut self, port: u32) {
        let pt = &mut self.ports[port as usize];
        if let Some(f) = pt.line.pop_front() {
            if pt.line.is_empty() {
                self.delayed.retain(|&x| x != port);
            }
            self.out.push(f);
        }
    }

    /// A packet with a reset header vector; its frame buffer is the spare
    /// buffer given back last (the deparser hands that same buffer out).
    fn get_pkt(&mut self) -> Box<Pkt> {
        let mut frame = self.spare_bufs.pop().unwrap_or_default();
        frame.clear();
        match self.pool.pop() {
            Some(mut p) => {
                p.phv.reset(&self.prog.valid_init);
                p.flags = Flags::default();
                p.frame = frame;
                p.payload_at = 0;
                p
            }
            None => Box::new(Pkt {
                phv: Phv::new(
                    self.prog.fields.len(),
                    &self.prog.valid_init,
                    self.prog.stacks.len(),
                    self.prog.n_varbits,
                ),
                frame,
                payload_at: 0,
                len: 0,
                flags: Flags::default(),
            }),
        }
    }

    fn put_pkt(&mut self, mut p: Box<Pkt>) {
        let frame = std::mem::take(&mut p.frame);
        if frame.capacity() > 0 && self.spare_bufs.len() < SPARE_BUFFERS {
            self.spare_bufs.push(frame);
        }
        if self.pool.len() < 4096 {
            self.pool.push(p);
        }
    }

    fn capture(&self, pkt: &Pkt, fl: Option<u32>) -> Vec<(u32, u128)> {
        match fl.and_then(|id| self.prog.field_lists.get(&(id as u64))) {
            Some(fields) => fields
                .iter()
                .map(|&f| (f, pkt.phv.vals[f as usize]))
                .collect(),
            None => Vec::new(),
        }
    }

    /// A fresh packet from `input`: metadata set, preserved fields restored,
    /// parsed, checksums verified.
    fn parsed(
        &mut self,
        port: u32,
        input: Input<'_>,
        itype: u32,
        keep: &[(u32, u128)],
        now: u64,
    ) -> Box<Pkt> {
        let mut pkt = self.get_pkt();
        let data = input.bytes();
        let p = &self.prog;
        let sm = &p.sm;
        p.set_opt(&mut pkt.phv, sm.ingress_port, port as Val);
        p.set_opt(&mut pkt.phv, sm.instance_type, itype as Val);
        p.set_opt(&mut pkt.phv, sm.packet_length, data.len() as Val);
        p.set_opt(&mut pkt.phv, sm.ingress_global_timestamp, now as Val);
        for &(f, v) in keep {
            pkt.phv.vals[f as usize] = v;
        }
        pkt.len = data.len();
        self.st.now_us = now;
        let compiled = (self.jit.as_ref()).and_then(|j| j.parse(p, &mut self.st, &mut pkt, data));
        let start = match compiled {
            Some(start) => start,
            None => exec::parse(p, &mut self.st, &mut pkt, data),
        };
        match input {
            Input::Borrowed(data) => pkt.set_frame(data, start),
            Input::Owned(frame) => {
                // The packet takes the buffer; the spare one it had goes back.
                let spare = std::mem::replace(&mut pkt.frame, frame);
                pkt.payload_at = start;
                if spare.capacity() > 0 && self.spare_bufs.len() < SPARE_BUFFERS {
                    self.spare_bufs.push(spare);
                }
            }
        }
        match &self.jit {
            Some(j) => j.run(Pipeline::Verify, p, &mut self.st, &mut pkt),
            None => exec::verify_checksums(p, &mut self.st, &mut pkt),
        }
        pkt
    }

    fn ingress(
        &mut self,
        port: u32,
        input: Input<'_>,
        itype: u32,
        keep: &[(u32, u128)],
        lineage: Lineage,
        now: u64,
    ) {
        let Lineage { loops, budget } = lineage;
        let mut pkt = self.parsed(port, input, itype, keep, now);
        match &self.jit {
            Some(j) => j.run(Pipeline::Ingress, &self.prog, &mut self.st, &mut pkt),
            None => exec::run_control(&self.prog, &mut self.st, &mut pkt, self.prog.ingress),
        }
        let p = &self.prog;
        for &(recv, list) in &pkt.flags.digests {
            let ll = &p.learn_lists[&(list as u64)];
            self.st.digests.push(Digest {
                list_id: list,
                list_name: ll.name.clone(),
                receiver: recv,
                values: ll
                    .fields
                    .iter()
                    .map(|&f| pkt.phv.vals[f as usize])
                    .collect(),
                time_us: now,
            });
        }
        if pkt.flags.assert_failed {
            self.stats.assert_drops += 1;
            self.put_pkt(pkt);
            return;
        }
        let grp = self.prog.get_opt(&pkt.phv, self.prog.sm.mcast_grp) as u32;
        // A packet that makes no copies keeps its budget: the shares are
        // computed only where copies are made (a cold call, off the
        // forwarding path).
        let child = if pkt.flags.clone.is_none() && pkt.flags.resubmit.is_none() && grp == 0 {
            Some(budget)
        } else {
            self.ingress_share(&pkt, grp, budget)
        };
        if let Some((session, fl)) = pkt.flags.clone {
            let keep = self.capture(&pkt, fl);
            match (self.clone_sessions.get(&session).cloned(), child) {
                (Some(s), Some(b)) => {
                    // The frame as it came in (ingress does not change it).
                    let data = pkt.frame.clone();
                    for r in &s.replicas {
                        let input = Input::Borrowed(&data);
                        let mut c =
                            self.parsed(port, input, instance_type::INGRESS_CLONE, &keep, now);
                        let p = &self.prog;
                        p.set_opt(&mut c.phv, p.sm.egress_rid, r.rid as Val);
                        c.flags.truncate = s.truncate;
                        self.enqueue(r.port, c, now, loops, b);
                    }
                }
                (Some(s), None) => self.stats.loop_drops += s.replicas.len() as u64,
                (None, _) => self.stats.no_target_drops += 1,
            }
        }
        if let Some(fl) = pkt.flags.resubmit {
            let keep = self.capture(&pkt, fl);
            // The frame as it came in goes round again.
            let data = std::mem::take(&mut pkt.frame);
            self.put_pkt(pkt);
            let Some(b) = child.filter(|_| loops + 1 < MAX_LOOPS) else {
                self.stats.loop_drops += 1;
                return;
            };
            let next = Lineage {
                loops: loops + 1,
                budget: b,
            };
            self.ingress(
                port,
                Input::Owned(data),
                instance_type::RESUBMIT,
                &keep,
                next,
                now,
            );
            return;
        }
        let p = &self.prog;
        if grp != 0 {
            match self.mc_groups.get(&grp).cloned() {
                Some(reps) if child.is_none() => self.stats.loop_drops += reps.len() as u64,
                Some(reps) => {
                    for r in reps {
                        let mut c = self.get_pkt();
                        c.phv.copy_from(&pkt.phv);
                        c.set_frame(pkt.payload(), 0);
                        c.len = pkt.len;
                        let p = &self.prog;
                        p.set_opt(&mut c.phv, p.sm.egress_rid, r.rid as Val);
                        p.set_opt(
                            &mut c.phv,
                            p.sm.instance_type,
                            instance_type::REPLICATION as Val,
                        );
                        c.flags.truncate = pkt.flags.truncate;
                        self.enqueue(r.port, c, now, loops, child.unwrap_or(0));
                    }
                }
                None => self.stats.no_target_drops += 1,
            }
            self.put_pkt(pkt);
            return;
        }
        let spec = p.get_opt(&pkt.phv, p.sm.egress_spec) as u32;
        if spec == DROP_PORT {
            self.stats.ingress_drops += 1;
            self.put_pkt(pkt);
            return;
        }
        pkt.flags.clone = None;
        pkt.flags.digests.clear();
        self.enqueue(spec, pkt, now, loops, child.unwrap_or(budget));
    }

    /// The budget of each packet made from `pkt` at the end of ingress:
    /// clones, then a resubmit, multicast copies or itself share `budget`.
    #[cold]
    #[inline(never)]
    fn ingress_share(&self, pkt: &Pkt, grp: u32, budget: u32) -> Option<u32> {
        let clones = self.clone_count(pkt);
        let copies = match pkt.flags.resubmit {
            Some(_) => 1,
            None if grp != 0 => self.mc_groups.get(&grp).map_or(0, |g| g.len()),
            None => 0,
        };
        let itself = (pkt.flags.resubmit.is_none() && grp == 0) as usize;
        share(budget, clones + copies, clones + copies + itself)
    }

    /// The budget of each clone and recirculation made from `pkt` at the end
    /// of egress.
    #[cold]
    #[inline(never)]
    fn egress_share(&self, pkt: &Pkt, budget: u32) -> Option<u32> {
        let new = self.clone_count(pkt) + pkt.flags.recirculate.is_some() as usize;
        share(budget, new, new)
    }

    /// Replicas of the clone session `pkt` asks for (0 without one).
    fn clone_count(&self, pkt: &Pkt) -> usize {
        pkt.flags
            .clone
            .and_then(|(s, _)| self.clone_sessions.get(&s))
            .map_or(0, |s| s.replicas.len())
    }

    fn enqueue(&mut self, port: u32, mut pkt: Box<Pkt>, now: u64, loops: u32, budget: u32) {
        let Some(pt) = self.ports.get_mut(port as usize) else {
            self.stats.bad_port_drops += 1;
            self.put_pkt(pkt);
            return;
        };
        let prio = self.prog.get_opt(&pkt.phv, self.prog.sm.priority).max(0) as usize;
        let qi = prio.min(pt.qs.len() - 1);
        let was_empty = pt.qs.iter().all(|q| q.is_empty());
        let q = &mut pt.qs[qi];
        if q.len() >= pt.depth {
            pt.stats.queue_drops += 1;
            self.put_pkt(pkt);
            return;
        }
        pkt.flags.clone = None;
        pkt.flags.resubmit = None;
        pkt.flags.recirculate = None;
        let enq_depth = q.len() as u32;
        q.push_back(Queued {
            pkt,
            enq_time: now,
            enq_depth,
            loops,
            budget,
        });
        if was_empty {
            self.active.push(port);
        }
    }

    fn dequeue(&mut self, port: u32, t: u64) {
        let pt = &mut self.ports[port as usize];
        // Strict priority among the packets that have arrived by `t`.
        let Some(qi) = (0..pt.qs.len())
            .rev()
            .find(|&i| pt.qs[i].front().is_some_and(|h| h.enq_time <= t))
        else {
            return;
        };
        let Some(q) = pt.qs[qi].pop_front() else {
            return;
        };
        let deq_depth = pt.qs[qi].len() as u32;
        if pt.qs.iter().all(|q| q.is_empty()) {
            self.active.retain(|&x| x != port);
        }
        let mut pkt = q.pkt;
        let p = &self.prog;
        let sm = &p.sm;
        p.set_opt(&mut pkt.phv, sm.egress_port, port as Val);
        p.set_opt(&mut pkt.phv, sm.enq_timestamp, q.enq_time as Val);
        p.set_opt(&mut pkt.phv, sm.enq_qdepth, q.enq_depth as Val);
        p.set_opt(&mut pkt.phv, sm.deq_timedelta, (t - q.enq_time) as Val);
        p.set_opt(&mut pkt.phv, sm.deq_qdepth, deq_depth as Val);
        p.set_opt(&mut pkt.phv, sm.egress_global_timestamp, t as Val);
        self.st.now_us = t;
        let session_trunc = pkt.flags.truncate;
        match &self.jit {
            Some(j) => j.run(Pipeline::Egress, p, &mut self.st, &mut pkt),
            None => exec::run_control(p, &mut self.st, &mut pkt, p.egress),
        }
        if pkt.flags.assert_failed {
            self.stats.assert_drops += 1;
            self.put_pkt(pkt);
            return;
        }
        // Clones and a recirculation share this packet's budget (None, and
        // not computed, when there are none: nothing reads it then).
        let child = if pkt.flags.clone.is_none() && pkt.flags.recirculate.is_none() {
            None
        } else {
            self.egress_share(&pkt, q.budget)
        };
        if let Some((session, fl)) = pkt.flags.clone {
            let keep = self.capture(&pkt, fl);
            match (self.clone_sessions.get(&session).cloned(), child) {
                (Some(s), None) => self.stats.loop_drops += s.replicas.len() as u64,
                (Some(s), Some(b)) => {
                    for r in &s.replicas {
                        let mut c = self.get_pkt();
                        // Headers as egress left them; metadata reset except
                        // the preserved fields.
                        c.phv.copy_from(&pkt.phv);
                        for hi in self.prog.headers.iter().filter(|h| h.metadata) {
                            let a = hi.first_field as usize;
                            c.phv.vals[a..a + hi.nfields as usize].fill(0);
                        }
                        for &(f, v) in &keep {
                            c.phv.vals[f as usize] = v;
                        }
                        c.set_frame(pkt.payload(), 0);
                        c.len = pkt.len;
                        let p = &self.prog;
                        p.set_opt(
                            &mut c.phv,
                            p.sm.instance_type,
                            instance_type::EGRESS_CLONE as Val,
                        );
                        p.set_opt(&mut c.phv, p.sm.egress_rid, r.rid as Val);
                        p.set_opt(&mut c.phv, p.sm.packet_length, pkt.len as Val);
                        c.flags.truncate = s.truncate;
                        self.enqueue(r.port, c, t, q.loops, b);
                    }
                }
                (None, _) => self.stats.no_target_drops += 1,
            }
        }
        let p = &self.prog;
        if p.get_opt(&pkt.phv, p.sm.egress_spec) as u32 == DROP_PORT {
            self.stats.egress_drops += 1;
            self.put_pkt(pkt);
            return;
        }
        match &self.jit {
            Some(j) => j.run(Pipeline::Update, p, &mut self.st, &mut pkt),
            None => exec::update_checksums(p, &mut self.st, &mut pkt),
        }
        let mut buf = self.spare_bufs.pop().unwrap_or_default();
        let compiled = match &self.jit {
            Some(j) => j.deparse(p, &mut self.st, &mut pkt, &mut buf),
            None => false,
        };
        if !compiled {
            exec::deparse(p, &pkt, &mut buf);
        }
        if let Some(fl) = pkt.flags.recirculate {
            let keep = self.capture(&pkt, fl);
            let in_port = p.get_opt(&pkt.phv, p.sm.ingress_port) as u32;
            self.put_pkt(pkt);
            match child.filter(|_| q.loops + 1 < MAX_LOOPS) {
                Some(b) => {
                    let next = Lineage {
                        loops: q.loops + 1,
                        budget: b,
                    };
                    let input = Input::Borrowed(&buf);
                    self.ingress(in_port, input, instance_type::RECIRC, &keep, next, t);
                }
                None => self.stats.loop_drops += 1,
            }
            self.spare_bufs.push(buf);
            return;
        }
        let trunc = match (pkt.flags.truncate, session_trunc) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        if let Some(n) = trunc {
            buf.truncate(n);
        }
        self.put_pkt(pkt);
        let pt = &mut self.ports[port as usize];
        if pt.mtu > 0 && buf.len() > pt.mtu {
            pt.stats.mtu_drops += 1;
            self.spare_bufs.push(buf);
            return;
        }
        let tx_done = match &mut pt.trace {
            // Delivered at the trace's opportunity that carries its last IP byte.
            Some((cursor, start)) => {
                cursor.deliver_frame(t.saturating_sub(*start), buf.len()) + *start
            }
            None => t.saturating_add(pt.rate.tx_time_us(buf.len())),
        };
        pt.next_free = tx_done;
        pt.stats.tx_packets += 1;
        pt.stats.tx_bytes += buf.len() as u64;
        if pt.delay == 0 && pt.jitter == 0 && pt.line.is_empty() && pt.trace.is_none() {
            self.out.push(Frame {
                port,
                data: buf,
                time_us: t,
                emit_us: t,
            });
            return;
        }
        // A trace port holds each frame until its delivery: the daemon
        // sends it then, and the simulator puts its last bit on the wire then.
        let arrives = if pt.delay == 0 && pt.jitter == 0 && pt.trace.is_none() {
            t
        } else {
            // One 64-bit draw per frame (range() takes two for 128 bits).
            let extra = pt.jitter_rng.next_u64() % (pt.jitter + 1);
            tx_done.saturating_add(pt.delay).saturating_add(extra)
        };
        // Never before the frame ahead: jitter, or a delay lowered (or
        // removed) at run time, must not reorder the link.
        let emit_us = pt.line.back().map_or(arrives, |b| arrives.max(b.emit_us));
        if pt.line.is_empty() {
            self.delayed.push(port);
        }
        pt.line.push_back(Frame {
            port,
            data: buf,
            time_us: t,
            emit_us,
        });
    }
}
