//! Fixed-size send and receive rings, allocated once per connection, and
//! the receiver's out-of-order range set (RFC 2018's SACK blocks come from it).

use crate::seq;

/// Bytes the application wrote and the peer has not acknowledged yet.
#[derive(Clone, Debug)]
pub struct SendBuffer {
    buf: Box<[u8]>,
    head: usize,
    len: usize,
}

impl SendBuffer {
    pub fn new(capacity: usize) -> SendBuffer {
        SendBuffer {
            buf: vec![0; capacity.max(1)].into_boxed_slice(),
            head: 0,
            len: 0,
        }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn free(&self) -> usize {
        self.buf.len() - self.len
    }

    /// Append as much of `data` as fits; returns how much.
    pub fn write(&mut self, data: &[u8]) -> usize {
        let n = data.len().min(self.free());
        let cap = self.buf.len();
        let tail = (self.head + self.len) % cap;
        let first = n.min(cap - tail);
        self.buf[tail..tail + first].copy_from_slice(&data[..first]);
        self.buf[..n - first].copy_from_slice(&data[first..n]);
        self.len += n;
        n
    }

    /// Copy `out.len()` bytes starting `offset` bytes after the head.
    pub fn read_at(&self, offset: usize, out: &mut [u8]) {
        debug_assert!(offset + out.len() <= self.len);
        let cap = self.buf.len();
        let start = (self.head + offset) % cap;
        let first = out.len().min(cap - start);
        out[..first].copy_from_slice(&self.buf[start..start + first]);
        let rest = out.len() - first;
        out[first..].copy_from_slice(&self.buf[..rest]);
    }

    /// Drop `n` acknowledged bytes from the head.
    pub fn consume(&mut self, n: usize) {
        let n = n.min(self.len);
        self.head = (self.head + n) % self.buf.len();
        self.len -= n;
    }
}

/// Out-of-order ranges kept without growing the set (it grows past this,
/// once, when a window has more holes).
pub const INITIAL_RANGES: usize = 64;

/// Sorted, disjoint, non-adjacent sequence ranges [start, end) above RCV.NXT.
/// Every byte the receiver keeps is in it, so every kept byte can be SACKed:
/// a window with one hole per segment (a slow-start overshoot) needs one
/// range per segment.
#[derive(Clone, Debug)]
pub struct RangeSet {
    r: Vec<(u32, u32)>,
}

impl Default for RangeSet {
    fn default() -> Self {
        RangeSet {
            r: Vec::with_capacity(INITIAL_RANGES),
        }
    }
}

impl RangeSet {
    pub fn as_slice(&self) -> &[(u32, u32)] {
        &self.r
    }

    pub fn is_empty(&self) -> bool {
        self.r.is_empty()
    }

    /// Add [start, end), merging with the ranges it overlaps or touches.
    pub fn insert(&mut self, start: u32, end: u32) {
        let (mut s, mut e) = (start, end);
        // First range that ends at or after `s` (could touch it).
        let i = self.r.partition_point(|&(_, b)| seq::lt(b, s));
        let mut j = i;
        while j < self.r.len() && seq::le(self.r[j].0, e) {
            if seq::lt(self.r[j].0, s) {
                s = self.r[j].0;
            }
            if seq::gt(self.r[j].1, e) {
                e = self.r[j].1;
            }
            j += 1;
        }
        if i == j {
            self.r.insert(i, (s, e));
        } else {
            self.r[i] = (s, e);
            self.r.drain(i + 1..j);
        }
    }

    /// If the first range starts at or below `at`, remove it and return its end.
    pub fn pop_reached(&mut self, at: u32) -> Option<u32> {
        if self.r.first().is_some_and(|&(a, _)| seq::le(a, at)) {
            Some(self.r.remove(0).1)
        } else {
            None
        }
    }

