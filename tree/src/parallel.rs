//! Exploration on several cores: one depth-first search, its steps taken ahead by workers.
//!
//! The search itself stays the one of [`explore`](mod@crate::explore), on the calling thread:
//! the order in which it opens states, numbers nodes, finds strongly connected components and
//! meets its first failing leaf is what decides the tree, the counts, the labels and the CDRS,
//! and a search that ran on several threads at once would decide them by timing. What costs
//! is elsewhere: taking a state's steps (for `fgvt-sync`, one execution of the user's code per
//! step). So the search runs over [`Pooled`], a [`Program`] whose states are numbers in a table
//! shared with *workers*: threads that each hold their own instance of the program
//! ([`Parallel::worker`]) and take the steps of states the search has met but not opened yet,
//! depth-first from each (a worker goes on from the execution it paused, as the search does),
//! storing every thread's step of every way. When the search opens a state, its steps are
//! usually there already; when they are not, the search takes them itself (or, if a worker is
//! taking them right now, waits for it, spinning a moment before it sleeps; that worker then
//! leaves the state's children to the search and goes back to older states, so that the two
//! do not go on in lockstep, one waiting for the other at every state). Either way the answers
//! are the program's own, so the tree is the one-job tree, byte for byte, whatever the number
//! of workers or their timing: the program must be deterministic, which every [`Program`]
//! already is.
//!
//! The table tells states apart as the search does: by the program's state and the path's
//! history in canonical form (a program's steps may depend on which calls are pending, which
//! its state leaves to the history), here as a [`HistoryDigest`] any thread can work out.
//!
//! No global lock is on the hot path: the table is split into shards by hash, each behind its
//! own mutex, and a worker keeps the states it found on a stack of its own, handing half of it
//! to the shared pool only when that runs dry. The workers look ahead where the search will go
//! (every state of the graph is opened by the search once it gets there), so nothing they do
//! is wasted unless a limit stops the search first; a worker expands no state further than an
//! operation's step bound (`max_steps`) from the path it found it by, so a loop that never
//! merges cannot run away with the workers. Since a limit may stop it (a timeout, a failing
//! test's report budget), a worker stays near the search: when the search feeds the pool (it
//! met states no worker had), the worker puts its own stack back and takes the newest states,
//! those the search opens next. On the buggy 3-thread Treiber stack of `benches/genmc`, cut by
//! the 5 s report budget, the search found none of a worker's steps before (the worker was
//! deep in a subtree the search never reached): 2 jobs explored 1.1 times the states of one,
//! and now 1.36 times.
//!
//! Not so in a bounded-preemption search, which opens a state's steps only up to the bound of
//! the path it came by: the entry points run it on one thread (`jobs_for`), since workers
//! would take every step of every state they meet, most of which the bound never opens.

use std::collections::VecDeque;
use std::hash::Hash;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

use crate::event::Event;
use crate::explore::{ExploreOptions, Progress, Search};
use crate::history::{Call, History, ThreadId};
use crate::interner::Interner;
use crate::leaf::Leaf;
use crate::model::Tree;
use crate::program::{Fault, Program, Step, Wait};

/// A program whose steps several threads can take at once, each with an instance of its own.
///
/// The instances must agree: from equal states, equal steps (the explorer's determinism, which
/// every program has). The instance the search was given is the *main* one: it answers for
/// leaves ([`Program::finish`], ...) and takes the steps no worker took.
pub trait Parallel: Program<State: Send + Sync> {
    /// What a worker builds its own instance from, on its own thread.
    type Recipe: Send + Sync;
    /// What a worker's instance learned that the main one must know when the search ends
    /// (for `fgvt-sync`: the accesses its executions met, whether one declared a weaker
    /// ordering, a replay that failed).
    type Learned: Send;

    /// The recipe of instances like this one.
    fn recipe(&self) -> Self::Recipe;
    /// A worker's instance, built on the worker's thread.
    fn worker(recipe: &Self::Recipe) -> Self;
    /// Whether this worker's instance can take no more steps for the search (its last steps
    /// are then not used): the worker stops, and the search goes on without it.
    fn halted(&self) -> bool {
        false
    }
    /// What the worker's instance learned, when it stops.
    fn learned(self) -> Self::Learned;
    /// Whether a step from `a` is the step from `b`: a run a worker took ahead from one
    /// answers for the other ([`crate::ahead`]). Equal states by default, as the instances
    /// agree on them; a program whose states compare equal where their steps may differ (a
    /// state told apart only as far as some search needs) says which are the same.
    fn interchangeable(a: &Self::State, b: &Self::State) -> bool {
        a == b
    }
    /// Takes in what a worker learned.
    fn absorb(&self, learned: Self::Learned);
}

