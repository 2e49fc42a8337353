//! HyStart as Linux's CUBIC (tcp_cubic.c) runs it, for a flow that stands in
//! for a Linux kernel flow (`cubic-linux`): from 16 segments of cwnd on, slow
//! start ends (ssthresh = cwnd, straight into congestion avoidance) when
//!
//! - the minimum RTT of the round's first 8 samples exceeds the connection's
//!   lowest RTT by an eighth of it, clamped to 4..16 ms (the delay exit), or
//! - the ACKs of a round keep arriving within 2 ms of each other for longer
//!   than half of (lowest RTT + 1 ms) (the ACK-train exit: the window has
//!   reached the path's BDP). Linux adds up to 1 ms for TSO bursts; 1 ms is
//!   what it adds at rates below about 2 Gbit/s.
//!
//! A round lasts until what was sent when it began is acknowledged; rounds
//! are counted from the first ACK, while cwnd is still below 16, as Linux
//! 6.11 and later count them.
//!
//! RFC 9406's HyStart++ (`hystart`) differs: it compares with the previous
//! round's minimum, not the lowest RTT, has no ACK train, and slows down
//! (CSS) before leaving slow start. A retransmission timeout forgets the
//! lowest RTT and runs HyStart again in the slow start that follows.

use super::AckSample;
use crate::{seq, Nanos, MILLIS};

/// tcp_cubic.c's hystart_low_window: no exit below this cwnd (segments).
pub const LOW_WINDOW: u64 = 16;
/// hystart_ack_delta_us: ACKs further apart break the train.
pub const ACK_DELTA: Nanos = 2 * MILLIS;
/// HYSTART_MIN_SAMPLES: RTT samples of a round before the delay test.
pub const MIN_SAMPLES: u32 = 8;
/// HYSTART_DELAY_MIN / MAX: the delay threshold's clamp.
pub const DELAY_MIN: Nanos = 4 * MILLIS;
pub const DELAY_MAX: Nanos = 16 * MILLIS;
/// hystart_ack_delay() below about 2 Gbit/s of pacing rate.
pub const TSO_ALLOWANCE: Nanos = MILLIS;

/// The detector's state (one per connection).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CubicHyStart {
    /// Slow start was left; nothing more to detect until a timeout.
    pub found: bool,
    /// The lowest RTT seen (delay_min), `None` before the first sample.
    pub delay_min: Option<Nanos>,
    /// The round ends when this is acknowledged; `None`: no round yet.
    end_seq: Option<u32>,
    round_start: Nanos,
    last_ack: Nanos,
    curr_rtt: Option<Nanos>,
    sample_cnt: u32,
}

impl CubicHyStart {
    pub fn new() -> CubicHyStart {
        CubicHyStart::default()
    }

    /// The delay exit's threshold above `delay_min`.
    pub fn delay_thresh(delay_min: Nanos) -> Nanos {
        (delay_min / 8).clamp(DELAY_MIN, DELAY_MAX)
    }

    /// After a timeout: everything forgotten, slow start detected afresh.
    pub fn reset(&mut self) {
        *self = CubicHyStart::new();
    }

    fn start_round(&mut self, now: Nanos, snd_nxt: u32) {
        self.round_start = now;
        self.last_ack = now;
        self.end_seq = Some(snd_nxt);
        self.curr_rtt = None;
        self.sample_cnt = 0;
    }

