//! Recorded history formats: parsing files into [`History`].
//!
//! * [`Format::Jepsen`]: Jepsen etcd logs (`INFO  jepsen.util - <proc> <type> <f> <value>`),
//!   checked against the built-in `register` spec; see [`jepsen`].
//! * [`Format::Kv`]: EDN-like key/value logs (`{:process 0, :type :invoke, :f :get, ...}`),
//!   checked against the built-in `kv` spec; see [`kv`].
//! * [`Format::Json`]: fgvt's own JSON history format (`"schema": "fgvt.history/1"`), which names
//!   its spec; see [`json`].
//! * [`Format::Edn`]: Jepsen's EDN operation maps (`{:type :invoke, :f :cas, :value [1 2],
//!   :process 3}`), bare or in a vector or list, one per line or over several lines, with `;`
//!   comments; the model is inferred from the operations or named; see [`edn`].
//!
//! Every parse error carries the 1-based line number of the offending line.

pub mod edn;
pub mod jepsen;
pub mod json;
pub mod kv;

use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use fgvt_tree::source::{decode_utf8, NotUtf8};
use fgvt_tree::{History, Value};

/// A recorded history format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Format {
    /// Jepsen etcd log lines (spec `register`).
    Jepsen,
    /// EDN-like key/value store log lines (spec `kv`).
    Kv,
    /// fgvt's JSON history (`fgvt.history/1`); the spec is named in the file.
    Json,
    /// Jepsen's EDN operation maps; the model is inferred from the operations.
    Edn,
}

impl Format {
    /// The format's name: `jepsen`, `kv`, `json`, `edn`.
    pub fn as_str(self) -> &'static str {
        match self {
            Format::Jepsen => "jepsen",
            Format::Kv => "kv",
            Format::Json => "json",
            Format::Edn => "edn",
        }
    }

    /// The built-in spec histories in this format are checked against, if the format implies one.
    pub fn implied_spec(self) -> Option<&'static str> {
        match self {
            Format::Jepsen => Some("register"),
            Format::Kv => Some("kv"),
            Format::Json | Format::Edn => None,
        }
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Format {
    type Err = String;

    /// `jepsen`, `kv`, `json` or `edn`.
    fn from_str(s: &str) -> Result<Self, String> {
        match s.to_ascii_lowercase().as_str() {
            "jepsen" => Ok(Format::Jepsen),
            "kv" => Ok(Format::Kv),
            "json" => Ok(Format::Json),
            "edn" => Ok(Format::Edn),
            _ => Err(format!(
                "unknown history format `{s}` (expected jepsen, kv, json or edn)"
            )),
        }
    }
}

/// A parse error: the 1-based line (and column, where the format has one) and what is wrong.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("line {}: {message}", self.position())]
pub struct ParseError {
    /// The 1-based line number.
    pub line: usize,
    /// The 1-based column, when known (the line formats point at whole lines).
    pub column: Option<usize>,
    /// What is wrong.
    pub message: String,
}

impl ParseError {
    pub(crate) fn new(line: usize, message: impl Into<String>) -> Self {
        ParseError {
            line,
            column: None,
            message: message.into(),
        }
    }

    /// `line` or `line:column`, as compilers print positions.
    pub fn position(&self) -> String {
        match self.column {
            Some(column) => format!("{}:{column}", self.line),
            None => self.line.to_string(),
        }
    }
}

/// A parsed history and the spec it is to be checked against.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Parsed {
    /// The history.
    pub history: History,
    /// The spec's name: implied by the format (jepsen, kv), inferred from or given for an EDN
    /// history, or named by a JSON file (`None` if it names none).
    pub spec: Option<String>,
    /// The 1-based line of each event of `history`, to point at an event the spec rejects.
    pub lines: Vec<usize>,
    /// The 1-based line where the file names its spec (JSON), to point at an unknown name.
    pub spec_line: Option<usize>,
    /// The initial state the file gives (JSON `initial`), with its line; `None`: the spec's own.
    pub initial: Option<(Value, usize)>,
}

