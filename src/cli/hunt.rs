//! `fgvt hunt`: draw random tests from a hunt file until one fails (stage A), and with
//! `--localize` run the whole pipeline: hunt, minimize, localize.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::time::Instant;

use fgvt_labeling::pattern::Pattern;
use indicatif::{ProgressBar, ProgressState, ProgressStyle};

use super::jobs::with_jobs;
use super::output::{
    check_output, emit, is_stdout, output_name, stdout_color, write_atomically, Exit,
};
use super::pipeline_error;
use super::written::{directory_of, summary, write_test, Stopped};
use super::{HuntArgs, HuntFlags};
use crate::hunt::shard::{self, read_shards, HuntIdentity};
use crate::hunt::{
    self, HuntError, HuntOptions, HuntPlan, Judge, Matrix, MinimizeOutcome, ModelJudge, ModelRefs,
    Sample, Shard, ShardReport, TestVerdict,
};
use crate::pipeline::{self, LocalizeOptions};
use fgvt_reports::LocalizeReport;
use fgvt_tree::ExploreOptions;

/// How many CDRS the `--localize` report shows, as `fgvt localize` does by default.
const MAX_CDRS: usize = 3;

/// Runs `fgvt hunt`.
pub fn run(args: &HuntArgs) -> miette::Result<Exit> {
    let mut file = hunt::load(&args.flags.hunt)?;
    file.subject.local_budget = args.limits.max_local_steps;
    file.subject.max_stale = args.limits.max_stale;
    let started = Instant::now();
    let judge = ModelJudge::of_hunt(&file);
    let limits = args.limits.limits();
    let localize = |matrix: &Matrix, path: &Path| {
        let test = judge.subject.test(matrix, path.to_path_buf());
        let options = LocalizeOptions {
            pattern: Pattern::default(),
            max_cdrs: MAX_CDRS,
        };
        pipeline::localize(&test, &limits, &options, &mut ())
            .map(|localized| localized.report)
            .map_err(pipeline_error)
    };
    let mut explore = limits.explore_options();
    // The deadline bounds the whole hunt; each test gets what is left of it.
    explore.timeout = None;
    hunt_with(
        &args.flags,
        &HuntSubject {
            plan: &file.plan,
            object: file.subject.model.name().to_string(),
            refs: ModelRefs::model(
                &file.plan.object_ref,
                file.plan.spec_ref.as_deref(),
                &file.plan.path,
            ),
            judge: &judge,
            explore,
            started,
            deadline: args.limits.timeout.map(|t| started + t),
            localize: &localize,
            program: "fgvt".to_string(),
        },
    )
}

/// What one hunt needs beside its flags, whatever the object is written in (a model here, a
/// Rust object in `fgvt_sync::main!`).
pub struct HuntSubject<'a> {
    /// The hunt file, as read.
    pub plan: &'a HuntPlan,
    /// The object's name, for the header.
    pub object: String,
    /// The hunt file's `object` and `spec`, as the tests it writes name them.
    pub refs: ModelRefs,
    /// Whether a test fails.
    pub judge: &'a dyn Judge,
    /// The limits of each test (without a timeout: `deadline` bounds the whole hunt).
    pub explore: ExploreOptions,
    /// When the hunt started.
    pub started: Instant,
    /// When the whole hunt (and its minimizing) must stop.
    pub deadline: Option<Instant>,
    /// Localizes the test with these operations written at this path (`--localize`).
    pub localize: &'a (dyn Fn(&Matrix, &Path) -> miette::Result<LocalizeReport> + Sync),
    /// The program that runs the hunt again, for the descriptions of the tests it writes:
    /// `fgvt`, or a `main!` program's path.
    pub program: String,
}

