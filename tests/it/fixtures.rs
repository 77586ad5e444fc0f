//! `fgvt localize` on every fixture, as a user runs it from the repository root: the verdicts,
//! exit codes, last labels and racing statements of the FGVT paper's Table 2 and of Line-Up's
//! examples, no false alarm on the fixed and correct objects, the reports as snapshots, and
//! `fixtures/README.md` up to date.
//!
//! What "the racing statements include the paper's" means: each fixture's `paper.json` lists
//! the paper's statements, each with the model sites (line and racing expression) that are
//! that statement. A CDRS *holds* a statement when one of its races is at one of those sites.
//! Some CDRS that ends in the paper's last label must hold all of them (searched over every
//! CDRS, `--max-cdrs 10000`); the tests below also pin which statements the top CDRS holds.

use serde_json::Value;

use crate::common;

#[allow(dead_code)]
#[path = "../../examples/fixture_table.rs"]
mod fixture_table;

use common::localize;
use fixture_table::{first_covering, last_label, matches, paper, sites};

/// The JSON report of `fixtures/<fixture>/<test>` with every CDRS: (exit code, report).
fn report(fixture: &str, test: &str) -> (i32, Value) {
    let path = format!("fixtures/{fixture}/{test}");
    let (code, out) = localize(&[&path, "--format", "json", "--max-cdrs", "10000"]);
    (
        code,
        serde_json::from_str(&out).unwrap_or_else(|e| panic!("{path}: {e}\n{out}")),
    )
}

fn cdrs(report: &Value) -> &Vec<Value> {
    report["cdrs"].as_array().unwrap()
}

fn pattern(cdrs: &Value) -> &str {
    cdrs["pattern"].as_str().unwrap()
}

/// Checks a failing test against its `paper.json`: not linearizable (exit 1), at least one
/// CDRS, the top one ending in the paper's last label, and some CDRS with that last label
/// holding every statement of the paper. Returns the report and the 0-based rank of the best
/// CDRS that holds them all.
fn check_failing(fixture: &str) -> (Value, usize) {
    let paper = paper(common::root(), fixture);
    let (code, r) = report(fixture, "failing.json");
    assert_eq!(code, 1, "{fixture}: exit code");
    assert_eq!(r["verdict"], "not-linearizable", "{fixture}");
    assert_eq!(r["partial"], Value::Null, "{fixture}");
    assert_eq!(r["truncated"], false, "{fixture}: every CDRS is enumerated");
    let all = cdrs(&r);
    assert!(!all.is_empty(), "{fixture}: no CDRS");
    assert_eq!(
        r["cdrs_found"].as_u64().unwrap() as usize,
        all.len(),
        "{fixture}: --max-cdrs 10000 lists them all"
    );
    let top = &all[0];
    assert!(
        paper.last_label.iter().any(|l| l == last_label(top)),
        "{fixture}: top CDRS {}",
        pattern(top)
    );
    let Some(covering) = first_covering(&r, &paper) else {
        let missing: Vec<&str> = paper
            .statements
            .iter()
            .filter(|s| !all.iter().any(|c| !matches(c, s).is_empty()))
            .map(|s| s.paper.as_str())
            .collect();
        panic!("{fixture}: no CDRS holds every statement of the paper; never racing: {missing:?}")
    };
    (r, covering)
}

/// The paper statements (as paper.json names them) that the top CDRS holds.
fn held_by_top(fixture: &str, r: &Value) -> Vec<String> {
    let paper = paper(common::root(), fixture);
    paper
        .statements
        .iter()
        .filter(|s| !matches(&cdrs(r)[0], s).is_empty())
        .map(|s| s.paper.clone())
        .collect()
}

fn lines(cdrs: &Value) -> Vec<u64> {
    sites(cdrs).iter().map(|(l, _)| *l).collect()
}

