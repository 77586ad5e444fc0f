use super::*;

fn int(i: i64) -> Value {
    Value::Int(i)
}

fn s(v: &str) -> Value {
    Value::Str(v.into())
}

/// Runs `ops` (name, args, expected result) from the initial state of `spec`.
fn run(spec: &str, ops: &[(&str, Vec<Value>, Value)]) {
    let spec = builtin(spec).unwrap();
    let mut state = spec.initial();
    for (op, args, expected) in ops {
        let call = Call::new(*op, args.clone());
        match spec.apply(&state, 0, &call) {
            Apply::Returns { value, state: next } => {
                assert_eq!(&value, expected, "{} {call}", spec.as_str());
                state = next;
            }
            other => panic!("{} {call}: {other:?}", spec.as_str()),
        }
    }
}

fn apply_once(
    spec: &str,
    state: Option<BuiltinState>,
    op: &str,
    args: Vec<Value>,
) -> Apply<BuiltinState> {
    let spec = builtin(spec).unwrap();
    spec.apply(
        &state.unwrap_or_else(|| spec.initial()),
        0,
        &Call::new(op, args),
    )
}

#[test]
fn every_name_is_found() {
    for name in BUILTIN_NAMES {
        assert_eq!(builtin(name).unwrap().as_str(), *name);
        assert_eq!(builtin(name).unwrap().name(), *name);
    }
    assert_eq!(builtin("Queue"), Some(BuiltinSpec::Queue));
    assert_eq!(builtin("frob"), None);
}

#[test]
fn register_reads_writes_and_cas() {
    run(
        "register",
        &[
            ("read", vec![], Value::Null),
            ("write", vec![int(3)], Value::Unit),
            ("get", vec![], int(3)),
            ("cas", vec![int(2), int(4)], Value::Bool(false)),
            ("cas", vec![int(3), int(4)], Value::Bool(true)),
            ("set", vec![int(1)], Value::Unit),
            ("compareAndSet", vec![int(1), int(0)], Value::Bool(true)),
            ("read", vec![], int(0)),
        ],
    );
}

#[test]
fn counter_counts() {
    run(
        "counter",
        &[
            ("get", vec![], int(0)),
            ("inc", vec![], Value::Unit),
            ("increment", vec![], Value::Unit),
            ("add", vec![int(5)], Value::Unit),
            ("dec", vec![], Value::Unit),
            ("read", vec![], int(6)),
            ("incrementAndGet", vec![], int(7)),
            ("getAndIncrement", vec![], int(7)),
            ("getAndAdd", vec![int(-8)], int(8)),
            ("decrementAndGet", vec![], int(-1)),
        ],
    );
}

#[test]
fn set_adds_removes_and_contains() {
    run(
        "set",
        &[
            ("contains", vec![int(1)], Value::Bool(false)),
            ("add", vec![int(1)], Value::Bool(true)),
            ("insert", vec![int(1)], Value::Bool(false)),
            ("contains", vec![int(1)], Value::Bool(true)),
            ("size", vec![], int(1)),
            ("remove", vec![int(1)], Value::Bool(true)),
            ("delete", vec![int(1)], Value::Bool(false)),
        ],
    );
    let spec = BuiltinSpec::Set;
    assert_eq!(
        spec.partition(&Call::new("add", vec![int(4)])),
        Some(int(4))
    );
    assert_eq!(spec.partition(&Call::new("size", vec![])), None);
}

#[test]
fn map_puts_gets_and_removes() {
    run(
        "map",
        &[
            ("get", vec![int(1)], Value::Null),
            ("put", vec![int(1), s("a")], Value::Null),
            ("put", vec![int(1), s("b")], s("a")),
            ("putIfAbsent", vec![int(1), s("c")], s("b")),
            ("containsKey", vec![int(1)], Value::Bool(true)),
            ("remove", vec![int(1)], s("b")),
            ("contains", vec![int(1)], Value::Bool(false)),
            ("remove", vec![int(1)], Value::Null),
        ],
    );
    assert_eq!(
        BuiltinSpec::Map.partition(&Call::new("put", vec![int(2), int(3)])),
        Some(int(2))
    );
}

