//! loom's `model`: [`model`] and its [`Builder`], whose fields are loom's, each mapped to one
//! of fgvt's limits or a documented no-op.

use std::path::PathBuf;
use std::time::Duration;

/// loom's default of [`Builder::max_branches`].
const DEFAULT_MAX_BRANCHES: usize = 1_000;

/// Explores every run of `f` and panics with fgvt's report if one fails:
/// `Builder::new().check(f)`.
#[track_caller]
pub fn model<F>(f: F)
where
    F: Fn() + Sync + Send + 'static,
{
    Builder::new().check(f)
}

/// A model's settings, as loom's `Builder`: the same public fields, read from the same
/// `LOOM_*` environment variables by [`Builder::new`].
///
/// | field (variable) | under fgvt |
/// | --- | --- |
/// | `max_threads` | the threads a run may have, the model's body included |
/// | `max_branches` (`LOOM_MAX_BRANCHES`) | the steps one thread may take on a path (a longer one ends bounded) |
/// | `max_permutations` (`LOOM_MAX_PERMUTATIONS`) | the states explored (fgvt counts states, which runs share) |
/// | `max_duration` (`LOOM_MAX_DURATION`, seconds) | the exploration's timeout |
/// | `preemption_bound` (`LOOM_MAX_PREEMPTIONS`) | only the runs with at most that many preemptions are explored, and the report says so |
/// | `checkpoint_file`, `checkpoint_interval` (`LOOM_CHECKPOINT_*`) | ignored: a report's replay line reruns a failing run |
/// | `expect_explicit_explore` | ignored, as [`explore`](crate::explore) is |
/// | `location` (`LOOM_LOCATION`) | ignored: fgvt always records each access's line |
/// | `log` (`LOOM_LOG`) | ignored: the report shows a failing run step by step |
///
/// One variable is fgvt's own: `FGVT_IMPLIED_HINTS=false` keeps fgvt from taking a `loop` or
/// `while` without a hint for a retry loop (`fgvt_sync::Model::implied_hints`), for code whose
/// turns carry state fgvt cannot see (its guide's "Waiting loops" chapter says which).
///
/// A limit that cuts the exploration fails the test with the partial report (loom's limits
/// stop silently or panic): a verdict on part of the runs is no verdict.
#[derive(Debug)]
#[non_exhaustive]
pub struct Builder {
    /// The most threads a run may have, the model's body included (5 by default).
    pub max_threads: usize,
    /// The most steps one thread may take on a path.
    pub max_branches: usize,
    /// The most states to explore.
    pub max_permutations: Option<usize>,
    /// How long to explore.
    pub max_duration: Option<Duration>,
    /// The most preemptions a run explored may have.
    pub preemption_bound: Option<usize>,
    /// Ignored (see the table above).
    pub checkpoint_file: Option<PathBuf>,
    /// Ignored (see the table above).
    pub checkpoint_interval: usize,
    /// Ignored (see the table above).
    pub expect_explicit_explore: bool,
    /// Ignored (see the table above).
    pub location: bool,
    /// Ignored (see the table above).
    pub log: bool,
}

/// The variable that turns fgvt's implied retry hints off (`false`) or on (see [`Builder`]).
const IMPLIED_HINTS: &str = "FGVT_IMPLIED_HINTS";

/// The value of the environment variable `name`, parsed; a value that does not parse panics
/// naming the variable, as loom's `Builder::new` does.
fn from_env<T: std::str::FromStr>(name: &str) -> Option<T> {
    let value = std::env::var(name).ok()?;
    match value.parse() {
        Ok(parsed) => Some(parsed),
        Err(_) => panic!("invalid value for `{name}`: `{value}`"),
    }
}

impl Builder {
    /// The default settings, with the `LOOM_*` environment variables' values.
    pub fn new() -> Builder {
        Builder {
            max_threads: crate::MAX_THREADS,
            max_branches: from_env("LOOM_MAX_BRANCHES").unwrap_or(DEFAULT_MAX_BRANCHES),
            max_permutations: from_env("LOOM_MAX_PERMUTATIONS"),
            max_duration: from_env("LOOM_MAX_DURATION").map(Duration::from_secs),
            preemption_bound: from_env("LOOM_MAX_PREEMPTIONS"),
            checkpoint_file: from_env("LOOM_CHECKPOINT_FILE"),
            checkpoint_interval: from_env("LOOM_CHECKPOINT_INTERVAL").unwrap_or(20_000),
            expect_explicit_explore: false,
            location: std::env::var_os("LOOM_LOCATION").is_some(),
            log: std::env::var_os("LOOM_LOG").is_some(),
        }
    }

    /// Sets the checkpoint file (ignored, as loom's checkpoints are: see [`Builder`]).
    pub fn checkpoint_file(&mut self, file: &str) -> &mut Self {
        self.checkpoint_file = Some(file.into());
        self
    }

    /// Explores every run of `f` and panics with fgvt's report if one fails.
    #[track_caller]
    pub fn check<F>(&self, f: F)
    where
        F: Fn() + Sync + Send + 'static,
    {
        self.settings().check(f)
    }

    /// The settings as fgvt-sync's model takes them.
    #[track_caller]
    fn settings(&self) -> fgvt_sync::Model {
        let mut model = fgvt_sync::Model::new()
            .max_threads(self.max_threads)
            .max_steps(self.max_branches);
        if let Some(states) = self.max_permutations {
            model = model.max_states(states);
        }
        if let Some(duration) = self.max_duration {
            model = model.timeout(duration);
        }
        if let Some(bound) = self.preemption_bound {
            model = model.preemption_bound(u32::try_from(bound).unwrap_or(u32::MAX));
        }
        if let Some(implied) = from_env::<bool>(IMPLIED_HINTS) {
            model = model.implied_hints(implied);
        }
        model
    }
}

impl Default for Builder {
    fn default() -> Builder {
        Builder::new()
    }
}
