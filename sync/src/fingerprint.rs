//! Fingerprints of execution points: what lets the explorer merge equal states of real code.
//!
//! Real code keeps its state on thread stacks and in the heap, where fgvt cannot read it. What
//! fgvt can see is every instrumented access: which object, what it read, what it wrote. The
//! fingerprint of a point of an execution is built from that alone:
//!
//! * **memory** — the value of every instrumented atomic (a pointer by its identity, below);
//!   for a [`Shared`](crate::Shared) cell or a lock's data, which fgvt does not read, a
//!   *version* that names the write that produced it (the writer and everything it had
//!   observed in its operation when it wrote);
//! * **locks** — who holds each lock, and how;
//! * **threads** — for each thread, the index of its operation, its pending access, and the
//!   log of what its accesses in this operation observed (kind, object, value seen, source
//!   position).
//!
//! The coarse history is not part of it: the explorer keys states by (fingerprint, history)
//! itself.
//!
//! # Why equal fingerprints have equal futures
//!
//! A test thread runs its operations one after another, each a call of a deterministic method
//! on `&self`. Between two accesses it computes on its own locals, which are a function of the
//! call and of what its accesses in the operation returned: its observation log. Two points
//! with equal logs for a thread therefore have equal locals for it, hence the same next
//! access, the same values to write, the same plain data in the nodes it allocates. Shared
//! state is the instrumented objects, whose values (or versions, which name a function of the
//! writer's log) are in the fingerprint, and the plain data behind pointers, which was written
//! by the thread that made the pointer known: a pointer is identified by that thread's log when
//! it first appeared. So every thread takes the same steps from both points, with the same
//! results, for every schedule.
//!
//! What this assumes of the code, and the guide says (`docs/book/src/rust.md`): an operation
//! carries nothing over from the last one but what it stored in instrumented objects (no
//! `thread_local!`, no uninstrumented shared counter); plain data shared between threads is
//! written before it is published through an instrumented object and only read after; an
//! address is not reused for a new node while the test runs (an arena, a pool of numbered slots
//! or a leak; a pool that hands out slot numbers is plain integers and fine).
//!
//! Fingerprints are 128-bit sums of hashes (an incremental multiset hash, updated at every
//! write), so two distinct states share one with probability about n² / 2¹²⁹ for n states.
//!
//! # Retry loops
//!
//! [`Observations::retry`] implements `fgvt_sync::hint::spin_loop()`: the user's word that an
//! iteration of this loop carries nothing into the next but what it reads. At the thread's
//! next access, the head of the loop, the log is cut back to where the iteration began
//! ([`Observations::before_access`]), so the thread is back at the fingerprint it had when it
//! first reached the head, and the explorer sees a loop edge: a waiting loop is one state, not
//! an ever deeper path.

use std::collections::HashMap;
use std::panic::Location;

use crate::marked::Method;

/// A 128-bit fingerprint, or one of its summands.
pub(crate) type Fingerprint = u128;

/// The SplitMix64 finalizer: a bijection of `u64` that mixes every input bit into every output
/// bit.
pub(crate) fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// `hash` extended with `x` (order matters).
pub(crate) fn combine(hash: u64, x: u64) -> u64 {
    mix(hash.rotate_left(23) ^ mix(x))
}

/// Hashes a sequence of words.
pub(crate) fn hash_of(words: &[u64]) -> u64 {
    words.iter().fold(0x5eed, |h, &w| combine(h, w))
}

/// The summand of a fingerprint for the pair (`key`, `value`): two independent 64-bit hashes.
pub(crate) fn summand(key: u64, value: u64) -> Fingerprint {
    let high = mix(key ^ mix(value ^ 0x0123_4567_89ab_cdef));
    let low = mix(value.rotate_left(32) ^ mix(key ^ 0xfedc_ba98_7654_3210));
    (u128::from(high) << 64) | u128::from(low)
}

/// A value as an access saw or left it, before pointers are given their identities.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Word {
    /// An integer or boolean, as its bits.
    Int(u64),
    /// An address, with the alignment of what it points to (its low bits below that are a
    /// tag, as a mark bit in a lock-free list).
    Ptr(usize, usize),
}

