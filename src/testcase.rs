//! Loading a test case (`failing.json`): the object model, the spec and the operations of
//! each thread, all checked before anything runs.
//!
//! ```json
//! {
//!   "object": "pair_snapshot.fgv",
//!   "spec": "self",
//!   "init":    ["write(0, 1)", "write(1, 1)"],
//!   "threads": [["write(0, 2)", "write(1, 2)"], ["read()"]],
//!   "final":   []
//! }
//! ```
//!
//! `object` is relative to the JSON file; `file.fgv#Name` picks one object of a file that holds
//! several. Every mistake is reported with the JSON path, line and column of the offending
//! value and a hint of what to do.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use fgvt_lang::SnippetSource;
use fgvt_tree::source::{decode_utf8, line_column, NotUtf8};
use fgvt_tree::{Call, SourceMap, Value};
use miette::{Diagnostic, SourceSpan};
use serde::de::DeserializeOwned;
use serde::Deserialize;

use crate::json_pos::{self, JsonPath};
use fgvt_lang::{
    parse_call, CallSyntaxError, LangError, Model, SelfSpec, TestProgram, DEFAULT_BUDGET,
    DEFAULT_MAX_STALE,
};
use fgvt_memory::fix::Change;

/// A test file as a user writes it, before its object is loaded: what `fgvt` and a program
/// of Rust objects (`fgvt_sync::main!`) both read.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TestFile {
    /// The object: a model (`pair_snapshot.fgv#PairSnapshot`), or a Rust object's name.
    pub object: String,
    /// The spec: `self` (the default), a built-in one's name, or a model.
    #[serde(default)]
    pub spec: Option<String>,
    /// Serial calls before the threads.
    #[serde(default)]
    pub init: Vec<String>,
    /// Each thread's calls.
    pub threads: Vec<Vec<String>>,
    /// Serial calls after the threads.
    #[serde(default, rename = "final")]
    pub finals: Vec<String>,
    /// Free text for people; ignored by fgvt.
    #[serde(default)]
    pub description: Option<String>,
    /// The seed `fgvt hunt` drew the test with, kept for the record.
    #[serde(default)]
    pub seed: Option<u64>,
    /// For a Rust object: whether its `Shared` cells are checked for data races too, as its
    /// `UnsafeCell`s always are (`fgvt_sync::Test::races`).
    #[serde(default)]
    pub races: bool,
}

/// Reads the test file at `path` as written, without loading its object; errors name the
/// file, line and column.
pub fn read_test_file(path: &Path) -> Result<TestFile, LoadError> {
    parse_test_file(&Document::read(path, "test file")?.errors())
}

/// The test file of `errors`' document.
fn parse_test_file(errors: &Errors<'_>) -> Result<TestFile, LoadError> {
    errors.parse(&JsonHelp {
        unknown_field:
            "a test has the keys object, spec, init, threads, final (and description, seed, races)",
        missing_field:
            "add the missing key; see fixtures/pair_snapshot/failing.json for a complete test",
        wrong_type: None,
        other_kind: Some(OtherKind {
            list_key: "operations",
            it_is: "a hunt file",
            expected: "a test",
            command: "fgvt hunt",
        }),
    })
}

/// Which sequential specification leaf histories are checked against.
#[derive(Clone, Debug)]
pub enum SpecChoice {
    /// Line-Up's spec synthesized from the object's own serial runs.
    SelfSpec,
    /// A built-in spec by name (`register`, `queue`, ...).
    Builtin(String),
    /// A sequential object written in the modeling language.
    Model(Arc<Model>),
}

impl fmt::Display for SpecChoice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SpecChoice::SelfSpec => f.write_str("self"),
            SpecChoice::Builtin(name) => f.write_str(name),
            SpecChoice::Model(model) => write!(f, "{}", model.name()),
        }
    }
}

