//! CUBIC as Linux's tcp_cubic.c runs it (`cubic-linux`), for a flow that
//! stands in for, or is compared with, a Linux kernel Cubic flow. Where it
//! differs from RFC 9438 (`cc/cubic.rs`):
//!
//! - **Reno-friendly estimate.** Linux counts ACKed segments (`ack_cnt`) and
//!   adds one segment to its Reno estimate `tcp_cwnd` per
//!   `cwnd * beta_scale / 8` of them, beta_scale = 8 * (1024 + 717) / 3 /
//!   (1024 - 717) = 15 (integer): 8/15 = 0.53 segments per round trip, for
//!   the whole epoch. RFC 9438 §4.3 grows W_est by alpha_cubic = 0.53 only
//!   until it reaches cwnd_prior and by 1 after that, so under frequent
//!   losses (RED, small windows) the RFC's Cubic outgrows Linux's.
//! - **Time origin.** The target is W(t + delay_min), the lowest RTT (as
//!   Linux keeps it: samples within 1 s of an epoch's start are not taken),
//!   not t + sRTT.
//! - **Growth in whole segments**: cwnd grows by one segment per `cnt`
//!   segments ACKed (tcp_cong_avoid_ai), cnt = cwnd / (target - cwnd),
//!   at least 2 (at most 1.5x per round trip), at most 20 (5 % per round
//!   trip) while there is no previous maximum (after slow start and after a
//!   timeout), and no more than the Reno estimate needs to catch up. cnt is
//!   recomputed when cwnd changed or 1/32 s passed.
//! - **Decrease**: ssthresh = max(cwnd * 717 / 1024, 2) of cwnd in whole
//!   segments; fast convergence W_max = cwnd * (1024 + 717) / 2048.
//! - **Timeout**: forgets W_max, the lowest RTT and the epoch (bictcp_reset
//!   on entering the Loss state) and runs HyStart again.
//! - **Slow start**: Linux's HyStart (`cc/cubic_hystart.rs`), cwnd +=
//!   ACKed segments up to ssthresh.
//! - **Idle**: the epoch's start moves forward by the time without ACKs, so
//!   the window stays on its curve (CA_EVENT_TX_START).
//!
//! Not modelled: the per-jiffy limit on recomputing cnt (time here is in
//! nanoseconds), Linux's approximate cube root (within 0.2 %), growth only
//! while cwnd-limited (the connection's bulk senders always are), undo, and
//! keeping ssthresh over a second timeout before the first one's data are
//! acknowledged (here every timeout computes it from cwnd, as RFC Cubic).

use super::cubic_hystart::CubicHyStart;
use super::{AckSample, CcMetrics, CongestionControl, CubicParams};
use crate::{Nanos, SECONDS};

/// BICTCP_BETA_SCALE: beta in 1024ths.
const BETA_SCALE: u64 = 1024;
/// BICTCP_HZ: the cubic function's time unit is 2^-10 s.
const TIME_SHIFT: u32 = 10;
/// bictcp_update keeps cnt while cwnd is unchanged for up to HZ / 32.
const RECALC_AFTER: Nanos = SECONDS / 32;
/// Delay samples this soon after an epoch's start are skipped (after recovery).
const DELAY_SKIP: Nanos = SECONDS;
/// cnt while there is no previous maximum: 5 % per round trip.
const NO_MAX_CNT: u64 = 20;

/// tcp_cubic.c's CUBIC, windows in whole segments.
#[derive(Clone, Debug)]
pub struct CubicLinux {
    mss: u64,
    /// snd_cwnd and snd_ssthresh in segments (`None`: not set yet).
    cwnd: u64,
    ssthresh: Option<u64>,
    /// snd_cwnd_cnt: segments ACKed toward the next increase.
    cwnd_cnt: u64,
    /// Bytes ACKed that do not make a whole segment yet.
    acked_bytes: u64,
    /// beta in 1024ths (717).
    beta: u64,
    /// C in 1024ths (cube_rtt_scale, 410).
    cube_scale: u64,
    /// 8 * (1024 + beta) / 3 / (1024 - beta) (15).
    beta_scale: u64,
    fast_convergence: bool,
    friendliness: bool,
    /// Increase cwnd by one segment per `cnt` segments ACKed.
    cnt: u64,
    last_max_cwnd: u64,
    last_cwnd: u64,
    last_time: Nanos,
    origin_point: u64,
    /// K in 2^-10 s.
    k: u64,
    delay_min: Option<Nanos>,
    epoch_start: Option<Nanos>,
    /// Segments ACKed toward the Reno estimate's next segment.
    ack_cnt: u64,
    /// The Reno estimate (segments).
    tcp_cwnd: u64,
    /// Time of the last ACK of new data, for the idle shift.
    last_ack_at: Nanos,
    hystart: CubicHyStart,
}

