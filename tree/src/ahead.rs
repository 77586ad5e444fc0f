//! A reduced search on several cores: the search stays one, and workers take ahead the runs it
//! will come back for.
//!
//! The reduced search ([`crate::reduced`]) runs one execution at a time. When a race asks a
//! state of its run to try another thread (a *backtrack* point), the search knows it will ask
//! the program for that thread's step from that state once it is done with what follows the
//! state on its run; so too for the further ways of a step under weak memory. It tells them
//! here (`reduced::Lookahead::will_take`), and *workers* — threads with an instance of the
//! program of their own ([`Parallel::worker`]) — take them: each takes the step, then goes on
//! the way the search goes on from a new state (the thread that moved first, then the others
//! in order, the first that can move), storing every step it takes, in the order the search
//! asks for them, until the run ends. When the search comes back and asks for the step, the worker's
//! steps answer it, one after the other, as long as the search asks for what the worker took;
//! at the first other question the rest of that run is dropped, and the search asks the
//! program itself, as it does for every step nobody took for it.
//!
//! Every answer is the program's own (the instances agree: from the same state, the same
//! step), so the search takes the runs it takes alone, in the same order, and builds the same
//! tree, node for node, with any number of workers. Which answers came from a worker only
//! changes who spent the time.
//!
//! Workers take the *shallowest* backtrack point first: the search, depth-first, comes back to
//! the deepest first and takes those itself (its own execution is nearest them), and reaches
//! the shallow ones last, by when a worker has had the most time. Should the search come to a
//! step a worker is taking right now, it waits for it (spinning a moment, then asleep).
//!
//! A worker's run goes on past where the search may end it (a read of an older store that the
//! search leaves to another run, a thread asleep in a sleep set, which the worker does not
//! know): then the rest of it is dropped. It stops by itself at a step back onto its own part
//! of the run and at a quiet turn of a retry loop, where the search ends runs most often.
//! Ending it at every read of an older store too wasted nothing, and was slower: the search
//! then took the steps after such a read itself, and its own execution was never there, so
//! each began by running the schedule again from the start (concurrent-queue's `spsc` loom
//! test: 0.60 s against 0.44 s on two cores).
//!
//! A worker tells the search's states apart from others that compare equal by
//! [`Parallel::interchangeable`]: the search may meet two equal states whose steps differ in
//! what a reduced search's identity leaves out (a state's fingerprint there takes in only what
//! a step back onto its own path needs), and a run taken ahead from one must not answer for
//! the other.

use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::hash::{BuildHasher, Hash};
use std::panic::AssertUnwindSafe;
use std::sync::{Condvar, Mutex, MutexGuard};

use crate::explore::ExploreOptions;
use crate::history::{Call, History, ThreadId};
use crate::leaf::Leaf;
use crate::parallel::{cores, join_workers, Parallel};
use crate::program::{Fault, Program, QuietTurn, Readiness, Step, StoreAccess, Wait};
use crate::reduced::{self, Judging, Lookahead, Reduction};

/// The most steps a worker takes on one run: the search may stop following it anywhere (a
/// step back onto its path, a turn of a retry loop it skips), and a spin with nothing to stop
/// it would otherwise go on to the step bound.
const MOST_STEPS_AHEAD: usize = 512;

/// How many times the search looks again at a step a worker is taking before it sleeps until
/// the worker is done, and how long it spins between two looks, in spin-loop hints.
const LOOKS_BEFORE_SLEEP: u32 = 64;
const SPINS_PER_LOOK: u32 = 64;

/// How long a worker without a request spins before it sleeps, in spin-loop hints.
const SPINS_BEFORE_SLEEP: u32 = 1 << 12;

/// [`reduced::search`] with [`ExploreOptions::jobs`] threads (at most one per core): the
/// search and `jobs - 1` workers taking steps ahead of it (see the [module docs](self)). The
/// same reduction as on one thread.
pub fn reduced_search<P: Parallel>(
    program: &P,
    options: &ExploreOptions,
    judging: Judging,
    fails: &mut dyn FnMut(&Leaf) -> bool,
) -> Result<Reduction, Fault> {
    let workers = options.jobs.min(cores()).saturating_sub(1);
    search_with_workers(program, workers, options, judging, fails)
}