/// A loaded, checked test case.
pub struct TestCase {
    /// The test file as the user named it.
    pub path: PathBuf,
    /// The compiled object under test.
    pub model: Arc<Model>,
    /// The spec to check against.
    pub spec: SpecChoice,
    /// Operations run serially before the concurrent part.
    pub init: Vec<Call>,
    /// The operations of each thread.
    pub threads: Vec<Vec<Call>>,
    /// Operations run serially at each complete leaf.
    pub finals: Vec<Call>,
    /// The model's source files, to resolve event spans.
    pub sources: SourceMap,
    /// Most instructions an operation may execute between two shared-memory accesses (and in
    /// one serial run of the spec) before it is cut as an endless local loop.
    pub local_budget: u64,
    /// Under weak memory, how many older stores than the latest one access may read (see
    /// [`TestProgram::with_max_stale`]).
    pub max_stale: u32,
    /// Which memory model the test runs under: as its model declares, or another for a
    /// report's comparisons.
    pub memory: MemoryMode,
    /// Whether the explorer tells states apart by the ways their histories allow of taking
    /// effect (`fgvt_checker::linearizations`, the default) or by the histories themselves in
    /// canonical form: the reference the tests compare with.
    pub merge_by_linearizations: bool,
}

/// The memory model a test runs under.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum MemoryMode {
    /// As the model declares: sequentially consistent unless some access declares a weaker
    /// ordering, then the C++20 / Rust memory model.
    #[default]
    AsDeclared,
    /// Every access `seq_cst`, whatever the model declares.
    SequentiallyConsistent,
    /// Weak memory, with these changes to the model's orderings (by
    /// [`fgvt_lang::OrderedAccess::site`]).
    Changed(Vec<(u32, Change)>),
}

impl TestCase {
    /// The program the recording scheduler explores.
    pub fn program(&self) -> TestProgram {
        let program = TestProgram::new(
            self.model.clone(),
            self.init.clone(),
            self.threads.clone(),
            self.finals.clone(),
        )
        .with_budget(self.local_budget);
        let program = match &self.memory {
            MemoryMode::AsDeclared => program,
            MemoryMode::SequentiallyConsistent => program.sequentially_consistent(),
            MemoryMode::Changed(changes) => program.with_changes(changes),
        }
        .with_max_stale(self.max_stale);
        match self.merge_by_linearizations {
            true => program.with_history_keys(self.history_keys()),
            false => program,
        }
    }

    /// The explorer's keys of histories, from the test's spec: two paths whose histories allow
    /// the same ways of taking effect share a state (`fgvt_checker::linearizations`; the
    /// program uses them only without weak memory).
    fn history_keys(&self) -> fgvt_tree::HistoryKeysFactory {
        match self.spec_source() {
            SpecSource::Serial(model) => {
                fgvt_checker::linearizations::history_keys(self.self_spec(model))
            }
            SpecSource::Builtin(name) => fgvt_checker::linearizations::history_keys(
                fgvt_checker::builtin(name)
                    .expect("built-in spec names are checked when the test loads"),
            ),
        }
    }

    /// Whether the test runs under weak memory.
    pub fn is_weak(&self) -> bool {
        match self.memory {
            MemoryMode::AsDeclared => self.model.is_weak(),
            MemoryMode::SequentiallyConsistent => false,
            MemoryMode::Changed(_) => true,
        }
    }

    /// The same test under the memory model `memory`.
    pub fn under(&self, memory: MemoryMode) -> TestCase {
        TestCase {
            path: self.path.clone(),
            model: self.model.clone(),
            spec: self.spec.clone(),
            init: self.init.clone(),
            threads: self.threads.clone(),
            finals: self.finals.clone(),
            sources: self.sources.clone(),
            local_budget: self.local_budget,
            max_stale: self.max_stale,
            memory,
            merge_by_linearizations: self.merge_by_linearizations,
        }
    }

    /// The spec synthesized from serial runs of `model` (the object's own, or a model spec),
    /// with this test's instruction budget.
    pub fn self_spec(&self, model: &Arc<Model>) -> SelfSpec {
        SelfSpec::with_budget(model.clone(), self.local_budget)
    }

    /// Where the test's spec comes from: serial runs of a model, or a built-in.
    pub fn spec_source(&self) -> SpecSource<'_> {
        match &self.spec {
            SpecChoice::SelfSpec => SpecSource::Serial(&self.model),
            SpecChoice::Model(model) => SpecSource::Serial(model),
            SpecChoice::Builtin(name) => SpecSource::Builtin(name),
        }
    }
}

