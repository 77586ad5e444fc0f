//! `fgvt check-history` as a user runs it: on the histories shipped in `tests/data/histories`
//! (every one with its documented verdict), on Jepsen EDN in every shape Jepsen writes, and
//! with `--html`; the real histories of `../shared/histories` in one test that is ignored by
//! default (they live outside the repository).

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::common;

/// The histories shipped with the tests, and their README with the verdicts.
fn shipped() -> PathBuf {
    common::root().join("tests/data/histories")
}

/// Runs `fgvt check-history` with `args`: (exit code, stdout, stderr).
fn check(args: &[&str]) -> (i32, String, String) {
    common::run(common::fgvt().arg("check-history").args(args))
}

/// The JSON report of `path` checked with `extra` flags, with the exit code.
fn verdict(path: &Path, extra: &[&str]) -> (i32, Value) {
    let mut args = vec![path.to_str().unwrap(), "--format", "json"];
    args.extend_from_slice(extra);
    let (code, out, err) = check(&args);
    (
        code,
        serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out} {err}")),
    )
}

/// One row of the table in `tests/data/histories/README.md`.
struct Documented {
    file: String,
    linearizable: bool,
    /// The row's flags, split at blanks (`--initial {:x 0 :y 0}` is one flag and its value).
    flags: Vec<String>,
}

/// The table of `tests/data/histories/README.md`: every row whose first cell is a file in
/// backticks.
fn documented() -> Vec<Documented> {
    let readme = std::fs::read_to_string(shipped().join("README.md")).unwrap();
    readme
        .lines()
        .filter_map(|line| {
            let cells: Vec<&str> = line.split('|').map(str::trim).collect();
            let file = cells.get(1)?.strip_prefix('`')?.strip_suffix('`')?;
            let linearizable = match *cells.get(2)? {
                "linearizable" => true,
                "NOT linearizable" => false,
                other => panic!("{file}: verdict `{other}`"),
            };
            let flags = match cells
                .get(3)
                .and_then(|c| c.strip_prefix('`')?.strip_suffix('`'))
            {
                Some(flag) => {
                    let (name, value) = flag.split_once(' ').unwrap();
                    vec![name.to_owned(), value.to_owned()]
                }
                None => Vec::new(),
            };
            Some(Documented {
                file: file.to_owned(),
                linearizable,
                flags,
            })
        })
        .collect()
}

/// Every file below `dir` but the README and the licence, relative to `under`.
fn history_files(dir: &Path, under: &Path, out: &mut Vec<String>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if path.is_dir() {
            history_files(&path, under, out);
        } else if name != "README.md" && !name.starts_with("LICENSE") {
            let relative = path.strip_prefix(under).unwrap();
            out.push(relative.to_string_lossy().replace('\\', "/"));
        }
    }
}

/// Issue 27: the histories the tests need ship with the repository, each with its verdict, so
/// that this checks something in a fresh clone.
#[test]
fn every_shipped_history_gets_its_documented_verdict() {
    let table = documented();
    let mut files = Vec::new();
    history_files(&shipped(), &shipped(), &mut files);
    files.sort();
    let mut listed: Vec<String> = table.iter().map(|d| d.file.clone()).collect();
    listed.sort();
    assert_eq!(
        files, listed,
        "every shipped history is in the README's table"
    );
    assert!(table.len() >= 15);
    for row in &table {
        let flags: Vec<&str> = row.flags.iter().map(String::as_str).collect();
        let (code, v) = verdict(&shipped().join(&row.file), &flags);
        assert_eq!(v["schema"], "fgvt.check/1");
        assert_eq!(v["linearizable"], row.linearizable, "{}: {v}", row.file);
        assert_eq!(code, if row.linearizable { 0 } else { 1 }, "{}", row.file);
        if !row.linearizable {
            assert!(
                !v["explanation"].is_null(),
                "{} has no explanation",
                row.file
            );
        }
    }
}

