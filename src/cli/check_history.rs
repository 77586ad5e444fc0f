//! `fgvt check-history`: linearizability of recorded histories (Jepsen etcd logs, kv logs,
//! Jepsen EDN, fgvt JSON), with `--html` pages that draw them.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use fgvt_checker::formats::{self, Format};
use fgvt_checker::{
    check, check_parallel, CheckError, CheckOptions, Initialized, Outcome, Spec, Verdict,
};
use fgvt_reports::sarif::{HistoryCheck, HistoryOp, HistoryViolation};
// "1 history", "3 histories".
use fgvt_reports::counted as count;
use fgvt_reports::{
    render_history_sarif, render_sorted_json, CheckReport, CheckReports, CheckSummary,
    CheckVerdict, CHECK_SCHEMA_ID,
};
use fgvt_tree::SourceMap;
use miette::IntoDiagnostic;

use super::output::{emit, Exit};
use super::{CheckHistoryArgs, HistoryFormat, HistoryReportFormat};
use fgvt_lang::{Model, SelfSpec};

/// What became of one file.
struct FileResult {
    path: PathBuf,
    format: Option<Format>,
    spec: Option<String>,
    /// The initial state given (flag or file), as fgvt writes values.
    initial: Option<String>,
    outcome: Result<Outcome, String>,
    elapsed: Duration,
    /// The history read, with the line of each event: for `--html` pages and SARIF locations.
    parsed: Option<formats::Parsed>,
}

impl FileResult {
    fn exit(&self) -> Exit {
        match &self.outcome {
            Err(_) => Exit::BadInput,
            Ok(o) => match o.verdict {
                Verdict::Linearizable { .. } => Exit::Ok,
                Verdict::NotLinearizable(_) => Exit::Violation,
                Verdict::Unknown => Exit::Inconclusive,
            },
        }
    }

    fn verdict(&self) -> CheckVerdict {
        match &self.outcome {
            Err(_) => CheckVerdict::Error,
            Ok(o) => match o.verdict {
                Verdict::Linearizable { .. } => CheckVerdict::Linearizable,
                Verdict::NotLinearizable(_) => CheckVerdict::NotLinearizable,
                Verdict::Unknown => CheckVerdict::Unknown,
            },
        }
    }

    /// Where the history stops being linearizable, by lines of the file (for SARIF).
    fn violation(&self) -> Option<HistoryViolation> {
        let Ok(Outcome {
            verdict: Verdict::NotLinearizable(explanation),
            ..
        }) = &self.outcome
        else {
            return None;
        };
        let parsed = self.parsed.as_ref()?;
        let op = |index: usize, text: String| {
            let thread = explanation.operation(index).map(|o| o.thread);
            HistoryOp {
                // Where the result shows: a wrong result is on the return's line.
                line: parsed.line_of_result(index),
                process: thread.map_or_else(|| "?".to_string(), |t| format!("T{t}")),
                text,
            }
        };
        let obstacles: Vec<HistoryOp> = (explanation.obstacle_notes().into_iter())
            .map(|(index, why)| op(index, why))
            .collect();
        let culprit = explanation.culprit()?;
        let prefix = (explanation.prefix.iter())
            .map(|step| op(step.op.op, format!("{} (linearized)", step.op)))
            .collect();
        Some(HistoryViolation {
            headline: explanation.headline(),
            culprit: op(culprit, explanation.headline()),
            obstacles,
            prefix,
        })
    }

    fn report(&self) -> CheckReport {
        let (partitions, explanation, error) = match &self.outcome {
            Ok(o) => (
                Some(o.partitions),
                match &o.verdict {
                    Verdict::NotLinearizable(e) => {
                        Some(serde_json::to_value(e).unwrap_or_default())
                    }
                    _ => None,
                },
                None,
            ),
            Err(e) => (None, None, Some(e.clone())),
        };
        let verdict = self.verdict();
        CheckReport {
            schema: CHECK_SCHEMA_ID.to_string(),
            file: self.path.display().to_string(),
            format: self.format.map(|f| f.as_str().to_string()),
            spec: self.spec.clone(),
            initial: self.initial.clone(),
            verdict,
            linearizable: match verdict {
                CheckVerdict::Linearizable => Some(true),
                CheckVerdict::NotLinearizable => Some(false),
                CheckVerdict::Unknown | CheckVerdict::Error => None,
            },
            partitions,
            explanation,
            error,
            elapsed_ms: self.elapsed.as_secs_f64() * 1e3,
        }
    }
}