/// Where a test's spec comes from, as the stages that build it need to know
/// ([`TestCase::spec_source`]).
pub enum SpecSource<'a> {
    /// Serial runs of this model ([`TestCase::self_spec`]): the object's own (`self`) or a
    /// model spec.
    Serial(&'a Arc<Model>),
    /// The built-in spec of this name.
    Builtin(&'a str),
}

/// Why a test case could not be loaded.
#[derive(Debug, thiserror::Error, Diagnostic)]
pub enum LoadError {
    /// A directory where a file was expected.
    #[error("`{path}` is a directory, not a {what}")]
    #[diagnostic(code(fgvt::is_a_directory), help("pass one {what}{holds}"))]
    Directory {
        /// The directory.
        path: String,
        /// What was expected: "test file", "hunt file", "model".
        what: String,
        /// The JSON files it holds, as ": it holds a.json, b.json", or nothing.
        holds: String,
    },
    /// A file could not be read.
    #[error("cannot read `{path}`: {source}")]
    #[diagnostic(code(fgvt::missing_file), help("{help}"))]
    Io {
        /// The file.
        path: String,
        /// What the OS said.
        source: std::io::Error,
        /// What to do.
        help: String,
    },
    /// A file that is not UTF-8 text.
    #[error("{path}:{source}")]
    #[diagnostic(code(fgvt::not_text))]
    NotUtf8 {
        /// The file.
        path: String,
        /// Where the first bad byte is.
        source: NotUtf8,
    },
    /// A mistake in the test file, at a position.
    #[error(transparent)]
    #[diagnostic(transparent)]
    Test(Box<TestError>),
    /// A mistake in the model.
    #[error(transparent)]
    #[diagnostic(transparent)]
    Model(#[from] LangError),
}

/// A mistake in a test file, at a line and column, with the file's text for the caret.
#[derive(Debug, thiserror::Error, Diagnostic)]
#[error("{file}:{line}:{column}: {message}")]
#[diagnostic(code(fgvt::bad_test))]
pub struct TestError {
    /// The test file.
    pub file: String,
    /// 1-based line.
    pub line: usize,
    /// 1-based column.
    pub column: usize,
    /// What is wrong.
    pub message: String,
    /// The test file's text.
    #[source_code]
    pub src: SnippetSource,
    /// Where.
    #[label("{label}")]
    pub at: SourceSpan,
    /// The label under the caret.
    pub label: String,
    /// What to do.
    #[help]
    pub help: Option<String>,
}

/// Reads a file, naming it in the error.
pub(crate) fn read(path: &Path, what: &str) -> Result<String, LoadError> {
    if path.is_dir() {
        return Err(LoadError::Directory {
            path: path.display().to_string(),
            what: what.to_string(),
            holds: json_files_in(path),
        });
    }
    let bytes = std::fs::read(path).map_err(|source| LoadError::Io {
        path: path.display().to_string(),
        help: if source.kind() == std::io::ErrorKind::NotFound {
            format!("check the {what}'s path (paths inside a test are relative to the test file)")
        } else {
            format!("make the {what} readable")
        },
        source,
    })?;
    decode_utf8(bytes).map_err(|source| LoadError::NotUtf8 {
        path: path.display().to_string(),
        source,
    })
}

/// ": it holds a.json, b.json" for the JSON files directly in `dir` (a few), or nothing.
fn json_files_in(dir: &Path) -> String {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".json"))
        .collect();
    names.sort();
    match names.len() {
        0 => String::new(),
        n if n <= 6 => format!(": it holds {}", names.join(", ")),
        _ => format!(": it holds {}, …", names[..6].join(", ")),
    }
}

/// Builds positioned errors for one JSON input file (a test, or a hunt file).
pub(crate) struct Errors<'a> {
    /// The file as the user named it.
    pub(crate) file: &'a str,
    /// Its text.
    pub(crate) text: &'a str,
}

