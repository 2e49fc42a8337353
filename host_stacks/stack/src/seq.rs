//! Sequence-number comparisons modulo 2^32 (RFC 9293 §3.4).

/// `a < b` in sequence space.
#[inline]
pub fn lt(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) < 0
}

/// `a <= b` in sequence space.
#[inline]
pub fn le(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) <= 0
}

/// `a > b` in sequence space.
#[inline]
pub fn gt(a: u32, b: u32) -> bool {
    lt(b, a)
}

/// `a >= b` in sequence space.
#[inline]
pub fn ge(a: u32, b: u32) -> bool {
    le(b, a)
}

/// Distance from `from` up to `to` (`to - from` modulo 2^32).
#[inline]
pub fn diff(to: u32, from: u32) -> u32 {
    to.wrapping_sub(from)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comparisons_wrap() {
        assert!(lt(u32::MAX, 0));
        assert!(gt(5, u32::MAX - 5));
        assert!(le(7, 7) && ge(7, 7) && !lt(7, 7));
        assert_eq!(diff(3, u32::MAX), 4);
    }
}
