//! How much the application may queue: the send buffer's policy.
//!
//! `Fixed`: always `Config::send_buffer` bytes. `Auto` (the default): Linux's
//! send-buffer autotuning (net/ipv4/tcp_input.c, `tcp_sndbuf_expand` via
//! `tcp_init_buffer_space` and `tcp_new_space`): a socket starts at
//! tcp_wmem's default, 16 KiB; when the handshake completes, and after an ACK
//! frees buffered bytes while the congestion window is not filled, the
//! buffer grows to 2 x max(cwnd, 10) segments' worth of memory, never above
//! `Config::send_buffer` (tcp_wmem's maximum, 4 MiB), and it never shrinks.
//! Linux counts memory, not payload: a segment's share is its MSS plus
//! header room and skb overhead rounded up to a power of two (4,352 bytes for
//! a 1,460-byte MSS). Here that memory is the payload the application may
//! queue, as it nearly is on Linux with GSO, where one skb carries up to
//! 64 KB and its overhead is small; the buffer then holds about six
//! congestion windows of data, so a bulk sender never waits for its
//! application.

use super::Connection;
use std::fmt;
use std::str::FromStr;

/// How the send buffer's room is set.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SendBufferPolicy {
    /// Grows with the congestion window as Linux's does, up to `Config::send_buffer`.
    #[default]
    Auto,
    /// Always `Config::send_buffer` bytes.
    Fixed,
}

/// A policy name that is neither `auto` nor `fixed`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownSendBufferPolicy(pub String);

impl fmt::Display for UnknownSendBufferPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "expected auto or fixed, got {:?}", self.0)
    }
}

impl std::error::Error for UnknownSendBufferPolicy {}

impl FromStr for SendBufferPolicy {
    type Err = UnknownSendBufferPolicy;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "auto" => Ok(SendBufferPolicy::Auto),
            "fixed" => Ok(SendBufferPolicy::Fixed),
            _ => Err(UnknownSendBufferPolicy(s.to_string())),
        }
    }
}

impl fmt::Display for SendBufferPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            SendBufferPolicy::Auto => "auto",
            SendBufferPolicy::Fixed => "fixed",
        })
    }
}

/// tcp_wmem's default: a socket's send buffer before the handshake.
pub const AUTO_INITIAL: usize = 16 * 1024;
/// TCP_INIT_CWND: the buffer is sized for at least this many segments.
const INIT_CWND_SEGMENTS: u64 = 10;
/// Header room Linux reserves per skb (MAX_TCP_HEADER on x86-64 Debian:
/// 128 + MAX_HEADER 176, cache-line aligned).
const MAX_TCP_HEADER: u64 = 320;
/// SKB_DATA_ALIGN(sizeof(struct skb_shared_info)) on x86-64.
const SKB_SHARED_INFO: u64 = 320;
/// SKB_DATA_ALIGN(sizeof(struct sk_buff)) on x86-64.
const SK_BUFF: u64 = 256;

/// Linux's memory per segment of `mss` bytes (tcp_sndbuf_expand's per_mss).
pub fn segment_memory(mss: u64) -> u64 {
    (mss + MAX_TCP_HEADER + SKB_SHARED_INFO).next_power_of_two() + SK_BUFF
}

/// The buffer tcp_sndbuf_expand asks for: 2 x max(cwnd, 10) segments' memory
/// (Reno, Cubic and Vegas have no `sndbuf_expand` of their own: factor 2).
pub fn auto_size(mss: u64, cwnd_segments: u64) -> u64 {
    2 * cwnd_segments.max(INIT_CWND_SEGMENTS) * segment_memory(mss)
}

/// The room before the handshake.
pub(super) fn initial_limit(policy: SendBufferPolicy, cap: usize) -> usize {
    match policy {
        SendBufferPolicy::Auto => AUTO_INITIAL.min(cap),
        SendBufferPolicy::Fixed => cap,
    }
}

impl Connection {
    /// The bytes the application may have queued (written and not
    /// acknowledged) now.
    pub fn send_buffer_limit(&self) -> usize {
        self.send_limit
    }

    /// Grow the auto-tuned buffer to tcp_sndbuf_expand's size for the
    /// current window (never shrinks, never past the cap).
    pub(super) fn expand_send_buffer(&mut self) {
        if self.cfg.send_buffer_policy != SendBufferPolicy::Auto {
            return;
        }
        let cwnd_segments = self.effective_cwnd() / self.smss.max(1);
        let want = auto_size(self.smss, cwnd_segments).min(self.cfg.send_buffer as u64) as usize;
        self.send_limit = self.send_limit.max(want);
    }

    /// An ACK freed buffered bytes (Linux's tcp_new_space): grow unless the
    /// data already queued fills the congestion window once sent
    /// (tcp_should_expand_sndbuf), i.e. the buffer is not what limits the flow.
    pub(super) fn on_send_space_freed(&mut self) {
        let right = self.snd_una.wrapping_add(self.snd_wnd);
        let usable = if crate::seq::gt(right, self.snd_nxt) {
            crate::seq::diff(right, self.snd_nxt) as u64
        } else {
            0
        };
        let in_flight_after = self.scoreboard.pipe() + (self.unsent() as u64).min(usable);
        if in_flight_after + self.smss <= self.effective_cwnd() {
            self.expand_send_buffer();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn linux_sizes() {
        // 1,460 + 640 rounds up to 4,096, plus the sk_buff: 4,352 (Linux's).
        assert_eq!(segment_memory(1460), 4352);
        assert_eq!(segment_memory(1448), 4352);
        assert_eq!(segment_memory(536), 2048 + 256);
        // IW10 after the handshake: 87,040 bytes.
        assert_eq!(auto_size(1448, 0), 87_040);
        assert_eq!(auto_size(1448, 10), 87_040);
        assert_eq!(auto_size(1448, 100), 870_400);
        assert_eq!(initial_limit(SendBufferPolicy::Auto, 4 << 20), 16_384);
        assert_eq!(initial_limit(SendBufferPolicy::Auto, 4000), 4000);
        assert_eq!(initial_limit(SendBufferPolicy::Fixed, 300_000), 300_000);
    }

    #[test]
    fn names() {
        assert_eq!("auto".parse(), Ok(SendBufferPolicy::Auto));
        assert_eq!("fixed".parse(), Ok(SendBufferPolicy::Fixed));
        let e = "big".parse::<SendBufferPolicy>().unwrap_err();
        assert_eq!(e.to_string(), "expected auto or fixed, got \"big\"");
        assert_eq!(SendBufferPolicy::default().to_string(), "auto");
    }
}
