//! Runtime values of the interpreter: cheap to clone and hash (tuples are `Arc`-shared).

use std::fmt;
use std::sync::Arc;

use fgvt_tree::Value;

/// A value on the operand stack, in a local, or in shared memory.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Val {
    /// The result of an operation or function that returns nothing.
    Unit,
    /// `null`
    Null,
    /// A boolean.
    Bool(bool),
    /// An integer.
    Int(i64),
    /// A string (only as an argument or a literal).
    Str(Arc<str>),
    /// A heap record's address.
    Ref(u32),
    /// A tuple.
    Tuple(Arc<[Val]>),
    /// A declared lock, or the object's own monitor (`this`): an index into the lock table.
    Lock(u32),
}

impl Val {
    /// Converts an argument from a test into a runtime value (an integer above `i64::MAX` as
    /// its bits: the test loader rejects such arguments).
    pub fn from_value(v: &Value) -> Val {
        match v {
            Value::Unit => Val::Unit,
            Value::Null => Val::Null,
            Value::Bool(b) => Val::Bool(*b),
            Value::Int(i) => Val::Int(*i),
            // Test loaders reject these for models (`src/testcase.rs`); a spec that meets one
            // in a recorded history sees its 64 bits.
            Value::Nat(n) => Val::Int(*n as i64),
            Value::Str(s) => Val::Str(s.clone()),
            Value::Ref(r) => Val::Ref(*r),
            Value::Tuple(items) => Val::Tuple(items.iter().map(Val::from_value).collect()),
        }
    }

    /// Converts a runtime value into a history value. A lock handle (which cannot escape in
    /// well-formed models) is rendered as its index.
    pub fn to_value(&self) -> Value {
        match self {
            Val::Unit => Value::Unit,
            Val::Null => Value::Null,
            Val::Bool(b) => Value::Bool(*b),
            Val::Int(i) => Value::Int(*i),
            Val::Str(s) => Value::Str(s.clone()),
            Val::Ref(r) => Value::Ref(*r),
            Val::Tuple(items) => Value::Tuple(items.iter().map(Val::to_value).collect()),
            Val::Lock(l) => Value::Int(i64::from(*l)),
        }
    }

    /// A short name of the value's type, for type-mismatch messages.
    pub fn type_name(&self) -> &'static str {
        match self {
            Val::Unit => "no value",
            Val::Null => "null",
            Val::Bool(_) => "bool",
            Val::Int(_) => "int",
            Val::Str(_) => "string",
            Val::Ref(_) => "a record",
            Val::Tuple(_) => "a tuple",
            Val::Lock(_) => "a lock",
        }
    }
}

impl fmt::Display for Val {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Val::Lock(l) => write!(f, "lock#{l}"),
            other => write!(f, "{}", other.to_value()),
        }
    }
}

/// Renders a value read from a history the way the modeling language writes it
/// (`(1, 2)`, `null`, `#3` for a heap address).
pub fn render_value(v: &Value) -> String {
    v.to_string()
}
