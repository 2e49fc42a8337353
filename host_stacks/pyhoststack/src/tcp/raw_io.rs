//! `TcpConnection.run_raw`: the live driver's per-frame path. The Python
//! driver read each frame, handed it over and sent the answer itself, 82 us
//! (median) from an ACK arriving to its answer leaving where the kernel
//! takes 15 us; at a drop-tail bottleneck that timing decided the pair's
//! shares (docs/NET.md). Here the AF_PACKET socket that the driver opened
//! and filtered is read, each frame handled at its own clock reading and
//! every frame it lets out sent at once, with no Python in between and no
//! allocation per frame. The call returns at a deadline (the driver's next
//! sample or schedule change), when the connection's state changes, when
//! its write budget is spent, or on a signal.
//!
//! Signals: SIGINT and SIGTERM are blocked while the loop runs and unblocked
//! only inside `ppoll`, atomically, so one that comes between two polls ends
//! the next poll at once instead of being noticed at the deadline.
//!
//! Scheduling: while a call runs, its thread is at SCHED_FIFO priority 1
//! where it may (root), else has the scheduler's shortest slice, as the RBCC
//! sender's loop (`sys::LowLatency`, rbcc_io.rs); the caller's policy comes
//! back when the call returns, so the driver's Python between calls runs as
//! before. A loaded host then delays the answer to an ACK by the wake-up
//! latency only, not by other processes' slices.

use std::io;
use std::mem::size_of;
use std::os::fd::RawFd;
use std::ptr;

use ratelab_stack::Nanos;

use super::TcpConnection;
use crate::sys::{
    context, errno_is, now_ns, wait, BlockedSignals, Failure, Latency, LowLatency, Woken,
};

/// <linux/if_packet.h>: a frame this host sent (a packet socket sees them).
const PACKET_OUTGOING: u8 = 4;
/// Receive buffer: the largest frame a packet socket hands over without GRO.
pub(super) const RX_BUFFER: usize = 65_536;
/// The thread's scheduler slice where it cannot have SCHED_FIFO: the
/// kernel's shortest (as rbcc_io.rs).
const SLICE_NS: u64 = 100_000;
/// What the application writes: the driver sends zeros, as the kernel sender does.
static ZEROS: [u8; 65_536] = [0; 65_536];

/// Why `run` returned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Return {
    /// The clock reached `until`; nothing at or after it was handled.
    Deadline,
    /// The connection's state (or whether the peer closed) changed.
    State,
    /// The write budget is spent: the application has written all it may.
    Written,
    /// A signal interrupted the wait (the caller runs the handlers).
    Signal,
    /// `stop_fd` became readable.
    Stopped,
}

impl Return {
    pub(super) fn name(self) -> &'static str {
        match self {
            Return::Deadline => "deadline",
            Return::State => "state",
            Return::Written => "written",
            Return::Signal => "signal",
            Return::Stopped => "stopped",
        }
    }
}

/// One call's settings.
pub(super) struct Run {
    pub fd: RawFd,
    pub stop_fd: Option<RawFd>,
    pub until: Nanos,
    /// Bytes the application may still write (zeros), keeping at most
    /// `write_lowat` of them unsent; 0: none.
    pub write_budget: u64,
    pub write_lowat: usize,
}

pub(super) struct Outcome {
    pub why: Return,
    pub written: u64,
    pub last_write: Option<Nanos>,
    /// How the loop's thread was scheduled (sys.rs `LowLatency`).
    pub scheduling: Latency,
}

/// The next frame another host sent (outgoing copies skipped), its length;
/// None when nothing is waiting.
fn receive(fd: RawFd, rx: &mut [u8]) -> Result<Option<usize>, Failure> {
    loop {
        // SAFETY: sockaddr_ll is plain data; all zeros is a valid value.
        let mut from: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
        let mut from_len = size_of::<libc::sockaddr_ll>() as libc::socklen_t;
        // SAFETY: rx and from are valid for the lengths given.
        let n = unsafe {
            libc::recvfrom(
                fd,
                rx.as_mut_ptr().cast(),
                rx.len(),
                libc::MSG_DONTWAIT,
                ptr::addr_of_mut!(from).cast(),
                &mut from_len,
            )
        };
        if n < 0 {
            let e = io::Error::last_os_error();
            if errno_is(&e, &[libc::EAGAIN, libc::EWOULDBLOCK]) {
                return Ok(None);
            }
            if errno_is(&e, &[libc::EINTR]) {
                continue;
            }
            return Err(context("cannot receive", e));
        }
        if from.sll_pkttype != PACKET_OUTGOING {
            return Ok(Some(n as usize));
        }
    }
}

