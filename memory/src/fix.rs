//! Which changes of orderings to try, in which order, when a program fails only under weak
//! memory: the search for the smallest fix, for every front end that can explore a program
//! again with its orderings changed (Rust code under `fgvt-sync`, models of `fgvt-lang`).
//!
//! A change is made at one access of the program (a *site*): a stronger order for it, or a
//! fence right before or after it. The search tries one change at a time, the weakest first
//! (an `Acquire` or `Release` before an `AcqRel`, those before `SeqCst`), then pairs, those that
//! pair a release side with an acquire side at the racing statements first (message passing's
//! flag, a seqlock's two fences). Each is tried by exploring the whole program again with it:
//! a change is reported only when every run then passes. The first that does is the answer.
//!
//! How a trial explores the program again is the caller's: this module orders the trials
//! ([`trials`]), bounds each ([`trial_limits`]) and makes them until one passes ([`search`]).

use crate::{AccessKind, Order};

/// One change at a site.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Change {
    /// The access with this order instead.
    Order(Order),
    /// A fence of this order added right before the access.
    FenceBefore(Order),
    /// A fence of this order added right after the access.
    FenceAfter(Order),
}

impl Change {
    /// How big a change it is, for trying the smallest first: a fence or an order on one
    /// side of a synchronization is smaller than `AcqRel`, which is smaller than `SeqCst`.
    pub fn weight(self) -> u8 {
        match self {
            Change::Order(order) => strength(order),
            // A fence is a statement more than an order changed.
            Change::FenceBefore(order) | Change::FenceAfter(order) => strength(order) + 1,
        }
    }

    /// The order the change brings (of the access, or of the fence added).
    pub fn order(self) -> Order {
        match self {
            Change::Order(o) | Change::FenceBefore(o) | Change::FenceAfter(o) => o,
        }
    }

    /// Whether it adds a release side (`Release`, `AcqRel`, `SeqCst`, or a release fence).
    pub fn releases(self) -> bool {
        self.order().is_release()
    }

    /// Whether it adds an acquire side.
    pub fn acquires(self) -> bool {
        self.order().is_acquire()
    }
}

/// How strong an order is: `Relaxed` < `Acquire`, `Release` < `AcqRel` < `SeqCst`.
pub fn strength(order: Order) -> u8 {
    match order {
        Order::Relaxed => 0,
        Order::Acquire | Order::Release => 1,
        Order::AcqRel => 2,
        Order::SeqCst => 3,
    }
}

/// The order an access of `kind` runs with when a change asks for `wanted`: the side of it
/// the kind can take (a load asked for `AcqRel` is `Acquire`, a store `Release`; a load asked
/// for `Release` has nothing to strengthen and stays `Relaxed`).
pub fn valid_for(kind: AccessKind, wanted: Order) -> Order {
    match (kind, wanted) {
        (AccessKind::Load, Order::Release) | (AccessKind::Store, Order::Acquire) => Order::Relaxed,
        (AccessKind::Load, Order::AcqRel) => Order::Acquire,
        (AccessKind::Store, Order::AcqRel) => Order::Release,
        (_, wanted) => wanted,
    }
}

/// The changes worth trying at a site of `kind` declaring `declared`: every stronger order
/// its kind may take, and the fences that order what comes before or after it (a release
/// fence before a store or read-modify-write, an acquire fence around a load), and the
/// `SeqCst` fence after a store or before a load: the one order between a store and a later
/// load of another location that no access ordering of one side gives (store buffering, the
/// Release/Acquire Peterson lock).
pub fn changes(kind: AccessKind, declared: Order) -> Vec<Change> {
    use Order::{AcqRel, Acquire, Release, SeqCst};
    let orders: &[Order] = match kind {
        AccessKind::Load => &[Acquire, SeqCst],
        AccessKind::Store => &[Release, SeqCst],
        AccessKind::Rmw | AccessKind::Fence => &[Acquire, Release, AcqRel, SeqCst],
    };
    let stronger = |o: Order| {
        (!declared.is_acquire() || o.is_acquire())
            && (!declared.is_release() || o.is_release())
            && strength(o) > strength(declared)
    };
    let mut changes: Vec<Change> = orders
        .iter()
        .copied()
        .filter(|&o| stronger(o))
        .map(Change::Order)
        .collect();
    match kind {
        AccessKind::Load => {
            changes.extend([Change::FenceBefore(Acquire), Change::FenceAfter(Acquire)]);
            if declared != SeqCst {
                changes.push(Change::FenceBefore(SeqCst));
            }
        }
        AccessKind::Store => {
            changes.extend([Change::FenceBefore(Release), Change::FenceAfter(Release)]);
            if declared != SeqCst {
                changes.push(Change::FenceAfter(SeqCst));
            }
        }
        AccessKind::Rmw => {
            changes.extend([Change::FenceBefore(Release), Change::FenceAfter(Acquire)]);
        }
        AccessKind::Fence => {}
    }
    changes
}

