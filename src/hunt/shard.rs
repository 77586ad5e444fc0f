//! Sharded hunts: one hunt's samples split over processes (a CI matrix, a Kubernetes Indexed
//! Job, GNU parallel), and the shards' results merged into what the one hunt finds.
//!
//! Shard `K` of `N` (`1 ≤ K ≤ N`) checks the samples whose number `i` has `i mod N = K - 1`,
//! each drawn exactly as the whole hunt draws it ([`super::draw`]`(plan, seed, i)`), and stops
//! at its own first finding (unless `--all`). Since the whole hunt reports its lowest-numbered
//! finding, and every sample below a shard's first finding is checked by that shard or, below
//! the others', by theirs, the lowest finding over all shards is the whole hunt's: merging
//! walks the samples in order, as one process would, and stops at the first finding (or, with
//! `--all`, takes every one). Round robin, rather than blocks of consecutive samples, gives
//! every shard low sample numbers, so every shard finds an early bug early.
//!
//! A shard writes a [`ShardReport`] (JSON, schema [`SHARD_SCHEMA`]): which hunt (a
//! fingerprint of the hunt file's plan, the seed, the number of samples), which shard, how
//! many of its samples it checked in full, and its findings with their verdicts. [`merge`]
//! checks that the shards belong together (one hunt, every shard exactly once) and rebuilds
//! the [`HuntResult`] the whole hunt would have given.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use fgvt_tree::Call;
use serde::{Deserialize, Serialize};

use super::check::{TestReport, TestVerdict};
use super::file::HuntPlan;
use super::nondet::Nondeterminism;
use super::sample::{draw, HuntOptions, HuntRun, Sample, Shard};
use super::{HuntResult, Matrix};

/// The schema id of a shard's result.
pub const SHARD_SCHEMA: &str = "fgvt.hunt-shard/1";

/// The environment variable `--shard auto` reads the shard's index from: a Kubernetes Indexed
/// Job's completion index, from 0 (shard `JOB_COMPLETION_INDEX + 1`).
pub const INDEX_VAR: &str = "JOB_COMPLETION_INDEX";

/// The environment variable `--shard auto` reads the number of shards from, when
/// `--shard-count` does not give it.
pub const COUNT_VAR: &str = "FGVT_SHARD_COUNT";

/// What `--shard` says: `K/N`, or `auto` (from the environment).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShardArg {
    /// Shard K of N.
    Fixed(Shard),
    /// The index from [`INDEX_VAR`], the count from `--shard-count` or [`COUNT_VAR`].
    Auto,
}

impl FromStr for ShardArg {
    type Err = String;

    fn from_str(text: &str) -> Result<ShardArg, String> {
        let text = text.trim();
        if text == "auto" {
            return Ok(ShardArg::Auto);
        }
        let malformed = || {
            format!(
                "`{text}` is not a shard: write K/N (shard K of N, 1 ≤ K ≤ N, e.g. 2/4) or auto"
            )
        };
        let (k, n) = text.split_once('/').ok_or_else(malformed)?;
        let k: usize = k.trim().parse().map_err(|_| malformed())?;
        let n: usize = n.trim().parse().map_err(|_| malformed())?;
        Shard::new(k, n).map(ShardArg::Fixed)
    }
}

impl ShardArg {
    /// The shard this argument names, with `count` from `--shard-count` and `env` reading the
    /// environment (`std::env::var` but for tests).
    pub fn resolve(
        self,
        count: Option<usize>,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<Shard, ShardError> {
        match self {
            ShardArg::Fixed(shard) => match count {
                Some(count) if count != shard.count => {
                    Err(ShardError::CountMismatch { shard, count })
                }
                _ => Ok(shard),
            },
            ShardArg::Auto => {
                let text = env(INDEX_VAR).ok_or(ShardError::NoIndex)?;
                let index: usize = text.trim().parse().map_err(|_| ShardError::BadVariable {
                    name: INDEX_VAR,
                    value: text.clone(),
                })?;
                let count = match count {
                    Some(count) => count,
                    None => {
                        let text = env(COUNT_VAR).ok_or(ShardError::NoCount)?;
                        text.trim().parse().map_err(|_| ShardError::BadVariable {
                            name: COUNT_VAR,
                            value: text,
                        })?
                    }
                };
                Shard::new(index + 1, count).map_err(|why| ShardError::AutoOutOfRange {
                    index,
                    count,
                    why,
                })
            }
        }
    }
}

/// A shard's result: what `fgvt hunt --shard K/N` writes and `--merge` reads (schema
/// [`SHARD_SCHEMA`], documented in `reports/SCHEMA.md`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShardReport {
    /// [`SHARD_SCHEMA`].
    pub schema: String,
    /// The version of the program that ran the shard.
    pub version: String,
    /// The program that ran the shard: `fgvt`, or a `fgvt_sync::main!` program.
    pub program: String,
    /// The hunt file, as the shard's command line named it.
    pub hunt: String,
    /// The fingerprint of the hunt file's plan ([`plan_fingerprint`]): shards of one hunt
    /// have the same.
    pub plan: String,
    /// The object hunted.
    pub object: String,
    /// The hunt's seed.
    pub seed: u64,
    /// How many samples the whole hunt draws.
    pub samples: usize,
    /// Whether the shard checked all its samples (`--all`) rather than stopping at its first
    /// finding.
    pub all: bool,
    /// Which shard this is.
    pub shard: Shard,
    /// How many of the hunt's samples are this shard's (samples `K-1`, `K-1+N`, `K-1+2N`, …).
    pub shard_samples: usize,
    /// How many of them, in order, were checked in full: the shard stopped after its first
    /// finding (unless `all`), before a sample it could not check, or at a limit.
    pub checked: usize,
    /// The number of the last sample checked in full, if any.
    pub last_checked: Option<usize>,
    /// The samples checked whose tree a limit cut short without a finding.
    pub partial: Vec<usize>,
    /// The failing (or nondeterministic) samples, in order: the first only unless `all`.
    pub findings: Vec<ShardFinding>,
    /// The sample that could not be checked, which stopped the shard, if one did.
    pub error: Option<SampleError>,
    /// Whether `--timeout` stopped the shard before it checked every sample it had to.
    pub timed_out: bool,
    /// Whether a signal stopped it so.
    pub interrupted: bool,
    /// How long the shard took, in seconds.
    pub seconds: f64,
}