/// A state of a [`Pooled`] program: its number in the shared table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Pooled(u32);

/// How many shards the table is split into: enough that workers rarely meet on one.
const SHARDS: usize = 64;

/// How many states a starving worker takes from the pool at once.
const TAKEN_AT_ONCE: usize = 8;

/// How long a starving worker spins before it sleeps, in spin-loop hints.
const SPINS: usize = 1 << 12;

/// How many times the search looks again at a state a worker is taking before it sleeps
/// until the worker is done, and how long it spins between two looks, in spin-loop hints
/// (together, tens of microseconds: about what a state's steps take).
const LOOKS_BEFORE_SLEEP: u32 = 64;
const SPINS_PER_LOOK: u32 = 64;

/// No state: what [`Shared::awaited`] holds until the search first waits for one.
const NO_STATE: u32 = u32::MAX;

/// Every thread's steps from a state, each way of each: `steps[thread][way]`.
type Steps = Arc<[Box<[Step<Pooled>]>]>;

/// How far a state's steps are.
enum Taken {
    /// Nobody has taken them.
    No,
    /// A worker (or the search) is taking them now.
    Now,
    /// Here they are.
    Yes(Steps),
    /// The search is done with the state ([`Program::retire`]): its steps are let go.
    Retired,
}

/// What the table keeps of a state.
struct Entry {
    taken: Taken,
    /// Steps each thread took in its current operation on the path that found the state
    /// (`max_steps` is counted so along a path).
    op_steps: Box<[u32]>,
}

/// One shard of the table: its states, each with what the table keeps of it.
type Shard<S> = Interner<(S, HistoryDigest), Entry>;

/// A path's coarse history as the search's canonical histories tell it (`history_tree.rs`:
/// within a run of consecutive calls, or of returns, the order does not count): a hash of the
/// runs before the last, and an order-free sum over the last run. Under clocks (weak memory,
/// where the canonical form is thread-major) every event is in one order-free sum, each
/// hashed with its thread and operation's place, which fix where it stands in its thread. Two
/// 64-bit lanes, each from its own hash, so that telling two histories apart by it fails about
/// once in 2^128.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct HistoryDigest {
    /// The runs before the last, chained.
    before: [u64; 2],
    /// The sum of the last run's events.
    run: [u64; 2],
    /// What the last run is: 0 none yet, 1 calls, 2 returns, [`CLOCKED`] every event under
    /// clocks.
    kind: u8,
}

/// [`HistoryDigest::kind`] of a history whose calls carry clocks: one order-free run.
const CLOCKED: u8 = 3;

impl HistoryDigest {
    /// The digest after `step`, which may call and return.
    pub fn after(self, step: &Event) -> HistoryDigest {
        let mut digest = self;
        // A history is clocked from its first call on, as the search's canonical tree decides.
        let clocked = step.seen.is_some() || digest.kind == CLOCKED;
        let place = (step.thread, step.op_index);
        if let Some(call) = &step.call {
            digest = match clocked {
                true => digest.with(CLOCKED, &(place, 0u8, call, &step.seen)),
                false => digest.with(1, &(step.thread, call, &step.seen)),
            };
        }
        if let Some(value) = &step.ret {
            digest = match clocked {
                true => digest.with(CLOCKED, &(place, 1u8, value)),
                false => digest.with(2, &(step.thread, value)),
            };
        }
        digest
    }

    fn with(self, kind: u8, event: &impl Hash) -> HistoryDigest {
        use std::hash::BuildHasher;
        let lane = |seed: u64| foldhash::fast::FixedState::with_seed(seed).hash_one(event);
        let hashes = [lane(0x6869_7374), lane(0x6f72_7921)];
        if kind == self.kind {
            HistoryDigest {
                run: [
                    self.run[0].wrapping_add(hashes[0]),
                    self.run[1].wrapping_add(hashes[1]),
                ],
                ..self
            }
        } else {
            let chain = |lane: usize, seed: u64| {
                foldhash::fast::FixedState::with_seed(seed).hash_one((
                    self.before[lane],
                    self.kind,
                    self.run[lane],
                ))
            };
            HistoryDigest {
                before: [chain(0, 0x6265_666f), chain(1, 0x7265_2121)],
                run: hashes,
                kind,
            }
        }
    }
}

