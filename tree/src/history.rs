//! Coarse histories: the calls and returns of operations, in real-time order.
//!
//! A history is what the linearizability checker judges. The interleaving tree gives one to
//! every leaf; `fgvt check-history` reads them from recorded files.

use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::value::Value;

/// Which thread (or client process) performed an operation.
pub type ThreadId = usize;

/// The lane of a test's serial `init` operations in a history. They run before any thread
/// starts, so they belong to no thread of the test: reports call the lane `init`.
pub const INIT_LANE: ThreadId = usize::MAX - 1;

/// The lane of a test's serial `final` operations in a history (after every thread is done):
/// reports call it `final`.
pub const FINAL_LANE: ThreadId = usize::MAX;

/// A thread of a history as people read it: `T0`, `T1`, …, or `init` / `final` for the lanes
/// of a test's serial parts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Lane(pub ThreadId);

impl Lane {
    /// Whether this is the lane of a serial part (`init` or `final`) rather than a thread.
    pub fn is_serial(self) -> bool {
        matches!(self.0, INIT_LANE | FINAL_LANE)
    }
}

impl fmt::Display for Lane {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            INIT_LANE => f.write_str("init"),
            FINAL_LANE => f.write_str("final"),
            t => write!(f, "T{t}"),
        }
    }
}

/// An invocation: an operation name with its arguments, e.g. `write(0, 2)`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Call {
    /// The operation's name as written in the test (`write`, `poll`, ...).
    pub op: String,
    /// The arguments, in order.
    pub args: Vec<Value>,
}

impl Call {
    /// A call of `op` with `args`.
    pub fn new(op: impl Into<String>, args: Vec<Value>) -> Self {
        Call {
            op: op.into(),
            args,
        }
    }
}

impl fmt::Display for Call {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}(", self.op)?;
        for (i, a) in self.args.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{a}")?;
        }
        f.write_str(")")
    }
}

/// One coarse event of a history.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum CoarseEvent {
    /// Thread `thread` invokes `call`. A thread has at most one operation pending at a time.
    Call {
        /// The invoking thread.
        thread: ThreadId,
        /// The operation and its arguments, shared: a history repeats a test's few calls in
        /// every one of its runs, and a tree holds many histories.
        call: Arc<Call>,
        /// Under weak memory, what this call happens after: for each test thread `u`, how many
        /// of `u`'s operations had returned, as far as happens-before tells this call (a
        /// vector clock). An operation of thread `u` then precedes this one exactly when its
        /// place among `u`'s operations is below `seen[u]`: real time means nothing between
        /// threads that never synchronized. `None` (every recorded history, every
        /// sequentially consistent run): an operation precedes another when it returned
        /// before the other was called.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        seen: Option<Clock>,
    },
    /// The pending operation of `thread` returns `value`; `None` means the result is unknown
    /// (a recorded read that timed out): any result is accepted.
    Return {
        /// The returning thread.
        thread: ThreadId,
        /// The result, or `None` when it is unknown.
        value: Option<Value>,
    },
}

impl CoarseEvent {
    /// The thread of this event.
    pub fn thread(&self) -> ThreadId {
        match self {
            CoarseEvent::Call { thread, .. } | CoarseEvent::Return { thread, .. } => *thread,
        }
    }
}

/// A vector clock of operations (see [`CoarseEvent::Call`]'s `seen`).
pub type Clock = std::sync::Arc<[u32]>;

/// A history: coarse events in real-time order.
///
/// Operations whose call has no matching return are *pending*: they may or may not have taken
/// effect. A `stuck` history ended because every remaining operation blocks; under Line-Up's
/// generalized linearizability each of its pending operations must be allowed to block.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct History {
    /// The events in real-time order.
    pub events: Vec<CoarseEvent>,
    /// Whether the execution ended stuck (deadlock or livelock) rather than complete.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub stuck: bool,
}

impl History {
    /// An empty, complete history.
    pub fn new() -> Self {
        History::default()
    }

    /// What its operations returned, by thread and, within a thread, in the order they
    /// returned: what a verdict that reads no order between threads compares.
    pub fn returns_by_thread(&self) -> Vec<(ThreadId, Option<&Value>)> {
        let mut returns: Vec<(ThreadId, Option<&Value>)> = (self.events.iter())
            .filter_map(|e| match e {
                CoarseEvent::Return { thread, value } => Some((*thread, value.as_ref())),
                CoarseEvent::Call { .. } => None,
            })
            .collect();
        // Stable: each thread's returns stay in its order.
        returns.sort_by_key(|(thread, _)| *thread);
        returns
    }

