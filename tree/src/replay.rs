//! The re-execution backend: exploring programs whose state cannot be cloned or hashed.
//!
//! Real code under a controlled scheduler keeps its state in the heap and on thread stacks; it
//! can neither be copied at a branch point nor compared with another state. Such a program
//! implements [`Replay`] instead of [`Program`](crate::Program): every call to
//! [`Replay::execute`] runs it once from scratch, asking a scheduler callback which enabled
//! thread takes the next step. [`explore_replay`] builds the interleaving [`Tree`] depth-first
//! by re-executing schedule prefixes: one execution per leaf, each following a known prefix and
//! then always the lowest enabled thread. Nodes are never shared (states cannot be compared), so
//! the graph is the unfolded tree itself.

use std::time::{Duration, Instant};

use crate::event::Event;
use crate::history::{History, ThreadId};
use crate::model::{Bound, Exploration, Leaf, Limit, NodeId, Tree, TreeBuilder};
use crate::program::{Fault, Wait};

/// The scheduler callback of [`Replay::execute`]: given the enabled threads, in increasing
/// order, the thread to run, or `None` to abandon the execution.
///
/// Only threads are offered: a step's event is what the execution that takes it records (real
/// code learns a step's value only by taking it), and building events for the threads not
/// chosen would cost more than the step itself.
pub type Choose<'a> = dyn FnMut(&[ThreadId]) -> Option<ThreadId> + 'a;

/// A program explored by re-execution: each [`execute`](Replay::execute) runs it from scratch.
pub trait Replay {
    /// Runs the program once. Before every step, `choose` is given the enabled threads and
    /// returns the thread to run, or `None` to abandon the execution there (which then ends
    /// [`RunEnd::Abandoned`]).
    ///
    /// Two executions that receive the same choices must take the same steps: the explorer
    /// relies on it to reach a node again.
    fn execute(&self, choose: &mut Choose<'_>) -> Run;
}

/// One execution: the steps taken, in order, and how it ended.
#[derive(Clone, Debug)]
pub struct Run {
    /// The steps, one per choice the scheduler made.
    pub steps: Vec<Event>,
    /// How the execution ended after the last step.
    pub end: RunEnd,
}

/// How an execution ended.
#[derive(Clone, Debug)]
pub enum RunEnd {
    /// Every thread finished; the coarse history includes the `final` operations.
    Complete {
        /// The coarse history of the execution.
        history: History,
    },
    /// Threads are left but none is enabled (a deadlock).
    Stuck {
        /// The coarse history, with the blocked calls.
        history: History,
        /// What each blocked thread waits for.
        waiting: Vec<Wait>,
    },
    /// The program failed (a panic in user code).
    Fault {
        /// The coarse history up to the failure.
        history: History,
        /// The failure: message and location.
        fault: Fault,
    },
    /// The program hit one of its own limits (an operation ran too many steps).
    Bounded {
        /// The coarse history so far.
        history: History,
        /// Which limit.
        bound: Bound,
    },
    /// The scheduler callback returned `None`.
    Abandoned,
}

/// How to explore a [`Replay`] program.
#[derive(Clone, Debug)]
pub struct ReplayOptions {
    /// Stop after this many tree nodes; unexplored branches become bounded leaves.
    pub max_states: usize,
    /// Stop after this long; unexplored branches become bounded leaves.
    pub timeout: Option<Duration>,
}

impl Default for ReplayOptions {
    fn default() -> Self {
        ReplayOptions {
            max_states: 1_000_000,
            timeout: None,
        }
    }
}

/// Why re-execution could not build a tree.
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    /// Re-executing a schedule prefix did not reach the same node: the program depends on
    /// something other than the scheduler's choices (time, randomness, a `thread_local!`).
    #[error("the program is not deterministic: replaying {prefix:?}, thread T{thread} was not enabled at step {step}")]
    Nondeterministic {
        /// The schedule being replayed.
        prefix: Vec<ThreadId>,
        /// The step at which it diverged.
        step: usize,
        /// The thread the prefix named there.
        thread: ThreadId,
    },
}

/// One recorded execution: its steps, the enabled threads before each step past the prefix
/// it followed, and its end.
///
/// Each step becomes exactly one edge of the tree and the end one leaf, so building moves
/// them out rather than copying them.
struct Recorded {
    steps: Vec<Event>,
    /// The length of the prefix the execution followed: `enabled` starts there, as the
    /// branches before it belong to the executions that built those nodes.
    first: usize,
    enabled: Vec<Vec<ThreadId>>,
    end: RunEnd,
}

impl Recorded {
    /// The threads enabled before step `depth` (at least the prefix's length), moved out:
    /// the node at that depth is built once.
    fn take_enabled(&mut self, depth: usize) -> Vec<ThreadId> {
        std::mem::take(&mut self.enabled[depth - self.first])
    }

