//! Jepsen histories in EDN: operation maps, one per line or spread over several lines, bare
//! or in one top-level vector `[…]` or list `(…)`, with `;` comments anywhere.
//!
//! ```edn
//! ; a cas that took effect
//! {:type :invoke, :f :cas, :value [1 2], :process 3, :time 12, :index 7}
//! {:type :ok,     :f :cas, :value [1 2], :process 3, :time 19, :index 8}
//! ```
//!
//! | `:type` | event |
//! |---|---|
//! | `:invoke` | the process calls `:f` |
//! | `:ok` | the call returns (`:value` is the result where the model has one) |
//! | `:fail` | the call did not happen: it is removed |
//! | `:info` | the call may or may not have happened: it stays pending forever |
//!
//! Operations of processes that are not integers (`:nemesis`) are skipped; `:time`, `:index`,
//! `:error` and any other key are ignored (the file's order is real-time order). A history
//! whose every operation failed, or that holds only the nemesis's, is empty, and linearizable;
//! a file with no operation map at all is an error. The model is inferred from the
//! operations' names unless the caller names a spec:
//!
//! | model | operations | calls |
//! |---|---|---|
//! | `register` (cas-register) | `:read`, `:write v`, `:cas [a b]` | `read()` → value, `write(v)`, `cas(a, b)` → `true` |
//! | `queue` (fifo) | `:enqueue v`, `:dequeue` | `enqueue(v)`, `dequeue()` → value |
//! | `mutex` | `:acquire`, `:release` | `acquire()`, `release()` |
//! | `set` | `:add v`, `:read` | `add(v)` (result not recorded), `read()` → every element |
//! | `multi-register` | `:txn [[:read k nil] [:write k v] ...]` | `txn(steps)` → the steps with the reads' values |
//!
//! Values: `nil` → `null`, integers, booleans, strings, keywords (as `:name` strings), vectors
//! and lists → tuples, sets → sorted tuples. The EDN itself is read by the `edn-format`
//! crate; this module finds where each operation starts (for positions in errors) and bounds
//! the nesting before handing text to it.

/// How Jepsen EDN histories are read, for `docs/history-format.md` (Markdown).
pub const REFERENCE: &str = r#"Operation maps as Jepsen records them, in any of the shapes it writes: one map per line or
several on a line, maps spread over several lines, bare or in one top-level vector `[…]` or list
`(…)`, with `;` comments anywhere. Only `:type`, `:f`, `:value` and `:process` are read; `:time`,
`:index`, `:error` and any other key are ignored, and the file's order is real-time order.

| `:type` | event |
|---|---|
| `:invoke` | the process calls `:f` |
| `:ok` | the call returns (`:value` is the result where the model has one) |
| `:fail` | the call did not happen: it is removed |
| `:info` | the call may or may not have happened: it stays pending forever |

Operations of processes that are not integers (`:nemesis`) are skipped. A history whose every
operation failed, or that holds only the nemesis's, is empty: nothing happened, which is
linearizable (exit 0). A file with no operation map at all is bad input (exit 2): the test
probably did not run.

The model is inferred from the operations' names unless `--spec` names one:

| model | operations | calls |
|---|---|---|
| `register` (cas-register, from `nil`) | `:read`, `:write v`, `:cas [a b]` | `read()` → value, `write(v)`, `cas(a, b)` → `true` |
| `queue` (fifo) | `:enqueue v`, `:dequeue` | `enqueue(v)`, `dequeue()` → value |
| `mutex` | `:acquire`, `:release` | `acquire()`, `release()` |
| `set` | `:add v`, `:read` | `add(v)` (result not recorded), `read()` → every element |
| `multi-register` | `:txn [[:read k nil] [:write k v] ...]` | `txn(steps)` → the steps with the reads' values |

A model that starts elsewhere takes `--initial`: Knossos's `multi-register.edn` starts from
`--initial '{:x 0 :y 0}'`."#;

use edn_format::Value as Edn;
use fgvt_tree::{Call, Value};

use super::{ParseError, Parsed, Recorder};

