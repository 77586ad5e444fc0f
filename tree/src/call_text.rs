//! Calls as tests write them: `write(0, 2)`, `add((1, true), null, "k v")`.
//!
//! A test file, a Rust test and a hunt all name operations this way, so the parser lives with
//! [`Call`] rather than in the modeling language: a Rust object under `fgvt-sync` needs it
//! without the language's compiler.

use crate::history::Call;
use crate::value::Value;

/// Deepest nesting of tuples in a call's arguments: deeper text is refused rather than risking
/// the stack.
const MAX_CALL_NESTING: usize = 128;

/// Why a call's text does not parse, and where.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("at byte {offset}: {message}")]
pub struct CallSyntaxError {
    /// Byte offset in the text where the problem is.
    pub offset: usize,
    /// What is wrong there.
    pub message: String,
}

/// Parses a call: an operation name and literal arguments (integers, `true`, `false`, `null`,
/// double-quoted strings with `\"`, `\\`, `\n` and `\t` escapes, and parenthesized tuples).
///
/// ```
/// use fgvt_tree::{parse_call, Call, Value};
///
/// let call = parse_call("write(0, -2)").unwrap();
/// assert_eq!(call, Call::new("write", vec![Value::Int(0), Value::Int(-2)]));
/// assert_eq!(parse_call("write(0, x)").unwrap_err().offset, 9);
/// ```
pub fn parse_call(text: &str) -> Result<Call, CallSyntaxError> {
    let mut p = Cursor { text, at: 0 };
    p.blank();
    let name = p.name()?;
    p.blank();
    p.expect(b'(', "expected `(` after the operation name")?;
    let args = p.items(b')', 1)?;
    p.blank();
    if p.at < text.len() {
        return Err(p.error("unexpected text after the call"));
    }
    Ok(Call::new(name, args))
}

/// A position in the text being parsed.
struct Cursor<'a> {
    text: &'a str,
    at: usize,
}

impl<'a> Cursor<'a> {
    fn error(&self, message: &str) -> CallSyntaxError {
        CallSyntaxError {
            offset: self.at,
            message: message.to_string(),
        }
    }

    fn peek(&self) -> Option<u8> {
        self.text.as_bytes().get(self.at).copied()
    }

    /// Skips whitespace.
    fn blank(&mut self) {
        while self.peek().is_some_and(|b| b.is_ascii_whitespace()) {
            self.at += 1;
        }
    }

    fn expect(&mut self, byte: u8, message: &str) -> Result<(), CallSyntaxError> {
        if self.peek() == Some(byte) {
            self.at += 1;
            Ok(())
        } else {
            Err(self.error(message))
        }
    }

    /// An identifier: a letter or `_`, then letters, digits and `_`.
    fn name(&mut self) -> Result<&'a str, CallSyntaxError> {
        let start = self.at;
        if !self
            .peek()
            .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
        {
            return Err(self.error("expected an operation name, like `write(0, 2)`"));
        }
        while self
            .peek()
            .is_some_and(|b| b.is_ascii_alphanumeric() || b == b'_')
        {
            self.at += 1;
        }
        Ok(&self.text[start..self.at])
    }

    /// Comma-separated values up to `close` (the opening parenthesis already read), at
    /// nesting `depth`.
    fn items(&mut self, close: u8, depth: usize) -> Result<Vec<Value>, CallSyntaxError> {
        let mut items = Vec::new();
        self.blank();
        if self.peek() == Some(close) {
            self.at += 1;
            return Ok(items);
        }
        loop {
            items.push(self.value(depth)?);
            self.blank();
            match self.peek() {
                Some(b',') => self.at += 1,
                Some(b) if b == close => {
                    self.at += 1;
                    return Ok(items);
                }
                _ => return Err(self.error("expected `,` or `)`")),
            }
        }
    }

    /// One literal argument.
    fn value(&mut self, depth: usize) -> Result<Value, CallSyntaxError> {
        self.blank();
        match self.peek() {
            Some(b'(') => {
                if depth >= MAX_CALL_NESTING {
                    return Err(
                        self.error(&format!("nested more than {MAX_CALL_NESTING} levels deep"))
                    );
                }
                self.at += 1;
                let items = self.items(b')', depth + 1)?;
                Ok(match <[Value; 1]>::try_from(items) {
                    // `(x)` is x in parentheses, as in an expression, not a tuple of one.
                    Ok([one]) => one,
                    Err(items) => Value::Tuple(items),
                })
            }
            Some(b'"') => self.string(),
            Some(b'-' | b'0'..=b'9') => self.integer(),
            Some(b) if b.is_ascii_alphabetic() || b == b'_' => {
                let start = self.at;
                match self.name()? {
                    "true" => Ok(Value::Bool(true)),
                    "false" => Ok(Value::Bool(false)),
                    "null" => Ok(Value::Null),
                    _ => {
                        self.at = start;
                        Err(self.error(LITERALS))
                    }
                }
            }
            _ => Err(self.error(&format!("expected an argument: {LITERALS}"))),
        }
    }

    /// An integer, possibly negative.
    fn integer(&mut self) -> Result<Value, CallSyntaxError> {
        let start = self.at;
        let negative = self.peek() == Some(b'-');
        if negative {
            self.at += 1;
            self.blank();
        }
        let digits = self.at;
        while self.peek().is_some_and(|b| b.is_ascii_digit()) {
            self.at += 1;
        }
        if digits == self.at {
            return Err(self.error("expected digits"));
        }
        let text = &self.text[digits..self.at];
        let magnitude: i128 = text.parse().unwrap_or(i128::MAX);
        let value = if negative { -magnitude } else { magnitude };
        Value::integer(value).ok_or_else(|| CallSyntaxError {
            offset: start,
            message: "the integer does not fit in 64 bits".into(),
        })
    }

    /// A double-quoted string.
    fn string(&mut self) -> Result<Value, CallSyntaxError> {
        let body = self.at + 1;
        let mut chars = self.text[body..].char_indices();
        while let Some((i, c)) = chars.next() {
            match c {
                '"' => {
                    self.at = body + i + 1;
                    return Ok(Value::Str(unescape(&self.text[body..body + i]).into()));
                }
                '\\' if chars.next().is_none() => break,
                '\n' => break,
                _ => {}
            }
        }
        Err(self.error("unterminated string: it needs a closing `\"` on the same line"))
    }
}

