//! One seed per component, derived from the scenario's seed (SplitMix64
//! finaliser over the seed, a component kind and its index), so adding a
//! flow does not change the random numbers another flow or router sees.

/// Component kinds a seed is derived for.
#[derive(Clone, Copy)]
#[repr(u64)]
pub enum Kind {
    /// A router's engine (`random`, RED's generator seed is in its entries).
    Router = 1,
    /// A TCP flow's initial sequence numbers.
    TcpIss = 2,
    /// A UDP source's Poisson gaps.
    Udp = 3,
    /// A link direction's jitter (hosts by index, router r's port p as
    /// (r + 1) << 16 | p).
    Jitter = 4,
}

fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The seed of component `index` of `kind` in a run seeded with `seed`.
pub fn derive(seed: u64, kind: Kind, index: usize) -> u64 {
    mix(mix(mix(seed) ^ kind as u64) ^ index as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seeds_differ_by_component_and_repeat_by_input() {
        let a = derive(42, Kind::Udp, 0);
        assert_eq!(a, derive(42, Kind::Udp, 0));
        assert_ne!(a, derive(42, Kind::Udp, 1));
        assert_ne!(a, derive(42, Kind::Router, 0));
        assert_ne!(a, derive(43, Kind::Udp, 0));
    }
}