#[test]
fn lock_free_list_races_attempt_mark_and_the_finds_read_of_curr_next() {
    let (r, covering) = check_failing("lock_free_list");
    // The top CDRS is the bare G race of the split attemptMark: T0's CAS (l.21) against T1's
    // read of the pair (l.19). The find's `curr.next.get()` (l.29) races in a WG before it in
    // the third CDRS, `WG BG G`.
    assert_eq!(pattern(&cdrs(&r)[0]), "G");
    assert_eq!(held_by_top("lock_free_list", &r), ["attemptMark()"]);
    assert_eq!(lines(&cdrs(&r)[0]), [21, 19]);
    assert_eq!(covering, 2);
    assert_eq!(pattern(&cdrs(&r)[covering]), "WG BG G");
    // Every failing leaf is a history in which both removes return true.
    let history = cdrs(&r)[0]["witness"]["history"]["text"].as_str().unwrap();
    assert_eq!(history.matches("ret true").count(), 3, "{history}");
}

#[test]
fn optimistic_queue_races_cas_head_and_head_get_item() {
    let (r, covering) = check_failing("optimistic_queue");
    assert_eq!(pattern(&cdrs(&r)[0]), "WG G");
    assert_eq!(covering, 0);
    assert_eq!(
        held_by_top("optimistic_queue", &r),
        ["head.getItem()", "casHead()"]
    );
    // The G race: T1's casHead (l.44) against T0's read of head for the item (l.47).
    let g = cdrs(&r)[0]["nodes"].as_array().unwrap().last().unwrap();
    let g_lines: Vec<u64> = g["races"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["location"]["line"].as_u64().unwrap())
        .collect();
    assert_eq!(g_lines, [47, 44]);
}

#[test]
fn pair_snapshot_races_every_statement_of_the_paper_in_its_one_cdrs() {
    let (r, covering) = check_failing("pair_snapshot");
    assert_eq!(cdrs(&r).len(), 1);
    assert_eq!(pattern(&cdrs(&r)[0]), "WG WG WG WG WG G");
    assert_eq!(covering, 0);
    assert_eq!(lines(&cdrs(&r)[0]), [8, 13, 14, 15]);
}

#[test]
fn snark_has_several_cdrs_and_one_shaped_like_the_papers_holds_all_its_statements() {
    let (r, covering) = check_failing("snark");
    let all = cdrs(&r);
    let distinct: std::collections::BTreeSet<&str> = all.iter().map(pattern).collect();
    assert!(distinct.len() > 1, "{distinct:?}");
    // The top CDRS, `WG G`, is popLeft's DCAS (l.85) against popRight's `rh.R == rh` (l.62).
    assert_eq!(pattern(&all[0]), "WG G");
    assert_eq!(
        held_by_top("snark", &r),
        ["DCAS(&LeftHat, ...)", "if (rh.R == rh)"]
    );
    // The paper's `Wg Wg G` with all four statements: rh = RightHat (l.60) before pushRight's
    // DCAS (l.37), then popLeft's DCAS (l.85) before the empty check (l.62).
    assert_eq!(covering, 3);
    assert_eq!(pattern(&all[covering]), "WG WG G");
    assert_eq!(lines(&all[covering]), [60, 37, 62, 84, 85]);
    // popRight returned empty (null) in every failing leaf shown.
    for c in all {
        assert!(
            c["witness"]["history"]["text"]
                .as_str()
                .unwrap()
                .contains("T0:ret null"),
            "{}",
            c["witness"]["history"]["text"]
        );
    }
}

#[test]
fn simple_list_ends_in_bg_or_a_g_after_bg_and_races_the_insertion() {
    let (r, covering) = check_failing("simple_list");
    let top = pattern(&cdrs(&r)[0]);
    // The paper: "Bg, or Bg G".
    let words: Vec<&str> = top.split(' ').collect();
    assert!(
        top == "BG" || (words.last() == Some(&"G") && words.contains(&"BG")),
        "{top}"
    );
    assert_eq!(top, "BG G");
    assert_eq!(covering, 0);
    // `curr.val < v` stands as the traversal's read of `curr.next` (l.23): `val` is final.
    assert_eq!(lines(&cdrs(&r)[0]), [25, 23, 28]);
    // The bug shows in the final state only: both adds return true, one element is missing.
    let history = cdrs(&r)[0]["witness"]["history"]["text"].as_str().unwrap();
    assert!(history.contains("ret false"), "{history}");
}

