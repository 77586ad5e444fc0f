//! The binary entry point: [`main!`](crate::main) turns Rust objects into a program with fgvt's
//! subcommands over the usual test and hunt files (`localize`, `explore`, `render`, `hunt`,
//! `minimize`), as `fgvt` has for models. Built only with the `cli` feature, which brings clap
//! and the tree drawings.
//!
//! Hunting and shrinking are `fgvt`'s own (`fgvt::cli::hunt`, `fgvt::cli::minimize`), given a
//! [`Judge`] that runs a Rust test: only how a test is made and judged is here.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::{Args, Parser, Subcommand};
use fgvt::cli::hunt::{hunt_with, HuntSubject};
use fgvt::cli::minimize::{minimize_with, MinimizeSubject};
use fgvt::cli::output::{
    emit, exit_code, install_error_hook, stdout_color, write_atomically, write_or_emit, Exit,
};
use fgvt::cli::{parse_seconds, HuntFlags, ReportFormat};
use fgvt::hunt::{Judge, Matrix, ModelRefs, TestReport, TestVerdict};
use fgvt::pipeline::PipelineError;
pub use fgvt::testcase::TestFile;
use fgvt_tree::replay::ReplayError;
use fgvt_tree::{Call, Choice, ExploreOptions, Tree};
use miette::miette;

use crate::localized::Localized;
use crate::object::Object;
use crate::picture::{drawing, Format};
use crate::test::{parse_all, Checked, Replayed, SpecChoice, SpecType, Test};
use crate::MemoryBudget;

/// The global allocator [`main!`](crate::main) installs: [`crate::Allocator`], counting the
/// bytes in use, which the memory budget (`--max-memory`) reads.
#[doc(hidden)]
pub type Counting = fgvt::memory::CountingOn<crate::Allocator>;

/// The value of [`Counting`].
#[doc(hidden)]
pub const COUNTING: Counting = fgvt::memory::CountingOn(crate::Allocator);

/// The test `file` on `O`, named `name`; its `"spec"` may name one of the sequential `specs`.
pub fn test_from_file<O: Object>(
    name: &str,
    file: &TestFile,
    specs: &[SpecType],
) -> Result<Test<O>, String> {
    let spec = SpecChoice::named(file.spec.as_deref(), specs)?;
    let calls = parse_file(file)?;
    Ok(Test::new(name)
        .with_spec(spec)
        .with_calls(&calls.init, &calls.threads, &calls.finals)
        .races(file.races))
}

/// The calls of a test file, parsed, or which one does not parse and why.
fn parse_file(file: &TestFile) -> Result<Matrix, String> {
    Ok(Matrix {
        init: parse_all(&file.init)?,
        threads: file
            .threads
            .iter()
            .map(|thread| parse_all(thread))
            .collect::<Result<_, _>>()?,
        finals: parse_all(&file.finals)?,
    })
}

/// Localizes `file`'s test on `O`: the test built from the file, localized.
pub fn localize_file<O: Object>(
    name: &str,
    file: &TestFile,
    specs: &[SpecType],
) -> Result<Localized, String> {
    test_from_file::<O>(name, file, specs)?
        .localize()
        .map_err(|e| e.to_string())
}

/// A test of one of the program's objects, whichever it is.
pub trait AnyTest {
    /// [`Test::localize`].
    fn localize(&self) -> Result<Localized, ReplayError>;
    /// [`Test::explore`].
    fn explore(&self) -> Result<Tree, ReplayError>;
    /// [`Test::check`].
    fn check(&self) -> Result<Checked, ReplayError>;
    /// The first call the object rejects (an unknown operation, wrong arguments), named.
    fn rejected_call(&self) -> Result<(), String>;
    /// [`Test::replay`].
    fn replay(&self, schedule: &[Choice]) -> Result<Replayed, String>;
}

impl<O: Object> AnyTest for Test<O> {
    fn localize(&self) -> Result<Localized, ReplayError> {
        Test::localize(self)
    }

    fn explore(&self) -> Result<Tree, ReplayError> {
        Test::explore(self)
    }

