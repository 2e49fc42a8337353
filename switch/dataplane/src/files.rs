//! Ports backed by pcap files (`--use-files WAIT`, as BMv2 has it): port
//! `N@NAME` reads the frames of `NAME_in.pcap` and writes what leaves on it
//! to `NAME_out.pcap`. Any frame goes through, shorter than an Ethernet
//! header included (no veth carries those).
//!
//! The thread waits WAIT seconds (the control plane fills tables
//! meanwhile), reads every input file and feeds their frames to the engine
//! in time-stamp order (ties in port order), as fast as the traffic manager
//! takes them: a frame enters the pipeline only once the queues of the file
//! ports (and the CPU port) are empty, so a rate-limited port paces the input
//! instead of dropping it (BMv2's queues block the same way). Input waits
//! while no program is loaded. Once the files are drained the loop goes on
//! serving PacketOuts and the queues' departures, as a socket port would.

use crate::pcap::{read_records, PcapWriter};
use crate::{lock, now_us, route_frames, Event, PortSpec, Shared, MAX_PORTS, NO_PORT};
use engine::Frame;
use std::collections::VecDeque;
use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::path::PathBuf;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Input frames fed to the engine per lock of its mutex, at most.
const BATCH: usize = 64;

/// The files of one port, opened when the data plane starts.
pub(crate) struct FilePort {
    number: u32,
    input_path: PathBuf,
    input: Option<File>,
    output: PcapWriter,
    written: bool,
}

impl FilePort {
    /// Opens `NAME_in.pcap` (it must exist, as for BMv2) and creates
    /// `NAME_out.pcap`; an error names the file.
    pub(crate) fn open(spec: &PortSpec) -> io::Result<FilePort> {
        let input_path = PathBuf::from(format!("{}_in.pcap", spec.iface));
        let output_path = PathBuf::from(format!("{}_out.pcap", spec.iface));
        let named = |path: &PathBuf, e: io::Error| {
            io::Error::new(e.kind(), format!("{}: {e}", path.display()))
        };
        let input = File::open(&input_path).map_err(|e| named(&input_path, e))?;
        let output = PcapWriter::create(&output_path).map_err(|e| named(&output_path, e))?;
        Ok(FilePort {
            number: spec.number,
            input_path,
            input: Some(input),
            output,
            written: false,
        })
    }
}

pub(crate) struct FileWorker {
    shared: Arc<Shared>,
    ports: Vec<FilePort>,
    /// Port number -> index in `ports`.
    index: Vec<u16>,
    cpu_port: Option<u32>,
    wait: Duration,
    /// Input frames not yet fed: (index in `ports`, bytes).
    pending: VecDeque<(usize, Vec<u8>)>,
    frames: Vec<Frame>,
    injected: Vec<(u32, Vec<u8>)>,
}

impl FileWorker {
    pub(crate) fn new(
        shared: Arc<Shared>,
        ports: Vec<FilePort>,
        cpu_port: Option<u32>,
        wait: Duration,
    ) -> FileWorker {
        let mut index = vec![NO_PORT; MAX_PORTS];
        for (i, p) in ports.iter().enumerate() {
            if let Some(slot) = index.get_mut(p.number as usize) {
                *slot = i as u16;
            }
        }
        FileWorker {
            shared,
            ports,
            index,
            cpu_port,
            wait,
            pending: VecDeque::new(),
            frames: Vec::new(),
            injected: Vec::new(),
        }
    }

    pub(crate) fn run(&mut self) {
        let start = now_us() + self.wait.as_micros() as u64;
        while now_us() < start {
            if self.shared.stop.load(Relaxed) {
                return;
            }
            // PacketOuts and a program may come during the wait.
            let due = self.turn(false);
            self.sleep(Some(due.map_or(start, |d| d.min(start))));
        }
        self.read_inputs();
        while !self.shared.stop.load(Relaxed) {
            let due = self.turn(true);
            self.sleep(due);
        }
    }

    /// Reads every input file into `pending`, merged by time stamp.
    fn read_inputs(&mut self) {
        let mut all = Vec::new();
        let mut warnings = Vec::new();
        for (i, p) in self.ports.iter_mut().enumerate() {
            let Some(mut file) = p.input.take() else {
                continue;
            };
            match read_records(&p.input_path, &mut file) {
                Ok(records) => all.extend(records.into_iter().map(|(t, d)| (t, i, d))),
                Err(e) => warnings.push(Event::Warning(format!(
                    "port {}: {e}; its input is not read",
                    p.number
                ))),
            }
        }
        // Stable: a file's own order is kept; equal stamps go in port order.
        all.sort_by_key(|&(t, i, _)| (t, i));
        self.pending = all.into_iter().map(|(_, i, d)| (i, d)).collect();
        self.shared.push_events(warnings);
    }

