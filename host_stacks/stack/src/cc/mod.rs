//! Congestion control: one small trait, one file per algorithm.
//!
//! The connection (crate::tcp) detects loss and runs loss recovery (RFC 6675
//! with SACK, RFC 5681 §3.2 / RFC 6582 without, PRR of RFC 6937 as an
//! option); an algorithm only decides the congestion window and slow-start
//! threshold at the events below. Algorithm state is separate from
//! connection state. Windows are in bytes; time is integer nanoseconds.

mod cubic;
mod cubic_hystart;
mod cubic_linux;
mod hystart;
mod newreno;
mod prr;
mod reno;
mod vegas;
mod window;

pub use cubic::{Cubic, CubicParams};
pub use cubic_hystart::CubicHyStart;
pub use cubic_linux::CubicLinux;
pub use hystart::HyStart;
pub use newreno::NewReno;
pub use prr::Prr;
pub use reno::Reno;
pub use vegas::{Vegas, VegasParams};
pub use window::RenoWindow;

use crate::Nanos;
use std::fmt;

/// What an ACK of new data tells the algorithm.
#[derive(Clone, Copy, Debug, Default)]
pub struct AckSample {
    pub now: Nanos,
    /// Bytes newly acknowledged (cumulatively and by SACK) by this ACK.
    pub acked: u64,
    /// The RTT measured by this ACK, if any (Karn's rule applied).
    pub rtt: Option<Nanos>,
    /// Smoothed RTT (RFC 6298), 0 before the first sample.
    pub srtt: Nanos,
    /// Lowest RTT seen on the connection, 0 before the first sample.
    pub min_rtt: Nanos,
    /// Bytes in flight (RFC 6675 pipe) before this ACK.
    pub in_flight: u64,
    /// The cumulative acknowledgment number.
    pub ack: u32,
    /// SND.NXT: the next sequence number to be sent.
    pub snd_nxt: u32,
}

/// What an algorithm exposes for measurements.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CcMetrics {
    pub cwnd: u64,
    pub ssthresh: u64,
    /// Algorithm-specific values by name (Cubic's W_max and K, Vegas's diff...).
    pub extra: [(&'static str, f64); 2],
}

/// How loss recovery ends without SACK.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RecoveryStyle {
    /// RFC 5681 §3.2: the first ACK of new data ends fast recovery.
    Reno,
    /// RFC 6582: recovery lasts until the recovery point is acknowledged;
    /// partial ACKs retransmit the next hole.
    NewReno,
}

/// A congestion-control algorithm.
pub trait CongestionControl {
    /// Short name (`reno`, `newreno`, `cubic`, `vegas`).
    fn name(&self) -> &'static str;
    /// New data acknowledged outside loss recovery (slow start, congestion avoidance).
    fn on_ack(&mut self, ack: &AckSample);
    /// Loss detected: start of a recovery episode; sets ssthresh and cwnd.
    fn on_congestion_event(&mut self, now: Nanos, in_flight: u64);
    /// The recovery point was acknowledged (RFC 6582 §3.2 step 6).
    fn on_recovery_exit(&mut self, now: Nanos, in_flight: u64);
    /// Retransmission timeout (RFC 5681 §3.1 eq. 4, loss window of one segment).
    fn on_rto(&mut self, now: Nanos, in_flight: u64);
    /// Sending resumes after an idle period longer than the RTO (RFC 5681 §4.1).
    fn on_idle_restart(&mut self, now: Nanos, restart_window: u64);
    /// Congestion window in bytes.
    fn window(&self) -> u64;
    /// Slow-start threshold in bytes (`u64::MAX` before the first congestion event).
    fn ssthresh(&self) -> u64;
    /// Pacing rate in bytes per second, `None` for window-limited sending.
    fn pacing_rate(&self) -> Option<u64> {
        None
    }
    /// How recovery without SACK ends.
    fn recovery_style(&self) -> RecoveryStyle {
        RecoveryStyle::NewReno
    }
    /// Run the initial slow start with HyStart++ (RFC 9406); algorithms
    /// with their own slow-start exit (Vegas) ignore it.
    fn enable_hystart(&mut self) {}
    /// Values for measurements.
    fn metrics(&self) -> CcMetrics {
        CcMetrics {
            cwnd: self.window(),
            ssthresh: self.ssthresh(),
            extra: [("", 0.0); 2],
        }
    }
}

