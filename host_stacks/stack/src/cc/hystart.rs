//! HyStart++ (RFC 9406): slow start that leaves early when the round trip's
//! minimum RTT rises, through a few rounds of Conservative Slow Start (CSS)
//! that undo the exit if the rise was jitter. Used by Reno, NewReno and
//! Cubic through [`RenoWindow`](super::RenoWindow) when enabled; only in the
//! initial slow start (§4.3: after a loss or a timeout, standard slow start).

use super::{AckSample, RenoWindow};
use crate::{seq, Nanos, MILLIS};

/// §4.3's constants.
pub const MIN_RTT_THRESH: Nanos = 4 * MILLIS;
pub const MAX_RTT_THRESH: Nanos = 16 * MILLIS;
pub const MIN_RTT_DIVISOR: u64 = 8;
pub const N_RTT_SAMPLE: u32 = 8;
pub const CSS_GROWTH_DIVISOR: u64 = 4;
pub const CSS_ROUNDS: u32 = 5;
/// L of §4.2 for a sender that does not pace: at most 8 SMSS per ACK.
pub const L_UNPACED: u64 = 8;

/// Where HyStart++ is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Standard slow start with the delay-increase test.
    SlowStart,
    /// Conservative Slow Start since the exit, with its baseline RTT and
    /// the rounds it has lasted.
    Css { baseline: Nanos, rounds: u32 },
    /// Done: congestion avoidance, or slow start after a loss (standard).
    Off,
}

/// HyStart++ state (§4.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HyStart {
    pub phase: Phase,
    last_round_min_rtt: Option<Nanos>,
    current_round_min_rtt: Option<Nanos>,
    rtt_sample_count: u32,
    /// The round ends when this sequence number is acknowledged; `None`
    /// until the first ACK starts the first round.
    window_end: Option<u32>,
}

impl Default for HyStart {
    fn default() -> HyStart {
        HyStart::new()
    }
}

impl HyStart {
    pub fn new() -> HyStart {
        HyStart {
            phase: Phase::SlowStart,
            last_round_min_rtt: None,
            current_round_min_rtt: None,
            rtt_sample_count: 0,
            window_end: None,
        }
    }

    /// The RTT rise that ends slow start, given last round's minimum (§4.2).
    pub fn rtt_thresh(last_round_min_rtt: Nanos) -> Nanos {
        (last_round_min_rtt / MIN_RTT_DIVISOR).clamp(MIN_RTT_THRESH, MAX_RTT_THRESH)
    }

    /// A loss or a timeout ends HyStart++ for the connection (§4.2, §4.3).
    pub fn stop(&mut self) {
        self.phase = Phase::Off;
    }

    pub fn active(&self) -> bool {
        self.phase != Phase::Off
    }

    fn start_round(&mut self, snd_nxt: u32) {
        self.last_round_min_rtt = self.current_round_min_rtt;
        self.current_round_min_rtt = None;
        self.rtt_sample_count = 0;
        self.window_end = Some(snd_nxt);
    }