    /// One ACK of new data; `cwnd_segments` before it grows, `slow_start`
    /// whether cwnd < ssthresh. True: leave slow start now (ssthresh = cwnd).
    pub fn on_ack(&mut self, ack: &AckSample, cwnd_segments: u64, slow_start: bool) -> bool {
        let Some(rtt) = ack.rtt else {
            return false;
        };
        let rtt = rtt.max(1);
        let delay_min = self.delay_min.map_or(rtt, |d| d.min(rtt));
        self.delay_min = Some(delay_min);
        if self.found || !slow_start {
            return false;
        }
        // Rounds are counted from the first ACK, below the low window too,
        // so a round's first 8 samples are its first 8 ACKs wherever cwnd
        // crosses 16 (Linux since 6.11, "tcp_cubic: fix incorrect HyStart
        // round start detection"; before, the first round began at the ACK
        // that found cwnd >= 16, mid-round, and slow start ended earlier).
        if self.end_seq.is_none_or(|end| seq::gt(ack.ack, end)) {
            self.start_round(ack.now, ack.snd_nxt);
        }
        if cwnd_segments < LOW_WINDOW {
            return false;
        }
        // The ACK train: only ACKs close to the previous one extend it.
        if ack.now.saturating_sub(self.last_ack) <= ACK_DELTA {
            self.last_ack = ack.now;
            if ack.now.saturating_sub(self.round_start) > (delay_min + TSO_ALLOWANCE) / 2 {
                self.found = true;
            }
        }
        // The delay: the round's minimum over its first samples.
        self.curr_rtt = Some(self.curr_rtt.map_or(rtt, |c| c.min(rtt)));
        if self.sample_cnt < MIN_SAMPLES {
            self.sample_cnt += 1;
        } else if self
            .curr_rtt
            .is_some_and(|c| c > delay_min + Self::delay_thresh(delay_min))
        {
            self.found = true;
        }
        self.found
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u32 = 1000;

    /// An ACK at `now` of segment `n` (cumulative ack (n+1)*MSS) with `rtt`,
    /// `window` segments sent beyond it.
    fn ack(now: Nanos, n: u32, rtt: Nanos, window: u32) -> AckSample {
        AckSample {
            now,
            acked: MSS as u64,
            rtt: Some(rtt),
            ack: (n + 1) * MSS,
            snd_nxt: (n + 1 + window) * MSS,
            ..AckSample::default()
        }
    }

    #[test]
    fn threshold_is_an_eighth_of_the_lowest_rtt_clamped() {
        assert_eq!(CubicHyStart::delay_thresh(10 * MILLIS), DELAY_MIN);
        assert_eq!(CubicHyStart::delay_thresh(42 * MILLIS), 5_250_000);
        assert_eq!(CubicHyStart::delay_thresh(400 * MILLIS), DELAY_MAX);
    }

    #[test]
    fn delay_exit_compares_with_the_lowest_rtt_not_the_last_round() {
        let mut h = CubicHyStart::new();
        // Round r: 12 ACKs 3 ms apart (no ACK train) from segment 100 * r
        // on, past the previous round's end (20 segments sent beyond).
        // Round 0 at the lowest RTT, 40 ms (threshold 5 ms); then each
        // round 3 ms slower than the last: HyStart++ would never see its
        // threshold (5 ms over the last round), Linux's exits past 45 ms.
        let mut exited_in = None;
        for round in 0..4u32 {
            let rtt = 40 * MILLIS + round as u64 * 3 * MILLIS;
            for j in 0..12 {
                let now = (round as u64 * 100 + j as u64) * 3 * MILLIS;
                if h.on_ack(&ack(now, round * 100 + j, rtt, 20), 20, true) && exited_in.is_none() {
                    exited_in = Some(round);
                }
            }
        }
        assert_eq!(
            exited_in,
            Some(2),
            "46 ms > 40 + 5 in round 2, 43 ms was not"
        );
        assert!(h.found);
        assert_eq!(h.delay_min, Some(40 * MILLIS));
    }

    #[test]
    fn eight_samples_before_the_delay_test() {
        let mut h = CubicHyStart::new();
        assert!(!h.on_ack(&ack(0, 0, 40 * MILLIS, 20), 20, true));
        let mut t = 100 * MILLIS;
        let mut exits = Vec::new();
        for n in 21..31 {
            t += 3 * MILLIS;
            exits.push(h.on_ack(&ack(t, n, 60 * MILLIS, 20), 20, true));
        }
        // samples 1..8 count, the ninth ACK of the round decides
        assert_eq!(exits.iter().position(|&e| e), Some(8));
    }

    #[test]
    fn ack_train_longer_than_half_the_lowest_rtt_exits() {
        let mut h = CubicHyStart::new();
        // 40 ms RTT, ACKs 1 ms apart at a constant RTT: the train passes
        // (40 + 1) / 2 = 20.5 ms at its 22nd ACK (21 ms after the first).
        let mut exit = None;
        for i in 0..40u32 {
            let now = 1_000 * MILLIS + i as u64 * MILLIS;
            if h.on_ack(&ack(now, i, 40 * MILLIS, 64), 64, true) {
                exit = Some(i);
                break;
            }
        }
        assert_eq!(exit, Some(21));
    }

    #[test]
    fn a_gap_in_the_acks_ends_the_train() {
        let mut h = CubicHyStart::new();
        for i in 0..10u32 {
            let now = i as u64 * MILLIS;
            assert!(!h.on_ack(&ack(now, i, 40 * MILLIS, 64), 64, true));
        }
        // 3 ms later: the train is broken for the rest of the round
        for i in 10..60u32 {
            let now = 12 * MILLIS + (i - 10) as u64 * 3 * MILLIS;
            assert!(
                !h.on_ack(&ack(now, i, 40 * MILLIS, 64), 64, true),
                "ack {i}"
            );
        }
    }

    /// Slow start from IW10 through a 1.2 ms-per-segment bottleneck, 42 ms
    /// base RTT; the receiver ACKs each of the first 16 segments (Linux's
    /// quick ACKs) and every second one after. The cwnd HyStart leaves at.
    fn exit_cwnd_from_iw10() -> u64 {
        let service = 1_200_000;
        let base = 42 * MILLIS;
        let mut h = CubicHyStart::new();
        let mut cwnd = 10u64;
        // Segment n (from 0) is sent at sent[n].
        let mut sent: Vec<Nanos> = vec![0; 10];
        let mut free = 0; // the bottleneck is busy until then
        let mut n = 0;
        while n < 400 {
            let acked = if n < 16 { 1 } else { 2 };
            let mut now = 0;
            for &at in &sent[n..n + acked] {
                free = at.max(free) + service;
                now = free + base - service;
            }
            n += acked;
            let a = AckSample {
                now,
                acked: acked as u64 * MSS as u64,
                rtt: Some(now - sent[n - 1]),
                ack: n as u32 * MSS,
                snd_nxt: sent.len() as u32 * MSS,
                ..AckSample::default()
            };
            if h.on_ack(&a, cwnd, true) {
                return cwnd;
            }
            cwnd += acked as u64;
            // slow start: two new segments for each one ACKed
            sent.extend(std::iter::repeat_n(now, 2 * acked));
        }
        panic!("no exit");
    }

    #[test]
    fn rounds_count_from_the_first_ack_below_the_low_window() {
        // Rounds: segments 1-10, 11-30, 31-70, 71-150. Each round's first
        // ACKs come back over the queue the last round left empty (42 ms
        // lowest RTT, threshold 47.25 ms), until round 4's first sample
        // (48 ms): its ninth ACK leaves at cwnd 80 + 8 * 2. Starting the
        // first round where cwnd reached 16 (Linux before 6.11) makes
        // "rounds" that begin in the middle of one and take the slow tail
        // of round 3 (51.6 ms and up) as their first samples: out at 80.
        assert_eq!(exit_cwnd_from_iw10(), 96);
    }

    #[test]
    fn nothing_below_sixteen_segments_or_outside_slow_start() {
        let mut h = CubicHyStart::new();
        for i in 0..40u32 {
            let now = i as u64 * MILLIS;
            assert!(!h.on_ack(&ack(now, i, 90 * MILLIS, 15), 15, true));
            assert!(!h.on_ack(&ack(now, i, 90 * MILLIS, 64), 64, false));
        }
        // but the lowest RTT was learnt
        assert_eq!(h.delay_min, Some(90 * MILLIS));
        h.reset();
        assert_eq!(h, CubicHyStart::new());
    }
}
