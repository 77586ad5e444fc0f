//! EDN-like key/value store logs, checked against the built-in `kv` spec.
//!
//! One event per line, an EDN map:
//! `{:process 0, :type :invoke, :f :append, :key "3", :value "x 0 1 y"}`.
//!
//! | `:type` | `:f` | event |
//! |---|---|---|
//! | `:invoke` | `:get` | call `get(key)` |
//! | `:invoke` | `:put` / `:append` | call `put(key, value)` / `append(key, value)` |
//! | `:ok` | `:get` | returns the string `value` (`nil` is read as `""`) |
//! | `:ok` | `:put` / `:append` | returns `()` |
//! | `:fail` | any | the call is removed (it did not take effect) |
//! | `:info` | any | the call stays pending |
//!
//! Keys and values are strings (`Value::Str`); an integer key stays an integer.

use std::borrow::Cow;

use fgvt_tree::{Call, History, Value};

use super::{event_lines, ParseError, Recorder};

/// Parses a kv log.
pub fn parse(text: &str) -> Result<History, ParseError> {
    parse_with_lines(text).map(|(history, _)| history)
}

/// Parses a log, with the 1-based line of each event of the history.
pub(crate) fn parse_with_lines(text: &str) -> Result<(History, Vec<usize>), ParseError> {
    let mut recorder = Recorder::default();
    let mut fields = Vec::new();
    for (line, raw) in event_lines(text) {
        parse_map(raw, &mut fields).map_err(|m| ParseError::new(line, m))?;
        let get = |name: &str| fields.iter().find(|(k, _)| *k == name).map(|(_, v)| v);
        let require =
            |name: &str| get(name).ok_or_else(|| ParseError::new(line, format!("missing :{name}")));
        let thread = match require("process")? {
            Edn::Int(p) if *p >= 0 => *p as usize,
            other => {
                return Err(ParseError::new(
                    line,
                    format!(":process must be a non-negative integer, found {other:?}"),
                ))
            }
        };
        let keyword = |name: &str| match require(name)? {
            Edn::Keyword(k) => Ok(*k),
            other => Err(ParseError::new(
                line,
                format!(":{name} must be a keyword, found {other:?}"),
            )),
        };
        let (kind, f) = (keyword("type")?, keyword("f")?);
        let value = get("value").unwrap_or(&Edn::Nil);
        let call = || {
            let key = match require("key")? {
                Edn::Str(s) => Value::Str((**s).into()),
                Edn::Int(i) => Value::Int(*i),
                other => {
                    return Err(ParseError::new(
                        line,
                        format!(":key must be a string or an integer, found {other:?}"),
                    ))
                }
            };
            match f {
                "get" => Ok(Call::new("get", vec![key])),
                "put" | "append" => match value {
                    Edn::Str(v) => Ok(Call::new(f, vec![key, Value::Str((**v).into())])),
                    other => Err(ParseError::new(
                        line,
                        format!(":value of :{f} must be a string, found {other:?}"),
                    )),
                },
                other => Err(ParseError::new(
                    line,
                    format!("unknown operation :{other} (expected :get, :put or :append)"),
                )),
            }
        };
        let result = |call: &Call| {
            if call.op != f {
                return Err(ParseError::new(
                    line,
                    format!("process {thread} completes :{f} but its pending call is {call}"),
                ));
            }
            match (f, value) {
                ("get", Edn::Str(s)) => Ok(Some(Value::Str((**s).into()))),
                ("get", Edn::Nil) => Ok(Some(Value::Str("".into()))),
                ("get", other) => Err(ParseError::new(
                    line,
                    format!(":value of :ok :get must be a string, found {other:?}"),
                )),
                _ => Ok(Some(Value::Unit)),
            }
        };
        recorder.jepsen_event(line, thread, (kind, f), call, result)?;
    }
    recorder.finish(text.lines().count(), "the file has no events")
}

