//! Specs over sequences: queue, stack, deque.

use std::collections::VecDeque;

use fgvt_tree::Value;

use super::{checked, ret, OpTable};
use crate::spec::Apply;

/// The elements of a built-in queue, head first.
pub type QueueState = VecDeque<Value>;

/// The elements of a built-in stack, bottom first.
pub type StackState = Vec<Value>;

/// The elements of a built-in deque, left first.
pub type DequeState = VecDeque<Value>;

/// Whether `op` inserts an element (its observed result may be `()` or `true`).
pub(super) fn is_insertion(op: &str) -> bool {
    matches!(
        op,
        "offer"
            | "add"
            | "enqueue"
            | "push_back"
            | "put"
            | "push"
            | "pushLeft"
            | "pushRight"
            | "addFirst"
            | "addLast"
            | "offerFirst"
            | "offerLast"
            | "push_front"
    )
}

/// The value or `null` when empty.
fn or_null(v: Option<&Value>) -> Value {
    v.cloned().unwrap_or(Value::Null)
}

/// `offer`/`add` (→ true), `enqueue`/`push_back`/`put`, `poll`/`dequeue`/`remove`/`tryTake`,
/// `take` (blocks when empty), `peek`, `size`, `isEmpty`.
pub(super) fn queue(ops: &OpTable<'_>, state: &QueueState) -> Apply<QueueState> {
    checked(|| {
        Ok(match ops.op() {
            op @ ("offer" | "add" | "enqueue" | "push_back" | "put") => {
                let [v] = ops.args::<1>()?;
                let mut next = state.clone();
                next.push_back(v.clone());
                let value = if matches!(op, "offer" | "add") {
                    Value::Bool(true)
                } else {
                    Value::Unit
                };
                ret(value, next)
            }
            "poll" | "dequeue" | "remove" | "tryTake" | "try_take" => {
                ops.args::<0>()?;
                let mut next = state.clone();
                let head = or_null(next.front());
                next.pop_front();
                ret(head, next)
            }
            "take" => {
                ops.args::<0>()?;
                let mut next = state.clone();
                match next.pop_front() {
                    Some(head) => ret(head, next),
                    None => Apply::Blocks,
                }
            }
            "peek" => {
                ops.args::<0>()?;
                ret(or_null(state.front()), state.clone())
            }
            "size" | "isEmpty" | "is_empty" => size(ops, state.len(), state.clone())?,
            _ => return Err(ops.unknown("offer, enqueue, poll, take, peek, size, isEmpty")),
        })
    })
}

/// `push`, `pop`/`tryPop`, `peek`, `size`, `isEmpty`.
pub(super) fn stack(ops: &OpTable<'_>, state: &StackState) -> Apply<StackState> {
    checked(|| {
        Ok(match ops.op() {
            "push" => {
                let [v] = ops.args::<1>()?;
                let mut next = state.clone();
                next.push(v.clone());
                ret(Value::Unit, next)
            }
            "pop" | "tryPop" | "try_pop" => {
                ops.args::<0>()?;
                let mut next = state.clone();
                let top = next.pop().unwrap_or(Value::Null);
                ret(top, next)
            }
            "peek" => {
                ops.args::<0>()?;
                ret(or_null(state.last()), state.clone())
            }
            "size" | "isEmpty" | "is_empty" => size(ops, state.len(), state.clone())?,
            _ => return Err(ops.unknown("push, pop, peek, size, isEmpty")),
        })
    })
}

/// Pushes, pops and peeks at either end, `size`, `isEmpty`.
pub(super) fn deque(ops: &OpTable<'_>, state: &DequeState) -> Apply<DequeState> {
    checked(|| {
        Ok(match ops.op() {
            op @ ("pushLeft" | "addFirst" | "offerFirst" | "push_front" | "pushRight"
            | "addLast" | "offerLast" | "push_back") => {
                let [v] = ops.args::<1>()?;
                let mut next = state.clone();
                if matches!(op, "pushLeft" | "addFirst" | "offerFirst" | "push_front") {
                    next.push_front(v.clone());
                } else {
                    next.push_back(v.clone());
                }
                ret(Value::Unit, next)
            }
            "popLeft" | "pollFirst" | "pop_front" => {
                ops.args::<0>()?;
                let mut next = state.clone();
                let v = next.pop_front().unwrap_or(Value::Null);
                ret(v, next)
            }
            "popRight" | "pollLast" | "pop_back" => {
                ops.args::<0>()?;
                let mut next = state.clone();
                let v = next.pop_back().unwrap_or(Value::Null);
                ret(v, next)
            }
            "peekLeft" | "peekFirst" => {
                ops.args::<0>()?;
                ret(or_null(state.front()), state.clone())
            }
            "peekRight" | "peekLast" => {
                ops.args::<0>()?;
                ret(or_null(state.back()), state.clone())
            }
            "size" | "isEmpty" | "is_empty" => size(ops, state.len(), state.clone())?,
            _ => {
                return Err(ops.unknown(
                    "pushLeft, pushRight, popLeft, popRight, peekLeft, peekRight, size, isEmpty",
                ))
            }
        })
    })
}

/// `size()` → int and `isEmpty()` → bool, shared by the sequences.
fn size<S>(ops: &OpTable<'_>, len: usize, state: S) -> Result<Apply<S>, String> {
    ops.args::<0>()?;
    let value = if ops.op() == "size" {
        Value::Int(len as i64)
    } else {
        Value::Bool(len == 0)
    };
    Ok(ret(value, state))
}