/// A failing sample of a shard.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShardFinding {
    /// The sample's number.
    pub sample: usize,
    /// Its test: `init`, `threads` and `final` as in a test file.
    pub init: Vec<String>,
    /// The operations of each thread.
    pub threads: Vec<Vec<String>>,
    /// The serial operations after the threads.
    #[serde(rename = "final")]
    pub finals: Vec<String>,
    /// `fails` (a leaf failed) or `nondeterministic` (the object's serial runs disagree).
    pub verdict: String,
    /// Failing leaves whose history is not linearizable (`fails`).
    pub not_linearizable: u64,
    /// Failing leaves where the object faulted (`fails`).
    pub faults: u64,
    /// The distinct states the search had met when it stopped at the first failing leaf.
    pub states: Option<u64>,
    /// The disagreement between serial runs (`nondeterministic`).
    pub nondeterminism: Option<NondeterminismJson>,
}

/// A [`Nondeterminism`] as JSON.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NondeterminismJson {
    /// The serial history before the operation.
    pub prefix: Vec<SerialStep>,
    /// The thread that runs the operation.
    pub thread: usize,
    /// The operation.
    pub call: String,
    /// What the first run did.
    pub first: String,
    /// What the second run did.
    pub second: String,
}

/// One operation of a serial history: thread, call, and what it returned.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SerialStep {
    /// The thread.
    pub thread: usize,
    /// The call.
    pub call: String,
    /// What it returned.
    pub result: String,
}

/// A sample that could not be checked.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SampleError {
    /// The sample's number.
    pub sample: usize,
    /// Why.
    pub message: String,
}

/// The fingerprint of what a hunt draws from: object, spec, operations, `init`, `final` and the
/// matrix dimensions (not the description, the sample count or the file's name), as
/// `fnv1a64:` and 16 hex digits. Shards with equal fingerprints, seeds and sample counts draw
/// the same tests.
pub fn plan_fingerprint(plan: &HuntPlan) -> String {
    let calls = |calls: &[Call]| {
        calls
            .iter()
            .map(Call::to_string)
            .collect::<Vec<_>>()
            .join("\u{1f}")
    };
    let text = [
        plan.object_ref.clone(),
        plan.spec_ref.clone().unwrap_or_else(|| "self".into()),
        calls(&plan.operations),
        calls(&plan.init),
        calls(&plan.finals),
        plan.threads.to_string(),
        plan.ops_per_thread.to_string(),
    ]
    .join("\u{1e}");
    // FNV-1a: stable across platforms and versions, unlike std's hasher.
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in text.bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    format!("fnv1a64:{hash:016x}")
}

/// What a hunt is, for a shard's result: its plan, seed, sample count and whether it checks
/// every sample.
#[derive(Clone, Copy, Debug)]
pub struct HuntIdentity<'a> {
    /// The hunt file, as read.
    pub plan: &'a HuntPlan,
    /// The seed.
    pub seed: u64,
    /// How many samples the whole hunt draws.
    pub samples: usize,
    /// `--all`.
    pub all: bool,
}

impl<'a> HuntIdentity<'a> {
    /// The identity of the hunt `options` run on `plan`.
    pub fn of(plan: &'a HuntPlan, options: &HuntOptions) -> HuntIdentity<'a> {
        HuntIdentity {
            plan,
            seed: options.seed,
            samples: options.samples,
            all: options.all,
        }
    }
}

impl ShardReport {
    /// The result of shard `shard` of the hunt `hunt`, which ran as `run` says.
    pub fn of(
        hunt: HuntIdentity<'_>,
        shard: Shard,
        run: &HuntRun,
        object: &str,
        program: &str,
        seconds: f64,
    ) -> ShardReport {
        let result = &run.result;
        ShardReport {
            schema: SHARD_SCHEMA.to_string(),
            version: env!("CARGO_PKG_VERSION").to_string(),
            program: program.to_string(),
            hunt: hunt.plan.path.display().to_string(),
            plan: plan_fingerprint(hunt.plan),
            object: object.to_string(),
            seed: hunt.seed,
            samples: hunt.samples,
            all: hunt.all,
            shard,
            shard_samples: shard.len(hunt.samples),
            checked: result.drawn,
            last_checked: result.drawn.checked_sub(1).map(|nth| shard.sample(nth)),
            partial: result.partial_samples.clone(),
            findings: result.findings.iter().map(ShardFinding::of).collect(),
            error: run.error.as_ref().map(|(sample, source)| SampleError {
                sample: *sample,
                message: source.to_string(),
            }),
            timed_out: result.timed_out,
            interrupted: result.interrupted,
            seconds,
        }
    }

