//! TCP and UDP header codecs: parse and emit real header bytes (RFC 9293 §3.1,
//! RFC 768), with the Internet checksum over the IPv4 pseudo-header (RFC 9293
//! §3.1 "Checksum"). A segment is the IPv4 payload: header, options, data.

use std::fmt;

/// Length of a TCP header without options.
pub const TCP_HEADER_LEN: usize = 20;
/// Length of a UDP header.
pub const UDP_HEADER_LEN: usize = 8;
/// Largest TCP header (data offset 15).
pub const TCP_MAX_HEADER_LEN: usize = 60;
/// SACK blocks a segment can carry (RFC 2018 §3: at most 4, 3 beside timestamps).
pub const MAX_SACK_BLOCKS: usize = 4;
/// IPv4 protocol numbers for the pseudo-header.
pub const PROTO_TCP: u8 = 6;
/// IPv4 protocol number of UDP.
pub const PROTO_UDP: u8 = 17;

/// TCP control bits.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Flags(pub u8);

impl Flags {
    pub const FIN: u8 = 0x01;
    pub const SYN: u8 = 0x02;
    pub const RST: u8 = 0x04;
    pub const PSH: u8 = 0x08;
    pub const ACK: u8 = 0x10;

    /// Whether every bit of `bits` is set.
    pub fn has(self, bits: u8) -> bool {
        self.0 & bits == bits
    }
}

/// The options this stack understands (RFC 9293 MSS, RFC 7323 window scale
/// and timestamps, RFC 2018 SACK-permitted and SACK). Others are skipped.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TcpOptions {
    pub mss: Option<u16>,
    pub window_scale: Option<u8>,
    pub sack_permitted: bool,
    /// (TSval, TSecr).
    pub timestamps: Option<(u32, u32)>,
    /// SACK blocks (left edge, right edge); the first `sack_len` are valid.
    pub sack: [(u32, u32); MAX_SACK_BLOCKS],
    pub sack_len: u8,
}

impl TcpOptions {
    /// The valid SACK blocks.
    pub fn sack_blocks(&self) -> &[(u32, u32)] {
        &self.sack[..self.sack_len as usize]
    }

    /// Encoded length of the options, padded to 4 bytes.
    pub fn encoded_len(&self) -> usize {
        let mut n = 0;
        if self.mss.is_some() {
            n += 4;
        }
        if self.window_scale.is_some() {
            n += 4; // NOP + 3
        }
        if self.sack_permitted {
            n += if self.timestamps.is_some() { 0 } else { 4 };
        }
        if self.timestamps.is_some() {
            n += 12; // NOP NOP TS, or SACK-permitted + TS
        }
        if self.sack_len > 0 {
            n += 4 + 8 * self.sack_len as usize; // NOP NOP kind len blocks
        }
        n
    }
}

/// A TCP header.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TcpHeader {
    pub src_port: u16,
    pub dst_port: u16,
    pub seq: u32,
    pub ack: u32,
    pub flags: Flags,
    pub window: u16,
    pub options: TcpOptions,
}

/// Why a segment or datagram was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WireError {
    /// Shorter than its header says.
    Truncated,
    /// Data offset below 5 or past the end.
    BadDataOffset,
    /// Checksum does not match the pseudo-header and bytes.
    BadChecksum,
    /// An option with a length that is too short, too long or wrong for its kind.
    BadOption,
    /// Output buffer too small, or options that do not fit in 40 bytes.
    NoRoom,
    /// UDP length field disagrees with the datagram.
    BadLength,
}

impl fmt::Display for WireError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = match self {
            WireError::Truncated => "truncated header",
            WireError::BadDataOffset => "bad data offset",
            WireError::BadChecksum => "bad checksum",
            WireError::BadOption => "malformed option",
            WireError::NoRoom => "buffer too small",
            WireError::BadLength => "length field disagrees with datagram",
        };
        f.write_str(s)
    }
}

