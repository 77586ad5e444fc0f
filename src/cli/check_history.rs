//! `fgvt check-history`: linearizability of recorded histories (Jepsen, kv, fgvt JSON).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use fgvt_checker::formats::{self, Format};
use fgvt_checker::{
    check, check_parallel, CheckError, CheckOptions, Initialized, Outcome, Spec, Verdict,
};
use fgvt_reports::{
    render_sorted_json, CheckReport, CheckReports, CheckSummary, CheckVerdict, CHECK_SCHEMA_ID,
};
use fgvt_tree::SourceMap;
use miette::IntoDiagnostic;

use super::output::{emit, Exit};
use super::{CheckHistoryArgs, HistoryFormat};
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
    /// The history read, kept for `--html`.
    history: Option<fgvt_checker::History>,
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
        super::Format::Json => {
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
        super::Format::Text => emit(&text(&results))?,
    }
    if let Some(html) = &args.html {
        write_picture(html, &results)?;
    }
    Ok(exit.unwrap_or(Exit::BadInput))
}

/// Writes the `--html` page of the one history checked.
fn write_picture(html: &Path, results: &[FileResult]) -> miette::Result<()> {
    let [FileResult {
        path,
        outcome: Ok(outcome),
        history: Some(history),
        ..
    }] = results
    else {
        return Err(miette::miette!(
            help = "check one history file at a time with --html",
            "--html draws one checked history, and {} were given or could not be checked",
            results.len()
        ));
    };
    let page = fgvt_reports::render_history_html(&super::history_picture::picture(
        path.display().to_string(),
        history,
        outcome,
    ));
    super::output::write_atomically(html, page.as_bytes())?;
    eprintln!("wrote {}", html.display());
    Ok(())
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
            let head = first_line(&file);
            // An empty file is a history that recorded nothing (a test that did not run): bad
            // input to report, not a stranger to skip.
            if head.is_empty() || formats::detect_format(&head).is_some() {
                inputs.files.push(file);
            } else {
                inputs.skipped.push(format!(
                    "skipped {}: not a history (no known format on its first line)",
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

/// The first non-empty line of a file (enough to tell its format), or nothing.
fn first_line(path: &Path) -> String {
    use std::io::BufRead as _;
    let Ok(file) = std::fs::File::open(path) else {
        return String::new();
    };
    std::io::BufReader::new(file)
        .lines()
        .map_while(Result::ok)
        .find(|l| !l.trim().is_empty())
        .unwrap_or_default()
}

fn check_file(path: &Path, format: Option<Format>, args: &CheckHistoryArgs) -> FileResult {
    let started = Instant::now();
    let mut result = FileResult {
        path: path.to_path_buf(),
        format,
        spec: None,
        initial: None,
        outcome: Err(String::new()),
        elapsed: Duration::ZERO,
        history: None,
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
        (Some(value), _) => Some((value, None)),
        (None, Some((value, line))) => Some((value, Some(*line))),
        (None, None) => None,
    };
    result.initial = initial.map(|(value, _)| value.to_string());
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
    if args.html.is_some() {
        result.history = Some(loaded.parsed.history);
    }
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
            Err(e) => format!("error: {e}"),
        };
        let path = r.path.display().to_string();
        if r.outcome.is_err() && detail.starts_with(&format!("error: {path}")) {
            // The error names the file (with its line) already.
            let _ = writeln!(out, "{detail}");
        } else {
            let _ = writeln!(out, "{path}: {detail}");
        }
        if let Ok(Outcome {
            verdict: Verdict::NotLinearizable(explanation),
            ..
        }) = &r.outcome
        {
            if results.len() == 1 {
                let _ = writeln!(out, "\n{explanation}");
            } else {
                let _ = writeln!(out, "  {}", explanation.summary());
            }
        }
    }
    if results.len() > 1 {
        let reports: Vec<CheckReport> = results.iter().map(FileResult::report).collect();
        let s = CheckSummary::of(&reports);
        let _ = writeln!(
            out,
            "\n{} files: {} linearizable, {} not linearizable, {} unknown, {} errors",
            s.files, s.linearizable, s.not_linearizable, s.unknown, s.errors
        );
    }
    out
}
