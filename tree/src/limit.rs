//! Typed limits: which limit cut an exploration short ([`Limit`]), and why a bounded leaf ends
//! its path ([`Bound`]).
//!
//! They are typed so that front ends name the setting that raises a limit in their own
//! vocabulary (a command-line flag, a builder method): this crate never names one. A program's
//! step can end in a bound of the program's own ([`Step::Cut`](crate::Step::Cut)), so they sit
//! below [`crate::program`] as well as below the tree's leaves.

use std::fmt;

use serde::Serialize;

use crate::history::ThreadId;

/// A limit that cut exploration short; the tree is then partial.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Limit {
    /// More stored nodes than [`ExploreOptions::max_states`](crate::ExploreOptions::max_states).
    MaxStates,
    /// Exploration ran longer than [`ExploreOptions::timeout`](crate::ExploreOptions::timeout).
    Timeout,
    /// An operation took more steps than [`ExploreOptions::max_steps`](crate::ExploreOptions::max_steps).
    MaxSteps,
    /// A step ran out of its budget of local instructions (a loop that never touches shared
    /// memory).
    StepBudget,
    /// The process used more memory than [`ExploreOptions::max_memory`](crate::ExploreOptions::max_memory).
    Memory,
    /// Someone raised [`ExploreOptions::interrupt`](crate::ExploreOptions::interrupt) (a
    /// signal: Ctrl-C, `kill`).
    Interrupted,
    /// Under weak memory, an access had more ways (stores it could read, places in
    /// modification order) than the program explores.
    MaxStale,
    /// The run had failed, and exploring went on for longer than
    /// [`ExploreOptions::report_budget`](crate::ExploreOptions::report_budget) after the first
    /// failing leaf: the report comes now, with what was found so far.
    ReportBudget,
    /// An operation repeated an iteration of a loop that has no spin hint (the same accesses
    /// at the same places, seeing the same values, writing nothing): the path was cut there,
    /// not spun on to the step limit.
    Spin,
}

impl Limit {
    /// The limit's stable name, as JSON reports spell it: `max-states`, `timeout`,
    /// `max-steps`, `step-budget`, `memory`, `interrupted`, `max-stale`, `report-budget`,
    /// `spin`.
    pub fn name(self) -> &'static str {
        match self {
            Limit::MaxStates => "max-states",
            Limit::Timeout => "timeout",
            Limit::MaxSteps => "max-steps",
            Limit::StepBudget => "step-budget",
            Limit::Memory => "memory",
            Limit::Interrupted => "interrupted",
            Limit::MaxStale => "max-stale",
            Limit::ReportBudget => "report-budget",
            Limit::Spin => "spin",
        }
    }

    /// The limit whose [`Limit::name`] is `name`.
    pub fn from_name(name: &str) -> Option<Limit> {
        [
            Limit::MaxStates,
            Limit::Timeout,
            Limit::MaxSteps,
            Limit::StepBudget,
            Limit::Memory,
            Limit::Interrupted,
            Limit::MaxStale,
            Limit::ReportBudget,
            Limit::Spin,
        ]
        .into_iter()
        .find(|l| l.name() == name)
    }
}

/// Why a bounded leaf ends its path: which limit, and what hit it.
///
/// The limit is typed so that front ends can name the setting that raises it in their own
/// vocabulary (a command-line flag, a builder method); its [`Display`](fmt::Display) says what
/// happened without naming any.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "bound", rename_all = "kebab-case")]
pub enum Bound {
    /// Exploration stopped (too many states, out of time or out of memory, interrupted)
    /// before this state was explored.
    Stopped {
        /// The limit that stopped it: [`Limit::MaxStates`], [`Limit::Timeout`],
        /// [`Limit::Memory`] or [`Limit::Interrupted`].
        limit: Limit,
    },
    /// An operation took more steps along this path than the per-operation maximum.
    MaxSteps {
        /// The thread whose operation ran long.
        thread: ThreadId,
        /// The operation's name.
        op: String,
        /// The maximum it exceeded.
        max: usize,
    },
    /// One step ran out of its budget of local work (a loop that never touches shared memory).
    StepBudget {
        /// What the program says about it, for people.
        reason: String,
    },
    /// Under weak memory, an access could read (or go before) more older stores than the
    /// bound on ways allows: the ways past the bound are this one leaf.
    Stale {
        /// The thread whose access it is.
        thread: ThreadId,
        /// What the access is, for people (`load of ready#1 at src/lib.rs:12:9`).
        access: String,
        /// How many ways it had in all.
        ways: u32,
        /// How many it was allowed.
        max: u32,
    },
    /// An operation repeated the iteration of a loop that has no spin hint: the same accesses
    /// at the same places saw the same values and wrote nothing, so another turn can only spin.
    Spin {
        /// The thread that spins.
        thread: ThreadId,
        /// The operation's name.
        op: String,
        /// Where the repeated iteration's last access is (`src/lock.rs:12:20`).
        at: String,
    },
}

impl Bound {
    /// The limit behind this bound.
    pub fn limit(&self) -> Limit {
        match self {
            Bound::Stopped { limit } => *limit,
            Bound::MaxSteps { .. } => Limit::MaxSteps,
            Bound::StepBudget { .. } => Limit::StepBudget,
            Bound::Stale { .. } => Limit::MaxStale,
            Bound::Spin { .. } => Limit::Spin,
        }
    }
}

impl fmt::Display for Bound {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Bound::Stopped { limit } => {
                write!(f, "exploration stopped by the {} limit", limit.name())
            }
            Bound::MaxSteps { thread, op, max } => {
                write!(f, "T{thread}'s `{op}` took more than {max} steps")
            }
            Bound::StepBudget { reason } => f.write_str(reason),
            Bound::Stale {
                thread,
                access,
                ways,
                max,
            } => write!(
                f,
                "T{thread}'s {access} could go {ways} ways (read an older store, or go before \
                 a later one); only the newest {max} were explored"
            ),
            Bound::Spin { thread, op, at } => write!(
                f,
                "T{thread}'s `{op}` spins at {at} without a spin hint: an iteration saw what the \
                 one before it saw and wrote nothing"
            ),
        }
    }
}