#[test]
fn queue_is_fifo_and_take_blocks_when_empty() {
    run(
        "queue",
        &[
            ("poll", vec![], Value::Null),
            ("offer", vec![int(1)], Value::Bool(true)),
            ("enqueue", vec![int(2)], Value::Unit),
            ("peek", vec![], int(1)),
            ("size", vec![], int(2)),
            ("take", vec![], int(1)),
            ("dequeue", vec![], int(2)),
            ("isEmpty", vec![], Value::Bool(true)),
        ],
    );
    assert_eq!(apply_once("queue", None, "take", vec![]), Apply::Blocks);
    // `offer` may be written to return nothing.
    let offer = Call::new("offer", vec![int(1)]);
    assert!(BuiltinSpec::Queue.matches(&offer, &Value::Bool(true), &Value::Unit));
    assert!(!BuiltinSpec::Queue.matches(&offer, &Value::Bool(true), &Value::Bool(false)));
    assert!(!BuiltinSpec::Queue.matches(&Call::new("poll", vec![]), &Value::Null, &Value::Unit));
}

#[test]
fn stack_is_lifo() {
    run(
        "stack",
        &[
            ("pop", vec![], Value::Null),
            ("push", vec![int(1)], Value::Unit),
            ("push", vec![int(2)], Value::Unit),
            ("peek", vec![], int(2)),
            ("size", vec![], int(2)),
            ("pop", vec![], int(2)),
            ("tryPop", vec![], int(1)),
            ("pop", vec![], Value::Null),
        ],
    );
}

#[test]
fn deque_works_at_both_ends() {
    run(
        "deque",
        &[
            ("pushLeft", vec![int(1)], Value::Unit),
            ("pushRight", vec![int(2)], Value::Unit),
            ("addFirst", vec![int(0)], Value::Unit),
            ("peekLast", vec![], int(2)),
            ("popRight", vec![], int(2)),
            ("popLeft", vec![], int(0)),
            ("pollLast", vec![], int(1)),
            ("pollFirst", vec![], Value::Null),
            ("size", vec![], int(0)),
        ],
    );
}

#[test]
fn snapshot_reads_all_cells_and_grows() {
    run(
        "snapshot",
        &[
            ("read", vec![], Value::Tuple(vec![int(0), int(0)])),
            ("write", vec![int(0), int(2)], Value::Unit),
            ("read", vec![], Value::Tuple(vec![int(2), int(0)])),
            ("write", vec![int(3), int(1)], Value::Unit),
            (
                "read",
                vec![],
                Value::Tuple(vec![int(2), int(0), int(0), int(1)]),
            ),
        ],
    );
}

#[test]
fn kv_appends_strings() {
    run(
        "kv",
        &[
            ("get", vec![s("k")], s("")),
            ("append", vec![s("k"), s("x 0 0 y")], Value::Unit),
            ("append", vec![s("k"), s("x 0 1 y")], Value::Unit),
            ("get", vec![s("k")], s("x 0 0 yx 0 1 y")),
            ("put", vec![s("k"), s("z")], Value::Unit),
            ("get", vec![s("k")], s("z")),
            ("put", vec![s("k"), s("")], Value::Unit),
            ("get", vec![s("k")], s("")),
        ],
    );
    assert_eq!(
        BuiltinSpec::Kv.partition(&Call::new("get", vec![s("k")])),
        Some(s("k"))
    );
    // An empty put leaves the same state as no put at all.
    let spec = BuiltinSpec::Kv;
    let Apply::Returns { state, .. } =
        spec.apply(&spec.initial(), 0, &Call::new("put", vec![s("k"), s("")]))
    else {
        panic!()
    };
    assert_eq!(state, spec.initial());
}