    /// The report as pretty JSON, with a final newline.
    pub fn to_json(&self) -> String {
        let mut text = serde_json::to_string_pretty(self).expect("a shard report serializes");
        text.push('\n');
        text
    }
}

impl ShardFinding {
    /// The finding of `sample`.
    fn of(sample: &Sample) -> ShardFinding {
        let texts = |calls: &[Call]| calls.iter().map(Call::to_string).collect::<Vec<_>>();
        let (verdict, not_linearizable, faults, nondeterminism) = match &sample.report.verdict {
            TestVerdict::Fails {
                not_linearizable,
                faults,
            } => ("fails", *not_linearizable, *faults, None),
            TestVerdict::Nondeterministic(found) => (
                "nondeterministic",
                0,
                0,
                Some(NondeterminismJson {
                    prefix: found
                        .prefix
                        .iter()
                        .map(|(thread, call, result)| SerialStep {
                            thread: *thread,
                            call: call.to_string(),
                            result: result.clone(),
                        })
                        .collect(),
                    thread: found.thread,
                    call: found.call.to_string(),
                    first: found.first.clone(),
                    second: found.second.clone(),
                }),
            ),
            // A hunt's findings are findings.
            TestVerdict::Passes => ("passes", 0, 0, None),
        };
        ShardFinding {
            sample: sample.index,
            init: texts(&sample.matrix.init),
            threads: sample.matrix.threads.iter().map(|t| texts(t)).collect(),
            finals: texts(&sample.matrix.finals),
            verdict: verdict.to_string(),
            not_linearizable,
            faults,
            states: sample.report.stopped_at_first,
            nondeterminism,
        }
    }

    /// Whether this finding's test is `matrix`.
    fn is(&self, matrix: &Matrix) -> bool {
        let texts = |calls: &[Call]| calls.iter().map(Call::to_string).collect::<Vec<_>>();
        self.init == texts(&matrix.init)
            && self.finals == texts(&matrix.finals)
            && self.threads.len() == matrix.threads.len()
            && self
                .threads
                .iter()
                .zip(&matrix.threads)
                .all(|(ours, theirs)| *ours == texts(theirs))
    }

