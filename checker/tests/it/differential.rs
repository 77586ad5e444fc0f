//! Differential test: the WGL checker against a brute-force oracle on many thousands of small
//! random histories (≤ 8 operations, 2–4 threads; register, set, queue, stack, map, kv; with and
//! without pending operations, stuck or not).
//!
//! The histories come from simulated executions (random interleavings of call, linearization
//! point and return), so many are linearizable; some get a perturbed result, a swapped pair of
//! events, or a thread cut short, so many are not.

use fgvt_checker::explain::Observed;
use fgvt_checker::{builtin, check, Apply, BuiltinSpec, CheckOptions, Spec, Verdict};
use fgvt_tree::{Call, CoarseEvent, History, Operation, Value};
use proptest::prelude::*;
use proptest::test_runner::{RngAlgorithm, TestRng};

/// The seeded random source of these histories: proptest's deterministic generator, so the
/// same seed draws the same history everywhere.
struct Draws(TestRng);

impl Draws {
    fn new(seed: u64) -> Draws {
        let bytes = [seed.to_le_bytes(), seed.rotate_left(32).to_le_bytes()].concat();
        Draws(TestRng::from_seed(RngAlgorithm::XorShift, &bytes))
    }

    /// A number drawn uniformly from `0..n`.
    fn below(&mut self, n: usize) -> usize {
        self.0.random_range(0..n)
    }
}

const SPECS: [&str; 6] = ["register", "set", "queue", "stack", "map", "kv"];

/// A random call of `spec`.
fn random_call(spec: &str, rng: &mut Draws) -> Call {
    let v = Value::Int(rng.below(3) as i64);
    let w = Value::Int(rng.below(3) as i64);
    let (op, args): (&str, Vec<Value>) = match (spec, rng.below(4)) {
        ("register", 0 | 1) => ("read", vec![]),
        ("register", 2) => ("write", vec![v]),
        ("register", _) => ("cas", vec![v, w]),
        ("set", 0) => ("add", vec![v]),
        ("set", 1) => ("remove", vec![v]),
        ("set", _) => ("contains", vec![v]),
        ("queue", 0) => ("offer", vec![v]),
        ("queue", 1) => ("poll", vec![]),
        ("queue", 2) => ("take", vec![]),
        ("queue", _) => ("peek", vec![]),
        ("stack", 0 | 1) => ("push", vec![v]),
        ("stack", 2) => ("pop", vec![]),
        ("map", 0) => ("put", vec![v, w]),
        ("map", 1) => ("remove", vec![v]),
        ("map", 2) => ("get", vec![v]),
        ("map", _) => ("contains", vec![v]),
        // Two keys, so that the history splits; short values, so that reads can match.
        ("kv", n) => {
            let key = Value::Str(["a", "b"][rng.below(2)].into());
            let text = Value::Str(["0", "1", "12", ""][rng.below(4)].into());
            match n {
                0 => ("put", vec![key, text]),
                1 => ("append", vec![key, text]),
                _ => ("get", vec![key]),
            }
        }
        (_, _) => ("peek", vec![]),
    };
    Call::new(op, args)
}

/// A random result to replace a real one with.
fn random_value(rng: &mut Draws) -> Value {
    match rng.below(7) {
        0 => Value::Null,
        1 => Value::Unit,
        6 => Value::Str(["", "0", "01", "10"][rng.below(4)].into()),
        2 => Value::Bool(rng.below(2) == 0),
        _ => Value::Int(rng.below(3) as i64),
    }
}

/// Where a simulated thread is.
#[derive(Clone)]
enum Phase {
    Idle,
    Called(Call),
    Done(Value),
    /// Crashed or cut short: takes no more steps.
    Gone,
}

