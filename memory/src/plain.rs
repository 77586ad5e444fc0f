//! Plain (non-atomic) accesses: where they sit in happens-before, and what a future key must
//! say of them.
//!
//! The graph holds atomic accesses and fences. A runtime that also checks plain memory for data
//! races (two accesses to one location, at least one a write, that happens-before does not
//! order) need not add its plain accesses to the graph: a plain access of thread `t` made when
//! `t` had performed `n` events happens before an event `e` of another thread exactly when `t`'s
//! event number `n` (its next one after the access) happens before `e`, since every
//! happens-before edge out of a thread leaves from one of its events (a release store, a release
//! fence before a store, or [`Execution::synchronize`], which hands over the thread's last
//! event). A [`PlainAt`] names that place; [`Execution::plain_happens_before_next`] answers the
//! question a race check asks.
//!
//! An explorer that merges states must also know which of those questions a later event could
//! answer differently. A plain access comes to happen before a later event only through what
//! that event acquires: its thread's own sets (current, acquired, release-fence) and the
//! release rows of the stores it reads, the same carriers [`Execution::future_key`] encodes as
//! views. [`Execution::future_key_with_plain`] adds, for each plain access the runtime still
//! tracks, which of those carriers hold it; the module `future`'s argument then covers them.

use crate::bits;
use crate::execution::Thread;
use crate::{Execution, ThreadId};

/// Where a plain access sits: in `thread`'s program order, after its first `events` events.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PlainAt {
    /// The thread that made the access.
    pub thread: ThreadId,
    /// How many events of the graph the thread had performed when it made it.
    pub events: usize,
}

/// Tags that keep the parts of a key apart.
const PLAIN: u64 = 0x706c_6169;
/// A plain access after its thread's last event: only its own thread knows of it yet.
const UNPUBLISHED: u64 = 0x756e_7075;

impl Execution {
    /// Where a plain access `thread` makes now sits.
    ///
    /// # Panics
    ///
    /// If the thread does not exist.
    pub fn plain_at(&self, thread: ThreadId) -> PlainAt {
        PlainAt {
            thread,
            events: self.thread_len(thread),
        }
    }

    /// Whether the plain access at `at` happens before `thread`'s next event, and so before a
    /// plain access `thread` makes now: `at`'s own thread, or the event `at`'s thread performed
    /// right after it happens before that.
    ///
    /// # Panics
    ///
    /// If either thread does not exist.
    pub fn plain_happens_before_next(&self, at: PlainAt, thread: ThreadId) -> bool {
        self.expect(self.check_thread(at.thread));
        self.expect(self.check_thread(thread));
        if at.thread == thread {
            return true;
        }
        match self.threads[at.thread].po.get(at.events) {
            Some(&e) => self.in_horizon(thread, e),
            None => false,
        }
    }

    /// [`Execution::future_key`], with what decides whether each of the plain accesses `plain`
    /// will happen before later events (see the [module docs](self)): for each, which carriers
    /// of happens-before hold it, in the order the key lists them (each kept store's release
    /// row, then each live thread's current, acquired and release-fence sets). With an unsettled
    /// `SeqCst` event the key is the whole graph, and each access is named by its place.
    pub fn future_key_with_plain(
        &self,
        naming: &impl crate::Naming,
        live: impl Fn(ThreadId) -> bool,
        plain: &[PlainAt],
    ) -> Vec<u64> {
        if plain.is_empty() {
            return self.future_key(naming, live);
        }
        if self.has_unsettled_seq_cst(&live) {
            // The whole graph is the key: a place among the events it keeps names the access
            // exactly (no left-out load follows a plain access right away).
            let (mut key, renamed) = self.graph_key_with(naming, plain);
            key.push(PLAIN);
            key.push(plain.len() as u64);
            for at in plain {
                let place = match at.events {
                    0 => 0,
                    n => renamed[at.thread][n - 1] + 1,
                };
                key.extend([at.thread as u64, place as u64]);
            }
            return key;
        }
        let (mut key, carriers) = self.future_key_and_carriers(naming, &live, true, plain);
        let carriers = carriers.expect("settled, the key lists the carriers");
        key.push(PLAIN);
        key.push(plain.len() as u64);
        for at in plain {
            match self.threads[at.thread].po.get(at.events) {
                None => key.extend([UNPUBLISHED, at.thread as u64]),
                Some(&e) => {
                    let mut word = 0u64;
                    let mut bit = 0;
                    for set in &carriers {
                        if bits::contains(set, e) {
                            word |= 1 << bit;
                        }
                        bit += 1;
                        if bit == 64 {
                            key.push(word);
                            (word, bit) = (0, 0);
                        }
                    }
                    key.push(word);
                }
            }
        }
        key
    }
}

/// The sets of a thread that carry happens-before to its later events besides its current one:
/// what its next acquire fence acquires, and what its last release fence published.
pub(crate) fn release_fence_set(x: &Execution, thread: &Thread) -> Option<Vec<u64>> {
    thread.release_fence.map(|f| {
        let mut set = x.hb.row(f).to_vec();
        bits::insert(&mut set, f);
        set
    })
}