/// Runs a hunt as `flags` ask: draws tests until one fails, and writes it, or all of them
/// (`--all`), or minimizes and localizes it (`--localize`); or runs one shard of the hunt and
/// writes its result (`--shard`), or merges the shards' results and reports them as the whole
/// hunt would (`--merge`).
pub fn hunt_with(flags: &HuntFlags, subject: &HuntSubject<'_>) -> miette::Result<Exit> {
    let plan = subject.plan;
    if flags.samples == Some(0) || flags.jobs == Some(0) || flags.shard_count == Some(0) {
        return Err(miette::miette!(
            help = "give a positive number",
            "--samples, --jobs and --shard-count must be at least 1"
        ));
    }
    let shard = match flags.shard {
        Some(arg) => Some(arg.resolve(flags.shard_count, |name| std::env::var(name).ok())?),
        None => None,
    };
    // Where the results go is checked before the (possibly long) hunt.
    let shard_output = match shard {
        Some(shard) => shard_output(flags.output.as_deref(), shard)?,
        None => None,
    };
    if let Some(output) = (flags.output.as_deref()).filter(|p| shard.is_none() && !is_stdout(p)) {
        check_output(output)?;
    }
    if flags.localize {
        let minimal = minimal_path(flags);
        check_output(&minimal)?;
        check_output(&found_path(&minimal))?;
    }
    // The interrupt the hunt's explorations stop at, if the front end gave one.
    let stopped = || (subject.explore.interrupt).is_some_and(fgvt_tree::Interrupt::is_raised);
    let options = HuntOptions {
        seed: flags.seed,
        samples: flags.samples.unwrap_or(plan.samples),
        jobs: flags
            .jobs
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get())),
        all: flags.all,
        explore: subject.explore.clone(),
        deadline: subject.deadline,
        shard,
    };
    if let Some(shard) = shard {
        return run_shard(flags, subject, &options, shard, shard_output.as_deref());
    }
    let (result, took) = match &flags.merge {
        Some(paths) => {
            let shards = read_shards(paths)?;
            let merged = shard::merge(HuntIdentity::of(plan, &options), &shards)?;
            if let Some(error) = merged.error {
                // As the unsharded hunt reports it.
                return Err(miette::miette!(
                    "{} (sample {})",
                    error.message,
                    error.sample
                ));
            }
            let took = format!(
                "{} shards ({:.1?} in all)",
                merged.shards,
                std::time::Duration::from_secs_f64(merged.seconds)
            );
            (merged.result, took)
        }
        None => {
            let bar = progress_bar(options.samples);
            let result = hunt::hunt(plan, subject.judge, &options, &|| {
                if let Some(bar) = &bar {
                    bar.inc(1);
                }
            });
            if let Some(bar) = bar {
                bar.finish_and_clear();
            }
            let result = result.map_err(|e| hunt_error(flags, e))?;
            (result, format!("{:.1?}", subject.started.elapsed()))
        }
    };

    let header = format!(
        "{}: {} — {} of {} tests drawn ({}×{} matrices of {} operations, seed {}) in {took}",
        flags.hunt.display(),
        subject.object,
        result.drawn,
        options.samples,
        plan.threads,
        plan.ops_per_thread,
        plan.operations.len(),
        options.seed,
    );
    let Some(first) = result.findings.first() else {
        let mut out = format!("{header}\nno failing test found\n");
        if result.interrupted {
            out.push_str(&format!(
                "INTERRUPTED: a signal stopped the hunt; the {} test(s) above were checked\n",
                result.drawn
            ));
            emit(&out)?;
            return Ok(Exit::Inconclusive);
        }
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

    let written = Written {
        subject,
        seed: options.seed,
    };
    if flags.localize {
        eprintln!("{header}");
        eprint!("{}", describe(first));
        return pipeline(flags, &written, first, &options);
    }
    if flags.all {
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
            if let Some(output) = &flags.output {
                let path = numbered(output, sample.index);
                written.finding(sample, &path)?;
                emit(&format!("wrote {}\n", path.display()))?;
            }
        }
        if flags.output.is_none() {
            emit("(write the tests with -o FILE: sample N goes to FILE-N.json)\n")?;
        }
        return Ok(interrupted_or(result.interrupted, Exit::Violation));
    }
    let summary = format!("{header}\n{}", describe(first));
    write_test(
        &first.matrix,
        &subject.refs,
        flags.output.as_deref(),
        &written.description(first.index),
        Some(options.seed),
        &summary,
    )?;
    Ok(interrupted_or(
        result.interrupted || stopped(),
        Exit::Violation,
    ))
}

