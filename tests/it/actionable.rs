//! Issue 14: reports and commands a user can act on. Each test runs the binary as a user would,
//! following what fgvt itself prints.

use crate::common;

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

/// A lock-based stack that is correct but answers `pop()` on empty with -1, where the `stack`
/// spec expects `null`: every interleaving fails, so no race decides anything.
const MINUS_ONE_STACK: &str = r#"
record Node { final int val; final Node next; }
object Stack {
    shared Node top = null;
    lock m;
    op push(int v) { synchronized (m) { top = new Node(v, top); } }
    op pop() {
        synchronized (m) {
            Node t = top;
            if (t == null) return -1;
            top = t.next;
            return t.val;
        }
    }
}
"#;

#[test]
fn when_every_interleaving_fails_the_report_shows_one_failing_run_and_why() {
    let dir = common::workdir(&[
        ("stack.fgv", MINUS_ONE_STACK),
        (
            "empty.json",
            r#"{"object": "stack.fgv", "spec": "stack", "threads": [["pop()"], ["pop()"]]}"#,
        ),
    ]);
    let test = dir.path().join("empty.json");
    let (code, text, _) = run(fgvt().arg("localize").arg(&test));
    assert_eq!(code, 1, "{text}");
    assert!(text.contains("CDRS: 0 found"), "{text}");
    assert!(text.contains("A failing run"), "{text}");
    assert!(
        text.contains("pop() returned -1, which no serial order of the operations gives"),
        "{text}"
    );
    assert!(
        text.contains("but the spec returns null"),
        "the spec wants null: {text}"
    );
    assert!(text.contains("replay: fgvt explore"), "{text}");
    let (_, markdown, _) = run(fgvt()
        .arg("localize")
        .arg(&test)
        .args(["--format", "markdown"]));
    assert!(markdown.contains("## A failing run"), "{markdown}");
    let (_, json, _) = run(fgvt().arg("localize").arg(&test).args(["--format", "json"]));
    let json: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert!(
        json["failing_run"]["explanation"]["text"].is_string(),
        "{json}"
    );
}

#[test]
fn init_and_final_operations_have_lanes_of_their_own() {
    let (_, text) = localize(&["fixtures/pair_snapshot/failing.json"]);
    assert!(text.contains("    init |--write(0, 1)--|"), "{text}");
    assert!(text.contains("1. init write(0, 1) → ()"), "{text}");
    assert!(
        !text.contains("T0 write(0, 1) → ()\n       2. T0 write(1, 1)"),
        "{text}"
    );
    let (_, markdown) = localize(&[
        "fixtures/pair_snapshot/failing.json",
        "--format",
        "markdown",
    ]);
    assert!(markdown.contains("| # | init | T0 | T1 |"), "{markdown}");
    let (_, json) = localize(&["fixtures/pair_snapshot/failing.json", "--format", "json"]);
    let json: serde_json::Value = serde_json::from_str(&json).unwrap();
    let first = &json["cdrs"][0]["witness"]["history"]["events"][0];
    assert_eq!(first["lane"], "init", "{first}");
    // A test with a final part: its operations are drawn in the `final` lane.
    let (_, text) = localize(&["fixtures/counter1/failing.json"]);
    assert!(text.contains("\n    final "), "{text}");
    assert!(text.contains("final:"), "{text}");
}

