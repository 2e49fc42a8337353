//! Proportional Rate Reduction (RFC 6937 §3.1, with the slow-start
//! reduction bound PRR-SSRB): how much to send on each ACK during loss
//! recovery so that the window comes down to ssthresh smoothly.

/// PRR state for one recovery episode (bytes).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Prr {
    /// RecoverFS: FlightSize at the start of recovery.
    recover_fs: u64,
    /// prr_delivered: bytes delivered to the receiver since recovery began.
    delivered: u64,
    /// prr_out: bytes sent since recovery began.
    out: u64,
    /// sndcnt: bytes that may be sent now.
    sndcnt: u64,
}

impl Prr {
    /// Start of recovery (RFC 6937 §3.1 "on entering recovery").
    pub fn start(recover_fs: u64) -> Prr {
        Prr {
            recover_fs: recover_fs.max(1),
            ..Prr::default()
        }
    }

    /// On every ACK in recovery: `delivered` bytes newly delivered
    /// (DeliveredData), `pipe` after the ACK, the new `ssthresh`.
    pub fn on_ack(&mut self, delivered: u64, pipe: u64, ssthresh: u64, mss: u64) {
        self.delivered += delivered;
        let sndcnt = if pipe > ssthresh {
            // Proportional part: sndcnt = CEIL(prr_delivered * ssthresh / RecoverFS) - prr_out.
            let share =
                (self.delivered as u128 * ssthresh as u128).div_ceil(self.recover_fs as u128);
            (share as u64).saturating_sub(self.out)
        } else {
            // PRR-SSRB: limit = MAX(prr_delivered - prr_out, DeliveredData) + MSS;
            // sndcnt = MIN(ssthresh - pipe, limit).
            let limit = self.delivered.saturating_sub(self.out).max(delivered) + mss;
            (ssthresh - pipe).min(limit)
        };
        self.sndcnt = sndcnt;
    }

    /// Bytes that may be sent now.
    pub fn sndcnt(&self) -> u64 {
        self.sndcnt
    }

    /// `len` bytes were sent (prr_out += len).
    pub fn on_send(&mut self, len: u64) {
        self.out += len;
        self.sndcnt = self.sndcnt.saturating_sub(len);
    }

    /// prr_delivered and prr_out so far.
    pub fn totals(&self) -> (u64, u64) {
        (self.delivered, self.out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;

    #[test]
    fn proportional_part_sends_ssthresh_over_recoverfs() {
        // 20 segments in flight, ssthresh 10: one segment sent per two delivered.
        let mut p = Prr::start(20 * MSS);
        let mut sent = 0;
        let mut pipe = 19 * MSS; // one segment lost
        for _ in 0..10 {
            pipe -= MSS;
            p.on_ack(MSS, pipe, 10 * MSS, MSS);
            while p.sndcnt() >= MSS {
                p.on_send(MSS);
                sent += 1;
                pipe += MSS;
            }
        }
        // ceil(10 * 10 / 20) = 5 segments for 10 delivered.
        assert_eq!(sent, 5);
        assert_eq!(p.totals(), (10 * MSS, 5 * MSS));
    }

    #[test]
    fn ssrb_grows_back_to_ssthresh_at_most_one_mss_beyond_delivered() {
        // Heavy loss: pipe far below ssthresh.
        let mut p = Prr::start(20 * MSS);
        p.on_ack(MSS, 2 * MSS, 10 * MSS, MSS);
        // limit = max(1000 - 0, 1000) + 1000 = 2000; ssthresh - pipe = 8000.
        assert_eq!(p.sndcnt(), 2 * MSS);
        p.on_send(2 * MSS);
        p.on_ack(MSS, 3 * MSS, 10 * MSS, MSS);
        // limit = max(2000 - 2000, 1000) + 1000 = 2000.
        assert_eq!(p.sndcnt(), 2 * MSS);
        p.on_ack(MSS, 9 * MSS + 500, 10 * MSS, MSS);
        assert_eq!(p.sndcnt(), 500, "never past ssthresh");
    }
}
