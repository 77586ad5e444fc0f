//! `fgvt render` and `fgvt localize --svg/--dot` as a user runs them.

use std::path::Path;

mod common;

use common::{fgvt, run};

const PAIR: &str = "fixtures/pair_snapshot/failing.json";

fn assert_svg(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap();
    let options = roxmltree_options();
    let doc = roxmltree::Document::parse_with_options(&text, options)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert_eq!(doc.root_element().tag_name().name(), "svg");
    text
}

fn roxmltree_options() -> roxmltree::ParsingOptions {
    // Graphviz declares the SVG 1.1 DTD.
    roxmltree::ParsingOptions {
        allow_dtd: true,
        ..roxmltree::ParsingOptions::default()
    }
}

#[test]
fn the_focused_tree_of_pair_snapshot() {
    let (code, dot, err) = run(fgvt().args(["render", PAIR, "--focus", "cdrs"]));
    assert_eq!(
        code, 0,
        "the picture was drawn (the verdict is `localize`'s): {err}"
    );
    graphviz_rust::parse(&dot).unwrap_or_else(|e| panic!("{e}\n{dot}"));
    insta::assert_snapshot!("pair_snapshot_focused_dot", dot);
}

#[test]
fn the_format_follows_the_extension_and_svg_works_without_graphviz() {
    let dir = tempfile::tempdir().unwrap();
    // A PATH with no `dot` on it: auto-detection must fall back to the builtin layout.
    let empty = tempfile::tempdir().unwrap();
    let svg = dir.path().join("tree.svg");
    let (code, _, err) = run(fgvt()
        .env("PATH", empty.path())
        .args(["render", PAIR, "-o"])
        .arg(&svg));
    assert_eq!(code, 0, "{err}");
    let text = assert_svg(&svg);
    assert!(
        text.contains("class=\"legend\""),
        "the builtin engine drew it"
    );
    assert!(text.contains("#d62728"), "a red failing leaf");

    let (code, _, err) = run(fgvt()
        .env("PATH", empty.path())
        .args(["render", PAIR, "--engine", "graphviz", "-o"])
        .arg(&svg));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("not on PATH"), "{err}");

    let dot = dir.path().join("tree.gv");
    let (code, _, err) = run(fgvt()
        .args(["render", PAIR, "--depth", "2", "-o"])
        .arg(&dot));
    assert_eq!(code, 0, "{err}");
    graphviz_rust::parse(&std::fs::read_to_string(&dot).unwrap()).unwrap();

    let (code, _, err) = run(fgvt()
        .args(["render", PAIR, "-o"])
        .arg(dir.path().join("tree.png")));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("cannot tell the format"), "{err}");
}

#[test]
fn both_engines_and_the_dag() {
    let dir = tempfile::tempdir().unwrap();
    for engine in ["builtin", "graphviz"] {
        if engine == "graphviz" && !fgvt_reports::svg::graphviz_available() {
            eprintln!("skipped graphviz: `dot` is not on PATH");
            continue;
        }
        for extra in [&[][..], &["--dag", "--no-fold", "--max-nodes", "60"][..]] {
            let svg = dir.path().join(format!("{engine}.svg"));
            let (code, _, err) = run(fgvt()
                .args(["render", PAIR, "--engine", engine])
                .args(extra)
                .arg("-o")
                .arg(&svg));
            assert_eq!(code, 0, "{engine} {extra:?}: {err}");
            assert_svg(&svg);
        }
    }
}

#[test]
fn localize_writes_the_tree_next_to_the_report() {
    let dir = tempfile::tempdir().unwrap();
    let (svg, dot) = (dir.path().join("t.svg"), dir.path().join("t.dot"));
    let (code, out, err) = run(fgvt()
        .args(["localize", PAIR, "--engine", "builtin", "--svg"])
        .arg(&svg)
        .arg("--dot")
        .arg(&dot));
    assert_eq!(code, 1, "{err}");
    assert!(
        out.contains("NOT LINEARIZABLE"),
        "the report is printed as usual: {out}"
    );
    assert_svg(&svg);
    let text = std::fs::read_to_string(&dot).unwrap();
    graphviz_rust::parse(&text).unwrap();
    assert!(text.contains("fillcolor=\"#d62728\""), "{text}");
}

#[test]
fn a_reader_that_goes_away_early_is_no_panic() {
    // `fgvt render TEST | head -1`: stdout closes before the drawing is written.
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_fgvt"))
        .current_dir(common::root())
        .args(["render", PAIR])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(out.status.code(), Some(0), "{err}");
}
