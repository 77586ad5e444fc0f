//! A leaf of the interleaving tree: where no thread can move, why ([`LeafKind`]), and what the
//! checker and the reports need of it (the path's history, the fault, the bound, what each
//! stuck thread waits for).

use std::sync::Arc;

use serde::Serialize;

use crate::history::History;
use crate::limit::Bound;
use crate::program::{Fault, Wait};

/// Why a leaf ends its path.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum LeafKind {
    /// Every operation returned and the `final` operations ran.
    Complete,
    /// Operations are pending but no thread can make progress (deadlock or livelock).
    Stuck,
    /// The model failed (null dereference, failed assert, ...).
    Fault,
    /// A bound was hit; the verdict below this point is unknown. Which bound is in
    /// [`Leaf::bound`]: a path cut by an operation's limits ([`Bound::MaxSteps`],
    /// [`Bound::StepBudget`]), or a state never explored because the whole exploration stopped
    /// ([`Bound::Stopped`]: see [`Leaf::is_cut`]).
    Bounded,
}

/// A leaf: where no thread can move.
#[derive(Clone, Debug)]
pub struct Leaf {
    /// Why the path ends here.
    pub kind: LeafKind,
    /// The coarse history of the execution (with `final` operations at complete leaves, with
    /// the blocked calls at stuck leaves). Shared: the leaves of a tree with the same history
    /// hold one copy (the explorer's `LeafHistories`), and so do the checker's cache and the
    /// reports that quote it.
    pub history: Arc<History>,
    /// The failure, for a fault leaf (boxed, as `bound`: a tree holds hundreds of thousands
    /// of leaves, and few have either).
    pub fault: Option<Box<Fault>>,
    /// Which limit ended the path, for a bounded leaf.
    pub bound: Option<Box<Bound>>,
    /// At a stuck leaf: what each blocked thread waits for.
    pub waiting: Vec<Wait>,
}

impl Leaf {
    /// A bounded leaf: `bound` cut the path whose history is `history`; no verdict.
    pub fn bounded(history: impl Into<Arc<History>>, bound: Bound) -> Leaf {
        Leaf {
            kind: LeafKind::Bounded,
            history: history.into(),
            fault: None,
            bound: Some(Box::new(bound)),
            waiting: Vec::new(),
        }
    }

    /// A fault leaf: the program failed with `fault` on the path whose history is `history`.
    pub fn fault(history: impl Into<Arc<History>>, fault: Fault) -> Leaf {
        Leaf {
            kind: LeafKind::Fault,
            history: history.into(),
            fault: Some(Box::new(fault)),
            bound: None,
            waiting: Vec::new(),
        }
    }

    /// Whether this is a state the exploration never explored because it stopped (too many
    /// states, out of time or memory, interrupted): a *cut* leaf, as reports call it, rather
    /// than a path cut by one operation's limits (a *bounded* one).
    pub fn is_cut(&self) -> bool {
        matches!(self.bound.as_deref(), Some(Bound::Stopped { .. }))
    }

    /// A complete leaf: every operation returned; `history` includes the `final` part's.
    pub fn complete(history: impl Into<Arc<History>>) -> Leaf {
        Leaf {
            kind: LeafKind::Complete,
            history: history.into(),
            fault: None,
            bound: None,
            waiting: Vec::new(),
        }
    }

    /// A stuck leaf: no thread can move; `history` ends with the blocked calls, and `waiting`
    /// says what each blocked thread waits for.
    pub fn stuck(history: impl Into<Arc<History>>, waiting: Vec<Wait>) -> Leaf {
        Leaf {
            kind: LeafKind::Stuck,
            history: history.into(),
            fault: None,
            bound: None,
            waiting,
        }
    }
}
