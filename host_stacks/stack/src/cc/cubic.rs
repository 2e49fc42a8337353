//! CUBIC (RFC 9438): window growth W_cubic(t) = C*(t-K)^3 + W_max (§4.2),
//! the Reno-friendly region (§4.3), multiplicative decrease with
//! beta_cubic = 0.7 (§4.6), fast convergence (§4.7) and timeouts (§4.8).
//! Windows inside are in segments (floating point, as the RFC writes them);
//! slow start is the standard one (§4.10) or HyStart++ with the connection's
//! `hystart`. Linux's Cubic, which differs, is `cubic_linux.rs` (`linux`).

use super::{AckSample, CcMetrics, CongestionControl, RenoWindow};
use crate::Nanos;

/// CUBIC's constants.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CubicParams {
    /// C (§5.1: 0.4).
    pub c: f64,
    /// beta_cubic (§4.6: 0.7).
    pub beta: f64,
    /// Fast convergence (§4.7).
    pub fast_convergence: bool,
    /// The Reno-friendly region (§4.3).
    pub reno_friendly: bool,
    /// Run Linux's tcp_cubic.c instead (`cubic-linux`, cubic_linux.rs):
    /// its HyStart, Reno-friendly estimate and time origin, for a flow
    /// that stands in for or is compared with a Linux kernel Cubic flow.
    pub linux: bool,
}

impl Default for CubicParams {
    fn default() -> CubicParams {
        CubicParams {
            c: 0.4,
            beta: 0.7,
            fast_convergence: true,
            reno_friendly: true,
            linux: false,
        }
    }
}

/// RFC 9438 CUBIC.
#[derive(Clone, Debug)]
pub struct Cubic {
    p: CubicParams,
    /// Slow start and the loss responses' floors are Reno's.
    w: RenoWindow,
    /// cwnd in segments during congestion avoidance (fractional growth kept).
    cwnd: f64,
    /// W_max: window just before the last reduction (segments).
    w_max: f64,
    /// cwnd_prior of §4.3 (segments).
    cwnd_prior: f64,
    /// K (seconds) of the current epoch.
    k: f64,
    /// Start of the current congestion-avoidance epoch.
    epoch_start: Option<Nanos>,
    /// W_est of the Reno-friendly region (segments).
    w_est: f64,
    /// alpha_cubic of §4.3.
    alpha: f64,
}

impl Cubic {
    pub fn new(mss: u64, iw: u64, p: CubicParams) -> Cubic {
        let w = RenoWindow::new(mss, iw);
        Cubic {
            p,
            w,
            cwnd: w.cwnd as f64 / mss as f64,
            w_max: 0.0,
            cwnd_prior: 0.0,
            k: 0.0,
            epoch_start: None,
            w_est: 0.0,
            alpha: Self::alpha_for(p.beta),
        }
    }

    /// §4.3: alpha_cubic = 3 * (1 - beta_cubic) / (1 + beta_cubic).
    fn alpha_for(beta: f64) -> f64 {
        3.0 * (1.0 - beta) / (1.0 + beta)
    }

    /// §4.2 eq. 1: W_cubic(t) = C*(t - K)^3 + W_max, t in seconds.
    pub fn w_cubic(&self, t: f64) -> f64 {
        self.p.c * (t - self.k).powi(3) + self.w_max
    }

    /// K of the current epoch (seconds).
    pub fn k(&self) -> f64 {
        self.k
    }

    /// W_max (segments).
    pub fn w_max(&self) -> f64 {
        self.w_max
    }

    /// W_est (segments).
    pub fn w_est(&self) -> f64 {
        self.w_est
    }

    fn sync_from_segments(&mut self) {
        self.w.cwnd = ((self.cwnd * self.w.mss as f64).round() as u64).max(self.w.mss);
    }

    fn mss(&self) -> f64 {
        self.w.mss as f64
    }

    /// §4.6 and §4.7: remember W_max, reduce by beta_cubic.
    fn reduce(&mut self) {
        let cwnd = self.w.cwnd as f64 / self.mss();
        // §4.7: fast convergence releases bandwidth when W_max shrinks.
        self.w_max = if self.p.fast_convergence && cwnd < self.w_max {
            cwnd * (1.0 + self.p.beta) / 2.0
        } else {
            cwnd
        };
        self.cwnd_prior = cwnd;
        // §4.6: ssthresh = cwnd * beta_cubic, at least 2 segments.
        let ssthresh = (cwnd * self.p.beta).max(2.0);
        self.w.ssthresh = (ssthresh * self.mss()).round() as u64;
        self.w.stop_hystart();
        self.cwnd = ssthresh;
        self.epoch_start = None;
        self.alpha = Self::alpha_for(self.p.beta);
    }