/// How deeply EDN values may nest (the reader recurses).
const MAX_NESTING: usize = 128;

/// Parses a Jepsen EDN history; `spec` names the model (`None`: inferred from the operations).
pub fn parse(text: &str, spec: Option<&str>) -> Result<Parsed, ParseError> {
    let mut ops = Vec::new();
    for element in elements(text)? {
        let value = read(element.text, element.line, element.column)?;
        ops.push((element.line, op_map(element.line, &value)?));
    }
    let model = match spec {
        Some(name) => Model::named(name),
        None => Model::infer(&ops)?,
    };
    let mut recorder = Recorder::default();
    for (line, op) in &ops {
        let Some(thread) = op.process else {
            recorder.other_process();
            continue;
        };
        recorder.jepsen_event(
            *line,
            thread,
            (&op.kind, &op.f),
            || model.call(*line, op),
            |_| Ok(model.result(op)),
        )?;
    }
    let (history, lines) =
        recorder.finish(text.lines().count(), "the history has no operations")?;
    Ok(Parsed {
        history,
        spec: Some(model.spec().to_owned()),
        lines,
        spec_line: None,
        initial: None,
    })
}

/// One operation map, as far as the history needs it.
struct Op {
    kind: String,
    f: String,
    value: Value,
    /// `None` for a process that is not a client (`:nemesis`).
    process: Option<usize>,
}

fn op_map(line: usize, value: &Edn) -> Result<Op, ParseError> {
    let Edn::Map(map) = value else {
        return Err(ParseError::new(
            line,
            "expected an operation map like {:type :invoke, :f :read, :value nil, :process 0}",
        ));
    };
    let get = |name: &str| map.get(&Edn::from(edn_format::Keyword::from_name(name)));
    let keyword = |name: &str| match get(name) {
        Some(Edn::Keyword(k)) => Ok(k.name().to_owned()),
        Some(other) => Err(ParseError::new(
            line,
            format!(
                ":{name} must be a keyword, found {}",
                edn_format::emit_str(other)
            ),
        )),
        None => Err(ParseError::new(line, format!("missing :{name}"))),
    };
    let process = match get("process") {
        Some(Edn::Integer(p)) if *p >= 0 => Some(*p as usize),
        Some(Edn::Integer(p)) => {
            return Err(ParseError::new(line, format!(":process {p} is negative")))
        }
        Some(_) => None,
        None => return Err(ParseError::new(line, "missing :process")),
    };
    Ok(Op {
        kind: keyword("type")?,
        f: keyword("f")?,
        value: get("value").map_or(Value::Null, to_value),
        process,
    })
}

/// One EDN value given on its own (`--initial`), as an fgvt value: as in a history, and a map
/// becomes its `(key, value)` pairs in key order, which is how a built-in spec reads a map
/// ([`BuiltinSpec::state_of`](crate::BuiltinSpec::state_of)).
pub fn parse_value(text: &str) -> Result<Value, ParseError> {
    // The reader recurses: bound the nesting first, as for a history.
    elements(text)?;
    let edn = read(text, 1, 1)?;
    Ok(match &edn {
        Edn::Map(entries) => {
            let mut pairs: Vec<Value> = entries
                .iter()
                .map(|(k, v)| Value::Tuple(vec![to_value(k), to_value(v)]))
                .collect();
            pairs.sort();
            Value::Tuple(pairs)
        }
        other => to_value(other),
    })
}

/// `text`, which starts at `line`:`column` of its file, read by the EDN reader; its errors
/// point into the file.
fn read(text: &str, line: usize, column: usize) -> Result<Edn, ParseError> {
    edn_format::parse_str(text).map_err(|e| {
        let rows = text.lines().count().max(1);
        let (line, column) = if e.row <= 1 {
            (line, column + e.col.saturating_sub(1))
        } else if e.row <= rows {
            (line + e.row - 1, e.col.max(1))
        } else {
            // The reader's row runs one past the text at its end: point just past its last
            // character.
            let last = text.lines().last().unwrap_or("").chars().count();
            if rows == 1 {
                (line, column + last)
            } else {
                (line + rows - 1, last + 1)
            }
        };
        ParseError {
            line,
            column: Some(column),
            message: format!("malformed EDN: {}", e.error),
        }
    })
}

