//! The abstract syntax tree of a model file. Every node keeps its [`Span`].

use fgvt_memory::Order;
use fgvt_tree::Span;

/// An identifier with its position.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ident {
    /// The name.
    pub name: String,
    /// Where it is written.
    pub span: Span,
}

/// A memory ordering as written (`relaxed`, `acquire`, `release`, `acq_rel`, `seq_cst`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ordering {
    /// The ordering.
    pub order: Order,
    /// Where it is written.
    pub span: Span,
}

/// The orderings of a `cas` that declares them: `cas(x, e, n, success, failure)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CasOrders {
    /// The ordering of a `cas` that swaps (a read-modify-write).
    pub success: Ordering,
    /// The ordering of a `cas` that fails (a load).
    pub failure: Ordering,
}

/// A whole model file: its objects and its top-level records.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct File {
    /// `object Name { ... }` declarations, in order.
    pub objects: Vec<ObjectDecl>,
    /// Top-level `record Name { ... }` declarations.
    pub records: Vec<RecordDecl>,
}

/// A type as written: `int`, `bool`, a record name, or a tuple `(T, U)`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Type {
    /// A named type (`int`, `bool` or a record).
    Named(Ident),
    /// A tuple type.
    Tuple(Vec<Type>, Span),
}

/// `record Name { T f; U g, h; }`
#[derive(Clone, Debug, PartialEq)]
pub struct RecordDecl {
    /// The record's name.
    pub name: Ident,
    /// Fields in declaration order (the order `new Name(..)` takes them).
    pub fields: Vec<(Type, Ident)>,
    /// For each field, whether it is declared `final`.
    pub finals: Vec<bool>,
    /// The whole declaration.
    pub span: Span,
}

/// `object Name { ... }`
#[derive(Clone, Debug, PartialEq)]
pub struct ObjectDecl {
    /// The object's name.
    pub name: Ident,
    /// Its members in order.
    pub members: Vec<Member>,
    /// The whole declaration.
    pub span: Span,
}

/// The initializer of a shared variable.
#[derive(Clone, Debug, PartialEq)]
pub enum Init {
    /// `= e`
    Expr(Expr),
    /// `= {e1, e2, ...}` for arrays.
    List(Vec<Expr>, Span),
}

/// A member of an object.
#[derive(Clone, Debug, PartialEq)]
pub enum Member {
    /// `shared T name[len] = init;`
    Shared {
        /// Declared type (of the elements, for an array).
        ty: Type,
        /// The variable's name.
        name: Ident,
        /// The array length, for arrays.
        len: Option<(i64, Span)>,
        /// Declared `shared final`: set by its initializer or the constructor, then only read.
        is_final: bool,
        /// The initializer, if any.
        init: Option<Init>,
        /// The whole declaration.
        span: Span,
    },
    /// `lock m;` (one member per declared name).
    Lock(Ident),
    /// `constructor { ... }`
    Constructor(Block),
    /// `op name(params) { ... }` or `fn name(params) { ... }`
    Func(FuncDecl),
    /// A record declared inside the object.
    Record(RecordDecl),
}

/// A parameter: `T x` or just `x`.
#[derive(Clone, Debug, PartialEq)]
pub struct Param {
    /// The declared type, if written.
    pub ty: Option<Type>,
    /// The parameter's name.
    pub name: Ident,
}

/// An operation (`op`) or helper function (`fn`).
#[derive(Clone, Debug, PartialEq)]
pub struct FuncDecl {
    /// Whether it is an `op` (callable by tests) rather than a `fn`.
    pub is_op: bool,
    /// Its name.
    pub name: Ident,
    /// Parameters in order.
    pub params: Vec<Param>,
    /// The body.
    pub body: Block,
    /// The header `op name(...)`, used as the span of an operation's local-only step.
    pub header: Span,
}

/// `{ stmts }`
#[derive(Clone, Debug, PartialEq)]
pub struct Block {
    /// The statements.
    pub stmts: Vec<Stmt>,
    /// From `{` to `}`.
    pub span: Span,
}

/// A place that can be assigned.
#[derive(Clone, Debug, PartialEq)]
pub enum LValue {
    /// A local, parameter or shared scalar.
    Name(Ident),
    /// `a[i]` on a shared array.
    Index(Ident, Box<Expr>, Span),
    /// `e.f`
    Field(Box<Expr>, Ident, Span),
    /// `(a, b)`: destructuring.
    Tuple(Vec<LValue>, Span),
}

impl LValue {
    /// Where the place is written.
    pub fn span(&self) -> Span {
        match self {
            LValue::Name(id) => id.span,
            LValue::Index(_, _, s) | LValue::Field(_, _, s) | LValue::Tuple(_, s) => *s,
        }
    }
}

/// What a local declaration binds.
#[derive(Clone, Debug, PartialEq)]
pub enum Pattern {
    /// One name.
    Name(Ident),
    /// `(a, b)` with `var`.
    Tuple(Vec<Ident>, Span),
}