/// Runs `fgvt check-history`.
pub fn run(args: &CheckHistoryArgs) -> miette::Result<Exit> {
    let Inputs { files, skipped } = expand(&args.files)?;
    for note in &skipped {
        eprintln!("note: {note}");
    }
    // Where the pictures go is settled before any work: a path that may not be written is
    // refused at once.
    let pictures = args
        .html
        .as_deref()
        .map(|html| Pictures::new(html, files.len()))
        .transpose()?;
    let format = match args.input_format {
        HistoryFormat::Auto => None,
        HistoryFormat::Json => Some(Format::Json),
        HistoryFormat::Jepsen => Some(Format::Jepsen),
        HistoryFormat::Kv => Some(Format::Kv),
        HistoryFormat::Edn => Some(Format::Edn),
    };
    let results: Vec<FileResult> = files.iter().map(|f| check_file(f, format, args)).collect();
    // Bad input is the worst outcome (nothing was learned), then a violation, then a timeout.
    let exit = results
        .iter()
        .map(FileResult::exit)
        .max_by_key(|e| match e {
            Exit::Ok => 0,
            Exit::Inconclusive => 1,
            Exit::Violation => 2,
            Exit::BadInput => 3,
        });
    match args.format {
        HistoryReportFormat::Sarif => {
            let reports: Vec<CheckReport> = results.iter().map(FileResult::report).collect();
            let checks: Vec<HistoryCheck<'_>> = (results.iter().zip(&reports))
                .map(|(r, report)| HistoryCheck {
                    report,
                    violation: r.violation(),
                })
                .collect();
            let command: Vec<String> = std::env::args().collect();
            emit(&render_history_sarif(&checks, &command.join(" ")))?;
        }
        HistoryReportFormat::Json => {
            let reports: Vec<CheckReport> = results.iter().map(FileResult::report).collect();
            emit(&if let [one] = &reports[..] {
                render_sorted_json(one)
            } else {
                render_sorted_json(&CheckReports {
                    schema: CHECK_SCHEMA_ID.to_string(),
                    summary: CheckSummary::of(&reports),
                    results: reports,
                })
            })?;
        }
        HistoryReportFormat::Text => emit(&text(&results))?,
    }
    // Errors go to stderr, as every command's do (the JSON report has them too).
    for r in &results {
        if let Err(e) = &r.outcome {
            eprintln!("{}", error_line(r, e));
        }
    }
    if let Some(pictures) = &pictures {
        pictures.write(&results)?;
    }
    Ok(exit.unwrap_or(Exit::BadInput))
}

/// `error: FILE:LINE: what`, naming the file once.
fn error_line(r: &FileResult, e: &str) -> String {
    let path = r.path.display().to_string();
    if e.starts_with(&path) {
        format!("error: {e}")
    } else {
        format!("error: {path}: {e}")
    }
}

/// Where `--html` draws the histories: one page, or a directory of pages with an index.
enum Pictures {
    /// The one history's page.
    Page(PathBuf),
    /// One page per history and `index.html`, in this directory.
    Directory(PathBuf),
}

impl Pictures {
    /// `--html PATH` for `files` histories: a directory when there are several, or when
    /// `PATH` is one (or ends with `/`); else a page. The directory is made if need be; a page
    /// must be a path fgvt may write.
    fn new(html: &Path, files: usize) -> miette::Result<Pictures> {
        let names_directory =
            html.is_dir() || html.to_string_lossy().ends_with(std::path::MAIN_SEPARATOR);
        if files <= 1 && !names_directory {
            super::output::check_output(html)?;
            return Ok(Pictures::Page(html.to_path_buf()));
        }
        if super::output::output_target(html)
            .is_ok_and(|t| !matches!(t, super::output::Target::File(_)))
            && !html.is_dir()
        {
            miette::bail!(
                help = "name a directory: one page per history goes in it, with index.html",
                "--html {}: {files} histories are drawn as one page each, which cannot go to a stream",
                super::output::output_name(html)
            );
        }
        if html.exists() && !html.is_dir() {
            miette::bail!(
                help = "name a directory (it is made if need be): one page per history goes in it, with index.html",
                "--html {}: {files} histories are drawn as one page each, and this is a file",
                html.display()
            );
        }
        std::fs::create_dir_all(html)
            .map_err(|e| miette::miette!("cannot make the directory {}: {e}", html.display()))?;
        Ok(Pictures::Directory(html.to_path_buf()))
    }