    /// True while a frame waits in the queue of a file port or the CPU port.
    fn busy(&self, sw: &engine::Switch) -> bool {
        (self.ports.iter().map(|p| p.number))
            .chain(self.cpu_port)
            .any(|port| sw.queue_len(port) > 0)
    }

    /// One turn: PacketOuts and (with `feed`) input frames into the engine,
    /// what it sends out to the files. Returns when to wake up next (`None`:
    /// only for a wake-up), `Some(0)` while input can go on at once.
    fn turn(&mut self, feed: bool) -> Option<u64> {
        self.shared.turns.fetch_add(1, Relaxed);
        let now = now_us();
        std::mem::swap(&mut self.injected, &mut lock(&self.shared.injected));
        let mut events = Vec::new();
        let engine = lock(&self.shared.engine).clone();
        let Some(engine) = engine else {
            // No program: PacketOuts are dropped (as on socket ports), input waits.
            self.injected.clear();
            return None;
        };
        let mut sw = lock(&engine);
        for (port, data) in self.injected.drain(..) {
            sw.inject(port, &data, now);
        }
        let mut fed = 0;
        loop {
            sw.poll_into(now, &mut self.frames);
            if !feed || fed == BATCH || self.pending.is_empty() || self.busy(&sw) {
                break;
            }
            let (i, data) = self.pending.pop_front().expect("not empty");
            self.shared.ports[i].1.rx_packets.fetch_add(1, Relaxed);
            sw.inject(self.ports[i].number, &data, now);
            fed += 1;
        }
        events.extend(
            sw.take_digests()
                .into_iter()
                .map(|d| Event::Digest(d.list_name, d.values)),
        );
        let can_feed = feed && !self.pending.is_empty() && !self.busy(&sw);
        let due = if can_feed {
            Some(0)
        } else {
            sw.next_event_time()
        };
        drop(sw);
        self.dispatch(events);
        due
    }

    /// Writes the engine's frames to their ports' files; controller-bound
    /// ones (and `events`) go to the event queue.
    fn dispatch(&mut self, mut events: Vec<Event>) {
        let wall = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_micros() as u64);
        let (ports, shared) = (&mut self.ports, &self.shared);
        route_frames(
            &mut self.frames,
            &self.index,
            self.cpu_port,
            &self.shared,
            &mut events,
            |i, f| {
                let p = &mut ports[i];
                let counters = &shared.ports[i].1;
                // Stamped with the wall clock when written, as BMv2 does.
                match p.output.write(&f.data, wall) {
                    Ok(()) => counters.tx_packets.fetch_add(1, Relaxed),
                    Err(_) => counters.tx_errors.fetch_add(1, Relaxed),
                };
                p.written = true;
            },
        );
        for (i, p) in self.ports.iter_mut().enumerate() {
            if std::mem::take(&mut p.written) && p.output.flush().is_err() {
                self.shared.ports[i].1.tx_errors.fetch_add(1, Relaxed);
            }
        }
        if !events.is_empty() {
            self.shared.push_events(events);
        }
    }

    /// Sleeps until a wake-up (PacketOut, program set, stop) or `due` (µs).
    fn sleep(&self, due: Option<u64>) {
        let ts = due.map(|d| {
            let us = d.saturating_sub(now_us());
            libc::timespec {
                tv_sec: (us / 1_000_000) as libc::time_t,
                tv_nsec: ((us % 1_000_000) * 1000) as libc::c_long,
            }
        });
        let tsp = ts.as_ref().map_or(std::ptr::null(), |t| t as *const _);
        let fd = self.shared.wake.as_raw_fd();
        let mut pfd = libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd; `tsp` is null or points at `ts`, alive
        // for the call.
        let r = unsafe { libc::ppoll(&mut pfd, 1, tsp, std::ptr::null()) };
        if r > 0 {
            let mut v = 0u64;
            // SAFETY: reads 8 bytes into a live u64 (resets the eventfd counter).
            unsafe { libc::read(fd, (&mut v as *mut u64).cast(), 8) };
        }
    }
}
