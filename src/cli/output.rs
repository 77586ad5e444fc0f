//! What every command shares about output: exit codes, colour, atomic files, progress.

use std::io::{IsTerminal, Write};
use std::path::Path;
use std::process::ExitCode;

use indicatif::{ProgressBar, ProgressStyle};

/// The exit codes of design.md.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exit {
    /// No violation.
    Ok = 0,
    /// A violation was found.
    Violation = 1,
    /// Bad input or usage.
    BadInput = 2,
    /// A limit made the result inconclusive.
    Inconclusive = 3,
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

/// Writes `text` to `path` atomically, or prints it when there is no path.
pub fn write_or_emit(path: Option<&Path>, text: &str) -> miette::Result<()> {
    match path {
        Some(path) => write_atomically(path, text.as_bytes()),
        None => emit(text),
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

/// Writes `contents` to `path` through a temporary file in the same directory and a rename,
/// so that a failed run never leaves a partial file behind.
pub fn write_atomically(path: &Path, contents: &[u8]) -> miette::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let fail = |e: std::io::Error| {
        miette::miette!(
            help = "check that the directory exists and is writable",
            "cannot write `{}`: {e}",
            path.display()
        )
    };
    let mut builder = tempfile::Builder::new();
    // A report is an ordinary file: readable by others, as `>` would have made it.
    #[cfg(unix)]
    builder.permissions(std::os::unix::fs::PermissionsExt::from_mode(0o644));
    let mut tmp = builder.tempfile_in(dir).map_err(fail)?;
    tmp.write_all(contents).map_err(fail)?;
    tmp.persist(path).map_err(|e| fail(e.error))?;
    Ok(())
}

/// A spinner on stderr for long explorations: shown only on a terminal, and only once a run has
/// lasted longer than a moment, so that quick runs print nothing but their result.
pub struct Progress {
    bar: Option<ProgressBar>,
    started: std::time::Instant,
    shown: bool,
}

impl Progress {
    /// How long a run goes before the spinner appears.
    pub const DELAY: std::time::Duration = std::time::Duration::from_millis(400);

    /// A spinner labelled `what`, hidden until the run has lasted [`Progress::DELAY`].
    pub fn new(what: &str) -> Progress {
        let started = std::time::Instant::now();
        if !std::io::stderr().is_terminal() {
            return Progress {
                bar: None,
                started,
                shown: false,
            };
        }
        let bar = ProgressBar::with_draw_target(None, indicatif::ProgressDrawTarget::hidden());
        bar.set_style(
            ProgressStyle::with_template("{spinner} {msg}: {human_pos} states, {elapsed}")
                .expect("valid template"),
        );
        bar.set_message(what.to_string());
        Progress {
            bar: Some(bar),
            started,
            shown: false,
        }
    }

    /// Clears the spinner.
    pub fn finish(self) {
        if let Some(bar) = self.bar {
            bar.finish_and_clear();
        }
    }
}

impl fgvt_tree::explore::Progress for Progress {
    fn tick(&mut self, nodes: u64) {
        if let Some(bar) = &self.bar {
            bar.set_position(nodes);
            if !self.shown && self.started.elapsed() >= Self::DELAY {
                self.shown = true;
                bar.set_draw_target(indicatif::ProgressDrawTarget::stderr());
                bar.enable_steady_tick(std::time::Duration::from_millis(200));
            }
        }
    }
}

/// The exit code of a localization (design.md): 1 for a violation, 3 when partial.
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
