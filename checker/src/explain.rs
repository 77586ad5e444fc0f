//! Why a history is not linearizable, in terms a person can follow.
//!
//! An [`Explanation`] has
//! * the **longest linearizable prefix**: the largest set of operations the search managed to
//!   linearize, in that order, with what each returns;
//! * the **obstacles** at that point: every operation that could come next and why it cannot
//!   (the spec returns something else, the spec blocks but the operation returned, or, in a stuck
//!   history, a pending operation that the spec would not block);
//! * for small histories (at most [`MAX_ORDERS`] real-time-respecting orders and at most
//!   [`MAX_ORDER_OPERATIONS`] operations), **every candidate
//!   order** with the first operation the spec contradicts, like Fig. 5 of the FGVT paper.
//!
//! It serializes to JSON (values and calls as the strings they display as) and displays as text.

use std::fmt;

use fgvt_tree::{Call, Lane, ThreadId, Value};
use serde::{Serialize, Serializer};

use crate::op::{CheckError, OpView};
use crate::spec::{Apply, Spec};

/// The most real-time-respecting orders listed in an explanation (6! = 720).
pub const MAX_ORDERS: usize = 720;

/// Orders are only enumerated for (sub-)histories of at most this many operations: listing
/// hundreds of operations per order would not help anyone, and the enumeration recurses once
/// per operation.
pub const MAX_ORDER_OPERATIONS: usize = 32;

/// The text form shows at most this many prefix steps (the last ones); JSON has them all.
const SHOWN_PREFIX_STEPS: usize = 40;

/// An operation of the history, as explanations refer to it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct OpRef {
    /// Index in [`History::operations`](fgvt_tree::History::operations).
    pub op: usize,
    /// The thread that performed it (the serial `init` / `final` parts run on thread 0: in
    /// JSON they are 0, and their `lane` tells them apart).
    #[serde(serialize_with = "thread_number")]
    pub thread: ThreadId,
    /// Where it is drawn: `T1`, or `init` / `final` for a test's serial parts.
    #[serde(serialize_with = "as_string")]
    pub lane: Lane,
    /// The call, e.g. `write(0, 2)`.
    #[serde(serialize_with = "as_string")]
    pub call: Call,
    /// What the history recorded as its result.
    #[serde(serialize_with = "as_string")]
    pub observed: Observed,
}

/// What a history recorded as an operation's result.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Observed {
    /// It returned this value.
    Returned(Value),
    /// It returned, with an unknown result (displayed `?`).
    Unknown,
    /// It never returned (displayed `pending`).
    Pending,
}

/// One step of the longest linearizable prefix.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PrefixStep {
    /// The operation.
    #[serde(flatten)]
    pub op: OpRef,
    /// What the spec returns for it at this point (equal to the observed result, or the
    /// spec's choice when the observed one is unknown or pending).
    #[serde(serialize_with = "as_string")]
    pub returns: Value,
}

/// Why an operation cannot be placed at some point of an order.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Reason {
    /// The spec returns `expected`, but the history recorded something else.
    WrongResult {
        /// What the spec returns.
        #[serde(serialize_with = "as_string")]
        expected: Value,
    },
    /// The spec blocks here: a completed operation cannot have returned, a pending one cannot
    /// take effect.
    Blocks,
    /// A pending operation of a stuck history, which must block, but the spec returns `returns`.
    MustBlock {
        /// What the spec returns instead of blocking.
        #[serde(serialize_with = "as_string")]
        returns: Value,
    },
    /// The spec agrees (`returns`), but no linearization of the remaining operations follows.
    DeadEnd {
        /// What the spec returns.
        #[serde(serialize_with = "as_string")]
        returns: Value,
    },
}

/// An operation that cannot come next, and why.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Obstacle {
    /// The operation.
    #[serde(flatten)]
    pub op: OpRef,
    /// Why.
    pub reason: Reason,
}