/// What an access did to its object and what its thread learned.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Effect {
    /// Read a value; the object is unchanged.
    Read(Word),
    /// Wrote a value; the thread learned nothing.
    Write(Word),
    /// Read one value and left another (a swap, a `fetch_*`, a successful CAS).
    Update {
        /// What the thread read.
        seen: Word,
        /// What the object holds now.
        now: Word,
    },
    /// Read an object whose value fgvt does not see (a cell, a lock's data): the thread
    /// learns its version.
    ReadVersion,
    /// Wrote an object whose value fgvt does not see: a new version, named after the writer.
    WriteVersion,
    /// Read an object whose value fgvt does not see and wrote it (through a `&mut`, which may
    /// do both): the thread learns the old version, and the new one is named after the writer
    /// once it has.
    UpdateVersion,
    /// Neither read nor wrote anything another thread sees (a shared unlock, a local step).
    Nothing,
}

/// How executions treat the loops that call no retry hint fgvt sees.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Loops {
    /// Whether a turn of a `loop` or `while` of the source that wrote nothing ends as if the
    /// hint had ended it ([`Observations::before_access`]).
    pub implied_hints: bool,
    /// Whether a path ends where an operation repeats the same turn [`REPEATS`] times
    /// ([`Observations::repeats`], `fgvt_tree::Bound::Spin`).
    pub cut_bare: bool,
}

impl Default for Loops {
    fn default() -> Self {
        Loops {
            implied_hints: true,
            cut_bare: true,
        }
    }
}

/// An access as a thread's log tells it apart, without what it saw.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Access {
    /// Its kind, object and source position ([`shape`]): iterations of one loop that took
    /// the same path have the same shapes.
    pub(crate) shape: u64,
    /// Where in the source.
    pub(crate) at: &'static Location<'static>,
    /// What it was given, where a turn may carry it from the turn before: a
    /// compare-and-swap's expected and new values (0 for every other access).
    pub(crate) args: u64,
}

/// One access in a thread's log.
#[derive(Clone, Copy, Debug)]
struct Logged {
    /// What the access was.
    access: Access,
    /// What the access was and saw.
    entry: u64,
    /// The hash of the log up to and with this access.
    hash: u64,
    /// What the access wrote (a store, a read-modify-write that took effect), and whether
    /// another thread can see it.
    wrote: Wrote,
    /// When the access was made.
    stamp: Stamp,
    /// The call of a marked function it was made in ([`Observations::calls`]): 1 + its
    /// index, 0 for none.
    call: u32,
}

/// When an access was made, as the runtime counts: what a [`DroppedTurn`] hands back of its
/// first access.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Stamp {
    /// How many steps its thread had taken in its operation before it.
    pub(crate) step: u32,
    /// Under weak memory, how many events of the graph its thread had made before it (else 0).
    pub(crate) events: u32,
}

/// What an access wrote, as a retry loop's turn counts it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Wrote {
    /// Nothing.
    Nothing,
    /// An object its thread made in the current operation and has not published: no other
    /// thread can reach it before the thread writes something else (a compare-and-swap
    /// loop's new node, its next pointer written anew at every turn).
    Private,
    /// What other threads may see.
    Shared,
    /// What other threads may see, by a read-modify-write that changed `object` from `before`
    /// to `after` (values as fingerprints name them; the same, for a test-and-set lock's
    /// `swap(true)` that found the lock taken): a turn whose changes put every object it
    /// changed back as it found it (a reader count added and taken back) is taken for a retry
    /// loop's turn ([`Observations::before_access`]). Under weak memory its stores are in
    /// modification order all the same, and the future key leaves such turns out while no
    /// other thread has seen them (`fgvt_memory`'s `turns`). It is no quiet turn
    /// ([`DroppedTurn`]): other threads may have read its stores.
    Changed {
        /// The object's key.
        object: u64,
        /// The value the read-modify-write read.
        before: u64,
        /// The value it left.
        after: u64,
    },
}

impl Wrote {
    /// Whether other threads may see what it wrote.
    pub(crate) fn is_shared(self) -> bool {
        matches!(self, Wrote::Shared | Wrote::Changed { .. })
    }

