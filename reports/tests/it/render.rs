//! DOT and SVG drawings of hand-built labeled trees: well-formed output, colours, folding and
//! the size controls.

use fgvt_labeling::cdrs::{find_cdrs, Cdrs, CdrsOptions};
use fgvt_labeling::labels::{Labeling, LeafOutcome};
use fgvt_labeling::pattern::Pattern;
use fgvt_labeling::testing::{label, Builder};
use fgvt_reports::draw::{select, Collapsed, DrawInput, DrawOptions, Focus, TreeDrawing};
use fgvt_reports::{render_dot, render_svg, SvgEngine};
use fgvt_tree::{Event, EventKind, NodeId, SourceMap, Span, Tree};

const SOURCE: &str = "object O {\n  op a() { x = \"1\"; }\n  op b() { y = x\\n; }\n}\n";

/// A labeled tree with its CDRS and sources.
struct Fixture {
    tree: Tree,
    labeling: Labeling,
    cdrs: Cdrs,
    sources: SourceMap,
}

impl Fixture {
    /// Parses `P` (pass), `F` (fail), `U` (unknown) and `( ... )` (inner node; child `i` is
    /// reached by thread `i`), e.g. `(P (F P))`.
    fn parse(text: &str) -> Fixture {
        let mut b = builder();
        let root = b.parse(text);
        Fixture::new(b, root)
    }

    /// Labels the tree `b` built below `root` and finds its CDRS.
    fn new(b: Builder, root: NodeId) -> Fixture {
        let (tree, outcomes) = b.finish(root);
        let labeling = label(&tree, &outcomes);
        let cdrs = find_cdrs(
            &tree,
            &labeling,
            &Pattern::default(),
            &CdrsOptions::default(),
        );
        let mut sources = SourceMap::new();
        sources.add("o.fgv", SOURCE);
        Fixture {
            tree,
            labeling,
            cdrs,
            sources,
        }
    }

    fn drawing(&self, options: &DrawOptions) -> TreeDrawing {
        let input = DrawInput {
            tree: &self.tree,
            labeling: &self.labeling,
            groups: &self.cdrs.groups,
            sources: &self.sources,
            title: "Test \"tree\" <&> \\ 'quoted'",
        };
        select(&input, options)
    }
}

/// A builder whose edges carry [`event`].
fn builder() -> Builder {
    Builder::with_events(event)
}

/// Thread 0 writes `"1"` (quotes in the label), thread 1 reads `x\n` (a backslash).
fn event(thread: usize) -> Event {
    let (location, value, at) = if thread == 0 {
        ("x", "\"1\"", SOURCE.find("x ="))
    } else {
        ("x\\n", "<&>", SOURCE.find("y ="))
    };
    let at = at.unwrap_or(0);
    Event {
        thread,
        op_index: 0,
        op: "op".into(),
        kind: if thread == 0 {
            EventKind::Write
        } else {
            EventKind::Read
        },
        location: location.into(),
        value: value.into(),
        span: Span::new(0, at, at + 3),
        call: None,
        ret: None,
        order: None,
        memory: None,
        seen: None,
        footprint: fgvt_tree::Footprint::Everything,
    }
}

/// The PairSnapshot shape: a chain of `WG` races ending in a `G`, with white siblings.
const RACY: &str = "(P ((P P) ((P (P P)) (P F))))";

fn unfolded() -> DrawOptions {
    DrawOptions {
        fold: false,
        ..DrawOptions::default()
    }
}

fn dot_available() -> bool {
    fgvt_reports::svg::graphviz_available()
}

/// Parses `svg` as XML and checks it is an SVG document; returns its text content.
fn assert_well_formed_svg(svg: &str) -> String {
    // Graphviz declares the SVG 1.1 DTD; it is well-formed XML all the same.
    let options = roxmltree::ParsingOptions {
        allow_dtd: true,
        ..roxmltree::ParsingOptions::default()
    };
    let doc = roxmltree::Document::parse_with_options(svg, options)
        .unwrap_or_else(|e| panic!("not XML: {e}\n{svg}"));
    let root = doc.root_element();
    assert_eq!(root.tag_name().name(), "svg");
    assert_eq!(
        root.tag_name().namespace(),
        Some("http://www.w3.org/2000/svg")
    );
    doc.descendants()
        .filter(|n| n.is_text())
        .filter_map(|n| n.text())
        .collect::<Vec<_>>()
        .join("|")
}

