//! The window arithmetic that Reno, NewReno, Cubic (in slow start) and
//! Vegas (as its fallback) share, by composition rather than inheritance.

use super::{AckSample, HyStart};

/// cwnd, ssthresh and the byte counter of RFC 5681 congestion avoidance.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RenoWindow {
    pub cwnd: u64,
    pub ssthresh: u64,
    pub mss: u64,
    /// Bytes acknowledged since cwnd last grew in congestion avoidance.
    bytes_acked: u64,
    /// HyStart++ (RFC 9406) in the initial slow start, when enabled.
    pub hystart: Option<HyStart>,
}

impl RenoWindow {
    /// Initial window `iw` bytes; ssthresh "arbitrarily high" (RFC 5681 §3.1).
    pub fn new(mss: u64, iw: u64) -> RenoWindow {
        RenoWindow {
            cwnd: iw.max(mss),
            ssthresh: u64::MAX,
            mss,
            bytes_acked: 0,
            hystart: None,
        }
    }

    /// Run the initial slow start with HyStart++ (RFC 9406).
    pub fn enable_hystart(&mut self) {
        self.hystart = Some(HyStart::new());
    }

    /// Slow start for one ACK: HyStart++'s rules while it is active,
    /// RFC 5681's otherwise. Returns the acked bytes left over once
    /// ssthresh is reached, for congestion avoidance.
    pub fn slow_start_ack(&mut self, ack: &AckSample) -> u64 {
        match self.hystart {
            Some(mut h) if h.active() => {
                let left = h.on_ack(ack, self);
                self.hystart = Some(h);
                left
            }
            _ => self.slow_start(ack.acked),
        }
    }

    /// Slow start (by `slow_start_ack`) or congestion avoidance, as cwnd
    /// and ssthresh say.
    pub fn grow_ack(&mut self, ack: &AckSample) {
        if self.in_slow_start() {
            let left = self.slow_start_ack(ack);
            if left > 0 && !self.in_slow_start() {
                self.congestion_avoidance(left);
            }
        } else {
            self.congestion_avoidance(ack.acked);
        }
    }

    /// Whether cwnd < ssthresh (RFC 5681 §3.1: slow start).
    pub fn in_slow_start(&self) -> bool {
        self.cwnd < self.ssthresh
    }

    /// Slow start (RFC 5681 §3.1 eq. 2 with RFC 3465 §2.2's limit L = 2*SMSS):
    /// cwnd += min(acked, 2*SMSS), not past ssthresh. Returns the acked bytes
    /// left over once ssthresh is reached, for congestion avoidance.
    pub fn slow_start(&mut self, acked: u64) -> u64 {
        let grow = acked.min(2 * self.mss);
        let room = self.ssthresh.saturating_sub(self.cwnd);
        let step = grow.min(room);
        self.cwnd += step;
        acked - step.min(acked)
    }

    /// Congestion avoidance by byte counting (RFC 5681 §3.1, RFC 3465 §2.1):
    /// one SMSS per cwnd of bytes acknowledged.
    pub fn congestion_avoidance(&mut self, acked: u64) {
        self.bytes_acked += acked;
        if self.bytes_acked >= self.cwnd {
            self.bytes_acked -= self.cwnd;
            self.cwnd += self.mss;
        }
    }

    /// Slow start or congestion avoidance, as cwnd and ssthresh say.
    pub fn grow(&mut self, acked: u64) {
        if self.in_slow_start() {
            let left = self.slow_start(acked);
            if left > 0 && !self.in_slow_start() {
                self.congestion_avoidance(left);
            }
        } else {
            self.congestion_avoidance(acked);
        }
    }

    /// RFC 5681 §3.1 eq. 4: ssthresh = max(FlightSize / 2, 2*SMSS).
    pub fn halve(&mut self, in_flight: u64) {
        self.ssthresh = (in_flight / 2).max(2 * self.mss);
        self.bytes_acked = 0;
        self.stop_hystart();
    }

    /// A loss or timeout: HyStart++ is for the initial slow start only (RFC 9406 §4.3).
    pub fn stop_hystart(&mut self) {
        if let Some(h) = self.hystart.as_mut() {
            h.stop();
        }
    }

    /// Start of fast recovery with SACK (RFC 6675 §5 step 4.2: cwnd = ssthresh);
    /// without SACK the connection adds RFC 5681 §3.2 step 4's inflation.
    pub fn enter_recovery(&mut self, in_flight: u64) {
        self.halve(in_flight);
        self.cwnd = self.ssthresh;
    }

    /// End of fast recovery (RFC 5681 §3.2 step 6): "set cwnd to ssthresh",
    /// deflating the window.
    pub fn deflate(&mut self) {
        self.cwnd = self.ssthresh;
    }

    /// RFC 5681 §3.1: after a timeout cwnd is the loss window, one SMSS.
    pub fn timeout(&mut self, in_flight: u64) {
        self.halve(in_flight);
        self.cwnd = self.mss;
    }

    /// RFC 5681 §4.1: cwnd = min(RW, cwnd) after an idle period.
    pub fn restart(&mut self, restart_window: u64) {
        self.cwnd = self.cwnd.min(restart_window.max(self.mss));
    }
}
