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
#[derive(Clone, Copy, Debug)]
pub(crate) struct ObjectId {
    number: u32,
    key: u64,
    name: &'static str,
}

impl ObjectId {
    /// The identity numbered `number` in its execution, keyed `key` in fingerprints and named
    /// `name` in reports: what the runtime gives a new object.
    pub fn from_parts(number: u32, key: u64, name: &'static str) -> ObjectId {
        ObjectId { number, key, name }
    }

    /// The key that names the object in fingerprints and in the weak-memory model.
    pub fn key(&self) -> u64 {
        self.key
    }

    /// The same object, shown in reports as `name` (with its number).
    pub fn named(self, name: &'static str) -> ObjectId {
        ObjectId { name, ..self }
    }
}

impl std::fmt::Display for ObjectId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}#{}", self.name, self.number)
    }
}
