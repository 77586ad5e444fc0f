//! The bytecode interpreter: shared memory, thread frames, and the execution of one
//! thread up to (and through) its next shared-memory event.

use std::sync::Arc;

use fgvt_memory::{fix, AccessKind, CasChoice, Order};
use fgvt_tree::{EventKind, Span, Value};

use super::ast::{BinOp, UnOp};
use super::bytecode::{Instr, Loc};
use super::model::Model;
use super::value::Val;
use super::weak::{pick, Chosen, Override, Values, WeakOptions, WeakState};

/// The default number of instructions one step (or one serial operation) may execute before
/// it is cut off as an endless local loop.
pub const DEFAULT_BUDGET: u64 = 100_000;

/// Deepest call nesting before a run is faulted as endless recursion.
const MAX_DEPTH: usize = 1_000;

/// A lock's state: Java-style reentrant, with an owner and a hold count.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub(crate) struct LockState {
    /// The owning thread (meaningless while `count` is 0).
    pub owner: u32,
    /// How many times the owner holds it; 0 when free.
    pub count: u32,
}

/// A heap record.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Obj {
    /// Its record type.
    pub rec: u32,
    /// Field values, in declaration order.
    pub fields: Vec<Val>,
    /// The record's monitor (`synchronized (node)`).
    pub monitor: LockState,
}

/// The object's shared memory: globals, heap and locks. Cheap to clone: each part is
/// `Arc`-shared and copied only when written (heap records individually).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Memory {
    /// Under weak memory, the latest store of each location (what a sequentially consistent
    /// read would read, and what the `final` part reads).
    pub(crate) globals: Arc<Vec<Val>>,
    pub(crate) heap: Arc<Vec<Arc<Obj>>>,
    /// Declared locks, then the object's own monitor (`this`).
    pub(crate) locks: Arc<Vec<LockState>>,
    /// Under weak memory, the execution graph (see `weak.rs`); `None` when the test runs
    /// sequentially consistent, and in serial runs.
    pub(crate) weak: Option<Arc<WeakState>>,
}

impl Memory {
    /// Memory before the initializer runs: every global `()` and every lock free.
    pub(crate) fn empty(model: &Model) -> Memory {
        Memory {
            globals: Arc::new(vec![Val::Unit; model.n_globals as usize]),
            heap: Arc::new(Vec::new()),
            locks: Arc::new(vec![LockState::default(); model.locks.len() + 1]),
            weak: None,
        }
    }
}

/// One activation of a function.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Frame {
    pub func: u32,
    /// The next instruction.
    pub pc: u32,
    pub locals: Vec<Val>,
    pub stack: Vec<Val>,
}

impl Frame {
    /// A frame entering `func` with `args` in its first slots.
    pub fn new(model: &Model, func: u32, args: Vec<Val>) -> Frame {
        let mut locals = args;
        locals.resize(model.funcs[func as usize].n_locals as usize, Val::Unit);
        Frame {
            func,
            pc: 0,
            locals,
            stack: Vec::new(),
        }
    }
}

/// Why a run stopped without reaching its goal.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Stop {
    /// A runtime error, with its source span.
    Fault(String, Span),
    /// A lock held by another thread or a false `await`: the step must not happen. Says what
    /// the thread waits for, and where.
    Blocked(String, Span),
    /// The instruction budget ran out, at this span: the last loop that jumped back (the
    /// likely endless one), else the instruction that ran out.
    Budget(Span),
    /// Under weak memory, the way asked for is past the bound on ways: the access (for people)
    /// had `ways` ways and `max` were allowed.
    Cut { access: String, ways: u32, max: u32 },
}

/// What a run under weak memory needs besides the state's graph.
pub(crate) struct WeakCx<'a> {
    /// The numbers of values.
    pub values: &'a mut Values,
    pub options: &'a WeakOptions,
    /// The way the step's access takes (see [`fgvt_tree::Choice`]).
    pub way: u32,
    /// What the step's access chose, for its event.
    pub chosen: Option<Chosen>,
}

/// Where a run paused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Pause {
    /// Just before a shared instruction.
    Shared,
    /// The operation returned this value.
    Done(Val),
}

/// One shared access made during a step.
#[derive(Clone, Debug)]
pub(crate) struct Access {
    pub kind: EventKind,
    pub location: String,
    pub value: String,
}

/// The shared event a step performed.
#[derive(Clone, Debug)]
pub(crate) struct SharedEvent {
    pub kind: EventKind,
    pub location: String,
    pub value: String,
    pub span: Span,
}

/// A resolved shared address.
#[derive(Clone, Copy, Debug)]
enum Addr {
    Global(usize),
    Field(usize, usize),
}

