//! What the bench measures: the cases, the tools, and one measured run (in a child process).

use std::fmt::Write as _;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// A test every tool runs on its own copy of the algorithm.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Case {
    /// `threads` threads; thread `i` runs `push(i + 1)` then `pop()` on a Treiber stack.
    Stack {
        /// How many threads.
        threads: usize,
    },
    /// As [`Case::Stack`], on a buggy Treiber stack whose `push` stores `top` instead of
    /// CASing it (`RacyTreiberStack`): the tools should find the bug.
    RacyStack {
        /// How many threads.
        threads: usize,
    },
    /// A seqlock: two writers, `write(1, 1)` and `write(2, 2)`, and `readers` threads that
    /// each run one `read()`.
    SeqLock {
        /// How many readers.
        readers: usize,
    },
    /// A fixture whose bug is in its memory orderings (under weak memory only): fgvt and
    /// loom, which both model the C++20 / Rust memory model (shuttle does not).
    Weak(Weak),
}

/// The weak-memory fixtures (`fixtures/rust/src/{message_passing, fenced_seqlock,
/// release_stack}.rs`), buggy and corrected, each on its test file's calls.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Weak {
    /// `RelaxedFlag`: `publish(1)` ‖ `read()`.
    MpRelaxed,
    /// `ReleaseAcquireFlag`: the same.
    MpReleaseAcquire,
    /// `UnfencedSeqLock`: `write(1, 1)` ‖ `read()`.
    SeqlockUnfenced,
    /// `FencedSeqLock`: the same.
    SeqlockFenced,
    /// `RelaxedPushStack`: `push(1)`, then `push(2)` ‖ `pop(); pop()`.
    StackRelaxedPush,
    /// `ReleasePushStack`: the same.
    StackReleasePush,
}

impl Weak {
    /// Whether this is the buggy version.
    pub fn buggy(self) -> bool {
        matches!(
            self,
            Weak::MpRelaxed | Weak::SeqlockUnfenced | Weak::StackRelaxedPush
        )
    }
}

/// Every case: the correct objects, smallest first, then the buggy one, then the weak-memory
/// fixtures.
pub const CASES: [Case; 11] = [
    Case::Stack { threads: 2 },
    Case::Stack { threads: 3 },
    Case::SeqLock { readers: 1 },
    Case::SeqLock { readers: 2 },
    Case::RacyStack { threads: 3 },
    Case::Weak(Weak::MpRelaxed),
    Case::Weak(Weak::MpReleaseAcquire),
    Case::Weak(Weak::SeqlockUnfenced),
    Case::Weak(Weak::SeqlockFenced),
    Case::Weak(Weak::StackRelaxedPush),
    Case::Weak(Weak::StackReleasePush),
];

impl Case {
    /// The case's name on the command line and in the table: `stack-3t`, `seqlock-2w1r`,
    /// `buggy-stack-3t`.
    pub fn name(self) -> String {
        match self {
            Case::Stack { threads } => format!("stack-{threads}t"),
            Case::RacyStack { threads } => format!("buggy-stack-{threads}t"),
            Case::SeqLock { readers } => format!("seqlock-2w{readers}r"),
            Case::Weak(weak) => match weak {
                Weak::MpRelaxed => "mp-relaxed",
                Weak::MpReleaseAcquire => "mp-release-acquire",
                Weak::SeqlockUnfenced => "seqlock-unfenced",
                Weak::SeqlockFenced => "seqlock-fenced",
                Weak::StackRelaxedPush => "stack-relaxed-push",
                Weak::StackReleasePush => "stack-release-push",
            }
            .to_string(),
        }
    }

    /// The case named `name`, if there is one.
    pub fn from_name(name: &str) -> Option<Case> {
        CASES.into_iter().find(|case| case.name() == name)
    }

