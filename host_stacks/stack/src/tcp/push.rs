//! Where PSH goes. Linux sends what its window allows at one moment as
//! skbs of `tcp_tso_autosize` segments (about 1 ms of its pacing rate, at
//! least `tcp_min_tso_segs` = 2, at most 64 KB), and the last segment of
//! each full one carries PSH: in a capture of kernel Reno at 5 Mbit/s
//! (docs/NET.md "Drop-tail: PSH") its bursts were `.P` (two segments, the
//! second pushed), `.`, `.P.` and `.P.P`, nothing else. A Linux receiver ACKs a
//! full-sized segment with PSH as soon as its application has read
//! everything (`ICSK_ACK_PUSHED`, tcp_measure_rcv_mss), so where the pushes
//! fall decides how often a kernel receiver ACKs a single segment, and with
//! it how bursty the sender's ACK clock is. Without PSH a ratelab sender got
//! ACKs for two segments only, sent in bursts, and lost more at a drop-tail
//! queue than the kernel sender beside it. Retransmissions carry no PSH.

use crate::Nanos;

/// Linux's `tcp_min_tso_segs`.
const MIN_SEGS: u64 = 2;
/// The largest skb (GSO_LEGACY_MAX_SIZE).
const MAX_BYTES: u64 = 65_536;

/// Segments per skb: Linux's `tcp_tso_autosize` at the pacing rate it
/// sets for a window of `cwnd` bytes over `srtt` (twice the window per
/// round trip in slow start, 1.2 times after: `tcp_update_pacing_rate`),
/// `rate >> 10` bytes (about a millisecond's worth) in whole segments.
pub(super) fn segments_per_push(cwnd: u64, srtt: Option<Nanos>, slow_start: bool, mss: u64) -> u64 {
    let Some(srtt) = srtt.filter(|&s| s > 0) else {
        return MIN_SEGS;
    };
    let ratio = if slow_start { 200 } else { 120 };
    let rate = u128::from(cwnd) * 1_000_000_000 * ratio / 100 / u128::from(srtt);
    let bytes = (rate >> 10) as u64;
    let max = (MAX_BYTES / mss.max(1)).max(MIN_SEGS);
    (bytes / mss.max(1)).clamp(MIN_SEGS, max)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Nanos = 1_000_000;

    #[test]
    fn two_segments_at_a_few_megabits() {
        // 60 segments over 130 ms: 5.3 Mbit/s, 1.2 x that paced: 0.8 KB a ms.
        assert_eq!(segments_per_push(60 * 1448, Some(130 * MS), false, 1448), 2);
        assert_eq!(
            segments_per_push(10 * 1448, None, true, 1448),
            2,
            "no RTT yet"
        );
    }

    #[test]
    fn about_a_millisecond_of_the_pacing_rate_at_higher_rates() {
        // 100 segments over 10 ms: 116 Mbit/s, 139 paced: 17 KB a ms, 11 segments.
        assert_eq!(
            segments_per_push(100 * 1448, Some(10 * MS), false, 1448),
            11
        );
        // Twice the rate in slow start.
        assert_eq!(segments_per_push(100 * 1448, Some(10 * MS), true, 1448), 19);
        // Never above 64 KB.
        assert_eq!(segments_per_push(10_000 * 1448, Some(MS), false, 1448), 45);
    }
}
