//! Hash and checksum algorithms used by BMv2 `calculations`, with BMv2's
//! parameterisation:
//!
//! | algo | definition | check value of `"123456789"` |
//! |---|---|---|
//! | `crc32` | CRC-32/IEEE 802.3: poly 0x04C11DB7, init 0xFFFFFFFF, reflected in/out, xorout 0xFFFFFFFF | 0xCBF43926 |
//! | `crc16` | CRC-16/ARC: poly 0x8005, init 0, reflected in/out, xorout 0 | 0xBB3D |
//! | `crcCCITT` | CRC-16/CCITT-FALSE: poly 0x1021, init 0xFFFF, not reflected, xorout 0 | 0x29B1 |
//! | `crc16_custom`, `crc32_custom` | as `crc16` / `crc32` until changed with [`CrcParams`] | |
//! | `csum16` | Internet checksum (RFC 1071): ones' complement of the ones' complement sum of 16-bit words, odd byte padded with 0 | |
//! | `xor16` | XOR of the 16-bit big-endian words, odd byte padded with 0 | |
//! | `identity` | the input bytes read as a big-endian integer (its last 8 bytes) | |
//! | `random` | a value from the switch's seeded generator | |
//!
//! The input of a calculation is the concatenation of its fields' bits
//! (most significant first, without padding between fields); a final partial
//! byte is padded with zero bits on the right.

use crate::phv::mask64;

/// The parameters of a CRC of width 8..=32 bits (Rocksoft model).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CrcParams {
    /// Width in bits (16 or 32 for BMv2's algorithms).
    pub width: u32,
    /// Polynomial, normal (MSB-first) notation without the top bit.
    pub poly: u32,
    /// Initial register value.
    pub init: u32,
    /// Value XORed into the final register.
    pub xor_out: u32,
    /// Reflect each input byte.
    pub reflect_in: bool,
    /// Reflect the final register.
    pub reflect_out: bool,
}

impl CrcParams {
    /// CRC-32 as BMv2's `crc32`.
    pub const CRC32: CrcParams = CrcParams {
        width: 32,
        poly: 0x04C1_1DB7,
        init: 0xFFFF_FFFF,
        xor_out: 0xFFFF_FFFF,
        reflect_in: true,
        reflect_out: true,
    };
    /// CRC-16/ARC as BMv2's `crc16`.
    pub const CRC16: CrcParams = CrcParams {
        width: 16,
        poly: 0x8005,
        init: 0,
        xor_out: 0,
        reflect_in: true,
        reflect_out: true,
    };
    /// CRC-16/CCITT-FALSE as BMv2's `crcCCITT`.
    pub const CCITT: CrcParams = CrcParams {
        width: 16,
        poly: 0x1021,
        init: 0xFFFF,
        xor_out: 0,
        reflect_in: false,
        reflect_out: false,
    };
}

/// A table-driven CRC engine for one parameter set.
#[derive(Clone)]
pub struct Crc {
    p: CrcParams,
    table: Box<[u32; 256]>,
}

impl std::fmt::Debug for Crc {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.p.fmt(f)
    }
}

impl Crc {
    /// Builds the lookup table. `width` must be in 8..=32.
    pub fn new(p: CrcParams) -> Crc {
        let w = p.width.clamp(8, 32);
        let top = 1u64 << (w - 1);
        let mask = if w == 32 {
            0xFFFF_FFFF
        } else {
            (1u64 << w) - 1
        };
        let mut table = Box::new([0u32; 256]);
        for (i, t) in table.iter_mut().enumerate() {
            let mut r = (i as u64) << (w - 8);
            for _ in 0..8 {
                r = if r & top != 0 {
                    (r << 1) ^ p.poly as u64
                } else {
                    r << 1
                };
            }
            *t = (r & mask) as u32;
        }
        Crc {
            p: CrcParams { width: w, ..p },
            table,
        }
    }

    /// The parameters.
    pub fn params(&self) -> CrcParams {
        self.p
    }

    /// CRC of `data`.
    pub fn compute(&self, data: &[u8]) -> u32 {
        let w = self.p.width;
        let mask: u64 = if w == 32 {
            0xFFFF_FFFF
        } else {
            (1u64 << w) - 1
        };
        let mut r = self.p.init as u64 & mask;
        for &b in data {
            let b = if self.p.reflect_in {
                b.reverse_bits()
            } else {
                b
            };
            let idx = (((r >> (w - 8)) as u8) ^ b) as usize;
            r = ((r << 8) & mask) ^ self.table[idx] as u64;
        }
        let mut r = r as u32;
        if self.p.reflect_out {
            r = r.reverse_bits() >> (32 - w);
        }
        (r ^ self.p.xor_out) & mask as u32
    }
}

