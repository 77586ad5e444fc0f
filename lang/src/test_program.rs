//! Running a test of a model: the [`Program`] the recording scheduler explores.

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::Arc;

use fgvt_memory::fix::Change;
use fgvt_memory::StoreId;
use fgvt_tree::{
    Bound, Call, Event, EventKind, Fault, History, Lane, Program, Span, Step, StoreRef, ThreadId,
    Value, Wait, FINAL_LANE, INIT_LANE,
};

use super::interp::{
    pending_event, run_serial, Frame, Memory, Pause, Runner, SharedEvent, Stop, WeakCx,
    DEFAULT_BUDGET,
};
use super::model::{Model, WAIT_ADVICE};
use super::parts::{Parts, Row, StepKey, ThreadState};
use super::steps::{Known, Steps};
use super::value::Val;
use super::weak::{
    memory_choice, memory_order, store_thread, Layout, Override, Values, WeakOptions, WeakState,
    DEFAULT_MAX_STALE,
};

/// A complete state of a [`TestProgram`]: shared memory and every thread (the explorer keeps
/// the coarse history), as a row of numbers of parts the program stores once each (see
/// `parts.rs`). It means something only to the program that made it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TestState {
    row: Row,
}

/// A test of a model: serial `init`, concurrent threads, serial `final`.
///
/// A model that declares an ordering weaker than `seq_cst` runs under the C++20 / Rust memory
/// model (RC11): see [`TestProgram::is_weak`] and the crate docs. Every other model runs
/// sequentially consistent.
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
    /// Under weak memory, its settings; `None` runs sequentially consistent.
    weak: Option<WeakOptions>,
    /// Under weak memory, the numbers of the values the graphs store.
    values: RefCell<Values>,
    /// Under weak memory, the steps taken so far by way (way 0 is in `steps`).
    ways: RefCell<HashMap<(StepKey, u32), Known>>,
    /// Every distinct event of the steps taken so far, once: the memoized steps share them
    /// (steps from different parts often do the same thing; on the 4×3 Treiber model 389,255
    /// memoized steps each held an event of 200 bytes and its texts).
    events: RefCell<std::collections::HashSet<Arc<Event>, foldhash::fast::FixedState>>,
    /// What tells histories apart for the explorer, when the caller knows the spec (see
    /// [`TestProgram::with_history_keys`]).
    history_keys: Option<fgvt_tree::HistoryKeysFactory>,
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
        let weak = model.is_weak().then(|| WeakOptions {
            max_ways: DEFAULT_MAX_STALE + 1,
            overrides: HashMap::new(),
        });
        TestProgram {
            model,
            init,
            threads,
            finals,
            budget: DEFAULT_BUDGET,
            parts: RefCell::new(parts),
            steps: RefCell::new(Steps::default()),
            weak,
            values: RefCell::default(),
            ways: RefCell::default(),
            events: RefCell::default(),
            history_keys: None,
        }
    }

    /// Tells the explorer's states apart by `keys` rather than by canonical histories: keys
    /// equal only where every continuation has the same verdict, which the spec the test is
    /// judged against can tell (`fgvt_checker::linearizations`, for a test without weak
    /// memory). Paths whose histories differ but whose futures cannot then share a state.
    pub fn with_history_keys(mut self, keys: fgvt_tree::HistoryKeysFactory) -> TestProgram {
        self.history_keys = Some(keys);
        self
    }

    /// Whether the test runs under the C++20 / Rust memory model: its model declares an
    /// ordering weaker than `seq_cst` (or [`TestProgram::with_changes`] made it so).
    pub fn is_weak(&self) -> bool {
        self.weak.is_some()
    }

    /// Under weak memory, lets an access read at most `max` older stores than the latest one
    /// (and go before at most `max` later ones); the rest are one bounded leaf
    /// ([`fgvt_tree::Bound::Stale`]). 7 by default.
    pub fn with_max_stale(mut self, max: u32) -> TestProgram {
        if let Some(weak) = &mut self.weak {
            weak.max_ways = max.saturating_add(1);
        }
        self.forget_steps();
        self
    }

    /// Runs the test sequentially consistent whatever its model declares: every access
    /// `seq_cst` (what a weak model's report compares with).
    pub fn sequentially_consistent(mut self) -> TestProgram {
        self.weak = None;
        self.forget_steps();
        self
    }

    /// Runs the test under weak memory with the model's orderings changed: each change names
    /// an access by [`crate::OrderedAccess::site`] (a stronger order for it, or a fence right
    /// before or after it). How a report checks that a change fixes the test.
    pub fn with_changes(mut self, changes: &[(u32, Change)]) -> TestProgram {
        let weak = self.weak.get_or_insert_with(|| WeakOptions {
            max_ways: DEFAULT_MAX_STALE + 1,
            overrides: HashMap::new(),
        });
        for &(site, change) in changes {
            let o = weak.overrides.entry(site).or_insert(Override::default());
            match change {
                Change::Order(order) => o.order = Some(order),
                Change::FenceBefore(order) => o.fence_before = Some(order),
                Change::FenceAfter(order) => o.fence_after = Some(order),
            }
        }
        self.forget_steps();
        self
    }

    /// Drops the memoized steps: they were taken under other settings.
    fn forget_steps(&mut self) {
        self.steps = RefCell::default();
        self.ways = RefCell::default();
    }

    /// Sets how many instructions one step (or one serial operation) may execute before it is
    /// cut off as an endless local loop ([`DEFAULT_BUDGET`] by default).
    pub fn with_budget(mut self, budget: u64) -> TestProgram {
        self.budget = budget;
        // Steps taken under another budget may have ended differently.
        self.forget_steps();
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
        self.model
            .check_call(call)
            .map_err(|message| Fault::new(message, None))?;
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
            Stop::Fault(message, span) => Fault::new(message, Some(span)),
            Stop::Blocked(..) => Fault::new(format!("{what} blocks forever (it runs alone)"), None),
            Stop::Budget(at) => Fault::new(
                format!(
                    "{what} ran more than {} instructions without finishing, in {}; {WAIT_ADVICE}",
                    self.budget,
                    self.model.loop_at(at)
                ),
                Some(at),
            ),
            // Serial parts run sequentially consistent: they have no ways to cut.
            Stop::Cut { access, .. } => Fault::new(format!("{what} was cut at {access}"), None),
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
            footprint: fgvt_tree::Footprint::Everything,
        }
    }
}