impl std::error::Error for WireError {}

/// One's-complement sum of `bytes` (odd tail padded with zero) as a
/// big-endian 16-bit value, added to `acc`. The words are summed in native
/// byte order, 32 bits at a time (which vectorizes), and the folded sum is
/// swapped at the end: RFC 1071 §2 (B), byte-order independence.
fn sum_bytes(acc: u64, bytes: &[u8]) -> u64 {
    let mut s = 0u64;
    let mut chunks = bytes.chunks_exact(4);
    for c in &mut chunks {
        s += u32::from_ne_bytes([c[0], c[1], c[2], c[3]]) as u64;
    }
    let rest = chunks.remainder();
    let mut i = 0;
    while i + 1 < rest.len() {
        s += u16::from_ne_bytes([rest[i], rest[i + 1]]) as u64;
        i += 2;
    }
    if i < rest.len() {
        s += u16::from_ne_bytes([rest[i], 0]) as u64;
    }
    let native = fold(s);
    let be = if cfg!(target_endian = "little") {
        native.swap_bytes()
    } else {
        native
    };
    acc + be as u64
}

fn fold(mut acc: u64) -> u16 {
    while acc > 0xffff {
        acc = (acc & 0xffff) + (acc >> 16);
    }
    acc as u16
}

/// Internet checksum of `bytes` under the IPv4 pseudo-header
/// (source, destination, zero, protocol, length). Over a segment whose
/// checksum field is filled in, the result is 0 when it is correct.
pub fn pseudo_checksum(src: [u8; 4], dst: [u8; 4], proto: u8, bytes: &[u8]) -> u16 {
    let mut acc = 0u64;
    acc += u16::from_be_bytes([src[0], src[1]]) as u64;
    acc += u16::from_be_bytes([src[2], src[3]]) as u64;
    acc += u16::from_be_bytes([dst[0], dst[1]]) as u64;
    acc += u16::from_be_bytes([dst[2], dst[3]]) as u64;
    acc += proto as u64;
    acc += bytes.len() as u64;
    !fold(sum_bytes(acc, bytes))
}

fn be16(b: &[u8], at: usize) -> u16 {
    u16::from_be_bytes([b[at], b[at + 1]])
}