    /// The history of a run that took `steps` from the start and ends where this history's
    /// run ended: this history's serial parts (the `init` and final lanes) and what its end
    /// adds (the calls of threads blocked before their first step), and the test threads'
    /// calls and returns in the order `steps` make them.
    ///
    /// A tree's leaf keeps the history of the first path that reached it; another path to it
    /// (states are shared) may interleave the threads' operations otherwise, alike as far as
    /// the verdict goes, each thread's the same. A report shows each run its own.
    pub fn retraced<'a>(&self, steps: impl IntoIterator<Item = &'a crate::Event>) -> History {
        let run: Vec<CoarseEvent> = (steps.into_iter())
            .flat_map(|step| step.coarse(|call| Arc::new(call.clone())))
            .flatten()
            .collect();
        // Per thread, how many of its events the run made: the leaf's first that many.
        let mut made: std::collections::HashMap<ThreadId, usize> = Default::default();
        for event in &run {
            *made.entry(event.thread()).or_default() += 1;
        }
        let lane = |lane: ThreadId| (self.events.iter()).filter(move |e| e.thread() == lane);
        let after_run = (self.events.iter())
            .filter(|e| e.thread() != INIT_LANE && e.thread() != FINAL_LANE)
            .filter(|e| match made.get_mut(&e.thread()) {
                Some(left @ 1..) => {
                    *left -= 1;
                    false
                }
                _ => true,
            });
        let mut events: Vec<CoarseEvent> = lane(INIT_LANE).cloned().collect();
        events.extend(run);
        events.extend(after_run.cloned());
        events.extend(lane(FINAL_LANE).cloned());
        History {
            events,
            stuck: self.stuck,
        }
    }

    /// Appends a call of `call` by `thread`.
    pub fn call(&mut self, thread: ThreadId, call: impl Into<Arc<Call>>) {
        self.events.push(CoarseEvent::Call {
            thread,
            call: call.into(),
            seen: None,
        });
    }

    /// Appends the return of `thread`'s pending operation with `value`.
    pub fn ret(&mut self, thread: ThreadId, value: Value) {
        self.events.push(CoarseEvent::Return {
            thread,
            value: Some(value),
        });
    }

    /// Pairs calls with returns: the operations of this history, in call order.
    ///
    /// A return with no pending call on its thread, or a second call while one is pending,
    /// is a malformed history and yields an error naming the event's index.
    pub fn operations(&self) -> Result<Vec<Operation>, MalformedHistory> {
        let mut ops: Vec<Operation> = Vec::new();
        let mut pending: std::collections::HashMap<ThreadId, usize> = Default::default();
        let mut per_thread: std::collections::HashMap<ThreadId, usize> = Default::default();
        for (index, event) in self.events.iter().enumerate() {
            match event {
                CoarseEvent::Call { thread, call, seen } => {
                    if pending.contains_key(thread) {
                        return Err(MalformedHistory { index, reason: format!("thread {thread} calls {call} while its previous operation is still pending") });
                    }
                    pending.insert(*thread, ops.len());
                    let nth = per_thread.entry(*thread).or_default();
                    ops.push(Operation {
                        thread: *thread,
                        call: Call::clone(call),
                        call_index: index,
                        ret: None,
                        nth: *nth,
                        seen: seen.clone(),
                    });
                    *nth += 1;
                }
                CoarseEvent::Return { thread, value } => {
                    let Some(op) = pending.remove(thread) else {
                        return Err(MalformedHistory {
                            index,
                            reason: format!("thread {thread} returns with no pending call"),
                        });
                    };
                    ops[op].ret = Some(Return {
                        index,
                        value: value.clone(),
                    });
                }
            }
        }
        Ok(ops)
    }
}

/// A return event, as paired with its call by [`History::operations`].
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Return {
    /// Position of the return event in the history.
    pub index: usize,
    /// The result; `None` when unknown.
    pub value: Option<Value>,
}

/// One operation of a history: its call and, unless pending, its return.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Operation {
    /// The thread that performed it.
    pub thread: ThreadId,
    /// What was called.
    pub call: Call,
    /// Position of the call event in the history.
    pub call_index: usize,
    /// The return, or `None` for a pending operation.
    pub ret: Option<Return>,
    /// Its place among its thread's operations (0 for the first).
    pub nth: usize,
    /// What its call happens after, under weak memory (see [`CoarseEvent::Call`]).
    pub seen: Option<Clock>,
}