/// [`reduced::search`] with `workers` workers taking steps ahead of it, however many cores
/// there are (none: the search alone).
pub fn search_with_workers<P: Parallel>(
    program: &P,
    workers: usize,
    options: &ExploreOptions,
    judging: Judging,
    fails: &mut dyn FnMut(&Leaf) -> bool,
) -> Result<Reduction, Fault> {
    if workers == 0 || program.threads() > reduced::MAX_THREADS {
        return reduced::search(program, options, judging, fails);
    }
    let board: Board<P::State> = Board::new(judging);
    let recipe = program.recipe();
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..workers)
            .map(|_| scope.spawn(|| work::<P>(&board, &recipe)))
            .collect();
        let ahead = Ahead {
            program,
            board: &board,
            following: RefCell::new(None),
            told: RefCell::new(HashMap::new()),
        };
        // The workers stop however the search ends: a search that panics must not leave them
        // waiting for requests, and the scope waiting for them.
        let stopping = Stopping(&board);
        let result = reduced::search_with(&ahead, options, judging, fails, Some(&ahead));
        drop(stopping);
        join_workers(program, handles);
        result
    })
}

/// A step the search will ask for: `thread`'s step `way` from `from`, at `depth` on its run.
struct Request<S> {
    key: Key,
    from: S,
    thread: ThreadId,
    way: u32,
    depth: usize,
}

/// What the search asks a step by: its state's hash, the thread and the way.
type Key = (u64, ThreadId, u32);

/// A step taken ahead, with what it was asked for.
struct Answer<S> {
    from: S,
    thread: ThreadId,
    way: u32,
    step: Step<S>,
}

/// A run a worker takes ahead, from a request on.
struct Run<S> {
    /// The request it started from.
    key: Key,
    /// The steps taken and not yet asked for, in the order the search asks for them.
    answers: VecDeque<Answer<S>>,
    /// The step the worker is taking now, if it is taking one.
    taking: Option<(S, ThreadId, u32)>,
}

/// What the search and the workers share.
struct Board<S> {
    /// What the search's leaves are judged on, which decides where it ends a run.
    judging: Judging,
    inner: Mutex<Inner<S>>,
    /// Signalled when a request is posted, a run gets an answer or ends, or the workers must
    /// stop; only when someone waits (`Inner::waiting`): a signal nobody waits for still
    /// costs a system call.
    changed: Condvar,
}

/// The board's state, behind its lock.
struct Inner<S> {
    /// Steps the search will ask for that nobody has started.
    requests: Requests<S>,
    /// Runs started from a request, which the search has not come back for yet, or follows.
    runs: HashMap<u64, Run<S>>,
    /// The runs by the key of the request they started from.
    runs_by_key: HashMap<Key, Vec<u64>>,
    /// The next run's number.
    next_id: u64,
    /// Threads asleep on `changed`.
    waiting: usize,
    /// Whether the workers must stop: the search has ended (or a worker met a bug).
    stop: bool,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic while the board is held is a bug that fails the search anyway: see it there.
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

impl<S: Clone + Hash> Board<S> {
    fn new(judging: Judging) -> Board<S> {
        Board {
            judging,
            inner: Mutex::new(Inner {
                requests: Requests::default(),
                runs: HashMap::new(),
                runs_by_key: HashMap::new(),
                next_id: 0,
                waiting: 0,
                stop: false,
            }),
            changed: Condvar::new(),
        }
    }

    /// The key of `thread`'s step `way` from `state`.
    fn key(state: &S, thread: ThreadId, way: u32) -> Key {
        let hash = foldhash::fast::FixedState::with_seed(0x6168_6561).hash_one(state);
        (hash, thread, way)
    }

    /// Waits on `changed`, counted as waiting.
    fn wait<'a>(&self, mut inner: MutexGuard<'a, Inner<S>>) -> MutexGuard<'a, Inner<S>> {
        inner.waiting += 1;
        let mut inner = self.changed.wait(inner).unwrap_or_else(|e| e.into_inner());
        inner.waiting -= 1;
        inner
    }

    /// Wakes whoever waits on `changed`.
    fn wake(&self, inner: &Inner<S>) {
        if inner.waiting > 0 {
            self.changed.notify_all();
        }
    }

    /// Tells the workers to stop, waking those asleep.
    fn stop(&self) {
        let mut inner = lock(&self.inner);
        inner.stop = true;
        self.changed.notify_all();
    }
}

impl<S> Inner<S> {
    /// Drops run `id`, which the search will not follow further: its worker stops at its next
    /// answer.
    fn drop_run(&mut self, id: u64) {
        if let Some(run) = self.runs.remove(&id) {
            remove_keyed(&mut self.runs_by_key, run.key, |&other| other == id);
        }
    }
}

