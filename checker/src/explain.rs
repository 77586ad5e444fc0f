//! Why a history is not linearizable, in terms a person can follow.
//!
//! An [`Explanation`] has
//! * the **longest linearizable prefix**: the largest set of operations the search managed to
//!   linearize, in that order, with what each returns (taken on while a completed operation
//!   can still come next where the search cut its own work short);
//! * the **obstacles** at that point: every operation that could come next and why it cannot
//!   (the spec returns something else, the spec blocks but the operation returned, or, in a stuck
//!   history, a pending operation that the spec would not block), the most telling first;
//! * for small histories (at most [`MAX_ORDERS`] real-time-respecting orders and at most
//!   [`MAX_ORDER_OPERATIONS`] operations), **every candidate
//!   order** with the first operation the spec contradicts, like Fig. 5 of the FGVT paper.
//!
//! It serializes to JSON (values and calls as the strings they display as) and displays as text
//! that says each thing once: the verdict line ([`Explanation::details`] leaves it out for a
//! place that said it), each order up to where it fails (orders that differ only after that
//! point are one line, with how many share it), counts in words that agree.

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
    /// Every operation that could come after the prefix, and why it cannot: a contradicted
    /// result first, an operation that only leads nowhere last.
    pub obstacles: Vec<Obstacle>,
    /// Every real-time-respecting order of the operations with its first contradiction, when
    /// there are at most [`MAX_ORDERS`] of them (and explanations were asked for).
    pub orders: Option<Vec<OrderAttempt>>,
    /// Whether `orders` is absent because there are more than [`MAX_ORDERS`] (or the history
    /// has more than [`MAX_ORDER_OPERATIONS`] operations).
    pub too_many_orders: bool,
    /// Whether the operations are ordered by happens-before (a weak-memory run, see
    /// [`fgvt_tree::CoarseEvent::Call`]) rather than by real time.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub happens_before: bool,
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
    let mut placed = vec![false; part.len()];
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
        placed[i] = true;
        state = next;
    }
    if full {
        state = extend(spec, part, &mut placed, &mut prefix, state)?;
    }
    let mut explanation = Explanation {
        partition,
        stuck,
        operations,
        prefix,
        obstacles: Vec::new(),
        orders: None,
        too_many_orders: false,
        happens_before: part.iter().any(|op| op.seen.is_some()),
    };
    if !full {
        return Ok(explanation);
    }
    let all_returned_placed = (0..part.len()).all(|i| placed[i] || part[i].is_pending());
    for (i, op) in part.iter().enumerate() {
        let candidate = if all_returned_placed {
            // Every completed operation is placed: what is left are the pending operations of
            // a stuck history, which must block.
            !placed[i]
        } else {
            may_come_next(part, &placed, i) && !(stuck && op.is_pending())
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
    // The most telling first: a contradicted result before an operation that leads nowhere.
    explanation.obstacles.sort_by_key(rank);
    explanation.orders = every_order(spec, part, stuck)?;
    explanation.too_many_orders = explanation.orders.is_none();
    Ok(explanation)
}

/// Extends `prefix` (whose operations are `placed`, ending in `state`) while a completed
/// operation can come next with its observed result, the one that returned first each time;
/// the state at the end.
///
/// The search stops short of the longest prefix where it proves early that a configuration
/// cannot succeed (a read whose result can no longer come, a read forced first): its deepest
/// stack is then a prefix that could go on. An explanation that stopped there would blame an
/// operation that is fine, and say that none can come first when one can.
fn extend<S: Spec>(
    spec: &S,
    part: &[OpView<'_>],
    placed: &mut [bool],
    prefix: &mut Vec<PrefixStep>,
    mut state: S::State,
) -> Result<S::State, CheckError> {
    'next: loop {
        let mut candidates: Vec<usize> = (0..part.len())
            .filter(|&i| !part[i].is_pending() && may_come_next(part, placed, i))
            .collect();
        candidates.sort_by_key(|&i| part[i].ret_pos);
        for i in candidates {
            if let Apply::Returns { value, state: next } = apply(spec, &state, &part[i])? {
                if part[i].accepts(spec, &value) {
                    placed[i] = true;
                    prefix.push(PrefixStep {
                        op: op_ref(&part[i]),
                        returns: value,
                    });
                    state = next;
                    continue 'next;
                }
            }
        }
        return Ok(state);
    }
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

/// Whether operation `i` of `part` may come next after the `placed` ones: it is not placed,
/// and no unplaced operation precedes it (returned before it was called or, under weak memory,
/// before it in happens-before: [`OpView::precedes`]).
fn may_come_next(part: &[OpView<'_>], placed: &[bool], i: usize) -> bool {
    !placed[i] && (0..part.len()).all(|j| placed[j] || j == i || !part[j].precedes(&part[i]))
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
    for i in 0..part.len() {
        if placed[i] || (stuck && part[i].is_pending()) {
            continue;
        }
        if may_come_next(part, placed, i) {
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

    /// A one-line summary: the most telling obstacle (as in [`Self::headline`]), or the size
    /// of the prefix.
    pub fn summary(&self) -> String {
        match self.telling_obstacle() {
            Some(obstacle) => self.describe(
                &obstacle.op,
                &obstacle.reason,
                self.prefix.last().map(|s| &s.op),
            ),
            None => format!(
                "only {} of {} can be linearized",
                self.prefix.len(),
                count(self.operations.len(), "operation")
            ),
        }
    }

    /// What went wrong, in one sentence for the top of a bug report: "T1 read() returned
    /// (1, 2), which no serial order of the operations gives". The obstacle it names is the
    /// most telling one: a result the spec contradicts before an operation that only leads
    /// nowhere.
    pub fn headline(&self) -> String {
        let Some(obstacle) = self.telling_obstacle() else {
            return self.summary();
        };
        let op = &obstacle.op;
        let who = format!("{} {}", Lane(op.thread), op.call);
        match (&obstacle.reason, &op.observed) {
            // A pending operation returned nothing: say what happened instead.
            (Reason::WrongResult { .. } | Reason::DeadEnd { .. }, Observed::Pending) => format!(
                "{who} did not return (pending), and no serial order of the operations, with or without it, gives the results observed"
            ),
            (Reason::WrongResult { .. } | Reason::DeadEnd { .. }, observed) => format!(
                "{who} returned {observed}, which no serial order of the operations gives"
            ),
            (Reason::Blocks, Observed::Pending) => {
                format!("{who} (pending) can take effect in no serial order: the spec blocks it")
            }
            (Reason::Blocks, observed) => format!(
                "{who} returned {observed}, but in every serial order it would block"
            ),
            (Reason::MustBlock { returns }, _) => {
                format!("{who} blocked forever, but run serially it returns {returns}")
            }
        }
    }

    /// The operation [`Self::headline`] names (by its index in
    /// [`History::operations`](fgvt_tree::History::operations)): the one that cannot be placed
    /// after the longest linearizable prefix and says most about why.
    pub fn culprit(&self) -> Option<usize> {
        self.telling_obstacle().map(|o| o.op.op)
    }

    /// The obstacle that says most ([`rank`]); the first of its kind.
    fn telling_obstacle(&self) -> Option<&Obstacle> {
        self.obstacles.iter().min_by_key(|o| rank(o))
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
            Reason::DeadEnd { .. } if op.observed == Observed::Pending => format!("{who} did not return (pending); it could take effect {place}, but no linearization of the remaining operations follows"),
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

impl Explanation {
    /// The explanation without its first line ("not linearizable", and which sub-history):
    /// for a place that has already said so, such as under a "why it is not linearizable"
    /// heading. It serializes as the whole explanation does.
    pub fn details(&self) -> Details<'_> {
        Details(self)
    }

    /// The text: the verdict line when `verdict`, then the prefix, the obstacles and the
    /// orders.
    fn write_text(&self, f: &mut fmt::Formatter<'_>, verdict: bool) -> fmt::Result {
        let mut notes = Vec::new();
        if let Some(key) = &self.partition {
            notes.push(format!("in the sub-history of key {key}"));
        }
        if self.stuck {
            notes.push("stuck history: pending operations must block".to_owned());
        }
        if verdict {
            f.write_str("not linearizable")?;
            for note in &notes {
                write!(f, " ({note})")?;
            }
            writeln!(f)?;
        } else if !notes.is_empty() {
            writeln!(f, "{}", notes.join("; "))?;
        }
        writeln!(
            f,
            "longest linearizable prefix ({} of {}):",
            self.prefix.len(),
            count(self.operations.len(), "operation")
        )?;
        if self.prefix.is_empty() {
            writeln!(f, "  (none: no operation can come first)")?;
        }
        // A note that hides a single step would take the line the step needs.
        let hidden = match self.prefix.len().saturating_sub(SHOWN_PREFIX_STEPS) {
            1 => 0,
            n => n,
        };
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
            self.write_orders(f, orders)?;
        } else if self.too_many_orders {
            writeln!(
                f,
                "(too many orders respect {} to list them all)",
                self.order_name()
            )?;
        }
        Ok(())
    }

    /// What the orders respect: `real time`, or under weak memory `happens-before`.
    fn order_name(&self) -> &'static str {
        if self.happens_before {
            "happens-before"
        } else {
            "real time"
        }
    }

    /// The orders, each up to where the spec first contradicts it. Orders that differ only
    /// after that point read the same: each such beginning is listed once, with how many
    /// orders share it.
    fn write_orders(&self, f: &mut fmt::Formatter<'_>, orders: &[OrderAttempt]) -> fmt::Result {
        // (the order up to its failure, why it fails), in the order first met, with a count.
        let mut shown: Vec<((String, Option<String>), usize)> = Vec::new();
        for attempt in orders {
            let line = self.order_text(attempt);
            match shown.iter_mut().find(|(seen, _)| *seen == line) {
                Some((_, n)) => *n += 1,
                None => shown.push((line, 1)),
            }
        }
        if shown.len() == orders.len() {
            writeln!(
                f,
                "every order that respects {} ({}):",
                self.order_name(),
                orders.len()
            )?;
        } else {
            writeln!(
                f,
                "every order that respects {} ({}; {} up to where the spec first contradicts them):",
                self.order_name(),
                orders.len(),
                count(shown.len(), "distinct beginning")
            )?;
        }
        for (n, ((line, why), times)) in shown.iter().enumerate() {
            write!(f, "  {:>3}.{line}", n + 1)?;
            if *times > 1 {
                write!(f, "  ({times} orders start this way)")?;
            }
            match why {
                Some(why) => writeln!(f, "\n         {why}")?,
                None => writeln!(f, "  (accepted)")?,
            }
        }
        Ok(())
    }

    /// One order as the text shows it, up to where the spec first contradicts it (`✗`), and
    /// why it fails there (`None`: the spec accepts it).
    fn order_text(&self, attempt: &OrderAttempt) -> (String, Option<String>) {
        use fmt::Write as _;
        let mut line = String::new();
        let failed_at = attempt.failure.as_ref().map(|failure| failure.position);
        for (pos, o) in attempt
            .order
            .iter()
            .filter_map(|&op| self.operation(op))
            .enumerate()
        {
            // The lane tells apart orders that differ only in which thread went first.
            let _ = write!(line, "  {} {}", Lane(o.thread), o.call);
            if let Observed::Returned(v) = &o.observed {
                if !v.is_unit() {
                    let _ = write!(line, " → {v}");
                }
            }
            if failed_at == Some(pos) {
                line.push_str(" ✗");
                break;
            }
        }
        let why = attempt.failure.as_ref().map(|failure| {
            let prev = failure
                .position
                .checked_sub(1)
                .and_then(|p| attempt.order.get(p))
                .and_then(|&o| self.operation(o));
            self.operation(failure.op)
                .map(|op| self.describe(op, &failure.reason, prev))
                .unwrap_or_default()
        });
        (line, why)
    }
}

impl fmt::Display for Explanation {
    /// The whole explanation, opening with "not linearizable".
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.write_text(f, true)
    }
}

/// An [`Explanation`] without its verdict line ([`Explanation::details`]).
#[derive(Clone, Copy, Debug)]
pub struct Details<'e>(&'e Explanation);

impl fmt::Display for Details<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.write_text(f, false)
    }
}

impl Serialize for Details<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(serializer)
    }
}

/// How telling an obstacle is, most first: a result the spec contradicts, an operation the
/// spec blocks, one that leads nowhere (a completed one before a pending one).
fn rank(o: &Obstacle) -> u8 {
    match o.reason {
        Reason::WrongResult { .. } => 0,
        Reason::Blocks | Reason::MustBlock { .. } => 1,
        Reason::DeadEnd { .. } if o.op.observed != Observed::Pending => 2,
        Reason::DeadEnd { .. } => 3,
    }
}

/// "1 operation", "2 operations".
fn count(n: usize, noun: &str) -> String {
    format!("{n} {noun}{}", if n == 1 { "" } else { "s" })
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