    /// The verdict this finding records, or why it does not parse.
    fn verdict(&self) -> Result<TestVerdict, String> {
        match self.verdict.as_str() {
            "fails" if self.not_linearizable + self.faults > 0 => Ok(TestVerdict::Fails {
                not_linearizable: self.not_linearizable,
                faults: self.faults,
            }),
            "fails" => Err("a `fails` verdict without a failing leaf".into()),
            "nondeterministic" => {
                let found = self
                    .nondeterminism
                    .as_ref()
                    .ok_or("a `nondeterministic` verdict without its `nondeterminism`")?;
                let call =
                    |text: &str| fgvt_tree::parse_call(text).map_err(|e| format!("`{text}`: {e}"));
                Ok(TestVerdict::Nondeterministic(Nondeterminism {
                    prefix: found
                        .prefix
                        .iter()
                        .map(|step| Ok((step.thread, call(&step.call)?, step.result.clone())))
                        .collect::<Result<_, String>>()?,
                    thread: found.thread,
                    call: call(&found.call)?,
                    first: found.first.clone(),
                    second: found.second.clone(),
                }))
            }
            other => Err(format!(
                "unknown verdict `{other}` (fails or nondeterministic)"
            )),
        }
    }
}

/// Why a shard could not be named, read or merged.
#[derive(Debug, thiserror::Error, miette::Diagnostic)]
pub enum ShardError {
    /// `--shard K/N` and `--shard-count` disagree.
    #[error("--shard {shard} and --shard-count {count} disagree about the number of shards")]
    #[diagnostic(
        code(fgvt::shard),
        help("--shard-count is for --shard auto; drop it, or make it N")
    )]
    CountMismatch {
        /// The shard given.
        shard: Shard,
        /// The count given.
        count: usize,
    },
    /// `--shard auto` without a count.
    #[error("--shard auto needs the number of shards")]
    #[diagnostic(
        code(fgvt::shard),
        help("give --shard-count N, or set FGVT_SHARD_COUNT (a Kubernetes Indexed Job's `completions`)")
    )]
    NoCount,
    /// `--shard auto` without an index.
    #[error("--shard auto reads the shard's index from JOB_COMPLETION_INDEX, which is not set")]
    #[diagnostic(
        code(fgvt::shard),
        help("a Kubernetes Indexed Job sets it (from 0) in each pod; elsewhere give --shard K/N")
    )]
    NoIndex,
    /// An environment variable that is not a number.
    #[error("{name}={value:?} is not a number")]
    #[diagnostic(
        code(fgvt::shard),
        help("it must be a whole number: JOB_COMPLETION_INDEX from 0, FGVT_SHARD_COUNT from 1")
    )]
    BadVariable {
        /// The variable.
        name: &'static str,
        /// Its value.
        value: String,
    },
    /// `JOB_COMPLETION_INDEX` past the number of shards.
    #[error("JOB_COMPLETION_INDEX={index} with {count} shards: {why}")]
    #[diagnostic(
        code(fgvt::shard),
        help("JOB_COMPLETION_INDEX counts from 0: the Job's `completions` must equal the number of shards")
    )]
    AutoOutOfRange {
        /// The index read.
        index: usize,
        /// The number of shards.
        count: usize,
        /// Why that is no shard.
        why: String,
    },
    /// A shard file or directory that cannot be read.
    #[error("cannot read the shard result `{}`: {why}", .path.display())]
    #[diagnostic(
        code(fgvt::shard),
        help("--merge takes the files `fgvt hunt --shard K/N -o` wrote, or directories of them")
    )]
    Unreadable {
        /// The path.
        path: PathBuf,
        /// What the file system said.
        why: std::io::Error,
    },
    /// A directory with no shard results.
    #[error("`{}` holds no shard results (*.json)", .path.display())]
    #[diagnostic(
        code(fgvt::shard),
        help("run the shards with `-o {}/` (each writes shard-K-of-N.json there), or name the files", .path.display())
    )]
    Empty {
        /// The directory.
        path: PathBuf,
    },
    /// A file that is not a shard result.
    #[error("`{}` is not a shard result: {why}", .path.display())]
    #[diagnostic(
        code(fgvt::shard),
        help("a shard result is the JSON (schema fgvt.hunt-shard/1) that `fgvt hunt --shard K/N` writes; run that shard again")
    )]
    Garbled {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        why: String,
    },
    /// Two shards that are not of one hunt.
    #[error("the shards are not of one hunt: `{}` has {what} {first_value}, `{}` has {second_value}", .first.display(), .second.display())]
    #[diagnostic(
        code(fgvt::shard),
        help("merge the shards of one run: the same hunt file, --seed, --samples and N in --shard K/N")
    )]
    Different {
        /// What differs: "hunt file", "seed", …
        what: &'static str,
        /// One shard.
        first: PathBuf,
        /// Its value.
        first_value: String,
        /// Another shard.
        second: PathBuf,
        /// Its value.
        second_value: String,
    },
    /// The shards are of another hunt than the one merging them.
    #[error("`{}` is a shard of a hunt with {what} {theirs}, not {ours} as this merge", .path.display())]
    #[diagnostic(code(fgvt::shard), help("{help}"))]
    OtherHunt {
        /// The shard.
        path: PathBuf,
        /// What differs.
        what: &'static str,
        /// The shard's.
        theirs: String,
        /// This merge's.
        ours: String,
        /// What to do.
        help: String,
    },
    /// One shard given twice.
    #[error("shard {shard} is given twice: `{}` and `{}`", .first.display(), .second.display())]
    #[diagnostic(
        code(fgvt::shard),
        help("keep one result per shard (a shard run again writes the same result)")
    )]
    Duplicate {
        /// The shard.
        shard: Shard,
        /// One file.
        first: PathBuf,
        /// The other.
        second: PathBuf,
    },
    /// Shards missing.
    #[error("{} of {count} missing: the hunt is merged from all its shards", missing_list(.missing))]
    #[diagnostic(
        code(fgvt::shard),
        help("run the missing shards (`--shard K/{count}`) and merge again")
    )]
    Missing {
        /// The missing shards' indices.
        missing: Vec<usize>,
        /// How many shards there are.
        count: usize,
    },
    /// `--merge --all` over shards that stopped at their first finding.
    #[error("`{}` ran without --all (it stops at its first failing test), so the merge cannot list every failing test", .path.display())]
    #[diagnostic(
        code(fgvt::shard),
        help("run the shards with --all too, or merge without --all")
    )]
    NotAll {
        /// The shard.
        path: PathBuf,
    },
    /// A finding that this hunt file does not draw.
    #[error("`{}`: sample {sample} is not the test this hunt file draws with seed {seed}", .path.display())]
    #[diagnostic(
        code(fgvt::shard),
        help("the shards ran with another hunt file, or another version of fgvt; run them again")
    )]
    NotDrawn {
        /// The shard.
        path: PathBuf,
        /// The sample.
        sample: usize,
        /// The seed.
        seed: u64,
    },
}

/// `shard 2` or `shards 2, 4`.
fn missing_list(missing: &[usize]) -> String {
    let list: Vec<String> = missing.iter().map(usize::to_string).collect();
    match list.len() {
        1 => format!("shard {}", list[0]),
        _ => format!("shards {}", list.join(", ")),
    }
}

