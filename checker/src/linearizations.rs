//! The linearizations a history's prefix allows, kept as the history grows: what of a history
//! decides the verdict of every history that extends it (just-in-time linearization, Lowe,
//! "Testing for linearizability", 2017).
//!
//! Under real time an operation takes effect somewhere between its call and its return. At
//! each point of a history, the ways its operations can have taken effect so far are
//! *configurations*: the spec state they reach, and the results of the pending operations that
//! have already taken effect. A completed operation has taken effect by its return, in every
//! configuration, so nothing else of it is needed; a later call comes after it, as real time
//! says. The set of configurations after an event is a function of the set before and the
//! event, and a history is linearizable exactly when its last set accepts it (below). So two
//! prefixes with the same set (and the same pending calls) have the same verdict after any
//! continuation: an explorer may merge them, where their histories differ.
//!
//! Only real-time histories: under weak memory a call's clock says what it follows, and a
//! completed operation may take effect after later calls.

use std::hash::BuildHasher;
use std::sync::Arc;

use fgvt_tree::interner::Interner;
use fgvt_tree::{Call, CoarseEvent, History, ThreadId, Value};

use crate::spec::{Apply, Spec};

/// One way the operations so far can have taken effect.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Config<St> {
    /// The spec state they reach.
    state: St,
    /// The pending operations that have taken effect, by thread, with what the spec returned.
    early: Vec<(ThreadId, Value)>,
}

/// A history prefix as far as verdicts go: its pending calls, by thread, and its
/// configurations, each once, in a fixed order.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Key<St> {
    pending: Vec<(ThreadId, Arc<Call>)>,
    configs: Vec<Config<St>>,
}

/// The configuration sets of the prefixes of a family of histories, numbered: equal numbers,
/// equal verdicts of every continuation (see the module docs).
pub struct Linearizations<S: Spec> {
    spec: S,
    keys: Interner<Key<S::State>>,
    /// [`Linearizations::after`] remembered: many paths take the same call or return from the
    /// same set.
    known: std::collections::HashMap<(PrefixId, CoarseEvent), PrefixId, foldhash::fast::FixedState>,
}

/// A number [`Linearizations`] gives a history prefix.
pub type PrefixId = u32;

impl<S: Spec> Linearizations<S> {
    /// The sets of histories checked against `spec`, and the number of `base` (a test's serial
    /// `init` part, or nothing), where every history starts.
    pub fn new(spec: S, base: &History) -> (Self, PrefixId) {
        let start = Key {
            pending: Vec::new(),
            configs: vec![Config {
                state: spec.initial(),
                early: Vec::new(),
            }],
        };
        let mut this = Linearizations {
            spec,
            keys: Interner::new(),
            known: Default::default(),
        };
        let mut id = this.keys.intern(start, || ());
        for event in &base.events {
            id = this.after(id, event);
        }
        (this, id)
    }

    /// The number of prefix `id` followed by `event`.
    pub fn after(&mut self, id: PrefixId, event: &CoarseEvent) -> PrefixId {
        if let Some(&after) = self.known.get(&(id, event.clone())) {
            return after;
        }
        let after = self.work_out(id, event);
        self.known.insert((id, event.clone()), after);
        after
    }

    /// [`Linearizations::after`], working it out.
    fn work_out(&mut self, id: PrefixId, event: &CoarseEvent) -> PrefixId {
        let mut key = self.keys.key(id).clone();
        match event {
            CoarseEvent::Call { thread, call, .. } => {
                key.pending.push((*thread, Arc::clone(call)));
                key.pending.sort_by_key(|(t, _)| *t);
            }
            CoarseEvent::Return { thread, value } => self.returned(&mut key, *thread, value),
        }
        self.close(&mut key);
        self.keys.intern(key, || ())
    }

    /// Whether a history whose last prefix is `id` is linearizable: complete, some
    /// configuration is left; `stuck`, in some configuration no pending operation has taken
    /// effect and each blocks (they never return).
    pub fn linearizable(&self, id: PrefixId, stuck: bool) -> bool {
        let key = self.keys.key(id);
        if !stuck {
            return !key.configs.is_empty();
        }
        key.configs.iter().any(|c| {
            c.early.is_empty()
                && (key.pending.iter())
                    .all(|(t, call)| matches!(self.spec.apply(&c.state, *t, call), Apply::Blocks))
        })
    }

    /// `key` after `thread`'s pending operation returned `value` (`None`: any result): it has
    /// taken effect, with that result. The set was closed after the call: every way in which
    /// the operation takes effect only now is already there with it taken effect early, so
    /// the ways where it has not are dropped rather than made to take it now.
    fn returned(&self, key: &mut Key<S::State>, thread: ThreadId, value: &Option<Value>) {
        let Some(at) = key.pending.iter().position(|(t, _)| *t == thread) else {
            // A return with no call: no way of taking effect explains it.
            key.configs.clear();
            return;
        };
        let (_, call) = key.pending.remove(at);
        let agrees = |result: &Value| {
            value
                .as_ref()
                .is_none_or(|v| self.spec.matches(&call, result, v))
        };
        key.configs.retain_mut(|config| {
            let Some(i) = config.early.iter().position(|(t, _)| *t == thread) else {
                return false;
            };
            let (_, result) = config.early.remove(i);
            agrees(&result)
        });
    }