impl Program for TestProgram {
    type State = TestState;

    fn history_keys(&self, base: &History) -> Option<(Box<dyn fgvt_tree::HistoryKeys>, u32)> {
        // Under weak memory calls carry clocks, which the keys do not read.
        let keys = self.history_keys.as_ref().filter(|_| self.weak.is_none())?;
        Some(keys.keys(base))
    }

    fn threads(&self) -> usize {
        self.threads.len()
    }

    fn initial_state(&self) -> Result<(TestState, History), Fault> {
        let mem = initialize(&self.model, self.budget)
            .map_err(|s| self.stop_fault(s, "the constructor"))?;
        let mut history = History::new();
        let mut mem = self.serial(mem, &self.init, &mut history, INIT_LANE)?;
        if self.weak.is_some() {
            mem.weak = Some(Arc::new(self.graph_after_init(&mem)));
        }
        let threads = self.threads.iter().map(|_| ThreadState {
            op: 0,
            frames: Vec::new(),
        });
        let row = self.parts.borrow_mut().row(mem, threads);
        Ok((TestState { row }, history))
    }

    fn step_way(&self, state: &TestState, thread: ThreadId, way: u32) -> Step<TestState> {
        let key = (self.parts.borrow().step_key(&state.row, thread), way);
        if let Some(known) = self.ways.borrow().get(&key) {
            return self.replay(state, thread, known);
        }
        let step = self.shared(self.take_step(state, thread, way, &mut None));
        if let Some(known) = self.known(&step, thread) {
            self.ways.borrow_mut().insert(key, known);
        }
        step
    }

