//! What every command shares about output: exit codes, colour, atomic files, progress, and
//! the interrupt that Ctrl-C raises.
//!
//! # Where outputs go
//!
//! Every file a command writes (`-o`, `--svg`, `--dot`, the tests a hunt writes) goes through
//! [`write_atomically`], which decides by what the path names:
//!
//! * `-` is stdout;
//! * the standard streams by name, `/dev/stdout`, `/dev/stderr`, `/dev/fd/N` and
//!   `/proc/self/fd/N`, are written through (a stream cannot be replaced; `/dev/fd/N` is how a
//!   shell passes `>(command)`);
//! * a regular file, or a path where nothing is yet, is replaced atomically (a temporary file
//!   in the same directory, then a rename), so that a reader never sees half a report and a
//!   failed run leaves the old file; a symbolic link is followed, and its target is replaced so;
//! * anything else that exists, a FIFO, a device (`/dev/null` included), a directory or a
//!   socket, is refused (exit 2): a rename would put a regular file in its place.
//!
//! Commands check their output paths ([`check_output`]) before they start working, so that a
//! path refused costs nothing.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, LazyLock};

/// The exit codes of design.md.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exit {
    /// No violation.
    Ok = 0,
    /// A violation was found.
    Violation = 1,
    /// Bad input or usage.
    BadInput = 2,
    /// A limit made the result inconclusive; when the limit was an interrupt, the process
    /// exits with [`INTERRUPTED_EXIT`] instead.
    Inconclusive = 3,
}

/// The exit code of a run that SIGINT or SIGTERM cut short, after it printed what it had
/// found, marked INTERRUPTED: 128 + SIGINT's number, as a shell reports a Ctrl-C.
pub const INTERRUPTED_EXIT: u8 = 130;

/// The process's exit code for a command's `exit`: [`INTERRUPTED_EXIT`] for a result that an
/// interrupt made partial (an inconclusive result while the interrupt is raised).
pub fn process_exit(exit: Exit) -> ExitCode {
    if exit == Exit::Inconclusive && interrupted() {
        ExitCode::from(INTERRUPTED_EXIT)
    } else {
        exit.into()
    }
}

impl From<Exit> for ExitCode {
    fn from(exit: Exit) -> ExitCode {
        ExitCode::from(exit as u8)
    }
}

/// Whether to colour what goes to stdout: only on a terminal, never with `NO_COLOR`.
pub fn stdout_color() -> bool {
    no_color_unset() && std::io::stdout().is_terminal()
}

fn no_color_unset() -> bool {
    std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
}

/// Renders errors with miette: file, line, column and caret; colour only on a terminal.
pub fn install_error_hook() {
    let tty = std::io::stderr().is_terminal();
    let color = no_color_unset() && tty;
    // Off a terminal, lines stay whole so that logs and scripts can grep `file:line:col`.
    let _ = miette::set_hook(Box::new(move |_| {
        Box::new(
            miette::MietteHandlerOpts::new()
                .color(color)
                .unicode(color)
                .wrap_lines(tty)
                .build(),
        )
    }));
}

/// The flag SIGINT and SIGTERM raise, once [`install_interrupt_handler`] has run: a shared
/// `Arc` because `signal-hook` takes one, kept for the whole process.
static INTERRUPT_FLAG: LazyLock<Arc<AtomicBool>> =
    LazyLock::new(|| Arc::new(AtomicBool::new(false)));

/// The interrupt that SIGINT (Ctrl-C) and SIGTERM raise: commands give it to the explorer,
/// the checker's loop and the hunt, which stop at it with a partial result.
pub fn interrupt() -> fgvt_tree::Interrupt {
    let flag: &'static Arc<AtomicBool> = &INTERRUPT_FLAG;
    fgvt_tree::Interrupt::new(flag)
}

/// Whether SIGINT or SIGTERM has arrived.
pub fn interrupted() -> bool {
    interrupt().is_raised()
}

