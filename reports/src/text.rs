//! The terminal rendering: verdict, tree counts, each CDRS with its races and carets under the
//! racing code, the witness by thread, its history as a timeline, why it fails, and how to
//! replay it.

use std::fmt::Write;

use fgvt_labeling::labels::Label;

use crate::build::count_text;
use crate::columns::Columns;
use crate::model::{
    CdrsReport, DataRaceReport, LocalizeReport, RaceNodeReport, RaceReport, Verdict, WitnessReport,
};
use crate::model::{HistoryReport, TraceStep};
use crate::style::{outcome_words, Style};
use crate::timeline::timeline;

/// Renders `report` for a terminal; ANSI colours only when `color` is true.
pub fn render_text(report: &LocalizeReport, color: bool) -> String {
    let st = Style::new(color);
    let mut out = String::new();
    header(&mut out, report, st);
    for cdrs in &report.cdrs {
        out.push('\n');
        cdrs_section(&mut out, report, cdrs, st);
    }
    if let Some(run) = &report.failing_run {
        let _ = writeln!(out, "\n{}", st.bold("A failing run (no CDRS to show):"));
        witness(&mut out, run, st);
    }
    if let Some(memory) = &report.memory {
        let lines = crate::memory::memory_lines(memory);
        if !lines.is_empty() {
            let _ = writeln!(
                out,
                "\n{}",
                st.bold("Weak memory (the C++20 / Rust model):")
            );
            for line in lines {
                let _ = writeln!(out, "  {line}");
            }
        }
    }
    if !report.notes.is_empty() {
        out.push('\n');
        for note in &report.notes {
            let _ = writeln!(out, "{} {note}", st.yellow("note:"));
        }
    }
    out
}

fn header(out: &mut String, r: &LocalizeReport, st: Style) {
    let verdict = match r.verdict {
        Verdict::NotLinearizable => st.bold_red("NOT LINEARIZABLE"),
        Verdict::Linearizable => st.bold_green("LINEARIZABLE"),
        Verdict::Inconclusive => st.bold_yellow("INCONCLUSIVE"),
    };
    let partial = r
        .partial
        .as_deref()
        .map(|p| match crate::build::partial_text(p) {
            text if p == fgvt_tree::Limit::Interrupted.name() => {
                format!(" — {} (partial)", st.bold_yellow(&text))
            }
            text => format!(" (partial: {text})"),
        })
        .unwrap_or_default();
    let _ = writeln!(
        out,
        "{} ({}): {verdict}{partial}",
        st.bold(&r.test.object),
        r.test.file
    );
    let _ = writeln!(
        out,
        "  spec: {} · reproduce: {}",
        r.test.spec,
        st.cyan(&r.test.command)
    );
    if let Some(symptom) = &r.symptom {
        let _ = writeln!(out, "  what went wrong: {}", st.bold(symptom));
    }
    let t = &r.tree;
    let n = count_text;
    let _ = writeln!(
        out,
        "tree: {} nodes ({} stored, {} distinct states), depth {}",
        n(t.nodes),
        t.graph_nodes,
        t.distinct_states,
        t.max_depth
    );
    // Cut leaves exist only in a partial tree: a complete one's line stays as it always was.
    let cut = if t.cut_leaves > 0 {
        format!(", cut {}", n(t.cut_leaves))
    } else {
        String::new()
    };
    let _ = writeln!(
        out,
        "leaves: {} — {} passing, {} failing, {} unknown (complete {}, stuck {}, fault {}, bounded {}{cut})",
        n(t.leaves),
        st.green(&n(t.passing_leaves)),
        st.red(&n(t.failing_leaves)),
        n(t.unknown_leaves),
        n(t.complete_leaves),
        n(t.stuck_leaves),
        n(t.fault_leaves),
        n(t.bounded_leaves)
    );
    let labels: Vec<String> = Label::ALL
        .iter()
        .map(|&l| format!("{} {}", st.bold(l.name()), n(r.labels.get(l))))
        .collect();
    let _ = writeln!(out, "labels: {}", labels.join(" · "));
    if r.verdict == Verdict::NotLinearizable {
        let shown = if r.cdrs.len() < r.cdrs_found {
            format!(" (showing {})", r.cdrs.len())
        } else {
            String::new()
        };
        let sampled = if r.truncated { ", sampled" } else { "" };
        let _ = writeln!(
            out,
            "CDRS: {} found{shown}{sampled}, pattern {}",
            r.cdrs_found, r.pattern
        );
    }
}