/// One real-time-respecting order of the operations and where the spec contradicts it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct OrderAttempt {
    /// The operations (indices in `History::operations`), in this order.
    pub order: Vec<usize>,
    /// The first operation the spec contradicts; `None` when the order is accepted.
    pub failure: Option<OrderFailure>,
}

/// Where the spec first contradicts an order.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct OrderFailure {
    /// The position in the order; the order's length when every operation of the order is
    /// accepted but a pending operation of a stuck history does not block afterwards.
    pub position: usize,
    /// The contradicted operation (index in `History::operations`).
    pub op: usize,
    /// Why.
    pub reason: Reason,
}

/// Why a history is not linearizable.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Explanation {
    /// The partition key of the failing sub-history, when the history was partitioned.
    #[serde(serialize_with = "opt_as_string")]
    pub partition: Option<Value>,
    /// Whether the history is stuck (pending operations must block).
    pub stuck: bool,
    /// The operations of the failing (sub-)history.
    pub operations: Vec<OpRef>,
    /// The longest linearizable prefix.
    pub prefix: Vec<PrefixStep>,
    /// Every operation that could come after the prefix, and why it cannot.
    pub obstacles: Vec<Obstacle>,
    /// Every real-time-respecting order of the operations with its first contradiction, when
    /// there are at most [`MAX_ORDERS`] of them (and explanations were asked for).
    pub orders: Option<Vec<OrderAttempt>>,
    /// Whether `orders` is absent because there are more than [`MAX_ORDERS`] (or the history
    /// has more than [`MAX_ORDER_OPERATIONS`] operations).
    pub too_many_orders: bool,
}

