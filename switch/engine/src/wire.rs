//! A header's fixed part as whole-byte words, for extraction and emission.
//!
//! Reading or writing fields one at a time at arbitrary bit offsets costs a
//! bounds check, a shift computation and a branch per field. Most headers
//! are runs of fields whose widths add up to whole bytes at regular points:
//! IPv4 is three words (version..fragment offset, ttl..source
//! address, destination address). The layout here groups consecutive
//! fields into such words of at most 8 bytes, computed once per header
//! type; a word is then one big-endian load or store plus a shift per field.
//!
//! A header whose fields do not fall into such words (a field wider than 64
//! bits, or widths that never add up to a byte boundary within 64 bits)
//! has no layout and takes the general bit-by-bit path.

use crate::phv::mask64;
use crate::program::FieldInfo;

/// One word: `bytes` bytes at byte `at` of the header, holding the fields
/// `first..first + parts.len()` (global indices), each as (shift from the
/// word's low bit, mask), in order.
#[derive(Debug, Clone)]
pub(crate) struct Word {
    pub at: usize,
    pub bytes: usize,
    pub first: usize,
    pub parts: Box<[(u32, u64)]>,
}

impl Word {
    /// The word's fields of `vals` (one bounds check for all of them).
    #[inline(always)]
    pub fn fields<'a>(&self, vals: &'a [u128]) -> &'a [u128] {
        &vals[self.first..self.first + self.parts.len()]
    }

    /// The word's fields of `vals`, to write.
    #[inline(always)]
    pub fn fields_mut<'a>(&self, vals: &'a mut [u128]) -> &'a mut [u128] {
        &mut vals[self.first..self.first + self.parts.len()]
    }
}

/// Groups the fields `first..first + fields.len()` into words, or `None`
/// when they do not fall into whole-byte words of at most 64 bits.
pub(crate) fn layout(first: usize, fields: &[FieldInfo]) -> Option<Box<[Word]>> {
    let mut words = Vec::new();
    let mut i = 0;
    let mut off = 0u32;
    while i < fields.len() {
        if fields[i].offset != off {
            return None;
        }
        // The longest run from field i that ends on a byte boundary in 64 bits.
        let (mut bits, mut end) = (0u32, None);
        for (j, f) in fields.iter().enumerate().skip(i) {
            if f.width == 0 || bits + f.width > 64 {
                break;
            }
            bits += f.width;
            if bits % 8 == 0 {
                end = Some((j + 1, bits));
            }
        }
        let (next, total) = end?;
        let mut below = total;
        let parts = (i..next)
            .map(|j| {
                let w = fields[j].width;
                below -= w;
                (below, mask64(w))
            })
            .collect();
        words.push(Word {
            at: (off / 8) as usize,
            bytes: (total / 8) as usize,
            first: first + i,
            parts,
        });
        off += total;
        i = next;
    }
    Some(words.into())
}

/// Reads `bytes` (1..=8) bytes at `at` as a big-endian number. The caller
/// guarantees they are inside `data`.
#[inline(always)]
pub(crate) fn load(data: &[u8], at: usize, bytes: usize) -> u64 {
    if let Some(b) = data.get(at..at + 8) {
        let mut w = [0u8; 8];
        w.copy_from_slice(b);
        u64::from_be_bytes(w) >> (64 - 8 * bytes as u32)
    } else {
        data[at..at + bytes]
            .iter()
            .fold(0u64, |acc, &b| (acc << 8) | b as u64)
    }
}

/// Appends the low `bytes` (1..=8) bytes of `v`, big-endian, to `out`.
#[inline(always)]
pub(crate) fn store(out: &mut Vec<u8>, v: u64, bytes: usize) {
    // One fixed 8-byte append, then the unused top bytes cut: cheaper than a
    // copy of variable length.
    let len = out.len();
    out.extend_from_slice(&(v << (64 - 8 * bytes as u32)).to_be_bytes());
    out.truncate(len + bytes);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(widths: &[u32]) -> Vec<FieldInfo> {
        let mut off = 0;
        widths
            .iter()
            .map(|&width| {
                let f = FieldInfo {
                    header: 0,
                    offset: off,
                    width,
                    signed: false,
                };
                off += width;
                f
            })
            .collect()
    }

    #[test]
    fn ipv4_is_three_words() {
        let w = layout(10, &fields(&[4, 4, 8, 16, 16, 3, 13, 8, 8, 16, 32, 32])).unwrap();
        let shape: Vec<(usize, usize, usize)> =
            w.iter().map(|w| (w.at, w.bytes, w.parts.len())).collect();
        assert_eq!(shape, [(0, 8, 7), (8, 8, 4), (16, 4, 1)]);
        assert_eq!([w[0].first, w[1].first, w[2].first], [10, 17, 21]);
        // version is the top 4 bits of the first word, fragment offset the low 13.
        assert_eq!(w[0].parts[0], (60, 0xF));
        assert_eq!(w[0].parts[6], (0, 0x1FFF));
    }

    #[test]
    fn headers_without_whole_byte_words_have_no_layout() {
        assert!(layout(0, &fields(&[128])).is_none());
        assert!(layout(0, &fields(&[60, 8])).is_none());
        assert!(layout(0, &fields(&[3])).is_none());
        assert!(layout(0, &fields(&[48, 48, 16])).is_some());
    }

    #[test]
    fn load_and_store_round_trip_at_the_end_of_a_buffer() {
        let data: Vec<u8> = (1..=10).collect();
        for bytes in 1..=8 {
            for at in 0..=data.len() - bytes {
                let v = load(&data, at, bytes);
                let mut out = vec![0xEE];
                store(&mut out, v, bytes);
                assert_eq!(&out[1..], &data[at..at + bytes], "at {at} bytes {bytes}");
            }
        }
    }
}