impl CubicLinux {
    /// Initial window `iw` bytes; C and beta from `p` in Linux's
    /// fixed-point (0.4 -> 410/1024, 0.7 -> 717/1024).
    pub fn new(mss: u64, iw: u64, p: CubicParams) -> CubicLinux {
        let mss = mss.max(1);
        let beta = ((p.beta * BETA_SCALE as f64).round() as u64).clamp(1, BETA_SCALE - 1);
        CubicLinux {
            mss,
            cwnd: (iw / mss).max(1),
            ssthresh: None,
            cwnd_cnt: 0,
            acked_bytes: 0,
            beta,
            cube_scale: ((p.c * BETA_SCALE as f64).round() as u64).max(1),
            beta_scale: 8 * (BETA_SCALE + beta) / 3 / (BETA_SCALE - beta),
            fast_convergence: p.fast_convergence,
            friendliness: p.reno_friendly,
            cnt: 0,
            last_max_cwnd: 0,
            last_cwnd: 0,
            last_time: 0,
            origin_point: 0,
            k: 0,
            delay_min: None,
            epoch_start: None,
            ack_cnt: 0,
            tcp_cwnd: 0,
            last_ack_at: 0,
            hystart: CubicHyStart::new(),
        }
    }

    /// W_max (segments); 0 when there is none (start, after a timeout).
    pub fn w_max(&self) -> u64 {
        self.last_max_cwnd
    }

    /// K of the current epoch in seconds.
    pub fn k(&self) -> f64 {
        self.k as f64 / (1u64 << TIME_SHIFT) as f64
    }

    /// The Reno-friendly estimate (segments).
    pub fn reno_estimate(&self) -> u64 {
        self.tcp_cwnd
    }

    /// The lowest RTT the time origin uses.
    pub fn delay_min(&self) -> Option<Nanos> {
        self.delay_min
    }

    fn in_slow_start(&self) -> bool {
        self.ssthresh.is_none_or(|s| self.cwnd < s)
    }

    /// bictcp_update: the target for the next round trip, as cnt.
    fn update(&mut self, now: Nanos, acked: u64) {
        let cwnd = self.cwnd;
        self.ack_cnt += acked;
        if self.last_cwnd == cwnd && now.saturating_sub(self.last_time) <= RECALC_AFTER {
            return;
        }
        self.last_cwnd = cwnd;
        self.last_time = now;
        let epoch = match self.epoch_start {
            Some(e) => e,
            None => {
                self.epoch_start = Some(now);
                self.ack_cnt = acked;
                self.tcp_cwnd = cwnd;
                if self.last_max_cwnd <= cwnd {
                    self.k = 0;
                    self.origin_point = cwnd;
                } else {
                    // K = cbrt((W_max - cwnd) / C), in 2^-10 s.
                    let units = (1u64 << (3 * TIME_SHIFT)) as f64;
                    let k3 = (self.last_max_cwnd - cwnd) as f64 * units * BETA_SCALE as f64
                        / self.cube_scale as f64;
                    self.k = k3.cbrt() as u64;
                    self.origin_point = self.last_max_cwnd;
                }
                now
            }
        };
        // t = time in the epoch plus the lowest RTT, in 2^-10 s.
        let elapsed = now.saturating_sub(epoch) + self.delay_min.unwrap_or(0);
        let t = ((elapsed as u128) << TIME_SHIFT) / SECONDS as u128;
        let offs = t.abs_diff(self.k as u128);
        let delta = (self.cube_scale as u128 * offs * offs * offs) >> (10 + 3 * TIME_SHIFT);
        let delta = delta.min(u64::MAX as u128 / 2) as u64;
        let target = if t < self.k as u128 {
            self.origin_point.saturating_sub(delta)
        } else {
            self.origin_point.saturating_add(delta)
        };
        self.cnt = if target > cwnd {
            cwnd / (target - cwnd)
        } else {
            100 * cwnd
        };
        if self.last_max_cwnd == 0 {
            self.cnt = self.cnt.min(NO_MAX_CNT);
        }
        if self.friendliness {
            let delta = (cwnd * self.beta_scale) >> 3;
            if delta > 0 && self.ack_cnt > delta {
                let n = self.ack_cnt / delta;
                self.ack_cnt -= n * delta;
                self.tcp_cwnd += n;
            }
            if self.tcp_cwnd > cwnd {
                self.cnt = self.cnt.min(cwnd / (self.tcp_cwnd - cwnd));
            }
        }
        self.cnt = self.cnt.max(2);
    }

