//! Tests of the renderers on a hand-built tree: two threads each run a non-atomic `inc()`
//! (`int t = x; x = t + 1;`), and a final `get()` sees the lost update.

use fgvt_labeling::cdrs::{find_cdrs, CdrsOptions};
use fgvt_labeling::labels::LeafOutcome;
use fgvt_labeling::pattern::Pattern;
use fgvt_labeling::testing::{label, Builder};
use fgvt_tree::{Call, Event, EventKind, History, NodeId, SourceMap, Span, Value};
use pulldown_cmark::{Event as MdEvent, Options, Parser, Tag, TagEnd};

use crate::model::{Explanation, LocalizeReport, TestInfo, Verdict};
use crate::{build_report, parse_json, render_json, render_markdown, render_text, ReportInput};

const SOURCE: &str = "object Counter {
    shared int x = 0;

    op inc() {
        int t = x;
        x = t + 1;
    }

    op get() {
        return x;
    }
}
";

/// Builds the interleaving tree of `threads` threads each running `inc()` once.
struct Counter {
    builder: Builder,
    read: Span,
    write: Span,
    /// `atomic`: the increment is one step (then no race can lose an update).
    atomic: bool,
}

#[derive(Clone)]
struct State {
    /// Per thread: 0 before the read, 1 between, 2 done.
    pc: Vec<u8>,
    local: Vec<i64>,
    x: i64,
    history: History,
}

impl Counter {
    fn new(atomic: bool) -> (Counter, SourceMap) {
        let mut sources = SourceMap::new();
        let file = sources.add("counter.fgv", SOURCE);
        let read_at = SOURCE.find("int t = x").unwrap() + "int t = ".len();
        let write_at = SOURCE.find("x = t + 1").unwrap();
        let counter = Counter {
            builder: Builder::default(),
            read: Span::new(file, read_at, read_at + 1),
            write: Span::new(file, write_at, write_at + "x = t + 1".len()),
            atomic,
        };
        (counter, sources)
    }

    fn explore(&mut self, s: State) -> NodeId {
        let moves: Vec<usize> = (0..s.pc.len()).filter(|&t| s.pc[t] < 2).collect();
        if moves.is_empty() {
            let mut history = s.history.clone();
            history.call(0, Call::new("get", vec![]));
            history.ret(0, Value::Int(s.x));
            // `get()` must see both increments.
            let outcome = if s.x == 2 {
                LeafOutcome::Pass
            } else {
                LeafOutcome::Fail
            };
            return self.builder.leaf_with_history(outcome, history);
        }
        let mut children = Vec::new();
        for t in moves {
            let mut next = s.clone();
            let event = if next.pc[t] == 0 {
                next.history.call(t, Call::new("inc", vec![]));
                next.local[t] = next.x;
                next.pc[t] = 1;
                let mut e = self.event(t, EventKind::Read, next.x, self.read);
                e.call = Some(Call::new("inc", vec![]));
                if self.atomic {
                    next.x += 1;
                    next.pc[t] = 2;
                    next.history.ret(t, Value::Unit);
                    e.ret = Some(Value::Unit);
                }
                e
            } else {
                next.x = next.local[t] + 1;
                next.pc[t] = 2;
                next.history.ret(t, Value::Unit);
                let mut e = self.event(t, EventKind::Write, next.x, self.write);
                e.ret = Some(Value::Unit);
                e
            };
            children.push((event, self.explore(next)));
        }
        self.builder.node_with_events(children)
    }

    fn event(&self, thread: usize, kind: EventKind, value: i64, span: Span) -> Event {
        Event {
            thread,
            op_index: 0,
            op: "inc".into(),
            kind,
            location: "x".into(),
            value: value.to_string(),
            span,
            call: None,
            ret: None,
            order: None,
            memory: None,
            seen: None,
            footprint: fgvt_tree::Footprint::Everything,
        }
    }
}

fn report(atomic: bool) -> LocalizeReport {
    report_with(atomic, CdrsOptions::default())
}