    /// What the case runs, for the table's legend.
    pub fn describe(self) -> String {
        match self {
            Case::Stack { threads } => {
                format!("Treiber stack, {threads} threads × (push(i), pop()), no node reuse")
            }
            Case::RacyStack { threads } => format!(
                "buggy Treiber stack (push = load `top` + store `top`, no CAS), {threads} threads \
                 × (push(i), pop()), no node reuse"
            ),
            Case::SeqLock { readers } => format!(
                "seqlock, writers write(1, 1) and write(2, 2), {readers} reader{} × read()",
                if readers == 1 { "" } else { "s" }
            ),
            Case::Weak(weak) => match weak {
                Weak::MpRelaxed => {
                    "**buggy** message passing, flag stored and loaded Relaxed: publish(1) ‖ read()"
                }
                Weak::MpReleaseAcquire => {
                    "message passing, flag stored Release and loaded Acquire: publish(1) ‖ read()"
                }
                Weak::SeqlockUnfenced => {
                    "**buggy** seqlock with Relaxed cells and no fences: write(1, 1) ‖ read()"
                }
                Weak::SeqlockFenced => {
                    "seqlock with Relaxed cells and Boehm's two fences: write(1, 1) ‖ read()"
                }
                Weak::StackRelaxedPush => {
                    "**buggy** Treiber stack, push's CAS Relaxed: push(1); push(2) ‖ pop(), pop()"
                }
                Weak::StackReleasePush => {
                    "Treiber stack, push's CAS Release: push(1); push(2) ‖ pop(), pop()"
                }
            }
            .to_string(),
        }
    }

    /// Whether the case's object is buggy: a tool gets it right by finding a failing run,
    /// where on a correct object it gets it right by finishing without one.
    pub fn expects_bug(self) -> bool {
        match self {
            Case::RacyStack { .. } => true,
            Case::Weak(weak) => weak.buggy(),
            Case::Stack { .. } | Case::SeqLock { .. } => false,
        }
    }

    /// The verdict of a finished run of this case, as the table shows it: the tool's own words,
    /// led on a buggy case by whether it found the bug (`bug found: …` or `missed: …`).
    pub fn judge(self, outcome: &Outcome) -> String {
        if !self.expects_bug() {
            return outcome.verdict.clone();
        }
        let lead = if outcome.found == Found::Bug {
            "bug found"
        } else {
            "missed"
        };
        format!("{lead}: {}", outcome.verdict)
    }
}

/// A tool, with the settings it is run with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tool {
    /// fgvt-sync: `Test::localize()` with its default limits (1,000,000 states, 1,000 steps
    /// per operation, no timeout).
    Fgvt,
    /// loom: `loom::model::Builder::new()` as it comes (no preemption bound).
    Loom,
    /// loom with `preemption_bound = Some(2)`, everything else default.
    LoomPb2,
    /// shuttle: `shuttle::check_dfs(f, None)`, the exhaustive DFS scheduler.
    ShuttleDfs,
}

/// Every tool, in the order each round runs them.
pub const TOOLS: [Tool; 4] = [Tool::Fgvt, Tool::Loom, Tool::LoomPb2, Tool::ShuttleDfs];

impl Tool {
    /// The tool's name on the command line and in the table.
    pub fn name(self) -> &'static str {
        match self {
            Tool::Fgvt => "fgvt",
            Tool::Loom => "loom",
            Tool::LoomPb2 => "loom-pb2",
            Tool::ShuttleDfs => "shuttle-dfs",
        }
    }

    /// The tool named `name`, if there is one.
    pub fn from_name(name: &str) -> Option<Tool> {
        TOOLS.into_iter().find(|tool| tool.name() == name)
    }

    /// How the tool is called, for the table's legend.
    pub fn describe(self) -> &'static str {
        match self {
            Tool::Fgvt => {
                "fgvt-sync `Test::localize()`, default limits (1,000,000 states, 1,000 steps per \
                 operation, no timeout); spec `stack` / `self`"
            }
            Tool::Loom => "loom 0.7 `Builder::new().check(..)`, defaults (no preemption bound)",
            Tool::LoomPb2 => "loom 0.7 `Builder` with `preemption_bound = Some(2)`, else defaults",
            Tool::ShuttleDfs => "shuttle 0.9.9 `check_dfs(f, None)`: full DFS, default `Config`",
        }
    }

    /// Whether the tool is run on `case`: shuttle, which runs every access sequentially
    /// consistent, is not run on the weak-memory fixtures (it cannot meet their bugs).
    pub fn runs(self, case: Case) -> bool {
        !(self == Tool::ShuttleDfs && matches!(case, Case::Weak(_)))
    }
}

/// What a finished run found out about the object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Found {
    /// No failing run, and nothing left unexplored: the object is correct on this test.
    Correct,
    /// A failing run: an assertion of the test body failed, or fgvt's verdict is not
    /// linearizable.
    Bug,
    /// No verdict on the object: a limit cut the search, or the tool gave up on its own.
    Nothing,
}