/// The table of states shared by the search and the workers, and the pool of states a worker
/// may take.
struct Shared<S> {
    shards: Box<[Mutex<Shard<S>>]>,
    /// Signalled when a state's steps are stored in the shard of the same number, if the
    /// search waits for one (`waiting`): a signal nobody waits for still costs a system call.
    stored: Box<[Condvar]>,
    waiting: AtomicUsize,
    /// States met whose steps nobody has taken, for a worker with nothing of its own: taken
    /// newest first, the siblings of where the search is, which it opens once it is done
    /// with its current child (the child itself it opens at once, and is not here). Workers
    /// put back what they meant to take next at the far end (see [`work`]).
    pool: Mutex<VecDeque<Pooled>>,
    /// Signalled when the pool gets states, or the workers must stop.
    fed: Condvar,
    /// How many states the pool holds, for a worker to look at without its lock.
    queued: AtomicUsize,
    /// Workers waiting on an empty pool: a worker with states of its own hands some over.
    hungry: AtomicUsize,
    stop: AtomicBool,
    threads: usize,
    /// What bounds the workers: they stop at the search's limits (see [`Shared::worth_going_on`]).
    limits: WorkerLimits,
    /// States in the table.
    len: AtomicUsize,
    /// The last state the search found a worker taking (its number, or [`NO_STATE`]): that
    /// worker leaves the state's children to the search, see [`work`].
    awaited: AtomicU32,
    /// How many times the search has fed the pool: a worker that sees it change goes back to
    /// where the search is, see [`work`].
    search_fed: AtomicUsize,
}

/// The search's limits, as the workers heed them: past one, a worker stops taking steps
/// ahead (the search, which looks at its limits itself, stops there anyway).
struct WorkerLimits {
    max_steps: u32,
    max_states: usize,
    deadline: Option<std::time::Instant>,
    memory: Option<crate::explore::MemoryBudget>,
    interrupt: Option<crate::explore::Interrupt>,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic while a shard is held is a bug that fails the search anyway: see it there.
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

impl<S: Hash + Eq + Clone> Shared<S> {
    fn new(threads: usize, options: &ExploreOptions) -> Shared<S> {
        Shared {
            shards: (0..SHARDS).map(|_| Mutex::new(Interner::new())).collect(),
            stored: (0..SHARDS).map(|_| Condvar::new()).collect(),
            waiting: AtomicUsize::new(0),
            pool: Mutex::new(VecDeque::new()),
            fed: Condvar::new(),
            queued: AtomicUsize::new(0),
            hungry: AtomicUsize::new(0),
            stop: AtomicBool::new(false),
            threads,
            limits: WorkerLimits {
                max_steps: (options.max_steps)
                    .map_or(u32::MAX, |m| u32::try_from(m).unwrap_or(u32::MAX)),
                max_states: options.max_states.unwrap_or(usize::MAX),
                deadline: options.timeout.map(|t| std::time::Instant::now() + t),
                memory: options.max_memory,
                interrupt: options.interrupt,
            },
            len: AtomicUsize::new(0),
            awaited: AtomicU32::new(NO_STATE),
            search_fed: AtomicUsize::new(0),
        }
    }

    /// Whether a worker should take more steps ahead: not once the search must stop, nor past
    /// one of its limits.
    fn worth_going_on(&self) -> bool {
        let limits = &self.limits;
        !self.stop.load(Ordering::Relaxed)
            && self.len.load(Ordering::Relaxed) < limits.max_states
            && limits
                .deadline
                .is_none_or(|d| std::time::Instant::now() < d)
            && limits.memory.is_none_or(|m| (m.used)() < m.bytes)
            && limits.interrupt.is_none_or(|i| !i.is_raised())
    }

    fn shard_of(state: &(S, HistoryDigest)) -> usize {
        // The shard is picked by a hash of its own (the interner hashes again inside), so
        // that the two do not correlate.
        use std::hash::BuildHasher;
        let hash = foldhash::fast::FixedState::with_seed(0x5a4d).hash_one(state);
        (hash >> 58) as usize % SHARDS
    }

    fn split(id: Pooled) -> (usize, u32) {
        ((id.0 as usize) % SHARDS, id.0 / SHARDS as u32)
    }

    /// The number of `state` after history `digest`, met now with step counts `op_steps`,
    /// and whether it is new.
    fn intern(
        &self,
        state: S,
        digest: HistoryDigest,
        op_steps: impl FnOnce() -> Box<[u32]>,
    ) -> (Pooled, bool) {
        let key = (state, digest);
        let shard = Self::shard_of(&key);
        let mut guard = lock(&self.shards[shard]);
        let before = guard.len();
        let index = guard.intern(key, || Entry {
            taken: Taken::No,
            op_steps: op_steps(),
        });
        let new = guard.len() > before;
        if new {
            self.len.fetch_add(1, Ordering::Relaxed);
        }
        let id = u64::from(index) * SHARDS as u64 + shard as u64;
        let id = u32::try_from(id).expect("fewer than 2^32 states");
        (Pooled(id), new)
    }

