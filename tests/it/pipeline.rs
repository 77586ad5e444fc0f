//! The whole pipeline, as a user runs it: `hunt` finds a failing test from a hunt file alone,
//! `minimize` shrinks it to no more concurrent operations than the paper's test, and
//! `localize` reports a CDRS. Every fixture runs in a temporary copy of its folder, so that
//! the written tests' relative paths are exercised too.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::common;

/// A temporary copy of `fixtures/<name>`.
fn fixture(name: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let source = common::fixture(name);
    for entry in std::fs::read_dir(&source).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), dir.path().join(entry.file_name())).unwrap();
    }
    dir
}

/// Runs `fgvt args…` in `dir`: exit code, stdout, stderr.
fn fgvt(dir: &Path, args: &[&str]) -> (i32, String, String) {
    common::run(common::fgvt().current_dir(dir).args(args))
}

fn json(path: PathBuf) -> Value {
    serde_json::from_str(
        &std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display())),
    )
    .unwrap()
}

/// Operations in the threads of a test file.
fn concurrent_ops(test: &Value) -> usize {
    test["threads"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_array().unwrap().len())
        .sum()
}

/// hunt → minimize → localize on one Table 2 fixture.
fn pipeline(name: &str) {
    let dir = fixture(name);
    let d = dir.path();
    let (code, out, err) = fgvt(d, &["hunt", "hunt.json", "--seed", "1", "-o", "found.json"]);
    assert_eq!(code, 1, "{name}: hunt finds a failing test\n{out}{err}");
    assert!(out.contains("FAILING test at sample"), "{out}");
    let found = json(d.join("found.json"));
    assert_eq!(found["seed"], 1, "the seed is recorded");

    let (code, out, err) = fgvt(d, &["minimize", "found.json", "-o", "minimal.json"]);
    assert_eq!(code, 1, "{name}: the minimal test fails\n{out}{err}");
    let minimal = json(d.join("minimal.json"));
    let paper = json(d.join("failing.json"));
    assert!(
        concurrent_ops(&minimal) <= concurrent_ops(&paper),
        "{name}: {} concurrent operations, the paper's test has {}\n{out}",
        concurrent_ops(&minimal),
        concurrent_ops(&paper)
    );
    assert_eq!(minimal["object"], found["object"], "the object key is kept");

    let (code, out, err) = fgvt(d, &["localize", "minimal.json", "--format", "json"]);
    assert_eq!(code, 1, "{name}: localize finds the violation\n{out}{err}");
    let report: Value = serde_json::from_str(&out).unwrap();
    assert!(
        !report["cdrs"].as_array().unwrap().is_empty(),
        "{name}: a CDRS is reported\n{out}"
    );
}

#[test]
fn pair_snapshot_end_to_end() {
    pipeline("pair_snapshot");
}

#[test]
fn lock_free_list_end_to_end() {
    pipeline("lock_free_list");
}

#[test]
fn optimistic_queue_end_to_end() {
    pipeline("optimistic_queue");
}

#[test]
fn snark_end_to_end() {
    pipeline("snark");
}

#[test]
fn simple_list_end_to_end() {
    pipeline("simple_list");
}

#[test]
fn linked_list_end_to_end() {
    pipeline("linked_list");
}

/// A correct object: nothing found in the hunt file's default sample.
fn finds_nothing(name: &str, hunt: &str) {
    let dir = fixture(name);
    let (code, out, err) = fgvt(
        dir.path(),
        &["hunt", hunt, "--seed", "1", "-o", "found.json"],
    );
    assert_eq!(code, 0, "{name}/{hunt}: nothing found\n{out}{err}");
    assert!(out.contains("no failing test found"), "{out}");
    assert!(!dir.path().join("found.json").exists());
}

#[test]
fn fixed_objects_pass_their_hunts() {
    for name in ["lock_free_list", "simple_list", "linked_list"] {
        finds_nothing(name, "hunt-fixed.json");
    }
}

#[test]
fn fixed_pair_snapshot_passes_its_hunt() {
    finds_nothing("pair_snapshot", "hunt-fixed.json");
}

#[test]
fn fixed_optimistic_queue_passes_its_hunt() {
    finds_nothing("optimistic_queue", "hunt-fixed.json");
}

#[test]
fn fixed_snark_passes_its_hunt() {
    finds_nothing("snark", "hunt-fixed.json");
}

#[test]
fn correct_objects_pass_their_hunts() {
    finds_nothing("lock_counter", "hunt.json");
    finds_nothing("lock_set", "hunt.json");
}

#[test]
fn the_number_of_jobs_does_not_change_the_test_found() {
    let dir = fixture("linked_list");
    let d = dir.path();
    for jobs in ["1", "2"] {
        let out = format!("found-{jobs}.json");
        let (code, stdout, err) = fgvt(
            d,
            &[
                "hunt",
                "hunt.json",
                "--seed",
                "1",
                "--jobs",
                jobs,
                "-o",
                &out,
            ],
        );
        assert_eq!(code, 1, "{stdout}{err}");
    }
    assert_eq!(json(d.join("found-1.json")), json(d.join("found-2.json")));
}