impl Errors<'_> {
    /// An error at byte range `start..end`.
    pub(crate) fn at(
        &self,
        start: usize,
        end: usize,
        message: String,
        label: &str,
        help: Option<String>,
    ) -> LoadError {
        // Offsets computed inside an escaped JSON string may land inside a character.
        let start = floor_char_boundary(self.text, start);
        let end = floor_char_boundary(self.text, end.max(start));
        let (line, column) = line_column(self.text, start);
        LoadError::Test(Box::new(TestError {
            file: self.file.to_string(),
            line,
            column,
            message,
            src: SnippetSource::new(self.file, self.text),
            at: (start, end.saturating_sub(start).max(1)).into(),
            label: label.to_string(),
            help,
        }))
    }

    /// An error about the value at `path` (or the whole document when it cannot be found).
    pub(crate) fn at_path(
        &self,
        path: &JsonPath,
        message: String,
        label: &str,
        help: Option<String>,
    ) -> LoadError {
        let (start, end) = json_pos::locate(self.text, path).unwrap_or((0, 1));
        self.at(start, end, format!("{path}: {message}"), label, help)
    }

    /// Parses the whole text as `R`; a `serde_json` error points at its line and column, with
    /// the format's `help`. A file of the other JSON kind (a hunt file given as a test, or the
    /// reverse) is named as such, with the command that reads it.
    pub(crate) fn parse<R: DeserializeOwned>(&self, help: &JsonHelp) -> Result<R, LoadError> {
        serde_json::from_str(self.text)
            .map_err(|e| self.other_kind(help).unwrap_or_else(|| self.json(&e, help)))
    }

    /// The error for a file of the kind `help.other_kind` describes, if this is one.
    fn other_kind(&self, help: &JsonHelp) -> Option<LoadError> {
        let other = help.other_kind.as_ref()?;
        let value: serde_json::Value = serde_json::from_str(self.text).ok()?;
        let object = value.as_object()?;
        if !object.get(other.list_key).is_some_and(|v| v.is_array()) {
            return None;
        }
        let path = JsonPath::default().key(other.list_key);
        let (start, end) = json_pos::locate(self.text, &path).unwrap_or((0, 1));
        Some(self.at(
            start,
            end,
            format!("this is {}, not {}", other.it_is, other.expected),
            "only in the other kind of file",
            Some(format!("use `{} {}`", other.command, self.file)),
        ))
    }

    /// A `serde_json` error at its line and column.
    fn json(&self, err: &serde_json::Error, help: &JsonHelp) -> LoadError {
        let offset = offset_of(self.text, err.line(), err.column());
        let message = err.to_string();
        // serde_json appends " at line L column C"; we print our own position.
        let message = message
            .split(" at line ")
            .next()
            .unwrap_or(&message)
            .to_string();
        let syntax = "fix the JSON syntax at the caret";
        let help = if self.file.ends_with(".fgv") {
            // The commonest slip of a first run: the model instead of the test that names it.
            "this is a model file: pass the test (a .json file whose \"object\" names this model)"
        } else if message.starts_with("unknown field") {
            help.unknown_field
        } else if message.starts_with("missing field") {
            help.missing_field
        } else if message.starts_with("invalid type") || message.starts_with("invalid value") {
            help.wrong_type.unwrap_or(syntax)
        } else {
            syntax
        };
        self.at(offset, offset + 1, message, "here", Some(help.to_string()))
    }
}

/// What a JSON input format suggests for `serde_json`'s errors (anything else is a syntax
/// error).
pub(crate) struct JsonHelp {
    /// For an unknown key: the keys the format has.
    pub(crate) unknown_field: &'static str,
    /// For a missing key: where to see a complete file.
    pub(crate) missing_field: &'static str,
    /// For a value of the wrong type or value, if the format has advice.
    pub(crate) wrong_type: Option<&'static str>,
    /// How to recognize the other JSON kind of fgvt file, if it can be mistaken for this one.
    pub(crate) other_kind: Option<OtherKind>,
}

/// The signs of a JSON file of another kind (a hunt file where a test was expected, or the
/// reverse), and what to do with it.
pub(crate) struct OtherKind {
    /// A top-level key whose value is a list in that kind and is not in this one
    /// (`operations` of a hunt file, `threads` of a test).
    pub(crate) list_key: &'static str,
    /// "a hunt file".
    pub(crate) it_is: &'static str,
    /// "a test".
    pub(crate) expected: &'static str,
    /// The command that reads it: "fgvt hunt".
    pub(crate) command: &'static str,
}

/// A JSON input file (a test, or a hunt file) read into memory.
pub(crate) struct Document {
    /// The file as the user named it.
    file: String,
    /// Its text.
    text: String,
}

impl Document {
    /// Reads the file at `path`; `what` names it in the error.
    pub(crate) fn read(path: &Path, what: &str) -> Result<Document, LoadError> {
        Ok(Document {
            text: read(path, what)?,
            file: path.display().to_string(),
        })
    }

    /// Builds errors that point into this file.
    pub(crate) fn errors(&self) -> Errors<'_> {
        Errors {
            file: &self.file,
            text: &self.text,
        }
    }
}