fn be32(b: &[u8], at: usize) -> u32 {
    u32::from_be_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

fn parse_options(mut b: &[u8]) -> Result<TcpOptions, WireError> {
    let mut o = TcpOptions::default();
    while let Some(&kind) = b.first() {
        match kind {
            0 => break,
            1 => {
                b = &b[1..];
                continue;
            }
            _ => {}
        }
        let len = *b.get(1).ok_or(WireError::BadOption)? as usize;
        if len < 2 || len > b.len() {
            return Err(WireError::BadOption);
        }
        let body = &b[2..len];
        match (kind, len) {
            (2, 4) => o.mss = Some(be16(body, 0)),
            (3, 3) => o.window_scale = Some(body[0]),
            (4, 2) => o.sack_permitted = true,
            (5, _) => {
                if body.is_empty()
                    || !body.len().is_multiple_of(8)
                    || body.len() / 8 > MAX_SACK_BLOCKS
                {
                    return Err(WireError::BadOption);
                }
                for (i, blk) in body.chunks_exact(8).enumerate() {
                    o.sack[i] = (be32(blk, 0), be32(blk, 4));
                }
                o.sack_len = (body.len() / 8) as u8;
            }
            (8, 10) => o.timestamps = Some((be32(body, 0), be32(body, 4))),
            (2, _) | (3, _) | (4, _) | (8, _) => return Err(WireError::BadOption),
            _ => {} // unknown kind: skipped by its length (RFC 9293 §3.2)
        }
        b = &b[len..];
    }
    Ok(o)
}

/// Parse a TCP segment sent from `src` to `dst`; returns the header and the
/// payload. The checksum is verified.
pub fn parse_tcp(
    bytes: &[u8],
    src: [u8; 4],
    dst: [u8; 4],
) -> Result<(TcpHeader, &[u8]), WireError> {
    if bytes.len() < TCP_HEADER_LEN {
        return Err(WireError::Truncated);
    }
    let offset = (bytes[12] >> 4) as usize * 4;
    if offset < TCP_HEADER_LEN || offset > bytes.len() {
        return Err(WireError::BadDataOffset);
    }
    if pseudo_checksum(src, dst, PROTO_TCP, bytes) != 0 {
        return Err(WireError::BadChecksum);
    }
    let options = parse_options(&bytes[TCP_HEADER_LEN..offset])?;
    let header = TcpHeader {
        src_port: be16(bytes, 0),
        dst_port: be16(bytes, 2),
        seq: be32(bytes, 4),
        ack: be32(bytes, 8),
        flags: Flags(bytes[13]),
        window: be16(bytes, 14),
        options,
    };
    Ok((header, &bytes[offset..]))
}

fn put_options(o: &TcpOptions, out: &mut [u8]) -> usize {
    let mut n = 0;
    let mut put = |bytes: &[u8]| {
        out[n..n + bytes.len()].copy_from_slice(bytes);
        n += bytes.len();
    };
    if let Some(mss) = o.mss {
        let m = mss.to_be_bytes();
        put(&[2, 4, m[0], m[1]]);
    }
    if let Some(ws) = o.window_scale {
        put(&[1, 3, 3, ws]);
    }
    match (o.sack_permitted, o.timestamps) {
        (true, Some(_)) => put(&[4, 2]),
        (true, None) => put(&[1, 1, 4, 2]),
        (false, Some(_)) => put(&[1, 1]),
        (false, None) => {}
    }
    if let Some((val, ecr)) = o.timestamps {
        put(&[8, 10]);
        put(&val.to_be_bytes());
        put(&ecr.to_be_bytes());
    }
    if o.sack_len > 0 {
        put(&[1, 1, 5, 2 + 8 * o.sack_len]);
        for &(l, r) in o.sack_blocks() {
            put(&l.to_be_bytes());
            put(&r.to_be_bytes());
        }
    }
    n
}

/// Write a TCP segment (header, options, `payload`) into `out` with its
/// checksum for `src` -> `dst`; returns its length.
pub fn emit_tcp(
    h: &TcpHeader,
    payload: &[u8],
    src: [u8; 4],
    dst: [u8; 4],
    out: &mut [u8],
) -> Result<usize, WireError> {
    let hlen = emit_tcp_header(h, out, payload.len())?;
    out[hlen..hlen + payload.len()].copy_from_slice(payload);
    finish_tcp(src, dst, &mut out[..hlen + payload.len()]);
    Ok(hlen + payload.len())
}

/// Write the header of a segment whose `payload_len` bytes of data the
/// caller puts after it; the checksum is left zero (see [`finish_tcp`]).
/// Returns the header length.
pub fn emit_tcp_header(
    h: &TcpHeader,
    out: &mut [u8],
    payload_len: usize,
) -> Result<usize, WireError> {
    let olen = h.options.encoded_len();
    if olen > TCP_MAX_HEADER_LEN - TCP_HEADER_LEN || h.options.sack_len as usize > MAX_SACK_BLOCKS {
        return Err(WireError::NoRoom);
    }
    let hlen = TCP_HEADER_LEN + olen;
    if out.len() < hlen + payload_len {
        return Err(WireError::NoRoom);
    }
    out[0..2].copy_from_slice(&h.src_port.to_be_bytes());
    out[2..4].copy_from_slice(&h.dst_port.to_be_bytes());
    out[4..8].copy_from_slice(&h.seq.to_be_bytes());
    out[8..12].copy_from_slice(&h.ack.to_be_bytes());
    out[12] = ((hlen / 4) as u8) << 4;
    out[13] = h.flags.0;
    out[14..16].copy_from_slice(&h.window.to_be_bytes());
    out[16..20].fill(0);
    let written = put_options(&h.options, &mut out[TCP_HEADER_LEN..]);
    debug_assert_eq!(written, olen);
    Ok(hlen)
}

/// Fill in the checksum of a complete segment written by [`emit_tcp_header`].
pub fn finish_tcp(src: [u8; 4], dst: [u8; 4], segment: &mut [u8]) {
    segment[16..18].fill(0);
    let c = pseudo_checksum(src, dst, PROTO_TCP, segment);
    segment[16..18].copy_from_slice(&c.to_be_bytes());
}

/// A UDP header.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct UdpHeader {
    pub src_port: u16,
    pub dst_port: u16,
}