/// An EDN value as an fgvt value.
fn to_value(edn: &Edn) -> Value {
    match edn {
        Edn::Nil => Value::Null,
        Edn::Boolean(b) => Value::Bool(*b),
        Edn::Integer(i) => Value::Int(*i),
        Edn::String(s) => Value::Str(s.as_str().into()),
        Edn::Keyword(k) => Value::Str(format!(":{}", k.name()).into()),
        Edn::Vector(items) | Edn::List(items) => Value::Tuple(items.iter().map(to_value).collect()),
        Edn::Set(items) => {
            let mut items: Vec<Value> = items.iter().map(to_value).collect();
            items.sort();
            Value::Tuple(items)
        }
        other => Value::Str(edn_format::emit_str(other).into()),
    }
}

/// The model a history is checked against, and how its operations become calls.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Model {
    Register,
    Queue,
    Mutex,
    Set,
    MultiRegister,
    /// A spec named by the caller: calls are `f(value)` (no argument for `nil`).
    Other(String),
}

impl Model {
    fn named(name: &str) -> Model {
        match name {
            "register" | "cas-register" => Model::Register,
            "queue" | "fifo" => Model::Queue,
            "mutex" => Model::Mutex,
            "set" => Model::Set,
            "multi-register" => Model::MultiRegister,
            other => Model::Other(other.to_owned()),
        }
    }

    /// The first model, in the order below, that has every operation of the clients (a history
    /// of reads only, or of nemesis events only, is a register's).
    fn infer(ops: &[(usize, Op)]) -> Result<Model, ParseError> {
        // The nemesis's operations (`:start`, `:stop`, ...) are not the object's.
        let mut names: Vec<&str> = ops
            .iter()
            .filter(|(_, op)| op.process.is_some())
            .map(|(_, op)| op.f.as_str())
            .collect();
        names.sort_unstable();
        names.dedup();
        let within = |model: &[&str]| names.iter().all(|n| model.contains(n));
        let model = if within(&["read", "write", "cas"]) {
            Model::Register
        } else if within(&["enqueue", "dequeue"]) {
            Model::Queue
        } else if within(&["acquire", "release"]) {
            Model::Mutex
        } else if within(&["add", "read"]) {
            Model::Set
        } else if within(&["txn"]) {
            Model::MultiRegister
        } else {
            return Err(ParseError::new(
                ops.first().map_or(1, |(line, _)| *line),
                format!(
                    "cannot tell the model from the operations {}: name the spec",
                    names.join(", ")
                ),
            ));
        };
        Ok(model)
    }

    fn spec(&self) -> &str {
        match self {
            Model::Register => "register",
            Model::Queue => "queue",
            Model::Mutex => "mutex",
            Model::Set => "set",
            Model::MultiRegister => "multi-register",
            Model::Other(name) => name.as_str(),
        }
    }

    /// Whether `f` reads: it takes no argument (its `:invoke` value is `nil`) and its `:ok`
    /// value is its result.
    fn reads(&self, f: &str) -> bool {
        matches!(
            (self, f),
            (Model::Register, "read") | (Model::Queue, "dequeue") | (Model::Set, "read")
        )
    }

    /// The call an `:invoke` makes.
    fn call(&self, line: usize, op: &Op) -> Result<Call, ParseError> {
        let no_args = || Call::new(op.f.clone(), vec![]);
        let one_arg = || Call::new(op.f.clone(), vec![op.value.clone()]);
        Ok(match (self, op.f.as_str()) {
            _ if self.reads(&op.f) => no_args(),
            (Model::Register, "cas") => match &op.value {
                Value::Tuple(pair) if pair.len() == 2 => Call::new("cas", pair.clone()),
                other => {
                    return Err(ParseError::new(
                        line,
                        format!("expected :value [from to] for :cas, found {other}"),
                    ))
                }
            },
            (Model::Mutex, _) => no_args(),
            (_, _) if op.value == Value::Null => no_args(),
            _ => one_arg(),
        })
    }

