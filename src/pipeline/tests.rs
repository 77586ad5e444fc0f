use std::path::Path;

use fgvt_reports::Verdict;

use super::*;
use crate::testcase::{self, TestCase};

/// Writes `model` and a test of it into a fresh directory and loads the test.
fn test_of(model: &str, test: &str) -> (tempfile::TempDir, TestCase) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("m.fgv"), model).unwrap();
    let path = dir.path().join("t.json");
    std::fs::write(&path, test).unwrap();
    let test = testcase::load(&path).unwrap();
    (dir, test)
}

#[test]
fn a_racy_counter_is_localized_and_a_locked_one_passes() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let (limits, options) = (Limits::default(), LocalizeOptions::default());
    let failing = testcase::load(&root.join("fixtures/counter1/failing.json")).unwrap();
    let localized = localize(&failing, &limits, &options, &mut ()).unwrap();
    assert_eq!(localized.report.verdict, Verdict::NotLinearizable);
    assert!(!localized.report.cdrs.is_empty());
    assert_eq!(localized.report.tree.leaves, localized.tree.stats().leaves);
    let fixed = testcase::load(&root.join("fixtures/counter1/fixed.json")).unwrap();
    assert_eq!(
        localize(&fixed, &limits, &options, &mut ())
            .unwrap()
            .report
            .verdict,
        Verdict::Linearizable
    );
}

#[test]
fn a_failing_init_part_is_an_error_with_its_location() {
    let (_dir, test) = test_of(
        "object Boom {\n    shared int x = 0;\n    op boom() {\n        assert(x == 1);\n    }\n}\n",
        r#"{"object": "m.fgv", "init": ["boom()"], "threads": [["boom()"]]}"#,
    );
    let Err(error) = explore_test(&test, &Limits::default().explore_options(), &mut ()) else {
        panic!("the init part faults");
    };
    assert!(matches!(error, PipelineError::InitFault { .. }), "{error}");
    let text = error.to_string();
    assert!(
        text.contains("t.json: the test's init part fails at "),
        "{text}"
    );
    assert!(text.contains("m.fgv:4:"), "{text}");
    assert!(error.help().contains("init"));
}

#[test]
fn limits_make_the_result_partial_not_an_error() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let test = testcase::load(&root.join("fixtures/pair_snapshot/failing.json")).unwrap();
    let limits = Limits {
        max_states: 10,
        ..Limits::default()
    };
    let tree = explore_test(&test, &limits.explore_options(), &mut ()).unwrap();
    assert!(tree.partial.is_some());
    let judgement = judge_test(&test, &tree, CheckBudget::default()).unwrap();
    assert!(judgement.unknown > 0);
}

/// Telling states apart by the ways their histories allow of taking effect, rather than by the
/// histories, changes nothing a report says but the stored states: on every model fixture, the
/// unfolded counts, labels, CDRS and witnesses, and `explore`'s results over the leaves.
#[test]
fn merging_by_linearizations_changes_no_report() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let (limits, options) = (Limits::default(), LocalizeOptions::default());
    let mut merged_less = 0;
    for entry in std::fs::read_dir(root.join("fixtures")).unwrap() {
        let dir = entry.unwrap().path();
        for name in ["failing.json", "fixed.json", "correct.json"] {
            let Ok(mut test) = testcase::load(&dir.join(name)) else {
                continue;
            };
            let merged = localize(&test, &limits, &options, &mut ()).unwrap();
            test.merge_by_linearizations = false;
            let reference = localize(&test, &limits, &options, &mut ()).unwrap();
            let report = |l: &Localized| {
                let mut r = l.report.clone();
                r.tree.distinct_states = 0;
                r.tree.graph_nodes = 0;
                r.tree.loop_edges = 0;
                r.tree.elapsed_ms = 0;
                r.labels_distinct = Default::default();
                r.notes.retain(|n| !n.contains("loop edge"));
                let mut json = fgvt_reports::render_json(&r);
                // Node numbers follow the order states were first met.
                json = without_node_numbers(&json);
                json
            };
            assert_eq!(report(&merged), report(&reference), "{}", dir.display());
            let states = |l: &Localized| l.report.tree.distinct_states;
            assert!(states(&merged) <= states(&reference), "{}", dir.display());
            merged_less += usize::from(states(&merged) < states(&reference));
        }
    }
    assert!(merged_less > 10, "only {merged_less} fixtures merge more");
}

/// `json` without the values of its `"node"` keys.
fn without_node_numbers(json: &str) -> String {
    json.lines()
        .filter(|line| !line.trim_start().starts_with("\"node\":"))
        .collect::<Vec<_>>()
        .join("\n")
}
