//! The Markdown rendering: a self-contained bug ticket (GitHub-flavoured tables and fences).

use std::fmt::Write;

use fgvt_labeling::labels::Label;

use crate::build::count_text;
use crate::columns::Columns;
use crate::model::{
    CdrsReport, HistoryKind, HistoryReport, LocalizeReport, RaceNodeReport, RaceReport, Verdict,
    WitnessReport,
};
use crate::style::outcome_words;

/// Renders `report` as Markdown, symptom first: what went wrong and where, the top CDRS with
/// its races, code excerpts, witness by thread, history, why it fails and how to replay it;
/// then the details (counts, the other CDRS) and the command that reproduces it all.
pub fn render_markdown(report: &LocalizeReport) -> String {
    let mut out = String::new();
    let r = report;
    let verdict = match r.verdict {
        Verdict::NotLinearizable => "is not linearizable",
        Verdict::Linearizable => "is linearizable",
        Verdict::Inconclusive => "is inconclusive",
    };
    let _ = writeln!(out, "# `{}` {verdict}\n", inline(&r.test.object));
    // A ticket opens with the symptom, then the race that decides it with its code; the
    // counts and the other CDRS come after, for whoever digs in.
    if let Some(symptom) = &r.symptom {
        let _ = writeln!(out, "**What went wrong:** {}.\n", escape_text(symptom));
    }
    if let Some(top) = r.cdrs.first() {
        let _ = writeln!(
            out,
            "**Where:** the races of CDRS 1 (`{}`, {} of {} found): {}.\n",
            top.pattern,
            1,
            r.cdrs_found,
            statements(top).join(", ")
        );
    }
    if let Some(drawing) = &r.drawing {
        let _ = writeln!(
            out,
            "**Interleaving tree:** [{}]({}) (labeled, CDRS highlighted).\n",
            escape_text(drawing),
            drawing.replace(' ', "%20")
        );
    }
    if let Some(top) = r.cdrs.first() {
        cdrs_section(&mut out, top);
    }
    if let Some(run) = &r.failing_run {
        let _ = writeln!(out, "## A failing run\n");
        let _ = writeln!(
            out,
            "No race decides the outcome (no CDRS), so here is one failing execution.\n"
        );
        witness(&mut out, run);
    }
    if let Some(memory) = &r.memory {
        let lines = crate::memory::memory_lines(memory);
        if !lines.is_empty() {
            let _ = writeln!(out, "## Weak memory\n");
            for line in lines {
                let _ = writeln!(out, "- {}", escape_text(&line));
            }
            out.push('\n');
        }
    }
    let _ = writeln!(out, "## Details\n");
    summary(&mut out, r);
    if !r.cdrs.is_empty() {
        cdrs_table(&mut out, r);
    }
    for c in r.cdrs.iter().skip(1) {
        cdrs_section(&mut out, c);
    }
    let _ = writeln!(out, "## Reproduce\n");
    out.push_str(&fenced("sh", &r.test.command));
    out
}

/// A CDRS's racing statements as inline code with their places: `` `f.fgv:8` `d[i] = v` ``.
fn statements(c: &CdrsReport) -> Vec<String> {
    c.statements
        .iter()
        .map(|s| {
            format!(
                "{} `{}`",
                code(&format!("{}:{}", s.location.file, s.location.line)),
                inline(&statement_text(&s.snippet))
            )
        })
        .collect()
}

/// A source line as a statement for a table cell: no trailing comment, no final `;` (cells
/// join statements, and `x = 1;;` reads as a typo).
fn statement_text(line: &str) -> String {
    let code = line.split("//").next().unwrap_or(line).trim();
    code.trim_end_matches(';').trim_end().to_string()
}

