//! Running a test of a model: the [`Program`] the recording scheduler explores.

use std::cell::RefCell;
use std::sync::Arc;

use fgvt_tree::{
    Call, Event, EventKind, Fault, History, Lane, Program, Span, Step, ThreadId, Value, Wait,
    FINAL_LANE, INIT_LANE,
};

use super::interp::{
    pending_event, run_serial, Frame, Memory, Pause, Runner, SharedEvent, Stop, DEFAULT_BUDGET,
};
use super::model::{Model, WAIT_ADVICE};
use super::parts::{Parts, Row, ThreadState};
use super::steps::{Known, Steps};
use super::value::Val;

/// A complete state of a [`TestProgram`]: shared memory and every thread (the explorer keeps
/// the coarse history), as a row of numbers of parts the program stores once each (see
/// `parts.rs`). It means something only to the program that made it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TestState {
    row: Row,
}

/// A test of a model: serial `init`, concurrent threads, serial `final`.
#[derive(Debug)]
pub struct TestProgram {
    model: Arc<Model>,
    init: Vec<Call>,
    threads: Vec<Vec<Call>>,
    finals: Vec<Call>,
    budget: u64,
    /// The parts of every state made so far.
    parts: RefCell<Parts>,
    /// The steps taken so far, to replay on states that repeat them.
    steps: RefCell<Steps>,
}

impl TestProgram {
    /// A test running `init` serially, then `threads` concurrently, then `finals` serially.
    /// Calls are checked when they run: an unknown operation or a wrong arity is a fault.
    pub fn new(
        model: Arc<Model>,
        init: Vec<Call>,
        threads: Vec<Vec<Call>>,
        finals: Vec<Call>,
    ) -> TestProgram {
        let parts = Parts::new(threads.len());
        TestProgram {
            model,
            init,
            threads,
            finals,
            budget: DEFAULT_BUDGET,
            parts: RefCell::new(parts),
            steps: RefCell::new(Steps::default()),
        }
    }

    /// Sets how many instructions one step (or one serial operation) may execute before it is
    /// cut off as an endless local loop ([`DEFAULT_BUDGET`] by default).
    pub fn with_budget(mut self, budget: u64) -> TestProgram {
        self.budget = budget;
        // Steps taken under another budget may have ended differently.
        self.steps = RefCell::default();
        self
    }

    /// The model under test.
    pub fn model(&self) -> &Arc<Model> {
        &self.model
    }

    /// The shared memory of a state, by location name (`d[0]`, `head`).
    pub fn describe_memory(&self, state: &TestState) -> Vec<(String, Value)> {
        self.model
            .describe_memory(&self.parts.borrow().memory(&state.row))
    }

    /// The first frame of `call`, or a fault naming what is wrong with it.
    fn enter(&self, call: &Call) -> Result<Frame, Fault> {
        self.model.check_call(call).map_err(|message| Fault {
            message,
            span: None,
        })?;
        let f = self.model.op_id(&call.op).expect("check_call found it");
        Ok(Frame::new(
            &self.model,
            f,
            call.args.iter().map(Val::from_value).collect(),
        ))
    }

    /// Runs `calls` serially as thread 0, appending them to `history` in `lane` (the serial
    /// parts have lanes of their own, [`INIT_LANE`] and [`FINAL_LANE`]).
    fn serial(
        &self,
        mut mem: Memory,
        calls: &[Call],
        history: &mut History,
        lane: ThreadId,
    ) -> Result<Memory, Fault> {
        let part = Lane(lane);
        for call in calls {
            let frame = self.enter(call)?;
            history.call(lane, call.clone());
            let mut r = Runner::new(&self.model, 0, mem, vec![frame], self.budget, false);
            match r.run(false) {
                Ok(Pause::Done(v)) => {
                    history.ret(lane, v.to_value());
                    mem = r.mem;
                }
                Ok(Pause::Shared) => unreachable!("a non-preemptible run never pauses"),
                Err(stop) => {
                    return Err(self.stop_fault(stop, &format!("`{call}` in the {part} part")))
                }
            }
        }
        Ok(mem)
    }

    fn stop_fault(&self, stop: Stop, what: &str) -> Fault {
        match stop {
            Stop::Fault(message, span) => Fault {
                message,
                span: Some(span),
            },
            Stop::Blocked(..) => Fault {
                message: format!("{what} blocks forever (it runs alone)"),
                span: None,
            },
            Stop::Budget(at) => Fault {
                message: format!(
                    "{what} ran more than {} instructions without finishing, in {}; {WAIT_ADVICE}",
                    self.budget,
                    self.model.loop_at(at)
                ),
                span: Some(at),
            },
        }
    }

