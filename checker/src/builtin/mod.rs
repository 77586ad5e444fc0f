//! Built-in sequential specifications, chosen by name with [`builtin`].
//!
//! Every spec's operations, aliases, arguments and results (with what each gives on the
//! initial state, computed by running the spec) are listed in [`reference::SPECS`] and
//! rendered into `docs/specs.md` by [`reference::specs_markdown`].
//!
//! Operations that return nothing return `()` (`Value::Unit`). Enqueue-like operations that
//! return nothing in one model and `true` in another (`offer`, `add`, `push`, `enqueue`, ...) accept
//! both `()` and `true` as the observed result (see [`Spec::matches`]); every other result must be
//! equal to the spec's. An unknown operation or a wrong number of arguments is
//! [`Apply::Invalid`], which the checker reports as an error, not as a verdict.

mod collection;
mod kv;
pub mod reference;
mod scalar;
mod sequence;

use fgvt_tree::{Call, ThreadId, Value};

use crate::spec::{Apply, Spec};

pub use collection::{MapState, SetState};
pub use kv::KvState;
pub use sequence::{DequeState, QueueState, StackState};

/// The names accepted by [`builtin`], in documentation order.
pub const BUILTIN_NAMES: &[&str] = &[
    "register",
    "counter",
    "set",
    "map",
    "queue",
    "stack",
    "deque",
    "snapshot",
    "kv",
    "mutex",
    "multi-register",
];

/// A built-in sequential specification; see the [module documentation](self) for its operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BuiltinSpec {
    /// A single read/write/compare-and-set register, initially `null` (Jepsen etcd histories).
    Register,
    /// An integer counter, initially 0.
    Counter,
    /// A set of values, partitioned by key.
    Set,
    /// A map from keys to values, partitioned by key.
    Map,
    /// A FIFO queue; `take` blocks when empty.
    Queue,
    /// A LIFO stack.
    Stack,
    /// A double-ended queue.
    Deque,
    /// An array of cells read all at once (PairSnapshot), initially `(0, 0)`.
    Snapshot,
    /// A string key/value store with `get`, `put` and `append`, partitioned by key.
    Kv,
    /// A lock: `acquire` blocks while it is held, `release` frees it (Jepsen's mutex).
    Mutex,
    /// Registers by key, read and written by transactions (Jepsen's multi-register).
    MultiRegister,
}

/// Looks up a built-in spec by name (one of [`BUILTIN_NAMES`], case-insensitive).
pub fn builtin(name: &str) -> Option<BuiltinSpec> {
    let spec = match name.to_ascii_lowercase().as_str() {
        "register" => BuiltinSpec::Register,
        "counter" => BuiltinSpec::Counter,
        "set" => BuiltinSpec::Set,
        "map" => BuiltinSpec::Map,
        "queue" => BuiltinSpec::Queue,
        "stack" => BuiltinSpec::Stack,
        "deque" => BuiltinSpec::Deque,
        "snapshot" => BuiltinSpec::Snapshot,
        "kv" => BuiltinSpec::Kv,
        "mutex" => BuiltinSpec::Mutex,
        "multi-register" => BuiltinSpec::MultiRegister,
        _ => return None,
    };
    Some(spec)
}

/// The state of a [`BuiltinSpec`]: one variant per spec.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum BuiltinState {
    /// The register's value.
    Register(Value),
    /// The counter's value.
    Counter(i64),
    /// The set's elements.
    Set(SetState),
    /// The map's entries.
    Map(MapState),
    /// The queue's elements, head first.
    Queue(QueueState),
    /// The stack's elements, bottom first.
    Stack(StackState),
    /// The deque's elements, left first.
    Deque(DequeState),
    /// The snapshot's cells.
    Snapshot(Vec<Value>),
    /// The key/value store's non-empty entries.
    Kv(KvState),
    /// Whether the lock is held.
    Mutex(bool),
    /// The registers' values by key (absent: `null`).
    MultiRegister(MapState),
}

