//! A coarse history as a timeline (Fig. 3 of the FGVT paper): one line per thread, each
//! operation an interval from its call to its return.
//!
//! ```text
//! T0 |--write(0, 2)--|   |--write(1, 2)--|
//! T1        |--read() ⇒ (1, 2)-----------------|
//! ```
//!
//! Every history event gets a column position, left to right in real-time order; positions are
//! spread just enough for each interval to hold its label, so overlap on the page means overlap
//! in time.

use crate::model::{HistoryKind, HistoryReport};

/// Dashes on each side of an interval's label.
const PAD: usize = 2;

struct Interval {
    lane: String,
    start: usize,
    /// `None` for a pending operation: drawn open to the right.
    end: Option<usize>,
    label: String,
}

/// The timeline: `(lane, line)` per lane — `init`, the threads in order, `final` — with the
/// lane names padded to one width. Empty for an empty history.
pub(crate) fn timeline(history: &HistoryReport) -> Vec<(String, String)> {
    let intervals = intervals(history);
    if intervals.is_empty() {
        return Vec::new();
    }
    let n = history.events.len();
    // x[i]: column of history event i. Every constraint points backwards (a return is after its
    // call), so one left-to-right pass finds the smallest positions.
    let mut x = vec![0usize; n];
    for i in 1..n {
        x[i] = x[i - 1] + 2;
        for iv in intervals.iter().filter(|iv| iv.end == Some(i)) {
            x[i] = x[i].max(x[iv.start] + width(&iv.label) + 2 * PAD + 1);
        }
    }
    let open_end = |iv: &Interval| x[iv.start] + width(&iv.label) + 2 * PAD + 2;
    let total = intervals
        .iter()
        .map(|iv| iv.end.map_or_else(|| open_end(iv), |e| x[e]))
        .chain([x[n - 1]])
        .max()
        .unwrap_or(0)
        + 1;
    let mut lanes: Vec<&str> = intervals.iter().map(|iv| iv.lane.as_str()).collect();
    lanes.sort_by_key(|l| lane_order(l));
    lanes.dedup();
    let name_width = lanes.iter().map(|l| width(l)).max().unwrap_or(0);
    lanes
        .into_iter()
        .map(|t| {
            let mut line = vec![' '; total];
            for iv in intervals.iter().filter(|iv| iv.lane == t) {
                let (from, to) = (x[iv.start], iv.end.map_or_else(|| open_end(iv), |e| x[e]));
                draw(&mut line, from, to, &iv.label, iv.end.is_some());
            }
            let text: String = line.into_iter().collect();
            (format!("{t:<name_width$}"), text.trim_end().to_string())
        })
        .collect()
}

/// Where a lane goes, top to bottom: `init`, then `T0`, `T1`, … in order, then `final`.
pub(crate) fn lane_order(lane: &str) -> (u8, usize) {
    match lane {
        "init" => (0, 0),
        "final" => (2, 0),
        t => (1, t.trim_start_matches('T').parse().unwrap_or(usize::MAX)),
    }
}

fn width(s: &str) -> usize {
    s.chars().count()
}

/// Draws `|--label--|` from `from` to `to` (inclusive), or `|--label-->` when still open.
fn draw(line: &mut [char], from: usize, to: usize, label: &str, closed: bool) {
    line[from] = '|';
    line[to] = if closed { '|' } else { '>' };
    for c in line.iter_mut().take(to).skip(from + 1) {
        *c = '-';
    }
    let inner = to - from - 1;
    let start = from + 1 + (inner - width(label)) / 2;
    for (i, c) in label.chars().enumerate() {
        line[start + i] = c;
    }
}

fn intervals(history: &HistoryReport) -> Vec<Interval> {
    let mut out: Vec<Interval> = Vec::new();
    for (i, item) in history.events.iter().enumerate() {
        match item.kind {
            HistoryKind::Call => out.push(Interval {
                lane: item.lane.clone(),
                start: i,
                end: None,
                label: item.call.clone(),
            }),
            HistoryKind::Return => {
                let open = out
                    .iter_mut()
                    .rev()
                    .find(|iv| iv.lane == item.lane && iv.end.is_none());
                if let Some(iv) = open {
                    iv.end = Some(i);
                    match item.value.as_deref() {
                        Some("()") => {}
                        Some(v) => iv.label = format!("{} ⇒ {v}", iv.label),
                        None => iv.label = format!("{} ⇒ ?", iv.label),
                    }
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::HistoryItem;

    fn item(kind: HistoryKind, thread: usize, call: &str, value: Option<&str>) -> HistoryItem {
        HistoryItem {
            kind,
            thread,
            lane: format!("T{thread}"),
            call: call.into(),
            value: value.map(Into::into),
        }
    }

    #[test]
    fn overlapping_operations_overlap_on_the_page() {
        use HistoryKind::*;
        let history = HistoryReport {
            text: String::new(),
            stuck: false,
            events: vec![
                item(Call, 0, "write(0, 2)", None),
                item(Call, 1, "read()", None),
                item(Return, 0, "write(0, 2)", Some("()")),
                item(Call, 0, "write(1, 2)", None),
                item(Return, 0, "write(1, 2)", Some("()")),
                item(Return, 1, "read()", Some("(1, 2)")),
                item(Call, 0, "get()", None),
            ],
        };
        let lines = timeline(&history);
        let text: Vec<String> = lines.iter().map(|(t, l)| format!("{t} {l}")).collect();
        assert_eq!(
            text,
            [
                "T0 |--write(0, 2)--| |--write(1, 2)--|   |--get()--->",
                "T1   |---------read() ⇒ (1, 2)---------|",
            ]
        );
    }
}
