//! ratelab's switch data plane: one thread that owns the AF_PACKET sockets of
//! the switch ports and drives the engine.
//!
//! Each turn the thread sleeps in `ppoll` (unless a receive ring already
//! holds frames) until a port is readable, a wake-up (an injected packet, a
//! stop request) arrives, or the traffic manager's next departure time comes;
//! then it reads every ready port in batches (from its PACKET_MMAP receive
//! ring, or with `recvmmsg` where the kernel gives no ring), feeds the frames
//! and injected packets to the engine stamped with CLOCK_MONOTONIC
//! microseconds under one lock of the engine's mutex (control operations take
//! the same mutex between turns), and sends what comes out in batches
//! (through each port's PACKET_MMAP transmit ring, or `sendmmsg`). Frames
//! leaving on the CPU port and digests are queued as [`Event`]s for the
//! controller, which drains them with [`Dataplane::next_events`]. The engine
//! itself never reads a clock.

pub(crate) mod files;
pub mod pcap;
pub mod port;
pub(crate) mod ring;
pub(crate) mod tx_ring;

use std::collections::VecDeque;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::Duration;

pub use engine;
use engine::Frame;
use pcap::PcapWriter;
use port::Port;

/// The engine as the data plane and the control plane share it.
pub type Engine = Arc<Mutex<engine::Switch>>;

/// Port numbers are below this (BMv2's 512; 511 is the drop port).
const MAX_PORTS: usize = 512;
/// Controller events kept when nobody drains them; more are dropped, counted.
const MAX_EVENTS: usize = 65536;
const NO_PORT: u16 = u16::MAX;

/// Something for the controller.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// A frame the pipeline sent to the CPU port.
    PacketIn(Vec<u8>),
    /// A digest (learn list name, field values).
    Digest(String, Vec<u128>),
    /// A port problem worth a log line (the loop goes on).
    Warning(String),
    /// The loop died (a bug); it no longer moves packets.
    Fatal(String),
}

/// One port to attach: switch port number and interface name.
#[derive(Debug, Clone)]
pub struct PortSpec {
    pub number: u32,
    pub iface: String,
}

#[derive(Debug, Clone, Default)]
pub struct Config {
    pub ports: Vec<PortSpec>,
    /// Frames the pipeline sends here become [`Event::PacketIn`].
    pub cpu_port: Option<u32>,
    /// `<iface>_in.pcap` / `<iface>_out.pcap` per port are written here.
    pub pcap_dir: Option<PathBuf>,
    /// `--use-files WAIT`: the ports are pcap files, not interfaces (see
    /// `files.rs`); their input is read after this wait.
    pub use_files: Option<Duration>,
}

/// Counters of one port, as the loop sees it (the engine keeps its own).
#[derive(Debug, Default)]
pub struct PortCounters {
    pub rx_packets: AtomicU64,
    pub tx_packets: AtomicU64,
    /// Frames the kernel refused (interface down or gone, buffer full).
    pub tx_errors: AtomicU64,
    /// Frames larger than the interface's MTU (+ Ethernet header, + 4 for a
    /// VLAN tag): never sent. Also received frames too large to read whole.
    pub mtu_drops: AtomicU64,
    /// Frames the kernel dropped before the loop read them (receive ring or
    /// socket buffer full: the switch was too slow), read every
    /// [`PORT_CHECK_EVERY_US`] and when the loop ends.
    pub rx_drops: AtomicU64,
}

/// How often (µs) the loop reads the kernel's receive drop counts and the
/// interfaces' MTUs.
pub const PORT_CHECK_EVERY_US: u64 = 10_000;

#[derive(Debug, Default, Clone, PartialEq)]
pub struct PortStats {
    pub number: u32,
    pub iface: String,
    pub rx_packets: u64,
    pub tx_packets: u64,
    pub tx_errors: u64,
    pub mtu_drops: u64,
    pub rx_drops: u64,
}

