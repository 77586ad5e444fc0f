//! Line-Up's phase 1: the serial runs of a test must be deterministic.
//!
//! Line-Up synthesizes its spec from the serial histories of a test and first checks that
//! they are deterministic: two serial histories whose longest common prefix ends in a call
//! must agree on that call's result. If they do not, the object is reported as
//! nondeterministic, not as non-linearizable: a history the concurrent runs produce may then
//! be "explained" by one serial run and contradicted by another.
//!
//! Here every serial order of a test's operations is enumerated through the spec, running each
//! operation twice from the same state and comparing the outcomes.
//!
//! **With the current modeling language this check cannot fail**: the interpreter is a
//! deterministic function of (memory, thread, call): it has no random choice, clock, input
//! or hashing-order dependence, and an operation run alone cannot be preempted. It can only
//! trigger if the language gains a nondeterministic construct (a `choose`, a random number, a
//! timed wait) or a spec whose state does not capture everything an operation observes; the
//! unit tests exercise it with a spec double that counts how often it is called.

use std::collections::HashSet;
use std::fmt;

use fgvt_checker::{Apply, Spec};
use fgvt_tree::{Call, ThreadId};

/// Two serial runs of the same operation, after the same serial history, that disagree.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Nondeterminism {
    /// The serial history before the operation: thread, call, and what it returned.
    pub prefix: Vec<(ThreadId, Call, String)>,
    /// The thread that runs the operation.
    pub thread: ThreadId,
    /// The operation.
    pub call: Call,
    /// What the first run did (`returns 1`, `blocks`, `is invalid: …`).
    pub first: String,
    /// What the second run did.
    pub second: String,
}

impl fmt::Display for Nondeterminism {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "run serially after [")?;
        for (i, (thread, call, result)) in self.prefix.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "T{thread} {call} → {result}")?;
        }
        write!(
            f,
            "], T{} {} {} in one run but {} in another",
            self.thread, self.call, self.first, self.second
        )
    }
}

/// How many times each serial step is repeated: two runs suffice to see a disagreement.
const RUNS: usize = 2;

/// Checks that every serial order of `init`, then the `threads` interleaved operation by
/// operation, then `finals` (the serial parts run as thread 0, like [`fgvt_lang::TestProgram`])
/// gives the same results when run again; the first disagreement found, if any.
pub fn serial_nondeterminism<S: Spec>(
    spec: &S,
    init: &[Call],
    threads: &[Vec<Call>],
    finals: &[Call],
) -> Option<Nondeterminism> {
    let mut search = Search {
        spec,
        init,
        threads,
        finals,
        visited: HashSet::new(),
        prefix: Vec::new(),
    };
    search
        .visit(spec.initial(), Phase::Init(0))
        .err()
        .map(|found| *found)
}

/// Where a serial run is: in the init part, between the threads' operations, or in the final
/// part (by the index of the next operation).
#[derive(Clone)]
enum Phase {
    Init(usize),
    Concurrent(Vec<usize>),
    Final(usize),
}

/// The depth-first enumeration of serial orders.
struct Search<'a, S: Spec> {
    spec: &'a S,
    init: &'a [Call],
    threads: &'a [Vec<Call>],
    finals: &'a [Call],
    /// (state, next operation of each thread) already enumerated from: different orders that
    /// reach the same state continue alike, so each is enumerated once.
    visited: HashSet<(S::State, Vec<usize>)>,
    /// The serial history so far, for the report.
    prefix: Vec<(ThreadId, Call, String)>,
}

