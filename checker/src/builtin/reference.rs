//! The built-in specs described for people: every operation with its aliases, its arguments,
//! what it returns, and what it gives on the spec's initial (empty) state.
//!
//! [`specs_markdown`] renders `docs/specs.md`. Its last column is not written by hand: it is
//! what the spec itself returns, so the page cannot drift from the code, and a test checks that
//! every name listed here is accepted by its spec with the documented number of arguments.

use std::fmt::Write as _;

use fgvt_tree::{Call, Value};

use super::{builtin, BuiltinSpec};
use crate::spec::{Apply, Spec};

/// One operation of a built-in spec as documented: its names and an example call.
#[derive(Clone, Copy, Debug)]
pub struct OpDoc {
    /// The operation's names: the usual one first, then its aliases.
    pub names: &'static [&'static str],
    /// Example arguments (their number is the operation's arity).
    pub args: fn() -> Vec<Value>,
    /// What it returns, for people.
    pub returns: &'static str,
}

/// One built-in spec as documented.
#[derive(Clone, Copy, Debug)]
pub struct SpecDoc {
    /// The name `"spec"` takes.
    pub name: &'static str,
    /// What it models and its initial state.
    pub about: &'static str,
    /// Its operations.
    pub ops: &'static [OpDoc],
}

const fn op(
    names: &'static [&'static str],
    args: fn() -> Vec<Value>,
    returns: &'static str,
) -> OpDoc {
    OpDoc {
        names,
        args,
        returns,
    }
}

fn none() -> Vec<Value> {
    Vec::new()
}
fn one() -> Vec<Value> {
    vec![Value::Int(1)]
}
fn two() -> Vec<Value> {
    vec![Value::Int(1), Value::Int(2)]
}
fn key() -> Vec<Value> {
    vec![Value::Str("k".into())]
}
fn txn() -> Vec<Value> {
    let step = |kind: &str, key: i64, value: Value| {
        Value::Tuple(vec![Value::Str(kind.into()), Value::Int(key), value])
    };
    vec![Value::Tuple(vec![
        step(":write", 1, Value::Int(5)),
        step(":read", 1, Value::Null),
        step(":read", 2, Value::Null),
    ])]
}
fn key_value() -> Vec<Value> {
    vec![Value::Str("k".into()), Value::Str("v".into())]
}

const SIZE: OpDoc = op(&["size"], none, "the number of elements");
const IS_EMPTY: OpDoc = op(&["isEmpty", "is_empty"], none, "whether it has no element");

/// Every built-in spec, in [`super::BUILTIN_NAMES`] order.
pub const SPECS: &[SpecDoc] = &[
    SpecDoc {
        name: "register",
        about: "One read/write/compare-and-set cell, initially `null` (Jepsen etcd logs).",
        ops: &[
            op(&["read", "get"], none, "the value"),
            op(&["write", "set"], one, "`()`"),
            op(&["cas", "compareAndSet", "compare_and_set"], two, "whether the value was the first argument (then it becomes the second)"),
        ],
    },
    SpecDoc {
        name: "counter",
        about: "An integer, initially 0.",
        ops: &[
            op(&["get", "read"], none, "the value"),
            op(&["inc", "increment"], none, "`()`"),
            op(&["dec", "decrement"], none, "`()`"),
            op(&["add"], one, "`()`"),
            op(&["incrementAndGet"], none, "the new value"),
            op(&["decrementAndGet"], none, "the new value"),
            op(&["addAndGet"], one, "the new value"),
            op(&["getAndIncrement"], none, "the old value"),
            op(&["getAndDecrement"], none, "the old value"),
            op(&["getAndAdd"], one, "the old value"),
        ],
    },
    SpecDoc {
        name: "set",
        about: "A set, initially empty; histories are checked per key.",
        ops: &[
            op(&["add", "insert"], one, "whether the key was newly added"),
            op(&["remove", "delete"], one, "whether the key was present"),
            op(&["contains"], one, "whether the key is present"),
            op(&["size"], none, "the number of keys"),
            op(&["read"], none, "every element, as a sorted tuple (Jepsen's set `read`; checks the history whole)"),
        ],
    },
    SpecDoc {
        name: "map",
        about: "A map, initially empty; histories are checked per key.",
        ops: &[
            op(&["put"], two, "the previous value, or `null`"),
            op(&["putIfAbsent", "put_if_absent"], two, "the previous value, or `null` (then it puts)"),
            op(&["get"], one, "the value, or `null`"),
            op(&["remove", "delete"], one, "the previous value, or `null`"),
            op(&["contains", "containsKey", "contains_key"], one, "whether the key is present"),
            op(&["size"], none, "the number of keys"),
        ],
    },
    SpecDoc {
        name: "queue",
        about: "A FIFO queue, initially empty. An insertion may return `()` or `true`.",
        ops: &[
            op(&["offer", "add"], one, "`true` (`()` accepted)"),
            op(&["enqueue", "push_back", "put"], one, "`()` (`true` accepted)"),
            op(&["poll", "dequeue", "remove", "tryTake", "try_take"], none, "the head, or `null` when empty"),
            op(&["take"], none, "the head; **blocks** when empty"),
            op(&["peek"], none, "the head without removing it, or `null`"),
            SIZE,
            IS_EMPTY,
        ],
    },
    SpecDoc {
        name: "stack",
        about: "A LIFO stack, initially empty. A push may return `()` or `true`.",
        ops: &[
            op(&["push"], one, "`()` (`true` accepted)"),
            op(&["pop", "tryPop", "try_pop"], none, "the top, or `null` when empty"),
            op(&["peek"], none, "the top without removing it, or `null`"),
            SIZE,
            IS_EMPTY,
        ],
    },
    SpecDoc {
        name: "deque",
        about: "A double-ended queue, initially empty. A push may return `()` or `true`.",
        ops: &[
            op(&["pushLeft", "addFirst", "offerFirst", "push_front"], one, "`()` (`true` accepted)"),
            op(&["pushRight", "addLast", "offerLast", "push_back"], one, "`()` (`true` accepted)"),
            op(&["popLeft", "pollFirst", "pop_front"], none, "the left end, or `null` when empty"),
            op(&["popRight", "pollLast", "pop_back"], none, "the right end, or `null` when empty"),
            op(&["peekLeft", "peekFirst"], none, "the left end, or `null`"),
            op(&["peekRight", "peekLast"], none, "the right end, or `null`"),
            SIZE,
            IS_EMPTY,
        ],
    },
    SpecDoc {
        name: "snapshot",
        about: "Cells read all at once (PairSnapshot): two cells, both 0; a write past the end grows the array with 0s.",
        ops: &[
            op(&["read", "scan"], none, "a tuple of every cell"),
            op(&["write", "update"], two, "`()`: writes the second argument into cell number the first"),
        ],
    },
    SpecDoc {
        name: "kv",
        about: "A store from string keys to string values, every key initially `\"\"`; histories are checked per key (kv logs).",
        ops: &[
            op(&["get"], key, "the value, `\"\"` when absent"),
            op(&["put"], key_value, "`()`"),
            op(&["append"], key_value, "`()`: concatenates"),
        ],
    },
    SpecDoc {
        name: "mutex",
        about: "A lock, initially free (Jepsen's mutex).",
        ops: &[
            op(&["acquire", "lock"], none, "`()`; **blocks** while the lock is held"),
            op(&["release", "unlock"], none, "`()`; on a free lock `false`, which no observed release matches"),
        ],
    },
    SpecDoc {
        name: "multi-register",
        about: "Registers by key, each initially `null`, read and written by transactions (Jepsen's multi-register; checked whole).",
        ops: &[op(&["txn"], txn, "the transaction with every read's value filled in")],
    },
];

