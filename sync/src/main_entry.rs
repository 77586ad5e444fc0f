//! The binary entry point: [`main!`](crate::main) turns Rust objects into a program with fgvt's
//! subcommands over the usual test files (`localize`, `explore`, `render`), as `fgvt` has for
//! models. Built only with the `cli` feature, which brings clap and the tree drawings.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand, ValueEnum};
use fgvt::cli::output::{
    emit, exit_code, install_error_hook, stdout_color, write_atomically, Exit,
};
pub use fgvt::testcase::TestFile;
use fgvt_tree::replay::ReplayError;
use fgvt_tree::Tree;
use miette::miette;

use crate::object::Object;
use crate::picture::{drawing, Format};
use crate::test::{Localized, Test};

/// The test `file` on `O`, named `name`.
pub fn test_from_file<O: Object>(name: &str, file: &TestFile) -> Result<Test<O>, String> {
    fn strs(calls: &[String]) -> Vec<&str> {
        calls.iter().map(String::as_str).collect()
    }
    let mut test = Test::<O>::new(name)
        .try_spec(file.spec.as_deref().unwrap_or("self"))?
        .try_init(&strs(&file.init))?
        .try_finally(&strs(&file.finals))?;
    for thread in &file.threads {
        test = test.try_thread(&strs(thread))?;
    }
    Ok(test)
}

/// Localizes `file`'s test on `O`: the test built from the file, localized.
pub fn localize_file<O: Object>(name: &str, file: &TestFile) -> Result<Localized, String> {
    test_from_file::<O>(name, file)?
        .localize()
        .map_err(|e| e.to_string())
}

/// A test of one of the program's objects, whichever it is.
pub trait AnyTest {
    /// [`Test::localize`].
    fn localize(&self) -> Result<Localized, ReplayError>;
    /// [`Test::explore`].
    fn explore(&self) -> Result<Tree, ReplayError>;
}

impl<O: Object> AnyTest for Test<O> {
    fn localize(&self) -> Result<Localized, ReplayError> {
        Test::localize(self)
    }

    fn explore(&self) -> Result<Tree, ReplayError> {
        Test::explore(self)
    }
}

/// How `main!` makes a test of one object from a file and the command line's limits.
pub type MakeTest = fn(&str, &TestFile, &Limits, &str) -> Result<Box<dyn AnyTest>, String>;

/// [`MakeTest`] for `O`.
pub fn make_test<O: Object>(
    name: &str,
    file: &TestFile,
    limits: &Limits,
    reproduce: &str,
) -> Result<Box<dyn AnyTest>, String> {
    let test = test_from_file::<O>(name, file)?
        .max_steps(limits.max_steps)
        .max_states(limits.max_states)
        .reproduce_with(reproduce);
    Ok(Box::new(test))
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
}

/// The limits of an exploration.
#[derive(Debug, Clone, Args)]
pub struct Limits {
    /// Most steps one operation may take on a path (an endless spin ends there, bounded).
    #[arg(long, default_value_t = 1_000)]
    pub max_steps: usize,
    /// Most tree nodes before exploration stops (the result is then partial, exit 3).
    #[arg(long, default_value_t = 1_000_000)]
    pub max_states: usize,
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
    #[command(flatten)]
    limits: Limits,
}

#[derive(Debug, Args)]
struct ExploreArgs {
    /// The test file.
    test: PathBuf,
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
    #[command(flatten)]
    limits: Limits,
}

/// The formats of a report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum ReportFormat {
    /// For a terminal.
    Text,
    /// For a bug ticket.
    Markdown,
    /// For programs (schema `fgvt.localize/1`).
    Json,
}

/// Runs the program. `objects` names each object a test file may ask for, with how to make a
/// test of it. Exit codes and error rendering are `fgvt`'s (`fgvt::cli::output`): 0
/// linearizable, 1 not, 2 bad input, 3 inconclusive.
pub fn run(objects: &[(&str, MakeTest)]) -> ExitCode {
    let cli = Cli::parse();
    install_error_hook();
    match dispatch(objects, &cli.command) {
        Ok(exit) => exit.into(),
        Err(report) => {
            eprintln!("{report:?}");
            Exit::BadInput.into()
        }
    }
}

