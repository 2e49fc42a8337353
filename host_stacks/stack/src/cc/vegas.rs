//! TCP Vegas (Brakmo & Peterson, "TCP Vegas: End to End Congestion
//! Avoidance on a Global Internet", IEEE JSAC 1995, §3.2 congestion
//! avoidance, §3.3 modified slow start), with Linux tcp_vegas's choices:
//! alpha = 2, beta = 4, gamma = 1 segments; the minimum RTT of the last
//! round trip as the actual RTT; Reno's behaviour while fewer than three
//! RTT samples were taken in a round trip; Reno's response to loss.

use super::{AckSample, CcMetrics, CongestionControl, RenoWindow};
use crate::{seq, Nanos};

/// Vegas thresholds, in segments of queue at the bottleneck.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VegasParams {
    pub alpha: u64,
    pub beta: u64,
    pub gamma: u64,
}

impl Default for VegasParams {
    fn default() -> VegasParams {
        VegasParams {
            alpha: 2,
            beta: 4,
            gamma: 1,
        }
    }
}

/// TCP Vegas.
#[derive(Clone, Debug)]
pub struct Vegas {
    p: VegasParams,
    w: RenoWindow,
    /// BaseRTT: the lowest RTT seen (§3.2).
    base_rtt: Nanos,
    /// Lowest RTT sample in the current round trip.
    min_rtt: Nanos,
    /// RTT samples in the current round trip.
    cnt_rtt: u32,
    /// The round trip ends when this sequence number is acknowledged; `None`
    /// until the first ACK starts the first round (as tcp_vegas starts it at
    /// the connection's SND.NXT: any fixed number would lie "in the future"
    /// of half of all initial sequence numbers, and no round would end).
    beg_snd_nxt: Option<u32>,
    /// diff of the last decision (segments), for measurements.
    last_diff: f64,
}

impl Vegas {
    pub fn new(mss: u64, iw: u64, p: VegasParams) -> Vegas {
        Vegas {
            p,
            w: RenoWindow::new(mss, iw),
            base_rtt: Nanos::MAX,
            min_rtt: Nanos::MAX,
            cnt_rtt: 0,
            beg_snd_nxt: None,
            last_diff: 0.0,
        }
    }

    /// BaseRTT so far.
    pub fn base_rtt(&self) -> Nanos {
        self.base_rtt
    }

    fn cwnd_segments(&self) -> u64 {
        self.w.cwnd / self.w.mss
    }

    /// One decision per round trip (§3.2): Expected = cwnd / BaseRTT,
    /// Actual = cwnd / RTT, diff = (Expected - Actual) * BaseRTT, in segments.
    fn once_per_rtt(&mut self, acked: u64) {
        let mss = self.w.mss;
        let cwnd = self.cwnd_segments();
        let rtt = self.min_rtt;
        let base = self.base_rtt;
        // Integer arithmetic as tcp_vegas: target = cwnd * BaseRTT / RTT,
        // diff = cwnd * (RTT - BaseRTT) / BaseRTT.
        let target = cwnd * base / rtt;
        let diff = cwnd * (rtt - base) / base;
        self.last_diff = (cwnd as f64) * (rtt - base) as f64 / base as f64;
        if diff > self.p.gamma && self.w.in_slow_start() {
            // §3.3: leave slow start when the queue passes gamma; cwnd drops
            // to the rate the path actually gave.
            let seg = cwnd.min(target + 1);
            self.w.cwnd = seg * mss;
            self.w.ssthresh = self.w.ssthresh.min(self.w.cwnd.saturating_sub(mss));
        } else if self.w.in_slow_start() {
            self.w.slow_start(acked);
        } else if diff > self.p.beta {
            // §3.2: too much queued: decrease linearly.
            self.w.cwnd = self.w.cwnd.saturating_sub(mss);
            self.w.ssthresh = self.w.ssthresh.min(self.w.cwnd.saturating_sub(mss));
        } else if diff < self.p.alpha {
            // §3.2: too little queued: increase linearly.
            self.w.cwnd += mss;
        }
        self.w.cwnd = self.w.cwnd.max(2 * mss);
    }
}

