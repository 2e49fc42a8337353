//! The sender's record of segments in flight: SACK marking (RFC 2018),
//! loss marking by RFC 6675 §4 IsLost(), retransmission state and the
//! pipe estimate (RFC 6675 §4 SetPipe(), kept up to date incrementally).
//! The record deque is allocated once and reused (no allocation per packet
//! once it has grown to the largest window).

use crate::{seq, Nanos};
use std::collections::VecDeque;

pub const SACKED: u8 = 1;
pub const LOST: u8 = 2;
/// Retransmitted since last marked lost (counts in pipe again).
pub const RETRANS: u8 = 4;
pub const FIN: u8 = 8;
/// Ever retransmitted (Karn's rule: no RTT sample).
pub const EVER_RETRANS: u8 = 16;

/// One transmitted segment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SentSeg {
    pub start: u32,
    pub end: u32,
    pub sent_at: Nanos,
    /// Connection's delivered bytes, its time, and first_sent_time when sent
    /// (delivery-rate estimation as in draft-cheng-iccrg-delivery-rate-estimation).
    pub delivered: u64,
    pub delivered_at: Nanos,
    pub first_sent_at: Nanos,
    pub flags: u8,
}

impl SentSeg {
    /// Sequence space it covers (data, plus one for a FIN).
    pub fn len(&self) -> u64 {
        seq::diff(self.end, self.start) as u64
    }
    pub fn is_empty(&self) -> bool {
        self.start == self.end
    }
    /// Whether the segment counts in pipe (RFC 6675 SetPipe: not SACKed, and
    /// either not lost or retransmitted).
    fn counted(&self) -> bool {
        self.flags & SACKED == 0 && (self.flags & LOST == 0 || self.flags & RETRANS != 0)
    }
}

/// What an ACK delivered.
#[derive(Clone, Copy, Debug, Default)]
pub struct Delivery {
    /// Bytes newly delivered (cumulatively or by SACK).
    pub bytes: u64,
    /// The most recently sent newly delivered segment.
    pub newest: Option<SentSeg>,
}

#[derive(Clone, Debug, Default)]
pub struct Scoreboard {
    segs: VecDeque<SentSeg>,
    pipe: u64,
    sacked: u64,
    /// Segments marked lost and not retransmitted yet.
    lost_pending: usize,
}

impl Scoreboard {
    pub fn with_capacity(n: usize) -> Scoreboard {
        Scoreboard {
            segs: VecDeque::with_capacity(n),
            ..Scoreboard::default()
        }
    }

    pub fn pipe(&self) -> u64 {
        self.pipe
    }
    pub fn sacked_bytes(&self) -> u64 {
        self.sacked
    }
    pub fn is_empty(&self) -> bool {
        self.segs.is_empty()
    }
    pub fn len(&self) -> usize {
        self.segs.len()
    }
    pub fn segments(&self) -> impl Iterator<Item = &SentSeg> {
        self.segs.iter()
    }
    pub fn get(&self, i: usize) -> &SentSeg {
        &self.segs[i]
    }
    pub fn lost_pending(&self) -> usize {
        self.lost_pending
    }

    /// A new segment went out.
    pub fn push(&mut self, s: SentSeg) {
        self.pipe += s.len();
        self.segs.push_back(s);
    }

    fn set_flags(&mut self, i: usize, set: u8, clear: u8) {
        let s = &mut self.segs[i];
        let (was_counted, was_pending, was_sacked) = (
            s.counted(),
            s.flags & (LOST | RETRANS) == LOST,
            s.flags & SACKED != 0,
        );
        s.flags = (s.flags | set) & !clear;
        let (counted, pending, sacked) = (
            s.counted(),
            s.flags & (LOST | RETRANS) == LOST,
            s.flags & SACKED != 0,
        );
        let len = s.len();
        match (was_counted, counted) {
            (true, false) => self.pipe -= len,
            (false, true) => self.pipe += len,
            _ => {}
        }
        match (was_pending && !was_sacked, pending && !sacked) {
            (true, false) => self.lost_pending -= 1,
            (false, true) => self.lost_pending += 1,
            _ => {}
        }
        match (was_sacked, sacked) {
            (false, true) => self.sacked += len,
            (true, false) => self.sacked -= len,
            _ => {}
        }
    }

