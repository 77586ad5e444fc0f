//! Drawing a big labeled tree: a synthetic full ternary tree of 265,720 nodes (177,147 leaves,
//! one in 101 failing) is selected, and rendered as DOT and SVG within `--max-nodes`.
//!
//! Run with `cargo bench -p fgvt-reports --bench render`; the output sizes are printed once.

use std::sync::OnceLock;

use divan::Bencher;
use fgvt_labeling::cdrs::{find_cdrs, Cdrs, CdrsOptions};
use fgvt_labeling::labels::{Labeling, LeafOutcome};
use fgvt_labeling::pattern::Pattern;
use fgvt_labeling::testing::{label, Builder};
use fgvt_reports::draw::{select, DrawInput, DrawOptions, Focus, TreeDrawing};
use fgvt_reports::{render_dot, render_svg, SvgEngine};
use fgvt_tree::{Event, EventKind, NodeId, SourceMap, Span, Tree};

const BRANCHING: usize = 3;
const DEPTH: u32 = 11;

struct Big {
    tree: Tree,
    labeling: Labeling,
    cdrs: Cdrs,
    sources: SourceMap,
}

fn big() -> &'static Big {
    static BIG: OnceLock<Big> = OnceLock::new();
    BIG.get_or_init(|| {
        let mut b = Builder::default();
        let root = build(&mut b, DEPTH);
        let (tree, outcomes) = b.finish(root);
        let labeling = label(&tree, &outcomes);
        let cdrs = find_cdrs(
            &tree,
            &labeling,
            &Pattern::default(),
            &CdrsOptions::default(),
        );
        let mut sources = SourceMap::new();
        sources.add("big.fgv", "x = 1;\ny = x;\nz = y;\n");
        let big = Big {
            tree,
            labeling,
            cdrs,
            sources,
        };
        report_sizes(&big);
        big
    })
}

/// Adds a full tree of `depth` below a new node, children first (the tree's invariant).
fn build(b: &mut Builder, depth: u32) -> NodeId {
    if depth == 0 {
        // Node indices are in creation order; one leaf in 101 fails, spread over the tree.
        let outcome = if b.node_count() % 101 == 7 {
            LeafOutcome::Fail
        } else {
            LeafOutcome::Pass
        };
        return b.leaf(outcome);
    }
    let children: Vec<NodeId> = (0..BRANCHING).map(|_| build(b, depth - 1)).collect();
    b.node_with_events(children.into_iter().enumerate().map(|(thread, c)| {
        let event = Event {
            thread,
            op_index: 0,
            op: "op".into(),
            kind: EventKind::Write,
            location: format!("x{thread}"),
            value: depth.to_string(),
            span: Span::new(0, 7 * thread, 7 * thread + 5),
            call: None,
            ret: None,
            order: None,
            memory: None,
            seen: None,
            footprint: fgvt_tree::Footprint::Everything,
        };
        (event, c)
    }))
}

fn drawing(options: &DrawOptions) -> TreeDrawing {
    let big = big();
    let input = DrawInput {
        tree: &big.tree,
        labeling: &big.labeling,
        groups: &big.cdrs.groups[..big.cdrs.groups.len().min(3)],
        sources: &big.sources,
        title: "synthetic",
    };
    select(&input, options)
}

fn report_sizes(big: &Big) {
    let nodes = big.tree.unfolded(big.tree.root).nodes;
    eprintln!(
        "tree: {nodes} nodes, {} failing leaves, {} CDRS groups",
        big.labeling.failing_leaves(),
        big.cdrs.groups.len()
    );
}

fn options(max_nodes: usize, focus: Focus) -> DrawOptions {
    DrawOptions {
        max_nodes,
        focus,
        ..DrawOptions::default()
    }
}

fn main() {
    big();
    for (name, opts) in [
        ("default", options(200, Focus::All)),
        ("max-1000", options(1000, Focus::All)),
    ] {
        let d = drawing(&opts);
        let dot = render_dot(&d);
        let svg = render_svg(&d, SvgEngine::Builtin).expect("builtin never fails");
        eprintln!(
            "{name}: {} nodes drawn, DOT {} bytes, builtin SVG {} bytes",
            d.nodes.len(),
            dot.len(),
            svg.len()
        );
    }
    divan::main();
}

#[divan::bench(args = [200, 1000])]
fn select_nodes(bencher: Bencher, max_nodes: usize) {
    big();
    bencher.bench(|| drawing(&options(max_nodes, Focus::All)));
}

#[divan::bench]
fn select_focus_cdrs(bencher: Bencher) {
    big();
    bencher.bench(|| drawing(&options(200, Focus::Cdrs)));
}

#[divan::bench(args = [200, 1000])]
fn dot(bencher: Bencher, max_nodes: usize) {
    let d = drawing(&options(max_nodes, Focus::All));
    bencher.bench(|| render_dot(&d));
}

#[divan::bench(args = [200, 1000], sample_count = 5, sample_size = 1)]
fn svg_builtin(bencher: Bencher, max_nodes: usize) {
    let d = drawing(&options(max_nodes, Focus::All));
    bencher.bench(|| render_svg(&d, SvgEngine::Builtin));
}

#[divan::bench(sample_count = 5, sample_size = 1)]
fn svg_graphviz(bencher: Bencher) {
    if !fgvt_reports::svg::graphviz_available() {
        eprintln!("svg_graphviz skipped: `dot` is not on PATH");
        return;
    }
    let d = drawing(&options(200, Focus::All));
    bencher.bench(|| render_svg(&d, SvgEngine::Graphviz));
}