    /// Step `depth`, moved out (the execution's edge at that depth is built once).
    fn take_step(&mut self, depth: usize) -> Event {
        let thread = self.steps[depth].thread;
        std::mem::replace(&mut self.steps[depth], Event::unexplored(thread))
    }
}

struct Explorer<'a, P: Replay + ?Sized> {
    program: &'a P,
    options: &'a ReplayOptions,
    builder: TreeBuilder,
    start: Instant,
    stopped: Option<Limit>,
}

/// Explores every interleaving of `program` by re-executing schedule prefixes, and returns the
/// same [`Tree`] the state-space explorer would (unfolded: no node is shared).
pub fn explore_replay<P: Replay + ?Sized>(
    program: &P,
    options: &ReplayOptions,
) -> Result<Tree, ReplayError> {
    let mut explorer = Explorer {
        program,
        options,
        builder: TreeBuilder::new(),
        start: Instant::now(),
        stopped: None,
    };
    let mut first = explorer.run(&[])?;
    let mut prefix = Vec::new();
    let root = explorer.build(&mut prefix, &mut first)?;
    let facts = Exploration {
        partial: explorer.stopped,
        distinct_states: explorer.builder.node_count() as u64,
        elapsed: explorer.start.elapsed(),
    };
    Ok(explorer.builder.finish(root, facts))
}