#[test]
fn linked_list_races_the_unsynchronized_size_against_the_synchronized_updates() {
    let (r, covering) = check_failing("linked_list");
    assert_eq!(pattern(&cdrs(&r)[0]), "BG G");
    assert_eq!(held_by_top("linked_list", &r), ["node.next == tail"]);
    // `synchronized` (the lock acquire of add, l.20) races only in longer CDRS: the best one
    // holding both is `WG WG WG G`.
    assert_eq!(covering, 6);
    assert_eq!(pattern(&cdrs(&r)[covering]), "WG WG WG G");
    let history = cdrs(&r)[0]["witness"]["history"]["text"].as_str().unwrap();
    assert!(history.contains("ret 3"), "size() returns 3: {history}");
}

#[test]
fn counter1_races_the_two_unlocked_increments() {
    let (r, covering) = check_failing("counter1");
    assert_eq!(pattern(&cdrs(&r)[0]), "G");
    assert_eq!(covering, 0);
}

#[test]
fn counter2_shows_its_bug_only_through_a_stuck_history() {
    let (r, covering) = check_failing("counter2");
    assert_eq!(covering, 0);
    assert_eq!(r["tree"]["stuck_leaves"], 1);
    assert_eq!(r["tree"]["failing_leaves"], 1);
    let witness = &cdrs(&r)[0]["witness"];
    assert_eq!(witness["leaf"], "stuck");
    assert_eq!(witness["history"]["stuck"], true);
    // The report says what the stuck thread waits for: the lock, its holder, and where.
    let waiting = witness["waiting"].as_array().unwrap();
    assert_eq!(waiting.len(), 1, "{witness}");
    assert_eq!(waiting[0]["thread"], 1);
    assert_eq!(waiting[0]["op"], "inc()");
    assert_eq!(waiting[0]["reason"], "waits for lock `lk`, held by T0");
    assert_eq!(waiting[0]["location"]["line"], 9);
    let (_, text) = localize(&["fixtures/counter2/failing.json"]);
    assert!(
        text.contains("stuck: T1 inc() waits for lock `lk`, held by T0"),
        "{text}"
    );
}

#[test]
fn try_take_queue_fails_on_the_try_lock() {
    let (r, covering) = check_failing("try_take_queue");
    assert_eq!(covering, 0);
    assert!(cdrs(&r)[0]["witness"]["history"]["text"]
        .as_str()
        .unwrap()
        .contains("ret null"));
}

/// Every fixed and correct test.
const LINEARIZABLE: &[(&str, &str)] = &[
    ("counter1", "fixed.json"),
    ("counter2", "fixed.json"),
    ("fenced_seqlock", "fixed.json"),
    ("linked_list", "fixed.json"),
    ("lock_counter", "correct.json"),
    ("lock_free_list", "fixed.json"),
    ("lock_set", "correct.json"),
    ("message_passing", "fixed.json"),
    ("optimistic_queue", "fixed.json"),
    ("pair_snapshot", "fixed.json"),
    ("release_stack", "fixed.json"),
    ("simple_list", "fixed.json"),
    ("snark", "fixed.json"),
    ("try_take_queue", "fixed.json"),
];

/// Every failing test.
const FAILING: &[&str] = &[
    "counter1",
    "counter2",
    "fenced_seqlock",
    "linked_list",
    "lock_free_list",
    "message_passing",
    "optimistic_queue",
    "pair_snapshot",
    "release_stack",
    "simple_list",
    "snark",
    "try_take_queue",
];

#[test]
fn every_fixture_test_is_listed_here() {
    let root = common::root();
    let mut listed: Vec<(String, String)> = LINEARIZABLE
        .iter()
        .map(|(f, t)| (f.to_string(), t.to_string()))
        .collect();
    listed.extend(
        FAILING
            .iter()
            .map(|f| (f.to_string(), "failing.json".to_string())),
    );
    listed.sort();
    let mut found = fixture_table::tests(root);
    found.sort();
    assert_eq!(found, listed);
}