/// Makes SIGINT and SIGTERM raise [`interrupt`] instead of killing the process, so that a long
/// run stops cleanly and prints what it found (exit 130); a second signal ends the process at
/// once with exit 130, as a second Ctrl-C is meant to.
pub fn install_interrupt_handler() {
    #[cfg(unix)]
    for signal in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        // In this order: the first handler exits only when the flag is already up, the second
        // raises it; a failure to register leaves the default action (the process dies).
        let _ = signal_hook::flag::register_conditional_shutdown(
            signal,
            i32::from(INTERRUPTED_EXIT),
            Arc::clone(&INTERRUPT_FLAG),
        );
        let _ = signal_hook::flag::register(signal, Arc::clone(&INTERRUPT_FLAG));
    }
}

/// Writes `text` to `path` atomically (see the [module docs](self)), or prints it when there
/// is no path.
pub fn write_or_emit(path: Option<&Path>, text: &str) -> miette::Result<()> {
    match path {
        Some(path) => write_atomically(path, text.as_bytes()),
        None => emit(text),
    }
}

/// Why an output could not be written.
#[derive(Debug, thiserror::Error, miette::Diagnostic)]
pub enum OutputError {
    /// The path names something that is not a regular file: replacing it would destroy it.
    #[error("cannot write `{}`: it is {what}, not a regular file", .path.display())]
    #[diagnostic(
        code(fgvt::output),
        help(
            "fgvt writes regular files (replacing them atomically, through symbolic links), `-` \
             for stdout, and /dev/stdout, /dev/stderr or /dev/fd/N as streams; name a file"
        )
    )]
    NotRegular {
        /// The path as given.
        path: PathBuf,
        /// What is there: "a FIFO", "a character device", ...
        what: &'static str,
    },
    /// Symbolic links that lead back to themselves.
    #[error("cannot write `{}`: too many levels of symbolic links", .path.display())]
    #[diagnostic(code(fgvt::output), help("the link, or one it points to, loops"))]
    LinkLoop {
        /// The path as given.
        path: PathBuf,
    },
    /// The file system refused.
    #[error("cannot write `{}`: {source}", .path.display())]
    #[diagnostic(
        code(fgvt::output),
        help("check that the directory exists and is writable")
    )]
    Io {
        /// The path as given.
        path: PathBuf,
        /// What the file system said.
        source: std::io::Error,
    },
}

/// Where writing a path goes (see the [module docs](self)).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    /// This process's stdout (`-`, `/dev/stdout`, `/dev/fd/1`).
    Stdout,
    /// This process's stderr (`/dev/stderr`, `/dev/fd/2`).
    Stderr,
    /// Another open descriptor by name (`/dev/fd/N`), written through.
    Stream(PathBuf),
    /// A regular file, existing or not, after following symbolic links: replaced atomically.
    File(PathBuf),
}

/// Most symbolic links followed to reach a file (Linux's own limit).
const MAX_LINKS: usize = 40;

/// Where writing `path` would go, or why it may not be written.
pub fn output_target(path: &Path) -> Result<Target, OutputError> {
    if let Some(stream) = stream_target(path) {
        return Ok(stream);
    }
    let io = |source| OutputError::Io {
        path: path.to_path_buf(),
        source,
    };
    let mut at = path.to_path_buf();
    for _ in 0..MAX_LINKS {
        let meta = match std::fs::symlink_metadata(&at) {
            Ok(meta) => meta,
            // Nothing there yet (or a dangling link's target): a new file, in a directory that
            // must exist.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                let dir = directory_of(&at);
                return match std::fs::metadata(dir) {
                    Ok(meta) if meta.is_dir() => Ok(Target::File(at)),
                    Ok(_) => Err(io(std::io::Error::new(
                        std::io::ErrorKind::NotADirectory,
                        format!("`{}` is not a directory", dir.display()),
                    ))),
                    Err(e) => Err(io(std::io::Error::new(
                        e.kind(),
                        format!("the directory `{}`: {e}", dir.display()),
                    ))),
                };
            }
            Err(e) => return Err(io(e)),
        };
        let kind = meta.file_type();
        if kind.is_symlink() {
            let target = std::fs::read_link(&at).map_err(io)?;
            at = directory_of(&at).join(target);
        } else if kind.is_file() {
            return Ok(Target::File(at));
        } else {
            return Err(OutputError::NotRegular {
                path: path.to_path_buf(),
                what: describe(&kind),
            });
        }
    }
    Err(OutputError::LinkLoop {
        path: path.to_path_buf(),
    })
}