    /// tcp_cong_avoid_ai: one segment per `cnt` segments ACKed.
    fn additive_increase(&mut self, acked: u64) {
        let w = self.cnt.max(1);
        if self.cwnd_cnt >= w {
            self.cwnd_cnt = 0;
            self.cwnd += 1;
        }
        self.cwnd_cnt += acked;
        if self.cwnd_cnt >= w {
            let n = self.cwnd_cnt / w;
            self.cwnd_cnt -= n * w;
            self.cwnd += n;
        }
    }

    /// bictcp_recalc_ssthresh: W_max with fast convergence, ssthresh.
    fn recalc_ssthresh(&mut self) -> u64 {
        self.epoch_start = None;
        self.last_max_cwnd = if self.fast_convergence && self.cwnd < self.last_max_cwnd {
            self.cwnd * (BETA_SCALE + self.beta) / (2 * BETA_SCALE)
        } else {
            self.cwnd
        };
        (self.cwnd * self.beta / BETA_SCALE).max(2)
    }

    fn take_delay_sample(&mut self, now: Nanos, rtt: Option<Nanos>) {
        let Some(rtt) = rtt else { return };
        if self
            .epoch_start
            .is_some_and(|e| now.saturating_sub(e) < DELAY_SKIP)
        {
            return;
        }
        let rtt = rtt.max(1);
        self.delay_min = Some(self.delay_min.map_or(rtt, |d| d.min(rtt)));
    }
}