impl BuiltinSpec {
    /// The spec's name, as accepted by [`builtin`].
    pub fn as_str(self) -> &'static str {
        match self {
            BuiltinSpec::Register => "register",
            BuiltinSpec::Counter => "counter",
            BuiltinSpec::Set => "set",
            BuiltinSpec::Map => "map",
            BuiltinSpec::Queue => "queue",
            BuiltinSpec::Stack => "stack",
            BuiltinSpec::Deque => "deque",
            BuiltinSpec::Snapshot => "snapshot",
            BuiltinSpec::Kv => "kv",
            BuiltinSpec::Mutex => "mutex",
            BuiltinSpec::MultiRegister => "multi-register",
        }
    }

    /// The state `value` describes, to start a check from instead of the spec's own initial
    /// state: any value for a register, an integer for a counter, a boolean (held) for a mutex,
    /// a tuple of the elements for a set, queue (head first), stack (bottom first), deque and
    /// snapshot, and a tuple of `(key, value)` pairs for a map, kv store or multi-register.
    /// The error says what shape was expected.
    pub fn state_of(self, value: &Value) -> Result<BuiltinState, String> {
        let items = || match value {
            Value::Tuple(items) => Ok(items.as_slice()),
            _ => Err(()),
        };
        let pairs = || -> Result<Vec<(Value, Value)>, ()> {
            items()?
                .iter()
                .map(|pair| match pair {
                    Value::Tuple(kv) if kv.len() == 2 => Ok((kv[0].clone(), kv[1].clone())),
                    _ => Err(()),
                })
                .collect()
        };
        let state = match self {
            BuiltinSpec::Register => Ok(BuiltinState::Register(value.clone())),
            BuiltinSpec::Counter => match value {
                Value::Int(n) => Ok(BuiltinState::Counter(*n)),
                _ => Err(()),
            },
            BuiltinSpec::Mutex => match value {
                Value::Bool(held) => Ok(BuiltinState::Mutex(*held)),
                _ => Err(()),
            },
            BuiltinSpec::Set => items().map(|i| BuiltinState::Set(i.iter().cloned().collect())),
            BuiltinSpec::Queue => items().map(|i| BuiltinState::Queue(i.iter().cloned().collect())),
            BuiltinSpec::Stack => items().map(|i| BuiltinState::Stack(i.to_vec())),
            BuiltinSpec::Deque => items().map(|i| BuiltinState::Deque(i.iter().cloned().collect())),
            BuiltinSpec::Snapshot => items().map(|i| BuiltinState::Snapshot(i.to_vec())),
            BuiltinSpec::Map => pairs().map(|p| BuiltinState::Map(p.into_iter().collect())),
            // A register never written reads `null`: a `null` entry is the same as none.
            BuiltinSpec::MultiRegister => pairs().map(|p| {
                BuiltinState::MultiRegister(
                    p.into_iter().filter(|(_, v)| *v != Value::Null).collect(),
                )
            }),
            BuiltinSpec::Kv => pairs().and_then(|p| KvState::of(&p).map(BuiltinState::Kv)),
        };
        state.map_err(|()| {
            let shape = match self {
                BuiltinSpec::Register => "any value",
                BuiltinSpec::Counter => "an integer, e.g. 5",
                BuiltinSpec::Mutex => "true (held) or false",
                BuiltinSpec::Set => "a vector or set of its elements, e.g. #{1 2}",
                BuiltinSpec::Queue => "a vector of its elements, head first, e.g. [1 2]",
                BuiltinSpec::Stack => "a vector of its elements, bottom first, e.g. [1 2]",
                BuiltinSpec::Deque => "a vector of its elements, left first, e.g. [1 2]",
                BuiltinSpec::Snapshot => "a vector of its cells, e.g. [0 0]",
                BuiltinSpec::Map | BuiltinSpec::MultiRegister => {
                    "a map from keys to values, e.g. {\"x\" 1}"
                }
                BuiltinSpec::Kv => "a map from keys to strings, e.g. {\"k\" \"x 0 y\"}",
            };
            format!(
                "the initial state of the built-in `{}` spec is {shape}; got {value}",
                self.as_str()
            )
        })
    }
}

impl Spec for BuiltinSpec {
    type State = BuiltinState;

