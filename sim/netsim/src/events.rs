//! The event queue: integer-nanosecond time, a heap ordered by (time,
//! sequence number), so events at the same time come out in the order they
//! were scheduled and a run never depends on heap internals.
//!
//! The heap holds only (time, sequence number, slot), 24 bytes an entry;
//! the events (56 bytes with a frame) wait in a slab of slots reused as they
//! leave. It is 4-ary: a run keeps 50 to 100 events waiting, so a pop walks
//! down 3 levels instead of 6, each a branch-free choice of the earliest of
//! four children (popping was the hottest loop of a run).

/// Simulated time in integer nanoseconds since the start of the run.
pub type Nanos = u64;

const ARITY: usize = 4;

#[derive(Clone, Copy)]
struct Entry {
    at: Nanos,
    seq: u64,
    slot: u32,
}

impl Entry {
    /// (time, sequence number) as one number: one comparison. Sequence
    /// numbers are unique, so no two keys are equal.
    #[inline(always)]
    fn key(&self) -> u128 {
        (u128::from(self.at) << 64) | u128::from(self.seq)
    }
}

/// A deterministic priority queue of events.
pub struct EventQueue<E> {
    /// A 4-ary min-heap on the key: the children of `i` are `4i+1..=4i+4`.
    heap: Vec<Entry>,
    /// The events by slot; `None`: a free slot (listed in `free`).
    slots: Vec<Option<E>>,
    free: Vec<u32>,
    seq: u64,
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        EventQueue {
            heap: Vec::new(),
            slots: Vec::new(),
            free: Vec::new(),
            seq: 0,
        }
    }
}

impl<E> EventQueue<E> {
    /// Schedules `event` at `at`; after every event already scheduled at `at`.
    pub fn push(&mut self, at: Nanos, event: E) {
        self.seq += 1;
        let slot = match self.free.pop() {
            Some(s) => {
                self.slots[s as usize] = Some(event);
                s
            }
            None => {
                self.slots.push(Some(event));
                (self.slots.len() - 1) as u32
            }
        };
        let e = Entry {
            at,
            seq: self.seq,
            slot,
        };
        self.heap.push(e);
        self.sift_up(self.heap.len() - 1, e);
    }

    /// The earliest event (first scheduled among equal times).
    pub fn pop(&mut self) -> Option<(Nanos, E)> {
        let last = self.heap.pop()?;
        let top = match self.heap.first() {
            Some(&top) => {
                self.sift_down(last);
                top
            }
            None => last,
        };
        self.free.push(top.slot);
        let event = self.slots[top.slot as usize].take().expect("a queued slot");
        Some((top.at, event))
    }

    /// Time of the earliest event.
    pub fn peek_time(&self) -> Option<Nanos> {
        self.heap.first().map(|e| e.at)
    }

    /// Events waiting.
    pub fn len(&self) -> usize {
        self.heap.len()
    }

    /// Whether no event waits.
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }

    /// Moves `e`, at `i`, up to where its parent is earlier.
    fn sift_up(&mut self, mut i: usize, e: Entry) {
        let key = e.key();
        while i > 0 {
            let parent = (i - 1) / ARITY;
            if self.heap[parent].key() < key {
                break;
            }
            self.heap[i] = self.heap[parent];
            i = parent;
        }
        self.heap[i] = e;
    }

    /// Puts `e` at the root (the earliest left) and moves it down to where
    /// its earliest child is later.
    fn sift_down(&mut self, e: Entry) {
        let h = &mut self.heap;
        let (n, key) = (h.len(), e.key());
        let mut i = 0;
        loop {
            let first = ARITY * i + 1;
            if first >= n {
                break;
            }
            let (best, best_key) = if first + ARITY <= n {
                earliest_of_four(h, first)
            } else {
                earliest_of_few(h, first, n)
            };
            if key < best_key {
                break;
            }
            h[i] = h[best];
            i = best;
        }
        h[i] = e;
    }
}

/// The earliest of the four children from `first`, as a two-round
/// tournament of selects (keys are unique, so the order of the comparisons
/// cannot matter). Which child is earliest is a coin toss, so the selects
/// are told to be unpredictable: conditional moves, not branches (as
/// branches they were mispredicted half the time; pop was 6 % of a run).
#[inline(always)]
fn earliest_of_four(h: &[Entry], first: usize) -> (usize, u128) {
    use std::hint::select_unpredictable as pick;
    let c = &h[first..first + ARITY];
    let (k0, k1, k2, k3) = (c[0].key(), c[1].key(), c[2].key(), c[3].key());
    let (lt_a, lt_b) = (k1 < k0, k3 < k2);
    let (a, ka) = (pick(lt_a, first + 1, first), pick(lt_a, k1, k0));
    let (b, kb) = (pick(lt_b, first + 3, first + 2), pick(lt_b, k3, k2));
    let lt = kb < ka;
    (pick(lt, b, a), pick(lt, kb, ka))
}

/// The earliest of the children from `first` to the heap's end `n` (fewer
/// than four: the last parent's).
fn earliest_of_few(h: &[Entry], first: usize, n: usize) -> (usize, u128) {
    let mut best = first;
    let mut best_key = h[first].key();
    for (c, child) in h.iter().enumerate().take(n).skip(first + 1) {
        let k = child.key();
        if k < best_key {
            best = c;
            best_key = k;
        }
    }
    (best, best_key)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_times_come_out_in_insertion_order() {
        let mut q = EventQueue::default();
        q.push(5, "b1");
        q.push(3, "a");
        q.push(5, "b2");
        q.push(5, "b3");
        q.push(9, "c");
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(
            order,
            vec![(3, "a"), (5, "b1"), (5, "b2"), (5, "b3"), (9, "c")]
        );
    }

    #[test]
    fn slots_are_reused_and_order_holds() {
        let mut q = EventQueue::default();
        let mut out = Vec::new();
        for i in 0..50u64 {
            q.push(i % 7, i);
            if i.is_multiple_of(3) {
                out.push(q.pop().expect("an event"));
            }
        }
        out.extend(std::iter::from_fn(|| q.pop()));
        assert_eq!(out.len(), 50);
        assert!(q.slots.len() < 50, "freed slots are taken again");
        // Between pops, what comes out is ordered by (time, insertion).
        let tail = &out[17..];
        assert!(tail.windows(2).all(|w| (w[0].0, w[0].1) < (w[1].0, w[1].1)));
    }

    #[test]
    fn pops_follow_a_sort_by_time_then_insertion() {
        // A scrambled mix of pushes and pops against a sorted reference.
        let mut q = EventQueue::default();
        let mut reference: Vec<(u64, u64)> = Vec::new();
        let mut x: u64 = 12345;
        for i in 0..5000u64 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let at = (x >> 33) % 64;
            q.push(at, i);
            reference.push((at, i));
            if (x >> 20).is_multiple_of(3) {
                reference.sort();
                let want = reference.remove(0);
                assert_eq!(q.pop(), Some(want));
            }
        }
        reference.sort();
        let rest: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(rest, reference);
        assert!(q.is_empty() && q.peek_time().is_none());
    }
}