/// Removes the first value of `key` in `map` that `which` picks; whether there was one.
fn remove_keyed<V>(map: &mut HashMap<Key, Vec<V>>, key: Key, which: impl Fn(&V) -> bool) -> bool {
    let Some(values) = map.get_mut(&key) else {
        return false;
    };
    let Some(at) = values.iter().position(which) else {
        return false;
    };
    values.swap_remove(at);
    if values.is_empty() {
        map.remove(&key);
    }
    true
}

/// The requests nobody has started: the shallowest first for a worker, any by its key for the
/// search (both without a look at every request: a search may have thousands pending).
struct Requests<S> {
    by_depth: BTreeMap<(usize, u64), Request<S>>,
    by_key: HashMap<Key, Vec<(usize, u64)>>,
    /// The next request's number, which orders requests of one depth.
    next: u64,
}

impl<S> Default for Requests<S> {
    fn default() -> Self {
        Requests {
            by_depth: BTreeMap::new(),
            by_key: HashMap::new(),
            next: 0,
        }
    }
}

impl<S> Requests<S> {
    fn push(&mut self, request: Request<S>) {
        let place = (request.depth, self.next);
        self.next += 1;
        self.by_key.entry(request.key).or_default().push(place);
        self.by_depth.insert(place, request);
    }

    fn is_empty(&self) -> bool {
        self.by_depth.is_empty()
    }

    /// The shallowest request, the oldest of its depth, taken off.
    fn shallowest(&mut self) -> Option<Request<S>> {
        let (place, request) = self.by_depth.pop_first()?;
        remove_keyed(&mut self.by_key, request.key, |&p| p == place);
        Some(request)
    }

    /// Takes off a request of `key` that `is` picks; whether there was one.
    fn take(&mut self, key: Key, is: impl Fn(&Request<S>) -> bool) -> bool {
        let by_depth = &self.by_depth;
        let Some(places) = self.by_key.get(&key) else {
            return false;
        };
        let Some(&place) = places.iter().find(|p| by_depth.get(p).is_some_and(&is)) else {
            return false;
        };
        self.by_depth.remove(&place);
        remove_keyed(&mut self.by_key, key, |&p| p == place)
    }
}

/// Stops the workers when dropped.
struct Stopping<'a, S: Clone + Hash>(&'a Board<S>);

impl<S: Clone + Hash> Drop for Stopping<'_, S> {
    fn drop(&mut self) {
        self.0.stop();
    }
}

/// The program as the search sees it: every step asked is answered from a run taken ahead
/// when one has it, by the program otherwise.
struct Ahead<'a, P: Parallel> {
    program: &'a P,
    board: &'a Board<P::State>,
    /// The run whose answers the search is taking, one after the other.
    following: RefCell<Option<u64>>,
    /// The keys of the steps the search told it will ask for and has not asked for yet, each
    /// with how many: most steps the search asks for are none of them, which this tells
    /// without taking the board's lock.
    told: RefCell<HashMap<Key, u32>>,
}

impl<P: Parallel> Ahead<'_, P> {
    /// The answer a worker took for `thread`'s step `way` from `state`, if one did (waiting
    /// for it if it is taking it now).
    fn answer(&self, state: &P::State, thread: ThreadId, way: u32) -> Option<Step<P::State>> {
        let board = self.board;
        let mut following = self.following.borrow_mut();
        // Hashed only where it is looked up: a step the followed run answers needs no key.
        let key = || Board::<P::State>::key(state, thread, way);
        if following.is_none() && !self.told.borrow().contains_key(&key()) {
            return None;
        }
        let mut inner = lock(&board.inner);
        let is = |from: &P::State, t: ThreadId, w: u32| {
            t == thread && w == way && P::interchangeable(from, state)
        };
        let mut looks = LOOKS_BEFORE_SLEEP;
        loop {
            if let Some(id) = *following {
                let Some(run) = inner.runs.get_mut(&id) else {
                    *following = None;
                    continue;
                };
                if let Some(next) = run.answers.front() {
                    if is(&next.from, next.thread, next.way) {
                        let answer = run.answers.pop_front().expect("looked at");
                        if run.answers.is_empty() && run.taking.is_none() {
                            inner.drop_run(id);
                            *following = None;
                        }
                        return Some(answer.step);
                    }
                } else if run.taking.as_ref().is_some_and(|(f, t, w)| is(f, *t, *w)) {
                    // The worker is about done, as a rule: a moment's spin costs less than a
                    // sleep and a wake.
                    if looks > 0 {
                        looks -= 1;
                        drop(inner);
                        for _ in 0..SPINS_PER_LOOK {
                            std::hint::spin_loop();
                        }
                        inner = lock(&board.inner);
                    } else {
                        inner = board.wait(inner);
                    }
                    continue;
                }
                // The search goes another way than the run: the rest of it is of no use.
                inner.drop_run(id);
                *following = None;
            }
            // Asked for now, whoever answers: the key is told no more.
            let key = key();
            let mut told = self.told.borrow_mut();
            match told.get_mut(&key) {
                None => return None,
                Some(1) => {
                    told.remove(&key);
                }
                Some(count) => *count -= 1,
            }
            drop(told);
            let started = (inner.runs_by_key.get(&key).into_iter().flatten()).find(|id| {
                let run = &inner.runs[id];
                run.answers.front().map_or_else(
                    || run.taking.as_ref().is_some_and(|(f, t, w)| is(f, *t, *w)),
                    |first| is(&first.from, first.thread, first.way),
                )
            });
            if let Some(&id) = started {
                *following = Some(id);
                continue;
            }
            // Asked for before a worker came to it: the search takes it itself.
            inner.requests.take(key, |r| is(&r.from, r.thread, r.way));
            return None;
        }
    }
}

