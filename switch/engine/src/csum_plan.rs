//! `csum16` over fields without walking their bits.
//!
//! The ones' complement sum of 16-bit words is the input, read as one big
//! number, modulo 0xFFFF (because 2^16 = 1 mod 0xFFFF). A field that ends `e`
//! bits before the end of the (word-padded) input therefore adds
//! `value * 2^e`, which modulo 0xFFFF is its value folded to 16 bits and
//! rotated left by `e % 16`. Every field's `e` is fixed when all the inputs
//! are fields of one header (valid together) and constants, as in the IPv4
//! header checksum, so the sum is one fold, rotate and add per field.
//! Variable-length fields may follow (IPv4 options): while they are empty
//! (or their headers invalid) they add nothing; otherwise the caller walks
//! the bits.
//!
//! The fold keeps "zero" and "non-zero" apart (it never turns a non-zero
//! value into 0 or 0xFFFF into 0), so the result is exactly `csum16`'s,
//! including its choice between 0x0000 and 0xFFFF.

use crate::calc::fold_csum;
use crate::phv::{mask, Phv};
use crate::program::CalcIn;

/// A precomputed `csum16` calculation: see the module docs.
#[derive(Debug, Clone)]
pub(crate) struct CsumPlan {
    /// The header all field inputs belong to (`None`: metadata only).
    pub header: Option<u32>,
    /// Fields up to 48 bits once shifted: (field index, mask, shift). Their
    /// contribution is the shifted value itself (no fold needed: the final
    /// fold reduces the sum, and a u64 holds 65,536 of them).
    pub narrow: Vec<(u32, u64, u32)>,
    /// Wider fields: (field index, mask, rotation).
    pub wide: Vec<(u32, u128, u32)>,
    /// The constants' contribution, already folded and rotated.
    pub consts: u64,
    /// (header, varbit slot) of the variable-length fields ending the input.
    pub varbits: Vec<(u32, u32)>,
}

impl CsumPlan {
    /// The plan for `inputs`, when they are fields of at most one header
    /// and constants, then any variable-length fields (`slot_of` gives a
    /// header's varbit slot).
    pub fn new(inputs: &[CalcIn], slot_of: impl Fn(u32) -> Option<u32>) -> Option<CsumPlan> {
        let mut header = None;
        let mut total: u64 = 0;
        let fixed = inputs
            .iter()
            .position(|i| matches!(i, CalcIn::Varbit(_)))
            .unwrap_or(inputs.len());
        let (inputs, tail) = inputs.split_at(fixed);
        let mut varbits = Vec::new();
        for i in tail {
            match i {
                CalcIn::Varbit(h) => varbits.push((*h, slot_of(*h)?)),
                _ => return None,
            }
        }
        for i in inputs {
            match i {
                CalcIn::Field(_, w, h) => {
                    if *h != u32::MAX {
                        if header.is_some_and(|x| x != *h) {
                            return None;
                        }
                        header = Some(*h);
                    }
                    total += *w as u64;
                }
                CalcIn::Const(_, w) => total += *w as u64,
                _ => return None,
            }
        }
        // Zero bits up to a whole byte, then a zero byte up to a whole word.
        let padded = total.div_ceil(16) * 16;
        let mut offset = 0u64;
        let (mut narrow, mut wide) = (Vec::new(), Vec::new());
        let mut consts = 0u64;
        for i in inputs {
            let (w, rot) = match i {
                CalcIn::Field(_, w, _) | CalcIn::Const(_, w) => {
                    let end = padded - offset - *w as u64;
                    offset += *w as u64;
                    (*w, (end % 16) as u32)
                }
                _ => unreachable!("checked above"),
            };
            match i {
                CalcIn::Field(f, _, _) if w + rot <= 48 => narrow.push((*f, mask(w) as u64, rot)),
                CalcIn::Field(f, _, _) => wide.push((*f, mask(w), rot)),
                CalcIn::Const(v, _) => consts += rotate16(fold16(v & mask(w)), rot),
                _ => unreachable!("checked above"),
            }
        }
        Some(CsumPlan {
            header,
            narrow,
            wide,
            consts,
            varbits,
        })
    }

    /// The checksum, or `None` when the header is invalid (its fields drop
    /// out of the input, moving the others) or a variable-length field has
    /// bytes: the caller walks the bits then.
    #[inline]
    pub fn run(&self, phv: &Phv) -> Option<u16> {
        let (vals, valid) = (&phv.vals, &phv.valid);
        if let Some(h) = self.header {
            if !valid[h as usize] {
                return None;
            }
        }
        if self
            .varbits
            .iter()
            .any(|&(h, slot)| valid[h as usize] && !phv.varbits[slot as usize].1.is_empty())
        {
            return None;
        }
        let mut sum = self.consts;
        for &(f, m, shift) in &self.narrow {
            sum += (vals[f as usize] as u64 & m) << shift;
        }
        for &(f, m, rot) in &self.wide {
            sum += rotate16(fold16(vals[f as usize] & m), rot);
        }
        Some(fold_csum(sum))
    }
}

