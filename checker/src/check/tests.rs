use std::time::{Duration, Instant};

use super::*;
use crate::builtin::{builtin, BuiltinSpec};
use crate::explain::{Observed, PrefixStep, Reason};
use crate::spec::Apply;
use crate::workload::generate_set_history;
use fgvt_tree::Call;

/// [`generate_set_history`] with the draws of proptest's deterministic generator seeded by `seed`.
fn set_history(threads: usize, ops_per_thread: usize, seed: u64) -> History {
    use proptest::prelude::RngExt;
    use proptest::test_runner::{RngAlgorithm, TestRng};
    let bytes = [seed.to_le_bytes(), seed.rotate_left(32).to_le_bytes()].concat();
    let mut rng = TestRng::from_seed(RngAlgorithm::XorShift, &bytes);
    generate_set_history(threads, ops_per_thread, &mut |n| rng.random_range(0..n))
}

fn int(i: i64) -> Value {
    Value::Int(i)
}

fn call(op: &str, args: &[i64]) -> Call {
    Call::new(op, args.iter().map(|&a| int(a)).collect())
}

fn verdict(spec: &str, history: &History) -> Verdict {
    check(&builtin(spec).unwrap(), history, &CheckOptions::default())
        .unwrap()
        .verdict
}

fn explanation(v: Verdict) -> Explanation {
    match v {
        Verdict::NotLinearizable(e) => e,
        other => panic!("expected a violation, got {other:?}"),
    }
}

/// Fig. 3 of the FGVT paper, from the state (1, 1): `read` overlaps four writes and returns
/// (1, 2), a state the array never passes through.
fn pair_snapshot() -> History {
    let mut h = History::new();
    h.call(0, call("write", &[0, 1]));
    h.ret(0, Value::Unit);
    h.call(0, call("write", &[1, 1]));
    h.ret(0, Value::Unit);
    h.call(0, call("write", &[0, 2])); // c_w1
    h.call(1, call("read", &[])); // c_r
    h.ret(0, Value::Unit); // r_w1
    h.call(0, call("write", &[1, 2]));
    h.ret(0, Value::Unit);
    h.call(0, call("write", &[1, 1]));
    h.ret(0, Value::Unit);
    h.call(0, call("write", &[0, 1])); // c_w4
    h.ret(1, Value::Tuple(vec![int(1), int(2)])); // r_r
    h.ret(0, Value::Unit); // r_w4
    h
}

#[test]
fn pair_snapshot_read_of_a_state_never_reached_is_not_linearizable() {
    let e = explanation(verdict("snapshot", &pair_snapshot()));
    // The two initial writes and the four concurrent ones; then `read` fits nowhere.
    assert_eq!(e.prefix.len(), 6);
    assert_eq!(e.obstacles.len(), 1, "{e}");
    assert_eq!(e.obstacles[0].op.call, call("read", &[]));
    assert_eq!(
        e.obstacles[0].reason,
        Reason::WrongResult {
            expected: Value::Tuple(vec![int(1), int(1)])
        }
    );
    // Fig. 5: the read in each of the five places; each order fails at the read.
    let orders = e.orders.as_ref().expect("few orders");
    assert_eq!(orders.len(), 5);
    for attempt in orders {
        let failure = attempt.failure.as_ref().expect("every order fails");
        assert_eq!(failure.op, 3, "the read (operation 3) is what fails");
        assert!(matches!(failure.reason, Reason::WrongResult { .. }));
    }
    let text = e.to_string();
    assert!(
        text.contains(
            "T1 read() returned (1, 2), but the spec returns (1, 1) after T0 write(0, 1)"
        ),
        "{text}"
    );
    assert!(
        text.contains("every order that respects real time (5)"),
        "{text}"
    );
    let json = serde_json::to_value(&e).unwrap();
    assert_eq!(json["obstacles"][0]["reason"]["kind"], "wrong_result");
    assert_eq!(json["obstacles"][0]["observed"], "(1, 2)");
}

