//! The coarse histories of the explorer's paths, shared as a prefix tree.
//!
//! Most steps emit no call or return, and paths that diverge keep their common prefix: a
//! history is stored as one entry per coarse event pointing at its prefix, and named by a small
//! [`HistoryId`]. The explorer keys states by (program state, history id), so telling two states
//! apart never compares or hashes whole histories, and only leaves materialize theirs.
//!
//! Histories are kept in a canonical form: within a run of consecutive calls (or of
//! consecutive returns) the events are sorted by thread. Linearizability depends only on which
//! operation returned before which was called, which such a reordering keeps; so paths that
//! differ only in the order of concurrent calls (or returns) reach one state, not one per
//! order (on the seqlock benchmark, 2 M states became 424 K). The explorer keeps two trees:
//! canonical histories tell states apart, and real ones (the order the path took) go into the
//! leaves, so a report's history matches its run. A leaf shared by paths whose histories differ
//! only in such an order carries the history of the first path that reached it (the
//! depth-first one, which is also the one reports follow).
//!
//! Under weak memory every call carries a clock ([`CoarseEvent::Call`]'s `seen`) and an
//! operation precedes another exactly when the other's clock counts it: the order of the
//! threads' events in the history tells the checker nothing more. The canonical form is then
//! *thread-major*: each thread's calls and returns in its own order, thread 0's first (a call
//! and a return of two threads commute too). Paths that reach one program state and differ
//! only in how the threads' operations interleaved reach one state: the 3-thread Treiber stack
//! of `benches/genmc` with `Acquire`/`AcqRel` accesses and a buggy push has 61,703 states so,
//! where 2.2 M were not all of them before. A tree takes that form from its first call on, if
//! that call has a clock (a test under weak memory clocks every call of its threads).

use std::collections::HashMap;
use std::sync::Arc;

use crate::event::Event;
use crate::history::{Call, CoarseEvent, History};
use crate::interner::Interner;
use crate::pins::{Pinned, Pins};

/// Most steps [`HistoryTree::after`] remembers by address (see [`HistoryTree::kept`]): beyond,
/// a program that allocates every step anew would only fill memory.
const KEPT_STEPS: usize = 1 << 16;

/// What tells the histories of two paths apart, for the explorer: a number per history, equal
/// for two histories only if every continuation gives both the same verdict. The default is a
/// [`HistoryTree`] in canonical form; a caller that has the spec may give a coarser one
/// ([`crate::Program::history_keys`]).
pub trait HistoryKeys {
    /// The number of history `key` followed by the calls and returns of `step`.
    fn after(&mut self, key: u32, step: &Arc<Event>) -> u32;
}

/// What makes [`HistoryKeys`]: from the base history (a test's serial `init` part), the keys
/// and the base's number.
pub type MakeHistoryKeys = dyn Fn(&History) -> (Box<dyn HistoryKeys>, u32) + Send + Sync;

/// How a program makes its [`HistoryKeys`] (see [`MakeHistoryKeys`]).
#[derive(Clone)]
pub struct HistoryKeysFactory(pub Arc<MakeHistoryKeys>);

impl HistoryKeysFactory {
    /// New keys for histories that start with `base`, and `base`'s number.
    pub fn keys(&self, base: &History) -> (Box<dyn HistoryKeys>, u32) {
        (self.0)(base)
    }
}

impl std::fmt::Debug for HistoryKeysFactory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("HistoryKeysFactory")
    }
}

impl HistoryKeys for HistoryTree {
    fn after(&mut self, key: u32, step: &Arc<Event>) -> u32 {
        HistoryTree::after(self, HistoryId(key), step).0
    }
}

/// Keys that tell apart, beside what `keys` does, what each thread's operations were and
/// returned (each thread's calls and returns in its own order, the threads' interleaving
/// left out). With keys coarser than canonical histories, paths that share a state then
/// still agree on every operation's result, which a tree's results over its leaves count.
pub struct ThreadResults {
    keys: Box<dyn HistoryKeys>,
    threads: HistoryTree,
    pairs: Interner<(u32, u32)>,
}

impl ThreadResults {
    /// `keys`, whose key of the base history is `root`, paired with each thread's results:
    /// the paired keys and the base's.
    pub fn pair(keys: Box<dyn HistoryKeys>, root: u32) -> (Box<dyn HistoryKeys>, u32) {
        let mut threads = HistoryTree::new(History::new(), true);
        threads.thread_major = true;
        let mut pairs = Interner::new();
        let root = pairs.intern((root, HistoryTree::ROOT.0), || ());
        let paired: Box<dyn HistoryKeys> = Box::new(ThreadResults {
            keys,
            threads,
            pairs,
        });
        (paired, root)
    }
}

impl HistoryKeys for ThreadResults {
    fn after(&mut self, key: u32, step: &Arc<Event>) -> u32 {
        if step.call.is_none() && step.ret.is_none() {
            return key;
        }
        let (first, second) = *self.pairs.key(key);
        let first = self.keys.after(first, step);
        let second = self.threads.after(HistoryId(second), step).0;
        self.pairs.intern((first, second), || ())
    }
}

