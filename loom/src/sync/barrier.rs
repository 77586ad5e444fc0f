use fgvt_sync::{Condvar, Mutex};

/// `std::sync::Barrier` on fgvt-sync's locks: every one of `n` threads waits until all have
/// arrived.
#[derive(Debug)]
pub struct Barrier {
    state: Mutex<Round>,
    condvar: Condvar,
    n: usize,
}

#[derive(Debug, Default)]
struct Round {
    arrived: usize,
    generation: usize,
}

/// What [`Barrier::wait`] returns: whether this thread was the last to arrive.
#[derive(Debug)]
pub struct BarrierWaitResult(bool);

impl BarrierWaitResult {
    /// Whether this thread was the one that released the others (one per round).
    pub fn is_leader(&self) -> bool {
        self.0
    }
}

impl Barrier {
    /// A barrier for `n` threads.
    pub fn new(n: usize) -> Barrier {
        Barrier {
            state: Mutex::new(Round::default()),
            condvar: Condvar::new(),
            n,
        }
    }

    /// Waits until `n` threads have called `wait` in this round.
    pub fn wait(&self) -> BarrierWaitResult {
        let mut round = self.state.lock().unwrap();
        let generation = round.generation;
        round.arrived += 1;
        if round.arrived < self.n {
            while generation == round.generation {
                round = self.condvar.wait(round).unwrap();
            }
            BarrierWaitResult(false)
        } else {
            round.arrived = 0;
            round.generation = round.generation.wrapping_add(1);
            self.condvar.notify_all();
            BarrierWaitResult(true)
        }
    }
}
