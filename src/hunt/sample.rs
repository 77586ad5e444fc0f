//! Line-Up's RandomCheck: draw uniform random test matrices and check each one.
//!
//! Sample `i` of a hunt seeded with `s` is drawn from its own generator,
//! [`SplitMix64::for_sample`]`(s, i)`, and workers take samples in increasing order, skipping
//! those above the lowest finding so far. The reported test is therefore the lowest-index
//! finding whatever the number of workers: the same seed gives the same test with `--jobs 1`
//! and `--jobs 8` (unless a time limit stops the hunt first).
//!
//! A [`Shard`] of a hunt checks only its own samples (sample `i` is shard `i mod N + 1`'s),
//! each drawn as the whole hunt draws it, in the same way: so the shards' lowest finding is the
//! whole hunt's. Which samples are a shard's is said here, where they are drawn; reading
//! `--shard`, a shard's result and merging the results are [`super::shard`]'s.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::rng::SplitMix64;
use fgvt_tree::{Call, ExploreOptions};
use serde::{Deserialize, Serialize};

use super::check::TestReport;
use super::file::HuntPlan;
use super::{Judge, Matrix};
use crate::pipeline::exploration_budget;
use crate::pipeline::PipelineError;

/// How a hunt runs.
#[derive(Clone, Debug)]
pub struct HuntOptions {
    /// The seed of the whole hunt.
    pub seed: u64,
    /// How many tests to draw.
    pub samples: usize,
    /// Worker threads (at least 1).
    pub jobs: usize,
    /// Check every sample and report every finding, instead of stopping at the first.
    pub all: bool,
    /// Exploration limits of each test (its `timeout` is ignored: see `deadline`).
    pub explore: ExploreOptions,
    /// When the whole hunt must stop.
    pub deadline: Option<Instant>,
    /// Check only this shard's samples (`None`: all of them).
    pub shard: Option<Shard>,
}

impl HuntOptions {
    /// The number of the `nth` sample this hunt checks (from 0): `nth` itself, or the `nth` of
    /// its shard's.
    pub fn sample(&self, nth: usize) -> usize {
        self.shard.map_or(nth, |shard| shard.sample(nth))
    }

    /// How many samples this hunt checks: `samples`, or its shard's share of them.
    pub fn own_samples(&self) -> usize {
        self.shard
            .map_or(self.samples, |shard| shard.len(self.samples))
    }
}

/// One checked sample.
#[derive(Clone, Debug)]
pub struct Sample {
    /// Its index, from 0.
    pub index: usize,
    /// Its operations.
    pub matrix: Matrix,
    /// How it fared.
    pub report: TestReport,
}

/// What a hunt found.
#[derive(Debug, Default)]
pub struct HuntResult {
    /// The findings (failing or nondeterministic tests), by index: the first one only unless
    /// [`HuntOptions::all`].
    pub findings: Vec<Sample>,
    /// Samples drawn up to the first finding (or all of them): the same whatever `jobs`. In a
    /// shard, of the shard's samples: its first `drawn` ([`HuntOptions::sample`]).
    pub drawn: usize,
    /// Among those, samples whose tree a limit cut short without a finding.
    pub partial: usize,
    /// Their numbers, in increasing order.
    pub partial_samples: Vec<usize>,
    /// Whether the deadline stopped the hunt before every sample was checked.
    pub timed_out: bool,
    /// Whether the explore options' interrupt stopped the hunt before every sample was
    /// checked.
    pub interrupted: bool,
}

/// One shard of a hunt: shard `index` of `count`, numbered from 1.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Shard {
    /// Which shard, from 1 to `count`.
    pub index: usize,
    /// How many shards the hunt is split into.
    pub count: usize,
}

impl Shard {
    /// Shard `index` of `count`, or why there is no such shard.
    pub fn new(index: usize, count: usize) -> Result<Shard, String> {
        if count == 0 {
            return Err("the number of shards N must be at least 1".into());
        }
        if index == 0 || index > count {
            return Err(format!(
                "shard {index} of {count} does not exist: K must be between 1 and N"
            ));
        }
        Ok(Shard { index, count })
    }

    /// Whether sample `sample` is this shard's.
    pub fn owns(&self, sample: usize) -> bool {
        sample % self.count == self.index - 1
    }

    /// The number of this shard's `nth` sample (from 0).
    pub fn sample(&self, nth: usize) -> usize {
        self.index - 1 + nth * self.count
    }

