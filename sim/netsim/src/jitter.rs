//! A link direction's jitter: each frame arrives a uniform random 0..=max
//! later than the link's delay alone makes it, but never before the frame
//! ahead of it (a link does not reorder). Random timing breaks the phase
//! effects of a jitter-free drop-tail bottleneck, where which flow finds
//! the queue full is decided by fixed offsets between the flows (Floyd and
//! Jacobson, "On Traffic Phase Effects in Packet-Switched Gateways"; ns-2's
//! TCP `overhead_` does the same at the sender). docs/NET.md "Jitter".

use ratelab_engine::rng::Rng;
use ratelab_stack::Nanos;

/// One direction's jitter state: its own seeded generator (the engine's
/// SplitMix64) and the last arrival it handed out.
#[derive(Clone, Debug)]
pub struct Jitter {
    max_ns: Nanos,
    rng: Rng,
    last_arrival: Nanos,
}

impl Default for Jitter {
    fn default() -> Jitter {
        Jitter::new(0, 0)
    }
}

impl Jitter {
    /// Jitter up to `max_ns` (0: none), drawing from `seed`.
    pub fn new(max_ns: Nanos, seed: u64) -> Jitter {
        Jitter {
            max_ns,
            rng: Rng::new(seed),
            last_arrival: 0,
        }
    }

    /// When a frame that the delay alone brings at `arrival` arrives.
    pub fn arrival(&mut self, arrival: Nanos) -> Nanos {
        if self.max_ns == 0 {
            return arrival;
        }
        let t = (arrival + self.draw()).max(self.last_arrival);
        self.last_arrival = t;
        t
    }

    /// Uniform in 0..=max_ns (the modulo bias is below 2^-40 for any
    /// jitter under 16 s).
    fn draw(&mut self) -> Nanos {
        self.rng.next_u64() % (self.max_ns + 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_jitter_changes_nothing() {
        let mut j = Jitter::new(0, 1);
        for t in [5, 3, 100, 100] {
            assert_eq!(
                j.arrival(t),
                t,
                "even out of order: the link's own order stands"
            );
        }
    }

    #[test]
    fn draws_are_bounded_uniform_and_keep_the_order() {
        let mut j = Jitter::new(1_000_000, 7);
        let gap = 1_200_000; // frames 1.2 ms apart, jitter up to 1 ms: never held
        let extras: Vec<Nanos> = (0..10_000u64)
            .map(|i| j.arrival(i * gap) - i * gap)
            .collect();
        assert!(extras.iter().all(|&e| e <= 1_000_000));
        let mean = extras.iter().sum::<u64>() as f64 / extras.len() as f64;
        assert!((480_000.0..520_000.0).contains(&mean), "mean {mean}");
        let low = extras.iter().filter(|&&e| e < 250_000).count();
        assert!(
            (2_300..2_700).contains(&low),
            "a quarter below 250 us: {low}"
        );
        // Frames closer than the jitter: held behind the one ahead, in order.
        let mut j = Jitter::new(5_000_000, 7);
        let times: Vec<Nanos> = (0..1_000u64).map(|i| j.arrival(i * 100_000)).collect();
        assert!(times.windows(2).all(|w| w[0] <= w[1]));
        assert!(times
            .iter()
            .enumerate()
            .all(|(i, &t)| t >= i as u64 * 100_000));
    }

    #[test]
    fn the_seed_decides_the_draws() {
        let run = |seed| {
            let mut j = Jitter::new(500_000, seed);
            (0..50u64)
                .map(|i| j.arrival(i * 1_000_000))
                .collect::<Vec<_>>()
        };
        assert_eq!(run(3), run(3));
        assert_ne!(run(3), run(4));
    }
}
