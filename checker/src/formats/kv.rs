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

use fgvt_tree::{Call, History, Value};

use super::{event_lines, ParseError, Recorder};

/// Parses a kv log.
pub fn parse(text: &str) -> Result<History, ParseError> {
    parse_with_lines(text).map(|(history, _)| history)
}

/// Parses a log, with the 1-based line of each event of the history.
pub(crate) fn parse_with_lines(text: &str) -> Result<(History, Vec<usize>), ParseError> {
    let mut recorder = Recorder::default();
    for (line, raw) in event_lines(text) {
        let fields = parse_map(raw).map_err(|m| ParseError::new(line, m))?;
        let get = |name: &str| fields.iter().find(|(k, _)| k == name).map(|(_, v)| v);
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
            Edn::Keyword(k) => Ok(k.as_str()),
            other => Err(ParseError::new(
                line,
                format!(":{name} must be a keyword, found {other:?}"),
            )),
        };
        let (kind, f) = (keyword("type")?, keyword("f")?);
        let value = get("value").unwrap_or(&Edn::Nil);
        let call = || {
            let key = match require("key")? {
                Edn::Str(s) => Value::Str(s.as_str().into()),
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
                    Edn::Str(v) => Ok(Call::new(f, vec![key, Value::Str(v.as_str().into())])),
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
                ("get", Edn::Str(s)) => Ok(Some(Value::Str(s.as_str().into()))),
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

/// An EDN scalar, as the kv format uses them.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Edn {
    Nil,
    Int(i64),
    Str(String),
    Keyword(String),
}

/// Parses `{:k v, :k v, ...}` into (keyword without colon, value) pairs.
fn parse_map(text: &str) -> Result<Vec<(String, Edn)>, String> {
    let mut chars = text.trim().chars().peekable();
    if chars.next() != Some('{') {
        return Err("expected an EDN map `{:process ..., :type ..., ...}`".into());
    }
    let mut fields = Vec::new();
    loop {
        skip_blank(&mut chars);
        match chars.peek() {
            Some('}') => {
                chars.next();
                break;
            }
            None => return Err("unterminated map: missing `}`".into()),
            _ => {}
        }
        let key = match atom(&mut chars)? {
            Edn::Keyword(k) => k,
            other => return Err(format!("expected a keyword as map key, found {other:?}")),
        };
        skip_blank(&mut chars);
        let value = atom(&mut chars)?;
        fields.push((key, value));
    }
    skip_blank(&mut chars);
    if let Some(c) = chars.next() {
        return Err(format!("unexpected `{c}` after the map"));
    }
    Ok(fields)
}

fn skip_blank(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) {
    while chars.next_if(|c| c.is_whitespace() || *c == ',').is_some() {}
}

/// One scalar: `nil`, an integer, a string with `\` escapes, or a keyword.
fn atom(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) -> Result<Edn, String> {
    if chars.next_if_eq(&'"').is_some() {
        let mut s = String::new();
        loop {
            match chars.next() {
                Some('"') => return Ok(Edn::Str(s)),
                Some('\\') => match chars.next() {
                    Some('n') => s.push('\n'),
                    Some('t') => s.push('\t'),
                    Some(c) => s.push(c),
                    None => return Err("unterminated string".into()),
                },
                Some(c) => s.push(c),
                None => return Err("unterminated string".into()),
            }
        }
    }
    let mut token = String::new();
    while let Some(c) = chars.next_if(|c| !c.is_whitespace() && !matches!(c, ',' | '}' | '{' | '"'))
    {
        token.push(c);
    }
    if let Some(keyword) = token.strip_prefix(':') {
        return Ok(Edn::Keyword(keyword.to_owned()));
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
