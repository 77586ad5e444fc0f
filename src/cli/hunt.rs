//! `fgvt hunt`: draw random tests from a hunt file until one fails (stage A), and with
//! `--localize` run the whole pipeline: hunt, minimize, localize.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::time::Instant;

use fgvt_labeling::pattern::Pattern;
use indicatif::{ProgressBar, ProgressState, ProgressStyle};

use super::jobs::with_jobs;
use super::output::{emit, stdout_color, write_atomically, Exit};
use super::pipeline_error;
use super::written::{directory_of, summary, write_test};
use super::{HuntArgs, ReportFormat};
use crate::hunt::{
    self, HuntError, HuntFile, HuntOptions, MinimizeOutcome, ModelRefs, Sample, Subject,
    TestVerdict,
};
use crate::pipeline::{self, LocalizeOptions};

/// How many CDRS the `--localize` report shows, as `fgvt localize` does by default.
const MAX_CDRS: usize = 3;

/// Runs `fgvt hunt`.
pub fn run(args: &HuntArgs) -> miette::Result<Exit> {
    let mut file = hunt::load(&args.hunt)?;
    file.local_budget = args.limits.max_local_steps;
    if args.samples == Some(0) || args.jobs == Some(0) {
        return Err(miette::miette!(
            help = "give a positive number",
            "--samples and --jobs must be at least 1"
        ));
    }
    let started = Instant::now();
    let deadline = args.limits.timeout.map(|t| started + t);
    let mut explore = args.limits.limits().explore_options();
    // The deadline bounds the whole hunt; each test gets what is left of it.
    explore.timeout = None;
    let options = HuntOptions {
        seed: args.seed,
        samples: args.samples.unwrap_or(file.samples),
        jobs: args
            .jobs
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get())),
        all: args.all,
        explore,
        deadline,
    };
    let bar = progress_bar(options.samples);
    let result = hunt::hunt(&file, &options, &|| {
        if let Some(bar) = &bar {
            bar.inc(1);
        }
    });
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    let result = result.map_err(|e| match e {
        HuntError::Check { index, source } => {
            let report = pipeline_error(source);
            miette::miette!("{report} (sample {index})")
        }
        other => miette::miette!("{}: {other}", args.hunt.display()),
    })?;

    let refs = ModelRefs {
        object: file.object_ref.clone(),
        spec: file.spec_ref.clone(),
        base: file.base().to_path_buf(),
    };
    let header = format!(
        "{}: {} — {} of {} tests drawn ({}×{} matrices of {} operations, seed {}) in {:.1?}",
        args.hunt.display(),
        file.model.name(),
        result.drawn,
        options.samples,
        file.threads,
        file.ops_per_thread,
        file.operations.len(),
        options.seed,
        started.elapsed(),
    );
    let Some(first) = result.findings.first() else {
        let mut out = format!("{header}\nno failing test found\n");
        if result.timed_out {
            out.push_str("PARTIAL: --timeout stopped the hunt before every test was checked\n");
        }
        if result.partial > 0 {
            out.push_str(&format!(
                "PARTIAL: a limit cut the tree of {} test(s) short; raise --max-states/--max-steps\n",
                result.partial
            ));
        }
        emit(&out)?;
        let partial = result.timed_out || result.partial > 0;
        return Ok(if partial {
            Exit::Inconclusive
        } else {
            Exit::Ok
        });
    };

    if args.localize {
        eprintln!("{header}");
        eprint!("{}", describe(first));
        return pipeline(args, &file, &refs, first, &options, deadline);
    }
    if args.all {
        emit(&format!("{header}\n"))?;
        // Different samples can draw the same test: list and write each test once.
        let mut seen: Vec<&Sample> = Vec::new();
        for sample in &result.findings {
            if let Some(first) = seen.iter().find(|s| s.matrix == sample.matrix) {
                emit(&format!(
                    "sample {}: the same test as sample {}\n",
                    sample.index, first.index
                ))?;
                continue;
            }
            seen.push(sample);
            emit(&describe(sample))?;
            if let Some(output) = &args.output {
                let path = numbered(output, sample.index);
                write_finding(&file, &refs, sample, &path, options.seed)?;
                emit(&format!("wrote {}\n", path.display()))?;
            }
        }
        if args.output.is_none() {
            emit("(write the tests with -o FILE: sample N goes to FILE-N.json)\n")?;
        }
        return Ok(Exit::Violation);
    }
    let summary = format!("{header}\n{}", describe(first));
    let description = found_description(&args.hunt, &file, first.index, options.seed);
    write_test(
        &first.matrix,
        &refs,
        args.output.as_deref(),
        &description,
        Some(options.seed),
        &summary,
    )?;
    Ok(Exit::Violation)
}

