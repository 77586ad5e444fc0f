//! The calls a test writes, like `write(0, 2)`: parsed with the model's own expression syntax.

use fgvt_tree::{Call, Value};

use super::ast::Expr;
use super::parser::Parser;

/// Parses a call written in a test, like `write(0, 2)` or `add((1, true))`: literal arguments
/// only (integers, negative integers, `true`/`false`, `null`, tuples, double-quoted strings).
/// `Err` gives the byte offset within `text` and a message.
pub fn parse_call(text: &str) -> Result<Call, (usize, String)> {
    let err = |d: super::error::Diag| (d.span.start as usize, d.message);
    let mut p = Parser::new(0, text).map_err(err)?;
    let e = p.expr().map_err(err)?;
    if !p.at_end() {
        return Err((p.offset(), "unexpected text after the call".into()));
    }
    let Expr::Call(name, args, _) = e else {
        return Err((
            e.span().start as usize,
            "expected a call like `op(1, 2)`".into(),
        ));
    };
    let args = args.iter().map(literal).collect::<Result<Vec<_>, _>>()?;
    Ok(Call::new(name.name, args))
}

/// The value of a literal argument.
fn literal(e: &Expr) -> Result<Value, (usize, String)> {
    match e {
        Expr::Int(v, _) => Ok(Value::Int(*v)),
        Expr::Bool(b, _) => Ok(Value::Bool(*b)),
        Expr::Null(_) => Ok(Value::Null),
        Expr::Str(s, _) => Ok(Value::Str(s.as_str().into())),
        Expr::Tuple(items, _) => Ok(Value::Tuple(
            items.iter().map(literal).collect::<Result<_, _>>()?,
        )),
        other => Err((
            other.span().start as usize,
            "arguments must be literals: integers, `true`, `false`, `null`, strings or tuples"
                .into(),
        )),
    }
}