/// Which algorithm a connection runs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum CcKind {
    Reno,
    NewReno,
    Cubic(CubicParams),
    Vegas(VegasParams),
}

/// An algorithm name that is not known.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownCc(pub String);

impl fmt::Display for UnknownCc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "cc: unknown algorithm {:?} (expected reno, newreno, cubic, cubic-linux or vegas)",
            self.0
        )
    }
}

impl std::error::Error for UnknownCc {}

impl std::str::FromStr for CcKind {
    type Err = UnknownCc;
    fn from_str(s: &str) -> Result<CcKind, UnknownCc> {
        match s {
            "reno" => Ok(CcKind::Reno),
            "newreno" => Ok(CcKind::NewReno),
            "cubic" => Ok(CcKind::Cubic(CubicParams::default())),
            // CUBIC as Linux's tcp_cubic.c (cubic_linux.rs): what the simulator
            // runs for a Linux kernel Cubic flow (sim/ratelab_net/sim_scenario.py).
            "cubic-linux" => Ok(CcKind::Cubic(CubicParams {
                linux: true,
                ..CubicParams::default()
            })),
            "vegas" => Ok(CcKind::Vegas(VegasParams::default())),
            _ => Err(UnknownCc(s.to_string())),
        }
    }
}

impl CcKind {
    /// A fresh algorithm for sender MSS `mss` and initial window `iw` bytes,
    /// with HyStart++ in its slow start when `hystart` (Reno, NewReno, Cubic).
    pub fn build_with(self, mss: u64, iw: u64, hystart: bool) -> Box<dyn CongestionControl> {
        let mut cc = self.build(mss, iw);
        if hystart {
            cc.enable_hystart();
        }
        cc
    }

    /// A fresh algorithm for sender MSS `mss` and initial window `iw` bytes.
    pub fn build(self, mss: u64, iw: u64) -> Box<dyn CongestionControl> {
        match self {
            CcKind::Reno => Box::new(Reno::new(mss, iw)),
            CcKind::NewReno => Box::new(NewReno::new(mss, iw)),
            CcKind::Cubic(p) if p.linux => Box::new(CubicLinux::new(mss, iw, p)),
            CcKind::Cubic(p) => Box::new(Cubic::new(mss, iw, p)),
            CcKind::Vegas(p) => Box::new(Vegas::new(mss, iw, p)),
        }
    }
}

/// Initial window in bytes for `segments` segments of `mss` (RFC 6928 §2
/// for 10: min(10*MSS, max(2*MSS, 14600)); RFC 5681 §3.1 for 1 to 4; larger
/// values are taken literally as an experiment's knob).
pub fn initial_window(segments: u32, mss: u64) -> u64 {
    let s = segments as u64;
    if s == 10 {
        (10 * mss).min((2 * mss).max(14_600))
    } else {
        s * mss
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn initial_window_rfc6928() {
        assert_eq!(initial_window(10, 1460), 14_600);
        assert_eq!(initial_window(10, 536), 5_360);
        assert_eq!(initial_window(10, 9000), 18_000);
        assert_eq!(initial_window(3, 1460), 4_380);
    }

    #[test]
    fn names_parse() {
        for n in ["reno", "newreno", "cubic", "vegas"] {
            let k: CcKind = n.parse().unwrap();
            assert_eq!(k.build(1000, 10_000).name(), n);
        }
        let e = "bbr".parse::<CcKind>().unwrap_err().to_string();
        assert!(e.starts_with("cc: unknown algorithm \"bbr\""), "{e}");
    }
}