/// A history of the prefix tree: the base history followed by the events on the way to it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct HistoryId(u32);

impl HistoryId {
    /// Its number.
    pub(crate) fn index(self) -> u32 {
        self.0
    }

    /// The history numbered `index` (of a number [`HistoryId::index`] gave).
    pub(crate) fn from_index(index: u32) -> HistoryId {
        HistoryId(index)
    }
}

/// Interned histories: every distinct history extended from the base one event at a time.
pub(crate) struct HistoryTree {
    /// The history every path starts from (the serial `init` part).
    base: History,
    /// Entry `i` is history `i + 1`: its prefix and its last event, each stored once.
    entries: Interner<(HistoryId, CoarseEvent)>,
    /// Whether histories are kept in canonical form (for telling states apart) or as they
    /// happened (for leaves).
    canonical: bool,
    /// Whether the histories' calls carry clocks (decided by the first call met): the
    /// canonical form is then thread-major (see the module docs).
    clocked: Option<bool>,
    /// Whether the canonical form is thread-major whatever the calls carry (see
    /// [`ThreadResults`]).
    thread_major: bool,
    /// [`HistoryTree::after`] of a history and a step that calls or returns, by the step's
    /// address: a program that hands out one `Arc` per distinct step (`fgvt-lang`'s memoized
    /// steps) takes the same step after the same history on many paths, and each time the
    /// coarse events would be copied out of it, hashed with their strings and looked up
    /// again, and a canonical insertion walked back along its run.
    known: HashMap<(HistoryId, usize), HistoryId, foldhash::fast::FixedState>,
    /// The steps `known` names by address, kept alive so that no address is reused for
    /// another step while it is there; at most [`KEPT_STEPS`] of them.
    kept: Pins,
    /// Every distinct call of the histories, once: their events share it.
    calls: std::collections::HashSet<Arc<Call>, foldhash::fast::FixedState>,
}

impl HistoryTree {
    /// A tree holding only `base`, whose id is [`HistoryTree::ROOT`]; `canonical` keeps its
    /// histories in canonical form.
    pub(crate) fn new(base: History, canonical: bool) -> HistoryTree {
        HistoryTree {
            base,
            canonical,
            clocked: None,
            thread_major: false,
            entries: Interner::new(),
            known: HashMap::default(),
            kept: Pins::new(KEPT_STEPS),
            calls: Default::default(),
        }
    }

    /// The base history.
    pub(crate) const ROOT: HistoryId = HistoryId(0);

    /// `history` followed by `event`.
    fn push(&mut self, history: HistoryId, event: CoarseEvent) -> HistoryId {
        let number = self.entries.intern((history, event), || ());
        HistoryId(number.checked_add(1).expect("fewer than 2^32 histories"))
    }

    /// The prefix and last event of `id`, which is not the root.
    fn entry(&self, id: HistoryId) -> &(HistoryId, CoarseEvent) {
        self.entries.key(id.0 - 1)
    }

    /// `history` followed by the call and the return that `step` emits, if any; in canonical
    /// form when this tree keeps it (see the module docs): within a run of consecutive calls
    /// (or returns), events sorted by thread.
    pub(crate) fn after(&mut self, history: HistoryId, step: &Arc<Event>) -> HistoryId {
        if step.call.is_none() && step.ret.is_none() {
            return history;
        }
        if !self.kept.active() {
            return self.append_step(history, step);
        }
        let address = Arc::as_ptr(step) as usize;
        if let Some(&after) = self.known.get(&(history, address)) {
            self.kept.hit();
            return after;
        }
        let after = self.append_step(history, step);
        match self.kept.pin(step) {
            Pinned::Kept => {
                self.known.insert((history, address), after);
            }
            Pinned::Refused => {}
            Pinned::GaveUp => self.known = HashMap::default(),
        }
        after
    }

    /// [`HistoryTree::after`], working it out.
    fn append_step(&mut self, history: HistoryId, step: &Event) -> HistoryId {
        if step.call.is_some() && !self.thread_major {
            let clocked = *self.clocked.get_or_insert(step.seen.is_some());
            debug_assert_eq!(
                clocked,
                step.seen.is_some(),
                "a program's calls carry clocks all or none"
            );
        }
        let calls = &mut self.calls;
        let share = |call: &Call| match calls.get(call) {
            Some(shared) => Arc::clone(shared),
            None => {
                let shared = Arc::new(call.clone());
                calls.insert(Arc::clone(&shared));
                shared
            }
        };
        let mut h = history;
        for event in step.coarse(share).into_iter().flatten() {
            h = self.append(h, event);
        }
        h
    }

    fn append(&mut self, history: HistoryId, event: CoarseEvent) -> HistoryId {
        if self.canonical {
            self.insert_sorted(history, event)
        } else {
            self.push(history, event)
        }
    }

