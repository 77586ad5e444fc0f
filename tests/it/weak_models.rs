//! Models under weak memory, end to end through the binary: the ports of fgvt-sync's weak
//! fixtures (message passing, a seqlock without fences, a Treiber stack publishing `relaxed`)
//! fail with a CDRS that shows the stale read, pass with every access `seq_cst`, and name the
//! fix; their fixed objects pass; orderings an access cannot take are errors with the file,
//! line and column; `--max-stale` bounds the ways and `--schedule` takes them.

use serde_json::Value;

use crate::common;

use common::{fgvt, localize, run, workdir};

/// `fgvt localize fixtures/<fixture>/<test> --format json`: (exit code, report).
fn report(fixture: &str, test: &str, extra: &[&str]) -> (i32, Value) {
    let path = format!("fixtures/{fixture}/{test}");
    let mut args = vec![path.as_str(), "--format", "json"];
    args.extend_from_slice(extra);
    let (code, out) = localize(&args);
    (
        code,
        serde_json::from_str(&out).unwrap_or_else(|e| panic!("{path}: {e}\n{out}")),
    )
}

/// Every race of the top CDRS's G node that the witness took.
fn taken_at_last_race(r: &Value) -> Vec<Value> {
    let nodes = r["cdrs"][0]["nodes"].as_array().unwrap();
    let last = nodes.last().unwrap();
    last["races"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|race| race["taken"] == true)
        .cloned()
        .collect()
}

/// Checks a buggy port: not linearizable; the top CDRS ends in a G race whose taken event is a
/// stale read at `snippet` (it read an older store than the latest, and the latest is
/// named); only under weak memory; and the fix found, as `(change, snippet, to)`.
fn check_buggy(fixture: &str, snippet: &str, fix: &[(&str, &str, &str)]) -> Value {
    let (code, r) = report(fixture, "failing.json", &[]);
    assert_eq!(code, 1, "{fixture}");
    assert_eq!(r["verdict"], "not-linearizable", "{fixture}");
    assert_eq!(r["partial"], Value::Null, "{fixture}");
    let top = &r["cdrs"][0];
    assert!(
        top["pattern"].as_str().unwrap().ends_with('G'),
        "{fixture}: {}",
        top["pattern"]
    );
    let taken = taken_at_last_race(&r);
    assert_eq!(taken.len(), 1, "{fixture}");
    let stale = &taken[0];
    assert_eq!(stale["snippet"], snippet, "{fixture}");
    assert_eq!(stale["outcome"], "err", "{fixture}");
    assert_eq!(stale["order"], "Relaxed", "{fixture}");
    let way = &stale["memory"];
    assert!(way["way"].as_u64().unwrap() >= 1, "{fixture}: {way}");
    assert!(
        way["read"].is_object() && way["latest"].is_object(),
        "{fixture}: {way}"
    );
    assert_ne!(way["read"], way["latest"], "{fixture}");

    let memory = &r["memory"];
    assert_eq!(memory["model"], "rc11", "{fixture}");
    assert_eq!(memory["passes_sequentially_consistent"], true, "{fixture}");
    let found: Vec<(String, String, String)> = memory["fix"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["change"].as_str().unwrap().to_string(),
                c["snippet"].as_str().unwrap().to_string(),
                c["to"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let expected: Vec<(String, String, String)> = fix
        .iter()
        .map(|(a, b, c)| (a.to_string(), b.to_string(), c.to_string()))
        .collect();
    assert_eq!(found, expected, "{fixture}: {memory}");
    // Issue 41: the CDRS names, beside its stale read, the accesses whose orderings decide it.
    assert_eq!(top["decided_by"], memory["fix"], "{fixture}");
    r
}

fn check_fixed(fixture: &str) {
    let (code, r) = report(fixture, "fixed.json", &[]);
    assert_eq!(code, 0, "{fixture}");
    assert_eq!(r["verdict"], "linearizable", "{fixture}");
    assert_eq!(r["partial"], Value::Null, "{fixture}");
    assert_eq!(r["tree"]["unknown_leaves"], 0, "{fixture}");
    // Still a weak run: the report says so, and has nothing to fix.
    assert_eq!(r["memory"]["model"], "rc11", "{fixture}");
    assert_eq!(r["memory"]["fix"], serde_json::json!([]), "{fixture}");
}

#[test]
fn message_passing_reads_stale_data_behind_a_relaxed_flag() {
    let r = check_buggy(
        "message_passing",
        "data.load(relaxed)",
        &[
            ("order", "ready.store(true, relaxed)", "release"),
            ("order", "ready.load(relaxed)", "acquire"),
        ],
    );
    // T1 read the flag raised, then the initial data.
    let history = r["cdrs"][0]["witness"]["history"]["text"].as_str().unwrap();
    assert!(history.contains("T1:ret 0"), "{history}");
    check_fixed("message_passing");
}

#[test]
fn a_seqlock_without_fences_validates_a_torn_pair() {
    let r = check_buggy(
        "fenced_seqlock",
        "seq.load(relaxed)",
        &[
            ("fence-after", "b.load(relaxed)", "acquire"),
            ("fence-after", "seq.store(s + 1, relaxed)", "release"),
        ],
    );
    let history = r["cdrs"][0]["witness"]["history"]["text"].as_str().unwrap();
    assert!(history.contains("T1:ret (1, 0)"), "{history}");
    check_fixed("fenced_seqlock");
}

#[test]
fn a_relaxed_push_loses_the_item_below_its_node() {
    let r = check_buggy(
        "release_stack",
        "t.next.load(relaxed)",
        &[("order", "cas(top, t, n, relaxed, relaxed)", "release")],
    );
    // The stale read is of the null `new` gave the node's `next`.
    let stale = &taken_at_last_race(&r)[0]["memory"];
    assert_eq!(stale["read"]["value"], "null");
    assert_eq!(stale["read"]["thread"], Value::Null);
    assert_eq!(stale["latest"]["thread"], 0);
    check_fixed("release_stack");
}

#[test]
fn the_text_report_names_the_stale_read_and_the_weak_memory_verdict() {
    let (code, text) = localize(&["fixtures/message_passing/failing.json"]);
    assert_eq!(code, 1);
    assert!(
        text.contains(
            "T1 read data → 0 (Relaxed; stale: reads the initial 0 while T0's store of 1 at \
             fixtures/message_passing/message_passing.fgv:15:9 is newer)"
        ),
        "{text}"
    );
    assert!(
        text.contains("Weak memory (the C++20 / Rust model):"),
        "{text}"
    );
    assert!(text.contains("only under weak memory"), "{text}");
    assert!(
        text.contains(
            "the orderings that decide it: make the store to `ready` at \
             fixtures/message_passing/message_passing.fgv:17:9 release (was relaxed); and make \
             the load of `ready` at fixtures/message_passing/message_passing.fgv:22:13 acquire"
        ),
        "{text}"
    );
    // A model without orderings says nothing of memory.
    let (_, text) = localize(&["fixtures/pair_snapshot/failing.json"]);
    assert!(!text.contains("Weak memory"), "{text}");
    assert!(!text.contains("Relaxed"), "{text}");
}

#[test]
fn max_stale_bounds_the_ways_of_an_access() {
    // With no older store allowed, the stale read is a bounded leaf: the run is partial.
    let (code, r) = report("message_passing", "failing.json", &["--max-stale", "0"]);
    assert_eq!(code, 3);
    assert_eq!(r["partial"], "max-stale");
    let (code, r) = report("message_passing", "failing.json", &["--max-stale", "1"]);
    assert_eq!(code, 1);
    assert_eq!(r["partial"], Value::Null);
}

#[test]
fn a_schedule_takes_a_way_of_a_step() {
    let explore = |schedule: &str| {
        run(fgvt()
            .current_dir(common::root())
            .args([
                "explore",
                "fixtures/message_passing/failing.json",
                "--schedule",
            ])
            .arg(schedule))
    };
    // T1's second step, way 1: the data it reads is the older store.
    let (code, out, _) = explore("0,0,1,1/1");
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("read data → 0"), "{out}");
    // The schedule printed is the one given, ways included: pasted back, it is the same run.
    assert!(out.contains("schedule: 0,0,1,1/1\n"), "{out}");
    let (code, out, _) = explore("0,0,1,1");
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("read data → 1"), "{out}");
    // A way the step does not have is a usage error.
    let (code, _, err) = explore("0,0,1,1/3");
    assert_eq!(code, 2);
    assert!(err.contains("thread 1/3 cannot move"), "{err}");
}