    /// Claims state `id` to take its steps: the state, its history and its step counts, or
    /// `None` when someone has taken them or is taking them.
    fn claim(&self, id: Pooled) -> Option<Claimed<S>> {
        let (shard, index) = Self::split(id);
        let mut guard = lock(&self.shards[shard]);
        if !matches!(guard.value(index).taken, Taken::No) {
            return None;
        }
        Some(Self::claimed(&mut guard, index))
    }

    /// Claims the state at `index` of `shard`, whose steps nobody takes.
    fn claimed(shard: &mut Shard<S>, index: u32) -> Claimed<S> {
        let entry = shard.value_mut(index);
        entry.taken = Taken::Now;
        let op_steps = entry.op_steps.clone();
        let (state, digest) = shard.key(index).clone();
        Claimed {
            state,
            digest,
            op_steps,
        }
    }

    /// Gives back a claim whose steps were not taken (the worker halted).
    fn unclaim(&self, id: Pooled) {
        let (shard, index) = Self::split(id);
        lock(&self.shards[shard]).value_mut(index).taken = Taken::No;
        self.wake_search(shard);
    }

    /// Wakes the search if it waits for a state of `shard`.
    fn wake_search(&self, shard: usize) {
        if self.waiting.load(Ordering::SeqCst) > 0 {
            // Through the shard's lock: the search either has not looked at the state yet,
            // or is waiting already.
            let _shard = lock(&self.shards[shard]);
            self.stored[shard].notify_all();
        }
    }

    /// Stores the steps `rows` of `id`, claimed as `claimed`: every state they reach is
    /// numbered, and those new to the table that are within the step bound are added to
    /// `fresh` (for whoever took the steps to go on with), in thread and way order.
    fn store(
        &self,
        id: Pooled,
        claimed: &Claimed<S>,
        rows: Vec<Vec<Step<S>>>,
        fresh: &mut Vec<Pooled>,
    ) -> Steps {
        let mut steps = Vec::with_capacity(rows.len());
        for (thread, row) in rows.into_iter().enumerate() {
            let row: Box<[Step<Pooled>]> = row
                .into_iter()
                .map(|step| match step {
                    Step::Moved { state, event } => Step::Moved {
                        state: self.child(claimed, thread, &event, state, fresh),
                        event,
                    },
                    other => {
                        other.map_state(|_| unreachable!("only a step that moved has a state"))
                    }
                })
                .collect();
            steps.push(row);
        }
        let steps: Steps = steps.into();
        let (shard, index) = Self::split(id);
        lock(&self.shards[shard]).value_mut(index).taken = Taken::Yes(Arc::clone(&steps));
        self.wake_search(shard);
        steps
    }

    /// The number of `state`, which `thread`'s step `event` reached from `claimed`: its
    /// history and step counts follow from the step's; one new to the table and within the
    /// step bound is added to `fresh`.
    fn child(
        &self,
        claimed: &Claimed<S>,
        thread: ThreadId,
        event: &Event,
        state: S,
        fresh: &mut Vec<Pooled>,
    ) -> Pooled {
        let returns = event.ret.is_some();
        let op_steps = &claimed.op_steps;
        let counts = || {
            let mut counts = op_steps.clone();
            counts[thread] = if returns { 0 } else { counts[thread] + 1 };
            counts
        };
        let within = returns || op_steps[thread] < self.limits.max_steps;
        let (child, new) = self.intern(state, claimed.digest.after(event), counts);
        if new && within {
            fresh.push(child);
        }
        child
    }

    /// The steps of `id` if someone took them; waits while someone is taking them; `None`
    /// (and the state, claimed) when nobody has.
    fn steps_or_claim(&self, id: Pooled) -> Result<Steps, Claimed<S>> {
        let (shard, index) = Self::split(id);
        let mut guard = lock(&self.shards[shard]);
        let mut looks = LOOKS_BEFORE_SLEEP;
        loop {
            match &guard.value(index).taken {
                Taken::Yes(steps) => return Ok(Arc::clone(steps)),
                // The search never asks a retired state again; were it to, the program
                // would say so when asked for the steps.
                Taken::No | Taken::Retired => return Err(Self::claimed(&mut guard, index)),
                // The worker is about done, as a rule: spinning a moment costs less than a
                // sleep and a wake (tens of microseconds each, on a futex).
                Taken::Now if looks > 0 => {
                    if looks == LOOKS_BEFORE_SLEEP {
                        self.awaited.store(id.0, Ordering::Relaxed);
                    }
                    looks -= 1;
                    drop(guard);
                    for _ in 0..SPINS_PER_LOOK {
                        std::hint::spin_loop();
                    }
                    guard = lock(&self.shards[shard]);
                }
                Taken::Now => {
                    self.waiting.fetch_add(1, Ordering::SeqCst);
                    guard = self.stored[shard]
                        .wait(guard)
                        .unwrap_or_else(|e| e.into_inner());
                    self.waiting.fetch_sub(1, Ordering::SeqCst);
                }
            }
        }
    }