    /// Cumulative acknowledgment up to `una`: drop or trim covered segments.
    pub fn ack(&mut self, una: u32) -> Delivery {
        let mut d = Delivery::default();
        while let Some(front) = self.segs.front().copied() {
            if seq::le(front.end, una) {
                self.set_flags(0, 0, LOST | RETRANS | SACKED); // leave all sums
                let len = front.len();
                self.pipe -= len; // it was counted after clearing the flags
                if front.flags & SACKED == 0 {
                    d.bytes += len;
                    if d.newest.is_none_or(|n| front.sent_at >= n.sent_at) {
                        d.newest = Some(front);
                    }
                }
                self.segs.pop_front();
            } else if seq::lt(front.start, una) {
                // Partly acknowledged: trim its front.
                let cut = seq::diff(una, front.start) as u64;
                if front.counted() {
                    self.pipe -= cut;
                }
                if front.flags & SACKED != 0 {
                    self.sacked -= cut;
                } else {
                    d.bytes += cut;
                    d.newest = Some(front);
                }
                self.segs[0].start = una;
                break;
            } else {
                break;
            }
        }
        d
    }

    /// Mark segments wholly inside SACK block [l, r) (RFC 2018 §4).
    pub fn sack(&mut self, l: u32, r: u32) -> Delivery {
        let mut d = Delivery::default();
        let first = self.segs.partition_point(|s| seq::lt(s.start, l));
        let mut i = first;
        while i < self.segs.len() && seq::le(self.segs[i].end, r) {
            let s = self.segs[i];
            if s.flags & SACKED == 0 {
                self.set_flags(i, SACKED, 0);
                d.bytes += s.len();
                if d.newest.is_none_or(|n| s.sent_at >= n.sent_at) {
                    d.newest = Some(s);
                }
            }
            i += 1;
        }
        d
    }

    /// RFC 6675 §4 IsLost(): a segment is lost when DupThresh discontiguous
    /// SACKed segments, or more than (DupThresh - 1) * SMSS SACKed bytes, lie
    /// above it. A retransmission is lost again when DupThresh segments sent
    /// after it were SACKed (lost-retransmission detection as Linux does it,
    /// the idea of RFC 8985's RACK; RFC 6675 alone waits for the RTO).
    /// Returns whether any segment was newly marked.
    pub fn mark_losses(&mut self, dupthresh: u32, smss: u64) -> bool {
        if self.sacked == 0 {
            return false;
        }
        let mut above_bytes = 0u64;
        let mut above_segs = 0u32;
        // The latest send times among SACKed segments above, newest first.
        let mut newest = [0 as Nanos; 8];
        let k = (dupthresh as usize).min(newest.len());
        let mut marked = false;
        for i in (0..self.segs.len()).rev() {
            let s = self.segs[i];
            if s.flags & SACKED != 0 {
                above_bytes += s.len();
                above_segs += 1;
                if let Some(pos) = newest[..k].iter().position(|&t| s.sent_at > t) {
                    newest.copy_within(pos..k - 1, pos + 1);
                    newest[pos] = s.sent_at;
                }
            } else if s.flags & LOST == 0 {
                if above_segs >= dupthresh || above_bytes > (dupthresh as u64 - 1) * smss {
                    self.set_flags(i, LOST, 0);
                    marked = true;
                }
            } else if s.flags & RETRANS == 0 {
                // Everything below an already lost, not yet resent segment was handled before.
                break;
            } else if above_segs >= dupthresh && newest[k - 1] > s.sent_at {
                // Lost, resent, and DupThresh later sends were SACKed: resent again.
                self.set_flags(i, 0, RETRANS);
                marked = true;
            }
        }
        marked
    }

    /// Whether the first unacknowledged segment is marked lost.
    pub fn front_lost(&self) -> bool {
        self.segs.front().is_some_and(|s| s.flags & LOST != 0)
    }

    /// Mark the first unacknowledged segment lost (fast retransmit without SACK,
    /// RFC 5681 §3.2 step 2; a NewReno partial ACK, RFC 6582 §3.2 step 5).
    pub fn mark_front_lost(&mut self) {
        if !self.segs.is_empty() {
            self.set_flags(0, LOST, RETRANS);
        }
    }

    /// A retransmission timeout: every segment not SACKed is lost.
    pub fn mark_all_lost(&mut self) {
        for i in 0..self.segs.len() {
            if self.segs[i].flags & SACKED == 0 {
                self.set_flags(i, LOST, RETRANS);
            }
        }
    }

    /// First segment marked lost and not retransmitted.
    pub fn first_lost(&self) -> Option<usize> {
        if self.lost_pending == 0 {
            return None;
        }
        self.segs
            .iter()
            .position(|s| s.flags & (LOST | RETRANS | SACKED) == LOST)
    }

    /// Segment `i` was retransmitted at `now`.
    pub fn retransmitted(
        &mut self,
        i: usize,
        now: Nanos,
        delivered: u64,
        delivered_at: Nanos,
        first_sent_at: Nanos,
    ) {
        self.set_flags(i, RETRANS | EVER_RETRANS, 0);
        let s = &mut self.segs[i];
        s.sent_at = now;
        s.delivered = delivered;
        s.delivered_at = delivered_at;
        s.first_sent_at = first_sent_at;
    }

