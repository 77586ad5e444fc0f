//! The execution graph, built one event at a time, and what it knows about happens-before.
//!
//! # The graph
//!
//! An [`Execution`] holds:
//!
//! * the **events**, numbered in the order they were added: one initial store per location
//!   ([`Execution::add_location`]), then loads, stores, read-modify-writes and fences, each by a
//!   thread;
//! * **`po`**, program order: each thread's events in the order the thread added them;
//! * **`rf`**, reads-from: the store each load and RMW read (chosen by the caller);
//! * **`mo`**, modification order: per location, a total order of its stores, the initial
//!   store first (a store's place is chosen by the caller, an RMW goes right after the store
//!   it read).
//!
//! Everything else (`fr`, `eco`, `sw`, `hb`, `psc`) is derived; see [`crate::axioms`].
//!
//! # Building it in execution order
//!
//! Events are only ever added at the end of a thread, and a read only reads a store already
//! in the graph, so the order in which events are added is a topological order of `po ∪ rf`:
//! the no-thin-air axiom holds by construction, and every *new* happens-before edge ends at the
//! new event. That is what lets the graph keep happens-before up to date incrementally:
//!
//! * `hb` row `e` is the set of events that happen before `e`. A new event inherits the row of
//!   its `po`-predecessor (plus that event), the initial stores, and whatever it synchronizes
//!   with;
//! * `release` row `w`, for a store `w`, is what a reader of `w` acquires: for each release
//!   head `a` of a release sequence `w` is in (the store itself if it is a release store, the
//!   thread's last release fence before it, and, through an RMW, the heads of the store the RMW
//!   read), `a` and everything that happens before `a`. An acquire load of `w` ORs it into its
//!   own row; a relaxed load remembers it in its thread's `acquired` row, which the next acquire
//!   fence of the thread ORs in.
//!
//! Each addition costs a few row unions; nothing is recomputed. [`crate::axioms`] derives the
//! same relation from scratch, from the definitions, and the tests compare the two.
//!
//! Forking an execution is `clone`: the rows live in a few flat allocations.

use std::fmt;

use crate::bits::{self, Matrix};
use crate::event::{Event, EventId, Kind};
use crate::psc::Psc;
use crate::{AccessError, AccessKind, Loc, Order, ThreadId, Val};

/// Names one store event of an execution (initial stores included).
///
/// It is the event's number in the order events were added, so it stays valid in every clone
/// (fork) of the execution that made it, and it orders stores by when they were *added*, not by
/// modification order ([`Execution::mo_position`] gives that).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct StoreId(pub(crate) u32);

impl StoreId {
    /// The event's number: its position in the order events were added.
    pub fn index(self) -> usize {
        self.0 as usize
    }

    pub(crate) fn of(e: EventId) -> StoreId {
        StoreId(u32::try_from(e).expect("an execution holds fewer than 2^32 events"))
    }
}

/// Names one event of an execution: its number in the order events were added, valid in every
/// clone (fork) of the execution that made it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct EventRef(pub(crate) u32);

/// What the graph knows of one thread besides its events.
#[derive(Clone, Debug, Default)]
pub(crate) struct Thread {
    /// Its events in program order.
    pub(crate) po: Vec<EventId>,
    /// Its last fence with a release order: a release head for its later stores.
    pub(crate) release_fence: Option<EventId>,
    /// Events of other threads that happen before the thread's next event
    /// ([`Execution::synchronize`]), not yet attached to an event.
    pub(crate) pending: Vec<EventId>,
}