    /// The search is done with `id`: its steps go, and `retire` lets go of what of the state
    /// only stepping from it needs.
    fn retire(&self, id: Pooled, retire: impl FnOnce(&mut S)) {
        let (shard, index) = Self::split(id);
        let mut guard = lock(&self.shards[shard]);
        guard.value_mut(index).taken = Taken::Retired;
        retire(&mut guard.key_mut(index).0);
    }

    fn state(&self, id: Pooled) -> S {
        let (shard, index) = Self::split(id);
        lock(&self.shards[shard]).key(index).0.clone()
    }

    /// Adds states for the workers to take.
    fn feed(&self, states: impl IntoIterator<Item = Pooled>) {
        let mut pool = lock(&self.pool);
        let before = pool.len();
        pool.extend(states);
        self.queued.store(pool.len(), Ordering::Relaxed);
        if pool.len() > before && self.hungry.load(Ordering::Relaxed) > 0 {
            self.fed.notify_all();
        }
    }

    /// Puts a worker's states back at the pool's far end, to be taken after every other.
    fn put_back(&self, states: impl DoubleEndedIterator<Item = Pooled>) {
        let mut pool = lock(&self.pool);
        for state in states.rev() {
            pool.push_front(state);
        }
        self.queued.store(pool.len(), Ordering::Relaxed);
    }

    /// Moves a few of the pool's newest states to `mine` (the newest on top), waiting for
    /// some; `false` once the workers must stop.
    fn take(&self, mine: &mut Vec<Pooled>) -> bool {
        // A worker that starves spins a moment before it sleeps: the search feeds the pool
        // at every state it opens, and waking a sleeper costs it a system call.
        for _ in 0..SPINS {
            if self.stop.load(Ordering::Relaxed) || self.queued.load(Ordering::Relaxed) > 0 {
                break;
            }
            std::hint::spin_loop();
        }
        let mut pool = lock(&self.pool);
        loop {
            if self.stop.load(Ordering::Relaxed) {
                return false;
            }
            if !pool.is_empty() {
                let n = pool.len().min(TAKEN_AT_ONCE);
                let from = pool.len() - n;
                mine.extend(pool.drain(from..));
                self.queued.store(pool.len(), Ordering::Relaxed);
                return true;
            }
            self.hungry.fetch_add(1, Ordering::Relaxed);
            pool = self.fed.wait(pool).unwrap_or_else(|e| e.into_inner());
            self.hungry.fetch_sub(1, Ordering::Relaxed);
        }
    }

    fn halt(&self) {
        self.stop.store(true, Ordering::Relaxed);
        let _pool = lock(&self.pool);
        self.fed.notify_all();
    }
}

/// A state claimed to take its steps, with what the table keeps of it.
struct Claimed<S> {
    state: S,
    digest: HistoryDigest,
    op_steps: Box<[u32]>,
}

/// Every thread's steps from `state`, every way of each, asked in the order the explorer
/// asks them (last thread first, then the further ways), so that a program that goes on
/// from its last step is where the explorer's next child is.
fn take_steps<P: Program>(
    program: &P,
    state: &P::State,
    threads: usize,
) -> Vec<Vec<Step<P::State>>> {
    let mut rows: Vec<Vec<Step<P::State>>> = (0..threads).map(|_| Vec::new()).collect();
    for thread in (0..threads).rev() {
        rows[thread].push(program.step(state, thread));
    }
    for (thread, row) in rows.iter_mut().enumerate() {
        let ways = match &row[0] {
            Step::Moved { event, .. } => event.ways(),
            _ => 1,
        };
        for way in 1..ways {
            row.push(program.step_way(state, thread, way));
        }
    }
    rows
}

/// A worker: takes the steps of states met but not opened, depth-first from each.
fn work<P: Parallel>(shared: &Shared<P::State>, recipe: &P::Recipe) -> P::Learned {
    let program = P::worker(recipe);
    let mut mine: Vec<Pooled> = Vec::new();
    let mut fresh = Vec::new();
    let mut followed = shared.search_fed.load(Ordering::Relaxed);
    while shared.worth_going_on() {
        let fed = shared.search_fed.load(Ordering::Relaxed);
        if fed != followed {
            // The search took steps nobody had taken: it is where no worker is. What this
            // worker meant to take next goes back to the pool's far end, and it takes the
            // states the search just met, which it opens soon; a search cut by a limit (a
            // timeout, the report budget) never reaches most of a subtree the worker would
            // otherwise go on in.
            if !mine.is_empty() {
                shared.put_back(mine.drain(..));
            }
            followed = fed;
        }
        if mine.is_empty() && !shared.take(&mut mine) {
            break;
        }
        let Some(id) = mine.pop() else {
            continue;
        };
        let Some(claimed) = shared.claim(id) else {
            continue;
        };
        let taken = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            take_steps(&program, &claimed.state, shared.threads)
        }));
        let rows = match taken {
            Ok(rows) if !program.halted() => rows,
            Ok(_) => {
                shared.unclaim(id);
                break;
            }
            Err(panic) => {
                // Not the user's code (its panics are the program's faults): a bug, which the
                // search must not wait for forever.
                shared.unclaim(id);
                shared.halt();
                std::panic::resume_unwind(panic);
            }
        };
        shared.store(id, &claimed, rows, &mut fresh);
        if shared.awaited.load(Ordering::Relaxed) == id.0 {
            // The search has caught up with this worker: going on to the state's children,
            // the worker would be taking each state the search asks for next while the search
            // waits for it, in lockstep. The search takes them itself; the worker goes back to
            // the states it met before, which the search reaches later.
            fresh.clear();
        }
        // The first thread's child on top: where the paused execution most often is.
        mine.extend(fresh.drain(..).rev());
        if shared.hungry.load(Ordering::Relaxed) > 0 && mine.len() > 1 {
            // The oldest half: the farthest from where this worker is.
            let half = mine.len() / 2;
            shared.feed(mine.drain(..half));
        }
    }
    program.learned()
}