    /// Whether it left every value as it found it: wrote nothing, or a read-modify-write put
    /// back the value it read.
    fn changed_nothing(self) -> bool {
        match self {
            Wrote::Nothing => true,
            Wrote::Changed { before, after, .. } => before == after,
            Wrote::Private | Wrote::Shared => false,
        }
    }
}

/// Whether a turn's accesses leave memory as they found it: every write was one of a
/// read-modify-write chain on an object that ends at the value its first link read
/// ([`Wrote::Changed`]), or wrote what its thread alone can reach; a plain store does not.
fn puts_back(turn: &[Logged]) -> bool {
    // Per object changed: the value before the turn's first change, and after its last.
    let mut changed: Vec<(u64, u64, u64)> = Vec::new();
    for logged in turn {
        match logged.wrote {
            Wrote::Nothing | Wrote::Private => {}
            Wrote::Shared => return false,
            Wrote::Changed {
                object,
                before,
                after,
            } => match changed.iter_mut().find(|(o, ..)| *o == object) {
                Some((_, _, last)) => *last = after,
                None => changed.push((object, before, after)),
            },
        }
    }
    changed.iter().all(|&(_, first, last)| first == last)
}

/// An iteration of a retry loop that a hint took out of the log, and that wrote nothing: what
/// [`Observations::before_access`] tells, so that a search may treat the run through it as
/// one that the run without it stands for (see `fgvt_tree::QuietTurn`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct DroppedTurn {
    /// When the iteration's first access was made.
    pub(crate) start: Stamp,
}

/// A thread's observations in its current operation (see the module docs).
pub(crate) struct Observations {
    /// One entry per access.
    log: Vec<Logged>,
    /// Log lengths at the retry hints of this operation that were kept (by the path rule, see
    /// [`Observations::retry`]).
    hints: Vec<usize>,
    /// Whether every retry hint of this operation so far was resolved by finding where its
    /// iteration began: the log then holds no entry of any finished iteration.
    heads_found: bool,
    /// A retry hint not yet resolved, with the log's length when it was given: it is resolved
    /// when the thread registers its next access (the head of its loop).
    hinted: Option<usize>,
    /// Every call of a function of an `#[fgvt_sync::operations]` impl the thread made in
    /// this operation, in the order they began (see [`crate::marked`]).
    calls: Vec<MarkedCall>,
    /// The call the thread is in now: 1 + its index in `calls`, 0 for none.
    current: u32,
}

/// One call of a marked function.
#[derive(Clone, Copy, Debug)]
struct MarkedCall {
    /// The function called.
    method: &'static Method,
    /// The call it was made in: 1 + its index, 0 for none.
    caller: u32,
}

impl Default for Observations {
    fn default() -> Self {
        Observations {
            log: Vec::new(),
            hints: Vec::new(),
            heads_found: true,
            hinted: None,
            calls: Vec::new(),
            current: 0,
        }
    }
}

impl Observations {
    /// Forgets everything: a new operation starts.
    pub(crate) fn clear(&mut self) {
        self.log.clear();
        self.hints.clear();
        self.heads_found = true;
        self.hinted = None;
        // The log no longer names the calls that have ended; those the thread is still in
        // (none, but where an operation begins inside one) keep their numbers.
        if self.current == 0 {
            self.calls.clear();
        }
    }

    /// Forgets everything, the calls the thread is in too: a new execution starts.
    pub(crate) fn reset(&mut self) {
        self.current = 0;
        self.clear();
    }

    /// The thread enters `method`: the token to leave it with.
    pub(crate) fn enter(&mut self, method: &'static Method) -> u32 {
        self.calls.push(MarkedCall {
            method,
            caller: self.current,
        });
        self.current = u32::try_from(self.calls.len()).unwrap_or(u32::MAX);
        self.current
    }

    /// The thread leaves the call `token` names (returning or unwinding). A token of calls
    /// forgotten since (a new operation) changes nothing.
    pub(crate) fn leave(&mut self, token: u32) {
        if token != 0 && token == self.current {
            self.current = self.calls[token as usize - 1].caller;
        }
    }