    fn check(&self) -> Result<Checked, ReplayError> {
        Test::check(self)
    }

    fn rejected_call(&self) -> Result<(), String> {
        Test::rejected_call(self)
    }

    fn replay(&self, schedule: &[Choice]) -> Result<Replayed, String> {
        Test::replay(self, schedule)
    }
}

/// How `main!` makes a test of one object from its calls, spec and the command line's limits.
pub type MakeTest = fn(&MakeArgs<'_>) -> Box<dyn AnyTest>;

/// What a test is made of, beside its object: see [`MakeTest`].
pub struct MakeArgs<'a> {
    /// Its name in reports (the test file's path).
    name: &'a str,
    /// Its calls.
    calls: &'a Matrix,
    /// Its spec.
    spec: SpecChoice,
    /// The command line's limits.
    limits: &'a Limits,
    /// The command a report gives to run the test again.
    reproduce: &'a str,
}

/// [`MakeTest`] for `O`.
pub fn make_test<O: Object>(args: &MakeArgs<'_>) -> Box<dyn AnyTest> {
    let calls = args.calls;
    let mut test = Test::<O>::new(args.name)
        .with_spec(args.spec)
        .with_calls(&calls.init, &calls.threads, &calls.finals)
        .max_steps(args.limits.max_steps)
        .max_states(args.limits.max_states)
        .max_stale(args.limits.max_stale)
        .report_budget(args.limits.report_budget.0)
        .jobs(
            args.limits
                .explore_jobs
                .unwrap_or_else(crate::test::default_jobs),
        )
        .reproduce_with(args.reproduce)
        .replayed_by(
            &fgvt_reports::shell_quote(&program_name()),
            &args.limits.options(),
        );
    if let Some(timeout) = args.limits.timeout {
        test = test.timeout(timeout);
    }
    Box::new(test.max_memory(MemoryBudget {
        bytes: args.limits.memory_budget(),
        used: fgvt::memory::allocated,
    }))
}

/// Checks that `O` knows every call of `calls`: each runs serially on a fresh object after
/// `init`, outside any scheduler. An `Err` from [`Object::call`] (an unknown operation, wrong
/// arguments) is bad input rather than a finding; a panic is left for the runs to find.
pub fn check_calls<O: Object>(init: &[Call], calls: &[Call]) -> Result<(), String> {
    for call in init.iter().chain(calls) {
        if let Some(message) = crate::spec::refusal(crate::spec::serial_run::<O>, init, call) {
            return Err(format!("`{call}`: {message}"));
        }
    }
    Ok(())
}

/// How `main!` checks a hunt's calls against one object: [`check_calls`] for it.
pub type CheckCalls = fn(&[Call], &[Call]) -> Result<(), String>;

/// One object of a `main!` program: its name in test files, how to make a test of it, and how
/// to check a hunt's calls against it.
#[derive(Clone, Copy)]
pub struct Entry {
    /// The name test files give as their `"object"`.
    pub name: &'static str,
    /// How to make a test of it.
    pub make: MakeTest,
    /// How to check calls against it.
    pub check_calls: CheckCalls,
}

/// What a `main!` program has: its objects and the sequential spec types test files may name.
#[derive(Clone, Copy)]
pub struct Program<'a> {
    /// The objects.
    pub objects: &'a [Entry],
    /// The sequential specs.
    pub specs: &'a [SpecType],
    /// The directory of the package the program was compiled in (`CARGO_MANIFEST_DIR`), so
    /// that reports quote its sources whatever directory it runs in.
    pub package_dir: &'static str,
}

impl Program<'_> {
    /// The object named `name`, or what the program has instead.
    fn object(&self, name: &str) -> Result<&Entry, String> {
        self.objects.iter().find(|e| e.name == name).ok_or_else(|| {
            let names: Vec<&str> = self.objects.iter().map(|e| e.name).collect();
            format!(
                "unknown object `{name}`; this program has: {}",
                names.join(", ")
            )
        })
    }
}

