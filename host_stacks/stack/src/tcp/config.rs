//! Connection settings and their validation.

use super::rtt::RtoFormula;
use super::send_buffer::SendBufferPolicy;
use crate::cc::CcKind;
use crate::{Nanos, MILLIS, SECONDS};
use std::fmt;

/// Settings of one TCP connection.
#[derive(Clone, Debug, PartialEq)]
pub struct Config {
    /// MSS this end announces and sends at most (RFC 9293 §3.7.1), bytes.
    pub mss: u16,
    /// Initial window in segments (RFC 6928: 10; RFC 5681: up to 4).
    pub initial_window: u32,
    /// Initial RTO (RFC 6298 §2.1: 1 s; 3 s in RFC 2988 and the study).
    pub initial_rto: Nanos,
    /// Minimum RTO (RFC 6298 §2.4: 1 s; Linux uses 200 ms).
    pub min_rto: Nanos,
    /// How the RTO is computed: RFC 6298's (min_rto is a floor of the RTO)
    /// or Linux's (min_rto is a floor of the variance term).
    pub rto_formula: RtoFormula,
    /// Maximum RTO (RFC 6298 §2.5: at least 60 s).
    pub max_rto: Nanos,
    /// Clock granularity G of RFC 6298 §2.
    pub clock_granularity: Nanos,
    /// Delayed ACKs (RFC 5681 §4.2, RFC 9293 §3.8.6.3): `Some(timer)`, or `None`
    /// to acknowledge every segment at once.
    pub delayed_ack: Option<Nanos>,
    /// Linux's receiver quick-ACK mode (quickack.rs): every segment ACKed
    /// at once at a transfer's start and while the window grows, then
    /// `delayed_ack`'s every second segment.
    pub quickack: bool,
    /// Offer SACK (RFC 2018).
    pub sack: bool,
    /// Offer timestamps (RFC 7323 §3).
    pub timestamps: bool,
    /// Offer window scaling (RFC 7323 §2).
    pub window_scale: bool,
    /// Proportional rate reduction in recovery (RFC 6937).
    pub prr: bool,
    /// HyStart++ (RFC 9406) in the initial slow start of Reno, NewReno and
    /// Cubic (Vegas has its own exit).
    pub hystart: bool,
    /// Restart from the initial window after an idle RTO (RFC 5681 §4.1).
    pub slow_start_after_idle: bool,
    /// Duplicate-ACK threshold (RFC 5681 §3.2, RFC 6675: 3).
    pub dupthresh: u32,
    /// Send and receive buffer sizes in bytes (the send buffer's: its cap
    /// when auto-tuned).
    pub send_buffer: usize,
    pub recv_buffer: usize,
    /// How much of `send_buffer` the application may fill: Linux-like
    /// autotuning (grows with cwnd) or all of it.
    pub send_buffer_policy: SendBufferPolicy,
    /// Congestion control.
    pub cc: CcKind,
    /// How long TIME-WAIT lasts (2 * MSL, RFC 9293 §3.3.2).
    pub time_wait: Nanos,
    /// SYN transmissions before giving up (RFC 9293 §3.8.3 R2 for SYN: at least 3 minutes).
    pub syn_retries: u32,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            mss: 1460,
            initial_window: 10,
            initial_rto: SECONDS,
            min_rto: 200 * MILLIS,
            rto_formula: RtoFormula::Rfc6298,
            max_rto: 60 * SECONDS,
            clock_granularity: MILLIS,
            delayed_ack: Some(40 * MILLIS),
            quickack: false,
            sack: true,
            timestamps: true,
            window_scale: true,
            prr: false,
            hystart: false,
            slow_start_after_idle: true,
            dupthresh: 3,
            send_buffer: 4 << 20,
            recv_buffer: 4 << 20,
            send_buffer_policy: SendBufferPolicy::Auto,
            cc: CcKind::NewReno,
            time_wait: 60 * SECONDS,
            syn_retries: 6,
        }
    }
}

/// A setting out of range: names the field, what was expected and what was given.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigError {
    pub field: &'static str,
    pub message: String,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.field, self.message)
    }
}

impl std::error::Error for ConfigError {}

fn err(field: &'static str, message: String) -> Result<(), ConfigError> {
    Err(ConfigError { field, message })
}

fn ms(t: Nanos) -> String {
    format!("{} ms", t as f64 / MILLIS as f64)
}