/// Parse a UDP datagram (RFC 768); a zero checksum means "none".
pub fn parse_udp(
    bytes: &[u8],
    src: [u8; 4],
    dst: [u8; 4],
) -> Result<(UdpHeader, &[u8]), WireError> {
    if bytes.len() < UDP_HEADER_LEN {
        return Err(WireError::Truncated);
    }
    if be16(bytes, 4) as usize != bytes.len() {
        return Err(WireError::BadLength);
    }
    if be16(bytes, 6) != 0 && pseudo_checksum(src, dst, PROTO_UDP, bytes) != 0 {
        return Err(WireError::BadChecksum);
    }
    Ok((
        UdpHeader {
            src_port: be16(bytes, 0),
            dst_port: be16(bytes, 2),
        },
        &bytes[UDP_HEADER_LEN..],
    ))
}

/// Write a UDP header in front of the `payload_len` bytes already at
/// `out[8..]` and fill in its checksum; returns the datagram length.
pub fn finish_udp(
    h: &UdpHeader,
    src: [u8; 4],
    dst: [u8; 4],
    out: &mut [u8],
    payload_len: usize,
) -> Result<usize, WireError> {
    let len = UDP_HEADER_LEN + payload_len;
    if out.len() < len || len > u16::MAX as usize {
        return Err(WireError::NoRoom);
    }
    out[0..2].copy_from_slice(&h.src_port.to_be_bytes());
    out[2..4].copy_from_slice(&h.dst_port.to_be_bytes());
    out[4..6].copy_from_slice(&(len as u16).to_be_bytes());
    out[6..8].fill(0);
    let mut c = pseudo_checksum(src, dst, PROTO_UDP, &out[..len]);
    if c == 0 {
        c = 0xffff; // RFC 768: a computed zero is sent as all ones
    }
    out[6..8].copy_from_slice(&c.to_be_bytes());
    Ok(len)
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: [u8; 4] = [10, 0, 0, 1];
    const B: [u8; 4] = [10, 0, 0, 2];

    /// Plain 16-bit word sum, written independently of `sum_bytes`.
    fn reference_checksum(src: [u8; 4], dst: [u8; 4], proto: u8, b: &[u8]) -> u16 {
        let mut v: Vec<u8> = Vec::new();
        v.extend_from_slice(&src);
        v.extend_from_slice(&dst);
        v.extend_from_slice(&[0, proto]);
        v.extend_from_slice(&(b.len() as u16).to_be_bytes());
        v.extend_from_slice(b);
        if v.len() % 2 == 1 {
            v.push(0);
        }
        let mut s: u32 = v
            .chunks(2)
            .map(|c| u16::from_be_bytes([c[0], c[1]]) as u32)
            .sum();
        while s > 0xffff {
            s = (s & 0xffff) + (s >> 16);
        }
        !(s as u16)
    }

    fn full_header() -> TcpHeader {
        let mut o = TcpOptions {
            mss: Some(1460),
            window_scale: Some(7),
            sack_permitted: true,
            timestamps: Some((0x01020304, 0x0a0b0c0d)),
            ..TcpOptions::default()
        };
        o.sack[0] = (100, 200);
        o.sack_len = 1;
        TcpHeader {
            src_port: 1234,
            dst_port: 80,
            seq: 0xdead_beef,
            ack: 42,
            flags: Flags(Flags::ACK | Flags::PSH),
            window: 65535,
            options: o,
        }
    }

    #[test]
    fn tcp_round_trip_and_checksum_matches_reference() {
        let h = full_header();
        for len in [0usize, 1, 7, 8, 1448] {
            let payload: Vec<u8> = (0..len).map(|i| (i * 7) as u8).collect();
            let mut buf = [0u8; 1600];
            let n = emit_tcp(&h, &payload, A, B, &mut buf).unwrap();
            let (back, data) = parse_tcp(&buf[..n], A, B).unwrap();
            assert_eq!(back, h);
            assert_eq!(data, &payload[..]);
            let mut zeroed = buf[..n].to_vec();
            zeroed[16..18].fill(0);
            let want = reference_checksum(A, B, PROTO_TCP, &zeroed);
            assert_eq!(u16::from_be_bytes([buf[16], buf[17]]), want);
        }
    }

    #[test]
    fn every_single_bit_flip_is_refused_or_parsed_without_panic() {
        let h = full_header();
        let mut buf = [0u8; 64];
        let n = emit_tcp(&h, b"hello", A, B, &mut buf).unwrap();
        for bit in 0..n * 8 {
            let mut b = buf[..n].to_vec();
            b[bit / 8] ^= 1 << (bit % 8);
            // A one-bit change always breaks the one's-complement sum.
            assert!(parse_tcp(&b, A, B).is_err(), "bit {bit}");
        }
        // Wrong pseudo-header address (swapping the two would sum the same).
        let c = [10, 0, 0, 3];
        assert_eq!(
            parse_tcp(&buf[..n], A, c).map(|_| ()),
            Err(WireError::BadChecksum)
        );
    }

    #[test]
    fn malformed_headers_are_errors() {
        assert_eq!(
            parse_tcp(&[0; 19], A, B).map(|_| ()),
            Err(WireError::Truncated)
        );
        let mut b = [0u8; 20];
        b[12] = 4 << 4;
        assert_eq!(
            parse_tcp(&b, A, B).map(|_| ()),
            Err(WireError::BadDataOffset)
        );
        b[12] = 6 << 4;
        assert_eq!(
            parse_tcp(&b, A, B).map(|_| ()),
            Err(WireError::BadDataOffset)
        );
        // Option with length 1 and with a length past the header.
        for opts in [[2u8, 1, 0, 0], [8, 10, 0, 0], [5, 3, 0, 0], [2, 5, 0, 0]] {
            let mut s = [0u8; 24];
            s[12] = 6 << 4;
            s[20..24].copy_from_slice(&opts);
            finish_tcp(A, B, &mut s);
            assert_eq!(
                parse_tcp(&s, A, B).map(|_| ()),
                Err(WireError::BadOption),
                "{opts:?}"
            );
        }
    }

    #[test]
    fn udp_round_trip() {
        let mut buf = [0u8; 64];
        buf[8..13].copy_from_slice(b"hello");
        let h = UdpHeader {
            src_port: 9,
            dst_port: 7,
        };
        let n = finish_udp(&h, A, B, &mut buf, 5).unwrap();
        let (back, data) = parse_udp(&buf[..n], A, B).unwrap();
        assert_eq!((back, data), (h, &b"hello"[..]));
        buf[9] ^= 1;
        assert_eq!(
            parse_udp(&buf[..n], A, B).map(|_| ()),
            Err(WireError::BadChecksum)
        );
        assert_eq!(
            parse_udp(&buf[..n - 1], A, B).map(|_| ()),
            Err(WireError::BadLength)
        );
    }
}
