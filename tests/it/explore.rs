//! `fgvt explore` as a user runs it: counts, paths, JSON, and the leaves that are not complete.

use serde_json::Value;

use crate::common;

use common::{fgvt, fixture, output};

/// Writes a model and a test into a fresh directory and runs `fgvt explore` with `args`.
fn explore(model: &str, test: &str, args: &[&str]) -> (i32, String, String) {
    let dir = common::workdir(&[("m.fgv", model), ("test.json", test)]);
    output(
        fgvt()
            .arg("explore")
            .arg(dir.path().join("test.json"))
            .args(args),
    )
}

fn json(model: &str, test: &str, args: &[&str]) -> (i32, Value) {
    let mut all = vec!["--format", "json"];
    all.extend_from_slice(args);
    let (code, out, err) = explore(model, test, &all);
    (
        code,
        serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}{err}")),
    )
}

#[test]
fn pair_snapshot_has_leaves_where_read_returns_a_pair_that_never_existed() {
    let (code, out, _) = output(
        fgvt()
            .arg("explore")
            .arg(fixture("pair_snapshot/failing.json"))
            .arg("--format")
            .arg("json"),
    );
    assert_eq!(code, 1, "a leaf is not linearizable");
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["schema"], "fgvt.explore/1");
    let tree = &v["tree"];
    for key in [
        "nodes",
        "edges",
        "leaves",
        "complete",
        "stuck",
        "fault",
        "bounded",
        "distinct_states",
        "max_depth",
    ] {
        assert!(tree[key].is_u64(), "tree.{key} missing: {tree}");
    }
    assert_eq!(
        tree["edges"].as_u64().unwrap() + 1,
        tree["nodes"].as_u64().unwrap()
    );
    assert_eq!(tree["leaves"], tree["complete"]);
    let reads = &v["results"]["T1 read()"];
    assert!(reads["(1, 2)"].as_u64().unwrap() >= 1, "{reads}");
    assert_eq!(
        v["verdicts"]["not_linearizable"], reads["(1, 2)"],
        "exactly the (1, 2) leaves fail"
    );
}

#[test]
fn memoized_and_plain_exploration_report_the_same_unfolded_counts() {
    let run = |extra: &[&str]| {
        let (_, out, _) = output(
            fgvt()
                .arg("explore")
                .arg(fixture("pair_snapshot/failing.json"))
                .args(["--format", "json"])
                .args(extra),
        );
        let v: Value = serde_json::from_str(&out).unwrap();
        v
    };
    let (memo, plain) = (run(&[]), run(&["--no-memo"]));
    for key in ["nodes", "leaves", "complete", "max_depth"] {
        assert_eq!(memo["tree"][key], plain["tree"][key], "{key}");
    }
    assert!(memo["tree"]["graph_nodes"].as_u64() < plain["tree"]["graph_nodes"].as_u64());
    assert_eq!(memo["results"], plain["results"]);
}

#[test]
fn a_schedule_prints_the_path_as_per_thread_columns() {
    let (code, text, _) = output(fgvt().args([
        "explore",
        fixture("pair_snapshot/failing.json").to_str().unwrap(),
        "--schedule",
        "1,0,0,1,0,0,1",
    ]));
    assert_eq!(code, 1, "the path's leaf is not linearizable: {text}");
    let header = text.lines().next().unwrap();
    assert!(header.contains("T0") && header.contains("T1"), "{text}");
    assert!(text.contains("write(0, 2): write d[0] = 2 (l.8)"), "{text}");
    assert!(text.contains("read d[0] → 1 (l.13)"), "{text}");
    assert!(text.contains("⇒ (1, 2)"), "{text}");
    assert!(text.contains("leaf: complete"), "{text}");
}

#[test]
fn a_schedule_naming_a_thread_that_cannot_move_is_bad_input() {
    let (code, _, err) = output(fgvt().args([
        "explore",
        fixture("pair_snapshot/failing.json").to_str().unwrap(),
        "--schedule",
        "1,1,1,1,1",
    ]));
    assert_eq!(code, 2);
    assert!(err.contains("at step 3, thread 1 cannot move"));
}

const SPIN_LOCK: &str = r#"
object SpinLock {
    shared int flag = 0;
    shared int ready = 0;

