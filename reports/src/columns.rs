//! A witness as per-thread columns (Fig. 4 of the FGVT paper): one column per thread, one row
//! per step. Shared by the text and Markdown renderers, which only differ in how they draw it.

use fgvt_labeling::labels::Label;

use crate::model::TraceStep;

/// The content of one cell: the step of the thread owning the column.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Cell {
    /// The access as code: `d[0] = 2`, `d[1] → 1`, `cas(ok) head 1 -> 2`.
    pub access: String,
    /// Its source line.
    pub line: Option<usize>,
    /// The call the step starts, e.g. `write(0, 2)`.
    pub call: Option<String>,
    /// The result the step returns, when it is not `()`.
    pub ret: Option<String>,
}

impl Cell {
    /// Plain text: `write(0, 2): write d[0] = 2 (l.5)`, `read d[1] → 2 (l.11) ⇒ (1, 2)`.
    pub(crate) fn plain(&self) -> String {
        let mut s = String::new();
        if let Some(call) = &self.call {
            s.push_str(call);
            s.push_str(": ");
        }
        s.push_str(&self.access);
        if let Some(line) = self.line {
            s.push_str(&format!(" (l.{line})"));
        }
        if let Some(ret) = &self.ret {
            s.push_str(&format!(" ⇒ {ret}"));
        }
        s
    }
}

/// One row: the step, the column of the thread that moves, and its cell.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Row {
    pub step: usize,
    /// Index into [`Columns::threads`].
    pub column: usize,
    pub cell: Cell,
    /// The label of the race this step decides, if it leaves a CDRS node.
    pub race: Option<Label>,
}

/// The witness laid out by thread.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Columns {
    /// The threads that move, in increasing order.
    pub threads: Vec<usize>,
    pub rows: Vec<Row>,
}

impl Columns {
    /// Lays out `trace`.
    pub(crate) fn new(trace: &[TraceStep]) -> Columns {
        let mut threads: Vec<usize> = trace.iter().map(|s| s.thread).collect();
        threads.sort_unstable();
        threads.dedup();
        let rows = trace
            .iter()
            .map(|s| Row {
                step: s.step,
                column: threads.binary_search(&s.thread).unwrap_or_default(),
                cell: Cell {
                    access: access(s),
                    line: s.line,
                    call: s.call.clone(),
                    ret: s.ret.clone().filter(|r| r != "()"),
                },
                race: s.race,
            })
            .collect();
        Columns { threads, rows }
    }

    /// Whether any step decides a race (then a `race` column is worth drawing).
    pub(crate) fn has_races(&self) -> bool {
        self.rows.iter().any(|r| r.race.is_some())
    }
}

/// An access as code: writes as assignments, reads as `loc → value`, others by kind.
pub(crate) fn access(step: &TraceStep) -> String {
    let with_value = |head: String| {
        if step.value.is_empty() {
            head
        } else {
            format!("{head} {}", step.value)
        }
    };
    // Under weak memory, what a sequentially consistent run would not have done.
    let stale = |text: String, note: &str| {
        if step.stale {
            format!("{text} ({note})")
        } else {
            text
        }
    };
    match step.event.as_str() {
        // The kind is spelled out: the reader should not have to infer a race's kind from `=`.
        "write" => stale(
            format!("write {} = {}", step.target, step.value),
            "before a later store",
        ),
        "read" => stale(format!("read {} → {}", step.target, step.value), "stale"),
        "local" if !step.value.is_empty() => step.value.clone(),
        "local" => "local step".to_string(),
        _ if step.target.is_empty() => with_value(step.event.clone()),
        _ => with_value(format!("{} {}", step.event, step.target)),
    }
}