impl Found {
    /// The word a child's outcome line carries.
    fn word(self) -> &'static str {
        match self {
            Found::Correct => "correct",
            Found::Bug => "bug",
            Found::Nothing => "nothing",
        }
    }

    /// Reads what [`Found::word`] wrote.
    fn from_word(word: &str) -> Option<Found> {
        [Found::Correct, Found::Bug, Found::Nothing]
            .into_iter()
            .find(|found| found.word() == word)
    }
}

/// What one measured run found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outcome {
    /// Wall-clock time of the tool's check, from its call to its verdict.
    pub elapsed: Duration,
    /// How much the tool explored: `N executions`, or fgvt's states and tree size.
    pub explored: String,
    /// Whether the tool found the object correct, found a bug, or neither.
    pub found: Found,
    /// The verdict in words (a failure's message, shortened).
    pub verdict: String,
    /// The child process's peak resident memory, in KiB (Linux's `VmHWM`).
    pub peak_rss_kib: Option<u64>,
    /// When the tool told of a failing run before its verdict, how long after the check's
    /// start it had found it: fgvt's stderr line "NOT LINEARIZABLE: a failing run, found after
    /// …", which the parent reads ([`first_failure_told`]). Not part of a child's outcome line.
    pub first_failure: Option<Duration>,
    /// How many times the tool ran the test's code: the body's runs under loom and shuttle,
    /// the executions fgvt started from the start (`Localized::runs`; not those that went on).
    pub executions: Option<u64>,
}

impl Outcome {
    /// An outcome, with the peak memory of this process so far.
    pub fn new(elapsed: Duration, explored: String, found: Found, verdict: String) -> Outcome {
        Outcome {
            elapsed,
            explored,
            found,
            verdict,
            peak_rss_kib: peak_rss_kib(),
            first_failure: None,
            executions: None,
        }
    }

    /// This outcome, having run the test's code `n` times.
    pub fn with_executions(mut self, n: u64) -> Outcome {
        self.executions = Some(n);
        self
    }

    /// The line a child prints for its parent: tab-separated fields (none holds a tab).
    pub fn to_line(&self) -> String {
        format!(
            "OUTCOME\t{}\t{}\t{}\t{}\t{}\t{}",
            self.elapsed.as_nanos(),
            self.found.word(),
            clean(&self.explored),
            clean(&self.verdict),
            self.peak_rss_kib.map_or(String::new(), |k| k.to_string()),
            self.executions.map_or(String::new(), |n| n.to_string()),
        )
    }

    /// Reads what [`Outcome::to_line`] wrote.
    pub fn from_line(line: &str) -> Option<Outcome> {
        let mut fields = line.strip_prefix("OUTCOME\t")?.split('\t');
        let nanos: u64 = fields.next()?.parse().ok()?;
        let found = Found::from_word(fields.next()?)?;
        let explored = fields.next()?.to_string();
        let verdict = fields.next()?.to_string();
        let peak_rss_kib = fields.next().and_then(|k| k.parse().ok());
        let executions = fields.next().and_then(|n| n.parse().ok());
        Some(Outcome {
            elapsed: Duration::from_nanos(nanos),
            explored,
            found,
            verdict,
            peak_rss_kib,
            first_failure: None,
            executions,
        })
    }
}

/// What fgvt-sync's `Test` prints on stderr when it meets a run's first failing run before its
/// report (`fgvt_reports::early::failing_run_line`), up to the time it gives.
const FAILING_RUN_TOLD: &str = "NOT LINEARIZABLE: a failing run, found after ";

/// How long after its start a child's check found the failing run it told of on `stderr`, if
/// it told of one. fgvt-sync's `Test` tells only once the run has lasted 0.4 s (a run whose
/// exploration ends sooner tells nothing), and measures from the start of its exploration,
/// a moment after `localize()` was called.
pub fn first_failure_told(stderr: &str) -> Option<Duration> {
    stderr.lines().find_map(|line| {
        let rest = line.split_once(FAILING_RUN_TOLD)?.1;
        parse_debug_duration(rest.split_whitespace().next()?)
    })
}

/// Reads a `Duration` as `{:.1?}` writes it: `1.5s`, `350.2ms`, `12.0µs`, `800.0ns`.
fn parse_debug_duration(text: &str) -> Option<Duration> {
    // The longer units first: `ms`, `µs` and `ns` also end in `s`.
    let units = [("ms", 1e-3), ("µs", 1e-6), ("ns", 1e-9), ("s", 1.0)];
    let (number, scale) = units
        .into_iter()
        .find_map(|(unit, scale)| Some((text.strip_suffix(unit)?, scale)))?;
    let value: f64 = number.parse().ok()?;
    Duration::try_from_secs_f64(value * scale).ok()
}