#[derive(Debug, Default, Clone, PartialEq)]
pub struct Stats {
    pub ports: Vec<PortStats>,
    /// Frames to a port with no interface (and not the CPU port).
    pub unknown_port_drops: u64,
    /// Events dropped because the controller queue was full.
    pub event_drops: u64,
    /// Wake-ups of the loop (frames per turn = batching achieved).
    pub turns: u64,
}

struct EventQueue {
    q: VecDeque<Event>,
    closed: bool,
}

struct Shared {
    engine: Mutex<Option<Engine>>,
    injected: Mutex<Vec<(u32, Vec<u8>)>>,
    stop: AtomicBool,
    wake: OwnedFd,
    events: Mutex<EventQueue>,
    events_cv: Condvar,
    ports: Vec<(PortSpec, PortCounters)>,
    unknown_port_drops: AtomicU64,
    event_drops: AtomicU64,
    turns: AtomicU64,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic while holding a lock leaves the data as it was; keep going.
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Routes the engine's `frames`: one for a data port goes to `to_port` with
/// the port's index in `Shared::ports`, one for the CPU port becomes a
/// PacketIn in `events`, the rest count as unknown-port drops. Shared by the
/// socket and the pcap-file workers.
fn route_frames(
    frames: &mut Vec<Frame>,
    index: &[u16],
    cpu_port: Option<u32>,
    shared: &Shared,
    events: &mut Vec<Event>,
    mut to_port: impl FnMut(usize, Frame),
) {
    let mut unknown = 0;
    for f in frames.drain(..) {
        let i = index.get(f.port as usize).copied().unwrap_or(NO_PORT);
        if i != NO_PORT {
            to_port(i as usize, f);
        } else if Some(f.port) == cpu_port {
            events.push(Event::PacketIn(f.data));
        } else {
            unknown += 1;
        }
    }
    if unknown > 0 {
        shared.unknown_port_drops.fetch_add(unknown, Relaxed);
    }
}

impl Shared {
    fn wake(&self) {
        let one: u64 = 1;
        // SAFETY: writes 8 bytes from a live u64 to our eventfd. It can only
        // fail if the counter would overflow, when a wake-up is pending anyway.
        unsafe { libc::write(self.wake.as_raw_fd(), (&one as *const u64).cast(), 8) };
    }

    fn push_events(&self, events: impl IntoIterator<Item = Event>) {
        let mut q = lock(&self.events);
        let before = q.q.len();
        for e in events {
            if q.q.len() < MAX_EVENTS {
                q.q.push_back(e);
            } else {
                self.event_drops.fetch_add(1, Relaxed);
            }
        }
        if q.q.len() > before {
            self.events_cv.notify_all();
        }
    }
}

/// CLOCK_MONOTONIC in microseconds (Python's `time.monotonic_ns() // 1000`).
pub fn now_us() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid timespec; CLOCK_MONOTONIC always exists.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000 + ts.tv_nsec as u64 / 1000
}

/// See [`Dataplane::events_handle`].
pub struct Events {
    shared: Arc<Shared>,
}

