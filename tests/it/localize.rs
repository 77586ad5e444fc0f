//! `fgvt localize` on PairSnapshot, as a user runs it from the repository root.

use std::path::Path;

use serde_json::Value;

use crate::common;

use common::localize;

fn report(test: &str) -> (i32, Value) {
    let (code, out) = localize(&[test, "--format", "json"]);
    (code, serde_json::from_str(&out).unwrap())
}

/// Every race of every decisive node of a CDRS in a JSON report.
fn races(cdrs: &Value) -> impl Iterator<Item = &Value> {
    cdrs["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|n| n["races"].as_array().unwrap())
}

#[test]
fn pair_snapshot_is_not_linearizable_and_its_cdrs_names_the_racing_statements() {
    let (code, r) = report("fixtures/pair_snapshot/failing.json");
    assert_eq!(code, 1);
    assert_eq!(r["schema"], "fgvt.localize/1");
    assert_eq!(r["verdict"], "not-linearizable");
    let cdrs = r["cdrs"].as_array().unwrap();
    assert!(!cdrs.is_empty());
    let first = &cdrs[0];
    let pattern = first["pattern"].as_str().unwrap();
    assert!(pattern.ends_with(" G"), "{pattern}");
    assert!(
        pattern.split(' ').all(|l| l == "WG" || l == "G"),
        "{pattern}"
    );
    let snippets: Vec<String> = races(first)
        .map(|r| r["snippet"].as_str().unwrap().to_string())
        .collect();
    for statement in ["d[i] = v", "d[0]", "d[1]"] {
        assert!(
            snippets.iter().any(|s| s == statement),
            "{statement} not in {snippets:?}"
        );
    }
    // `x = d[0]` and `x == d[0]` are distinct reads of d[0]: lines 13 and 15 of the model.
    let lines: Vec<u64> = races(first)
        .map(|r| r["location"]["line"].as_u64().unwrap())
        .collect();
    for line in [8, 13, 14, 15] {
        assert!(lines.contains(&line), "line {line} not in {lines:?}");
    }
    // The witness replays to a leaf whose read returned (1, 2).
    let witness = &first["witness"];
    assert!(
        witness["history"]["text"]
            .as_str()
            .unwrap()
            .contains("T1:ret (1, 2)"),
        "{witness}"
    );
    assert!(witness["explanation"]["text"]
        .as_str()
        .unwrap()
        .contains("(1, 2)"));
}

#[test]
fn every_failing_leaf_of_pair_snapshot_returns_a_pair_that_never_existed() {
    let (_, r) = report("fixtures/pair_snapshot/failing.json");
    let (_, explore, _) = common::output(common::fgvt().current_dir(common::root()).args([
        "explore",
        "fixtures/pair_snapshot/failing.json",
        "--format",
        "json",
    ]));
    let e: Value = serde_json::from_str(&explore).unwrap();
    assert_eq!(
        r["tree"]["failing_leaves"],
        e["results"]["T1 read()"]["(1, 2)"]
    );
}

#[test]
fn the_fixed_pair_snapshot_is_linearizable_with_no_cdrs() {
    let (code, r) = report("fixtures/pair_snapshot/fixed.json");
    assert_eq!(code, 0);
    assert_eq!(r["verdict"], "linearizable");
    assert_eq!(r["cdrs"].as_array().unwrap().len(), 0);
    assert_eq!(r["tree"]["failing_leaves"], 0);
}

#[test]
fn a_pattern_of_only_g_finds_no_cdrs_in_pair_snapshot() {
    // Every failing path of PairSnapshot passes WG nodes first: a bare `G` word never occurs.
    let (code, out) = localize(&[
        "fixtures/pair_snapshot/failing.json",
        "--format",
        "json",
        "--pattern",
        "G",
    ]);
    assert_eq!(code, 1);
    let r: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(r["cdrs"].as_array().unwrap().len(), 0);
    assert_eq!(r["pattern"], "G");
}

#[test]
fn a_bad_pattern_is_a_usage_error() {
    let (code, _) = localize(&["fixtures/pair_snapshot/failing.json", "--pattern", "WG XG"]);
    assert_eq!(code, 2);
}

#[test]
fn reports_are_kept_as_snapshots() {
    let (_, text) = localize(&["fixtures/pair_snapshot/failing.json"]);
    insta::assert_snapshot!("pair_snapshot_text", text);
    let (_, markdown) = localize(&[
        "fixtures/pair_snapshot/failing.json",
        "--format",
        "markdown",
    ]);
    insta::assert_snapshot!("pair_snapshot_markdown", markdown);
    let (_, json) = localize(&["fixtures/pair_snapshot/failing.json", "--format", "json"]);
    let json: Value = serde_json::from_str(&json).unwrap();
    insta::assert_json_snapshot!("pair_snapshot_json", json, { ".tree.elapsed_ms" => "[ms]" });
}

#[test]
fn the_markdown_report_has_well_formed_tables() {
    use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};
    let (_, markdown) = localize(&[
        "fixtures/pair_snapshot/failing.json",
        "--format",
        "markdown",
    ]);
    let mut tables = 0;
    let mut columns = 0;
    let mut cells_in_row = 0;
    for event in Parser::new_ext(&markdown, Options::ENABLE_TABLES) {
        match event {
            Event::Start(Tag::Table(alignments)) => {
                tables += 1;
                columns = alignments.len();
            }
            Event::Start(Tag::TableHead | Tag::TableRow) => cells_in_row = 0,
            Event::Start(Tag::TableCell) => cells_in_row += 1,
            Event::End(TagEnd::TableHead | TagEnd::TableRow) => {
                assert_eq!(
                    cells_in_row, columns,
                    "a row of table {tables} has {cells_in_row} cells, not {columns}"
                )
            }
            _ => {}
        }
    }
    // The tree counts, the CDRS summary, and the witness trace at least.
    assert!(tables >= 3, "{tables} tables in:\n{markdown}");
    assert!(markdown.contains("fgvt localize fixtures/pair_snapshot/failing.json"));
}

