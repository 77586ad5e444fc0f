//! A Rust test as an [`fgvt_tree::Program`], so that real code is explored by the same
//! state-graph search as models: equal states merged, loops back to a state on the path kept as
//! loop edges, livelocks found as strongly connected components.
//!
//! Real code cannot be copied at a branch point, so a [`State`] is a *schedule* (the threads
//! chosen so far, from the start) with the fingerprint of the point it leads to (see
//! `fingerprint.rs`): states are equal when their fingerprints are, whichever schedule
//! reached them first, and the explorer keeps the first. Taking a step from a state re-executes
//! its schedule from scratch on a fresh object, takes the step, runs to the next point where
//! the explorer would choose, and abandons the execution there: one execution per edge of the
//! state graph, which for any test with races is far smaller than the unfolded tree.
//!
//! What the threads can do at a point (enabled, blocked, done) is learned by the execution that
//! reaches it, so a state carries it: asking a blocked or finished thread for its step costs no
//! execution. A state where the threads have ended carries the `final` part's history; one
//! where no thread can move, what each waits for.

use std::cell::RefCell;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use fgvt_tree::replay::{ReplayError, RunEnd};
use fgvt_tree::{Call, Event, Fault, History, Program, Step, ThreadId, Wait};

use crate::fingerprint::{combine, summand, Fingerprint};
use crate::runtime::{self, Body, Engine, Execution, Point, Status};

/// The test's executions, as a program the explorer steps through.
pub(crate) struct Reexecuted {
    threads: usize,
    body: Body,
    engine: RefCell<Engine>,
    /// The first schedule whose re-execution did not reach the state it was recorded for.
    error: RefCell<Option<ReplayError>>,
    /// Whether states are told apart by fingerprint alone; else by schedule too, so that no
    /// two paths share a state (the unfolded tree, the reference merging is tested against).
    merge: bool,
}

/// A point of the test's executions: the schedule that reaches it, told apart by fingerprint.
#[derive(Clone, Debug)]
pub(crate) struct State {
    fingerprint: Fingerprint,
    /// Thread choices from the start (a test has at most 256 threads).
    schedule: Arc<[u8]>,
    statuses: Arc<[Status]>,
    /// What a state without a next step holds for its leaf.
    end: Option<Arc<Ending>>,
}

/// What a state where no thread moves holds for its leaf.
#[derive(Debug)]
enum Ending {
    /// The threads have ended: the `final` part's history, or its fault.
    Finished(Result<History, Fault>),
    /// No thread can move: what each blocked one waits for, and the calls of those blocked
    /// before their operation's first step.
    Stuck {
        waiting: Vec<Wait>,
        calls: Vec<(ThreadId, Call)>,
    },
}

impl PartialEq for State {
    fn eq(&self, other: &Self) -> bool {
        self.fingerprint == other.fingerprint
    }
}

impl Eq for State {}

impl Hash for State {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.fingerprint.hash(state);
    }
}

/// The most threads a test may have: schedules are stored a byte per choice.
pub(crate) const MAX_THREADS: usize = 256;

impl Reexecuted {
    /// The executions of `body` (the test's plan on a fresh object) with `threads` threads.
    pub(crate) fn new(threads: usize, body: Body, merge: bool) -> Self {
        Reexecuted {
            threads,
            body,
            engine: RefCell::new(Engine::new()),
            error: RefCell::new(None),
            merge,
        }
    }

    /// Why a schedule could not be replayed, if one could not: the exploration is then void.
    pub(crate) fn take_error(&self) -> Option<ReplayError> {
        self.error.borrow_mut().take()
    }

    /// Runs the test once along `schedule`, abandoning it at the first point past it; `None`
    /// (and the error kept) when the execution does not follow the schedule.
    fn run(&self, schedule: &[u8]) -> Option<Execution> {
        let mut step = 0;
        let mut diverged = None;
        // Only the last step of the schedule is a new edge.
        let record_from = schedule.len().saturating_sub(1);
        let execution = runtime::execute(
            &mut self.engine.borrow_mut(),
            self.threads,
            record_from,
            &mut |enabled: &[ThreadId]| {
                let this = step;
                step += 1;
                let wanted = usize::from(*schedule.get(this)?);
                if enabled.contains(&wanted) {
                    Some(wanted)
                } else {
                    diverged = Some((this, wanted));
                    None
                }
            },
            std::sync::Arc::clone(&self.body),
        );
        // An execution that ends before the schedule does has diverged too.
        let taken = execution.taken;
        let diverged = diverged
            .or_else(|| (taken < schedule.len()).then(|| (taken, usize::from(schedule[taken]))));
        if let Some((step, thread)) = diverged {
            self.error
                .borrow_mut()
                .get_or_insert(ReplayError::Nondeterministic {
                    prefix: schedule.iter().map(|&t| usize::from(t)).collect(),
                    step,
                    thread,
                });
            return None;
        }
        Some(execution)
    }