#[test]
fn outcomes_serialize_with_a_verdict_tag() {
    let outcome = check(
        &BuiltinSpec::Snapshot,
        &pair_snapshot(),
        &CheckOptions::default(),
    )
    .unwrap();
    let json = serde_json::to_value(&outcome).unwrap();
    assert_eq!(json["verdict"]["verdict"], "not_linearizable");
    assert_eq!(json["verdict"]["prefix"][0]["call"], "write(0, 1)");
    assert_eq!(json["partitions"], 1);
    let mut ok = History::new();
    ok.call(0, call("read", &[]));
    ok.ret(0, Value::Tuple(vec![int(0), int(0)]));
    let outcome = check(&BuiltinSpec::Snapshot, &ok, &CheckOptions::default()).unwrap();
    let json = serde_json::to_value(&outcome.verdict).unwrap();
    assert_eq!(
        json,
        serde_json::json!({"verdict": "linearizable", "order": [0]})
    );
}

#[test]
fn without_explain_only_the_prefix_is_given() {
    let options = CheckOptions {
        explain: false,
        ..CheckOptions::default()
    };
    let outcome = check(&BuiltinSpec::Snapshot, &pair_snapshot(), &options).unwrap();
    let e = explanation(outcome.verdict);
    assert_eq!(e.prefix.len(), 6);
    assert!(e.obstacles.is_empty() && e.orders.is_none() && !e.too_many_orders);
}

#[test]
fn a_long_prefix_is_shortened_in_text_only() {
    let mut h = set_history(2, 100, 5);
    h.call(0, call("contains", &[100]));
    h.ret(0, Value::Bool(true));
    let options = CheckOptions {
        partition: false,
        ..CheckOptions::default()
    };
    let e = explanation(check(&BuiltinSpec::Set, &h, &options).unwrap().verdict);
    assert_eq!(e.prefix.len(), 200);
    assert!(e.too_many_orders);
    let text = e.to_string();
    assert!(
        text.contains("(160 earlier steps; the JSON report lists them all)"),
        "{text}"
    );
    assert!(
        text.contains("T0 contains(100) returned true, but the spec returns false"),
        "{text}"
    );
}

/// Orders that differ only after the operation the spec rejects read the same: each such
/// beginning is listed once, with how many orders share it, and every operation names its
/// thread so that orders differing only in which thread went first are told apart.
#[test]
fn orders_sharing_a_failing_beginning_are_listed_once() {
    // A read of 7, which nobody writes, overlaps three writes: 4! orders, and the read fails
    // wherever it is, so each order fails at the read.
    let mut h = History::new();
    h.call(0, call("read", &[]));
    for t in 1..=3 {
        h.call(t, call("write", &[t as i64]));
    }
    for t in 1..=3 {
        h.ret(t, Value::Unit);
    }
    h.ret(0, int(7));
    let e = explanation(verdict("register", &h));
    assert_eq!(e.orders.as_ref().map(Vec::len), Some(24));
    let text = e.to_string();
    let lines: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.starts_with("every order"))
        .skip(1)
        .filter(|l| l.contains('✗'))
        .collect();
    // The read comes after 0, 1, 2 or 3 of the writes, in any order of them: 1 + 3 + 6 + 6.
    assert_eq!(lines.len(), 16, "{text}");
    let mut distinct = lines.clone();
    distinct.sort_unstable();
    distinct.dedup();
    assert_eq!(distinct.len(), lines.len(), "no two lines alike: {text}");
    let shared: usize = lines
        .iter()
        .map(|l| {
            match l
                .split_once("  (")
                .and_then(|(_, n)| n.split_once(" orders start"))
            {
                Some((n, _)) => n.parse::<usize>().unwrap(),
                None => 1,
            }
        })
        .sum();
    assert_eq!(shared, 24, "every order is counted once: {text}");
    assert!(
        text.contains("every order that respects real time (24; 16 distinct beginnings up to where the spec first contradicts them):"),
        "{text}"
    );
    assert!(
        text.contains("  1.  T0 read() → 7 ✗  (6 orders start this way)\n"),
        "{text}"
    );
    assert!(text.contains("T1 write(1)  T0 read() → 7 ✗"), "{text}");
}

