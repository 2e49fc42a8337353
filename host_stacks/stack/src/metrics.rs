//! Per-flow measurements of a TCP sender, with the names used everywhere
//! in ratelab: goodput, flow completion time, cwnd and ssthresh over time,
//! number of ssthresh changes, smoothed RTT, RTT samples, retransmissions,
//! RTOs and spurious RTOs, bytes in flight, delivery rate. One-way delay at
//! the application comes from the [`crate::app::Sink`].

use crate::tcp::Connection;
use crate::Nanos;

/// One point of the window trace.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WindowSample {
    pub at: Nanos,
    pub cwnd: u64,
    /// `u64::MAX` before the first congestion event.
    pub ssthresh: u64,
    pub bytes_in_flight: u64,
    /// Bytes per second.
    pub delivery_rate: u64,
}

/// Samples a connection after events; appends to the traces only on change.
#[derive(Clone, Debug, Default)]
pub struct FlowMeter {
    /// Whether to keep the time series (else only the summary).
    pub trace: bool,
    pub window: Vec<WindowSample>,
    /// (time, RTT) of each RTT sample.
    pub rtt_samples: Vec<(Nanos, Nanos)>,
    seen_rtt_samples: u64,
    last: Option<(u64, u64)>,
    pub first_at: Option<Nanos>,
    pub last_at: Nanos,
}

/// A flow's results.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct FlowSummary {
    /// Bits per second of acknowledged data over the flow's life so far.
    pub goodput_bps: f64,
    pub bytes_acked: u64,
    pub srtt: Option<Nanos>,
    pub min_rtt: Option<Nanos>,
    pub rtt_samples: u64,
    pub cwnd: u64,
    pub ssthresh: u64,
    pub ssthresh_changes: u64,
    pub retransmissions: u64,
    pub rtos: u64,
    pub spurious_rtos: u64,
    pub bytes_in_flight: u64,
    pub delivery_rate: u64,
}

impl FlowMeter {
    pub fn new(trace: bool) -> FlowMeter {
        FlowMeter {
            trace,
            ..FlowMeter::default()
        }
    }

    /// Look at the connection at `now` (after handling an event).
    pub fn observe(&mut self, now: Nanos, c: &Connection) {
        self.first_at.get_or_insert(now);
        self.last_at = now;
        if !self.trace {
            return;
        }
        let (cwnd, ssthresh) = (c.cwnd(), c.ssthresh());
        if self.last != Some((cwnd, ssthresh)) {
            self.last = Some((cwnd, ssthresh));
            self.window.push(WindowSample {
                at: now,
                cwnd,
                ssthresh,
                bytes_in_flight: c.bytes_in_flight(),
                delivery_rate: c.delivery_rate(),
            });
        }
        let n = c.stats().rtt_samples;
        if n != self.seen_rtt_samples {
            self.seen_rtt_samples = n;
            if let Some(r) = c.rtt().latest() {
                self.rtt_samples.push((now, r));
            }
        }
    }

    /// The summary at the last observation.
    pub fn summary(&self, c: &Connection) -> FlowSummary {
        let s = c.stats();
        let dur = self
            .last_at
            .saturating_sub(self.first_at.unwrap_or(self.last_at));
        FlowSummary {
            goodput_bps: if dur > 0 {
                s.bytes_acked as f64 * 8e9 / dur as f64
            } else {
                0.0
            },
            bytes_acked: s.bytes_acked,
            srtt: c.rtt().srtt(),
            min_rtt: c.rtt().min_rtt(),
            rtt_samples: s.rtt_samples,
            cwnd: c.cwnd(),
            ssthresh: c.ssthresh(),
            ssthresh_changes: s.ssthresh_changes,
            retransmissions: s.retransmissions,
            rtos: s.rtos,
            spurious_rtos: s.spurious_rtos,
            bytes_in_flight: c.bytes_in_flight(),
            delivery_rate: c.delivery_rate(),
        }
    }
}