    /// Draws every history checked; one that could not be checked gets no page (its error was
    /// reported), but a line in the index.
    fn write(&self, results: &[FileResult]) -> miette::Result<()> {
        match self {
            Pictures::Page(html) => {
                let Some(page) = results.first().and_then(page) else {
                    eprintln!(
                        "note: no page written to {}: the history could not be checked",
                        super::output::output_name(html)
                    );
                    return Ok(());
                };
                super::output::write_atomically(html, page.as_bytes())?;
                eprintln!("wrote {}", super::output::output_name(html));
            }
            Pictures::Directory(dir) => {
                let names = page_names(results.iter().map(|r| r.path.as_path()));
                let mut entries = Vec::with_capacity(results.len());
                let mut pages = 0;
                for (r, name) in results.iter().zip(names) {
                    let written = match page(r) {
                        Some(page) => {
                            super::output::write_atomically(&dir.join(&name), page.as_bytes())?;
                            pages += 1;
                            Some(name)
                        }
                        None => None,
                    };
                    entries.push(index_entry(r, written));
                }
                let index = dir.join("index.html");
                let title = format!(
                    "{}: {}",
                    count(results.len() as u64, "history", "histories"),
                    summary_words(results)
                );
                let html = fgvt_reports::history_html::render_history_index(&title, &entries);
                super::output::write_atomically(&index, html.as_bytes())?;
                eprintln!(
                    "wrote {} and {} beside it",
                    index.display(),
                    count(pages as u64, "page", "pages")
                );
            }
        }
        Ok(())
    }
}

/// The page of a history that was checked, `None` for one that could not be.
fn page(r: &FileResult) -> Option<String> {
    let (Ok(outcome), Some(history)) = (&r.outcome, r.parsed.as_ref().map(|p| &p.history)) else {
        return None;
    };
    let mut picture =
        super::history_picture::picture(r.path.display().to_string(), history, outcome);
    if let Verdict::NotLinearizable(e) = &outcome.verdict {
        // The page's verdict line says "NOT linearizable" already.
        picture.explanation = Some(e.details().to_string());
    }
    Some(fgvt_reports::render_history_html(&picture))
}

/// The index's line of a history, linking its page if it has one.
fn index_entry(r: &FileResult, page: Option<String>) -> fgvt_reports::history_html::IndexEntry {
    let (verdict, detail) = match &r.outcome {
        Ok(o) => match &o.verdict {
            Verdict::Linearizable { .. } => ("linearizable", String::new()),
            Verdict::NotLinearizable(e) => ("NOT linearizable", e.headline()),
            Verdict::Unknown => ("unknown", "the check timed out".to_owned()),
        },
        Err(e) => ("error", e.clone()),
    };
    fgvt_reports::history_html::IndexEntry {
        file: r.path.display().to_string(),
        page,
        verdict: verdict.to_owned(),
        detail,
    }
}

/// A page name for each file: its path below the directory all of them share, `/` written
/// `--`, then `.html` (`jepsen/etcd_000.log` → `jepsen--etcd_000.log.html`); one of two equal
/// names gets a number.
fn page_names<'p>(paths: impl Iterator<Item = &'p Path>) -> Vec<String> {
    let absolute: Vec<PathBuf> = paths
        .map(|p| std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf()))
        .collect();
    // The directories every file is in.
    let shared = absolute
        .iter()
        .map(|p| p.parent().map(Path::to_path_buf).unwrap_or_default())
        .reduce(|a, b| {
            a.components()
                .zip(b.components())
                .take_while(|(x, y)| x == y)
                .map(|(x, _)| x)
                .collect()
        })
        .unwrap_or_default();
    let mut names: Vec<String> = Vec::with_capacity(absolute.len());
    for path in &absolute {
        let relative = path.strip_prefix(&shared).unwrap_or(path);
        let stem: Vec<String> = relative
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        let base = stem.join("--");
        let mut name = format!("{base}.html");
        let mut n = 2;
        while names.contains(&name) {
            name = format!("{base}-{n}.html");
            n += 1;
        }
        names.push(name);
    }
    names
}

