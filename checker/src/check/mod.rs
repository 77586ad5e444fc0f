//! The linearizability checker: WGL search with P-compositional partitioning.
//!
//! [`check`] decides whether a [`History`] is linearizable with respect to a [`Spec`]:
//!
//! * **Partitioning.** With [`CheckOptions::partition`], when the spec gives every operation a
//!   partition key ([`Spec::partition`]), the history is split by key and each sub-history is
//!   checked on its own; the history is linearizable iff every sub-history is
//!   (P-compositionality). Otherwise it is checked whole.
//! * **Completed operations** must all be linearized, between their call and return, with the
//!   result the spec gives ([`Spec::matches`]); a `Return { value: None }` (unknown result)
//!   accepts any result.
//! * **Pending operations** (a call with no return) of a history that is not stuck may take
//!   effect anywhere after their call, with any result, or not at all: a crashed client's write
//!   may or may not have happened. They are never required to block.
//! * **Stuck histories** ([`History::stuck`], Line-Up's generalized linearizability): the pending
//!   operations never take effect; the completed ones must be linearizable *and* some
//!   linearization of them must end in a state where every pending operation
//!   [`Apply::Blocks`](crate::spec::Apply::Blocks). (Line-Up's Definition 2 asks for a witness per
//!   pending operation; requiring one state that blocks all of them together is the stricter
//!   reading, and the one that matches "the execution ended because every thread was blocked".)
//! * [`Apply::Invalid`](crate::spec::Apply::Invalid) is a [`CheckError`], not a verdict.
//! * A [`CheckOptions::deadline`] that passes gives [`Verdict::Unknown`].
//!
//! The search is Wing & Gong's, with Lowe's memoization of (linearized set, spec state)
//! configurations, over a doubly linked list of call and return entries, as in the
//! P-compositionality paper. Two departures, both for memory and speed: a configuration is
//! stored as (first operation not yet linearized, in return order; bitmask over the operations
//! open when it returned; interned state id), which names the linearized set exactly in a few
//! bytes instead of a bitset of the whole history; and applying an operation to a state is
//! memoized, so the spec runs once per distinct (state, operation).

pub(crate) mod hash;
mod partial;
mod search;

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use fgvt_tree::{History, Value};
use serde::Serialize;

use crate::explain::{self, Explanation};
pub use crate::op::CheckError;
use crate::op::OpView;
use crate::spec::Spec;
use search::{Limits, Search, SearchResult};

/// Search steps a partition takes in its first turn (each round doubles it).
const SLICE_STEPS: u64 = 1 << 12;

/// How to check a history.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CheckOptions {
    /// Split the history by the spec's partition keys when every operation has one.
    pub partition: bool,
    /// Give up with [`Verdict::Unknown`] once this instant has passed (looked at every few
    /// thousand search steps).
    pub deadline: Option<Instant>,
    /// The most configurations (and, separately, memoized spec transitions) the search
    /// remembers per (sub-)history. When the cache is full the search stops adding to it: the
    /// verdict stays exact, the search may only revisit configurations it has seen. A cached
    /// configuration takes about 40 bytes.
    pub cache_limit: usize,
    /// Build the full explanation of a violation (candidate analysis and, for small histories,
    /// every real-time order); when `false` the explanation has the longest linearizable
    /// prefix only.
    pub explain: bool,
}

impl Default for CheckOptions {
    /// Partitioning on, no deadline, a cache of 4 million configurations, full explanations.
    fn default() -> Self {
        CheckOptions {
            partition: true,
            deadline: None,
            cache_limit: 4_000_000,
            explain: true,
        }
    }
}

/// Whether a history is linearizable.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "verdict", rename_all = "snake_case")]
pub enum Verdict {
    /// It is; `order` is one witness: indices into [`History::operations`], in linearization
    /// order. Pending operations appear only if they took effect (never in a stuck history).
    Linearizable {
        /// The witness order.
        order: Vec<usize>,
    },
    /// It is not; the explanation says why.
    NotLinearizable(Explanation),
    /// The deadline passed before the search finished.
    Unknown,
}

impl Verdict {
    /// Whether this is [`Verdict::Linearizable`].
    pub fn is_linearizable(&self) -> bool {
        matches!(self, Verdict::Linearizable { .. })
    }

    /// Whether this is [`Verdict::NotLinearizable`].
    pub fn is_violation(&self) -> bool {
        matches!(self, Verdict::NotLinearizable(_))
    }
}

