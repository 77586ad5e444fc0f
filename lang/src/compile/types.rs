//! Declared types, checked where the compiler can tell an expression's type without running
//! it: `int n = new Node(1)` is an error at load time, not a surprise in a report.
//!
//! Values are typed at run time; this check is deliberately partial. It knows literals,
//! operators, `new`, tuples of those, and names declared with a type (typed locals and shared
//! scalars); anything else (a field read, a call) is unknown and accepted.

use super::*;

/// A type as the check sees it: what a declaration says, or what an expression surely is.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Shape {
    Int,
    Bool,
    Str,
    /// `null`: any reference or string.
    Null,
    /// A reference to a record of this name.
    Record(String),
    /// A tuple; `None` for an item whose type is unknown.
    Tuple(Vec<Option<Shape>>),
}

impl Shape {
    /// The shape a declared type names (`None` for a name that is not a type: resolution
    /// reports that).
    pub(super) fn declared(ty: &Type) -> Option<Shape> {
        match ty {
            Type::Named(id) => match id.name.as_str() {
                "int" => Some(Shape::Int),
                "bool" | "boolean" => Some(Shape::Bool),
                "string" | "String" => Some(Shape::Str),
                name => Some(Shape::Record(name.to_owned())),
            },
            Type::Tuple(items, _) => {
                Some(Shape::Tuple(items.iter().map(Shape::declared).collect()))
            }
        }
    }

    /// Whether a value of shape `value` may be stored where `self` is declared.
    fn accepts(&self, value: &Shape) -> bool {
        match (self, value) {
            (Shape::Int, Shape::Int) | (Shape::Bool, Shape::Bool) | (Shape::Str, Shape::Str) => {
                true
            }
            (Shape::Str | Shape::Record(_), Shape::Null) => true,
            (Shape::Record(a), Shape::Record(b)) => a == b,
            (Shape::Tuple(d), Shape::Tuple(v)) => {
                d.len() == v.len()
                    && d.iter().zip(v).all(|pair| match pair {
                        (Some(d), Some(v)) => d.accepts(v),
                        _ => true,
                    })
            }
            _ => false,
        }
    }

    /// The type as a declaration writes it: `int`, `Node`, `(int, bool)`.
    fn name(&self) -> String {
        match self {
            Shape::Int => "int".into(),
            Shape::Bool => "bool".into(),
            Shape::Str => "string".into(),
            Shape::Null => "null".into(),
            Shape::Record(r) => r.clone(),
            Shape::Tuple(items) => {
                let items: Vec<String> = items
                    .iter()
                    .map(|i| i.as_ref().map_or_else(|| "?".into(), Shape::name))
                    .collect();
                format!("({})", items.join(", "))
            }
        }
    }

    /// For messages: "an int", "a `Node` reference", ...
    fn describe(&self) -> String {
        match self {
            Shape::Int => "an int".into(),
            Shape::Bool => "a bool".into(),
            Shape::Str => "a string".into(),
            Shape::Null => "null".into(),
            Shape::Record(r) => format!("a `{r}` reference"),
            Shape::Tuple(items) => format!("a {}-tuple", items.len()),
        }
    }
}

impl Compiler<'_> {
    /// What `e` surely is, if the compiler can tell.
    pub(super) fn known_shape(&self, e: &Expr) -> Option<Shape> {
        match e {
            Expr::Int(..) => Some(Shape::Int),
            Expr::Bool(..) => Some(Shape::Bool),
            Expr::Str(..) => Some(Shape::Str),
            Expr::Null(_) => Some(Shape::Null),
            Expr::New(record, ..) => Some(Shape::Record(record.name.clone())),
            Expr::Tuple(items, _) => Some(Shape::Tuple(
                items.iter().map(|e| self.known_shape(e)).collect(),
            )),
            Expr::Unary(UnOp::Neg, ..) => Some(Shape::Int),
            Expr::Unary(UnOp::Not, ..) | Expr::Cas(..) | Expr::Dcas(..) => Some(Shape::Bool),
            Expr::Binary(op, ..) => Some(match op {
                BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div | BinOp::Rem => Shape::Int,
                _ => Shape::Bool,
            }),
            Expr::Name(id) => self.declared_shape(&id.name),
            _ => None,
        }
    }

    /// The declared shape of a local or shared scalar named `name`, if it was declared with a
    /// type.
    fn declared_shape(&self, name: &str) -> Option<Shape> {
        match self.lookup_local(name) {
            Some(slot) => self.cx.local_shapes.get(&slot).cloned(),
            None => self.scalar_shapes.get(name).cloned(),
        }
    }

    /// An error if `value`, assigned to the variable `target`, surely does not fit its declared
    /// type.
    pub(super) fn check_assignment(&self, target: &Ident, value: &Expr) -> Result<(), Diag> {
        match self.declared_shape(&target.name) {
            Some(declared) => self.check_fits(&declared, &target.name, value),
            None => Ok(()),
        }
    }

    /// An error if `value` surely does not fit `declared`, the type of the variable `name`.
    pub(super) fn check_fits(
        &self,
        declared: &Shape,
        name: &str,
        value: &Expr,
    ) -> Result<(), Diag> {
        match self.known_shape(value) {
            Some(shape) if !declared.accepts(&shape) => Err(Diag::new(
                ErrorKind::Invalid,
                value.span(),
                format!(
                    "`{name}` is declared `{}` but is given {}",
                    declared.name(),
                    shape.describe()
                ),
                format!("this is {}", shape.describe()),
            )
            .help(format!(
                "give it {} or change its declared type",
                describe_declared(declared)
            ))),
            _ => Ok(()),
        }
    }
}

/// "an int", "a `Node` reference or null", ... for help lines.
fn describe_declared(declared: &Shape) -> String {
    match declared {
        Shape::Record(_) | Shape::Str => format!("{} or null", declared.describe()),
        other => other.describe(),
    }
}