/// Every frame the connection lets out now, each sent as it is built. A full
/// device queue (ENOBUFS, EAGAIN) is a local drop, which TCP repairs as a loss.
fn transmit(conn: &mut TcpConnection, fd: RawFd, now: Nanos) -> Result<(), Failure> {
    while let Some(len) = conn.build_packet(now) {
        loop {
            // SAFETY: buf holds the frame's len bytes.
            let rc = unsafe { libc::send(fd, conn.buf.as_ptr().cast(), len, 0) };
            if rc >= 0 {
                break;
            }
            let e = io::Error::last_os_error();
            if errno_is(&e, &[libc::EINTR]) {
                continue;
            }
            if errno_is(&e, &[libc::ENOBUFS, libc::EAGAIN, libc::EWOULDBLOCK]) {
                conn.local_drops += 1;
                break;
            }
            return Err(context("cannot send", e));
        }
    }
    Ok(())
}

/// The application's writes: zeros, up to `budget` bytes, while fewer than
/// `lowat` bytes wait unsent (the kernel sender's TCP_NOTSENT_LOWAT rule).
fn fill(conn: &mut TcpConnection, budget: u64, lowat: usize) -> u64 {
    let mut written = 0;
    while written < budget {
        let room = lowat
            .saturating_sub(conn.notsent_bytes())
            .min(conn.core.send_capacity())
            .min(ZEROS.len());
        let room = room.min(usize::try_from(budget - written).unwrap_or(usize::MAX));
        if room == 0 {
            break;
        }
        let taken = conn.core.send(&ZEROS[..room]);
        written += taken as u64;
        if taken < room {
            break;
        }
    }
    written
}

/// Throw away what the peer sent (the sink sends no data; its window stays open).
fn discard_received(conn: &mut TcpConnection, scratch: &mut [u8]) {
    while conn.core.recv_ready() > 0 {
        if conn.core.recv(scratch) == 0 {
            break;
        }
    }
}

/// Run the connection on `run.fd` until one of the `Return` reasons.
pub(super) fn run(conn: &mut TcpConnection, rx: &mut [u8], run: &Run) -> Result<Outcome, Failure> {
    let signals = BlockedSignals::new()?;
    let low_latency = LowLatency::new(SLICE_NS);
    let state = conn.core.state();
    let peer_closed = conn.core.peer_closed();
    let mut out = Outcome {
        why: Return::Deadline,
        written: 0,
        last_write: None,
        scheduling: low_latency.kind,
    };
    loop {
        let now = now_ns();
        if now >= run.until {
            out.why = Return::Deadline;
            return Ok(out);
        }
        if conn.core.state() != state || conn.core.peer_closed() != peer_closed {
            out.why = Return::State;
            return Ok(out);
        }
        // One frame, handled at this clock reading and answered at once.
        let got = receive(run.fd, rx)?;
        if let Some(n) = got {
            conn.handle_frame(now, &rx[..n]);
            discard_received(conn, rx);
        }
        if run.write_budget > out.written {
            let n = fill(conn, run.write_budget - out.written, run.write_lowat);
            if n > 0 {
                out.written += n;
                out.last_write = Some(now);
            }
        }
        transmit(conn, run.fd, now)?;
        if run.write_budget > 0 && out.written == run.write_budget {
            out.why = Return::Written;
            return Ok(out);
        }
        if got.is_some() {
            continue; // more may be waiting
        }
        // Nothing waiting: sleep until the next timer, the deadline, a frame or a signal.
        let wake = conn.core.poll_at().map_or(run.until, |t| t.min(run.until));
        let timeout = (wake != u64::MAX).then(|| wake.saturating_sub(now));
        match wait(run.fd, run.stop_fd, timeout, &signals)? {
            Woken::Ready => {}
            Woken::Signal => {
                out.why = Return::Signal;
                return Ok(out);
            }
            Woken::Stopped => {
                out.why = Return::Stopped;
                return Ok(out);
            }
        }
    }
}