fn summary(out: &mut String, r: &LocalizeReport) {
    let t = &r.tree;
    let _ = writeln!(
        out,
        "- **Test:** `{}` (object `{}`, spec `{}`)",
        inline(&r.test.file),
        inline(&r.test.object),
        inline(&r.test.spec)
    );
    let partial = r
        .partial
        .as_ref()
        .map(|p| match crate::build::partial_text(p) {
            option if option.starts_with("--") => format!(" (partial: `{option}` was hit)"),
            text if p == fgvt_tree::Limit::Interrupted.name() => {
                format!(" (**{text}**: partial)")
            }
            limit => format!(" (partial: {limit} was hit)"),
        })
        .unwrap_or_default();
    let _ = writeln!(
        out,
        "- **Verdict:** {}{partial}: {} of {} interleavings fail",
        r.verdict.name(),
        count_text(t.failing_leaves),
        count_text(t.passing_leaves.saturating_add(t.failing_leaves))
    );
    let _ = writeln!(out, "- **CDRS pattern:** `{}`", inline(&r.pattern));
    for note in &r.notes {
        let _ = writeln!(out, "- **Note:** {}", escape_text(note));
    }
    out.push('\n');
    let _ = writeln!(out, "| tree | count |\n| --- | ---: |");
    let rows = [
        ("nodes (unfolded)", t.nodes),
        ("distinct states", t.distinct_states),
        ("leaves", t.leaves),
        ("passing leaves", t.passing_leaves),
        ("failing leaves", t.failing_leaves),
        ("unknown leaves", t.unknown_leaves),
        ("stuck leaves", t.stuck_leaves),
        ("fault leaves", t.fault_leaves),
        ("bounded leaves", t.bounded_leaves),
        ("cut leaves", t.cut_leaves),
        ("max depth", t.max_depth),
    ];
    for (name, n) in rows {
        // Cut leaves exist only in a partial tree.
        if name == "cut leaves" && n == 0 {
            continue;
        }
        let _ = writeln!(out, "| {name} | {} |", count_text(n));
    }
    let labels: Vec<String> = Label::ALL
        .iter()
        .map(|&l| format!("{} {}", l.name(), count_text(r.labels.get(l))))
        .collect();
    let _ = writeln!(out, "\nLabels (unfolded tree): {}\n", labels.join(", "));
}

fn cdrs_table(out: &mut String, r: &LocalizeReport) {
    let sampled = if r.truncated { " (sampled)" } else { "" };
    let _ = writeln!(out, "## Critical data race sequences{sampled}\n");
    let _ = writeln!(out, "| # | pattern | failing leaves | racing statements |");
    let _ = writeln!(out, "| ---: | --- | ---: | --- |");
    for c in &r.cdrs {
        let statements = statements(c);
        let _ = writeln!(
            out,
            "| {} | `{}` | {} | {} |",
            c.rank,
            c.pattern,
            count_text(c.failing_leaves),
            cell(&statements.join(", "))
        );
    }
    out.push('\n');
}

fn cdrs_section(out: &mut String, c: &CdrsReport) {
    let _ = writeln!(out, "## CDRS {}: `{}`\n", c.rank, c.pattern);
    let _ = writeln!(
        out,
        "{} failing {} of the interleaving tree {} this sequence of races.\n",
        count_text(c.failing_leaves),
        if c.failing_leaves == 1 {
            "leaf"
        } else {
            "leaves"
        },
        if c.failing_leaves == 1 { "has" } else { "have" }
    );
    for (i, node) in c.nodes.iter().enumerate() {
        race_node(out, i + 1, node);
    }
    if let Some(line) = crate::memory::decided_by_line(&c.decided_by) {
        let _ = writeln!(out, "**{}**\n", escape_text(&line));
    }
    witness(out, &c.witness);
}

fn race_node(out: &mut String, index: usize, node: &RaceNodeReport) {
    let _ = writeln!(
        out,
        "### Race {index}: {} (step {})\n",
        node.label.name(),
        node.step
    );
    for race in &node.races {
        let _ = writeln!(out, "- {}", race_item(race));
    }
    out.push('\n');
    let excerpt = excerpt(&node.races);
    if !excerpt.is_empty() {
        out.push_str(&fenced("text", &excerpt));
        out.push('\n');
    }
}

/// `**T1** write `d[0]` = `2` at `pair.fgv:5:9` → **MIX** (some runs fail)`.
fn race_item(race: &RaceReport) -> String {
    let mut s = format!(
        "**T{}** {} `{}`",
        race.thread,
        race.event,
        inline(&race.target)
    );
    if !race.value.is_empty() {
        let sep = if race.event == "read" { "→" } else { "=" };
        let _ = write!(s, " {sep} `{}`", inline(&race.value));
    }
    s.push_str(&inline(&crate::memory::access_words(
        race.order.as_deref(),
        race.memory.as_ref(),
    )));
    if let Some(loc) = &race.location {
        let _ = write!(s, " at {} {}", code(&loc.to_string()), code(&race.snippet));
    }
    let (word, meaning) = outcome_words(race.outcome);
    let _ = write!(s, " → **{word}** ({meaning})");
    if race.taken {
        s.push_str(" — *taken by the witness*");
    }
    s
}

