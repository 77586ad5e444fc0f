//! fgvt-sync, loom and shuttle side by side on the same algorithms: a Treiber stack and a
//! seqlock, each written once per tool on that tool's atomics (`under_*.rs`), and a buggy
//! Treiber stack, whose bug each tool should find.
//!
//! ```sh
//! cargo run --release --manifest-path benches/peers/Cargo.toml -- [--rounds 5] [--filter NAME]
//! ```
//!
//! For each case, every round runs each tool once, in turn (round 1: fgvt, loom, loom with a
//! preemption bound of 2, shuttle; round 2: ...), so that a slow spell of a shared machine falls
//! on all of them alike. Every run is a child process (this program with `--child CASE TOOL`):
//! the tools share no state, each starts cold, and a run still going at the cap (300 s by
//! default) is killed and reported unfinished; a tool that did not finish is not run again for
//! that case in later rounds. The Markdown table goes to stdout, progress to stderr.

mod arena;
mod cases;
mod invariants;
mod under_fgvt;
mod under_loom;
mod under_shuttle;
mod weak_loom;

use std::io::{BufRead, BufReader, Read};
use std::process::{Command, ExitCode, Stdio};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use cases::{first_failure_told, group, show_duration, Case, Outcome, Tool, CASES, TOOLS};

/// Environment variables that change `loom::model::Builder::new()`'s defaults: removed from the
/// children's environment so that "default settings" means loom's own.
const LOOM_VARIABLES: [&str; 8] = [
    "LOOM_MAX_PREEMPTIONS",
    "LOOM_MAX_BRANCHES",
    "LOOM_MAX_DURATION",
    "LOOM_MAX_PERMUTATIONS",
    "LOOM_CHECKPOINT_FILE",
    "LOOM_CHECKPOINT_INTERVAL",
    "LOOM_LOCATION",
    "LOOM_LOG",
];

/// Environment variables that make a panic print a backtrace: removed from the children's
/// environment, so that a check that fails (loom and shuttle stop at their first failing
/// execution, by a panic) is timed to its verdict, not to std symbolizing a backtrace (some
/// 40 ms and 50 MB here).
const BACKTRACE_VARIABLES: [&str; 2] = ["RUST_BACKTRACE", "RUST_LIB_BACKTRACE"];

const USAGE: &str = "\
usage: fgvt-peers [--rounds N] [--filter TEXT] [--timeout SECS] [--list]

  --rounds N       rounds per case (default 5); each round runs every tool once
  --filter TEXT    only the runs whose `case/tool` contains TEXT (e.g. `stack-2t`, `loom`,
                   `seqlock-2w1r/fgvt`, `buggy`; `stack-3t` also takes `buggy-stack-3t`)
  --timeout SECS   wall-clock cap of one run, in seconds (default 300)
  --list           print the cases and tools, and exit";

/// The command line.
struct Options {
    rounds: usize,
    filter: Option<String>,
    cap: Duration,
    list: bool,
}

/// Reads the command line, or says what is wrong with it.
fn parse(args: &[String]) -> Result<Options, String> {
    let mut options = Options {
        rounds: 5,
        filter: None,
        cap: Duration::from_secs(300),
        list: false,
    };
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        let mut value = |name: &str| {
            args.next()
                .cloned()
                .ok_or_else(|| format!("{name} needs a value"))
        };
        match arg.as_str() {
            "--rounds" => {
                options.rounds = value("--rounds")?
                    .parse()
                    .ok()
                    .filter(|&n| n > 0)
                    .ok_or("--rounds takes a positive number")?;
            }
            "--filter" => options.filter = Some(value("--filter")?),
            "--timeout" => {
                let secs: f64 = value("--timeout")?
                    .parse()
                    .ok()
                    .filter(|&s: &f64| s > 0.0)
                    .ok_or("--timeout takes a positive number of seconds")?;
                options.cap = Duration::from_secs_f64(secs);
            }
            "--list" => options.list = true,
            "-h" | "--help" => return Err(String::new()),
            other => return Err(format!("unknown argument `{other}`")),
        }
    }
    Ok(options)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("--child") {
        return child(&args[1..]);
    }
    let options = match parse(&args) {
        Ok(options) => options,
        Err(e) => {
            if !e.is_empty() {
                eprintln!("error: {e}");
            }
            eprintln!("{USAGE}");
            return ExitCode::from(if e.is_empty() { 0 } else { 2 });
        }
    };
    if options.list {
        for case in CASES {
            println!("{:14} {}", case.name(), case.describe());
        }
        for tool in TOOLS {
            println!("{:14} {}", tool.name(), tool.describe());
        }
        return ExitCode::SUCCESS;
    }
    run_all(&options)
}

