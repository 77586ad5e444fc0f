//! The operations of a history as the checker sees them ([`OpView`]), and the errors they
//! raise ([`CheckError`]). Both the search and the explanations work on these, so they live
//! apart from either.

use fgvt_tree::history::MalformedHistory;
use fgvt_tree::{Call, Operation, ThreadId, Value};

use crate::spec::Spec;

/// A history the checker cannot judge.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CheckError {
    /// Calls and returns do not pair up.
    #[error(transparent)]
    Malformed(#[from] MalformedHistory),
    /// The spec does not know an operation of the history ([`Apply::Invalid`](crate::spec::Apply::Invalid)).
    #[error("operation {op} (`{call}` by thread {thread}): {message}")]
    Invalid {
        /// Index of the operation in [`History::operations`](fgvt_tree::History::operations).
        op: usize,
        /// Its thread.
        thread: ThreadId,
        /// The call.
        call: Call,
        /// The spec's message.
        message: String,
    },
}

impl CheckError {
    pub(crate) fn invalid(op: &OpView<'_>, message: String) -> Self {
        CheckError::Invalid {
            op: op.index,
            thread: op.thread,
            call: op.call.clone(),
            message,
        }
    }
}

/// An operation as the search sees it: borrowed from the history's operations.
#[derive(Clone, Copy, Debug)]
pub(crate) struct OpView<'h> {
    /// Index in [`History::operations`].
    pub index: usize,
    pub thread: ThreadId,
    pub call: &'h Call,
    /// Position of the call event.
    pub call_pos: usize,
    /// Position of the return event; `None` when pending.
    pub ret_pos: Option<usize>,
    /// The observed result; `None` when unknown or pending (anything is accepted).
    pub result: Option<&'h Value>,
    /// Its place among its thread's operations.
    pub nth: usize,
    /// What its call happens after, under weak memory (see [`fgvt_tree::CoarseEvent::Call`]).
    pub seen: Option<&'h [u32]>,
}

impl<'h> OpView<'h> {
    pub(crate) fn new(index: usize, op: &'h Operation) -> Self {
        OpView {
            index,
            thread: op.thread,
            call: &op.call,
            call_pos: op.call_index,
            ret_pos: op.ret.as_ref().map(|r| r.index),
            result: op.ret.as_ref().and_then(|r| r.value.as_ref()),
            nth: op.nth,
            seen: op.seen.as_deref(),
        }
    }

    /// Whether this operation must take effect before `other` (see
    /// [`fgvt_tree::Operation::precedes`]): by real time, or under weak memory by
    /// happens-before.
    pub(crate) fn precedes(&self, other: &OpView<'_>) -> bool {
        fgvt_tree::precedes(
            (self.thread, self.nth, self.ret_pos),
            (other.call_pos, other.seen),
        )
    }

    /// Whether `value`, the spec's result, agrees with the observed one (an unknown or pending
    /// result accepts anything).
    pub(crate) fn accepts<S: Spec>(&self, spec: &S, value: &Value) -> bool {
        match self.result {
            None => true,
            Some(observed) => spec.matches(self.call, value, observed),
        }
    }

    /// Whether the operation has no return.
    pub(crate) fn is_pending(&self) -> bool {
        self.ret_pos.is_none()
    }
}