    fn step(&self, state: &TestState, thread: ThreadId) -> Step<TestState> {
        let key = self.parts.borrow().step_key(&state.row, thread);
        if let Some(known) = self.steps.borrow_mut().get(&key) {
            return self.replay(state, thread, known);
        }
        let step = self.shared(self.step_noting_wait(state, thread, &mut None));
        if let Some(known) = self.known(&step, thread) {
            self.steps.borrow_mut().insert(key, known);
        }
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
        let mut mem = self.parts.borrow().memory(&state.row);
        // Every store happens before the `final` part, which so reads the latest of each
        // location: the memory's mirror of them.
        mem.weak = None;
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
    /// `step`, its event the one an earlier step with the same event holds, if any.
    fn shared(&self, step: Step<TestState>) -> Step<TestState> {
        let Step::Moved { state, event } = step else {
            return step;
        };
        let mut events = self.events.borrow_mut();
        let event = match events.get(&event) {
            Some(known) => Arc::clone(known),
            None => {
                events.insert(Arc::clone(&event));
                event
            }
        };
        Step::Moved { state, event }
    }

    /// What a step did, to replay it; `None` for a step not kept (faults and bounds: they end
    /// a path, and are rare).
    fn known(&self, step: &Step<TestState>, thread: ThreadId) -> Option<Known> {
        Some(match step {
            Step::Done => Known::Done,
            Step::Blocked => Known::Blocked,
            Step::Moved { state: next, event } => Known::Moved(
                self.parts.borrow().step_effect(&next.row, thread),
                event.clone(),
            ),
            Step::Fault { .. } | Step::Bounded { .. } | Step::Cut { .. } => return None,
        })
    }

    /// A step taken before, replayed on `state`.
    fn replay(&self, state: &TestState, thread: ThreadId, known: &Known) -> Step<TestState> {
        match known {
            Known::Done => Step::Done,
            Known::Blocked => Step::Blocked,
            Known::Moved(effect, event) => Step::Moved {
                state: TestState {
                    row: self.parts.borrow_mut().apply(&state.row, thread, *effect),
                },
                event: event.clone(),
            },
        }
    }

    /// The execution graph at the start of the threads, under weak memory: every location
    /// with the value the serial `init` part left (see `weak.rs`).
    fn graph_after_init(&self, mem: &Memory) -> WeakState {
        let layout = Layout {
            globals: self.model.n_globals,
            locks: self.model.locks.len() as u32 + 1,
            threads: self.threads.len() as u32,
        };
        let mut values = self.values.borrow_mut();
        let mut initial: Vec<u64> = mem.globals.iter().map(|v| values.id(v)).collect();
        initial.extend((0..layout.locks + layout.threads).map(|_| 0));
        for obj in mem.heap.iter() {
            initial.extend(obj.fields.iter().map(|v| values.id(v)));
            initial.push(0);
        }
        let live = (0..self.threads.len())
            .filter(|&t| !self.threads[t].is_empty())
            .fold(0u64, |bits, t| bits | 1 << t);
        WeakState::new(layout, initial, live)
    }

    /// How a report names `store` of graph `w`.
    fn store_ref(&self, w: &WeakState, values: &Values, store: StoreId) -> StoreRef {
        let writer = w.writer(store);
        StoreRef {
            thread: store_thread(writer),
            value: values.get(w.x.value(store)).to_string(),
            span: writer.map(|(_, site)| self.model.sites[site as usize].span),
        }
    }

    /// [`Program::step`], also saying what the thread waits for when it is blocked.
    pub(crate) fn step_noting_wait(
        &self,
        state: &TestState,
        thread: ThreadId,
        wait: &mut Option<(String, Span)>,
    ) -> Step<TestState> {
        self.take_step(state, thread, 0, wait)
    }

    /// Way `way` of `thread`'s step from `state` (see [`Program::step_way`]), saying what the
    /// thread waits for when it is blocked.
    fn take_step(
        &self,
        state: &TestState,
        thread: ThreadId,
        way: u32,
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
        // A call under weak memory says what it happens after: the operations it follows.
        let seen = match (&mem.weak, &call) {
            (Some(w), Some(_)) => Some(w.clock(thread, op_index)),
            _ => None,
        };
        // Sequentially consistent, the step touches no value table.
        let mut values = self.weak.as_ref().map(|_| self.values.borrow_mut());
        let mut r = Runner::new(&self.model, thread as u32, mem, frames, self.budget, true);
        if let (Some(options), Some(values)) = (&self.weak, values.as_deref_mut()) {
            r.weak = Some(WeakCx {
                values,
                options,
                way,
                chosen: None,
            });
        }

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
                ev.seen = seen;
                let Runner { mut mem, .. } = r;
                drop(values);
                returned(&mut mem, thread);
                return Step::Moved {
                    state: self.advance(state, thread, mem, Vec::new(), &ev),
                    event: Arc::new(ev),
                };
            }
            Ok(Pause::Shared) => {
                let at = r.position();
                match r.shared_step() {
                    Ok(ev) => {
                        let mut event = self.event(thread, op_index, ev, call);
                        event.seen = seen;
                        if let (Some(cx), Some(w)) = (&r.weak, &r.mem.weak) {
                            if let Some(chosen) = &cx.chosen {
                                event.order = Some(memory_order(chosen.order));
                                event.memory =
                                    memory_choice(chosen, |s| self.store_ref(w, &*cx.values, s))
                                        .map(Box::new);
                            }
                        }
                        event
                    }
                    Err(Stop::Cut { access, ways, max }) => return cut(thread, access, ways, max),
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
                            event: event.map(Box::new),
                            fault: Fault::new(message, Some(span)),
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
                    fault: Fault::new(message, Some(span)),
                }
            }
            Err(Stop::Blocked(why, at)) => {
                *wait = Some((why, at));
                return Step::Blocked;
            }
            Err(Stop::Cut { access, ways, max }) => return cut(thread, access, ways, max),
        };