impl Operation {
    /// Whether this operation must take effect before `other`: it returned, and `other`'s
    /// call knows it (see [`CoarseEvent::Call`]'s `seen`), or, where `other` has no clock or
    /// this operation is of no test thread it counts, returned before `other` was called.
    pub fn precedes(&self, other: &Operation) -> bool {
        precedes(
            (self.thread, self.nth, self.ret.as_ref().map(|r| r.index)),
            (other.call_index, other.seen.as_deref()),
        )
    }
}

/// Whether an operation of `thread`, `nth` of its thread, returned at `ret` (`None`: pending)
/// precedes one called at `call` with clock `seen`: the rule of [`Operation::precedes`], for
/// whoever keeps operations in another shape.
pub fn precedes(
    (thread, nth, ret): (ThreadId, usize, Option<usize>),
    (call, seen): (usize, Option<&[u32]>),
) -> bool {
    let Some(ret) = ret else {
        return false;
    };
    match seen.and_then(|clock| clock.get(thread)) {
        Some(&count) => nth < count as usize,
        None => ret < call,
    }
}

/// A history whose calls and returns do not pair up.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("malformed history at event {index}: {reason}")]
pub struct MalformedHistory {
    /// Position of the offending event.
    pub index: usize,
    /// What is wrong with it.
    pub reason: String,
}

impl fmt::Display for History {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, e) in self.events.iter().enumerate() {
            if i > 0 {
                f.write_str(" ")?;
            }
            match e {
                CoarseEvent::Call { thread, call, .. } => write!(f, "{}:{call}", Lane(*thread))?,
                CoarseEvent::Return {
                    thread,
                    value: Some(v),
                } => write!(f, "{}:ret {v}", Lane(*thread))?,
                CoarseEvent::Return {
                    thread,
                    value: None,
                } => write!(f, "{}:ret ?", Lane(*thread))?,
            }
        }
        if self.stuck {
            f.write_str(" (stuck)")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A run's own history from a leaf's: the serial lanes and the calls of threads blocked
    /// before their first step stay where the leaf has them; the threads' calls and returns
    /// come in the run's order.
    #[test]
    fn a_retraced_history_takes_the_runs_order_and_keeps_the_rest() {
        let step = |thread: ThreadId, call: Option<&str>, ret: Option<i64>| {
            let mut event = crate::Event::local(thread, String::new(), Default::default());
            event.call = call.map(|c| Call::new(c, vec![]));
            event.ret = ret.map(Value::Int);
            event
        };
        // The leaf's first path: T0 then T1; T2 blocked before its first step; a final read.
        let mut leaf = History::new();
        leaf.call(INIT_LANE, Call::new("init", vec![]));
        leaf.ret(INIT_LANE, Value::Unit);
        leaf.call(0, Call::new("a", vec![]));
        leaf.ret(0, Value::Int(1));
        leaf.call(1, Call::new("b", vec![]));
        leaf.ret(1, Value::Int(2));
        leaf.call(2, Call::new("c", vec![]));
        leaf.call(FINAL_LANE, Call::new("get", vec![]));
        leaf.ret(FINAL_LANE, Value::Int(3));
        // Another path to it: T1's operation first, T0's call and return in one step.
        let run = [
            step(1, Some("b"), None),
            step(1, None, Some(2)),
            step(0, Some("a"), Some(1)),
        ];
        let retraced = leaf.retraced(&run);
        assert_eq!(
            retraced.to_string(),
            "init:init() init:ret () T1:b() T1:ret 2 T0:a() T0:ret 1 T2:c() final:get() \
             final:ret 3"
        );
        // The first path's own steps give the leaf's history back.
        let first = [step(0, Some("a"), Some(1)), step(1, Some("b"), Some(2))];
        assert_eq!(leaf.retraced(&first), leaf);
    }

    #[test]
    fn pairs_calls_with_returns_and_keeps_pending_ones() {
        let mut h = History::new();
        h.call(0, Call::new("write", vec![Value::Int(1)]));
        h.call(1, Call::new("read", vec![]));
        h.ret(0, Value::Unit);
        let ops = h.operations().unwrap();
        assert_eq!(ops.len(), 2);
        assert_eq!(ops[0].ret.as_ref().unwrap().index, 2);
        assert!(ops[1].ret.is_none());
    }

    #[test]
    fn rejects_a_return_without_a_call() {
        let mut h = History::new();
        h.ret(3, Value::Unit);
        assert_eq!(h.operations().unwrap_err().index, 0);
    }
}
