//! Hash-consed parts of test states: each distinct thread state, global valuation, heap and
//! lock table is stored once, and a state is a short row of their numbers.
//!
//! This is SPIN's "collapse" compression. The explorer stores hundreds of thousands of states
//! and looks one up for every step; most steps change one thread and at most one part of
//! memory, so a state that names its parts by number is hashed and compared as a few words,
//! and a part that many states share (a thread's state, the globals) is stored once instead
//! of once per path that built it.
//!
//! Stored parts are never changed: the interpreter writes through `Arc::make_mut`, and the
//! table's own reference makes every write copy. So a part of a step's memory that is still
//! the stored one (the same `Arc`) was not written, and keeps its number without being hashed.

use std::hash::Hash;
use std::sync::Arc;

use fgvt_tree::interner::Interner;

use super::interp::{Frame, LockState, Memory, Obj};
use super::value::Val;
use super::weak::WeakState;

/// The lock table with, under weak memory, the execution graph: the part whose number is the
/// row's `LOCKS` word. A step's memo key holds that word, so a step under weak memory is
/// replayed only on states with the same graph's future (see `weak.rs`).
type LockPart = (Arc<Vec<LockState>>, Option<Arc<WeakState>>);

/// One thread's progress: the operation it is at and, in the middle of one, its frames
/// (paused just before a shared instruction). No frames means "before operation `op`".
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct ThreadState {
    pub op: u32,
    pub frames: Vec<Frame>,
}

/// Where each part's number sits in a state's row; the threads follow, in order.
const GLOBALS: usize = 0;
const HEAP: usize = 1;
const LOCKS: usize = 2;
const THREADS: usize = 3;

/// Words in a row: memory's three parts and five threads.
const WORDS: usize = 8;

/// The most threads a row holds itself.
const INLINE_THREADS: usize = WORDS - THREADS;

/// A state as a fixed row of part numbers: globals, heap, locks, then one per thread.
///
/// Eight words, inline and `Copy`: the explorer stores one per distinct state, and a row that
/// owns no allocation is stored, compared and freed as plain words. A test of up to
/// [`INLINE_THREADS`] threads fits (unused words stay 0). In a wider one the row holds the
/// first threads but one, and its last word numbers the group of all the others, which
/// [`Parts`] interns (so only `Parts`, which knows the test's width, reads a row).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Row([u32; WORDS]);

impl Hash for Row {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        // Two numbers per word: the derived impl hashes the row as bytes, several times slower
        // on the explorer's hottest path.
        for pair in self.0.chunks_exact(2) {
            state.write_u64(u64::from(pair[0]) << 32 | u64::from(pair[1]));
        }
    }
}

/// What one thread's step from a state depends on: the thread, its state's number and the
/// numbers of memory's parts (see [`Parts::step_key`]).
///
/// Packed in words (the thread with its state's number, globals with heap, then locks): it is
/// built and compared once per step, and whole-word stores and loads keep that cheap.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct StepKey {
    thread_and_state: u64,
    globals_and_heap: u64,
    locks: u32,
}

impl StepKey {
    /// The thread that steps, and the number of its state.
    pub fn thread_and_state(&self) -> (usize, u32) {
        (
            (self.thread_and_state >> 32) as usize,
            self.thread_and_state as u32,
        )
    }
}

/// What one thread's step changed: the numbers of the thread's new state and of memory's parts
/// after it (see [`Parts::step_effect`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct StepEffect([u32; 4]);

/// Every part met so far.
pub(crate) struct Parts {
    /// Threads in the test: rows wider than [`INLINE_THREADS`] keep a group of them apart.
    width: usize,
    globals: Interner<Arc<Vec<Val>>>,
    heaps: Interner<Arc<Vec<Arc<Obj>>>>,
    locks: Interner<LockPart>,
    threads: Interner<Arc<ThreadState>>,
    /// Wide tests: the numbers of the threads a row does not hold, as groups.
    rests: Interner<Box<[u32]>>,
    /// A group being made, kept to reuse its allocation.
    scratch: Vec<u32>,
}

impl std::fmt::Debug for Parts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Parts")
            .field("globals", &self.globals.len())
            .field("heaps", &self.heaps.len())
            .field("locks", &self.locks.len())
            .field("threads", &self.threads.len())
            .field("rests", &self.rests.len())
            .finish()
    }
}