/// A hunt that could not run, as a diagnostic.
fn hunt_error(flags: &HuntFlags, e: HuntError) -> miette::Report {
    match e {
        HuntError::Check { index, source } => {
            let report = pipeline_error(source);
            miette::miette!("{report} (sample {index})")
        }
        other => miette::miette!("{}: {other}", flags.hunt.display()),
    }
}

/// Where shard `shard` writes its result: `-o FILE`; `DIR/shard-K-of-N.json` for `-o DIR/`
/// or an existing directory (created when it ends in `/`); `None` for stdout (no `-o`, or
/// `-o -`). Checked, as every output is, before the work.
fn shard_output(output: Option<&Path>, shard: Shard) -> miette::Result<Option<PathBuf>> {
    let Some(output) = output.filter(|p| !is_stdout(p)) else {
        return Ok(None);
    };
    let text = output.as_os_str().to_string_lossy();
    let path = if text.ends_with('/') || output.is_dir() {
        std::fs::create_dir_all(output).map_err(|e| {
            miette::miette!(
                help = "name a directory fgvt may create, or a file",
                "cannot create the directory `{}`: {e}",
                output.display()
            )
        })?;
        output.join(shard.file_name())
    } else {
        output.to_path_buf()
    };
    check_output(&path)?;
    Ok(Some(path))
}

/// The samples of `shard` among `samples`, for people: `1, 4, 7, …, 97`.
fn sample_list(shard: Shard, samples: usize) -> String {
    let len = shard.len(samples);
    let list = |nths: &mut dyn Iterator<Item = usize>| {
        nths.map(|n| shard.sample(n).to_string())
            .collect::<Vec<_>>()
            .join(", ")
    };
    if len <= 4 {
        list(&mut (0..len))
    } else {
        format!("{}, …, {}", list(&mut (0..3)), shard.sample(len - 1))
    }
}

/// `--shard`: checks this shard's samples and writes its result (JSON) to `output` (stdout
/// when `None`), with what it found on stderr. Exit 0 once the result is written, whatever it
/// holds (the merge gives the hunt's verdict); 130 when a signal cut it short.
fn run_shard(
    flags: &HuntFlags,
    subject: &HuntSubject<'_>,
    options: &HuntOptions,
    shard: Shard,
    output: Option<&Path>,
) -> miette::Result<Exit> {
    let plan = subject.plan;
    let bar = progress_bar(options.own_samples());
    let run = hunt::hunt_run(plan, subject.judge, options, &|| {
        if let Some(bar) = &bar {
            bar.inc(1);
        }
    });
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    let run = run.map_err(|e| hunt_error(flags, e))?;
    let report = ShardReport::of(
        HuntIdentity::of(plan, options),
        shard,
        &run,
        &subject.object,
        &subject.program,
        subject.started.elapsed().as_secs_f64(),
    );
    let mut text = format!(
        "{}: {} — shard {shard}: {} of its {} tests checked (samples {} of {}; {}×{} matrices of {} operations, seed {}) in {:.1?}\n",
        flags.hunt.display(),
        subject.object,
        report.checked,
        report.shard_samples,
        sample_list(shard, options.samples),
        options.samples,
        plan.threads,
        plan.ops_per_thread,
        plan.operations.len(),
        options.seed,
        subject.started.elapsed(),
    );
    for sample in &run.result.findings {
        text.push_str(&describe(sample));
    }
    if let Some((index, source)) = &run.error {
        text.push_str(&format!("sample {index} could not be checked: {source}\n"));
    }
    if run.result.findings.is_empty() && run.error.is_none() {
        text.push_str("no failing test in this shard\n");
    }
    if run.result.interrupted {
        text.push_str("INTERRUPTED: a signal stopped the shard; its result says how far it got\n");
    } else if run.result.timed_out {
        text.push_str("PARTIAL: --timeout stopped the shard before every test was checked\n");
    }
    match output {
        Some(path) => {
            write_atomically(path, report.to_json().as_bytes())?;
            text.push_str(&format!("wrote {}\n", path.display()));
        }
        None => emit(&report.to_json())?,
    }
    let mut merge = format!(
        "{} hunt {} --seed {}",
        subject.program,
        plan.path.display(),
        options.seed
    );
    if flags.samples.is_some() {
        merge.push_str(&format!(" --samples {}", options.samples));
    }
    if options.all {
        merge.push_str(" --all");
    }
    text.push_str(&format!(
        "merge every shard's result with `{merge} --merge DIR` (DIR holding the {} results)\n",
        shard.count
    ));
    eprint!("{text}");
    Ok(if run.result.interrupted {
        Exit::Inconclusive
    } else {
        Exit::Ok
    })
}