impl Events {
    /// See [`Dataplane::next_events`].
    pub fn next_events(&self, timeout: Duration) -> Option<Vec<Event>> {
        let mut q = lock(&self.shared.events);
        if q.q.is_empty() && !q.closed {
            q = self
                .shared
                .events_cv
                .wait_timeout(q, timeout)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
        if q.q.is_empty() && q.closed {
            return None;
        }
        Some(q.q.drain(..).collect())
    }
}

/// The running data plane. Dropping it stops the thread and closes the ports.
pub struct Dataplane {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

impl Dataplane {
    /// Opens the ports (an error names the interface) and starts the thread.
    /// Until an engine is set, frames are dropped, as on a switch without a program.
    pub fn start(config: Config, engine: Option<Engine>) -> io::Result<Dataplane> {
        let mut file_ports = Vec::new();
        if config.use_files.is_some() {
            if config.pcap_dir.is_some() {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    "pcap capture and pcap-file ports cannot be combined",
                ));
            }
            for spec in &config.ports {
                file_ports.push(files::FilePort::open(spec)?);
            }
        }
        let mut ports = Vec::new();
        for spec in config.ports.iter().filter(|_| config.use_files.is_none()) {
            let port = Port::open(&spec.iface).map_err(|e| {
                io::Error::new(
                    e.kind(),
                    format!("cannot open interface {:?}: {e}", spec.iface),
                )
            })?;
            let pcap = match &config.pcap_dir {
                None => None,
                Some(dir) => {
                    let open = |dir_name: &str| {
                        PcapWriter::create(&dir.join(format!("{}_{dir_name}.pcap", spec.iface)))
                    };
                    Some((open("in")?, open("out")?))
                }
            };
            ports.push((port, pcap));
        }
        // SAFETY: plain eventfd creation; the descriptor is owned below.
        let wake = unsafe { libc::eventfd(0, libc::EFD_NONBLOCK | libc::EFD_CLOEXEC) };
        if wake < 0 {
            return Err(io::Error::last_os_error());
        }
        let shared = Arc::new(Shared {
            engine: Mutex::new(engine),
            injected: Mutex::new(Vec::new()),
            stop: AtomicBool::new(false),
            // SAFETY: `wake` is a fresh descriptor nothing else owns.
            wake: unsafe { OwnedFd::from_raw_fd(wake) },
            events: Mutex::new(EventQueue {
                q: VecDeque::new(),
                closed: false,
            }),
            events_cv: Condvar::new(),
            ports: config
                .ports
                .iter()
                .map(|s| (s.clone(), PortCounters::default()))
                .collect(),
            unknown_port_drops: AtomicU64::new(0),
            event_drops: AtomicU64::new(0),
            turns: AtomicU64::new(0),
        });
        // Say which ports fell back to recvmmsg or sendmmsg (slower under
        // load), so a researcher comparing runs knows.
        shared.push_events(
            config
                .ports
                .iter()
                .zip(&ports)
                .flat_map(|(spec, (port, _))| {
                    let warn = |what: &str| {
                        Event::Warning(format!("port {} ({}): {what}", spec.number, spec.iface))
                    };
                    let rx = (!port.has_ring())
                        .then(|| warn("no receive ring; reading it with recvmmsg"));
                    let tx = (!port.has_tx_ring())
                        .then(|| warn("no transmit ring; writing it with sendmmsg"));
                    rx.into_iter().chain(tx)
                }),
        );
        let mut run: Box<dyn FnMut() + Send> = match config.use_files {
            Some(wait) => {
                let mut w =
                    files::FileWorker::new(shared.clone(), file_ports, config.cpu_port, wait);
                Box::new(move || w.run())
            }
            None => {
                let mut w = Worker::new(shared.clone(), ports, config.cpu_port);
                Box::new(move || w.run())
            }
        };
        let s = shared.clone();
        let thread = std::thread::Builder::new()
            .name("dataplane".into())
            .spawn(move || {
                let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(&mut run));
                if let Err(p) = r {
                    let msg = p
                        .downcast_ref::<&str>()
                        .map(|s| s.to_string())
                        .or_else(|| p.downcast_ref::<String>().cloned())
                        .unwrap_or_else(|| "panic".into());
                    s.push_events([Event::Fatal(format!("packet loop failed: {msg}"))]);
                }
                let mut q = lock(&s.events);
                q.closed = true;
                s.events_cv.notify_all();
            })?;
        Ok(Dataplane {
            shared,
            thread: Some(thread),
        })
    }

    /// Sets (or clears) the engine the loop feeds; takes effect on the next turn.
    pub fn set_engine(&self, engine: Option<Engine>) {
        *lock(&self.shared.engine) = engine;
        self.shared.wake();
    }

    /// Has `data` arrive on `port` on the loop's next turn (PacketOut).
    pub fn inject(&self, port: u32, data: Vec<u8>) {
        lock(&self.shared.injected).push((port, data));
        self.shared.wake();
    }

    /// Waits up to `timeout` for controller events and returns all there
    /// are; None once the loop has ended and every event was taken.
    pub fn next_events(&self, timeout: Duration) -> Option<Vec<Event>> {
        self.events_handle().next_events(timeout)
    }

    /// The controller's end of the event queue, usable without the Dataplane
    /// (a thread blocked on it must not keep `stop` from running).
    pub fn events_handle(&self) -> Events {
        Events {
            shared: self.shared.clone(),
        }
    }

    pub fn stats(&self) -> Stats {
        Stats {
            ports: self
                .shared
                .ports
                .iter()
                .map(|(spec, c)| PortStats {
                    number: spec.number,
                    iface: spec.iface.clone(),
                    rx_packets: c.rx_packets.load(Relaxed),
                    tx_packets: c.tx_packets.load(Relaxed),
                    tx_errors: c.tx_errors.load(Relaxed),
                    mtu_drops: c.mtu_drops.load(Relaxed),
                    rx_drops: c.rx_drops.load(Relaxed),
                })
                .collect(),
            unknown_port_drops: self.shared.unknown_port_drops.load(Relaxed),
            event_drops: self.shared.event_drops.load(Relaxed),
            turns: self.shared.turns.load(Relaxed),
        }
    }

    /// Stops the thread and closes the ports (and capture files). Idempotent.
    pub fn stop(&mut self) {
        self.shared.stop.store(true, Relaxed);
        self.shared.wake();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }

    pub fn is_running(&self) -> bool {
        self.thread.as_ref().is_some_and(|t| !t.is_finished())
    }
}