impl Parsed {
    /// The line of the call of operation `op` (an index into `history.operations()`).
    pub fn line_of_operation(&self, op: usize) -> Option<usize> {
        let ops = self.history.operations().ok()?;
        self.lines.get(ops.get(op)?.call_index).copied()
    }

    /// The line where operation `op` returned, which shows its result; its call's line when
    /// it never returned.
    pub fn line_of_result(&self, op: usize) -> Option<usize> {
        let ops = self.history.operations().ok()?;
        let op = ops.get(op)?;
        let event = op.ret.as_ref().map_or(op.call_index, |r| r.index);
        self.lines.get(event).copied()
    }
}

/// A history loaded from a file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Loaded {
    /// The history and its spec.
    pub parsed: Parsed,
    /// The format it was read in (detected, or as asked).
    pub format: Format,
}

/// A file that could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The file could not be read.
    #[error("cannot read {}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A file that is not UTF-8 text.
    #[error("{}:{source}", path.display())]
    NotUtf8 {
        /// The file.
        path: PathBuf,
        /// Where the first bad byte is.
        source: NotUtf8,
    },
    /// The format could not be detected.
    #[error("{}:{line}: cannot tell the history format from this line (expected Jepsen `INFO  jepsen.util - ...` lines, kv `{{:process ...}}` lines, Jepsen EDN `{{:type :invoke ...}}` maps, or fgvt JSON); name the format", path.display())]
    UnknownFormat {
        /// The file.
        path: PathBuf,
        /// The 1-based line the format was guessed from: the first that is not blank.
        line: usize,
    },
    /// The file does not parse.
    #[error("{}:{}: {} (reading it as {format})", path.display(), source.position(), source.message)]
    Parse {
        /// The file.
        path: PathBuf,
        /// The format it was read as.
        format: Format,
        /// Where and why.
        source: ParseError,
    },
}

/// The 1-based number of the first line of `text` that holds something other than blanks and
/// `;` comments (1 if there is none): the line the format is told from.
fn first_line(text: &str) -> usize {
    significant_lines(text).next().map_or(1, |(line, _)| line)
}

/// The lines of `text` that are neither blank nor `;` comments (EDN's), with their 1-based
/// numbers.
fn significant_lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    event_lines(text).filter(|(_, raw)| !raw.trim_start().starts_with(';'))
}

/// Guesses the format of `text` (the whole file, or its first few kilobytes) from its first
/// line that is not blank or a `;` comment; `None` when it looks like none.
///
/// Jepsen writes EDN histories in several shapes, all recognized: one operation map per line,
/// a top-level vector `[…]` or list `(…)` of them, maps spread over several lines. A kv log is
/// EDN too, one map per line: it is told apart by the `:key` of its first map.
pub fn detect_format(text: &str) -> Option<Format> {
    let (line, first) = significant_lines(text).next()?;
    if first.contains("jepsen.util") {
        return Some(Format::Jepsen);
    }
    // From that line on (a map may go on over the next lines).
    let from: usize = text
        .split_inclusive('\n')
        .take(line - 1)
        .map(str::len)
        .sum();
    let rest = text[from..].trim_start();
    let items =
        rest.trim_start_matches(|c: char| matches!(c, '[' | '(' | ',') || c.is_whitespace());
    let file_wide = items.len() < rest.len();
    let Some(map) = items.strip_prefix('{') else {
        // A file-wide vector or list whose first item is no map is still EDN: its reader says
        // what is wrong, with a position.
        return file_wide.then_some(Format::Edn);
    };
    let map = map.trim_start_matches(|c: char| c == ',' || c.is_whitespace());
    if !map.starts_with(':') {
        // `{` then a string: a JSON object (EDN maps of histories are keyed by keywords).
        return Some(if file_wide { Format::Edn } else { Format::Json });
    }
    // The first map up to its first closing brace (a kv map holds no nested map).
    let first_map = &map[..map.find('}').unwrap_or(map.len())];
    let keyed = first_map
        .split(|c: char| c == ',' || c.is_whitespace())
        .any(|word| word == ":key");
    Some(if keyed && !file_wide {
        Format::Kv
    } else {
        Format::Edn
    })
}