/// The program's command line.
#[derive(Debug, Parser)]
#[command(
    about = "fgvt on this program's Rust objects: explore every interleaving of a test file, \
             check every run for linearizability and report the races that decide it",
    after_help = "Exit codes: 0 linearizable, 1 not linearizable, 2 bad input, 3 inconclusive \
                  (a limit was hit)."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Localize a failing test: the verdict, the tree, and the critical data race sequences.
    Localize(LocalizeArgs),
    /// Explore a test's interleavings and print the size of the tree and its leaves.
    Explore(ExploreArgs),
    /// Draw the labeled interleaving tree as SVG or DOT.
    Render(RenderArgs),
    /// Draw random tests from a hunt file until one fails (Line-Up's RandomCheck); with
    /// `--localize`, minimize and localize it too.
    Hunt(HuntArgs),
    /// Shrink a failing test while it keeps failing the same way.
    Minimize(MinimizeArgs),
}

/// The default of `--max-steps`.
const DEFAULT_MAX_STEPS: usize = 1_000;

/// The default of `--max-states`.
const DEFAULT_MAX_STATES: usize = 1_000_000;

/// The default of `--max-stale` (what `Test::max_stale` defaults to).
const DEFAULT_MAX_STALE: u32 = crate::test::DEFAULT_MAX_STALE;

/// The limits of an exploration.
#[derive(Debug, Clone, Args)]
pub struct Limits {
    /// Most steps one operation may take on a path (an endless spin ends there, bounded).
    #[arg(long, default_value_t = DEFAULT_MAX_STEPS)]
    pub max_steps: usize,
    /// Most tree nodes before exploration stops (the result is then partial, exit 3).
    #[arg(long, default_value_t = DEFAULT_MAX_STATES)]
    pub max_states: usize,
    /// Stop after this many seconds (the result is then partial, exit 3); for `hunt` and
    /// `minimize`, the whole search.
    #[arg(long, value_parser = parse_seconds)]
    pub timeout: Option<Duration>,
    /// Under weak memory (code declaring orderings weaker than SeqCst), how many stores older
    /// than the latest one access may read; an access with more is a bounded leaf (the result
    /// is then partial, exit 3).
    #[arg(long, default_value_t = DEFAULT_MAX_STALE)]
    pub max_stale: u32,
    /// Stop exploring when the program uses this much memory, e.g. 4G or 512M (the result is
    /// then partial, exit 3). Default: 60% of the machine's RAM.
    #[arg(long, value_parser = fgvt::memory::parse_size)]
    pub max_memory: Option<usize>,
    /// Once a run has failed, report within this many seconds: the rest of the tree is
    /// explored (and a weak-memory fix searched for) until then, and the report shows what
    /// was found (partial, exit 3, if the tree was cut). `none`: explore it all.
    #[arg(long, value_parser = fgvt::cli::parse_report_budget, value_name = "SECONDS|none", default_value = "5")]
    pub report_budget: fgvt::cli::ReportBudget,
    /// Threads that run one test's executions (see [`Test::jobs`]); set by the subcommands
    /// that explore one test (`--jobs`), one for those whose own workers explore many.
    #[arg(skip)]
    pub explore_jobs: Option<usize>,
}

impl Limits {
    /// These limits, a test's executions run by `jobs` threads (`None`: the default).
    fn jobs(&self, jobs: Option<u16>) -> Limits {
        Limits {
            explore_jobs: jobs.map(usize::from),
            ..self.clone()
        }
    }

    /// The options that set these limits where they differ from the defaults, each with its
    /// leading space: what a command that reruns the test must repeat.
    fn options(&self) -> String {
        let mut out = String::new();
        if self.max_steps != DEFAULT_MAX_STEPS {
            out.push_str(&format!(" --max-steps {}", self.max_steps));
        }
        if self.max_states != DEFAULT_MAX_STATES {
            out.push_str(&format!(" --max-states {}", self.max_states));
        }
        if let Some(timeout) = self.timeout {
            out.push_str(&format!(" --timeout {}", timeout.as_secs_f64()));
        }
        if self.max_stale != DEFAULT_MAX_STALE {
            out.push_str(&format!(" --max-stale {}", self.max_stale));
        }
        if let Some(bytes) = self.max_memory {
            out.push_str(&format!(" --max-memory {bytes}"));
        }
        if self.report_budget.0 != Some(fgvt_tree::DEFAULT_REPORT_BUDGET) {
            out.push_str(&format!(" --report-budget {}", self.report_budget));
        }
        out
    }