/// "2 linearizable, 1 not linearizable, 0 unknown, 1 error".
fn summary_words(results: &[FileResult]) -> String {
    let reports: Vec<CheckReport> = results.iter().map(FileResult::report).collect();
    let s = CheckSummary::of(&reports);
    format!(
        "{} linearizable, {} not linearizable, {} unknown, {}",
        s.linearizable,
        s.not_linearizable,
        s.unknown,
        count(s.errors as u64, "error", "errors")
    )
}

/// The files to check, and notes on the files a directory held that are not histories.
struct Inputs {
    files: Vec<PathBuf>,
    skipped: Vec<String>,
}

/// Files named on the command line; a directory stands for the histories below it (in every
/// subdirectory, sorted). A file found in a directory whose first line is no history format
/// (a README, a script) is skipped with a note; a file named on the command line never is.
fn expand(paths: &[PathBuf]) -> miette::Result<Inputs> {
    let mut inputs = Inputs {
        files: Vec::new(),
        skipped: Vec::new(),
    };
    for path in paths {
        if !path.is_dir() {
            inputs.files.push(path.clone());
            continue;
        }
        let mut inside = Vec::new();
        walk(path, &mut inside).into_diagnostic()?;
        inside.sort();
        let before = inputs.files.len();
        for file in inside {
            let head = head(&file);
            // An empty file is a history that recorded nothing (a test that did not run): bad
            // input to report, not a stranger to skip.
            if head.trim().is_empty() || formats::detect_format(&head).is_some() {
                inputs.files.push(file);
            } else {
                inputs.skipped.push(format!(
                    "skipped {}: not a history (no known format at its start)",
                    file.display()
                ));
            }
        }
        if inputs.files.len() == before {
            miette::bail!(
                help = "name history files or a directory that holds some (Jepsen logs, kv logs, fgvt JSON)",
                "{}: the directory holds no history files",
                path.display()
            );
        }
    }
    Ok(inputs)
}

/// Every file below `dir`, hidden ones (`.git`, …) left out.
fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path
            .file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with('.'))
        {
            continue;
        }
        if path.is_dir() {
            walk(&path, out)?;
        } else if path.is_file() {
            out.push(path);
        }
    }
    Ok(())
}

