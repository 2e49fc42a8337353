//! Wire formats: the RBCC header (RBCC.md "Packet format", 24 bytes) and the
//! TRUMP transport header that follows it (host_stacks/README.md, "Transport
//! header"): 24 bytes + 8 per missing range, all fields big-endian.
//!
//! Decoding borrows the datagram (no copy, no allocation); encoding writes
//! into a caller's buffer.

/// IPv4 protocol number of RBCC.
pub const IPPROTO_RBCC: u8 = 253;
/// RBCC `next_proto` of the TRUMP transport (RFC 3692's second experimental number).
pub const NEXT_PROTO_TRUMP: u8 = 254;
pub const RBCC_VERSION: u8 = 1;
pub const RBCC_HEADER_LEN: usize = 24;
pub const TRUMP_HEADER_LEN: usize = 24;
pub const RANGE_LEN: usize = 8;
/// Missing ranges an ACK reports at most.
pub const MAX_RANGES: usize = 16;
pub const IPV4_HEADER_LEN: usize = 20;
/// IPv4 + RBCC + TRUMP headers of a data packet.
pub const RBCC_OVERHEAD: usize = IPV4_HEADER_LEN + RBCC_HEADER_LEN + TRUMP_HEADER_LEN;
/// "No limit" in a rate field.
pub const RATE_UNLIMITED: u32 = 0xFFFF_FFFF;

pub const FLAG_SYN: u8 = 0x1;
pub const FLAG_ACK: u8 = 0x2;
pub const FLAG_FIN: u8 = 0x4;

/// Why a datagram is not an RBCC/TRUMP packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DecodeError {
    RbccTruncated,
    NotTrump,
    TrumpTruncated,
    RangesTruncated,
}

impl std::fmt::Display for DecodeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            DecodeError::RbccTruncated => "RBCC header truncated",
            DecodeError::NotTrump => "not an RBCC v1 packet carrying TRUMP",
            DecodeError::TrumpTruncated => "TRUMP header truncated",
            DecodeError::RangesTruncated => "TRUMP ranges truncated",
        })
    }
}

impl std::error::Error for DecodeError {}

fn be32(b: &[u8], at: usize) -> u32 {
    u32::from_be_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

fn put32(b: &mut [u8], at: usize, v: u32) {
    b[at..at + 4].copy_from_slice(&v.to_be_bytes());
}

/// The RBCC header (version in the high nibble of byte 0, flags in the low one).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RbccHeader {
    pub version: u8,
    pub flags: u8,
    pub next_proto: u8,
    pub reserved: u16,
    pub rate: u32,
    pub bottle_node: u32,
    pub return_rate: u32,
    pub return_bottle_node: u32,
    pub current_rate: u32,
}

impl RbccHeader {
    /// A version-1 header carrying TRUMP.
    pub fn trump(flags: u8) -> Self {
        RbccHeader {
            version: RBCC_VERSION,
            flags,
            next_proto: NEXT_PROTO_TRUMP,
            reserved: 0,
            rate: 0,
            bottle_node: 0,
            return_rate: 0,
            return_bottle_node: 0,
            current_rate: 0,
        }
    }

    pub fn decode(data: &[u8]) -> Result<Self, DecodeError> {
        if data.len() < RBCC_HEADER_LEN {
            return Err(DecodeError::RbccTruncated);
        }
        Ok(RbccHeader {
            version: data[0] >> 4,
            flags: data[0] & 0xF,
            next_proto: data[1],
            reserved: u16::from_be_bytes([data[2], data[3]]),
            rate: be32(data, 4),
            bottle_node: be32(data, 8),
            return_rate: be32(data, 12),
            return_bottle_node: be32(data, 16),
            current_rate: be32(data, 20),
        })
    }

    /// Writes the 24 bytes at the start of `out`.
    pub fn encode(&self, out: &mut [u8]) {
        out[0] = (self.version << 4) | (self.flags & 0xF);
        out[1] = self.next_proto;
        out[2..4].copy_from_slice(&self.reserved.to_be_bytes());
        put32(out, 4, self.rate);
        put32(out, 8, self.bottle_node);
        put32(out, 12, self.return_rate);
        put32(out, 16, self.return_bottle_node);
        put32(out, 20, self.current_rate);
    }

