//! Jepsen etcd logs (Knossos-era), checked against the built-in `register` spec.
//!
//! One event per line, in real-time order: `INFO  jepsen.util - <proc> <type> <f> <value>`,
//! fields separated by tabs or runs of spaces. Process ids become thread ids.
//!
//! | line | event |
//! |---|---|
//! | `:invoke :read nil` | call `read()` |
//! | `:invoke :write n` | call `write(n)` |
//! | `:invoke :cas [a b]` | call `cas(a, b)` |
//! | `:ok :read nil` / `:ok :read n` | returns `null` / `n` |
//! | `:ok :write n` | returns `()` |
//! | `:ok :cas [a b]` | returns `true` |
//! | `:fail :cas [a b]` | returns `false` (did not take effect) |
//! | `:fail :read ...` | returns an unknown result (any value is accepted) |
//! | `:fail :write ...` | the write is removed from the history (did not take effect) |
//! | `:info ...` | ignored: the call stays pending (may or may not have taken effect) |
//!
//! An empty file (a test that did not run) is an error, not a linearizable history.

use fgvt_tree::{Call, History, Value};

use super::{event_lines, ParseError, Recorder};

/// Parses a Jepsen etcd log.
pub fn parse(text: &str) -> Result<History, ParseError> {
    parse_with_lines(text).map(|(history, _)| history)
}

/// Parses a log, with the 1-based line of each event of the history.
pub(crate) fn parse_with_lines(text: &str) -> Result<(History, Vec<usize>), ParseError> {
    let mut recorder = Recorder::default();
    for (line, raw) in event_lines(text) {
        let Some((_, rest)) = raw.split_once("jepsen.util - ") else {
            return Err(ParseError::new(
                line,
                format!(
                    "expected `INFO  jepsen.util - <process> <type> <f> <value>`, found `{}`",
                    raw.trim()
                ),
            ));
        };
        let mut fields = rest.split_whitespace();
        let (Some(process), Some(kind), Some(f)) = (fields.next(), fields.next(), fields.next())
        else {
            return Err(ParseError::new(
                line,
                "expected `<process> <type> <f> <value>` after `jepsen.util - `",
            ));
        };
        let value = fields.collect::<Vec<_>>().join(" ");
        let thread: usize = process.parse().map_err(|_| {
            ParseError::new(line, format!("process id `{process}` is not a number"))
        })?;
        match kind {
            ":invoke" => recorder.call(line, thread, invocation(line, f, &value)?)?,
            ":ok" | ":fail" => {
                let call = recorder.pending_call(line, thread, f)?;
                if format!(":{}", call.op) != f {
                    return Err(ParseError::new(
                        line,
                        format!("process {thread} completes {f} but its pending call is {call}"),
                    ));
                }
                match (kind, f) {
                    (":ok", ":read") => {
                        let v = number_or_nil(line, &value)?;
                        recorder.ret(line, thread, Some(v));
                    }
                    (":ok", ":write") => recorder.ret(line, thread, Some(Value::Unit)),
                    (":ok", _) => recorder.ret(line, thread, Some(Value::Bool(true))),
                    (_, ":read") => recorder.ret(line, thread, None),
                    (_, ":cas") => recorder.ret(line, thread, Some(Value::Bool(false))),
                    _ => recorder.withdraw(thread),
                }
            }
            ":info" => recorder.abandon(thread),
            other => {
                return Err(ParseError::new(
                    line,
                    format!("unknown event type `{other}` (expected :invoke, :ok, :fail or :info)"),
                ))
            }
        }
    }
    recorder.finish(
        text.lines().count(),
        "the file has no events; the Jepsen test probably did not run",
    )
}

/// The call of an `:invoke` line.
fn invocation(line: usize, f: &str, value: &str) -> Result<Call, ParseError> {
    match f {
        ":read" => Ok(Call::new("read", vec![])),
        ":write" => Ok(Call::new("write", vec![number(line, value)?])),
        ":cas" => {
            let inner = value.strip_prefix('[').and_then(|v| v.strip_suffix(']'));
            let parts: Vec<&str> = inner
                .map(|v| v.split_whitespace().collect())
                .unwrap_or_default();
            match parts.as_slice() {
                [a, b] => Ok(Call::new("cas", vec![number(line, a)?, number(line, b)?])),
                _ => Err(ParseError::new(
                    line,
                    format!("expected `[<from> <to>]` after :cas, found `{value}`"),
                )),
            }
        }
        other => Err(ParseError::new(
            line,
            format!("unknown operation `{other}` (expected :read, :write or :cas)"),
        )),
    }
}

fn number(line: usize, text: &str) -> Result<Value, ParseError> {
    text.parse()
        .map(Value::Int)
        .map_err(|_| ParseError::new(line, format!("expected a number, found `{text}`")))
}

fn number_or_nil(line: usize, text: &str) -> Result<Value, ParseError> {
    if text == "nil" {
        Ok(Value::Null)
    } else {
        number(line, text)
    }
}