    fn event(
        &self,
        thread: ThreadId,
        op_index: usize,
        ev: SharedEvent,
        call: Option<Call>,
    ) -> Event {
        Event {
            thread,
            op_index,
            op: self.threads[thread][op_index].op.clone(),
            kind: ev.kind,
            location: ev.location,
            value: ev.value,
            span: ev.span,
            call,
            ret: None,
            order: None,
            memory: None,
            seen: None,
        }
    }
}

impl Program for TestProgram {
    type State = TestState;

    fn threads(&self) -> usize {
        self.threads.len()
    }

    fn initial_state(&self) -> Result<(TestState, History), Fault> {
        let mem = initialize(&self.model, self.budget)
            .map_err(|s| self.stop_fault(s, "the constructor"))?;
        let mut history = History::new();
        let mem = self.serial(mem, &self.init, &mut history, INIT_LANE)?;
        let threads = self.threads.iter().map(|_| ThreadState {
            op: 0,
            frames: Vec::new(),
        });
        let row = self.parts.borrow_mut().row(mem, threads);
        Ok((TestState { row }, history))
    }

    fn step(&self, state: &TestState, thread: ThreadId) -> Step<TestState> {
        let key = self.parts.borrow().step_key(&state.row, thread);
        if let Some(known) = self.steps.borrow_mut().get(&key) {
            return match known {
                Known::Done => Step::Done,
                Known::Blocked => Step::Blocked,
                Known::Moved(effect, event) => Step::Moved {
                    state: TestState {
                        row: self.parts.borrow_mut().apply(&state.row, thread, *effect),
                    },
                    event: event.clone(),
                },
            };
        }
        let step = self.step_noting_wait(state, thread, &mut None);
        let known = match &step {
            Step::Done => Known::Done,
            Step::Blocked => Known::Blocked,
            Step::Moved { state: next, event } => Known::Moved(
                self.parts.borrow().step_effect(&next.row, thread),
                event.clone(),
            ),
            // Not kept: they end a path, and are rare.
            Step::Fault { .. } | Step::Bounded { .. } | Step::Cut { .. } => return step,
        };
        self.steps.borrow_mut().insert(key, known);
        step
    }

    fn why_blocked(&self, state: &TestState, thread: ThreadId) -> Option<Wait> {
        let mut wait = None;
        if !matches!(
            self.step_noting_wait(state, thread, &mut wait),
            Step::Blocked
        ) {
            return None;
        }
        let (reason, span) = wait?;
        let op_index = self.parts.borrow().thread(&state.row, thread).op;
        let op = self.threads[thread]
            .get(op_index as usize)
            .map(ToString::to_string)
            .unwrap_or_default();
        Some(Wait {
            thread,
            op,
            reason,
            span: Some(span),
        })
    }

    fn finish(&self, state: &TestState) -> Result<History, Fault> {
        let mut history = History::new();
        let mem = self.parts.borrow().memory(&state.row);
        self.serial(mem, &self.finals, &mut history, FINAL_LANE)?;
        Ok(history)
    }

    fn blocked_calls(&self, state: &TestState) -> Vec<(ThreadId, Call)> {
        let parts = self.parts.borrow();
        (0..self.threads.len())
            .map(|t| (t, parts.thread(&state.row, t)))
            .filter(|(_, th)| th.frames.is_empty())
            .filter_map(|(t, th)| Some((t, self.threads[t].get(th.op as usize)?.clone())))
            .collect()
    }
}

