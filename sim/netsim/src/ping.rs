//! ICMP echo (RFC 792), as `ping` uses it: a flow's sender sends an echo
//! request every interval and records the round trip of each reply; every
//! host answers the requests addressed to it.

use crate::events::Nanos;
use serde::Serialize;

/// IPv4 protocol number of ICMP.
pub const PROTO_ICMP: u8 = 1;
const ECHO_REPLY: u8 = 0;
const ECHO_REQUEST: u8 = 8;
/// Type, code, checksum, identifier, sequence number.
pub const ICMP_HEADER: usize = 8;
/// Data bytes after the header when the scenario does not say (iputils' 56).
pub const DEFAULT_PING_SIZE: usize = 56;

fn checksum(bytes: &[u8]) -> u16 {
    let mut sum: u32 = bytes
        .chunks(2)
        .map(|c| u32::from(u16::from_be_bytes([c[0], *c.get(1).unwrap_or(&0)])))
        .sum();
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

fn write_echo(buf: &mut [u8], kind: u8, ident: u16, seq: u16, data: usize) -> usize {
    let len = ICMP_HEADER + data;
    buf[0] = kind;
    buf[1] = 0;
    buf[2..4].fill(0);
    buf[4..6].copy_from_slice(&ident.to_be_bytes());
    buf[6..8].copy_from_slice(&seq.to_be_bytes());
    buf[ICMP_HEADER..len].fill(0);
    let c = checksum(&buf[..len]);
    buf[2..4].copy_from_slice(&c.to_be_bytes());
    len
}

/// An echo message's (type, identifier, sequence number); None if it is not
/// a well-formed echo request or reply.
pub fn parse_echo(msg: &[u8]) -> Option<(bool, u16, u16)> {
    if msg.len() < ICMP_HEADER || msg[1] != 0 || checksum(msg) != 0 {
        return None;
    }
    let request = match msg[0] {
        ECHO_REQUEST => true,
        ECHO_REPLY => false,
        _ => return None,
    };
    let ident = u16::from_be_bytes([msg[4], msg[5]]);
    Some((request, ident, u16::from_be_bytes([msg[6], msg[7]])))
}

/// The reply to an echo request `msg` (its identifier, sequence number and
/// data) into `out`; returns its length.
pub fn reply(msg: &[u8], out: &mut [u8]) -> usize {
    out[..msg.len()].copy_from_slice(msg);
    out[0] = ECHO_REPLY;
    out[2..4].fill(0);
    let c = checksum(&out[..msg.len()]);
    out[2..4].copy_from_slice(&c.to_be_bytes());
    msg.len()
}

/// One reply: the request's number (from 0) and when it was sent, and the
/// round trip.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Reply {
    pub seq: u64,
    pub sent_ns: Nanos,
    pub rtt_ns: Nanos,
}

/// A ping's sender: requests every `interval` from its start.
pub struct Pinger {
    ident: u16,
    interval: Nanos,
    size: usize,
    next_at: Nanos,
    /// Requests sent so far.
    count: u64,
    /// Send time and whether it was answered of the last [`RING`] requests
    /// (request `n` at `n % RING`): a reply's 16-bit number reaches no
    /// further back, so a long ping keeps no more.
    sent: Vec<Nanos>,
    answered: Vec<bool>,
    /// The replies not yet taken (the simulator streaming its results takes
    /// them as they come; otherwise all of them).
    pub replies: Vec<Reply>,
    /// Replies so far (taken or not).
    pub received: u64,
}

/// Requests remembered: as many as 16-bit sequence numbers tell apart.
const RING: usize = 1 << 16;

impl Pinger {
    pub fn new(ident: u16, interval: Nanos, size: usize, now: Nanos) -> Pinger {
        Pinger {
            ident,
            interval,
            size,
            next_at: now,
            count: 0,
            sent: Vec::new(),
            answered: Vec::new(),
            replies: Vec::new(),
            received: 0,
        }
    }

    /// The ICMP identifier (the flow's index).
    pub fn ident(&self) -> u16 {
        self.ident
    }

    /// Requests sent so far.
    pub fn sent(&self) -> u64 {
        self.count
    }

    pub fn poll_at(&self) -> Nanos {
        self.next_at
    }

    /// The next request into `buf` if it is due at `now`; its length.
    pub fn poll_transmit(&mut self, now: Nanos, buf: &mut [u8]) -> Option<usize> {
        if now < self.next_at {
            return None;
        }
        let seq = self.count as u16; // wraps, as ping's does
        let at = (self.count % RING as u64) as usize;
        if at == self.sent.len() {
            self.sent.push(now);
            self.answered.push(false);
        } else {
            self.sent[at] = now;
            self.answered[at] = false;
        }
        self.count += 1;
        self.next_at += self.interval;
        Some(write_echo(buf, ECHO_REQUEST, self.ident, seq, self.size))
    }

    /// A reply with sequence number `seq` arriving at `now`: the latest
    /// request with that number, answered once.
    pub fn on_reply(&mut self, now: Nanos, seq: u16) {
        let Some(last) = self.count.checked_sub(1) else {
            return;
        };
        let back = u64::from((last as u16).wrapping_sub(seq));
        let Some(n) = last.checked_sub(back) else {
            return;
        };
        let at = (n % RING as u64) as usize;
        if !self.answered[at] {
            self.answered[at] = true;
            self.received += 1;
            self.replies.push(Reply {
                seq: n,
                sent_ns: self.sent[at],
                rtt_ns: now - self.sent[at],
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_reply_round_trip() {
        let mut p = Pinger::new(7, 1000, 56, 0);
        let mut buf = [0u8; 128];
        let len = p.poll_transmit(0, &mut buf).unwrap();
        assert_eq!(len, 64);
        assert_eq!(parse_echo(&buf[..len]), Some((true, 7, 0)));
        assert!(p.poll_transmit(999, &mut buf).is_none());
        let mut out = [0u8; 128];
        let n = reply(&buf[..len], &mut out);
        assert_eq!(parse_echo(&out[..n]), Some((false, 7, 0)));
        p.on_reply(300, 0);
        p.on_reply(400, 0); // a duplicate counts once
        let r = Reply {
            seq: 0,
            sent_ns: 0,
            rtt_ns: 300,
        };
        assert_eq!(p.replies, vec![r]);
        out[5] ^= 1; // a corrupted message is not an echo
        assert_eq!(parse_echo(&out[..n]), None);
    }

    #[test]
    fn a_long_ping_remembers_as_far_back_as_sequence_numbers_reach() {
        let mut p = Pinger::new(1, 10, 0, 0);
        let mut buf = [0u8; 64];
        let total: u64 = 70_000;
        for i in 0..total {
            assert!(p.poll_transmit(i * 10, &mut buf).is_some());
        }
        assert_eq!(p.sent(), total);
        assert!(p.sent.len() == RING && p.answered.len() == RING);
        // The oldest request a 16-bit number still names, and the newest.
        let oldest = total - RING as u64;
        p.on_reply(total * 10, oldest as u16);
        p.on_reply(total * 10, (total - 1) as u16);
        p.on_reply(total * 10 + 5, (total - 1) as u16); // a duplicate
        let want = [oldest, total - 1].map(|n| Reply {
            seq: n,
            sent_ns: n * 10,
            rtt_ns: (total - n) * 10,
        });
        assert_eq!(p.replies, want);
        assert_eq!(p.received, 2);
    }
}