    /// The memory budget in bytes: as given, or 60% of the machine's RAM.
    fn memory_budget(&self) -> usize {
        self.max_memory.unwrap_or_else(fgvt::memory::default_budget)
    }
}

#[derive(Debug, Args)]
struct HuntArgs {
    #[command(flatten)]
    flags: HuntFlags,
    #[command(flatten)]
    limits: Limits,
}

#[derive(Debug, Args)]
struct MinimizeArgs {
    /// The failing test (`failing.json`).
    test: PathBuf,
    /// Write the minimal test (atomically) to this file instead of printing it.
    #[arg(short = 'o', long = "output")]
    output: Option<PathBuf>,
    /// Worker threads (default: one per core).
    #[arg(long)]
    jobs: Option<usize>,
    #[command(flatten)]
    limits: Limits,
}

#[derive(Debug, Args)]
struct LocalizeArgs {
    /// The test file (`failing.json`).
    test: PathBuf,
    /// Report format.
    #[arg(long, value_enum, default_value_t = ReportFormat::Text)]
    format: ReportFormat,
    /// Write the report to this file (atomically) instead of stdout.
    #[arg(short = 'o', long = "output")]
    output: Option<PathBuf>,
    /// Also draw the labeled tree as SVG to this file.
    #[arg(long, value_name = "FILE")]
    svg: Option<PathBuf>,
    /// Threads that run the test's executions (default: one per core, or `FGVT_JOBS`); the
    /// report is the same whatever the number.
    #[arg(long, value_parser = clap::value_parser!(u16).range(1..))]
    jobs: Option<u16>,
    #[command(flatten)]
    limits: Limits,
}

#[derive(Debug, Args)]
struct ExploreArgs {
    /// The test file.
    test: PathBuf,
    /// Print one run instead of the tree's counts: the thread of each step, as a report's
    /// replay line gives them (`--schedule 0,1,1`; `1/2`: thread 1, its load's third way
    /// under weak memory); exit 1 when that run fails.
    #[arg(long, value_delimiter = ',', num_args = 0..)]
    schedule: Option<Vec<Choice>>,
    /// Threads that run the test's executions (default: one per core, or `FGVT_JOBS`); the
    /// report is the same whatever the number.
    #[arg(long, value_parser = clap::value_parser!(u16).range(1..))]
    jobs: Option<u16>,
    #[command(flatten)]
    limits: Limits,
}

#[derive(Debug, Args)]
struct RenderArgs {
    /// The test file.
    test: PathBuf,
    /// Write the drawing to this file (atomically); `.svg` or `.dot` chooses the format.
    #[arg(short = 'o', long = "output")]
    output: Option<PathBuf>,
    /// Threads that run the test's executions (default: one per core, or `FGVT_JOBS`); the
    /// report is the same whatever the number.
    #[arg(long, value_parser = clap::value_parser!(u16).range(1..))]
    jobs: Option<u16>,
    #[command(flatten)]
    limits: Limits,
}

/// Runs the program on its objects and specs. Exit codes and error rendering are `fgvt`'s
/// (`fgvt::cli::output`): 0 linearizable, 1 not, 2 bad input, 3 inconclusive.
pub fn run(program: Program<'_>) -> ExitCode {
    crate::sources::anchor(program.package_dir);
    let cli = Cli::parse();
    install_error_hook();
    if let Err(message) = crate::test::jobs_from_env() {
        eprintln!("{:?}", miette!("{message}"));
        return Exit::BadInput.into();
    }
    match dispatch(program, &cli.command) {
        Ok(exit) => exit.into(),
        Err(report) => {
            eprintln!("{report:?}");
            Exit::BadInput.into()
        }
    }
}

