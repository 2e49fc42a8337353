//! The system calls both live loops share (`TcpConnection.run_raw`,
//! tcp/raw_io.rs, and `run_rbcc_sender`, rbcc_io.rs): the clock, errors
//! with what was being done, SIGINT/SIGTERM blocked outside `ppoll`, and the
//! `ppoll` itself.

use std::io;
use std::mem::MaybeUninit;
use std::os::fd::RawFd;
use std::ptr;

pub(crate) const NS_PER_S: u64 = 1_000_000_000;

/// CLOCK_MONOTONIC in ns: Python's `time.monotonic_ns()`, the drivers' clock.
pub(crate) fn now_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: ts is a valid timespec; CLOCK_MONOTONIC always exists on Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * NS_PER_S + ts.tv_nsec as u64
}

pub(crate) fn errno_is(e: &io::Error, codes: &[i32]) -> bool {
    e.raw_os_error().is_some_and(|c| codes.contains(&c))
}

/// A failed system call: what was being done, and the OS error.
pub(crate) struct Failure {
    pub what: &'static str,
    pub err: io::Error,
}

impl Failure {
    /// errno, and "WHAT: strerror" (without Rust's " (os error N)").
    pub(crate) fn errno_and_text(&self) -> (i32, String) {
        let text = self.err.to_string();
        let strerror = text.split(" (os error").next().unwrap_or(&text);
        (
            self.err.raw_os_error().unwrap_or(0),
            format!("{}: {strerror}", self.what),
        )
    }
}

pub(crate) fn context(what: &'static str, err: io::Error) -> Failure {
    Failure { what, err }
}

/// SIGINT and SIGTERM blocked for the thread while it lives; the mask before
/// is what `ppoll` waits with and what `drop` restores (a signal that came
/// meanwhile is delivered then).
pub(crate) struct BlockedSignals {
    pub before: libc::sigset_t,
}

impl BlockedSignals {
    pub(crate) fn new() -> Result<BlockedSignals, Failure> {
        let mut block = MaybeUninit::<libc::sigset_t>::uninit();
        let mut before = MaybeUninit::<libc::sigset_t>::uninit();
        // SAFETY: sigemptyset initialises `block`; pthread_sigmask fills `before`.
        unsafe {
            libc::sigemptyset(block.as_mut_ptr());
            libc::sigaddset(block.as_mut_ptr(), libc::SIGINT);
            libc::sigaddset(block.as_mut_ptr(), libc::SIGTERM);
            let rc = libc::pthread_sigmask(libc::SIG_BLOCK, block.as_ptr(), before.as_mut_ptr());
            if rc != 0 {
                return Err(context("pthread_sigmask", io::Error::from_raw_os_error(rc)));
            }
            Ok(BlockedSignals {
                before: before.assume_init(),
            })
        }
    }
}

impl Drop for BlockedSignals {
    fn drop(&mut self) {
        // SAFETY: `before` is the mask pthread_sigmask returned.
        unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, &self.before, ptr::null_mut()) };
    }
}

/// What ended a `wait`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Woken {
    /// The timeout passed or `fd` is readable.
    Ready,
    /// A signal came (its C handler ran; Python's runs when the GIL is back).
    Signal,
    /// `stop_fd` is readable.
    Stopped,
}

/// Sleep until `fd` is readable, `timeout_ns` passes (None: no timeout), a
/// signal comes (SIGINT/SIGTERM unblocked only here, atomically) or `stop_fd`
/// is readable. An `fd` that is not open is EBADF.
pub(crate) fn wait(
    fd: RawFd,
    stop_fd: Option<RawFd>,
    timeout_ns: Option<u64>,
    signals: &BlockedSignals,
) -> Result<Woken, Failure> {
    let mut fds = [
        libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        },
        libc::pollfd {
            fd: stop_fd.unwrap_or(-1),
            events: libc::POLLIN,
            revents: 0,
        },
    ];
    let nfds: libc::nfds_t = if stop_fd.is_some() { 2 } else { 1 };
    let timeout = timeout_ns.map(|left| libc::timespec {
        tv_sec: (left / NS_PER_S) as libc::time_t,
        tv_nsec: (left % NS_PER_S) as libc::c_long,
    });
    let timeout_ptr = timeout.as_ref().map_or(ptr::null(), ptr::from_ref);
    // SAFETY: fds holds nfds valid pollfds; the timeout and mask outlive the call.
    let rc = unsafe { libc::ppoll(fds.as_mut_ptr(), nfds, timeout_ptr, &signals.before) };
    if rc < 0 {
        let e = io::Error::last_os_error();
        if errno_is(&e, &[libc::EINTR]) {
            return Ok(Woken::Signal);
        }
        return Err(context("cannot wait for the socket", e));
    }
    if fds
        .iter()
        .take(nfds as usize)
        .any(|p| p.revents & libc::POLLNVAL != 0)
    {
        return Err(context(
            "cannot wait for the socket",
            io::Error::from_raw_os_error(libc::EBADF),
        ));
    }
    if nfds == 2 && fds[1].revents != 0 {
        return Ok(Woken::Stopped);
    }
    Ok(Woken::Ready)
}