/// The racing lines with line numbers and a caret under each racing expression.
fn excerpt(races: &[RaceReport]) -> String {
    let located: Vec<(&RaceReport, &crate::model::SourceLocation)> = races
        .iter()
        .filter_map(|r| r.location.as_ref().map(|l| (r, l)))
        .collect();
    let gutter = located
        .iter()
        .map(|(_, l)| l.line.to_string().len())
        .max()
        .unwrap_or(1);
    let mut s = String::new();
    let mut file = None;
    for (race, loc) in located {
        if file != Some(&loc.file) {
            let _ = writeln!(s, "{}", loc.file);
            file = Some(&loc.file);
        }
        let (word, _) = outcome_words(race.outcome);
        let _ = writeln!(s, "{:>gutter$} | {}", loc.line, race.line_text);
        let _ = writeln!(
            s,
            "{} | {}{} T{} {} → {word}",
            " ".repeat(gutter),
            " ".repeat(loc.column - 1),
            "^".repeat(loc.width),
            race.thread,
            race.event
        );
    }
    s
}

fn witness(out: &mut String, w: &WitnessReport) {
    let _ = writeln!(out, "### Witness\n");
    let _ = writeln!(
        out,
        "A failing execution ({}, ends {}), one column per thread:\n",
        crate::build::counted(w.trace.len() as u64, "step", "steps"),
        w.ending()
    );
    let cols = Columns::new(&w.trace);
    let races = cols.has_races();
    let mut header = vec!["step".to_string()];
    header.extend(cols.threads.iter().map(|t| format!("T{t}")));
    if races {
        header.push("race".into());
    }
    let _ = writeln!(out, "| {} |", header.join(" | "));
    let rule: Vec<&str> = header
        .iter()
        .enumerate()
        .map(|(i, _)| if i == 0 { "---:" } else { "---" })
        .collect();
    let _ = writeln!(out, "| {} |", rule.join(" | "));
    for row in &cols.rows {
        let mut cells = vec![String::new(); header.len()];
        cells[0] = row.step.to_string();
        let c = &row.cell;
        let mut text = String::new();
        if let Some(call) = &c.call {
            let _ = write!(text, "{}: ", code(call));
        }
        text.push_str(&code(&c.access));
        if let Some(line) = c.line {
            let _ = write!(text, " (l.{line})");
        }
        if let Some(ret) = &c.ret {
            let _ = write!(text, " ⇒ {}", code(ret));
        }
        cells[1 + row.column] = cell(&text);
        if let (true, Some(label)) = (races, row.race) {
            cells[header.len() - 1] = format!("**{}**", label.name());
        }
        let _ = writeln!(out, "| {} |", cells.join(" | "));
    }
    out.push('\n');
    if let Some(fault) = &w.fault {
        match &fault.race {
            Some(race) => {
                let _ = writeln!(out, "**Fault:** {}\n", escape_text(&fault.message));
                for access in [&race.first, &race.second] {
                    let at = access
                        .location
                        .as_ref()
                        .map(|l| format!(" at {}: {}", code(&l.to_string()), code(&access.snippet)))
                        .unwrap_or_default();
                    let _ = writeln!(out, "- T{}'s {}{at}", access.thread, access.access);
                }
                if !race.hint.is_empty() {
                    let _ = writeln!(out, "\n{}", escape_text(&capitalized(&race.hint)));
                }
                out.push('\n');
            }
            None => {
                let at = fault
                    .location
                    .as_ref()
                    .map(|l| format!(" at {}", code(&l.to_string())))
                    .unwrap_or_default();
                let _ = writeln!(out, "**Fault:** {}{at}\n", escape_text(&fault.message));
            }
        }
    }
    for wait in &w.waiting {
        let at = wait
            .location
            .as_ref()
            .map(|l| format!(" at `{l}`"))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "**Stuck:** T{} `{}` {}{at}\n",
            wait.thread,
            escape_text(&wait.op),
            escape_text(&wait.reason)
        );
    }
    let _ = writeln!(
        out,
        "### History{}\n",
        if w.history.stuck { " (stuck)" } else { "" }
    );
    history_table(out, &w.history);
    // A data race is its own explanation, shown above with both accesses.
    if let Some(explanation) = w.explanation.as_ref().filter(|_| !w.ends_in_data_race()) {
        let _ = writeln!(out, "### Why it is not linearizable\n");
        out.push_str(&fenced("text", &explanation.text));
        out.push('\n');
    }
    let _ = writeln!(out, "### Replay\n");
    out.push_str(&fenced("sh", &w.replay));
    out.push('\n');
}