    /// Adds every configuration reached by pending operations taking effect, in any order,
    /// and puts the set in its fixed order.
    fn close(&self, key: &mut Key<S::State>) {
        let mut seen: std::collections::HashSet<Config<S::State>, foldhash::fast::FixedState> =
            key.configs.iter().cloned().collect();
        let mut work: Vec<Config<S::State>> = key.configs.clone();
        while let Some(config) = work.pop() {
            for (thread, call) in &key.pending {
                if config.early.iter().any(|(t, _)| t == thread) {
                    continue;
                }
                let Apply::Returns { value, state } = self.spec.apply(&config.state, *thread, call)
                else {
                    continue;
                };
                let mut early = config.early.clone();
                early.push((*thread, value));
                early.sort_by_key(|(t, _)| *t);
                let next = Config { state, early };
                if seen.insert(next.clone()) {
                    work.push(next);
                }
            }
        }
        let mut configs: Vec<Config<S::State>> = seen.into_iter().collect();
        // A fixed order: by a hash with a fixed seed (configurations whose hashes are equal
        // may then come in either order, which only merges less).
        let hasher = foldhash::fast::FixedState::with_seed(0x6c69_6e65);
        configs.sort_by_cached_key(|c| hasher.hash_one(c));
        key.configs = configs;
    }
}

impl<S: Spec> fgvt_tree::HistoryKeys for Linearizations<S> {
    fn after(&mut self, key: u32, step: &Arc<fgvt_tree::Event>) -> u32 {
        let events = step.coarse(|call| Arc::new(call.clone()));
        events
            .iter()
            .flatten()
            .fold(key, |id, event| Linearizations::after(self, id, event))
    }
}

/// Keys of real-time histories checked against `spec`, for [`fgvt_tree::Program::history_keys`]:
/// a test whose calls carry no clocks.
pub fn history_keys<S>(spec: S) -> fgvt_tree::HistoryKeysFactory
where
    S: Spec + Clone + Send + Sync + 'static,
{
    fgvt_tree::HistoryKeysFactory(Arc::new(move |base: &History| {
        let (keys, root) = Linearizations::new(spec.clone(), base);
        // Each thread's results told apart too: a tree's results over its leaves stay exact.
        fgvt_tree::ThreadResults::pair(Box::new(keys), root)
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builtin::builtin;
    use crate::check::{check, CheckOptions};
    use proptest::prelude::*;

    /// A history of `threads` threads on a stack, a register or a blocking queue, interleaved
    /// by `schedule` (its first `cut` choices): each thread's operations in turn, a result
    /// each; a history cut short has operations pending.
    fn history(spec: &str, threads: &[Vec<(u8, i64)>], schedule: &[usize], cut: usize) -> History {
        let mut h = History::new();
        let mut next = vec![0; threads.len()];
        let mut open = vec![false; threads.len()];
        for &t in schedule.iter().take(cut) {
            let t = t % threads.len();
            let Some(&(op, v)) = threads[t].get(next[t]) else {
                continue;
            };
            let (call, result) = match (spec, op % 2) {
                ("stack", 0) => (Call::new("push", vec![Value::Int(v)]), Value::Unit),
                ("stack", _) => (
                    Call::new("pop", vec![]),
                    if v == 0 { Value::Null } else { Value::Int(v) },
                ),
                ("queue", 0) => (Call::new("put", vec![Value::Int(v)]), Value::Unit),
                // Blocks on an empty queue: stuck histories can be linearizable.
                ("queue", _) => (Call::new("take", vec![]), Value::Int(v)),
                (_, 0) => (Call::new("write", vec![Value::Int(v)]), Value::Unit),
                (_, _) => (Call::new("read", vec![]), Value::Int(v)),
            };
            if open[t] {
                h.ret(t, result);
                open[t] = false;
                next[t] += 1;
            } else {
                h.call(t, call);
                open[t] = true;
            }
        }
        h
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        /// The configuration set, updated event by event, accepts a history exactly when the
        /// checker finds it linearizable, complete or stuck (what makes equal sets equal
        /// verdicts after any continuation, the update being a function of set and event).
        #[test]
        fn the_last_set_accepts_exactly_the_linearizable_histories(
            spec in prop::sample::select(vec!["stack", "register", "queue"]),
            threads in prop::collection::vec(
                prop::collection::vec((0u8..2, 0i64..3), 1..4), 2..4),
            schedule in prop::collection::vec(0usize..3, 0..24),
            cut in 0usize..24,
            stuck in any::<bool>(),
        ) {
            let mut h = history(spec, &threads, &schedule, cut);
            let complete = h.operations().unwrap().iter().all(|op| op.ret.is_some());
            h.stuck = stuck && !complete;
            let spec = builtin(spec).unwrap();
            let verdict = check(&spec, &h, &CheckOptions::default()).unwrap().verdict;
            let (mut sets, mut id) = Linearizations::new(spec, &History::new());
            for event in &h.events {
                id = sets.after(id, event);
            }
            // A history with pending operations that is not stuck lets each take effect or not.
            prop_assert_eq!(sets.linearizable(id, h.stuck), verdict.is_linearizable(), "{}", h);
        }
    }
}