    /// Inserts `event` before the events of later threads it commutes with at the end of
    /// `history`: the run of events of its kind, or under clocks every event (see the module
    /// docs).
    fn insert_sorted(&mut self, history: HistoryId, event: CoarseEvent) -> HistoryId {
        let clocked = self.thread_major || self.clocked == Some(true);
        let mut moved = Vec::new();
        let mut at = history;
        while at != Self::ROOT {
            let (prefix, last) = self.entry(at);
            let same_run = matches!(
                (last, &event),
                (CoarseEvent::Call { .. }, CoarseEvent::Call { .. })
                    | (CoarseEvent::Return { .. }, CoarseEvent::Return { .. })
            );
            if !(same_run || clocked) || last.thread() <= event.thread() {
                break;
            }
            moved.push(last.clone());
            at = *prefix;
        }
        at = self.push(at, event);
        for last in moved.into_iter().rev() {
            at = self.push(at, last);
        }
        at
    }

    /// The whole history `id` names.
    pub(crate) fn history(&self, id: HistoryId) -> History {
        let mut tail = Vec::new();
        let mut at = id;
        while at != Self::ROOT {
            let (prefix, event) = self.entry(at);
            tail.push(event.clone());
            at = *prefix;
        }
        let mut history = self.base.clone();
        history.events.extend(tail.into_iter().rev());
        history
    }
}

/// The histories of a tree's leaves, each distinct one stored once: a tree has many more
/// leaves than histories (the 4×3 Treiber model, a hundred thousand states in, held its leaves'
/// histories many times over, the most of its memory).
#[derive(Default)]
pub(crate) struct LeafHistories(
    std::collections::HashSet<Arc<History>, foldhash::fast::FixedState>,
);

impl LeafHistories {
    /// `history`, shared with the leaves that have it already.
    pub(crate) fn share(&mut self, history: Arc<History>) -> Arc<History> {
        if let Some(known) = self.0.get(&*history) {
            return Arc::clone(known);
        }
        self.0.insert(Arc::clone(&history));
        history
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::{Clock, ThreadId};
    use crate::value::Value;

    /// A step of `thread` calling `op`, returning `ret` when given.
    fn step(thread: usize, op: &str, ret: Option<Value>) -> Arc<Event> {
        let mut event = Event::local(thread, String::new(), Default::default());
        event.call = Some(Call::new(op, vec![Value::Int(1)]));
        event.ret = ret;
        Arc::new(event)
    }

    /// Under clocks a call and another thread's return commute: two interleavings of the same
    /// threads' operations are one canonical history, thread-major; without clocks, a return
    /// before a call and after it are two.
    #[test]
    fn under_clocks_histories_are_thread_major() {
        for clocked in [true, false] {
            let clock = clocked.then(|| Clock::from(vec![0, 0]));
            let call = |thread: usize, op: &str| {
                let mut event = Event::clone(&step(thread, op, None));
                event.seen = clock.clone();
                Arc::new(event)
            };
            let ret = |thread: usize| {
                let mut event = Event::local(thread, String::new(), Default::default());
                event.ret = Some(Value::Unit);
                Arc::new(event)
            };
            let mut tree = HistoryTree::new(History::new(), true);
            let mut id = |steps: &[Arc<Event>]| {
                steps
                    .iter()
                    .fold(HistoryTree::ROOT, |h, s| tree.after(h, s))
            };
            let one = id(&[call(1, "a"), call(0, "b"), ret(1), ret(0), call(1, "c")]);
            let other = id(&[call(0, "b"), ret(0), call(1, "a"), ret(1), call(1, "c")]);
            assert_eq!(one == other, clocked);
            if clocked {
                let threads: Vec<ThreadId> = tree
                    .history(one)
                    .events
                    .iter()
                    .map(CoarseEvent::thread)
                    .collect();
                assert_eq!(threads, [0, 0, 1, 1, 1]);
            }
        }
    }

    #[test]
    fn a_step_taken_again_gives_the_history_working_it_out_gives() {
        for canonical in [true, false] {
            let mut remembered = HistoryTree::new(History::new(), canonical);
            let mut fresh = HistoryTree::new(History::new(), canonical);
            let steps = [
                step(1, "a", None),
                step(0, "b", None),
                step(0, "c", Some(Value::Unit)),
                Arc::new(Event::local(1, String::new(), Default::default())),
            ];
            // Every order of two steps from every history met, each step asked twice and as
            // an equal step in an allocation of its own: the same ids as working each out.
            let mut histories = vec![HistoryTree::ROOT];
            for _ in 0..2 {
                for h in histories.clone() {
                    for s in &steps {
                        let copy = Arc::new(Event::clone(s));
                        let expected = fresh.append_step(h, s);
                        assert_eq!(remembered.after(h, s), expected);
                        assert_eq!(remembered.after(h, s), expected, "remembered");
                        assert_eq!(remembered.after(h, &copy), expected, "by content");
                        histories.push(expected);
                    }
                }
            }
            for &h in &histories {
                assert_eq!(remembered.history(h), fresh.history(h));
            }
        }
    }
}