    // Takes the spin lock, then waits for a signal nobody sends.
    op holder() {
        while (!cas(flag, 0, 1)) { }
        await(ready == 1);
    }

    op other() {
        while (!cas(flag, 0, 1)) { }
        flag = 0;
    }
}
"#;

#[test]
fn a_spin_lock_whose_holder_blocks_forever_gives_stuck_leaves_not_a_hang() {
    let test = r#"{"object": "m.fgv", "threads": [["holder()"], ["other()"]]}"#;
    let (code, v) = json(SPIN_LOCK, test, &[]);
    // Run alone, neither operation blocks: the stuck histories are violations.
    assert_eq!(code, 1, "{v}");
    let tree = &v["tree"];
    assert_eq!(tree["complete"], 0, "{tree}");
    assert!(tree["stuck"].as_u64().unwrap() >= 2, "{tree}");
    assert_eq!(tree["bounded"], 0, "{tree}");
}

#[test]
fn a_two_lock_deadlock_gives_a_stuck_leaf() {
    let model = r#"
object TwoLocks {
    lock a, b;
    op ab() { lock(a); lock(b); unlock(b); unlock(a); }
    op ba() { lock(b); lock(a); unlock(a); unlock(b); }
}
"#;
    let test = r#"{"object": "m.fgv", "threads": [["ab()"], ["ba()"]]}"#;
    let (code, v) = json(model, test, &[]);
    assert_eq!(code, 1, "a deadlock is a violation: {v}");
    assert_eq!(v["tree"]["stuck"], 2, "{v}");
    assert!(v["tree"]["complete"].as_u64().unwrap() > 0);
}

#[test]
fn a_loop_on_a_local_counter_gives_bounded_leaves_and_exit_3() {
    let (code, out, _) = explore(common::LOCAL_LOOP_MODEL, common::LOCAL_LOOP_TEST, &[]);
    assert!(out.contains("bounded 1"), "{out}");
    assert!(
        out.contains("verdicts") && out.contains("unknown 1"),
        "{out}"
    );
    assert!(out.contains("PARTIAL"), "{out}");
    assert_eq!(code, 3, "{out}");
}

#[test]
fn max_states_marks_the_result_partial_with_exit_3() {
    let (code, v) = json(
        SPIN_LOCK,
        r#"{"object": "m.fgv", "threads": [["other()"], ["other()"], ["other()"]]}"#,
        &["--max-states", "20"],
    );
    assert_eq!(code, 3, "{v}");
    assert_eq!(v["partial"], "max-states");
    // The states left unexplored are cut leaves; bounded ones are paths an operation's limit
    // cut (issue 27).
    assert!(v["tree"]["cut"].as_u64().unwrap() > 0, "{v}");
    assert_eq!(v["tree"]["bounded"], 0, "{v}");
}

/// Issue 27: `explore` lists the failing leaves' indices, so `--leaf N` is no guesswork.
#[test]
fn explore_lists_the_failing_leaves_that_leaf_takes() {
    let pair = fixture("pair_snapshot/failing.json");
    let (code, out, _) = output(fgvt().arg("explore").arg(&pair));
    assert_eq!(code, 1, "{out}");
    let line = out
        .lines()
        .find_map(|l| l.trim().strip_prefix("failing leaves (--leaf N): "))
        .unwrap_or_else(|| panic!("no list of failing leaves: {out}"));
    let first: u64 = line.split([',', ' ']).next().unwrap().parse().unwrap();
    let (code, run, _) = output(
        fgvt()
            .arg("explore")
            .arg(&pair)
            .args(["--leaf", &first.to_string()]),
    );
    assert_eq!(code, 1, "leaf {first} fails: {run}");
    assert!(run.contains("not linearizable"), "{run}");
    // JSON lists the same, and the leaf just before the first failing one passes.
    let (_, json, _) = output(fgvt().arg("explore").arg(&pair).args(["--format", "json"]));
    let v: Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["failing_leaves"][0], first, "{json}");
    if first > 0 {
        let (code, run, _) = output(
            fgvt()
                .arg("explore")
                .arg(&pair)
                .args(["--leaf", &(first - 1).to_string()]),
        );
        assert_eq!(code, 0, "leaf {} passes: {run}", first - 1);
    }
}