    fn initial(&self) -> BuiltinState {
        match self {
            BuiltinSpec::Register => BuiltinState::Register(Value::Null),
            BuiltinSpec::Counter => BuiltinState::Counter(0),
            BuiltinSpec::Set => BuiltinState::Set(SetState::default()),
            BuiltinSpec::Map => BuiltinState::Map(MapState::default()),
            BuiltinSpec::Queue => BuiltinState::Queue(QueueState::default()),
            BuiltinSpec::Stack => BuiltinState::Stack(StackState::default()),
            BuiltinSpec::Deque => BuiltinState::Deque(DequeState::default()),
            BuiltinSpec::Snapshot => BuiltinState::Snapshot(vec![Value::Int(0), Value::Int(0)]),
            BuiltinSpec::Kv => BuiltinState::Kv(KvState::default()),
            BuiltinSpec::Mutex => BuiltinState::Mutex(false),
            BuiltinSpec::MultiRegister => BuiltinState::MultiRegister(MapState::default()),
        }
    }

    fn apply(&self, state: &BuiltinState, _thread: ThreadId, call: &Call) -> Apply<BuiltinState> {
        let ops = OpTable::new(self.as_str(), call);
        match (self, state) {
            (BuiltinSpec::Register, BuiltinState::Register(s)) => {
                map(scalar::register(&ops, s), BuiltinState::Register)
            }
            (BuiltinSpec::Counter, BuiltinState::Counter(s)) => {
                map(scalar::counter(&ops, *s), BuiltinState::Counter)
            }
            (BuiltinSpec::Set, BuiltinState::Set(s)) => {
                map(collection::set(&ops, s), BuiltinState::Set)
            }
            (BuiltinSpec::Map, BuiltinState::Map(s)) => {
                map(collection::map(&ops, s), BuiltinState::Map)
            }
            (BuiltinSpec::Queue, BuiltinState::Queue(s)) => {
                map(sequence::queue(&ops, s), BuiltinState::Queue)
            }
            (BuiltinSpec::Stack, BuiltinState::Stack(s)) => {
                map(sequence::stack(&ops, s), BuiltinState::Stack)
            }
            (BuiltinSpec::Deque, BuiltinState::Deque(s)) => {
                map(sequence::deque(&ops, s), BuiltinState::Deque)
            }
            (BuiltinSpec::Snapshot, BuiltinState::Snapshot(s)) => {
                map(scalar::snapshot(&ops, s), BuiltinState::Snapshot)
            }
            (BuiltinSpec::Kv, BuiltinState::Kv(s)) => map(kv::kv(&ops, s), BuiltinState::Kv),
            (BuiltinSpec::Mutex, BuiltinState::Mutex(held)) => {
                map(scalar::mutex(&ops, *held), BuiltinState::Mutex)
            }
            (BuiltinSpec::MultiRegister, BuiltinState::MultiRegister(s)) => map(
                collection::multi_register(&ops, s),
                BuiltinState::MultiRegister,
            ),
            (spec, state) => Apply::Invalid(format!(
                "internal error: state {state:?} does not belong to the built-in `{}` spec",
                spec.as_str()
            )),
        }
    }

    fn partition(&self, call: &Call) -> Option<Value> {
        let keyed: &[&str] = match self {
            BuiltinSpec::Set => collection::SET_KEYED,
            BuiltinSpec::Map => collection::MAP_KEYED,
            BuiltinSpec::Kv => kv::KEYED,
            _ => return None,
        };
        if keyed.contains(&call.op.as_str()) {
            call.args.first().cloned()
        } else {
            None
        }
    }

    fn name(&self) -> String {
        self.as_str().to_owned()
    }

    fn is_read_only(&self, call: &Call, result: Option<&Value>) -> bool {
        let op = call.op.as_str();
        // A result that shows the operation changed nothing: only where no other reading of
        // that result exists (a queue's `poll` → null could also have removed a null element).
        let failed = result == Some(&Value::Bool(false));
        match self {
            BuiltinSpec::Register => scalar::register_reads_only(call, result),
            BuiltinSpec::Counter => matches!(op, "get" | "read"),
            BuiltinSpec::Set => {
                matches!(op, "contains" | "size" | "read")
                    || failed && matches!(op, "add" | "insert" | "remove" | "delete")
            }
            BuiltinSpec::Map => matches!(
                op,
                "get" | "contains" | "containsKey" | "contains_key" | "size"
            ),
            BuiltinSpec::Queue | BuiltinSpec::Stack => {
                matches!(op, "peek" | "size" | "isEmpty" | "is_empty")
            }
            BuiltinSpec::Deque => matches!(
                op,
                "peekLeft"
                    | "peekFirst"
                    | "peekRight"
                    | "peekLast"
                    | "size"
                    | "isEmpty"
                    | "is_empty"
            ),
            BuiltinSpec::Snapshot => matches!(op, "read" | "scan"),
            BuiltinSpec::Kv => op == "get",
            BuiltinSpec::Mutex => false,
            BuiltinSpec::MultiRegister => op == "txn" && collection::reads_only(call),
        }
    }