impl Parts {
    /// The parts of a test with `width` threads.
    pub fn new(width: usize) -> Parts {
        Parts {
            width,
            globals: Interner::new(),
            heaps: Interner::new(),
            locks: Interner::new(),
            threads: Interner::new(),
            rests: Interner::new(),
            scratch: Vec::new(),
        }
    }

    /// How many threads a row holds itself; the others are in the group its last word numbers.
    fn own(&self) -> usize {
        if self.width <= INLINE_THREADS {
            self.width
        } else {
            INLINE_THREADS - 1
        }
    }

    /// The number of `thread`'s state in `row`.
    fn thread_number(&self, row: &Row, thread: usize) -> u32 {
        let own = self.own();
        if thread < own {
            row.0[THREADS + thread]
        } else {
            self.rests.key(row.0[WORDS - 1])[thread - own]
        }
    }

    /// `row` with `thread`'s state numbered `number`.
    fn with_thread(&mut self, mut row: Row, thread: usize, number: u32) -> Row {
        let own = self.own();
        if thread < own {
            row.0[THREADS + thread] = number;
        } else {
            // Built in a kept buffer and looked up by reference: a group met before (a memoized
            // step replayed) costs no allocation.
            let scratch = &mut self.scratch;
            scratch.clear();
            scratch.extend_from_slice(self.rests.key(row.0[WORDS - 1]));
            scratch[thread - own] = number;
            let (group, _) = self
                .rests
                .intern_with(&scratch[..], || (scratch.as_slice().into(), ()));
            row.0[WORDS - 1] = group;
        }
        row
    }

    /// The row of a state with memory `mem` and these threads (as many as the test has).
    pub fn row(&mut self, mem: Memory, threads: impl IntoIterator<Item = ThreadState>) -> Row {
        let mut words = [0; WORDS];
        words[GLOBALS] = self.globals.intern(mem.globals, || ());
        words[HEAP] = self.heaps.intern(mem.heap, || ());
        words[LOCKS] = self.locks.intern((mem.locks, mem.weak), || ());
        let numbers: Vec<u32> = threads
            .into_iter()
            .map(|thread| self.threads.intern(Arc::new(thread), || ()))
            .collect();
        assert_eq!(
            numbers.len(),
            self.width,
            "a row has every thread of the test"
        );
        let own = self.own();
        words[THREADS..THREADS + own].copy_from_slice(&numbers[..own]);
        if own < self.width {
            words[WORDS - 1] = self.rests.intern(numbers[own..].into(), || ());
        }
        Row(words)
    }

    /// What a step of `thread` from `row` depends on: the thread, its state, and memory.
    pub fn step_key(&self, row: &Row, thread: usize) -> StepKey {
        let state = self.thread_number(row, thread);
        StepKey {
            thread_and_state: (thread as u64) << 32 | u64::from(state),
            globals_and_heap: u64::from(row.0[GLOBALS]) << 32 | u64::from(row.0[HEAP]),
            locks: row.0[LOCKS],
        }
    }

    /// What a step of `thread` that led to `row` changed: the thread's state and memory's
    /// parts after it.
    pub fn step_effect(&self, row: &Row, thread: usize) -> StepEffect {
        StepEffect([
            self.thread_number(row, thread),
            row.0[GLOBALS],
            row.0[HEAP],
            row.0[LOCKS],
        ])
    }

    /// `row` after a step of `thread` with `effect`.
    pub fn apply(&mut self, row: &Row, thread: usize, effect: StepEffect) -> Row {
        let [own, globals, heap, locks] = effect.0;
        let mut next = *row;
        next.0[GLOBALS] = globals;
        next.0[HEAP] = heap;
        next.0[LOCKS] = locks;
        self.with_thread(next, thread, own)
    }

    /// The row of `row` after `thread` moved to `next` and memory became `mem`, a memory made
    /// from `row`'s: the parts it did not write keep their numbers unhashed.
    pub fn after(&mut self, row: &Row, mem: Memory, thread: usize, next: ThreadState) -> Row {
        fn renumber<T: Hash + Eq>(parts: &mut Interner<Arc<T>>, number: u32, part: Arc<T>) -> u32 {
            if Arc::ptr_eq(parts.key(number), &part) {
                number
            } else {
                parts.intern(part, || ())
            }
        }
        let locks = {
            let (held, weak) = self.locks.key(row.0[LOCKS]);
            let same_weak = match (weak, &mem.weak) {
                (None, None) => true,
                (Some(a), Some(b)) => Arc::ptr_eq(a, b),
                _ => false,
            };
            if same_weak && Arc::ptr_eq(held, &mem.locks) {
                row.0[LOCKS]
            } else {
                self.locks.intern((mem.locks, mem.weak), || ())
            }
        };
        let effect = StepEffect([
            self.threads.intern(Arc::new(next), || ()),
            renumber(&mut self.globals, row.0[GLOBALS], mem.globals),
            renumber(&mut self.heaps, row.0[HEAP], mem.heap),
            locks,
        ]);
        self.apply(row, thread, effect)
    }