#[test]
fn the_markdown_ticket_opens_with_the_symptom_then_the_top_cdrs() {
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("tree.svg");
    let md = dir.path().join("ticket.md");
    let (code, _, err) = run(fgvt()
        .current_dir(root())
        .args([
            "localize",
            "fixtures/pair_snapshot/failing.json",
            "--format",
            "markdown",
            "-o",
        ])
        .arg(&md)
        .arg("--svg")
        .arg(&svg));
    assert_eq!(code, 1, "{err}");
    let markdown = std::fs::read_to_string(&md).unwrap();
    let symptom = markdown
        .find("**What went wrong:** T1 read() returned (1, 2), which no serial order")
        .expect(&markdown);
    let cdrs = markdown.find("## CDRS 1").unwrap();
    let details = markdown.find("## Details").unwrap();
    assert!(symptom < cdrs && cdrs < details, "{markdown}");
    assert!(
        markdown.contains("[tree.svg](tree.svg)"),
        "the SVG is linked: {markdown}"
    );
    assert!(!markdown.contains(";;"), "{markdown}");
    // No text timeline that would wrap: the history is a table.
    assert!(!markdown.contains("|--"), "{markdown}");
    let (_, linked) = localize(&["fixtures/linked_list/failing.json", "--format", "markdown"]);
    for line in linked
        .lines()
        .filter(|l| l.contains("| ") && l.contains("racing statements") || l.starts_with("| 1 |"))
    {
        assert!(
            !line.contains("//"),
            "no comments in statement cells: {line}"
        );
    }
    assert!(!linked.contains(";;"), "{linked}");
}

#[test]
fn the_other_kind_of_file_and_directories_get_a_pointed_error() {
    let (code, _, err) = run(fgvt()
        .current_dir(root())
        .args(["localize", "fixtures/pair_snapshot/hunt.json"]));
    assert_eq!(code, 2);
    assert!(err.contains("this is a hunt file, not a test"), "{err}");
    assert!(
        err.contains("use `fgvt hunt fixtures/pair_snapshot/hunt.json`"),
        "{err}"
    );
    let (code, _, err) = run(fgvt()
        .current_dir(root())
        .args(["hunt", "fixtures/pair_snapshot/failing.json"]));
    assert_eq!(code, 2);
    assert!(err.contains("this is a test, not a hunt file"), "{err}");
    assert!(err.contains("use `fgvt localize"), "{err}");
    let (code, _, err) = run(fgvt()
        .current_dir(root())
        .args(["localize", "fixtures/pair_snapshot"]));
    assert_eq!(code, 2);
    assert!(err.contains("is a directory, not a test file"), "{err}");
    assert!(
        err.contains("failing.json"),
        "it lists the tests inside: {err}"
    );
}

#[test]
fn check_history_walks_directories_and_skips_what_is_not_a_history() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("nested")).unwrap();
    std::fs::write(dir.path().join("README.md"), "# recorded histories\n").unwrap();
    let history = r#"{"schema": "fgvt.history/1", "spec": "register", "events": [
        {"type": "call", "thread": 0, "op": "write", "args": [1]},
        {"type": "return", "thread": 0}
    ]}"#;
    std::fs::write(dir.path().join("nested").join("h.json"), history).unwrap();
    let (code, out, err) = run(fgvt().arg("check-history").arg(dir.path()));
    assert!(
        err.contains("skipped") && err.contains("README.md"),
        "{err}"
    );
    assert!(
        out.contains("h.json"),
        "the nested history is checked: {out}"
    );
    assert_ne!(code, 2, "{out}{err}");
}

