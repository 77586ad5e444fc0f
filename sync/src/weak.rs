//! Weak memory for real code: the C++20 / Rust memory model behind the atomics, for tests that
//! declare orderings weaker than `SeqCst`.
//!
//! A test is first explored sequentially consistent ([`Mode::Sc`]), which is exact for code
//! whose accesses are all `SeqCst` and costs nothing more than before. If some access there
//! declared a weaker ordering, the exploration is made again under weak memory
//! ([`Mode::Weak`]): each execution then keeps an execution graph ([`fgvt_memory::Execution`])
//! of its atomic accesses, fences, lock handovers and thread starts and joins, and every atomic
//! access asks it what it may do. A load may read any store coherence and happens-before
//! allow, a store may go before later stores in modification order, a read-modify-write reads
//! a store no other one read: each such choice is a *way* of the step, a child of the state
//! beside the other threads' steps (way 0 is what a sequentially consistent run does). More
//! ways than [`WeakOptions::max_ways`] are cut: the extra way is one bounded leaf.
//!
//! The graph's [future key](fgvt_memory::Execution::future_key) is part of the point's
//! fingerprint (with locations named by their objects' keys, values as fingerprints see them
//! and stores by who wrote them where), so equal states still merge and a spin loop whose turn
//! saw nothing new is still a loop edge.
//!
//! Locks and condition variables hand over happens-before as `std`'s do (a lock is an
//! acquire read-modify-write of the lock's word, an unlock a release store), spawning the test
//! threads after `init` and joining them before `final` too. Plain memory
//! ([`crate::cell::UnsafeCell`], [`crate::cell::Cell`]) is not in the graph: it is read as the
//! last write in the schedule's order, which is the one that happens before the read when
//! nothing races, and `races.rs` checks that nothing does, asking the graph
//! ([`HappensBefore`]). [`crate::Shared`] is checked only when the test asks, and fields the
//! code does not instrument not at all.

use std::collections::HashMap;
use std::panic::Location;
use std::sync::Arc;

use fgvt_memory::{AccessKind, EventRef, Execution, Loc, Naming, Order, PlainAt, StoreId, Val};
use fgvt_tree::{Bound, MemoryChoice, MemoryOrder, StoreRef, ThreadId};

use crate::fingerprint::{combine, hash_of};
use crate::object_id::ObjectId;
use crate::races::HappensBefore;
use crate::sources;

/// How an exploration treats the orderings atomics declare.
#[derive(Clone, Debug)]
pub(crate) enum Mode {
    /// Every access sequentially consistent, whatever it declares. With `watch`, an access
    /// that declares a weaker ordering is noted ([`crate::runtime::Execution::saw_weak`]): the
    /// test must then be explored under weak memory.
    Sc {
        /// Whether to note weaker orderings.
        watch: bool,
    },
    /// The C++20 / Rust memory model.
    Weak(Arc<WeakOptions>),
}

/// The settings of a weak-memory exploration.
#[derive(Clone, Debug)]
pub(crate) struct WeakOptions {
    /// The most ways one access may go (the newest stores it may read, the latest places it
    /// may take); the rest are one bounded leaf.
    pub max_ways: u32,
    /// Changes to the code's orderings, by source position: how a report checks that
    /// strengthening an access, or adding a fence next to it, fixes the test.
    pub overrides: HashMap<Site, Override>,
}

/// What a report tries at one access (see [`crate::fix`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Override {
    /// The order to use instead of the declared one.
    pub order: Option<Order>,
    /// A fence to add right before the access.
    pub fence_before: Option<Order>,
    /// A fence to add right after it.
    pub fence_after: Option<Order>,
}

/// A source position, as an override names an access: file, line, column.
pub(crate) type Site = (String, u32, u32);

/// The position of `at` as a [`Site`].
pub(crate) fn site(at: &Location<'_>) -> Site {
    (at.file().to_string(), at.line(), at.column())
}

