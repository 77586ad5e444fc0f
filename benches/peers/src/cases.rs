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
    /// A seqlock: two writers, `write(1, 1)` and `write(2, 2)`, and `readers` threads that
    /// each run one `read()`.
    SeqLock {
        /// How many readers.
        readers: usize,
    },
}

/// Every case, smallest first.
pub const CASES: [Case; 4] = [
    Case::Stack { threads: 2 },
    Case::Stack { threads: 3 },
    Case::SeqLock { readers: 1 },
    Case::SeqLock { readers: 2 },
];

impl Case {
    /// The case's name on the command line and in the table: `stack-3t`, `seqlock-2w1r`.
    pub fn name(self) -> String {
        match self {
            Case::Stack { threads } => format!("stack-{threads}t"),
            Case::SeqLock { readers } => format!("seqlock-2w{readers}r"),
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
            Case::SeqLock { readers } => format!(
                "seqlock, writers write(1, 1) and write(2, 2), {readers} reader{} × read()",
                if readers == 1 { "" } else { "s" }
            ),
        }
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

    /// Runs `case` under this tool once, in this process, and measures it.
    pub fn run(self, case: Case) -> Outcome {
        match self {
            Tool::Fgvt => crate::under_fgvt::run(case),
            Tool::Loom => crate::under_loom::run(case, None),
            Tool::LoomPb2 => crate::under_loom::run(case, Some(2)),
            Tool::ShuttleDfs => crate::under_shuttle::run(case),
        }
    }
}

/// What one measured run found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outcome {
    /// Wall-clock time of the tool's check, from its call to its verdict.
    pub elapsed: Duration,
    /// How much the tool explored: `N executions`, or fgvt's states and tree size.
    pub explored: String,
    /// Whether the tool finished and found the object correct.
    pub ok: bool,
    /// The verdict in words (a failure's message, shortened).
    pub verdict: String,
    /// The child process's peak resident memory, in KiB (Linux's `VmHWM`).
    pub peak_rss_kib: Option<u64>,
}

impl Outcome {
    /// An outcome, with the peak memory of this process so far.
    pub fn new(elapsed: Duration, explored: String, ok: bool, verdict: String) -> Outcome {
        Outcome {
            elapsed,
            explored,
            ok,
            verdict,
            peak_rss_kib: peak_rss_kib(),
        }
    }

    /// The line a child prints for its parent: tab-separated fields (none holds a tab).
    pub fn to_line(&self) -> String {
        format!(
            "OUTCOME\t{}\t{}\t{}\t{}\t{}",
            self.elapsed.as_nanos(),
            u8::from(self.ok),
            clean(&self.explored),
            clean(&self.verdict),
            self.peak_rss_kib.map_or(String::new(), |k| k.to_string()),
        )
    }

    /// Reads what [`Outcome::to_line`] wrote.
    pub fn from_line(line: &str) -> Option<Outcome> {
        let mut fields = line.strip_prefix("OUTCOME\t")?.split('\t');
        let nanos: u64 = fields.next()?.parse().ok()?;
        let ok = fields.next()? == "1";
        let explored = fields.next()?.to_string();
        let verdict = fields.next()?.to_string();
        let peak_rss_kib = fields.next().and_then(|k| k.parse().ok());
        Some(Outcome {
            elapsed: Duration::from_nanos(nanos),
            explored,
            ok,
            verdict,
            peak_rss_kib,
        })
    }
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
/// verdict is "passed" unless it panics, and then the panic's message.
pub fn executions_outcome(check: impl FnOnce()) -> Outcome {
    EXECUTIONS.store(0, Ordering::Relaxed);
    let started = Instant::now();
    let result = catch_unwind(AssertUnwindSafe(check));
    let elapsed = started.elapsed();
    let explored = format!("{} executions", group(executions()));
    match result {
        Ok(()) => Outcome::new(elapsed, explored, true, "passed".to_string()),
        Err(payload) => {
            let message = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a panic without a message".to_string());
            Outcome::new(elapsed, explored, false, format!("FAILED: {message}"))
        }
    }
}

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
