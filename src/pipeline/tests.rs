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
