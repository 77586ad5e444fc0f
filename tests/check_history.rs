//! `fgvt check-history` on the recorded histories of `../shared/histories/`, as a user runs it.

use std::path::PathBuf;

use serde_json::Value;

mod common;

fn histories() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/histories")
}

/// Runs `fgvt check-history` with `args`: (exit code, stdout, stderr).
fn check(args: &[&str]) -> (i32, String, String) {
    common::output(common::fgvt().arg("check-history").args(args))
}

fn verdict(file: &str, extra: &[&str]) -> (i32, Value) {
    let path = histories().join(file);
    let mut args = vec![path.to_str().unwrap(), "--format", "json"];
    args.extend_from_slice(extra);
    let (code, out, err) = check(&args);
    (
        code,
        serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out} {err}")),
    )
}

/// The documented verdicts of `../shared/histories/README.md`.
const EXPECTED: &[(&str, bool)] = &[
    ("jepsen/etcd_000.log", false),
    ("jepsen/etcd_002.log", true),
    ("kv/c01-ok.txt", true),
    ("kv/c01-bad.txt", false),
    ("kv/c10-ok.txt", true),
    ("kv/c10-bad.txt", false),
];

#[test]
fn every_recorded_history_gets_its_documented_verdict() {
    if !histories().is_dir() {
        eprintln!("skipped: {} is not there", histories().display());
        return;
    }
    for &(file, linearizable) in EXPECTED {
        let (code, v) = verdict(file, &[]);
        assert_eq!(v["schema"], "fgvt.check/1");
        assert_eq!(v["linearizable"], linearizable, "{file}: {v}");
        assert_eq!(code, if linearizable { 0 } else { 1 }, "{file}");
        if !linearizable {
            assert!(!v["explanation"].is_null(), "{file} has no explanation");
        }
    }
}

#[test]
fn kv_histories_are_partitioned_by_key_and_can_be_checked_whole() {
    if !histories().is_dir() {
        return;
    }
    for &(file, linearizable) in EXPECTED.iter().filter(|(f, _)| f.starts_with("kv/")) {
        let (_, parts) = verdict(file, &[]);
        assert!(parts["partitions"].as_u64().unwrap() > 1, "{file}: {parts}");
        let (code, whole) = verdict(file, &["--no-partition"]);
        assert_eq!(whole["partitions"], 1, "{file}");
        assert_eq!(whole["linearizable"], linearizable, "{file} unpartitioned");
        assert_eq!(code, if linearizable { 0 } else { 1 });
    }
}

#[test]
fn a_directory_gives_one_line_per_file_a_summary_and_the_worst_exit_code() {
    if !histories().is_dir() {
        return;
    }
    let (code, out, _) = check(&[histories().join("jepsen").to_str().unwrap()]);
    assert_eq!(code, 1);
    assert!(out.contains("etcd_000.log: NOT linearizable"), "{out}");
    assert!(out.contains("etcd_002.log: linearizable"), "{out}");
    assert!(
        out.contains("2 files: 1 linearizable, 1 not linearizable, 0 unknown, 0 errors"),
        "{out}"
    );
}

#[test]
fn an_empty_history_is_bad_input_not_linearizable() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("etcd_999.log");
    std::fs::write(&empty, "").unwrap();
    let (code, out, _) = check(&[empty.to_str().unwrap()]);
    assert_eq!(code, 2, "{out}");
    assert!(out.contains("error"), "{out}");
    assert!(!out.contains(": linearizable"), "{out}");
}

#[test]
fn a_malformed_line_is_reported_with_its_number() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("bad.log");
    std::fs::write(
        &file,
        "INFO  jepsen.util - 0\t:invoke\t:read\tnil\nINFO  jepsen.util - 0\t:frobnicate\t:read\tnil\n",
    )
    .unwrap();
    let (code, out, _) = check(&[file.to_str().unwrap()]);
    assert_eq!(code, 2, "{out}");
    assert!(out.contains(":2:") || out.contains("line 2"), "{out}");
}

#[test]
fn fgvt_json_histories_name_their_spec() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("queue.json");
    // Two dequeues of one element both succeed: not linearizable for a queue.
    std::fs::write(
        &file,
        r#"{"schema": "fgvt.history/1", "spec": "queue", "events": [
            {"type": "call", "thread": 0, "op": "offer", "args": [1]},
            {"type": "return", "thread": 0},
            {"type": "call", "thread": 1, "op": "poll", "args": []},
            {"type": "call", "thread": 2, "op": "poll", "args": []},
            {"type": "return", "thread": 1, "value": 1},
            {"type": "return", "thread": 2, "value": 1}
        ]}"#,
    )
    .unwrap();
    let (code, out, err) = check(&[file.to_str().unwrap()]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.contains("NOT linearizable"), "{out}");
}