fn dispatch(program: Program<'_>, command: &Command) -> miette::Result<Exit> {
    match command {
        Command::Localize(args) => {
            let limits = args.limits.jobs(args.jobs);
            let found = load(program, &args.test, &limits, "localize")?
                .localize()
                .map_err(|e| miette!("{}: {e}", args.test.display()))?;
            let report = &found.report;
            let text = args
                .format
                .render(report, args.output.is_none() && stdout_color());
            if let Some(svg) = &args.svg {
                let picture = drawing(&found, Format::Svg).map_err(|e| miette!("{e}"))?;
                write_atomically(svg, picture.as_bytes())?;
            }
            write_or_emit(args.output.as_deref(), &text)?;
            let exit = exit_code(report);
            // The process ends here: freeing a tree of a million nodes would only delay it.
            std::mem::forget(found);
            Ok(exit)
        }
        Command::Explore(args) if args.schedule.is_some() => {
            let schedule = args.schedule.as_deref().unwrap_or_default();
            let replayed = load(program, &args.test, &args.limits.jobs(args.jobs), "explore")?
                .replay(schedule)
                .map_err(|e| {
                    miette!(
                        help = "run without --schedule to see the tree",
                        "{}: --schedule: {e}",
                        args.test.display()
                    )
                })?;
            emit(&replayed.text)?;
            Ok(if replayed.fails {
                Exit::Violation
            } else {
                Exit::Ok
            })
        }
        Command::Explore(args) => {
            let tree = load(program, &args.test, &args.limits.jobs(args.jobs), "explore")?
                .explore()
                .map_err(|e| miette!("{}: {e}", args.test.display()))?;
            let s = tree.stats();
            let n = fgvt_reports::count_text;
            let mut text = format!(
                "{}: {} nodes, {} leaves (complete {}, stuck {}, fault {}, bounded {}), depth {}\n\
                 {} distinct states in {:.1?}\n",
                args.test.display(),
                n(s.nodes),
                n(s.leaves),
                n(s.complete),
                n(s.stuck),
                n(s.fault),
                n(s.bounded),
                s.max_depth,
                s.distinct_states,
                tree.elapsed,
            );
            if s.nodes == u64::MAX || s.leaves == u64::MAX {
                text.push_str(&format!("({})\n", fgvt_reports::saturated_note()));
            }
            if let Some(limit) = tree.partial {
                text.push_str(&format!(
                    "partial: exploration stopped at the {} limit (raise --max-states)\n",
                    limit.name()
                ));
            }
            emit(&text)?;
            Ok(if tree.partial.is_some() {
                Exit::Inconclusive
            } else {
                Exit::Ok
            })
        }
        Command::Render(args) => {
            let format = match args.output.as_deref().and_then(Path::extension) {
                Some(ext) if ext == "svg" => Format::Svg,
                Some(ext) if ext == "dot" || ext == "gv" => Format::Dot,
                None => Format::Dot,
                Some(ext) => {
                    return Err(miette!(
                        "cannot tell the format of `.{}`: name the output `.svg` or `.dot`",
                        ext.to_string_lossy()
                    ))
                }
            };
            let found = load(program, &args.test, &args.limits.jobs(args.jobs), "render")?
                .localize()
                .map_err(|e| miette!("{}: {e}", args.test.display()))?;
            let text = drawing(&found, format).map_err(|e| miette!("{e}"))?;
            write_or_emit(args.output.as_deref(), &text)?;
            // The picture is what was asked for; the verdict is `localize`'s to give.
            Ok(Exit::Ok)
        }
        Command::Hunt(args) => hunt(program, args),
        Command::Minimize(args) => minimize(program, args),
    }
}