#[test]
fn output_files_are_written_whole_or_not_at_all() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("report.md");
    let (code, stdout) = localize(&[
        "fixtures/pair_snapshot/failing.json",
        "--format",
        "markdown",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, 1);
    assert!(stdout.is_empty());
    assert!(std::fs::read_to_string(&out)
        .unwrap()
        .starts_with("# `PairSnapshot` is not linearizable"));
    let missing = dir.path().join("no/such/dir/report.md");
    let (code, _) = localize(&[
        "fixtures/pair_snapshot/failing.json",
        "-o",
        missing.to_str().unwrap(),
    ]);
    assert_eq!(code, 2);
    assert!(!Path::new(&missing).exists());
    // No temporary file is left next to the report either.
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
}

/// Copies a fixture's model next to a test written for it in a fresh directory.
fn test_beside(model: &str, test: &str) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = common::workdir(&[("test.json", test)]);
    let from = common::fixture(model);
    std::fs::copy(&from, dir.path().join(from.file_name().unwrap())).unwrap();
    let path = dir.path().join("test.json");
    (dir, path)
}

#[test]
fn pair_snapshot_fails_on_the_same_leaves_under_the_builtin_snapshot_spec() {
    let (_dir, path) = test_beside(
        "pair_snapshot/pair_snapshot.fgv",
        r#"{"object": "pair_snapshot.fgv#PairSnapshot", "spec": "snapshot",
            "init": ["write(0, 1)", "write(1, 1)"],
            "threads": [["write(0, 2)", "write(1, 2)", "write(1, 1)", "write(0, 1)"], ["read()"]]}"#,
    );
    let (code, builtin) = common::localize(&[path.to_str().unwrap(), "--format", "json"]);
    assert_eq!(code, 1);
    let builtin: Value = serde_json::from_str(&builtin).unwrap();
    let (_, own) = report("fixtures/pair_snapshot/failing.json");
    assert_eq!(builtin["test"]["spec"], "snapshot");
    assert_eq!(
        builtin["tree"]["failing_leaves"],
        own["tree"]["failing_leaves"]
    );
    assert_eq!(
        builtin["labels"], own["labels"],
        "the same leaves fail, so every label agrees"
    );
}

#[test]
fn counter2s_stuck_history_passes_under_self_and_the_report_says_why() {
    // Under `self` the object's own serial runs block too: `get` keeps the lock, a later `inc`
    // waits forever. The report must not stay silent about that blind spot.
    let (_dir, path) = test_beside(
        "counter2/counter2.fgv",
        r#"{"object": "counter2.fgv#Counter2", "spec": "self", "threads": [["inc()", "get()"], ["inc()"]]}"#,
    );
    let (code, out) = common::localize(&[path.to_str().unwrap(), "--format", "json"]);
    assert_eq!(code, 0, "{out}");
    let r: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(r["verdict"], "linearizable");
    assert!(r["tree"]["stuck_leaves"].as_u64().unwrap() >= 1);
    let notes = r["notes"].to_string();
    assert!(notes.contains("blocks in its serial runs too"), "{notes}");
    assert!(
        notes.contains("\\\"counter\\\""),
        "suggests a built-in spec: {notes}"
    );
    // Under the built-in counter spec, where `inc` never blocks, it is a violation.
    let (code, _) = common::localize(&["fixtures/counter2/failing.json"]);
    assert_eq!(code, 1);
}

#[test]
fn a_step_budget_stop_names_the_option_that_raises_it() {
    let dir = common::workdir(&[
        ("m.fgv", common::LOCAL_LOOP_MODEL),
        ("test.json", common::LOCAL_LOOP_TEST),
    ]);
    let test = dir.path().join("test.json");
    let test = test.to_str().unwrap();
    for format in ["text", "markdown"] {
        let (code, out) = localize(&[test, "--format", format]);
        assert_eq!(code, 3, "{out}");
        assert!(!out.contains("--step-budget"), "{out}");
        assert!(out.contains("--max-local-steps"), "{out}");
    }
    let (_, v) = report(test);
    assert_eq!(
        v["partial"], "step-budget",
        "the JSON keeps the limit's name"
    );
}
