//! Values that flow through operations: arguments, results and the contents of shared memory
//! as events report them.

use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

/// A value of the modeling language, as seen by histories and events.
///
/// `Ref` is an opaque heap address; it is only meaningful inside one execution. `Unit` is the
/// result of an operation that returns nothing.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Value {
    /// The result of an operation that returns nothing.
    Unit,
    /// The null reference (also "absent" / "empty" results).
    Null,
    /// A boolean.
    Bool(bool),
    /// An integer that fits in an `i64`.
    Int(i64),
    /// An unsigned integer above `i64::MAX` (a `u64` or `usize` result such as `usize::MAX`);
    /// every integer that fits in an `i64` is an [`Value::Int`], so that equal numbers are
    /// equal values (build one with [`Value::unsigned`]).
    Nat(u64),
    /// A string (recorded histories of key/value stores). Shared: a spec returns the string it
    /// holds without copying it, and histories clone values often.
    Str(Arc<str>),
    /// A heap address, printed as `#n`.
    Ref(u32),
    /// A tuple such as `(x, y)` or a markable reference `(ref, mark)`.
    Tuple(Vec<Value>),
}

impl Value {
    /// Whether this is the unit value (an operation that returns nothing).
    pub fn is_unit(&self) -> bool {
        matches!(self, Value::Unit)
    }

    /// The unsigned integer `n`, exactly: an [`Value::Int`] when it fits in an `i64`.
    pub fn unsigned(n: u64) -> Value {
        i64::try_from(n).map_or(Value::Nat(n), Value::Int)
    }

    /// The integer `n`, exactly, if it fits in 64 bits (signed or unsigned).
    pub fn integer(n: i128) -> Option<Value> {
        match i64::try_from(n) {
            Ok(n) => Some(Value::Int(n)),
            Err(_) => u64::try_from(n).ok().map(Value::Nat),
        }
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Unit => f.write_str("()"),
            Value::Null => f.write_str("null"),
            Value::Bool(b) => write!(f, "{b}"),
            Value::Int(i) => write!(f, "{i}"),
            Value::Nat(n) => write!(f, "{n}"),
            Value::Str(s) => write!(f, "{s:?}"),
            Value::Ref(r) => write!(f, "#{r}"),
            Value::Tuple(items) => {
                f.write_str("(")?;
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{item}")?;
                }
                f.write_str(")")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn displays_like_source_code() {
        let pair = Value::Tuple(vec![
            Value::Int(1),
            Value::Tuple(vec![Value::Null, Value::Bool(true)]),
        ]);
        assert_eq!(pair.to_string(), "(1, (null, true))");
        assert_eq!(Value::Str("a b".into()).to_string(), "\"a b\"");
        assert_eq!(Value::Ref(3).to_string(), "#3");
    }

    #[test]
    fn every_64_bit_integer_is_exact_and_has_one_value() {
        assert_eq!(
            Value::unsigned(u64::MAX).to_string(),
            "18446744073709551615"
        );
        assert_eq!(Value::unsigned(7), Value::Int(7));
        assert_eq!(
            Value::integer(i128::from(u64::MAX)),
            Some(Value::Nat(u64::MAX))
        );
        assert_eq!(Value::integer(-3), Some(Value::Int(-3)));
        assert_eq!(Value::integer(i128::from(u64::MAX) + 1), None);
        let json = serde_json::to_string(&Value::Nat(u64::MAX)).unwrap();
        assert_eq!(json, "18446744073709551615");
        assert_eq!(
            serde_json::from_str::<Value>(&json).unwrap(),
            Value::Nat(u64::MAX)
        );
    }
}
