//! The retransmission timer's estimator (RFC 6298 §2, §5).

use crate::Nanos;
use std::fmt;

/// How the RTO follows from SRTT and RTTVAR.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum RtoFormula {
    /// RFC 6298 §2.3-2.4: RTO = max(SRTT + max(G, 4*RTTVAR), min_rto).
    #[default]
    Rfc6298,
    /// Linux (tcp_set_rto: the variance term is never below rto_min):
    /// RTO = SRTT + max(G, 4*RTTVAR, min_rto), so never below SRTT + min_rto.
    Linux,
}

/// An RTO formula name that is not known.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownRtoFormula(pub String);

impl fmt::Display for UnknownRtoFormula {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "rto_formula: unknown formula {:?} (expected rfc6298 or linux)",
            self.0
        )
    }
}

impl std::error::Error for UnknownRtoFormula {}

impl std::str::FromStr for RtoFormula {
    type Err = UnknownRtoFormula;
    fn from_str(s: &str) -> Result<RtoFormula, UnknownRtoFormula> {
        match s {
            "rfc6298" => Ok(RtoFormula::Rfc6298),
            "linux" => Ok(RtoFormula::Linux),
            _ => Err(UnknownRtoFormula(s.to_string())),
        }
    }
}

impl RtoFormula {
    /// The name `from_str` takes.
    pub fn name(self) -> &'static str {
        match self {
            RtoFormula::Rfc6298 => "rfc6298",
            RtoFormula::Linux => "linux",
        }
    }
}

/// SRTT, RTTVAR and RTO with exponential backoff.
#[derive(Clone, Debug)]
pub struct RttEstimator {
    srtt: Option<Nanos>,
    rttvar: Nanos,
    /// RTO before backoff.
    rto: Nanos,
    min_rto: Nanos,
    max_rto: Nanos,
    granularity: Nanos,
    backoff: u32,
    min_rtt: Option<Nanos>,
    latest: Option<Nanos>,
    formula: RtoFormula,
}

impl RttEstimator {
    /// RFC 6298 §2.1: before any sample, RTO is the initial RTO.
    pub fn new(
        initial_rto: Nanos,
        min_rto: Nanos,
        max_rto: Nanos,
        granularity: Nanos,
    ) -> RttEstimator {
        RttEstimator {
            srtt: None,
            rttvar: 0,
            rto: initial_rto,
            min_rto,
            max_rto,
            granularity,
            backoff: 0,
            min_rtt: None,
            latest: None,
            formula: RtoFormula::Rfc6298,
        }
    }

    /// The same estimator computing the RTO by `formula`.
    pub fn with_formula(mut self, formula: RtoFormula) -> RttEstimator {
        self.formula = formula;
        self
    }

    /// A new measurement `r` (§2.2 for the first, §2.3 afterwards:
    /// alpha = 1/8, beta = 1/4, K = 4; §2.4 minimum, §2.5 maximum).
    pub fn sample(&mut self, r: Nanos) {
        match self.srtt {
            None => {
                self.srtt = Some(r);
                self.rttvar = r / 2;
            }
            Some(srtt) => {
                let err = srtt.abs_diff(r);
                self.rttvar = (3 * self.rttvar + err) / 4;
                self.srtt = Some((7 * srtt + r) / 8);
            }
        }
        let srtt = self.srtt.unwrap_or(r);
        let variance = self.granularity.max(4 * self.rttvar);
        self.rto = match self.formula {
            RtoFormula::Rfc6298 => (srtt + variance).clamp(self.min_rto, self.max_rto),
            RtoFormula::Linux => (srtt + variance.max(self.min_rto)).min(self.max_rto),
        };
        self.min_rtt = Some(self.min_rtt.map_or(r, |m| m.min(r)));
        self.latest = Some(r);
    }

    /// The RTO to arm now: the base RTO doubled once per backoff (§5.5), at most the maximum.
    pub fn rto(&self) -> Nanos {
        let factor = 1u64 << self.backoff.min(32);
        self.rto.saturating_mul(factor).min(self.max_rto)
    }

    /// §5.5: back off the timer.
    pub fn back_off(&mut self) {
        self.backoff = self.backoff.saturating_add(1);
    }

    /// Forget the backoff (new data was acknowledged).
    pub fn reset_backoff(&mut self) {
        self.backoff = 0;
    }

    /// Timeouts in a row.
    pub fn backoff(&self) -> u32 {
        self.backoff
    }

    /// §5.7: after a retransmitted SYN with an RTO below 3 s, RTO becomes 3 s
    /// when data transmission begins (until a sample says otherwise).
    pub fn set_base_rto(&mut self, rto: Nanos) {
        self.rto = rto.clamp(self.min_rto, self.max_rto);
    }

