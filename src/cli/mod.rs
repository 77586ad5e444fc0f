//! The `fgvt` command line: argument definitions and dispatch to one module per command.

mod check_history;
mod explore;
mod history_picture;
pub mod hunt;
mod jobs;
mod localize;
mod manual;
pub mod minimize;
pub mod output;
mod render;
mod written;

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Args, Parser, Subcommand, ValueEnum};
use fgvt_labeling::pattern::Pattern;

use crate::pipeline::{Limits, PipelineError};

pub use output::{write_atomically, Exit};

/// fgvt localizes linearizability faults in concurrent objects down to the racing statements.
#[derive(Debug, Parser)]
#[command(
    name = "fgvt",
    version,
    about,
    long_about = None,
    propagate_version = true,
    after_long_help = "Exit status: 0 linearizable (no violation found), 1 not linearizable, \
        2 bad input or usage, 3 a limit made the result partial, 130 interrupted by Ctrl-C or \
        SIGTERM (what was found is printed, marked INTERRUPTED)."
)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Build the whole interleaving tree of a test and print its counts, or one path of it.
    Explore(ExploreArgs),
    /// Localize a failing test: label its interleaving tree and report the critical data race
    /// sequences with the racing statements.
    Localize(LocalizeArgs),
    /// Draw the labeled interleaving tree of a test as SVG or DOT (Graphviz), with its CDRS.
    Render(RenderArgs),
    /// Hunt for a failing test: draw random test matrices from a hunt file (Line-Up's
    /// RandomCheck) and check every interleaving of each.
    Hunt(HuntArgs),
    /// Shrink a failing test greedily while it keeps failing.
    Minimize(MinimizeArgs),
    /// Check recorded histories (Jepsen etcd logs, kv logs, fgvt JSON) for linearizability.
    CheckHistory(CheckHistoryArgs),
    /// Print a completion script for a shell (bash, zsh, fish, elvish, powershell).
    Completions(CompletionsArgs),
    /// Print fgvt's manual page (roff), or write one page per command into a directory.
    Man(ManArgs),
}

/// Arguments of `fgvt completions`.
#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell to complete for.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
    /// Write the script (atomically) to this file instead of printing it.
    #[arg(short = 'o', long = "output")]
    pub output: Option<PathBuf>,
}

/// Arguments of `fgvt man`.
#[derive(Debug, Args)]
pub struct ManArgs {
    /// Write the page of `fgvt` (atomically) to this file instead of printing it.
    #[arg(short = 'o', long = "output", conflicts_with = "dir")]
    pub output: Option<PathBuf>,
    /// Write every page into this directory instead: `fgvt.1` and one per command
    /// (`fgvt-localize.1`, …), as `man` finds them under a `man1` directory of its path.
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// Give the whole manual as one Markdown page instead of roff: the guide's command-line
    /// chapter (`docs/book/src/command-line.md`) is this page.
    #[arg(long, conflicts_with = "dir")]
    pub markdown: bool,
}

/// Limits shared by every command that explores a test.
#[derive(Debug, Clone, Args)]
pub struct LimitArgs {
    /// Stop after this many distinct tree nodes (the result is then partial, exit 3).
    #[arg(long, default_value_t = 2_000_000)]
    pub max_states: usize,
    /// Most steps one operation may take on one path before that path is cut as bounded.
    #[arg(long, default_value_t = 1_000)]
    pub max_steps: usize,
    /// Stop after this many seconds (the result is then partial, exit 3).
    #[arg(long, value_parser = parse_seconds)]
    pub timeout: Option<Duration>,
    /// Once a run has failed, report within this many seconds: the rest of the tree is
    /// explored (and a weak-memory fix searched for) until then, and the report shows what
    /// was found (partial, exit 3, if the tree was cut). `none`: explore it all.
    #[arg(long, value_parser = parse_report_budget, value_name = "SECONDS|none", default_value = "5")]
    pub report_budget: ReportBudget,
    /// Most instructions an operation may execute between two shared-memory accesses (and in
    /// one serial run of the spec); a longer run is cut as an endless local loop.
    #[arg(long, default_value_t = fgvt_lang::DEFAULT_BUDGET)]
    pub max_local_steps: u64,
    /// Stop exploring when fgvt uses this much memory, e.g. 4G or 512M (the result is then
    /// partial, exit 3). Default: 60% of the machine's RAM.
    #[arg(long, value_parser = crate::memory::parse_size)]
    pub max_memory: Option<usize>,
    /// Unfold every path instead of exploring each distinct state once (slower; without spin
    /// loops the counts are the same; a path that returns to a state on it is cut there).
    #[arg(long)]
    pub no_memo: bool,
    /// Under weak memory (a model that declares an ordering weaker than seq_cst): the most
    /// older stores than the latest one access may read, or later ones a store may go
    /// before; the ways past it are one bounded leaf (exit 3).
    #[arg(long, default_value_t = fgvt_lang::DEFAULT_MAX_STALE)]
    pub max_stale: u32,
}