/// The shard results at `paths`: each a file, or a directory whose `*.json` files are read
/// (in name order). Paths are kept for messages.
pub fn read_shards(paths: &[PathBuf]) -> Result<Vec<(PathBuf, ShardReport)>, ShardError> {
    let mut files = Vec::new();
    for path in paths {
        let unreadable = |why| ShardError::Unreadable {
            path: path.clone(),
            why,
        };
        if path.is_dir() {
            let mut found: Vec<PathBuf> = std::fs::read_dir(path)
                .map_err(unreadable)?
                .filter_map(|entry| entry.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|e| e == "json") && p.is_file())
                .collect();
            if found.is_empty() {
                return Err(ShardError::Empty { path: path.clone() });
            }
            found.sort();
            files.extend(found);
        } else {
            files.push(path.clone());
        }
    }
    files
        .into_iter()
        .map(|path| {
            let text = std::fs::read_to_string(&path).map_err(|why| ShardError::Unreadable {
                path: path.clone(),
                why,
            })?;
            let report = parse_shard(&text).map_err(|why| ShardError::Garbled {
                path: path.clone(),
                why,
            })?;
            Ok((path, report))
        })
        .collect()
}

/// A shard result from its JSON text, checked for what merging relies on.
pub fn parse_shard(text: &str) -> Result<ShardReport, String> {
    let value: serde_json::Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
    match value.get("schema").and_then(serde_json::Value::as_str) {
        Some(SHARD_SCHEMA) => {}
        Some(other) => return Err(format!("its schema is `{other}`, not `{SHARD_SCHEMA}`")),
        None => return Err(format!("it has no `schema` (`{SHARD_SCHEMA}`)")),
    }
    let report: ShardReport = serde_json::from_value(value).map_err(|e| e.to_string())?;
    let shard = Shard::new(report.shard.index, report.shard.count)?;
    if report.shard_samples != shard.len(report.samples) {
        return Err(format!(
            "shard {shard} of {} samples has {}, not {}",
            report.samples,
            shard.len(report.samples),
            report.shard_samples
        ));
    }
    if report.checked > report.shard_samples {
        return Err(format!(
            "it checked {} samples of its {}",
            report.checked, report.shard_samples
        ));
    }
    let checked = |sample: usize| shard.owns(sample) && sample / shard.count < report.checked;
    for sample in report
        .findings
        .iter()
        .map(|f| f.sample)
        .chain(report.partial.iter().copied())
    {
        if !checked(sample) {
            return Err(format!(
                "sample {sample} is not one of the {} it checked",
                report.checked
            ));
        }
    }
    if !report
        .findings
        .windows(2)
        .all(|w| w[0].sample < w[1].sample)
    {
        return Err("its findings are not in increasing order".into());
    }
    if let Some(error) = &report.error {
        if !shard.owns(error.sample) || error.sample / shard.count != report.checked {
            return Err(format!(
                "sample {} (its error) is not the one after the {} it checked",
                error.sample, report.checked
            ));
        }
    }
    for finding in &report.findings {
        finding
            .verdict()
            .map_err(|why| format!("sample {}: {why}", finding.sample))?;
    }
    Ok(report)
}

/// The whole hunt, rebuilt from its shards.
#[derive(Debug)]
pub struct Merged {
    /// What one process would have found.
    pub result: HuntResult,
    /// The lowest sample that could not be checked, and why, if it comes before the first
    /// finding (or anywhere with `all`): the whole hunt's error.
    pub error: Option<SampleError>,
    /// How many shards were merged.
    pub shards: usize,
    /// The shards' time, added up, in seconds.
    pub seconds: f64,
}

