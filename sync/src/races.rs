//! Data races on plain memory: two accesses to one location that is not atomic, at least one a
//! write, that happens-before does not order. In Rust, as in C++, a program with one has
//! undefined behaviour: the run ends there, in a fault leaf that names both accesses
//! ([`fgvt_tree::DataRace`]), labeled and localized like any failing leaf.
//!
//! # What is checked
//!
//! * Every access through [`UnsafeCell`](crate::cell::UnsafeCell) and
//!   [`Cell`](crate::cell::Cell), and through [`Shared`](crate::Shared) when the test asks
//!   ([`Test::races`](crate::Test::races)). None of them is a step: a plain access that races
//!   with nothing commutes with every other thread's step, and one that races is found whichever
//!   order the two come in, so the tree keeps its size and every race is still met.
//! * The creation of an object by a test thread in an operation, which is a write of all of it:
//!   a cell made there and reached by another thread that does not happen after its making is
//!   read racily. Under weak memory so is an atomic or a lock (its first value is written
//!   non-atomically, as C++20 says); sequentially consistent, every atomic access synchronizes,
//!   so an atomic reached through one cannot race with its making. Objects made by the serial
//!   part (`new`, `init`) happen before every test thread, which starts after it.
//!
//! The serial part never races (nothing runs beside it): its accesses are not checked, and
//! `final` runs after every test thread has been joined.
//!
//! # Happens-before
//!
//! Under weak memory the execution graph knows it ([`fgvt_memory::plain`]): an access is
//! placed after its thread's events so far. Sequentially consistent runs keep no graph: every
//! atomic access is then a release (a store) or an acquire (a load) or both, and [`Clocks`]
//! keeps happens-before as vector clocks, FastTrack's way: a thread's own entry is its *epoch*,
//! which a release hands over and then moves past, so an access made in epoch `e` happens before
//! a thread exactly when that thread's clock has seen `e` of the access's thread.
//!
//! Only what a later access may race with is kept: per location the last write and, per thread,
//! its last read since (an earlier read of the same thread happens before the last). An access
//! known to every thread that may still act can race with nothing any more, and is let go.
//!
//! # Fingerprints
//!
//! Whether a kept access will race with a later one depends on what will come to know of it,
//! which the fingerprint of a point must therefore tell apart. Happens-before only grows by
//! acquiring what something carries: a thread's own clock, an atomic's or a lock's. So the
//! fingerprint holds, for every kept access, who made it, where, and which of those carriers
//! have seen it ([`Races::hash`]; under weak memory the carriers are the graph's, and the
//! future key says it, [`fgvt_memory::Execution::future_key_with_plain`]). A new access is seen
//! by no carrier but its thread's own, whatever happened before it, so nothing else matters.
//! That is also why a sequentially consistent run keeps no clocks while no access is kept: the
//! first access to keep starts them afresh.

use std::collections::HashMap;
use std::panic::Location;

use fgvt_memory::PlainAt;
use fgvt_tree::{DataRace, RacingAccess, ThreadId};

use crate::fingerprint::{combine, hash_of, mix, shape};
use crate::object_id::ObjectId;
use crate::sources;

/// How an access touches a location.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Touch {
    /// Reads it.
    Read,
    /// Writes it.
    Write,
    /// Makes the object (a write of all of it).
    Create,
}

impl Touch {
    /// The word reports use: `read`, `write`, `creation`.
    fn word(self) -> &'static str {
        match self {
            Touch::Read => "read",
            Touch::Write => "write",
            Touch::Create => "creation",
        }
    }
}

/// What the check makes of an object a test thread makes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Making {
    /// Plain memory (a cell): checked.
    Plain,
    /// A [`Shared`](crate::Shared) cell: checked when the test asks.
    Shared,
    /// An atomic or a lock: its making is checked under weak memory.
    Synchronizing,
    /// Neither (a condition variable, bookkeeping).
    Unchecked,
}

/// What an object is to the check.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Checked {
    /// Plain memory: every access is checked (a cell).
    Plain,
    /// An atomic or a lock: only its making can race (under weak memory).
    Synchronizing,
}

/// Where happens-before comes from: the execution graph under weak memory, [`Clocks`] under
/// sequential consistency.
pub(crate) trait HappensBefore {
    /// The mark of an access `thread` makes now: where it sits in the thread's history.
    fn mark(&self, thread: ThreadId) -> u32;
    /// Whether the access `thread` made at `mark` happens before what `later` does next.
    fn ordered(&self, thread: ThreadId, mark: u32, later: ThreadId) -> bool;
}

/// An access a later one may race with.
#[derive(Clone, Copy, Debug)]
struct Kept {
    thread: ThreadId,
    mark: u32,
    touch: Touch,
    at: &'static Location<'static>,
}

