//! Threads the tested code spawns itself: `std::thread`'s API, each thread a lane of fgvt's
//! executions.
//!
//! Inside a test's execution (a [`model`](crate::model), or an object whose operation spawns a
//! thread), [`spawn`] does not start an OS thread: the new thread runs on fgvt's engine beside
//! the others, every one of its accesses a step the explorer interleaves, and
//! [`JoinHandle::join`] is a step that waits until it has returned and then happens after
//! everything it did. A panic in a spawned thread is the run's failure, as an assertion in the
//! model's own body is. Outside an execution (the object's serial runs, code built without
//! fgvt's runner) each function does what `std::thread`'s does.
//!
//! A test has room for a fixed number of threads, its [`Model::max_threads`](crate::Model::max_threads)
//! (crate::model::Model::max_threads); spawning more is the run's failure, which says so.
//!
//! ```
//! use fgvt_sync::atomic::{AtomicUsize, Ordering::{Acquire, Release}};
//! use std::sync::Arc;
//!
//! fgvt_sync::model(|| {
//!     let hits = Arc::new(AtomicUsize::new(0));
//!     let other = {
//!         let hits = Arc::clone(&hits);
//!         fgvt_sync::thread::spawn(move || hits.fetch_add(1, Release))
//!     };
//!     hits.fetch_add(1, Release);
//!     let before = other.join().unwrap();
//!     assert!(before <= 1);
//!     assert_eq!(hits.load(Acquire), 2);
//! });
//! ```

use std::cell::RefCell;
use std::fmt;
use std::panic::Location;
use std::sync::{Arc, Mutex as StdMutex};

use fgvt_tree::{Call, Value};

use crate::atomic::{AtomicBool, Ordering};
use crate::engine::{self, TaskId};
use crate::runtime::spawned::{self, Spawned};
use crate::runtime::{self, guarded};

/// The operation a spawned thread runs, in histories and reports.
const SPAWNED_OP: &str = "spawned";

/// Spawns a thread running `f` (see the [module docs](self)), as `std::thread::spawn` does.
#[track_caller]
pub fn spawn<F, T>(f: F) -> JoinHandle<T>
where
    F: FnOnce() -> T + Send + 'static,
    T: Send + 'static,
{
    let at = Location::caller();
    match Builder::new().spawn_at(f, at) {
        Ok(handle) => handle,
        Err(e) => panic!("failed to spawn thread: {e}"),
    }
}

/// Thread settings, as `std::thread::Builder`: a name (shown by [`Thread::name`]); a stack
/// size, which threads on fgvt's engine do not use.
#[derive(Debug, Default)]
pub struct Builder {
    name: Option<String>,
    stack_size: Option<usize>,
}

impl Builder {
    /// Settings with no name and the default stack.
    pub fn new() -> Builder {
        Builder::default()
    }

    /// Names the thread.
    pub fn name(mut self, name: String) -> Builder {
        self.name = Some(name);
        self
    }

    /// The stack size of an OS thread spawned outside an execution; a thread on fgvt's
    /// engine has its own fixed stack.
    pub fn stack_size(mut self, size: usize) -> Builder {
        self.stack_size = Some(size);
        self
    }

    /// Spawns a thread running `f` with these settings.
    #[track_caller]
    pub fn spawn<F, T>(self, f: F) -> std::io::Result<JoinHandle<T>>
    where
        F: FnOnce() -> T + Send + 'static,
        T: Send + 'static,
    {
        self.spawn_at(f, Location::caller())
    }