/// A history from a simulated execution of `spec`, then perhaps perturbed.
fn random_history(seed: u64) -> (&'static str, History) {
    let mut rng = Draws::new(seed);
    let name = SPECS[rng.below(SPECS.len())];
    let spec = builtin(name).unwrap();
    let threads = 2 + rng.below(3);
    let total = 1 + rng.below(8);
    let mut left: Vec<usize> = vec![0; threads];
    for i in 0..total {
        left[i % threads] += 1;
    }
    let crashes = rng.below(3) == 0;
    let mut state = spec.initial();
    let mut phases = vec![Phase::Idle; threads];
    let mut history = History::new();
    loop {
        // Threads that can move: not gone, not done, and not blocked at their linearization point.
        let movable: Vec<usize> = (0..threads)
            .filter(|&t| match &phases[t] {
                Phase::Idle => left[t] > 0,
                Phase::Called(call) => !matches!(spec.apply(&state, t, call), Apply::Blocks),
                Phase::Done(_) => true,
                Phase::Gone => false,
            })
            .collect();
        if movable.is_empty() {
            break;
        }
        let t = movable[rng.below(movable.len())];
        if crashes && !matches!(phases[t], Phase::Idle) && rng.below(6) == 0 {
            phases[t] = Phase::Gone;
            continue;
        }
        phases[t] = match std::mem::replace(&mut phases[t], Phase::Idle) {
            Phase::Idle => {
                let call = random_call(name, &mut rng);
                history.call(t, call.clone());
                left[t] -= 1;
                Phase::Called(call)
            }
            Phase::Called(call) => match spec.apply(&state, t, &call) {
                Apply::Returns { value, state: next } => {
                    state = next;
                    Phase::Done(value)
                }
                other => panic!("{other:?}"),
            },
            Phase::Done(value) => {
                history.ret(t, value);
                Phase::Idle
            }
            Phase::Gone => Phase::Gone,
        };
    }
    // An execution that ended with threads blocked is stuck, unless we pretend it was recorded
    // by a crash-prone client; sometimes call any history stuck.
    let blocked = phases.iter().any(|p| matches!(p, Phase::Called(_)));
    history.stuck = match rng.below(4) {
        0 => true,
        1 => false,
        _ => blocked,
    };
    perturb(&mut history, &mut rng);
    (name, history)
}

/// Sometimes changes a result, makes one unknown, or swaps two adjacent events of different threads.
fn perturb(history: &mut History, rng: &mut Draws) {
    let returns: Vec<usize> = (0..history.events.len())
        .filter(|&i| matches!(history.events[i], CoarseEvent::Return { .. }))
        .collect();
    match rng.below(5) {
        0 | 1 if !returns.is_empty() => {
            let i = returns[rng.below(returns.len())];
            if let CoarseEvent::Return { value, .. } = &mut history.events[i] {
                *value = if rng.below(5) == 0 {
                    None
                } else {
                    Some(random_value(rng))
                };
            }
        }
        2 if history.events.len() > 1 => {
            let i = rng.below(history.events.len() - 1);
            if history.events[i].thread() != history.events[i + 1].thread() {
                history.events.swap(i, i + 1);
            }
        }
        _ => {}
    }
}

/// The brute-force oracle: tries every order of the operations that respects real time,
/// without memoization, lists or partitioning.
fn oracle(spec: &BuiltinSpec, ops: &[Operation], stuck: bool) -> bool {
    fn go(
        spec: &BuiltinSpec,
        ops: &[Operation],
        stuck: bool,
        placed: &mut Vec<bool>,
        state: &<BuiltinSpec as Spec>::State,
    ) -> bool {
        let all_completed = ops
            .iter()
            .zip(placed.iter())
            .all(|(op, &p)| p || op.ret.is_none());
        if all_completed {
            let pending_ok = !stuck
                || ops
                    .iter()
                    .filter(|op| op.ret.is_none())
                    .all(|op| matches!(spec.apply(state, op.thread, &op.call), Apply::Blocks));
            if pending_ok {
                return true;
            }
        }
        for i in 0..ops.len() {
            if placed[i] || (stuck && ops[i].ret.is_none()) {
                continue;
            }
            let must_wait = (0..ops.len()).any(|j| {
                !placed[j]
                    && ops[j]
                        .ret
                        .as_ref()
                        .is_some_and(|r| r.index < ops[i].call_index)
            });
            if must_wait {
                continue;
            }
            let Apply::Returns { value, state: next } =
                spec.apply(state, ops[i].thread, &ops[i].call)
            else {
                continue;
            };
            let observed = ops[i].ret.as_ref().and_then(|r| r.value.as_ref());
            if observed.is_some_and(|o| !spec.matches(&ops[i].call, &value, o)) {
                continue;
            }
            placed[i] = true;
            let found = go(spec, ops, stuck, placed, &next);
            placed[i] = false;
            if found {
                return true;
            }
        }
        false
    }
    go(
        spec,
        ops,
        stuck,
        &mut vec![false; ops.len()],
        &spec.initial(),
    )
}