        // Local code after the event, up to the next shared access or the operation's end.
        let mut event = event;
        let ran = r.run(true);
        let Runner {
            mut mem, frames, ..
        } = r;
        drop(values);
        match ran {
            Ok(Pause::Done(v)) => {
                event.ret = Some(v.to_value());
                returned(&mut mem, thread);
                Step::Moved {
                    state: self.advance(state, thread, mem, Vec::new(), &event),
                    event: Arc::new(event),
                }
            }
            Ok(Pause::Shared) => Step::Moved {
                state: self.advance(state, thread, mem, frames, &event),
                event: Arc::new(event),
            },
            Err(Stop::Budget(at)) => Step::Bounded {
                reason: self.budget_reason(thread, op_index, at),
            },
            Err(Stop::Fault(message, span)) => Step::Fault {
                event: Some(Box::new(event)),
                fault: Fault::new(message, Some(span)),
            },
            Err(Stop::Blocked(why, at)) => {
                *wait = Some((why, at));
                Step::Blocked
            }
            Err(Stop::Cut { access, ways, max }) => cut(thread, access, ways, max),
        }
    }

    /// The state after `thread` took a step that emitted `event`, leaving memory `mem` (made
    /// from `state`'s): `frames` empty means the operation returned.
    fn advance(
        &self,
        state: &TestState,
        thread: ThreadId,
        mut mem: Memory,
        frames: Vec<Frame>,
        event: &Event,
    ) -> TestState {
        let op = event.op_index as u32 + u32::from(event.ret.is_some());
        if let Some(w) = &mut mem.weak {
            // A thread that has run all its operations no longer acts: the graph's key
            // forgets what only it could still meet.
            let done = frames.is_empty() && op as usize >= self.threads[thread].len();
            let live = if done {
                w.live() & !(1 << thread)
            } else {
                w.live()
            };
            if !w.is_sealed() || live != w.live() {
                let w = Arc::make_mut(w);
                w.set_live(live);
                w.seal();
            }
        }
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

/// The step of a way past the bound on ways: `access` (for people) had `ways`, `max` allowed.
fn cut(thread: ThreadId, access: String, ways: u32, max: u32) -> Step<TestState> {
    Step::Cut {
        bound: Bound::Stale {
            thread,
            access,
            ways,
            max,
        },
    }
}

/// Under weak memory, notes in `mem`'s graph that `thread`'s operation returned.
fn returned(mem: &mut Memory, thread: ThreadId) {
    if let Some(w) = &mut mem.weak {
        Arc::make_mut(w).op_returned(thread);
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
