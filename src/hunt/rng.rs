//! A small, seedable random number generator (SplitMix64), so that random draws need no
//! dependency and give the same values for a seed on every platform: `fgvt hunt`'s test
//! matrices (the same `(seed, sample)` pair draws the same test) and generated histories.

/// SplitMix64: tiny, fast, and good enough to draw test matrices and workloads uniformly.
#[derive(Clone, Debug)]
pub struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    /// A generator seeded with `seed`.
    pub fn new(seed: u64) -> SplitMix64 {
        SplitMix64 { state: seed }
    }

    /// The generator of sample `index` of a hunt seeded with `seed`. Each sample has its own
    /// stream, so a sample's draws do not depend on how samples are spread over threads.
    pub fn for_sample(seed: u64, index: u64) -> SplitMix64 {
        // Mixing the seed first keeps (seed, index) and (seed + 1, index - 1) apart.
        let mut base = SplitMix64::new(seed);
        let mixed = base.next_u64();
        SplitMix64::new(mixed ^ index.wrapping_mul(0xD1B5_4A32_D192_ED03))
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A uniform integer in `0..n`; `n` must not be 0.
    pub fn below(&mut self, n: usize) -> usize {
        assert!(n > 0, "below(0) has no value to return");
        let n = n as u64;
        // Rejection sampling: drop the top partial range so that every value is equally likely.
        let zone = u64::MAX - u64::MAX % n;
        loop {
            let x = self.next_u64();
            if x < zone {
                return (x % n) as usize;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_seed_and_index_give_the_same_stream() {
        let stream = |seed, index| {
            let mut rng = SplitMix64::for_sample(seed, index);
            (0..4).map(|_| rng.next_u64()).collect::<Vec<_>>()
        };
        assert_eq!(stream(7, 3), stream(7, 3));
        assert_ne!(stream(7, 3), stream(7, 4));
        assert_ne!(stream(7, 3), stream(8, 3));
    }

    #[test]
    fn below_covers_its_range_evenly() {
        let mut rng = SplitMix64::new(1);
        let mut counts = [0u32; 5];
        for _ in 0..5000 {
            counts[rng.below(5)] += 1;
        }
        assert!(
            counts.iter().all(|&c| (800..1200).contains(&c)),
            "{counts:?}"
        );
    }
}