impl CongestionControl for CubicLinux {
    fn name(&self) -> &'static str {
        "cubic"
    }
    fn on_ack(&mut self, ack: &AckSample) {
        self.last_ack_at = ack.now;
        self.take_delay_sample(ack.now, ack.rtt);
        // bictcp_acked runs HyStart before cwnd grows: ssthresh = cwnd.
        if self.hystart.on_ack(ack, self.cwnd, self.in_slow_start()) {
            self.ssthresh = Some(self.cwnd);
        }
        self.acked_bytes += ack.acked;
        let mut acked = self.acked_bytes / self.mss;
        self.acked_bytes %= self.mss;
        if acked == 0 {
            return;
        }
        if self.in_slow_start() {
            // tcp_slow_start: cwnd += acked, not past ssthresh; the rest goes on.
            let grown = match self.ssthresh {
                Some(s) => (self.cwnd + acked).min(s),
                None => self.cwnd + acked,
            };
            acked -= grown - self.cwnd;
            self.cwnd = grown;
            if acked == 0 {
                return;
            }
        }
        self.update(ack.now, acked);
        self.additive_increase(acked);
    }
    fn on_congestion_event(&mut self, _now: Nanos, _in_flight: u64) {
        let ssthresh = self.recalc_ssthresh();
        self.ssthresh = Some(ssthresh);
        self.cwnd = ssthresh;
        self.cwnd_cnt = 0;
    }
    fn on_recovery_exit(&mut self, _now: Nanos, _in_flight: u64) {
        // tcp_end_cwnd_reduction: cwnd = ssthresh.
        if let Some(s) = self.ssthresh {
            self.cwnd = s;
        }
    }
    fn on_rto(&mut self, _now: Nanos, _in_flight: u64) {
        // tcp_enter_loss: ssthresh as for a loss, then the Loss state resets
        // the algorithm (W_max, lowest RTT, epoch) and HyStart.
        let ssthresh = self.recalc_ssthresh();
        let fresh = CubicLinux::new(
            self.mss,
            self.mss,
            CubicParams {
                c: self.cube_scale as f64 / BETA_SCALE as f64,
                beta: self.beta as f64 / BETA_SCALE as f64,
                fast_convergence: self.fast_convergence,
                reno_friendly: self.friendliness,
                linux: true,
            },
        );
        *self = CubicLinux {
            ssthresh: Some(ssthresh),
            last_ack_at: self.last_ack_at,
            ..fresh
        };
    }
    fn on_idle_restart(&mut self, now: Nanos, restart_window: u64) {
        self.cwnd = self.cwnd.min((restart_window / self.mss).max(1));
        // CA_EVENT_TX_START: the epoch moves by the idle time, not past now.
        if let Some(e) = self.epoch_start {
            let idle = now.saturating_sub(self.last_ack_at);
            self.epoch_start = Some(e.saturating_add(idle).min(now));
        }
    }
    fn window(&self) -> u64 {
        self.cwnd * self.mss
    }
    fn ssthresh(&self) -> u64 {
        self.ssthresh
            .map_or(u64::MAX, |s| s.saturating_mul(self.mss))
    }
    fn metrics(&self) -> CcMetrics {
        CcMetrics {
            cwnd: self.window(),
            ssthresh: self.ssthresh(),
            extra: [("w_max", self.last_max_cwnd as f64), ("k", self.k())],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::{CcKind, Cubic};
    use crate::MILLIS;

    const MSS: u64 = 1000;

    /// `cubic-linux` as a connection builds it, with `iw` segments.
    fn linux(iw: u64) -> Box<dyn CongestionControl> {
        let kind: CcKind = "cubic-linux".parse().unwrap();
        kind.build(MSS, iw * MSS)
    }

    fn segments(c: &dyn CongestionControl) -> u64 {
        c.window() / MSS
    }

    fn w_max(c: &dyn CongestionControl) -> f64 {
        let m = c.metrics();
        assert_eq!(m.extra[0].0, "w_max");
        m.extra[0].1
    }

    /// One round trip from `now`: a window's segments ACKed one by one,
    /// spread over `rtt`, each with an RTT sample of `rtt` and `srtt`.
    /// Returns the time after it.
    fn round(c: &mut dyn CongestionControl, now: Nanos, rtt: Nanos, srtt: Nanos) -> Nanos {
        let segs = segments(c);
        for i in 0..segs {
            c.on_ack(&AckSample {
                now: now + i * rtt / segs,
                acked: MSS,
                rtt: Some(rtt),
                srtt,
                ..AckSample::default()
            });
        }
        now + rtt
    }

    /// A loss at `segs` segments after one RTT sample of `rtt`.
    fn after_loss(c: &mut dyn CongestionControl, rtt: Nanos) {
        c.on_ack(&AckSample {
            now: 0,
            acked: 0,
            rtt: Some(rtt),
            srtt: rtt,
            ..AckSample::default()
        });
        c.on_congestion_event(0, c.window());
        c.on_recovery_exit(0, 0);
    }

    #[test]
    fn decrease_is_717_of_cwnd_and_fast_convergence_in_whole_segments() {
        let mut c = linux(100);
        after_loss(c.as_mut(), 40 * MILLIS);
        // 100 * 717 / 1024 = 70.02
        assert_eq!(segments(c.as_ref()), 70);
        assert_eq!(c.ssthresh(), 70 * MSS);
        assert_eq!(w_max(c.as_ref()), 100.0);
        // Again at 70 < W_max: W_max = 70 * 1741 / 2048 = 59.5, floored;
        // ssthresh = 70 * 717 / 1024 = 49.01.
        c.on_congestion_event(0, 0);
        assert_eq!(w_max(c.as_ref()), 59.0);
        assert_eq!(segments(c.as_ref()), 49);
        let mut small = linux(2);
        after_loss(small.as_mut(), 40 * MILLIS);
        assert_eq!(segments(small.as_ref()), 2, "at least 2 segments");
    }

    #[test]
    fn reno_estimate_grows_eight_fifteenths_per_round_past_w_max() {
        // A loss at 10 segments on a 40 ms path: the cubic curve (K = 2 s)
        // stays within 7 to 10 segments for the 60 rounds here, so the
        // Reno-friendly estimate drives cwnd. Linux adds one segment to it per
        // cwnd * 15 / 8 segments ACKed, past W_max as before it; RFC 9438
        // adds alpha_cubic = 0.53 per round only until cwnd_prior (10),
        // then 1.
        let rtt = 40 * MILLIS;
        let mut c = linux(10);
        after_loss(c.as_mut(), rtt);
        assert_eq!(segments(c.as_ref()), 7);
        let mut now = 0;
        let mut per_round = vec![];
        for _ in 0..60 {
            now = round(c.as_mut(), now, rtt, rtt);
            per_round.push(segments(c.as_ref()));
        }
        assert!(per_round[19] > 10, "past W_max by round 20: {per_round:?}");
        let slope = (per_round[59] - per_round[19]) as f64 / 40.0;
        assert!(
            (0.45..0.6).contains(&slope),
            "{slope} segments per round past W_max, 8/15 expected: {per_round:?}"
        );
        // RFC 9438 in the same rounds: 1 per round past cwnd_prior.
        let mut rfc = Cubic::new(MSS, 10 * MSS, CubicParams::default());
        after_loss(&mut rfc, rtt);
        let mut now = 0;
        let mut rfc_rounds = vec![];
        for _ in 0..60 {
            now = round(&mut rfc, now, rtt, rtt);
            rfc_rounds.push(segments(&rfc));
        }
        let rfc_slope = (rfc_rounds[59] - rfc_rounds[19]) as f64 / 40.0;
        assert!(rfc_slope > 0.9, "RFC 9438: {rfc_slope}");
    }

    #[test]
    fn without_a_previous_maximum_growth_is_five_percent_per_round() {
        // Slow start left by HyStart at 48 segments: no W_max, so cnt is at
        // most 20 (cwnd / 20 per round), where the cubic curve from the
        // origin cwnd and the Reno estimate would add under one segment.
        let rtt = |r: u32| if r < 2 { 40 * MILLIS } else { 46 * MILLIS };
        let mut c = linux(10);
        let (cwnd, ssthresh) = slow_start_rounds(c.as_mut(), 3, rtt);
        assert_eq!(ssthresh, 48);
        assert!((48..52).contains(&cwnd), "{cwnd}");
        assert_eq!(w_max(c.as_ref()), 0.0);
        let mut now = SECONDS;
        let mut expect = cwnd as f64;
        for _ in 0..10 {
            now = round(c.as_mut(), now, 46 * MILLIS, 46 * MILLIS);
            expect *= 1.05;
        }
        let got = segments(c.as_ref()) as f64;
        assert!(
            (got - expect).abs() < 4.0,
            "cwnd {got} after 10 rounds, {cwnd} * 1.05^10 = {expect}"
        );
    }

    #[test]
    fn time_origin_is_the_lowest_rtt_not_srtt() {
        // Without the friendly region the target is W(t + delay_min): the
        // smoothed RTT does not move it (RFC 9438 takes W(t + sRTT)).
        let p = CubicParams {
            linux: true,
            reno_friendly: false,
            ..CubicParams::default()
        };
        let run = |srtt: Nanos| {
            let mut c = CubicLinux::new(MSS, 100 * MSS, p);
            after_loss(&mut c, 20 * MILLIS);
            let mut now = 0;
            for _ in 0..40 {
                now = round(&mut c, now, 20 * MILLIS, srtt);
            }
            (segments(&c), c.delay_min())
        };
        let (low, d) = run(20 * MILLIS);
        assert_eq!(run(400 * MILLIS).0, low);
        assert_eq!(d, Some(20 * MILLIS));
        assert!(low > 70, "grew on the curve: {low}");
    }

    #[test]
    fn growth_is_at_most_one_segment_per_two_acked() {
        let mut c = linux(100);
        after_loss(c.as_mut(), 10 * MILLIS);
        // Far past K the curve asks for much more than 1.5x per round.
        let before = segments(c.as_ref());
        round(c.as_mut(), 60 * SECONDS, 10 * MILLIS, 10 * MILLIS);
        let after = segments(c.as_ref());
        assert!(after > before, "grows");
        assert!(after <= before * 3 / 2 + 1, "{before} -> {after}");
    }

    #[test]
    fn timeout_forgets_w_max_and_the_lowest_rtt() {
        let mut c = CubicLinux::new(
            MSS,
            100 * MSS,
            CubicParams {
                linux: true,
                ..CubicParams::default()
            },
        );
        after_loss(&mut c, 40 * MILLIS);
        assert_eq!(c.delay_min(), Some(40 * MILLIS));
        c.on_rto(0, 0);
        assert_eq!(c.window(), MSS);
        assert_eq!(c.ssthresh(), 49 * MSS, "70 * 717 / 1024");
        assert_eq!(c.w_max(), 0);
        assert_eq!(c.delay_min(), None);
        c.on_ack(&AckSample {
            now: 0,
            acked: MSS,
            rtt: Some(50 * MILLIS),
            ..AckSample::default()
        });
        assert_eq!(c.window(), 2 * MSS, "slow start after the timeout");
    }

    #[test]
    fn idle_time_moves_the_epoch() {
        // Two windows with the same history; one is idle for 10 s before
        // its next round. Its epoch moves by the idle time, so both take
        // the same step along the curve.
        let rtt = 20 * MILLIS;
        let mut busy = linux(100);
        let mut idle = linux(100);
        let mut now = 0;
        for c in [&mut busy, &mut idle] {
            after_loss(c.as_mut(), rtt);
            now = 0;
            for _ in 0..10 {
                now = round(c.as_mut(), now, rtt, rtt);
            }
        }
        round(busy.as_mut(), now, rtt, rtt);
        let later = now + 10 * SECONDS;
        idle.on_idle_restart(later, 1000 * MSS);
        round(idle.as_mut(), later, rtt, rtt);
        assert_eq!(segments(idle.as_ref()), segments(busy.as_ref()));
    }

    /// Slow start from the initial window, one ACK per segment 3 ms apart
    /// (no ACK train), at `rtt(round)`; cwnd and ssthresh (segments) after
    /// `rounds` rounds.
    fn slow_start_rounds(
        c: &mut dyn CongestionControl,
        rounds: u32,
        rtt: impl Fn(u32) -> u64,
    ) -> (u64, u64) {
        let mut una = 0u32;
        let mut now = 0;
        for r in 0..rounds {
            let segs = c.window() / MSS;
            let snd_nxt = una + (segs * MSS) as u32;
            for _ in 0..segs {
                una += MSS as u32;
                now += 3 * MILLIS;
                c.on_ack(&AckSample {
                    now,
                    acked: MSS,
                    rtt: Some(rtt(r)),
                    srtt: rtt(r),
                    ack: una,
                    snd_nxt,
                    ..AckSample::default()
                });
            }
        }
        (c.window() / MSS, c.ssthresh().min(u64::MAX / 2) / MSS)
    }

    #[test]
    fn leaves_slow_start_when_the_rtt_rises_by_an_eighth() {
        // 40 ms, then 46 ms from the third round on (threshold 5 ms).
        let rtt = |r: u32| if r < 2 { 40 * MILLIS } else { 46 * MILLIS };
        let mut c = linux(10);
        // Rounds of 10, 20, then 40 segments: the ninth ACK of the third
        // round (cwnd 40 + 8) sees 46 > 45 ms and ends slow start there.
        let (cwnd, ssthresh) = slow_start_rounds(c.as_mut(), 3, rtt);
        assert_eq!(ssthresh, 48, "ssthresh = cwnd at the exit");
        assert!(
            (48..52).contains(&cwnd),
            "congestion avoidance after: {cwnd}"
        );
        // RFC 9438 Cubic in the same rounds doubles on.
        let mut plain = Cubic::new(MSS, 10 * MSS, CubicParams::default());
        assert_eq!(slow_start_rounds(&mut plain, 3, rtt).0, 80);
        assert_eq!(plain.ssthresh(), u64::MAX);
    }

    #[test]
    fn detects_again_after_a_timeout() {
        let rtt = |r: u32| if r < 2 { 40 * MILLIS } else { 46 * MILLIS };
        let mut c = linux(10);
        slow_start_rounds(c.as_mut(), 3, rtt);
        c.on_rto(0, 0);
        let after_rto = c.ssthresh() / MSS;
        // Slow start again from one segment, 40 ms and then 46 ms from 16
        // segments on: HyStart runs again and exits at 16 + 8 segments.
        let (_, ssthresh) =
            slow_start_rounds(
                c.as_mut(),
                6,
                |r| if r < 4 { 40 * MILLIS } else { 46 * MILLIS },
            );
        assert!(after_rto > 24);
        assert_eq!(
            ssthresh, 24,
            "HyStart's exit, below the timeout's {after_rto}"
        );
    }
}