/// Work done by a check, summed over partitions.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct SearchStats {
    /// Search steps (candidate entries looked at and backtracks).
    pub steps: u64,
    /// Configurations remembered.
    pub cache_entries: usize,
    /// Distinct spec states met.
    pub states: usize,
    /// Whether a cache reached [`CheckOptions::cache_limit`].
    pub cache_full: bool,
}

impl SearchStats {
    /// Adds the figures of one more (sub-)history's search.
    fn add(&mut self, other: &SearchStats) {
        self.steps += other.steps;
        self.cache_entries += other.cache_entries;
        self.states += other.states;
        self.cache_full |= other.cache_full;
    }
}

/// The verdict on a history, with how it was reached.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Outcome {
    /// The verdict.
    pub verdict: Verdict,
    /// How many sub-histories were checked (1 when not partitioned).
    pub partitions: usize,
    /// Work done.
    pub stats: SearchStats,
}

/// Checks whether `history` is linearizable with respect to `spec`, on this thread.
///
/// Errors: a malformed history, or an operation the spec calls invalid.
pub fn check<S: Spec>(
    spec: &S,
    history: &History,
    options: &CheckOptions,
) -> Result<Outcome, CheckError> {
    let operations = history.operations()?;
    if operations.iter().any(|op| op.seen.is_some()) {
        return check_by_happens_before(spec, history, &operations, options);
    }
    let parts = split(spec, &operations, options);
    let limits = limits(options);
    let turns = Turns::new(spec, history, &parts, &limits);
    turns.work();
    turns.conclude(spec, history, &parts, options)
}

/// [`check`] of a history whose calls say what they happen after (a weak-memory run): the
/// operations are ordered by happens-before, which need not be an interval order, so the
/// history is searched whole by [`partial::search`].
fn check_by_happens_before<S: Spec>(
    spec: &S,
    history: &History,
    operations: &[fgvt_tree::Operation],
    options: &CheckOptions,
) -> Result<Outcome, CheckError> {
    let whole = CheckOptions {
        partition: false,
        ..options.clone()
    };
    let parts = split(spec, operations, &whole);
    let limits = limits(options);
    let (result, stats) = partial::search(spec, &parts[0].1, history.stuck, &limits)?;
    conclude(spec, history, &parts, vec![Some((result, stats))], options)
}

/// [`check`], with the partitions searched in parallel, one thread per core (as porcupine does):
/// what a long recorded history with many keys needs. The partitions take turns as in
/// [`check`], now on several workers; a violation (or the deadline, or an error) in one stops
/// the others at their next turn. Where several partitions are found broken at once, the first
/// of them by key is reported.
pub fn check_parallel<S>(
    spec: &S,
    history: &History,
    options: &CheckOptions,
) -> Result<Outcome, CheckError>
where
    S: Spec + Sync,
    S::State: Send,
{
    let operations = history.operations()?;
    let parts = split(spec, &operations, options);
    let limits = limits(options);
    let turns = Turns::new(spec, history, &parts, &limits);
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let workers = cores.min(parts.len());
    std::thread::scope(|scope| {
        for _ in 1..workers {
            scope.spawn(|| turns.work());
        }
        turns.work();
    });
    turns.conclude(spec, history, &parts, options)
}

/// What a partition's search came to: `None` while unfinished (or stopped unfinished once
/// another partition was decisive).
type Done = Result<Option<(SearchResult, SearchStats)>, CheckError>;

/// The partitions' searches taking turns: each worker takes the next search from the queue,
/// runs one slice of it (twice as long as its previous one: fewer switches when every
/// partition is hard) and puts it back unfinished. So a violation in any partition is found
/// about as fast as in the easiest one, whatever the number of workers: a hard linearizable
/// partition does not hold up the report of an easy broken one.
struct Turns<'a, 'h, S: Spec> {
    queue: Mutex<VecDeque<(usize, Search<'a, 'h, S>, u64)>>,
    /// Set once some partition is decisive (violation, deadline or error).
    decided: AtomicBool,
    done: Mutex<Vec<Done>>,
}

