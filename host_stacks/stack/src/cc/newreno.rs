//! NewReno (RFC 6582): Reno's window rules, recovery that lasts until the
//! recovery point is acknowledged, and the exit rule of §3.2 step 6.

use super::{AckSample, CongestionControl, RecoveryStyle, RenoWindow};
use crate::Nanos;

/// RFC 6582 NewReno.
#[derive(Clone, Debug)]
pub struct NewReno {
    w: RenoWindow,
}

impl NewReno {
    pub fn new(mss: u64, iw: u64) -> NewReno {
        NewReno {
            w: RenoWindow::new(mss, iw),
        }
    }
}

impl CongestionControl for NewReno {
    fn name(&self) -> &'static str {
        "newreno"
    }
    fn on_ack(&mut self, ack: &AckSample) {
        self.w.grow_ack(ack);
    }
    fn enable_hystart(&mut self) {
        self.w.enable_hystart();
    }
    fn on_congestion_event(&mut self, _now: Nanos, in_flight: u64) {
        // §3.2 step 2 -> RFC 5681 §3.2 step 2 (eq. 4).
        self.w.enter_recovery(in_flight);
    }
    fn on_recovery_exit(&mut self, _now: Nanos, in_flight: u64) {
        // §3.2 step 6, option (1): cwnd = min(ssthresh, max(FlightSize, SMSS) + SMSS).
        let mss = self.w.mss;
        self.w.cwnd = self.w.ssthresh.min(in_flight.max(mss) + mss);
    }
    fn on_rto(&mut self, _now: Nanos, in_flight: u64) {
        self.w.timeout(in_flight);
    }
    fn on_idle_restart(&mut self, _now: Nanos, rw: u64) {
        self.w.restart(rw);
    }
    fn window(&self) -> u64 {
        self.w.cwnd
    }
    fn ssthresh(&self) -> u64 {
        self.w.ssthresh
    }
    fn recovery_style(&self) -> RecoveryStyle {
        RecoveryStyle::NewReno
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_sets_min_of_ssthresh_and_flight_plus_mss() {
        let mss = 1000;
        let mut r = NewReno::new(mss, 10 * mss);
        r.on_congestion_event(0, 30 * mss);
        assert_eq!(r.ssthresh(), 15 * mss);
        r.on_recovery_exit(0, 4 * mss);
        assert_eq!(r.window(), 5 * mss);
        r.on_congestion_event(0, 30 * mss);
        r.on_recovery_exit(0, 0);
        assert_eq!(r.window(), 2 * mss, "max(FlightSize, SMSS) + SMSS");
        r.on_congestion_event(0, 30 * mss);
        r.on_recovery_exit(0, 40 * mss);
        assert_eq!(r.window(), 15 * mss);
        assert_eq!(r.recovery_style(), RecoveryStyle::NewReno);
        r.on_ack(&AckSample {
            acked: 15 * mss,
            ..AckSample::default()
        });
        assert_eq!(r.window(), 16 * mss);
    }
}