    /// Whether the access at `head` in the log and the one the thread is about to make are
    /// in one call of the marked function `name`, whose body opens at `file`'s `line`: a call
    /// of it holds both, and it is the same call. `false` if no such call holds either.
    fn same_call(&self, head: usize, file: &str, name: &str, line: u32) -> bool {
        let call_of = |mut at: u32| {
            while at != 0 {
                let call = &self.calls[at as usize - 1];
                let m = call.method;
                if m.name == name && m.line == line && m.file == file {
                    return Some(at);
                }
                at = call.caller;
            }
            None
        };
        call_of(self.log[head].call).is_some_and(|call| call_of(self.current) == Some(call))
    }

    /// The hash of the log.
    pub(crate) fn hash(&self) -> u64 {
        self.log.last().map_or(EMPTY_LOG, |l| l.hash)
    }

    /// Appends one access: `access` (what it was), its `entry` (what it was and saw),
    /// whether it wrote (`Wrote`), and when it was made (`stamp`, which a [`DroppedTurn`]
    /// hands back).
    pub(crate) fn push(&mut self, access: Access, entry: u64, wrote: Wrote, stamp: Stamp) {
        let hash = combine(self.hash(), entry);
        self.log.push(Logged {
            access,
            entry,
            hash,
            wrote,
            stamp,
            call: self.current,
        });
    }

    /// The log from `from` on, about to be dropped, as a [`DroppedTurn`] if no access of it
    /// wrote.
    fn dropping(&self, from: usize) -> Option<DroppedTurn> {
        let turn = &self.log[from..];
        let first = turn.first()?;
        let seen = |l: &Logged| l.wrote.is_shared();
        (!turn.iter().any(seen)).then_some(DroppedTurn { start: first.stamp })
    }

    /// Whether the log ends with the same iteration [`REPEATS`] times in a row: its last `k`
    /// accesses (for some `k` up to [`MAX_ITERATION`]) repeat the `k` before them, made at the
    /// same places and seeing the same values, and none of them wrote. That is a loop without
    /// a retry hint (the hint's iterations leave the log, see
    /// [`Observations::before_access`]) whose turns see nothing new: the next turn, unless
    /// another thread writes first, is the same again. Straight-line code that calls one
    /// helper twice makes the same access twice; [`REPEATS`] turns keep it apart from a loop.
    pub(crate) fn repeats(&self) -> bool {
        let n = self.log.len();
        (1..=MAX_ITERATION.min(n / REPEATS)).any(|k| {
            let tail = &self.log[n - REPEATS * k..];
            let last = &tail[tail.len() - k..];
            let same =
                (tail.chunks(k)).all(|turn| turn.iter().zip(last).all(|(a, b)| a.entry == b.entry));
            same && tail.iter().all(|l| l.wrote.changed_nothing())
        })
    }

    /// A retry hint (`fgvt_sync::hint::spin_loop`): the thread goes back to the head of its
    /// loop, and the iteration it ends carries nothing into the next but what it wrote to
    /// memory. Resolved at the thread's next access, the head of the loop: see
    /// [`Observations::before_access`].
    pub(crate) fn retry(&mut self) {
        self.hinted.get_or_insert(self.log.len());
    }

    /// The thread is about to make `access`. After a retry hint, that access is the head of
    /// the loop, and the hint is resolved here:
    ///
    /// * **The head rule.** While every earlier hint of the operation was resolved this way,
    ///   and `shape` occurs exactly once in the log, at `i`, the iteration that just ended
    ///   began at `i`: the log is cut back to `i`. The thread is then exactly where it was
    ///   when it first reached the head, with what it had observed before the loop, and the
    ///   explorer sees a loop edge, whatever the iteration saw and whichever path it took (a
    ///   seqlock reader that saw an odd number, then a changed one, is back at the same state).
    /// * **The path rule**, otherwise (see [`Observations::path_retry`]).
    ///
    /// Why the head rule is sound, given the hint's promise: each iteration of a loop starts
    /// with the same access (the thread's locals at the head are the same every time), so the
    /// iteration that ended began with an access of `shape`, which is in the log unless a cut
    /// removed it; a cut removes one iteration of a loop from its head to its hint, and a loop
    /// entered inside such an iteration has exited by the time that iteration's hint comes, so
    /// the start of a loop still running was never cut. The one occurrence of `shape` is
    /// therefore that start. Two loops with the same head (a helper waited on twice, or a
    /// loop nested in one that starts with the same access) make `shape` occur twice, and an
    /// access made between the hint and the head (bookkeeping in a `Silent`) means the head is
    /// not where the iteration began: both fall back to the path rule for the rest of the
    /// operation, since a later cut could then remove the start of a running loop.
    ///
    /// Without a hint, and with `implied`, the access may still end a turn of a loop that
    /// calls no hint fgvt sees ([`Observations::implied_retry`]).
    ///
    /// Returns the iteration dropped, if one was and it wrote nothing.
    pub(crate) fn before_access(&mut self, access: Access, implied: bool) -> Option<DroppedTurn> {
        let Some(at_hint) = self.hinted.take() else {
            return implied.then(|| self.implied_retry(access)).flatten();
        };
        if self.heads_found && self.log.len() == at_hint {
            if let Some(head) = self.only(access.shape) {
                let dropped = self.dropping(head);
                self.log.truncate(head);
                return dropped;
            }
        }
        self.heads_found = false;
        self.path_retry(at_hint)
    }