/// Parses `text` as `format`.
pub fn parse(text: &str, format: Format) -> Result<Parsed, ParseError> {
    parse_as(text, format, None)
}

/// Parses `text` as `format`, for the spec `spec` when the caller names one (an EDN history's
/// calls depend on its model, otherwise inferred from the operations).
pub fn parse_as(text: &str, format: Format, spec: Option<&str>) -> Result<Parsed, ParseError> {
    let implied = format.implied_spec().map(str::to_owned);
    match format {
        Format::Jepsen => jepsen::parse_with_lines(text).map(|(history, lines)| Parsed {
            history,
            spec: implied,
            lines,
            spec_line: None,
            initial: None,
        }),
        Format::Kv => kv::parse_with_lines(text).map(|(history, lines)| Parsed {
            history,
            spec: implied,
            lines,
            spec_line: None,
            initial: None,
        }),
        Format::Json => json::parse(text),
        Format::Edn => edn::parse(text, spec),
    }
}

/// Reads and parses the file at `path`, in `format` or (when `None`) the detected one.
pub fn load_history(path: &Path, format: Option<Format>) -> Result<Loaded, LoadError> {
    load_history_as(path, format, None)
}

/// [`load_history`] for the spec `spec` when the caller names one (see [`parse_as`]).
pub fn load_history_as(
    path: &Path,
    format: Option<Format>,
    spec: Option<&str>,
) -> Result<Loaded, LoadError> {
    let bytes = std::fs::read(path).map_err(|source| LoadError::Io {
        path: path.to_owned(),
        source,
    })?;
    let text = decode_utf8(bytes).map_err(|source| LoadError::NotUtf8 {
        path: path.to_owned(),
        source,
    })?;
    let format = match format.or_else(|| detect_format(&text)) {
        Some(format) => format,
        // An empty file is most likely a Jepsen test that did not run; its parser says so.
        None if text.trim().is_empty() => Format::Jepsen,
        // Only `;` comments: an EDN file with no operations, which its parser says.
        None if significant_lines(&text).next().is_none() => Format::Edn,
        None => {
            return Err(LoadError::UnknownFormat {
                path: path.to_owned(),
                line: first_line(&text),
            })
        }
    };
    let parsed = parse_as(&text, format, spec).map_err(|source| LoadError::Parse {
        path: path.to_owned(),
        format,
        source,
    })?;
    Ok(Loaded { parsed, format })
}

/// Builds a history from events where a failed call can still be withdrawn: the recorded
/// formats learn that an operation did not take effect only at its (failed) return.
#[derive(Default)]
pub(crate) struct Recorder {
    /// The events with their lines; a withdrawn call is `None`.
    events: Vec<Option<(fgvt_tree::CoarseEvent, usize)>>,
    /// Per thread: the event index and line of its pending call.
    pending: std::collections::HashMap<usize, (usize, usize)>,
    /// Whether any operation was recorded, withdrawn ones and other processes' (a nemesis's)
    /// included: a history whose every call failed shows that the test ran (and is trivially
    /// linearizable), an empty file does not.
    recorded: bool,
}

impl Recorder {
    /// Records a call on `line`; an error if `thread` has one pending.
    pub(crate) fn call(
        &mut self,
        line: usize,
        thread: usize,
        call: fgvt_tree::Call,
    ) -> Result<(), ParseError> {
        if let Some((_, earlier)) = self.pending.get(&thread) {
            return Err(ParseError::new(line, format!("process {thread} invokes {call} while its operation from line {earlier} is still pending")));
        }
        self.pending.insert(thread, (self.events.len(), line));
        self.recorded = true;
        self.events.push(Some((
            fgvt_tree::CoarseEvent::Call {
                thread,
                call: call.into(),
                seen: None,
            },
            line,
        )));
        Ok(())
    }