    fn congestion_avoidance(&mut self, ack: &AckSample) {
        let mss = self.mss();
        let epoch = match self.epoch_start {
            Some(e) => e,
            None => {
                // §4.2: a new epoch starts at the first ACK in congestion avoidance.
                self.cwnd = self.w.cwnd as f64 / mss;
                if self.cwnd < self.w_max {
                    // §4.2 eq. 2: K = cubic_root((W_max - cwnd_epoch) / C).
                    self.k = ((self.w_max - self.cwnd) / self.p.c).cbrt();
                } else {
                    self.k = 0.0;
                    self.w_max = self.cwnd;
                }
                // §4.3: W_est starts at cwnd_epoch.
                self.w_est = self.cwnd;
                self.epoch_start = Some(ack.now);
                ack.now
            }
        };
        let t = ack.now.saturating_sub(epoch) as f64 / 1e9;
        let rtt = ack.srtt as f64 / 1e9;
        let acked_segments = ack.acked as f64 / mss;
        // §4.3: W_est += alpha_cubic * segments_acked / cwnd; alpha_cubic
        // becomes 1 once W_est reaches cwnd_prior.
        self.w_est += self.alpha * acked_segments / self.cwnd;
        if self.w_est >= self.cwnd_prior {
            self.alpha = 1.0;
        }
        if self.p.reno_friendly && self.w_cubic(t) < self.w_est {
            // §4.3: in the Reno-friendly region cwnd is set to W_est.
            self.cwnd = self.cwnd.max(self.w_est);
        } else {
            // §4.4 / §4.5: target = W_cubic(t + RTT), clamped to
            // [cwnd, 1.5 * cwnd]; cwnd += (target - cwnd) / cwnd per segment acked.
            let target = self.w_cubic(t + rtt).clamp(self.cwnd, 1.5 * self.cwnd);
            self.cwnd += (target - self.cwnd) / self.cwnd * acked_segments;
        }
        self.sync_from_segments();
    }
}