/// Merges `shards` (read by [`read_shards`]) into the result of the hunt `hunt`: checks that
/// they are all of it, each once, then walks its samples in order as one process would.
pub fn merge(
    hunt: HuntIdentity<'_>,
    shards: &[(PathBuf, ShardReport)],
) -> Result<Merged, ShardError> {
    let Some((first_path, first)) = shards.first() else {
        return Err(ShardError::Missing {
            missing: vec![1],
            count: 1,
        });
    };
    // What must be equal, and how a message shows it: a hunt file by its plan's fingerprint,
    // whatever name each shard's command line gave it.
    type Field = (
        &'static str,
        fn(&ShardReport) -> String,
        fn(&ShardReport) -> String,
    );
    let fields: [Field; 4] = [
        (
            "hunt file",
            |r| r.plan.clone(),
            |r| format!("`{}` ({})", r.hunt, r.plan),
        ),
        ("seed", |r| r.seed.to_string(), |r| r.seed.to_string()),
        (
            "samples",
            |r| r.samples.to_string(),
            |r| r.samples.to_string(),
        ),
        (
            "shard count",
            |r| r.shard.count.to_string(),
            |r| r.shard.count.to_string(),
        ),
    ];
    for (path, report) in &shards[1..] {
        for (what, key, shown) in &fields {
            if key(first) != key(report) {
                return Err(ShardError::Different {
                    what,
                    first: first_path.clone(),
                    first_value: shown(first),
                    second: path.clone(),
                    second_value: shown(report),
                });
            }
        }
    }
    let fingerprint = plan_fingerprint(hunt.plan);
    // The shards are of one hunt: is it this one?
    let other =
        |path: &Path, what, theirs: String, ours: String, help: String| ShardError::OtherHunt {
            path: path.to_path_buf(),
            what,
            theirs,
            ours,
            help,
        };
    if first.plan != fingerprint {
        return Err(other(
            first_path,
            "hunt file",
            format!("`{}` ({})", first.hunt, first.plan),
            format!("`{}` ({fingerprint})", hunt.plan.path.display()),
            format!(
                "merge with the hunt file the shards ran (`{}`), unchanged",
                first.hunt
            ),
        ));
    }
    if first.seed != hunt.seed {
        return Err(other(
            first_path,
            "seed",
            first.seed.to_string(),
            hunt.seed.to_string(),
            format!(
                "merge with the shards' seed: --seed {} (the merge is the unsharded command with --merge for --shard)",
                first.seed
            ),
        ));
    }
    if first.samples != hunt.samples {
        return Err(other(
            first_path,
            "samples",
            first.samples.to_string(),
            hunt.samples.to_string(),
            format!(
                "merge with the shards' sample count: --samples {}",
                first.samples
            ),
        ));
    }
    let count = first.shard.count;
    let mut by_index: BTreeMap<usize, (&PathBuf, &ShardReport)> = BTreeMap::new();
    for (path, report) in shards {
        if let Some((earlier, _)) = by_index.insert(report.shard.index, (path, report)) {
            return Err(ShardError::Duplicate {
                shard: report.shard,
                first: earlier.clone(),
                second: path.clone(),
            });
        }
        if hunt.all && !report.all {
            return Err(ShardError::NotAll { path: path.clone() });
        }
    }
    let missing: Vec<usize> = (1..=count).filter(|k| !by_index.contains_key(k)).collect();
    if !missing.is_empty() {
        return Err(ShardError::Missing { missing, count });
    }
    let mut findings = BTreeMap::new();
    for (path, report) in by_index.values() {
        for finding in &report.findings {
            let matrix = draw(hunt.plan, hunt.seed, finding.sample);
            if !finding.is(&matrix) {
                return Err(ShardError::NotDrawn {
                    path: (*path).clone(),
                    sample: finding.sample,
                    seed: hunt.seed,
                });
            }
            let verdict = finding.verdict().map_err(|why| ShardError::Garbled {
                path: (*path).clone(),
                why,
            })?;
            let sample = Sample {
                index: finding.sample,
                matrix,
                report: TestReport {
                    verdict,
                    partial: None,
                    stopped_at_first: finding.states,
                },
            };
            findings.insert(finding.sample, sample);
        }
    }
    let partial: std::collections::BTreeSet<usize> = by_index
        .values()
        .flat_map(|(_, report)| report.partial.iter().copied())
        .collect();

    // One process's walk over the samples, in order.
    let mut merged = Merged {
        result: HuntResult::default(),
        error: None,
        shards: count,
        seconds: by_index.values().map(|(_, r)| r.seconds).sum(),
    };
    let result = &mut merged.result;
    for sample in 0..hunt.samples {
        let report = by_index[&(sample % count + 1)].1;
        if sample / count >= report.checked {
            match &report.error {
                Some(error) if error.sample == sample => merged.error = Some(error.clone()),
                // A hole: this shard stopped here (a limit, or after its own finding, which
                // the walk would have stopped at already but with --all).
                _ => {
                    result.timed_out = report.timed_out;
                    result.interrupted = report.interrupted;
                }
            }
            break;
        }
        result.drawn = sample + 1;
        if let Some(found) = findings.remove(&sample) {
            result.findings.push(found);
            if !hunt.all {
                break;
            }
        } else if partial.contains(&sample) {
            result.partial += 1;
            result.partial_samples.push(sample);
        }
    }
    Ok(merged)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hunt::{hunt, hunt_run, HuntFile, ModelJudge};
    use fgvt_tree::ExploreOptions;

    /// A counter whose increment is a read then a write: two increments can lose one.
    const RACY: &str = "object Racy {\n    shared int x = 0;\n    op inc() {\n        int v = x;\n        x = v + 1;\n    }\n    op get() {\n        return x;\n    }\n}\n";

    fn racy(dir: &Path) -> HuntFile {
        std::fs::write(dir.join("racy.fgv"), RACY).unwrap();
        let text = r#"{"object": "racy.fgv", "operations": ["inc()", "get()"], "threads": 2, "ops_per_thread": 2, "final": ["get()"], "samples": 40}"#;
        std::fs::write(dir.join("hunt.json"), text).unwrap();
        crate::hunt::load(&dir.join("hunt.json")).unwrap()
    }

    fn options(all: bool, shard: Option<Shard>) -> HuntOptions {
        HuntOptions {
            seed: 3,
            samples: 40,
            jobs: 2,
            all,
            explore: ExploreOptions::default(),
            deadline: None,
            shard,
        }
    }

    /// The findings of a result: sample numbers and tests.
    fn findings(result: &HuntResult) -> Vec<(usize, Matrix, TestVerdict)> {
        (result.findings.iter())
            .map(|s| (s.index, s.matrix.clone(), s.report.verdict.clone()))
            .collect()
    }

    #[test]
    fn merged_shards_find_what_one_hunt_finds() {
        let dir = tempfile::tempdir().unwrap();
        let file = racy(dir.path());
        let judge = ModelJudge::of_hunt(&file);
        for all in [false, true] {
            let whole = hunt(&file.plan, &judge, &options(all, None), &|| {}).unwrap();
            assert!(!whole.findings.is_empty());
            // 41 shards of 40 samples: the last has none.
            for count in [1, 2, 3, 5, 7, 41] {
                let shards: Vec<(PathBuf, ShardReport)> = (1..=count)
                    .map(|index| {
                        let shard = Shard::new(index, count).unwrap();
                        let options = options(all, Some(shard));
                        let run = hunt_run(&file.plan, &judge, &options, &|| {}).unwrap();
                        let identity = HuntIdentity::of(&file.plan, &options);
                        let report = ShardReport::of(identity, shard, &run, "Racy", "fgvt", 0.5);
                        // Through its JSON, as the merge reads it.
                        let report = parse_shard(&report.to_json()).unwrap();
                        (PathBuf::from(shard.file_name()), report)
                    })
                    .collect();
                let identity = HuntIdentity::of(&file.plan, &options(all, None));
                let merged = merge(identity, &shards).unwrap();
                assert_eq!(
                    findings(&merged.result),
                    findings(&whole),
                    "{count} shards, all {all}"
                );
                assert_eq!(merged.result.drawn, whole.drawn, "{count} shards");
                assert_eq!(merged.result.partial, whole.partial);
                assert!(merged.error.is_none());
                assert_eq!(merged.shards, count);
                assert_eq!(merged.seconds, 0.5 * count as f64);
                // Every shard at once, in any order: the same.
                let mut reversed = shards.clone();
                reversed.reverse();
                let again = merge(identity, &reversed).unwrap();
                assert_eq!(findings(&again.result), findings(&whole));
            }
        }
    }

    /// Every key a shard writes, findings included, is in SCHEMA.md's `fgvt.hunt-shard/1`
    /// section (as the reports crate checks its own schemas).
    #[test]
    fn schema_md_documents_every_field_of_a_shard() {
        let dir = tempfile::tempdir().unwrap();
        let file = racy(dir.path());
        let judge = ModelJudge::of_hunt(&file);
        let shard = Shard::new(1, 2).unwrap();
        let run = hunt_run(&file.plan, &judge, &options(true, Some(shard)), &|| {}).unwrap();
        let identity = HuntIdentity::of(&file.plan, &options(true, Some(shard)));
        let report = ShardReport::of(identity, shard, &run, "Racy", "fgvt", 0.5);
        let json: serde_json::Value = serde_json::from_str(&report.to_json()).unwrap();
        assert!(!json["findings"].as_array().unwrap().is_empty());
        let schema = include_str!("../../reports/SCHEMA.md");
        let section = schema.split("# `fgvt.hunt-shard/1`").nth(1).unwrap();
        let mut keys = Vec::new();
        collect_keys(&json, &mut keys);
        for key in keys {
            let documented = section.contains(&format!("`{key}`"))
                || section.contains(&format!("{key},"))
                || section.contains(&format!("{key}}}"));
            assert!(documented, "SCHEMA.md does not mention `{key}`");
        }
    }

    /// Every key of `json`, at any depth.
    fn collect_keys(json: &serde_json::Value, out: &mut Vec<String>) {
        match json {
            serde_json::Value::Object(map) => {
                for (key, value) in map {
                    out.push(key.clone());
                    collect_keys(value, out);
                }
            }
            serde_json::Value::Array(items) => items.iter().for_each(|v| collect_keys(v, out)),
            _ => {}
        }
    }

    #[test]
    fn merging_refuses_shards_that_are_not_one_whole_hunt() {
        let dir = tempfile::tempdir().unwrap();
        let file = racy(dir.path());
        let judge = ModelJudge::of_hunt(&file);
        let shard = |index, count, seed| {
            let shard = Shard::new(index, count).unwrap();
            let options = HuntOptions {
                seed,
                ..options(false, Some(shard))
            };
            let run = hunt_run(&file.plan, &judge, &options, &|| {}).unwrap();
            let report = ShardReport::of(
                HuntIdentity::of(&file.plan, &options),
                shard,
                &run,
                "Racy",
                "fgvt",
                0.0,
            );
            (
                PathBuf::from(format!("s{index}-{count}-{seed}.json")),
                report,
            )
        };
        let identity = HuntIdentity::of(&file.plan, &options(false, None));
        let merged = |shards: &[(PathBuf, ShardReport)]| merge(identity, shards).unwrap_err();
        assert!(matches!(
            merged(&[shard(1, 3, 3), shard(3, 3, 3)]),
            ShardError::Missing { ref missing, count: 3 } if *missing == [2]
        ));
        assert!(matches!(
            merged(&[shard(1, 2, 3), shard(2, 2, 3), shard(2, 2, 3)]),
            ShardError::Duplicate {
                shard: Shard { index: 2, count: 2 },
                ..
            }
        ));
        assert!(matches!(
            merged(&[shard(1, 2, 3), shard(2, 2, 4)]),
            ShardError::Different { what: "seed", .. }
        ));
        assert!(matches!(
            merged(&[shard(1, 2, 3), shard(2, 3, 3)]),
            ShardError::Different {
                what: "shard count",
                ..
            }
        ));
        assert!(matches!(
            merged(&[shard(1, 1, 4)]),
            ShardError::OtherHunt { what: "seed", .. }
        ));
        let all = HuntIdentity {
            all: true,
            ..identity
        };
        assert!(matches!(
            merge(all, &[shard(1, 1, 3)]).unwrap_err(),
            ShardError::NotAll { .. }
        ));
        // Another hunt file (other dimensions) under the same name.
        let mut other = file.plan.clone();
        other.threads = 3;
        let other = HuntIdentity {
            plan: &other,
            ..identity
        };
        assert!(matches!(
            merge(other, &[shard(1, 1, 3)]).unwrap_err(),
            ShardError::OtherHunt {
                what: "hunt file",
                ..
            }
        ));
        // A finding edited by hand is not what the hunt draws.
        let (path, mut report) = shard(1, 1, 3);
        report.findings[0].threads[0][0] = "get()".into();
        report.findings[0].threads[0][1] = "get()".into();
        assert!(matches!(
            merge(identity, &[(path, report)]).unwrap_err(),
            ShardError::NotDrawn { .. }
        ));
    }

    #[test]
    fn shards_split_the_samples_round_robin_and_cover_each_once() {
        for count in 1..=6 {
            for samples in [0, 1, 5, 17, 100] {
                let mut seen = vec![0; samples];
                for index in 1..=count {
                    let shard = Shard::new(index, count).unwrap();
                    for nth in 0..shard.len(samples) {
                        let sample = shard.sample(nth);
                        assert!(shard.owns(sample));
                        seen[sample] += 1;
                    }
                    assert!(shard.sample(shard.len(samples)) >= samples);
                }
                assert!(seen.iter().all(|&n| n == 1), "{count} shards of {samples}");
            }
        }
        let shard = Shard::new(2, 3).unwrap();
        assert_eq!(
            (0..4).map(|n| shard.sample(n)).collect::<Vec<_>>(),
            [1, 4, 7, 10]
        );
        assert_eq!(shard.len(100), 33);
        assert_eq!(Shard::new(1, 3).unwrap().len(100), 34);
        assert_eq!(shard.file_name(), "shard-2-of-3.json");
    }

    #[test]
    fn shard_arguments_parse_or_say_why_not() {
        assert_eq!(
            "2/4".parse::<ShardArg>(),
            Ok(ShardArg::Fixed(Shard { index: 2, count: 4 }))
        );
        assert_eq!("auto".parse::<ShardArg>(), Ok(ShardArg::Auto));
        let error = |text: &str| text.parse::<ShardArg>().unwrap_err();
        assert!(
            error("3/2").contains("shard 3 of 2 does not exist"),
            "{}",
            error("3/2")
        );
        assert!(error("0/2").contains("K must be between 1 and N"));
        assert!(error("1/0").contains("at least 1"));
        for bad in ["", "2", "a/b", "2/", "/4", "-1/4", "2/4/6"] {
            assert!(error(bad).contains("write K/N"), "{bad}: {}", error(bad));
        }
    }

    #[test]
    fn auto_takes_the_index_from_job_completion_index_counting_from_0() {
        let env = |index: Option<&'static str>, count: Option<&'static str>| {
            move |name: &str| match name {
                INDEX_VAR => index.map(String::from),
                COUNT_VAR => count.map(String::from),
                _ => None,
            }
        };
        let auto = ShardArg::Auto;
        assert_eq!(
            auto.resolve(Some(4), env(Some("0"), None)).unwrap(),
            Shard { index: 1, count: 4 }
        );
        assert_eq!(
            auto.resolve(None, env(Some("3"), Some("4"))).unwrap(),
            Shard { index: 4, count: 4 }
        );
        // The flag wins over the environment.
        assert_eq!(
            auto.resolve(Some(5), env(Some("4"), Some("4"))).unwrap(),
            Shard { index: 5, count: 5 }
        );
        assert!(matches!(
            auto.resolve(Some(4), env(Some("4"), None)),
            Err(ShardError::AutoOutOfRange {
                index: 4,
                count: 4,
                ..
            })
        ));
        assert!(matches!(
            auto.resolve(Some(4), env(None, None)),
            Err(ShardError::NoIndex)
        ));
        assert!(matches!(
            auto.resolve(None, env(Some("1"), None)),
            Err(ShardError::NoCount)
        ));
        assert!(matches!(
            auto.resolve(None, env(Some("x"), Some("2"))),
            Err(ShardError::BadVariable {
                name: INDEX_VAR,
                ..
            })
        ));
        let fixed = ShardArg::Fixed(Shard { index: 1, count: 2 });
        assert!(fixed.resolve(Some(2), env(None, None)).is_ok());
        assert!(matches!(
            fixed.resolve(Some(3), env(None, None)),
            Err(ShardError::CountMismatch { count: 3, .. })
        ));
    }
}