    /// The pending call of `thread`; an error naming `what` if there is none.
    pub(crate) fn pending_call(
        &self,
        line: usize,
        thread: usize,
        what: impl fmt::Display,
    ) -> Result<&fgvt_tree::Call, ParseError> {
        let Some(&(index, _)) = self.pending.get(&thread) else {
            return Err(ParseError::new(
                line,
                format!("process {thread} completes {what} but has no pending call"),
            ));
        };
        match &self.events[index] {
            Some((fgvt_tree::CoarseEvent::Call { call, .. }, _)) => Ok(call),
            _ => unreachable!("pending entries point at calls"),
        }
    }

    /// Records the return, on `line`, of `thread`'s pending call (`None`: unknown result).
    pub(crate) fn ret(&mut self, line: usize, thread: usize, value: Option<fgvt_tree::Value>) {
        self.pending.remove(&thread);
        self.events.push(Some((
            fgvt_tree::CoarseEvent::Return { thread, value },
            line,
        )));
    }

    /// Notes an operation of a process that is not a client (Jepsen's nemesis): not part of
    /// the history, but proof that the test ran.
    pub(crate) fn other_process(&mut self) {
        self.recorded = true;
    }

    /// Withdraws `thread`'s pending call: it definitely did not take effect.
    pub(crate) fn withdraw(&mut self, thread: usize) {
        if let Some((index, _)) = self.pending.remove(&thread) {
            self.events[index] = None;
        }
    }

    /// Leaves `thread`'s pending call pending for good (an indeterminate outcome).
    pub(crate) fn abandon(&mut self, thread: usize) {
        self.pending.remove(&thread);
    }

    /// One event of a Jepsen history, `{:type kind, :f f}` of `thread` on `line`: `:invoke`
    /// records `call()`, `:ok` returns the pending call with `result(call)`, `:fail` withdraws
    /// it (it did not happen), `:info` leaves it pending for good (it may have happened).
    pub(crate) fn jepsen_event(
        &mut self,
        line: usize,
        thread: usize,
        (kind, f): (&str, &str),
        call: impl FnOnce() -> Result<fgvt_tree::Call, ParseError>,
        result: impl FnOnce(&fgvt_tree::Call) -> Result<Option<fgvt_tree::Value>, ParseError>,
    ) -> Result<(), ParseError> {
        match kind {
            "invoke" => self.call(line, thread, call()?)?,
            "ok" => {
                let value = result(self.pending_call(line, thread, format_args!(":{f}"))?)?;
                self.ret(line, thread, value);
            }
            "fail" => {
                self.pending_call(line, thread, format_args!(":{f}"))?;
                self.withdraw(thread);
            }
            "info" => self.abandon(thread),
            other => {
                return Err(ParseError::new(
                    line,
                    format!("unknown :type :{other} (expected :invoke, :ok, :fail or :info)"),
                ))
            }
        }
        Ok(())
    }

    /// The history with the line of each event, or an error on `last_line` if no operation
    /// was recorded. Calls that all failed leave an empty history: nothing happened, which is
    /// linearizable.
    pub(crate) fn finish(
        self,
        last_line: usize,
        what: &str,
    ) -> Result<(History, Vec<usize>), ParseError> {
        let (events, lines): (Vec<_>, Vec<_>) = self.events.into_iter().flatten().unzip();
        if !self.recorded {
            return Err(ParseError::new(
                last_line.max(1),
                format!("no events: {what}"),
            ));
        }
        let history = History {
            events,
            stuck: false,
        };
        Ok((history, lines))
    }
}

/// The lines of a log with one event per line that hold an event (are not blank), each with
/// its 1-based line number.
pub(crate) fn event_lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.lines()
        .enumerate()
        .map(|(n, raw)| (n + 1, raw))
        .filter(|(_, raw)| !raw.trim().is_empty())
}

#[cfg(test)]
mod tests;