impl Kept {
    /// What names the access in fingerprints: its location, how, by whom and where.
    fn identity(&self, key: u64) -> u64 {
        let touch = match self.touch {
            Touch::Read => 1,
            Touch::Write => 2,
            Touch::Create => 3,
        };
        combine(shape(touch, key, self.at), self.thread as u64)
    }

    fn racing(&self) -> RacingAccess {
        RacingAccess {
            thread: self.thread,
            access: self.touch.word().to_string(),
            span: Some(sources::span_at(self.at)),
        }
    }
}

/// What the check keeps of one location.
#[derive(Debug)]
struct Place {
    checked: Checked,
    /// The last write (or the making).
    write: Option<Kept>,
    /// The last read of each thread since that write.
    reads: Vec<Kept>,
}

impl Place {
    fn kept(&self) -> impl Iterator<Item = &Kept> {
        self.write.iter().chain(&self.reads)
    }
}

/// The data-race check of one execution.
#[derive(Debug, Default)]
pub(crate) struct Races {
    places: HashMap<u64, Place, foldhash::fast::RandomState>,
    /// Happens-before under sequential consistency; `None` under weak memory.
    clocks: Option<Clocks>,
}

/// The tag of the fingerprint's summands for kept accesses.
const KEPT: u64 = 0x4ace_5000;

impl Races {
    /// The check of a sequentially consistent execution of `threads` test threads, whose clocks
    /// start now.
    pub(crate) fn sequentially_consistent(threads: usize) -> Races {
        Races {
            places: HashMap::default(),
            clocks: Some(Clocks::new(threads)),
        }
    }

    /// The check of a weak-memory execution, whose graph keeps happens-before.
    pub(crate) fn weak() -> Races {
        Races::default()
    }

    /// The clocks, under sequential consistency.
    pub(crate) fn clocks(&mut self) -> Option<&mut Clocks> {
        self.clocks.as_mut()
    }

    /// Whether nothing is kept.
    pub(crate) fn is_empty(&self) -> bool {
        self.places.is_empty()
    }

    /// `thread` made `object` at `at`: a write of all of it.
    pub(crate) fn created(
        &mut self,
        graph: Option<&dyn HappensBefore>,
        thread: ThreadId,
        object: ObjectId,
        checked: Checked,
        at: &'static Location<'static>,
    ) {
        let mark = hb(self.clocks.as_ref(), graph).mark(thread);
        self.places.insert(
            object.key(),
            Place {
                checked,
                write: Some(Kept {
                    thread,
                    mark,
                    touch: Touch::Create,
                    at,
                }),
                reads: Vec::new(),
            },
        );
    }

    /// `thread` touches `object` at `at`: the race it makes, if any; else the access is kept.
    /// An access to an atomic or a lock (`checked` says which it is) is checked against its
    /// making only, and not kept.
    pub(crate) fn access(
        &mut self,
        graph: Option<&dyn HappensBefore>,
        thread: ThreadId,
        object: ObjectId,
        checked: Checked,
        touch: Touch,
        at: &'static Location<'static>,
    ) -> Result<(), Box<DataRace>> {
        let hb = hb(self.clocks.as_ref(), graph);
        let key = object.key();
        let place = match checked {
            Checked::Plain => self.places.entry(key).or_insert_with(|| Place {
                checked,
                write: None,
                reads: Vec::new(),
            }),
            Checked::Synchronizing => match self.places.get_mut(&key) {
                Some(place) => place,
                None => return Ok(()),
            },
        };
        let kept = Kept {
            thread,
            mark: hb.mark(thread),
            touch,
            at,
        };
        let unordered = |k: &&Kept| !hb.ordered(k.thread, k.mark, thread);
        let racing = match (place.checked, touch) {
            // A read races with the last write only; so does any access to an atomic or a lock
            // (with its making).
            (Checked::Synchronizing, _) | (Checked::Plain, Touch::Read) => {
                place.write.iter().find(unordered)
            }
            (Checked::Plain, _) => place.kept().find(unordered),
        };
        if let Some(first) = racing {
            return Err(Box::new(DataRace {
                location: object.to_string(),
                first: first.racing(),
                second: kept.racing(),
                hint: String::new(),
            }));
        }
        match (place.checked, touch) {
            (Checked::Synchronizing, _) => {}
            (Checked::Plain, Touch::Read) => {
                place.reads.retain(|r| r.thread != thread);
                place.reads.push(kept);
            }
            (Checked::Plain, _) => {
                place.write = Some(kept);
                place.reads.clear();
            }
        }
        Ok(())
    }

    /// Lets go of every access that each thread `live` says may still act knows of: nothing
    /// can race with it any more.
    pub(crate) fn forget_known(
        &mut self,
        graph: Option<&dyn HappensBefore>,
        threads: usize,
        live: impl Fn(ThreadId) -> bool,
    ) {
        let hb = hb(self.clocks.as_ref(), graph);
        let known = |k: &Kept| (0..threads).all(|u| !live(u) || hb.ordered(k.thread, k.mark, u));
        self.places.retain(|_, place| {
            if place.write.as_ref().is_some_and(known) {
                place.write = None;
            }
            place.reads.retain(|r| !known(r));
            place.write.is_some() || !place.reads.is_empty()
        });
    }