impl<S: Spec> Search<'_, S> {
    /// Enumerates every serial continuation from `state` at `phase`.
    fn visit(&mut self, state: S::State, phase: Phase) -> Result<(), Box<Nondeterminism>> {
        match phase {
            Phase::Init(i) if i < self.init.len() => {
                self.then(state, 0, &self.init[i], Phase::Init(i + 1))
            }
            Phase::Init(_) => self.visit(state, Phase::Concurrent(vec![0; self.threads.len()])),
            Phase::Concurrent(positions) => {
                if !self.visited.insert((state.clone(), positions.clone())) {
                    return Ok(());
                }
                let mut done = true;
                for (t, ops) in self.threads.iter().enumerate() {
                    let Some(call) = ops.get(positions[t]) else {
                        continue;
                    };
                    done = false;
                    let mut next = positions.clone();
                    next[t] += 1;
                    self.then(state.clone(), t, call, Phase::Concurrent(next))?;
                }
                if done {
                    self.visit(state, Phase::Final(0))?;
                }
                Ok(())
            }
            Phase::Final(i) if i < self.finals.len() => {
                self.then(state, 0, &self.finals[i], Phase::Final(i + 1))
            }
            Phase::Final(_) => Ok(()),
        }
    }

    /// Runs `call` by `thread` [`RUNS`] times from `state`, compares the outcomes, and goes on
    /// from each distinct successor state (none when the call blocks or is invalid: the serial
    /// history ends there).
    fn then(
        &mut self,
        state: S::State,
        thread: ThreadId,
        call: &Call,
        next: Phase,
    ) -> Result<(), Box<Nondeterminism>> {
        let runs: Vec<Apply<S::State>> = (0..RUNS)
            .map(|_| self.spec.apply(&state, thread, call))
            .collect();
        let first = describe(&runs[0]);
        if let Some(second) = runs[1..].iter().map(describe).find(|d| *d != first) {
            return Err(Box::new(Nondeterminism {
                prefix: self.prefix.clone(),
                thread,
                call: call.clone(),
                first,
                second,
            }));
        }
        let mut successors: Vec<S::State> = Vec::new();
        for run in runs {
            if let Apply::Returns { state, .. } = run {
                if !successors.contains(&state) {
                    successors.push(state);
                }
            }
        }
        self.prefix.push((
            thread,
            call.clone(),
            first.trim_start_matches("returns ").to_string(),
        ));
        for successor in successors {
            self.visit(successor, next.clone())?;
        }
        self.prefix.pop();
        Ok(())
    }
}

/// What a run of an operation did, as the history sees it (the state is not observable).
fn describe<T>(apply: &Apply<T>) -> String {
    match apply {
        Apply::Returns { value, .. } => format!("returns {value}"),
        Apply::Blocks => "blocks".to_string(),
        Apply::Invalid(message) => format!("is invalid: {message}"),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicI64, Ordering};

    use fgvt_tree::Value;

    use super::*;

    /// A register counting its writes. A steady one's `read` returns the number of writes; a
    /// flaky one's returns how often it has been called: a nondeterministic spec.
    struct Register {
        flaky: bool,
        reads: AtomicI64,
    }

    impl Register {
        fn flaky() -> Register {
            Register {
                flaky: true,
                reads: AtomicI64::new(0),
            }
        }

        fn steady() -> Register {
            Register {
                flaky: false,
                reads: AtomicI64::new(0),
            }
        }
    }

    impl Spec for Register {
        type State = i64;
        fn initial(&self) -> i64 {
            0
        }
        fn apply(&self, state: &i64, _thread: ThreadId, call: &Call) -> Apply<i64> {
            match call.op.as_str() {
                "write" => Apply::Returns {
                    value: Value::Unit,
                    state: state + 1,
                },
                _ if self.flaky => Apply::Returns {
                    value: Value::Int(self.reads.fetch_add(1, Ordering::Relaxed)),
                    state: *state,
                },
                _ => Apply::Returns {
                    value: Value::Int(*state),
                    state: *state,
                },
            }
        }
        fn name(&self) -> String {
            if self.flaky { "flaky" } else { "steady" }.into()
        }
    }

    fn call(op: &str) -> Call {
        Call::new(op, vec![])
    }

    #[test]
    fn a_spec_that_answers_differently_is_nondeterministic() {
        let spec = Register::flaky();
        let threads = vec![vec![call("write")], vec![call("read")]];
        let found = serial_nondeterminism(&spec, &[call("write")], &threads, &[])
            .expect("read disagrees with itself");
        assert_eq!(found.call, call("read"));
        assert_eq!(found.prefix[0].0, 0);
        assert!(found.to_string().contains("T1 read() returns"), "{found}");
    }

    #[test]
    fn a_deterministic_spec_passes_whatever_the_order() {
        let threads = vec![
            vec![call("write"), call("read")],
            vec![call("read"), call("write")],
            vec![call("read")],
        ];
        assert_eq!(
            serial_nondeterminism(
                &Register::steady(),
                &[call("write")],
                &threads,
                &[call("read")]
            ),
            None
        );
    }

    #[test]
    fn the_final_part_is_checked_too() {
        let spec = Register::flaky();
        let found = serial_nondeterminism(&spec, &[], &[vec![call("write")]], &[call("read")])
            .expect("final read");
        assert_eq!(found.prefix.len(), 1);
    }
}
