//! Greedy shrinking of a failing test (stage B).
//!
//! From the current test, the single changes below are tried in order; the first one that
//! keeps the test failing is taken, and the search starts again from the smaller test, until
//! no single change keeps it failing:
//!
//! 1. drop a whole thread;
//! 2. remove one operation (of a thread, then of `init`, then of `final`);
//! 3. move a thread's first operation to the end of `init`, or its last one to the start of
//!    `final` (the test gets less concurrent);
//! 4. simplify one argument: integers towards 0, `true` to `false`, strings to `""`, tuples
//!    element by element.
//!
//! Every accepted change makes the test strictly smaller in (operations, concurrent
//! operations, argument size), so the search ends. Candidates of one round are checked in
//! parallel, and the lowest-ranked failing one is taken, so the result does not depend on the
//! number of threads.

use std::time::Instant;

use fgvt_tree::{Call, ExploreOptions, Value};
use rayon::prelude::*;

use super::check::{TestReport, TestVerdict};
use super::{Judge, Matrix};
use crate::pipeline::{exploration_budget, PipelineError};

/// A shrunk test and what it took.
#[derive(Clone, Debug)]
pub struct Minimized {
    /// The smallest failing test found.
    pub matrix: Matrix,
    /// Changes taken.
    pub steps: usize,
    /// Candidate tests checked.
    pub checks: usize,
}

/// Shrinks `start` (which must fail) while `fails` says a candidate still fails.
pub fn minimize(start: &Matrix, fails: impl Fn(&Matrix) -> bool + Sync) -> Minimized {
    let mut current = start.clone();
    let mut steps = 0;
    let mut checks = 0;
    loop {
        let all = candidates(&current);
        // find_first checks in parallel but returns the lowest-ranked hit; count only the
        // candidates up to it, so the figure does not depend on the number of threads.
        match all.par_iter().position_first(&fails) {
            Some(i) => {
                checks += i + 1;
                steps += 1;
                current = all[i].clone();
            }
            None => {
                checks += all.len();
                return Minimized {
                    matrix: current,
                    steps,
                    checks,
                };
            }
        }
    }
}

/// What [`minimize_test`] did.
#[derive(Clone, Debug)]
pub enum MinimizeOutcome {
    /// The test does not fail to begin with (its report says whether a limit cut it short).
    NotFailing(TestReport),
    /// The test fails; here is the smallest variant that fails the same way.
    Minimized {
        /// The shrunk test.
        minimized: Minimized,
        /// Whether the deadline, or the explore options' interrupt, stopped the search early
        /// (the test may not be minimal).
        timed_out: bool,
    },
}

/// Shrinks the test with `start`'s operations, judged by `judge`, while it keeps failing the
/// same way: if it has non-linearizable leaves, every candidate must have some too (a candidate
/// that only faults, say a `remove` on an empty list that dereferences null, is a different
/// bug); if it only faults, a fault suffices. A candidate whose init part fails, or that the
/// spec cannot judge, does not fail. Checks stop at `deadline`, and at `options`' interrupt.
pub fn minimize_test(
    judge: &dyn Judge,
    start: &Matrix,
    options: &ExploreOptions,
    deadline: Option<Instant>,
) -> Result<MinimizeOutcome, PipelineError> {
    // Verdict only, for violations: one stops the search, and decides how candidates must fail.
    let original = judge.search(start, &until(options, deadline), deadline, true)?;
    let needs_violation = match original.verdict {
        TestVerdict::Fails {
            not_linearizable, ..
        } => not_linearizable > 0,
        _ => return Ok(MinimizeOutcome::NotFailing(original)),
    };
    let past_deadline = || {
        deadline.is_some_and(|d| Instant::now() >= d)
            || (options.interrupt).is_some_and(fgvt_tree::Interrupt::is_raised)
    };
    let fails = |m: &Matrix| {
        if past_deadline() {
            return false;
        }
        // Verdict only: a candidate fails as soon as one leaf does.
        match judge
            .search(m, &until(options, deadline), deadline, needs_violation)
            .map(|r| r.verdict)
        {
            // A failing test has a failing leaf; only a violation will do when one is needed.
            Ok(TestVerdict::Fails {
                not_linearizable, ..
            }) => !needs_violation || not_linearizable > 0,
            _ => false,
        }
    };
    let minimized = minimize(start, fails);
    Ok(MinimizeOutcome::Minimized {
        minimized,
        timed_out: past_deadline(),
    })
}