impl CongestionControl for Cubic {
    fn name(&self) -> &'static str {
        "cubic"
    }
    fn on_ack(&mut self, ack: &AckSample) {
        if self.w.in_slow_start() {
            let left = self.w.slow_start_ack(ack);
            self.cwnd = self.w.cwnd as f64 / self.mss();
            if left == 0 || self.w.in_slow_start() {
                return;
            }
            let rest = AckSample {
                acked: left,
                ..*ack
            };
            self.congestion_avoidance(&rest);
        } else {
            self.congestion_avoidance(ack);
        }
    }
    fn on_congestion_event(&mut self, _now: Nanos, _in_flight: u64) {
        self.reduce();
        self.w.cwnd = self.w.ssthresh;
    }
    fn on_recovery_exit(&mut self, _now: Nanos, _in_flight: u64) {
        self.w.deflate();
        self.cwnd = self.w.cwnd as f64 / self.mss();
    }
    fn enable_hystart(&mut self) {
        self.w.enable_hystart();
    }
    fn on_rto(&mut self, _now: Nanos, _in_flight: u64) {
        // §4.8: ssthresh as for a congestion event, cwnd = 1 segment, and
        // the next congestion-avoidance epoch starts afresh.
        self.reduce();
        self.w.cwnd = self.w.mss;
        self.cwnd = 1.0;
    }
    fn on_idle_restart(&mut self, _now: Nanos, rw: u64) {
        self.w.restart(rw);
        self.cwnd = self.w.cwnd as f64 / self.mss();
        self.epoch_start = None;
    }
    fn window(&self) -> u64 {
        self.w.cwnd
    }
    fn ssthresh(&self) -> u64 {
        self.w.ssthresh
    }
    fn metrics(&self) -> CcMetrics {
        CcMetrics {
            cwnd: self.w.cwnd,
            ssthresh: self.w.ssthresh,
            extra: [("w_max", self.w_max), ("k", self.k)],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;
    const SEC: u64 = 1_000_000_000;

    fn sample(now: Nanos, acked: u64, srtt: Nanos) -> AckSample {
        AckSample {
            now,
            acked,
            srtt,
            ..AckSample::default()
        }
    }

    /// Cubic after a loss at 100 segments, in congestion avoidance.
    fn after_loss_at_100(p: CubicParams) -> Cubic {
        let mut c = Cubic::new(MSS, 100 * MSS, p);
        c.on_congestion_event(0, 100 * MSS);
        c.on_recovery_exit(0, 0);
        c
    }

    #[test]
    fn reduction_is_beta_and_k_matches_equation_2() {
        let mut c = after_loss_at_100(CubicParams::default());
        assert_eq!(c.window(), 70 * MSS);
        assert_eq!(c.ssthresh(), 70 * MSS);
        c.on_ack(&sample(0, MSS, SEC / 10));
        // K = cbrt((100 - 70) / 0.4), computed independently.
        let k = (30.0f64 / 0.4).powf(1.0 / 3.0);
        assert!((c.k() - k).abs() < 1e-9, "{} vs {k}", c.k());
        assert!((c.w_cubic(k) - 100.0).abs() < 1e-9, "W(K) = W_max");
    }

    #[test]
    fn window_follows_w_cubic_without_friendly_region() {
        let p = CubicParams {
            reno_friendly: false,
            ..CubicParams::default()
        };
        let mut c = after_loss_at_100(p);
        let rtt = SEC / 10;
        let mut now = 0;
        // ACK a window's worth every RTT for 8 s; cwnd should track W_cubic(t).
        for _ in 0..80 {
            let segs = c.window() / MSS;
            for _ in 0..segs {
                c.on_ack(&sample(now, MSS, rtt));
            }
            now += rtt;
        }
        let t = now as f64 / 1e9;
        let k = (30.0f64 / 0.4).cbrt();
        let expect = 0.4 * (t - k).powi(3) + 100.0;
        let got = c.window() as f64 / MSS as f64;
        assert!(
            (got - expect).abs() / expect < 0.05,
            "cwnd {got} vs W_cubic {expect}"
        );
        assert!(got > 100.0, "convex region past W_max");
    }

    #[test]
    fn plateau_near_w_max() {
        let p = CubicParams {
            reno_friendly: false,
            ..CubicParams::default()
        };
        let mut c = after_loss_at_100(p);
        let k = (30.0f64 / 0.4).cbrt();
        let rtt = SEC / 100;
        let mut now = 0;
        while (now as f64 / 1e9) < k {
            let segs = c.window() / MSS;
            for _ in 0..segs {
                c.on_ack(&sample(now, MSS, rtt));
            }
            now += rtt;
        }
        let got = c.window() as f64 / MSS as f64;
        assert!(
            (got - 100.0).abs() < 2.0,
            "at t = K cwnd is about W_max, got {got}"
        );
    }

    #[test]
    fn reno_friendly_region_follows_w_est() {
        // Small BDP: short RTT makes W_cubic slower than Reno's estimate.
        let mut c = Cubic::new(MSS, 10 * MSS, CubicParams::default());
        c.on_congestion_event(0, 10 * MSS);
        c.on_recovery_exit(0, 0);
        assert_eq!(c.window(), 7 * MSS);
        let rtt = SEC / 1000;
        let mut now = 0;
        let alpha = 3.0 * 0.3 / 1.7;
        let mut w_est = 7.0f64;
        for _ in 0..50 {
            let segs = c.window() / MSS;
            for _ in 0..segs {
                c.on_ack(&sample(now, MSS, rtt));
            }
            now += rtt;
        }
        // Independent recomputation of W_est: alpha per RTT until cwnd_prior (10), then 1.
        for _ in 0..50 {
            w_est += if w_est >= 10.0 { 1.0 } else { alpha };
        }
        let got = c.window() as f64 / MSS as f64;
        let t = now as f64 / 1e9;
        assert!(
            c.w_cubic(t) < got,
            "in the friendly region W_cubic is below cwnd"
        );
        assert!((got - w_est).abs() < 2.0, "cwnd {got} vs W_est {w_est}");
    }

    #[test]
    fn friendly_region_grows_by_alpha_cubic_until_cwnd_prior() {
        // After a loss at 10 segments cwnd is 7; W_est grows by
        // alpha_cubic = 3 * 0.3 / 1.7 = 0.53 segments per RTT until it
        // reaches cwnd_prior = 10 (about 5.7 RTTs), then by 1 (§4.3).
        let mut c = Cubic::new(MSS, 10 * MSS, CubicParams::default());
        c.on_congestion_event(0, 10 * MSS);
        c.on_recovery_exit(0, 0);
        let rtt = SEC / 1000;
        let mut per_rtt = vec![];
        let mut now = 0;
        for _ in 0..12 {
            let segs = c.window() / MSS;
            for _ in 0..segs {
                c.on_ack(&sample(now, MSS, rtt));
            }
            now += rtt;
            per_rtt.push(c.w_est());
        }
        let alpha = 3.0 * 0.3 / 1.7;
        // A round acknowledges floor(cwnd) segments of a fractional cwnd, so
        // a round adds a little less than alpha.
        let mut prev = 7.0;
        for (k, &w) in per_rtt.iter().enumerate().take(5) {
            let grew = w - prev;
            assert!(
                grew > 0.85 * alpha && grew <= alpha + 1e-9,
                "RTT {k}: W_est grew {grew}, alpha {alpha}"
            );
            prev = w;
        }
        let slope = per_rtt[11] - per_rtt[10];
        assert!(
            (slope - 1.0).abs() < 0.1,
            "alpha 1 past cwnd_prior: {slope}"
        );
    }

    #[test]
    fn fast_convergence_lowers_w_max() {
        let mut c = after_loss_at_100(CubicParams::default());
        assert!((c.w_max() - 100.0).abs() < 1e-9);
        // Second loss at 70 < W_max: W_max = 70 * (1 + 0.7) / 2.
        c.on_congestion_event(0, 0);
        assert!((c.w_max() - 70.0 * 1.7 / 2.0).abs() < 1e-9);
        assert_eq!(c.window(), 49 * MSS);
    }

    #[test]
    fn rto_goes_to_one_segment() {
        let mut c = after_loss_at_100(CubicParams::default());
        c.on_rto(0, 0);
        assert_eq!(c.window(), MSS);
        assert_eq!(c.ssthresh(), 49 * MSS);
        c.on_ack(&sample(0, MSS, SEC / 10));
        assert_eq!(c.window(), 2 * MSS, "slow start after the timeout");
    }
}