/// The counter's report, its CDRS found with `options`.
fn report_with(atomic: bool, options: CdrsOptions) -> LocalizeReport {
    let (mut counter, sources) = Counter::new(atomic);
    let root = counter.explore(State {
        pc: vec![0, 0],
        local: vec![0, 0],
        x: 0,
        history: History::new(),
    });
    let (mut tree, outcomes) = counter.builder.finish(root);
    tree.distinct_states = 9;
    let labeling = label(&tree, &outcomes);
    let pattern = Pattern::default();
    let cdrs = find_cdrs(&tree, &labeling, &pattern, &options);
    let test = TestInfo {
        file: "tests/counter.json".into(),
        object: "counter.fgv#Counter".into(),
        spec: "counter".into(),
        command: "fgvt localize tests/counter.json".into(),
    };
    let input = ReportInput {
        tree: &tree,
        labeling: &labeling,
        cdrs: &cdrs,
        pattern: &pattern,
        sources: &sources,
        test: &test,
        max_cdrs: 3,
        replay: Default::default(),
    };
    build_report(&input, |_, _| {
        Some(Explanation {
            headline: "T2 get() returned 1, which no serial order of the operations gives".into(),
            text: "get() returned 1, but after two inc() the counter is 2:\n  T0:inc() T1:inc() T0:get() ⇒ 2, not 1"
                .into(),
            json: serde_json::json!({"longest_prefix": ["inc()", "inc()"], "obstacle": {"op": "get()", "expected": "2"}}),
        })
    })
}

/// A signal during the search for CDRS ends the report there: the verdict and counts of the
/// whole tree stand, the report is partial and INTERRUPTED, and says the CDRS were cut short.
#[test]
fn an_interrupted_search_for_cdrs_makes_a_partial_report() {
    static RAISED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(true);
    let whole = report(false);
    let stopped = report_with(
        false,
        CdrsOptions {
            interrupt: Some(fgvt_tree::Interrupt::new(&RAISED)),
            ..CdrsOptions::default()
        },
    );
    assert_eq!(whole.partial, None);
    assert_eq!(stopped.partial.as_deref(), Some("interrupted"));
    assert_eq!(stopped.verdict, Verdict::NotLinearizable);
    assert_eq!(stopped.tree, whole.tree);
    assert!(stopped.truncated);
    let note = (stopped.notes.iter()).find(|n| n.contains("stopped the search for CDRS"));
    assert!(note.is_some(), "{:?}", stopped.notes);
    // Only the search's note: the tree itself is whole.
    assert!(!stopped
        .notes
        .iter()
        .any(|n| n.contains("the tree is partial")));
}

#[test]
fn builds_the_lost_update() {
    let r = report(false);
    assert_eq!(r.verdict, Verdict::NotLinearizable);
    assert_eq!(
        (r.tree.leaves, r.tree.failing_leaves, r.tree.passing_leaves),
        (6, 4, 2)
    );
    assert_eq!(
        r.cdrs_found, 1,
        "both G nodes race the same two statements: one CDRS"
    );
    let c = &r.cdrs[0];
    assert_eq!((c.pattern.as_str(), c.failing_leaves), ("G", 4));
    assert_eq!(c.statements.len(), 2);
    assert_eq!(c.nodes[0].step, 1);
    assert!(!r.truncated);
}

#[test]
fn text_report() {
    insta::assert_snapshot!("text", render_text(&report(false), false));
}

#[test]
fn markdown_report() {
    insta::assert_snapshot!("markdown", render_markdown(&report(false)));
}

#[test]
fn json_report() {
    insta::assert_snapshot!("json", render_json(&report(false)));
}

#[test]
fn colour_only_when_asked() {
    let r = report(false);
    assert!(!render_text(&r, false).contains('\x1b'));
    let coloured = render_text(&r, true);
    assert!(coloured.contains("\x1b[1;31mNOT LINEARIZABLE\x1b[0m"));
    assert!(coloured.contains("\x1b[32mOK\x1b[0m"));
}

#[test]
fn json_has_the_documented_shape_and_round_trips() {
    let r = report(false);
    let text = render_json(&r);
    assert_eq!(parse_json(&text).unwrap(), r);
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["schema"], "fgvt.localize/1");
    assert_eq!(v["verdict"], "not-linearizable");
    assert_eq!(v["partial"], serde_json::Value::Null);
    assert_eq!(v["labels"]["G"], 2);
    assert_eq!(v["labels"]["GG"], 1);
    let race = &v["cdrs"][0]["nodes"][0]["races"][0];
    for key in [
        "thread", "op", "event", "target", "value", "outcome", "location", "snippet",
    ] {
        assert!(race.get(key).is_some(), "race has no `{key}`");
    }
    assert_eq!(race["location"]["file"], "counter.fgv");
    assert!(["ok", "err", "mix"].contains(&race["outcome"].as_str().unwrap()));
    let witness = &v["cdrs"][0]["witness"];
    assert_eq!(witness["trace"][0]["line"], 5);
    assert!(witness["history"]["text"]
        .as_str()
        .unwrap()
        .starts_with("T0:inc()"));
    assert_eq!(witness["explanation"]["json"]["obstacle"]["expected"], "2");
}