/// How a location's values are shown in reports and seen by fingerprints.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Shape {
    /// An integer or boolean, shown by this function of its bits.
    Value(fn(Val) -> String),
    /// An address, with the alignment of what it points to (its low bits are a tag).
    Ptr(usize),
}

/// The atomic an access is to: its object's key, its value now (the initial store, if the
/// model meets it for the first time) and how its values look.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Target {
    pub key: u64,
    /// The atomic, for reports (`None`: a lock's word, which reports never name).
    pub object: Option<ObjectId>,
    pub now: Val,
    pub shape: Shape,
}

/// What an atomic access asks of the model, besides its order.
pub(crate) enum Request<'a> {
    /// A load.
    Load,
    /// A store of this value.
    Store(Val),
    /// A read-modify-write leaving `f(old)`.
    Rmw(&'a dyn Fn(Val) -> Val),
    /// A strong compare-exchange; the access's order is the success order.
    Cas {
        expected: Val,
        new: Val,
        failure: Order,
    },
}

/// What an atomic access did under the model.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Done {
    /// The value read (a load's, an RMW's old value, a compare-exchange's); 0 for a store.
    pub read: Val,
    /// For a compare-exchange: whether it succeeded.
    pub succeeded: bool,
    /// The location's latest value in modification order, after the access.
    pub latest: Val,
}

/// The way asked for is past the bound: what to report instead of taking it.
pub(crate) struct Cut {
    /// How many ways the access had.
    pub ways: u32,
    /// How many were allowed.
    pub max: u32,
}

/// An access of the code whose ordering a report may suggest strengthening: where it is, what
/// it does, and what it declares.
#[derive(Clone, Debug)]
pub(crate) struct SiteInfo {
    pub at: &'static Location<'static>,
    /// What it does: `load of ready#1`, `store to data#0`, `compare-exchange on head#0`, …
    pub access: String,
    pub kind: AccessKind,
    /// The order it declares (a compare-exchange's success order).
    pub order: Order,
    /// The object `access` names, as (name, number): of the objects an access at `at` met,
    /// the first in this order is the one named, so that which is named does not depend on
    /// the order executions ran in (workers run them in any order).
    pub rank: (&'static str, u32),
}

impl SiteInfo {
    /// Keeps `other` instead if it names an object that comes first.
    pub(crate) fn keep_first(&mut self, other: SiteInfo) {
        if other.rank < self.rank {
            *self = other;
        }
    }
}

/// The accesses met in an exploration's executions, by position (shared by every execution
/// of one program, on its one OS thread).
pub(crate) type Sites = std::rc::Rc<std::cell::RefCell<HashMap<usize, SiteInfo>>>;

/// Who stored a store, for reports and for fingerprints.
#[derive(Clone, Copy, Debug)]
struct Writer {
    /// `None`: the serial part, or the location's initial value.
    thread: Option<ThreadId>,
    /// `None`: the initial value.
    at: Option<&'static Location<'static>>,
}

/// A location of the model: the atomic it is.
#[derive(Clone, Copy, Debug)]
struct Place {
    key: u64,
    shape: Shape,
}

/// What the last access chose, until its event is built.
#[derive(Clone, Debug)]
pub(crate) struct Chosen {
    pub order: MemoryOrder,
    loc: Loc,
    way: u32,
    ways: u32,
    cut: bool,
    read: Option<StoreId>,
    latest: Option<StoreId>,
    before: Option<StoreId>,
    /// The store the access made.
    made: Option<StoreId>,
}

impl Chosen {
    /// What the access did with stores, for the partial-order reduction.
    pub(crate) fn store_access(&self) -> fgvt_tree::StoreAccess {
        let number = |store: StoreId| u32::try_from(store.index()).unwrap_or(u32::MAX);
        fgvt_tree::StoreAccess {
            stale_read: self.latest.and(self.read).map(number),
            made: self.made.map(number),
        }
    }
}

/// One execution's weak memory: its execution graph and what names its parts.
pub(crate) struct WeakMemory {
    x: Execution,
    /// The serial part's thread in the graph, after the test threads.
    main: ThreadId,
    test_threads: usize,
    locations: HashMap<u64, Loc, foldhash::fast::RandomState>,
    places: Vec<Place>,
    /// Per event number of the graph: who stored it, for the stores.
    writers: Vec<Option<Writer>>,
    options: Arc<WeakOptions>,
    /// What the last atomic access chose, for its event.
    pub(crate) chosen: Option<Chosen>,
    /// Per test thread, per operation it finished: its last event of the graph (`None` if it
    /// made none), what another thread's call must happen after to follow it.
    returns: Vec<Vec<Option<EventRef>>>,
    /// Per test thread: how many events of the graph it had when its operation began.
    began: Vec<usize>,
    /// The accesses met so far by the program's executions.
    sites: Sites,
}

impl WeakMemory {
    /// The graph, for the next execution to reuse its allocations: an exploration
    /// re-executes the test from the start for each edge it opens, runs are of about one
    /// length, and growing every table of the graph again, run after run, was a fifth of a
    /// weak-memory run's time.
    pub(crate) fn into_graph(self) -> Execution {
        self.x
    }