/// `options`, with the exploration's time cut to its share of what is left before `deadline`:
/// an exploration started just before the deadline does not run on past it.
fn until(options: &ExploreOptions, deadline: Option<Instant>) -> ExploreOptions {
    let mut bounded = options.clone();
    if let Some(deadline) = deadline {
        let share = exploration_budget(deadline.saturating_duration_since(Instant::now()));
        bounded.timeout = Some(bounded.timeout.map_or(share, |t| t.min(share)));
    }
    bounded
}

/// Every single change of `m`, best first (see the module docs).
pub fn candidates(m: &Matrix) -> Vec<Matrix> {
    let mut out = Vec::new();
    let mut push = |c: Matrix| {
        if let Some(c) = normalized(c) {
            if &c != m && !out.contains(&c) {
                out.push(c);
            }
        }
    };
    if m.threads.len() > 1 {
        for t in 0..m.threads.len() {
            let mut c = m.clone();
            c.threads.remove(t);
            push(c);
        }
    }
    for (t, ops) in m.threads.iter().enumerate() {
        for i in 0..ops.len() {
            let mut c = m.clone();
            c.threads[t].remove(i);
            push(c);
        }
    }
    for i in 0..m.init.len() {
        let mut c = m.clone();
        c.init.remove(i);
        push(c);
    }
    for i in 0..m.finals.len() {
        let mut c = m.clone();
        c.finals.remove(i);
        push(c);
    }
    for t in 0..m.threads.len() {
        let mut c = m.clone();
        let first = c.threads[t].remove(0);
        c.init.push(first);
        push(c);
        let mut c = m.clone();
        let last = c.threads[t].pop().expect("threads are never empty");
        c.finals.insert(0, last);
        push(c);
    }
    let parts = m.init.len() + m.threads.len() + 1;
    for part in 0..parts {
        let calls = part_of(m, part);
        for (i, call) in calls.iter().enumerate() {
            for (a, arg) in call.args.iter().enumerate() {
                for simpler in simpler_values(arg) {
                    let mut c = m.clone();
                    part_of_mut(&mut c, part)[i].args[a] = simpler;
                    push(c);
                }
            }
        }
    }
    out
}

/// Part `p` of a matrix's calls: 0 is `init`, then each thread, then `final`.
fn part_of(m: &Matrix, p: usize) -> &[Call] {
    match p {
        0 => &m.init,
        p if p <= m.threads.len() => &m.threads[p - 1],
        _ => &m.finals,
    }
}

fn part_of_mut(m: &mut Matrix, p: usize) -> &mut Vec<Call> {
    match p {
        0 => &mut m.init,
        p if p <= m.threads.len() => &mut m.threads[p - 1],
        _ => &mut m.finals,
    }
}

/// Drops empty threads; `None` when no thread is left (a test needs one).
fn normalized(mut m: Matrix) -> Option<Matrix> {
    m.threads.retain(|ops| !ops.is_empty());
    (!m.threads.is_empty()).then_some(m)
}