/// Builds the explanation of a failed search over `part`, whose deepest order was `best`
/// (indices into `part`).
pub(crate) fn explain<S: Spec>(
    spec: &S,
    part: &[OpView<'_>],
    stuck: bool,
    partition: Option<Value>,
    best: &[usize],
    full: bool,
) -> Result<Explanation, CheckError> {
    let operations: Vec<OpRef> = part.iter().map(op_ref).collect();
    let mut state = spec.initial();
    let mut prefix = Vec::with_capacity(best.len());
    for &i in best {
        // The search linearized exactly these operations with this spec; a spec that answers
        // differently now is not deterministic, and the prefix stops where it diverges.
        let Apply::Returns { value, state: next } = apply(spec, &state, &part[i])? else {
            break;
        };
        prefix.push(PrefixStep {
            op: op_ref(&part[i]),
            returns: value,
        });
        state = next;
    }
    let mut explanation = Explanation {
        partition,
        stuck,
        operations,
        prefix,
        obstacles: Vec::new(),
        orders: None,
        too_many_orders: false,
    };
    if !full {
        return Ok(explanation);
    }
    let mut placed = vec![false; part.len()];
    for &i in best {
        placed[i] = true;
    }
    let first_return = (0..part.len())
        .filter(|&i| !placed[i])
        .filter_map(|i| part[i].ret_pos)
        .min();
    for (i, op) in part.iter().enumerate() {
        let candidate = match first_return {
            Some(limit) => !placed[i] && op.call_pos < limit && !(stuck && op.is_pending()),
            // Every completed operation is placed: what is left are the pending operations of
            // a stuck history, which must block.
            None => !placed[i],
        };
        if candidate {
            if let Some(reason) = obstacle(spec, &state, op, stuck)? {
                explanation.obstacles.push(Obstacle {
                    op: op_ref(op),
                    reason,
                });
            }
        }
    }
    explanation.orders = every_order(spec, part, stuck)?;
    explanation.too_many_orders = explanation.orders.is_none();
    Ok(explanation)
}

/// Why `op` cannot come next in `state`, or `None` if it can (pending operations of a stuck
/// history: if it blocks, as it must).
fn obstacle<S: Spec>(
    spec: &S,
    state: &S::State,
    op: &OpView<'_>,
    stuck: bool,
) -> Result<Option<Reason>, CheckError> {
    let pending_in_stuck = stuck && op.is_pending();
    Ok(match apply(spec, state, op)? {
        Apply::Returns { value, .. } if pending_in_stuck => {
            Some(Reason::MustBlock { returns: value })
        }
        Apply::Returns { value, .. } => match op.result {
            Some(observed) if !spec.matches(op.call, &value, observed) => {
                Some(Reason::WrongResult { expected: value })
            }
            _ => Some(Reason::DeadEnd { returns: value }),
        },
        // Blocking is what a pending operation of a stuck history must do.
        _ if pending_in_stuck => None,
        _ => Some(Reason::Blocks),
    })
}

/// Applies `op` in `state`, turning `Invalid` into an error.
fn apply<S: Spec>(
    spec: &S,
    state: &S::State,
    op: &OpView<'_>,
) -> Result<Apply<S::State>, CheckError> {
    match spec.apply(state, op.thread, op.call) {
        Apply::Invalid(message) => Err(CheckError::invalid(op, message)),
        other => Ok(other),
    }
}

fn op_ref(op: &OpView<'_>) -> OpRef {
    let observed = match (op.ret_pos, op.result) {
        (None, _) => Observed::Pending,
        (Some(_), None) => Observed::Unknown,
        (Some(_), Some(v)) => Observed::Returned(v.clone()),
    };
    OpRef {
        op: op.index,
        thread: op.thread,
        lane: Lane(op.thread),
        call: op.call.clone(),
        observed,
    }
}

/// Every real-time-respecting order of `part` (completed operations, and in a history that is
/// not stuck any subset of the pending ones), each with its first contradiction; `None` when
/// there are more than [`MAX_ORDERS`] or more than [`MAX_ORDER_OPERATIONS`] operations.
fn every_order<S: Spec>(
    spec: &S,
    part: &[OpView<'_>],
    stuck: bool,
) -> Result<Option<Vec<OrderAttempt>>, CheckError> {
    if part.len() > MAX_ORDER_OPERATIONS {
        return Ok(None);
    }
    let mut orders = Vec::new();
    let mut current = Vec::new();
    if !enumerate(
        part,
        stuck,
        &mut vec![false; part.len()],
        &mut current,
        &mut orders,
    ) {
        return Ok(None);
    }
    let mut attempts = Vec::with_capacity(orders.len());
    for order in orders {
        let failure = first_contradiction(spec, part, stuck, &order)?;
        attempts.push(OrderAttempt {
            order: order.iter().map(|&i| part[i].index).collect(),
            failure,
        });
    }
    Ok(Some(attempts))
}

/// Depth-first enumeration of orders into `out`; `false` once there are too many.
fn enumerate(
    part: &[OpView<'_>],
    stuck: bool,
    placed: &mut Vec<bool>,
    current: &mut Vec<usize>,
    out: &mut Vec<Vec<usize>>,
) -> bool {
    let all_completed = part
        .iter()
        .zip(placed.iter())
        .all(|(op, &p)| p || op.is_pending());
    if all_completed {
        if out.len() == MAX_ORDERS {
            return false;
        }
        out.push(current.clone());
    }
    // An operation may come next unless some unplaced operation returned before it was called.
    let first_return = (0..part.len())
        .filter(|&j| !placed[j])
        .filter_map(|j| part[j].ret_pos)
        .min()
        .unwrap_or(usize::MAX);
    for i in 0..part.len() {
        if placed[i] || (stuck && part[i].is_pending()) {
            continue;
        }
        if part[i].call_pos < first_return {
            placed[i] = true;
            current.push(i);
            let fits = enumerate(part, stuck, placed, current, out);
            current.pop();
            placed[i] = false;
            if !fits {
                return false;
            }
        }
    }
    true
}

/// Runs `order` through the spec and finds the first operation it contradicts.
fn first_contradiction<S: Spec>(
    spec: &S,
    part: &[OpView<'_>],
    stuck: bool,
    order: &[usize],
) -> Result<Option<OrderFailure>, CheckError> {
    let mut state = spec.initial();
    for (position, &i) in order.iter().enumerate() {
        let op = &part[i];
        let reason = match apply(spec, &state, op)? {
            Apply::Returns { value, state: next } => {
                if op.accepts(spec, &value) {
                    state = next;
                    continue;
                }
                Reason::WrongResult { expected: value }
            }
            _ => Reason::Blocks,
        };
        return Ok(Some(OrderFailure {
            position,
            op: op.index,
            reason,
        }));
    }
    if stuck {
        for op in part.iter().filter(|op| op.is_pending()) {
            if let Apply::Returns { value, .. } = apply(spec, &state, op)? {
                return Ok(Some(OrderFailure {
                    position: order.len(),
                    op: op.index,
                    reason: Reason::MustBlock { returns: value },
                }));
            }
        }
    }
    Ok(None)
}

impl Explanation {
    /// The operation with history index `op`.
    pub fn operation(&self, op: usize) -> Option<&OpRef> {
        self.operations.iter().find(|o| o.op == op)
    }

    /// A one-line summary: the first obstacle, or the size of the prefix.
    pub fn summary(&self) -> String {
        match self.obstacles.first() {
            Some(obstacle) => self.describe(
                &obstacle.op,
                &obstacle.reason,
                self.prefix.last().map(|s| &s.op),
            ),
            None => format!(
                "only {} of {} operations can be linearized",
                self.prefix.len(),
                self.operations.len()
            ),
        }
    }

    /// What went wrong, in one sentence for the top of a bug report: "T1 read() returned
    /// (1, 2), which no serial order of the operations gives".
    pub fn headline(&self) -> String {
        let Some(obstacle) = self.obstacles.first() else {
            return self.summary();
        };
        let op = &obstacle.op;
        let who = format!("{} {}", Lane(op.thread), op.call);
        match &obstacle.reason {
            Reason::WrongResult { .. } | Reason::DeadEnd { .. } => format!(
                "{who} returned {}, which no serial order of the operations gives",
                op.observed
            ),
            Reason::Blocks if op.observed == Observed::Pending => {
                format!("{who} (pending) can take effect in no serial order: the spec blocks it")
            }
            Reason::Blocks => format!(
                "{who} returned {}, but in every serial order it would block",
                op.observed
            ),
            Reason::MustBlock { returns } => {
                format!("{who} blocked forever, but run serially it returns {returns}")
            }
        }
    }

    /// Every operation that cannot come after the longest linearizable prefix (by its index in
    /// [`History::operations`](fgvt_tree::History::operations)), with why, in words.
    pub fn obstacle_notes(&self) -> Vec<(usize, String)> {
        let after = self.prefix.last().map(|step| &step.op);
        self.obstacles
            .iter()
            .map(|o| (o.op.op, self.describe(&o.op, &o.reason, after)))
            .collect()
    }

    /// "`T1 read()` returned (1, 2), but the spec returns (1, 1) after T0 write(0, 2)".
    fn describe(&self, op: &OpRef, reason: &Reason, after: Option<&OpRef>) -> String {
        let place = match after {
            Some(prev) => format!("after {} {}", Lane(prev.thread), prev.call),
            None => "in the initial state".to_owned(),
        };
        let who = format!("{} {}", Lane(op.thread), op.call);
        match reason {
            Reason::WrongResult { expected } => format!("{who} returned {}, but the spec returns {expected} {place}", op.observed),
            Reason::Blocks if op.observed == Observed::Pending => format!("{who} (pending) cannot take effect: the spec blocks {place}"),
            Reason::Blocks => format!("{who} returned {}, but the spec blocks {place}", op.observed),
            Reason::MustBlock { returns } => format!("{who} is pending in a stuck history, so it must block, but the spec does not block {place}: it returns {returns}"),
            Reason::DeadEnd { returns } => format!("{who} returns {returns} {place} as observed, but no linearization of the remaining operations follows"),
        }
    }
}

impl fmt::Display for Observed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Observed::Returned(v) => write!(f, "{v}"),
            Observed::Unknown => f.write_str("?"),
            Observed::Pending => f.write_str("pending"),
        }
    }
}

impl fmt::Display for OpRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {} → {}", Lane(self.thread), self.call, self.observed)
    }
}

