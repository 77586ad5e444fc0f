//! `fgvt hunt`: draw random tests from a hunt file until one fails (stage A), and with
//! `--localize` run the whole pipeline: hunt, minimize, localize.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::time::Instant;

use indicatif::{ProgressBar, ProgressStyle};

use super::diagnostic::pipeline_error;
use super::jobs::with_jobs;
use super::localize::{localize, render};
use super::output::{emit, stdout_color, write_atomically, Exit};
use super::test_file::write_test;
use super::HuntArgs;
use crate::hunt::{
    self, directory_of, shrink_summary, HuntError, HuntFile, HuntOptions, MinimizeOutcome,
    ModelRefs, Sample, Subject, TestVerdict,
};
use crate::pipeline::{Limits, LocalizeOptions};

/// How many CDRS the `--localize` report shows, as `fgvt localize` does by default.
const MAX_CDRS: usize = 3;

/// Runs `fgvt hunt`.
pub fn run(args: &HuntArgs) -> miette::Result<Exit> {
    let file = hunt::load(&args.hunt)?;
    if args.samples == Some(0) || args.jobs == Some(0) {
        return Err(miette::miette!(
            help = "give a positive number",
            "--samples and --jobs must be at least 1"
        ));
    }
    let started = Instant::now();
    let deadline = args.limits.timeout.map(|t| started + t);
    let mut limits = Limits::from(&args.limits);
    // The deadline bounds the whole hunt; each test gets what is left of it.
    limits.timeout = None;
    let options = HuntOptions {
        seed: args.seed,
        samples: args.samples.unwrap_or(file.samples),
        jobs: args
            .jobs
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get())),
        all: args.all,
        limits,
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
            let report = pipeline_error(&args.hunt, &source);
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
        for sample in &result.findings {
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

/// Stages B and C on the hunt's finding: minimize it, write it (with `-o`), localize it.
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
            &(&args.limits).into(),
            deadline,
        )
    })?
    .map_err(|e| pipeline_error(&args.hunt, &e))?;
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
        shrink_summary(
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
    let text = hunt::render_test(
        &minimized.matrix,
        refs,
        &directory_of(args.output.as_deref().unwrap_or(Path::new("minimal.json"))),
        Some(&description),
        Some(options.seed),
    );
    match &args.output {
        Some(output) => {
            write_atomically(output, text.as_bytes())?;
            eprintln!("wrote {}", output.display());
        }
        None => eprint!("minimal test (write it with -o FILE):\n{text}"),
    }

    let test = subject.test(&minimized.matrix, path.clone(), Some(options.seed));
    let localize_options = LocalizeOptions {
        limits: (&args.limits).into(),
        max_cdrs: MAX_CDRS,
        ..LocalizeOptions::default()
    };
    let localized = with_jobs(Some(options.jobs), || localize(&test, &localize_options))??;
    emit(&render(&localized.report, args.format, stdout_color()))?;
    Ok(Exit::Violation)
}

/// A finding, for people: what failed and the test's operations.
fn describe(sample: &Sample) -> String {
    let what = match &sample.report.verdict {
        TestVerdict::Fails { not_linearizable, faults } => {
            let mut parts = Vec::new();
            if *not_linearizable > 0 {
                parts.push(format!("{not_linearizable} not linearizable"));
            }
            if *faults > 0 {
                parts.push(format!("{faults} faulting"));
            }
            format!("FAILING test at sample {}: of {} leaves, {}", sample.index, sample.report.leaves, parts.join(", "))
        }
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
fn progress_bar(samples: usize) -> Option<ProgressBar> {
    if !std::io::stderr().is_terminal() {
        return None;
    }
    let bar = ProgressBar::new(samples as u64);
    bar.set_style(
        ProgressStyle::with_template("{bar:30} {pos}/{len} tests ({per_sec}, {elapsed})")
            .expect("valid template"),
    );
    Some(bar)
}