fn dispatch(objects: &[(&str, MakeTest)], command: &Command) -> miette::Result<Exit> {
    match command {
        Command::Localize(args) => {
            let found = load(objects, &args.test, &args.limits, "localize")?
                .localize()
                .map_err(|e| miette!("{}: {e}", args.test.display()))?;
            let report = &found.report;
            let text = match args.format {
                ReportFormat::Text => {
                    fgvt_reports::render_text(report, args.output.is_none() && stdout_color())
                }
                ReportFormat::Markdown => fgvt_reports::render_markdown(report),
                ReportFormat::Json => fgvt_reports::render_json(report),
            };
            if let Some(svg) = &args.svg {
                let picture = drawing(&found, Format::Svg).map_err(|e| miette!("{e}"))?;
                write_atomically(svg, picture.as_bytes())?;
            }
            output(args.output.as_deref(), &text)?;
            let exit = exit_code(report);
            // The process ends here: freeing a tree of a million nodes would only delay it.
            std::mem::forget(found);
            Ok(exit)
        }
        Command::Explore(args) => {
            let tree = load(objects, &args.test, &args.limits, "explore")?
                .explore()
                .map_err(|e| miette!("{}: {e}", args.test.display()))?;
            let s = tree.stats();
            let mut text = format!(
                "{}: {} nodes, {} leaves (complete {}, stuck {}, fault {}, bounded {}), depth {}\n",
                args.test.display(),
                s.nodes,
                s.leaves,
                s.complete,
                s.stuck,
                s.fault,
                s.bounded,
                s.max_depth
            );
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
            let found = load(objects, &args.test, &args.limits, "render")?
                .localize()
                .map_err(|e| miette!("{}: {e}", args.test.display()))?;
            let text = drawing(&found, format).map_err(|e| miette!("{e}"))?;
            output(args.output.as_deref(), &text)?;
            // The picture is what was asked for; the verdict is `localize`'s to give.
            Ok(Exit::Ok)
        }
    }
}

/// The test of `path` on the object it names, for `subcommand`.
fn load(
    objects: &[(&str, MakeTest)],
    path: &Path,
    limits: &Limits,
    subcommand: &str,
) -> miette::Result<Box<dyn AnyTest>> {
    let file = fgvt::testcase::read_test_file(path)?;
    let fail = |message: String| miette!("{}: {message}", path.display());
    let Some((_, make)) = objects.iter().find(|(n, _)| *n == file.object) else {
        let names: Vec<&str> = objects.iter().map(|(n, _)| *n).collect();
        return Err(fail(format!(
            "unknown object `{}`; this program has: {}",
            file.object,
            names.join(", ")
        )));
    };
    let program = std::env::args().next().unwrap_or_else(|| "program".into());
    let name = path.display().to_string();
    let reproduce = format!(
        "{} {subcommand} {}",
        fgvt_reports::shell_quote(&program),
        fgvt_reports::shell_quote(&name)
    );
    make(&name, &file, limits, &reproduce).map_err(fail)
}

/// Prints `text`, or writes it to `output` atomically.
fn output(output: Option<&Path>, text: &str) -> miette::Result<()> {
    match output {
        Some(path) => write_atomically(path, text.as_bytes()),
        None => emit(text),
    }
}

/// A `main` for Rust objects: `fgvt_sync::main!(PairSnapshot, FixedPairSnapshot);` makes a
/// program whose `localize FILE.json` (and `explore`, `render`) runs the file's test on the
/// object it names. Needs the `cli` feature of `fgvt-sync`.
#[macro_export]
macro_rules! main {
    ($($object:ty),+ $(,)?) => {
        fn main() -> ::std::process::ExitCode {
            $crate::main_entry::run(&[
                $((
                    stringify!($object),
                    $crate::main_entry::make_test::<$object> as $crate::main_entry::MakeTest,
                )),+
            ])
        }
    };
}