/// `program` as the search sees it while workers take its steps ahead (see the
/// [module docs](self)): built by [`with_workers`].
pub struct PooledProgram<'a, P: Parallel> {
    program: &'a P,
    shared: &'a Shared<P::State>,
    initial: Result<(Pooled, History), Fault>,
    /// The state asked last, with its steps: the search asks each of a state's threads in
    /// turn, and the table's lock is taken once for them all.
    last: std::cell::RefCell<Option<(Pooled, Steps)>>,
    /// Whether a state the search retires is done with: not in a bounded-preemption search,
    /// which tells states apart by turn too and may open one of the table's again.
    retires: bool,
}

impl<P: Parallel> PooledProgram<'_, P> {
    /// The steps of `id`: the last state's, stored, or taken now.
    fn steps(&self, id: Pooled) -> Steps {
        if let Some((last, steps)) = &*self.last.borrow() {
            if *last == id {
                return Arc::clone(steps);
            }
        }
        let steps = self.lookup(id);
        *self.last.borrow_mut() = Some((id, Arc::clone(&steps)));
        steps
    }

    /// The steps of `id` from the table: stored, or taken now.
    fn lookup(&self, id: Pooled) -> Steps {
        match self.shared.steps_or_claim(id) {
            Ok(steps) => steps,
            Err(claimed) => {
                let rows = take_steps(self.program, &claimed.state, self.shared.threads);
                let mut fresh = Vec::new();
                let steps = self.shared.store(id, &claimed, rows, &mut fresh);
                // The search opens the first new child next, and the others once it is done
                // with that one's subtree: those go to the workers, the nearest on top.
                if fresh.len() > 1 {
                    self.shared.feed(fresh.iter().skip(1).rev().copied());
                    self.shared.search_fed.fetch_add(1, Ordering::Relaxed);
                }
                steps
            }
        }
    }
}

impl<P: Parallel> Program for PooledProgram<'_, P> {
    type State = Pooled;

    fn threads(&self) -> usize {
        self.program.threads()
    }

    fn initial_state(&self) -> Result<(Pooled, History), Fault> {
        self.initial.clone()
    }

    fn step(&self, state: &Pooled, thread: ThreadId) -> Step<Pooled> {
        self.step_way(state, thread, 0)
    }

    fn step_way(&self, state: &Pooled, thread: ThreadId, way: u32) -> Step<Pooled> {
        let steps = self.steps(*state);
        steps[thread][way as usize].clone()
    }

    fn finish(&self, state: &Pooled) -> Result<History, Fault> {
        self.program.finish(&self.shared.state(*state))
    }

    fn blocked_calls(&self, state: &Pooled) -> Vec<(ThreadId, Call)> {
        self.program.blocked_calls(&self.shared.state(*state))
    }

    fn why_blocked(&self, state: &Pooled, thread: ThreadId) -> Option<Wait> {
        self.program.why_blocked(&self.shared.state(*state), thread)
    }

    fn goes_on_from_last_step(&self) -> bool {
        // Steps are taken whole states at a time, in the explorer's order (`take_steps`).
        false
    }

    fn retire(&self, state: &mut Pooled) {
        if !self.retires {
            return;
        }
        let mut last = self.last.borrow_mut();
        if matches!(&*last, Some((id, _)) if id == state) {
            *last = None;
        }
        self.shared
            .retire(*state, |state| self.program.retire(state));
    }
}