/// Every trial, in the order the search makes them, for sites of the given kinds and declared
/// orders: single changes by weight (racing sites first among equals), then pairs of changes
/// at two sites, `SeqCst` left out (pairs that need it are rarely the smallest fix, and make
/// spins distinct states): a release side with an acquire side at racing sites first, then by
/// total weight. `racing[i]` says whether site `i` is a racing statement of a CDRS. A trial
/// names sites by their index in `sites`.
pub fn trials(sites: &[(AccessKind, Order)], racing: &[bool]) -> Vec<Vec<(usize, Change)>> {
    let mut singles: Vec<(usize, Change)> = sites
        .iter()
        .enumerate()
        .flat_map(|(i, &(kind, order))| changes(kind, order).into_iter().map(move |c| (i, c)))
        .collect();
    singles.sort_by_key(|&(i, c)| (c.weight(), !racing[i], i));
    let paired: Vec<(usize, Change)> = singles
        .iter()
        .copied()
        .filter(|&(_, c)| c.weight() < strength(Order::SeqCst))
        .collect();
    let mut pairs: Vec<(u8, [(usize, Change); 2])> = Vec::new();
    for (a, &first) in paired.iter().enumerate() {
        for &second in &paired[a + 1..] {
            if first.0 == second.0 {
                continue;
            }
            let (x, y) = (first.1, second.1);
            let complementary = (x.releases() && y.acquires()) || (x.acquires() && y.releases());
            let both_racing = racing[first.0] && racing[second.0];
            let rank = u8::from(!complementary) * 2 + u8::from(!both_racing);
            pairs.push((rank * 16 + x.weight() + y.weight(), [first, second]));
        }
    }
    pairs.sort_by_key(|&(rank, pair)| (rank, pair[0].0, pair[1].0));
    singles
        .into_iter()
        .map(|c| vec![c])
        .chain(pairs.into_iter().map(|(_, pair)| pair.to_vec()))
        .collect()
}

/// How many times as many states as the program's own tree a trial may explore (and at least
/// [`TRIAL_STATES`]): a change that makes the tree much larger (a `SeqCst` access makes a
/// spin's turns distinct states) is no fix to tell of.
pub const TRIAL_GROWTH: usize = 20;

/// The fewest states a trial may explore.
pub const TRIAL_STATES: usize = 20_000;

/// The limits of one trial, `(states, steps of an operation)`, for a program whose tree has
/// `nodes` stored nodes and paths at most `max_depth` steps long.
pub fn trial_limits(nodes: usize, max_depth: usize) -> (usize, usize) {
    (
        nodes.saturating_mul(TRIAL_GROWTH).max(TRIAL_STATES),
        max_depth.saturating_mul(2).saturating_add(8),
    )
}

/// What [`search`] came to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Found {
    /// The first trial that passed, by site index and change; empty when none did.
    pub changes: Vec<(usize, Change)>,
    /// How many trials were made.
    pub tried: usize,
}

/// Makes the trials of `sites` in [`trials`]'s order, at most `max` of them, until one passes:
/// `passes(trial)` explores the program again with it, `Some(true)` when every run then
/// passes, `None` to stop searching (the run was interrupted).
///
/// When no one or two changes pass, it tries every access `SeqCst` at once; if that passes,
/// each of those changes is taken back in turn, kept out when the rest still pass: a fix that
/// needs three accesses `SeqCst` (the Release/Acquire Peterson lock: both flags' stores and
/// loads and the turn's store, since under RC11 a `SeqCst` fence cannot order the two stores to
/// the turn) is still found, with none of its changes superfluous.
pub fn search(
    sites: &[(AccessKind, Order)],
    racing: &[bool],
    max: usize,
    mut passes: impl FnMut(&[(usize, Change)]) -> Option<bool>,
) -> Found {
    let mut tried = 0;
    let mut try_it = |trial: &[(usize, Change)]| -> Option<bool> {
        if tried >= max {
            return None;
        }
        let passed = passes(trial)?;
        tried += 1;
        Some(passed)
    };
    for trial in trials(sites, racing) {
        match try_it(&trial) {
            None => return Found::nothing(tried),
            Some(true) => {
                return Found {
                    changes: trial,
                    tried,
                }
            }
            Some(false) => {}
        }
    }
    let mut all: Vec<(usize, Change)> = (sites.iter().enumerate())
        .filter(|(_, &(_, order))| order != Order::SeqCst)
        .map(|(i, _)| (i, Change::Order(Order::SeqCst)))
        .collect();
    // One `SeqCst` access is a single trial above.
    if all.len() < 2 || try_it(&all) != Some(true) {
        return Found::nothing(tried);
    }
    let mut at = 0;
    while at < all.len() {
        let mut without = all.clone();
        without.remove(at);
        match try_it(&without) {
            Some(true) => all = without,
            Some(false) => at += 1,
            // Out of trials: what passed last is a fix, if not the smallest.
            None => break,
        }
    }
    Found {
        changes: all,
        tried,
    }
}