/// Internet checksum (RFC 1071) of `data`.
pub fn csum16(data: &[u8]) -> u16 {
    let mut sum: u64 = 0;
    let mut chunks = data.chunks_exact(2);
    for c in &mut chunks {
        sum += u16::from_be_bytes([c[0], c[1]]) as u64;
    }
    if let [b] = chunks.remainder() {
        sum += (*b as u64) << 8;
    }
    fold_csum(sum)
}

/// The ones' complement checksum of a sum of 16-bit words: the carries
/// folded back in, then inverted.
#[inline]
pub(crate) fn fold_csum(mut sum: u64) -> u16 {
    while sum >> 16 != 0 {
        sum = (sum & 0xFFFF) + (sum >> 16);
    }
    !(sum as u16)
}

/// XOR of the 16-bit big-endian words of `data`.
pub fn xor16(data: &[u8]) -> u16 {
    let mut x = 0u16;
    let mut chunks = data.chunks_exact(2);
    for c in &mut chunks {
        x ^= u16::from_be_bytes([c[0], c[1]]);
    }
    if let [b] = chunks.remainder() {
        x ^= (*b as u16) << 8;
    }
    x
}

/// The last (up to) 8 bytes of `data` as a big-endian integer.
pub fn identity(data: &[u8]) -> u64 {
    let start = data.len().saturating_sub(8);
    data[start..]
        .iter()
        .fold(0u64, |acc, &b| (acc << 8) | b as u64)
}

/// A calculation algorithm.
#[derive(Debug, Clone)]
pub enum Algo {
    /// A CRC (`crc16`, `crc32`, `crcCCITT`, `*_custom`).
    Crc(Crc),
    /// `csum16`
    Csum16,
    /// `xor16`
    Xor16,
    /// `identity`
    Identity,
    /// `random`
    Random,
}

impl Algo {
    /// The algorithm for a BMv2 algo name, or `None` when unknown.
    pub fn by_name(name: &str) -> Option<Algo> {
        Some(match name {
            "crc32" | "crc32_custom" => Algo::Crc(Crc::new(CrcParams::CRC32)),
            "crc16" | "crc16_custom" => Algo::Crc(Crc::new(CrcParams::CRC16)),
            "crcCCITT" => Algo::Crc(Crc::new(CrcParams::CCITT)),
            "csum16" => Algo::Csum16,
            "xor16" => Algo::Xor16,
            "identity" => Algo::Identity,
            "random" => Algo::Random,
            _ => return None,
        })
    }

    /// Output width in bits.
    pub fn width(&self) -> u32 {
        match self {
            Algo::Crc(c) => c.params().width,
            Algo::Csum16 | Algo::Xor16 => 16,
            Algo::Identity | Algo::Random => 64,
        }
    }

    /// Hash of `data`; `rng` supplies the value for `random`.
    pub fn compute(&self, data: &[u8], rng: &mut crate::rng::Rng) -> u64 {
        match self {
            Algo::Crc(c) => c.compute(data) as u64,
            Algo::Csum16 => csum16(data) as u64,
            Algo::Xor16 => xor16(data) as u64,
            Algo::Identity => identity(data),
            Algo::Random => rng.next_u64(),
        }
    }
}

/// Where a calculation's input bits go: bytes for a hash, or straight into
/// a running checksum.
pub(crate) trait Sink {
    /// Appends the low `width` (<= 128) bits of `v`, most significant first.
    fn push(&mut self, v: u128, width: u32);
    /// Appends whole bytes.
    fn push_bytes(&mut self, b: &[u8]);
}

/// Sums input bits as 16-bit words on the fly: `csum16` without writing the
/// input out first, for the inputs [`crate::csum_plan::CsumPlan`] does not
/// cover (several headers, the payload, a non-empty variable-length field).
#[derive(Default)]
pub(crate) struct CsumSink {
    sum: u64,
    /// Pending bits (the low `n` bits), n < 16 between calls.
    acc: u64,
    n: u32,
}

impl CsumSink {
    /// Appends `width` (<= 32) bits.
    #[inline(always)]
    fn push_small(&mut self, v: u64, width: u32) {
        self.acc = (self.acc << width) | (v & mask64(width));
        self.n += width;
        while self.n >= 16 {
            self.n -= 16;
            self.sum += (self.acc >> self.n) & 0xFFFF;
        }
        self.acc &= mask64(self.n);
    }