fn cdrs_section(out: &mut String, r: &LocalizeReport, c: &CdrsReport, st: Style) {
    let _ = writeln!(
        out,
        "{} {}  {} failing {}",
        st.bold(&format!("CDRS {} of {}:", c.rank, r.cdrs_found)),
        st.bold(&c.pattern),
        st.red(&count_text(c.failing_leaves)),
        if c.failing_leaves == 1 {
            "leaf"
        } else {
            "leaves"
        }
    );
    for (i, node) in c.nodes.iter().enumerate() {
        race_node(out, i + 1, node, st);
    }
    if let Some(line) = crate::memory::decided_by_line(&c.decided_by) {
        let _ = writeln!(out, "  {}", st.bold(&line));
    }
    witness(out, &c.witness, st);
}

fn race_node(out: &mut String, index: usize, node: &RaceNodeReport, st: Style) {
    let _ = writeln!(
        out,
        "  race {index}: {} at step {} (node {})",
        st.bold(node.label.name()),
        node.step,
        node.node
    );
    let gutter = node
        .races
        .iter()
        .filter_map(|r| r.location.as_ref().map(|l| l.line.to_string().len()))
        .max()
        .unwrap_or(1);
    for race in &node.races {
        let mark = if race.taken {
            st.bold("▶")
        } else {
            " ".to_string()
        };
        let _ = writeln!(out, "    {mark} {}", race_line(race, st));
        if let Some(loc) = &race.location {
            let pad = " ".repeat(gutter);
            let _ = writeln!(out, "      {:>gutter$} | {}", loc.line, race.line_text);
            let caret = format!("{}{}", " ".repeat(loc.column - 1), "^".repeat(loc.width));
            let _ = writeln!(out, "      {pad} | {}", st.red(&caret));
        }
    }
}

/// `T1 write d[0] = 2 at pair_snapshot.fgv:5:9 `d[i] = v;` → MIX (some runs fail)`.
fn race_line(race: &RaceReport, st: Style) -> String {
    let mut s = format!("T{} {} {}", race.thread, race.event, race.target);
    // Reads show the value they see, the others the value they store.
    if !race.value.is_empty() {
        let sep = if race.event == "read" { "→" } else { "=" };
        let _ = write!(s, " {sep} {}", race.value);
    }
    s.push_str(&crate::memory::access_words(
        race.order.as_deref(),
        race.memory.as_ref(),
    ));
    if let Some(loc) = &race.location {
        let _ = write!(s, " at {loc} `{}`", race.snippet);
    }
    let (_, meaning) = outcome_words(race.outcome);
    let _ = write!(s, " → {} ({meaning})", st.outcome(race.outcome));
    if race.taken {
        s.push_str(&st.dim("  [witness]"));
    }
    s
}

/// A data race a witness ends at: the message, each access with its line and code, and what
/// would order them.
fn data_race(out: &mut String, message: &str, race: &DataRaceReport, st: Style) {
    let _ = writeln!(out, "  {} {message}", st.bold_red("fault:"));
    for access in [&race.first, &race.second] {
        let at = access
            .location
            .as_ref()
            .map(|l| format!(" at {l} `{}`", access.snippet))
            .unwrap_or_default();
        let _ = writeln!(out, "    T{} {}{at}", access.thread, access.access);
    }
    if !race.hint.is_empty() {
        let _ = writeln!(out, "    {}", race.hint);
    }
}

fn witness(out: &mut String, w: &WitnessReport, st: Style) {
    let steps = crate::build::counted(w.trace.len() as u64, "step", "steps");
    let _ = writeln!(out, "  witness ({steps}, ends {}):", w.ending());
    for line in columns_text(&Columns::new(&w.trace), st) {
        let _ = writeln!(out, "    {line}");
    }
    if let Some(fault) = &w.fault {
        match &fault.race {
            Some(race) => data_race(out, &fault.message, race, st),
            None => {
                let at = fault
                    .location
                    .as_ref()
                    .map(|l| format!(" at {l}"))
                    .unwrap_or_default();
                let _ = writeln!(out, "  {} {}{at}", st.bold_red("fault:"), fault.message);
            }
        }
    }
    for wait in &w.waiting {
        let at = wait
            .location
            .as_ref()
            .map(|l| format!(" at {l} `{}`", wait.snippet))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "  {} T{} {} {}{at}",
            st.bold_red("stuck:"),
            wait.thread,
            wait.op,
            wait.reason
        );
    }
    let _ = writeln!(
        out,
        "  history{}:",
        if w.history.stuck { " (stuck)" } else { "" }
    );
    for (thread, line) in timeline(&w.history) {
        let _ = writeln!(out, "    {thread} {line}");
    }
    let _ = writeln!(out, "    {}", st.dim(&w.history.text));
    // A data race is its own explanation, shown above with both accesses.
    if let Some(explanation) = w.explanation.as_ref().filter(|_| !w.ends_in_data_race()) {
        let _ = writeln!(out, "  why it is not linearizable:");
        for line in explanation.text.lines() {
            let _ = writeln!(out, "    {line}");
        }
    }
    let _ = writeln!(out, "  replay: {}", st.cyan(&w.replay));
}

