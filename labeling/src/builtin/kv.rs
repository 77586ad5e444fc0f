//! The string key/value store of recorded histories: `get`, `put`, `append`.

use std::collections::BTreeMap;
use std::sync::Arc;

use fgvt_tree::Value;

use super::{checked, ret, OpTable};
use crate::spec::Apply;

/// The non-empty entries of a key/value store. Values are shared (`Arc`) because the checker
/// clones states often and appends make them long.
pub type KvState = BTreeMap<Value, Arc<str>>;

/// Every kv operation concerns one key.
pub(super) const KEYED: &[&str] = &["get", "put", "append"];

/// `get(k)`, `put(k, v)`, `append(k, v)`.
pub(super) fn kv(ops: &OpTable<'_>, state: &KvState) -> Apply<KvState> {
    checked(|| {
        let string = |v: &Value| match v {
            Value::Str(s) => Ok(s.clone()),
            other => Err(ops.bad_arg("a string value", other)),
        };
        Ok(match ops.op() {
            "get" => {
                let [k] = ops.args::<1>()?;
                let value = state.get(k).map(|s| s.to_string()).unwrap_or_default();
                ret(Value::Str(value), state.clone())
            }
            "put" => {
                let [k, v] = ops.args::<2>()?;
                let v = string(v)?;
                let mut next = state.clone();
                // Absent and "" are the same state: keep one representation so states compare equal.
                if v.is_empty() {
                    next.remove(k);
                } else {
                    next.insert(k.clone(), v.into());
                }
                ret(Value::Unit, next)
            }
            "append" => {
                let [k, v] = ops.args::<2>()?;
                let v = string(v)?;
                let mut next = state.clone();
                if !v.is_empty() {
                    let joined: String = next.get(k).map(|old| format!("{old}{v}")).unwrap_or(v);
                    next.insert(k.clone(), joined.into());
                }
                ret(Value::Unit, next)
            }
            _ => return Err(ops.unknown("get, put, append")),
        })
    })
}