impl Config {
    /// Check every setting; the first bad one is named.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if !(88..=65_495).contains(&self.mss) {
            return err(
                "mss",
                format!("must be 88 to 65495 bytes, got {}", self.mss),
            );
        }
        if !(1..=1000).contains(&self.initial_window) {
            return err(
                "iw",
                format!("must be 1 to 1000 segments, got {}", self.initial_window),
            );
        }
        if !(MILLIS..=60 * SECONDS).contains(&self.initial_rto) {
            return err(
                "initial_rto",
                format!("must be 1 ms to 60 s, got {}", ms(self.initial_rto)),
            );
        }
        if !(MILLIS..=60 * SECONDS).contains(&self.min_rto) {
            return err(
                "min_rto",
                format!("must be 1 ms to 60 s, got {}", ms(self.min_rto)),
            );
        }
        if self.max_rto < self.min_rto
            || self.max_rto < self.initial_rto
            || self.max_rto > 3600 * SECONDS
        {
            return err(
                "max_rto",
                format!(
                    "must be at least min_rto and initial_rto and at most 1 h, got {}",
                    ms(self.max_rto)
                ),
            );
        }
        if self.clock_granularity > SECONDS {
            return err(
                "clock_granularity",
                format!("must be at most 1 s, got {}", ms(self.clock_granularity)),
            );
        }
        if let Some(d) = self.delayed_ack {
            // RFC 9293 §3.8.6.3: the delay MUST be less than 0.5 s.
            if d == 0 || d >= 500 * MILLIS {
                return err(
                    "delayed_ack",
                    format!("must be above 0 and below 500 ms, got {}", ms(d)),
                );
            }
        }
        if !(1..=64).contains(&self.dupthresh) {
            return err(
                "dupthresh",
                format!("must be 1 to 64, got {}", self.dupthresh),
            );
        }
        let min_buf = 2 * self.mss as usize;
        for (field, v) in [
            ("send_buffer", self.send_buffer),
            ("recv_buffer", self.recv_buffer),
        ] {
            if v < min_buf || v > 1 << 30 {
                return err(
                    field,
                    format!("must be 2*mss ({min_buf}) to 1 GiB, got {v}"),
                );
            }
        }
        if self.syn_retries == 0 || self.syn_retries > 32 {
            return err(
                "syn_retries",
                format!("must be 1 to 32, got {}", self.syn_retries),
            );
        }
        if self.hystart && matches!(self.cc, CcKind::Cubic(p) if p.linux) {
            return err(
                "hystart",
                "cubic-linux leaves slow start by Linux's HyStart: no HyStart++ on top".into(),
            );
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_is_valid_and_bad_values_name_the_field() {
        Config::default().validate().unwrap();
        let cases: Vec<(Config, &str)> = vec![
            (
                Config {
                    cc: "cubic-linux".parse().unwrap(),
                    hystart: true,
                    ..Config::default()
                },
                "hystart: cubic-linux leaves slow start by Linux's HyStart",
            ),
            (
                Config {
                    initial_window: 0,
                    ..Config::default()
                },
                "iw: must be 1 to 1000 segments, got 0",
            ),
            (
                Config {
                    initial_rto: 0,
                    ..Config::default()
                },
                "initial_rto: must be 1 ms to 60 s, got 0 ms",
            ),
            (
                Config {
                    initial_rto: 3600 * SECONDS,
                    ..Config::default()
                },
                "initial_rto: must be 1 ms to 60 s",
            ),
            (
                Config {
                    mss: 10,
                    ..Config::default()
                },
                "mss: must be 88",
            ),
            (
                Config {
                    delayed_ack: Some(SECONDS),
                    ..Config::default()
                },
                "delayed_ack: must be above 0",
            ),
            (
                Config {
                    recv_buffer: 100,
                    ..Config::default()
                },
                "recv_buffer: must be 2*mss",
            ),
            (
                Config {
                    min_rto: 0,
                    ..Config::default()
                },
                "min_rto:",
            ),
            (
                Config {
                    dupthresh: 0,
                    ..Config::default()
                },
                "dupthresh:",
            ),
        ];
        for (c, want) in cases {
            let e = c.validate().unwrap_err().to_string();
            assert!(e.starts_with(want), "{e} vs {want}");
            assert!(!e.contains('\n'));
        }
    }
}