impl<P: Parallel> Lookahead<P::State> for Ahead<'_, P> {
    fn will_take(&self, state: &P::State, thread: ThreadId, way: u32, depth: usize) {
        let key = Board::<P::State>::key(state, thread, way);
        *self.told.borrow_mut().entry(key).or_insert(0) += 1;
        let mut inner = lock(&self.board.inner);
        inner.requests.push(Request {
            key,
            from: state.clone(),
            thread,
            way,
            depth,
        });
        self.board.wake(&inner);
    }
}

impl<P: Parallel> Program for Ahead<'_, P> {
    type State = P::State;

    fn threads(&self) -> usize {
        self.program.threads()
    }

    fn initial_state(&self) -> Result<(P::State, History), Fault> {
        self.program.initial_state()
    }

    fn step(&self, state: &P::State, thread: ThreadId) -> Step<P::State> {
        match self.answer(state, thread, 0) {
            Some(step) => step,
            None => self.program.step(state, thread),
        }
    }

    fn step_way(&self, state: &P::State, thread: ThreadId, way: u32) -> Step<P::State> {
        match self.answer(state, thread, way) {
            Some(step) => step,
            None => self.program.step_way(state, thread, way),
        }
    }

    fn finish(&self, state: &P::State) -> Result<History, Fault> {
        self.program.finish(state)
    }

    fn blocked_calls(&self, state: &P::State) -> Vec<(ThreadId, Call)> {
        self.program.blocked_calls(state)
    }

    fn goes_on_from_last_step(&self) -> bool {
        self.program.goes_on_from_last_step()
    }

    fn retire(&self, state: &mut P::State) {
        self.program.retire(state);
    }

    fn readiness(&self, state: &P::State, thread: ThreadId) -> Readiness {
        self.program.readiness(state, thread)
    }

    fn why_blocked(&self, state: &P::State, thread: ThreadId) -> Option<Wait> {
        self.program.why_blocked(state, thread)
    }

    fn turn_ended(&self, state: &P::State) -> Option<QuietTurn> {
        self.program.turn_ended(state)
    }

    fn store_access(&self, state: &P::State) -> StoreAccess {
        self.program.store_access(state)
    }
}

/// A worker: takes the shallowest request, and the run from it.
fn work<P: Parallel>(board: &Board<P::State>, recipe: &P::Recipe) -> P::Learned {
    let program = P::worker(recipe);
    while let Some((id, request)) = next_request(board) {
        let taken =
            std::panic::catch_unwind(AssertUnwindSafe(|| take_run(board, &program, id, request)));
        match taken {
            Ok(true) => {}
            Ok(false) => break,
            Err(panic) => {
                // A bug (the user's panics are the program's faults): the search must not
                // wait for this run's next answer forever.
                end_run(board, id);
                board.stop();
                std::panic::resume_unwind(panic);
            }
        }
    }
    program.learned()
}

/// The shallowest request, started as a run of its own; `None` once the workers must stop.
fn next_request<S: Clone + Hash>(board: &Board<S>) -> Option<(u64, Request<S>)> {
    let mut inner = lock(&board.inner);
    loop {
        if inner.stop {
            return None;
        }
        if let Some(request) = inner.requests.shallowest() {
            let id = inner.next_id;
            inner.next_id += 1;
            inner.runs_by_key.entry(request.key).or_default().push(id);
            inner.runs.insert(
                id,
                Run {
                    key: request.key,
                    answers: VecDeque::new(),
                    taking: Some((request.from.clone(), request.thread, request.way)),
                },
            );
            return Some((id, request));
        }
        // The search posts requests as it goes: a moment's spin costs less than a sleep and
        // the system call that wakes it.
        drop(inner);
        for _ in 0..SPINS_BEFORE_SLEEP {
            std::hint::spin_loop();
        }
        inner = lock(&board.inner);
        if inner.requests.is_empty() && !inner.stop {
            inner = board.wait(inner);
        }
    }
}