impl Found {
    /// No fix, after `tried` trials.
    fn nothing(tried: usize) -> Found {
        Found {
            changes: Vec::new(),
            tried,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_access_is_offered_only_stronger_orders_and_the_fences_around_it() {
        let load = changes(AccessKind::Load, Order::Relaxed);
        assert_eq!(
            load,
            [
                Change::Order(Order::Acquire),
                Change::Order(Order::SeqCst),
                Change::FenceBefore(Order::Acquire),
                Change::FenceAfter(Order::Acquire),
                Change::FenceBefore(Order::SeqCst)
            ]
        );
        assert_eq!(
            changes(AccessKind::Store, Order::Release).last(),
            Some(&Change::FenceAfter(Order::SeqCst))
        );
        // A release read-modify-write keeps its release side: AcqRel or SeqCst.
        let rmw = changes(AccessKind::Rmw, Order::Release);
        assert_eq!(
            rmw[..2],
            [Change::Order(Order::AcqRel), Change::Order(Order::SeqCst)]
        );
        assert!(changes(AccessKind::Fence, Order::SeqCst).is_empty());
        assert!(changes(AccessKind::Load, Order::SeqCst)
            .iter()
            .all(|c| !matches!(c, Change::Order(_))));
    }

    /// The search, against an oracle that passes exactly the changes it is given: singles by
    /// weight, then the release/acquire pair at the racing sites before any other pair.
    #[test]
    fn single_changes_come_first_then_the_release_acquire_pair_at_racing_sites() {
        // Message passing: data store, flag store, flag load, data load.
        let sites = [
            (AccessKind::Store, Order::Relaxed),
            (AccessKind::Store, Order::Relaxed),
            (AccessKind::Load, Order::Relaxed),
            (AccessKind::Load, Order::Relaxed),
        ];
        let racing = [false, true, true, false];
        let all = trials(&sites, &racing);
        let singles = all.iter().take_while(|t| t.len() == 1).count();
        assert_eq!(singles, 20, "five changes at each of four sites");
        let weights: Vec<u8> = all[..singles].iter().map(|t| t[0].1.weight()).collect();
        assert!(weights.windows(2).all(|w| w[0] <= w[1]), "{weights:?}");
        assert_eq!(
            all[singles],
            [
                (1, Change::Order(Order::Release)),
                (2, Change::Order(Order::Acquire))
            ]
        );
        for pair in &all[singles..] {
            assert_ne!(pair[0].0, pair[1].0);
            assert!(pair.iter().all(|(_, c)| c.order() != Order::SeqCst));
        }
    }

    /// The search stops at the first trial that passes, counts what it tried, and stops
    /// without a fix when told to or after `max` trials.
    #[test]
    fn the_search_takes_the_first_trial_that_passes() {
        let sites = [
            (AccessKind::Store, Order::Relaxed),
            (AccessKind::Load, Order::Relaxed),
        ];
        let racing = [true, true];
        let all = trials(&sites, &racing);
        let pair = [
            (0, Change::Order(Order::Release)),
            (1, Change::Order(Order::Acquire)),
        ];
        let at = all
            .iter()
            .position(|t| t == &pair)
            .expect("the pair is a trial");
        let found = search(&sites, &racing, usize::MAX, |t| Some(t == pair));
        assert_eq!(found.changes, pair);
        assert_eq!(found.tried, at + 1);
        let capped = search(&sites, &racing, at, |t| Some(t == pair));
        assert_eq!((capped.changes.len(), capped.tried), (0, at));
        let mut asked = 0;
        let stopped = search(&sites, &racing, usize::MAX, |_| {
            asked += 1;
            (asked < 3).then_some(false)
        });
        assert_eq!((stopped.changes.len(), stopped.tried), (0, 2));
        assert_eq!(trial_limits(10, 5), (TRIAL_STATES, 18));
        assert_eq!(trial_limits(10_000, usize::MAX), (200_000, usize::MAX));
    }

    #[test]
    fn a_change_asked_of_a_kind_that_cannot_take_it_keeps_the_side_it_can() {
        assert_eq!(valid_for(AccessKind::Load, Order::AcqRel), Order::Acquire);
        assert_eq!(valid_for(AccessKind::Store, Order::AcqRel), Order::Release);
        assert_eq!(valid_for(AccessKind::Load, Order::Release), Order::Relaxed);
        for kind in [AccessKind::Load, AccessKind::Store, AccessKind::Rmw] {
            for o in Order::ALL {
                assert!(valid_for(kind, o).is_valid_for(kind), "{kind} {o}");
            }
        }
    }
}