/// Where `hunt --localize` writes the test it found, next to the minimal test at `minimal`:
/// `found.json` beside the default `minimal.json`, `NAME-found.json` beside `-o NAME.json`.
fn found_path(minimal: &Path) -> PathBuf {
    let stem = minimal
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let name = if stem == "minimal" {
        "found.json".to_string()
    } else {
        format!("{stem}-found.json")
    };
    minimal.with_file_name(name)
}

/// Stages B and C on the hunt's finding: minimize it, write it and the finding, localize it.
fn pipeline(
    args: &HuntArgs,
    file: &HuntFile,
    refs: &ModelRefs,
    found: &Sample,
    options: &HuntOptions,
    deadline: Option<Instant>,
) -> miette::Result<Exit> {
    if let TestVerdict::Nondeterministic(_) = found.report.verdict {
        eprintln!("not minimized nor localized: a nondeterministic object has no spec to localize against");
        return Ok(Exit::Violation);
    }
    let subject = Subject::of_hunt(file);
    let path = args
        .output
        .clone()
        .unwrap_or_else(|| PathBuf::from("minimal.json"));
    let outcome = with_jobs(Some(options.jobs), || {
        hunt::minimize_test(
            &subject,
            &found.matrix,
            path.clone(),
            &args.limits.limits().explore_options(),
            deadline,
        )
    })?
    .map_err(pipeline_error)?;
    let MinimizeOutcome::Minimized {
        minimized,
        timed_out,
        ..
    } = outcome
    else {
        // The finding failed a moment ago with the same limits; only a time limit can change that.
        return Err(miette::miette!(
            help = "raise --timeout",
            "{}: the failing test no longer fails when minimized (a time limit?)",
            args.hunt.display()
        ));
    };
    eprint!(
        "{}",
        summary(
            &format!("sample {}", found.index),
            &found.matrix,
            &minimized,
            timed_out
        )
    );
    let description = format!(
        "{} Minimized by `fgvt minimize`.",
        found_description(&args.hunt, file, found.index, options.seed)
    );
    // Every command printed below names a file that exists: the minimal test goes to `-o`
    // (or `minimal.json`), the test the hunt found next to it.
    let text = hunt::render_test(
        &minimized.matrix,
        refs,
        &directory_of(&path),
        Some(&description),
        Some(options.seed),
    );
    write_atomically(&path, text.as_bytes())?;
    let found_path = found_path(&path);
    write_finding(file, refs, found, &found_path, options.seed)?;
    eprintln!(
        "wrote {} (sample {}, as found) and {} (minimized)",
        found_path.display(),
        found.index,
        path.display()
    );

    let test = subject.test(&minimized.matrix, path.clone(), Some(options.seed));
    let localize = LocalizeOptions {
        pattern: Pattern::default(),
        max_cdrs: MAX_CDRS,
    };
    let localized = with_jobs(Some(options.jobs), || {
        pipeline::localize(&test, &args.limits.limits(), &localize, &mut ())
    })?
    .map_err(pipeline_error)?;
    let text = match args.format {
        ReportFormat::Text => fgvt_reports::render_text(&localized.report, stdout_color()),
        ReportFormat::Markdown => fgvt_reports::render_markdown(&localized.report),
        ReportFormat::Json => fgvt_reports::render_json(&localized.report),
    };
    emit(&text)?;
    Ok(Exit::Violation)
}

