//! TCP Vegas (Brakmo & Peterson, "TCP Vegas: End to End Congestion
//! Avoidance on a Global Internet", IEEE JSAC 1995, §3.2 congestion
//! avoidance, §3.3 modified slow start), with Linux tcp_vegas's choices:
//! alpha = 2, beta = 4, gamma = 1 segments; the minimum RTT of the last
//! round trip as the actual RTT; Reno's behaviour while fewer than three
//! RTT samples were taken in a round trip; Reno's response to loss.
//!
//! Slow start is the paper's (§3.3), not Linux's: the window doubles only
//! every other round trip and holds in between, and the exit is tested
//! within the round trip, as soon as three RTT samples of the held window
//! are in. Linux doubles every round trip and tests at the round's end; its
//! minimum RTT then comes from the round's first segments, sent before the
//! doubling built a queue, so it sees the overshoot a round late, after the
//! window doubled again (and overflows a queue of the path's size).

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
    /// Slow start: whether the current round trip holds the window (§3.3).
    holding: bool,
    /// cwnd (bytes) when the current round trip started: in a growing round
    /// after a held one, the window the RTT samples measure.
    round_cwnd: u64,
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
            holding: false,
            round_cwnd: 0,
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
    fn once_per_rtt(&mut self) {
        let mss = self.w.mss;
        let cwnd = self.cwnd_segments();
        let rtt = self.min_rtt;
        let base = self.base_rtt;
        // Integer arithmetic as tcp_vegas: diff = cwnd * (RTT - BaseRTT) / BaseRTT.
        let diff = cwnd * (rtt - base) / base;
        self.last_diff = (cwnd as f64) * (rtt - base) as f64 / base as f64;
        if diff > self.p.beta {
            // §3.2: too much queued: decrease linearly.
            self.w.cwnd = self.w.cwnd.saturating_sub(mss);
            self.w.ssthresh = self.w.ssthresh.min(self.w.cwnd.saturating_sub(mss));
        } else if diff < self.p.alpha {
            // §3.2: too little queued: increase linearly.
            self.w.cwnd += mss;
        }
        self.w.cwnd = self.w.cwnd.max(2 * mss);
    }

    /// Loss, recovery's end, a timeout or an idle restart: the samples of the
    /// round in progress describe another window; the next ACK starts a
    /// new round (tcp_vegas re-enables itself at SND.NXT on these events).
    fn forget_round(&mut self) {
        self.beg_snd_nxt = None;
        self.cnt_rtt = 0;
        self.min_rtt = Nanos::MAX;
    }

    fn start_round(&mut self, snd_nxt: u32) {
        self.beg_snd_nxt = Some(snd_nxt);
        self.round_cwnd = self.w.cwnd;
        self.cnt_rtt = 0;
        self.min_rtt = Nanos::MAX;
    }

    /// §3.3: grow every other round trip; in a growing round, whose RTT
    /// samples measure the window the held round kept fixed, leave slow
    /// start as soon as three samples (tcp_vegas's minimum to trust a
    /// round) put more than gamma segments in the queue, with cwnd set to
    /// what the path delivered (tcp_vegas: target + 1).
    fn slow_start(&mut self, acked: u64) {
        if self.holding {
            return;
        }
        if self.cnt_rtt > 2 && self.base_rtt < Nanos::MAX {
            let mss = self.w.mss;
            let held = self.round_cwnd / mss;
            let (rtt, base) = (self.min_rtt, self.base_rtt);
            let diff = held * (rtt - base) / base;
            if diff > self.p.gamma {
                self.last_diff = (held as f64) * (rtt - base) as f64 / base as f64;
                let target = held * base / rtt;
                self.w.cwnd = self.w.cwnd.min((target + 1) * mss).max(2 * mss);
                self.w.ssthresh = self.w.ssthresh.min(self.w.cwnd.saturating_sub(mss));
                self.cnt_rtt = 0;
                self.min_rtt = Nanos::MAX;
                return;
            }
        }
        self.w.slow_start(acked);
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
            self.start_round(ack.snd_nxt);
            self.holding = false;
            self.slow_start(ack.acked);
            return;
        };
        if self.w.in_slow_start() {
            if seq::gt(ack.ack, beg_snd_nxt) {
                self.start_round(ack.snd_nxt);
                self.holding = !self.holding;
            }
            self.slow_start(ack.acked);
            return;
        }
        if seq::gt(ack.ack, beg_snd_nxt) {
            // A round trip ended: decide once, start the next one.
            self.beg_snd_nxt = Some(ack.snd_nxt);
            if self.cnt_rtt <= 2 {
                // Too few samples to trust: Reno (as tcp_vegas).
                self.w.grow(ack.acked);
            } else {
                self.once_per_rtt();
            }
            self.cnt_rtt = 0;
            self.min_rtt = Nanos::MAX;
        }
    }
    fn on_congestion_event(&mut self, _now: Nanos, in_flight: u64) {
        self.w.enter_recovery(in_flight);
        self.forget_round();
    }
    fn on_recovery_exit(&mut self, _now: Nanos, _in_flight: u64) {
        self.w.deflate();
        self.forget_round();
    }
    fn on_rto(&mut self, _now: Nanos, in_flight: u64) {
        self.w.timeout(in_flight);
        self.forget_round();
    }
    fn on_idle_restart(&mut self, _now: Nanos, rw: u64) {
        self.w.restart(rw);
        self.forget_round();
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

    /// One slow-start round trip of a window-limited sender: an ACK per
    /// segment of the window sent in the previous round (`*sent` segments),
    /// each with RTT `rtt`; returns cwnd (segments) after each ACK.
    fn ss_round(v: &mut Vegas, una: &mut u32, sent: &mut u32, rtt: Nanos) -> Vec<u64> {
        let mut windows = Vec::new();
        let mut next_sent = 0;
        for _ in 0..*sent {
            // Everything the window allowed is sent: SND.NXT = SND.UNA + cwnd.
            let snd_nxt = una.wrapping_add(v.window() as u32);
            *una = una.wrapping_add(MSS as u32);
            let s = AckSample {
                acked: MSS,
                rtt: Some(rtt),
                ack: *una,
                snd_nxt,
                ..AckSample::default()
            };
            v.on_ack(&s);
            windows.push(v.window() / MSS);
            next_sent = v.window() / MSS;
        }
        *sent = next_sent as u32;
        windows
    }

    #[test]
    fn slow_start_grows_every_other_round_trip() {
        let mut v = Vegas::new(MSS, 4 * MSS, VegasParams::default());
        let (mut una, mut sent) = (7u32, 4u32);
        // The first round grows (4 -> 8), the next holds, the next grows (8 -> 16).
        assert_eq!(
            ss_round(&mut v, &mut una, &mut sent, 100 * MS),
            [5, 6, 7, 8]
        );
        assert_eq!(ss_round(&mut v, &mut una, &mut sent, 100 * MS), [8; 8]);
        let grown = ss_round(&mut v, &mut una, &mut sent, 100 * MS);
        assert_eq!(grown, (9..=16).collect::<Vec<u64>>());
        assert_eq!(ss_round(&mut v, &mut una, &mut sent, 100 * MS), [16; 16]);
        assert!(v.w.in_slow_start());
    }

    #[test]
    fn leaves_slow_start_within_the_round_above_gamma() {
        let mut v = Vegas::new(MSS, 10 * MSS, VegasParams::default());
        let (mut una, mut sent) = (7u32, 10u32);
        ss_round(&mut v, &mut una, &mut sent, 100 * MS); // 10 -> 20
        ss_round(&mut v, &mut una, &mut sent, 110 * MS); // holds 20, RTT not sampled for the exit
        assert_eq!(v.window(), 20 * MSS);
        assert!(v.w.in_slow_start(), "a held round does not decide");
        // The samples of the held window of 20: RTT 110 ms over a base of 100.
        // diff = 20 * 10 / 100 = 2 > gamma = 1 at the third sample after the
        // ACK that ended the round (its own sample counts for the old round,
        // as in tcp_vegas); cwnd = min(cwnd, 20 * 100 / 110 + 1) = 19.
        assert_eq!(diff(20, 110, 100), 2);
        let w = ss_round(&mut v, &mut una, &mut sent, 110 * MS);
        assert_eq!(&w[..4], [21, 22, 23, 19]);
        assert!(!v.w.in_slow_start());
        assert_eq!(v.ssthresh(), 18 * MSS);
    }

    #[test]
    fn stays_in_slow_start_at_gamma() {
        let mut v = Vegas::new(MSS, 10 * MSS, VegasParams::default());
        let (mut una, mut sent) = (7u32, 10u32);
        ss_round(&mut v, &mut una, &mut sent, 100 * MS);
        ss_round(&mut v, &mut una, &mut sent, 100 * MS);
        // diff = 20 * 5 / 100 = 1 = gamma: not above it, keep growing.
        assert_eq!(diff(20, 105, 100), 1);
        let w = ss_round(&mut v, &mut una, &mut sent, 105 * MS);
        assert_eq!(*w.last().unwrap(), 40);
        assert!(v.w.in_slow_start());
    }

    #[test]
    fn a_loss_forgets_the_round_in_progress() {
        let (mut v, mut una) = in_avoidance(20);
        // Two samples of a queue (RTT 300 ms) in a round that has not ended.
        v.beg_snd_nxt = Some(una.wrapping_add(50 * MSS as u32));
        for _ in 0..2 {
            una = una.wrapping_add(MSS as u32);
            v.on_ack(&AckSample {
                acked: MSS,
                rtt: Some(300 * MS),
                ack: una,
                snd_nxt: una.wrapping_add(20 * MSS as u32),
                ..AckSample::default()
            });
        }
        v.on_congestion_event(0, 20 * MSS);
        v.on_recovery_exit(0, 10 * MSS);
        let after_recovery = v.window();
        // The first ACK after recovery, past the old round's end: it starts a
        // round; the stale samples (three with it) decide nothing.
        una = una.wrapping_add(60 * MSS as u32);
        v.on_ack(&AckSample {
            acked: MSS,
            rtt: Some(100 * MS),
            ack: una,
            snd_nxt: una.wrapping_add(10 * MSS as u32),
            ..AckSample::default()
        });
        assert_eq!(v.window(), after_recovery);
        assert_eq!(v.beg_snd_nxt, Some(una.wrapping_add(10 * MSS as u32)));
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