/// Runs one thread over a private copy of memory. The caller keeps the result only when the
/// run succeeds, which makes blocking all-or-nothing.
pub(crate) struct Runner<'m> {
    model: &'m Model,
    tid: u32,
    pub mem: Memory,
    pub frames: Vec<Frame>,
    atomic: u32,
    /// The site of the `await` being evaluated, to say where a blocked thread waits.
    await_site: Option<u32>,
    budget: u64,
    /// The span of the last backward jump taken: where a run that exhausts its budget loops.
    last_loop: Option<Span>,
    /// Whether to format accesses (only explored steps need them).
    record: bool,
    accesses: Vec<Access>,
    /// Under weak memory, what the run needs besides the graph.
    pub weak: Option<WeakCx<'m>>,
}

type R<T> = Result<T, Stop>;

impl<'m> Runner<'m> {
    /// A runner for thread `tid`.
    pub fn new(
        model: &'m Model,
        tid: u32,
        mem: Memory,
        frames: Vec<Frame>,
        budget: u64,
        record: bool,
    ) -> Self {
        Runner {
            model,
            tid,
            mem,
            frames,
            atomic: 0,
            await_site: None,
            budget,
            last_loop: None,
            record,
            accesses: Vec::new(),
            weak: None,
        }
    }

    fn at(&self) -> Span {
        let f = self.frames.last().expect("a frame is active");
        let func = &self.model.funcs[f.func as usize];
        // `pc` was advanced before executing, so the current instruction is `pc - 1`.
        func.spans[(f.pc as usize).saturating_sub(1).min(func.spans.len() - 1)]
    }

    fn fault<T>(&self, msg: impl Into<String>) -> R<T> {
        Err(Stop::Fault(msg.into(), self.at()))
    }

    fn pop(&mut self) -> Val {
        self.frames
            .last_mut()
            .expect("a frame is active")
            .stack
            .pop()
            .expect("the compiler balances the stack")
    }

    fn push(&mut self, v: Val) {
        self.frames
            .last_mut()
            .expect("a frame is active")
            .stack
            .push(v);
    }