/// 130 when a signal cut the hunt short (what it found was written all the same), else `exit`.
fn interrupted_or(interrupted: bool, exit: Exit) -> Exit {
    if interrupted {
        eprintln!("INTERRUPTED: a signal stopped the hunt before every test was checked");
        Exit::Inconclusive
    } else {
        exit
    }
}

/// How a hunt's tests are written: their references, and where they came from.
struct Written<'a> {
    subject: &'a HuntSubject<'a>,
    seed: u64,
}

impl Written<'_> {
    /// The description of the test the hunt found at sample `index`.
    fn description(&self, index: usize) -> String {
        let plan = self.subject.plan;
        let mut text = format!(
            "Found by `{} hunt {} --seed {}` (sample {index}).",
            self.subject.program,
            plan.path.display(),
            self.seed
        );
        if let Some(d) = &plan.description {
            text.push(' ');
            text.push_str(d);
        }
        text
    }

    /// Writes `sample` to `path`, as found.
    fn finding(&self, sample: &Sample, path: &Path) -> miette::Result<()> {
        let text = hunt::render_test(
            &sample.matrix,
            &self.subject.refs,
            &directory_of(path),
            Some(&self.description(sample.index)),
            Some(self.seed),
        );
        write_atomically(path, text.as_bytes())
    }
}

/// Where `hunt --localize` writes the minimal test: `minimal.json` in `--out-dir`, else in
/// the current directory.
fn minimal_path(flags: &HuntFlags) -> PathBuf {
    match &flags.out_dir {
        Some(dir) => dir.join("minimal.json"),
        None => PathBuf::from("minimal.json"),
    }
}

/// Where `hunt --localize` writes the test it found: `found.json`, beside the minimal test.
fn found_path(minimal: &Path) -> PathBuf {
    minimal.with_file_name("found.json")
}