    /// The head rule without a hint, for a loop of the source that calls none fgvt sees (a
    /// bare `while flag.load(Acquire) {}`, a compare-and-swap loop around
    /// `std::hint::spin_loop()`): `access`, about to be made, was made once before in the
    /// operation and given the same (a compare-and-swap's expected value), every access since
    /// then wrote nothing or put back what it changed ([`puts_back`]), and one `loop` or
    /// `while` of the source holds them all with a turn that may begin at `access`
    /// ([`crate::sources::turn_in_a_loop`]). The thread is then back at the head of that loop
    /// after a turn that changed no value, and the turn is dropped as a hint would drop it.
    ///
    /// This takes such a loop at the hint's promise, that a turn carries nothing into the
    /// next but what it reads anew. What breaks it is mostly told apart: a loop that assigns
    /// a `mut` variable declared before it (`seen = now`, `tries += 1`), a `for` loop, which
    /// carries its iterator, and a `while` whose condition reads nothing shared (`while i <
    /// n`) are never taken (see [`crate::loops`]), and a head carried another way (a `Cell`)
    /// is given other arguments. State carried where the source shows no assignment is not
    /// told apart (`Test::implied_hints`).
    fn implied_retry(&mut self, access: Access) -> Option<DroppedTurn> {
        if !self.heads_found {
            return None;
        }
        let head = self.only(access.shape)?;
        if self.log[head].access.args != access.args {
            return None;
        }
        // A turn that put back what it changed is taken too, but is no quiet turn.
        if !puts_back(&self.log[head..]) {
            return None;
        }
        let turn = self.log[head..].iter().map(|l| &l.access.at);
        let same_call = |name: &str, line: u32| self.same_call(head, access.at.file(), name, line);
        if !crate::sources::turn_in_a_loop(access.at, turn, &same_call) {
            return None;
        }
        let dropped = self.dropping(head);
        self.log.truncate(head);
        dropped
    }

    /// Where the log has an access of `shape`, if it has exactly one.
    fn only(&self, shape: u64) -> Option<usize> {
        let mut found = (self.log.iter().enumerate()).filter(|(_, l)| l.access.shape == shape);
        match (found.next(), found.next()) {
            (Some((at, _)), None) => Some(at),
            _ => None,
        }
    }

    /// The path rule, for a hint given when the log had `at_hint` entries: if the iteration
    /// since the last kept hint took the same path as the one before it (the same accesses,
    /// whatever values they saw), it is dropped: the thread is back at the head of its loop
    /// with nothing carried over, where it was at the last hint. Else the hint is kept. The
    /// first iteration counts from the start of the operation, so it only matches when the
    /// loop is where the operation starts.
    ///
    /// Comparing paths, not values, is what the hint promises: an iteration carries nothing
    /// into the next, so the values an iteration saw are gone at the next hint (what it wrote
    /// is in memory, which the fingerprint has). Comparing paths, not just counting hints,
    /// keeps apart the iterations of two loops that share a hint (a `lock` helper taken twice
    /// in one operation): the segment between them is not an iteration of either.
    fn path_retry(&mut self, at_hint: usize) -> Option<DroppedTurn> {
        // Bookkeeping made between the hint and the head belongs to the next iteration.
        let tail: Vec<Logged> = self.log.split_off(at_hint);
        let dropped = self.path_rule();
        let mut hash = self.hash();
        for mut logged in tail {
            hash = combine(hash, logged.entry);
            logged.hash = hash;
            self.log.push(logged);
        }
        dropped
    }