/// `hunt`: fgvt's hunt on the object the hunt file names.
fn hunt(program: Program<'_>, args: &HuntArgs) -> miette::Result<Exit> {
    let started = Instant::now();
    let path = &args.flags.hunt;
    let plan = fgvt::hunt::read_plan(path)?;
    let fail = |message: String| miette!("{}: {message}", path.display());
    let entry = program.object(&plan.object_ref).map_err(fail)?;
    (entry.check_calls)(&plan.init, &plan.operations).map_err(|m| {
        miette!(
            help = "list only operations the object's `Object::call` runs",
            "{}: {m}",
            path.display()
        )
    })?;
    let judge = RustJudge {
        entry,
        spec: SpecChoice::named(plan.spec_ref.as_deref(), program.specs).map_err(fail)?,
        limits: &args.limits,
        name: path.display().to_string(),
    };
    let localize = |matrix: &Matrix, written: &Path| {
        let name = written.display().to_string();
        let judge = RustJudge {
            name: name.clone(),
            ..judge.clone()
        };
        let reproduce = reproduce("localize", &name, judge.limits);
        judge
            .make(matrix, None, &reproduce)
            .localize()
            .map(|found| found.report)
            .map_err(|e| miette!("{name}: {e}"))
    };
    hunt_with(
        &args.flags,
        &HuntSubject {
            plan: &plan,
            object: entry.name.to_string(),
            refs: ModelRefs::rust(&plan.object_ref, plan.spec_ref.as_deref(), &plan.path),
            judge: &judge,
            explore: ExploreOptions::default(),
            started,
            deadline: args.limits.timeout.map(|t| started + t),
            localize: &localize,
            program: program_name(),
        },
    )
}

/// `minimize`: fgvt's shrinking of the test file on the object it names.
fn minimize(program: Program<'_>, args: &MinimizeArgs) -> miette::Result<Exit> {
    let file = fgvt::testcase::read_test_file(&args.test)?;
    let fail = |message: String| miette!("{}: {message}", args.test.display());
    let entry = program.object(&file.object).map_err(fail)?;
    let judge = RustJudge {
        entry,
        spec: SpecChoice::named(file.spec.as_deref(), program.specs).map_err(fail)?,
        limits: &args.limits,
        name: args.test.display().to_string(),
    };
    let start = parse_file(&file).map_err(fail)?;
    // A call the object does not run is a mistake in the file (exit 2), not a verdict.
    (judge.make(&start, None, "").rejected_call()).map_err(fail)?;
    minimize_with(&MinimizeSubject {
        test: &args.test,
        start,
        refs: ModelRefs::rust(&file.object, file.spec.as_deref(), &args.test),
        description: file.description.clone(),
        seed: file.seed,
        judge: &judge,
        explore: ExploreOptions::default(),
        deadline: args.limits.timeout.map(|t| Instant::now() + t),
        jobs: args.jobs,
        output: args.output.as_deref(),
        program: &program_name(),
    })
}

/// How a hunt or a shrinking judges the tests of one Rust object: each matrix becomes a
/// [`Test`], explored whole and checked leaf by leaf.
#[derive(Clone)]
struct RustJudge<'a> {
    entry: &'a Entry,
    spec: SpecChoice,
    limits: &'a Limits,
    /// The file the tests are named after.
    name: String,
}

impl RustJudge<'_> {
    /// The test of `matrix`, stopped at `deadline`, whose report reruns it with `reproduce`.
    fn make(
        &self,
        matrix: &Matrix,
        deadline: Option<Instant>,
        reproduce: &str,
    ) -> Box<dyn AnyTest> {
        let left = deadline.map(|d| d.saturating_duration_since(Instant::now()));
        let limits = Limits {
            timeout: match (self.limits.timeout, left) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            },
            // A hunt's or a shrinking's own workers explore many tests at once.
            explore_jobs: Some(1),
            ..self.limits.clone()
        };
        (self.entry.make)(&MakeArgs {
            name: &self.name,
            calls: matrix,
            spec: self.spec,
            limits: &limits,
            reproduce,
        })
    }
}