/// A question the search asks: `thread`'s step `way` from a state.
type Question<S> = (S, ThreadId, u32);

/// Takes the run from `request` (run `id`), step by step, as the search would go on along it;
/// `false` when the worker must stop (its program halted).
fn take_run<P: Parallel>(
    board: &Board<P::State>,
    program: &P,
    id: u64,
    request: Request<P::State>,
) -> bool {
    // The run's states, by hash: the search ends a run at a step back onto its path (a spin
    // that saw nothing new), and so does the worker, on the part of the path it knows.
    let mut on_run: HashMap<u64, Vec<P::State>> = HashMap::new();
    let hash = |state: &P::State| foldhash::fast::FixedState::default().hash_one(state);
    on_run
        .entry(hash(&request.from))
        .or_default()
        .push(request.from.clone());
    let mut question = (request.from, request.thread, request.way);
    // The threads the search asks next at the same state, should this one's step not move:
    // it asks every thread that can move, the one that moved first, until one's step moves.
    let mut in_turn: VecDeque<ThreadId> = VecDeque::new();
    let mut asking_in_turn = false;
    for _ in 0..MOST_STEPS_AHEAD {
        let (from, thread, way) = question;
        let Some(step) = take_step(board, program, id, &from, thread, way) else {
            return false;
        };
        let next = match &step {
            Step::Done | Step::Blocked if asking_in_turn => {
                in_turn.pop_front().map(|t| (from.clone(), t, 0))
            }
            // A turn of a retry loop that the search skips ends the run there, as a step back
            // onto the run does: where it goes on from is the search's call. (A read of
            // an older store than the latest, which the search may leave to another run, does
            // not: where the search goes on, this worker's execution is, and the search's is
            // not.)
            Step::Moved { state, .. }
                if !program
                    .turn_ended(state)
                    .is_some_and(|turn| reduced::skips(turn, board.judging))
                    && {
                        let seen = on_run.entry(hash(state)).or_default();
                        let back = seen.contains(state);
                        seen.push(state.clone());
                        !back
                    } =>
            {
                let order =
                    std::iter::once(thread).chain((0..program.threads()).filter(|&t| t != thread));
                in_turn = order
                    .filter(|&t| program.readiness(state, t) == Readiness::Ready)
                    .collect();
                asking_in_turn = true;
                in_turn.pop_front().map(|t| (state.clone(), t, 0))
            }
            _ => None,
        };
        let answer = Answer {
            from,
            thread,
            way,
            step,
        };
        if !answered(board, id, answer, next.clone()) {
            return true;
        }
        match next {
            Some(next) => question = next,
            None => return true,
        }
    }
    end_run(board, id);
    true
}

/// `thread`'s step `way` from `from`, on run `id`; `None` when the program halted (its last
/// step is then not its answer: the run ends, and the search takes that step itself).
fn take_step<P: Parallel>(
    board: &Board<P::State>,
    program: &P,
    id: u64,
    from: &P::State,
    thread: ThreadId,
    way: u32,
) -> Option<Step<P::State>> {
    let step = match way {
        0 => program.step(from, thread),
        _ => program.step_way(from, thread, way),
    };
    if program.halted() {
        end_run(board, id);
        return None;
    }
    Some(step)
}

/// Stores `answer` on run `id`, whose worker takes `next` now (or nothing: the run ends);
/// `false` when the search dropped the run, or the workers must stop.
fn answered<S: Clone + Hash>(
    board: &Board<S>,
    id: u64,
    answer: Answer<S>,
    next: Option<Question<S>>,
) -> bool {
    let mut inner = lock(&board.inner);
    if inner.stop {
        return false;
    }
    let Some(run) = inner.runs.get_mut(&id) else {
        return false;
    };
    run.answers.push_back(answer);
    run.taking = next;
    board.wake(&inner);
    true
}

/// Ends run `id` where it is: the answers stored stay for the search.
fn end_run<S: Clone + Hash>(board: &Board<S>, id: u64) {
    let mut inner = lock(&board.inner);
    if let Some(run) = inner.runs.get_mut(&id) {
        run.taking = None;
        if run.answers.is_empty() {
            inner.drop_run(id);
        }
    }
    board.wake(&inner);
}