/// The object under test and the spec a JSON input file names, compiled.
pub(crate) struct Subject {
    /// The compiled object under test.
    pub(crate) model: Arc<Model>,
    /// The spec to check against.
    pub(crate) spec: SpecChoice,
    /// The source files of the model and of a model spec.
    pub(crate) sources: SourceMap,
}

/// Loads the `object` and `spec` values of a JSON input file at `path` (they are relative to
/// the file).
pub(crate) fn load_subject(
    errors: &Errors,
    path: &Path,
    object: &str,
    spec: Option<&str>,
) -> Result<Subject, LoadError> {
    let root = JsonPath::default();
    let base = path.parent().unwrap_or(Path::new(""));
    let mut sources = SourceMap::new();
    let model = Arc::new(load_model(
        errors,
        &root.key("object"),
        base,
        object,
        &mut sources,
    )?);
    let spec = resolve_spec(errors, &root.key("spec"), base, spec, &mut sources)?;
    Ok(Subject {
        model,
        spec,
        sources,
    })
}

/// Parses the list of calls at `at` (`list[i]` is at `at[i]`), checked against `model`'s
/// operations when there is one (a Rust object's are known only when it runs).
pub(crate) fn parse_checked_calls(
    errors: &Errors,
    model: Option<&Model>,
    at: &JsonPath,
    list: &[String],
) -> Result<Vec<Call>, LoadError> {
    list.iter()
        .enumerate()
        .map(|(i, s)| parse_checked_call(errors, model, &at.index(i), s))
        .collect()
}