/// Two increments and a final read of 1: the two orders differ in which thread went first,
/// and say so.
#[test]
fn orders_that_differ_in_threads_only_name_them() {
    let mut h = History::new();
    h.call(0, call("inc", &[]));
    h.call(1, call("inc", &[]));
    h.ret(0, Value::Unit);
    h.ret(1, Value::Unit);
    h.call(2, call("get", &[]));
    h.ret(2, int(1));
    let e = explanation(verdict("counter", &h));
    let text = e.to_string();
    assert!(
        text.contains("every order that respects real time (2):"),
        "{text}"
    );
    assert!(
        text.contains("T0 inc()  T1 inc()  T2 get() → 1 ✗"),
        "{text}"
    );
    assert!(
        text.contains("T1 inc()  T0 inc()  T2 get() → 1 ✗"),
        "{text}"
    );
    assert!(!text.contains("start this way"), "{text}");
}

/// The verdict line is said once: `details` leaves it out for a place that has said it.
#[test]
fn details_leave_out_the_verdict_line() {
    let e = explanation(verdict("snapshot", &pair_snapshot()));
    let whole = e.to_string();
    let details = e.details().to_string();
    assert!(
        whole.starts_with("not linearizable\nlongest linearizable prefix (6 of 7 operations):"),
        "{whole}"
    );
    assert!(
        details.starts_with("longest linearizable prefix (6 of 7 operations):"),
        "{details}"
    );
    assert!(!details.contains("not linearizable"), "{details}");
    assert_eq!(
        whole.strip_prefix("not linearizable\n"),
        Some(details.as_str())
    );
    assert_eq!(
        serde_json::to_value(e.details()).unwrap(),
        serde_json::to_value(&e).unwrap(),
        "the same JSON"
    );
    // A sub-history or a stuck history is still said, without the verdict.
    let mut partitioned = e.clone();
    partitioned.partition = Some(Value::Str("k".into()));
    partitioned.stuck = true;
    assert!(
        partitioned.details().to_string().starts_with(
            "in the sub-history of key \"k\"; stuck history: pending operations must block\nlongest"
        ),
        "{}",
        partitioned.details()
    );
}

/// Counts read right: "1 operation", and a note never hides a single step.
#[test]
fn counts_are_in_words_that_agree() {
    // One read of 7 alone.
    let mut h = History::new();
    h.call(0, call("read", &[]));
    h.ret(0, int(7));
    let e = explanation(verdict("register", &h));
    let text = e.to_string();
    assert!(
        text.contains("longest linearizable prefix (0 of 1 operation):"),
        "{text}"
    );
    let mut bare = e.clone();
    bare.obstacles.clear();
    assert_eq!(bare.summary(), "only 0 of 1 operation can be linearized");

    // A prefix of 41 steps is shown whole (a note would hide one line and take one); of 42,
    // the note hides 2.
    let long = |steps: usize| {
        let mut long = e.clone();
        let step = PrefixStep {
            op: e.operations[0].clone(),
            returns: Value::Unit,
        };
        long.prefix = vec![step; steps];
        long.to_string()
    };
    let text = long(41);
    assert!(!text.contains("earlier step"), "{text}");
    assert!(text.contains("   1. T0 read() → ()"), "{text}");
    assert!(text.contains("  41. T0 read() → ()"), "{text}");
    let text = long(42);
    assert!(
        text.contains("  ... (2 earlier steps; the JSON report lists them all)\n   3. T0 read()"),
        "{text}"
    );
}

