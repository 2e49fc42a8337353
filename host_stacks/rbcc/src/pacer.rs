//! Pacing without a window: packets leave `size / rate` apart (RBCC.md "Hosts").
//!
//! The schedule is exact in integer microseconds: after an anchor (a
//! departure time), a packet with B bytes sent before it leaves at
//! `anchor + ceil(B * 10^6 / rate)`, so intervals average exactly
//! size / rate and each is within 1 us of it. A rate change re-anchors at
//! the last departure, so the gap after that packet is already at the new
//! rate.

pub const US_PER_S: u64 = 1_000_000;

/// Upper bounds (us, inclusive) of the lateness histogram's buckets, 1-2-5
/// per decade; a last bucket holds everything later than 1 s.
pub const LATENESS_BOUNDS_US: [u64; 17] = [
    0, 10, 20, 50, 100, 200, 500, 1_000, 2_000, 5_000, 10_000, 20_000, 50_000, 100_000, 200_000,
    500_000, 1_000_000,
];

/// How late departures left against their schedule (`now - next_at()` at
/// `on_send`; the first departure after a start has no schedule and is not
/// counted). A fixed histogram: nothing allocated per packet.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Lateness {
    /// `counts[i]`: departures late by at most `LATENESS_BOUNDS_US[i]` (and
    /// more than the bound before); the last entry: later than 1 s.
    pub counts: [u64; LATENESS_BOUNDS_US.len() + 1],
    pub total_us: u64,
    pub max_us: u64,
}

impl Lateness {
    fn record(&mut self, late_us: u64) {
        let bucket = LATENESS_BOUNDS_US.partition_point(|&bound| bound < late_us);
        self.counts[bucket] += 1;
        self.total_us = self.total_us.saturating_add(late_us);
        self.max_us = self.max_us.max(late_us);
    }

    /// Departures counted.
    pub fn departures(&self) -> u64 {
        self.counts.iter().sum()
    }

    /// The bucket bound that the fraction `q` (0..=1) of departures were at
    /// most as late as (the maximum for the last bucket); None when empty.
    pub fn quantile_bound_us(&self, q: f64) -> Option<u64> {
        let n = self.departures();
        if n == 0 {
            return None;
        }
        let want = ((q * n as f64).ceil() as u64).clamp(1, n);
        let mut seen = 0;
        for (i, &count) in self.counts.iter().enumerate() {
            seen += count;
            if seen >= want {
                return Some(
                    LATENESS_BOUNDS_US
                        .get(i)
                        .map_or(self.max_us, |&b| b.min(self.max_us)),
                );
            }
        }
        Some(self.max_us)
    }
}

/// `ceil(a * b / c)` without overflow (`c` > 0).
pub fn mul_ceil_div(a: u64, b: u64, c: u64) -> u64 {
    match a.checked_mul(b) {
        Some(p) => p.div_ceil(c),
        None => (u128::from(a) * u128::from(b)).div_ceil(u128::from(c)) as u64,
    }
}

#[derive(Debug, Clone)]
pub struct Pacer {
    rate: u64,
    max_lateness_us: u64,
    anchor_us: Option<u64>, // None: the next packet may go at once
    bytes: u64,             // bytes sent since the anchor
    last_us: u64,
    last_size: u64,
    restarts: u64,
    lost_us: u64,
    lateness: Lateness,
}

/// A pacing rate of 0 B/s.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ZeroRate;

impl std::fmt::Display for ZeroRate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("pacing rate must be >= 1 B/s")
    }
}

impl std::error::Error for ZeroRate {}

impl Pacer {
    pub fn new(rate: u64, max_lateness_us: u64) -> Result<Self, ZeroRate> {
        if rate < 1 {
            return Err(ZeroRate);
        }
        Ok(Pacer {
            rate,
            max_lateness_us,
            anchor_us: None,
            bytes: 0,
            last_us: 0,
            last_size: 0,
            restarts: 0,
            lost_us: 0,
            lateness: Lateness::default(),
        })
    }

    pub fn rate(&self) -> u64 {
        self.rate
    }

    pub fn max_lateness_us(&self) -> u64 {
        self.max_lateness_us
    }

    /// Times the caller fell behind and the schedule restarted.
    pub fn restarts(&self) -> u64 {
        self.restarts
    }

    /// Schedule time given up by those restarts.
    pub fn lost_us(&self) -> u64 {
        self.lost_us
    }

    /// How late departures were against the schedule.
    pub fn lateness(&self) -> &Lateness {
        &self.lateness
    }

    /// Earliest departure of the next packet; None = any time (nothing sent yet).
    pub fn next_at(&self) -> Option<u64> {
        self.anchor_us
            .map(|anchor| anchor + mul_ceil_div(self.bytes, US_PER_S, self.rate))
    }

    pub fn ready(&self, now_us: u64) -> bool {
        self.next_at().is_none_or(|due| now_us >= due)
    }