impl<'a, 'h, S: Spec> Turns<'a, 'h, S> {
    fn new(spec: &'a S, history: &History, parts: &'a [Part<'h>], limits: &'a Limits) -> Self {
        let queue = parts
            .iter()
            .enumerate()
            .map(|(i, (_, part))| {
                let search = Search::new(spec, part, history.stuck, limits);
                (i, search, SLICE_STEPS)
            })
            .collect();
        Turns {
            queue: Mutex::new(queue),
            decided: AtomicBool::new(false),
            done: Mutex::new((0..parts.len()).map(|_| Ok(None)).collect()),
        }
    }

    /// One worker: takes turns until every search is done or one is decisive.
    fn work(&self) {
        while !self.decided.load(Ordering::Relaxed) {
            let next = lock(&self.queue).pop_front();
            let Some((i, mut search, slice)) = next else {
                return;
            };
            let outcome = match search.resume(slice) {
                Ok(None) => {
                    lock(&self.queue).push_back((i, search, slice.saturating_mul(2)));
                    continue;
                }
                Ok(Some(result)) => {
                    if !matches!(result, SearchResult::Linearizable(_)) {
                        self.decided.store(true, Ordering::Relaxed);
                    }
                    Ok(Some((result, std::mem::take(&mut search.stats))))
                }
                Err(e) => {
                    self.decided.store(true, Ordering::Relaxed);
                    Err(e)
                }
            };
            lock(&self.done)[i] = outcome;
        }
    }

    /// The outcome once the workers are done: an error of any partition (the first by
    /// partition order), else the first violation or deadline by partition order, else every
    /// partition's witness merged. The steps of the searches left unfinished count too.
    fn conclude(
        self,
        spec: &S,
        history: &History,
        parts: &[Part<'_>],
        options: &CheckOptions,
    ) -> Result<Outcome, CheckError> {
        let unfinished: u64 = into_inner(self.queue)
            .iter()
            .map(|(_, search, _)| search.steps())
            .sum();
        let mut done = Vec::with_capacity(parts.len());
        for outcome in into_inner(self.done) {
            done.push(outcome?);
        }
        let mut outcome = conclude(spec, history, parts, done, options)?;
        outcome.stats.steps += unfinished;
        Ok(outcome)
    }
}

/// The guarded value; a worker that panicked leaves it as it was, which is still usable.
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The value of a mutex no one holds any more.
fn into_inner<T>(m: Mutex<T>) -> T {
    m.into_inner().unwrap_or_else(|e| e.into_inner())
}

/// One partition: its key, if split by key, and its operations.
type Part<'h> = (Option<Value>, Vec<OpView<'h>>);

/// The partitions of `operations` under `options`.
fn split<'h, S: Spec>(
    spec: &S,
    operations: &'h [fgvt_tree::Operation],
    options: &CheckOptions,
) -> Vec<Part<'h>> {
    let views: Vec<OpView<'_>> = operations
        .iter()
        .enumerate()
        .map(|(i, op)| OpView::new(i, op))
        .collect();
    if options.partition {
        partition(spec, views)
    } else {
        vec![(None, views)]
    }
}

/// The limits of every partition's search.
fn limits(options: &CheckOptions) -> Limits {
    Limits {
        deadline: options.deadline,
        cache_limit: options.cache_limit.max(1),
    }
}

/// The outcome of searches that ended (`done[i]` for partition `i`; `None`: stopped unfinished
/// once another was decisive): the first violation or deadline by partition order, else every
/// partition's witness merged.
fn conclude<S: Spec>(
    spec: &S,
    history: &History,
    parts: &[Part<'_>],
    done: Vec<Option<(SearchResult, SearchStats)>>,
    options: &CheckOptions,
) -> Result<Outcome, CheckError> {
    let mut stats = SearchStats::default();
    for (_, s) in done.iter().flatten() {
        stats.add(s);
    }
    let mut witnesses: Vec<Vec<OpView<'_>>> = Vec::with_capacity(parts.len());
    for (i, result) in done.into_iter().enumerate() {
        let (key, part) = &parts[i];
        match result {
            Some((SearchResult::Linearizable(order), _)) => {
                witnesses.push(order.into_iter().map(|j| part[j]).collect());
            }
            Some((SearchResult::NotLinearizable { best }, _)) => {
                let explanation = explain::explain(
                    spec,
                    part,
                    history.stuck,
                    key.clone(),
                    &best,
                    options.explain,
                )?;
                return Ok(Outcome {
                    verdict: Verdict::NotLinearizable(explanation),
                    partitions: parts.len(),
                    stats,
                });
            }
            Some((SearchResult::Unknown, _)) => {
                return Ok(Outcome {
                    verdict: Verdict::Unknown,
                    partitions: parts.len(),
                    stats,
                })
            }
            // Stopped because a later-listed partition was decisive first: that one is next.
            None => {}
        }
    }
    let order = merge_witnesses(&witnesses);
    Ok(Outcome {
        verdict: Verdict::Linearizable { order },
        partitions: parts.len(),
        stats,
    })
}

/// Splits operations by partition key, or keeps them whole if some operation has no key.
fn partition<'h, S: Spec>(
    spec: &S,
    views: Vec<OpView<'h>>,
) -> Vec<(Option<Value>, Vec<OpView<'h>>)> {
    let mut parts: BTreeMap<Value, Vec<OpView<'h>>> = BTreeMap::new();
    for view in &views {
        match spec.partition(view.call) {
            Some(key) => parts.entry(key).or_default().push(*view),
            None => return vec![(None, views)],
        }
    }
    if parts.is_empty() {
        return vec![(None, views)];
    }
    parts.into_iter().map(|(k, v)| (Some(k), v)).collect()
}