    /// The memory of a new execution with `threads` test threads, its graph made in the
    /// allocations of `spare` (an ended execution's, see [`WeakMemory::into_graph`]) when given.
    pub(crate) fn new(
        threads: usize,
        options: Arc<WeakOptions>,
        sites: Sites,
        spare: Option<Execution>,
    ) -> WeakMemory {
        let mut x = match spare {
            Some(mut x) => {
                x.clear(threads + 1);
                x
            }
            None => Execution::new(threads + 1),
        };
        // Every access takes one of the choices `perform` was offered.
        x.promise_offered_choices(true);
        WeakMemory {
            x,
            main: threads,
            test_threads: threads,
            locations: HashMap::default(),
            places: Vec::new(),
            writers: Vec::new(),
            options,
            chosen: None,
            returns: vec![Vec::new(); threads],
            began: vec![0; threads],
            sites,
        }
    }

    /// Notes an access at `at` to the object ranked `rank` (see [`SiteInfo::rank`]).
    fn note_site(
        &self,
        at: &'static Location<'static>,
        kind: AccessKind,
        order: Order,
        rank: (&'static str, u32),
        what: impl FnOnce() -> String,
    ) {
        let mut sites = self.sites.borrow_mut();
        let site = || SiteInfo {
            at,
            access: what(),
            kind,
            order,
            rank,
        };
        match sites.entry(std::ptr::from_ref(at) as usize) {
            std::collections::hash_map::Entry::Occupied(mut known) => {
                if rank < known.get().rank {
                    known.insert(site());
                }
            }
            std::collections::hash_map::Entry::Vacant(new) => {
                new.insert(site());
            }
        }
    }

    /// Test thread `thread` begins an operation.
    pub(crate) fn op_began(&mut self, thread: ThreadId) {
        self.began[thread] = self.x.thread_len(thread);
    }

    /// Test thread `thread`'s operation returned.
    pub(crate) fn op_returned(&mut self, thread: ThreadId) {
        let made_events = self.x.thread_len(thread) > self.began[thread];
        let last = self.x.last_event(thread).filter(|_| made_events);
        self.returns[thread].push(last);
    }

    /// What test thread `thread`'s `nth` operation, just called, happens after: for each test
    /// thread, how many of its operations returned before it in happens-before (its own
    /// earlier ones all did). An operation that made no event of the graph, and those after
    /// it, count as not returned for other threads: nothing orders them.
    pub(crate) fn clock(&self, thread: ThreadId, nth: usize) -> fgvt_tree::Clock {
        let before_next = self.x.before_next(thread);
        let clock: Vec<u32> = (0..self.test_threads)
            .map(|u| {
                let count = if u == thread {
                    nth
                } else {
                    self.returns[u]
                        .iter()
                        .take_while(|r| r.is_some_and(&before_next))
                        .count()
                };
                u32::try_from(count).unwrap_or(u32::MAX)
            })
            .collect();
        clock.into()
    }

    /// How many events of the graph test thread `thread` has made.
    pub(crate) fn events_of(&self, thread: ThreadId) -> u32 {
        u32::try_from(self.x.thread_len(thread)).unwrap_or(u32::MAX)
    }

    /// The returns of other test threads' operations that test thread `thread` now happens
    /// after, or that its next acquire fence would make it happen after, and that it did not
    /// happen after once it had made `events` events of the graph: what a retry loop's turn
    /// since then learned, which makes it `synchronized` ([`fgvt_tree::QuietTurn`]).
    pub(crate) fn learned_returns_since(&self, thread: ThreadId, events: u32) -> Vec<EventRef> {
        let known_then = |r| {
            (events as usize)
                .checked_sub(1)
                .is_some_and(|last| self.x.happens_before_nth(r, thread, last))
        };
        let before_next = self.x.before_next(thread);
        let known_now = |r| before_next(r) || self.x.fence_would_acquire(r, thread);
        (0..self.test_threads)
            .filter(|&u| u != thread)
            .flat_map(|u| self.returns[u].iter().map_while(|r| *r))
            .filter(|&r| known_now(r) && !known_then(r))
            .collect()
    }

    /// Whether the access that chose `chosen` is an acquire read of a store whose release
    /// view holds every return of `learned`: the thread happens after them by this read
    /// alone, with or without the turn before it that learned them.
    pub(crate) fn relearns(&self, chosen: &Chosen, learned: &[EventRef]) -> bool {
        let acquires = matches!(
            chosen.order,
            MemoryOrder::Acquire | MemoryOrder::AcqRel | MemoryOrder::SeqCst
        );
        let Some(store) = chosen.read.filter(|_| acquires) else {
            return false;
        };
        learned.iter().all(|&r| self.x.releases(store, r))
    }

    /// Whether the object `key` is an atomic of the graph (its values are in the future key).
    pub(crate) fn covers(&self, key: u64) -> bool {
        self.locations.contains_key(&key)
    }

    /// The graph thread of `who` (a test thread, or `None` for the serial part).
    fn thread(&self, who: Option<ThreadId>) -> ThreadId {
        who.unwrap_or(self.main)
    }

    /// The location of `target`, made at its first access with its value then as the initial
    /// store (which happens before every event: the atomic was made before anyone could
    /// reach it).
    fn location(&mut self, target: Target) -> Loc {
        if let Some(&loc) = self.locations.get(&target.key) {
            return loc;
        }
        let loc = self.x.add_location(target.now);
        self.locations.insert(target.key, loc);
        self.places.push(Place {
            key: target.key,
            shape: target.shape,
        });
        self.note_writer(self.x.initial(loc), None, None);
        loc
    }

    fn note_writer(
        &mut self,
        store: StoreId,
        thread: Option<ThreadId>,
        at: Option<&'static Location<'static>>,
    ) {
        let i = store.index();
        if self.writers.len() <= i {
            self.writers.resize(i + 1, None);
        }
        self.writers[i] = Some(Writer { thread, at });
    }

    /// The order an access of `kind` at `at` declaring `order` runs with: an override's, if
    /// any, made valid for the kind (an override names a site, whose compare-exchange has a
    /// load for its failure).
    fn order_at(&self, at: &Location<'_>, kind: AccessKind, order: Order) -> Order {
        if self.options.overrides.is_empty() {
            return order;
        }
        match self.options.overrides.get(&site(at)).and_then(|o| o.order) {
            None => order,
            Some(strong) => match (kind, strong) {
                (AccessKind::Load, Order::Release) => Order::Relaxed,
                (AccessKind::Load, Order::AcqRel) => Order::Acquire,
                (AccessKind::Store, Order::Acquire) => Order::Relaxed,
                (AccessKind::Store, Order::AcqRel) => Order::Release,
                (_, strong) => strong,
            },
        }
    }

    /// The fences a report's trial adds around the access at `at`, if any.
    fn added_fences(&self, at: &Location<'_>) -> Override {
        if self.options.overrides.is_empty() {
            return Override::default();
        }
        self.options
            .overrides
            .get(&site(at))
            .copied()
            .unwrap_or_default()
    }

    /// Which of `n` candidates (oldest first) way `way` takes, and the step's number of ways
    /// (one more than the bound when it cuts some): `Err` for the cut way.
    fn pick(&self, n: usize, way: u32) -> Result<(usize, u32, bool), Cut> {
        let max = self.options.max_ways.max(1);
        let n32 = u32::try_from(n).unwrap_or(u32::MAX);
        let cut = n32 > max;
        let ways = if cut { max + 1 } else { n32 };
        if cut && way >= max {
            return Err(Cut { ways: n32, max });
        }
        // Newest first: way 0 is the latest store, or the end of modification order.
        let index = n - 1 - (way as usize).min(n - 1);
        Ok((index, ways, cut))
    }

    /// Makes `request` by `who` (a test thread, `None` for the serial part) on `target` with
    /// `order`, at `at`, going way `way`.
    pub(crate) fn perform(
        &mut self,
        who: Option<ThreadId>,
        way: u32,
        at: &'static Location<'static>,
        target: Target,
        order: Order,
        request: Request<'_>,
    ) -> Result<Done, Cut> {
        let t = self.thread(who);
        let loc = self.location(target);
        let kind = match request {
            Request::Load => AccessKind::Load,
            Request::Store(_) => AccessKind::Store,
            Request::Rmw(_) | Request::Cas { .. } => AccessKind::Rmw,
        };
        if let Some(object) = target.object {
            let verb = match request {
                Request::Load => "load of",
                Request::Store(_) => "store to",
                Request::Rmw(_) => "read-modify-write of",
                Request::Cas { .. } => "compare-exchange on",
            };
            let rank = (object.name(), object.number());
            self.note_site(at, kind, order, rank, || format!("{verb} {object}"));
        }
        let order = self.order_at(at, kind, order);
        let added = self.added_fences(at);
        if let Some(fence) = added.fence_before {
            self.x.fence(t, fence);
        }
        let latest_before = self.x.latest(loc);
        let mut chosen = Chosen {
            order: memory_order(order),
            loc,
            way,
            ways: 1,
            cut: false,
            read: None,
            latest: None,
            before: None,
            made: None,
        };
        let mut done = Done {
            read: 0,
            succeeded: true,
            latest: 0,
        };
        match request {
            Request::Load => {
                let candidates = self.x.load_candidates(t, loc, order);
                let (i, ways, cut) = self.pick(candidates.len(), way)?;
                let from = candidates[i];
                done.read = self.x.load(t, loc, order, from);
                (chosen.ways, chosen.cut, chosen.read) = (ways, cut, Some(from));
            }
            Request::Store(value) => {
                let places = self.x.store_placements(t, loc, order);
                let (i, ways, cut) = self.pick(places.len(), way)?;
                let after = places[i];
                let mo = self.x.modification_order(loc);
                chosen.before = mo.get(after + 1).copied();
                let store = self.x.store(t, loc, value, order, after);
                self.note_writer(store, who, Some(at));
                (chosen.ways, chosen.cut, chosen.made) = (ways, cut, Some(store));
            }
            Request::Rmw(f) => {
                let candidates = self.x.rmw_candidates(t, loc, order);
                let (i, ways, cut) = self.pick(candidates.len(), way)?;
                let from = candidates[i];
                let (old, store) = self.x.rmw(t, loc, order, from, f);
                self.note_writer(store, who, Some(at));
                done.read = old;
                (chosen.ways, chosen.cut, chosen.read) = (ways, cut, Some(from));
                chosen.made = Some(store);
            }
            Request::Cas {
                expected,
                new,
                failure,
            } => {
                let failure = self.order_at(at, AccessKind::Load, failure);
                let choices = self.x.cas_choices(t, loc, expected, order, failure);
                let (i, ways, cut) = self.pick(choices.len(), way)?;
                let choice = choices[i];
                if choice.succeeds {
                    let (old, store) = self.x.rmw(t, loc, order, choice.from, |_| new);
                    self.note_writer(store, who, Some(at));
                    done.read = old;
                    chosen.made = Some(store);
                } else {
                    done.read = self.x.load(t, loc, failure, choice.from);
                    chosen.order = memory_order(failure);
                }
                done.succeeded = choice.succeeds;
                (chosen.ways, chosen.cut, chosen.read) = (ways, cut, Some(choice.from));
            }
        }
        if chosen.read.is_some_and(|from| from != latest_before) {
            chosen.latest = Some(latest_before);
        }
        done.latest = self.x.value(self.x.latest(loc));
        if let Some(fence) = added.fence_after {
            self.x.fence(t, fence);
        }
        self.chosen = Some(chosen);
        Ok(done)
    }

    /// A fence by `who`.
    pub(crate) fn fence(
        &mut self,
        who: Option<ThreadId>,
        at: &'static Location<'static>,
        order: Order,
    ) {
        self.note_site(at, AccessKind::Fence, order, ("", 0), || {
            "fence".to_string()
        });
        let t = self.thread(who);
        let order = self.order_at(at, AccessKind::Fence, order);
        self.x.fence(t, order);
    }

    /// `who` took the lock `key`: it happens after whoever released it last.
    pub(crate) fn lock(&mut self, who: Option<ThreadId>, key: u64) {
        let t = self.thread(who);
        let loc = self.lock_word(key);
        let latest = self.x.latest(loc);
        self.x.rmw(t, loc, Order::Acquire, latest, |v| v);
    }

    /// `who` released the lock `key`: whoever takes it next happens after this, and after
    /// every earlier release (a release read-modify-write continues the release sequences of
    /// the lock word: a writer taking a lock that two readers released happens after both).
    pub(crate) fn unlock(&mut self, who: Option<ThreadId>, key: u64) {
        let t = self.thread(who);
        let loc = self.lock_word(key);
        let latest = self.x.latest(loc);
        self.x.rmw(t, loc, Order::Release, latest, |v| v);
    }

    /// The model's location for lock `key`'s handovers: its value never changes, so it adds
    /// one store per take and release and nothing for fingerprints to tell apart but who saw
    /// which.
    fn lock_word(&mut self, key: u64) -> Loc {
        self.location(Target {
            key: combine(key, 0x10c4),
            object: None,
            now: 0,
            shape: Shape::Value(|_| String::new()),
        })
    }

    /// The test threads start: everything the serial part did happens before them.
    pub(crate) fn start_threads(&mut self) {
        for t in 0..self.test_threads {
            self.x.synchronize(self.main, t);
        }
    }

    /// `who` (a thread, or the serial part) spawned `thread`: everything it did so far happens
    /// before everything `thread` does. A handover through the lock word `key` (a release by
    /// the spawner, an acquire by the new thread, its first event) rather than
    /// [`Execution::synchronize`], which passes on events only: the spawner's plain accesses
    /// since its last event (the making of what it hands over) need an event after them.
    pub(crate) fn spawned(&mut self, who: Option<ThreadId>, thread: ThreadId, key: u64) {
        self.unlock(who, key);
        self.lock(Some(thread), key);
    }

    /// The test threads have ended: everything they did happens before the `final` part.
    pub(crate) fn join_threads(&mut self) {
        for t in 0..self.test_threads {
            self.x.synchronize(t, self.main);
        }
    }

    /// The hash of the graph's future key, for the point's fingerprint: `live` says which
    /// test threads may still act, `value` how a value of a location with `shape` looks to
    /// fingerprints, and `plain` the plain accesses the race check keeps (each with what names
    /// it), of which the key says who may come to know.
    pub(crate) fn future_hash(
        &self,
        live: impl Fn(ThreadId) -> bool,
        value: &dyn Fn(Shape, Val) -> u64,
        plain: &[(u64, PlainAt)],
    ) -> u64 {
        let naming = Names {
            memory: self,
            value,
        };
        let at: Vec<PlainAt> = plain.iter().map(|&(_, at)| at).collect();
        let mut key =
            self.x
                .future_key_with_plain(&naming, |t| t < self.test_threads && live(t), &at);
        key.extend(plain.iter().map(|&(identity, _)| identity));
        hash_of(&key)
    }

    /// The event's part of an access that chose `chosen`: its order, and which way it went
    /// when it could go several. `show` renders a value of a location with `shape`.
    pub(crate) fn describe(
        &self,
        chosen: Chosen,
        show: &mut dyn FnMut(Shape, Val) -> String,
    ) -> (MemoryOrder, Option<Box<MemoryChoice>>) {
        if chosen.ways <= 1 {
            return (chosen.order, None);
        }
        let shape = self.places[chosen.loc as usize].shape;
        let mut store = |s: StoreId| {
            let writer = self.writers.get(s.index()).copied().flatten();
            StoreRef {
                thread: writer.and_then(|w| w.thread),
                value: show(shape, self.x.value(s)),
                span: writer.and_then(|w| w.at).map(sources::span_at),
            }
        };
        let choice = MemoryChoice {
            way: chosen.way,
            ways: chosen.ways,
            cut: chosen.cut,
            read: chosen.read.map(&mut store),
            latest: chosen.latest.map(&mut store),
            before: chosen.before.map(&mut store),
        };
        (chosen.order, Some(Box::new(choice)))
    }
}

impl HappensBefore for WeakMemory {
    fn mark(&self, thread: ThreadId) -> u32 {
        u32::try_from(self.x.plain_at(thread).events).unwrap_or(u32::MAX)
    }