/// The text of a double-quoted string between its quotes, escapes resolved: `\n` and `\t`,
/// and a backslash before any other character stands for that character (`\"`, `\\`). Test
/// calls and model literals share it, so a string means the same in both.
pub fn unescape(inner: &str) -> String {
    let mut out = String::with_capacity(inner.len());
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.next() {
                Some('n') => out.push('\n'),
                Some('t') => out.push('\t'),
                Some(other) => out.push(other),
                None => {}
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// What an argument may be.
const LITERALS: &str =
    "arguments must be literals: integers, `true`, `false`, `null`, strings or tuples";

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn int(n: i64) -> Value {
        Value::Int(n)
    }

    #[test]
    fn literals_of_every_kind() {
        assert_eq!(
            parse_call(r#" add ( (1, true) , null, "k \"v\"", - 3, (7) ) "#).unwrap(),
            Call::new(
                "add",
                vec![
                    Value::Tuple(vec![int(1), Value::Bool(true)]),
                    Value::Null,
                    Value::Str("k \"v\"".into()),
                    int(-3),
                    int(7),
                ]
            )
        );
        assert_eq!(parse_call("read()").unwrap(), Call::new("read", vec![]));
        assert_eq!(
            parse_call("f(())").unwrap(),
            Call::new("f", vec![Value::Tuple(vec![])])
        );
    }

    #[test]
    fn errors_point_at_the_problem() {
        let at = |text: &str| parse_call(text).unwrap_err().offset;
        assert_eq!(at("write(0, x)"), 9);
        assert_eq!(at("write(0, 1) x"), 12);
        assert_eq!(at("write(0,"), 8);
        assert_eq!(at("(0)"), 0);
        assert_eq!(at("w 0"), 2);
        assert_eq!(at(r#"w("abc)"#), 2);
        assert_eq!(at("w(99999999999999999999)"), 2);
        assert_eq!(
            parse_call("w(-9223372036854775808)").unwrap(),
            Call::new("w", vec![int(i64::MIN)])
        );
        let deep = format!("get({}1{})", "(".repeat(200_000), ")".repeat(200_000));
        let message = parse_call(&deep).unwrap_err().message;
        assert!(message.starts_with("nested more than"), "{message}");
    }

    proptest! {
        /// A call printed by `Call`'s `Display` parses back to itself.
        #[test]
        fn display_round_trips(
            name in "[a-z_][a-z0-9_]{0,8}",
            args in proptest::collection::vec(
                prop_oneof![
                    any::<i64>().prop_map(Value::Int),
                    any::<bool>().prop_map(Value::Bool),
                    Just(Value::Null),
                    "[a-z \"\\\\]{0,6}".prop_map(|s| Value::Str(s.into())),
                ],
                0..4,
            ),
        ) {
            let call = Call::new(name, args);
            prop_assert_eq!(parse_call(&call.to_string()).unwrap(), call);
        }

        /// Any text parses or fails at an offset inside it, never panicking.
        #[test]
        fn errors_stay_inside_the_text(text in "[a-z(),\"0-9 -]{0,40}|\\PC{0,40}") {
            if let Err(e) = parse_call(&text) {
                prop_assert!(e.offset <= text.len());
            }
        }
    }
}
