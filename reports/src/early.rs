//! What a long run says before its report: the first failing run, as soon as the exploration
//! meets it (a line on stderr with the command that replays it), but only once the run has
//! lasted a moment, so that a quick run prints nothing but its report; and, on a terminal, a
//! [`Spinner`] with the states explored so far.
//!
//! The exploration may meet the failure early and then finish within the moment, spending the
//! rest of a long run labeling the tree, where nothing ticks: so the line waits on a timer of
//! its own, and [`EarlyNotice::finish`] (the report is ready) withdraws it if it is still
//! waiting.

use std::io::IsTerminal;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// How long a run goes before it says anything but its report.
pub const MOMENT: Duration = Duration::from_millis(400);

/// The line telling of a failing run, said once the run has lasted [`MOMENT`] unless the run is
/// over by then.
pub struct EarlyNotice {
    started: Instant,
    pending: Arc<Mutex<Pending>>,
}

/// Where the line is.
#[derive(Default)]
enum Pending {
    /// Nothing to say (yet).
    #[default]
    Nothing,
    /// This line, to be said by `say` when the moment comes.
    Line(String, Box<dyn FnOnce(String) + Send>),
    /// Said, or the run is over: nothing more is said.
    Done,
}

impl EarlyNotice {
    /// A notice for a run starting now.
    pub fn new() -> EarlyNotice {
        EarlyNotice {
            started: Instant::now(),
            pending: Arc::default(),
        }
    }

    /// How long the run has gone.
    pub fn elapsed(&self) -> Duration {
        self.started.elapsed()
    }

    /// Has `say` say `line` once the run has lasted [`MOMENT`] (now if it has), unless
    /// [`EarlyNotice::finish`] comes first. Only the first line of a run is said.
    pub fn tell(&self, line: String, say: impl FnOnce(String) + Send + 'static) {
        let mut pending = lock(&self.pending);
        if !matches!(*pending, Pending::Nothing) {
            return;
        }
        let left = MOMENT.saturating_sub(self.started.elapsed());
        if left.is_zero() {
            *pending = Pending::Done;
            drop(pending);
            return say(line);
        }
        *pending = Pending::Line(line, Box::new(say));
        let shared = Arc::clone(&self.pending);
        std::thread::spawn(move || {
            std::thread::sleep(left);
            let due = std::mem::replace(&mut *lock(&shared), Pending::Done);
            if let Pending::Line(line, say) = due {
                say(line);
            }
        });
    }

    /// The run is over (its report follows): a line still waiting is never said.
    pub fn finish(&self) {
        *lock(&self.pending) = Pending::Done;
    }
}

impl Default for EarlyNotice {
    fn default() -> Self {
        EarlyNotice::new()
    }
}

/// The state, whatever a panicking holder left in it.
fn lock(pending: &Mutex<Pending>) -> MutexGuard<'_, Pending> {
    pending.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A spinner for a long exploration: `what: N states, elapsed` on stderr, drawn only on a
/// terminal and only once the run has lasted [`MOMENT`], so that a quick run, or one whose
/// stderr is a file or a pipe, prints nothing but its result. It draws on the terminal itself,
/// not through `eprintln!`, so a `cargo test` that captures a test's output still shows it
/// (and [`Spinner::println`] a line above it).
pub struct Spinner {
    /// The bar, hidden until [`MOMENT`]; `None` off a terminal.
    bar: Option<ProgressBar>,
    /// Where it draws once shown.
    target: Option<ProgressDrawTarget>,
    started: Instant,
}

impl Spinner {
    /// A spinner labelled `what`, on stderr if it is a terminal.
    pub fn new(what: &str) -> Spinner {
        let terminal = std::io::stderr().is_terminal();
        Spinner::drawing_on(what, terminal.then(ProgressDrawTarget::stderr))
    }

    /// A spinner labelled `what` that draws on `target` once shown (none: never drawn).
    pub fn drawing_on(what: &str, target: Option<ProgressDrawTarget>) -> Spinner {
        let bar = target.is_some().then(|| {
            let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::hidden());
            let style =
                ProgressStyle::with_template("{spinner} {msg}: {human_pos} states, {elapsed}")
                    .expect("a valid template");
            bar.set_style(style);
            bar.set_message(what.to_string());
            bar
        });
        Spinner {
            bar,
            target,
            started: Instant::now(),
        }
    }

    /// The exploration has reached `states` states; past [`MOMENT`], the spinner shows.
    pub fn tick(&mut self, states: u64) {
        let Some(bar) = &self.bar else {
            return;
        };
        bar.set_position(states);
        if self.started.elapsed() >= MOMENT {
            if let Some(target) = self.target.take() {
                bar.set_draw_target(target);
                bar.enable_steady_tick(Duration::from_millis(200));
            }
        }
    }

    /// Whether it draws on a terminal (shown or not yet).
    pub fn on_terminal(&self) -> bool {
        self.bar.is_some()
    }

    /// Whether the spinner is drawn (on a terminal, past the moment).
    pub fn shown(&self) -> bool {
        self.bar.is_some() && self.target.is_none()
    }

    /// Prints `line` above the spinner, if it is shown: what `false` leaves to the caller.
    pub fn println(&self, line: &str) -> bool {
        match &self.bar {
            Some(bar) if self.shown() => {
                bar.println(line);
                true
            }
            _ => false,
        }
    }

    /// Clears the spinner: the result follows.
    pub fn finish(self) {
        if let Some(bar) = self.bar {
            bar.finish_and_clear();
        }
    }
}