    /// The checksum, as [`csum16`] of the same bits gives it.
    pub fn finish(&self) -> u16 {
        let mut sum = self.sum;
        if self.n > 0 {
            // Zero-padded on the right to a whole word.
            sum += (self.acc << (16 - self.n)) & 0xFFFF;
        }
        fold_csum(sum)
    }
}

impl Sink for CsumSink {
    #[inline]
    fn push(&mut self, v: u128, width: u32) {
        let mut rest = width;
        while rest > 32 {
            rest -= 32;
            self.push_small((v >> rest) as u64, 32);
        }
        self.push_small(v as u64, rest);
    }

    fn push_bytes(&mut self, b: &[u8]) {
        if !self.n.is_multiple_of(8) {
            for &x in b {
                self.push_small(x as u64, 8);
            }
            return;
        }
        let mut b = b;
        if self.n == 8 {
            if let Some((&first, rest)) = b.split_first() {
                self.push_small(first as u64, 8);
                b = rest;
            }
        }
        let mut words = b.chunks_exact(2);
        for w in &mut words {
            self.sum += u16::from_be_bytes([w[0], w[1]]) as u64;
        }
        if let [x] = words.remainder() {
            self.push_small(*x as u64, 8);
        }
    }
}

impl Sink for BitSink<'_> {
    #[inline]
    fn push(&mut self, v: u128, width: u32) {
        BitSink::push(self, v, width);
    }

    fn push_bytes(&mut self, b: &[u8]) {
        BitSink::push_bytes(self, b);
    }
}

/// Appends bits to a byte buffer, most significant bit first. Call
/// [`BitSink::finish`] to flush a final partial byte (zero-padded on the
/// right).
pub(crate) struct BitSink<'a> {
    pub out: &'a mut Vec<u8>,
    /// Pending bits (the low `n` bits), n < 64.
    acc: u64,
    n: u32,
}

impl<'a> BitSink<'a> {
    pub fn new(out: &'a mut Vec<u8>) -> Self {
        BitSink { out, acc: 0, n: 0 }
    }

    /// Appends the low `width` (<= 128) bits of `v`.
    #[inline(always)]
    pub fn push(&mut self, v: u128, width: u32) {
        if width > 64 {
            self.push64((v >> 64) as u64, width - 64);
            self.push64(v as u64, 64);
        } else {
            self.push64(v as u64, width);
        }
    }

    /// Appends the low `width` (<= 64) bits of `v`.
    #[inline(always)]
    pub fn push64(&mut self, v: u64, width: u32) {
        if width == 0 {
            return;
        }
        let v = v & mask64(width);
        let free = 64 - self.n;
        if width < free {
            self.acc = (self.acc << width) | v;
            self.n += width;
            return;
        }
        // Fill the accumulator to 64 bits and move it out.
        let rest = width - free;
        let full = if free == 64 {
            v
        } else {
            (self.acc << free) | (v >> rest)
        };
        self.out.extend_from_slice(&full.to_be_bytes());
        self.acc = if rest == 0 { 0 } else { v & mask64(rest) };
        self.n = rest;
    }

    pub fn push_bytes(&mut self, b: &[u8]) {
        self.flush_bytes();
        if self.n == 0 {
            self.out.extend_from_slice(b);
        } else {
            for &x in b {
                self.push64(x as u64, 8);
            }
        }
    }

    fn flush_bytes(&mut self) {
        while self.n >= 8 {
            self.n -= 8;
            self.out.push((self.acc >> self.n) as u8);
        }
        self.acc &= (1u64 << self.n) - 1;
    }