    /// The range containing `s`, if any.
    pub fn containing(&self, s: u32) -> Option<(u32, u32)> {
        let i = self.r.partition_point(|&(_, b)| seq::le(b, s));
        self.r
            .get(i)
            .copied()
            .filter(|&(a, b)| seq::le(a, s) && seq::lt(s, b))
    }
}

/// Received bytes: `ready` in-order bytes for the application, then room
/// for out-of-order data up to the capacity.
#[derive(Clone, Debug)]
pub struct RecvBuffer {
    buf: Box<[u8]>,
    head: usize,
    ready: usize,
}

impl RecvBuffer {
    pub fn new(capacity: usize) -> RecvBuffer {
        RecvBuffer {
            buf: vec![0; capacity.max(1)].into_boxed_slice(),
            head: 0,
            ready: 0,
        }
    }

    /// Room after the in-order bytes (the receive window).
    pub fn window(&self) -> usize {
        self.buf.len() - self.ready
    }

    pub fn capacity(&self) -> usize {
        self.buf.len()
    }

    /// In-order bytes waiting for the application.
    pub fn ready(&self) -> usize {
        self.ready
    }

    /// Store `data` at `offset` bytes past the in-order bytes (within the window).
    pub fn write_at(&mut self, offset: usize, data: &[u8]) {
        debug_assert!(offset + data.len() <= self.window());
        let cap = self.buf.len();
        let start = (self.head + self.ready + offset) % cap;
        let first = data.len().min(cap - start);
        self.buf[start..start + first].copy_from_slice(&data[..first]);
        self.buf[..data.len() - first].copy_from_slice(&data[first..]);
    }

    /// `n` more bytes became in-order.
    pub fn advance(&mut self, n: usize) {
        self.ready += n;
    }

    /// Copy in-order bytes out to the application.
    pub fn read(&mut self, out: &mut [u8]) -> usize {
        let n = out.len().min(self.ready);
        let cap = self.buf.len();
        let first = n.min(cap - self.head);
        out[..first].copy_from_slice(&self.buf[self.head..self.head + first]);
        out[first..n].copy_from_slice(&self.buf[..n - first]);
        self.head = (self.head + n) % cap;
        self.ready -= n;
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rings_wrap() {
        let mut s = SendBuffer::new(8);
        assert_eq!(s.write(b"abcdef"), 6);
        s.consume(4);
        assert_eq!(s.write(b"ghijklm"), 6);
        let mut out = [0u8; 8];
        s.read_at(0, &mut out);
        assert_eq!(&out, b"efghijkl");
        let mut r = RecvBuffer::new(8);
        r.write_at(0, b"abcde");
        r.advance(5);
        let mut o = [0u8; 3];
        assert_eq!(r.read(&mut o), 3);
        r.write_at(2, b"XYZ"); // wraps
        r.write_at(0, b"fg");
        r.advance(5);
        let mut all = [0u8; 8];
        assert_eq!(r.read(&mut all), 7);
        assert_eq!(&all[..7], b"defgXYZ");
    }

    #[test]
    fn ranges_merge_and_pop() {
        let mut r = RangeSet::default();
        r.insert(10, 20);
        r.insert(30, 40);
        r.insert(50, 60);
        r.insert(20, 30); // joins the first two
        assert_eq!(r.as_slice(), &[(10, 40), (50, 60)]);
        assert_eq!(r.containing(45), None);
        assert_eq!(r.containing(55), Some((50, 60)));
        r.insert(5, 55);
        assert_eq!(r.as_slice(), &[(5, 60)]);
        assert_eq!(r.pop_reached(4), None);
        assert_eq!(r.pop_reached(5), Some(60));
        assert!(r.is_empty());
        // Wrapping sequence numbers.
        r.insert(u32::MAX - 5, 5);
        r.insert(10, 12);
        assert_eq!(r.containing(0), Some((u32::MAX - 5, 5)));
        // One hole per segment: every range is kept.
        let mut many = RangeSet::default();
        for k in (0..1000u32).rev() {
            many.insert(100 + 10 * k, 105 + 10 * k);
        }
        assert_eq!(many.as_slice().len(), 1000);
        assert!(many.as_slice().windows(2).all(|w| w[0].1 < w[1].0));
    }
}