/// An EDN scalar, as the kv format uses them, borrowed from the line where it can be (the
/// files are long, and most of their text is copied once, into the history's values).
#[derive(Clone, Debug, PartialEq, Eq)]
enum Edn<'t> {
    Nil,
    Int(i64),
    Str(Cow<'t, str>),
    Keyword(&'t str),
}

/// Parses `{:k v, :k v, ...}` into `fields`: (keyword without colon, value) pairs.
fn parse_map<'t>(text: &'t str, fields: &mut Vec<(&'t str, Edn<'t>)>) -> Result<(), String> {
    fields.clear();
    let mut cursor = Cursor {
        text: text.trim(),
        at: 0,
    };
    if !cursor.eat(b'{') {
        return Err("expected an EDN map `{:process ..., :type ..., ...}`".into());
    }
    loop {
        cursor.skip_blank();
        match cursor.peek() {
            Some(b'}') => {
                cursor.at += 1;
                break;
            }
            None => return Err("unterminated map: missing `}`".into()),
            _ => {}
        }
        let key = match cursor.atom()? {
            Edn::Keyword(k) => k,
            other => return Err(format!("expected a keyword as map key, found {other:?}")),
        };
        cursor.skip_blank();
        let value = cursor.atom()?;
        fields.push((key, value));
    }
    cursor.skip_blank();
    if let Some(c) = cursor.text[cursor.at..].chars().next() {
        return Err(format!("unexpected `{c}` after the map"));
    }
    Ok(())
}

/// A position in one line.
struct Cursor<'t> {
    text: &'t str,
    at: usize,
}

impl<'t> Cursor<'t> {
    fn peek(&self) -> Option<u8> {
        self.text.as_bytes().get(self.at).copied()
    }

    /// Steps over `byte` if it is next.
    fn eat(&mut self, byte: u8) -> bool {
        let next = self.peek() == Some(byte);
        self.at += usize::from(next);
        next
    }

    fn skip_blank(&mut self) {
        while self
            .peek()
            .is_some_and(|b| b.is_ascii_whitespace() || b == b',')
        {
            self.at += 1;
        }
    }

    /// One scalar: `nil`, an integer, a string with `\` escapes, or a keyword.
    fn atom(&mut self) -> Result<Edn<'t>, String> {
        if self.eat(b'"') {
            return self.string();
        }
        let start = self.at;
        while self
            .peek()
            .is_some_and(|b| !b.is_ascii_whitespace() && !matches!(b, b',' | b'}' | b'{' | b'"'))
        {
            self.at += 1;
        }
        let token = &self.text[start..self.at];
        if let Some(keyword) = token.strip_prefix(':') {
            return Ok(Edn::Keyword(keyword));
        }
        if token == "nil" {
            return Ok(Edn::Nil);
        }
        token.parse().map(Edn::Int).map_err(|_| {
            if token.is_empty() {
                "expected a value".to_owned()
            } else {
                format!("unexpected `{token}`")
            }
        })
    }

    /// The rest of a string whose opening quote was read: borrowed unless it has escapes.
    fn string(&mut self) -> Result<Edn<'t>, String> {
        let start = self.at;
        let rest = &self.text.as_bytes()[start..];
        let Some(end) = rest.iter().position(|&b| b == b'"' || b == b'\\') else {
            return Err("unterminated string".into());
        };
        if rest[end] == b'"' {
            self.at = start + end + 1;
            return Ok(Edn::Str(Cow::Borrowed(&self.text[start..start + end])));
        }
        let mut s = String::new();
        let mut chars = self.text[start..].char_indices();
        while let Some((i, c)) = chars.next() {
            match c {
                '"' => {
                    self.at = start + i + 1;
                    return Ok(Edn::Str(Cow::Owned(s)));
                }
                '\\' => match chars.next() {
                    Some((_, 'n')) => s.push('\n'),
                    Some((_, 't')) => s.push('\t'),
                    Some((_, c)) => s.push(c),
                    None => break,
                },
                c => s.push(c),
            }
        }
        Err("unterminated string".into())
    }
}