impl fmt::Display for Explanation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("not linearizable")?;
        if let Some(key) = &self.partition {
            write!(f, " (in the sub-history of key {key})")?;
        }
        if self.stuck {
            f.write_str(" (stuck history: pending operations must block)")?;
        }
        writeln!(f)?;
        writeln!(
            f,
            "longest linearizable prefix ({} of {} operations):",
            self.prefix.len(),
            self.operations.len()
        )?;
        if self.prefix.is_empty() {
            writeln!(f, "  (none: no operation can come first)")?;
        }
        let hidden = self.prefix.len().saturating_sub(SHOWN_PREFIX_STEPS);
        if hidden > 0 {
            writeln!(
                f,
                "  ... ({hidden} earlier steps; the JSON report lists them all)"
            )?;
        }
        for (n, step) in self.prefix.iter().enumerate().skip(hidden) {
            write!(
                f,
                "  {:>2}. {} {} → {}",
                n + 1,
                Lane(step.op.thread),
                step.op.call,
                step.returns
            )?;
            match &step.op.observed {
                Observed::Pending => f.write_str(" (pending: takes effect here)")?,
                Observed::Unknown => f.write_str(" (result unknown)")?,
                Observed::Returned(observed) if *observed != step.returns => {
                    write!(f, " (observed {observed})")?
                }
                Observed::Returned(_) => {}
            }
            writeln!(f)?;
        }
        if !self.obstacles.is_empty() {
            writeln!(f, "no operation can come next:")?;
            for obstacle in &self.obstacles {
                writeln!(
                    f,
                    "  - {}",
                    self.describe(
                        &obstacle.op,
                        &obstacle.reason,
                        self.prefix.last().map(|s| &s.op)
                    )
                )?;
            }
        }
        if let Some(orders) = &self.orders {
            writeln!(f, "every order that respects real time ({}):", orders.len())?;
            for (n, attempt) in orders.iter().enumerate() {
                write!(f, "  {:>3}.", n + 1)?;
                let failed_at = attempt.failure.as_ref().map(|failure| failure.position);
                for (pos, o) in attempt
                    .order
                    .iter()
                    .filter_map(|&op| self.operation(op))
                    .enumerate()
                {
                    write!(f, "  {}", o.call)?;
                    if let Observed::Returned(v) = &o.observed {
                        if !v.is_unit() {
                            write!(f, " → {v}")?;
                        }
                    }
                    if failed_at == Some(pos) {
                        f.write_str(" ✗")?;
                        break;
                    }
                }
                match &attempt.failure {
                    Some(failure) => {
                        let prev = failure
                            .position
                            .checked_sub(1)
                            .and_then(|p| attempt.order.get(p))
                            .and_then(|&o| self.operation(o));
                        if let Some(op) = self.operation(failure.op) {
                            writeln!(f, "\n         {}", self.describe(op, &failure.reason, prev))?;
                        }
                    }
                    None => writeln!(f, "  (accepted)")?,
                }
            }
        } else if self.too_many_orders {
            writeln!(f, "(too many orders respect real time to list them all)")?;
        }
        Ok(())
    }
}

/// A thread as JSON: its number, 0 for the lanes of the serial parts (which run on thread 0).
fn thread_number<S: Serializer>(thread: &ThreadId, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_u64(if Lane(*thread).is_serial() {
        0
    } else {
        *thread as u64
    })
}

fn as_string<T: fmt::Display, S: Serializer>(value: &T, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.collect_str(value)
}

fn opt_as_string<T: fmt::Display, S: Serializer>(
    value: &Option<T>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    match value {
        Some(v) => serializer.collect_str(v),
        None => serializer.serialize_none(),
    }
}