#[test]
fn kv_histories_are_partitioned_by_key_and_can_be_checked_whole() {
    let kv: Vec<Documented> = documented()
        .into_iter()
        .filter(|d| d.file.starts_with("kv/"))
        .collect();
    assert_eq!(kv.len(), 4);
    for row in &kv {
        let path = shipped().join(&row.file);
        let (_, parts) = verdict(&path, &[]);
        assert!(
            parts["partitions"].as_u64().unwrap() > 1,
            "{}: {parts}",
            row.file
        );
        let (code, whole) = verdict(&path, &["--no-partition"]);
        assert_eq!(whole["partitions"], 1, "{}", row.file);
        assert_eq!(
            whole["linearizable"], row.linearizable,
            "{} unpartitioned",
            row.file
        );
        assert_eq!(code, if row.linearizable { 0 } else { 1 });
    }
}

#[test]
fn a_directory_gives_one_line_per_file_a_summary_and_the_worst_exit_code() {
    let (code, out, _) = check(&[shipped().join("jepsen").to_str().unwrap()]);
    assert_eq!(code, 1);
    assert!(out.contains("etcd_bad.log: NOT linearizable"), "{out}");
    assert!(out.contains("etcd_ok.log: linearizable"), "{out}");
    assert!(
        out.contains("2 files: 1 linearizable, 1 not linearizable, 0 unknown, 0 errors"),
        "{out}"
    );
}

/// The real recorded histories, where they are: beside the repository, never in it.
#[test]
#[ignore = "needs ../shared/histories, outside the repository (run with --ignored)"]
fn every_shared_history_gets_its_documented_verdict() {
    let dir = common::root().join("../shared/histories");
    assert!(dir.is_dir(), "{} is absent", dir.display());
    for (file, linearizable) in [
        ("jepsen/etcd_000.log", false),
        ("jepsen/etcd_002.log", true),
        ("kv/c01-ok.txt", true),
        ("kv/c01-bad.txt", false),
        ("kv/c10-ok.txt", true),
        ("kv/c10-bad.txt", false),
    ] {
        let (code, v) = verdict(&dir.join(file), &[]);
        assert_eq!(v["linearizable"], linearizable, "{file}: {v}");
        assert_eq!(code, if linearizable { 0 } else { 1 }, "{file}");
        if file.starts_with("kv/") {
            let (_, whole) = verdict(&dir.join(file), &["--no-partition"]);
            assert_eq!(whole["linearizable"], linearizable, "{file} unpartitioned");
        }
    }
}