impl Drop for Dataplane {
    fn drop(&mut self) {
        self.stop();
    }
}

/// A port as the thread holds it.
struct PortIo {
    number: u32,
    iface: String,
    port: Port,
    pcap: Option<(PcapWriter, PcapWriter)>,
    /// False once its interface is gone: no longer read; sends count as errors.
    alive: bool,
    /// Frames read this turn.
    received: usize,
    /// Frames the engine sent here this turn.
    tx: Vec<Frame>,
    /// Indices in `tx` the kernel refused.
    failed: Vec<usize>,
}

struct Worker {
    shared: Arc<Shared>,
    ports: Vec<PortIo>,
    /// Port number -> index in `ports`.
    index: Vec<u16>,
    cpu_port: Option<u32>,
    pollfds: Vec<libc::pollfd>,
    frames: Vec<Frame>,
    injected: Vec<(u32, Vec<u8>)>,
    scratch: Vec<u8>,
    /// Buffers of the frames sent last turn, for the engine to reuse.
    spent: Vec<Vec<u8>>,
    /// When the kernel's drop counts and the MTUs were last read (µs).
    checked_us: u64,
}

impl Worker {
    fn new(
        shared: Arc<Shared>,
        ports: Vec<(Port, Option<(PcapWriter, PcapWriter)>)>,
        cpu_port: Option<u32>,
    ) -> Worker {
        let mut index = vec![NO_PORT; MAX_PORTS];
        let ports: Vec<PortIo> = ports
            .into_iter()
            .zip(&shared.ports)
            .enumerate()
            .map(|(i, ((port, pcap), (spec, _)))| {
                if let Some(slot) = index.get_mut(spec.number as usize) {
                    *slot = i as u16;
                }
                PortIo {
                    number: spec.number,
                    iface: spec.iface.clone(),
                    port,
                    pcap,
                    alive: true,
                    received: 0,
                    tx: Vec::new(),
                    failed: Vec::new(),
                }
            })
            .collect();
        let mut pollfds = vec![libc::pollfd {
            fd: shared.wake.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        }];
        pollfds.extend(ports.iter().map(|p| libc::pollfd {
            fd: p.port.fd(),
            events: libc::POLLIN,
            revents: 0,
        }));
        Worker {
            shared,
            ports,
            index,
            cpu_port,
            pollfds,
            frames: Vec::with_capacity(256),
            injected: Vec::new(),
            scratch: Vec::new(),
            spent: Vec::new(),
            checked_us: 0,
        }
    }

    fn run(&mut self) {
        while !self.shared.stop.load(Relaxed) {
            self.turn();
        }
        self.read_kernel_drops();
    }

