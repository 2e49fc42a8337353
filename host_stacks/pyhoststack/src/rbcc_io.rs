//! `run_rbcc_sender`: the live RBCC sender's loop in Rust. The Python loop
//! (ratelab_hosts/loop.py around `RbccSender`) woke up late under load and
//! the pacer, rather than burst, restarted its schedule: on the three-router
//! example the Mininet senders lost 0.3 to 3 s of their 11 to 14 s that way
//! (`pacing_lost_s`), and the simulated ones sent 10 to 38 % more. Here the
//! connected raw socket that the driver opened is read and written with the
//! GIL released: each datagram the sender lets out is sent at once, ACKs are
//! handed over at their own clock readings, and between events the thread
//! sleeps in `ppoll` (nanosecond timeout) until the sender's `poll_at()`.
//! No busy waiting: a wake-up a few tens of microseconds late (the kernel's
//! timer slack) is within the pacer's tolerance and is caught up by the
//! schedule; what made senders lose time was being scheduled milliseconds
//! late behind other processes, which a spin on a shared core cannot cure.
//! Against that the loop runs at SCHED_FIFO priority 1 where it may (root),
//! else with the scheduler's shortest slice (`sys::LowLatency`). On a veth
//! pair at 7.2 Mbit/s for 5 s, the loops alternating: load average 4 to 5,
//! 0 to 4 ms of the schedule lost at SCHED_FIFO (the Python loop at
//! SCHED_FIFO: 0 to 10 ms), 25 to 97 ms with the short slice; load average
//! 15, 0.44 to 0.60 s lost with the short slice, 0.70 to 0.97 s with the
//! default slice, 1.13 to 1.26 s in Python. On the three-router example in
//! Mininet at SCHED_FIFO: 0.00 to 0.06 s per run, where the short slice and
//! the Python loop lost 1.2 to 2.4 s.
//!
//! Signals as in `TcpConnection.run_raw` (tcp/raw_io.rs): SIGINT and SIGTERM
//! are blocked while the loop runs and unblocked only inside `ppoll`.

use std::io;
use std::net::Ipv4Addr;
use std::os::fd::RawFd;

use pyo3::exceptions::{PyOSError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use rbcc_host::pacer::{Lateness, LATENESS_BOUNDS_US};
use rbcc_host::Sender;

use crate::sys::{
    context, errno_is, now_ns, wait, BlockedSignals, Failure, Latency, LowLatency, Woken,
};
use crate::RbccSender;

/// The largest IPv4 packet a raw socket hands over.
const RX_BUFFER: usize = 65_536;
/// Datagrams read in a row before timers get their turn again (as loop.py).
const READ_BURST: usize = 1024;
const NS_PER_US: u64 = 1_000;
/// The thread's scheduler slice while the loop runs where it cannot have
/// SCHED_FIFO: the kernel's shortest (sys.rs `LowLatency`).
const SLICE_NS: u64 = 100_000;
/// Send failures that a retry can cure: counted as lost packets
/// (drivers.py's `_SOFT_SEND_ERRORS`).
const SOFT_SEND_ERRORS: [i32; 5] = [
    libc::ENOBUFS,
    libc::EAGAIN,
    libc::EWOULDBLOCK,
    libc::EHOSTUNREACH,
    libc::ECONNREFUSED,
];
/// Receive errors that mean the descriptor is unusable; any other (an ICMP
/// error reported on the socket) only means there is nothing to read.
const HARD_RECV_ERRORS: [i32; 4] = [libc::EBADF, libc::ENOTSOCK, libc::EINVAL, libc::EFAULT];

/// Why the loop returned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Return {
    /// The sender closed or failed.
    Done,
    /// The clock reached `until_us`.
    Deadline,
    /// A signal interrupted the wait (the caller runs the handlers).
    Signal,
    /// `stop_fd` became readable.
    Stopped,
}