#[test]
fn dot_parses_back_with_escaped_labels() {
    let f = Fixture::parse(RACY);
    let dot = render_dot(&f.drawing(&unfolded()));
    let graph = graphviz_rust::parse(&dot).unwrap_or_else(|e| panic!("{e}\n{dot}"));
    let printed = graphviz_rust::print(
        graph,
        &mut graphviz_rust::printer::PrinterContext::default(),
    );
    assert!(printed.contains("n0"), "{printed}");
    // The title's quotes and backslash, and the events' quotes, are escaped.
    assert!(dot.contains(r#"Test \"tree\" <&> \\ 'quoted'"#), "{dot}");
    assert!(dot.contains(r#"T0 write x = \"1\" · l.2"#), "{dot}");
    assert!(dot.contains(r#"T1 read x\\n = <&> · l.3"#), "{dot}");
    // Tooltips span lines with DOT's `\n`, never a raw line break inside a string.
    assert!(dot.contains(r"\nleaves below:"), "{dot}");
}

#[test]
fn dot_colours_nodes_by_label_and_marks_the_cdrs() {
    let f = Fixture::parse(RACY);
    let drawing = f.drawing(&unfolded());
    let dot = render_dot(&drawing);
    // Root WG (light grey), a G race, a red failing leaf, white leaves.
    assert!(
        dot.contains(r##"label="WG""##) && dot.contains(r##"fillcolor="#dcdcdc""##),
        "{dot}"
    );
    assert!(
        dot.contains(r##"label="G""##) && dot.contains(r##"fillcolor="#8c8c8c""##),
        "{dot}"
    );
    assert!(
        dot.contains(r##"fillcolor="#d62728""##),
        "failing leaf is red: {dot}"
    );
    assert!(
        dot.contains("legend[label=<<table"),
        "an HTML-like legend table: {dot}"
    );
    let races: Vec<_> = drawing
        .nodes
        .iter()
        .filter(|n| n.race)
        .map(|n| n.label.unwrap().name())
        .collect();
    assert_eq!(races, ["WG", "WG", "WG", "G"]);
    assert!(drawing
        .nodes
        .iter()
        .filter(|n| n.witness)
        .all(|n| n.label.is_some()));
    assert_eq!(
        drawing.edges.iter().filter(|e| e.witness).count(),
        4,
        "root to the failing leaf"
    );
}

#[test]
fn dot_is_accepted_by_graphviz() {
    if !dot_available() {
        eprintln!("skipped: Graphviz's `dot` is not on PATH");
        return;
    }
    let f = Fixture::parse(RACY);
    let dot = render_dot(&f.drawing(&unfolded()));
    let svg = graphviz_rust::exec_dot(dot, vec![graphviz_rust::cmd::Format::Svg.into()])
        .expect("dot accepts the graph");
    assert_well_formed_svg(&String::from_utf8(svg).unwrap());
}

#[test]
fn the_builtin_engine_writes_well_formed_svg_with_tooltips_and_legend() {
    let f = Fixture::parse(RACY);
    let svg = render_svg(&f.drawing(&unfolded()), SvgEngine::Builtin).unwrap();
    let text = assert_well_formed_svg(&svg);
    assert!(text.contains("Legend"), "{text}");
    assert!(text.contains("race of a reported CDRS"), "{text}");
    assert!(
        text.contains(r#"Test "tree" <&> \ 'quoted'"#),
        "title unescaped by the parser: {text}"
    );
    assert!(
        text.contains("T0 write x = \"1\" · l.2"),
        "edge label: {text}"
    );
    assert!(
        text.contains("leaves below: 7 passing, 1 failing, 0 unknown"),
        "root tooltip: {text}"
    );
    assert!(svg.contains("fill=\"#d62728\""), "red failing leaf");
    assert!(svg.contains("stroke=\"#f0b400\""), "highlighted race");
}

#[test]
fn the_graphviz_engine_writes_well_formed_svg() {
    if !dot_available() {
        eprintln!("skipped: Graphviz's `dot` is not on PATH");
        return;
    }
    let f = Fixture::parse(RACY);
    let svg = render_svg(&f.drawing(&unfolded()), SvgEngine::Graphviz).unwrap();
    let text = assert_well_formed_svg(&svg);
    assert!(text.contains("WG"), "{text}");
}

#[test]
fn uniform_subtrees_fold_into_one_node_with_their_leaf_count() {
    let f = Fixture::parse("(((P P) (P P)) (F (F F)) (P F))");
    let drawing = f.drawing(&DrawOptions::default());
    let folded: Vec<_> = drawing
        .nodes
        .iter()
        .filter(|n| n.collapsed == Some(Collapsed::Folded))
        .map(|n| n.text.as_str())
        .collect();
    // The all-B subtree is on a witness path: expanded along it, its other child folds.
    assert_eq!(folded, ["W\n4 leaves", "B\n2 leaves"]);
    let all = f.drawing(&unfolded());
    assert_eq!(all.nodes.len(), f.tree.graph.node_count());
    assert!(drawing.nodes.len() < all.nodes.len());
    assert!(
        drawing.notes.iter().any(|n| n.contains("folded")),
        "{:?}",
        drawing.notes
    );
}

#[test]
fn max_nodes_bounds_the_drawing_and_keeps_the_cdrs_path() {
    let f = Fixture::parse("((P P P) (P P P) (P P P) (P (P F)))");
    for max in [1, 3, 5, 8] {
        let drawing = f.drawing(&DrawOptions {
            max_nodes: max,
            fold: false,
            ..DrawOptions::default()
        });
        assert!(
            drawing.nodes.len() <= max.max(1),
            "{max}: {}",
            drawing.nodes.len()
        );
        assert_eq!(drawing.edges.len(), drawing.nodes.len() - 1);
    }
    let drawing = f.drawing(&DrawOptions {
        max_nodes: 8,
        fold: false,
        ..DrawOptions::default()
    });
    // The witness path goes first: root, its 4 children, then (P (P F))'s two children, ...
    assert!(drawing.nodes.iter().any(|n| n.race), "{drawing:#?}");
    assert!(drawing
        .nodes
        .iter()
        .any(|n| n.collapsed == Some(Collapsed::MaxNodes)));
}

#[test]
fn depth_cuts_the_tree_with_leaf_counts() {
    let f = Fixture::parse("((P (P F)) (F (P P)))");
    let drawing = f.drawing(&DrawOptions {
        depth: Some(1),
        fold: false,
        ..DrawOptions::default()
    });
    assert_eq!(drawing.nodes.len(), 3);
    let texts: Vec<_> = drawing
        .nodes
        .iter()
        .skip(1)
        .map(|n| n.text.as_str())
        .collect();
    assert_eq!(texts, ["WG\n3 leaves", "G\n3 leaves"]);
}

#[test]
fn focus_cdrs_keeps_only_the_paths_and_their_siblings() {
    let f = Fixture::parse("((P P) (P (P P)) (P (P F)))");
    let drawing = f.drawing(&DrawOptions {
        focus: Focus::Cdrs,
        fold: false,
        ..DrawOptions::default()
    });
    // Root, its 3 children, the children of (P (P F)), then of (P F).
    assert_eq!(drawing.nodes.len(), 1 + 3 + 2 + 2);
    let off_path = drawing
        .nodes
        .iter()
        .filter(|n| n.collapsed == Some(Collapsed::Focus))
        .count();
    assert_eq!(off_path, 2);
}

#[test]
fn a_shared_state_is_drawn_once_as_a_dag_or_per_path_unfolded() {
    let mut b = builder();
    let p = b.leaf(LeafOutcome::Pass);
    let fl = b.leaf(LeafOutcome::Fail);
    let shared = b.node(&[p, fl]);
    let a = b.node(&[shared]);
    let c = b.node(&[shared]);
    let root = b.node(&[a, c]);
    let f = Fixture::new(b, root);
    let dag = f.drawing(&DrawOptions {
        dag: true,
        fold: false,
        ..DrawOptions::default()
    });
    assert_eq!(dag.nodes.len(), 6);
    assert_eq!(dag.edges.len(), 6);
    let tree = f.drawing(&unfolded());
    assert_eq!(tree.nodes.len(), 9);
    for drawing in [dag, tree] {
        graphviz_rust::parse(&render_dot(&drawing)).unwrap();
        assert_well_formed_svg(&render_svg(&drawing, SvgEngine::Builtin).unwrap());
    }
}

#[test]
fn a_single_leaf_and_an_all_unknown_tree_render() {
    for text in ["P", "F", "U", "(U U)"] {
        let f = Fixture::parse(text);
        for options in [DrawOptions::default(), unfolded()] {
            let drawing = f.drawing(&options);
            graphviz_rust::parse(&render_dot(&drawing)).unwrap();
            assert_well_formed_svg(&render_svg(&drawing, SvgEngine::Builtin).unwrap());
        }
    }
}

#[test]
fn quote_escapes_what_dot_strings_cannot_hold() {
    use fgvt_reports::dot::quote;
    assert_eq!(quote(r#"a "b" \c"#), r#""a \"b\" \\c""#);
    assert_eq!(quote("one\ntwo\r\u{7}"), r#""one\ntwo ""#);
}