    /// Every [`PORT_CHECK_EVERY_US`] (system calls per port, so not every
    /// turn): the kernel's drop counts, and the interfaces' MTUs, which
    /// `ip link set IFACE mtu N` may change while the switch runs (frames
    /// over the new MTU are dropped and counted from then on).
    fn check_ports(&mut self, now: u64) {
        if now.saturating_sub(self.checked_us) < PORT_CHECK_EVERY_US {
            return;
        }
        self.checked_us = now;
        self.read_kernel_drops();
        for p in self.ports.iter_mut().filter(|p| p.alive) {
            p.port.refresh_mtu();
        }
    }

    fn read_kernel_drops(&self) {
        for (i, p) in self.ports.iter().enumerate() {
            if let (true, Ok(n)) = (p.alive, p.port.kernel_drops()) {
                self.shared.ports[i].1.rx_drops.fetch_add(n, Relaxed);
            }
        }
    }

    fn engine(&self) -> Option<Engine> {
        lock(&self.shared.engine).clone()
    }

    fn turn(&mut self) {
        let engine = self.engine();
        let due = engine.as_ref().and_then(|e| lock(e).next_event_time());
        self.wait(due);
        self.shared.turns.fetch_add(1, Relaxed);
        let now = now_us();
        // After the wait, which may have been long: what this turn sends is
        // checked against the MTUs of now.
        self.check_ports(now);
        if self.pollfds[0].revents != 0 {
            let mut v = 0u64;
            // SAFETY: reads 8 bytes into a live u64 (resets the eventfd counter).
            unsafe { libc::read(self.shared.wake.as_raw_fd(), (&mut v as *mut u64).cast(), 8) };
        }
        std::mem::swap(&mut self.injected, &mut lock(&self.shared.injected));
        let mut warnings = Vec::new();
        // Read every ready port before taking the engine lock.
        for i in 0..self.ports.len() {
            self.ports[i].received = 0;
            if self.pollfds[i + 1].revents == 0 {
                continue;
            }
            let p = &mut self.ports[i];
            match p.port.recv() {
                Ok(n) => p.received = n,
                Err(e) => {
                    // ENETDOWN comes once when the link goes down and when the
                    // interface is removed; only a removed one leaves the loop.
                    if e.raw_os_error() != Some(libc::ENETDOWN) || port::if_index(&p.iface).is_err()
                    {
                        warnings.push(Event::Warning(format!(
                            "port {} ({}): {e}; no longer read",
                            p.number, p.iface
                        )));
                        p.alive = false;
                        self.pollfds[i + 1].fd = -1;
                    }
                }
            }
        }
        // The program may have been loaded while we slept.
        let engine = self.engine();
        let mut sw = engine.as_ref().map(|e| lock(e));
        for (i, p) in self.ports.iter_mut().enumerate() {
            let counters = &self.shared.ports[i].1;
            counters.rx_packets.fetch_add(p.received as u64, Relaxed);
            for k in 0..p.received {
                let Some(frame) = p.port.frame(k, &mut self.scratch) else {
                    counters.mtu_drops.fetch_add(1, Relaxed);
                    continue;
                };
                if let Some((pin, _)) = &mut p.pcap {
                    let _ = pin.write(frame, now);
                }
                if let Some(sw) = &mut sw {
                    sw.inject(p.number, frame, now);
                }
            }
            p.port.release();
        }
        match &mut sw {
            // Saves the engine an allocation per frame.
            Some(sw) => self.spent.drain(..).for_each(|d| sw.recycle(d)),
            None => self.spent.clear(),
        }
        if let Some(sw) = &mut sw {
            for (port, data) in &self.injected {
                sw.inject(*port, data, now);
            }
            sw.poll_into(now, &mut self.frames);
            let digests = sw.take_digests();
            if !digests.is_empty() {
                warnings.extend(
                    digests
                        .into_iter()
                        .map(|d| Event::Digest(d.list_name, d.values)),
                );
            }
        }
        drop(sw);
        self.injected.clear();
        self.dispatch(warnings);
    }