/// An execution graph of the RC11 (C++20, Rust) memory model, built one event at a time.
///
/// See the [crate documentation](crate) for the model and an example, and
/// [module `execution`](self) for how the graph keeps happens-before. The methods that add
/// events ([`load`](Self::load), [`store`](Self::store), [`rmw`](Self::rmw),
/// [`fence`](Self::fence), [`cas`](Self::cas)) accept any well-formed choice and never check
/// consistency; the candidate methods ([`load_candidates`](Self::load_candidates) and the
/// others, in [module `candidates`](crate::candidates)) list exactly the choices that keep it.
///
/// Two executions are `==` (and hash alike) when they are the same graph; see
/// [module `canonical`](crate::canonical).
#[derive(Clone)]
pub struct Execution {
    pub(crate) events: Vec<Event>,
    pub(crate) threads: Vec<Thread>,
    /// Per location, its stores in modification order, the initial store first.
    pub(crate) mo: Vec<Vec<EventId>>,
    /// Empty lists for `mo` to take for its next locations: those of the locations of the
    /// execution [`Execution::clear`] emptied, whose allocations they keep.
    spare_mo: Vec<Vec<EventId>>,
    /// Per location, the events on it in the order they were added, the initial store first:
    /// a view at one location ([`Execution::view_at`]) looks at these, not at every event of
    /// a set (a set of what happens before an event holds most of the graph).
    pub(crate) on_loc: Vec<Vec<EventId>>,
    /// Empty lists for `on_loc`, as `spare_mo` for `mo`.
    spare_on_loc: Vec<Vec<EventId>>,
    /// Per event, its place in its location's modification order (0 if it writes nothing).
    pub(crate) mo_pos: Vec<usize>,
    /// Per event, whether an RMW reads it.
    pub(crate) read_by_rmw: Vec<bool>,
    /// Row `e`: the events that happen before `e`.
    pub(crate) hb: Matrix,
    /// Row `w`: what an acquire reader of store `w` comes to happen after.
    pub(crate) release: Matrix,
    /// Row `t`: what thread `t`'s next acquire fence comes to happen after.
    pub(crate) acquired: Matrix,
    /// The initial stores, as a set.
    pub(crate) inits: Vec<u64>,
    /// The happens-before edges [`Execution::synchronize`] made, as (before, after).
    pub(crate) sync: Vec<(EventId, EventId)>,
    /// Whether every access and fence so far is `SeqCst`.
    pub(crate) all_seq_cst: bool,
    /// How many `SeqCst` events there are.
    pub(crate) seq_cst: usize,
    /// Whether the candidate methods take the all-`SeqCst` shortcut.
    pub(crate) shortcut: bool,
    /// Whether the graph is known to be consistent without a look at the whole of it: it has
    /// no `SeqCst` event, and each event was coherent and atomic when it was added (see
    /// [`Execution::push`]). The candidate methods then decide a choice from views alone.
    pub(crate) known_consistent: bool,
    /// Whether the caller promised to add only choices the candidate methods offered (see
    /// [`Execution::promise_offered_choices`]).
    pub(crate) offered_only: bool,
    /// Whether every event was coherent and atomic when it was added (see
    /// [`Execution::push`]): with [`Psc::acyclic`], whether the graph is consistent.
    pub(crate) coherent: bool,
    /// `psc`, kept as events are added (module [`psc`](crate::psc)).
    pub(crate) psc: Psc,
}

/// What [`Execution::push`] adds.
pub(crate) struct Access {
    pub(crate) kind: Kind,
    pub(crate) loc: Option<Loc>,
    pub(crate) order: Order,
    /// The store read, for a load or an RMW.
    pub(crate) rf: Option<EventId>,
    /// The value written, for a store or an RMW.
    pub(crate) written: Val,
    /// For a store: the index in modification order it goes right after.
    pub(crate) after: usize,
}

impl Execution {
    /// An empty execution of `threads` threads and no locations.
    pub fn new(threads: usize) -> Execution {
        Execution {
            events: Vec::new(),
            threads: vec![Thread::default(); threads],
            mo: Vec::new(),
            spare_mo: Vec::new(),
            on_loc: Vec::new(),
            spare_on_loc: Vec::new(),
            mo_pos: Vec::new(),
            read_by_rmw: Vec::new(),
            hb: Matrix::new(0, 64),
            release: Matrix::new(0, 64),
            acquired: Matrix::new(threads, 64),
            inits: vec![0],
            sync: Vec::new(),
            all_seq_cst: true,
            seq_cst: 0,
            shortcut: true,
            known_consistent: true,
            offered_only: false,
            coherent: true,
            psc: Psc::new(),
        }
    }