#[test]
fn fixed_and_correct_objects_are_linearizable_with_no_cdrs() {
    for (fixture, test) in LINEARIZABLE {
        let (code, r) = report(fixture, test);
        assert_eq!(code, 0, "{fixture}/{test}");
        assert_eq!(r["verdict"], "linearizable", "{fixture}/{test}");
        assert_eq!(r["partial"], Value::Null, "{fixture}/{test}");
        assert_eq!(r["cdrs_found"], 0, "{fixture}/{test}");
        assert!(cdrs(&r).is_empty(), "{fixture}/{test}");
        assert_eq!(r["tree"]["failing_leaves"], 0, "{fixture}/{test}");
        assert_eq!(r["tree"]["unknown_leaves"], 0, "{fixture}/{test}");
    }
}

/// The test threads' calls and returns of a witness, as `(kind, thread)`: from its steps, and
/// from the history it shows.
fn witness_events(witness: &Value) -> (Vec<(String, u64)>, Vec<(String, u64)>) {
    let mut stepped = Vec::new();
    for step in witness["trace"].as_array().unwrap() {
        let thread = step["thread"].as_u64().unwrap();
        if !step["call"].is_null() {
            stepped.push(("call".to_string(), thread));
        }
        if !step["return"].is_null() {
            stepped.push(("return".to_string(), thread));
        }
    }
    let shown = (witness["history"]["events"].as_array().unwrap().iter())
        .filter(|e| e["lane"].as_str().unwrap().starts_with('T'))
        .map(|e| {
            let kind = e["kind"].as_str().unwrap().to_string();
            (kind, e["thread"].as_u64().unwrap())
        })
        .collect();
    (stepped, shown)
}

/// A leaf is shared by the paths that reach its state, and keeps the history of the first; a
/// CDRS's witness may be another path, whose calls and returns interleave otherwise (under
/// weak memory, any way the clocks allow). Every witness shows its own run's history: the
/// calls and returns of its steps, in their order (a stuck run's history adds the calls of
/// threads blocked before their first step, after them).
#[test]
fn every_witness_shows_its_own_runs_history() {
    for fixture in FAILING {
        let (_, r) = report(fixture, "failing.json");
        for c in cdrs(&r) {
            let (stepped, shown) = witness_events(&c["witness"]);
            assert_eq!(
                shown[..stepped.len().min(shown.len())],
                stepped[..],
                "{fixture}: {}",
                c["witness"]["history"]["text"]
            );
        }
    }
}

fn snapshot(fixture: &str, test: &str) {
    let path = format!("fixtures/{fixture}/{test}");
    let name = format!("{fixture}_{}", test.trim_end_matches(".json"));
    let (_, text) = localize(&[&path]);
    insta::assert_snapshot!(format!("{name}_text"), text);
    let (_, json) = localize(&[&path, "--format", "json"]);
    let json: Value = serde_json::from_str(&json).unwrap();
    insta::assert_json_snapshot!(format!("{name}_json"), json, { ".tree.elapsed_ms" => "[ms]" });
}

#[test]
fn failing_reports_are_kept_as_snapshots() {
    for fixture in FAILING {
        snapshot(fixture, "failing.json");
    }
}

#[test]
fn linearizable_reports_are_kept_as_snapshots() {
    for (fixture, test) in LINEARIZABLE {
        snapshot(fixture, test);
    }
}

#[test]
fn the_fixture_table_is_up_to_date() {
    // Every column but the time, which varies from run to run (and is a debug build's here).
    let fresh = fixture_table::render(&fixture_table::rows(1));
    let committed =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/README.md"))
            .unwrap();
    let fresh: Vec<String> = fresh.lines().map(fixture_table::without_time).collect();
    let committed: Vec<String> = committed.lines().map(fixture_table::without_time).collect();
    assert!(
        fresh == committed,
        "fixtures/README.md is out of date: run `cargo run --release --example fixture_table > fixtures/README.md`\n\
         first difference: {:?}",
        fresh.iter().zip(&committed).find(|(a, b)| a != b).map(|(a, b)| format!("\nnew: {a}\nold: {b}"))
    );
}