    /// Spawns the thread whose operation in histories is `op`: a model's body.
    #[track_caller]
    pub(crate) fn spawn_named<F, T>(self, op: &'static str, f: F) -> JoinHandle<T>
    where
        F: FnOnce() -> T + Send + 'static,
        T: Send + 'static,
    {
        self.spawn_op(op, f, Location::caller())
            .unwrap_or_else(|e| panic!("failed to spawn thread: {e}"))
    }

    fn spawn_at<F, T>(self, f: F, at: &'static Location<'static>) -> std::io::Result<JoinHandle<T>>
    where
        F: FnOnce() -> T + Send + 'static,
        T: Send + 'static,
    {
        self.spawn_op(SPAWNED_OP, f, at)
    }

    fn spawn_op<F, T>(
        self,
        op: &'static str,
        f: F,
        at: &'static Location<'static>,
    ) -> std::io::Result<JoinHandle<T>>
    where
        F: FnOnce() -> T + Send + 'static,
        T: Send + 'static,
    {
        let name = self.name.clone();
        // Made by the spawner before the spawning hands over, so that its making happens
        // before every thread that parks or unparks with it (the new thread, and whoever the
        // spawner gives the handle to).
        let token = Arc::new(AtomicBool::new(false).named("park token"));
        let spawned = match spawned::spawn_lane(at) {
            None => return self.spawn_os(f),
            Some(Ok(spawned)) => spawned,
            Some(Err(e)) => {
                // The run fails here, saying why; the spawner's thread stops with it.
                runtime::fault(e.to_string(), Some(location_of(at)));
                runtime::cancel()
            }
        };
        Tokens::put(spawned.thread, &token);
        let slot: Arc<StdMutex<Option<T>>> = Arc::default();
        let task = {
            let slot = Arc::clone(&slot);
            engine::spawn(move || run_spawned(spawned, op, f, &slot))
        };
        spawned::started(spawned, task);
        Ok(JoinHandle {
            inner: Inner::Lane {
                spawned,
                task,
                slot,
            },
            thread: Thread {
                id: ThreadId(Id::Lane(spawned.thread)),
                name,
                unparker: Unparker::Token(token),
            },
        })
    }

    /// An OS thread, outside any execution.
    fn spawn_os<F, T>(self, f: F) -> std::io::Result<JoinHandle<T>>
    where
        F: FnOnce() -> T + Send + 'static,
        T: Send + 'static,
    {
        let mut builder = std::thread::Builder::new();
        if let Some(name) = self.name.clone() {
            builder = builder.name(name);
        }
        if let Some(size) = self.stack_size {
            builder = builder.stack_size(size);
        }
        let handle = builder.spawn(f)?;
        let thread = Thread {
            id: ThreadId(Id::Os(handle.thread().id())),
            name: self.name,
            unparker: Unparker::Os(handle.thread().clone()),
        };
        Ok(JoinHandle {
            inner: Inner::Os(handle),
            thread,
        })
    }
}

/// A spawned thread's body on its lane: `f`, its result kept for `join`, then its end.
fn run_spawned<F, T>(spawned: Spawned, op: &str, f: F, slot: &StdMutex<Option<T>>)
where
    F: FnOnce() -> T,
{
    spawned::enter(spawned, &Call::new(op, Vec::new()));
    // `f` and what it captured are dropped inside: a destructor's accesses are the thread's.
    let Some(result) = guarded(f) else {
        return;
    };
    *slot.lock().unwrap_or_else(|e| e.into_inner()) = Some(result);
    if runtime::ended() {
        return;
    }
    runtime::end_op(&Value::Unit);
    spawned::finish(spawned);
}

/// Where `at` is, as a fault's location.
fn location_of(at: &Location<'_>) -> (String, u32, u32) {
    (at.file().to_string(), at.line(), at.column())
}

/// An owned permission to wait for a spawned thread and take what it returned, as
/// `std::thread::JoinHandle`.
pub struct JoinHandle<T> {
    inner: Inner<T>,
    thread: Thread,
}

enum Inner<T> {
    /// An OS thread, spawned outside any execution.
    Os(std::thread::JoinHandle<T>),
    /// A thread on a lane of the execution.
    Lane {
        spawned: Spawned,
        task: TaskId,
        slot: Arc<StdMutex<Option<T>>>,
    },
}

impl<T> JoinHandle<T> {
    /// Waits for the thread to return: what it returned. Inside an execution this is a step
    /// that waits while the thread runs; a thread that panicked has failed the run already,
    /// so the joiner never sees its `Err`.
    #[track_caller]
    pub fn join(self) -> std::thread::Result<T> {
        match self.inner {
            Inner::Os(handle) => handle.join(),
            Inner::Lane {
                spawned,
                task,
                slot,
            } => {
                if runtime::in_thread() {
                    spawned::join(spawned, Location::caller());
                } else {
                    engine::join(task);
                }
                let result = slot.lock().unwrap_or_else(|e| e.into_inner()).take();
                match result {
                    Some(value) => Ok(value),
                    // The thread panicked or its execution ended: the run is over.
                    None => Err(Box::new("the thread did not return: its run has ended")),
                }
            }
        }
    }

    /// The thread's handle.
    pub fn thread(&self) -> &Thread {
        &self.thread
    }

    /// Whether the thread has returned (no step: what it says may change at the next one).
    pub fn is_finished(&self) -> bool {
        match &self.inner {
            Inner::Os(handle) => handle.is_finished(),
            Inner::Lane { spawned, .. } => spawned::finished(*spawned),
        }
    }
}

impl<T> fmt::Debug for JoinHandle<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("JoinHandle")
            .field("thread", &self.thread)
            .finish_non_exhaustive()
    }
}

/// A thread, as `std::thread::Thread`: its id and name, and the way to unpark it.
#[derive(Clone, Debug)]
pub struct Thread {
    id: ThreadId,
    name: Option<String>,
    unparker: Unparker,
}