impl TestProgram {
    /// [`Program::step`], also saying what the thread waits for when it is blocked.
    pub(crate) fn step_noting_wait(
        &self,
        state: &TestState,
        thread: ThreadId,
        wait: &mut Option<(String, Span)>,
    ) -> Step<TestState> {
        let (mem, th) = {
            let parts = self.parts.borrow();
            (
                parts.memory(&state.row),
                parts.thread(&state.row, thread).clone(),
            )
        };
        let op_index = th.op as usize;
        let calls = &self.threads[thread];
        let (frames, call) = if th.frames.is_empty() {
            let Some(call) = calls.get(op_index) else {
                return Step::Done;
            };
            match self.enter(call) {
                Ok(frame) => (vec![frame], Some(call.clone())),
                Err(fault) => return Step::Fault { event: None, fault },
            }
        } else {
            (th.frames.clone(), None)
        };
        let mut r = Runner::new(&self.model, thread as u32, mem, frames, self.budget, true);

        // Local code before the first shared access (only at the start of an operation).
        let event = match r.run(true) {
            Ok(Pause::Done(v)) => {
                // An operation without any shared access: one local step.
                let f = self
                    .model
                    .op_id(&calls[op_index].op)
                    .expect("entered above");
                let mut ev = self.event(
                    thread,
                    op_index,
                    SharedEvent {
                        kind: EventKind::Local,
                        location: String::new(),
                        value: String::new(),
                        span: self.model.funcs[f as usize].header,
                    },
                    call,
                );
                ev.ret = Some(v.to_value());
                return Step::Moved {
                    state: self.advance(state, thread, r.mem, Vec::new(), &ev),
                    event: Arc::new(ev),
                };
            }
            Ok(Pause::Shared) => {
                let at = r.position();
                match r.shared_step() {
                    Ok(ev) => self.event(thread, op_index, ev, call),
                    Err(Stop::Blocked(why, at)) => {
                        *wait = Some((why, at));
                        return Step::Blocked;
                    }
                    Err(Stop::Budget(at)) => {
                        return Step::Bounded {
                            reason: self.budget_reason(thread, op_index, at),
                        }
                    }
                    Err(Stop::Fault(message, span)) => {
                        // Report the access that failed as the event being executed; it
                        // read or wrote nothing, so its value says what went wrong.
                        let event = pending_event(&self.model, at).map(|sev| {
                            let mut event = self.event(thread, op_index, sev, call);
                            event.value = format!("fault: {message}");
                            event
                        });
                        return Step::Fault {
                            event,
                            fault: Fault {
                                message,
                                span: Some(span),
                            },
                        };
                    }
                }
            }
            Err(Stop::Budget(at)) => {
                return Step::Bounded {
                    reason: self.budget_reason(thread, op_index, at),
                }
            }
            Err(Stop::Fault(message, span)) => {
                return Step::Fault {
                    event: None,
                    fault: Fault {
                        message,
                        span: Some(span),
                    },
                }
            }
            Err(Stop::Blocked(why, at)) => {
                *wait = Some((why, at));
                return Step::Blocked;
            }
        };

        // Local code after the event, up to the next shared access or the operation's end.
        let mut event = event;
        match r.run(true) {
            Ok(Pause::Done(v)) => {
                event.ret = Some(v.to_value());
                Step::Moved {
                    state: self.advance(state, thread, r.mem, Vec::new(), &event),
                    event: Arc::new(event),
                }
            }
            Ok(Pause::Shared) => {
                let frames = std::mem::take(&mut r.frames);
                Step::Moved {
                    state: self.advance(state, thread, r.mem, frames, &event),
                    event: Arc::new(event),
                }
            }
            Err(Stop::Budget(at)) => Step::Bounded {
                reason: self.budget_reason(thread, op_index, at),
            },
            Err(Stop::Fault(message, span)) => Step::Fault {
                event: Some(event),
                fault: Fault {
                    message,
                    span: Some(span),
                },
            },
            Err(Stop::Blocked(why, at)) => {
                *wait = Some((why, at));
                Step::Blocked
            }
        }
    }

    /// The state after `thread` took a step that emitted `event`, leaving memory `mem` (made
    /// from `state`'s): `frames` empty means the operation returned.
    fn advance(
        &self,
        state: &TestState,
        thread: ThreadId,
        mem: Memory,
        frames: Vec<Frame>,
        event: &Event,
    ) -> TestState {
        let op = event.op_index as u32 + u32::from(event.ret.is_some());
        let next = ThreadState { op, frames };
        TestState {
            row: self.parts.borrow_mut().after(&state.row, mem, thread, next),
        }
    }

    fn budget_reason(&self, thread: ThreadId, op_index: usize, at: Span) -> String {
        format!(
            "thread {thread}'s `{}` ran more than {} instructions without touching shared memory, in {}: an endless local loop ({WAIT_ADVICE})",
            self.threads[thread][op_index],
            self.budget,
            self.model.loop_at(at)
        )
    }
}

/// Runs the model's initializer (shared variables' initial values, then the constructor).
pub(crate) fn initialize(model: &Model, budget: u64) -> Result<Memory, Stop> {
    run_serial(
        model,
        Memory::empty(model),
        0,
        model.init,
        Vec::new(),
        budget,
    )
    .map(|(_, mem)| mem)
}