/// Stops the workers when dropped.
struct Halting<'a, S: Hash + Eq + Clone>(&'a Shared<S>);

impl<S: Hash + Eq + Clone> Drop for Halting<'_, S> {
    fn drop(&mut self) {
        self.0.halt();
    }
}

/// Runs `search` over `program` with `jobs - 1` workers taking steps ahead (see the
/// [module docs](self)), then stops them and hands what they learned to `program`. With one
/// job (or none), `search` gets nothing to run over: the caller searches `program` itself.
///
/// `options` are the search's: workers stop taking steps ahead at its limits, and go no
/// further than its step bound (`max_steps`) from where they found a state.
pub fn with_workers<P: Parallel, R>(
    program: &P,
    jobs: usize,
    options: &ExploreOptions,
    search: impl FnOnce(&PooledProgram<'_, P>) -> R,
) -> R {
    let threads = program.threads();
    let shared: Shared<P::State> = Shared::new(threads, options);
    let initial = program.initial_state().map(|(state, history)| {
        let (id, _) = shared.intern(state, HistoryDigest::default(), || vec![0; threads].into());
        (id, history)
    });
    let recipe = program.recipe();
    let workers = jobs.saturating_sub(1);
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..workers)
            .map(|_| scope.spawn(|| work::<P>(&shared, &recipe)))
            .collect();
        let pooled = PooledProgram {
            program,
            shared: &shared,
            initial,
            last: std::cell::RefCell::new(None),
            retires: options.max_preemptions.is_none(),
        };
        if let Ok((root, _)) = &pooled.initial {
            shared.feed([*root]);
        }
        // The workers stop however the search ends: a search that panics must not leave them
        // waiting for states, and the scope waiting for them.
        let halting = Halting(&shared);
        let result = search(&pooled);
        drop(halting);
        join_workers(program, handles);
        result
    })
}

/// Waits for the workers of `handles` and hands what each learned to `program`; a worker's
/// panic goes on in the caller.
pub(crate) fn join_workers<P: Parallel>(
    program: &P,
    handles: Vec<std::thread::ScopedJoinHandle<'_, P::Learned>>,
) {
    for handle in handles {
        match handle.join() {
            Ok(learned) => program.absorb(learned),
            Err(panic) => std::panic::resume_unwind(panic),
        }
    }
}

/// [`crate::explore_judging`] with [`ExploreOptions::jobs`] threads taking steps.
pub fn explore_judging<P: Parallel>(
    program: &P,
    options: &ExploreOptions,
    progress: &mut dyn Progress,
    fails: &mut dyn FnMut(&Leaf) -> bool,
) -> Result<Tree, Fault> {
    let jobs = jobs_for(options);
    if jobs <= 1 {
        return crate::explore_judging(program, options, progress, fails);
    }
    with_workers(program, jobs, options, |pooled| {
        crate::explore_judging(pooled, options, progress, fails)
    })
}

/// How many threads a search with `options` runs on: [`ExploreOptions::jobs`], at most one
/// per core, and one for a bounded-preemption search.
///
/// More threads than cores only take turns on them: every thread the search waits for may be
/// off its core for a whole time slice (measured on 2 cores, with the jobs bench: 4 jobs were
/// 4–8% slower than 2). The bound prunes steps path by path, and the search does not even take
/// a pruned one (a step of real code can cost a whole execution); the table keeps steps state
/// by state, so workers would take every thread's step of every state they meet, most of which
/// the bound never opens. Measured on concurrent-queue's loom test with
/// `LOOM_MAX_PREEMPTIONS=2`: 9 times the steps, 4.6 times the time on two cores.
fn jobs_for(options: &ExploreOptions) -> usize {
    match options.max_preemptions {
        Some(_) => 1,
        None => options.jobs.min(cores()),
    }
}

/// The cores this process may run on, read once.
pub(crate) fn cores() -> usize {
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, usize::from))
}

/// [`crate::explore()`] with [`ExploreOptions::jobs`] threads taking steps.
pub fn explore<P: Parallel>(program: &P, options: &ExploreOptions) -> Result<Tree, Fault> {
    explore_judging(program, options, &mut (), &mut |_| false)
}