impl<P: Replay + ?Sized> Explorer<'_, P> {
    /// Executes once, following `prefix` and then the lowest enabled thread.
    fn run(&mut self, prefix: &[ThreadId]) -> Result<Recorded, ReplayError> {
        let mut enabled = Vec::new();
        let mut step = 0;
        let mut diverged = None;
        let run = self.program.execute(&mut |candidates| {
            let this = step;
            step += 1;
            if this >= prefix.len() {
                enabled.push(candidates.to_vec());
            }
            match prefix.get(this) {
                Some(&t) if candidates.contains(&t) => Some(t),
                Some(&t) => {
                    diverged = Some((this, t));
                    None
                }
                None => candidates.iter().copied().min(),
            }
        });
        // An execution that ends before the prefix does has diverged too.
        let diverged = diverged.or_else(|| prefix.get(step).map(|&t| (step, t)));
        if let Some((step, thread)) = diverged {
            return Err(ReplayError::Nondeterministic {
                prefix: prefix.to_vec(),
                step,
                thread,
            });
        }
        Ok(Recorded {
            steps: run.steps,
            first: prefix.len(),
            enabled,
            end: run.end,
        })
    }

    fn out_of_budget(&mut self) -> bool {
        if self.stopped.is_none() {
            if self.builder.node_count() >= self.options.max_states {
                self.stopped = Some(Limit::MaxStates);
            } else if self
                .options
                .timeout
                .is_some_and(|t| self.start.elapsed() > t)
            {
                self.stopped = Some(Limit::Timeout);
            }
        }
        self.stopped.is_some()
    }

    fn stopped_leaf(&mut self, limit: Limit) -> NodeId {
        self.builder
            .leaf(Leaf::bounded(History::new(), Bound::Stopped { limit }))
    }

    /// Builds the node reached by `prefix`, given an execution `run` whose schedule starts
    /// with `prefix`.
    fn build(
        &mut self,
        prefix: &mut Vec<ThreadId>,
        run: &mut Recorded,
    ) -> Result<NodeId, ReplayError> {
        let depth = prefix.len();
        if depth == run.steps.len() {
            // An execution ends at one leaf only.
            return Ok(self.leaf(std::mem::replace(&mut run.end, RunEnd::Abandoned)));
        }
        let taken = run.steps[depth].thread;
        let threads = run.take_enabled(depth);
        let mut children = Vec::with_capacity(threads.len());
        for thread in threads {
            if self.out_of_budget() {
                let limit = self.stopped.unwrap_or(Limit::MaxStates);
                let step = if thread == taken {
                    run.take_step(depth)
                } else {
                    Event::unexplored(thread)
                };
                children.push((step, self.stopped_leaf(limit)));
                continue;
            }
            prefix.push(thread);
            // The edge is the step as the execution that took it recorded it: a program that
            // learns a step's value only by taking it (real code) offered it without one.
            let (step, child) = if thread == taken {
                (run.take_step(depth), self.build(prefix, run)?)
            } else {
                let mut other = self.run(prefix)?;
                (other.take_step(depth), self.build(prefix, &mut other)?)
            };
            prefix.pop();
            children.push((step, child));
        }
        Ok(self.builder.node(children))
    }

    fn leaf(&mut self, end: RunEnd) -> NodeId {
        let leaf = match end {
            RunEnd::Complete { history } => Leaf::complete(history),
            RunEnd::Stuck { history, waiting } => Leaf::stuck(history, waiting),
            RunEnd::Fault { history, fault } => Leaf::fault(history, fault),
            RunEnd::Bounded { history, bound } => Leaf::bounded(history, bound),
            RunEnd::Abandoned => {
                let limit = self.stopped.unwrap_or(Limit::MaxStates);
                return self.stopped_leaf(limit);
            }
        };
        self.builder.leaf(leaf)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::EventKind;
    use crate::history::Call;
    use crate::source::Span;
    use crate::value::Value;
    use std::cell::Cell;

    /// `threads` threads each take `steps` steps; thread 0 panics at its step `fault_at`.
    struct Counter {
        threads: usize,
        steps: usize,
        fault_at: Option<usize>,
        executions: Cell<u64>,
    }

    fn event(thread: ThreadId, i: usize) -> Event {
        Event {
            thread,
            op_index: 0,
            op: "inc".into(),
            kind: EventKind::Write,
            location: "x".into(),
            value: i.to_string(),
            span: Span::default(),
            call: (i == 0).then(|| Call::new("inc", vec![])),
            ret: None,
        }
    }

    impl Replay for Counter {
        fn execute(&self, choose: &mut Choose<'_>) -> Run {
            self.executions.set(self.executions.get() + 1);
            let mut done = vec![0; self.threads];
            let mut steps = Vec::new();
            loop {
                let enabled: Vec<_> = (0..self.threads)
                    .filter(|&t| done[t] < self.steps)
                    .collect();
                if enabled.is_empty() {
                    let mut history = History::new();
                    history.call(0, Call::new("inc", vec![]));
                    history.ret(0, Value::Unit);
                    return Run {
                        steps,
                        end: RunEnd::Complete { history },
                    };
                }
                let Some(t) = choose(&enabled) else {
                    return Run {
                        steps,
                        end: RunEnd::Abandoned,
                    };
                };
                steps.push(event(t, done[t]));
                done[t] += 1;
                if t == 0 && self.fault_at == Some(done[t]) {
                    return Run {
                        steps,
                        end: RunEnd::Fault {
                            history: History::new(),
                            fault: Fault {
                                message: "boom".into(),
                                span: None,
                            },
                        },
                    };
                }
            }
        }
    }

    fn counter(threads: usize, steps: usize, fault_at: Option<usize>) -> Counter {
        Counter {
            threads,
            steps,
            fault_at,
            executions: Cell::new(0),
        }
    }

    #[test]
    fn every_interleaving_once_with_one_execution_per_leaf() {
        let program = counter(2, 2, None);
        let tree = explore_replay(&program, &ReplayOptions::default()).unwrap();
        let stats = tree.stats();
        // C(4, 2) = 6 interleavings of two threads of two steps.
        assert_eq!((stats.leaves, stats.complete), (6, 6));
        assert_eq!(stats.max_depth, 4);
        assert_eq!(program.executions.get(), 6);
        assert!(tree.partial.is_none());
        // Following T1, T1 reaches a node where only T0 can move.
        let (_, node) = tree.follow(&[1, 1]).unwrap();
        assert_eq!(tree.children(node).len(), 1);
    }

    #[test]
    fn a_fault_ends_its_path() {
        let program = counter(2, 2, Some(1));
        let tree = explore_replay(&program, &ReplayOptions::default()).unwrap();
        let stats = tree.stats();
        // T0's first step faults wherever it happens: after 0, 1 or 2 steps of T1.
        assert_eq!(stats.fault, 3);
        let (_, leaf) = tree.follow(&[0]).unwrap();
        let leaf = tree.leaf(leaf).unwrap();
        assert_eq!(leaf.fault.as_ref().unwrap().message, "boom");
    }

    #[test]
    fn max_states_leaves_a_partial_tree() {
        let program = counter(3, 3, None);
        let options = ReplayOptions {
            max_states: 20,
            timeout: None,
        };
        let tree = explore_replay(&program, &options).unwrap();
        assert_eq!(tree.partial, Some(Limit::MaxStates));
        assert!(tree.stats().bounded > 0);
    }

    /// Thread 1 is enabled only in odd executions.
    struct Flaky(Cell<u32>);

    impl Replay for Flaky {
        fn execute(&self, choose: &mut Choose<'_>) -> Run {
            self.0.set(self.0.get() + 1);
            let mut enabled = vec![0];
            if self.0.get() % 2 == 1 {
                enabled.push(1);
            }
            let steps = choose(&enabled).map(|t| event(t, 0)).into_iter().collect();
            Run {
                steps,
                end: RunEnd::Complete {
                    history: History::new(),
                },
            }
        }
    }

    #[test]
    fn a_nondeterministic_program_is_an_error() {
        let err = explore_replay(&Flaky(Cell::new(0)), &ReplayOptions::default())
            .err()
            .unwrap();
        assert!(matches!(
            err,
            ReplayError::Nondeterministic {
                thread: 1,
                step: 0,
                ..
            }
        ));
    }
}