impl Return {
    fn name(self) -> &'static str {
        match self {
            Return::Done => "done",
            Return::Deadline => "deadline",
            Return::Signal => "signal",
            Return::Stopped => "stopped",
        }
    }
}

struct Run {
    fd: RawFd,
    peer: [u8; 4],
    stop_fd: Option<RawFd>,
    until_us: Option<u64>,
}

/// The IPv4 payload of a packet from `peer`, or None (another source, or
/// not a whole IPv4 packet): drivers.py's `split_ipv4` and source check.
fn payload_from(packet: &[u8], peer: [u8; 4]) -> Option<&[u8]> {
    if packet.len() < 20 || packet[0] >> 4 != 4 {
        return None;
    }
    let ihl = usize::from(packet[0] & 0x0F) * 4;
    let total = usize::from(u16::from_be_bytes([packet[2], packet[3]]));
    if ihl < 20 || total < ihl || packet.len() < total || packet[12..16] != peer {
        return None;
    }
    Some(&packet[ihl..total])
}

/// The next datagram's length; None when nothing is waiting or the socket
/// reported an asynchronous error (an ICMP message) instead.
fn receive(fd: RawFd, rx: &mut [u8]) -> Result<Option<usize>, Failure> {
    loop {
        // SAFETY: rx is valid for rx.len() bytes.
        let n = unsafe { libc::recv(fd, rx.as_mut_ptr().cast(), rx.len(), libc::MSG_DONTWAIT) };
        if n >= 0 {
            return Ok(Some(n as usize));
        }
        let e = io::Error::last_os_error();
        if errno_is(&e, &[libc::EINTR]) {
            continue;
        }
        if errno_is(&e, &HARD_RECV_ERRORS) {
            return Err(context("cannot receive", e));
        }
        return Ok(None);
    }
}

/// Every datagram the sender lets out at `now_us`, each sent as it is built.
fn transmit(sender: &mut Sender, fd: RawFd, now_us: u64, soft: &mut u64) -> Result<(), Failure> {
    let mut failed = None;
    sender
        .on_timer(now_us, |datagram| {
            if failed.is_some() {
                return;
            }
            loop {
                // SAFETY: datagram is valid for its length.
                let rc = unsafe { libc::send(fd, datagram.as_ptr().cast(), datagram.len(), 0) };
                if rc >= 0 {
                    return;
                }
                let e = io::Error::last_os_error();
                if errno_is(&e, &[libc::EINTR]) {
                    continue;
                }
                if errno_is(&e, &SOFT_SEND_ERRORS) {
                    *soft += 1;
                } else {
                    failed = Some(context("cannot send", e));
                }
                return;
            }
        })
        .map_err(|e| {
            context(
                "the sender's clock",
                io::Error::new(io::ErrorKind::InvalidInput, e.to_string()),
            )
        })?;
    failed.map_or(Ok(()), Err)
}

/// Run the sender on `run.fd` until one of the `Return` reasons; the soft
/// send errors are added to `soft`.
fn run(
    sender: &mut Sender,
    run: &Run,
    soft: &mut u64,
    latency: &mut Latency,
) -> Result<Return, Failure> {
    let signals = BlockedSignals::new()?;
    let scheduling = LowLatency::new(SLICE_NS);
    *latency = scheduling.kind;
    let mut rx = vec![0u8; RX_BUFFER];
    loop {
        if sender.done() {
            return Ok(Return::Done);
        }
        let now = now_ns();
        let now_us = now / NS_PER_US;
        if run.until_us.is_some_and(|until| now_us >= until) {
            return Ok(Return::Deadline);
        }
        let due = sender.poll_at();
        if due.is_some_and(|at| at <= now_us) {
            transmit(sender, run.fd, now_us, soft)?;
            continue;
        }
        let mut got = false;
        for _ in 0..READ_BURST {
            let Some(n) = receive(run.fd, &mut rx)? else {
                break;
            };
            got = true;
            if let Some(payload) = payload_from(&rx[..n], run.peer) {
                sender
                    .on_datagram(now_ns() / NS_PER_US, payload)
                    .map_err(|e| {
                        context(
                            "the sender's clock",
                            io::Error::new(io::ErrorKind::InvalidInput, e.to_string()),
                        )
                    })?;
            }
        }
        if got {
            continue; // an ACK may have made something due
        }
        let wake_us = match (due, run.until_us) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        let timeout = wake_us.map(|at| (at * NS_PER_US).saturating_sub(now));
        match wait(run.fd, run.stop_fd, timeout, &signals)? {
            Woken::Ready => {}
            Woken::Signal => return Ok(Return::Signal),
            Woken::Stopped => return Ok(Return::Stopped),
        }
    }
}