impl Judge for RustJudge<'_> {
    fn check(
        &self,
        matrix: &Matrix,
        options: &ExploreOptions,
        deadline: Option<Instant>,
    ) -> Result<TestReport, PipelineError> {
        // Line-Up's phase 1 (serial runs deterministic) is a model's: a Rust object's serial
        // runs are checked as the tree is replayed (a divergence is a `Replay` error).
        self.search(matrix, options, deadline, false)
    }

    fn search(
        &self,
        matrix: &Matrix,
        _options: &ExploreOptions,
        deadline: Option<Instant>,
        _violations_only: bool,
    ) -> Result<TestReport, PipelineError> {
        let replay = |source| PipelineError::Replay {
            test: PathBuf::from(&self.name),
            source,
        };
        let checked = self.make(matrix, deadline, "").check().map_err(replay)?;
        // A tree explored whole counts both kinds of failing leaf; the caller decides which
        // kind it needs, as it does for a model's tree explored whole.
        let verdict = if checked.not_linearizable + checked.faults > 0 {
            TestVerdict::Fails {
                not_linearizable: checked.not_linearizable,
                faults: checked.faults,
            }
        } else {
            TestVerdict::Passes
        };
        Ok(TestReport {
            verdict,
            partial: checked.partial,
            stopped_at_first: None,
        })
    }
}

/// The path this program was run as, for the commands its reports and tests give.
fn program_name() -> String {
    std::env::args().next().unwrap_or_else(|| "program".into())
}

/// The command that runs `subcommand` of this program on the test `name` again, with the
/// `limits` it ran with.
fn reproduce(subcommand: &str, name: &str, limits: &Limits) -> String {
    format!(
        "{} {subcommand} {}{}",
        fgvt_reports::shell_quote(&program_name()),
        fgvt_reports::shell_quote(name),
        limits.options()
    )
}

/// The test of `path` on the object it names, for `subcommand`.
fn load(
    program: Program<'_>,
    path: &Path,
    limits: &Limits,
    subcommand: &str,
) -> miette::Result<Box<dyn AnyTest>> {
    let file = fgvt::testcase::read_test_file(path)?;
    let fail = |message: String| miette!("{}: {message}", path.display());
    let entry = program.object(&file.object).map_err(fail)?;
    let name = path.display().to_string();
    let reproduce = reproduce(subcommand, &name, limits);
    let spec = SpecChoice::named(file.spec.as_deref(), program.specs).map_err(fail)?;
    let calls = parse_file(&file).map_err(fail)?;
    let test = (entry.make)(&MakeArgs {
        name: &name,
        calls: &calls,
        spec,
        limits,
        reproduce: &reproduce,
    });
    // A call the object does not run is a mistake in the file (exit 2), not a verdict.
    test.rejected_call().map_err(fail)?;
    Ok(test)
}

/// A `main` for Rust objects: `fgvt_sync::main!(PairSnapshot, FixedPairSnapshot);` makes a
/// program whose `localize FILE.json` (and `explore`, `render`, `hunt`, `minimize`) runs the
/// file's test on the object it names. Sequential spec types (see [`Sequential`](crate::Sequential))
/// that test files may name as their `"spec"` follow the objects:
/// `fgvt_sync::main!(Queue, FixedQueue; specs: SeqQueue);`. Needs the `cli` feature of
/// `fgvt-sync`.
///
/// The program stops exploring at a memory budget (`--max-memory`, by default 60% of the
/// machine's RAM) with a partial result, exit 3: `main!` installs a global allocator that
/// counts the bytes in use ([`Allocator`](crate::Allocator), counted), so the program must not
/// declare one of its own.
#[macro_export]
macro_rules! main {
    ($($object:ty),+ $(; specs: $($spec:ty),+)? $(,)?) => {
        // What `--max-memory` reads: the bytes the program holds.
        #[global_allocator]
        static FGVT_COUNTING_ALLOCATOR: $crate::main_entry::Counting =
            $crate::main_entry::COUNTING;

        fn main() -> ::std::process::ExitCode {
            $crate::main_entry::run($crate::main_entry::Program {
                objects: &[
                    $($crate::main_entry::Entry {
                        name: stringify!($object),
                        make: $crate::main_entry::make_test::<$object>,
                        check_calls: $crate::main_entry::check_calls::<$object>,
                    }),+
                ],
                specs: &[$($($crate::SpecType::of::<$spec>()),+)?],
                package_dir: env!("CARGO_MANIFEST_DIR"),
            })
        }
    };
}
