//! Specs over keyed collections: set and map, which partition by key (the first argument),
//! and Jepsen's multi-register, whose transactions span keys (it does not partition).

use std::collections::{BTreeMap, BTreeSet};

use fgvt_tree::Value;

use super::{checked, ret, OpTable};
use crate::spec::Apply;

/// The elements of a built-in set.
pub type SetState = BTreeSet<Value>;

/// The entries of a built-in map.
pub type MapState = BTreeMap<Value, Value>;

/// Set operations that concern one key; `size` does not, so it disables partitioning.
pub(super) const SET_KEYED: &[&str] = &["add", "insert", "remove", "delete", "contains"];

/// Map operations that concern one key.
pub(super) const MAP_KEYED: &[&str] = &[
    "put",
    "get",
    "remove",
    "delete",
    "contains",
    "containsKey",
    "contains_key",
    "putIfAbsent",
    "put_if_absent",
];

/// `add`/`insert`, `remove`/`delete`, `contains`, `size`, and `read` of the whole set.
pub(super) fn set(ops: &OpTable<'_>, state: &SetState) -> Apply<SetState> {
    checked(|| {
        Ok(match ops.op() {
            "add" | "insert" => {
                let [k] = ops.args::<1>()?;
                if state.contains(k) {
                    ret(Value::Bool(false), state.clone())
                } else {
                    let mut next = state.clone();
                    next.insert(k.clone());
                    ret(Value::Bool(true), next)
                }
            }
            "remove" | "delete" => {
                let [k] = ops.args::<1>()?;
                if state.contains(k) {
                    let mut next = state.clone();
                    next.remove(k);
                    ret(Value::Bool(true), next)
                } else {
                    ret(Value::Bool(false), state.clone())
                }
            }
            "contains" => {
                let [k] = ops.args::<1>()?;
                ret(Value::Bool(state.contains(k)), state.clone())
            }
            "size" => {
                ops.args::<0>()?;
                ret(Value::Int(state.len() as i64), state.clone())
            }
            "read" => {
                ops.args::<0>()?;
                ret(Value::Tuple(state.iter().cloned().collect()), state.clone())
            }
            _ => return Err(ops.unknown("add, remove, contains, size, read")),
        })
    })
}

/// `txn(ops)` of Jepsen's multi-register: `ops` is a tuple of `(":read", k, _)` and
/// `(":write", k, v)`, applied in order; the result is the same tuple with every read's value
/// filled in (`null` for a key never written), which is what Jepsen records on `:ok`.
pub(super) fn multi_register(ops: &OpTable<'_>, state: &MapState) -> Apply<MapState> {
    checked(|| {
        if ops.op() != "txn" {
            return Err(ops.unknown("txn"));
        }
        let [arg] = ops.args::<1>()?;
        let Value::Tuple(steps) = arg else {
            return Err(ops.bad_arg("a tuple of [:read k v] / [:write k v]", arg));
        };
        let mut next = state.clone();
        let mut done = Vec::with_capacity(steps.len());
        for step in steps {
            let Value::Tuple(parts) = step else {
                return Err(ops.bad_arg("[:read k v] or [:write k v]", step));
            };
            match parts.as_slice() {
                [kind @ Value::Str(k), key, _] if &**k == ":read" => {
                    let value = next.get(key).cloned().unwrap_or(Value::Null);
                    done.push(Value::Tuple(vec![kind.clone(), key.clone(), value]));
                }
                [Value::Str(k), key, value] if &**k == ":write" => {
                    next.insert(key.clone(), value.clone());
                    done.push(step.clone());
                }
                [other, _, _] => return Err(ops.bad_arg(":read or :write", other)),
                _ => return Err(ops.bad_arg("[:read k v] or [:write k v]", step)),
            }
        }
        Ok(ret(Value::Tuple(done), next))
    })
}

/// Whether a multi-register `txn` only reads: its argument is a tuple of `[:read k v]` steps.
pub(super) fn reads_only(call: &fgvt_tree::Call) -> bool {
    let [Value::Tuple(steps)] = call.args.as_slice() else {
        return false;
    };
    steps.iter().all(|step| {
        matches!(step, Value::Tuple(parts)
            if matches!(parts.first(), Some(Value::Str(kind)) if &**kind == ":read"))
    })
}

/// `put`, `get`, `remove`, `contains`, `putIfAbsent`, `size`.
pub(super) fn map(ops: &OpTable<'_>, state: &MapState) -> Apply<MapState> {
    checked(|| {
        let previous = |k: &Value| state.get(k).cloned().unwrap_or(Value::Null);
        Ok(match ops.op() {
            "put" => {
                let [k, v] = ops.args::<2>()?;
                let mut next = state.clone();
                next.insert(k.clone(), v.clone());
                ret(previous(k), next)
            }
            "putIfAbsent" | "put_if_absent" => {
                let [k, v] = ops.args::<2>()?;
                let mut next = state.clone();
                next.entry(k.clone()).or_insert_with(|| v.clone());
                ret(previous(k), next)
            }
            "get" => {
                let [k] = ops.args::<1>()?;
                ret(previous(k), state.clone())
            }
            "remove" | "delete" => {
                let [k] = ops.args::<1>()?;
                let mut next = state.clone();
                next.remove(k);
                ret(previous(k), next)
            }
            "contains" | "containsKey" | "contains_key" => {
                let [k] = ops.args::<1>()?;
                ret(Value::Bool(state.contains_key(k)), state.clone())
            }
            "size" => {
                ops.args::<0>()?;
                ret(Value::Int(state.len() as i64), state.clone())
            }
            _ => return Err(ops.unknown("put, get, remove, contains, putIfAbsent, size")),
        })
    })
}