/// The largest character boundary of `text` at or before `at`.
fn floor_char_boundary(text: &str, at: usize) -> usize {
    let mut at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

/// The byte offset of a 1-based line and column as serde_json counts them.
pub(crate) fn offset_of(text: &str, line: usize, column: usize) -> usize {
    let line_start: usize = text
        .split_inclusive('\n')
        .take(line.saturating_sub(1))
        .map(str::len)
        .sum();
    (line_start + column.saturating_sub(1)).min(text.len().saturating_sub(1))
}

/// Loads and checks the test case at `path`.
pub fn load(path: &Path) -> Result<TestCase, LoadError> {
    load_with_file(path).map(|(test, _)| test)
}

/// [`load`], with the test file as written (its references and description), from one read.
pub fn load_with_file(path: &Path) -> Result<(TestCase, TestFile), LoadError> {
    let document = Document::read(path, "test file")?;
    let errors = document.errors();
    let raw = parse_test_file(&errors)?;
    let root = JsonPath::default();
    let Subject {
        model,
        spec,
        sources,
    } = load_subject(&errors, path, &raw.object, raw.spec.as_deref())?;
    let calls =
        |list: &[String], at: JsonPath| parse_checked_calls(&errors, Some(&model), &at, list);
    let init = calls(&raw.init, root.key("init"))?;
    if raw.threads.is_empty() {
        return Err(errors.at_path(
            &root.key("threads"),
            "a test needs at least one thread".into(),
            "no threads",
            Some(
                "list each thread's operations: \"threads\": [[\"write(0, 2)\"], [\"read()\"]]"
                    .into(),
            ),
        ));
    }
    let threads = raw
        .threads
        .iter()
        .enumerate()
        .map(|(t, ops)| calls(ops, root.key("threads").index(t)))
        .collect::<Result<Vec<_>, _>>()?;
    let finals = calls(&raw.finals, root.key("final"))?;
    if raw.races {
        return Err(errors.at_path(
            &root.key("races"),
            "`races` is for tests of Rust objects".into(),
            "not for a model",
            Some(
                "a model's fields are raced on by design, as the `Shared` cells of a Rust \
                 object are by default; remove the key, or run the test on a Rust object \
                 (fgvt_sync::main!)"
                    .into(),
            ),
        ));
    }
    let test = TestCase {
        path: path.to_path_buf(),
        model,
        spec,
        init,
        threads,
        finals,
        sources,
        local_budget: DEFAULT_BUDGET,
        max_stale: DEFAULT_MAX_STALE,
        memory: MemoryMode::AsDeclared,
        merge_by_linearizations: true,
    };
    Ok((test, raw))
}

/// Resolves a `spec` value (`None` is `self`) read at `at`; model files are relative to `base`.
pub(crate) fn resolve_spec(
    errors: &Errors,
    at: &JsonPath,
    base: &Path,
    spec: Option<&str>,
    sources: &mut SourceMap,
) -> Result<SpecChoice, LoadError> {
    Ok(match spec {
        None | Some("self") => SpecChoice::SelfSpec,
        Some(name) if name.contains(".fgv") => {
            SpecChoice::Model(Arc::new(load_model(errors, at, base, name, sources)?))
        }
        Some(name) if fgvt_checker::builtin::builtin(name).is_some() => {
            SpecChoice::Builtin(name.to_string())
        }
        Some(name) => {
            return Err(errors.at_path(
                at,
                format!("unknown spec `{name}`"),
                "not a spec",
                Some(format!(
                    "use \"self\", a built-in ({}), or a model file like \"spec.fgv#SetSpec\"",
                    fgvt_checker::builtin::BUILTIN_NAMES.join(", ")
                )),
            ))
        }
    })
}

/// Compiles the model named by `reference` (`file.fgv` or `file.fgv#Name`).
pub(crate) fn load_model(
    errors: &Errors,
    at: &JsonPath,
    base: &Path,
    reference: &str,
    sources: &mut SourceMap,
) -> Result<Model, LoadError> {
    let (file, object) = match reference.split_once('#') {
        Some((file, name)) => (file, Some(name)),
        None => (reference, None),
    };
    let path = base.join(file);
    let text = std::fs::read_to_string(&path).map_err(|e| {
        errors.at_path(
            at,
            format!("cannot read `{}`: {e}", path.display()),
            "this file",
            Some("the path is relative to the test file".into()),
        )
    })?;
    Ok(Model::compile(
        sources,
        &path.display().to_string(),
        &text,
        object,
    )?)
}

/// Parses one call string and checks it against the model's operations, if a model is given.
pub(crate) fn parse_checked_call(
    errors: &Errors,
    model: Option<&Model>,
    at: &JsonPath,
    text: &str,
) -> Result<Call, LoadError> {
    let (start, end) = json_pos::locate(errors.text, at).unwrap_or((0, 1));
    // The call's text starts one byte into the JSON string, after the quote; escapes are rare
    // in calls, so offsets inside the string map one to one.
    let inner = start + 1;
    let call = parse_call(text).map_err(|CallSyntaxError { offset, message }| {
        let pos = (inner + offset).min(end.saturating_sub(1));
        errors.at(
            pos,
            pos + 1,
            format!(
                "{at}: malformed call `{}`: {message}",
                fgvt_reports::shorten(text, 60)
            ),
            "here",
            Some(
                "write a call as name(arg, ...) with literal arguments, e.g. \"write(0, 2)\""
                    .into(),
            ),
        )
    })?;
    let Some(model) = model else {
        return Ok(call);
    };
    let ops = || {
        model
            .operations()
            .iter()
            .map(|o| o.name.clone())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let Some(sig) = model.operation(&call.op) else {
        return Err(errors.at(
            start,
            end,
            format!("{at}: unknown operation `{}` of {}", call.op, model.name()),
            "not an operation",
            Some(format!("{} has the operations: {}", model.name(), ops())),
        ));
    };
    if sig.params.len() != call.args.len() {
        return Err(errors.at(
            start,
            end,
            format!(
                "{at}: `{}` takes {} argument{} but {} {} given",
                call.op,
                sig.params.len(),
                if sig.params.len() == 1 { "" } else { "s" },
                call.args.len(),
                if call.args.len() == 1 { "is" } else { "are" }
            ),
            "wrong number of arguments",
            Some(format!(
                "the operation is declared as {}({})",
                sig.name,
                sig.params.join(", ")
            )),
        ));
    }
    if let Some(big) = call.args.iter().find(|a| has_nat(a)) {
        return Err(errors.at(
            start,
            end,
            format!("{at}: the argument {big} does not fit in the modeling language's integers"),
            "too large",
            Some(format!(
                "a model's integers are signed 64-bit: use a value of at most {}",
                i64::MAX
            )),
        ));
    }
    Ok(call)
}

/// Whether `value` holds an unsigned integer above `i64::MAX`, which models cannot hold.
fn has_nat(value: &Value) -> bool {
    match value {
        Value::Nat(_) => true,
        Value::Tuple(items) => items.iter().any(has_nat),
        _ => false,
    }
}
