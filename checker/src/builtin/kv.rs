//! The string key/value store of recorded histories: `get`, `put`, `append`.

use std::hash::{Hash, Hasher};
use std::sync::Arc;

use fgvt_tree::{Call, Value};

use super::{checked, ret, OpTable};
use crate::check::hash::FxHasher;
use crate::spec::Apply;

/// Key, value, and the value's [`poly`] hash (so that an append rehashes only its suffix).
type Entry = (Value, Arc<str>, u64);

/// The non-empty entries of a key/value store, sorted by key.
///
/// The checker clones, hashes and compares states constantly, and appends make values long:
/// the entries are shared (`Arc`), kept in one small sorted slice (a partition of a kv history
/// has a single key, and a map node would cost ten times its size), and the hash is kept up to
/// date incrementally (the XOR of one hash per entry), so hashing a state costs O(1) whatever
/// its size.
#[derive(Clone, Debug)]
pub struct KvState {
    entries: Arc<[Entry]>,
    hash: u64,
}

impl Default for KvState {
    fn default() -> Self {
        KvState {
            entries: Arc::new([]),
            hash: 0,
        }
    }
}

impl KvState {
    /// Where `key` is in the sorted entries (`Err`: where it would go).
    fn find(&self, key: &Value) -> Result<usize, usize> {
        self.entries.binary_search_by(|(k, _, _)| k.cmp(key))
    }

    /// The entry of `key`, if it has a value.
    fn entry(&self, key: &Value) -> Option<&Entry> {
        self.find(key).ok().map(|i| &self.entries[i])
    }

    /// The value of `key`, `""` when absent.
    pub fn get(&self, key: &Value) -> &str {
        self.entry(key).map_or("", |(_, v, _)| v)
    }

    /// The value of `key` as a shared string (no copy), `""` when absent.
    pub fn get_shared(&self, key: &Value) -> Arc<str> {
        self.entry(key)
            .map_or_else(|| "".into(), |(_, v, _)| v.clone())
    }

    /// The store holding `entries` (key, string value); `Err` if a value is not a string.
    pub(super) fn of(entries: &[(Value, Value)]) -> Result<KvState, ()> {
        entries
            .iter()
            .try_fold(KvState::default(), |state, (key, value)| match value {
                Value::Str(v) => Ok(state.with(key, v)),
                _ => Err(()),
            })
    }

    /// The non-empty entries, by key.
    pub fn iter(&self) -> impl Iterator<Item = (&Value, &str)> {
        self.entries.iter().map(|(k, v, _)| (k, &**v))
    }

    /// This state with `key` set to `value` (`""` removes it, so that absent and empty are
    /// one state).
    fn with(&self, key: &Value, value: &str) -> KvState {
        self.with_at(self.find(key), key, value, poly(0, value))
    }

    /// This state with `suffix` appended to `key`'s value.
    fn appended(&self, key: &Value, suffix: &str) -> KvState {
        let at = self.find(key);
        let (old, old_hash) = match at {
            Ok(i) => (&*self.entries[i].1, self.entries[i].2),
            Err(_) => ("", 0),
        };
        let mut joined = String::with_capacity(old.len() + suffix.len());
        joined.push_str(old);
        joined.push_str(suffix);
        self.with_at(at, key, &joined, poly(old_hash, suffix))
    }

    /// This state with `key`, found at `at`, set to `value`, whose [`poly`] hash is given.
    fn with_at(
        &self,
        at: Result<usize, usize>,
        key: &Value,
        value: &str,
        value_hash: u64,
    ) -> KvState {
        let mut entries: Vec<Entry> = Vec::with_capacity(self.entries.len() + 1);
        let mut hash = self.hash;
        let (before, after) = match at {
            Ok(i) => {
                hash ^= entry_hash(key, self.entries[i].2);
                (&self.entries[..i], &self.entries[i + 1..])
            }
            Err(i) => (&self.entries[..i], &self.entries[i..]),
        };
        entries.extend(before.iter().cloned());
        if !value.is_empty() {
            hash ^= entry_hash(key, value_hash);
            entries.push((key.clone(), value.into(), value_hash));
        }
        entries.extend(after.iter().cloned());
        KvState {
            entries: entries.into(),
            hash,
        }
    }
}

/// The hash of one entry, from its key and its value's [`poly`] hash.
fn entry_hash(key: &Value, value_hash: u64) -> u64 {
    let mut hasher = FxHasher::default();
    key.hash(&mut hasher);
    hasher.write_u64(value_hash);
    hasher.finish()
}

/// The polynomial hash of `prefix + text`, given the hash of the prefix: `h(s + t) = h(s)·B^|t|
/// + h(t)` (mod 2^64), so an append costs the length of what it appends.
fn poly(prefix: u64, text: &str) -> u64 {
    const B: u64 = 0x0000_0100_0000_01b3;
    text.bytes().fold(prefix, |h, byte| {
        h.wrapping_mul(B).wrapping_add(u64::from(byte) + 1)
    })
}

impl PartialEq for KvState {
    fn eq(&self, other: &Self) -> bool {
        self.hash == other.hash
            && (Arc::ptr_eq(&self.entries, &other.entries)
                || self.entries.len() == other.entries.len()
                    && self
                        .entries
                        .iter()
                        .zip(other.entries.iter())
                        .all(|(a, b)| a.2 == b.2 && a.0 == b.0 && a.1 == b.1))
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
                ret(Value::Str(state.get_shared(k)), state.clone())
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
                    ret(Value::Unit, state.appended(k, v))
                }
            }
            _ => return Err(ops.unknown("get, put, append")),
        })
    })
}

/// Whether a store in `state` can come to give `result` to the `get` of `call`: appends only
/// lengthen a value, so the value now, or one that one of `writers` puts, must begin it.
pub(super) fn may_get(
    state: &KvState,
    call: &Call,
    result: &Value,
    writers: &mut dyn Iterator<Item = (&Call, Option<&Value>)>,
) -> bool {
    let (Some(key), Value::Str(wanted)) = (call.args.first(), result) else {
        return true;
    };
    if call.op != "get" || wanted.starts_with(state.get(key)) {
        return true;
    }
    Iterator::any(&mut &mut *writers, |(writer, _)| {
        match (writer.op.as_str(), writer.args.as_slice()) {
            ("put", [k, Value::Str(v)]) => k == key && wanted.starts_with(&**v),
            ("append" | "get", _) => false,
            // Something this reasoning does not cover: say yes.
            _ => true,
        }
    })
}