impl LimitArgs {
    /// Loads the test at `path` with these limits' instruction budget.
    pub fn load_test(
        &self,
        path: &std::path::Path,
    ) -> Result<crate::testcase::TestCase, crate::testcase::LoadError> {
        self.load_test_with_file(path).map(|(test, _)| test)
    }

    /// [`Self::load_test`], with the test file as written, from one read.
    pub fn load_test_with_file(
        &self,
        path: &std::path::Path,
    ) -> Result<(crate::testcase::TestCase, crate::testcase::TestFile), crate::testcase::LoadError>
    {
        let (mut test, file) = crate::testcase::load_with_file(path)?;
        test.local_budget = self.max_local_steps;
        test.max_stale = self.max_stale;
        Ok((test, file))
    }

    /// The pipeline's limits these arguments set.
    pub fn limits(&self) -> Limits {
        Limits {
            max_states: self.max_states,
            max_steps: self.max_steps,
            timeout: self.timeout,
            memoize: !self.no_memo,
            max_memory: Some(
                self.max_memory
                    .unwrap_or_else(crate::memory::default_budget),
            ),
            interrupt: Some(output::interrupt()),
            report_budget: self.report_budget.0,
        }
    }
}

/// `--report-budget`: seconds, or no budget at all.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReportBudget(pub Option<Duration>);

impl std::fmt::Display for ReportBudget {
    /// As the option takes it: seconds, or `none`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0 {
            Some(budget) => write!(f, "{}", budget.as_secs_f64()),
            None => f.write_str("none"),
        }
    }
}

/// `--report-budget`: a positive number of seconds, or `none`.
pub fn parse_report_budget(s: &str) -> Result<ReportBudget, String> {
    if s.eq_ignore_ascii_case("none") {
        return Ok(ReportBudget(None));
    }
    parse_seconds(s)
        .map(|t| ReportBudget(Some(t)))
        .map_err(|_| format!("`{s}` is neither a positive number of seconds nor `none`"))
}

/// `--pattern`: a regular expression over labels (see [`Pattern`]).
fn parse_pattern(text: &str) -> Result<Pattern, String> {
    Pattern::parse(text).map_err(|e| {
        format!("{e}\n  help: labels are W, B, G, WG, BG, GG, WBG, with | * + ? ( ) between them")
    })
}

/// A test that the pipeline could not run, as a diagnostic with what to do about it.
fn pipeline_error(e: PipelineError) -> miette::Report {
    miette::miette!(help = e.help(), "{e}")
}

/// Localizes `test` with a progress bar on stderr: what `localize` and `render` share.
fn localize_with_progress(
    test: &crate::testcase::TestCase,
    limits: &LimitArgs,
    pattern: Pattern,
    max_cdrs: usize,
) -> miette::Result<crate::pipeline::Localized> {
    let options = crate::pipeline::LocalizeOptions { pattern, max_cdrs };
    let mut progress =
        output::Progress::new("exploring").telling_failures(&test.path.display().to_string());
    let localized = crate::pipeline::localize(test, &limits.limits(), &options, &mut progress);
    progress.finish();
    localized.map_err(pipeline_error)
}

/// `--timeout`: a positive number of seconds.
pub fn parse_seconds(s: &str) -> Result<Duration, String> {
    let secs: f64 = s
        .parse()
        .map_err(|_| format!("`{s}` is not a number of seconds"))?;
    if !secs.is_finite() || secs <= 0.0 {
        return Err("the timeout must be a positive number of seconds".into());
    }
    Ok(Duration::from_secs_f64(secs))
}

/// An initial state given on the command line: the value, and the text it was given as, which
/// reports repeat (`[1 2]`, not fgvt's `(1, 2)` for the same value).
#[derive(Debug, Clone)]
pub struct InitialState {
    /// The value read.
    pub value: fgvt_checker::Value,
    /// As the user wrote it.
    pub text: String,
}

/// Parses `--initial`: one EDN value.
fn parse_initial(s: &str) -> Result<InitialState, String> {
    let value = fgvt_checker::formats::edn::parse_value(s).map_err(|e| e.to_string())?;
    Ok(InitialState {
        value,
        text: s.trim().to_string(),
    })
}