/// `-` and the standard streams by name: where they go, written through.
fn stream_target(path: &Path) -> Option<Target> {
    let text = path.to_str()?;
    if text == "-" {
        return Some(Target::Stdout);
    }
    let fd = text
        .strip_prefix("/dev/fd/")
        .or_else(|| text.strip_prefix("/proc/self/fd/"))
        .and_then(|n| n.parse::<u32>().ok());
    match (text, fd) {
        ("/dev/stdout", _) | (_, Some(1)) => Some(Target::Stdout),
        ("/dev/stderr", _) | (_, Some(2)) => Some(Target::Stderr),
        (_, Some(_)) => Some(Target::Stream(path.to_path_buf())),
        _ => None,
    }
}

/// What a file type is, for a message: "a FIFO", "a directory", ...
fn describe(kind: &std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if kind.is_fifo() {
            return "a FIFO (named pipe)";
        }
        if kind.is_char_device() {
            return "a character device";
        }
        if kind.is_block_device() {
            return "a block device";
        }
        if kind.is_socket() {
            return "a socket";
        }
    }
    if kind.is_dir() {
        "a directory"
    } else {
        "something other than a file"
    }
}

/// The directory a path's file goes in (`.` for a bare name).
fn directory_of(path: &Path) -> &Path {
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    }
}

/// Checks before any work that `path` may be written (see the [module docs](self)): a
/// refused path is an error (exit 2) at once, not after a long exploration.
pub fn check_output(path: &Path) -> miette::Result<Target> {
    Ok(output_target(path)?)
}

/// Whether `path` (an output option's value) goes to stdout: `-`, `/dev/stdout`, `/dev/fd/1`.
pub fn is_stdout(path: &Path) -> bool {
    stream_target(path) == Some(Target::Stdout)
}

/// How a message names where an output went: `stdout` for `-`, else the path as given.
pub fn output_name(path: &Path) -> String {
    match stream_target(path) {
        Some(Target::Stdout) => "stdout".to_string(),
        Some(Target::Stderr) => "stderr".to_string(),
        _ => path.display().to_string(),
    }
}

/// Prints `text` to stdout. A reader that goes away early (`fgvt ... | head`) is not an
/// error: the rest of the output is dropped quietly instead of panicking like `print!` does.
pub fn emit(text: &str) -> miette::Result<()> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            Err(miette::miette!("cannot write to stdout: {e}"))
        }
        _ => Ok(()),
    }
}

/// Writes `contents` where `path` says (see the [module docs](self)): `-` to stdout, a
/// standard stream through, a regular file (through symbolic links) by a temporary file in the
/// same directory and a rename, so that a failed run never leaves a partial file behind;
/// anything else is refused.
pub fn write_atomically(path: &Path, contents: &[u8]) -> miette::Result<()> {
    Ok(write_output(path, contents)?)
}

