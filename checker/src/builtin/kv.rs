//! The string key/value store of recorded histories: `get`, `put`, `append`.

use std::collections::BTreeMap;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use fgvt_tree::Value;

use super::{checked, ret, OpTable};
use crate::check::hash::FxHasher;
use crate::spec::Apply;

/// The non-empty entries of a key/value store.
///
/// The checker clones, hashes and compares states constantly, and appends make values long:
/// the entries are shared (`Arc`), and the hash is kept up to date incrementally (the XOR of
/// one hash per entry), so hashing a state costs O(1) whatever its size.
#[derive(Clone, Debug, Default)]
pub struct KvState {
    entries: Arc<BTreeMap<Value, Arc<str>>>,
    hash: u64,
}

impl KvState {
    /// The value of `key`, `""` when absent.
    pub fn get(&self, key: &Value) -> &str {
        self.entries.get(key).map_or("", |v| v)
    }

    /// The non-empty entries, by key.
    pub fn iter(&self) -> impl Iterator<Item = (&Value, &str)> {
        self.entries.iter().map(|(k, v)| (k, &**v))
    }

    /// This state with `key` set to `value` (`""` removes it, so that absent and empty are
    /// one state).
    fn with(&self, key: &Value, value: &str) -> KvState {
        let mut entries = (*self.entries).clone();
        let mut hash = self.hash;
        if let Some(old) = entries.get(key) {
            hash ^= entry_hash(key, old);
        }
        if value.is_empty() {
            entries.remove(key);
        } else {
            hash ^= entry_hash(key, value);
            entries.insert(key.clone(), value.into());
        }
        KvState {
            entries: Arc::new(entries),
            hash,
        }
    }
}

fn entry_hash(key: &Value, value: &str) -> u64 {
    let mut hasher = FxHasher::default();
    key.hash(&mut hasher);
    value.hash(&mut hasher);
    hasher.finish()
}

impl PartialEq for KvState {
    fn eq(&self, other: &Self) -> bool {
        self.hash == other.hash
            && (Arc::ptr_eq(&self.entries, &other.entries) || self.entries == other.entries)
    }
}

impl Eq for KvState {}

impl Hash for KvState {
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write_u64(self.hash);
    }
}

/// The string in `v`, or the `Invalid` message.
fn string<'v>(ops: &OpTable<'_>, v: &'v Value) -> Result<&'v str, String> {
    match v {
        Value::Str(s) => Ok(s),
        other => Err(ops.bad_arg("a string value", other)),
    }
}

/// Every kv operation concerns one key.
pub(super) const KEYED: &[&str] = &["get", "put", "append"];

/// `get(k)`, `put(k, v)`, `append(k, v)`.
pub(super) fn kv(ops: &OpTable<'_>, state: &KvState) -> Apply<KvState> {
    checked(|| {
        Ok(match ops.op() {
            "get" => {
                let [k] = ops.args::<1>()?;
                ret(Value::Str(state.get(k).to_owned()), state.clone())
            }
            "put" => {
                let [k, v] = ops.args::<2>()?;
                ret(Value::Unit, state.with(k, string(ops, v)?))
            }
            "append" => {
                let [k, v] = ops.args::<2>()?;
                let v = string(ops, v)?;
                if v.is_empty() {
                    ret(Value::Unit, state.clone())
                } else {
                    ret(Value::Unit, state.with(k, &format!("{}{v}", state.get(k))))
                }
            }
            _ => return Err(ops.unknown("get, put, append")),
        })
    })
}