/// How results are printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// For people, in a terminal.
    Text,
    /// For machines, with a schema id.
    Json,
}

/// How `check-history` prints its verdicts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum HistoryReportFormat {
    /// For people, in a terminal.
    Text,
    /// For machines, with schema `fgvt.check/1`.
    Json,
    /// SARIF 2.1.0 for code scanning: a result per non-linearizable history, at the line of
    /// the operation that cannot be placed.
    Sarif,
}

/// Arguments of `fgvt explore`.
#[derive(Debug, Args)]
pub struct ExploreArgs {
    /// The test case (`failing.json`).
    pub test: PathBuf,
    /// Print one path as a fine-grained trace, given as thread choices: `0,1,1,0` (under
    /// weak memory a load's way follows its thread: `1/2` reads the third-newest store).
    #[arg(long, value_delimiter = ',', conflicts_with = "leaf")]
    pub schedule: Option<Vec<fgvt_tree::Choice>>,
    /// Print the path to the N-th leaf (0-based, depth-first order) as a fine-grained trace.
    #[arg(long)]
    pub leaf: Option<u64>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Limits.
    #[command(flatten)]
    pub limits: LimitArgs,
}

/// How `localize` writes its report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ReportFormat {
    /// For a terminal (colour on a TTY unless `NO_COLOR`).
    Text,
    /// Self-contained Markdown for a bug ticket.
    Markdown,
    /// JSON with schema `fgvt.localize/1`.
    Json,
    /// SARIF 2.1.0 for code scanning: one result per CDRS, the witness as a code flow.
    Sarif,
}

impl ReportFormat {
    /// `report` in this format; `color` is for text only (the caller knows where it goes).
    pub fn render(self, report: &fgvt_reports::LocalizeReport, color: bool) -> String {
        match self {
            ReportFormat::Text => fgvt_reports::render_text(report, color),
            ReportFormat::Markdown => fgvt_reports::render_markdown(report),
            ReportFormat::Json => fgvt_reports::render_json(report),
            ReportFormat::Sarif => fgvt_reports::render_sarif(report),
        }
    }
}

/// Arguments of `fgvt localize`.
#[derive(Debug, Args)]
pub struct LocalizeArgs {
    /// The failing test (`failing.json`).
    pub test: PathBuf,
    /// Report format.
    #[arg(long, value_enum, default_value_t = ReportFormat::Text)]
    pub format: ReportFormat,
    /// Write the report to this file (atomically; `-` for stdout) instead of stdout.
    #[arg(short = 'o', long = "output")]
    pub output: Option<PathBuf>,
    /// The CDRS pattern: a regular expression over labels that must match a failing path's
    /// whole sequence of decisive labels, root to leaf (default: the paper's
    /// `(WG|BG|WBG)*(BG|G|WBG)`; `G` alone matches only paths with one decisive race).
    #[arg(long, value_parser = parse_pattern, default_value = fgvt_labeling::pattern::DEFAULT_PATTERN)]
    pub pattern: Pattern,
    /// Report at most this many CDRS, best first.
    #[arg(long, default_value_t = 3)]
    pub max_cdrs: usize,
    /// Also draw the labeled tree as SVG to this file (see `fgvt render`; `-` for stdout when
    /// the report goes to a file).
    #[arg(long, value_name = "FILE")]
    pub svg: Option<PathBuf>,
    /// Also draw the labeled tree as DOT (Graphviz) to this file.
    #[arg(long, value_name = "FILE")]
    pub dot: Option<PathBuf>,
    /// How to draw the tree for `--svg` and `--dot`.
    #[command(flatten)]
    pub draw: DrawArgs,
    /// Limits.
    #[command(flatten)]
    pub limits: LimitArgs,
}

/// The drawing formats of `fgvt render`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum TreeFormat {
    /// Scalable Vector Graphics, for a browser.
    Svg,
    /// Graphviz's DOT language.
    Dot,
}

/// Which program lays out an SVG drawing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum EngineArg {
    /// Graphviz's `dot` when it is on PATH, else the builtin layout.
    Auto,
    /// Graphviz's `dot` (an error when it is not installed).
    Graphviz,
    /// The builtin pure-Rust layout.
    Builtin,
}

/// Which part of the tree to draw.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FocusArg {
    /// The whole tree, within the limits.
    All,
    /// Only the paths of the reported CDRS and their siblings.
    Cdrs,
}

