//! Models: a closure run as a test, whose threads it spawns itself (loom's way of testing).
//!
//! A [`Test`](crate::Test) runs operations of an object; a model runs a closure on the first
//! thread, which spawns the others with [`fgvt_sync::thread::spawn`](crate::thread::spawn) and
//! asserts what it likes. fgvt explores every interleaving of its threads' accesses as for any
//! test: a run fails when a thread panics (a failed assertion), when its threads deadlock, or
//! on a data race, and the report localizes the races that make runs fail. There is no spec:
//! every history of a model is accepted, so the assertions are the whole judge.

use std::sync::Arc;
use std::time::Duration;

use fgvt_tree::reduced::Judging;
use fgvt_tree::{Call, MemoryBudget, Value, DEFAULT_REPORT_BUDGET};

use super::{
    run_model, Learned, Plan, SpecChoice, SpecType, TestCore, DEFAULT_MAX_STALE, MODEL_OP,
};
use crate::localized::Localized;
use crate::spec::Sequential;
use crate::Memory;
use crate::Verdict;

/// With this variable set, [`Model::check`] prints one line per model on stderr: its name,
/// verdict, distinct states, runs, steps and the runs that started from the beginning rather
/// than going on from a paused one (`fgvt-stats: name linearizable states=… runs=… steps=…
/// started=…`), for benches that set fgvt's figures beside another tool's.
pub const STATS_VARIABLE: &str = "FGVT_STATS";

/// The threads a model has room for by default, its body's included (loom's `MAX_THREADS`).
pub const DEFAULT_MAX_THREADS: usize = 5;

/// Explores every run of `body` (see [`Model`]) and panics with fgvt's report if one fails:
/// `Model::new().check(body)`.
///
/// ```
/// use fgvt_sync::atomic::{AtomicUsize, Ordering::SeqCst};
/// use std::sync::Arc;
///
/// fgvt_sync::model(|| {
///     let n = Arc::new(AtomicUsize::new(0));
///     let t = {
///         let n = Arc::clone(&n);
///         fgvt_sync::thread::spawn(move || n.fetch_add(1, SeqCst))
///     };
///     n.fetch_add(1, SeqCst);
///     t.join().unwrap();
///     assert_eq!(n.load(SeqCst), 2);
/// });
/// ```
#[track_caller]
pub fn model<F>(body: F)
where
    F: Fn() + Send + Sync + 'static,
{
    Model::new().check(body)
}

/// A model's settings: its name, the threads it may spawn and the limits of its exploration.
///
/// Its name is the running test's (libtest names each test's thread after it), which names its
/// reports under `target/fgvt/` and its reproduce line.
#[derive(Clone, Debug)]
pub struct Model {
    name: String,
    caller: &'static std::panic::Location<'static>,
    max_threads: usize,
    max_states: usize,
    max_steps: usize,
    max_stale: u32,
    timeout: Option<Duration>,
    report_budget: Option<Duration>,
    memory: Option<Memory>,
    max_memory: Option<MemoryBudget>,
    max_preemptions: Option<u32>,
    reduce: bool,
    merge: bool,
    jobs: usize,
    implied_hints: bool,
}

impl Model {
    /// The default settings, named after the running test.
    #[track_caller]
    pub fn new() -> Model {
        let name = std::thread::current()
            .name()
            .filter(|n| *n != "main")
            .unwrap_or("model")
            .to_string();
        Model {
            name,
            caller: std::panic::Location::caller(),
            max_threads: DEFAULT_MAX_THREADS,
            max_states: 1_000_000,
            max_steps: 1_000,
            max_stale: DEFAULT_MAX_STALE,
            timeout: None,
            report_budget: Some(DEFAULT_REPORT_BUDGET),
            memory: None,
            max_memory: None,
            max_preemptions: None,
            reduce: true,
            merge: true,
            jobs: super::default_jobs(),
            implied_hints: true,
        }
    }

    /// How many threads run the model's executions while it is explored (see
    /// [`Test::jobs`](crate::Test::jobs)): one per core by default, or `FGVT_JOBS`; the
    /// report is the same whatever the number.
    pub fn jobs(mut self, jobs: usize) -> Model {
        self.jobs = jobs.max(1);
        self
    }

    /// Names the model (its reports go under `target/fgvt/<name>/`).
    pub fn name(mut self, name: &str) -> Model {
        self.name = name.to_string();
        self
    }

    /// The most threads a run may have, the body's included (5 by default): spawning one
    /// more fails the run, saying so.
    pub fn max_threads(mut self, max: usize) -> Model {
        self.max_threads = max.clamp(1, crate::program::MAX_THREADS);
        self
    }

    /// Most tree nodes before exploration stops (the result is then partial).
    pub fn max_states(mut self, max: usize) -> Model {
        self.max_states = max;
        self
    }

    /// Most steps one thread may take on a path (a spin without the hint ends there).
    pub fn max_steps(mut self, max: usize) -> Model {
        self.max_steps = max;
        self
    }

    /// Under weak memory, how many stores older than the latest one an access may read (7 by
    /// default, as [`Test::max_stale`](crate::Test::max_stale)).
    pub fn max_stale(mut self, max: u32) -> Model {
        self.max_stale = max.min(crate::program::MAX_WAYS - 1);
        self
    }

    /// Stops exploring after `timeout` (the result is then partial).
    pub fn timeout(mut self, timeout: Duration) -> Model {
        self.timeout = Some(timeout);
        self
    }

    /// How long localizing goes on once a run has failed, as
    /// [`Test::report_budget`](crate::Test::report_budget).
    pub fn report_budget(mut self, budget: impl Into<Option<Duration>>) -> Model {
        self.report_budget = budget.into();
        self
    }

