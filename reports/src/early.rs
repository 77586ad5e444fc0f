//! What a long run says before its report: the first failing run, as soon as the exploration
//! meets it (a line on stderr with the command that replays it), but only once the run has
//! lasted a moment, so that a quick run prints nothing but its report.
//!
//! The exploration may meet the failure early and then finish within the moment, spending the
//! rest of a long run labeling the tree, where nothing ticks: so the line waits on a timer of
//! its own, and [`EarlyNotice::finish`] (the report is ready) withdraws it if it is still
//! waiting.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

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