/// How a [`Thread`] is unparked.
#[derive(Clone, Debug)]
enum Unparker {
    /// An OS thread's own.
    Os(std::thread::Thread),
    /// A thread on a lane: the token its [`park`] waits for.
    Token(Arc<AtomicBool>),
}

thread_local! {
    /// The park tokens of the threads of the execution under way on this OS thread, by lane
    /// (a new execution's number empties it).
    static TOKENS: RefCell<(u64, Vec<Option<Arc<AtomicBool>>>)> =
        const { RefCell::new((u64::MAX, Vec::new())) };
}

/// The park tokens of the execution under way.
struct Tokens;

impl Tokens {
    /// Keeps `token` as the lane `thread`'s.
    fn put(thread: usize, token: &Arc<AtomicBool>) {
        let Some(run) = runtime::execution() else {
            return;
        };
        TOKENS.with(|tokens| {
            let mut tokens = tokens.borrow_mut();
            if tokens.0 != run {
                *tokens = (run, Vec::new());
            }
            if tokens.1.len() <= thread {
                tokens.1.resize(thread + 1, None);
            }
            tokens.1[thread] = Some(Arc::clone(token));
        });
    }

    /// The lane `thread`'s token, in the execution under way.
    fn get(thread: usize) -> Option<Arc<AtomicBool>> {
        let run = runtime::execution()?;
        TOKENS.with(|tokens| {
            let tokens = tokens.borrow();
            (tokens.0 == run).then(|| tokens.1.get(thread).cloned().flatten())?
        })
    }
}

impl Thread {
    /// The thread's id.
    pub fn id(&self) -> ThreadId {
        self.id
    }

    /// The thread's name, if it was given one.
    pub fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }

    /// Makes the thread's token available: its next [`park`] (or the one it is in) returns,
    /// as `std::thread::Thread::unpark`. Inside an execution, a `Release` store of the token,
    /// one step.
    #[track_caller]
    pub fn unpark(&self) {
        match &self.unparker {
            Unparker::Os(thread) => thread.unpark(),
            Unparker::Token(token) => token.store(true, Ordering::Release),
        }
    }
}

/// Waits until the calling thread's token is available, and takes it, as `std::thread::park`
/// (with no spurious wake-up): inside an execution, a waiting loop on the token (one state to
/// fgvt) that an [`unpark`](Thread::unpark) ends, and that happens after it.
#[track_caller]
pub fn park() {
    let Some(lane) = runtime::current_lane() else {
        std::thread::park();
        return;
    };
    let Some(token) = Tokens::get(lane) else {
        // A test's own thread (not spawned): nothing could unpark it.
        panic!(
            "`park` in T{lane}, which no `fgvt_sync::thread::spawn` made: nothing can unpark it"
        );
    };
    while !token.load(Ordering::Acquire) {
        crate::hint::spin_loop();
    }
    // An unpark between the load and this store is one the token had already: tokens do not
    // add up, so nothing is lost.
    token.store(false, Ordering::Relaxed);
}

/// A thread's identity, as `std::thread::ThreadId`: unique among the threads of one
/// execution (inside one, a thread's lane).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ThreadId(Id);

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Id {
    Lane(usize),
    Os(std::thread::ThreadId),
}

/// The calling thread: inside an execution, its lane (T0 is a model's own body).
pub fn current() -> Thread {
    match runtime::current_lane() {
        Some(lane) => Thread {
            id: ThreadId(Id::Lane(lane)),
            name: (lane == 0).then(|| "main".to_string()),
            unparker: match Tokens::get(lane) {
                Some(token) => Unparker::Token(token),
                None => Unparker::Os(std::thread::current()),
            },
        },
        None => {
            let os = std::thread::current();
            Thread {
                id: ThreadId(Id::Os(os.id())),
                name: os.name().map(str::to_string),
                unparker: Unparker::Os(os),
            }
        }
    }
}

/// Gives the other threads a turn, as `std::thread::yield_now`: inside an execution, marks an
/// iteration of a waiting loop ([`hint::yield_now`](crate::hint::yield_now)).
pub fn yield_now() {
    crate::hint::yield_now();
}

/// Where the caller runs: the number of the execution (unique on this OS thread; one that
/// pauses and goes on keeps it) and the calling thread's lane in it, or `None` outside any
/// execution's threads. What keeps state per execution and thread (the `fgvt-loom` crate's
/// `thread_local!` and `lazy_static!`) is keyed by it.
pub fn execution_and_lane() -> Option<(u64, usize)> {
    Some((runtime::execution()?, runtime::current_lane()?))
}
