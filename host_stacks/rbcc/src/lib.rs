//! ratelab's rate-based host: the TRUMP-style RBCC sender and receiver that
//! use the router's rate fields (RBCC.md "Hosts"), their pacer and wire
//! codecs, as sans-IO state machines (STYLE.md "Transport stacks").
//!
//! Nothing here reads a clock, sleeps or touches a socket: time comes in as
//! integer microseconds (it must not go backwards), datagrams in and out are
//! IPv4 payloads (RBCC header, TRUMP header, data), and `poll_at()` says
//! when the caller must come back. Outgoing datagrams are built in a buffer
//! each machine reuses, so the fast path (in-order data and its ACK)
//! allocates nothing per packet.
//!
//! The Python binding (`ratelab_hoststack`, host_stacks/pyhoststack) exposes
//! the same classes to `ratelab_hosts`; host_stacks/README.md documents the
//! protocol decisions.

pub mod pacer;
pub mod receiver;
pub mod sender;
pub mod wire;

pub use pacer::Pacer;
pub use receiver::{Listener, Receiver, ReceiverState};
pub use sender::{Sender, SenderConfig, SenderState};

/// A caller passed a time before one it passed earlier.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TimeWentBackwards {
    pub now_us: u64,
    pub last_us: u64,
}

impl std::fmt::Display for TimeWentBackwards {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "time went backwards: {} us after {} us",
            self.now_us, self.last_us
        )
    }
}

impl std::error::Error for TimeWentBackwards {}

/// Microseconds as seconds the way Python's `{:g}` prints them (6
/// significant digits, no trailing zeros): 30000000 -> "30", 1500 -> "0.0015".
pub fn format_seconds(us: u64) -> String {
    let value = us as f64 / 1e6;
    if value == 0.0 {
        return "0".into();
    }
    let scientific = format!("{value:.5e}");
    let (mantissa, exponent) = scientific.split_once('e').expect("{:e} has an exponent");
    let exponent: i32 = exponent.parse().expect("{:e} exponent is an integer");
    let trim = |s: &str| -> String {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s.to_string()
        }
    };
    if (-4..6).contains(&exponent) {
        let decimals = (5 - exponent) as usize;
        trim(&format!("{value:.decimals$}"))
    } else {
        let sign = if exponent < 0 { '-' } else { '+' };
        format!("{}e{sign}{:02}", trim(mantissa), exponent.abs())
    }
}

#[cfg(test)]
mod tests {
    use super::format_seconds;

    #[test]
    fn seconds_print_like_python_g() {
        assert_eq!(format_seconds(30_000_000), "30");
        assert_eq!(format_seconds(1_500_000), "1.5");
        assert_eq!(format_seconds(1_500), "0.0015");
        assert_eq!(format_seconds(15), "1.5e-05");
        assert_eq!(format_seconds(1_234_567_000_000), "1.23457e+06");
        assert_eq!(format_seconds(0), "0");
    }
}
