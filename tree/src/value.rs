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
    /// An integer.
    Int(i64),
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
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Unit => f.write_str("()"),
            Value::Null => f.write_str("null"),
            Value::Bool(b) => write!(f, "{b}"),
            Value::Int(i) => write!(f, "{i}"),
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
}
