//! Running a test of a model: the [`Program`] the recording scheduler explores, and the
//! sequential spec synthesized from the object's own serial runs.

use std::sync::Arc;

use fgvt_checker::{Apply, Spec};
use fgvt_tree::{
    Call, CoarseEvent, Event, EventKind, Fault, History, Program, Span, Step, ThreadId, Value, Wait,
};

use super::ast::Expr;
use super::interp::{
    pending_event, run_serial, Frame, Memory, Pause, Runner, SharedEvent, Stop, DEFAULT_BUDGET,
};
use super::model::Model;
use super::parser::Parser;
use super::value::Val;

/// One thread's progress: the operation it is at and, in the middle of one, its frames
/// (paused just before a shared instruction). No frames means "before operation `op`".
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct ThreadState {
    op: u32,
    frames: Vec<Frame>,
}

/// A complete state of a [`TestProgram`]: shared memory, every thread, and the coarse history
/// so far. Cloning copies a few `Arc`s and the thread list.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TestState {
    mem: Memory,
    threads: Vec<Arc<ThreadState>>,
    history: HashedHistory,
}

/// The coarse history of a state with a running hash of its events. States are hashed at every
/// step of the exploration; hashing the history this way costs the same however long it grew.
#[derive(Clone, Debug)]
struct HashedHistory {
    history: Arc<History>,
    hash: u64,
}

impl HashedHistory {
    fn new(history: History) -> Self {
        let mut hashed = HashedHistory {
            history: Arc::new(History::new()),
            hash: 0,
        };
        for event in history.events {
            hashed.push(event);
        }
        hashed
    }

    fn push(&mut self, event: fgvt_tree::CoarseEvent) {
        use std::hash::{Hash, Hasher};
        // DefaultHasher::new() has fixed keys: equal histories hash equally in every state.
        let mut hasher = std::hash::DefaultHasher::new();
        self.hash.hash(&mut hasher);
        event.hash(&mut hasher);
        self.hash = hasher.finish();
        Arc::make_mut(&mut self.history).events.push(event);
    }
}

impl PartialEq for HashedHistory {
    fn eq(&self, other: &Self) -> bool {
        self.hash == other.hash
            && (Arc::ptr_eq(&self.history, &other.history) || self.history == other.history)
    }
}

impl Eq for HashedHistory {}

impl std::hash::Hash for HashedHistory {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        state.write_u64(self.hash);
    }
}