    /// The receiver's ACK for a packet with header `data`: its `rate` and
    /// `bottle_node` echoed back; the ACK's own `rate` is "no limit" and its
    /// `current_rate` 0, so routers on the way back count the ACK flow at
    /// 0 B/s (the reference model's `hosts.ack_for`, docs/ROUTER_MODEL.md).
    pub fn ack_for(data: &RbccHeader, flags: u8) -> Self {
        RbccHeader {
            rate: RATE_UNLIMITED,
            bottle_node: 0,
            return_rate: data.rate,
            return_bottle_node: data.bottle_node,
            current_rate: 0,
            ..RbccHeader::trump(flags)
        }
    }
}

/// The fixed part of the TRUMP header; the ranges stay in the datagram.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TrumpHeader {
    pub flow_id: u16,
    pub n_ranges: u8,
    pub seq: u32,
    pub pn: u32,
    pub ts: u32,
    pub cum_ack: u32,
    pub high: u32,
}

impl TrumpHeader {
    /// Bytes on the wire, ranges included.
    pub fn encoded_len(&self) -> usize {
        TRUMP_HEADER_LEN + RANGE_LEN * usize::from(self.n_ranges)
    }

    /// The fixed part; `decode_packet` checks the ranges fit.
    pub fn decode(data: &[u8]) -> Result<Self, DecodeError> {
        if data.len() < TRUMP_HEADER_LEN {
            return Err(DecodeError::TrumpTruncated);
        }
        Ok(TrumpHeader {
            flow_id: u16::from_be_bytes([data[0], data[1]]),
            n_ranges: data[2],
            seq: be32(data, 4),
            pn: be32(data, 8),
            ts: be32(data, 12),
            cum_ack: be32(data, 16),
            high: be32(data, 20),
        })
    }

    /// Writes the 24 fixed bytes (reserved 0) at the start of `out`.
    pub fn encode(&self, out: &mut [u8]) {
        out[0..2].copy_from_slice(&self.flow_id.to_be_bytes());
        out[2] = self.n_ranges;
        out[3] = 0;
        put32(out, 4, self.seq);
        put32(out, 8, self.pn);
        put32(out, 12, self.ts);
        put32(out, 16, self.cum_ack);
        put32(out, 20, self.high);
    }
}

/// The missing ranges of an ACK: (start, end) half-open, as on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ranges<'a> {
    bytes: &'a [u8],
}

impl<'a> Ranges<'a> {
    pub fn len(&self) -> usize {
        self.bytes.len() / RANGE_LEN
    }

    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    pub fn get(&self, i: usize) -> (u32, u32) {
        (
            be32(self.bytes, i * RANGE_LEN),
            be32(self.bytes, i * RANGE_LEN + 4),
        )
    }

    pub fn iter(&self) -> impl Iterator<Item = (u32, u32)> + 'a {
        let bytes = self.bytes;
        bytes
            .chunks_exact(RANGE_LEN)
            .map(|c| (be32(c, 0), be32(c, 4)))
    }

    /// Whether `seq` lies in one of the ranges.
    pub fn contains(&self, seq: u64) -> bool {
        self.iter()
            .any(|(start, end)| u64::from(start) <= seq && seq < u64::from(end))
    }
}

/// An RBCC datagram as the host sees it (everything after the IPv4 header).
#[derive(Debug, Clone, Copy)]
pub struct Packet<'a> {
    pub rbcc: RbccHeader,
    pub trump: TrumpHeader,
    pub ranges: Ranges<'a>,
    pub payload: &'a [u8],
}

impl<'a> Packet<'a> {
    /// An error unless it is version-1 RBCC carrying a complete TRUMP header.
    pub fn decode(data: &'a [u8]) -> Result<Self, DecodeError> {
        let rbcc = RbccHeader::decode(data)?;
        if rbcc.version != RBCC_VERSION || rbcc.next_proto != NEXT_PROTO_TRUMP {
            return Err(DecodeError::NotTrump);
        }
        let rest = &data[RBCC_HEADER_LEN..];
        let trump = TrumpHeader::decode(rest)?;
        let end = trump.encoded_len();
        if rest.len() < end {
            return Err(DecodeError::RangesTruncated);
        }
        Ok(Packet {
            rbcc,
            trump,
            ranges: Ranges {
                bytes: &rest[TRUMP_HEADER_LEN..end],
            },
            payload: &rest[end..],
        })
    }
}