/// One path as text: the per-thread columns (Fig. 4) and, when given, its coarse history as a
/// timeline (Fig. 3). Used by `fgvt explore --schedule`.
pub fn render_path_text(
    trace: &[TraceStep],
    history: Option<&HistoryReport>,
    color: bool,
) -> String {
    let st = Style::new(color);
    let mut out = String::new();
    for line in columns_text(&Columns::new(trace), st) {
        let _ = writeln!(out, "{line}");
    }
    if let Some(history) = history {
        let _ = writeln!(
            out,
            "history{}:",
            if history.stuck { " (stuck)" } else { "" }
        );
        for (thread, line) in timeline(history) {
            let _ = writeln!(out, "  {thread} {line}");
        }
        let _ = writeln!(out, "  {}", st.dim(&history.text));
    }
    out
}

/// One run of `tree` as text, as `fgvt explore --schedule` prints it: the per-thread columns of
/// its `steps` (and its history, when it ends at a leaf), its schedule, and what its `end` is
/// (a leaf's kind, fault and bound, then `verdict`'s line when given; else how many leaves lie
/// below). Rust tests print their replays with it too.
pub fn render_run_text(
    tree: &fgvt_tree::Tree,
    steps: &[&fgvt_tree::Event],
    end: fgvt_tree::NodeId,
    sources: &fgvt_tree::SourceMap,
    verdict: Option<&str>,
    color: bool,
) -> String {
    let trace = crate::build::trace_steps(steps, sources, |_| None);
    let leaf = tree.leaf(end);
    // The run's own history: the leaf keeps its first path's.
    let history =
        leaf.map(|l| crate::build::history_data(&l.history.retraced(steps.iter().copied())));
    let mut out = render_path_text(&trace, history.as_ref(), color);
    let schedule: Vec<String> = steps.iter().map(|e| e.choice().to_string()).collect();
    let _ = writeln!(out, "schedule: {}", schedule.join(","));
    let Some(leaf) = leaf else {
        let below = count_text(tree.unfolded(end).leaves());
        let _ = writeln!(out, "(not a leaf: {below} leaves below)");
        return out;
    };
    let kind = crate::build::leaf_kind(leaf);
    let _ = writeln!(out, "leaf: {kind}");
    if let Some(f) = &leaf.fault {
        let at = (f.span.and_then(|s| sources.locate(s)))
            .map(|l| format!(" at {l}"))
            .unwrap_or_default();
        let _ = writeln!(out, "fault: {}{at}", f.message);
    }
    if let Some(bound) = &leaf.bound {
        let limit = crate::build::option(bound.limit());
        let _ = writeln!(out, "{kind}: {bound} ({limit})");
    }
    if let Some(verdict) = verdict {
        let _ = writeln!(out, "{verdict}");
    }
    out
}

/// The per-thread table as aligned text lines.
fn columns_text(cols: &Columns, st: Style) -> Vec<String> {
    let races = cols.has_races();
    let mut header: Vec<String> = vec!["step".into()];
    header.extend(cols.threads.iter().map(|t| format!("T{t}")));
    if races {
        header.push("race".into());
    }
    let rows: Vec<Vec<String>> = cols
        .rows
        .iter()
        .map(|row| {
            let mut cells = vec![String::new(); header.len()];
            cells[0] = row.step.to_string();
            cells[1 + row.column] = row.cell.plain();
            if let (true, Some(label)) = (races, row.race) {
                cells[header.len() - 1] = label.name().to_string();
            }
            cells
        })
        .collect();
    let widths: Vec<usize> = (0..header.len())
        .map(|i| {
            rows.iter()
                .map(|r| r[i].chars().count())
                .chain([header[i].chars().count()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let line = |cells: &[String], paint: &dyn Fn(usize, &str) -> String| {
        let parts: Vec<String> = cells
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let pad = widths[i] - c.chars().count();
                // Pad outside the escapes so colour never shifts the columns.
                let painted = paint(i, c);
                if i == 0 {
                    format!("{}{painted}", " ".repeat(pad))
                } else {
                    format!("{painted}{}", " ".repeat(pad))
                }
            })
            .collect();
        parts.join(" │ ").trim_end().to_string()
    };
    let last = header.len() - 1;
    let mut lines = vec![line(&header, &|_, c| st.bold(c))];
    let rule: Vec<String> = widths.iter().map(|&w| "─".repeat(w)).collect();
    lines.push(rule.join("─┼─"));
    for row in &rows {
        lines.push(line(row, &|i, c| {
            if races && i == last {
                st.bold(c)
            } else {
                c.to_string()
            }
        }));
    }
    lines
}