    /// Adds a location with an initial store of `initial`, and returns it (locations are
    /// numbered from 0 in the order they were added).
    ///
    /// The initial store happens before every event of every thread (also those added before
    /// it, which cannot have accessed the location: the relation to them never matters).
    pub fn add_location(&mut self, initial: Val) -> Loc {
        let loc = Loc::try_from(self.mo.len()).expect("fewer than 2^32 locations");
        let e = self.new_row();
        self.events.push(Event {
            thread: None,
            index: loc as usize,
            kind: Kind::Init,
            loc: Some(loc),
            order: Order::Relaxed,
            rf: None,
            read: 0,
            written: initial,
        });
        let mut stores = self.spare_mo.pop().unwrap_or_default();
        stores.push(e);
        self.mo.push(stores);
        let mut events = self.spare_on_loc.pop().unwrap_or_default();
        events.push(e);
        self.on_loc.push(events);
        self.mo_pos.push(0);
        self.read_by_rmw.push(false);
        bits::insert(&mut self.inits, e);
        loc
    }

    /// Adds a thread with no events, and returns its number.
    ///
    /// Nothing orders it after the other threads' events yet: a spawn is
    /// [`synchronize(parent, child)`](Self::synchronize).
    pub fn add_thread(&mut self) -> ThreadId {
        self.threads.push(Thread::default());
        self.acquired.push_row();
        self.threads.len() - 1
    }

    /// Makes every event `from` has performed so far happen before every event `to` performs
    /// from now on: a thread spawn (`from` the parent, `to` the child), a join (`from` the
    /// joined thread, `to` the joiner), or any synchronization the runtime implements outside
    /// this model.
    ///
    /// The edge attaches to `to`'s next event; what `from` itself was waiting to inherit from
    /// such calls is passed on too, so the relation stays transitive.
    ///
    /// # Panics
    ///
    /// If either thread does not exist.
    pub fn synchronize(&mut self, from: ThreadId, to: ThreadId) {
        self.expect(self.check_thread(from));
        self.expect(self.check_thread(to));
        if from == to {
            return;
        }
        let mut inherited = self.threads[from].pending.clone();
        inherited.extend(self.threads[from].po.last().copied());
        let pending = &mut self.threads[to].pending;
        for e in inherited {
            if !pending.contains(&e) {
                pending.push(e);
            }
        }
    }

    /// How many threads the execution has.
    pub fn threads(&self) -> usize {
        self.threads.len()
    }

    /// How many locations the execution has.
    pub fn locations(&self) -> usize {
        self.mo.len()
    }

    /// Makes the execution the empty one of `threads` threads that [`Execution::new`] makes,
    /// but keeps its allocations: a caller that builds many executions of about one size, as
    /// a re-executing explorer does (one per run), saves the allocator's work of growing every
    /// table again, which was a fifth of a weak-memory run's time.
    ///
    /// ```
    /// use fgvt_memory::{Execution, Order};
    ///
    /// let mut x = Execution::new(2);
    /// let loc = x.add_location(0);
    /// x.store(0, loc, 1, Order::Release, 0);
    /// x.clear(3);
    /// assert_eq!((x.threads(), x.len()), (3, 0));
    /// assert!(x == Execution::new(3));
    /// ```
    pub fn clear(&mut self, threads: usize) {
        // Every field named: one added later must be cleared here too.
        let Execution {
            events,
            threads: lanes,
            mo,
            spare_mo,
            on_loc,
            spare_on_loc,
            mo_pos,
            read_by_rmw,
            hb,
            release,
            acquired,
            inits,
            sync,
            all_seq_cst,
            seq_cst,
            shortcut,
            known_consistent,
            offered_only,
            coherent,
            psc,
        } = self;
        events.clear();
        lanes.truncate(threads);
        for lane in lanes.iter_mut() {
            let Thread {
                po,
                release_fence,
                pending,
            } = lane;
            po.clear();
            pending.clear();
            *release_fence = None;
        }
        lanes.resize(threads, Thread::default());
        spare_mo.extend(mo.drain(..).map(|mut stores| {
            stores.clear();
            stores
        }));
        spare_on_loc.extend(on_loc.drain(..).map(|mut events| {
            events.clear();
            events
        }));
        mo_pos.clear();
        read_by_rmw.clear();
        hb.clear(0);
        release.clear(0);
        acquired.clear(threads);
        inits.clear();
        inits.push(0);
        sync.clear();
        *all_seq_cst = true;
        *seq_cst = 0;
        *shortcut = true;
        *known_consistent = true;
        *offered_only = false;
        *coherent = true;
        psc.clear();
    }