/// `v` modulo 0xFFFF as a value in 0..=0xFFFF that is 0 only when `v` is.
#[inline(always)]
fn fold16(v: u128) -> u64 {
    let mut s = if v >> 64 == 0 {
        let x = v as u64;
        (x & 0xFFFF_FFFF) + (x >> 32)
    } else {
        (v as u64 & 0xFFFF_FFFF)
            + ((v >> 32) as u64 & 0xFFFF_FFFF)
            + ((v >> 64) as u64 & 0xFFFF_FFFF)
            + (v >> 96) as u64
    };
    while s >> 16 != 0 {
        s = (s & 0xFFFF) + (s >> 16);
    }
    s
}

/// `x * 2^r` modulo 0xFFFF, for `x` in 0..=0xFFFF and `r` < 16.
#[inline(always)]
fn rotate16(x: u64, r: u32) -> u64 {
    ((x << r) | (x >> (16 - r))) & 0xFFFF
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calc::{CsumSink, Sink};
    use crate::rng::Rng;

    fn wide(rng: &mut Rng) -> u128 {
        (rng.next_u64() as u128) << 64 | rng.next_u64() as u128
    }

    /// The plan gives what summing the bits gives, for any mix of widths
    /// (1..=128 bits, any alignment), constants and values (zeros and
    /// all-ones included, which is where 0x0000 and 0xFFFF differ).
    #[test]
    fn plan_matches_the_bit_sum() {
        let mut rng = Rng::new(5);
        for case in 0..20_000 {
            let n = 1 + rng.next_u64() % 12;
            let mut inputs = Vec::new();
            for f in 0..n as u32 {
                let w = 1 + (rng.next_u64() % 128) as u32;
                if rng.next_u64().is_multiple_of(5) {
                    inputs.push(CalcIn::Const(wide(&mut rng) & mask(w), w));
                } else {
                    let h = if case % 3 == 0 { u32::MAX } else { 0 };
                    inputs.push(CalcIn::Field(f, w, h));
                }
            }
            let vals: Vec<u128> = (0..n)
                .map(|_| match rng.next_u64() % 4 {
                    0 => 0,
                    1 => u128::MAX,
                    _ => wide(&mut rng),
                })
                .collect();
            let mut sink = CsumSink::default();
            for i in &inputs {
                match i {
                    CalcIn::Field(f, w, _) => sink.push(vals[*f as usize] & mask(*w), *w),
                    CalcIn::Const(v, w) => sink.push(*v, *w),
                    _ => unreachable!(),
                }
            }
            let plan = CsumPlan::new(&inputs, |_| None).expect("fields and constants have a plan");
            assert_eq!(
                plan.run(&phv(&vals, &[true])),
                Some(sink.finish()),
                "{inputs:?}"
            );
        }
    }

    #[test]
    fn an_invalid_header_a_second_header_or_varbit_bytes_leave_it_to_the_caller() {
        let one = [CalcIn::Field(0, 16, 0), CalcIn::Field(1, 16, 0)];
        let plan = CsumPlan::new(&one, |_| None).expect("one header");
        assert_eq!(plan.run(&phv(&[1, 2], &[false])), None);
        assert_eq!(plan.run(&phv(&[0, 0], &[true])), Some(0xFFFF));
        let two = [CalcIn::Field(0, 16, 0), CalcIn::Field(1, 16, 1)];
        assert!(CsumPlan::new(&two, |_| None).is_none());
        assert!(CsumPlan::new(&[CalcIn::Payload], |_| None).is_none());
        // A trailing variable-length field (slot 0 of header 1): planned
        // while empty or invalid; a field after it has no plan.
        let opts = [CalcIn::Field(0, 16, 0), CalcIn::Varbit(1)];
        let plan = CsumPlan::new(&opts, |_| Some(0)).expect("trailing varbit");
        let mut with_opts = phv(&[0x1234], &[true, true]);
        assert_eq!(plan.run(&with_opts), Some(!0x1234));
        with_opts.varbits[0] = (32, vec![1, 2, 3, 4]);
        assert_eq!(plan.run(&with_opts), None);
        with_opts.valid[1] = false;
        assert_eq!(plan.run(&with_opts), Some(!0x1234));
        let after = [CalcIn::Varbit(1), CalcIn::Field(0, 16, 0)];
        assert!(CsumPlan::new(&after, |_| Some(0)).is_none());
    }

    fn phv(vals: &[u128], valid: &[bool]) -> Phv {
        let mut p = Phv::new(vals.len(), valid, 0, 1);
        p.vals.copy_from_slice(vals);
        p
    }
}
