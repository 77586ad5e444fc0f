//! The object under test, with its operations by name: what lets a test say `"write(0, 2)"`.

use fgvt_tree::{Call, Value};

/// A concurrent object that fgvt can test: how to make a fresh one, and how to run an
/// operation named in a test on it.
///
/// `#[fgvt_sync::operations]` on the object's impl block writes this implementation from its
/// `pub fn`s that take `&self` (see [`operations`](crate::operations) for the rules), and is
/// how most objects get it. Written by hand, `call` matches the operation's name and
/// arguments, reads each argument with [`Arg`], returns the result through [`IntoValue`], and
/// gives [`unknown`]'s error for any other call: what an object needs when its dispatch is
/// not one method per operation (an operation's name chosen at run time, arguments of a type
/// of its own, several objects behind one dispatch).
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

/// The error for a call the object does not know: a hand-written [`Object::call`]'s last arm
/// (`_ => Err(unknown(call))`). The attributes' dispatch starts its own error with it.
pub fn unknown(call: &Call) -> String {
    let n = call.args.len();
    format!(
        "unknown operation: the object's `Object::call` has no arm for `{}` with {n} argument{}",
        call.op,
        if n == 1 { "" } else { "s" }
    )
}

/// An argument of a call, read as a Rust value: what a hand-written [`Object::call`] reads
/// its arguments with (`v.int()?`), and what `#[fgvt_sync::operations]` reads each
/// integer and `bool` parameter with, checking the range of the narrower integer types.
pub trait Arg {
    /// An integer argument that fits in an `i64`.
    fn int(&self) -> Result<i64, String>;
    /// A non-negative integer argument, up to `u64::MAX`.
    fn uint(&self) -> Result<u64, String>;
    /// A non-negative integer argument, as an index.
    fn index(&self) -> Result<usize, String> {
        let n = self.uint()?;
        usize::try_from(n).map_err(|_| format!("expected an index, got {n}"))
    }
    /// A boolean argument.
    fn boolean(&self) -> Result<bool, String>;
}

impl Arg for Value {
    fn int(&self) -> Result<i64, String> {
        match self {
            Value::Int(n) => Ok(*n),
            Value::Nat(n) => Err(format!(
                "expected an integer of at most {}, got {n}",
                i64::MAX
            )),
            other => Err(format!("expected an integer, got {other}")),
        }
    }

    fn uint(&self) -> Result<u64, String> {
        match self {
            Value::Int(n) => {
                u64::try_from(*n).map_err(|_| format!("expected a non-negative integer, got {n}"))
            }
            Value::Nat(n) => Ok(*n),
            other => Err(format!("expected a non-negative integer, got {other}")),
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
                // Every integer of 64 bits or fewer is exact: a signed one is an `i64`.
                Value::Int(i64::from(self))
            }
        })*
    };
}

macro_rules! uint_value {
    ($($t:ty),*) => {
        $(impl IntoValue for $t {
            fn into_value(self) -> Value {
                // Exact: above `i64::MAX` it is a `Value::Nat`.
                Value::unsigned(u64::from(self))
            }
        })*
    };
}

int_value!(i8, i16, i32, i64);
uint_value!(u8, u16, u32, u64);

impl IntoValue for isize {
    fn into_value(self) -> Value {
        // An `isize` has at most 64 bits on every target Rust supports with threads.
        Value::integer(self as i128).expect("an isize fits in 64 bits")
    }
}

impl IntoValue for usize {
    fn into_value(self) -> Value {
        Value::integer(self as i128).expect("a usize fits in 64 bits")
    }
}

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

/// A box shows what it holds.
impl<T: IntoValue> IntoValue for Box<T> {
    fn into_value(self) -> Value {
        (*self).into_value()
    }
}

/// A handle shows what it points to (a copy of it: other handles may still hold it).
impl<T: IntoValue + Clone> IntoValue for std::sync::Arc<T> {
    fn into_value(self) -> Value {
        T::clone(&self).into_value()
    }
}

/// fgvt's counted handle shows what it points to, as `std`'s does.
impl<T: IntoValue + Clone> IntoValue for crate::Arc<T> {
    fn into_value(self) -> Value {
        T::clone(&self).into_value()
    }
}

/// A reference shows what it refers to.
impl<T: IntoValue + Clone> IntoValue for &T {
    fn into_value(self) -> Value {
        self.clone().into_value()
    }
}

/// An operation that returns a guard of a [`Mutex`](crate::Mutex) shows the data it guards;
/// the guard is dropped, and the lock released, as the operation returns (a step of the
/// operation, before its return).
impl<T: IntoValue + Clone> IntoValue for crate::MutexGuard<'_, T> {
    fn into_value(self) -> Value {
        T::clone(&self).into_value()
    }
}

/// A read guard of an [`RwLock`](crate::RwLock) shows the data it guards, as a
/// [`MutexGuard`](crate::MutexGuard) does, and is released as the operation returns.
impl<T: IntoValue + Clone> IntoValue for crate::RwLockReadGuard<'_, T> {
    fn into_value(self) -> Value {
        T::clone(&self).into_value()
    }
}

/// A write guard of an [`RwLock`](crate::RwLock) shows the data it guards, as a
/// [`MutexGuard`](crate::MutexGuard) does, and is released as the operation returns.
impl<T: IntoValue + Clone> IntoValue for crate::RwLockWriteGuard<'_, T> {
    fn into_value(self) -> Value {
        T::clone(&self).into_value()
    }
}