    /// The next instruction of the running thread.
    fn next_instr(&self) -> &'m Instr {
        let f = self.frames.last().expect("a frame is active");
        &self.model.funcs[f.func as usize].code[f.pc as usize]
    }

    /// Runs until just before the next shared instruction (when `preemptible`) or until the
    /// operation returns.
    pub fn run(&mut self, preemptible: bool) -> R<Pause> {
        loop {
            if preemptible && self.atomic == 0 && self.next_instr().is_shared() {
                return Ok(Pause::Shared);
            }
            if let Some(v) = self.exec()? {
                return Ok(Pause::Done(v));
            }
        }
    }

    /// Executes the shared instruction the thread is paused at: one event (a whole atomic
    /// block or `await` included).
    pub fn shared_step(&mut self) -> R<SharedEvent> {
        self.accesses.clear();
        let model = self.model;
        let instr = self.next_instr();
        match instr {
            Instr::AtomicBegin(site) | Instr::AwaitBegin(site) => {
                let kind = if matches!(instr, Instr::AtomicBegin(_)) {
                    EventKind::Atomic
                } else {
                    EventKind::Await
                };
                self.exec()?;
                while self.atomic > 0 {
                    if self.exec()?.is_some() {
                        return self.fault("the operation returned inside an atomic region");
                    }
                }
                let mut locs: Vec<&str> = Vec::new();
                for a in &self.accesses {
                    if !locs.contains(&a.location.as_str()) {
                        locs.push(&a.location);
                    }
                }
                let location = format!("{{{}}}", locs.join(", "));
                Ok(SharedEvent {
                    kind,
                    location,
                    value: String::new(),
                    span: model.sites[*site as usize].span,
                })
            }
            Instr::Read(_, site)
            | Instr::Write(_, site)
            | Instr::Cas(_, site)
            | Instr::Dcas(_, _, site)
            | Instr::Lock(site)
            | Instr::Unlock(site) => {
                let span = model.sites[*site as usize].span;
                self.exec()?;
                let a = self
                    .accesses
                    .pop()
                    .expect("a shared instruction records its access");
                Ok(SharedEvent {
                    kind: a.kind,
                    location: a.location,
                    value: a.value,
                    span,
                })
            }
            other => unreachable!("shared_step at a local instruction {other:?}"),
        }
    }

    /// The function and instruction the thread is at.
    pub fn position(&self) -> (u32, u32) {
        let f = self.frames.last().expect("a frame is active");
        (f.func, f.pc)
    }

    fn note(
        &mut self,
        kind: EventKind,
        location: impl FnOnce() -> String,
        value: impl FnOnce() -> String,
    ) {
        if self.record {
            self.accesses.push(Access {
                kind,
                location: location(),
                value: value(),
            });
        }
    }

    // ----- memory -----

    fn resolve(&mut self, loc: Loc, site: u32) -> R<(Addr, String)> {
        let model = self.model;
        match loc {
            Loc::Global(slot) => Ok((Addr::Global(slot as usize), String::new())),
            Loc::Elem(id) => {
                let array = &model.arrays[id as usize];
                let index = self.pop();
                let Val::Int(i) = index else {
                    return self.fault(format!(
                        "array index must be an int, found {}",
                        index.type_name()
                    ));
                };
                if i < 0 || i >= i64::from(array.len) {
                    return self.fault(format!(
                        "index {i} out of range for `{}` (length {})",
                        array.name, array.len
                    ));
                }
                let text = if self.record {
                    format!("{}[{i}]", array.name)
                } else {
                    String::new()
                };
                Ok((Addr::Global(array.base as usize + i as usize), text))
            }
            Loc::Field(fid) => {
                let base = self.pop();
                let text = &model.sites[site as usize].text;
                match base {
                    Val::Ref(a) => {
                        let obj = &self.mem.heap[a as usize];
                        let rec = &model.records[obj.rec as usize];
                        match rec.slot_of[fid as usize] {
                            Some(slot) => {
                                Ok((Addr::Field(a as usize, slot as usize), String::new()))
                            }
                            None => self.fault(format!(
                                "`{text}`: record `{}` has no field `{}`",
                                rec.name, model.field_names[fid as usize]
                            )),
                        }
                    }
                    Val::Null => self.fault(format!("null dereference accessing `{text}`")),
                    other => self.fault(format!(
                        "`{text}`: field access on {}, not a record",
                        other.type_name()
                    )),
                }
            }
        }
    }

    fn location_text(&self, addr_text: String, site: u32) -> String {
        if addr_text.is_empty() {
            self.model.sites[site as usize].text.clone()
        } else {
            addr_text
        }
    }

    fn get(&self, addr: Addr) -> Val {
        match addr {
            Addr::Global(g) => self.mem.globals[g].clone(),
            Addr::Field(o, f) => self.mem.heap[o].fields[f].clone(),
        }
    }

    fn set(&mut self, addr: Addr, v: Val) {
        match addr {
            Addr::Global(g) => Arc::make_mut(&mut self.mem.globals)[g] = v,
            Addr::Field(o, f) => {
                Arc::make_mut(&mut Arc::make_mut(&mut self.mem.heap)[o]).fields[f] = v
            }
        }
    }

    /// The lock a monitor value designates.
    fn lock_of(&mut self, monitor: Val, site: u32) -> R<&mut LockState> {
        match monitor {
            Val::Lock(id) => Ok(&mut Arc::make_mut(&mut self.mem.locks)[id as usize]),
            Val::Ref(a) => {
                Ok(&mut Arc::make_mut(&mut Arc::make_mut(&mut self.mem.heap)[a as usize]).monitor)
            }
            Val::Null => self.fault(format!(
                "null dereference: locking `{}`",
                self.model.sites[site as usize].text
            )),
            other => self.fault(format!(
                "`{}` is {}, not a lock or a record",
                self.model.sites[site as usize].text,
                other.type_name()
            )),
        }
    }

    // ----- weak memory (see `weak.rs`) -----

    /// The graph and the run's weak context: only called under weak memory.
    fn weak_parts(&mut self) -> (&mut WeakState, &mut WeakCx<'m>) {
        let w = Arc::make_mut(
            self.mem
                .weak
                .as_mut()
                .expect("a run with a weak context has a graph"),
        );
        w.touch();
        (w, self.weak.as_mut().expect("called under weak memory"))
    }

    /// The graph location of record `a`'s first field (its fields follow, then its monitor's
    /// word): records are laid out in the order of the heap.
    fn record_loc(&self, a: usize) -> u32 {
        let layout = self.mem.weak.as_ref().expect("under weak memory").layout;
        let before: usize = self.mem.heap[..a].iter().map(|o| o.fields.len() + 1).sum();
        layout.heap() + before as u32
    }

    /// The graph location of `addr`.
    fn weak_loc(&self, addr: Addr) -> u32 {
        match addr {
            Addr::Global(g) => g as u32,
            Addr::Field(o, f) => self.record_loc(o) + f as u32,
        }
    }

    /// The order an access of `kind` at `site` runs with (`failure`: a `cas`'s failed load),
    /// the fences a report's trial adds around it, and whether it may read only the latest
    /// store (inside a region, which runs `SeqCst` on the latest stores).
    fn weak_order(&self, site: u32, kind: AccessKind, failure: bool) -> (Order, Override, bool) {
        if self.atomic > 0 {
            return (Order::SeqCst, Override::default(), true);
        }
        let s = &self.model.sites[site as usize];
        let declared = if failure { s.failure } else { s.order };
        let cx = self.weak.as_ref().expect("under weak memory");
        match cx.options.overrides.get(&site) {
            None => (declared, Override::default(), false),
            Some(o) => {
                let order = o
                    .order
                    .map_or(declared, |wanted| fix::valid_for(kind, wanted));
                (order, *o, false)
            }
        }
    }

    /// The bound hit by the way asked of the access at `site`, for its bounded leaf.
    fn cut(&self, what: &str, site: u32, (ways, max): (u32, u32)) -> Stop {
        let s = &self.model.sites[site as usize];
        Stop::Cut {
            access: format!("{what} `{}` at {}", s.text, self.model.position(s.span)),
            ways,
            max,
        }
    }

    /// The latest value of `addr` in the graph, into the memory's mirror.
    fn mirror(&mut self, addr: Addr, loc: u32) {
        let (w, cx) = self.weak_parts();
        let latest = cx.values.get(w.x.value(w.x.latest(loc))).clone();
        self.set(addr, latest);
    }

    fn weak_load(&mut self, addr: Addr, site: u32) -> R<Val> {
        let loc = self.weak_loc(addr);
        let t = self.tid as usize;
        let (order, added, latest_only) = self.weak_order(site, AccessKind::Load, false);
        let (w, cx) = self.weak_parts();
        if let Some(fence) = added.fence_before {
            w.x.fence(t, fence);
        }
        let latest = w.x.latest(loc);
        let candidates = if latest_only {
            vec![latest]
        } else {
            w.x.load_candidates(t, loc, order)
        };
        let way = if latest_only { 0 } else { cx.way };
        let picked = pick(candidates.len(), way, cx.options.max_ways);
        let (i, ways, cut) = match picked {
            Ok(p) => p,
            Err(bound) => return Err(self.cut("load of", site, bound)),
        };
        let from = candidates[i];
        let id = w.x.load(t, loc, order, from);
        if let Some(fence) = added.fence_after {
            w.x.fence(t, fence);
        }
        if !latest_only {
            cx.chosen = Some(Chosen {
                order,
                way,
                ways,
                cut,
                read: Some(from),
                latest: (from != latest).then_some(latest),
                before: None,
            });
        }
        Ok(cx.values.get(id).clone())
    }

    fn weak_store(&mut self, addr: Addr, v: Val, site: u32) -> R<()> {
        let loc = self.weak_loc(addr);
        let t = self.tid as usize;
        let (order, added, latest_only) = self.weak_order(site, AccessKind::Store, false);
        let (w, cx) = self.weak_parts();
        if let Some(fence) = added.fence_before {
            w.x.fence(t, fence);
        }
        let mo = w.x.modification_order(loc);
        let places = if latest_only {
            vec![mo.len() - 1]
        } else {
            w.x.store_placements(t, loc, order)
        };
        let way = if latest_only { 0 } else { cx.way };
        let picked = pick(places.len(), way, cx.options.max_ways);
        let (i, ways, cut) = match picked {
            Ok(p) => p,
            Err(bound) => return Err(self.cut("store to", site, bound)),
        };
        let after = places[i];
        let id = cx.values.id(&v);
        let store = w.x.store(t, loc, id, order, after);
        w.note_writer(store, t as u32, site);
        if let Some(fence) = added.fence_after {
            w.x.fence(t, fence);
        }
        if !latest_only {
            cx.chosen = Some(Chosen {
                order,
                way,
                ways,
                cut,
                read: None,
                latest: None,
                before: mo.get(after + 1).copied(),
            });
        }
        self.mirror(addr, loc);
        Ok(())
    }

    fn weak_cas(&mut self, addr: Addr, expected: &Val, new: &Val, site: u32) -> R<bool> {
        let loc = self.weak_loc(addr);
        let t = self.tid as usize;
        let (success, added, latest_only) = self.weak_order(site, AccessKind::Rmw, false);
        let (failure, ..) = self.weak_order(site, AccessKind::Load, true);
        let tid = self.tid;
        let (w, cx) = self.weak_parts();
        let (expected, new) = (cx.values.id(expected), cx.values.id(new));
        if let Some(fence) = added.fence_before {
            w.x.fence(t, fence);
        }
        let latest = w.x.latest(loc);
        let choices = if latest_only {
            vec![CasChoice {
                from: latest,
                succeeds: w.x.value(latest) == expected,
            }]
        } else {
            w.x.cas_choices(t, loc, expected, success, failure)
        };
        let way = if latest_only { 0 } else { cx.way };
        let picked = pick(choices.len(), way, cx.options.max_ways);
        let (i, ways, cut) = match picked {
            Ok(p) => p,
            Err(bound) => return Err(self.cut("cas on", site, bound)),
        };
        let choice = choices[i];
        if choice.succeeds {
            let (_, store) = w.x.rmw(t, loc, success, choice.from, |_| new);
            w.note_writer(store, tid, site);
        } else {
            w.x.load(t, loc, failure, choice.from);
        }
        if let Some(fence) = added.fence_after {
            w.x.fence(t, fence);
        }
        if !latest_only {
            cx.chosen = Some(Chosen {
                order: if choice.succeeds { success } else { failure },
                way,
                ways,
                cut,
                read: Some(choice.from),
                latest: (choice.from != latest).then_some(latest),
                before: None,
            });
        }
        if choice.succeeds {
            self.mirror(addr, loc);
        }
        Ok(choice.succeeds)
    }

    /// A `dcas` under weak memory: `SeqCst`, on the latest stores of both locations.
    fn weak_dcas(
        &mut self,
        addrs: [Addr; 2],
        expected: [&Val; 2],
        new: [&Val; 2],
        site: u32,
    ) -> bool {
        let locs = addrs.map(|a| self.weak_loc(a));
        let t = self.tid as usize;
        let tid = self.tid;
        let (w, cx) = self.weak_parts();
        let expected = expected.map(|v| cx.values.id(v));
        let new = new.map(|v| cx.values.id(v));
        let succeeds = (0..2).all(|i| w.x.value(w.x.latest(locs[i])) == expected[i]);
        for i in 0..2 {
            let from = w.x.latest(locs[i]);
            if succeeds {
                let (_, store) = w.x.rmw(t, locs[i], Order::SeqCst, from, |_| new[i]);
                w.note_writer(store, tid, site);
            } else {
                w.x.load(t, locs[i], Order::SeqCst, from);
            }
        }
        if succeeds {
            for i in 0..2 {
                self.mirror(addrs[i], locs[i]);
            }
        }
        succeeds
    }

    /// Taking (`acquire`) or releasing the lock `monitor` under weak memory: an acquire
    /// read-modify-write of its word, or a release store to it, as `std`'s mutexes.
    fn weak_lock(&mut self, monitor: &Val, acquire: bool) {
        let loc = match monitor {
            Val::Lock(id) => self
                .mem
                .weak
                .as_ref()
                .expect("under weak memory")
                .layout
                .lock(*id),
            Val::Ref(a) => {
                self.record_loc(*a as usize) + self.mem.heap[*a as usize].fields.len() as u32
            }
            _ => unreachable!("`lock_of` accepted the monitor"),
        };
        let t = self.tid as usize;
        let (w, _) = self.weak_parts();
        let latest = w.x.latest(loc);
        if acquire {
            w.x.rmw(t, loc, Order::Acquire, latest, |v| v);
        } else {
            let end = w.x.modification_order(loc).len() - 1;
            let value = w.x.value(latest);
            w.x.store(t, loc, value, Order::Release, end);
        }
    }

    /// Record `a`, just made, gets its locations: its fields with the values `new` gave them
    /// as initial stores, then its monitor's word.
    fn weak_new(&mut self, a: usize) {
        let fields = self.mem.heap[a].fields.clone();
        let first = self.record_loc(a);
        let (w, cx) = self.weak_parts();
        debug_assert_eq!(
            w.x.locations(),
            first as usize,
            "records are laid out in heap order"
        );
        for v in &fields {
            let id = cx.values.id(v);
            w.add_location(id);
        }
        w.add_location(0);
    }

    /// A `fence(order)` under weak memory.
    fn weak_fence(&mut self, site: u32) {
        let (order, ..) = self.weak_order(site, AccessKind::Fence, false);
        let t = self.tid as usize;
        let (w, _) = self.weak_parts();
        w.x.fence(t, order);
    }

    // ----- one instruction -----

    /// Executes one instruction; `Some(v)` when the operation's outermost frame returned.
    fn exec(&mut self) -> R<Option<Val>> {
        if self.budget == 0 {
            return Err(Stop::Budget(self.last_loop.unwrap_or_else(|| self.at())));
        }
        self.budget -= 1;
        let model = self.model;
        let instr = {
            let f = self.frames.last_mut().expect("a frame is active");
            let i = &model.funcs[f.func as usize].code[f.pc as usize];
            f.pc += 1;
            i
        };
        match instr {
            Instr::Push(v) => self.push(v.clone()),
            Instr::Load(s) => {
                let f = self.frames.last_mut().expect("a frame is active");
                let v = f.locals[*s as usize].clone();
                f.stack.push(v);
            }
            Instr::Store(s) => {
                let f = self.frames.last_mut().expect("a frame is active");
                f.locals[*s as usize] = f.stack.pop().expect("the compiler balances the stack");
            }
            Instr::Pop => {
                self.pop();
            }
            Instr::Unary(op) => {
                let v = self.pop();
                let r = match (op, v) {
                    (UnOp::Neg, Val::Int(i)) => match i.checked_neg() {
                        Some(r) => Val::Int(r),
                        None => return self.fault("integer overflow"),
                    },
                    (UnOp::Not, Val::Bool(b)) => Val::Bool(!b),
                    (UnOp::Neg, v) => {
                        return self.fault(format!("`-` needs an int, found {}", v.type_name()))
                    }
                    (UnOp::Not, v) => {
                        return self.fault(format!("`!` needs a bool, found {}", v.type_name()))
                    }
                };
                self.push(r);
            }
            Instr::Binary(op) => {
                let b = self.pop();
                let a = self.pop();
                let r = self.binary(*op, a, b)?;
                self.push(r);
            }
            Instr::Jump(t) => {
                if *t < self.frames.last().expect("a frame is active").pc {
                    // A loop's back edge (its span is the loop's condition or the loop).
                    self.last_loop = Some(self.at());
                }
                self.frames.last_mut().expect("a frame is active").pc = *t;
            }
            Instr::JumpIfFalse(t) => match self.pop() {
                Val::Bool(true) => {}
                Val::Bool(false) => self.frames.last_mut().expect("a frame is active").pc = *t,
                other => {
                    return self.fault(format!(
                        "a condition must be a bool, found {}",
                        other.type_name()
                    ))
                }
            },
            Instr::Tuple(n) => {
                let f = self.frames.last_mut().expect("a frame is active");
                let items = f.stack.split_off(f.stack.len() - *n as usize);
                f.stack.push(Val::Tuple(items.into()));
            }
            Instr::Proj(i) => match self.pop() {
                Val::Tuple(items) if (*i as usize) < items.len() => {
                    self.push(items[*i as usize].clone())
                }
                Val::Tuple(items) => {
                    return self.fault(format!("tuple of {} items has no item {i}", items.len()))
                }
                Val::Null => return self.fault(format!("null dereference projecting `.{i}`")),
                other => {
                    return self.fault(format!("`.{i}` needs a tuple, found {}", other.type_name()))
                }
            },
            Instr::Untuple(n) => match self.pop() {
                Val::Tuple(items) if items.len() == *n as usize => {
                    let f = self.frames.last_mut().expect("a frame is active");
                    f.stack.extend(items.iter().cloned());
                }
                Val::Tuple(items) => {
                    return self.fault(format!(
                        "cannot destructure a tuple of {} items into {n} names",
                        items.len()
                    ))
                }
                other => {
                    return self.fault(format!(
                        "cannot destructure {} into {n} names",
                        other.type_name()
                    ))
                }
            },
            Instr::New(rec, n) => {
                let info = &model.records[*rec as usize];
                let f = self.frames.last_mut().expect("a frame is active");
                let mut fields = f.stack.split_off(f.stack.len() - *n as usize);
                fields.extend(info.defaults[*n as usize..].iter().cloned());
                let heap = Arc::make_mut(&mut self.mem.heap);
                heap.push(Arc::new(Obj {
                    rec: *rec,
                    fields,
                    monitor: LockState::default(),
                }));
                let a = (heap.len() - 1) as u32;
                if self.weak.is_some() {
                    self.weak_new(a as usize);
                }
                self.push(Val::Ref(a));
            }
            Instr::Call(func, n) => {
                if self.frames.len() >= MAX_DEPTH {
                    return self.fault(format!(
                        "calls nested more than {MAX_DEPTH} deep (endless recursion?)"
                    ));
                }
                let f = self.frames.last_mut().expect("a frame is active");
                let args = f.stack.split_off(f.stack.len() - *n as usize);
                self.frames.push(Frame::new(model, *func, args));
            }
            Instr::Return => {
                let v = self.pop();
                self.frames.pop();
                if self.frames.is_empty() {
                    return Ok(Some(v));
                }
                self.push(v);
            }
            Instr::Assert(msg) => match self.pop() {
                Val::Bool(true) => {}
                Val::Bool(false) => {
                    return self.fault(msg.clone().unwrap_or_else(|| "assertion failed".into()))
                }
                other => {
                    return self.fault(format!(
                        "`assert` needs a bool, found {}",
                        other.type_name()
                    ))
                }
            },
            Instr::ReadFinal(loc, site) => {
                let (addr, _) = self.resolve(*loc, *site)?;
                let v = self.get(addr);
                self.push(v);
            }
            Instr::Read(loc, site) => {
                let (addr, text) = self.resolve(*loc, *site)?;
                let v = if self.weak.is_some() {
                    self.weak_load(addr, *site)?
                } else {
                    self.get(addr)
                };
                let loc_text = self.location_text(text, *site);
                self.note(EventKind::Read, || loc_text, || v.to_string());
                self.push(v);
            }
            Instr::Write(loc, site) => {
                let v = self.pop();
                let (addr, text) = self.resolve(*loc, *site)?;
                let loc_text = self.location_text(text, *site);
                self.note(EventKind::Write, || loc_text, || v.to_string());
                if self.weak.is_some() {
                    self.weak_store(addr, v, *site)?;
                } else {
                    self.set(addr, v);
                }
            }
            Instr::Cas(loc, site) => {
                let new = self.pop();
                let expected = self.pop();
                let (addr, text) = self.resolve(*loc, *site)?;
                let success = if self.weak.is_some() {
                    self.weak_cas(addr, &expected, &new, *site)?
                } else {
                    self.get(addr) == expected
                };
                let loc_text = self.location_text(text, *site);
                self.note(
                    EventKind::Cas { success },
                    || loc_text,
                    || format!("{expected} -> {new}"),
                );
                if success && self.weak.is_none() {
                    self.set(addr, new);
                }
                self.push(Val::Bool(success));
            }
            Instr::Dcas(l1, l2, site) => {
                let n2 = self.pop();
                let n1 = self.pop();
                let e2 = self.pop();
                let e1 = self.pop();
                // Address operands: the second location's are on top.
                let (a2, _) = self.resolve(*l2, *site)?;
                let (a1, _) = self.resolve(*l1, *site)?;
                let success = if self.weak.is_some() {
                    self.weak_dcas([a1, a2], [&e1, &e2], [&n1, &n2], *site)
                } else {
                    self.get(a1) == e1 && self.get(a2) == e2
                };
                let text = model.sites[*site as usize].text.clone();
                self.note(
                    EventKind::Dcas { success },
                    || text,
                    || format!("({e1}, {e2}) -> ({n1}, {n2})"),
                );
                if success && self.weak.is_none() {
                    self.set(a1, n1);
                    self.set(a2, n2);
                }
                self.push(Val::Bool(success));
            }
            Instr::Lock(site) => {
                let m = self.pop();
                let tid = self.tid;
                let lock = self.lock_of(m.clone(), *site)?;
                if lock.count == 0 {
                    *lock = LockState {
                        owner: tid,
                        count: 1,
                    };
                } else if lock.owner == tid {
                    lock.count += 1;
                } else {
                    let owner = lock.owner;
                    let site = &model.sites[*site as usize];
                    return Err(Stop::Blocked(
                        format!("waits for lock `{}`, held by T{owner}", site.text),
                        site.span,
                    ));
                }
                if self.weak.is_some() {
                    self.weak_lock(&m, true);
                }
                let text = model.sites[*site as usize].text.clone();
                self.note(EventKind::Lock, || text, String::new);
            }
            Instr::Unlock(site) => {
                let m = self.pop();
                let tid = self.tid;
                let lock = self.lock_of(m.clone(), *site)?;
                let text = model.sites[*site as usize].text.clone();
                if lock.count == 0 || lock.owner != tid {
                    let holder = if lock.count == 0 {
                        "nobody holds it".to_string()
                    } else {
                        format!("thread {} holds it", lock.owner)
                    };
                    return self.fault(format!("thread {tid} unlocks `{text}`, but {holder}"));
                }
                lock.count -= 1;
                if self.weak.is_some() {
                    self.weak_lock(&m, false);
                }
                self.note(EventKind::Unlock, || text, String::new);
            }
            Instr::AtomicBegin(_) => self.atomic += 1,
            Instr::AwaitBegin(site) => {
                self.atomic += 1;
                self.await_site = Some(*site);
            }
            Instr::AtomicEnd => self.atomic -= 1,
            Instr::Fence(site) => {
                if self.weak.is_some() {
                    self.weak_fence(*site);
                }
            }
            Instr::AwaitEnd => match self.pop() {
                Val::Bool(true) => self.atomic -= 1,
                Val::Bool(false) => {
                    let span = self
                        .await_site
                        .map(|s| model.sites[s as usize].span)
                        .unwrap_or_default();
                    return Err(Stop::Blocked(
                        "waits until its `await` condition holds".into(),
                        span,
                    ));
                }
                other => {
                    return self.fault(format!("`await` needs a bool, found {}", other.type_name()))
                }
            },
        }
        Ok(None)
    }

    fn binary(&self, op: BinOp, a: Val, b: Val) -> R<Val> {
        let sym = match op {
            BinOp::Eq => return Ok(Val::Bool(a == b)),
            BinOp::Ne => return Ok(Val::Bool(a != b)),
            BinOp::Mul => "*",
            BinOp::Div => "/",
            BinOp::Rem => "%",
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Lt => "<",
            BinOp::Le => "<=",
            BinOp::Gt => ">",
            BinOp::Ge => ">=",
            BinOp::And => "&&",
            BinOp::Or => "||",
        };
        let (Val::Int(x), Val::Int(y)) = (&a, &b) else {
            return self.fault(format!(
                "`{sym}` needs two ints, found {} and {}",
                a.type_name(),
                b.type_name()
            ));
        };
        let (x, y) = (*x, *y);
        let arith = |r: Option<i64>| r.map(Val::Int);
        let r = match op {
            BinOp::Mul => arith(x.checked_mul(y)),
            BinOp::Add => arith(x.checked_add(y)),
            BinOp::Sub => arith(x.checked_sub(y)),
            BinOp::Div | BinOp::Rem if y == 0 => return self.fault("division by zero"),
            BinOp::Div => arith(x.checked_div(y)),
            BinOp::Rem => arith(x.checked_rem(y)),
            BinOp::Lt => Some(Val::Bool(x < y)),
            BinOp::Le => Some(Val::Bool(x <= y)),
            BinOp::Gt => Some(Val::Bool(x > y)),
            BinOp::Ge => Some(Val::Bool(x >= y)),
            BinOp::Eq | BinOp::Ne | BinOp::And | BinOp::Or => {
                unreachable!("handled above or compiled to jumps")
            }
        };
        match r {
            Some(v) => Ok(v),
            None => self.fault("integer overflow"),
        }
    }
}