    /// How many events the execution has, initial stores included.
    pub fn len(&self) -> usize {
        self.events.len()
    }

    /// Whether the execution has no event at all (not even an initial store).
    pub fn is_empty(&self) -> bool {
        self.events.is_empty()
    }

    /// How many events `thread` has performed.
    ///
    /// # Panics
    ///
    /// If the thread does not exist.
    pub fn thread_len(&self, thread: ThreadId) -> usize {
        self.expect(self.check_thread(thread));
        self.threads[thread].po.len()
    }

    /// `thread`'s last event, if it has performed any.
    ///
    /// # Panics
    ///
    /// If the thread does not exist.
    pub fn last_event(&self, thread: ThreadId) -> Option<EventRef> {
        self.expect(self.check_thread(thread));
        let e = *self.threads[thread].po.last()?;
        Some(EventRef(u32::try_from(e).expect("fewer than 2^32 events")))
    }

    /// Whether `event` happens before `thread`'s next event (or is `thread`'s last one): what
    /// that thread can know of it.
    ///
    /// # Panics
    ///
    /// If the thread does not exist.
    pub fn happens_before_next(&self, event: EventRef, thread: ThreadId) -> bool {
        self.before_next(thread)(event)
    }

    /// [`Execution::happens_before_next`] for many events: the set is worked out once.
    ///
    /// # Panics
    ///
    /// If the thread does not exist.
    pub fn before_next(&self, thread: ThreadId) -> impl Fn(EventRef) -> bool + '_ {
        self.expect(self.check_thread(thread));
        let horizon = self.horizon(thread);
        move |event| crate::bits::contains(&horizon, event.0 as usize)
    }

    /// Whether `event` happens before `thread`'s event number `index` (in program order,
    /// from 0), or is that event: what the thread knew once it had made it.
    ///
    /// # Panics
    ///
    /// If the thread does not exist or has made no event number `index`.
    pub fn happens_before_nth(&self, event: EventRef, thread: ThreadId, index: usize) -> bool {
        self.expect(self.check_thread(thread));
        let e = self.threads[thread].po[index];
        e == event.0 as usize || crate::bits::contains(self.hb.row(e), event.0 as usize)
    }

    /// Whether `thread`'s next acquire fence would synchronize with `event`: one of the
    /// thread's relaxed reads read a store whose release view holds it.
    ///
    /// # Panics
    ///
    /// If the thread does not exist.
    pub fn fence_would_acquire(&self, event: EventRef, thread: ThreadId) -> bool {
        self.expect(self.check_thread(thread));
        crate::bits::contains(self.acquired.row(thread), event.0 as usize)
    }

    /// Whether an acquire read of `store` happens after `event` by reading it: `event` is in
    /// the store's release view.
    pub fn releases(&self, store: StoreId, event: EventRef) -> bool {
        crate::bits::contains(self.release.row(store.0 as usize), event.0 as usize)
    }

    /// The value `store` wrote (the initial value for an initial store).
    ///
    /// # Panics
    ///
    /// If `store` names no store of this execution.
    pub fn value(&self, store: StoreId) -> Val {
        self.store_event(store).written
    }

    /// The thread that performed `store`; `None` for an initial store.
    ///
    /// # Panics
    ///
    /// If `store` names no store of this execution.
    pub fn store_thread(&self, store: StoreId) -> Option<ThreadId> {
        self.store_event(store).thread
    }

    /// The location `store` wrote.
    ///
    /// # Panics
    ///
    /// If `store` names no store of this execution.
    pub fn store_location(&self, store: StoreId) -> Loc {
        self.store_event(store).loc.expect("a store has a location")
    }

    /// The initial store of `loc`.
    ///
    /// # Panics
    ///
    /// If the location does not exist.
    pub fn initial(&self, loc: Loc) -> StoreId {
        self.expect(self.check_location(loc));
        StoreId::of(self.mo[loc as usize][0])
    }

    /// The store of `loc` that is last in modification order: the value `loc` holds "now", and
    /// a choice every load, store and RMW always has.
    ///
    /// # Panics
    ///
    /// If the location does not exist.
    pub fn latest(&self, loc: Loc) -> StoreId {
        self.expect(self.check_location(loc));
        StoreId::of(
            *self.mo[loc as usize]
                .last()
                .expect("mo starts with the initial store"),
        )
    }

    /// The stores of `loc` in modification order, the initial store first.
    ///
    /// # Panics
    ///
    /// If the location does not exist.
    pub fn modification_order(&self, loc: Loc) -> Vec<StoreId> {
        self.expect(self.check_location(loc));
        self.mo[loc as usize]
            .iter()
            .map(|&e| StoreId::of(e))
            .collect()
    }

    /// The place of `store` in its location's modification order (0 for the initial store).
    ///
    /// # Panics
    ///
    /// If `store` names no store of this execution.
    pub fn mo_position(&self, store: StoreId) -> usize {
        self.store_event(store);
        self.mo_pos[store.index()]
    }

    /// Whether an RMW reads `store` (then no other RMW can: it would not be right after it).
    ///
    /// # Panics
    ///
    /// If `store` names no store of this execution.
    pub fn is_read_by_rmw(&self, store: StoreId) -> bool {
        self.store_event(store);
        self.read_by_rmw[store.index()]
    }

    /// Whether every access and fence so far is `SeqCst` (true of an execution with none).
    ///
    /// While it holds, and the next access is `SeqCst` too, the candidate methods offer only
    /// the mo-latest store / the end of mo (see [`Self::set_seq_cst_shortcut`]).
    pub fn all_seq_cst(&self) -> bool {
        self.all_seq_cst
    }

    /// Turns the all-`SeqCst` shortcut of the candidate methods on (the default) or off.
    ///
    /// With it on, while [`Self::all_seq_cst`] holds, a `SeqCst` load or RMW is offered only
    /// the mo-latest store and a `SeqCst` store only the end of mo: the execution then grows as
    /// an interleaving does. Off, they are offered every consistent choice, which for a
    /// `SeqCst` access is in general more: a load added after a store of another thread may
    /// still read the older value, as if it had run first. The shortcut loses no outcome:
    /// RC11 gives programs whose accesses are all `SeqCst` exactly their interleavings, and
    /// every consistent execution of a program is reached with it on, through an interleaving
    /// that runs its `SeqCst` prefix in SC order (the tests check both against a brute force).
    /// It is inherited by clones.
    pub fn set_seq_cst_shortcut(&mut self, enabled: bool) {
        self.shortcut = enabled;
    }

    /// Promises (or takes back the promise) that every event added is one of the choices the
    /// candidate methods offered, so that the graph stays consistent: the mo-latest store and
    /// the end of mo are then offered without a trial, as extensibility makes them consistent
    /// (module [`candidates`](crate::candidates)). Without the promise every choice is tried,
    /// and a graph built with a choice never offered gets empty lists. Inherited by clones.
    pub fn promise_offered_choices(&mut self, promise: bool) {
        self.offered_only = promise;
    }

    /// Whether the all-`SeqCst` shortcut is on; see [`Self::set_seq_cst_shortcut`].
    pub fn seq_cst_shortcut(&self) -> bool {
        self.shortcut
    }

    /// Checks that `thread` may perform an access of `kind` with `order` to `loc` (`None` for
    /// a fence, whose location is ignored): the thread and location exist, and the order is
    /// one `std` allows for that kind of access.
    ///
    /// The methods that add events and list choices panic with this error; call it first to
    /// get the error instead.
    pub fn check_access(
        &self,
        thread: ThreadId,
        loc: Option<Loc>,
        kind: AccessKind,
        order: Order,
    ) -> Result<(), AccessError> {
        self.check_thread(thread)?;
        if kind != AccessKind::Fence {
            if let Some(loc) = loc {
                self.check_location(loc)?;
            }
        }
        if !order.is_valid_for(kind) {
            return Err(AccessError::InvalidOrder { kind, order });
        }
        Ok(())
    }

    /// Adds a load by `thread` of `loc` with `order` that reads `from`, and returns the value
    /// read.
    ///
    /// Any store of `loc` is accepted; pick it from [`Self::load_candidates`] to keep the
    /// execution consistent.
    ///
    /// # Panics
    ///
    /// With the [`AccessError`] if the access is malformed (see [`Self::check_access`]) or
    /// `from` is not a store of `loc`.
    pub fn load(&mut self, thread: ThreadId, loc: Loc, order: Order, from: StoreId) -> Val {
        self.expect(self.check_access(thread, Some(loc), AccessKind::Load, order));
        self.expect(self.check_store_of(from, loc));
        let e = self.push(
            thread,
            Access {
                kind: Kind::Load,
                loc: Some(loc),
                order,
                rf: Some(from.index()),
                written: 0,
                after: 0,
            },
        );
        self.events[e].read
    }

    /// Adds a store by `thread` of `value` to `loc` with `order`, placed in `loc`'s
    /// modification order right after its `at`-th store (0: right after the initial store),
    /// and returns it.
    ///
    /// Any placement is accepted, even one between a store and the RMW that reads it; pick it
    /// from [`Self::store_placements`] to keep the execution consistent.
    ///
    /// # Panics
    ///
    /// With the [`AccessError`] if the access is malformed (see [`Self::check_access`]) or `at`
    /// is not below the number of stores of `loc`.
    pub fn store(
        &mut self,
        thread: ThreadId,
        loc: Loc,
        value: Val,
        order: Order,
        at: usize,
    ) -> StoreId {
        self.expect(self.check_access(thread, Some(loc), AccessKind::Store, order));
        let len = self.mo[loc as usize].len();
        if at >= len {
            self.expect(Err(AccessError::PlacementOutOfRange { at, loc, len }));
        }
        let e = self.push(
            thread,
            Access {
                kind: Kind::Store,
                loc: Some(loc),
                order,
                rf: None,
                written: value,
                after: at,
            },
        );
        StoreId::of(e)
    }

    /// Adds a read-modify-write by `thread` of `loc` with `order` that reads `from` and writes
    /// `new_value(old)`, placed in modification order right after `from`; returns the old value
    /// and the RMW's own store.
    ///
    /// Any store of `loc` is accepted, even one another RMW already read (the graph is then
    /// inconsistent); pick it from [`Self::rmw_candidates`] to keep the execution consistent.
    ///
    /// # Panics
    ///
    /// With the [`AccessError`] if the access is malformed (see [`Self::check_access`]) or
    /// `from` is not a store of `loc`.
    pub fn rmw(
        &mut self,
        thread: ThreadId,
        loc: Loc,
        order: Order,
        from: StoreId,
        new_value: impl FnOnce(Val) -> Val,
    ) -> (Val, StoreId) {
        self.expect(self.check_access(thread, Some(loc), AccessKind::Rmw, order));
        self.expect(self.check_store_of(from, loc));
        let old = self.events[from.index()].written;
        let access = Access {
            kind: Kind::Rmw,
            loc: Some(loc),
            order,
            rf: Some(from.index()),
            written: new_value(old),
            after: self.mo_pos[from.index()],
        };
        let e = self.push(thread, access);
        (old, StoreId::of(e))
    }

    /// Adds a fence by `thread` with `order`. A `Relaxed` fence orders nothing and adds no
    /// event.
    ///
    /// A fence never has a choice to make, and adding one to a consistent execution keeps it
    /// consistent.
    ///
    /// # Panics
    ///
    /// If the thread does not exist.
    pub fn fence(&mut self, thread: ThreadId, order: Order) {
        self.expect(self.check_access(thread, None, AccessKind::Fence, order));
        if order != Order::Relaxed {
            self.push(
                thread,
                Access {
                    kind: Kind::Fence,
                    loc: None,
                    order,
                    rf: None,
                    written: 0,
                    after: 0,
                },
            );
        }
    }

    /// The event behind `store`, checked to be a store.
    fn store_event(&self, store: StoreId) -> &Event {
        match self.events.get(store.index()) {
            Some(event) if event.is_write() => event,
            _ => panic!("{store:?} names no store of this execution"),
        }
    }

    pub(crate) fn check_thread(&self, thread: ThreadId) -> Result<(), AccessError> {
        if thread < self.threads.len() {
            Ok(())
        } else {
            Err(AccessError::UnknownThread {
                thread,
                threads: self.threads.len(),
            })
        }
    }

    pub(crate) fn check_location(&self, loc: Loc) -> Result<(), AccessError> {
        if (loc as usize) < self.mo.len() {
            Ok(())
        } else {
            Err(AccessError::UnknownLocation {
                loc,
                locations: self.mo.len(),
            })
        }
    }

    fn check_store_of(&self, store: StoreId, loc: Loc) -> Result<(), AccessError> {
        match self.events.get(store.index()) {
            Some(event) if event.is_write() && event.loc == Some(loc) => Ok(()),
            _ => Err(AccessError::NotAStoreOf { store, loc }),
        }
    }

    /// Panics with the error, if any: the methods' arguments are the caller's contract.
    pub(crate) fn expect(&self, result: Result<(), AccessError>) {
        if let Err(error) = result {
            panic!("{error}");
        }
    }

    /// Makes a row for a new event in every per-event table, and returns its number.
    fn new_row(&mut self) -> EventId {
        let e = self.events.len();
        self.hb.reserve_columns(e + 1);
        self.release.reserve_columns(e + 1);
        self.acquired.reserve_columns(e + 1);
        self.inits
            .resize(bits::words_for(e + 1).max(self.inits.len()), 0);
        self.hb.push_row();
        self.release.push_row();
        self.psc.new_row(e);
        e
    }

    /// Adds an event by `thread` at the end of its program order, with its happens-before
    /// row, release row and place in modification order. Checks nothing: the public methods
    /// have.
    pub(crate) fn push(&mut self, thread: ThreadId, access: Access) -> EventId {
        let e = self.new_row();
        let Access {
            kind,
            loc,
            order,
            rf,
            written,
            after,
        } = access;

        // What happens before `e`: the initial stores, its program-order predecessor and what
        // happens before it, and what other threads handed over with `synchronize`.
        self.hb.union_row_with(e, &self.inits);
        if let Some(&p) = self.threads[thread].po.last() {
            self.hb.union_rows(e, p);
            self.hb.set(e, p);
        }
        for s in std::mem::take(&mut self.threads[thread].pending) {
            self.hb.union_rows(e, s);
            self.hb.set(e, s);
            self.sync.push((s, e));
        }
        // Synchronizes-with: an acquire read takes the release view of the store it reads now;
        // any read leaves it for a later acquire fence of the thread.
        let read = match rf {
            Some(s) => {
                self.acquired.union_row_with(thread, self.release.row(s));
                if order.is_acquire() {
                    self.hb.union_row_with(e, self.release.row(s));
                }
                self.events[s].written
            }
            None => 0,
        };
        if kind == Kind::Fence && order.is_acquire() {
            self.hb.union_row_with(e, self.acquired.row(thread));
        }

        // What a reader of `e` may acquire: the release sequences `e` is in.
        if matches!(kind, Kind::Store | Kind::Rmw) {
            if order.is_release() {
                self.release.union_row_with(e, self.hb.row(e));
                self.release.set(e, e);
            }
            if let Some(f) = self.threads[thread].release_fence {
                self.release.union_row_with(e, self.hb.row(f));
                self.release.set(e, f);
            }
            if let (Kind::Rmw, Some(s)) = (kind, rf) {
                // rs = [W]; (rf; rmw)*: an RMW continues every release sequence of what it read.
                self.release.union_rows(e, s);
            }
        }
        if kind == Kind::Fence && order.is_release() {
            self.threads[thread].release_fence = Some(e);
        }

        // Atomicity for the new event, before it is placed: an RMW reads a store no RMW read,
        // and a store does not go between a store and the RMW that reads it.
        let atomic = match (kind, rf, loc) {
            (Kind::Rmw, Some(s), _) => !self.read_by_rmw[s],
            (Kind::Store, _, Some(l)) => !self.read_by_rmw[self.mo[l as usize][after]],
            _ => true,
        };
        self.mo_pos.push(0);
        self.read_by_rmw.push(false);
        if let Some(loc) = loc.filter(|_| matches!(kind, Kind::Store | Kind::Rmw)) {
            let place = after + 1;
            let mo = &mut self.mo[loc as usize];
            mo.insert(place, e);
            for (i, &w) in mo.iter().enumerate().skip(place) {
                self.mo_pos[w] = i;
            }
        }
        if let (Kind::Rmw, Some(s)) = (kind, rf) {
            self.read_by_rmw[s] = true;
        }

        self.all_seq_cst &= order.is_seq_cst();
        if order.is_seq_cst() {
            self.seq_cst += 1;
        }
        let index = self.threads[thread].po.len();
        self.threads[thread].po.push(e);
        if let Some(loc) = loc {
            self.on_loc[loc as usize].push(e);
        }
        self.events.push(Event {
            thread: Some(thread),
            index,
            kind,
            loc,
            order,
            rf,
            read,
            written,
        });
        // A choice the candidate methods offered keeps the graph consistent: no need to look.
        self.coherent = self.coherent
            && atomic
            && (self.offered_only || loc.is_none_or(|l| self.coherent_place(e, l)));
        self.known_consistent = self.coherent && self.seq_cst == 0;
        self.grow_psc(e);
        e
    }

    /// Whether the newest event `e`, on `loc`, is coherent: what happens before it has seen no
    /// place of `loc`'s modification order after the store it reads (a load) or its own place
    /// (a store or RMW). On a consistent graph that is the whole of coherence after adding `e`
    /// (module `candidates` says why).
    fn coherent_place(&self, e: EventId, loc: Loc) -> bool {
        let seen = self.view_at(self.hb.row(e), loc);
        match (self.events[e].kind, self.events[e].rf) {
            (Kind::Load, Some(s)) => seen <= self.mo_pos[s],
            _ => seen < self.mo_pos[e],
        }
    }

    /// The latest place in `loc`'s modification order that the events of `set` have seen: the
    /// place of each of its stores, and of the store each of its loads read (0, the initial
    /// store, if none).
    pub(crate) fn view_at(&self, set: &[u64], loc: Loc) -> usize {
        self.on_loc[loc as usize]
            .iter()
            .copied()
            .filter(|&x| bits::contains(set, x))
            .map(|x| self.view_place(x))
            .max()
            .unwrap_or(0)
    }

    /// The place in its location's modification order that event `x` has seen: its own (a
    /// store), or that of the store it read (a load).
    pub(crate) fn view_place(&self, x: EventId) -> usize {
        match (self.events[x].kind, self.events[x].rf) {
            (Kind::Load, Some(s)) => self.mo_pos[s],
            _ => self.mo_pos[x],
        }
    }

    /// A short name of event `e` for messages: `init(x1)`, `T0.2`.
    pub(crate) fn name(&self, e: EventId) -> String {
        let event = &self.events[e];
        match event.thread {
            None => format!("init(x{})", event.index),
            Some(t) => format!("T{t}.{}", event.index),
        }
    }
}

