//! The compiled form of a model: a small stack bytecode per function plus the tables the
//! interpreter needs (globals, locks, records, event sites).

use fgvt_memory::{AccessKind, Order};
use fgvt_tree::Span;

use super::ast::{BinOp, UnOp};
use super::value::Val;

/// A shared location an instruction accesses. Address operands (an array index, a record
/// reference) are on the operand stack below the value operands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Loc {
    /// A shared scalar: its slot in the globals vector. No address operand.
    Global(u32),
    /// An element of shared array number `.0` (index into [`Model::arrays`](super::Model)).
    /// Operand: the index.
    Elem(u32),
    /// Field number `.0` of the field-name table. Operand: the record reference.
    Field(u32),
}

/// One instruction. Those for which [`Instr::is_shared`] holds are the preemption points.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Instr {
    /// Pushes a constant.
    Push(Val),
    /// Pushes local slot `.0`.
    Load(u16),
    /// Pops into local slot `.0`.
    Store(u16),
    /// Discards the top of the stack.
    Pop,
    /// A unary operator on the top of the stack.
    Unary(UnOp),
    /// A binary operator (not `&&`/`||`, which compile to jumps).
    Binary(BinOp),
    /// Jumps to the instruction index.
    Jump(u32),
    /// Pops a bool and jumps when it is false.
    JumpIfFalse(u32),
    /// Pops `.0` values and pushes them as a tuple.
    Tuple(u16),
    /// Pops a tuple and pushes its item `.0`.
    Proj(u16),
    /// Pops a tuple of exactly `.0` items and pushes them in order (the last on top).
    Untuple(u16),
    /// Pops `.1` constructor arguments and pushes a new record of type `.0`.
    New(u32, u16),
    /// Pops `.1` arguments and calls function `.0`.
    Call(u32, u16),
    /// Pops the result and returns from the current function.
    Return,
    /// Pops a bool; faults with message `.0` (or a default) when it is false.
    Assert(Option<String>),
    /// Pops the address, pushes the value at `.0`. Event site `.1`.
    Read(Loc, u32),
    /// Like [`Instr::Read`], for a `final` field or shared variable: it cannot change after
    /// construction, so reading it races with nothing and is not an event (site `.1` only
    /// names the location in faults).
    ReadFinal(Loc, u32),
    /// Pops the value and the address, writes. Event site `.1`.
    Write(Loc, u32),
    /// Pops new, expected and the address; pushes whether it swapped.
    Cas(Loc, u32),
    /// Pops new2, new1, expected2, expected1 and both addresses; pushes whether it swapped.
    Dcas(Loc, Loc, u32),
    /// Pops a monitor (a lock handle or a record reference) and acquires it.
    Lock(u32),
    /// Pops a monitor and releases it.
    Unlock(u32),
    /// Starts an `atomic { }` block: everything up to the matching end is one event.
    AtomicBegin(u32),
    /// Ends an `atomic { }` block.
    AtomicEnd,
    /// A `fence(order)` with the ordering of site `.0`. Not a step of its own: under weak
    /// memory it is added to the thread's execution as it runs (it reads and writes no
    /// location, so no other thread's step between it and the thread's next access can tell
    /// when it was added); sequentially consistent, it does nothing.
    Fence(u32),
    /// Starts evaluating an `await` condition, atomically.
    AwaitBegin(u32),
    /// Pops the `await` condition; the whole step blocks when it is false.
    AwaitEnd,
}

impl Instr {
    /// Whether a thread may be preempted just before this instruction (it touches shared
    /// memory or begins an atomic region).
    pub fn is_shared(&self) -> bool {
        matches!(
            self,
            Instr::Read(..)
                | Instr::Write(..)
                | Instr::Cas(..)
                | Instr::Dcas(..)
                | Instr::Lock(_)
                | Instr::Unlock(_)
                | Instr::AtomicBegin(_)
                | Instr::AwaitBegin(_)
        )
    }
}

/// Where an event happens and how its location reads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Site {
    /// The span reported with the event.
    pub span: Span,
    /// The location as source text: `head`, `d` (the index is appended at run time),
    /// `curr.next`, `m`, `this`.
    pub text: String,
    /// For an access whose ordering the model may declare (a read, write or `cas` outside
    /// `atomic`/`await`, or a fence): what kind of access it is. `None` for every other site
    /// (locks, regions, `dcas`, the initializer's writes), which keep their own semantics.
    pub access: Option<AccessKind>,
    /// The ordering it declares (`SeqCst` when none is written): a `cas`'s success ordering.
    pub order: Order,
    /// A `cas`'s ordering when it fails (a load's); `SeqCst` for every other site.
    pub failure: Order,
}

impl Site {
    /// Whether the site declares an ordering weaker than `SeqCst`.
    pub fn is_weak(&self) -> bool {
        self.order != Order::SeqCst || self.failure != Order::SeqCst
    }
}

/// A compiled operation, helper function, or the object's initializer.
#[derive(Clone, Debug)]
pub(crate) struct Function {
    /// Its name (`<init>` for the initializer).
    pub name: String,
    /// Parameter names.
    pub params: Vec<String>,
    /// Number of local slots (parameters first).
    pub n_locals: u16,
    /// The instructions.
    pub code: Vec<Instr>,
    /// The source span of each instruction (for faults).
    pub spans: Vec<Span>,
    /// The header, e.g. `op write(int i, int v)`.
    pub header: Span,
}

/// A shared array.
#[derive(Clone, Debug)]
pub(crate) struct Array {
    /// Its name.
    pub name: String,
    /// Its first slot in the globals vector.
    pub base: u32,
    /// Its length.
    pub len: u32,
}

/// A record type.
#[derive(Clone, Debug)]
pub(crate) struct RecordInfo {
    /// Its name.
    pub name: String,
    /// Field names, in order.
    pub fields: Vec<String>,
    /// Default value of each field.
    pub defaults: Vec<Val>,
    /// For each entry of the model's field-name table, this record's slot for it.
    pub slot_of: Vec<Option<u16>>,
}
