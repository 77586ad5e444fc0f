//! An instrumented object's identity ([`ObjectId`]): how the runtime, the data-race check and
//! the weak-memory model name an object.
//!
//! Only the identity is here. Making one (the recorder numbers and keys a new object) and
//! describing an access to one are the runtime's, in its own `impl ObjectId`: `races.rs` and
//! `weak.rs`, which the runtime calls, name objects by this type without depending on it.

/// An instrumented object's identity: its number in the execution (objects are created in the
/// same order by every execution of one schedule, so the number names the same object in all
/// of them) and its name, which together name it in reports (`head#0`). The name is the field
/// or variable the code binds the object to where it is created, else its type (`AtomicI64#0`).
///
/// Its `key` names it in fingerprints: who created it (the serial part, or a thread in an
/// operation with what it had observed) and how many objects that creator had made before,
/// which does not depend on how other threads were interleaved (the number does).
///
/// `run` tells which execution made it (the low bits of its number on its OS thread, 0
/// outside any): an object an earlier execution made may be dropped during a later one.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ObjectId {
    number: u32,
    run: u32,
    key: u64,
    name: &'static str,
}

impl ObjectId {
    /// The identity numbered `number` in execution `run`, keyed `key` in fingerprints and
    /// named `name` in reports: what the runtime gives a new object.
    pub fn from_parts(number: u32, run: u32, key: u64, name: &'static str) -> ObjectId {
        ObjectId {
            number,
            run,
            key,
            name,
        }
    }

    /// The key that names the object in fingerprints and in the weak-memory model.
    pub fn key(&self) -> u64 {
        self.key
    }

    /// The name reports show it by.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// Its number among the objects of its execution, which reports show after its name.
    pub fn number(&self) -> u32 {
        self.number
    }

    /// The same object, shown in reports as `name` (with its number).
    pub fn named(self, name: &'static str) -> ObjectId {
        ObjectId { name, ..self }
    }

    /// Whether execution `run` (the low bits of its number) made it; outside every execution,
    /// objects are keyed 0 and made by none.
    pub fn made_in(&self, run: u32) -> bool {
        self.key != 0 && self.run == run
    }

    /// Whether `other` is the same identity: the same execution, number and key.
    pub fn same_as(&self, other: &ObjectId) -> bool {
        self.run == other.run && self.number == other.number && self.key == other.key
    }
}

impl std::fmt::Display for ObjectId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}#{}", self.name, self.number)
    }
}