/// [`crate::search_failing`] with [`ExploreOptions::jobs`] threads taking steps: the same
/// first failing leaf, with the same run.
pub fn search_failing<P: Parallel>(
    program: &P,
    options: &ExploreOptions,
    fails: &mut dyn FnMut(&Leaf) -> bool,
) -> Result<Search, Fault> {
    let jobs = jobs_for(options);
    if jobs <= 1 {
        return crate::search_failing(program, options, fails);
    }
    with_workers(program, jobs, options, |pooled| {
        crate::search_failing(pooled, options, fails)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history_tree::HistoryTree;
    use crate::value::Value;
    use proptest::prelude::*;

    /// A step of `thread` that calls `op` (0 or 1) and, with `ret`, returns it, in the
    /// thread's operation `nth`; under weak memory (`clock`) its call has that clock.
    fn step(
        (thread, nth): (usize, usize),
        call: Option<i64>,
        ret: Option<i64>,
        clock: Option<Vec<u32>>,
    ) -> Arc<Event> {
        let mut event = Event::local(thread, String::new(), Default::default());
        event.op_index = nth;
        event.call = call.map(|op| Call::new(format!("op{op}"), vec![]));
        event.seen = clock.filter(|_| call.is_some()).map(Into::into);
        event.ret = ret.map(Value::Int);
        Arc::new(event)
    }

    /// Paths of up to six steps, each a call, a return or both, as threads make them: a thread
    /// that has called returns before it calls again (two calls of one thread with no return
    /// between would be a run of calls the digest may reorder and the canonical history not).
    /// With `clocked`, every call has a clock (of few values, so that paths share some).
    fn steps(clocked: bool) -> impl Strategy<Value = Vec<Arc<Event>>> {
        let one = (
            0..3usize,
            prop::option::of(0..2i64),
            prop::option::of(0..2i64),
            prop::collection::vec(0..2u32, 3),
        );
        prop::collection::vec(one, 0..7).prop_map(move |wanted| {
            let mut open = [false; 3];
            let mut nth = [0; 3];
            (wanted.into_iter())
                .map(|(t, call, ret, clock)| {
                    let call = call.filter(|_| !open[t]);
                    open[t] |= call.is_some();
                    let ret = ret.filter(|_| open[t]);
                    open[t] &= ret.is_none();
                    let step = step((t, nth[t]), call, ret, clocked.then_some(clock));
                    nth[t] += usize::from(ret.is_some());
                    step
                })
                .collect()
        })
    }

    /// Two paths, both with clocks or both without.
    fn two_paths() -> impl Strategy<Value = (Vec<Arc<Event>>, Vec<Arc<Event>>)> {
        any::<bool>().prop_flat_map(|clocked| (steps(clocked), steps(clocked)))
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        /// The digest tells two paths' histories apart exactly when the search's canonical
        /// histories do.
        #[test]
        fn digests_are_equal_exactly_when_canonical_histories_are((a, b) in two_paths()) {
            let mut tree = HistoryTree::new(History::new(), true);
            let mut id = |steps: &[Arc<Event>]| {
                steps.iter().fold(HistoryTree::ROOT, |h, s| tree.after(h, s))
            };
            let (ia, ib) = (id(&a), id(&b));
            let digest = |steps: &[Arc<Event>]| {
                steps.iter().fold(HistoryDigest::default(), |d, s| d.after(s))
            };
            prop_assert_eq!(ia == ib, digest(&a) == digest(&b));
        }
    }

    #[test]
    fn concurrent_calls_in_either_order_have_one_digest_and_a_return_between_splits_them() {
        let digest = |steps: &[Arc<Event>]| {
            steps
                .iter()
                .fold(HistoryDigest::default(), |d, s| d.after(s))
        };
        let (a, b, ret) = (
            step((0, 0), Some(0), None, None),
            step((1, 0), Some(1), None, None),
            step((2, 0), None, Some(0), None),
        );
        assert_eq!(
            digest(&[a.clone(), b.clone()]),
            digest(&[b.clone(), a.clone()])
        );
        assert_ne!(
            digest(&[a.clone(), ret.clone(), b.clone()]),
            digest(&[b, ret, a])
        );
    }
}

#[cfg(test)]
mod pool_tests {
    use super::*;

    /// A worker takes the newest states first (the search's nearest siblings), and what a
    /// worker puts back comes after every state the search fed.
    #[test]
    fn workers_take_the_newest_states_and_what_was_put_back_last() {
        let shared: Shared<u32> = Shared::new(2, &ExploreOptions::default());
        shared.feed((1..=10).map(Pooled));
        shared.put_back([Pooled(20), Pooled(21)].into_iter());
        let mut mine = Vec::new();
        assert!(shared.take(&mut mine));
        assert_eq!(
            mine,
            (3..=10).map(Pooled).collect::<Vec<_>>(),
            "the newest on top"
        );
        mine.clear();
        assert!(shared.take(&mut mine));
        assert_eq!(mine, [Pooled(20), Pooled(21), Pooled(1), Pooled(2)]);
        assert_eq!(shared.queued.load(Ordering::Relaxed), 0);
    }
}