    /// The memory model, as [`Test::memory`](crate::Test::memory): by default weak memory
    /// once some access declares an ordering weaker than `SeqCst`.
    pub fn memory(mut self, memory: Memory) -> Model {
        self.memory = Some(memory);
        self
    }

    /// Explores only the runs whose threads are preempted at most `bound` times in all (a
    /// switch away from a thread that could go on), as loom's `preemption_bound`: far fewer
    /// runs, and most bugs need few preemptions (CHESS's observation). The report says the
    /// verdict is only theirs. Every run by default.
    pub fn preemption_bound(mut self, bound: u32) -> Model {
        self.max_preemptions = Some(bound);
        self
    }

    /// Whether a partial-order reduced search runs first (the default), as
    /// [`Test::partial_order_reduction`](crate::Test::partial_order_reduction): `false`
    /// explores every interleaving (within the preemption bound) from the start.
    pub fn partial_order_reduction(mut self, on: bool) -> Model {
        self.reduce = on;
        self
    }

    /// Whether a `loop` or `while` without fgvt's hint is taken for a retry loop where fgvt can
    /// tell its turns carry nothing, as [`Test::implied_hints`](crate::Test::implied_hints) (on
    /// by default).
    pub fn implied_hints(mut self, on: bool) -> Model {
        self.implied_hints = on;
        self
    }

    /// Whether equal states are merged (the default), as [`Test::merge`](crate::Test::merge):
    /// `false` unfolds every path, the reference merging is tested against.
    pub fn merge(mut self, merge: bool) -> Model {
        self.merge = merge;
        self
    }

    /// Stops exploring at a memory budget, as [`Test::max_memory`](crate::Test::max_memory).
    pub fn max_memory(mut self, budget: MemoryBudget) -> Model {
        self.max_memory = Some(budget);
        self
    }

    /// Explores every run of `body` and panics with fgvt's report (written under
    /// `target/fgvt/` too) if one fails, or if a limit left runs unexplored.
    ///
    /// The panic message begins as the failing run's own panic would (what went wrong: the
    /// assertion's message, the deadlock, the data race), then gives the report.
    #[track_caller]
    pub fn check<F>(&self, body: F)
    where
        F: Fn() + Send + Sync + 'static,
    {
        let test = self.test(body);
        let localized = test.localize_or_panic();
        let report = &localized.report;
        if std::env::var_os(STATS_VARIABLE).is_some() {
            // For benches that set fgvt beside other tools: one line a model, on stderr.
            eprintln!(
                "fgvt-stats: {} {} states={} runs={} steps={} started={}",
                self.name,
                report.verdict.name(),
                report.tree.distinct_states,
                localized.runs.started + localized.runs.went_on,
                localized.runs.steps,
                localized.runs.started,
            );
        }
        let headline = match (report.verdict, &report.symptom) {
            (Verdict::NotLinearizable, Some(symptom)) => {
                format!("a run of the model fails: {symptom}")
            }
            (Verdict::NotLinearizable, None) => "a run of the model fails".to_string(),
            _ => "the model's runs were not all explored: no verdict".to_string(),
        };
        test.settle(&localized, Some(headline), None);
    }

    /// Explores every run of `body` and localizes the races of those that fail: the report,
    /// the tree and the runs it took.
    #[track_caller]
    pub fn localize<F>(&self, body: F) -> Result<Localized, fgvt_tree::replay::ReplayError>
    where
        F: Fn() + Send + Sync + 'static,
    {
        self.test(body).localize()
    }

    /// The test that runs `body` with these settings: the body on lane 0, a spare lane for
    /// each thread it may spawn.
    fn test<F>(&self, body: F) -> TestCore
    where
        F: Fn() + Send + Sync + 'static,
    {
        let body: crate::runtime::Body = Arc::new(body);
        let mut threads = vec![Vec::new(); self.max_threads];
        threads[0] = vec![Call::new(MODEL_OP, Vec::new())];
        let memory = Learned::default();
        memory.put(self.memory);
        TestCore {
            name: self.name.clone(),
            plan: Plan {
                init: Vec::new(),
                threads,
                finals: Vec::new(),
                // The body's lane spawns into the others, which the plan holds already.
                spawned: 0,
            },
            max_steps: self.max_steps,
            max_states: self.max_states,
            merge: self.merge,
            // A model's thread may well touch nothing fgvt sees (one that only spawns).
            allow_uninstrumented: true,
            timeout: self.timeout,
            report_budget: self.report_budget,
            max_memory: self.max_memory,
            reproduce: crate::cargo_test::command(&self.name, self.caller.file()),
            replay_program: None,
            spec: SpecChoice::Sequential(SpecType::of::<Assertions>()),
            max_stale: self.max_stale,
            races: false,
            loops: crate::fingerprint::Loops {
                implied_hints: self.implied_hints,
                ..Default::default()
            },
            // Every history is accepted: the reduction orders no call and return.
            reduce: self.reduce.then_some(Judging::Endings),
            memory,
            sites: Learned::default(),
            jobs: self.jobs,
            object: super::ObjectFns {
                name: || "model".to_string(),
                run: Arc::new(move |_: &Arc<Plan>| run_model(&body)),
                serial: |_, _| Ok(Ok(Value::Unit)),
            },
            max_preemptions: self.max_preemptions,
        }
    }
}

impl Default for Model {
    #[track_caller]
    fn default() -> Model {
        Model::new()
    }
}

/// A model's spec: every history is accepted (its threads' operations return nothing), so
/// only a panic, a deadlock or a data race fails a run.
#[derive(Clone, PartialEq, Eq, Hash)]
struct Assertions;

impl Sequential for Assertions {
    fn new() -> Self {
        Assertions
    }

    fn call(&mut self, _call: &Call) -> Result<Value, String> {
        Ok(Value::Unit)
    }
}