/// The child's side: runs one case under one tool, printing the executions counted so far
/// every second (for a run killed at the cap) and then its outcome.
fn child(args: &[String]) -> ExitCode {
    let (Some(case), Some(tool)) = (
        args.first().and_then(|c| Case::from_name(c)),
        args.get(1).and_then(|t| Tool::from_name(t)),
    ) else {
        eprintln!("usage: fgvt-peers --child CASE TOOL");
        return ExitCode::from(2);
    };
    if tool != Tool::Fgvt {
        // The tools run their threads on this one: a second thread sleeping in between costs
        // nothing measurable.
        thread::spawn(|| loop {
            thread::sleep(Duration::from_secs(1));
            println!("PROGRESS\t{}", cases::executions());
        });
    }
    let outcome = measure(tool, case);
    println!("{}", outcome.to_line());
    ExitCode::SUCCESS
}

/// Runs `case` under `tool` once, in this process, and measures it. Choosing the tool's runner
/// is the program's: `cases.rs`, which every runner uses, uses none of them.
fn measure(tool: Tool, case: Case) -> Outcome {
    match (tool, case) {
        (Tool::Fgvt, _) => under_fgvt::run(case),
        (Tool::Loom, Case::Weak(weak)) => weak_loom::run(weak, None),
        (Tool::LoomPb2, Case::Weak(weak)) => weak_loom::run(weak, Some(2)),
        (Tool::Loom, _) => under_loom::run(case, None),
        (Tool::LoomPb2, _) => under_loom::run(case, Some(2)),
        (Tool::ShuttleDfs, _) => under_shuttle::run(case),
    }
}

/// What one run in a child process came to.
enum Run {
    /// It finished: the tool's verdict, right or wrong.
    Finished(Outcome),
    /// Killed at the cap, with the last count of executions it printed.
    Unfinished { executions: Option<u64> },
    /// The child died without an outcome (out of memory, a crash): what it last printed.
    Crashed(String),
}

/// Runs `case` under `tool` in a child process, killed at `cap`.
fn run_child(case: Case, tool: Tool, cap: Duration) -> Run {
    let exe = match std::env::current_exe() {
        Ok(exe) => exe,
        Err(e) => return Run::Crashed(format!("cannot find this program: {e}")),
    };
    let mut command = Command::new(exe);
    command
        .args(["--child", &case.name(), tool.name()])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for variable in LOOM_VARIABLES.into_iter().chain(BACKTRACE_VARIABLES) {
        command.env_remove(variable);
    }
    let mut process = match command.spawn() {
        Ok(p) => p,
        Err(e) => return Run::Crashed(format!("cannot start a child: {e}")),
    };
    // Both pipes are drained by threads, so a child that prints much never blocks on them.
    let outcome = Arc::new(Mutex::new(None::<Outcome>));
    let progress = Arc::new(Mutex::new(None::<u64>));
    let stdout = process.stdout.take().map(|out| {
        let (outcome, progress) = (Arc::clone(&outcome), Arc::clone(&progress));
        thread::spawn(move || {
            for line in BufReader::new(out).lines().map_while(Result::ok) {
                if let Some(n) = line.strip_prefix("PROGRESS\t") {
                    *progress.lock().unwrap() = n.parse().ok();
                } else if let Some(o) = Outcome::from_line(&line) {
                    *outcome.lock().unwrap() = Some(o);
                }
            }
        })
    });
    let stderr = process.stderr.take().map(|mut err| {
        thread::spawn(move || {
            let mut text = String::new();
            let _ = err.read_to_string(&mut text);
            text
        })
    });
    let deadline = Instant::now() + cap;
    let status = loop {
        match process.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if Instant::now() >= deadline => {
                // Only this child, by its handle; it has no children of its own.
                let _ = process.kill();
                let _ = process.wait();
                break None;
            }
            Ok(None) => thread::sleep(Duration::from_millis(20)),
            Err(e) => return Run::Crashed(format!("cannot wait for the child: {e}")),
        }
    };
    if let Some(reader) = stdout {
        let _ = reader.join();
    }
    let errors = stderr
        .and_then(|reader| reader.join().ok())
        .unwrap_or_default();
    let Some(status) = status else {
        return Run::Unfinished {
            executions: *progress.lock().unwrap(),
        };
    };
    let found = outcome.lock().unwrap().take();
    match found {
        Some(mut outcome) => {
            // Only the child's stderr says when fgvt met its first failing run.
            outcome.first_failure = first_failure_told(&errors);
            Run::Finished(outcome)
        }
        None => {
            let last = errors.lines().rev().find(|l| !l.trim().is_empty());
            Run::Crashed(format!(
                "child exited with {status}{}",
                last.map_or(String::new(), |l| format!(": {}", l.trim()))
            ))
        }
    }
}