/// A statement.
#[derive(Clone, Debug, PartialEq)]
pub enum Stmt {
    /// `T x = e;`, `var x = e;`, `var (a, b) = e;`
    Local {
        /// Declared type (`None` for `var`).
        ty: Option<Type>,
        /// What is bound.
        pat: Pattern,
        /// The initializer.
        init: Option<Expr>,
        /// The whole statement without `;`.
        span: Span,
    },
    /// `place = e;`, or `place.store(e, order);` (then `order` is the ordering written).
    Assign {
        /// The target.
        target: LValue,
        /// The value.
        value: Expr,
        /// The ordering of a `.store(e, order)`; `None` for `place = e`.
        order: Option<Ordering>,
        /// The whole assignment without `;` (the span of a shared write).
        span: Span,
    },
    /// `fence(order);`
    Fence(Ordering, Span),
    /// `e;`
    Expr(Expr),
    /// `if (c) s else s`
    If {
        /// The condition.
        cond: Expr,
        /// The then branch.
        then: Box<Stmt>,
        /// The else branch.
        els: Option<Box<Stmt>>,
        /// The whole statement.
        span: Span,
    },
    /// `label: while (c) s`
    While {
        /// An optional label.
        label: Option<Ident>,
        /// The condition.
        cond: Expr,
        /// The body.
        body: Box<Stmt>,
        /// The whole statement.
        span: Span,
    },
    /// `label: loop { }`
    Loop {
        /// An optional label.
        label: Option<Ident>,
        /// The body.
        body: Block,
        /// The whole statement.
        span: Span,
    },
    /// `break label;`
    Break(Option<Ident>, Span),
    /// `continue label;`
    Continue(Option<Ident>, Span),
    /// `return e;`
    Return(Option<Expr>, Span),
    /// `{ ... }`
    Block(Block),
    /// `atomic { ... }`
    Atomic(Block, Span),
    /// `lock(m);`
    Lock(Expr, Span),
    /// `unlock(m);`
    Unlock(Expr, Span),
    /// `synchronized (m) { ... }`; the second span is the header, the third the closing `}`.
    Synchronized {
        /// The monitor.
        monitor: Expr,
        /// The body.
        body: Block,
        /// `synchronized (m)`: the span of the lock event.
        header: Span,
        /// The closing brace: the span of the unlock event.
        close: Span,
    },
    /// `await(c);`
    Await(Expr, Span),
    /// `assert(c);` or `assert(c, "message");`
    Assert(Expr, Option<String>, Span),
    /// `;`
    Empty(Span),
}

/// A binary operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinOp {
    /// `*`
    Mul,
    /// `/`
    Div,
    /// `%`
    Rem,
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
    /// `==`
    Eq,
    /// `!=`
    Ne,
    /// `&&` (short-circuit)
    And,
    /// `||` (short-circuit)
    Or,
}

/// A unary operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnOp {
    /// `-e`
    Neg,
    /// `!e`
    Not,
}

/// An expression.
#[derive(Clone, Debug, PartialEq)]
pub enum Expr {
    /// An integer literal.
    Int(i64, Span),
    /// `true` / `false`
    Bool(bool, Span),
    /// A string literal.
    Str(String, Span),
    /// `null`
    Null(Span),
    /// `this` (only as a monitor).
    This(Span),
    /// A local, parameter, shared scalar or lock name.
    Name(Ident),
    /// `a[i]` on a shared array.
    Index(Ident, Box<Expr>, Span),
    /// `e.f`
    Field(Box<Expr>, Ident, Span),
    /// `e.0`
    Proj(Box<Expr>, usize, Span),
    /// `(a, b, ...)`
    Tuple(Vec<Expr>, Span),
    /// `f(args)`
    Call(Ident, Vec<Expr>, Span),
    /// `new R(args)`
    New(Ident, Vec<Expr>, Span),
    /// `cas(loc, expected, new)`, or with orderings `cas(loc, expected, new, success,
    /// failure)`.
    Cas(Box<LValue>, Box<Expr>, Box<Expr>, Option<CasOrders>, Span),
    /// `loc.load(order)`: a read of a shared location with an explicit ordering.
    Load(Box<LValue>, Ordering, Span),
    /// `loc.store(e, order)`: only valid as a statement of its own, which the parser makes an
    /// [`Stmt::Assign`]; anywhere else the compiler rejects it.
    Store(Box<LValue>, Box<Expr>, Ordering, Span),
    /// `dcas(loc1, loc2, exp1, exp2, new1, new2)`
    Dcas(Box<[LValue; 2]>, Box<[Expr; 4]>, Span),
    /// `op e`
    Unary(UnOp, Box<Expr>, Span),
    /// `a op b`
    Binary(BinOp, Box<Expr>, Box<Expr>, Span),
}

impl Expr {
    /// Where the expression is written.
    pub fn span(&self) -> Span {
        match self {
            Expr::Int(_, s)
            | Expr::Bool(_, s)
            | Expr::Str(_, s)
            | Expr::Null(s)
            | Expr::This(s)
            | Expr::Index(_, _, s)
            | Expr::Field(_, _, s)
            | Expr::Proj(_, _, s)
            | Expr::Tuple(_, s)
            | Expr::Call(_, _, s)
            | Expr::New(_, _, s)
            | Expr::Cas(_, _, _, _, s)
            | Expr::Load(_, _, s)
            | Expr::Store(_, _, _, s)
            | Expr::Dcas(_, _, s)
            | Expr::Unary(_, _, s)
            | Expr::Binary(_, _, _, s) => *s,
            Expr::Name(id) => id.span,
        }
    }
}