/// Issue 27: Jepsen EDN in every shape Jepsen writes: `;` comments first, a top-level list or
/// vector or bare maps, maps over several lines, extra keys, `:info` and `:fail` anywhere; a
/// history whose every operation failed is linearizable (nothing happened), not bad input.
#[test]
fn jepsen_edn_in_every_shape() {
    let maps = [
        "{:type :invoke, :f :write, :value 1, :process 0, :time 10}",
        "{:type :ok, :f :write, :value 1, :process 0, :time 12, :node \"n1\"}",
        "{:type :invoke, :f :write, :value 2, :process 2}",
        "{:type :invoke, :f :read, :value nil, :process 1}",
        "{:type :info, :f :write, :value 2, :process 2, :error :timeout}",
        "{:type :invoke, :f :cas, :value [5 6], :process 3}",
        "{:type :fail, :f :cas, :value [5 6], :process 3, :error :mismatch}",
        "{:type :ok, :f :read, :value 2, :process 1}",
    ];
    let lines = maps.join("\n");
    let multi_line = maps
        .iter()
        .map(|m| m.replace(", ", ",\n "))
        .collect::<Vec<_>>()
        .join("\n");
    let shapes = [
        ("lines.edn", format!("{lines}\n")),
        (
            "commented.edn",
            format!("; a Jepsen history\n;; by hand\n{lines}\n"),
        ),
        ("vector.edn", format!("; opens with a comment\n[{lines}]\n")),
        (
            "list.edn",
            format!("({})\n", maps.join("\n ; between maps\n ")),
        ),
        ("multi-line.edn", format!("[{multi_line}]\n")),
    ];
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in &shapes {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        // The read saw the write that timed out: linearizable.
        let (code, out, err) = check(&[path.to_str().unwrap()]);
        assert_eq!(code, 0, "{name}:\n{text}\n{out}{err}");
        assert!(
            out.contains(": linearizable (edn, spec register"),
            "{name}: {out}"
        );
        // A read of a value nobody wrote: not linearizable, in every shape alike.
        let bad = text
            .replace(":value 2, :process 1", ":value 9, :process 1")
            .replace(":value 2,\n :process 1", ":value 9,\n :process 1");
        assert_ne!(&bad, text, "{name}");
        std::fs::write(&path, &bad).unwrap();
        let (code, out, err) = check(&[path.to_str().unwrap()]);
        assert_eq!(code, 1, "{name}:\n{bad}\n{out}{err}");
        assert!(
            out.contains("T1 read() returned 9, but the spec returns"),
            "{name}: {out}"
        );
    }

    // Every operation failed: nothing happened, which is linearizable.
    let all_failed =
        "; every call failed\n(\n{:process 12, :type :invoke, :f :read, :value nil}\n \
                      {:process 12, :type :fail, :f :read, :value nil}\n \
                      {:process 19, :type :invoke, :f :write, :value 1}\n \
                      {:process 19, :type :fail, :f :write, :value 1})\n";
    let path = dir.path().join("all-failed.edn");
    std::fs::write(&path, all_failed).unwrap();
    let (code, out, err) = check(&[path.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("all-failed.edn: linearizable"), "{out}");
    assert!(!format!("{out}{err}").contains("no events"), "{out}{err}");
    // A file with no operation at all is still bad input.
    std::fs::write(&path, "; nothing recorded\n").unwrap();
    let (code, out, err) = check(&[path.to_str().unwrap()]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(err.contains("all-failed.edn:1: no events"), "{err}");

    // Knossos's histories, as shipped: a directory of them, the licence skipped.
    let (code, out, err) = check(&[shipped().join("knossos").to_str().unwrap()]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        err.contains("skipped") && err.contains("LICENSE-EPL-1.0.txt"),
        "{err}"
    );
    assert!(
        out.contains("9 files: 4 linearizable, 5 not linearizable, 0 unknown, 0 errors"),
        "{out}"
    );
}

/// Issue 27: the explanation says each thing once: no identical-looking orders (each failing
/// beginning once, with how many orders share it), no second "not linearizable" under the
/// verdict line, counts in words that agree, and no note that hides a single step.
#[test]
fn explanations_say_each_thing_once() {
    // A read of 7, which nobody wrote, beside three writes: 24 orders, 16 beginnings.
    let mut events = vec!["{:type :invoke, :f :read, :value nil, :process 0}".to_owned()];
    for p in 1..=3 {
        events.push(format!(
            "{{:type :invoke, :f :write, :value {p}, :process {p}}}"
        ));
    }
    for p in 1..=3 {
        events.push(format!(
            "{{:type :ok, :f :write, :value {p}, :process {p}}}"
        ));
    }
    events.push("{:type :ok, :f :read, :value 7, :process 0}".to_owned());
    // 41 writes in a row, then a read of 99: a prefix of 41 steps.
    let mut long = Vec::new();
    for v in 0..41 {
        long.push(format!(
            "{{:type :invoke, :f :write, :value {v}, :process 0}}"
        ));
        long.push(format!("{{:type :ok, :f :write, :value {v}, :process 0}}"));
    }
    long.push("{:type :invoke, :f :read, :value nil, :process 0}".to_owned());
    long.push("{:type :ok, :f :read, :value 99, :process 0}".to_owned());
    let dir = common::workdir(&[
        ("orders.edn", &events.join("\n")),
        ("long.edn", &long.join("\n")),
    ]);

    let (code, out, err) = check(&[dir.path().join("orders.edn").to_str().unwrap()]);
    assert_eq!(code, 1, "{out}{err}");
    assert_eq!(
        out.matches("not linearizable").count() + out.matches("NOT linearizable").count(),
        1,
        "the verdict is said once: {out}"
    );
    let orders: Vec<&str> = out.lines().filter(|l| l.contains('✗')).collect();
    assert_eq!(orders.len(), 16, "{out}");
    let mut distinct = orders.clone();
    distinct.sort_unstable();
    distinct.dedup();
    assert_eq!(distinct.len(), 16, "no two orders alike: {out}");
    assert!(
        out.contains("every order that respects real time (24; 16 distinct beginnings"),
        "{out}"
    );
    assert!(
        out.contains("T0 read() → 7 ✗  (6 orders start this way)"),
        "{out}"
    );

    let (code, out, err) = check(&[dir.path().join("long.edn").to_str().unwrap()]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        out.contains("longest linearizable prefix (41 of 42 operations):"),
        "{out}"
    );
    assert!(
        !out.contains("earlier step"),
        "one hidden step is shown instead: {out}"
    );
    assert!(out.contains("   1. T0 write(0) → ()"), "{out}");
    assert!(
        !out.contains(" 1 steps") && !out.contains("(1 earlier"),
        "{out}"
    );
}

#[test]
fn an_empty_history_is_bad_input_not_linearizable() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("etcd_999.log");
    std::fs::write(&empty, "").unwrap();
    let (code, out, err) = check(&[empty.to_str().unwrap()]);
    assert_eq!(code, 2, "{out}");
    // Errors go to stderr, as every command's do; stdout has no verdict.
    assert!(
        err.contains("error: ") && err.contains("etcd_999.log:1: no events"),
        "{err}"
    );
    assert!(!out.contains("linearizable"), "{out}");
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
    let (code, out, err) = check(&[file.to_str().unwrap()]);
    assert_eq!(code, 2, "{out}");
    assert!(err.contains("bad.log:2:"), "{err}");
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

/// Headless Chromium, if this machine has it (`.ci/run` installs it).
fn chromium() -> Option<&'static str> {
    ["chromium", "chromium-browser"].into_iter().find(|b| {
        std::process::Command::new(b)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    })
}

/// The DOM of `page` after its script ran, in a 1400×1000 window.
fn dom(chromium: &str, page: &Path) -> String {
    let out = std::process::Command::new(chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--window-size=1400,1000",
            "--dump-dom",
        ])
        .arg(format!("file://{}", page.display()))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Runs `check-history FILES --html HTML`: (exit code, stdout, stderr).
fn draw(files: &[&Path], html: &Path) -> (i32, String, String) {
    common::run(
        common::fgvt()
            .arg("check-history")
            .args(files)
            .arg("--html")
            .arg(html),
    )
}

/// The pixels a box's style gives `key` (`left:`, `width:`).
fn px(style: &str, key: &str) -> usize {
    let value = style.split(key).nth(1).unwrap();
    value.split("px").next().unwrap().parse().unwrap()
}

/// The boxes of a page: (left, width, row, text) of each `.op`, in page order.
fn boxes(html: &str) -> Vec<(usize, usize, usize, String)> {
    let mut out = Vec::new();
    for (row, lane) in html.split(r#"<div class="row">"#).skip(1).enumerate() {
        for op in lane.split(r#"<div class="op "#).skip(1) {
            let number = |key: &str| px(op, key);
            let text = op
                .split("<span>")
                .nth(1)
                .unwrap()
                .split("</span>")
                .next()
                .unwrap();
            out.push((number("left:"), number("width:"), row, text.to_owned()));
        }
    }
    out
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
    let (code, _, err) = draw(&[&dir.path().join("h.edn")], &page);
    assert_eq!(code, 1, "{err}");
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains(r#"class="op obstacle""#), "{html}");
    assert!(
        html.contains("T1 read() returned 7"),
        "the reason is beside the picture: {html}"
    );
    assert!(
        !html.contains("https://") && !html.contains(" src="),
        "self-contained: nothing to fetch"
    );
    // The verdict is said once, above the picture.
    assert_eq!(html.matches("not linearizable").count(), 0, "{html}");
    assert_eq!(html.matches("NOT linearizable").count(), 1, "{html}");

    let Some(chromium) = chromium() else {
        eprintln!("no chromium on this machine: the page was checked as text only");
        return;
    };
    let dom = dom(chromium, &page);
    // The browser parsed the page into a DOM with the marked operation and its reason.
    assert!(dom.contains(r#"class="op obstacle""#), "{dom}");
    assert!(dom.contains("Cannot come next"), "{dom}");
}

/// Issue 27: labels readable without hovering (every box holds its label: the picture grows
/// with the operations and their labels), the failing operation scrolled into view in a
/// 1400×1000 window, and a pending operation's headline that says what happened to it.
#[test]
fn history_pages_are_readable_and_open_on_the_failing_operation() {
    // Three operations: each label whole in its box.
    let three = "{:type :invoke, :f :write, :value 1, :process 0}\n\
                 {:type :ok, :f :write, :value 1, :process 0}\n\
                 {:type :invoke, :f :read, :value nil, :process 1}\n\
                 {:type :invoke, :f :write, :value 2, :process 2}\n\
                 {:type :info, :f :write, :value 2, :process 2}\n\
                 {:type :ok, :f :read, :value 7, :process 1}\n";
    let dir = common::workdir(&[("three.edn", three)]);
    let page = dir.path().join("three.html");
    let (code, _, err) = draw(&[&dir.path().join("three.edn")], &page);
    assert_eq!(code, 1, "{err}");
    let html = std::fs::read_to_string(&page).unwrap();
    let drawn = boxes(&html);
    assert_eq!(drawn.len(), 3, "{html}");
    for (_, width, _, text) in &drawn {
        assert!(!text.contains('…'), "{text} is cut");
        assert!(*width >= 7 * text.chars().count(), "{text} gets {width} px");
    }
    assert!(
        drawn.iter().any(|(.., t)| t == "[1] write(1) → ()"),
        "{drawn:?}"
    );
    assert!(drawn.iter().any(|(.., t)| t == "✗ read() → 7"), "{drawn:?}");
    // The write that timed out is pending, and not what the headline blames.
    assert!(html.contains(r#"class="op obstacle pending""#), "{html}");
    assert!(
        html.contains("NOT linearizable: T1 read() returned 7, which no serial order"),
        "{html}"
    );
    assert!(
        html.contains("T2 write(2) did not return (pending)") && !html.contains("returned pending"),
        "{html}"
    );

    // A long etcd history: wider than the window, the failing operation far to the right.
    let etcd = shipped().join("jepsen/etcd_bad.log");
    let page = dir.path().join("etcd.html");
    let (code, _, err) = draw(&[&etcd], &page);
    assert_eq!(code, 1, "{err}");
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(!html.contains("returned pending"), "{html}");
    let drawn = boxes(&html);
    let widest = drawn.iter().map(|(l, w, ..)| l + w).max().unwrap();
    assert!(
        widest > 1400,
        "the picture is wider than the window: {widest} px"
    );
    for (_, width, _, text) in &drawn {
        assert!(*width >= 7 * text.chars().count(), "{text} gets {width} px");
    }
    let obstacle = html
        .split(r#"<div class="row">"#)
        .skip(1)
        .enumerate()
        .find_map(|(row, lane)| {
            // The marked operation that returned (the page centres it before pending ones).
            let op = lane.split(r#"<div class="op obstacle" "#).nth(1)?;
            let number = |key: &str| px(op, key);
            Some((number("left:"), number("width:"), row))
        })
        .expect("a marked operation");
    assert!(
        obstacle.0 > 1400,
        "it starts past the first screen: {obstacle:?}"
    );

    let Some(chromium) = chromium() else {
        eprintln!("no chromium on this machine: the pages were checked as text only");
        return;
    };
    let dom = dom(chromium, &page);
    let scrolled: Vec<f64> = dom
        .split(r#"data-scrolled=""#)
        .nth(1)
        .expect("the page's script ran")
        .split('"')
        .next()
        .unwrap()
        .split(' ')
        .map(|n| n.parse().unwrap())
        .collect();
    let [left, top, width, height] = scrolled[..] else {
        panic!("{scrolled:?}")
    };
    // Where the marked box is in the picture's view: past the lane names (64 px), inside.
    let (x, w, row) = obstacle;
    let (x, w) = (64.0 + x as f64 - left, w as f64);
    let y = (4 + 32 * row) as f64 - top;
    assert!(
        x >= 64.0 && x + w.min(width / 2.0) <= width,
        "the marked box at {x}..{} of a {width} px view",
        x + w
    );
    assert!(
        y >= 0.0 && y + 24.0 <= height,
        "row {row} at {y} of {height}"
    );
}

/// Issue 27: `--html DIR` with several histories writes one page per history and an index
/// linking them; one that cannot be read gets an error on stderr and a line in the index, no
/// page, and the exit code is the worst of all.
#[test]
fn html_for_several_histories_is_a_directory_with_an_index() {
    let dir = common::workdir(&[("broken.edn", "{:type :invoke, :f :read\n")]);
    let out = dir.path().join("pages");
    let ok = shipped().join("jepsen/etcd_ok.log");
    let bad = shipped().join("jepsen/etcd_bad.log");
    let broken = dir.path().join("broken.edn");
    let (code, stdout, stderr) = draw(&[&ok, &bad, &broken], &out);
    assert_eq!(code, 2, "bad input is the worst: {stdout}{stderr}");
    assert!(
        stderr.contains("error: ") && stderr.contains("broken.edn:"),
        "{stderr}"
    );
    assert!(!stdout.contains("error:"), "errors go to stderr: {stdout}");
    // The one-line summary of a violation names the read it contradicts, not a pending write.
    assert!(stdout.contains("  T"), "{stdout}");
    assert!(!stdout.contains("did not return"), "{stdout}");
    assert!(
        stdout.contains("3 files: 1 linearizable, 1 not linearizable, 0 unknown, 1 error"),
        "{stdout}"
    );
    let mut pages: Vec<String> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    pages.sort();
    assert_eq!(pages.len(), 3, "two pages and the index: {pages:?}");
    assert!(pages.contains(&"index.html".to_owned()), "{pages:?}");
    let index = std::fs::read_to_string(out.join("index.html")).unwrap();
    for page in pages.iter().filter(|p| *p != "index.html") {
        assert!(
            index.contains(&format!(r#"href="{page}""#)),
            "{page}: {index}"
        );
        let html = std::fs::read_to_string(out.join(page)).unwrap();
        assert!(html.contains(r#"<div class="op "#), "{page}");
    }
    assert!(
        index.contains("etcd_bad.log") && index.contains("NOT linearizable"),
        "{index}"
    );
    assert!(
        index.contains("broken.edn") && index.contains("malformed EDN"),
        "{index}"
    );
    assert!(stderr.contains("index.html"), "{stderr}");

    // One history into an existing directory: its page and an index there too.
    let one = dir.path().join("one");
    std::fs::create_dir(&one).unwrap();
    let (code, _, stderr) = draw(&[&ok], &one);
    assert_eq!(code, 0, "{stderr}");
    assert!(one.join("etcd_ok.log.html").is_file(), "{stderr}");
    assert!(one.join("index.html").is_file(), "{stderr}");
    // Several histories and a file where the directory should be: refused before any work.
    let file = dir.path().join("page.html");
    std::fs::write(&file, "keep me").unwrap();
    let (code, _, stderr) = draw(&[&ok, &bad], &file);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("this is a file"), "{stderr}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "keep me");
    // Nor can several pages go to stdout.
    let (code, stdout, stderr) = draw(&[&ok, &bad], Path::new("-"));
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("cannot go to a stream"), "{stderr}");
    assert!(!stdout.contains("<html"), "{stdout}");
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
    // Repeated as given, in EDN, not in fgvt's notation for the same value, `(8, 7)`.
    assert!(out.contains("spec queue from [8 7],"), "{out}");

    // Bad input: the wrong shape (from the flag, from the file with its line), bad EDN.
    let (code, out, err) = check(&[&file("read3.edn"), "--spec", "counter", "--initial", "[1]"]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(
        err.contains("--initial: the initial state of the built-in `counter` spec is an integer"),
        "{err}"
    );
    let (code, out, err) = check(&[&file("counter.json")]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(err.contains("counter.json:2: the initial state"), "{err}");
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
        err.contains("an initial state is for built-in specs"),
        "{err}"
    );
    let (code, out, err) = check(&[&file("read3.edn"), "--initial", "[3"]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(
        err.contains("1:3") && err.contains("malformed EDN"),
        "{err}"
    );
}

/// `check-history --format sarif` on every shipped history: a valid SARIF log; a result for
/// each NOT linearizable one, at the line the README names as the bad operation where it names
/// one, with the longest linearizable prefix as a code flow; none for a linearizable one.
#[test]
fn every_shipped_history_gives_valid_sarif_pointing_at_the_bad_line() {
    let validator = common::sarif_validator();
    let readme = std::fs::read_to_string(shipped().join("README.md")).unwrap();
    for doc in documented() {
        let path = shipped().join(&doc.file);
        let mut args = vec![path.to_str().unwrap(), "--format", "sarif"];
        args.extend(doc.flags.iter().map(String::as_str));
        let (code, out, err) = check(&args);
        assert_eq!(
            code,
            if doc.linearizable { 0 } else { 1 },
            "{}: {err}",
            doc.file
        );
        let log: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
        let problems = common::sarif_errors(&validator, &log);
        assert_eq!(problems, Vec::<String>::new(), "{}", doc.file);
        let results = log["runs"][0]["results"].as_array().unwrap();
        if doc.linearizable {
            assert_eq!(results.len(), 0, "{}", doc.file);
            continue;
        }
        assert_eq!(results.len(), 1, "{}", doc.file);
        let result = &results[0];
        assert_eq!(result["ruleId"], "fgvt/non-linearizable-history");
        let at = &result["locations"][0]["physicalLocation"];
        assert_eq!(at["artifactLocation"]["uri"], path.to_str().unwrap());
        let line = at["region"]["startLine"].as_u64().expect("a line");
        // "the same with one stale read (line 97)"
        let row = (readme.lines()).find(|l| l.contains(&format!("`{}`", doc.file)));
        let documented_line = (row.unwrap().split("(line ").nth(1))
            .and_then(|rest| rest.split(')').next())
            .map(|n| n.parse::<u64>().unwrap());
        if let Some(expected) = documented_line {
            assert_eq!(line, expected, "{}", doc.file);
        }
        // The prefix, then the culprit, in one execution order over the processes' flows.
        let flows = result["codeFlows"][0]["threadFlows"].as_array().unwrap();
        let mut order: Vec<u64> = (flows.iter())
            .flat_map(|f| f["locations"].as_array().unwrap())
            .map(|l| l["executionOrder"].as_u64().unwrap())
            .collect();
        order.sort_unstable();
        assert_eq!(
            order,
            (0..order.len() as u64).collect::<Vec<_>>(),
            "{}",
            doc.file
        );
    }
}

/// A file that cannot be checked is an error notification, and the run is not successful.
#[test]
fn a_history_that_cannot_be_read_is_a_sarif_notification() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.json");
    std::fs::write(
        &bad,
        "{\"spec\": \"register\", \"events\": [ {\"oops\": 1} ]}",
    )
    .unwrap();
    let good = shipped().join("kv/c01-ok.txt");
    let (code, out, _) = check(&[
        bad.to_str().unwrap(),
        good.to_str().unwrap(),
        "--format",
        "sarif",
    ]);
    assert_eq!(code, 2);
    let log: Value = serde_json::from_str(&out).unwrap();
    let problems = common::sarif_errors(&common::sarif_validator(), &log);
    assert_eq!(problems, Vec::<String>::new());
    let invocation = &log["runs"][0]["invocations"][0];
    assert_eq!(invocation["executionSuccessful"], false);
    let notes = invocation["toolExecutionNotifications"].as_array().unwrap();
    assert_eq!(notes.len(), 1);
    assert_eq!(notes[0]["level"], "error");
    let uri = &notes[0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"];
    assert_eq!(uri, bad.to_str().unwrap());
    assert_eq!(log["runs"][0]["properties"]["summary"]["linearizable"], 1);
}
