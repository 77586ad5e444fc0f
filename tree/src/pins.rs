//! Steps kept alive by address, for caches that look a step up by its `Arc`'s address instead
//! of hashing its text.
//!
//! A model hands out one `Arc<Event>` per distinct step (`fgvt-lang`'s memoized steps), so the
//! same address comes back on many edges, and a cache keyed by it saves hashing the step's
//! strings each time. An address names one step only while the step is alive: [`Pins`] keeps
//! each step it was given, so its address is not reused for another. A program that allocates
//! every step anew (`fgvt-sync`'s re-executions) never brings an address back: pinning its
//! steps would only fill memory (a quarter of a large Rust exploration's), so after a
//! probation with almost no hits the pins give up, and the cache must forget what it keyed by
//! address.

use std::collections::HashMap;
use std::sync::Arc;

use crate::event::Event;

/// How many pins make a probation: if lookups by address found less than one answer in
/// [`HITS_PER_PIN`]⁻¹ of them by then, the program allocates its steps anew.
const PROBATION: usize = 1 << 12;

/// The fewest hits per pin that keep the pins (one hit in eight pins).
const HITS_PER_PIN: u64 = 8;

/// Steps kept alive by address, at most a bound of them; see the module docs.
pub(crate) struct Pins {
    kept: HashMap<usize, Arc<Event>, foldhash::fast::FixedState>,
    /// The most steps kept.
    max: usize,
    /// Lookups by address that found their answer (see [`Pins::hit`]).
    hits: u64,
    /// Whether the pins gave up: the program does not share its steps.
    given_up: bool,
}

/// What [`Pins::pin`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Pinned {
    /// The step is kept: its address names it while the pins last.
    Kept,
    /// The step is not kept (the pins are full, or gave up before): key nothing by its address.
    Refused,
    /// The pins gave up just now and let go of every step: forget everything keyed by address.
    GaveUp,
}

impl Pins {
    /// No pins yet; at most `max` steps will be kept.
    pub(crate) fn new(max: usize) -> Pins {
        Pins {
            kept: HashMap::default(),
            max,
            hits: 0,
            given_up: false,
        }
    }

    /// Whether an address lookup can find anything: the pins have not given up.
    pub(crate) fn active(&self) -> bool {
        !self.given_up
    }

    /// Notes that a lookup by address found its answer.
    pub(crate) fn hit(&mut self) {
        self.hits += 1;
    }

    /// Keeps `step` alive, if it may.
    pub(crate) fn pin(&mut self, step: &Arc<Event>) -> Pinned {
        if self.given_up {
            return Pinned::Refused;
        }
        let address = Arc::as_ptr(step) as usize;
        if !self.kept.contains_key(&address) {
            if self.kept.len() >= self.max {
                return Pinned::Refused;
            }
            if self.kept.len() == PROBATION && self.hits * HITS_PER_PIN < PROBATION as u64 {
                self.given_up = true;
                self.kept = HashMap::default();
                return Pinned::GaveUp;
            }
            self.kept.insert(address, Arc::clone(step));
        }
        Pinned::Kept
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step() -> Arc<Event> {
        Arc::new(Event::local(0, String::new(), Default::default()))
    }

    #[test]
    fn steps_allocated_anew_are_let_go_after_the_probation() {
        let mut pins = Pins::new(1 << 16);
        let steps: Vec<_> = (0..PROBATION).map(|_| step()).collect();
        for s in &steps {
            assert_eq!(pins.pin(s), Pinned::Kept);
        }
        // Kept: none of them was freed, so their addresses are all distinct.
        assert!(steps.iter().all(|s| Arc::strong_count(s) == 2));
        assert_eq!(pins.pin(&step()), Pinned::GaveUp);
        assert!(!pins.active());
        assert!(steps.iter().all(|s| Arc::strong_count(s) == 1));
        assert_eq!(pins.pin(&steps[0]), Pinned::Refused);
    }

    #[test]
    fn shared_steps_stay_pinned_up_to_the_bound() {
        let max = PROBATION + 10;
        let mut pins = Pins::new(max);
        let steps: Vec<_> = (0..max + 1).map(|_| step()).collect();
        for (i, s) in steps.iter().enumerate() {
            // One hit in four pins: a program that shares its steps.
            if i % 4 == 0 {
                pins.hit();
            }
            let pinned = pins.pin(s);
            assert_eq!(pinned == Pinned::Kept, i < max, "pin {i}: {pinned:?}");
        }
        assert!(pins.active());
        // A step kept before is still kept when asked again.
        assert_eq!(pins.pin(&steps[0]), Pinned::Kept);
    }
}