/// One row of the table: a case under a tool, and its runs.
struct Row {
    case: Case,
    tool: Tool,
    runs: Vec<Run>,
}

/// Runs every selected case, round by round, and prints the table.
fn run_all(options: &Options) -> ExitCode {
    let selected = |case: Case, tool: Tool| {
        let label = format!("{}/{}", case.name(), tool.name());
        options
            .filter
            .as_ref()
            .is_none_or(|f| label.contains(f.as_str()))
    };
    let started = Instant::now();
    let load_before = load_average();
    let mut rows: Vec<Row> = Vec::new();
    for case in CASES {
        let first = rows.len();
        rows.extend(
            TOOLS
                .into_iter()
                .filter(|&tool| tool.runs(case) && selected(case, tool))
                .map(|tool| Row {
                    case,
                    tool,
                    runs: Vec::new(),
                }),
        );
        for round in 1..=options.rounds {
            for row in &mut rows[first..] {
                // A run that hit the cap would hit it again: it is not repeated.
                if row.runs.iter().any(|r| matches!(r, Run::Unfinished { .. })) {
                    continue;
                }
                let run = run_child(row.case, row.tool, options.cap);
                eprintln!(
                    "round {round}/{}  {:14} {:12} {}",
                    options.rounds,
                    row.case.name(),
                    row.tool.name(),
                    brief(row.case, &run, options.cap)
                );
                row.runs.push(run);
            }
        }
    }
    if rows.is_empty() {
        eprintln!("error: no case/tool matches the filter");
        return ExitCode::from(2);
    }
    print_table(&rows, options, load_before, started.elapsed());
    ExitCode::SUCCESS
}

/// One run of `case`, in a progress line.
fn brief(case: Case, run: &Run, cap: Duration) -> String {
    match run {
        Run::Finished(o) => format!(
            "{}  {}  {}{}",
            show_duration(o.elapsed),
            o.explored,
            case.judge(o),
            o.first_failure.map_or(String::new(), |t| format!(
                "  (first failing run found after {})",
                show_duration(t)
            ))
        ),
        Run::Unfinished { executions } => format!(
            "unfinished at {}{}",
            show_duration(cap),
            executions.map_or(String::new(), |n| format!(" ({} executions)", group(n)))
        ),
        Run::Crashed(why) => format!("crashed: {why}"),
    }
}