impl fmt::Debug for Execution {
    /// The graph, one thread per line: each event with its location, values, order, the store
    /// it reads (`rf`) and its place in modification order (`mo`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "Execution {{")?;
        for (loc, mo) in self.mo.iter().enumerate() {
            let names: Vec<String> = mo.iter().map(|&e| self.name(e)).collect();
            writeln!(
                f,
                "  x{loc} = {}; mo: {}",
                self.events[mo[0]].written,
                names.join(" < ")
            )?;
        }
        for (t, thread) in self.threads.iter().enumerate() {
            let mut line = Vec::new();
            for &e in &thread.po {
                let ev = &self.events[e];
                let loc = ev.loc.map_or(String::new(), |l| format!("x{l}"));
                let rf = ev
                    .rf
                    .map_or(String::new(), |s| format!(" rf {}", self.name(s)));
                line.push(match ev.kind {
                    Kind::Load => format!("R{loc}={} {}{rf}", ev.read, ev.order),
                    Kind::Store => format!("W{loc}={} {}", ev.written, ev.order),
                    Kind::Rmw => format!("U{loc}={}→{} {}{rf}", ev.read, ev.written, ev.order),
                    Kind::Fence => format!("F {}", ev.order),
                    Kind::Init => unreachable!("initial stores belong to no thread"),
                });
            }
            writeln!(f, "  T{t}: {}", line.join("; "))?;
        }
        for &(a, b) in &self.sync {
            writeln!(f, "  sync {} → {}", self.name(a), self.name(b))?;
        }
        write!(f, "}}")
    }
}
