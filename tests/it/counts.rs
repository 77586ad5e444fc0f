//! Counts as reports print them (issue 27): exact, or "more than 1.8 × 10¹⁹" when the unfolded
//! tree is too large to count (never the saturated 18446744073709551615, which reads as
//! exact), with `saturated` in JSON; a `--max-states` cut is a *cut* leaf, not a *bounded*
//! one, and the notes say why each leaf has no verdict.

use serde_json::Value;

use crate::common;

use common::{fgvt, fixture, run};

/// Four threads, ten writes each to cells of their own: 40!/(10!)^4 ≈ 4.7 × 10²¹ interleavings
/// of some 11^4 program states (times the orders of calls and returns), explored in a moment.
const SPREAD: &str = r#"
object Spread {
    shared int c[4] = {0, 0, 0, 0};
    op go(int i) {
        c[i] = 1; c[i] = 2; c[i] = 3; c[i] = 4; c[i] = 5;
        c[i] = 6; c[i] = 7; c[i] = 8; c[i] = 9; c[i] = 10;
    }
}
"#;

const SPREAD_TEST: &str =
    r#"{"object": "m.fgv", "threads": [["go(0)"], ["go(1)"], ["go(2)"], ["go(3)"]]}"#;

const MORE_THAN: &str = "more than 1.8 × 10¹⁹";

/// Runs `fgvt args… test.json` on the spread test.
fn spread(args: &[&str]) -> (i32, String) {
    let dir = common::workdir(&[("m.fgv", SPREAD), ("test.json", SPREAD_TEST)]);
    let (code, out, _) = run(fgvt().current_dir(dir.path()).args(args).arg("test.json"));
    (code, out)
}

fn assert_no_saturated_number(what: &str, text: &str) {
    for n in [u64::MAX, u64::MAX - 1] {
        assert!(
            !text.contains(&n.to_string()),
            "{what} prints the saturated {n}:\n{text}"
        );
    }
}

#[test]
fn explore_says_more_than_for_a_count_past_64_bits() {
    let (code, out) = spread(&["explore"]);
    assert_eq!(code, 0, "{out}");
    assert_no_saturated_number("explore", &out);
    assert!(
        out.contains(&format!("nodes {MORE_THAN}  edges {MORE_THAN}")),
        "{out}"
    );
    assert!(
        out.contains(&format!("leaves {MORE_THAN} (complete {MORE_THAN}")),
        "{out}"
    );
    assert!(out.contains(&format!("linearizable {MORE_THAN}")), "{out}");
    assert!(
        out.contains(&format!("() ×{MORE_THAN}")),
        "the results too: {out}"
    );
    assert!(out.contains("too large to count exactly"), "{out}");
    // Exact counts stay exact: the states are few.
    let states = out
        .split("distinct states ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse::<u64>().ok())
        .unwrap_or_else(|| panic!("{out}"));
    assert!((11u64.pow(4)..1_000_000).contains(&states), "{out}");

    let (code, out) = spread(&["explore", "--format", "json"]);
    assert_eq!(code, 0, "{out}");
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["tree"]["saturated"], true, "{out}");
    // JSON keeps numbers: the saturated value, flagged.
    assert_eq!(v["tree"]["nodes"].as_u64(), Some(u64::MAX));
    assert_eq!(v["tree"]["edges"].as_u64(), Some(u64::MAX));
    assert_eq!(v["tree"]["distinct_states"].as_u64(), Some(states));
}

#[test]
fn localize_reports_say_more_than_in_text_and_markdown_and_flag_it_in_json() {
    let (code, text) = spread(&["localize"]);
    assert_eq!(code, 0, "{text}");
    assert_no_saturated_number("text", &text);
    assert!(text.contains(&format!("tree: {MORE_THAN} nodes")), "{text}");
    assert!(text.contains(&format!("labels: W {MORE_THAN}")), "{text}");
    let (_, markdown) = spread(&["localize", "--format", "markdown"]);
    assert_no_saturated_number("Markdown", &markdown);
    assert!(
        markdown.contains(&format!("| leaves | {MORE_THAN} |")),
        "{markdown}"
    );
    let (_, json) = spread(&["localize", "--format", "json"]);
    let v: Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["tree"]["saturated"], true, "{json}");
    assert_eq!(v["tree"]["leaves"].as_u64(), Some(u64::MAX));
    let (_, json, _) = run(fgvt()
        .arg("localize")
        .arg(fixture("pair_snapshot/failing.json"))
        .args(["--format", "json"]));
    let v: Value = serde_json::from_str(&json).unwrap();
    assert_eq!(
        v["tree"]["saturated"], false,
        "exact counts are not flagged"
    );
}

#[test]
fn a_max_states_cut_is_a_cut_leaf_and_the_note_says_so() {
    let pair = fixture("pair_snapshot/failing.json");
    let (code, out, err) = run(fgvt()
        .arg("localize")
        .arg(&pair)
        .args(["--max-states", "30"]));
    assert_eq!(code, 3, "{out}{err}");
    let leaves = out.lines().find(|l| l.starts_with("leaves:")).unwrap();
    assert!(leaves.contains("bounded 0, cut "), "{leaves}");
    assert!(
        out.contains("cut (exploration stopped at the --max-states limit before reaching them)"),
        "{out}"
    );
    assert!(!out.contains("bounded, or the checker timed out"), "{out}");

    let (_, json, _) =
        run(fgvt()
            .arg("localize")
            .arg(&pair)
            .args(["--max-states", "30", "--format", "json"]));
    let v: Value = serde_json::from_str(&json).unwrap();
    let tree = &v["tree"];
    assert_eq!(tree["bounded_leaves"], 0, "{tree}");
    assert!(tree["cut_leaves"].as_u64().unwrap() > 0, "{tree}");
    assert_eq!(v["partial"], "max-states");

    let (_, json, _) =
        run(fgvt()
            .arg("explore")
            .arg(&pair)
            .args(["--max-states", "30", "--format", "json"]));
    let v: Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["tree"]["bounded"], 0, "{json}");
    assert_eq!(v["tree"]["cut"], v["verdicts"]["cut"], "{json}");
    assert!(v["tree"]["cut"].as_u64().unwrap() > 0, "{json}");
    assert_eq!(v["verdicts"]["unchecked"], 0, "{json}");
}

#[test]
fn a_leaf_cut_by_max_states_shows_as_cut_on_its_path() {
    let pair = fixture("pair_snapshot/failing.json");
    // The last leaf in depth-first order is the last state the search left unexplored.
    let (_, json, _) =
        run(fgvt()
            .arg("explore")
            .arg(&pair)
            .args(["--max-states", "30", "--format", "json"]));
    let v: Value = serde_json::from_str(&json).unwrap();
    let last = v["tree"]["leaves"].as_u64().unwrap() - 1;
    let (code, out, err) = run(fgvt().arg("explore").arg(&pair).args([
        "--max-states",
        "30",
        "--leaf",
        &last.to_string(),
    ]));
    assert_eq!(code, 3, "{out}{err}");
    assert!(out.contains("leaf: cut"), "{out}");
    assert!(
        out.contains("cut: exploration stopped by the max-states limit (--max-states)"),
        "{out}"
    );
}
