//! Reno (RFC 5681): slow start, congestion avoidance, fast retransmit and
//! fast recovery that ends on the first ACK of new data (§3.2 step 6).

use super::{AckSample, CongestionControl, RecoveryStyle, RenoWindow};
use crate::Nanos;

/// RFC 5681 Reno.
#[derive(Clone, Debug)]
pub struct Reno {
    w: RenoWindow,
}

impl Reno {
    pub fn new(mss: u64, iw: u64) -> Reno {
        Reno {
            w: RenoWindow::new(mss, iw),
        }
    }
}

impl CongestionControl for Reno {
    fn name(&self) -> &'static str {
        "reno"
    }
    fn on_ack(&mut self, ack: &AckSample) {
        self.w.grow_ack(ack);
    }
    fn enable_hystart(&mut self) {
        self.w.enable_hystart();
    }
    fn on_congestion_event(&mut self, _now: Nanos, in_flight: u64) {
        // §3.2 step 2: ssthresh = max(FlightSize/2, 2*SMSS); step 3's
        // "+ 3*SMSS" inflation is the connection's (it is a pipe estimate).
        self.w.enter_recovery(in_flight);
    }
    fn on_recovery_exit(&mut self, _now: Nanos, _in_flight: u64) {
        self.w.deflate();
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
        RecoveryStyle::Reno
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;

    fn ack(acked: u64) -> AckSample {
        AckSample {
            acked,
            ..AckSample::default()
        }
    }

    #[test]
    fn slow_start_grows_by_acked_up_to_two_mss() {
        let mut r = Reno::new(MSS, 10 * MSS);
        r.on_ack(&ack(MSS));
        assert_eq!(r.window(), 11 * MSS);
        r.on_ack(&ack(5 * MSS)); // RFC 3465 L = 2*SMSS
        assert_eq!(r.window(), 13 * MSS);
        // Doubling per round trip: a window of ACKs, one per segment.
        let start = r.window();
        for _ in 0..start / MSS {
            r.on_ack(&ack(MSS));
        }
        assert_eq!(r.window(), 2 * start);
    }

    #[test]
    fn congestion_avoidance_adds_one_mss_per_window() {
        let mut r = Reno::new(MSS, 10 * MSS);
        r.on_congestion_event(0, 20 * MSS);
        assert_eq!((r.window(), r.ssthresh()), (10 * MSS, 10 * MSS));
        r.on_recovery_exit(0, 0);
        for _ in 0..9 {
            r.on_ack(&ack(MSS));
        }
        assert_eq!(
            r.window(),
            10 * MSS,
            "no growth before a full window is acked"
        );
        r.on_ack(&ack(MSS));
        assert_eq!(r.window(), 11 * MSS);
        for _ in 0..11 {
            r.on_ack(&ack(MSS));
        }
        assert_eq!(r.window(), 12 * MSS);
    }

    #[test]
    fn slow_start_stops_at_ssthresh_and_rest_goes_to_avoidance() {
        let mut r = Reno::new(MSS, 2 * MSS);
        r.on_rto(0, 9 * MSS); // ssthresh = 4.5 MSS, cwnd = 1 MSS
        assert_eq!((r.window(), r.ssthresh()), (MSS, 4500));
        r.on_ack(&ack(2 * MSS));
        r.on_ack(&ack(2 * MSS));
        assert_eq!(r.window(), 4500, "capped at ssthresh");
    }

    #[test]
    fn loss_halves_flight_with_floor_of_two_mss() {
        let mut r = Reno::new(MSS, 10 * MSS);
        r.on_congestion_event(0, 3 * MSS);
        assert_eq!(r.ssthresh(), 2 * MSS);
        r.on_rto(0, 40 * MSS);
        assert_eq!((r.window(), r.ssthresh()), (MSS, 20 * MSS));
        r.on_idle_restart(0, 10 * MSS);
        assert_eq!(r.window(), MSS);
        assert_eq!(r.recovery_style(), RecoveryStyle::Reno);
    }
}