#[test]
fn an_ordering_an_access_cannot_take_is_bad_input_with_its_position() {
    let dir = workdir(&[
        (
            "bad.fgv",
            "object Bad {\n    shared int x = 0;\n    op get() {\n        return x.load(release);\n    }\n}\n",
        ),
        (
            "test.json",
            r#"{"object": "bad.fgv", "threads": [["get()"]]}"#,
        ),
    ]);
    let (code, _, err) = run(fgvt()
        .current_dir(dir.path())
        .args(["localize", "test.json"]));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("a load cannot be `release`"), "{err}");
    assert!(err.contains("bad.fgv:4:23"), "{err}");
    assert!(err.contains("relaxed`, `acquire` or `seq_cst"), "{err}");
}

/// A counter whose increment loads and then stores (`acquire`, `release`) loses an update
/// under sequential consistency too: no change of orderings can fix it, and the report says so
/// without exploring the test again for each change.
#[test]
fn a_failure_under_seq_cst_gets_no_fix_search() {
    let dir = workdir(&[
        (
            "counter.fgv",
            "object Counter {\n    shared int count = 0;\n    op inc() {\n        \
             int seen = count.load(acquire);\n        count.store(seen + 1, release);\n    }\n    \
             op get() {\n        return count.load(acquire);\n    }\n}\n",
        ),
        (
            "test.json",
            r#"{"object": "counter.fgv", "threads": [["inc()"], ["inc()"]], "final": ["get()"]}"#,
        ),
    ]);
    let (code, out, err) =
        run(fgvt()
            .current_dir(dir.path())
            .args(["localize", "test.json", "--format", "json"]));
    assert_eq!(code, 1, "{err}");
    let r: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(r["verdict"], "not-linearizable");
    let memory = &r["memory"];
    assert_eq!(memory["passes_sequentially_consistent"], false, "{memory}");
    assert_eq!(memory["fix"], Value::Array(vec![]), "{memory}");
    assert_eq!(
        memory["fix_note"],
        fgvt_reports::no_fix_note().as_str(),
        "{memory}"
    );
}