/// A finding, for people: what failed and the test's operations.
fn describe(sample: &Sample) -> String {
    let what = match &sample.report.verdict {
        // A hunt's search stops at the first failing leaf (`hunt::check_test`).
        TestVerdict::Fails { faults, .. } => format!(
            "FAILING test at sample {}: a leaf {} (the search stopped at the first failing leaf{})",
            sample.index,
            if *faults > 0 { "faults" } else { "is not linearizable" },
            sample
                .report
                .stopped_at_first
                .map(|states| format!(", after {states} states"))
                .unwrap_or_default()
        ),
        TestVerdict::Nondeterministic(found) => format!(
            "NONDETERMINISTIC object at sample {}: {found}.\n  Its serial runs disagree, so they are no spec (Line-Up's phase 1); \
             this is not a linearizability failure. Make the object deterministic or give a spec (\"spec\": \"set\").",
            sample.index
        ),
        TestVerdict::Passes => format!("test at sample {} passes", sample.index),
    };
    format!("{what}\n{}", sample.matrix)
}

/// The description of a test the hunt found.
fn found_description(hunt_path: &Path, file: &HuntFile, index: usize, seed: u64) -> String {
    let mut text = format!(
        "Found by `fgvt hunt {} --seed {seed}` (sample {index}).",
        hunt_path.display()
    );
    if let Some(d) = &file.description {
        text.push(' ');
        text.push_str(d);
    }
    text
}

/// Writes `sample` to `path`.
fn write_finding(
    file: &HuntFile,
    refs: &ModelRefs,
    sample: &Sample,
    path: &Path,
    seed: u64,
) -> miette::Result<()> {
    let description = found_description(&file.path, file, sample.index, seed);
    let text = hunt::render_test(
        &sample.matrix,
        refs,
        &directory_of(path),
        Some(&description),
        Some(seed),
    );
    write_atomically(path, text.as_bytes())
}

/// `found.json` with sample 7 → `found-7.json`.
fn numbered(path: &Path, index: usize) -> PathBuf {
    let stem = path
        .file_stem()
        .map_or_else(|| "found".into(), |s| s.to_string_lossy().to_string());
    let name = match path.extension() {
        Some(ext) => format!("{stem}-{index}.{}", ext.to_string_lossy()),
        None => format!("{stem}-{index}"),
    };
    path.with_file_name(name)
}

/// A progress bar over the samples on stderr, only on a terminal.
/// A rate in whole units, as people read it: `12 tests/s`, or `8 s/test` when slower than one
/// a second (indicatif's `{per_sec}` prints `0.1234/s`).
fn rate(per_sec: f64) -> String {
    if !per_sec.is_finite() || per_sec <= 0.0 {
        "—".to_string()
    } else if per_sec >= 1.0 {
        format!("{:.0} tests/s", per_sec)
    } else {
        format!("{:.0} s/test", 1.0 / per_sec)
    }
}

fn progress_bar(samples: usize) -> Option<ProgressBar> {
    if !std::io::stderr().is_terminal() {
        return None;
    }
    let bar = ProgressBar::new(samples as u64);
    bar.set_style(
        ProgressStyle::with_template("{bar:30} {pos}/{len} tests ({rate}, {elapsed})")
            .expect("valid template")
            .with_key(
                "rate",
                |state: &ProgressState, w: &mut dyn std::fmt::Write| {
                    let _ = w.write_str(&rate(state.per_sec()));
                },
            ),
    );
    Some(bar)
}

#[cfg(test)]
mod tests {
    use super::rate;

    #[test]
    fn rates_are_whole_numbers() {
        assert_eq!(rate(12.3456), "12 tests/s");
        assert_eq!(rate(0.125), "8 s/test");
        assert_eq!(rate(0.0), "—");
    }
}