/// A fenced code block whose fence is longer than any backtick run inside.
fn fenced(info: &str, body: &str) -> String {
    let fence = "`".repeat(longest_backtick_run(body).max(2) + 1);
    let body = body.trim_end_matches('\n');
    format!("{fence}{info}\n{body}\n{fence}\n")
}

/// An inline code span that survives backticks in its content.
fn code(text: &str) -> String {
    let ticks = "`".repeat(longest_backtick_run(text) + 1);
    let pad = if text.starts_with('`') || text.ends_with('`') {
        " "
    } else {
        ""
    };
    format!("{ticks}{pad}{text}{pad}{ticks}")
}

/// Text for inside a single-backtick span: backticks would end it early.
fn inline(text: &str) -> String {
    text.replace('`', "'")
}

fn longest_backtick_run(text: &str) -> usize {
    text.split(|c| c != '`').map(str::len).max().unwrap_or(0)
}

/// Content for a table cell: one line, pipes escaped (GFM splits cells on them, even inside
/// code spans).
fn cell(text: &str) -> String {
    text.replace('\n', " ").replace('|', "\\|")
}

/// Plain prose: keeps characters that would start Markdown structure from doing so.
fn escape_text(text: &str) -> String {
    let mut s = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(c, '*' | '_' | '[' | ']' | '<' | '>' | '#' | '|' | '\\') {
            s.push('\\');
        }
        s.push(c);
    }
    s
}

/// A history as a table (Fig. 3 turned on its side): one column per lane — `init`, the
/// threads, `final` — and one row per call or return, in real-time order; `│` marks an
/// operation in progress. Unlike a text timeline, it never grows wider than the page.
fn history_table(out: &mut String, history: &HistoryReport) {
    let mut lanes: Vec<&str> = history.events.iter().map(|e| e.lane.as_str()).collect();
    lanes.sort_by_key(|l| crate::timeline::lane_order(l));
    lanes.dedup();
    if lanes.is_empty() {
        let _ = writeln!(out, "(empty history)\n");
        return;
    }
    let _ = writeln!(out, "| # | {} |", lanes.join(" | "));
    let _ = writeln!(out, "| ---: |{}", " --- |".repeat(lanes.len()));
    let mut open = vec![false; lanes.len()];
    for (i, e) in history.events.iter().enumerate() {
        let column = lanes.iter().position(|l| *l == e.lane).unwrap_or(0);
        let mut cells: Vec<String> = open
            .iter()
            .map(|&o| if o { "│".to_string() } else { String::new() })
            .collect();
        cells[column] = match e.kind {
            HistoryKind::Call => {
                open[column] = true;
                format!("{} called", code(&e.call))
            }
            HistoryKind::Return => {
                open[column] = false;
                format!(
                    "{} ⇒ {}",
                    code(&e.call),
                    code(e.value.as_deref().unwrap_or("?"))
                )
            }
        };
        let cells: Vec<String> = cells.iter().map(|c| cell(c)).collect();
        let _ = writeln!(out, "| {} | {} |", i + 1, cells.join(" | "));
    }
    let pending: Vec<&str> = lanes
        .iter()
        .zip(&open)
        .filter(|(_, &o)| o)
        .map(|(l, _)| *l)
        .collect();
    if !pending.is_empty() {
        let _ = writeln!(out, "\nStill pending at the end: {}.", pending.join(", "));
    }
    out.push('\n');
}

/// `text` with its first letter upper case, as a sentence of its own.
fn capitalized(text: &str) -> String {
    let mut chars = text.chars();
    chars.next().map_or_else(String::new, |first| {
        let mut sentence: String = first.to_uppercase().collect();
        sentence.push_str(chars.as_str());
        if !sentence.ends_with('.') {
            sentence.push('.');
        }
        sentence
    })
}