/// The event the shared instruction at `(func, pc)` would have produced, for a fault during it.
pub(crate) fn pending_event(model: &Model, (func, pc): (u32, u32)) -> Option<SharedEvent> {
    let (kind, site) = match &model.funcs[func as usize].code[pc as usize] {
        Instr::Read(_, s) => (EventKind::Read, s),
        Instr::Write(_, s) => (EventKind::Write, s),
        Instr::Cas(_, s) => (EventKind::Cas { success: false }, s),
        Instr::Dcas(_, _, s) => (EventKind::Dcas { success: false }, s),
        Instr::Lock(s) => (EventKind::Lock, s),
        Instr::Unlock(s) => (EventKind::Unlock, s),
        Instr::AtomicBegin(s) => (EventKind::Atomic, s),
        Instr::AwaitBegin(s) => (EventKind::Await, s),
        _ => return None,
    };
    let site = &model.sites[*site as usize];
    Some(SharedEvent {
        kind,
        location: site.text.clone(),
        value: String::new(),
        span: site.span,
    })
}

/// Runs function `func` to completion alone, as thread `tid` (serial parts of a test, the
/// synthesized spec). Nothing is recorded.
pub(crate) fn run_serial(
    model: &Model,
    mem: Memory,
    tid: u32,
    func: u32,
    args: Vec<Val>,
    budget: u64,
) -> R<(Val, Memory)> {
    let frames = vec![Frame::new(model, func, args)];
    let mut r = Runner::new(model, tid, mem, frames, budget, false);
    match r.run(false)? {
        Pause::Done(v) => Ok((v, r.mem)),
        Pause::Shared => unreachable!("a non-preemptible run never pauses"),
    }
}

impl Model {
    /// The initial value of every shared scalar and array element after the initializer,
    /// by name (`d[0]`, `head`), for inspection and tests.
    pub fn describe_memory(&self, mem: &Memory) -> Vec<(String, Value)> {
        let mut out: Vec<(String, Value)> = self
            .scalars
            .iter()
            .map(|(n, s)| (n.clone(), mem.globals[*s as usize].to_value()))
            .collect();
        for a in &self.arrays {
            for i in 0..a.len {
                out.push((
                    format!("{}[{i}]", a.name),
                    mem.globals[(a.base + i) as usize].to_value(),
                ));
            }
        }
        out
    }
}
