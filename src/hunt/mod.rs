//! Stages A and B of the pipeline: hunting for a failing test, and shrinking it.
//!
//! * [`file`](mod@file) loads a hunt file (`hunt.json`): an object, a spec, the invocations to draw from,
//!   and the dimensions of the test matrices.
//! * [`sample`] draws uniform random test matrices (Line-Up's RandomCheck), checks each over
//!   its interleavings, in parallel and reproducibly, and stops at the first failing test.
//! * [`check`] judges one test: Line-Up's phase 1 ([`nondet`], the serial runs must be
//!   deterministic), then its leaves as they are explored, stopping at the first that fails.
//! * [`minimize`](mod@minimize) shrinks a failing test greedily while it keeps failing the same way.
//! * [`write`](mod@write) renders a test as a `failing.json` with model paths relative to where it goes.
//! * [`shard`] splits a hunt's samples over processes (`--shard K/N`) and merges their results
//!   (`--merge`) into what one process finds.

pub mod check;
pub mod file;
pub mod minimize;
pub mod nondet;
pub mod rng;
pub mod sample;
pub mod shard;
pub mod write;

use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use fgvt_tree::{Call, ExploreOptions, SourceMap};

use crate::pipeline::PipelineError;

use crate::testcase::{SpecChoice, TestCase};
use fgvt_lang::Model;

pub use check::{check_test, phase1, search_leaves, TestReport, TestVerdict};
pub use file::{load, read_plan, HuntFile, HuntPlan, DEFAULT_SAMPLES};
pub use minimize::{minimize, minimize_test, MinimizeOutcome, Minimized};
pub use nondet::{serial_nondeterminism, Nondeterminism};
pub use sample::{
    draw, hunt, hunt_run, HuntError, HuntOptions, HuntResult, HuntRun, Sample, Shard,
};
pub use shard::{ShardArg, ShardReport};
pub use write::{render_test, render_test_anywhere, ModelRefs};

/// The operations of a test: serial `init`, concurrent `threads`, serial `final`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Matrix {
    /// Operations run serially before the threads.
    pub init: Vec<Call>,
    /// The operations of each thread.
    pub threads: Vec<Vec<Call>>,
    /// Operations run serially after the threads.
    pub finals: Vec<Call>,
}

impl Matrix {
    /// The operations of `test`.
    pub fn of(test: &TestCase) -> Matrix {
        Matrix {
            init: test.init.clone(),
            threads: test.threads.clone(),
            finals: test.finals.clone(),
        }
    }

    /// How many operations run concurrently (in the threads).
    pub fn concurrent_ops(&self) -> usize {
        self.threads.iter().map(Vec::len).sum()
    }

    /// How many operations the test has in all.
    pub fn total_ops(&self) -> usize {
        self.init.len() + self.concurrent_ops() + self.finals.len()
    }
}

impl fmt::Display for Matrix {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let list = |calls: &[Call]| {
            calls
                .iter()
                .map(Call::to_string)
                .collect::<Vec<_>>()
                .join("; ")
        };
        if !self.init.is_empty() {
            writeln!(f, "  init:  {}", list(&self.init))?;
        }
        for (t, ops) in self.threads.iter().enumerate() {
            writeln!(f, "  T{t}:    {}", list(ops))?;
        }
        if !self.finals.is_empty() {
            writeln!(f, "  final: {}", list(&self.finals))?;
        }
        Ok(())
    }
}

/// What every test of one object shares: the model, the spec and the sources.
#[derive(Clone)]
pub struct Subject {
    /// The compiled object under test.
    pub model: Arc<Model>,
    /// The spec to check against.
    pub spec: SpecChoice,
    /// The model's source files.
    pub sources: SourceMap,
    /// Most instructions an operation may execute between two shared-memory accesses (and in
    /// one serial run of the spec) before it is cut as an endless local loop.
    pub local_budget: u64,
    /// Under weak memory, how many older stores than the latest one access may read.
    pub max_stale: u32,
}

impl Subject {
    /// The subject of a loaded test.
    pub fn of(test: &TestCase) -> Subject {
        Subject {
            model: test.model.clone(),
            spec: test.spec.clone(),
            sources: test.sources.clone(),
            local_budget: test.local_budget,
            max_stale: test.max_stale,
        }
    }

    /// A test of this subject with `matrix`'s operations, named `path` in reports.
    pub fn test(&self, matrix: &Matrix, path: PathBuf) -> TestCase {
        TestCase {
            path,
            model: self.model.clone(),
            spec: self.spec.clone(),
            init: matrix.init.clone(),
            threads: matrix.threads.clone(),
            finals: matrix.finals.clone(),
            sources: self.sources.clone(),
            local_budget: self.local_budget,
            max_stale: self.max_stale,
            memory: crate::testcase::MemoryMode::AsDeclared,
            merge_by_linearizations: true,
        }
    }
}

/// What hunting and shrinking need of an object under test, whatever it is written in:
/// whether the test with some operations fails. A model's is [`ModelJudge`]; a Rust object's
/// lives in `fgvt-sync`.
pub trait Judge: Sync {
    /// Line-Up's check, verdict only: phase 1 where the object has it (its serial runs are
    /// deterministic), then the leaves until the first failing one. What a hunt asks of each
    /// sample.
    fn check(
        &self,
        matrix: &Matrix,
        options: &ExploreOptions,
        deadline: Option<Instant>,
    ) -> Result<TestReport, PipelineError>;

    /// Phase 2 only, verdict only; with `violations_only`, leaves where the object faults do
    /// not count as failing (see [`search_leaves`]). What shrinking asks of each candidate.
    fn search(
        &self,
        matrix: &Matrix,
        options: &ExploreOptions,
        deadline: Option<Instant>,
        violations_only: bool,
    ) -> Result<TestReport, PipelineError>;
}

/// The [`Judge`] of a model: its tests are [`Subject::test`]s named `path` in errors.
pub struct ModelJudge {
    /// The model, its spec and sources.
    pub subject: Subject,
    /// The file the tests are named after (the hunt file, or the test being shrunk).
    pub path: PathBuf,
}

impl ModelJudge {
    /// The judge of the tests a hunt of `file` draws.
    pub fn of_hunt(file: &HuntFile) -> ModelJudge {
        ModelJudge {
            subject: file.subject.clone(),
            path: file.plan.path.clone(),
        }
    }
}

impl Judge for ModelJudge {
    fn check(
        &self,
        matrix: &Matrix,
        options: &ExploreOptions,
        deadline: Option<Instant>,
    ) -> Result<TestReport, PipelineError> {
        let test = self.subject.test(matrix, self.path.clone());
        check_test(&test, options, deadline)
    }

    fn search(
        &self,
        matrix: &Matrix,
        options: &ExploreOptions,
        deadline: Option<Instant>,
        violations_only: bool,
    ) -> Result<TestReport, PipelineError> {
        let test = self.subject.test(matrix, self.path.clone());
        search_leaves(&test, options, deadline, violations_only)
    }
}
