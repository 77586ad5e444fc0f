//! Weak memory for models: the C++20 / Rust memory model (RC11, [`fgvt_memory`]) behind the
//! shared accesses of a model that declares orderings.
//!
//! A model whose accesses all run `SeqCst` (none declares an ordering, or every one declared is
//! `seq_cst`) is explored sequentially consistent, exactly as before: RC11 gives such programs
//! exactly their interleavings. A model that declares a weaker one runs under RC11: the
//! state's memory carries a [`WeakState`], an execution graph of the threads' accesses, and
//! each access asks it what it may do. A load may read any store coherence and happens-before
//! allow, a store may go before later stores in modification order, a `cas` may read any store
//! a read-modify-write (or, failing, a load) may: each choice is a *way* of the step (way 0 is
//! what a sequentially consistent run does, the latest store), up to
//! [`WeakOptions::max_ways`]; the rest are one bounded leaf.
//!
//! # Locations
//!
//! Every shared scalar and array element, every field of every record, and a few locations
//! of fgvt's own are locations of the graph, numbered in an order the rest of the state
//! determines: the globals by slot, then a word per lock (the declared locks and `this`), a
//! *return marker* per test thread, then, record by record in the order of the heap, its fields
//! and its monitor's word. A record's fields hold, as their initial stores, what `new` gave
//! them: like a Rust atomic made with `new`, every thread sees them (to publish a value through
//! a record, store it after `new`). Values are numbered by a table the program keeps ([`Values`]),
//! the same number for the same value in every state.
//!
//! # What runs how
//!
//! * `x`, `x = v`, `cas(x, e, n)`: `SeqCst`; `x.load(o)`, `x.store(v, o)`, `cas(x, e, n, s, f)`:
//!   as declared; `fence(o)` adds a fence to the thread's graph as it runs.
//! * `lock`/`unlock`/`synchronized`: as `std`'s mutexes, an acquire read-modify-write of the
//!   lock's word and a release store to it (the lock table still decides who may take it).
//! * `atomic { }`, `await(c)` and `dcas`: one step, as always, whose accesses are `SeqCst` and
//!   read the latest store of each location (the one choice that is always consistent): a
//!   region behaves like a small transaction bracketed by `SeqCst` fences. Orderings written
//!   inside a region are rejected by the compiler.
//! * The test's `init` part runs alone before the threads, sequentially consistent; its final
//!   values are the graph's initial stores, which happen before every thread's events (a
//!   thread could read no older store anyway: `init` happens before it). The `final` part runs
//!   after every thread has ended, when every store happens before it: it reads the latest
//!   store of each location, which the state's memory mirrors.
//!
//! # Calls and returns
//!
//! When an operation returns, its thread stores to its return marker (a relaxed store of no
//! one's concern). A call then carries a vector clock ([`fgvt_tree::Event::seen`]): for each other
//! thread, how many of its return markers happen before the call, that is, how many of its
//! operations returned before the call in happens-before; the checker orders operations by it
//! instead of real time.
//!
//! # Merging
//!
//! Two states are equal when the rest of their state is (threads, the memory's mirror, heap,
//! locks) and their graphs have the same [future key](fgvt_memory::Execution::future_key),
//! with the same live threads. Locations are named by their number, which the heap in the
//! state determines; values by their number in the table; stores by who wrote them where.
//! Equal keys give every continuation the same choices, so the first graph to reach a key
//! stands for every other (the parts table keeps it). The return markers are locations of the
//! graph, so the key also decides every later call's clock.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};

use fgvt_memory::{EventRef, Execution, Loc, Naming, Order, StoreId};
use fgvt_tree::{MemoryChoice, MemoryOrder, StoreRef, ThreadId};

use super::value::Val;

/// How many older stores than the latest one access may read, by default (as
/// `fgvt_sync::Test::max_stale`).
pub const DEFAULT_MAX_STALE: u32 = 7;

/// What a report tries at one access (see [`fgvt_memory::fix`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Override {
    /// The order to use instead of the declared one.
    pub order: Option<Order>,
    /// A fence to add right before the access.
    pub fence_before: Option<Order>,
    /// A fence to add right after it.
    pub fence_after: Option<Order>,
}

/// The settings of a weak-memory exploration, fixed for a program.
#[derive(Clone, Debug)]
pub(crate) struct WeakOptions {
    /// The most ways one access may go; the rest are one bounded leaf.
    pub max_ways: u32,
    /// Changes to the model's orderings, by site.
    pub overrides: HashMap<u32, Override>,
}