    /// The path rule on the log as it is (see [`Observations::path_retry`]): the iteration
    /// dropped, if one was and it wrote nothing.
    fn path_rule(&mut self) -> Option<DroppedTurn> {
        let now = self.log.len();
        let Some(&last) = self.hints.last() else {
            self.hints.push(now);
            return None;
        };
        let before = self.hints.len().checked_sub(2).map_or(0, |i| self.hints[i]);
        let shapes = |from: usize, to: usize| self.log[from..to].iter().map(|l| l.access.shape);
        if now > last && shapes(before, last).eq(shapes(last, now)) {
            let dropped = self.dropping(last);
            self.log.truncate(last);
            return dropped;
        } else if now > last {
            self.hints.push(now);
        }
        None
    }
}

/// The most accesses one iteration of a loop may make for [`Observations::repeats`] to see it
/// repeat.
const MAX_ITERATION: usize = 16;

/// How many identical turns in a row make a loop spin for [`Observations::repeats`].
const REPEATS: usize = 4;

/// The hash of an empty log.
const EMPTY_LOG: u64 = 0x1095_eed0;

/// One access's log shape: its kind, object and source position.
pub(crate) fn shape(kind: u64, object: u64, at: &'static Location<'static>) -> u64 {
    let at = std::ptr::from_ref(at) as usize as u64;
    hash_of(&[kind, object, at])
}

/// One access's log entry: its shape and what it saw.
pub(crate) fn entry(shape: u64, seen: u64) -> u64 {
    combine(shape, seen)
}

/// The memory of an execution as fingerprints see it: the value or version of every
/// instrumented object, and the identities of the addresses seen.
#[derive(Default)]
pub(crate) struct Memory {
    /// Object key → value word (or version).
    values: HashMap<u64, u64, foldhash::fast::RandomState>,
    /// The sum of `summand(key, value)` over `values`.
    sum: Fingerprint,
    /// Address → identity (see the module docs).
    pointers: HashMap<usize, u64, foldhash::fast::RandomState>,
}

impl Memory {
    /// Forgets every value and identity, keeping the room: a new execution starts.
    pub(crate) fn clear(&mut self) {
        self.values.clear();
        self.pointers.clear();
        self.sum = 0;
    }

    /// The fingerprint of the values alone.
    pub(crate) fn sum(&self) -> Fingerprint {
        self.sum
    }

    /// Sets the value (or version) of the object `key`.
    pub(crate) fn set(&mut self, key: u64, value: u64) {
        if let Some(old) = self.values.insert(key, value) {
            self.sum = self.sum.wrapping_sub(summand(key, old));
        }
        self.sum = self.sum.wrapping_add(summand(key, value));
    }

    /// The value (or version) of the object `key`.
    pub(crate) fn get(&self, key: u64) -> u64 {
        self.values.get(&key).copied().unwrap_or(0)
    }

    /// `word` as fingerprints see it, where every address has been seen before (a value an
    /// access stored, under weak memory): as [`Memory::word`], an address never seen by a
    /// hash of itself.
    pub(crate) fn identity(&self, word: Word) -> u64 {
        // `seen_as` is `None` only where its lookup is: never here.
        seen_as(word, |base| {
            Some(
                self.pointers
                    .get(&base)
                    .copied()
                    .unwrap_or_else(|| mix(base as u64)),
            )
        })
        .unwrap_or_default()
    }

    /// [`Memory::word`] without `fresh`: `None` for an address not seen yet.
    pub(crate) fn known(&self, word: Word) -> Option<u64> {
        seen_as(word, |base| self.pointers.get(&base).copied())
    }