    /// The shared memory of `row` (cheap: three or four shared references).
    pub fn memory(&self, row: &Row) -> Memory {
        let (locks, weak) = self.locks.key(row.0[LOCKS]).clone();
        Memory {
            globals: self.globals.key(row.0[GLOBALS]).clone(),
            heap: self.heaps.key(row.0[HEAP]).clone(),
            locks,
            weak,
        }
    }

    /// `thread`'s state in `row`.
    pub fn thread(&self, row: &Row, thread: usize) -> &Arc<ThreadState> {
        self.threads.key(self.thread_number(row, thread))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn memory(globals: Vec<Val>) -> Memory {
        Memory {
            globals: Arc::new(globals),
            heap: Arc::new(Vec::new()),
            locks: Arc::new(vec![LockState::default()]),
            weak: None,
        }
    }

    fn at(op: u32) -> ThreadState {
        ThreadState {
            op,
            frames: Vec::new(),
        }
    }

    #[test]
    fn equal_states_built_apart_get_one_row_and_their_parts_back() {
        let mut parts = Parts::new(2);
        let a = parts.row(memory(vec![Val::Int(1)]), [at(0), at(1)]);
        let b = parts.row(memory(vec![Val::Int(1)]), [at(0), at(1)]);
        assert_eq!(a, b, "equal parts, equal rows");
        let c = parts.row(memory(vec![Val::Int(2)]), [at(0), at(1)]);
        assert_ne!(a, c);
        assert_eq!(*parts.memory(&c).globals, vec![Val::Int(2)]);
        assert_eq!(parts.thread(&a, 1).op, 1);
    }

    #[test]
    fn a_step_renumbers_only_what_changed() {
        let mut parts = Parts::new(2);
        let row = parts.row(memory(vec![Val::Int(1)]), [at(0), at(0)]);
        let mut mem = parts.memory(&row);
        Arc::make_mut(&mut mem.globals)[0] = Val::Int(7);
        let next = parts.after(&row, mem, 1, at(1));
        assert_eq!(*parts.memory(&next).globals, vec![Val::Int(7)]);
        assert_eq!(
            *parts.memory(&row).globals,
            vec![Val::Int(1)],
            "the stored part was copied, not written"
        );
        assert_eq!(parts.thread(&next, 0).op, 0);
        assert_eq!(parts.thread(&next, 1).op, 1);
        // Back to the first globals by another route: the first row again.
        let mut mem = parts.memory(&next);
        Arc::make_mut(&mut mem.globals)[0] = Val::Int(1);
        let back = parts.after(&next, mem, 1, at(0));
        assert_eq!(back, row);
    }

    #[test]
    fn a_wide_row_keeps_every_thread_and_is_one_row_by_any_route() {
        let width = INLINE_THREADS + 3;
        let mut parts = Parts::new(width);
        let start = parts.row(memory(vec![]), (0..width).map(|_| at(0)));
        // Every thread moves to op 1, in two different orders: the same state.
        let forward = (0..width).fold(start, |row, t| {
            let mem = parts.memory(&row);
            parts.after(&row, mem, t, at(1))
        });
        let backward = (0..width).rev().fold(start, |row, t| {
            let mem = parts.memory(&row);
            parts.after(&row, mem, t, at(1))
        });
        assert_eq!(forward, backward);
        for t in 0..width {
            assert_eq!(parts.thread(&start, t).op, 0);
            assert_eq!(parts.thread(&forward, t).op, 1, "thread {t}");
        }
        // A memoized step replays onto the row exactly what taking it did.
        let last = width - 1;
        let mem = parts.memory(&start);
        let moved = parts.after(&start, mem, last, at(1));
        let effect = parts.step_effect(&moved, last);
        assert_eq!(parts.apply(&start, last, effect), moved);
        assert_ne!(
            parts.step_key(&start, last),
            parts.step_key(&moved, last),
            "the step key sees a thread kept in the group"
        );
    }
}