/// The values met so far, numbered in the order they were met: the graph stores numbers.
#[derive(Debug, Default)]
pub(crate) struct Values {
    list: Vec<Val>,
    ids: HashMap<Val, u64>,
}

impl Values {
    /// The number of `v`.
    pub fn id(&mut self, v: &Val) -> u64 {
        if let Some(&id) = self.ids.get(v) {
            return id;
        }
        let id = self.list.len() as u64;
        self.list.push(v.clone());
        self.ids.insert(v.clone(), id);
        id
    }

    /// The value numbered `id`.
    pub fn get(&self, id: u64) -> &Val {
        &self.list[id as usize]
    }
}

/// Where the locations of fgvt's own start, for a model of `globals` global slots and
/// `locks` lock words (the declared locks and `this`) run by `threads` test threads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Layout {
    pub globals: u32,
    pub locks: u32,
    pub threads: u32,
}

impl Layout {
    /// The word of lock `id` (a declared lock, or `this`).
    pub fn lock(self, id: u32) -> Loc {
        self.globals + id
    }

    /// Thread `t`'s return marker.
    pub fn marker(self, t: usize) -> Loc {
        self.globals + self.locks + t as u32
    }

    /// The first location of the heap's records.
    pub fn heap(self) -> Loc {
        self.globals + self.locks + self.threads
    }
}

/// What the access of a step chose, until its event is built.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Chosen {
    pub order: Order,
    pub way: u32,
    pub ways: u32,
    pub cut: bool,
    pub read: Option<StoreId>,
    pub latest: Option<StoreId>,
    pub before: Option<StoreId>,
}

/// The memory of a state under weak memory: its execution graph, and what names its parts.
///
/// Equal (and hashed) by its key ([`WeakState::seal`]): see the module docs.
#[derive(Clone)]
pub(crate) struct WeakState {
    pub x: Execution,
    pub layout: Layout,
    /// Per event number, for the stores of test threads: (thread, site) of who wrote it.
    writers: Vec<Option<(u32, u32)>>,
    /// Per test thread, its return markers in order.
    markers: Vec<Vec<EventRef>>,
    /// The test threads that may still act, as bits.
    live: u64,
    /// The key, once sealed; `None` after any change.
    key: Option<Box<[u64]>>,
}

impl std::fmt::Debug for WeakState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?}", self.x)
    }
}

impl PartialEq for WeakState {
    fn eq(&self, other: &WeakState) -> bool {
        self.key() == other.key()
    }
}

impl Eq for WeakState {}

impl Hash for WeakState {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.key().hash(state);
    }
}

impl WeakState {
    /// A graph whose initial stores are the values of `initial` (every location, in layout
    /// order), for `threads` test threads of which `live` may act.
    pub fn new(layout: Layout, initial: impl IntoIterator<Item = u64>, live: u64) -> WeakState {
        let mut x = Execution::new(layout.threads as usize);
        for value in initial {
            x.add_location(value);
        }
        let mut state = WeakState {
            x,
            layout,
            writers: Vec::new(),
            markers: vec![Vec::new(); layout.threads as usize],
            live,
            key: None,
        };
        state.seal();
        state
    }

    /// The key, which equality and hashing look at.
    ///
    /// # Panics
    ///
    /// If the state changed since it was last sealed: a part is sealed before it is stored.
    fn key(&self) -> &[u64] {
        self.key
            .as_deref()
            .expect("a weak state is sealed before it is compared")
    }

    /// Marks the state changed: it must be sealed again.
    pub fn touch(&mut self) {
        self.key = None;
    }

    /// Whether the state changed since it was sealed.
    pub fn is_sealed(&self) -> bool {
        self.key.is_some()
    }

    /// The live threads.
    pub fn live(&self) -> u64 {
        self.live
    }

    /// Sets which threads may still act.
    pub fn set_live(&mut self, live: u64) {
        if live != self.live {
            self.live = live;
            self.touch();
        }
    }

    /// Works out the key: the live threads, and the graph's future key.
    pub fn seal(&mut self) {
        if self.key.is_some() {
            return;
        }
        let live = self.live;
        let mut key = vec![live];
        key.extend(self.x.future_key(&*self, |t| live >> t & 1 == 1));
        self.key = Some(key.into_boxed_slice());
    }