/// Prints the Markdown table of `rows`, with what it ran on.
fn print_table(rows: &[Row], options: &Options, load_before: String, took: Duration) {
    let cap = show_duration(options.cap);
    println!(
        "fgvt-peers: {} round(s), cap {cap} per run, {} CPU(s), load average {} before and {} \
         after; {} in all\n",
        options.rounds,
        thread::available_parallelism().map_or(0, |n| n.get()),
        load_before,
        load_average(),
        show_duration(took)
    );
    println!(
        "| case | tool | runs | min | median | executions or states explored | executions/s | \
         peak RSS | verdict |"
    );
    println!("|---|---|---|---|---|---|---|---|---|");
    for row in rows {
        let finished: Vec<&Outcome> = row
            .runs
            .iter()
            .filter_map(|r| match r {
                Run::Finished(o) => Some(o),
                _ => None,
            })
            .collect();
        let mut times: Vec<Duration> = finished.iter().map(|o| o.elapsed).collect();
        times.sort();
        let (min, median) = match times.first() {
            // The lower median: the middle run of an odd count (5 rounds: the 3rd fastest).
            Some(&min) => (
                show_duration(min),
                show_duration(times[(times.len() - 1) / 2]),
            ),
            None => ("—".to_string(), "—".to_string()),
        };
        let unfinished = row.runs.iter().find_map(|r| match r {
            Run::Unfinished { executions } => Some(*executions),
            _ => None,
        });
        let explored = match (finished.last(), unfinished) {
            (Some(o), _) => distinct(finished.iter().map(|o| o.explored.clone()), &o.explored),
            (None, Some(Some(n))) => format!("≥ {} executions at the cap", group(n)),
            (None, _) => "—".to_string(),
        };
        let rate = execution_rate(&finished, unfinished.flatten(), options.cap);
        let rss = finished
            .iter()
            .filter_map(|o| o.peak_rss_kib)
            .max()
            .map_or("—".to_string(), |k| format!("{} MB", k.div_ceil(1024)));
        let mut verdicts: Vec<String> = Vec::new();
        for run in &row.runs {
            let verdict = match run {
                Run::Finished(o) => row.case.judge(o),
                Run::Unfinished { .. } => format!("unfinished at {cap}"),
                Run::Crashed(why) => format!("crashed: {why}"),
            };
            if !verdicts.contains(&verdict) {
                verdicts.push(verdict);
            }
        }
        let mut verdict = verdicts.join("; ");
        if unfinished.is_some() && row.runs.len() < options.rounds {
            verdict.push_str(" (not run again)");
        }
        if let Some(note) = first_failures(&finished) {
            verdict.push_str(&note);
        }
        println!(
            "| {} | {} | {} | {min} | {median} | {explored} | {rate} | {rss} | {verdict} |",
            row.case.name(),
            row.tool.name(),
            row.runs.len(),
        );
    }
    println!();
    for case in CASES {
        println!("- `{}`: {}", case.name(), case.describe());
    }
    for tool in TOOLS {
        println!("- `{}`: {}", tool.name(), tool.describe());
    }
    println!(
        "- verdicts of a buggy case: `bug found` when a run failed the test's check (the \
         body's assertion under loom and shuttle, which stop there; the `stack` spec under \
         fgvt, which explores on and reports the CDRS), `missed` when the tool finished \
         without one; fgvt's \"first failing run found after\" is the time its stderr notice \
         gives (told only when the run lasts 0.4 s)"
    );
}

/// When the runs told of their first failing run before their verdict (fgvt's stderr notice),
/// how long after their start it was found, as the tail of the row's verdict: the median and
/// the minimum over the runs that told.
fn first_failures(finished: &[&Outcome]) -> Option<String> {
    let mut times: Vec<Duration> = finished.iter().filter_map(|o| o.first_failure).collect();
    times.sort();
    let min = *times.first()?;
    // The lower median, as the table's times.
    let median = times[(times.len() - 1) / 2];
    Some(format!(
        "; first failing run found after {} (median of {} told; min {})",
        show_duration(median),
        times.len(),
        show_duration(min)
    ))
}

/// Executions per second, the median over the finished runs (each run's count over its
/// time), or, when none finished, the count at the cap over the cap: `—` without a count.
fn execution_rate(finished: &[&Outcome], at_cap: Option<u64>, cap: Duration) -> String {
    let mut rates: Vec<f64> = finished
        .iter()
        .filter_map(|o| Some(o.executions? as f64 / o.elapsed.as_secs_f64()))
        .collect();
    rates.sort_by(f64::total_cmp);
    let rate = match (rates.is_empty(), at_cap) {
        // The middle run of an odd count.
        (false, _) => rates[rates.len() / 2],
        (true, Some(n)) => n as f64 / cap.as_secs_f64(),
        (true, None) => return "—".to_string(),
    };
    format!("{}", group(rate.round() as u64))
}

/// `texts` if they differ, else `one` (deterministic tools explore the same every round).
fn distinct(texts: impl Iterator<Item = String>, one: &str) -> String {
    let mut all: Vec<String> = Vec::new();
    for text in texts {
        if !all.contains(&text) {
            all.push(text);
        }
    }
    if all.len() > 1 {
        all.join(" / ")
    } else {
        one.to_string()
    }
}

/// The 1-minute load average, from `/proc/loadavg`.
fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|l| l.split_whitespace().next().map(str::to_string))
        .unwrap_or_else(|| "?".to_string())
}