    fn ordered(&self, thread: ThreadId, mark: u32, later: ThreadId) -> bool {
        let at = PlainAt {
            thread,
            events: mark as usize,
        };
        self.x.plain_happens_before_next(at, later)
    }
}

/// How fingerprints name the graph's parts: locations by their objects' keys, values as the
/// caller sees them, stores by who wrote them where.
struct Names<'a> {
    memory: &'a WeakMemory,
    value: &'a dyn Fn(Shape, Val) -> u64,
}

impl Naming for Names<'_> {
    fn location(&self, loc: Loc) -> u64 {
        self.memory.places[loc as usize].key
    }

    fn value(&self, loc: Loc, value: Val) -> u64 {
        (self.value)(self.memory.places[loc as usize].shape, value)
    }

    fn store(&self, store: StoreId) -> u64 {
        match self.memory.writers.get(store.index()).copied().flatten() {
            Some(Writer {
                thread,
                at: Some(at),
            }) => hash_of(&[
                thread.map_or(u64::MAX, |t| t as u64),
                u64::from(at.line()),
                u64::from(at.column()),
                std::ptr::from_ref(at.file()).cast::<u8>() as u64,
            ]),
            _ => 0,
        }
    }
}

/// An order of the model as events show it.
pub(crate) fn memory_order(order: Order) -> MemoryOrder {
    match order {
        Order::Relaxed => MemoryOrder::Relaxed,
        Order::Release => MemoryOrder::Release,
        Order::Acquire => MemoryOrder::Acquire,
        Order::AcqRel => MemoryOrder::AcqRel,
        Order::SeqCst => MemoryOrder::SeqCst,
    }
}

/// The bound an access past [`WeakOptions::max_ways`] hit, for its bounded leaf.
pub(crate) fn stale_bound(thread: ThreadId, access: String, cut: &Cut) -> Bound {
    Bound::Stale {
        thread,
        access,
        ways: cut.ways,
        max: cut.max,
    }
}