/// `text` on one line without tabs, cut to a table cell's length.
fn clean(text: &str) -> String {
    let one_line: String = text
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .replace('|', "/");
    const MAX: usize = 160;
    if one_line.chars().count() <= MAX {
        return one_line;
    }
    let mut cut: String = one_line.chars().take(MAX).collect();
    cut.push('…');
    cut
}

/// The peak resident memory of this process, in KiB, where Linux's `/proc` says it.
fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Executions the test body has started in this process (loom and shuttle run it once per
/// execution; it is the tools' own count, which neither returns from its check).
static EXECUTIONS: AtomicU64 = AtomicU64::new(0);

/// Counts one execution of a loom or shuttle test body.
pub fn count_execution() {
    EXECUTIONS.fetch_add(1, Ordering::Relaxed);
}

/// Executions counted so far (for the progress lines a child prints).
pub fn executions() -> u64 {
    EXECUTIONS.load(Ordering::Relaxed)
}

/// Times `check` (a loom or shuttle check of a test body that calls [`count_execution`]): its
/// verdict is "passed" unless it panics, and then the panic's message; the panic is a bug found
/// when an assertion of the body failed ([`crate::invariants::broken`]).
pub fn executions_outcome(check: impl FnOnce()) -> Outcome {
    EXECUTIONS.store(0, Ordering::Relaxed);
    crate::invariants::forget_broken();
    let started = Instant::now();
    let result = catch_unwind(AssertUnwindSafe(check));
    let elapsed = started.elapsed();
    let count = executions();
    let explored = format!("{} executions", group(count));
    let outcome = match result {
        Ok(()) => Outcome::new(elapsed, explored, Found::Correct, "passed".to_string()),
        Err(payload) => {
            let message = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a panic without a message".to_string());
            // A failed assertion of the body is a bug found; so is loom's "causality
            // violation", a data race under the memory model (an access not ordered after a
            // non-atomic one, such as an atomic's creation), which loom reports on its own.
            let found = if crate::invariants::broken() || message.contains(CAUSALITY) {
                Found::Bug
            } else {
                Found::Nothing
            };
            Outcome::new(elapsed, explored, found, format!("FAILED: {message}"))
        }
    };
    outcome.with_executions(count)
}

/// The start of loom's message for a data race under the memory model.
pub const CAUSALITY: &str = "Causality violation";

/// `n` with thousands separators (`1,234,567`).
pub fn group(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A duration as the table shows it: `850 µs`, `12.3 ms`, `4.56 s`.
pub fn show_duration(d: Duration) -> String {
    let secs = d.as_secs_f64();
    let mut out = String::new();
    let _ = if secs >= 1.0 {
        write!(out, "{secs:.2} s")
    } else if secs >= 1e-3 {
        write!(out, "{:.1} ms", secs * 1e3)
    } else {
        write!(out, "{:.0} µs", secs * 1e6)
    };
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_failing_run_is_read_from_the_line_fgvt_writes() {
        let line = fgvt_reports::early::failing_run_line(Duration::from_millis(1234), "cargo t");
        let stderr = format!("Compiling …\n{line}\nmore\n");
        let told = first_failure_told(&stderr).expect("a time");
        // `{:.1?}` keeps one decimal: 1.2 s.
        assert!(told.abs_diff(Duration::from_millis(1200)) < Duration::from_micros(1));
    }

    #[test]
    fn every_unit_of_a_debug_duration_is_read() {
        for (text, nanos) in [("4.1ms", 4_100_000), ("12.0µs", 12_000), ("800.0ns", 800)] {
            let read = parse_debug_duration(text).expect("a duration");
            assert!(read.abs_diff(Duration::from_nanos(nanos)) < Duration::from_nanos(2));
        }
        assert_eq!(parse_debug_duration("soon"), None);
    }

    #[test]
    fn an_outcome_line_reads_back() {
        let outcome = Outcome {
            elapsed: Duration::from_micros(250),
            explored: "1 executions".to_string(),
            found: Found::Bug,
            verdict: "FAILED: stack".to_string(),
            peak_rss_kib: Some(4096),
            first_failure: None,
            executions: Some(1),
        };
        assert_eq!(Outcome::from_line(&outcome.to_line()), Some(outcome));
    }
}