#[test]
fn unknown_operations_and_bad_arity_are_invalid() {
    assert_eq!(
        apply_once("set", None, "frob", vec![]),
        Apply::Invalid("`frob` is not an operation of the built-in `set` spec (it has add, remove, contains, size, read)".into())
    );
    assert_eq!(
        apply_once("set", None, "add", vec![int(1), int(2)]),
        Apply::Invalid(
            "`add` of the built-in `set` spec takes 1 argument, got 2 in `add(1, 2)`".into()
        )
    );
    assert!(
        matches!(apply_once("register", None, "cas", vec![int(1)]), Apply::Invalid(m) if m.contains("takes 2 arguments"))
    );
    assert!(
        matches!(apply_once("counter", None, "add", vec![s("x")]), Apply::Invalid(m) if m.contains("needs an integer"))
    );
    assert!(
        matches!(apply_once("kv", None, "put", vec![s("k"), int(1)]), Apply::Invalid(m) if m.contains("needs a string"))
    );
    assert!(
        matches!(apply_once("counter", None, "inc", vec![int(1)]), Apply::Invalid(m) if m.contains("takes 0 arguments"))
    );
    for name in BUILTIN_NAMES {
        assert!(
            matches!(apply_once(name, None, "frob", vec![]), Apply::Invalid(m) if m.starts_with("`frob` is not an operation of the built-in")),
            "{name}"
        );
    }
}

/// kv states reached by different operations are one state when their entries are equal, with
/// one hash (the incremental hash of appends agrees with hashing the whole value).
#[test]
fn kv_states_equal_by_content_whatever_the_route() {
    let s = |v: &str| Value::Str(v.into());
    let after = |ops: &[(&str, Vec<Value>)]| {
        let spec = builtin("kv").unwrap();
        ops.iter().fold(spec.initial(), |state, (op, args)| {
            match spec.apply(&state, 0, &Call::new(*op, args.clone())) {
                Apply::Returns { state, .. } => state,
                other => panic!("{op}: {other:?}"),
            }
        })
    };
    let appended = after(&[
        ("append", vec![s("k"), s("x 1 ")]),
        ("append", vec![s("k"), s("y")]),
        ("put", vec![s("j"), s("z")]),
    ]);
    let put = after(&[
        ("put", vec![s("j"), s("z")]),
        ("put", vec![s("k"), s("x 1 y")]),
    ]);
    assert_eq!(appended, put);
    let same_hasher = std::hash::RandomState::new();
    use std::hash::BuildHasher;
    assert_eq!(same_hasher.hash_one(&appended), same_hasher.hash_one(&put));
    let other = after(&[
        ("put", vec![s("k"), s("x 1 z")]),
        ("put", vec![s("j"), s("z")]),
    ]);
    assert_ne!(appended, other);
    // Emptying a key is the same state as never writing it.
    let emptied = after(&[("put", vec![s("k"), s("v")]), ("put", vec![s("k"), s("")])]);
    assert_eq!(emptied, after(&[]));
}

/// A seeded `below(n)` source for the properties below.
fn draws(seed: u64) -> impl FnMut(usize) -> usize {
    let mut state = seed;
    move |n| {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((state >> 33) as usize) % n
    }
}

/// `value` with its leaves drawn again: small integers, short strings (`:keywords` stay).
fn vary(value: &Value, below: &mut impl FnMut(usize) -> usize) -> Value {
    match value {
        Value::Int(_) => int(below(3) as i64),
        Value::Str(k) if k.starts_with(':') => value.clone(),
        Value::Str(_) => s(["a", "b", "ab", ""][below(4)]),
        Value::Tuple(items) => Value::Tuple(items.iter().map(|v| vary(v, below)).collect()),
        other => other.clone(),
    }
}

/// A call of `spec` drawn among all its documented operations and aliases, with small
/// arguments; a multi-register transaction of one or two reads and writes.
fn random_call(spec: BuiltinSpec, below: &mut impl FnMut(usize) -> usize) -> Call {
    let doc = reference::SPECS
        .iter()
        .find(|d| d.name == spec.as_str())
        .expect("documented");
    let op = &doc.ops[below(doc.ops.len())];
    let name = op.names[below(op.names.len())];
    if name == "txn" {
        let steps = (0..1 + below(2))
            .map(|_| {
                let key = int(below(2) as i64);
                if below(2) == 0 {
                    Value::Tuple(vec![s(":read"), key, Value::Null])
                } else {
                    Value::Tuple(vec![s(":write"), key, int(below(3) as i64)])
                }
            })
            .collect();
        return Call::new(name, vec![Value::Tuple(steps)]);
    }
    let args = (op.args)().iter().map(|v| vary(v, below)).collect();
    Call::new(name, args)
}

