//! The per-packet header vector: every field of every header instance in one
//! flat array of `u128` bit patterns, validity bits, stack indices and
//! variable-length field storage.

/// Field values are stored as `u128` bit patterns masked to their width;
/// expression arithmetic uses `i128` (see the crate docs for the width rules).
pub type Val = i128;

/// Per-packet header vector.
#[derive(Clone, Debug)]
pub struct Phv {
    /// Field values (bit patterns), indexed by global field index.
    pub vals: Vec<u128>,
    /// Header validity, indexed by header index.
    pub valid: Vec<bool>,
    /// Next index for each header stack.
    pub stack_next: Vec<u32>,
    /// Variable-length field contents per varbit slot: (bits, bytes).
    pub varbits: Vec<(u32, Vec<u8>)>,
}

impl Phv {
    pub(crate) fn new(nfields: usize, valid_init: &[bool], nstacks: usize, nvarbits: usize) -> Phv {
        Phv {
            vals: vec![0; nfields],
            valid: valid_init.to_vec(),
            stack_next: vec![0; nstacks],
            varbits: vec![(0, Vec::new()); nvarbits],
        }
    }

    /// Back to the initial state: all zero, only metadata valid.
    pub(crate) fn reset(&mut self, valid_init: &[bool]) {
        self.vals.iter_mut().for_each(|v| *v = 0);
        self.valid.copy_from_slice(valid_init);
        self.stack_next.iter_mut().for_each(|v| *v = 0);
        for vb in &mut self.varbits {
            vb.0 = 0;
            vb.1.clear();
        }
    }

    /// Copies everything from `o` without reallocating.
    pub(crate) fn copy_from(&mut self, o: &Phv) {
        self.vals.copy_from_slice(&o.vals);
        self.valid.copy_from_slice(&o.valid);
        self.stack_next.copy_from_slice(&o.stack_next);
        for (a, b) in self.varbits.iter_mut().zip(&o.varbits) {
            a.0 = b.0;
            a.1.clear();
            a.1.extend_from_slice(&b.1);
        }
    }
}

/// Mask of the low `w` bits (w <= 128).
#[inline]
pub(crate) fn mask(w: u32) -> u128 {
    if w >= 128 {
        u128::MAX
    } else {
        (1u128 << w) - 1
    }
}

/// Mask of the low `w` bits (w <= 64) as a `u64`.
#[inline]
pub(crate) fn mask64(w: u32) -> u64 {
    if w >= 64 {
        u64::MAX
    } else {
        (1u64 << w) - 1
    }
}

/// Sign-extends the low `w` bits of `v`.
#[inline]
pub(crate) fn sext(v: u128, w: u32) -> i128 {
    if w == 0 || w >= 128 {
        return v as i128;
    }
    let s = 128 - w;
    ((v << s) as i128) >> s
}

/// Reads `width` (<= 128) bits at bit offset `bit_off` of `data` (big-endian,
/// MSB first). The caller guarantees the bits are inside `data`.
#[inline]
pub(crate) fn read_bits(data: &[u8], bit_off: usize, width: u32) -> u128 {
    if width == 0 {
        return 0;
    }
    let start = bit_off / 8;
    let in_byte = (bit_off % 8) as u32;
    // Most fields: one 8-byte load (the packet has room after them).
    if in_byte + width <= 64 && start + 8 <= data.len() {
        let mut b = [0u8; 8];
        b.copy_from_slice(&data[start..start + 8]);
        return ((u64::from_be_bytes(b) << in_byte) >> (64 - width)) as u128;
    }
    let end = (bit_off + width as usize).div_ceil(8);
    let trailing = (end * 8 - (bit_off + width as usize)) as u32;
    if start + 16 <= data.len() && end - start <= 16 {
        let mut b = [0u8; 16];
        b.copy_from_slice(&data[start..start + 16]);
        let acc = u128::from_be_bytes(b);
        let shift = (16 - (end - start)) as u32 * 8 + trailing;
        return (acc >> shift) & mask(width);
    }
    if end - start <= 16 {
        let mut acc: u128 = 0;
        for &b in &data[start..end] {
            acc = (acc << 8) | b as u128;
        }
        (acc >> trailing) & mask(width)
    } else {
        // 17 bytes: the first byte holds the top bits.
        let first = (data[start] & (0xFFu8 >> (bit_off % 8))) as u128;
        let mut lo: u128 = 0;
        for &b in &data[start + 1..end] {
            lo = (lo << 8) | b as u128;
        }
        ((first << (128 - trailing)) | (lo >> trailing)) & mask(width)
    }
}

/// Writes the low `width` bits of `v` at bit offset `bit_off` of `buf`
/// (test reference for the readers).
#[cfg(test)]
pub(crate) fn write_bits(buf: &mut [u8], bit_off: usize, width: u32, v: u128) {
    if bit_off.is_multiple_of(8) && width.is_multiple_of(8) {
        let n = (width / 8) as usize;
        let bytes = v.to_be_bytes();
        buf[bit_off / 8..bit_off / 8 + n].copy_from_slice(&bytes[16 - n..]);
        return;
    }
    let mut remaining = width;
    let mut pos = bit_off;
    while remaining > 0 {
        let byte = pos / 8;
        let bit_in = (pos % 8) as u32;
        let take = (8 - bit_in).min(remaining);
        let below = remaining - take;
        let chunk_mask: u16 = (1u16 << take) - 1;
        let chunk = ((v >> below) as u16) & chunk_mask;
        let sh = 8 - bit_in - take;
        let b = buf[byte] as u16;
        buf[byte] = ((b & !(chunk_mask << sh)) | (chunk << sh)) as u8;
        pos += take as usize;
        remaining -= take;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bits_roundtrip_all_offsets_and_widths() {
        let mut x = 0x0123_4567_89ab_cdef_fedc_ba98_7654_3210u128;
        for off in 0..16usize {
            for w in [
                1u32, 3, 7, 8, 9, 13, 16, 31, 32, 33, 48, 63, 64, 65, 100, 127, 128,
            ] {
                x = x.rotate_left(7) ^ 0x5555;
                let v = x & mask(w);
                let mut buf = vec![0xA5u8; 40];
                let before = buf.clone();
                write_bits(&mut buf, off, w, v);
                assert_eq!(read_bits(&buf, off, w), v, "off {off} w {w}");
                // Bits outside the field are untouched.
                for i in 0..buf.len() * 8 {
                    if i < off || i >= off + w as usize {
                        assert_eq!(
                            read_bits(&buf, i, 1),
                            read_bits(&before, i, 1),
                            "bit {i} off {off} w {w}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn sign_extension() {
        assert_eq!(sext(0xff, 8), -1);
        assert_eq!(sext(0x7f, 8), 127);
        assert_eq!(sext(0x80, 8), -128);
        assert_eq!(sext(u128::MAX, 128), -1);
    }
}