/// How to draw a labeled tree: shared by `render` and by `localize --svg/--dot`.
#[derive(Debug, Clone, Args)]
pub struct DrawArgs {
    /// Layout engine for SVG (DOT needs none).
    #[arg(long, value_enum, default_value_t = EngineArg::Auto)]
    pub engine: EngineArg,
    /// Expand no node deeper than this many steps from the root.
    #[arg(long, value_name = "N")]
    pub depth: Option<usize>,
    /// Draw the whole tree, or only the reported CDRS paths and their siblings (the default
    /// when the test fails; the whole tree otherwise).
    #[arg(long, value_enum)]
    pub focus: Option<FocusArg>,
    /// Most nodes in the drawing; beyond it subtrees are drawn as one node with their leaf count.
    #[arg(long, value_name = "N", default_value_t = fgvt_reports::draw::DEFAULT_MAX_NODES)]
    pub max_nodes: usize,
    /// Draw a memoized tree as its DAG of states instead of unfolded.
    #[arg(long)]
    pub dag: bool,
    /// Do not fold uniform (all W or all B) subtrees into one node.
    #[arg(long)]
    pub no_fold: bool,
}

/// Arguments of `fgvt render`.
#[derive(Debug, Args)]
pub struct RenderArgs {
    /// The test (`failing.json`).
    pub test: PathBuf,
    /// Write the drawing to this file (atomically; `-` for stdout); `.svg` or `.dot`/`.gv`
    /// choose the format.
    #[arg(short = 'o', long = "output")]
    pub output: Option<PathBuf>,
    /// The format (default: from the extension of `-o`, else DOT on stdout); a `-o` whose
    /// extension names the other format is refused.
    #[arg(long, value_enum)]
    pub format: Option<TreeFormat>,
    /// The CDRS pattern: a regular expression over labels that must match a failing path's
    /// whole sequence of decisive labels, root to leaf (default: the paper's
    /// `(WG|BG|WBG)*(BG|G|WBG)`).
    #[arg(long, value_parser = parse_pattern, default_value = fgvt_labeling::pattern::DEFAULT_PATTERN)]
    pub pattern: Pattern,
    /// Highlight at most this many CDRS, best first.
    #[arg(long, default_value_t = 3)]
    pub max_cdrs: usize,
    /// How to draw.
    #[command(flatten)]
    pub draw: DrawArgs,
    /// Limits.
    #[command(flatten)]
    pub limits: LimitArgs,
}

/// The formats `check-history` reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum HistoryFormat {
    /// Detect from the first line.
    Auto,
    /// fgvt's JSON history (`fgvt.history/1`).
    Json,
    /// Jepsen etcd log lines (register spec).
    Jepsen,
    /// EDN-like key/value store lines (kv spec).
    Kv,
    /// Jepsen EDN operation maps (register, queue, mutex, set or multi-register, inferred or
    /// `--spec`).
    Edn,
}

/// Arguments of `fgvt hunt`.
#[derive(Debug, Args)]
pub struct HuntArgs {
    /// What to hunt and what to do with a finding.
    #[command(flatten)]
    pub flags: HuntFlags,
    /// Limits of each test (`--timeout` bounds the whole hunt).
    #[command(flatten)]
    pub limits: LimitArgs,
}

/// The arguments of a hunt other than its limits, shared with `fgvt_sync::main!` programs.
#[derive(Debug, Args)]
pub struct HuntFlags {
    /// The hunt file (`hunt.json`): object, spec, operations, threads, ops_per_thread.
    pub hunt: PathBuf,
    /// Seed of the random tests; the same seed finds the same test whatever `--jobs`.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// How many tests to draw (default: the hunt file's `samples`, else 100).
    #[arg(long)]
    pub samples: Option<usize>,
    /// Worker threads (default: one per core).
    #[arg(long)]
    pub jobs: Option<usize>,
    /// Check every sample and report every failing test, not just the first.
    #[arg(long, conflicts_with = "localize")]
    pub all: bool,
    /// Write the failing test (atomically; `-` for stdout) to this file instead of printing
    /// it; with `--all`, sample N goes to `<stem>-N.json`; with `--localize`, the report.
    #[arg(short = 'o', long = "output")]
    pub output: Option<PathBuf>,
    /// Run the whole pipeline: minimize the failing test, localize it, print the report (or
    /// write it to `-o`); the tests go to `--out-dir`.
    #[arg(long)]
    pub localize: bool,
    /// With `--localize`: the directory where the test found (`found.json`) and the minimal
    /// test (`minimal.json`) are written (default: the current directory).
    #[arg(long, value_name = "DIR", requires = "localize")]
    pub out_dir: Option<PathBuf>,
    /// Report format with `--localize`.
    #[arg(long, value_enum, default_value_t = ReportFormat::Text)]
    pub format: ReportFormat,
    /// Run one shard of the hunt, `K/N` (1 ≤ K ≤ N): the samples whose number is K-1 modulo
    /// N, drawn as the whole hunt draws them. Its result, JSON (`fgvt.hunt-shard/1`), goes to
    /// `-o` (a file, or a directory, `DIR/`, that gets `shard-K-of-N.json`; default stdout)
    /// for `--merge`. `auto`: K is `JOB_COMPLETION_INDEX` + 1 (a Kubernetes Indexed Job's),
    /// N is `--shard-count` or `FGVT_SHARD_COUNT`. Exit 0 once the result is written.
    #[arg(long, value_name = "K/N|auto", conflicts_with_all = ["localize", "merge"])]
    pub shard: Option<crate::hunt::ShardArg>,
    /// With `--shard auto`: how many shards (default: the `FGVT_SHARD_COUNT` variable).
    #[arg(long, value_name = "N", requires = "shard")]
    pub shard_count: Option<usize>,
    /// Merge the results of shards (a directory of `*.json`, or a file; repeat for several)
    /// into what the whole hunt finds, and report it as the unsharded command does (`--all`,
    /// `-o`, `--localize`): run it as the shards ran, with `--merge` for `--shard`. Every
    /// shard must be there once.
    #[arg(long, value_name = "PATH", conflicts_with = "shard")]
    pub merge: Option<Vec<PathBuf>>,
}