/// Checks a witness independently: real time, results, and blocking in a stuck history.
fn valid_witness(
    spec: &BuiltinSpec,
    ops: &[Operation],
    stuck: bool,
    order: &[usize],
) -> Result<(), String> {
    let mut state = spec.initial();
    for (pos, &i) in order.iter().enumerate() {
        if stuck && ops[i].ret.is_none() {
            return Err(format!("pending op {i} took effect in a stuck history"));
        }
        if let Some(&j) = order[pos + 1..].iter().find(|&&j| {
            ops[j]
                .ret
                .as_ref()
                .is_some_and(|r| r.index < ops[i].call_index)
        }) {
            return Err(format!("op {j} returned before op {i} was called"));
        }
        let Apply::Returns { value, state: next } = spec.apply(&state, ops[i].thread, &ops[i].call)
        else {
            return Err(format!("op {i} blocks"));
        };
        if let Some(Some(observed)) = ops[i].ret.as_ref().map(|r| &r.value) {
            if !spec.matches(&ops[i].call, &value, observed) {
                return Err(format!("op {i} returns {value}, observed {observed}"));
            }
        }
        state = next;
    }
    for (i, op) in ops.iter().enumerate() {
        if op.ret.is_some() && !order.contains(&i) {
            return Err(format!("completed op {i} is missing"));
        }
        if stuck
            && op.ret.is_none()
            && !matches!(spec.apply(&state, op.thread, &op.call), Apply::Blocks)
        {
            return Err(format!("pending op {i} does not block"));
        }
    }
    Ok(())
}

/// Runs the checker (partitioned and not) and the oracle on the history of `seed`.
fn compare(seed: u64) -> Result<bool, TestCaseError> {
    let (name, history) = random_history(seed);
    let Ok(ops) = history.operations() else {
        return Ok(false);
    };
    let spec = builtin(name).unwrap();
    let expected = oracle(&spec, &ops, history.stuck);
    for partition in [true, false] {
        let options = CheckOptions {
            partition,
            ..CheckOptions::default()
        };
        let outcome =
            check(&spec, &history, &options).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let context = format!("{name} (partition {partition}) {history}");
        match &outcome.verdict {
            Verdict::Linearizable { order } => {
                prop_assert!(
                    expected,
                    "checker says linearizable, oracle says not: {context}"
                );
                valid_witness(&spec, &ops, history.stuck, order).map_err(|e| {
                    TestCaseError::fail(format!("bad witness {order:?}: {e}: {context}"))
                })?;
            }
            Verdict::NotLinearizable(explanation) => {
                prop_assert!(
                    !expected,
                    "checker says NOT linearizable, oracle says it is: {context}\n{explanation}"
                );
                // The prefix is a real one: the observed results agree with what it returns.
                for step in &explanation.prefix {
                    if let Observed::Returned(v) = &step.op.observed {
                        prop_assert!(
                            spec.matches(&step.op.call, &step.returns, v),
                            "{context}\n{explanation}"
                        );
                    }
                }
                if let Some(orders) = &explanation.orders {
                    prop_assert!(
                        orders.iter().all(|o| o.failure.is_some()),
                        "an order is accepted: {context}\n{explanation}"
                    );
                }
                prop_assert!(!explanation.to_string().is_empty());
            }
            Verdict::Unknown => prop_assert!(false, "no deadline, yet unknown: {context}"),
        }
    }
    Ok(expected)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12_000, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn the_checker_agrees_with_brute_force(seed in any::<u64>()) {
        compare(seed)?;
    }
}

/// The generator is not degenerate: it produces both verdicts, stuck histories and pending operations.
#[test]
fn the_random_histories_cover_every_case() {
    let (mut yes, mut no, mut stuck, mut pending) = (0, 0, 0, 0);
    for seed in 0..2_000 {
        let (_, history) = random_history(seed);
        let Ok(ops) = history.operations() else {
            continue;
        };
        stuck += usize::from(history.stuck && ops.iter().any(|o| o.ret.is_none()));
        pending += usize::from(!history.stuck && ops.iter().any(|o| o.ret.is_none()));
        if compare(seed).unwrap() {
            yes += 1;
        } else {
            no += 1;
        }
    }
    eprintln!("linearizable {yes}, not {no}, stuck with pending ops {stuck}, not stuck with pending ops {pending}");
    for count in [yes, no, stuck, pending] {
        assert!(
            count > 200,
            "linearizable {yes}, not {no}, stuck {stuck}, pending {pending}"
        );
    }
}
