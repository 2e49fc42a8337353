//! Linux's receiver quick-ACK mode (tcp_input.c), for a connection that
//! stands in for a Linux receiver (`Config::quickack`). Linux ACKs a data
//! segment at once, instead of every second one, while its quick-ACK count
//! is above zero; each ACK it sends takes one off. The count is set
//!
//! - on the first data segment (`tcp_incr_quickack`): to the announced
//!   window over two segments, at most 16 (`TCP_MAX_QUICKACKS`), at least 2;
//! - whenever a segment of 128 bytes or more grows the receiver's window
//!   threshold (`tcp_grow_window` sets the count's lowest bit, so the larger
//!   window is announced at once). The threshold (`rcv_ssthresh`) starts at
//!   the window announced when data begins, at most what a SYN can announce
//!   (Linux: its initial window, 43,440 bytes with 6.x's default buffers),
//!   and grows by two segments per segment received until it reaches the
//!   window the receive buffer allows.
//!
//! So a Linux receiver ACKs every segment from the start of a transfer until
//! its window threshold has caught up with its buffer, then every second
//! one. Linux's buffer itself grows once per round trip (receive-buffer
//! autotuning, which restarts the per-segment ACKs each time); here the
//! buffer is the stack's fixed `recv_buffer`, so the per-segment phase lasts
//! until the threshold reaches it. Not modelled: re-arming the count after
//! an idle gap longer than the RTO.

/// TCP_MAX_QUICKACKS: the most quick ACKs the first segment arms.
pub const MAX_QUICKACKS: u64 = 16;
/// tcp_event_data_recv grows the window only for segments of this many
/// bytes or more.
pub const GROW_MIN_LEN: u64 = 128;
/// The largest window a SYN can announce (unscaled, RFC 7323 §2.2).
pub const SYN_WINDOW_MAX: u64 = 65_535;

/// The receiver's quick-ACK state (one per connection).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct QuickAck {
    /// Segments still to ACK at once.
    quick: u64,
    /// The window threshold (rcv_ssthresh), bytes; `None` before the first
    /// data segment.
    threshold: Option<u64>,
    /// The largest segment received (Linux's rcv_mss estimate), bytes.
    rcv_mss: u64,
}

impl QuickAck {
    pub fn new() -> QuickAck {
        QuickAck::default()
    }

    /// Segments still to be ACKed at once.
    pub fn pending(&self) -> u64 {
        self.quick
    }

    /// The window threshold, once data arrived.
    pub fn threshold(&self) -> Option<u64> {
        self.threshold
    }

    /// One in-order data segment of `len` bytes; `announced` the window
    /// last announced, `allowed` the window the receive buffer allows now.
    /// True: ACK this segment at once.
    pub fn on_segment(&mut self, len: u64, announced: u64, allowed: u64) -> bool {
        self.rcv_mss = self.rcv_mss.max(len);
        let threshold = match self.threshold {
            Some(t) => t,
            None => {
                let quickacks = match announced / (2 * self.rcv_mss.max(1)) {
                    0 => 2,
                    n => n.min(MAX_QUICKACKS),
                };
                self.quick = self.quick.max(quickacks);
                announced.min(SYN_WINDOW_MAX)
            }
        };
        let mut threshold = threshold;
        if len >= GROW_MIN_LEN && threshold < allowed {
            threshold += (allowed - threshold).min(2 * self.rcv_mss);
            self.quick |= 1;
        }
        self.threshold = Some(threshold);
        if self.quick > 0 {
            self.quick -= 1;
            true
        } else {
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1448;
    const BIG: u64 = 4 << 20;

    #[test]
    fn first_segment_arms_up_to_sixteen_then_growth_keeps_acking() {
        let mut q = QuickAck::new();
        // a 4 MiB window: 16 quick ACKs armed; the threshold grows from
        // the handshake's 65,535 bytes by two segments per segment, each
        // growth asking for one more quick ACK
        for i in 0..100 {
            assert!(q.on_segment(MSS, BIG, BIG), "segment {i}");
        }
        assert_eq!(q.threshold(), Some(SYN_WINDOW_MAX + 100 * 2 * MSS));
    }

    #[test]
    fn only_the_armed_quick_acks_when_the_threshold_cannot_grow() {
        let mut q = QuickAck::new();
        // the buffer allows 20 segments: the threshold (from 65,535 bytes,
        // 45 segments) cannot grow, so only the 16 armed quick ACKs
        let allowed = 20 * MSS;
        let acks: Vec<bool> = (0..20).map(|_| q.on_segment(MSS, BIG, allowed)).collect();
        assert!(acks[..16].iter().all(|&a| a));
        assert!(acks[16..].iter().all(|&a| !a));
        assert_eq!(q.threshold(), Some(SYN_WINDOW_MAX));
    }

    #[test]
    fn growth_stops_at_the_allowed_window() {
        let mut q = QuickAck::new();
        let allowed = SYN_WINDOW_MAX + 5 * MSS;
        let acks: Vec<bool> = (0..30).map(|_| q.on_segment(MSS, BIG, allowed)).collect();
        // the threshold reaches the limit in three segments, each of which
        // adds one to the even count (16 | 1) that its own ACK takes off;
        // then the 16 armed quick ACKs run out
        assert_eq!(q.threshold(), Some(allowed));
        assert!(acks[..19].iter().all(|&a| a));
        assert!(acks[19..].iter().all(|&a| !a));
    }

    #[test]
    fn each_growing_segment_is_acked_once_the_armed_count_ran_out() {
        let mut q = QuickAck::new();
        // no room to grow: the 16 armed quick ACKs, then every second
        for _ in 0..16 {
            assert!(q.on_segment(MSS, BIG, 10 * MSS));
        }
        assert!(!q.on_segment(MSS, BIG, 10 * MSS));
        assert_eq!(q.pending(), 0);
        // the buffer allows more (Linux: autotuning raised it): each
        // segment that grows the threshold is ACKed at once by itself
        for i in 0..10 {
            assert!(q.on_segment(MSS, BIG, BIG), "segment {i}");
            assert_eq!(q.pending(), 0);
        }
        assert_eq!(q.threshold(), Some(SYN_WINDOW_MAX + 10 * 2 * MSS));
    }

    #[test]
    fn a_small_announced_window_arms_at_least_two() {
        let mut q = QuickAck::new();
        // 2,000 / (2 x 1448) = 0: two quick ACKs, and no growth allowed
        assert!(q.on_segment(MSS, 2_000, 2_000));
        assert!(q.on_segment(MSS, 2_000, 2_000));
        assert!(!q.on_segment(MSS, 2_000, 2_000));
        assert_eq!(q.threshold(), Some(2_000));
    }

    #[test]
    fn small_segments_do_not_grow_the_window() {
        // 100-byte segments in a 200-byte window: 1 quick ACK, no growth
        let mut q = QuickAck::new();
        assert!(q.on_segment(100, 200, BIG));
        assert!(!q.on_segment(100, 200, BIG));
        assert_eq!(q.threshold(), Some(200));
        // 128 bytes grow it
        assert!(q.on_segment(128, 200, BIG));
        assert_eq!(q.threshold(), Some(200 + 2 * 128));
    }
}
