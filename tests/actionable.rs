//! Issue 14: reports and commands a user can act on. Each test runs the binary as a user would,
//! following what fgvt itself prints.

mod common;

use common::{fgvt, localize, root, run};

/// The command a localize report prints to replay its witness, as argument words.
fn replay_command(report: &str) -> Vec<String> {
    let line = report
        .lines()
        .find(|l| l.contains("fgvt explore") && l.contains("--schedule"))
        .expect("the report prints a replay command");
    let command = &line[line.find("fgvt explore").unwrap()..];
    command
        .split_whitespace()
        .skip(1)
        .map(|w| w.trim_matches('`').to_string())
        .filter(|w| !w.is_empty())
        .collect()
}

#[test]
fn the_printed_replay_command_gives_the_leafs_verdict_and_explanation() {
    let (code, report) = localize(&["fixtures/pair_snapshot/failing.json"]);
    assert_eq!(code, 1);
    let args = replay_command(&report);
    let (code, stdout, _) = run(fgvt().current_dir(root()).args(&args));
    assert_eq!(code, 1, "a failing run exits 1: {stdout}");
    assert!(stdout.contains("verdict: not linearizable"), "{stdout}");
    assert!(stdout.contains("read() returned (1, 2)"), "{stdout}");
}

#[test]
fn replaying_a_passing_run_says_so_and_exits_0() {
    // T0 runs all its writes before T1 reads: a serial run, linearizable.
    let (code, stdout, _) = run(fgvt().current_dir(root()).args([
        "explore",
        "fixtures/pair_snapshot/failing.json",
        "--schedule",
        "0,0,0,0,1,1,1",
    ]));
    assert_eq!(code, 0, "{stdout}");
    assert!(stdout.contains("verdict: linearizable"), "{stdout}");
}

#[test]
fn render_says_what_it_wrote_and_exits_0_for_a_failing_test() {
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("tree.svg");
    let (code, _, err) = run(fgvt()
        .current_dir(root())
        .args(["render", "fixtures/pair_snapshot/failing.json", "-o"])
        .arg(&svg));
    assert_eq!(code, 0, "`render … && open tree.svg` must work: {err}");
    assert!(
        err.contains(&format!(
            "wrote {}: 14 of 546 nodes, CDRS 1 highlighted",
            svg.display()
        )),
        "{err}"
    );
    assert!(svg.exists());
}

#[test]
fn the_default_drawing_of_a_failing_test_focuses_on_its_cdrs_and_names_what_went_wrong() {
    // LinkedList's tree has 12,193 nodes; drawn whole it was 19,586 px wide.
    let (code, dot, err) = run(fgvt().current_dir(root()).args([
        "render",
        "fixtures/linked_list/failing.json",
        "--format",
        "dot",
    ]));
    assert_eq!(code, 0, "{err}");
    assert!(dot.contains("off the CDRS paths (--focus cdrs)"), "{dot}");
    let nodes = dot
        .lines()
        .filter(|l| l.trim_start().starts_with('n') && !l.contains("->") && l.contains("[label="))
        .count();
    assert!(nodes <= 60, "{nodes} nodes drawn");
    // Edges quote the racing statement, not only its line.
    assert!(dot.contains("l.54 `node.next`"), "{dot}");
    // The failing leaf shows the results of its operations, the wrong one among them.
    assert!(dot.contains("size() → 3"), "{dot}");
    // A passing test is drawn whole.
    let (code, dot, _) = run(fgvt().current_dir(root()).args([
        "render",
        "fixtures/linked_list/fixed.json",
        "--format",
        "dot",
    ]));
    assert_eq!(code, 0);
    assert!(!dot.contains("--focus cdrs"), "{dot}");
}

#[test]
fn without_graphviz_edge_labels_sit_beside_their_edges() {
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("tree.svg");
    let (code, _, err) = run(fgvt()
        .current_dir(root())
        .args([
            "render",
            "fixtures/pair_snapshot/failing.json",
            "--engine",
            "builtin",
            "-o",
        ])
        .arg(&svg));
    assert_eq!(code, 0, "{err}");
    let text = std::fs::read_to_string(&svg).unwrap();
    let doc = roxmltree::Document::parse(&text).unwrap();
    let labels: Vec<_> = doc
        .descendants()
        .filter(|n| n.attribute("class") == Some("edge-label"))
        .collect();
    assert_eq!(labels.len(), 13, "one label per drawn edge");
    for label in labels {
        let t = label
            .descendants()
            .find(|n| n.has_tag_name("text"))
            .unwrap();
        // layout-rs centres a label on its edge's middle point; ours starts beside it, on a
        // white ground.
        assert_eq!(t.attribute("text-anchor"), Some("start"));
        assert!(label.descendants().any(|n| n.has_tag_name("rect")));
    }
}

#[test]
fn hunt_localize_writes_every_test_whose_command_it_prints() {
    let dir = tempfile::tempdir().unwrap();
    let hunt = common::fixture("pair_snapshot/hunt.json");
    let (code, report, err) = run(fgvt()
        .current_dir(dir.path())
        .args(["hunt", "--seed", "1", "--localize"])
        .arg(&hunt));
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("wrote found.json"), "{err}");
    assert!(
        report.contains("reproduce: fgvt localize minimal.json"),
        "{report}"
    );
    for test in ["minimal.json", "found.json"] {
        let (code, out, err) = run(fgvt().current_dir(dir.path()).args(["localize", test]));
        assert_eq!(
            code, 1,
            "{test} fails when localized as printed: {out}{err}"
        );
    }
}

#[test]
fn hunt_all_writes_each_distinct_test_once() {
    let dir = tempfile::tempdir().unwrap();
    let hunt = common::fixture("lock_free_list/hunt.json");
    let (code, out, err) = run(fgvt()
        .current_dir(dir.path())
        .args(["hunt", "--seed", "1", "--all", "-o", "f.json"])
        .arg(&hunt));
    assert_eq!(code, 1, "{err}");
    assert!(
        out.contains("the same test as sample"),
        "seed 1 draws repeats: {out}"
    );
    let mut tests = Vec::new();
    for entry in std::fs::read_dir(dir.path()).unwrap() {
        let json: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(entry.unwrap().path()).unwrap()).unwrap();
        tests.push((
            json["init"].clone(),
            json["threads"].clone(),
            json["final"].clone(),
        ));
    }
    let written = tests.len();
    tests.sort_by_key(|t| format!("{t:?}"));
    tests.dedup();
    assert_eq!(tests.len(), written, "no test written twice");
    assert_eq!(
        written,
        out.matches("\nwrote ").count() + usize::from(out.starts_with("wrote "))
    );
}