    /// The state an execution along `schedule` stopped at, if it stopped at a point.
    fn state(&self, schedule: Arc<[u8]>, point: Point, end: Option<Ending>) -> State {
        let fingerprint = if self.merge {
            point.fingerprint
        } else {
            let path = schedule
                .iter()
                .fold(0x5c4e_d01e, |h, &t| combine(h, u64::from(t)));
            point.fingerprint ^ summand(path, schedule.len() as u64)
        };
        State {
            fingerprint,
            schedule,
            statuses: point.statuses.into(),
            end: end.map(Arc::new),
        }
    }

    /// Where an execution that followed `schedule` ended, with the step that ends the
    /// schedule: a state, or the fault of that step (`Err`).
    fn arrival(&self, schedule: Arc<[u8]>, execution: Execution) -> Arrival {
        let Execution {
            mut run,
            point,
            finals_from,
            blocked,
            ..
        } = execution;
        // The schedule's last step is the one event the execution built (see `run`).
        let event = if schedule.is_empty() {
            None
        } else {
            run.steps.drain(..).next()
        };
        // Every end but a fault before the threads ended comes with its point; the fallback
        // (all done) is for an execution whose threads never started.
        let point = point.unwrap_or_else(|| Point {
            fingerprint: 0,
            statuses: vec![Status::Done; self.threads],
        });
        let end = match run.end {
            RunEnd::Abandoned => None,
            RunEnd::Stuck { waiting, .. } => Some(Ending::Stuck {
                waiting,
                calls: blocked,
            }),
            RunEnd::Complete { history } => {
                let finals = tail(history, finals_from.unwrap_or(0));
                Some(Ending::Finished(Ok(finals)))
            }
            // The `final` part failed: the threads' part ended at a point.
            RunEnd::Fault { fault, .. } if finals_from.is_some() => {
                Some(Ending::Finished(Err(fault)))
            }
            RunEnd::Fault { fault, .. } => return Arrival::Fault(fault, event),
        };
        Arrival::At(self.state(schedule, point, end), event)
    }
}

/// Where an execution along a schedule ended.
enum Arrival {
    /// At a state, after the schedule's last step (`None` for the empty schedule).
    At(State, Option<Event>),
    /// The schedule's last step (or, for the empty schedule, the serial part) failed.
    Fault(Fault, Option<Event>),
}

/// The events of `history` from `from` on, as a history of their own.
fn tail(mut history: History, from: usize) -> History {
    let events = history.events.split_off(from.min(history.events.len()));
    History {
        events,
        stuck: false,
    }
}

impl Program for Reexecuted {
    type State = State;

    fn threads(&self) -> usize {
        self.threads
    }

    fn initial_state(&self) -> Result<(State, History), Fault> {
        let schedule: Arc<[u8]> = Arc::from(Vec::new());
        let Some(execution) = self.run(&schedule) else {
            return Err(Fault {
                message: "the test did not run the same way twice".into(),
                span: None,
            });
        };
        // The `init` part's history: the start of whatever history the execution ended with.
        let whole = match &execution.run.end {
            RunEnd::Abandoned => &execution.history,
            RunEnd::Complete { history }
            | RunEnd::Stuck { history, .. }
            | RunEnd::Fault { history, .. } => history,
        };
        let init = &whole.events[..execution.concurrent_from.min(whole.events.len())];
        let base = History {
            events: init.to_vec(),
            stuck: false,
        };
        match self.arrival(schedule, execution) {
            Arrival::At(state, _) => Ok((state, base)),
            Arrival::Fault(fault, _) => Err(fault),
        }
    }

    fn step(&self, state: &State, thread: ThreadId) -> Step<State> {
        match state.statuses.get(thread) {
            None | Some(Status::Done) => return Step::Done,
            Some(Status::Blocked) => return Step::Blocked,
            Some(Status::Enabled) => {}
        }
        if self.error.borrow().is_some() {
            // The exploration is void: wind it down.
            return Step::Done;
        }
        let mut schedule = state.schedule.to_vec();
        schedule.push(u8::try_from(thread).expect("at most 256 threads"));
        let schedule: Arc<[u8]> = schedule.into();
        let Some(execution) = self.run(&schedule) else {
            return Step::Done;
        };
        match self.arrival(schedule, execution) {
            Arrival::At(state, Some(event)) => Step::Moved {
                state,
                event: Arc::new(event),
            },
            // Not reached: a run that followed a non-empty schedule took its last step.
            Arrival::At(_, None) => Step::Done,
            Arrival::Fault(fault, event) => Step::Fault { event, fault },
        }
    }

    fn finish(&self, state: &State) -> Result<History, Fault> {
        match state.end.as_deref() {
            Some(Ending::Finished(finals)) => finals.clone(),
            _ => Ok(History::new()),
        }
    }

    fn blocked_calls(&self, state: &State) -> Vec<(ThreadId, Call)> {
        match state.end.as_deref() {
            Some(Ending::Stuck { calls, .. }) => calls.clone(),
            _ => Vec::new(),
        }
    }

    fn why_blocked(&self, state: &State, thread: ThreadId) -> Option<Wait> {
        match state.end.as_deref() {
            Some(Ending::Stuck { waiting, .. }) => {
                waiting.iter().find(|w| w.thread == thread).cloned()
            }
            _ => None,
        }
    }
}