    /// Flushes whole bytes and a final partial byte.
    pub fn finish(&mut self) {
        self.flush_bytes();
        if self.n > 0 {
            self.out.push((self.acc << (8 - self.n)) as u8);
            self.acc = 0;
            self.n = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    const CHECK: &[u8] = b"123456789";

    #[test]
    fn crc_check_values() {
        assert_eq!(Crc::new(CrcParams::CRC32).compute(CHECK), 0xCBF4_3926);
        assert_eq!(Crc::new(CrcParams::CRC16).compute(CHECK), 0xBB3D);
        assert_eq!(Crc::new(CrcParams::CCITT).compute(CHECK), 0x29B1);
        // CRC-16/XMODEM (custom parameters)
        let x = CrcParams {
            width: 16,
            poly: 0x1021,
            init: 0,
            xor_out: 0,
            reflect_in: false,
            reflect_out: false,
        };
        assert_eq!(Crc::new(x).compute(CHECK), 0x31C3);
        // CRC-32C (Castagnoli)
        let c = CrcParams {
            poly: 0x1EDC_6F41,
            ..CrcParams::CRC32
        };
        assert_eq!(Crc::new(c).compute(CHECK), 0xE306_9283);
        assert_eq!(Crc::new(CrcParams::CRC32).compute(b""), 0);
    }

    #[test]
    fn csum16_known_ipv4_header() {
        // RFC 1071 style example: an IPv4 header with its checksum field zeroed.
        let h = [
            0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0x00, 0x00, 0xc0, 0xa8,
            0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7,
        ];
        assert_eq!(csum16(&h), 0xb861);
        let mut h2 = h;
        h2[10] = 0xb8;
        h2[11] = 0x61;
        assert_eq!(csum16(&h2), 0);
        assert_eq!(csum16(&[0x01]), !0x0100);
    }

    #[test]
    fn xor16_and_identity() {
        assert_eq!(xor16(&[0x12, 0x34, 0x56, 0x78]), 0x1234 ^ 0x5678);
        assert_eq!(xor16(&[0x12, 0x34, 0x56]), 0x1234 ^ 0x5600);
        assert_eq!(identity(&[1, 2]), 0x0102);
        assert_eq!(identity(&[9, 1, 2, 3, 4, 5, 6, 7, 8]), 0x0102030405060708);
    }

    /// Random widths and values agree with the bit-by-bit reference writer.
    #[test]
    fn bitsink_matches_reference() {
        let mut rng = crate::rng::Rng::new(3);
        for _ in 0..200 {
            let mut buf = Vec::new();
            let mut want = vec![0u8; 200];
            let mut pos = 0usize;
            let mut sink = BitSink::new(&mut buf);
            for _ in 0..8 {
                let w = rng.range(0, 128) as u32;
                let v = rng.range(0, u128::MAX);
                sink.push(v, w);
                if w > 0 {
                    crate::phv::write_bits(&mut want, pos, w, v & crate::phv::mask(w));
                }
                pos += w as usize;
                if rng.range(0, 3) == 0 {
                    sink.push_bytes(&[0xa5]);
                    // bytes continue the bit string (no alignment)
                    crate::phv::write_bits(&mut want, pos, 8, 0xa5);
                    pos += 8;
                }
            }
            sink.finish();
            want.truncate(pos.div_ceil(8));
            assert_eq!(buf, want);
        }
    }

    #[test]
    fn bitsink_packs_without_padding() {
        let mut buf = Vec::new();
        let mut w = BitSink::new(&mut buf);
        w.push(0x4, 4);
        w.push(0x5, 4);
        w.push(0xabc, 12);
        w.finish();
        assert_eq!(buf, vec![0x45, 0xab, 0xc0]);
        buf.clear();
        let mut w = BitSink::new(&mut buf);
        w.push(0x1234, 16);
        w.push_bytes(&[0x56]);
        w.push(1, 1);
        w.push(u128::MAX, 128);
        w.push(0, 7);
        w.finish();
        let mut want = vec![0x12, 0x34, 0x56, 0xff];
        want.extend_from_slice(&[0xff; 15]);
        want.push(0x80);
        assert_eq!(buf, want);
    }
}

#[cfg(test)]
mod sink_tests {
    use super::*;
    use crate::rng::Rng;

    /// The checksum sink agrees with csum16 over the same bits written out,
    /// for fields of every width and alignment, with bytes mixed in.
    #[test]
    fn csum_sink_matches_csum16_of_the_written_bits() {
        let mut rng = Rng::new(11);
        for _ in 0..5_000 {
            let mut bytes = Vec::new();
            let mut bits = BitSink::new(&mut bytes);
            let mut sum = CsumSink::default();
            for _ in 0..(rng.next_u64() % 12) {
                if rng.next_u64().is_multiple_of(4) {
                    let len = (rng.next_u64() % 7) as usize;
                    let b: Vec<u8> = (0..len).map(|_| rng.next_u64() as u8).collect();
                    Sink::push_bytes(&mut bits, &b);
                    sum.push_bytes(&b);
                } else {
                    let w = (rng.next_u64() % 129) as u32;
                    let v = (rng.next_u64() as u128) << 64 | rng.next_u64() as u128;
                    Sink::push(&mut bits, v, w);
                    sum.push(v, w);
                }
            }
            bits.finish();
            assert_eq!(sum.finish(), csum16(&bytes));
        }
    }
}