/// Merges per-partition witnesses into one witness of the whole history.
///
/// Each operation gets a linearization point: the latest call among it and the operations before
/// it in its partition's witness. That point lies within the operation's interval (a witness
/// respects real time, so no earlier operation of the witness was called after it returned),
/// and points never decrease along a witness; sorting all operations by point therefore keeps
/// every partition's order and every real-time precedence across partitions.
fn merge_witnesses(witnesses: &[Vec<OpView<'_>>]) -> Vec<usize> {
    let mut points: Vec<(usize, usize, usize, usize)> = Vec::new();
    for (p, witness) in witnesses.iter().enumerate() {
        let mut point = 0;
        for (pos, op) in witness.iter().enumerate() {
            point = point.max(op.call_pos);
            points.push((point, p, pos, op.index));
        }
    }
    points.sort_unstable();
    points.into_iter().map(|(_, _, _, op)| op).collect()
}

/// Memoized verdicts of one spec under one set of options, keyed by history: many leaves of an
/// interleaving tree share a history, and it is checked once.
///
/// Safe to share between threads (`&self` methods, an internal lock that is not held while
/// checking; two threads may then check the same new history at once, harmlessly).
/// [`Verdict::Unknown`] outcomes and errors are not remembered.
pub struct VerdictCache<S: Spec> {
    spec: S,
    options: CheckOptions,
    verdicts: Mutex<Verdicts>,
    hits: std::sync::atomic::AtomicU64,
}

/// What a [`VerdictCache`] remembers. Hashed with foldhash: a search looks a history up per
/// leaf, and SipHash over every event of it costs several times more.
type Verdicts = HashMap<Arc<History>, Arc<Outcome>, foldhash::fast::RandomState>;

impl<S: Spec> VerdictCache<S> {
    /// An empty cache for checks against `spec` with `options`.
    pub fn new(spec: S, options: CheckOptions) -> Self {
        VerdictCache {
            spec,
            options,
            verdicts: Mutex::default(),
            hits: Default::default(),
        }
    }

    /// The spec checked against.
    pub fn spec(&self) -> &S {
        &self.spec
    }

    /// The verdict on `history`, from the cache or by [`check`].
    pub fn check(&self, history: &History) -> Result<Arc<Outcome>, CheckError> {
        self.check_with(history, || Arc::new(history.clone()))
    }

    /// [`VerdictCache::check`] of a history held in an `Arc` (a tree's leaves share theirs):
    /// the cache keeps that one rather than a copy.
    pub fn check_shared(&self, history: &Arc<History>) -> Result<Arc<Outcome>, CheckError> {
        self.check_with(history, || Arc::clone(history))
    }

    fn check_with(
        &self,
        history: &History,
        keep: impl FnOnce() -> Arc<History>,
    ) -> Result<Arc<Outcome>, CheckError> {
        if let Some(outcome) = self.lock().get(history) {
            self.hits.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            return Ok(Arc::clone(outcome));
        }
        let outcome = Arc::new(check(&self.spec, history, &self.options)?);
        if !matches!(outcome.verdict, Verdict::Unknown) {
            self.lock().insert(keep(), Arc::clone(&outcome));
        }
        Ok(outcome)
    }

    /// How many distinct histories have a remembered verdict.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// Whether no verdict is remembered.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// How many [`VerdictCache::check`] calls were answered from the cache.
    pub fn hits(&self) -> u64 {
        self.hits.load(std::sync::atomic::Ordering::Relaxed)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Verdicts> {
        // A panic while holding the lock cannot leave the map inconsistent (single inserts).
        lock(&self.verdicts)
    }
}

#[cfg(test)]
mod tests;
