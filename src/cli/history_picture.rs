//! `check-history --html`: a checked history as a [`HistoryPicture`] for the HTML page.

use std::collections::HashMap;

use fgvt_checker::{History, Outcome, Verdict};
use fgvt_reports::{HistoryPicture, PictureOp, Role};
use fgvt_tree::Lane;

/// The picture of `history` as `outcome` judged it: for a violation, the failing (sub-)history
/// with its longest linearizable prefix and the operations that cannot come next; otherwise
/// every operation, numbered in the witness order when there is one.
pub fn picture(title: String, history: &History, outcome: &Outcome) -> HistoryPicture {
    let operations = history.operations().unwrap_or_default();
    let (shown, mut roles, verdict, explanation) = match &outcome.verdict {
        Verdict::NotLinearizable(e) => {
            let notes = e.obstacle_notes();
            // What happened after the conflict does not explain it: draw the operations
            // called before the last of the prefix and the obstacles returned.
            let returned = |op: usize| {
                operations
                    .get(op)
                    .map(|o| o.ret.as_ref().map_or(o.call_index, |r| r.index))
            };
            let horizon = e
                .prefix
                .iter()
                .map(|s| s.op.op)
                .chain(notes.iter().map(|(op, _)| *op))
                .filter_map(returned)
                .max()
                .unwrap_or(usize::MAX);
            let shown: Vec<usize> = e
                .operations
                .iter()
                .map(|o| o.op)
                .filter(|&op| operations.get(op).is_some_and(|o| o.call_index <= horizon))
                .collect();
            let mut roles: HashMap<usize, Role> = notes
                .into_iter()
                .map(|(op, why)| (op, Role::Obstacle(why)))
                .collect();
            roles.extend(positions(e.prefix.iter().map(|s| s.op.op)));
            (
                shown,
                roles,
                format!("NOT linearizable: {}", e.headline()),
                Some(e.to_string()),
            )
        }
        Verdict::Linearizable { order } => (
            (0..operations.len()).collect(),
            positions(order.iter().copied()).collect(),
            "linearizable: the numbers give a witness order".into(),
            None,
        ),
        Verdict::Unknown => (
            (0..operations.len()).collect(),
            HashMap::new(),
            "unknown: the check timed out".into(),
            None,
        ),
    };
    // The time axis counts only the events of the operations shown, so that a partition of a
    // long history is drawn compactly.
    let mut times: Vec<usize> = shown
        .iter()
        .filter_map(|&op| operations.get(op))
        .flat_map(|o| std::iter::once(o.call_index).chain(o.ret.as_ref().map(|r| r.index)))
        .collect();
    times.sort_unstable();
    times.dedup();
    let at = |t: usize| times.binary_search(&t).unwrap_or_else(|i| i);
    let ops = shown
        .iter()
        .filter_map(|&op| {
            let o = operations.get(op)?;
            // Every operation not given a role above is an other one.
            let role = roles.remove(&op).unwrap_or(Role::Other);
            // An operation that never returned has no result to show: it is marked pending,
            // not said to have returned "pending".
            let label = match &o.ret {
                Some(r) => {
                    let result = r.value.as_ref().map_or("?".to_string(), |v| v.to_string());
                    format!("{} → {result}", o.call)
                }
                None => format!("{} (pending)", o.call),
            };
            Some(PictureOp {
                lane: Lane(o.thread).to_string(),
                label,
                start: at(o.call_index),
                end: o.ret.as_ref().map(|r| at(r.index)),
                role,
            })
        })
        .collect();
    HistoryPicture {
        title,
        verdict,
        operations: ops,
        explanation,
    }
}

/// Each operation of a linearization with its position in it.
fn positions(order: impl Iterator<Item = usize>) -> impl Iterator<Item = (usize, Role)> {
    order.enumerate().map(|(i, op)| (op, Role::Linearized(i)))
}
