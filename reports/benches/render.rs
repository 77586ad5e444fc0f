//! Drawing a big labeled tree: a synthetic full ternary tree of 265,720 nodes (177,147 leaves,
//! one in 101 failing) is selected, and rendered as DOT and SVG within `--max-nodes`.
//!
//! Run with `cargo bench -p fgvt-reports --bench render`; the output sizes are printed once.

use std::sync::OnceLock;
use std::time::Duration;

use divan::Bencher;
use fgvt_labeling::cdrs::{find_cdrs, Cdrs, CdrsOptions, Pattern};
use fgvt_labeling::labels::{label_tree, Labeling, LeafOutcome};
use fgvt_reports::draw::{select, DrawInput, DrawOptions, Focus, TreeDrawing};
use fgvt_reports::{render_dot, render_svg, SvgEngine};
use fgvt_tree::{
    Counts, Event, EventKind, History, Leaf, LeafKind, Node, NodeId, SourceMap, Span, Tree,
};
use petgraph::graph::DiGraph;

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
        let mut graph = DiGraph::new();
        let mut leaves = 0u64;
        let root = build(&mut graph, DEPTH, &mut leaves);
        let tree = Tree {
            graph,
            root,
            partial: None,
            distinct_states: 0,
            elapsed: Duration::ZERO,
        };
        // Leaf indices are in creation order; one in 101 fails, spread over the tree.
        let labeling = label_tree(&tree, |id, _| {
            if id.index() % 101 == 7 {
                LeafOutcome::Fail
            } else {
                LeafOutcome::Pass
            }
        });
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
fn build(graph: &mut DiGraph<Node, Event>, depth: u32, leaves: &mut u64) -> NodeId {
    if depth == 0 {
        *leaves += 1;
        let leaf = Leaf {
            kind: LeafKind::Complete,
            history: History::new(),
            fault: None,
            bound: None,
            waiting: Vec::new(),
        };
        return graph.add_node(Node {
            leaf: Some(leaf),
            unfolded: Counts {
                nodes: 1,
                complete: 1,
                ..Counts::default()
            },
        });
    }
    let children: Vec<NodeId> = (0..BRANCHING)
        .map(|_| build(graph, depth - 1, leaves))
        .collect();
    let mut unfolded = Counts {
        nodes: 1,
        ..Counts::default()
    };
    for &c in &children {
        let cc = graph[c].unfolded;
        unfolded.nodes += cc.nodes;
        unfolded.complete += cc.complete;
        unfolded.depth = unfolded.depth.max(cc.depth + 1);
    }
    let id = graph.add_node(Node {
        leaf: None,
        unfolded,
    });
    for (thread, &c) in children.iter().enumerate() {
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
        };
        graph.add_edge(id, c, event);
    }
    id
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
    let nodes = big.tree.graph[big.tree.root].unfolded.nodes;
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