/// [`write_atomically`], with its typed error.
pub fn write_output(path: &Path, contents: &[u8]) -> Result<(), OutputError> {
    let io = |source| OutputError::Io {
        path: path.to_path_buf(),
        source,
    };
    match output_target(path)? {
        Target::Stdout => {
            let mut out = std::io::stdout().lock();
            match out.write_all(contents).and_then(|()| out.flush()) {
                // A reader that went away (`| head`) is not an error, as for `emit`.
                Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(io(e)),
                _ => Ok(()),
            }
        }
        Target::Stderr => std::io::stderr().lock().write_all(contents).map_err(io),
        Target::Stream(stream) => std::fs::OpenOptions::new()
            .write(true)
            .open(stream)
            .and_then(|mut f| f.write_all(contents))
            .map_err(io),
        Target::File(file) => {
            let mut builder = tempfile::Builder::new();
            // A report is an ordinary file: readable by others, as `>` would have made it.
            #[cfg(unix)]
            builder.permissions(std::os::unix::fs::PermissionsExt::from_mode(0o644));
            let mut tmp = builder.tempfile_in(directory_of(&file)).map_err(io)?;
            tmp.write_all(contents).map_err(io)?;
            // The temporary file is removed if the rename fails (dropped with `e`).
            tmp.persist(&file).map_err(|e| io(e.error))?;
            Ok(())
        }
    }
}

/// A spinner on stderr for long explorations ([`fgvt_reports::early::Spinner`]: shown only
/// on a terminal, and only once a run has lasted longer than a moment, so that quick runs print
/// nothing but their result).
///
/// It also tells of the first failing run as soon as the exploration meets it (see
/// [`Progress::telling_failures`]): on a terminal at once, elsewhere once the run has lasted
/// the moment ([`fgvt_reports::early`]), it says on stderr that the test is NOT LINEARIZABLE
/// and how to replay that run, long before the tree is finished and labeled.
pub struct Progress {
    spinner: fgvt_reports::early::Spinner,
    /// The test file whose failing runs are told of, if any.
    test_file: Option<String>,
    /// The line about the first failing run, off a terminal.
    notice: fgvt_reports::early::EarlyNotice,
}

impl Progress {
    /// How long a run goes before the spinner appears.
    pub const DELAY: std::time::Duration = fgvt_reports::early::MOMENT;

    /// A spinner labelled `what`, hidden until the run has lasted [`Progress::DELAY`].
    pub fn new(what: &str) -> Progress {
        Progress {
            spinner: fgvt_reports::early::Spinner::new(what),
            test_file: None,
            notice: fgvt_reports::early::EarlyNotice::new(),
        }
    }

    /// Tells of the first failing run of the exploration of `test_file`, with its replay
    /// command (see the type's docs).
    pub fn telling_failures(mut self, test_file: &str) -> Progress {
        self.test_file = Some(test_file.to_string());
        self
    }

    /// Clears the spinner; a failing run not told of yet is not told any more.
    pub fn finish(self) {
        self.notice.finish();
        self.spinner.finish();
    }
}

impl fgvt_tree::explore::Progress for Progress {
    fn tick(&mut self, nodes: u64) {
        self.spinner.tick(nodes);
    }

    fn failing_run(&mut self, schedule: &[fgvt_tree::Choice]) {
        let Some(test_file) = &self.test_file else {
            return;
        };
        let replay = fgvt_reports::replay_command(test_file, schedule);
        let line = fgvt_reports::early::failing_run_line(self.notice.elapsed(), &replay);
        // Someone watches: at once (above the spinner once it shows); else once the run has
        // lasted the moment.
        if self.spinner.println(&line) {
        } else if self.spinner.on_terminal() {
            eprintln!("{line}");
        } else {
            self.notice.tell(line, |line| eprintln!("{line}"));
        }
    }
}

/// The exit code of a localization (design.md): 1 for a violation, 3 when partial (130 when
/// an interrupt made it so: see [`process_exit`]).
pub fn exit_code(report: &fgvt_reports::LocalizeReport) -> Exit {
    match report.verdict {
        // A limit makes the run partial whatever was found: the CDRS may change with the rest
        // of the tree.
        _ if report.partial.is_some() => Exit::Inconclusive,
        fgvt_reports::Verdict::NotLinearizable => Exit::Violation,
        fgvt_reports::Verdict::Linearizable => Exit::Ok,
        fgvt_reports::Verdict::Inconclusive => Exit::Inconclusive,
    }
}
