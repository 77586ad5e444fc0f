//! fgvt's own JSON history format, `fgvt.history/1`.
//!
//! ```json
//! {
//!   "schema": "fgvt.history/1",
//!   "spec": "queue",
//!   "stuck": false,
//!   "events": [
//!     {"type": "call", "thread": 0, "op": "offer", "args": [1]},
//!     {"type": "call", "thread": 1, "op": "poll"},
//!     {"type": "return", "thread": 0, "value": true},
//!     {"type": "return", "thread": 1, "value": null},
//!     {"type": "call", "thread": 0, "op": "size"},
//!     {"type": "return", "thread": 0, "unknown": true}
//!   ]
//! }
//! ```
//!
//! * `schema`: optional; if present it must be `"fgvt.history/1"`.
//! * `spec`: optional; the name of the spec to check against (a [built-in](mod@crate::builtin) name,
//!   or whatever the caller resolves, e.g. `"self"`).
//! * `initial`: optional; the spec's initial state when it is not the spec's own, as
//!   [`BuiltinSpec::state_of`](crate::BuiltinSpec::state_of) reads it: `0` for a register,
//!   `[1, 2]` for a queue (head first), `[["k", "v"]]` (pairs) for a kv store or map.
//! * `stuck`: optional, default `false`: the execution ended with every remaining operation
//!   blocked, so every pending operation must block (Line-Up's generalized linearizability).
//! * `events`: in real-time order. A thread has at most one operation pending at a time; a call
//!   without a return is pending.
//!   * `{"type": "call", "thread": <non-negative integer>, "op": "<name>", "args": [<value>...]}`;
//!     `args` may be omitted when empty.
//!   * `{"type": "return", "thread": <n>, "value": <value>}`: the pending call of `thread`
//!     returns. **`value` omitted means the operation returned nothing (`()`, unit)**;
//!     `"value": null` means it returned `null`. `"unknown": true` (and no `value`) means the
//!     result is unknown and any result is accepted.
//! * Values: integers → `Int` (other numbers are an error), `true`/`false` → `Bool`, `null` →
//!   `Null`, strings → `Str`, arrays → `Tuple`, `{"ref": n}` → a heap reference `#n`,
//!   `{"unit": true}` → `()` (only needed inside `args` or a tuple).
//!
//! [`to_json`] writes this format, one event per line.

use std::fmt;

use fgvt_tree::{Call, CoarseEvent, History, Value};
use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::value::RawValue;

use super::{ParseError, Parsed};

/// The schema id of this format.
pub const SCHEMA: &str = "fgvt.history/1";

#[derive(Deserialize)]
struct JsonHistory<'a> {
    schema: Option<String>,
    /// Kept raw to know its line.
    #[serde(borrow)]
    spec: Option<&'a RawValue>,
    #[serde(default)]
    stuck: bool,
    /// Kept raw to know its line.
    #[serde(borrow)]
    initial: Option<&'a RawValue>,
    #[serde(borrow)]
    events: Vec<&'a RawValue>,
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
enum JsonEvent {
    Call {
        thread: usize,
        op: String,
        #[serde(default)]
        args: Vec<JsonValue>,
    },
    Return {
        thread: usize,
        #[serde(default, deserialize_with = "present")]
        value: Option<JsonValue>,
        #[serde(default)]
        unknown: bool,
    },
}

/// A [`Value`] read from JSON.
struct JsonValue(Value);

/// Deserializes a field that is present (even as `null`) into `Some`.
fn present<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<JsonValue>, D::Error> {
    JsonValue::deserialize(deserializer).map(Some)
}

impl<'de> Deserialize<'de> for JsonValue {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(ValueVisitor).map(JsonValue)
    }
}

struct ValueVisitor;