    fn may_reach(
        &self,
        state: &BuiltinState,
        call: &Call,
        result: &Value,
        writers: &mut dyn Iterator<Item = (&Call, Option<&Value>)>,
    ) -> bool {
        match (self, state) {
            (BuiltinSpec::Register, BuiltinState::Register(value)) => {
                scalar::register_may_read(value, call, result, writers)
            }
            (BuiltinSpec::Kv, BuiltinState::Kv(kv)) => kv::may_get(kv, call, result, writers),
            _ => true,
        }
    }

    fn checks_reach(&self, call: &Call) -> bool {
        match self {
            BuiltinSpec::Register => scalar::is_register_read(call),
            BuiltinSpec::Kv => call.op == "get",
            _ => false,
        }
    }

    fn matches(&self, call: &Call, expected: &Value, observed: &Value) -> bool {
        if expected == observed {
            return true;
        }
        // An insertion that always succeeds is written `void` in some models and `boolean` in
        // others (Java's `offer`); both mean "done".
        let acknowledges = matches!(
            self,
            BuiltinSpec::Queue | BuiltinSpec::Stack | BuiltinSpec::Deque
        ) && sequence::is_insertion(&call.op);
        acknowledges
            && matches!(
                (expected, observed),
                (Value::Unit, Value::Bool(true)) | (Value::Bool(true), Value::Unit)
            )
    }
}

/// Changes the state type of an [`Apply`].
fn map<S, T>(apply: Apply<S>, f: impl FnOnce(S) -> T) -> Apply<T> {
    match apply {
        Apply::Returns { value, state } => Apply::Returns {
            value,
            state: f(state),
        },
        Apply::Blocks => Apply::Blocks,
        Apply::Invalid(message) => Apply::Invalid(message),
    }
}

/// The call being applied, with the spec's name for error messages.
pub(crate) struct OpTable<'c> {
    spec: &'static str,
    call: &'c Call,
}

impl<'c> OpTable<'c> {
    fn new(spec: &'static str, call: &'c Call) -> Self {
        OpTable { spec, call }
    }

    /// The operation name.
    pub(crate) fn op(&self) -> &'c str {
        &self.call.op
    }

    /// The arguments, when there are exactly `n` of them; otherwise an `Invalid` message.
    pub(crate) fn args<const N: usize>(&self) -> Result<&'c [Value; N], String> {
        self.call.args.as_slice().try_into().map_err(|_| {
            let plural = if N == 1 { "" } else { "s" };
            format!(
                "`{}` of the built-in `{}` spec takes {N} argument{plural}, got {} in `{}`",
                self.call.op,
                self.spec,
                self.call.args.len(),
                self.call
            )
        })
    }

    /// The message for an operation this spec does not have; `ops` lists the ones it has.
    pub(crate) fn unknown(&self, ops: &str) -> String {
        format!(
            "`{}` is not an operation of the built-in `{}` spec (it has {ops})",
            self.call.op, self.spec
        )
    }

    /// The message for an argument of the wrong kind.
    pub(crate) fn bad_arg(&self, what: &str, got: &Value) -> String {
        format!(
            "`{}` of the built-in `{}` spec needs {what}, got {got} in `{}`",
            self.call.op, self.spec, self.call
        )
    }
}

/// `Apply::Returns`.
pub(crate) fn ret<S>(value: Value, state: S) -> Apply<S> {
    Apply::Returns { value, state }
}

/// Runs `f` and turns its argument errors into `Apply::Invalid`.
pub(crate) fn checked<S>(f: impl FnOnce() -> Result<Apply<S>, String>) -> Apply<S> {
    f().unwrap_or_else(Apply::Invalid)
}

#[cfg(test)]
mod tests;
