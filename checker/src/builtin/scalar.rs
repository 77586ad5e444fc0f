//! Specs over a single value: register, counter, snapshot.

use fgvt_tree::{Call, Value};

use super::{checked, ret, OpTable};
use crate::spec::Apply;

/// The register's operations by kind, each with its aliases.
fn is_read(op: &str) -> bool {
    matches!(op, "read" | "get")
}

fn is_write(op: &str) -> bool {
    matches!(op, "write" | "set")
}

fn is_cas(op: &str) -> bool {
    matches!(op, "cas" | "compareAndSet" | "compare_and_set")
}

/// `read`/`get`, `write`/`set`, `cas`/`compareAndSet`.
pub(super) fn register(ops: &OpTable<'_>, state: &Value) -> Apply<Value> {
    checked(|| {
        Ok(match ops.op() {
            op if is_read(op) => {
                ops.args::<0>()?;
                ret(state.clone(), state.clone())
            }
            op if is_write(op) => {
                let [v] = ops.args::<1>()?;
                ret(Value::Unit, v.clone())
            }
            op if is_cas(op) => {
                let [expected, new] = ops.args::<2>()?;
                if state == expected {
                    ret(Value::Bool(true), new.clone())
                } else {
                    ret(Value::Bool(false), state.clone())
                }
            }
            _ => return Err(ops.unknown("read, write, cas")),
        })
    })
}

/// Whether the register operation `call`, observed to return `result`, only reads: a read, or
/// a compare-and-set that failed.
pub(super) fn register_reads_only(call: &Call, result: Option<&Value>) -> bool {
    is_read(&call.op) || is_cas(&call.op) && result == Some(&Value::Bool(false))
}

/// Whether `call` is a register read, whose reach [`register_may_read`] rules on.
pub(super) fn is_register_read(call: &Call) -> bool {
    is_read(&call.op)
}

/// Whether a register holding `value` can come to hold `result` for the read `call`: it
/// holds it already, or one of `writers` can write it (a `write` of it, or a `cas` to it that
/// did not fail).
pub(super) fn register_may_read(
    value: &Value,
    call: &Call,
    result: &Value,
    writers: &mut dyn Iterator<Item = (&Call, Option<&Value>)>,
) -> bool {
    if !is_read(&call.op) || value == result {
        return true;
    }
    Iterator::any(&mut &mut *writers, |(writer, observed)| {
        match (writer.op.as_str(), writer.args.as_slice()) {
            (op, [v]) if is_write(op) => v == result,
            (op, [_, new]) if is_cas(op) => new == result && observed != Some(&Value::Bool(false)),
            (op, _) if is_read(op) => false,
            // Something this reasoning does not cover: say yes.
            _ => true,
        }
    })
}

/// `inc`, `dec`, `add(n)`, `get`, and the Java `AtomicLong` forms.
pub(super) fn counter(ops: &OpTable<'_>, state: i64) -> Apply<i64> {
    checked(|| {
        let int = |v: &Value| match v {
            Value::Int(n) => Ok(*n),
            other => Err(ops.bad_arg("an integer", other)),
        };
        // (delta, what it returns: None = unit, Some(false) = old value, Some(true) = new value)
        let (delta, returns) = match ops.op() {
            "get" | "read" => {
                ops.args::<0>()?;
                return Ok(ret(Value::Int(state), state));
            }
            "add" | "addAndGet" | "getAndAdd" => {
                let [n] = ops.args::<1>()?;
                let returns = match ops.op() {
                    "add" => None,
                    "addAndGet" => Some(true),
                    _ => Some(false),
                };
                (int(n)?, returns)
            }
            op => {
                let step = match op {
                    "inc" | "increment" => (1, None),
                    "dec" | "decrement" => (-1, None),
                    "incrementAndGet" => (1, Some(true)),
                    "decrementAndGet" => (-1, Some(true)),
                    "getAndIncrement" => (1, Some(false)),
                    "getAndDecrement" => (-1, Some(false)),
                    _ => return Err(ops.unknown("inc, dec, add, get")),
                };
                ops.args::<0>()?;
                step
            }
        };
        let new = state.wrapping_add(delta);
        let value = match returns {
            None => Value::Unit,
            Some(true) => Value::Int(new),
            Some(false) => Value::Int(state),
        };
        Ok(ret(value, new))
    })
}

/// `acquire()` (blocks while held) and `release()` (`()`; on a free lock `false`, which no
/// observed release matches).
pub(super) fn mutex(ops: &OpTable<'_>, held: bool) -> Apply<bool> {
    checked(|| {
        Ok(match ops.op() {
            "acquire" | "lock" => {
                ops.args::<0>()?;
                if held {
                    Apply::Blocks
                } else {
                    ret(Value::Unit, true)
                }
            }
            "release" | "unlock" => {
                ops.args::<0>()?;
                ret(
                    if held {
                        Value::Unit
                    } else {
                        Value::Bool(false)
                    },
                    false,
                )
            }
            _ => return Err(ops.unknown("acquire, release")),
        })
    })
}

/// `write(i, v)` and `read()` of every cell.
pub(super) fn snapshot(ops: &OpTable<'_>, cells: &[Value]) -> Apply<Vec<Value>> {
    checked(|| {
        Ok(match ops.op() {
            "read" | "scan" => {
                ops.args::<0>()?;
                ret(Value::Tuple(cells.to_vec()), cells.to_vec())
            }
            "write" | "update" => {
                let [i, v] = ops.args::<2>()?;
                let index = match i {
                    Value::Int(i) if (0..=1024).contains(i) => *i as usize,
                    other => return Err(ops.bad_arg("a cell index in 0..=1024", other)),
                };
                let mut cells = cells.to_vec();
                if index >= cells.len() {
                    cells.resize(index + 1, Value::Int(0));
                }
                cells[index] = v.clone();
                ret(Value::Unit, cells)
            }
            _ => return Err(ops.unknown("write, read")),
        })
    })
}