    /// How many of a hunt's `samples` are this shard's.
    pub fn len(&self, samples: usize) -> usize {
        let first = self.index - 1;
        if first >= samples {
            0
        } else {
            (samples - first).div_ceil(self.count)
        }
    }

    /// The name of this shard's result in a directory: `shard-K-of-N.json`.
    pub fn file_name(&self) -> String {
        format!("shard-{}-of-{}.json", self.index, self.count)
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// Draws the operations of sample `index` of a hunt seeded with `seed`: `init` and `final` as
/// the hunt file says, and each thread's operations uniformly from its `operations`.
pub fn draw(file: &HuntPlan, seed: u64, index: usize) -> Matrix {
    let mut rng = SplitMix64::for_sample(seed, index as u64);
    let mut pick = || -> Call { file.operations[rng.below(file.operations.len())].clone() };
    let threads = (0..file.threads)
        .map(|_| (0..file.ops_per_thread).map(|_| pick()).collect())
        .collect();
    Matrix {
        init: file.init.clone(),
        threads,
        finals: file.finals.clone(),
    }
}

/// Runs the hunt: draws `options.samples` tests from `file` (or its shard's share) and checks
/// each with `judge`, in parallel on `options.jobs` threads, calling `progress` once per
/// checked sample. An error (the init part fails, the spec cannot judge) ends the hunt like a
/// finding would, lowest index first.
pub fn hunt(
    file: &HuntPlan,
    judge: &dyn Judge,
    options: &HuntOptions,
    progress: &(dyn Fn() + Sync),
) -> Result<HuntResult, HuntError> {
    let run = hunt_run(file, judge, options, progress)?;
    match run.error {
        Some((index, source)) => Err(HuntError::Check { index, source }),
        None => Ok(run.result),
    }
}

/// A hunt that went as far as it could: what it found before the sample that could not be
/// checked, if one stopped it, and that sample with why.
#[derive(Debug)]
pub struct HuntRun {
    /// The samples checked in full before the error (all of them when there is none).
    pub result: HuntResult,
    /// The lowest sample that could not be checked, if one could not (below the first
    /// finding, or anywhere with [`HuntOptions::all`]), and why.
    pub error: Option<(usize, PipelineError)>,
}

/// [`hunt`], keeping what was found before an error: what a shard records, so that merging
/// shards decides, as one hunt would, whether the error or a finding comes first.
pub fn hunt_run(
    file: &HuntPlan,
    judge: &dyn Judge,
    options: &HuntOptions,
    progress: &(dyn Fn() + Sync),
) -> Result<HuntRun, HuntError> {
    let own = options.own_samples();
    let next = AtomicUsize::new(0);
    // The lowest index with a finding or an error so far; samples above it need no check.
    let stop_at = AtomicUsize::new(usize::MAX);
    let timed_out = AtomicBool::new(false);
    let interrupted = AtomicBool::new(false);
    let results: Mutex<BTreeMap<usize, Result<Sample, PipelineError>>> =
        Mutex::new(BTreeMap::new());

    let worker = || loop {
        let nth = next.fetch_add(1, Ordering::SeqCst);
        if nth >= own {
            return;
        }
        let index = options.sample(nth);
        if !options.all && index > stop_at.load(Ordering::SeqCst) {
            return;
        }
        if (options.explore.interrupt).is_some_and(fgvt_tree::Interrupt::is_raised) {
            interrupted.store(true, Ordering::SeqCst);
            return;
        }
        let mut explore = options.explore.clone();
        explore.timeout = match options.deadline {
            Some(deadline) => match deadline.checked_duration_since(Instant::now()) {
                // Leaves are judged during the search, but a finding is minimized and
                // localized after it: leave them their share.
                Some(left) if left > Duration::ZERO => Some(exploration_budget(left)),
                _ => {
                    timed_out.store(true, Ordering::SeqCst);
                    return;
                }
            },
            None => None,
        };
        let matrix = draw(file, options.seed, index);
        let outcome = judge
            .check(&matrix, &explore, options.deadline)
            .map(|report| Sample {
                index,
                matrix,
                report,
            });
        let stops = match &outcome {
            Ok(sample) => sample.report.verdict.is_finding(),
            Err(_) => true,
        };
        if stops {
            stop_at.fetch_min(index, Ordering::SeqCst);
        }
        results
            .lock()
            .expect("no worker panics while holding the lock")
            .insert(index, outcome);
        progress();
    };
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(options.jobs.max(1))
        .build()
        .map_err(|e| HuntError::Pool(e.to_string()))?;
    pool.broadcast(|_| worker());

    let results = results.into_inner().expect("the workers are done");
    let last = match stop_at.load(Ordering::SeqCst) {
        index if index < options.samples && !options.all => index + 1,
        _ => options.samples,
    };
    let mut result = HuntResult {
        timed_out: timed_out.load(Ordering::SeqCst),
        // A sample checked while the interrupt was raised was cut short too.
        interrupted: interrupted.load(Ordering::SeqCst)
            || (options.explore.interrupt).is_some_and(fgvt_tree::Interrupt::is_raised),
        ..HuntResult::default()
    };
    for (index, outcome) in results.into_iter().filter(|(i, _)| *i < last) {
        // A deadline may leave holes; what follows the first hole depends on timing, so the
        // counts cover only the prefix that was checked in full.
        if index != options.sample(result.drawn) {
            break;
        }
        let sample = match outcome {
            Ok(sample) => sample,
            Err(source) => {
                return Ok(HuntRun {
                    result,
                    error: Some((index, source)),
                })
            }
        };
        result.drawn += 1;
        if sample.report.verdict.is_finding() {
            result.findings.push(sample);
        } else if sample.report.partial.is_some() {
            result.partial += 1;
            result.partial_samples.push(index);
        }
    }
    Ok(HuntRun {
        result,
        error: None,
    })
}

/// Why a hunt could not run to the end.
#[derive(Debug, thiserror::Error)]
pub enum HuntError {
    /// A sample could not be checked.
    #[error("sample {index}: {source}")]
    Check {
        /// The sample's index.
        index: usize,
        /// Why.
        source: PipelineError,
    },
    /// The worker threads could not be started.
    #[error("cannot start the worker threads: {0}")]
    Pool(String),
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A counter whose increment is a read then a write: two increments can lose one.
    const RACY: &str = "object Racy {\n    shared int x = 0;\n    op inc() {\n        int v = x;\n        x = v + 1;\n    }\n    op get() {\n        return x;\n    }\n}\n";

    fn hunt_file(dir: &std::path::Path) -> super::super::HuntFile {
        std::fs::write(dir.join("racy.fgv"), RACY).unwrap();
        let text = r#"{"object": "racy.fgv", "operations": ["inc()", "get()"], "threads": 2, "ops_per_thread": 2, "final": ["get()"], "samples": 40}"#;
        std::fs::write(dir.join("hunt.json"), text).unwrap();
        super::super::load(&dir.join("hunt.json")).unwrap()
    }

    fn options(jobs: usize, all: bool) -> HuntOptions {
        HuntOptions {
            seed: 3,
            samples: 40,
            jobs,
            all,
            explore: ExploreOptions::default(),
            deadline: None,
            shard: None,
        }
    }

    #[test]
    fn draws_depend_only_on_seed_and_index() {
        let dir = tempfile::tempdir().unwrap();
        let file = hunt_file(dir.path());
        let file = &file.plan;
        assert_eq!(draw(file, 1, 5), draw(file, 1, 5));
        let distinct: std::collections::HashSet<Matrix> =
            (0..40).map(|i| draw(file, 1, i)).collect();
        assert!(
            distinct.len() > 8,
            "{} distinct tests of 16 possible",
            distinct.len()
        );
        assert!(draw(file, 1, 0).finals == vec![Call::new("get", vec![])]);
    }

    #[test]
    fn the_first_finding_is_the_same_whatever_the_number_of_jobs() {
        let dir = tempfile::tempdir().unwrap();
        let file = hunt_file(dir.path());
        let judge = super::super::ModelJudge::of_hunt(&file);
        let hunt = |options: &HuntOptions| hunt(&file.plan, &judge, options, &|| {});
        let one = hunt(&options(1, false)).unwrap();
        let two = hunt(&options(2, false)).unwrap();
        assert_eq!(one.findings.len(), 1);
        assert_eq!(one.findings[0].index, two.findings[0].index);
        assert_eq!(one.findings[0].matrix, two.findings[0].matrix);
        assert_eq!(one.drawn, one.findings[0].index + 1);
        assert_eq!(one.drawn, two.drawn);
        // With --all every sample is checked, and the first finding is the same.
        let all = hunt(&options(2, true)).unwrap();
        assert_eq!(all.drawn, 40);
        assert_eq!(all.findings[0].index, one.findings[0].index);
        assert!(all.findings.windows(2).all(|w| w[0].index < w[1].index));
    }
}