    /// `word` as fingerprints see it: an integer as it is, an address by its identity, given
    /// by `fresh` the first time the address is seen (from the context of the thread that
    /// makes it known).
    pub(crate) fn word(&mut self, word: Word, fresh: impl FnOnce() -> u64) -> u64 {
        // `seen_as` is `None` only where its lookup is: never here.
        seen_as(word, |base| {
            Some(*self.pointers.entry(base).or_insert_with(fresh))
        })
        .unwrap_or_default()
    }
}

/// An address as its pointee's `align` cuts it: the base address, and the tag that the bits
/// below the alignment hold (a mark in the low bits of a lock-free list's `next`).
pub(crate) fn split(address: usize, align: usize) -> (usize, usize) {
    let tag = address % align.max(1);
    (address - tag, tag)
}

/// `word` as fingerprints see it, the identity of a non-null base address given by
/// `identity_of` (`None` if it has none).
fn seen_as(word: Word, identity_of: impl FnOnce(usize) -> Option<u64>) -> Option<u64> {
    match word {
        Word::Int(bits) => Some(bits),
        Word::Ptr(address, align) => {
            let (base, tag) = split(address, align);
            let identity = if base == 0 { 0 } else { identity_of(base)? };
            Some(combine(identity, tag as u64))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn here() -> &'static Location<'static> {
        Location::caller()
    }

    /// Logs a read of `object` at `at` that saw `seen`.
    fn log(obs: &mut Observations, object: u64, at: &'static Location<'static>, seen: u64) {
        let access = read(object, at);
        obs.push(
            access,
            entry(access.shape, seen),
            Wrote::Nothing,
            Stamp::default(),
        );
    }

    /// A read of `object` at `at`.
    fn read(object: u64, at: &'static Location<'static>) -> Access {
        Access {
            shape: shape(1, object, at),
            at,
            args: 0,
        }
    }

    /// The kind of a bookkeeping access in a log (as `runtime.rs` has it).
    const SILENT_KIND: u64 = 0x51;

    /// A retry hint, resolved by the next access: one to `object` at `at`.
    fn hint(obs: &mut Observations, object: u64, at: &'static Location<'static>) {
        obs.retry();
        obs.before_access(read(object, at), false);
    }

    #[test]
    fn an_iteration_goes_back_to_the_head_of_its_loop_whatever_it_saw() {
        let at = here();
        let mut obs = Observations::default();
        let start = obs.hash();
        log(&mut obs, 1, at, 1);
        hint(&mut obs, 1, at);
        assert_eq!(obs.hash(), start, "back where the loop began");
        log(&mut obs, 1, at, 3);
        hint(&mut obs, 1, at);
        assert_eq!(obs.hash(), start, "another value: still the head");
    }

    #[test]
    fn iterations_on_different_paths_go_back_to_one_head() {
        // A seqlock reader: an odd number (one access), then a changed one (four).
        // (Objects tell accesses apart here: `here()` is one source position.)
        let at = here();
        let (seq, a, b, seq_again) = (1, 2, 3, 4);
        let mut obs = Observations::default();
        log(&mut obs, 9, at, 0);
        let before_loop = obs.hash();
        log(&mut obs, seq, at, 1);
        hint(&mut obs, seq, at);
        assert_eq!(obs.hash(), before_loop);
        log(&mut obs, seq, at, 2);
        log(&mut obs, a, at, 7);
        log(&mut obs, b, at, 7);
        log(&mut obs, seq_again, at, 4);
        hint(&mut obs, seq, at);
        assert_eq!(obs.hash(), before_loop, "what came before the loop is kept");
    }

    #[test]
    fn a_head_seen_twice_falls_back_to_the_path_rule() {
        // A lock helper taken twice in one operation: the second loop's segment holds the
        // first loop's head too, so where its iteration began is not known.
        let cas = here();
        let mut obs = Observations::default();
        log(&mut obs, 1, cas, 1);
        hint(&mut obs, 1, cas);
        let start = obs.hash();
        log(&mut obs, 1, cas, 0);
        log(&mut obs, 2, cas, 5);
        log(&mut obs, 1, cas, 1);
        hint(&mut obs, 1, cas);
        assert_ne!(obs.hash(), start, "not back in the first loop");
        log(&mut obs, 1, cas, 1);
        hint(&mut obs, 1, cas);
        log(&mut obs, 1, cas, 1);
        hint(&mut obs, 1, cas);
        assert_ne!(obs.hash(), start);
        assert!(
            !obs.heads_found,
            "the head rule is off for the rest of the operation"
        );
        assert_eq!(obs.hints.len(), 2, "the path rule kept its hints");
    }

    #[test]
    fn a_nested_loop_with_the_same_head_is_not_mistaken_for_its_outer_loop() {
        // loop { a = get(); loop { b = get(); if ok { break } spin } if done { return } spin }
        let get = here();
        let mut obs = Observations::default();
        log(&mut obs, 1, get, 1);
        log(&mut obs, 1, get, 5);
        hint(&mut obs, 1, get);
        let inner = obs.hash();
        log(&mut obs, 1, get, 2);
        hint(&mut obs, 1, get);
        // The outer iteration began at the first access, not at the inner loop's head: no
        // rule may cut back to the inner loop's state.
        assert!(!obs.heads_found);
        assert_ne!(
            obs.hash(),
            inner,
            "the outer loop's hint is not the inner loop's head"
        );
    }

    #[test]
    fn bookkeeping_between_the_hint_and_the_head_falls_back_to_the_path_rule() {
        let at = here();
        let mut obs = Observations::default();
        log(&mut obs, 1, at, 1);
        obs.retry();
        let silent = shape(SILENT_KIND, 7, at);
        let silent = Access {
            shape: silent,
            at,
            args: 0,
        };
        obs.push(
            silent,
            entry(silent.shape, 4),
            Wrote::Nothing,
            Stamp::default(),
        );
        obs.before_access(read(1, at), false);
        assert!(!obs.heads_found);
        assert_eq!(obs.log.len(), 2, "the bookkeeping stays in the log");
        assert_eq!(obs.hints, vec![1], "the hint is where it was given");
    }

    #[test]
    fn the_path_rule_drops_an_iteration_on_the_path_of_the_last_one() {
        let at = here();
        let mut obs = Observations::default();
        // Two loops with one head turn the head rule off.
        log(&mut obs, 5, at, 0);
        log(&mut obs, 5, at, 0);
        hint(&mut obs, 5, at);
        assert!(!obs.heads_found);
        log(&mut obs, 1, at, 1);
        hint(&mut obs, 1, at);
        let first = obs.hash();
        log(&mut obs, 1, at, 1);
        hint(&mut obs, 1, at);
        let second = obs.hash();
        log(&mut obs, 1, at, 3);
        hint(&mut obs, 1, at);
        assert_eq!(
            second, first,
            "the same path as the last iteration: back at its hint"
        );
        assert_eq!(obs.hash(), second, "whatever it saw");
        log(&mut obs, 2, at, 2);
        hint(&mut obs, 1, at);
        assert_ne!(obs.hash(), second, "another path is progress");
    }

    #[test]
    fn a_hint_without_an_access_since_the_last_changes_nothing() {
        let at = here();
        let mut obs = Observations::default();
        log(&mut obs, 1, at, 1);
        hint(&mut obs, 1, at);
        let h = obs.hash();
        obs.retry();
        obs.retry();
        obs.before_access(read(1, at), false);
        assert_eq!(obs.hash(), h);
    }

    #[test]
    fn memory_sums_do_not_depend_on_the_order_of_writes() {
        let mut a = Memory::default();
        a.set(1, 10);
        a.set(2, 20);
        a.set(1, 11);
        let mut b = Memory::default();
        b.set(2, 20);
        b.set(1, 11);
        assert_eq!(a.sum(), b.sum());
        b.set(1, 12);
        assert_ne!(a.sum(), b.sum());
    }

    #[test]
    fn addresses_keep_the_identity_they_were_first_given() {
        let mut m = Memory::default();
        let p = m.word(Word::Ptr(0x1000, 8), || 77);
        assert_eq!(m.word(Word::Ptr(0x1000, 8), || 99), p);
        assert_eq!(
            m.word(Word::Ptr(0, 8), || 5),
            combine(0, 0),
            "null has no identity"
        );
        assert_ne!(
            m.word(Word::Ptr(0x1001, 8), || 5),
            p,
            "a tag is part of the value"
        );
    }
}