/// A read whose result can never come stops the search at once (the configuration is dead
/// before anything is tried), but the explanation still linearizes what can be, and blames
/// the read, not the write before it.
#[test]
fn the_prefix_goes_on_past_where_the_search_gave_up() {
    let mut h = History::new();
    h.call(0, call("write", &[1]));
    h.ret(0, Value::Unit);
    h.call(1, call("read", &[]));
    h.call(2, call("write", &[2]));
    h.ret(1, int(7));
    let e = explanation(verdict("register", &h));
    assert_eq!(e.prefix.len(), 1, "{e}");
    assert_eq!(e.prefix[0].op.call, call("write", &[1]));
    let blamed: Vec<&Call> = e.obstacles.iter().map(|o| &o.op.call).collect();
    assert!(blamed.contains(&&call("read", &[])), "{e}");
    assert!(!blamed.contains(&&call("write", &[1])), "{e}");
    assert_eq!(
        e.headline(),
        "T1 read() returned 7, which no serial order of the operations gives"
    );
    // Without explanations the search's own prefix is given, as it found it.
    let options = CheckOptions {
        explain: false,
        ..CheckOptions::default()
    };
    let bare = explanation(check(&BuiltinSpec::Register, &h, &options).unwrap().verdict);
    assert!(bare.prefix.len() <= 1);
}

/// A pending operation did not return: its headline says so rather than "returned pending".
#[test]
fn the_headline_of_a_pending_operation_says_it_did_not_return() {
    // A write of 2 never returned; a read beside it saw 3.
    let mut h = History::new();
    h.call(1, call("write", &[2]));
    h.call(2, call("read", &[]));
    h.ret(2, int(3));
    let e = explanation(verdict("register", &h));
    let headline = e.headline();
    assert!(!headline.contains("returned pending"), "{headline}");
    // The read, whose result the spec contradicts, is the more telling obstacle.
    assert_eq!(
        headline,
        "T2 read() returned 3, which no serial order of the operations gives"
    );
    // With only the pending write left to blame, it says what happened to it.
    let pending_only = Explanation {
        obstacles: e
            .obstacles
            .iter()
            .filter(|o| o.op.observed == Observed::Pending)
            .cloned()
            .collect(),
        ..e.clone()
    };
    assert!(!pending_only.obstacles.is_empty(), "{e}");
    assert_eq!(
        pending_only.headline(),
        "T1 write(2) did not return (pending), and no serial order of the operations, with or without it, gives the results observed"
    );
    assert!(
        pending_only.obstacle_notes()[0].1.starts_with("T1 write(2) did not return (pending); it could take effect in the initial state, but no linearization"),
        "{:?}",
        pending_only.obstacle_notes()
    );
}

#[test]
fn a_read_between_writes_is_linearizable() {
    let mut h = History::new();
    h.call(0, call("write", &[0, 2]));
    h.call(1, call("read", &[]));
    h.ret(0, Value::Unit);
    h.ret(1, Value::Tuple(vec![int(2), int(0)]));
    let Verdict::Linearizable { order } = verdict("snapshot", &h) else {
        panic!()
    };
    assert_eq!(order, vec![0, 1]);
}

#[test]
fn a_stuck_counter_increment_is_not_linearizable() {
    // Line-Up's buggy counter 2: `inc` never returns, but the spec never blocks it.
    let mut h = History::new();
    h.call(0, call("inc", &[]));
    h.ret(0, Value::Unit);
    h.call(0, call("get", &[]));
    h.ret(0, int(1));
    h.call(1, call("inc", &[]));
    h.stuck = true;
    let e = explanation(verdict("counter", &h));
    assert_eq!(e.prefix.len(), 2);
    assert_eq!(e.obstacles.len(), 1);
    assert_eq!(e.obstacles[0].op.observed, Observed::Pending);
    assert_eq!(
        e.obstacles[0].reason,
        Reason::MustBlock {
            returns: Value::Unit
        }
    );
    assert!(e.summary().contains("must block"), "{}", e.summary());
    // The same history, not stuck: the pending `inc` may simply not have happened yet.
    h.stuck = false;
    assert!(verdict("counter", &h).is_linearizable());
}