/// How the calling thread is scheduled while a `LowLatency` guard lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Latency {
    /// SCHED_FIFO at the lowest real-time priority (1).
    Fifo,
    /// SCHED_OTHER with the scheduler's shortest slice.
    ShortSlice,
    /// As the caller had it (another policy already, or both refused).
    Unchanged,
}

impl Latency {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Latency::Fifo => "fifo",
            Latency::ShortSlice => "short-slice",
            Latency::Unchanged => "unchanged",
        }
    }
}

/// The calling thread's scheduling, for a loop that sleeps until a deadline
/// and must run as soon as it comes: SCHED_FIFO priority 1 where the process
/// may (root or CAP_SYS_NICE; not inherited by children), else SCHED_OTHER
/// with `slice_ns` as its slice (EEVDF, Linux 6.12 on: a short slice gives
/// an earlier virtual deadline, so the wake-up preempts a CPU-bound task
/// instead of waiting up to that task's slice); the caller's policy again
/// when dropped. A thread that is not SCHED_OTHER / SCHED_BATCH is left as
/// it is. Neither gives the loop more CPU than it uses between its sleeps.
pub(crate) struct LowLatency {
    before: Option<libc::sched_attr>,
    pub kind: Latency,
}

const SCHED_ATTR_SIZE: u32 = std::mem::size_of::<libc::sched_attr>() as u32;

fn set_sched_attr(attr: &libc::sched_attr) -> bool {
    // SAFETY: attr is a valid sched_attr of SCHED_ATTR_SIZE bytes; 0 = this thread.
    unsafe { libc::syscall(libc::SYS_sched_setattr, 0, ptr::from_ref(attr), 0) == 0 }
}

impl LowLatency {
    pub(crate) fn new(slice_ns: u64) -> LowLatency {
        let unchanged = LowLatency {
            before: None,
            kind: Latency::Unchanged,
        };
        // SAFETY: sched_attr is plain data; all zeros is a valid value.
        let mut attr: libc::sched_attr = unsafe { std::mem::zeroed() };
        // SAFETY: attr is writable for SCHED_ATTR_SIZE bytes; 0 = this thread.
        let rc = unsafe {
            libc::syscall(
                libc::SYS_sched_getattr,
                0,
                ptr::addr_of_mut!(attr),
                SCHED_ATTR_SIZE,
                0,
            )
        };
        let fair = [libc::SCHED_OTHER, libc::SCHED_BATCH].contains(&(attr.sched_policy as i32));
        if rc != 0 || !fair {
            return unchanged;
        }
        attr.size = SCHED_ATTR_SIZE;
        let fifo = libc::sched_attr {
            sched_policy: libc::SCHED_FIFO as u32,
            sched_flags: libc::SCHED_FLAG_RESET_ON_FORK as u64,
            sched_nice: 0,
            sched_priority: 1,
            sched_runtime: 0,
            ..attr
        };
        let short = libc::sched_attr {
            sched_runtime: slice_ns,
            ..attr
        };
        let kind = if set_sched_attr(&fifo) {
            Latency::Fifo
        } else if set_sched_attr(&short) {
            Latency::ShortSlice
        } else {
            return unchanged;
        };
        LowLatency {
            before: Some(attr),
            kind,
        }
    }
}

impl Drop for LowLatency {
    fn drop(&mut self) {
        if let Some(before) = self.before {
            // sched_getattr reports the slice in use, custom or not: back to the default.
            set_sched_attr(&libc::sched_attr {
                sched_runtime: 0,
                ..before
            });
        }
    }
}