    /// The kept accesses, each as its identity and place in a thread (its mark as a count of
    /// the thread's graph events), in an order that does not depend on how the table is laid
    /// out: what a weak-memory fingerprint asks the graph about.
    pub(crate) fn plain_places(&self) -> Vec<(u64, PlainAt)> {
        let mut all: Vec<(u64, PlainAt)> = (self.places.iter())
            .flat_map(|(&key, place)| {
                place.kept().map(move |k| {
                    let at = PlainAt {
                        thread: k.thread,
                        events: k.mark as usize,
                    };
                    (k.identity(key), at)
                })
            })
            .collect();
        all.sort_unstable_by_key(|&(identity, at)| (identity, at.thread, at.events));
        all
    }

    /// The fingerprint summand of the kept accesses under sequential consistency: each one's
    /// identity with the carriers that have seen it (see the module docs). 0 with nothing kept.
    pub(crate) fn hash(&self, live: impl Fn(ThreadId) -> bool) -> u64 {
        let Some(clocks) = &self.clocks else {
            return 0;
        };
        let mut sum = 0u64;
        for (&key, place) in &self.places {
            for kept in place.kept() {
                let seen = clocks.seen_by(kept, &live);
                sum = sum.wrapping_add(mix(hash_of(&[KEPT, kept.identity(key), seen])));
            }
        }
        sum
    }
}

/// Where happens-before comes from: the clocks of a sequentially consistent check, else the
/// graph of a weak-memory one.
fn hb<'a>(
    clocks: Option<&'a Clocks>,
    graph: Option<&'a dyn HappensBefore>,
) -> &'a dyn HappensBefore {
    match (clocks, graph) {
        (Some(clocks), _) => clocks,
        (None, Some(graph)) => graph,
        (None, None) => unreachable!("a weak-memory check is always given its graph"),
    }
}

/// Happens-before of a sequentially consistent execution, as vector clocks (see the module
/// docs). Entries count epochs from when the clocks started.
#[derive(Debug)]
pub(crate) struct Clocks {
    /// Per test thread, the epoch of each thread it has seen (its own: its current epoch).
    threads: Vec<Vec<u32>>,
    /// What acquiring each atomic or lock hands over, by object key.
    carriers: HashMap<u64, Vec<u32>, foldhash::fast::RandomState>,
}

/// The tag that names a thread as a carrier.
const THREAD_CARRIER: u64 = 0x7c10_c000;

impl Clocks {
    fn new(threads: usize) -> Clocks {
        Clocks {
            threads: (0..threads)
                .map(|t| {
                    let mut clock = vec![0; threads];
                    clock[t] = 1;
                    clock
                })
                .collect(),
            carriers: HashMap::default(),
        }
    }

    /// `thread` acquires what the object `key` carries.
    pub(crate) fn acquire(&mut self, thread: ThreadId, key: u64) {
        if let Some(carried) = self.carriers.get(&key) {
            for (mine, theirs) in self.threads[thread].iter_mut().zip(carried) {
                *mine = (*mine).max(*theirs);
            }
        }
    }

    /// `thread` releases to the object `key`: it then carries what the thread has seen (with
    /// `join`, besides what it carried: an unlock of a lock readers share, a read-modify-write,
    /// which continues the release sequence it read), and the thread moves to a new epoch.
    pub(crate) fn release(&mut self, thread: ThreadId, key: u64, join: bool) {
        let clock = &self.threads[thread];
        let carried = self
            .carriers
            .entry(key)
            .or_insert_with(|| vec![0; clock.len()]);
        for (theirs, mine) in carried.iter_mut().zip(clock) {
            *theirs = if join { (*theirs).max(*mine) } else { *mine };
        }
        self.threads[thread][thread] += 1;
    }

    /// The carriers that have seen `kept`, as one word: the live threads and every object.
    fn seen_by(&self, kept: &Kept, live: &impl Fn(ThreadId) -> bool) -> u64 {
        let seen = |clock: &[u32]| clock[kept.thread] >= kept.mark;
        let threads = (self.threads.iter().enumerate())
            .filter(|&(u, clock)| live(u) && seen(clock))
            .map(|(u, _)| mix(THREAD_CARRIER ^ u as u64));
        let objects = (self.carriers.iter())
            .filter(|(_, clock)| seen(clock))
            .map(|(&key, _)| mix(key));
        threads.chain(objects).fold(0u64, u64::wrapping_add)
    }
}

impl HappensBefore for Clocks {
    fn mark(&self, thread: ThreadId) -> u32 {
        self.threads[thread][thread]
    }

    fn ordered(&self, thread: ThreadId, mark: u32, later: ThreadId) -> bool {
        self.threads[later][thread] >= mark
    }
}