impl<'de> Visitor<'de> for ValueVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an integer, boolean, null, string, array, {\"ref\": n} or {\"unit\": true}")
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Value, E> {
        Ok(Value::Int(v))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Value, E> {
        i64::try_from(v)
            .map(Value::Int)
            .map_err(|_| E::custom(format!("integer {v} is too large")))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Value, E> {
        Err(E::custom(format!("{v} is not an integer")))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Value, E> {
        Ok(Value::Str(v.into()))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(JsonValue(v)) = seq.next_element()? {
            items.push(v);
        }
        Ok(Value::Tuple(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let Some(key) = map.next_key::<String>()? else {
            return Err(de::Error::custom("an empty object is not a value"));
        };
        let value = match key.as_str() {
            "ref" => Value::Ref(map.next_value()?),
            "unit" => {
                let _: serde::de::IgnoredAny = map.next_value()?;
                Value::Unit
            }
            other => {
                return Err(de::Error::custom(format!(
                    "unknown value object key `{other}` (expected `ref` or `unit`)"
                )))
            }
        };
        if map.next_key::<String>()?.is_some() {
            return Err(de::Error::custom("a value object has exactly one key"));
        }
        Ok(value)
    }
}

/// Parses an `fgvt.history/1` document.
pub fn parse(text: &str) -> Result<Parsed, ParseError> {
    let doc: JsonHistory<'_> = serde_json::from_str(text).map_err(|e| serde_error(&e, (1, 1)))?;
    if let Some(schema) = &doc.schema {
        if schema != SCHEMA {
            return Err(ParseError::new(
                1,
                format!("unsupported schema `{schema}` (expected `{SCHEMA}`)"),
            ));
        }
    }
    let (spec, spec_line) = match doc.spec {
        None => (None, None),
        Some(raw) => {
            let (name, line) = read_part::<String>(text, raw)?;
            (Some(name), Some(line))
        }
    };
    let mut history = History {
        events: Vec::with_capacity(doc.events.len()),
        stuck: doc.stuck,
    };
    let mut lines = Vec::with_capacity(doc.events.len());
    let mut pending = std::collections::HashSet::new();
    for raw in &doc.events {
        let (event, line) = read_part::<JsonEvent>(text, raw)?;
        lines.push(line);
        match event {
            JsonEvent::Call { thread, op, args } => {
                if !pending.insert(thread) {
                    return Err(ParseError::new(
                        line,
                        format!(
                            "thread {thread} calls `{op}` while its previous call is still pending"
                        ),
                    ));
                }
                history.call(
                    thread,
                    Call::new(op, args.into_iter().map(|JsonValue(v)| v).collect()),
                );
            }
            JsonEvent::Return {
                thread,
                value,
                unknown,
            } => {
                if !pending.remove(&thread) {
                    return Err(ParseError::new(
                        line,
                        format!("thread {thread} returns with no pending call"),
                    ));
                }
                let value = match (value, unknown) {
                    (Some(_), true) => {
                        return Err(ParseError::new(
                            line,
                            "a return has either `value` or `\"unknown\": true`, not both",
                        ))
                    }
                    (Some(JsonValue(v)), false) => Some(v),
                    (None, false) => Some(Value::Unit),
                    (None, true) => None,
                };
                history.events.push(CoarseEvent::Return { thread, value });
            }
        }
    }
    let initial = match doc.initial {
        None => None,
        Some(raw) => {
            let (JsonValue(value), line) = read_part(text, raw)?;
            Some((value, line))
        }
    };
    Ok(Parsed {
        history,
        spec,
        lines,
        spec_line,
        initial,
    })
}

/// `raw`, a part of `text`, read as a `T`, with the 1-based line it starts on; its errors
/// point at their line and column in `text`.
fn read_part<T: de::DeserializeOwned>(
    text: &str,
    raw: &RawValue,
) -> Result<(T, usize), ParseError> {
    let at = position_of(text, raw.get());
    let value = serde_json::from_str(raw.get()).map_err(|e| serde_error(&e, at))?;
    Ok((value, at.0))
}

/// The 1-based line and column of `slice`, a sub-slice of `text`.
fn position_of(text: &str, slice: &str) -> (usize, usize) {
    let offset = (slice.as_ptr() as usize)
        .saturating_sub(text.as_ptr() as usize)
        .min(text.len());
    fgvt_tree::source::line_column(text, offset)
}

/// A serde error inside a document that starts at 1-based (`line`, `column`) of the file, with
/// serde's own " at line L column C" moved into the position.
fn serde_error(e: &serde_json::Error, (line, column): (usize, usize)) -> ParseError {
    let message = e.to_string();
    let message = match message.rfind(" at line ") {
        Some(cut) if e.line() > 0 => message[..cut].to_owned(),
        _ => message,
    };
    let (at_line, at_column) = (e.line().max(1), e.column().max(1));
    ParseError {
        line: line + at_line - 1,
        column: Some(if at_line == 1 {
            column + at_column - 1
        } else {
            at_column
        }),
        message,
    }
}

/// The format's reference: the fields of a document and of its events, and how values read.
/// Rendered into `docs/history-format.md` by [`reference_markdown`].
pub const REFERENCE: &str = r#"| field | required | meaning |
|---|---|---|
| `schema` | no | if present, `"fgvt.history/1"` |
| `spec` | no | the spec to check against: a built-in name (see `docs/specs.md`), or a model `file.fgv#Object` passed with `--spec`; `fgvt check-history --spec NAME` overrides it |
| `initial` | no | a built-in spec's initial state, when it is not the spec's own: `0` for a register, `[1, 2]` for a queue (head first), `[["k", "v"]]` (key/value pairs) for a kv store or map; `fgvt check-history --initial EDN` overrides it |
| `stuck` | no (`false`) | the execution ended with every remaining operation blocked, so each pending operation must block in the spec (Line-Up's generalized linearizability) |
| `events` | yes | calls and returns in real-time order; a thread has at most one operation pending; a call without a return is pending (it may or may not have taken effect) |

| event | meaning |
|---|---|
| `{"type": "call", "thread": n, "op": "name", "args": [v, ...]}` | thread `n` (a non-negative integer) calls `name`; `args` may be omitted when empty |
| `{"type": "return", "thread": n, "value": v}` | the pending call of thread `n` returns `v` |
| `{"type": "return", "thread": n}` | it returns nothing: `()`, unit (not `null`: `"value": null` means it returned `null`) |
| `{"type": "return", "thread": n, "unknown": true}` | its result is unknown: any result is accepted |

| JSON value | fgvt value |
|---|---|
| an integer | an integer (other numbers are an error) |
| `true`, `false` | a boolean |
| `null` | `null` |
| a string | a string |
| an array | a tuple, e.g. `(1, 2)` for `[1, 2]` |
| `{"ref": n}` | a heap reference `#n` |
| `{"unit": true}` | `()`, where a value must be written (inside `args` or a tuple) |

Errors name the file, the line and the column of the offending event, and exit 2."#;

/// `docs/history-format.md`: [`REFERENCE`], an example written by [`to_json`] (which
/// [`parse`] reads back: a test checks both), and how Jepsen EDN is read
/// ([`edn::REFERENCE`](super::edn::REFERENCE)).
pub fn reference_markdown(example: &History) -> String {
    let intro = "`fgvt check-history` reads recorded histories: Jepsen etcd logs, kv logs and \
                 Jepsen EDN operation maps (register, queue, mutex, set or multi-register, the \
                 model inferred from the operations; see *Jepsen EDN* below), detected from \
                 how they open (past `;` comments), and fgvt's own JSON format, described here, \
                 which any harness can write. `--input-format json|jepsen|kv|edn` forces the \
                 format.";
    let example_intro = "A push and a pop that overlap, the pop returning the pushed value, \
                         checked with `fgvt check-history example.json`:";
    format!(
        "# The `fgvt.history/1` format\n\n\
         <!-- Generated by `fgvt_checker::formats::json::reference_markdown`; do not edit. \
         `FGVT_BLESS=1 cargo test -p fgvt-checker --test docs` rewrites it. -->\n\n\
         {intro}\n\n{REFERENCE}\n\n## Example\n\n{example_intro}\n\n```json\n{}```\n\n\
         ## Jepsen EDN\n\n{}\n",
        to_json(example, Some("stack")),
        super::edn::REFERENCE
    )
}

/// Writes `history` as an `fgvt.history/1` document, one event per line.
pub fn to_json(history: &History, spec: Option<&str>) -> String {
    let mut out = format!("{{\"schema\": \"{SCHEMA}\"");
    if let Some(spec) = spec {
        out.push_str(&format!(", \"spec\": {}", serde_json::Value::from(spec)));
    }
    if history.stuck {
        out.push_str(", \"stuck\": true");
    }
    out.push_str(", \"events\": [");
    for (i, event) in history.events.iter().enumerate() {
        out.push_str(if i == 0 { "\n  " } else { ",\n  " });
        let json = match event {
            CoarseEvent::Call { thread, call, .. } => {
                let args: Vec<_> = call.args.iter().map(to_value).collect();
                serde_json::json!({"type": "call", "thread": thread, "op": call.op, "args": args})
            }
            CoarseEvent::Return {
                thread,
                value: Some(Value::Unit),
            } => serde_json::json!({"type": "return", "thread": thread}),
            CoarseEvent::Return {
                thread,
                value: Some(v),
            } => serde_json::json!({"type": "return", "thread": thread, "value": to_value(v)}),
            CoarseEvent::Return {
                thread,
                value: None,
            } => serde_json::json!({"type": "return", "thread": thread, "unknown": true}),
        };
        out.push_str(&json.to_string());
    }
    out.push_str("\n]}\n");
    out
}

fn to_value(v: &Value) -> serde_json::Value {
    match v {
        Value::Unit => serde_json::json!({"unit": true}),
        Value::Null => serde_json::Value::Null,
        Value::Bool(b) => (*b).into(),
        Value::Int(i) => (*i).into(),
        Value::Nat(n) => (*n).into(),
        Value::Str(s) => (**s).into(),
        Value::Ref(r) => serde_json::json!({"ref": r}),
        Value::Tuple(items) => items.iter().map(to_value).collect(),
    }
}