/// Stages B and C on the hunt's finding: minimize it, localize it, print (or write to `-o`)
/// the report, then write the finding and the minimal test to `--out-dir`. The report comes
/// out before the tests are written, so that a directory that cannot take them loses nothing
/// done; an interrupt stops at the stage it arrives in and writes what there is.
fn pipeline(
    flags: &HuntFlags,
    written: &Written<'_>,
    found: &Sample,
    options: &HuntOptions,
) -> miette::Result<Exit> {
    if let TestVerdict::Nondeterministic(_) = found.report.verdict {
        eprintln!("not minimized nor localized: a nondeterministic object has no spec to localize against");
        return Ok(Exit::Violation);
    }
    let subject = written.subject;
    let stopped = || (subject.explore.interrupt).is_some_and(fgvt_tree::Interrupt::is_raised);
    let path = minimal_path(flags);
    let found_path = found_path(&path);
    if stopped() {
        written.finding(found, &found_path)?;
        eprintln!(
            "INTERRUPTED before minimizing: wrote {} (sample {}, as found); `fgvt minimize` and `fgvt localize` it to go on",
            found_path.display(),
            found.index
        );
        return Ok(Exit::Inconclusive);
    }
    let outcome = with_jobs(Some(options.jobs), || {
        hunt::minimize_test(
            subject.judge,
            &found.matrix,
            &subject.explore,
            subject.deadline,
        )
    })?
    .map_err(pipeline_error)?;
    let (minimized, timed_out) = match outcome {
        MinimizeOutcome::Minimized {
            minimized,
            timed_out,
            ..
        } => (minimized, timed_out),
        MinimizeOutcome::NotFailing(_) if stopped() => {
            written.finding(found, &found_path)?;
            eprintln!(
                "INTERRUPTED before minimizing: wrote {} (sample {}, as found)",
                found_path.display(),
                found.index
            );
            return Ok(Exit::Inconclusive);
        }
        // The finding failed a moment ago with the same limits; only a time limit can change that.
        MinimizeOutcome::NotFailing(_) => {
            return Err(miette::miette!(
                help = "raise --timeout",
                "{}: the failing test no longer fails when minimized (a time limit?)",
                flags.hunt.display()
            ))
        }
    };
    let why_stopped = match (timed_out, stopped()) {
        (_, true) => Some(Stopped::Interrupted),
        (true, false) => Some(Stopped::Timeout),
        (false, false) => None,
    };
    eprint!(
        "{}",
        summary(
            &format!("sample {}", found.index),
            &found.matrix,
            &minimized,
            why_stopped
        )
    );
    let description = format!(
        "{} Minimized by `{} minimize`.",
        written.description(found.index),
        subject.program
    );
    let minimal_text = hunt::render_test(
        &minimized.matrix,
        &subject.refs,
        &directory_of(&path),
        Some(&description),
        Some(options.seed),
    );
    let write_tests = || -> miette::Result<()> {
        // Every command printed names a file that exists once these are written.
        write_atomically(&path, minimal_text.as_bytes())?;
        written.finding(found, &found_path)?;
        eprintln!(
            "wrote {} (sample {}, as found) and {} (minimized){}",
            found_path.display(),
            found.index,
            path.display(),
            if flags.out_dir.is_none() {
                " in the current directory (--out-dir DIR to put them elsewhere)"
            } else {
                ""
            }
        );
        Ok(())
    };
    if why_stopped == Some(Stopped::Interrupted) {
        write_tests()?;
        eprintln!(
            "INTERRUPTED before localizing: `fgvt localize {}` to go on",
            path.display()
        );
        return Ok(Exit::Inconclusive);
    }

    let report = with_jobs(Some(options.jobs), || {
        (subject.localize)(&minimized.matrix, &path)
    })??;
    // The test fails (the hunt saw it); a limit may leave the localization partial, which the
    // report says. Only an interrupt makes the whole run inconclusive (exit 130).
    let exit = if report.partial.as_deref() == Some(fgvt_tree::Limit::Interrupted.name()) {
        Exit::Inconclusive
    } else {
        Exit::Violation
    };
    match flags.output.as_deref().filter(|p| !is_stdout(p)) {
        Some(output) => {
            let text = flags.format.render(&report, false);
            if let Err(error) = write_atomically(output, text.as_bytes()) {
                // The report is what all the work was for: print it rather than lose it.
                emit(&text)?;
                return Err(error);
            }
            eprintln!("wrote the report to {}", output_name(output));
        }
        None => emit(&flags.format.render(&report, stdout_color()))?,
    }
    write_tests()?;
    Ok(exit)
}

/// A finding, for people: what failed and the test's operations.
fn describe(sample: &Sample) -> String {
    let what = match &sample.report.verdict {
        // A hunt's search stops at the first failing leaf (`hunt::check_test`).
        TestVerdict::Fails {
            not_linearizable, ..
        } => format!(
            "FAILING test at sample {}: a leaf {}{}",
            sample.index,
            if *not_linearizable > 0 {
                "is not linearizable"
            } else {
                "faults"
            },
            sample
                .report
                .stopped_at_first
                .map(|states| format!(
                    " (the search stopped at the first failing leaf, after {states} states)"
                ))
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
