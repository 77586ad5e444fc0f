//! Generated histories for benchmarks, like the P-compositionality paper's workload.

use std::collections::BTreeSet;

use fgvt_tree::{Call, History, Value};

/// How many distinct keys [`generate_set_history`] uses.
pub const SET_KEYS: i64 = 8;

/// A deterministic xorshift64* generator: benchmarks need the same history for a seed on every
/// platform, without a dependency.
#[derive(Clone, Debug)]
pub struct XorShift(u64);

impl XorShift {
    /// A generator for `seed` (any value; 0 is remapped).
    pub fn new(seed: u64) -> Self {
        // Xorshift never leaves 0; forcing the low bit keeps every seed usable.
        XorShift((seed ^ 0x9E37_79B9_7F4A_7C15) | 1)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A number in `0..n` (`n > 0`).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }
}

/// Where one simulated thread is in its current operation.
enum Phase {
    /// Between operations.
    Idle,
    /// Called, not yet taken effect.
    Called(Call),
    /// Taken effect with this result, not yet returned.
    Done(Value),
}

/// A linearizable history of a set (`add`, `remove`, `contains` on keys `0..SET_KEYS`, each
/// returning a bool), `threads × ops_per_thread` operations, deterministic in `seed`.
///
/// It simulates a correct concurrent set: a random scheduler moves one thread at a time through
/// call → linearization point (applied to a real set) → return, so operations overlap freely
/// and the history is linearizable by construction. With 4 threads × 70,000 operations it is the
/// P-compositionality paper's workload.
pub fn generate_set_history(threads: usize, ops_per_thread: usize, seed: u64) -> History {
    let mut rng = XorShift::new(seed);
    let mut set = BTreeSet::new();
    let mut phases: Vec<Phase> = (0..threads).map(|_| Phase::Idle).collect();
    let mut left = vec![ops_per_thread; threads];
    let mut history = History::new();
    let mut active: Vec<usize> = if ops_per_thread > 0 {
        (0..threads).collect()
    } else {
        Vec::new()
    };
    while !active.is_empty() {
        let slot = rng.below(active.len() as u64) as usize;
        let thread = active[slot];
        phases[thread] = match std::mem::replace(&mut phases[thread], Phase::Idle) {
            Phase::Idle => {
                let key = Value::Int(rng.below(SET_KEYS as u64) as i64);
                let op = ["add", "remove", "contains"][rng.below(3) as usize];
                let call = Call::new(op, vec![key]);
                history.call(thread, call.clone());
                Phase::Called(call)
            }
            Phase::Called(call) => {
                let key = &call.args[0];
                let result = match call.op.as_str() {
                    "add" => set.insert(key.clone()),
                    "remove" => set.remove(key),
                    _ => set.contains(key),
                };
                Phase::Done(Value::Bool(result))
            }
            Phase::Done(result) => {
                history.ret(thread, result);
                left[thread] -= 1;
                if left[thread] == 0 {
                    active.swap_remove(slot);
                }
                Phase::Idle
            }
        };
    }
    history
}