/// Strictly simpler values than `v`, simplest first.
pub fn simpler_values(v: &Value) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::new();
    let mut add = |x: Value| {
        if &x != v && !out.contains(&x) {
            out.push(x);
        }
    };
    match v {
        Value::Int(n) => {
            // Smaller magnitude first; then the positive of a negative number.
            add(Value::Int(0));
            add(Value::Int(n / 2));
            add(Value::Int(n - n.signum()));
            if *n < 0 {
                add(Value::Int(n.saturating_neg()));
            }
        }
        Value::Bool(true) => add(Value::Bool(false)),
        Value::Str(s) if !s.is_empty() => add(Value::Str("".into())),
        Value::Tuple(items) => {
            for (i, item) in items.iter().enumerate() {
                for simpler in simpler_values(item) {
                    let mut items = items.clone();
                    items[i] = simpler;
                    add(Value::Tuple(items));
                }
            }
        }
        _ => {}
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(op: &str, args: &[i64]) -> Call {
        Call::new(op, args.iter().map(|&a| Value::Int(a)).collect())
    }

    /// A stand-in for "the test fails": some thread's `write(_, 2)` is concurrent with a
    /// `read` in another thread.
    fn racy(m: &Matrix) -> bool {
        let has = |ops: &[Call], op: &str| {
            ops.iter()
                .any(|c| c.op == op && (op == "read" || c.args[1] == Value::Int(2)))
        };
        m.threads.iter().enumerate().any(|(t, a)| {
            has(a, "write")
                && m.threads
                    .iter()
                    .enumerate()
                    .any(|(u, b)| u != t && has(b, "read"))
        })
    }

    #[test]
    fn shrinks_to_the_two_racing_operations() {
        let start = Matrix {
            init: vec![call("write", &[0, 1])],
            threads: vec![
                vec![
                    call("write", &[0, 2]),
                    call("write", &[1, 7]),
                    call("read", &[]),
                ],
                vec![call("read", &[]), call("write", &[1, 1])],
                vec![call("read", &[])],
            ],
            finals: vec![call("read", &[])],
        };
        let min = minimize(&start, racy);
        assert_eq!(
            min.matrix,
            Matrix {
                init: vec![],
                threads: vec![vec![call("write", &[0, 2])], vec![call("read", &[])]],
                finals: vec![]
            }
        );
        assert!(min.steps > 0 && min.checks >= min.steps);
    }

    #[test]
    fn a_test_that_stops_failing_is_left_alone() {
        let start = Matrix {
            init: vec![],
            threads: vec![vec![call("read", &[])]],
            finals: vec![],
        };
        let min = minimize(&start, |_| false);
        assert_eq!(min.matrix, start);
        assert_eq!(min.steps, 0);
    }

    #[test]
    fn leading_and_trailing_operations_move_out_of_the_threads() {
        // Fails only while write(0, 2) and read are concurrent, write(5, _) runs before or
        // with them and write(6, _) with or after them: the extra writes move out of T0.
        let first_arg =
            |calls: &[Call], n: i64| calls.iter().any(|c| c.args.first() == Some(&Value::Int(n)));
        let fails = |m: &Matrix| {
            let threads: Vec<Call> = m.threads.iter().flatten().cloned().collect();
            racy(m)
                && (first_arg(&m.init, 5) || first_arg(&threads, 5))
                && (first_arg(&m.finals, 6) || first_arg(&threads, 6))
        };
        let start = Matrix {
            init: vec![],
            threads: vec![
                vec![
                    call("write", &[5, 5]),
                    call("write", &[0, 2]),
                    call("write", &[6, 6]),
                ],
                vec![call("read", &[])],
            ],
            finals: vec![],
        };
        let min = minimize(&start, fails);
        assert_eq!(min.matrix.concurrent_ops(), 2, "{}", min.matrix);
        assert_eq!(min.matrix.total_ops(), 4, "{}", min.matrix);
    }

    #[test]
    fn arguments_shrink_towards_zero() {
        assert_eq!(
            simpler_values(&Value::Int(-6)),
            vec![Value::Int(0), Value::Int(-3), Value::Int(-5), Value::Int(6)]
        );
        assert_eq!(simpler_values(&Value::Int(1)), vec![Value::Int(0)]);
        assert!(simpler_values(&Value::Int(0)).is_empty());
        assert_eq!(simpler_values(&Value::Bool(true)), vec![Value::Bool(false)]);
        assert_eq!(
            simpler_values(&Value::Tuple(vec![Value::Int(1), Value::Bool(true)])),
            vec![
                Value::Tuple(vec![Value::Int(0), Value::Bool(true)]),
                Value::Tuple(vec![Value::Int(1), Value::Bool(false)])
            ]
        );
    }
}
