//! The search for histories whose operations are ordered by happens-before, not real time.
//!
//! Under weak memory an operation precedes another only if its return happens before the
//! other's call ([`fgvt_tree::CoarseEvent::Call`]'s `seen`): threads that never synchronized
//! are unordered, however the schedule interleaved them. That order need not be an *interval*
//! order (two threads of two operations each, never synchronizing, order each thread's pair
//! and nothing else), so it has no list of call and return entries for WGL's search
//! ([`super::search`]) to walk. This search walks the order itself: an operation may be
//! linearized next once everything that precedes it is, and a configuration (linearized set,
//! spec state) known to fail is not tried twice. The histories it meets are a test's, a few
//! operations long.

use std::time::Instant;

use fgvt_tree::interner::Interner;

use super::hash::{FxHashMap, FxHashSet};
use super::search::{Limits, SearchResult};
use super::SearchStats;
use crate::op::{CheckError, OpView};
use crate::spec::{Apply, Spec};

/// How often (in steps) the deadline is looked at.
const DEADLINE_EVERY: u64 = 1 << 10;

/// Searches `views` for a linearization that respects [`OpView::precedes`]: in a `stuck`
/// history the pending operations never take effect and must all block at the end; otherwise
/// each may take effect or not.
pub(crate) fn search<S: Spec>(
    spec: &S,
    views: &[OpView<'_>],
    stuck: bool,
    limits: &Limits,
) -> Result<(SearchResult, SearchStats), CheckError> {
    let n = views.len();
    let words = n.div_ceil(64).max(1);
    // What must be linearized before each operation.
    let before: Vec<Vec<u64>> = (0..n)
        .map(|i| {
            let mut set = vec![0u64; words];
            for j in (0..n).filter(|&j| j != i && views[j].precedes(&views[i])) {
                set[j / 64] |= 1 << (j % 64);
            }
            set
        })
        .collect();
    let completed: Vec<u64> = {
        let mut set = vec![0u64; words];
        for i in (0..n).filter(|&i| !views[i].is_pending()) {
            set[i / 64] |= 1 << (i % 64);
        }
        set
    };
    let mut walk = Walk {
        spec,
        views,
        states: Interner::new(),
        transitions: FxHashMap::default(),
        failed: FxHashSet::default(),
        limits,
        steps: 0,
    };
    let initial = walk.states.intern(spec.initial(), || ());
    let mut linearized = vec![0u64; words];
    // The stack of choices: (operation linearized, state before it, next candidate to try).
    let mut stack: Vec<(usize, u32)> = Vec::new();
    let mut best: Vec<usize> = Vec::new();
    let mut state = initial;
    let mut from = 0;
    let result = 'search: loop {
        walk.steps += 1;
        if walk.steps % DEADLINE_EVERY == 0 && limits.deadline.is_some_and(|d| Instant::now() >= d)
        {
            break SearchResult::Unknown;
        }
        if covers(&linearized, &completed) {
            let ends = !stuck || walk.all_block(state, &linearized)?;
            if ends {
                break SearchResult::Linearizable(stack.iter().map(|&(op, _)| op).collect());
            }
        }
        // The next operation that may go now, from `from` on.
        let mut next = None;
        for i in from..n {
            let may = !is_set(&linearized, i)
                && !(stuck && views[i].is_pending())
                && covers(&linearized, &before[i]);
            if !may {
                continue;
            }
            if let Some(after) = walk.transition(state, i)? {
                set(&mut linearized, i);
                if walk.failed.contains(&(linearized.clone(), after)) {
                    clear(&mut linearized, i);
                    continue;
                }
                next = Some((i, after));
                break;
            }
        }
        match next {
            Some((op, after)) => {
                stack.push((op, state));
                if stack.len() > best.len() {
                    best = stack.iter().map(|&(op, _)| op).collect();
                }
                state = after;
                from = 0;
            }
            None => {
                // Nothing goes from here: remember the configuration, and undo the last choice.
                if walk.failed.len() < limits.cache_limit {
                    walk.failed.insert((linearized.clone(), state));
                }
                let Some((op, before)) = stack.pop() else {
                    break 'search SearchResult::NotLinearizable { best };
                };
                clear(&mut linearized, op);
                state = before;
                from = op + 1;
            }
        }
    };
    let stats = SearchStats {
        steps: walk.steps,
        cache_entries: walk.failed.len(),
        states: walk.states.len(),
        cache_full: walk.failed.len() >= limits.cache_limit,
    };
    Ok((result, stats))
}

/// The search's memory: interned spec states, memoized transitions, failed configurations.
struct Walk<'a, 'h, S: Spec> {
    spec: &'a S,
    views: &'a [OpView<'h>],
    states: Interner<S::State, ()>,
    transitions: FxHashMap<(u32, usize), Option<u32>>,
    failed: FxHashSet<(Vec<u64>, u32)>,
    limits: &'a Limits,
    steps: u64,
}

impl<S: Spec> Walk<'_, '_, S> {
    /// The state after operation `op` in `state`, if the spec agrees with what it returned.
    fn transition(&mut self, state: u32, op: usize) -> Result<Option<u32>, CheckError> {
        if let Some(&t) = self.transitions.get(&(state, op)) {
            return Ok(t);
        }
        let view = &self.views[op];
        let t = match self
            .spec
            .apply(self.states.key(state), view.thread, view.call)
        {
            Apply::Returns { value, state: next } => view
                .accepts(self.spec, &value)
                .then(|| self.states.intern(next, || ())),
            Apply::Blocks => None,
            Apply::Invalid(message) => return Err(CheckError::invalid(view, message)),
        };
        if self.transitions.len() < self.limits.cache_limit {
            self.transitions.insert((state, op), t);
        }
        Ok(t)
    }

    /// Whether every pending operation blocks in `state` (the end of a stuck history).
    fn all_block(&mut self, state: u32, linearized: &[u64]) -> Result<bool, CheckError> {
        for (i, view) in self.views.iter().enumerate() {
            if !view.is_pending() || is_set(linearized, i) {
                continue;
            }
            let blocks = matches!(
                self.spec
                    .apply(self.states.key(state), view.thread, view.call),
                Apply::Blocks
            );
            if !blocks {
                return Ok(false);
            }
        }
        Ok(true)
    }
}

fn is_set(set: &[u64], i: usize) -> bool {
    set[i / 64] >> (i % 64) & 1 == 1
}

fn set(set: &mut [u64], i: usize) {
    set[i / 64] |= 1 << (i % 64);
}

fn clear(set: &mut [u64], i: usize) {
    set[i / 64] &= !(1 << (i % 64));
}

/// Whether every member of `needed` is in `set`.
fn covers(set: &[u64], needed: &[u64]) -> bool {
    set.iter().zip(needed).all(|(s, n)| n & !s == 0)
}
