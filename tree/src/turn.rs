//! Preemption bounding's bookkeeping for the search ([`crate::explore`]): who moved last and
//! how many preemptions a path took ([`Turn`]), which threads a state's turn lets a bounded
//! search ask for their step, and the turn each step leads to.
//!
//! The rule is in one place because the search applies it twice: asking a program that goes on
//! from its last step for a state's steps ahead ([`ask_last_to_first`]), and then taking them. A
//! step asked ahead that the search then prunes would run real code for nothing (a step of
//! `fgvt-sync` can cost a whole execution).

use crate::history::ThreadId;
use crate::program::Step;

/// In a bounded-preemption search, who moved last and how many preemptions the path took:
/// two paths to one program state have the same futures only if both agree. Outside one it
/// is always [`Turn::ANY`], so that it tells no states apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Turn {
    /// The thread that took the last step ([`Turn::NOBODY`] at the root).
    last: u16,
    /// Preemptions so far.
    used: u16,
}

impl Turn {
    const NOBODY: u16 = u16::MAX;

    /// The root's turn, and every turn outside a bounded search.
    pub(crate) const ANY: Turn = Turn {
        last: Turn::NOBODY,
        used: 0,
    };

    /// The last thread, if one has moved.
    pub(crate) fn last(self) -> Option<ThreadId> {
        (self.last != Turn::NOBODY).then_some(usize::from(self.last))
    }

    /// The turn after `thread` moves, a preemption or not.
    fn after(self, thread: ThreadId, preempts: bool) -> Turn {
        Turn {
            // A test of 65,535 threads or more is far past any bounded search's reach.
            last: u16::try_from(thread).unwrap_or(Turn::NOBODY - 1),
            used: self.used + u16::from(preempts),
        }
    }

    /// The turn of the state `thread`'s step reaches, in a search bounded by `bound`: a step
    /// by another thread than the last, while that one can go on (`last_goes_on`), preempts
    /// it. Outside a bounded search, [`Turn::ANY`].
    pub(crate) fn child(self, thread: ThreadId, last_goes_on: bool, bound: Option<u32>) -> Turn {
        match bound {
            Some(_) => self.after(thread, self.preempts(thread, last_goes_on)),
            None => Turn::ANY,
        }
    }

    /// Whether `thread`'s step preempts the thread that moved last, which can go on
    /// (`last_goes_on`).
    fn preempts(self, thread: ThreadId, last_goes_on: bool) -> bool {
        last_goes_on && self.last() != Some(thread)
    }

    /// Whether `bound` prunes `thread`'s step here: it would preempt the last thread, which
    /// can go on (`last_goes_on`), on a path that took every preemption the bound allows.
    pub(crate) fn prunes(self, thread: ThreadId, last_goes_on: bool, bound: Option<u32>) -> bool {
        self.preempts(thread, last_goes_on) && bound.is_some_and(|max| u32::from(self.used) >= max)
    }

    /// The order in which a state's threads are asked for their step: by number, except that
    /// a bounded-preemption search asks the thread that moved last first (whether it can go
    /// on decides which other steps are preemptions, and runs without one are looked at first).
    pub(crate) fn order(
        self,
        threads: usize,
        bound: Option<u32>,
    ) -> impl DoubleEndedIterator<Item = ThreadId> {
        let last = self.last().filter(|_| bound.is_some());
        last.into_iter()
            .chain((0..threads).filter(move |&t| Some(t) != last))
    }
}

/// Whether the step of the thread that moved last lets it go on: a switch away from it then
/// preempts it.
pub(crate) fn goes_on<S>(step: &Step<S>) -> bool {
    matches!(step, Step::Moved { .. } | Step::Fault { .. })
}

/// Asks `step` for every step (way 0) that a search bounded by `bound` takes from a state of
/// turn `turn`, last to first in its [order](Turn::order): `asked[t]` is thread `t`'s, `None`
/// for a thread the bound prunes, which is never asked. A program that goes on cheaply from its
/// last step (`fgvt-sync`'s re-executions) is then where the search opens its first child.
///
/// The answers are those the search would get asking in its own order. At the bound, whether
/// the others are asked at all depends on whether the thread that moved last can go on: that
/// one is asked first.
pub(crate) fn ask_last_to_first<S>(
    threads: usize,
    turn: Turn,
    bound: Option<u32>,
    asked: &mut Vec<Option<Step<S>>>,
    mut step: impl FnMut(ThreadId) -> Step<S>,
) {
    asked.clear();
    asked.resize_with(threads, || None);
    let at_bound = bound.is_some_and(|max| u32::from(turn.used) >= max);
    let mut last_goes_on = false;
    if let Some(last) = turn.last().filter(|_| at_bound) {
        let first = step(last);
        last_goes_on = goes_on(&first);
        asked[last] = Some(first);
    }
    for thread in turn.order(threads, bound).rev() {
        if asked[thread].is_none() && !turn.prunes(thread, last_goes_on, bound) {
            asked[thread] = Some(step(thread));
        }
    }
}