/// The first kilobytes of a file, enough to tell its format (past comments, and a first
/// operation spread over several lines), or nothing.
fn head(path: &Path) -> String {
    use std::io::Read as _;
    let mut bytes = Vec::new();
    if let Ok(file) = std::fs::File::open(path) {
        let _ = file.take(HEAD_BYTES).read_to_end(&mut bytes);
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

/// How much of a file [`head`] reads.
const HEAD_BYTES: u64 = 16 * 1024;

fn check_file(path: &Path, format: Option<Format>, args: &CheckHistoryArgs) -> FileResult {
    let started = Instant::now();
    let mut result = FileResult {
        path: path.to_path_buf(),
        format,
        spec: None,
        initial: None,
        outcome: Err(String::new()),
        elapsed: Duration::ZERO,
        parsed: None,
    };
    let loaded = match formats::load_history_as(path, format, args.spec.as_deref()) {
        Ok(l) => l,
        Err(e) => {
            result.outcome = Err(e.to_string());
            return result;
        }
    };
    result.format = Some(loaded.format);
    let spec_name = args.spec.clone().or(loaded.parsed.spec.clone());
    result.spec = spec_name.clone();
    let options = CheckOptions {
        partition: !args.no_partition,
        deadline: args.timeout.map(|t| started + t),
        ..CheckOptions::default()
    };
    let parsed = &loaded.parsed;
    // Errors about the file's content name the line, as parse errors do.
    let at =
        |line: Option<usize>| line.map_or(String::new(), |l| format!("{}:{l}: ", path.display()));
    let checked = |result: Result<Outcome, CheckError>| {
        result.map_err(|e| {
            let line = match &e {
                CheckError::Invalid { op, .. } => parsed.line_of_operation(*op),
                CheckError::Malformed(m) => parsed.lines.get(m.index).copied(),
            };
            format!("{}{e}", at(line))
        })
    };
    let named_in_file = args.spec.is_none();
    // The flag's initial state wins over the file's (whose line errors point at).
    let initial = match (&args.initial, &loaded.parsed.initial) {
        (Some(given), _) => Some((&given.value, None)),
        (None, Some((value, line))) => Some((value, Some(*line))),
        (None, None) => None,
    };
    // Shown as the user gave it: the flag's EDN text, or the file's value.
    result.initial = match &args.initial {
        Some(given) => Some(given.text.clone()),
        None => initial.map(|(value, _)| value.to_string()),
    };
    // The built-in spec, started from the initial state given, if any.
    let initialized = |spec: fgvt_checker::BuiltinSpec| {
        let state = match initial {
            None => spec.initial(),
            Some((value, line)) => spec.state_of(value).map_err(|e| {
                let place = line.map_or_else(|| "--initial: ".to_owned(), |l| at(Some(l)));
                format!("{place}{e}")
            })?,
        };
        Ok(Initialized::new(spec, state))
    };
    result.outcome = match spec_name.as_deref() {
        None => Err(format!(
            "{}the history names no spec: add \"spec\" to the file or pass --spec (e.g. --spec register)",
            at(Some(1))
        )),
        Some(name) if name.contains(".fgv") => match initial {
            Some((_, line)) => Err(format!(
                "{}an initial state is for built-in specs; a model starts from its own `init`",
                at(line)
            )),
            None => model_spec(name)
                .and_then(|spec| checked(check(&spec, &parsed.history, &options))),
        },
        Some(name) => match fgvt_checker::builtin(name) {
            // Built-in specs are plain data: their partitions are searched in parallel.
            Some(spec) => initialized(spec).and_then(|spec| {
                checked(check_parallel(&spec, &parsed.history, &options))
            }),
            None => Err(format!(
                "{}unknown spec `{name}` (built-ins: {})",
                if named_in_file { at(parsed.spec_line) } else { String::new() },
                fgvt_checker::BUILTIN_NAMES.join(", ")
            )),
        },
    };
    result.elapsed = started.elapsed();
    result.parsed = Some(loaded.parsed);
    result
}

/// A spec written in the modeling language: `file.fgv#Name`.
fn model_spec(reference: &str) -> Result<impl Spec, String> {
    let (file, object) = match reference.split_once('#') {
        Some((f, o)) => (f, Some(o)),
        None => (reference, None),
    };
    let text =
        std::fs::read_to_string(file).map_err(|e| format!("cannot read spec `{file}`: {e}"))?;
    let model =
        Model::compile(&mut SourceMap::new(), file, &text, object).map_err(|e| format!("{e}"))?;
    Ok(SelfSpec::new(Arc::new(model)))
}

fn text(results: &[FileResult]) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    for r in results {
        let detail = match &r.outcome {
            Ok(o) => format!(
                "{} ({}, spec {}{}, {} partition{}, {:.1?})",
                match o.verdict {
                    Verdict::Linearizable { .. } => "linearizable",
                    Verdict::NotLinearizable(_) => "NOT linearizable",
                    Verdict::Unknown => "unknown (timed out; raise --timeout)",
                },
                r.format.map_or("?", |f| f.as_str()),
                r.spec.as_deref().unwrap_or("?"),
                r.initial
                    .as_ref()
                    .map_or(String::new(), |v| format!(" from {v}")),
                o.partitions,
                if o.partitions == 1 { "" } else { "s" },
                r.elapsed
            ),
            // Said on stderr (see `run`); the summary counts it.
            Err(_) => continue,
        };
        let _ = writeln!(out, "{}: {detail}", r.path.display());
        if let Ok(Outcome {
            verdict: Verdict::NotLinearizable(explanation),
            ..
        }) = &r.outcome
        {
            if results.len() == 1 {
                // The line above says "NOT linearizable": the details follow.
                let _ = writeln!(out, "\n{}", explanation.details());
            } else {
                let _ = writeln!(out, "  {}", explanation.summary());
            }
        }
    }
    if results.len() > 1 {
        let _ = writeln!(
            out,
            "\n{}: {}",
            count(results.len() as u64, "file", "files"),
            summary_words(results)
        );
    }
    out
}