#[test]
fn a_stuck_take_on_an_empty_queue_is_linearizable() {
    let mut h = History::new();
    h.call(0, call("offer", &[1]));
    h.call(1, call("poll", &[]));
    h.ret(0, Value::Bool(true));
    h.ret(1, int(1));
    h.call(1, call("take", &[]));
    h.stuck = true;
    assert_eq!(
        verdict("queue", &h),
        Verdict::Linearizable { order: vec![0, 1] }
    );
    // If the poll had found the queue empty, the queue holds 1 and `take` cannot block.
    let mut h2 = History::new();
    h2.call(0, call("offer", &[1]));
    h2.call(1, call("poll", &[]));
    h2.ret(1, Value::Null);
    h2.ret(0, Value::Bool(true));
    h2.call(1, call("take", &[]));
    h2.stuck = true;
    let e = explanation(verdict("queue", &h2));
    assert_eq!(e.obstacles[0].reason, Reason::MustBlock { returns: int(1) });
}

#[test]
fn pending_operations_may_or_may_not_take_effect() {
    // A crashed write that a later read saw.
    let mut h = History::new();
    h.call(0, call("write", &[1]));
    h.call(1, call("read", &[]));
    h.ret(1, int(1));
    assert!(verdict("register", &h).is_linearizable());
    // A crashed write that nobody saw.
    let mut h = History::new();
    h.call(0, call("write", &[1]));
    h.call(1, call("read", &[]));
    h.ret(1, Value::Null);
    assert!(verdict("register", &h).is_linearizable());
    // A read of a value nobody wrote.
    let mut h = History::new();
    h.call(0, call("write", &[1]));
    h.call(1, call("read", &[]));
    h.ret(1, int(2));
    let e = explanation(verdict("register", &h));
    assert!(e.orders.as_ref().is_some_and(|o| o.len() == 3), "{e}");
    // A pending `take` on an empty queue (not stuck) is fine: it may just not have happened.
    let mut h = History::new();
    h.call(0, call("take", &[]));
    assert!(verdict("queue", &h).is_linearizable());
}

#[test]
fn an_unknown_result_accepts_anything() {
    let mut h = History::new();
    h.call(0, call("write", &[1]));
    h.ret(0, Value::Unit);
    h.call(0, call("read", &[]));
    h.events.push(fgvt_tree::CoarseEvent::Return {
        thread: 0,
        value: None,
    });
    assert!(verdict("register", &h).is_linearizable());
}

#[test]
fn an_invalid_operation_is_an_error() {
    let mut h = History::new();
    h.call(3, call("frob", &[]));
    h.ret(3, Value::Unit);
    let err = check(&BuiltinSpec::Set, &h, &CheckOptions::default()).unwrap_err();
    assert!(matches!(
        &err,
        CheckError::Invalid {
            op: 0,
            thread: 3,
            ..
        }
    ));
    assert!(
        err.to_string()
            .contains("`frob` is not an operation of the built-in `set` spec"),
        "{err}"
    );
    let mut bad = History::new();
    bad.ret(0, Value::Unit);
    assert!(matches!(
        check(&BuiltinSpec::Set, &bad, &CheckOptions::default()),
        Err(CheckError::Malformed(_))
    ));
}

#[test]
fn a_passed_deadline_gives_unknown() {
    let history = set_history(4, 3000, 1);
    let options = CheckOptions {
        partition: false,
        deadline: Some(Instant::now()),
        ..CheckOptions::default()
    };
    assert_eq!(
        check(&BuiltinSpec::Set, &history, &options)
            .unwrap()
            .verdict,
        Verdict::Unknown
    );
    let options = CheckOptions {
        deadline: Some(Instant::now() + Duration::from_secs(600)),
        ..options
    };
    assert!(check(&BuiltinSpec::Set, &history, &options)
        .unwrap()
        .verdict
        .is_linearizable());
}

