//! Sequential specifications: what a linearizable history is checked against.

use std::hash::Hash;

use fgvt_tree::{Call, ThreadId, Value};

/// The result of applying one operation to a spec state.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Apply<S> {
    /// The operation returns `value`, leaving `state`.
    Returns {
        /// What the operation returns.
        value: Value,
        /// The state afterwards.
        state: S,
    },
    /// The operation blocks in this state (a `take` on an empty blocking queue, a lock held
    /// by another thread in a synthesized spec). A blocked operation never returns.
    Blocks,
    /// The spec does not know this operation or its arguments; the message says why.
    Invalid(String),
}

/// An executable, deterministic sequential specification.
///
/// `apply` must be a function of its arguments: the checker memoizes on spec states.
/// The thread is passed because a spec synthesized from the object's own serial runs can depend
/// on it (a lock held by the thread that took it); built-in specs ignore it.
pub trait Spec {
    /// A state of the sequential object.
    type State: Clone + Eq + Hash;

    /// The state before any operation.
    fn initial(&self) -> Self::State;

    /// Applies `call`, performed by `thread`, to `state`.
    fn apply(&self, state: &Self::State, thread: ThreadId, call: &Call) -> Apply<Self::State>;

    /// The partition an operation belongs to, when the spec is P-compositional (a key for a
    /// set or map, an index for an array); `None` when the spec declares no partition. If any
    /// operation of a history has no key, the history is checked whole.
    fn partition(&self, _call: &Call) -> Option<Value> {
        None
    }

    /// Whether `call`, observed to return `result` (`None`: unknown or pending), leaves the
    /// state as it is in every state whose result [`Spec::matches`] it: a read, a `contains`, a
    /// compare-and-set that failed.
    ///
    /// The checker linearizes such an operation as soon as it may take effect in a state that
    /// gives its result, and does not try the orders that place it later: those reach the same
    /// states (a partial-order reduction). `false`, the default, is always correct; `true` for
    /// an operation that can change the state makes verdicts wrong.
    fn is_read_only(&self, _call: &Call, _result: Option<&Value>) -> bool {
        false
    }

    /// Whether some of the operations `writers` (each with its observed result; any subset, in
    /// any order) could bring `state` to one in which the read-only `call` returns `result`.
    ///
    /// The checker asks this of the next reads to return, with the operations that may take
    /// effect before each: `false` tells it the branch is dead before it tries every order of
    /// those operations. Asked only of calls for which [`Spec::checks_reach`] is `true`. An
    /// over-approximation: `true`, the default, is always correct; `false` where the read could
    /// still return `result` makes verdicts wrong.
    fn may_reach(
        &self,
        _state: &Self::State,
        _call: &Call,
        _result: &Value,
        _writers: &mut dyn Iterator<Item = (&Call, Option<&Value>)>,
    ) -> bool {
        true
    }

    /// Whether [`Spec::may_reach`] can say no for the read `call`: the search looks ahead only
    /// for such reads (looking costs time on every configuration). `false` by default.
    fn checks_reach(&self, _call: &Call) -> bool {
        false
    }

    /// A short name for reports: `register`, `self`, `SetSpec`.
    fn name(&self) -> String;

    /// Whether an `observed` result of `call` agrees with the result `expected` by the spec.
    ///
    /// Exact equality by default. A spec overrides it to accept several spellings of one
    /// result, e.g. a built-in queue whose `offer` returns `true` also accepts `()` from a model
    /// written to return nothing. Must be a function of its arguments (the checker memoizes it).
    fn matches(&self, _call: &Call, expected: &Value, observed: &Value) -> bool {
        expected == observed
    }
}

/// A spec started from another initial state: a register that holds 0, a queue that already
/// has two elements. Everything else is the inner spec's.
#[derive(Clone, Debug)]
pub struct Initialized<S: Spec> {
    spec: S,
    initial: S::State,
}

impl<S: Spec> Initialized<S> {
    /// `spec`, starting from `initial` instead of its own initial state.
    pub fn new(spec: S, initial: S::State) -> Self {
        Initialized { spec, initial }
    }
}

impl<S: Spec> Spec for Initialized<S> {
    type State = S::State;

    fn initial(&self) -> S::State {
        self.initial.clone()
    }

    fn apply(&self, state: &S::State, thread: ThreadId, call: &Call) -> Apply<S::State> {
        self.spec.apply(state, thread, call)
    }

    fn partition(&self, call: &Call) -> Option<Value> {
        self.spec.partition(call)
    }

    fn is_read_only(&self, call: &Call, result: Option<&Value>) -> bool {
        self.spec.is_read_only(call, result)
    }

    fn may_reach(
        &self,
        state: &S::State,
        call: &Call,
        result: &Value,
        writers: &mut dyn Iterator<Item = (&Call, Option<&Value>)>,
    ) -> bool {
        self.spec.may_reach(state, call, result, writers)
    }

    fn checks_reach(&self, call: &Call) -> bool {
        self.spec.checks_reach(call)
    }

    fn name(&self) -> String {
        self.spec.name()
    }

    fn matches(&self, call: &Call, expected: &Value, observed: &Value) -> bool {
        self.spec.matches(call, expected, observed)
    }
}