#[test]
fn a_correct_object_has_no_cdrs() {
    let r = report(true);
    assert_eq!(r.verdict, Verdict::Linearizable);
    assert!(r.cdrs.is_empty());
    let md = render_markdown(&r);
    assert_eq!(tables(&md).len(), 1, "only the tree counts table");
    assert!(render_text(&r, false).contains("LINEARIZABLE"));
}

/// Column counts of every table: per table, the header's cell count and each row's.
fn tables(markdown: &str) -> Vec<(usize, Vec<usize>)> {
    let mut tables = Vec::new();
    let mut cells = 0;
    for event in Parser::new_ext(markdown, Options::ENABLE_TABLES) {
        match event {
            MdEvent::Start(Tag::Table(aligns)) => tables.push((aligns.len(), Vec::new())),
            MdEvent::Start(Tag::TableHead | Tag::TableRow) => cells = 0,
            MdEvent::Start(Tag::TableCell) => cells += 1,
            MdEvent::End(TagEnd::TableHead | TagEnd::TableRow) => tables
                .last_mut()
                .expect("a row is inside a table")
                .1
                .push(cells),
            _ => {}
        }
    }
    tables
}

/// Cells of a source table line: unescaped pipes minus one (lines start and end with a pipe).
fn source_cells(line: &str) -> usize {
    let mut pipes = 0;
    let mut escaped = false;
    for c in line.chars() {
        match c {
            '\\' if !escaped => escaped = true,
            '|' if !escaped => pipes += 1,
            _ => escaped = false,
        }
        if c != '\\' {
            escaped = false;
        }
    }
    pipes - 1
}

/// Checks every table of `md` (rows as wide as the header, in the parsed event stream and in
/// the source lines) and returns how many there are.
fn check_tables(md: &str) -> usize {
    let tables = tables(md);
    for (columns, rows) in &tables {
        assert!(!rows.is_empty());
        for &n in rows {
            assert_eq!(n, *columns);
        }
    }
    // The parser pads short rows and drops extra cells, so check the source lines too.
    let mut blocks: Vec<Vec<&str>> = Vec::new();
    let mut in_fence = false;
    let mut previous_was_table = false;
    for line in md.lines() {
        if line.starts_with("```") {
            in_fence = !in_fence;
        }
        let is_table = !in_fence && line.starts_with('|');
        if is_table {
            if !previous_was_table {
                blocks.push(Vec::new());
            }
            blocks.last_mut().unwrap().push(line);
        }
        previous_was_table = is_table;
    }
    assert_eq!(blocks.len(), tables.len());
    for (block, (columns, _)) in blocks.iter().zip(&tables) {
        for line in block {
            assert_eq!(source_cells(line), *columns, "{line}");
        }
    }
    tables.len()
}

#[test]
fn markdown_tables_are_well_formed() {
    // The witness of the one CDRS and its history, then the tree counts and the CDRS table.
    assert_eq!(check_tables(&render_markdown(&report(false))), 4);
}

#[test]
fn pipes_and_backticks_in_code_do_not_break_tables() {
    let mut r = report(false);
    let c = &mut r.cdrs[0];
    c.statements[0].snippet = "if (a || `b`) x = 1;".into();
    c.witness.trace[0].target = "m[a|b]".into();
    c.witness.trace[1].call = Some("put(\"|\", `x`)".into());
    let md = render_markdown(&r);
    assert_eq!(check_tables(&md), 4);
    assert!(md.contains("\\|\\|"), "pipes are escaped in table cells");
}

/// The part of `SCHEMA.md` about the schema whose heading names `id`, up to the next schema.
fn schema_section(id: &str) -> &'static str {
    let schema = include_str!("../SCHEMA.md");
    let start = schema
        .find(&format!("# `{id}`"))
        .unwrap_or_else(|| panic!("SCHEMA.md has no section for {id}"));
    let rest = &schema[start..];
    let end = rest[1..].find("\n# `").map_or(rest.len(), |i| i + 1);
    &rest[..end]
}

/// Every key of `json`, at any depth.
fn keys(v: &serde_json::Value, out: &mut Vec<String>) {
    match v {
        serde_json::Value::Object(map) => {
            for (k, v) in map {
                out.push(k.clone());
                keys(v, out);
            }
        }
        serde_json::Value::Array(items) => items.iter().for_each(|v| keys(v, out)),
        _ => {}
    }
}

/// Asserts that `section` mentions every key of `json`.
fn assert_documented(section: &str, json: &serde_json::Value) {
    let mut all = Vec::new();
    keys(json, &mut all);
    assert!(!all.is_empty());
    for key in all {
        assert!(
            section.contains(&format!("`{key}`"))
                || section.contains(&format!("{key},"))
                || section.contains(&format!("{key}}}")),
            "SCHEMA.md does not mention `{key}`"
        );
    }
}