    /// Sleeps until a descriptor is ready or `due` (µs) comes.
    fn wait(&mut self, due: Option<u64>) {
        let ts = due.map(|d| {
            let us = d.saturating_sub(now_us());
            libc::timespec {
                tv_sec: (us / 1_000_000) as libc::time_t,
                tv_nsec: ((us % 1_000_000) * 1000) as libc::c_long,
            }
        });
        let mut tsp = ts.as_ref().map_or(std::ptr::null(), |t| t as *const _);
        for p in &mut self.pollfds {
            p.revents = 0;
        }
        // Frames already in a receive ring: no need to sleep, nor (when every
        // port has a ring) to ask the kernel. Under load this saves a system
        // call per turn; a wake-up or an error is seen by the next ppoll, once
        // the rings run dry.
        let (mut ready, mut all_rings) = (false, true);
        for (i, p) in self.ports.iter().enumerate() {
            if !p.alive {
                continue;
            }
            if p.port.ready() {
                self.pollfds[i + 1].revents = libc::POLLIN;
                ready = true;
            } else if !p.port.has_ring() {
                all_rings = false;
            }
        }
        let zero = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        if ready {
            if all_rings {
                return;
            }
            tsp = &zero;
        }
        // SAFETY: `pollfds` is a valid array of its length; `tsp` is null or
        // points at `ts` or `zero`, alive for the call.
        let r = unsafe {
            libc::ppoll(
                self.pollfds.as_mut_ptr(),
                self.pollfds.len() as libc::nfds_t,
                tsp,
                std::ptr::null(),
            )
        };
        if r < 0 {
            // EINTR: go round again; nothing else is expected of ppoll here.
            for p in &mut self.pollfds {
                p.revents = 0;
            }
        }
        if ready {
            for (i, p) in self.ports.iter().enumerate() {
                if p.alive && p.port.ready() {
                    self.pollfds[i + 1].revents |= libc::POLLIN;
                }
            }
        }
    }

    /// Sends the engine's frames out of their ports; controller-bound ones
    /// (and `events`) go to the event queue.
    fn dispatch(&mut self, mut events: Vec<Event>) {
        let ports = &mut self.ports;
        route_frames(
            &mut self.frames,
            &self.index,
            self.cpu_port,
            &self.shared,
            &mut events,
            |i, f| ports[i].tx.push(f),
        );
        for (i, p) in self.ports.iter_mut().enumerate() {
            if p.tx.is_empty() {
                if let Some((pin, _)) = &mut p.pcap {
                    let _ = pin.flush();
                }
                continue;
            }
            let counters = &self.shared.ports[i].1;
            let limit = p.port.mtu + 14;
            let before = p.tx.len();
            p.tx.retain(|f| f.data.len() <= limit + if port::is_tagged(&f.data) { 4 } else { 0 });
            let oversize = before - p.tx.len();
            if oversize > 0 {
                counters.mtu_drops.fetch_add(oversize as u64, Relaxed);
            }
            p.failed.clear();
            if p.alive {
                p.port.send(&p.tx, |f| &f.data, &mut p.failed);
            } else {
                p.failed.extend(0..p.tx.len());
            }
            let errors = p.failed.len();
            counters.tx_errors.fetch_add(errors as u64, Relaxed);
            counters
                .tx_packets
                .fetch_add((p.tx.len() - errors) as u64, Relaxed);
            if let Some((pin, pout)) = &mut p.pcap {
                let mut failed = p.failed.iter().peekable();
                for (k, f) in p.tx.iter().enumerate() {
                    if failed.next_if_eq(&&k).is_none() {
                        // When it left (after a link delay, if the port has one).
                        let _ = pout.write(&f.data, f.emit_us);
                    }
                }
                let _ = pin.flush();
                let _ = pout.flush();
            }
            self.spent.extend(p.tx.drain(..).map(|f| f.data));
        }
        if !events.is_empty() {
            self.shared.push_events(events);
        }
    }
}