/// The witness is a real linearization: it respects real time and the spec agrees with it.
fn assert_witness(spec: &BuiltinSpec, history: &History, order: &[usize]) {
    let ops = history.operations().unwrap();
    assert_eq!(order.len(), ops.iter().filter(|o| o.ret.is_some()).count());
    let mut state = spec.initial();
    for (pos, &i) in order.iter().enumerate() {
        for &later in &order[pos + 1..] {
            let returned_before = ops[later]
                .ret
                .as_ref()
                .is_some_and(|r| r.index < ops[i].call_index);
            assert!(
                !returned_before,
                "op {later} returned before op {i} was called but comes after it"
            );
        }
        let Apply::Returns { value, state: next } = spec.apply(&state, ops[i].thread, &ops[i].call)
        else {
            panic!()
        };
        if let Some(Some(observed)) = ops[i].ret.as_ref().map(|r| &r.value) {
            assert_eq!(&value, observed, "op {i} {}", ops[i].call);
        }
        state = next;
    }
}

#[test]
fn partitioned_witnesses_merge_into_a_linearization() {
    let history = set_history(4, 400, 7);
    for partition in [true, false] {
        let outcome = check(
            &BuiltinSpec::Set,
            &history,
            &CheckOptions {
                partition,
                ..CheckOptions::default()
            },
        )
        .unwrap();
        assert_eq!(
            outcome.partitions,
            if partition {
                crate::workload::SET_KEYS as usize
            } else {
                1
            }
        );
        let Verdict::Linearizable { order } = outcome.verdict else {
            panic!("{:?}", outcome.verdict)
        };
        assert_witness(&BuiltinSpec::Set, &history, &order);
    }
}

#[test]
fn a_tiny_cache_gives_the_same_verdicts() {
    // Without a cache the search is exponential (Wing & Gong): keep the history small.
    let good = set_history(3, 6, 3);
    let mut bad = good.clone();
    // Flip the last boolean result.
    let last = bad
        .events
        .iter()
        .rposition(|e| matches!(e, fgvt_tree::CoarseEvent::Return { .. }))
        .unwrap();
    if let fgvt_tree::CoarseEvent::Return {
        value: Some(Value::Bool(b)),
        ..
    } = &mut bad.events[last]
    {
        *b = !*b;
    }
    for cache_limit in [1, 10, 1_000_000] {
        let options = CheckOptions {
            partition: false,
            cache_limit,
            ..CheckOptions::default()
        };
        assert!(check(&BuiltinSpec::Set, &good, &options)
            .unwrap()
            .verdict
            .is_linearizable());
        assert!(check(&BuiltinSpec::Set, &bad, &options)
            .unwrap()
            .verdict
            .is_violation());
    }
}

#[test]
fn the_verdict_cache_checks_each_history_once() {
    let cache = VerdictCache::new(BuiltinSpec::Snapshot, CheckOptions::default());
    let h = pair_snapshot();
    assert!(cache.check(&h).unwrap().verdict.is_violation());
    assert!(cache.check(&h).unwrap().verdict.is_violation());
    assert_eq!((cache.len(), cache.hits()), (1, 1));
}

#[test]
fn the_paper_workload_checks_partitioned() {
    // 4 × 70,000 operations, as in the P-compositionality paper; seconds in release builds.
    let history = set_history(4, 70_000, 42);
    let start = Instant::now();
    let outcome = check(&BuiltinSpec::Set, &history, &CheckOptions::default()).unwrap();
    eprintln!(
        "4 × 70,000 set operations, partitioned: {:.2?}, {:?}",
        start.elapsed(),
        outcome.stats
    );
    assert!(outcome.verdict.is_linearizable());
}