/// Issue 13: `--html` draws the history as one page, and a real browser shows the operation
/// that cannot be placed (headless Chromium, which `.ci/run` installs; without it the page is
/// still checked as text).
#[test]
fn the_html_picture_marks_the_operation_that_cannot_be_placed() {
    let history = "{:type :invoke, :f :write, :value 1, :process 0}\n\
                   {:type :ok, :f :write, :value 1, :process 0}\n\
                   {:type :invoke, :f :read, :value nil, :process 1}\n\
                   {:type :ok, :f :read, :value 7, :process 1}\n";
    let dir = common::workdir(&[("h.edn", history)]);
    let page = dir.path().join("h.html");
    let (code, _, err) = common::run(
        common::fgvt()
            .arg("check-history")
            .arg(dir.path().join("h.edn"))
            .arg("--html")
            .arg(&page),
    );
    assert_eq!(code, 1, "{err}");
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains(r#"class="op obstacle""#), "{html}");
    assert!(
        html.contains("T1 read() returned 7"),
        "the reason is beside the picture: {html}"
    );
    assert!(
        !html.contains("<script") && !html.contains("https://"),
        "self-contained"
    );

    let Some(chromium) = ["chromium", "chromium-browser"].into_iter().find(|b| {
        std::process::Command::new(b)
            .arg("--version")
            .output()
            .is_ok()
    }) else {
        eprintln!("skipping the browser check: no chromium on this machine");
        return;
    };
    let out = std::process::Command::new(chromium)
        .args(["--headless", "--no-sandbox", "--disable-gpu", "--dump-dom"])
        .arg(format!("file://{}", page.display()))
        .output()
        .unwrap();
    let dom = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The browser parsed the page into a DOM with the marked operation and its reason.
    assert!(dom.contains(r#"class="op obstacle""#), "{dom}");
    assert!(dom.contains("Cannot come next"), "{dom}");
}

/// Issue 13: a built-in spec's initial state is settable, by `--initial` (EDN) or by a JSON
/// history's `initial`; the flag wins; a state of the wrong shape is bad input that says what
/// shape the spec wants.
#[test]
fn the_initial_state_is_settable() {
    let dir = common::workdir(&[
        (
            "read3.edn",
            "{:type :invoke, :f :read, :value nil, :process 0}\n\
             {:type :ok, :f :read, :value 3, :process 0}\n",
        ),
        (
            "kv.txt",
            "{:process 0, :type :invoke, :f :get, :key \"k\", :value nil}\n\
             {:process 0, :type :ok, :f :get, :key \"k\", :value \"x 0 y\"}\n",
        ),
        (
            "queue.json",
            "{\"spec\": \"queue\",\n \"initial\": [7, 8],\n \"events\": [\n\
             {\"type\": \"call\", \"thread\": 0, \"op\": \"poll\"},\n\
             {\"type\": \"return\", \"thread\": 0, \"value\": 7}]}\n",
        ),
        (
            "counter.json",
            "{\"spec\": \"counter\",\n \"initial\": [7],\n \"events\": [\n\
             {\"type\": \"call\", \"thread\": 0, \"op\": \"get\"},\n\
             {\"type\": \"return\", \"thread\": 0, \"value\": 7}]}\n",
        ),
    ]);
    let file = |name: &str| dir.path().join(name).to_str().unwrap().to_owned();

    // A register reads null until told otherwise.
    let (code, out, err) = check(&[&file("read3.edn")]);
    assert_eq!(code, 1, "{out}{err}");
    let (code, out, err) = check(&[&file("read3.edn"), "--initial", "3"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("spec register from 3"), "{out}");
    let (code, out, _) = check(&[&file("read3.edn"), "--initial", "3", "--format", "json"]);
    let report: Value = serde_json::from_str(&out).unwrap();
    assert_eq!((code, &report["initial"]), (0, &Value::from("3")));

    // A kv store, from an EDN map.
    assert_eq!(check(&[&file("kv.txt")]).0, 1);
    let (code, out, err) = check(&[&file("kv.txt"), "--initial", r#"{"k" "x 0 y"}"#]);
    assert_eq!(code, 0, "{out}{err}");

    // The file's initial state, and the flag over it.
    let (code, out, err) = check(&[&file("queue.json")]);
    assert_eq!(code, 0, "{out}{err}");
    let (code, out, err) = check(&[&file("queue.json"), "--initial", "[8 7]"]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.contains("returned 7, but the spec returns 8"), "{out}");

    // Bad input: the wrong shape (from the flag, from the file with its line), bad EDN.
    let (code, out, err) = check(&[&file("read3.edn"), "--spec", "counter", "--initial", "[1]"]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(
        out.contains("--initial: the initial state of the built-in `counter` spec is an integer"),
        "{out}"
    );
    let (code, out, err) = check(&[&file("counter.json")]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(out.contains("counter.json:2: the initial state"), "{out}");
    let model = common::fixture("counter1/counter1.fgv");
    let (code, out, err) = check(&[
        &file("read3.edn"),
        "--spec",
        model.to_str().unwrap(),
        "--initial",
        "3",
    ]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(
        out.contains("an initial state is for built-in specs"),
        "{out}"
    );
    let (code, out, err) = check(&[&file("read3.edn"), "--initial", "[3"]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(
        err.contains("1:3") && err.contains("malformed EDN"),
        "{err}"
    );
}