#[test]
fn schema_md_documents_every_field() {
    let schema = schema_section(crate::SCHEMA_ID);
    assert_eq!(check_tables(schema), 9);
    let mut json = serde_json::to_value(report(false)).unwrap();
    // The explanation's own JSON belongs to the checker, not to this schema.
    json["cdrs"][0]["witness"]["explanation"]["json"] = serde_json::Value::Null;
    assert_documented(schema, &json);
}

#[test]
fn schema_md_documents_every_field_of_explore_and_check() {
    // Every table of the whole file is well-formed: the localize section's 9, explore's 4,
    // check's 2 and hunt-shard's 2.
    assert_eq!(check_tables(include_str!("../SCHEMA.md")), 17);
    let explore = schema_section(crate::EXPLORE_SCHEMA_ID);
    let (summary, path) = explore_examples();
    let mut summary = serde_json::to_value(summary).unwrap();
    // The keys of `results` are operations, data rather than fields.
    assert_eq!(summary["results"]["T0 inc()"]["()"], 2);
    summary["results"] = serde_json::Value::Null;
    assert_documented(explore, &summary);
    // A path's trace and history are `fgvt.localize/1`'s, documented there.
    let mut path = serde_json::to_value(path).unwrap();
    path["trace"] = serde_json::Value::Null;
    path["leaf"]["history"] = serde_json::Value::Null;
    assert_documented(explore, &path);
    let check = schema_section(crate::CHECK_SCHEMA_ID);
    let one = check_example();
    let several = crate::CheckReports {
        schema: crate::CHECK_SCHEMA_ID.into(),
        summary: crate::CheckSummary::of(std::slice::from_ref(&one)),
        results: vec![one],
    };
    let mut json = serde_json::to_value(several).unwrap();
    // The explanation's own JSON belongs to the checker.
    json["results"][0]["explanation"] = serde_json::Value::Null;
    assert_documented(check, &json);
}

#[test]
fn the_schema_test_catches_an_undocumented_field() {
    let mut json = serde_json::to_value(check_example()).unwrap();
    json["undocumented_field"] = serde_json::Value::Bool(true);
    let caught = std::panic::catch_unwind(|| {
        assert_documented(schema_section(crate::CHECK_SCHEMA_ID), &json)
    });
    assert!(caught.is_err());
}

fn explore_examples() -> (crate::ExploreSummary, crate::ExplorePath) {
    let r = report(false);
    let witness = &r.cdrs[0].witness;
    let summary = crate::ExploreSummary {
        schema: crate::EXPLORE_SCHEMA_ID.into(),
        test: "t.json".into(),
        object: "Counter".into(),
        partial: Some("max-states".into()),
        scouted: false,
        tree: crate::TreeCounts {
            nodes: 7,
            edges: 6,
            leaves: 2,
            complete: 2,
            stuck: 0,
            fault: 0,
            bounded: 0,
            cut: 0,
            distinct_states: 7,
            graph_nodes: 7,
            max_depth: 3,
            loop_edges: 0,
            saturated: false,
        },
        verdicts: crate::VerdictCounts {
            spec: "self".into(),
            linearizable: 1,
            not_linearizable: 1,
            fault: 0,
            unknown: 0,
            cut: 0,
            bounded: 0,
            unchecked: 0,
            undecided: 0,
            distinct_histories: 2,
        },
        failing_leaves: vec![1],
        results: [("T0 inc()".to_string(), [("()".to_string(), 2)].into())].into(),
        elapsed_ms: 1.5,
    };
    let path = crate::ExplorePath {
        schema: crate::EXPLORE_SCHEMA_ID.into(),
        test: "t.json".into(),
        schedule: witness.schedule.clone(),
        trace: witness.trace.clone(),
        leaf: Some(crate::PathLeaf {
            kind: "complete".into(),
            history: witness.history.clone(),
            fault: Some("null dereference".into()),
            verdict: Some("not-linearizable".into()),
            explanation: Some("no serial order gives read() = (1, 2)".into()),
        }),
    };
    (summary, path)
}

fn check_example() -> crate::CheckReport {
    crate::CheckReport {
        schema: crate::CHECK_SCHEMA_ID.into(),
        file: "h.log".into(),
        format: Some("jepsen".into()),
        spec: Some("register".into()),
        initial: None,
        verdict: crate::CheckVerdict::NotLinearizable,
        linearizable: Some(false),
        partitions: Some(1),
        explanation: Some(serde_json::json!({"any": "thing"})),
        error: Some("none".into()),
        elapsed_ms: 0.5,
    }
}