    pub fn srtt(&self) -> Option<Nanos> {
        self.srtt
    }
    pub fn rttvar(&self) -> Nanos {
        self.rttvar
    }
    pub fn min_rtt(&self) -> Option<Nanos> {
        self.min_rtt
    }
    pub fn latest(&self) -> Option<Nanos> {
        self.latest
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{MILLIS, SECONDS};

    #[test]
    fn first_and_later_samples_follow_rfc6298() {
        let mut e = RttEstimator::new(SECONDS, 200 * MILLIS, 60 * SECONDS, MILLIS);
        assert_eq!(e.rto(), SECONDS, "initial RTO");
        e.sample(100 * MILLIS);
        // SRTT = R, RTTVAR = R/2, RTO = SRTT + max(G, 4*RTTVAR) = 100 + 200.
        assert_eq!(
            (e.srtt(), e.rttvar(), e.rto()),
            (Some(100 * MILLIS), 50 * MILLIS, 300 * MILLIS)
        );
        e.sample(200 * MILLIS);
        // RTTVAR = 3/4*50 + 1/4*|100-200| = 62.5; SRTT = 7/8*100 + 1/8*200 = 112.5.
        assert_eq!(e.rttvar(), 62_500_000);
        assert_eq!(e.srtt(), Some(112_500_000));
        assert_eq!(e.rto(), 112_500_000 + 4 * 62_500_000);
        assert_eq!(e.min_rtt(), Some(100 * MILLIS));
    }

    #[test]
    fn minimum_maximum_and_backoff() {
        let mut e = RttEstimator::new(3 * SECONDS, SECONDS, 60 * SECONDS, MILLIS);
        e.sample(10 * MILLIS);
        assert_eq!(e.rto(), SECONDS, "rounded up to the minimum (§2.4)");
        e.back_off();
        e.back_off();
        assert_eq!(e.rto(), 4 * SECONDS, "doubled per timeout (§5.5)");
        for _ in 0..10 {
            e.back_off();
        }
        assert_eq!(e.rto(), 60 * SECONDS, "capped at the maximum (§2.5)");
        e.reset_backoff();
        assert_eq!(e.rto(), SECONDS);
    }

    #[test]
    fn linux_formula_never_below_srtt_plus_min_rto() {
        let mut rfc = RttEstimator::new(SECONDS, 200 * MILLIS, 60 * SECONDS, MILLIS);
        let mut linux = RttEstimator::new(SECONDS, 200 * MILLIS, 60 * SECONDS, MILLIS)
            .with_formula(RtoFormula::Linux);
        for _ in 0..50 {
            rfc.sample(100 * MILLIS);
            linux.sample(100 * MILLIS);
        }
        // A steady 100 ms: RTTVAR decays to ~0. RFC 6298: max(100 + G, 200) = 200 ms;
        // Linux: 100 + max(G, 4*RTTVAR, 200) = 300 ms.
        assert!(rfc.rttvar() < MILLIS / 4);
        assert_eq!(rfc.rto(), 200 * MILLIS);
        assert_eq!(linux.rto(), 100 * MILLIS + 200 * MILLIS);
        // A variable RTT: the variance term wins when above min_rto in both.
        let mut e = RttEstimator::new(SECONDS, 200 * MILLIS, 60 * SECONDS, MILLIS)
            .with_formula(RtoFormula::Linux);
        e.sample(100 * MILLIS);
        // SRTT 100, RTTVAR 50: 100 + max(1, 200, 200) = 300 (RFC 6298 gives the same).
        assert_eq!(e.rto(), 300 * MILLIS);
        e.sample(300 * MILLIS);
        // RTTVAR = 3/4*50 + 1/4*200 = 87.5, SRTT = 125: 125 + 350 = 475.
        assert_eq!(e.rto(), 125 * MILLIS + 350 * MILLIS);
        // Capped at the maximum and doubled by backoff as the RFC's.
        let mut slow = RttEstimator::new(SECONDS, 50 * SECONDS, 60 * SECONDS, MILLIS)
            .with_formula(RtoFormula::Linux);
        slow.sample(20 * SECONDS);
        assert_eq!(slow.rto(), 60 * SECONDS);
    }

    #[test]
    fn formula_names_parse() {
        assert_eq!("linux".parse::<RtoFormula>(), Ok(RtoFormula::Linux));
        assert_eq!("rfc6298".parse::<RtoFormula>(), Ok(RtoFormula::Rfc6298));
        let e = "bsd".parse::<RtoFormula>().unwrap_err().to_string();
        assert_eq!(
            e,
            "rto_formula: unknown formula \"bsd\" (expected rfc6298 or linux)"
        );
        for f in [RtoFormula::Linux, RtoFormula::Rfc6298] {
            assert_eq!(f.name().parse::<RtoFormula>(), Ok(f));
        }
    }
}
