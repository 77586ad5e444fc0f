//! The object under test, with its operations by name: what lets a test say `"write(0, 2)"`.

use fgvt_tree::{Call, Value};

/// A concurrent object that fgvt can test: how to make a fresh one, and how to run an
/// operation named in a test on it.
///
/// ```
/// use fgvt_sync::atomic::{AtomicI64, Ordering};
/// use fgvt_sync::{Arg, Call, IntoValue, Object, Value};
///
/// struct Counter(AtomicI64);
///
/// impl Object for Counter {
///     fn new() -> Self {
///         Counter(AtomicI64::new(0))
///     }
///
///     fn call(&self, call: &Call) -> Result<Value, String> {
///         match (call.op.as_str(), call.args.as_slice()) {
///             ("add", [n]) => Ok(self.0.fetch_add(n.int()?, Ordering::SeqCst).into_value()),
///             ("get", []) => Ok(self.0.load(Ordering::SeqCst).into_value()),
///             _ => Err(fgvt_sync::unknown(call)),
///         }
///     }
/// }
/// ```
pub trait Object: Send + Sync + 'static {
    /// A fresh object, as every execution and every serial run of the spec starts from.
    fn new() -> Self;

    /// Runs `call`; `Err` names an operation the object does not have, or wrong arguments.
    fn call(&self, call: &Call) -> Result<Value, String>;
}

/// The error for a call the object does not know.
pub fn unknown(call: &Call) -> String {
    format!("unknown operation `{call}`: the object's `Object::call` has no arm for it")
}

/// An argument of a call, read as a Rust value.
pub trait Arg {
    /// An integer argument.
    fn int(&self) -> Result<i64, String>;
    /// A non-negative integer argument, as an index.
    fn index(&self) -> Result<usize, String> {
        let n = self.int()?;
        usize::try_from(n).map_err(|_| format!("expected an index, got {n}"))
    }
    /// A boolean argument.
    fn boolean(&self) -> Result<bool, String>;
}

impl Arg for Value {
    fn int(&self) -> Result<i64, String> {
        match self {
            Value::Int(n) => Ok(*n),
            other => Err(format!("expected an integer, got {other}")),
        }
    }

    fn boolean(&self) -> Result<bool, String> {
        match self {
            Value::Bool(b) => Ok(*b),
            other => Err(format!("expected true or false, got {other}")),
        }
    }
}

/// A Rust result as a [`Value`] of a history.
pub trait IntoValue {
    /// The value.
    fn into_value(self) -> Value;
}

impl IntoValue for () {
    fn into_value(self) -> Value {
        Value::Unit
    }
}

impl IntoValue for bool {
    fn into_value(self) -> Value {
        Value::Bool(self)
    }
}

macro_rules! int_value {
    ($($t:ty),*) => {
        $(impl IntoValue for $t {
            fn into_value(self) -> Value {
                // Values past i64 are shown saturated; tests use small numbers.
                Value::Int(i64::try_from(self).unwrap_or(i64::MAX))
            }
        })*
    };
}

int_value!(i8, i16, i32, i64, isize, u8, u16, u32, u64, usize);

impl<T: IntoValue> IntoValue for Option<T> {
    fn into_value(self) -> Value {
        self.map_or(Value::Null, IntoValue::into_value)
    }
}

impl<A: IntoValue, B: IntoValue> IntoValue for (A, B) {
    fn into_value(self) -> Value {
        Value::Tuple(vec![self.0.into_value(), self.1.into_value()])
    }
}

impl<A: IntoValue, B: IntoValue, C: IntoValue> IntoValue for (A, B, C) {
    fn into_value(self) -> Value {
        Value::Tuple(vec![
            self.0.into_value(),
            self.1.into_value(),
            self.2.into_value(),
        ])
    }
}

impl IntoValue for Value {
    fn into_value(self) -> Value {
        self
    }
}