#[test]
fn different_seeds_draw_different_tests() {
    let dir = fixture("simple_list");
    let d = dir.path();
    let draw = |seed: &str| {
        let (_, out, _) = fgvt(
            d,
            &[
                "hunt",
                "hunt.json",
                "--seed",
                seed,
                "--all",
                "--samples",
                "8",
            ],
        );
        out
    };
    assert_ne!(draw("1"), draw("2"));
}

#[test]
fn hunt_localize_runs_the_whole_pipeline() {
    let dir = fixture("simple_list");
    let d = dir.path();
    let (code, out, err) = fgvt(d, &["hunt", "hunt.json", "--seed", "1", "--localize"]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        out.contains("NOT LINEARIZABLE") && out.contains("CDRS 1"),
        "{out}"
    );
    assert!(err.contains("minimized"), "{err}");
    // The report is about the minimal test, written to the current directory (no --out-dir),
    // which loads and fails on its own.
    let (code, _, err) = fgvt(d, &["localize", "minimal.json"]);
    assert_eq!(code, 1, "{err}");
}

#[test]
fn written_tests_point_at_the_model_from_their_own_directory() {
    let dir = fixture("simple_list");
    let d = dir.path();
    std::fs::create_dir_all(d.join("out/deeper")).unwrap();
    let (code, _, err) = fgvt(
        d,
        &["hunt", "hunt.json", "--seed", "1", "-o", "out/found.json"],
    );
    assert_eq!(code, 1, "{err}");
    assert_eq!(
        json(d.join("out/found.json"))["object"],
        "../simple_list.fgv#SimpleList"
    );
    let (code, _, err) = fgvt(
        &d.join("out"),
        &["minimize", "found.json", "-o", "deeper/minimal.json"],
    );
    assert_eq!(code, 1, "{err}");
    assert_eq!(
        json(d.join("out/deeper/minimal.json"))["object"],
        "../../simple_list.fgv#SimpleList"
    );
    let (code, _, err) = fgvt(d, &["localize", "out/deeper/minimal.json"]);
    assert_eq!(code, 1, "{err}");
}

#[test]
fn without_output_the_test_goes_to_stdout() {
    let dir = fixture("simple_list");
    let (code, out, err) = fgvt(dir.path(), &["hunt", "hunt.json", "--seed", "1"]);
    assert_eq!(code, 1, "{err}");
    let test: Value = serde_json::from_str(&out).unwrap();
    // Piped, the text may end up anywhere: the model path is absolute.
    let object = test["object"].as_str().unwrap();
    assert!(object.ends_with("simple_list.fgv#SimpleList"), "{object}");
    assert!(Path::new(object).is_absolute(), "{object}");
    assert!(err.contains("FAILING test at sample"), "{err}");
}

#[test]
fn minimizing_a_passing_test_changes_nothing() {
    let dir = fixture("lock_counter");
    let (code, out, err) = fgvt(
        dir.path(),
        &["minimize", "correct.json", "-o", "minimal.json"],
    );
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("does not fail"), "{out}");
    assert!(!dir.path().join("minimal.json").exists());
}

#[test]
fn a_bad_hunt_file_names_the_position() {
    let dir = fixture("lock_counter");
    let d = dir.path();
    let cases = [
        (
            r#"{"object": "lock_counter.fgv", "operations": ["inc()"], "threads": 2, "ops_per_thread": 2, "sample": 3}"#,
            "unknown field",
        ),
        (
            r#"{"object": "lock_counter.fgv", "operations": ["inc(1)"], "threads": 2, "ops_per_thread": 2}"#,
            "operations[0]",
        ),
        (
            r#"{"object": "lock_counter.fgv", "operations": ["frob()"], "threads": 2, "ops_per_thread": 2}"#,
            "unknown operation",
        ),
        (
            r#"{"object": "lock_counter.fgv", "operations": ["inc()"], "threads": 0, "ops_per_thread": 2}"#,
            "threads must be at least 1",
        ),
        (
            r#"{"object": "lock_counter.fgv", "operations": [], "threads": 1, "ops_per_thread": 2}"#,
            "at least one operation",
        ),
        (
            r#"{"object": "missing.fgv", "operations": ["inc()"], "threads": 1, "ops_per_thread": 2}"#,
            "missing.fgv",
        ),
        (
            r#"{"object": "lock_counter.fgv", "spec": "stack2", "operations": ["inc()"], "threads": 1, "ops_per_thread": 1}"#,
            "unknown spec",
        ),
    ];
    for (text, expected) in cases {
        std::fs::write(d.join("bad.json"), text).unwrap();
        let (code, _, err) = fgvt(d, &["hunt", "bad.json"]);
        assert_eq!(code, 2, "{text}\n{err}");
        assert!(
            err.contains(expected) && err.contains("bad.json:1:"),
            "{text}\n{err}"
        );
    }
}