/// Drive `sender` over `fd`, a raw IPv4 socket (protocol 253) connected to
/// `peer`, with the GIL released: datagrams out with `send`, packets in
/// with their IPv4 header (only `peer`'s are handed over), the clock
/// CLOCK_MONOTONIC in us (the driver's `now_us()`). Returns (why, soft send
/// errors, scheduling) at the first of: the sender done ("done"),
/// `until_us` ("deadline"), a signal, after its Python handler ran
/// ("signal"), `stop_fd` readable ("stopped"); scheduling is how the loop
/// ran ("fifo", "short-slice" or "unchanged", sys.rs `LowLatency`). OSError for an unusable descriptor or a
/// send that fails for good (errno kept: EMSGSIZE for a packet above the
/// path MTU).
#[pyfunction]
#[pyo3(signature = (sender, fd, peer, *, stop_fd = None, until_us = None))]
fn run_rbcc_sender(
    py: Python<'_>,
    sender: &Bound<'_, RbccSender>,
    fd: i32,
    peer: &str,
    stop_fd: Option<i32>,
    until_us: Option<u64>,
) -> PyResult<(&'static str, u64, &'static str)> {
    if fd < 0 || stop_fd.is_some_and(|f| f < 0) {
        return Err(PyValueError::new_err(
            "fd and stop_fd must be open file descriptors (>= 0)",
        ));
    }
    let peer: Ipv4Addr = peer
        .parse()
        .map_err(|_| PyValueError::new_err(format!("peer {peer:?} is not an IPv4 address")))?;
    let settings = Run {
        fd,
        peer: peer.octets(),
        stop_fd,
        until_us,
    };
    let mut guard = sender.try_borrow_mut()?;
    let core = &mut guard.core;
    let mut soft = 0;
    let mut latency = Latency::Unchanged;
    let result = py.detach(|| run(core, &settings, &mut soft, &mut latency));
    drop(guard);
    let why = result.map_err(|f| PyOSError::new_err(f.errno_and_text()))?;
    if why == Return::Signal {
        py.check_signals()?;
    }
    Ok((why.name(), soft, latency.name()))
}

/// `pacing_lateness` of a sender's summary: departures counted, mean and
/// maximum lateness, the bucket bounds that 50 / 90 / 99 % of departures
/// were within, and the histogram as [bound_us, count] pairs (bound None:
/// later than the last bound).
pub(crate) fn lateness_dict<'py>(py: Python<'py>, late: &Lateness) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    let departures = late.departures();
    d.set_item("departures", departures)?;
    let mean = (departures > 0).then(|| late.total_us as f64 / departures as f64);
    d.set_item("mean_us", mean)?;
    d.set_item("max_us", late.max_us)?;
    for (key, q) in [("p50_us", 0.5), ("p90_us", 0.9), ("p99_us", 0.99)] {
        d.set_item(key, late.quantile_bound_us(q))?;
    }
    let histogram = PyList::empty(py);
    for (i, count) in late.counts.iter().enumerate() {
        histogram.append((LATENESS_BOUNDS_US.get(i).copied(), count))?;
    }
    d.set_item("histogram", histogram)?;
    Ok(d)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(run_rbcc_sender, m)?)
}