#[test]
fn a_read_that_faults_says_so_instead_of_an_empty_arrow() {
    let dir = common::workdir(&[
        (
            "nd.fgv",
            "record Node { int val; Node next; }\nobject N {\n    shared Node head = null;\n    op first() { Node h = head; return h.val; }\n}\n",
        ),
        ("t.json", r#"{"object": "nd.fgv", "threads": [["first()"]]}"#),
    ]);
    let (code, text, _) = run(fgvt().arg("localize").arg(dir.path().join("t.json")));
    assert_eq!(code, 1);
    assert!(
        text.contains("read h.val → fault: null dereference"),
        "{text}"
    );
}

/// Point 9: a local loop that never touches shared memory names the option that bounds it,
/// the loop's line, and the way a model waits.
#[test]
fn a_local_loop_names_the_option_the_loop_and_await() {
    let dir = common::workdir(&[
        ("m.fgv", common::LOCAL_LOOP_MODEL),
        ("test.json", common::LOCAL_LOOP_TEST),
    ]);
    let test = dir.path().join("test.json");
    let (code, out, _) = run(fgvt().arg("localize").arg(&test));
    assert_eq!(code, 3, "{out}");
    assert!(out.contains("--max-local-steps"), "{out}");
    assert!(
        out.contains("in the loop at ") && out.contains("m.fgv:7:16"),
        "names the loop: {out}"
    );
    assert!(out.contains("while (true)"), "quotes the loop: {out}");
    assert!(out.contains("await(cond)"), "{out}");
    // The option exists and is honoured: the message gives the new budget.
    let (code, out, _) = run(fgvt()
        .arg("localize")
        .arg(&test)
        .args(["--max-local-steps", "50"]));
    assert_eq!(code, 3, "{out}");
    assert!(out.contains("more than 50 instructions"), "{out}");
}

/// Point 9: an operation that spins on a flag cannot finish when the `self` spec runs it
/// alone; the error says where it loops and how to wait instead.
#[test]
fn spinning_on_a_flag_under_the_self_spec_suggests_await() {
    const FLAG: &str = "object Flag {\n    shared int flag = 0;\n    op set() {\n        flag = 1;\n    }\n    op wait() {\n        while (flag == 0) { }\n        return 1;\n    }\n}\n";
    let dir = common::workdir(&[
        ("f.fgv", FLAG),
        (
            "test.json",
            r#"{"object": "f.fgv", "threads": [["wait()"], ["set()"]]}"#,
        ),
    ]);
    let (code, _, err) = run(fgvt().arg("localize").arg(dir.path().join("test.json")));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("`wait()` run alone does not finish"), "{err}");
    assert!(
        err.contains("in the loop at ") && err.contains("f.fgv:7:16"),
        "{err}"
    );
    assert!(err.contains("await(cond)"), "{err}");
    assert!(err.contains("--max-local-steps"), "{err}");
    // Written with `await`, the same object is explored and judged.
    let awaiting = FLAG.replace("while (flag == 0) { }", "await(flag != 0);");
    std::fs::write(dir.path().join("f.fgv"), awaiting).unwrap();
    let (code, out, err) = run(fgvt().arg("localize").arg(dir.path().join("test.json")));
    assert_eq!(code, 0, "{out}{err}");
}

/// Point 9: a declared type that the value surely does not have is a load error.
#[test]
fn declared_types_are_checked() {
    const NODES: &str = "record Node { int val; Node next; }\nobject T {\n    shared int count = 0;\n    op add(int v) {\n        int n = new Node(v, null);\n        return v;\n    }\n}\n";
    let dir = common::workdir(&[
        ("t.fgv", NODES),
        (
            "test.json",
            r#"{"object": "t.fgv", "threads": [["add(1)"]]}"#,
        ),
    ]);
    let (code, _, err) = run(fgvt().arg("localize").arg(dir.path().join("test.json")));
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("`n` is declared `int` but is given a `Node` reference"),
        "{err}"
    );
    assert!(err.contains("t.fgv:5:17"), "{err}");
}

/// Point 8: one flag vocabulary: `--format` is the output format in every command, the
/// history's format is `--input-format`.
#[test]
fn check_history_takes_format_for_output_and_input_format_for_the_file() {
    let dir = common::workdir(&[(
        "h.txt",
        "{:process 0, :type :invoke, :f :put, :key \"a\", :value \"x\"}\n{:process 0, :type :ok, :f :put, :key \"a\", :value \"x\"}\n",
    )]);
    let h = dir.path().join("h.txt");
    let (code, out, err) =
        run(fgvt()
            .arg("check-history")
            .arg(&h)
            .args(["--input-format", "kv", "--format", "json"]));
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["schema"], "fgvt.check/1", "{out}");
    // Read as another format, the same file is refused with its line.
    let (code, out, err) = run(fgvt()
        .arg("check-history")
        .arg(&h)
        .args(["--input-format", "jepsen"]));
    assert_eq!(code, 2);
    let said = format!("{out}{err}");
    assert!(
        said.contains("h.txt:1: expected `INFO  jepsen.util"),
        "{said}"
    );
    // The old output flag is gone, with clap's usage error.
    let (code, _, _) = run(fgvt()
        .arg("check-history")
        .arg(&h)
        .args(["--format-out", "json"]));
    assert_eq!(code, 2);
}