/// The line for the first failing run, found `after` the run began, replayed by `replay`.
pub fn failing_run_line(after: Duration, replay: &str) -> String {
    format!(
        "NOT LINEARIZABLE: a failing run, found after {after:.1?} (replay: {replay}); \
         exploring on for the races that decide it"
    )
}

#[cfg(test)]
mod tests {
    use std::sync::mpsc;

    use super::*;

    #[test]
    fn a_line_told_early_waits_for_the_moment_and_a_finish_withdraws_it() {
        let (sent, said) = mpsc::channel();
        let notice = EarlyNotice::new();
        let to = sent.clone();
        notice.tell("first".into(), move |l| to.send(l).unwrap());
        // Only the first line of a run is said.
        let to = sent.clone();
        notice.tell("second".into(), move |l| to.send(l).unwrap());
        assert!(said.try_recv().is_err(), "said before the moment");
        let line = said.recv_timeout(MOMENT * 10).unwrap();
        assert_eq!(line, "first");
        assert!(notice.elapsed() >= MOMENT);

        let notice = EarlyNotice::new();
        let to = sent.clone();
        notice.tell("withdrawn".into(), move |l| to.send(l).unwrap());
        notice.finish();
        assert!(said.recv_timeout(MOMENT * 3).is_err());
    }

    /// A terminal that records what is written on it.
    #[derive(Debug, Clone, Default)]
    struct Screen(Arc<Mutex<String>>);

    impl indicatif::TermLike for Screen {
        fn width(&self) -> u16 {
            80
        }
        fn move_cursor_up(&self, _: usize) -> std::io::Result<()> {
            Ok(())
        }
        fn move_cursor_down(&self, _: usize) -> std::io::Result<()> {
            Ok(())
        }
        fn move_cursor_right(&self, _: usize) -> std::io::Result<()> {
            Ok(())
        }
        fn move_cursor_left(&self, _: usize) -> std::io::Result<()> {
            Ok(())
        }
        fn write_line(&self, s: &str) -> std::io::Result<()> {
            self.write_str(&format!("{s}\n"))
        }
        fn write_str(&self, s: &str) -> std::io::Result<()> {
            self.0.lock().unwrap().push_str(s);
            Ok(())
        }
        fn clear_line(&self) -> std::io::Result<()> {
            Ok(())
        }
        fn flush(&self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn the_spinner_shows_only_on_a_terminal_and_after_the_moment() {
        let screen = Screen::default();
        let target = ProgressDrawTarget::term_like(Box::new(screen.clone()));
        let mut spinner = Spinner::drawing_on("counter", Some(target));
        spinner.tick(10);
        assert!(
            !spinner.shown() && !spinner.println("early"),
            "shown before the moment"
        );
        spinner.started -= MOMENT;
        spinner.tick(1234);
        assert!(spinner.shown());
        assert!(spinner.println("NOT LINEARIZABLE: a failing run"));
        spinner.tick(1235);
        std::thread::sleep(Duration::from_millis(300));
        spinner.finish();
        let drawn = screen.0.lock().unwrap().clone();
        assert!(drawn.contains("counter: 1,23"), "{drawn}");
        assert!(drawn.contains("NOT LINEARIZABLE: a failing run"), "{drawn}");
        assert!(!drawn.contains("early"), "{drawn}");

        // Off a terminal nothing is ever drawn, and lines are left to the caller.
        let mut off = Spinner::drawing_on("counter", None);
        off.started -= MOMENT;
        off.tick(5);
        assert!(!off.shown() && !off.println("line"));
    }

    #[test]
    fn a_line_told_after_the_moment_is_said_at_once() {
        let notice = EarlyNotice {
            started: Instant::now() - MOMENT,
            pending: Arc::default(),
        };
        let (sent, said) = mpsc::channel();
        notice.tell("late".into(), move |l| sent.send(l).unwrap());
        assert_eq!(said.try_recv().unwrap(), "late");
    }
}