    /// Recompute pipe, SACKed bytes and pending losses from scratch (for
    /// invariant checks).
    pub fn recount(&self) -> (u64, u64, usize) {
        let pipe = self
            .segs
            .iter()
            .filter(|s| s.counted())
            .map(|s| s.len())
            .sum();
        let sacked = self
            .segs
            .iter()
            .filter(|s| s.flags & SACKED != 0)
            .map(|s| s.len())
            .sum();
        let pending = self
            .segs
            .iter()
            .filter(|s| s.flags & (LOST | RETRANS | SACKED) == LOST)
            .count();
        (pipe, sacked, pending)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn board(n: u32) -> Scoreboard {
        let mut b = Scoreboard::default();
        for k in 0..n {
            b.push(SentSeg {
                start: 1000 + 100 * k,
                end: 1100 + 100 * k,
                sent_at: k as u64,
                delivered: 0,
                delivered_at: 0,
                first_sent_at: 0,
                flags: 0,
            });
        }
        b
    }

    fn check(b: &Scoreboard) {
        assert_eq!(b.recount(), (b.pipe(), b.sacked_bytes(), b.lost_pending()));
    }

    #[test]
    fn sack_then_islost_marks_holes_below_three_sacked() {
        let mut b = board(10);
        assert_eq!(b.pipe(), 1000);
        // Segment 0 lost; 1..=3 SACKed.
        let d = b.sack(1100, 1400);
        assert_eq!(d.bytes, 300);
        check(&b);
        assert!(b.mark_losses(3, 100));
        assert!(b.front_lost());
        assert_eq!(b.first_lost(), Some(0));
        assert_eq!(b.pipe(), 1000 - 300 - 100);
        b.retransmitted(0, 50, 0, 0, 0);
        assert_eq!(b.pipe(), 700);
        check(&b);
        // Cumulative ACK past the SACKed block.
        let d = b.ack(1400);
        assert_eq!(d.bytes, 100, "only the retransmitted segment is new");
        assert_eq!(b.pipe(), 600);
        check(&b);
    }

    #[test]
    fn three_small_sacked_segments_are_enough() {
        // 300 SACKed bytes is not more than 2 * SMSS of 1000, but three
        // discontiguous SACKed segments above make the first one lost.
        let mut b = board(10);
        b.sack(1100, 1200);
        b.sack(1300, 1400);
        assert!(!b.mark_losses(3, 1000));
        b.sack(1500, 1600);
        assert!(b.mark_losses(3, 1000));
        assert!(b.front_lost());
        check(&b);
    }

    #[test]
    fn a_lost_retransmission_is_found_by_later_sacks() {
        let mut b = board(10);
        b.sack(1100, 1400);
        assert!(b.mark_losses(3, 100));
        b.retransmitted(0, 100, 0, 0, 0); // resent at time 100
        assert!(
            !b.mark_losses(3, 100),
            "nothing sent after it is SACKed yet"
        );
        // Segments sent before the retransmission (times 4..9) say nothing about it.
        b.sack(1400, 2000);
        b.mark_losses(3, 100);
        assert_eq!(b.first_lost(), None);
        check(&b);
        let mut c = board(10);
        c.sack(1100, 1400);
        c.mark_losses(3, 100);
        c.retransmitted(0, 100, 0, 0, 0);
        for k in 0..3u32 {
            c.push(SentSeg {
                start: 2000 + 100 * k,
                end: 2100 + 100 * k,
                sent_at: 200 + k as u64,
                delivered: 0,
                delivered_at: 0,
                first_sent_at: 0,
                flags: 0,
            });
        }
        c.sack(2000, 2200);
        c.mark_losses(3, 100);
        assert_ne!(c.first_lost(), Some(0), "two later sends SACKed: not yet");
        c.sack(2200, 2300);
        c.mark_losses(3, 100);
        assert_eq!(
            c.first_lost(),
            Some(0),
            "three later sends SACKed: resend it"
        );
        check(&c);
    }

    #[test]
    fn two_sacked_segments_are_not_enough() {
        let mut b = board(10);
        b.sack(1100, 1300);
        assert!(!b.mark_losses(3, 100));
        // Two segments of 100 bytes: 200 SACKed bytes is not > 2 * SMSS.
        assert!(!b.front_lost());
    }

    #[test]
    fn partial_ack_trims_and_rto_marks_all() {
        let mut b = board(3);
        let d = b.ack(1050);
        assert_eq!(d.bytes, 50);
        assert_eq!(b.pipe(), 250);
        b.sack(1200, 1300);
        b.mark_all_lost();
        assert_eq!(b.pipe(), 0);
        assert_eq!(b.first_lost(), Some(0));
        check(&b);
        b.ack(1300);
        assert!(b.is_empty());
        assert_eq!(b.recount(), (0, 0, 0));
        check(&b);
    }
}