/// A state of `spec` after a few random operations from the initial one.
fn random_state(spec: BuiltinSpec, below: &mut impl FnMut(usize) -> usize) -> BuiltinState {
    let mut state = spec.initial();
    for _ in 0..below(5) {
        if let Apply::Returns { state: next, .. } = spec.apply(&state, 0, &random_call(spec, below))
        {
            state = next;
        }
    }
    state
}

/// What `call` returns in `state`, if it returns.
fn result_in(
    spec: BuiltinSpec,
    state: &BuiltinState,
    call: &Call,
) -> Option<(Value, BuiltinState)> {
    match spec.apply(state, 0, call) {
        Apply::Returns { value, state } => Some((value, state)),
        _ => None,
    }
}

/// A result to observe for `call`: unknown, or what it returns in some random state.
fn random_result(
    spec: BuiltinSpec,
    call: &Call,
    below: &mut impl FnMut(usize) -> usize,
) -> Option<Value> {
    if below(4) == 0 {
        return None;
    }
    let state = random_state(spec, below);
    result_in(spec, &state, call).map(|(value, _)| value)
}

/// Whether some of `writers` (each once at most, in some order, each giving its observed result)
/// bring `state` to one where `read` returns `wanted`: every order of every subset, tried.
fn reachable(
    spec: BuiltinSpec,
    state: &BuiltinState,
    read: &Call,
    wanted: &Value,
    writers: &[(Call, Option<Value>)],
    used: &mut Vec<bool>,
) -> bool {
    if result_in(spec, state, read).is_some_and(|(v, _)| spec.matches(read, &v, wanted)) {
        return true;
    }
    for i in 0..writers.len() {
        if used[i] {
            continue;
        }
        let (call, observed) = &writers[i];
        let Some((value, next)) = result_in(spec, state, call) else {
            continue;
        };
        if observed
            .as_ref()
            .is_some_and(|o| !spec.matches(call, &value, o))
        {
            continue;
        }
        used[i] = true;
        let found = reachable(spec, &next, read, wanted, writers, used);
        used[i] = false;
        if found {
            return true;
        }
    }
    false
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(3_000))]

    /// An operation a spec calls read-only leaves the state as it was wherever its observed
    /// result is given: the search's forced reads rest on it.
    #[test]
    fn read_only_operations_leave_the_state_as_it_was(seed in proptest::prelude::any::<u64>()) {
        let mut below = draws(seed);
        for name in BUILTIN_NAMES {
            let spec = builtin(name).unwrap();
            let state = random_state(spec, &mut below);
            let call = random_call(spec, &mut below);
            let observed = random_result(spec, &call, &mut below);
            if !spec.is_read_only(&call, observed.as_ref()) {
                continue;
            }
            if let Some((value, next)) = result_in(spec, &state, &call) {
                if observed.as_ref().is_none_or(|o| spec.matches(&call, &value, o)) {
                    proptest::prop_assert_eq!(&next, &state, "{} {} → {:?}", name, call, observed);
                }
            }
        }
    }

    /// `may_reach` says no only when no order of the writers leads to a state that gives the
    /// read its result (brute force over every order of every subset).
    #[test]
    fn may_reach_rules_out_only_unreachable_reads(seed in proptest::prelude::any::<u64>()) {
        let mut below = draws(seed);
        for name in BUILTIN_NAMES {
            let spec = builtin(name).unwrap();
            let state = random_state(spec, &mut below);
            let read = random_call(spec, &mut below);
            let Some(wanted) = random_result(spec, &read, &mut below) else { continue };
            if !spec.is_read_only(&read, Some(&wanted)) {
                continue;
            }
            let writers: Vec<(Call, Option<Value>)> = (0..below(4))
                .map(|_| {
                    let call = random_call(spec, &mut below);
                    let observed = random_result(spec, &call, &mut below);
                    (call, observed)
                })
                .collect();
            let mut pairs = writers.iter().map(|(c, o)| (c, o.as_ref()));
            if !spec.may_reach(&state, &read, &wanted, &mut pairs) {
                proptest::prop_assert!(
                    !reachable(spec, &state, &read, &wanted, &writers, &mut vec![false; writers.len()]),
                    "{} from {:?}: {} → {} is reachable by {:?}", name, state, read, wanted, writers
                );
            }
        }
    }
}