/// What `spec` does with `call` on its initial state, for the page: a value, "blocks", or the
/// spec's complaint.
fn on_initial(spec: BuiltinSpec, call: &Call) -> String {
    match spec.apply(&spec.initial(), 0, call) {
        Apply::Returns { value, .. } => format!("`{value}`"),
        Apply::Blocks => "blocks".into(),
        Apply::Invalid(message) => format!("invalid: {message}"),
    }
}

/// The example call of `op` under its `n`th name.
pub fn example(op: &OpDoc, name: usize) -> Call {
    Call::new(op.names[name], (op.args)())
}

/// `docs/specs.md`: the built-in specs, their operations and what each gives on the initial
/// state (computed by running the spec).
pub fn specs_markdown() -> String {
    let mut out = String::from(
        "# Built-in specs\n\n\
         <!-- Generated by `fgvt_checker::builtin::reference::specs_markdown`; do not edit. \
         `FGVT_BLESS=1 cargo test -p fgvt-checker --test docs` rewrites it. -->\n\n\
         A test names its spec with `\"spec\"`: `\"self\"` (the object's own serial runs, the \
         default), a model `\"file.fgv#Object\"`, or one of the built-in specs below. \
         `fgvt check-history --spec NAME` takes the same names.\n\n\
         An operation the spec does not know, or a wrong number of arguments, is an error (exit \
         2), not a verdict. Results are compared exactly, except that an insertion into a \
         queue, stack or deque that returns `true` matches `()` and the other way round. The \
         last column is what the spec returns for the example call on its initial state: \
         `null` is the empty case of `pop`, `poll`, `peek` and `get`.\n\n\
         `fgvt check-history --initial EDN` (or a JSON history's `\"initial\"`) starts a spec \
         from another state: any value for a register, an integer for a counter, `true` for a \
         held mutex, the elements for a set, queue (head first), stack (bottom first), deque or \
         snapshot (`[1 2]`), and a map for a map, kv store or multi-register \
         (`{\"k\" \"v\"}`; in JSON, `[[\"k\", \"v\"]]`).\n",
    );
    for doc in SPECS {
        let spec = builtin(doc.name).expect("every documented spec exists");
        let _ = write!(out, "\n## `{}`\n\n{}\n\n", doc.name, doc.about);
        out.push_str("| operation | aliases | returns | example on the initial state |\n");
        out.push_str("|---|---|---|---|\n");
        for op in doc.ops {
            let call = example(op, 0);
            let params: Vec<&str> = ["a", "b", "c"].into_iter().take(call.args.len()).collect();
            let signature = format!("{}({})", op.names[0], params.join(", "));
            let aliases: Vec<String> = op.names[1..].iter().map(|n| format!("`{n}`")).collect();
            let _ = writeln!(
                out,
                "| `{signature}` | {} | {} | `{call}` → {} |",
                if aliases.is_empty() {
                    "—".to_string()
                } else {
                    aliases.join(", ")
                },
                op.returns,
                on_initial(spec, &call)
            );
        }
    }
    out
}