/// Writes RBCC + TRUMP headers and `ranges` into `out` (cleared first); the
/// caller appends the payload. `trump.n_ranges` is set from `ranges`.
pub fn encode_headers(
    out: &mut Vec<u8>,
    rbcc: &RbccHeader,
    trump: &TrumpHeader,
    ranges: &[(u32, u32)],
) {
    assert!(ranges.len() <= usize::from(u8::MAX), "too many ranges");
    let len = RBCC_HEADER_LEN + TRUMP_HEADER_LEN + RANGE_LEN * ranges.len();
    out.clear();
    out.resize(len, 0);
    rbcc.encode(&mut out[..RBCC_HEADER_LEN]);
    let trump = TrumpHeader {
        n_ranges: ranges.len() as u8,
        ..*trump
    };
    trump.encode(&mut out[RBCC_HEADER_LEN..]);
    let mut at = RBCC_HEADER_LEN + TRUMP_HEADER_LEN;
    for &(start, end) in ranges {
        put32(out, at, start);
        put32(out, at + 4, end);
        at += RANGE_LEN;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trump_header_layout_is_the_documented_one() {
        let trump = TrumpHeader {
            flow_id: 0x1234,
            seq: 5,
            pn: 9,
            ts: 7,
            cum_ack: 3,
            high: 8,
            ..Default::default()
        };
        let mut out = Vec::new();
        encode_headers(
            &mut out,
            &RbccHeader::trump(FLAG_ACK),
            &trump,
            &[(3, 4), (6, 8)],
        );
        assert_eq!(out.len(), 24 + 24 + 16);
        let t = &out[24..];
        assert_eq!(&t[..4], &[0x12, 0x34, 2, 0]);
        assert_eq!(&t[4..8], &5u32.to_be_bytes());
        assert_eq!(&t[20..24], &8u32.to_be_bytes());
        assert_eq!(&t[24..28], &3u32.to_be_bytes());
        assert_eq!(&t[36..40], &8u32.to_be_bytes());
        let p = Packet::decode(&out).unwrap();
        assert_eq!(
            p.trump,
            TrumpHeader {
                n_ranges: 2,
                ..trump
            }
        );
        assert_eq!(p.ranges.iter().collect::<Vec<_>>(), vec![(3, 4), (6, 8)]);
        assert!(p.ranges.contains(7) && !p.ranges.contains(5) && !p.ranges.contains(8));
        assert!(p.payload.is_empty());
    }

    #[test]
    fn rbcc_header_round_trip_and_ack() {
        let h = RbccHeader {
            rate: 31_000,
            bottle_node: 77,
            return_rate: 5,
            return_bottle_node: 6,
            current_rate: 9,
            ..RbccHeader::trump(0)
        };
        let mut b = [0u8; 24];
        h.encode(&mut b);
        assert_eq!(b[0], 0x10);
        assert_eq!(b[1], 254);
        assert_eq!(RbccHeader::decode(&b).unwrap(), h);
        let a = RbccHeader::ack_for(&h, FLAG_ACK);
        assert_eq!(
            (
                a.flags,
                a.rate,
                a.bottle_node,
                a.return_rate,
                a.return_bottle_node,
                a.current_rate
            ),
            (FLAG_ACK, RATE_UNLIMITED, 0, 31_000, 77, 0)
        );
    }

    #[test]
    fn truncation_and_other_protocols_are_errors() {
        let mut out = Vec::new();
        encode_headers(
            &mut out,
            &RbccHeader::trump(FLAG_ACK),
            &TrumpHeader::default(),
            &[(0, 1)],
        );
        assert_eq!(
            Packet::decode(&out[..20]).unwrap_err(),
            DecodeError::RbccTruncated
        );
        assert_eq!(
            Packet::decode(&out[..40]).unwrap_err(),
            DecodeError::TrumpTruncated
        );
        assert_eq!(
            Packet::decode(&out[..out.len() - 1]).unwrap_err(),
            DecodeError::RangesTruncated
        );
        let mut other = out.clone();
        other[1] = 17;
        assert_eq!(Packet::decode(&other).unwrap_err(), DecodeError::NotTrump);
        other[1] = 254;
        other[0] = 0x20;
        assert_eq!(Packet::decode(&other).unwrap_err(), DecodeError::NotTrump);
    }
}