    /// Notes that `store` was written by test thread `thread` at `site`.
    pub fn note_writer(&mut self, store: StoreId, thread: u32, site: u32) {
        let i = store.index();
        if self.writers.len() <= i {
            self.writers.resize(i + 1, None);
        }
        self.writers[i] = Some((thread, site));
    }

    /// Who wrote `store`: its thread and site, `None` for an initial store.
    pub fn writer(&self, store: StoreId) -> Option<(u32, u32)> {
        self.writers.get(store.index()).copied().flatten()
    }

    /// Test thread `t`'s operation returned: it stores to its marker.
    pub fn op_returned(&mut self, t: usize) {
        self.touch();
        let loc = self.layout.marker(t);
        let end = self.x.modification_order(loc).len() - 1;
        let count = self.markers[t].len() as u64 + 1;
        self.x.store(t, loc, count, Order::Relaxed, end);
        let marker = self.x.last_event(t).expect("the marker was just added");
        self.markers[t].push(marker);
    }

    /// What test thread `t`'s `nth` operation, about to be called, happens after: for each
    /// test thread, how many of its operations returned before it in happens-before (its own
    /// earlier ones all did).
    pub fn clock(&self, t: usize, nth: usize) -> fgvt_tree::Clock {
        let clock: Vec<u32> = (0..self.markers.len())
            .map(|u| {
                let count = if u == t {
                    nth
                } else {
                    // Markers are in program order: those that happen before the call are a
                    // prefix.
                    self.markers[u]
                        .iter()
                        .take_while(|&&m| self.x.happens_before_next(m, t))
                        .count()
                };
                u32::try_from(count).unwrap_or(u32::MAX)
            })
            .collect();
        clock.into()
    }

    /// Adds a location with the initial value `value` (a record's field or monitor word).
    pub fn add_location(&mut self, value: u64) -> Loc {
        self.touch();
        self.x.add_location(value)
    }
}

impl Naming for WeakState {
    fn location(&self, loc: Loc) -> u64 {
        u64::from(loc)
    }

    fn value(&self, _loc: Loc, value: u64) -> u64 {
        value
    }

    fn store(&self, store: StoreId) -> u64 {
        self.writer(store)
            .map_or(0, |(t, site)| (u64::from(t) + 1) << 32 | u64::from(site))
    }
}

/// Which of `n` candidates (oldest first) way `way` takes, with the step's number of ways (one
/// more than `max` when it cuts some): `Err((ways, max))` for the cut way.
pub(crate) fn pick(n: usize, way: u32, max: u32) -> Result<(usize, u32, bool), (u32, u32)> {
    let max = max.max(1);
    let n32 = u32::try_from(n).unwrap_or(u32::MAX);
    let cut = n32 > max;
    let ways = if cut { max + 1 } else { n32 };
    if cut && way >= max {
        return Err((n32, max));
    }
    // Newest first: way 0 is the latest store, or the end of modification order.
    let index = n - 1 - (way as usize).min(n - 1);
    Ok((index, ways, cut))
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

/// The event's part of a step's access: which way it went, when it could go several. `store`
/// says how a report names a store.
pub(crate) fn memory_choice(
    chosen: &Chosen,
    mut store: impl FnMut(StoreId) -> StoreRef,
) -> Option<MemoryChoice> {
    if chosen.ways <= 1 {
        return None;
    }
    Some(MemoryChoice {
        way: chosen.way,
        ways: chosen.ways,
        cut: chosen.cut,
        read: chosen.read.map(&mut store),
        latest: chosen.latest.map(&mut store),
        before: chosen.before.map(&mut store),
    })
}

/// The thread a [`StoreRef`] names for a store written by `writer`.
pub(crate) fn store_thread(writer: Option<(u32, u32)>) -> Option<ThreadId> {
    writer.map(|(t, _)| t as ThreadId)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ways_are_newest_first_and_the_last_one_past_the_bound_is_cut() {
        // Three candidates, oldest first: way 0 takes the newest.
        assert_eq!(pick(3, 0, 8), Ok((2, 3, false)));
        assert_eq!(pick(3, 2, 8), Ok((0, 3, false)));
        // Five candidates, two ways allowed: ways 0 and 1, then the cut way 2.
        assert_eq!(pick(5, 0, 2), Ok((4, 3, true)));
        assert_eq!(pick(5, 1, 2), Ok((3, 3, true)));
        assert_eq!(pick(5, 2, 2), Err((5, 2)));
    }
}