/// Arguments of `fgvt minimize`.
#[derive(Debug, Args)]
pub struct MinimizeArgs {
    /// The failing test (`failing.json`).
    pub test: PathBuf,
    /// Write the minimal test (atomically; `-` for stdout) to this file instead of printing it.
    #[arg(short = 'o', long = "output")]
    pub output: Option<PathBuf>,
    /// Worker threads (default: one per core).
    #[arg(long)]
    pub jobs: Option<usize>,
    /// Limits of each candidate test (`--timeout` bounds the whole search).
    #[command(flatten)]
    pub limits: LimitArgs,
}

/// Arguments of `fgvt check-history`.
#[derive(Debug, Args)]
pub struct CheckHistoryArgs {
    /// History files, or directories of them.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// The format of the history files (`--format` is the output's, as in every command).
    #[arg(long, value_enum, default_value_t = HistoryFormat::Auto)]
    pub input_format: HistoryFormat,
    /// The spec: a built-in name (register, counter, set, map, queue, stack, deque, snapshot,
    /// kv, mutex, multi-register) or a model `file.fgv#Name`. Needed for JSON histories that name none.
    #[arg(long)]
    pub spec: Option<String>,
    /// The built-in spec's initial state, in EDN (Jepsen's notation), instead of the spec's own
    /// (nil, 0, empty): `0` for a register, `[1 2]` for a queue (head first), `#{1 2}` for a
    /// set, `{"k" "x"}` for a kv store or map, `true` for a held mutex. A JSON history may give
    /// it as `"initial"`; this flag wins.
    #[arg(long, value_name = "EDN", value_parser = parse_initial)]
    pub initial: Option<InitialState>,
    /// Check the history whole even when the spec partitions it (per key).
    #[arg(long)]
    pub no_partition: bool,
    /// How to print the verdicts.
    #[arg(long, value_enum, default_value_t = HistoryReportFormat::Text)]
    pub format: HistoryReportFormat,
    /// Give up on a file after this many seconds: its verdict is unknown (exit 3).
    #[arg(long, value_parser = parse_seconds)]
    pub timeout: Option<Duration>,
    /// Draw the history as a self-contained HTML page: operations per process on a time axis,
    /// the longest linearizable prefix, what cannot come next. With several files, a directory
    /// that gets one page per file and an `index.html`.
    #[arg(long)]
    pub html: Option<PathBuf>,
}

/// Parses the command line and runs it; the process exit code follows design.md:
/// 0 no violation, 1 violation, 2 bad input or usage, 3 inconclusive; 130 when SIGINT or
/// SIGTERM stopped the run (what it had found is printed, marked INTERRUPTED).
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    output::install_error_hook();
    output::install_interrupt_handler();
    let result = match cli.command {
        Command::Explore(args) => explore::run(&args),
        Command::CheckHistory(args) => check_history::run(&args),
        Command::Localize(args) => localize::run(&args),
        Command::Render(args) => render::run(&args),
        Command::Hunt(args) => hunt::run(&args),
        Command::Minimize(args) => minimize::run(&args),
        Command::Completions(args) => manual::completions(&args),
        Command::Man(args) => manual::man(&args),
    };
    match result {
        Ok(exit) => output::process_exit(exit),
        Err(report) => {
            eprintln!("{report:?}");
            Exit::BadInput.into()
        }
    }
}