/// A broken partition is reported after a few slices of search, however much work the other
/// partitions need: they are searched in turns, not one after the other.
#[test]
fn a_broken_partition_is_found_without_finishing_the_hard_ones() {
    let spec = builtin("kv").unwrap();
    let s = |v: &str| Value::Str(v.into());
    // Key "a": eight concurrent appends and a concurrent put of the empty value, then a read
    // that saw the appends in the reverse of the order the search tries first: linearizable,
    // after thousands of orders (the put could reset the value at any moment, so no order of
    // the appends is ruled out before the read).
    let mut hard = History::new();
    for t in 0..8 {
        hard.call(t, Call::new("append", vec![s("a"), s(&t.to_string())]));
    }
    hard.call(10, Call::new("put", vec![s("a"), s("")]));
    for t in 0..8 {
        hard.ret(t, Value::Unit);
    }
    hard.ret(10, Value::Unit);
    hard.call(8, Call::new("get", vec![s("a")]));
    hard.ret(8, s("76543210"));
    let alone = check(&spec, &hard, &CheckOptions::default()).unwrap();
    assert!(matches!(alone.verdict, Verdict::Linearizable { .. }));
    assert!(
        alone.stats.steps > 8 * SLICE_STEPS,
        "the test needs a partition harder than a few slices: {} steps",
        alone.stats.steps
    );
    // Key "z" (searched after "a" in key order): a read of a value nobody wrote.
    let mut history = hard.clone();
    history.call(9, Call::new("get", vec![s("z")]));
    history.ret(9, s("x"));
    let outcome = check(&spec, &history, &CheckOptions::default()).unwrap();
    assert!(matches!(outcome.verdict, Verdict::NotLinearizable(_)));
    assert!(
        outcome.stats.steps < alone.stats.steps / 2,
        "found after {} steps; key \"a\" alone takes {}",
        outcome.stats.steps,
        alone.stats.steps
    );
}

#[test]
fn generated_kv_histories_are_linearizable_unless_corrupted() {
    use crate::workload::generate_kv_history;
    let spec = builtin("kv").unwrap();
    for seed in 0..6u64 {
        let mut state = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let mut below = |n: usize| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((state >> 33) as usize) % n
        };
        let ok = generate_kv_history(5, 12, false, &mut below);
        assert!(check(&spec, &ok, &CheckOptions::default())
            .unwrap()
            .verdict
            .is_linearizable());
        let bad = generate_kv_history(5, 12, true, &mut below);
        assert!(!check(&spec, &bad, &CheckOptions::default())
            .unwrap()
            .verdict
            .is_linearizable());
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(24))]

    /// The parallel driver gives the verdict of the sequential one, and on a history with one
    /// broken key blames the same key.
    #[test]
    fn parallel_partitions_agree_with_the_sequential_search(
        seed in 0u64..1_000,
        clients in 2usize..8,
        corrupt in proptest::bool::ANY,
    ) {
        use crate::workload::generate_kv_history;
        let spec = builtin("kv").unwrap();
        let mut state = seed.wrapping_mul(6364136223846793005).wrapping_add(1);
        let mut below = |n: usize| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((state >> 33) as usize) % n
        };
        let history = generate_kv_history(clients, 10, corrupt, &mut below);
        let options = CheckOptions::default();
        let one = check(&spec, &history, &options).unwrap();
        let many = check_parallel(&spec, &history, &options).unwrap();
        proptest::prop_assert_eq!(one.partitions, many.partitions);
        proptest::prop_assert_eq!(one.verdict.is_linearizable(), many.verdict.is_linearizable());
        proptest::prop_assert_eq!(one.verdict.is_linearizable(), !corrupt);
        if let (Verdict::Linearizable { order }, true) = (&many.verdict, !corrupt) {
            // The merged witness orders every operation once.
            let mut seen = order.clone();
            seen.sort_unstable();
            seen.dedup();
            proptest::prop_assert_eq!(seen.len(), order.len());
        }
        if let (Verdict::NotLinearizable(a), Verdict::NotLinearizable(b)) = (&one.verdict, &many.verdict) {
            // The corruption breaks one key: both drivers must blame it.
            proptest::prop_assert!(a.partition.is_some());
            proptest::prop_assert_eq!(&a.partition, &b.partition);
        }
    }
}

/// A thread's stack operations: `push(v)` for `Some(v)`, else `pop()`, each with the result
/// a pop returned (`Some(None)`: null; `None`: the operation is left pending).
type StackOps = Vec<(Option<i64>, Option<Option<i64>>)>;