    /// What an `:ok` returned (`None`: not recorded, any result is accepted).
    fn result(&self, op: &Op) -> Option<Value> {
        match (self, op.f.as_str()) {
            _ if self.reads(&op.f) => Some(op.value.clone()),
            (Model::Register, "cas") => Some(Value::Bool(true)),
            (Model::Set, "add") => None,
            (Model::Register | Model::Queue | Model::Mutex, _) => Some(Value::Unit),
            _ => Some(op.value.clone()),
        }
    }
}

/// One top-level value of the file: its text and where it starts.
struct Element<'t> {
    text: &'t str,
    line: usize,
    column: usize,
}

/// The top-level values of `text` (the items of a single top-level vector or list, if the file
/// is one), with their positions; nesting deeper than [`MAX_NESTING`] is an error at its place.
fn elements(text: &str) -> Result<Vec<Element<'_>>, ParseError> {
    let mut out = Vec::new();
    let mut at = Position { line: 1, column: 1 };
    let mut depth = 0usize;
    // The depth items start at: 1 inside a file-wide vector or list, 0 otherwise (decided by
    // the first character that is not blank or a comment).
    let mut item_depth = None;
    // Where the current item starts: byte offset and position.
    let mut start: Option<(usize, Position)> = None;
    let mut chars = text.char_indices().peekable();
    while let Some((offset, c)) = chars.next() {
        let here = at;
        at.advance(c);
        match c {
            ';' => {
                while chars.next_if(|&(_, c)| c != '\n').is_some() {}
                continue;
            }
            '"' => {
                // Strings are inside items (a top-level string is no operation).
                let mut escaped = false;
                for (_, c) in chars.by_ref() {
                    at.advance(c);
                    match (escaped, c) {
                        (false, '\\') => escaped = true,
                        (false, '"') => break,
                        _ => escaped = false,
                    }
                }
                continue;
            }
            '\\' => {
                // A character literal: the next character is not syntax.
                if let Some((_, next)) = chars.next() {
                    at.advance(next);
                }
                continue;
            }
            c if c.is_whitespace() || c == ',' => continue,
            _ => {}
        }
        let base = *item_depth.get_or_insert(usize::from(matches!(c, '[' | '(')));
        let opens = matches!(c, '{' | '[' | '(');
        let closes = matches!(c, '}' | ']' | ')');
        // An item starts at its first character at the items' depth (the file-wide vector's or
        // list's own brackets are below it).
        if depth == base && start.is_none() && !closes {
            start = Some((offset, here));
        }
        if opens {
            depth += 1;
            if depth > MAX_NESTING {
                return Err(ParseError {
                    line: here.line,
                    column: Some(here.column),
                    message: format!("EDN nested more than {MAX_NESTING} levels deep"),
                });
            }
        } else if closes {
            depth = depth.saturating_sub(1);
        }
        // An item ends with its closing bracket, or (an atom) where the next token starts.
        let ends = closes || chars.peek().is_none_or(|&(_, next)| ends_atom(next));
        if let (true, Some((from, position))) = (depth == base && ends, start) {
            out.push(Element {
                text: &text[from..offset + c.len_utf8()],
                line: position.line,
                column: position.column,
            });
            start = None;
        }
    }
    if let Some((from, position)) = start {
        out.push(Element {
            text: &text[from..],
            line: position.line,
            column: position.column,
        });
    }
    Ok(out)
}

/// Whether `c` ends an atom (a keyword, number or symbol).
fn ends_atom(c: char) -> bool {
    c.is_whitespace() || matches!(c, ',' | '{' | '[' | '(' | '}' | ']' | ')' | '"' | ';')
}

/// A 1-based line and column.
#[derive(Clone, Copy)]
struct Position {
    line: usize,
    column: usize,
}

impl Position {
    /// The position after `c`.
    fn advance(&mut self, c: char) {
        if c == '\n' {
            self.line += 1;
            self.column = 1;
        } else {
            self.column += 1;
        }
    }
}