    /// Records a departure at `now_us`. A caller later than the schedule by
    /// more than one packet interval (and `max_lateness_us`) restarts the
    /// schedule at now instead of bursting to catch up.
    pub fn on_send(&mut self, now_us: u64, size: u64) {
        let due = self.next_at();
        if let Some(due) = due {
            self.lateness.record(now_us.saturating_sub(due));
        }
        let restart = match due {
            None => true,
            Some(due) => {
                let tolerance = self
                    .max_lateness_us
                    .max(mul_ceil_div(size, US_PER_S, self.rate));
                now_us.saturating_sub(due) > tolerance
            }
        };
        if restart {
            if let Some(due) = due {
                self.restarts += 1;
                self.lost_us += now_us - due;
            }
            self.anchor_us = Some(now_us);
            self.bytes = 0;
        }
        self.bytes += size;
        self.last_us = now_us;
        self.last_size = size;
    }

    /// Paces at `rate` (at least 1 B/s) from the last departure on.
    pub fn set_rate(&mut self, rate: u64) {
        let rate = rate.max(1);
        if rate == self.rate {
            return;
        }
        self.rate = rate;
        if self.anchor_us.is_some() {
            self.anchor_us = Some(self.last_us);
            self.bytes = self.last_size;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn departures_are_exact_multiples_of_size_over_rate() {
        let (rate, size) = (30_000, 1000);
        let mut pacer = Pacer::new(rate, 1_000).unwrap();
        assert_eq!(pacer.next_at(), None);
        let mut now = 500;
        let mut times = vec![];
        for _ in 0..10 {
            times.push(now);
            pacer.on_send(now, size);
            now = pacer.next_at().unwrap();
        }
        let want: Vec<u64> = (0..10)
            .map(|k| 500 + (k * size * US_PER_S).div_ceil(rate))
            .collect();
        assert_eq!(times, want);
        for w in times.windows(2) {
            assert!(matches!(w[1] - w[0], 33_333 | 33_334));
        }
    }

    #[test]
    fn rate_change_re_anchors_at_the_last_departure() {
        let mut pacer = Pacer::new(100_000, 1_000).unwrap();
        pacer.on_send(0, 1000);
        pacer.on_send(10_000, 1000);
        pacer.set_rate(50_000);
        assert_eq!(pacer.next_at(), Some(30_000));
        pacer.on_send(30_000, 500);
        assert_eq!(pacer.next_at(), Some(40_000));
        pacer.set_rate(0); // at least 1 B/s
        assert_eq!(pacer.rate(), 1);
    }

    #[test]
    fn a_late_caller_restarts_instead_of_bursting() {
        let mut pacer = Pacer::new(100_000, 1_000).unwrap();
        pacer.on_send(0, 1000);
        pacer.on_send(10_500, 1000);
        assert_eq!((pacer.next_at(), pacer.restarts()), (Some(20_000), 0));
        pacer.on_send(50_000, 1000);
        assert_eq!(pacer.next_at(), Some(60_000));
        assert_eq!((pacer.restarts(), pacer.lost_us()), (1, 30_000));
        assert!(!pacer.ready(59_999) && pacer.ready(60_000));
    }

    #[test]
    fn lateness_is_counted_per_departure_against_the_schedule() {
        let mut pacer = Pacer::new(100_000, 1_000).unwrap(); // 10 ms per 1000 B
        pacer.on_send(0, 1000); // no schedule yet: not counted
        pacer.on_send(10_000, 1000); // on time
        pacer.on_send(20_015, 1000); // 15 us late
        pacer.on_send(30_500, 1000); // 500 us late
        pacer.on_send(70_000, 1000); // 30 ms late: a restart, counted too
        let late = pacer.lateness();
        assert_eq!(late.departures(), 4);
        let mut want = [0; LATENESS_BOUNDS_US.len() + 1];
        want[0] = 1; // 0
        want[2] = 1; // <= 20
        want[6] = 1; // <= 500
        want[12] = 1; // <= 50_000
        assert_eq!(late.counts, want);
        assert_eq!((late.total_us, late.max_us), (30_515, 30_000));
        assert_eq!(late.quantile_bound_us(0.25), Some(0));
        assert_eq!(late.quantile_bound_us(0.5), Some(20));
        assert_eq!(late.quantile_bound_us(0.75), Some(500));
        assert_eq!(late.quantile_bound_us(1.0), Some(30_000)); // the maximum, not 50 ms
        assert_eq!(
            Pacer::new(1, 0).unwrap().lateness().quantile_bound_us(0.5),
            None
        );
    }

    #[test]
    fn zero_rate_is_refused_and_huge_byte_counts_do_not_overflow() {
        assert_eq!(Pacer::new(0, 0).unwrap_err(), ZeroRate);
        assert_eq!(mul_ceil_div(u64::MAX / 2, US_PER_S, US_PER_S), u64::MAX / 2);
    }
}