/// A history of stack operations by `threads.len()` threads under weak memory: each thread's
/// operations (`push(v)` or `pop()`, a result each; `None` leaves the last one pending), in
/// the interleaving `schedule` (thread numbers, each thread's calls and returns in turn), every
/// call with a clock: per thread, how many of its operations had returned, at most what had
/// (`clock` draws below that).
fn clocked_history(
    threads: &[StackOps],
    schedule: &[usize],
    clock: &mut impl FnMut(u32) -> u32,
) -> History {
    let mut history = History::new();
    let mut next = vec![0; threads.len()];
    let mut returned = vec![0u32; threads.len()];
    let mut open = vec![false; threads.len()];
    for &t in schedule {
        let Some(&(push, result)) = threads[t].get(next[t]) else {
            continue;
        };
        if !open[t] {
            let call = match push {
                Some(v) => Call::new("push", vec![int(v)]),
                None => Call::new("pop", vec![]),
            };
            let seen = (0..threads.len())
                .map(|u| {
                    if u == t {
                        returned[u]
                    } else {
                        clock(returned[u])
                    }
                })
                .collect();
            history.events.push(fgvt_tree::CoarseEvent::Call {
                thread: t,
                call: std::sync::Arc::new(call),
                seen: Some(seen),
            });
            open[t] = true;
        } else if let Some(result) = result {
            let value = match (push, result) {
                (Some(_), _) => Value::Unit,
                (None, Some(v)) => int(v),
                (None, None) => Value::Null,
            };
            history.ret(t, value);
            open[t] = false;
            returned[t] += 1;
            next[t] += 1;
        }
    }
    history
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(400))]

    /// Under weak memory an operation precedes another only as the other's clock says, so the
    /// verdict depends on each thread's operations and clocks, not on how the threads'
    /// events interleaved: what lets the explorer merge paths whose histories differ only so
    /// (`fgvt_tree`'s thread-major canonical histories). Two interleavings of the same threads
    /// with the same clocks get one verdict.
    #[test]
    fn under_clocks_the_interleaving_does_not_change_the_verdict(
        threads in proptest::collection::vec(
            proptest::collection::vec(
                (
                    proptest::option::of(1i64..3),
                    proptest::option::weighted(0.9, proptest::option::of(1i64..3)),
                ),
                1..3,
            ),
            2..4,
        ),
        first in proptest::collection::vec(0usize..3, 24),
        second in proptest::collection::vec(0usize..3, 24),
        draws in proptest::collection::vec(0u32..3, 12),
    ) {
        let spec = builtin("stack").unwrap();
        let schedule = |order: &[usize]| -> Vec<usize> {
            // Every thread's events, then whatever is left in thread order.
            let mut all: Vec<usize> = order.iter().map(|&t| t % threads.len()).collect();
            all.extend((0..threads.len()).flat_map(|t| std::iter::repeat_n(t, 8)));
            all
        };
        // The clocks the first interleaving drew, by call, given to the second alike.
        let mut drawn = draws.iter().cycle();
        let mut clocks = Vec::new();
        let a = clocked_history(&threads, &schedule(&first), &mut |below| {
            let c = drawn.next().unwrap() % (below + 1);
            clocks.push(c);
            c
        });
        // The second interleaving: the same threads' events with the same clocks, by thread.
        let mut by_thread: Vec<std::collections::VecDeque<fgvt_tree::CoarseEvent>> =
            vec![Default::default(); threads.len()];
        for event in &a.events {
            by_thread[event.thread()].push_back(event.clone());
        }
        let mut b = History::new();
        for t in schedule(&second) {
            if let Some(event) = by_thread[t].pop_front() {
                b.events.push(event);
            }
        }
        // A return must follow its call: each thread's events keep their order, so they do.
        let (va, vb) = (check(&spec, &a, &CheckOptions::default()), check(&spec, &b, &CheckOptions::default()));
        let (va, vb) = (va.unwrap().verdict, vb.unwrap().verdict);
        proptest::prop_assert!(!matches!(va, Verdict::Unknown));
        proptest::prop_assert_eq!(va.is_linearizable(), vb.is_linearizable(), "{} | {}", a, b);
    }
}
