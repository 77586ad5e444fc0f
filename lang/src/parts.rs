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
use smallvec::SmallVec;

use super::interp::{Frame, LockState, Memory, Obj};
use super::value::Val;

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

/// A state as a row of part numbers: globals, heap, locks, then one per thread. Kept inline
/// up to five threads (tests are small), so storing a state allocates nothing of its own.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Row(SmallVec<[u32; THREADS + 5]>);

impl Clone for Row {
    fn clone(&self) -> Row {
        // `from_slice` copies the words at once; the derived `clone` copies one at a time, which
        // showed in profiles (a row is copied for every step).
        Row(SmallVec::from_slice(&self.0))
    }
}

impl Hash for Row {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        // Two numbers per word: the derived impl hashes the row as bytes, several times slower
        // on the explorer's hottest path.
        hash_words(&self.0, state);
    }
}

/// Hashes `numbers` (a row's length is fixed per program, so it is not hashed).
fn hash_words<H: std::hash::Hasher>(numbers: &[u32], state: &mut H) {
    let mut pairs = numbers.chunks_exact(2);
    for pair in &mut pairs {
        state.write_u64(u64::from(pair[0]) << 32 | u64::from(pair[1]));
    }
    if let [last] = pairs.remainder() {
        state.write_u32(*last);
    }
}

impl Row {
    /// The number of `thread`'s state.
    fn thread(&self, thread: usize) -> u32 {
        self.0[THREADS + thread]
    }

    /// How many threads the row has.
    pub fn threads(&self) -> usize {
        self.0.len() - THREADS
    }

    /// What a step of `thread` from this row depends on: the thread, its state, and memory.
    pub fn step_key(&self, thread: usize) -> StepKey {
        StepKey::new(
            thread as u32,
            self.thread(thread),
            self.0[GLOBALS],
            self.0[HEAP],
            self.0[LOCKS],
        )
    }

    /// What a step of `thread` that led to this row changed: the thread's state and memory's
    /// parts after it.
    pub fn step_effect(&self, thread: usize) -> StepEffect {
        StepEffect([
            self.thread(thread),
            self.0[GLOBALS],
            self.0[HEAP],
            self.0[LOCKS],
        ])
    }

    /// This row after a step of `thread` with `effect`.
    pub fn apply(&self, thread: usize, effect: StepEffect) -> Row {
        let mut next = self.clone();
        let [own, globals, heap, locks] = effect.0;
        next.0[THREADS + thread] = own;
        next.0[GLOBALS] = globals;
        next.0[HEAP] = heap;
        next.0[LOCKS] = locks;
        next
    }
}

/// What one thread's step from a state depends on: the thread, its state's number and the
/// numbers of memory's parts (see [`Row::step_key`]).
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
    fn new(thread: u32, state: u32, globals: u32, heap: u32, locks: u32) -> StepKey {
        StepKey {
            thread_and_state: u64::from(thread) << 32 | u64::from(state),
            globals_and_heap: u64::from(globals) << 32 | u64::from(heap),
            locks,
        }
    }
}

/// What one thread's step changed: the numbers of the thread's new state and of memory's parts
/// after it (see [`Row::step_effect`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct StepEffect([u32; 4]);

/// Every part met so far.
#[derive(Clone)]
pub(crate) struct Parts {
    globals: Interner<Arc<Vec<Val>>>,
    heaps: Interner<Arc<Vec<Arc<Obj>>>>,
    locks: Interner<Arc<Vec<LockState>>>,
    threads: Interner<Arc<ThreadState>>,
}

impl std::fmt::Debug for Parts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Parts")
            .field("globals", &self.globals.len())
            .field("heaps", &self.heaps.len())
            .field("locks", &self.locks.len())
            .field("threads", &self.threads.len())
            .finish()
    }
}

impl Parts {
    pub fn new() -> Parts {
        Parts {
            globals: Interner::new(),
            heaps: Interner::new(),
            locks: Interner::new(),
            threads: Interner::new(),
        }
    }

    /// The row of a state with memory `mem` and these threads.
    pub fn row(&mut self, mem: Memory, threads: impl IntoIterator<Item = ThreadState>) -> Row {
        let mut row = SmallVec::new();
        row.push(self.globals.intern(mem.globals, || ()));
        row.push(self.heaps.intern(mem.heap, || ()));
        row.push(self.locks.intern(mem.locks, || ()));
        for thread in threads {
            row.push(self.threads.intern(Arc::new(thread), || ()));
        }
        Row(row)
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
        let effect = StepEffect([
            self.threads.intern(Arc::new(next), || ()),
            renumber(&mut self.globals, row.0[GLOBALS], mem.globals),
            renumber(&mut self.heaps, row.0[HEAP], mem.heap),
            renumber(&mut self.locks, row.0[LOCKS], mem.locks),
        ]);
        row.apply(thread, effect)
    }

    /// The shared memory of `row` (cheap: three shared references).
    pub fn memory(&self, row: &Row) -> Memory {
        Memory {
            globals: self.globals.key(row.0[GLOBALS]).clone(),
            heap: self.heaps.key(row.0[HEAP]).clone(),
            locks: self.locks.key(row.0[LOCKS]).clone(),
        }
    }

    /// `thread`'s state in `row`.
    pub fn thread(&self, row: &Row, thread: usize) -> &Arc<ThreadState> {
        self.threads.key(row.thread(thread))
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
        let mut parts = Parts::new();
        let a = parts.row(memory(vec![Val::Int(1)]), [at(0), at(1)]);
        let b = parts.row(memory(vec![Val::Int(1)]), [at(0), at(1)]);
        assert_eq!(a, b, "equal parts, equal rows");
        let c = parts.row(memory(vec![Val::Int(2)]), [at(0), at(1)]);
        assert_ne!(a, c);
        assert_eq!(*parts.memory(&c).globals, vec![Val::Int(2)]);
        assert_eq!(parts.thread(&a, 1).op, 1);
        assert_eq!(a.threads(), 2);
    }

    #[test]
    fn a_step_renumbers_only_what_changed() {
        let mut parts = Parts::new();
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
}