    /// One ACK of new data while cwnd < ssthresh: grows `w` by §4.2's rules
    /// and may leave slow start (into CSS) or CSS (into congestion
    /// avoidance: ssthresh = cwnd). Returns the acked bytes left over for
    /// congestion avoidance, as `RenoWindow::slow_start` does.
    pub fn on_ack(&mut self, ack: &AckSample, w: &mut RenoWindow) -> u64 {
        let new_round = self.window_end.is_none_or(|end| seq::gt(ack.ack, end));
        if new_round {
            self.start_round(ack.snd_nxt);
            if let Phase::Css { baseline, rounds } = self.phase {
                if rounds + 1 >= CSS_ROUNDS {
                    // §4.2: CSS_ROUNDS of CSS: congestion avoidance.
                    self.phase = Phase::Off;
                    w.ssthresh = w.cwnd;
                    return ack.acked;
                }
                self.phase = Phase::Css {
                    baseline,
                    rounds: rounds + 1,
                };
            }
        }
        if let Some(rtt) = ack.rtt {
            self.current_round_min_rtt =
                Some(self.current_round_min_rtt.map_or(rtt, |m| m.min(rtt)));
            self.rtt_sample_count += 1;
        }
        let sampled = self.rtt_sample_count >= N_RTT_SAMPLE;
        match (
            self.phase,
            self.current_round_min_rtt,
            self.last_round_min_rtt,
        ) {
            (Phase::SlowStart, Some(current), Some(last))
                if sampled && current >= last + Self::rtt_thresh(last) =>
            {
                // §4.2: the round's RTT rose by RttThresh: CSS.
                self.phase = Phase::Css {
                    baseline: current,
                    rounds: 0,
                };
            }
            (Phase::Css { baseline, .. }, Some(current), _) if sampled && current < baseline => {
                // §4.2: the exit was spurious: back to slow start.
                self.phase = Phase::SlowStart;
            }
            _ => {}
        }
        let grow = ack.acked.min(L_UNPACED * w.mss);
        let grow = match self.phase {
            Phase::Css { .. } => grow / CSS_GROWTH_DIVISOR,
            _ => grow,
        };
        let step = grow.min(w.ssthresh.saturating_sub(w.cwnd));
        w.cwnd += step;
        if w.cwnd >= w.ssthresh {
            ack.acked.saturating_sub(step)
        } else {
            0
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;

    /// A window-limited sender's round: one ACK per segment of the last
    /// round's window (`*sent`), each with RTT `rtt`; returns cwnd
    /// (segments) after the round.
    fn round(
        h: &mut HyStart,
        w: &mut RenoWindow,
        una: &mut u32,
        sent: &mut u64,
        rtt: Nanos,
    ) -> u64 {
        let n = *sent;
        for _ in 0..n {
            let snd_nxt = una.wrapping_add(w.cwnd as u32);
            *una = una.wrapping_add(MSS as u32);
            let a = AckSample {
                acked: MSS,
                rtt: Some(rtt),
                ack: *una,
                snd_nxt,
                ..AckSample::default()
            };
            if w.in_slow_start() {
                h.on_ack(&a, w);
            }
        }
        *sent = w.cwnd / MSS;
        w.cwnd / MSS
    }

    fn start(iw: u64) -> (HyStart, RenoWindow, u32, u64) {
        (
            HyStart::new(),
            RenoWindow::new(MSS, iw * MSS),
            u32::MAX - 5_000,
            iw,
        )
    }

    #[test]
    fn rtt_threshold_is_an_eighth_clamped_to_4_and_16_ms() {
        assert_eq!(HyStart::rtt_thresh(10 * MILLIS), 4 * MILLIS);
        assert_eq!(HyStart::rtt_thresh(80 * MILLIS), 10 * MILLIS);
        assert_eq!(HyStart::rtt_thresh(500 * MILLIS), 16 * MILLIS);
    }

    #[test]
    fn doubles_while_the_rtt_stays_and_limits_growth_per_ack() {
        let (mut h, mut w, mut una, mut sent) = start(10);
        for want in [20, 40, 80, 160] {
            assert_eq!(
                round(&mut h, &mut w, &mut una, &mut sent, 100 * MILLIS),
                want
            );
        }
        assert_eq!(h.phase, Phase::SlowStart);
        // A stretch ACK of 20 segments grows by L = 8 segments.
        let a = AckSample {
            acked: 20 * MSS,
            ack: una.wrapping_add(20 * MSS as u32),
            snd_nxt: una.wrapping_add(200 * MSS as u32),
            ..AckSample::default()
        };
        h.on_ack(&a, &mut w);
        assert_eq!(w.cwnd, 168 * MSS);
    }

    #[test]
    fn rtt_rise_of_the_threshold_enters_css_which_grows_a_quarter() {
        let (mut h, mut w, mut una, mut sent) = start(10);
        round(&mut h, &mut w, &mut una, &mut sent, 100 * MILLIS); // 20
        round(&mut h, &mut w, &mut una, &mut sent, 100 * MILLIS); // 40
                                                                  // RttThresh = 100 / 8 = 12.5 ms: a rise of 12 ms keeps slow start.
        assert_eq!(round(&mut h, &mut w, &mut una, &mut sent, 112 * MILLIS), 80);
        assert_eq!(h.phase, Phase::SlowStart);
        // Next round against 112: threshold 14 ms. At 126 ms the eighth
        // sample exits: seven ACKs at full rate, then a quarter per segment.
        let cwnd = round(&mut h, &mut w, &mut una, &mut sent, 126 * MILLIS);
        assert_eq!(
            h.phase,
            Phase::Css {
                baseline: 126 * MILLIS,
                rounds: 0
            }
        );
        assert_eq!(w.cwnd, (80 + 7) * MSS + (80 - 7) * MSS / 4);
        assert_eq!(cwnd, 105);
        assert_eq!(w.ssthresh, u64::MAX, "CSS is still slow start");
    }

    #[test]
    fn css_ends_after_five_rounds_with_ssthresh_at_cwnd() {
        let (mut h, mut w, mut una, mut sent) = start(10);
        round(&mut h, &mut w, &mut una, &mut sent, 100 * MILLIS);
        round(&mut h, &mut w, &mut una, &mut sent, 100 * MILLIS);
        round(&mut h, &mut w, &mut una, &mut sent, 120 * MILLIS);
        assert!(matches!(h.phase, Phase::Css { rounds: 0, .. }));
        for r in 1..CSS_ROUNDS {
            let before = w.cwnd;
            round(&mut h, &mut w, &mut una, &mut sent, 120 * MILLIS);
            assert_eq!(
                h.phase,
                Phase::Css {
                    baseline: 120 * MILLIS,
                    rounds: r
                }
            );
            // a quarter of the acknowledged bytes per round (one per segment)
            assert_eq!(w.cwnd - before, before / MSS * (MSS / CSS_GROWTH_DIVISOR));
        }
        let before = w.cwnd;
        round(&mut h, &mut w, &mut una, &mut sent, 120 * MILLIS);
        assert_eq!(h.phase, Phase::Off);
        assert_eq!(w.ssthresh, before, "ssthresh = cwnd at the end of CSS");
        assert!(!w.in_slow_start());
    }

    #[test]
    fn rtt_back_below_the_baseline_resumes_slow_start() {
        let (mut h, mut w, mut una, mut sent) = start(10);
        round(&mut h, &mut w, &mut una, &mut sent, 100 * MILLIS);
        round(&mut h, &mut w, &mut una, &mut sent, 100 * MILLIS);
        round(&mut h, &mut w, &mut una, &mut sent, 120 * MILLIS);
        assert!(matches!(h.phase, Phase::Css { .. }));
        // 119 ms < baseline 120 ms after eight samples: jitter, not a queue.
        round(&mut h, &mut w, &mut una, &mut sent, 119 * MILLIS);
        assert_eq!(h.phase, Phase::SlowStart);
        let before = w.cwnd / MSS;
        assert_eq!(
            round(&mut h, &mut w, &mut una, &mut sent, 119 * MILLIS),
            2 * before
        );
    }

    #[test]
    fn fewer_than_eight_samples_never_decide() {
        // Rounds of 2 and 4 ACKs with a fivefold RTT: too few samples.
        let (mut h, mut w, mut una, mut sent) = start(2);
        round(&mut h, &mut w, &mut una, &mut sent, 100 * MILLIS);
        round(&mut h, &mut w, &mut una, &mut sent, 500 * MILLIS);
        assert_eq!(h.phase, Phase::SlowStart);
        assert_eq!(w.cwnd, 8 * MSS);
    }

    #[test]
    fn stopped_is_standard_slow_start_for_the_window() {
        let mut h = HyStart::new();
        h.stop();
        assert!(!h.active());
    }
}