/// A test of a model: serial `init`, concurrent threads, serial `final`.
#[derive(Clone, Debug)]
pub struct TestProgram {
    model: Arc<Model>,
    init: Vec<Call>,
    threads: Vec<Vec<Call>>,
    finals: Vec<Call>,
    budget: u64,
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
        TestProgram {
            model,
            init,
            threads,
            finals,
            budget: DEFAULT_BUDGET,
        }
    }

    /// Sets how many instructions one step (or one serial operation) may execute before it is
    /// cut off as an endless local loop ([`DEFAULT_BUDGET`] by default).
    pub fn with_budget(mut self, budget: u64) -> TestProgram {
        self.budget = budget;
        self
    }

    /// The model under test.
    pub fn model(&self) -> &Arc<Model> {
        &self.model
    }

    /// The shared memory of a state, by location name (`d[0]`, `head`).
    pub fn describe_memory(&self, state: &TestState) -> Vec<(String, Value)> {
        self.model.describe_memory(&state.mem)
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

    /// Runs `calls` serially as thread 0, appending them to `history`.
    fn serial(
        &self,
        mut mem: Memory,
        calls: &[Call],
        history: &mut History,
        part: &str,
    ) -> Result<Memory, Fault> {
        for call in calls {
            let frame = self.enter(call)?;
            history.call(0, call.clone());
            let mut r = Runner::new(&self.model, 0, mem, vec![frame], self.budget, false);
            match r.run(false) {
                Ok(Pause::Done(v)) => {
                    history.ret(0, v.to_value());
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
            Stop::Budget => Fault {
                message: format!(
                    "{what} ran more than {} instructions (endless loop?)",
                    self.budget
                ),
                span: None,
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
        }
    }
}

impl Program for TestProgram {
    type State = TestState;

    fn threads(&self) -> usize {
        self.threads.len()
    }

    fn initial_state(&self) -> Result<TestState, Fault> {
        let mem = initialize(&self.model, self.budget)
            .map_err(|s| self.stop_fault(s, "the constructor"))?;
        let mut history = History::new();
        let mem = self.serial(mem, &self.init, &mut history, "init")?;
        let threads = self
            .threads
            .iter()
            .map(|_| {
                Arc::new(ThreadState {
                    op: 0,
                    frames: Vec::new(),
                })
            })
            .collect();
        Ok(TestState {
            mem,
            threads,
            history: HashedHistory::new(history),
        })
    }

    fn step(&self, state: &TestState, thread: ThreadId) -> Step<TestState> {
        self.step_noting_wait(state, thread, &mut None)
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
        let th = &state.threads[thread];
        let op = self.threads[thread]
            .get(th.op as usize)
            .map(ToString::to_string)
            .unwrap_or_default();
        Some(Wait {
            thread,
            op,
            reason,
            span: Some(span),
        })
    }

    fn history(&self, state: &TestState) -> History {
        (*state.history.history).clone()
    }

    fn finish(&self, state: &TestState) -> Result<History, Fault> {
        let mut history = (*state.history.history).clone();
        self.serial(state.mem.clone(), &self.finals, &mut history, "final")?;
        Ok(history)
    }

    fn stuck_history(&self, state: &TestState) -> History {
        let mut history = (*state.history.history).clone();
        for (t, th) in state.threads.iter().enumerate() {
            if th.frames.is_empty() {
                if let Some(call) = self.threads[t].get(th.op as usize) {
                    history.call(t, call.clone());
                }
            }
        }
        history.stuck = true;
        history
    }
}

impl TestProgram {
    /// [`Program::step`], also saying what the thread waits for when it is blocked.
    fn step_noting_wait(
        &self,
        state: &TestState,
        thread: ThreadId,
        wait: &mut Option<(String, Span)>,
    ) -> Step<TestState> {
        let th = &state.threads[thread];
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
        let mut r = Runner::new(
            &self.model,
            thread as u32,
            state.mem.clone(),
            frames,
            self.budget,
            true,
        );

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
                    event: ev,
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
                    Err(Stop::Budget) => {
                        return Step::Bounded {
                            reason: self.budget_reason(thread, op_index),
                        }
                    }
                    Err(Stop::Fault(message, span)) => {
                        // Report the access that failed as the event being executed.
                        let event = pending_event(&self.model, at)
                            .map(|sev| self.event(thread, op_index, sev, call));
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
            Err(Stop::Budget) => {
                return Step::Bounded {
                    reason: self.budget_reason(thread, op_index),
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
                    event,
                }
            }
            Ok(Pause::Shared) => {
                let frames = std::mem::take(&mut r.frames);
                Step::Moved {
                    state: self.advance(state, thread, r.mem, frames, &event),
                    event,
                }
            }
            Err(Stop::Budget) => Step::Bounded {
                reason: self.budget_reason(thread, op_index),
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

    /// The state after `thread` took a step that emitted `event`: `frames` empty means the
    /// operation returned.
    fn advance(
        &self,
        state: &TestState,
        thread: ThreadId,
        mem: Memory,
        frames: Vec<Frame>,
        event: &Event,
    ) -> TestState {
        let mut next = TestState {
            mem,
            threads: state.threads.clone(),
            history: state.history.clone(),
        };
        let op = state.threads[thread].op + u32::from(event.ret.is_some());
        next.threads[thread] = Arc::new(ThreadState { op, frames });
        if let Some(call) = &event.call {
            next.history.push(CoarseEvent::Call {
                thread,
                call: call.clone(),
            });
        }
        if let Some(v) = &event.ret {
            next.history.push(CoarseEvent::Return {
                thread,
                value: Some(v.clone()),
            });
        }
        next
    }

    fn budget_reason(&self, thread: ThreadId, op_index: usize) -> String {
        format!(
            "thread {thread} ran more than {} instructions in one step of `{}` without touching shared memory (endless local loop?)",
            self.budget, self.threads[thread][op_index]
        )
    }
}

/// Runs the model's initializer (shared variables' initial values, then the constructor).
fn initialize(model: &Model, budget: u64) -> Result<Memory, Stop> {
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

/// The spec synthesized from the object's own serial runs (Line-Up's): its state is the
/// object's memory, and an operation's result is what the object returns running it alone.
#[derive(Clone, Debug)]
pub struct SelfSpec {
    model: Arc<Model>,
    initial: Result<Memory, String>,
    budget: u64,
}

impl SelfSpec {
    /// The synthesized spec of `model`. A constructor that fails makes every `apply` invalid.
    pub fn new(model: Arc<Model>) -> SelfSpec {
        let budget = DEFAULT_BUDGET;
        let initial = initialize(&model, budget).map_err(|s| match s {
            Stop::Fault(m, span) => {
                format!("the constructor fails at {}: {m}", model.position(span))
            }
            Stop::Blocked(..) => "the constructor blocks".to_string(),
            Stop::Budget => "the constructor runs out of budget".to_string(),
        });
        SelfSpec {
            model,
            initial,
            budget,
        }
    }

    /// The model the spec runs.
    pub fn model(&self) -> &Arc<Model> {
        &self.model
    }
}

impl Spec for SelfSpec {
    type State = Memory;

    fn initial(&self) -> Memory {
        match &self.initial {
            Ok(mem) => mem.clone(),
            Err(_) => Memory::empty(&self.model),
        }
    }

    fn apply(&self, state: &Memory, thread: ThreadId, call: &Call) -> Apply<Memory> {
        if let Err(e) = &self.initial {
            return Apply::Invalid(e.clone());
        }
        if let Err(e) = self.model.check_call(call) {
            return Apply::Invalid(e);
        }
        let f = self.model.op_id(&call.op).expect("check_call found it");
        let args = call.args.iter().map(Val::from_value).collect();
        match run_serial(
            &self.model,
            state.clone(),
            thread as u32,
            f,
            args,
            self.budget,
        ) {
            Ok((v, mem)) => Apply::Returns {
                value: v.to_value(),
                state: mem,
            },
            Err(Stop::Blocked(..)) => Apply::Blocks,
            Err(Stop::Fault(m, span)) => Apply::Invalid(format!(
                "`{call}` run alone fails at {}: {m}",
                self.model.position(span)
            )),
            Err(Stop::Budget) => Apply::Invalid(format!(
                "`{call}` run alone executes more than {} instructions",
                self.budget
            )),
        }
    }

    fn name(&self) -> String {
        "self".into()
    }
}

/// Parses a call written in a test, like `write(0, 2)` or `add((1, true))`: literal arguments
/// only (integers, negative integers, `true`/`false`, `null`, tuples, double-quoted strings).
/// `Err` gives the byte offset within `text` and a message.
pub fn parse_call(text: &str) -> Result<Call, (usize, String)> {
    let err = |d: super::error::Diag| (d.span.start as usize, d.message);
    let mut p = Parser::new(0, text).map_err(err)?;
    let e = p.expr().map_err(err)?;
    if !p.at_end() {
        return Err((p.offset(), "unexpected text after the call".into()));
    }
    let Expr::Call(name, args, _) = e else {
        return Err((
            e.span().start as usize,
            "expected a call like `op(1, 2)`".into(),
        ));
    };
    let args = args.iter().map(literal).collect::<Result<Vec<_>, _>>()?;
    Ok(Call::new(name.name, args))
}

/// The value of a literal argument.
fn literal(e: &Expr) -> Result<Value, (usize, String)> {
    match e {
        Expr::Int(v, _) => Ok(Value::Int(*v)),
        Expr::Bool(b, _) => Ok(Value::Bool(*b)),
        Expr::Null(_) => Ok(Value::Null),
        Expr::Str(s, _) => Ok(Value::Str(s.clone())),
        Expr::Tuple(items, _) => Ok(Value::Tuple(
            items.iter().map(literal).collect::<Result<_, _>>()?,
        )),
        other => Err((
            other.span().start as usize,
            "arguments must be literals: integers, `true`, `false`, `null`, strings or tuples"
                .into(),
        )),
    }
}