/// Every built-in spec reads its initial state from a value of the documented shape, and says
/// what shape it wanted otherwise.
#[test]
fn initial_states_are_read_from_values() {
    let pair = |k: Value, v: Value| Value::Tuple(vec![k, v]);
    let tuple = |items: &[Value]| Value::Tuple(items.to_vec());
    let ok = |name: &str, value: Value| builtin(name).unwrap().state_of(&value).unwrap();
    assert_eq!(ok("register", int(3)), BuiltinState::Register(int(3)));
    assert_eq!(ok("counter", int(-2)), BuiltinState::Counter(-2));
    assert_eq!(ok("mutex", Value::Bool(true)), BuiltinState::Mutex(true));
    let set = ok("set", tuple(&[int(2), int(1), int(2)]));
    assert_eq!(
        set,
        BuiltinState::Set([int(1), int(2)].into_iter().collect())
    );
    let queue = ok("queue", tuple(&[int(7), int(8)]));
    assert_eq!(
        queue,
        BuiltinState::Queue([int(7), int(8)].into_iter().collect())
    );
    assert_eq!(
        ok("stack", tuple(&[int(1), int(2)])),
        BuiltinState::Stack(vec![int(1), int(2)])
    );
    let map = ok("map", tuple(&[pair(s("a"), int(1))]));
    assert_eq!(
        map,
        BuiltinState::Map([(s("a"), int(1))].into_iter().collect())
    );
    // A multi-register's null entry is no entry: it reads null either way.
    let registers = ok(
        "multi-register",
        tuple(&[pair(int(1), int(5)), pair(int(2), Value::Null)]),
    );
    assert_eq!(
        registers,
        BuiltinState::MultiRegister([(int(1), int(5))].into_iter().collect())
    );
    // kv: the state a put of the same values reaches.
    let kv = ok("kv", tuple(&[pair(s("k"), s("x 0 y"))]));
    let spec = builtin("kv").unwrap();
    let put = spec.apply(
        &spec.initial(),
        0,
        &Call::new("put", vec![s("k"), s("x 0 y")]),
    );
    assert!(matches!(put, Apply::Returns { state, .. } if state == kv));

    for (name, bad) in [
        ("counter", s("3")),
        ("mutex", int(1)),
        ("queue", int(1)),
        ("map", tuple(&[int(1)])),
        ("kv", tuple(&[pair(s("k"), int(1))])),
    ] {
        let err = builtin(name).unwrap().state_of(&bad).unwrap_err();
        assert!(
            err.starts_with(&format!(
                "the initial state of the built-in `{name}` spec is "
            )),
            "{err}"
        );
        assert!(err.ends_with(&format!("got {bad}")), "{err}");
    }
}

/// A spec started elsewhere answers from there, and is the inner spec in everything else.
#[test]
fn an_initialized_spec_starts_from_its_state() {
    use crate::spec::Initialized;
    let register = builtin("register").unwrap();
    let spec = Initialized::new(register, register.state_of(&int(4)).unwrap());
    let read = Call::new("read", vec![]);
    assert!(matches!(
        spec.apply(&spec.initial(), 0, &read),
        Apply::Returns { value, .. } if value == int(4)
    ));
    assert_eq!(spec.name(), "register");
    assert!(spec.is_read_only(&read, None));
    let kv = Initialized::new(builtin("kv").unwrap(), builtin("kv").unwrap().initial());
    assert_eq!(kv.partition(&Call::new("get", vec![s("k")])), Some(s("k")));
}