impl CongestionControl for Vegas {
    fn name(&self) -> &'static str {
        "vegas"
    }
    fn on_ack(&mut self, ack: &AckSample) {
        if let Some(rtt) = ack.rtt {
            let rtt = rtt.max(1);
            self.base_rtt = self.base_rtt.min(rtt);
            self.min_rtt = self.min_rtt.min(rtt);
            self.cnt_rtt += 1;
        }
        let Some(beg_snd_nxt) = self.beg_snd_nxt else {
            // The first ACK: the first round trip ends when what is sent now is acknowledged.
            self.beg_snd_nxt = Some(ack.snd_nxt);
            if self.w.in_slow_start() {
                self.w.slow_start(ack.acked);
            }
            return;
        };
        if seq::gt(ack.ack, beg_snd_nxt) {
            // A round trip ended: decide once, start the next one.
            self.beg_snd_nxt = Some(ack.snd_nxt);
            if self.cnt_rtt <= 2 {
                // Too few samples to trust: Reno (as tcp_vegas).
                self.w.grow(ack.acked);
            } else {
                self.once_per_rtt(ack.acked);
            }
            self.cnt_rtt = 0;
            self.min_rtt = Nanos::MAX;
        } else if self.w.in_slow_start() {
            self.w.slow_start(ack.acked);
        }
    }
    fn on_congestion_event(&mut self, _now: Nanos, in_flight: u64) {
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
    fn metrics(&self) -> CcMetrics {
        let base = if self.base_rtt == Nanos::MAX {
            0.0
        } else {
            self.base_rtt as f64
        };
        CcMetrics {
            cwnd: self.w.cwnd,
            ssthresh: self.w.ssthresh,
            extra: [("diff", self.last_diff), ("base_rtt_ns", base)],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;
    const MS: u64 = 1_000_000;

    /// Drive one round trip: `n` ACKs with RTT `rtt`, the last one ending the round.
    fn round(v: &mut Vegas, una: &mut u32, rtt: Nanos, n: u32) {
        v.beg_snd_nxt = Some(una.wrapping_add((n - 1) * MSS as u32));
        for _ in 0..n {
            *una = una.wrapping_add(MSS as u32);
            let s = AckSample {
                acked: MSS,
                rtt: Some(rtt),
                ack: *una,
                snd_nxt: una.wrapping_add(100 * MSS as u32),
                ..AckSample::default()
            };
            v.on_ack(&s);
        }
    }

    /// Vegas in congestion avoidance at `cwnd` segments with BaseRTT 100 ms.
    fn in_avoidance(cwnd: u64) -> (Vegas, u32) {
        let mut v = Vegas::new(MSS, cwnd * MSS, VegasParams::default());
        v.w.ssthresh = 2 * MSS; // out of slow start
        let mut una = 1;
        // Two samples only: Reno's rule, too little acked to grow.
        round(&mut v, &mut una, 100 * MS, 2);
        assert_eq!(v.window(), cwnd * MSS);
        assert_eq!(v.base_rtt(), 100 * MS);
        (v, una)
    }

    /// Independent recomputation of the integer diff.
    fn diff(cwnd: u64, rtt: u64, base: u64) -> u64 {
        cwnd * (rtt - base) / base
    }

    #[test]
    fn grows_when_diff_below_alpha() {
        let (mut v, mut una) = in_avoidance(20);
        // RTT 105 ms: diff = 20 * 5 / 100 = 1 < alpha = 2.
        assert_eq!(diff(20, 105, 100), 1);
        round(&mut v, &mut una, 105 * MS, 5);
        assert_eq!(v.window(), 21 * MSS);
    }

    #[test]
    fn holds_between_alpha_and_beta() {
        let (mut v, mut una) = in_avoidance(20);
        // RTT 115 ms: diff = 3, alpha <= 3 <= beta.
        assert_eq!(diff(20, 115, 100), 3);
        round(&mut v, &mut una, 115 * MS, 5);
        assert_eq!(v.window(), 20 * MSS);
    }

    #[test]
    fn shrinks_when_diff_above_beta() {
        let (mut v, mut una) = in_avoidance(20);
        // RTT 130 ms: diff = 6 > beta = 4.
        assert_eq!(diff(20, 130, 100), 6);
        round(&mut v, &mut una, 130 * MS, 5);
        assert_eq!(v.window(), 19 * MSS);
        assert!((v.metrics().extra[0].1 - 6.0).abs() < 1e-9);
    }

    #[test]
    fn leaves_slow_start_above_gamma() {
        let mut v = Vegas::new(MSS, 20 * MSS, VegasParams::default());
        let mut una = 1;
        round(&mut v, &mut una, 100 * MS, 2);
        // Four slow-start ACKs (+1 segment each) come before the deciding one.
        let w = v.window() / MSS + 4;
        round(&mut v, &mut una, 120 * MS, 5);
        // RTT 120 ms: diff = w * 20 / 100 > gamma; cwnd = min(w, w * 100 / 120 + 1).
        assert!(diff(w, 120, 100) > 1);
        assert_eq!(v.window(), (w * 100 / 120 + 1).min(w) * MSS);
        assert!(!v.w.in_slow_start());
    }

    /// A sender whose first data segment is `isn + 1`, one ACK per segment,
    /// on a path of 20 segments' BDP and 100 ms base RTT: the RTT grows with
    /// the queue (cwnd beyond the BDP). Returns Vegas after `acks` ACKs.
    fn through_a_queue(isn: u32, acks: u32) -> Vegas {
        let mut v = Vegas::new(MSS, 10 * MSS, VegasParams::default());
        let bdp = 20;
        let mut una = isn.wrapping_add(1);
        for _ in 0..acks {
            una = una.wrapping_add(MSS as u32);
            let flight = v.window() / MSS;
            let rtt = 100 * MS * flight.max(bdp) / bdp;
            let s = AckSample {
                acked: MSS,
                rtt: Some(rtt),
                ack: una,
                snd_nxt: una.wrapping_add(v.window() as u32),
                ..AckSample::default()
            };
            v.on_ack(&s);
        }
        v
    }

    #[test]
    fn rounds_end_whatever_the_initial_sequence_number() {
        let isns = [
            0,
            5,
            0x7fff_fff0,
            0x8000_0000,
            3_000_000_000,
            u32::MAX - 10,
            u32::MAX,
        ];
        for isn in isns {
            let v = through_a_queue(isn, 3000);
            assert!(
                !v.w.in_slow_start(),
                "ISN {isn}: Vegas never left slow start (cwnd {})",
                v.window() / MSS
            );
            // diff stays near alpha..beta: cwnd within a few segments of the BDP.
            let cwnd = v.window() / MSS;
            assert!((18..=26).contains(&cwnd), "ISN {isn}: cwnd {cwnd}");
        }
    }

    #[test]
    fn reno_with_too_few_samples_and_floor_of_two() {
        let (mut v, mut una) = in_avoidance(3);
        round(&mut v, &mut una, 300 * MS, 2);
        assert!(
            v.window() >= 3 * MSS,
            "two samples: Reno, no Vegas decrease"
        );
        for _ in 0..5 {
            round(&mut v, &mut una, 300 * MS, 5);
        }
        assert_eq!(v.window(), 2 * MSS, "decreases, never below two segments");
    }
}
