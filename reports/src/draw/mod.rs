//! What to draw of a labeled interleaving tree: the selection that the DOT and SVG renderers
//! share.
//!
//! A tree of a few threads has thousands to millions of nodes; a drawing is readable with a few
//! hundred. [`select`] walks the tree from the root and keeps:
//!
//! * every node on the witness path of a reported CDRS, first (so that the path is drawn
//!   whatever the budget), with its siblings;
//! * then the rest, breadth-first, so that a cut drawing keeps the top of the tree;
//! * a node whose subtree is uniform (every counted leaf passes, or every one fails) is drawn
//!   *folded*: one node that shows its leaf count;
//! * a node whose children are not drawn because of `--depth`, `--focus cdrs` or `--max-nodes`
//!   is drawn *cut*, with its leaf count too.
//!
//! The tree may be a memoized DAG: it is drawn unfolded (a shared node once per path reaching
//! it) or, with [`DrawOptions::dag`], as the DAG itself.

#[cfg(feature = "graph")]
pub(crate) mod canvas;
#[cfg(feature = "graph")]
pub(crate) mod style;

use std::collections::{HashMap, HashSet, VecDeque};
use std::fmt::Write as _;

use fgvt_labeling::cdrs::CdrsGroup;
use fgvt_labeling::labels::{Category, Label, Labeling, LeafOutcome};
use fgvt_tree::{Choice, Event, Leaf, LeafKind, NodeId, SourceMap, Tree};

/// Default of [`DrawOptions::max_nodes`]: what a screen still shows legibly.
pub const DEFAULT_MAX_NODES: usize = 200;

/// Longest source snippet quoted on an edge, in characters.
const SNIPPET_CHARS: usize = 32;

/// The reported CDRS are highlighted up to this many (one bit each in a mask).
const MAX_GROUPS: usize = 64;

/// Which part of the tree to draw.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Focus {
    /// The whole tree (within the other limits).
    #[default]
    All,
    /// Only the witness paths of the reported CDRS and the siblings of their nodes.
    Cdrs,
}

/// How much of the tree to draw.
#[derive(Clone, Debug)]
pub struct DrawOptions {
    /// Expand no node deeper than this (the root is at depth 0).
    pub depth: Option<usize>,
    /// Which part of the tree to draw.
    pub focus: Focus,
    /// Most nodes in the drawing (at least the root is drawn).
    pub max_nodes: usize,
    /// Draw a memoized tree as its DAG (a shared state once) instead of unfolded.
    pub dag: bool,
    /// Fold uniform subtrees (all `W` or all `B`) into one node.
    pub fold: bool,
}

impl Default for DrawOptions {
    fn default() -> Self {
        DrawOptions {
            depth: None,
            focus: Focus::All,
            max_nodes: DEFAULT_MAX_NODES,
            dag: false,
            fold: true,
        }
    }
}

/// What the drawing is made from.
#[derive(Clone, Copy)]
pub struct DrawInput<'a> {
    /// The explored tree.
    pub tree: &'a Tree,
    /// Its labels.
    pub labeling: &'a Labeling,
    /// The reported CDRS groups, best first: their witness paths and races are highlighted.
    pub groups: &'a [CdrsGroup],
    /// The model's sources, for the line numbers on edges.
    pub sources: &'a SourceMap,
    /// A title, e.g. the object and the test file.
    pub title: &'a str,
}

/// Why a drawn node's children are not drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Collapsed {
    /// Its subtree is uniform (all `W`, all `B`, or no verdict at all).
    Folded,
    /// It lies at `--depth`.
    Depth,
    /// It is off the CDRS paths (`--focus cdrs`).
    Focus,
    /// Drawing its children would exceed `--max-nodes`.
    MaxNodes,
}

/// One drawn node.
#[derive(Clone, Debug)]
pub struct DrawNode {
    /// The tree node (state) it stands for.
    pub node: NodeId,
    /// Its label; `None` when no counted leaf lies below.
    pub label: Option<Label>,
    /// For a leaf, its outcome.
    pub leaf: Option<LeafOutcome>,
    /// Set when its children are not drawn.
    pub collapsed: Option<Collapsed>,
    /// Leaves of its unfolded subtree (shown on collapsed nodes).
    pub leaves: u64,
    /// Whether it is a decisive node (race) of a reported CDRS, on that CDRS's witness path.
    pub race: bool,
    /// Whether it lies on the witness path of a reported CDRS.
    pub witness: bool,
    /// The text inside the node.
    pub text: String,
    /// The tooltip: state, label, counts.
    pub tooltip: String,
}

impl DrawNode {
    /// Whether this is a leaf whose history is not linearizable (or whose model faulted).
    pub fn failing_leaf(&self) -> bool {
        self.leaf == Some(LeafOutcome::Fail)
    }
}

/// One drawn edge: a step.
#[derive(Clone, Debug)]
pub struct DrawEdge {
    /// Index of the parent in [`TreeDrawing::nodes`].
    pub from: usize,
    /// Index of the child in [`TreeDrawing::nodes`].
    pub to: usize,
    /// The thread that takes the step.
    pub thread: usize,
    /// Thread, event and source line: `T0 write d[0] = 2 · l.8`.
    pub label: String,
    /// Whether it lies on the witness path of a reported CDRS.
    pub witness: bool,
}

/// The selected part of a labeled tree, ready for a renderer.
#[derive(Clone, Debug)]
pub struct TreeDrawing {
    /// The title given in [`DrawInput::title`].
    pub title: String,
    /// A line of figures: what is drawn out of what.
    pub summary: String,
    /// Drawn nodes; the root is first.
    pub nodes: Vec<DrawNode>,
    /// Drawn edges, parents before children.
    pub edges: Vec<DrawEdge>,
    /// What was left out and why (folds, cuts), for the legend.
    pub notes: Vec<String>,
}

/// Selects what to draw of `input` under `options`.
pub fn select(input: &DrawInput<'_>, options: &DrawOptions) -> TreeDrawing {
    Selector::new(input, options).run()
}

/// A node waiting to be expanded.
struct Pending {
    index: usize,
    node: NodeId,
    depth: usize,
    /// Bit `g`: the witness of reported group `g` passes here.
    mask: u64,
}

struct Selector<'a> {
    input: &'a DrawInput<'a>,
    options: &'a DrawOptions,
    groups: &'a [CdrsGroup],
    /// Per group, its decisive nodes.
    races: Vec<HashSet<NodeId>>,
    /// DAG mode: which groups' witnesses pass through each node and each (node, thread) edge.
    dag_nodes: HashMap<NodeId, u64>,
    dag_edges: HashMap<(NodeId, Choice), u64>,
    nodes: Vec<DrawNode>,
    edges: Vec<DrawEdge>,
    /// DAG mode: the drawn node of each tree node.
    drawn: HashMap<NodeId, usize>,
    /// Unfolded mode: the schedule from the root to each drawn node (for tooltips).
    schedules: Vec<Vec<Choice>>,
    /// Per [`Collapsed`] reason, the nodes left out below collapsed nodes.
    cut: [u64; 4],
    /// DAG mode: the states already counted in `cut`.
    hidden: HashSet<NodeId>,
}

impl<'a> Selector<'a> {
    fn new(input: &'a DrawInput<'a>, options: &'a DrawOptions) -> Self {
        let groups = &input.groups[..input.groups.len().min(MAX_GROUPS)];
        let races = groups
            .iter()
            .map(|g| g.nodes.iter().map(|r| r.node).collect())
            .collect();
        let mut dag_nodes = HashMap::new();
        let mut dag_edges = HashMap::new();
        for (g, group) in groups.iter().enumerate() {
            let bit = 1u64 << g;
            let mut node = input.tree.root;
            *dag_nodes.entry(node).or_insert(0) |= bit;
            for &choice in &group.witness {
                let Some((_, next)) = input
                    .tree
                    .children(node)
                    .into_iter()
                    .find(|(e, _)| e.choice() == choice)
                else {
                    break;
                };
                *dag_edges.entry((node, choice)).or_insert(0) |= bit;
                *dag_nodes.entry(next).or_insert(0) |= bit;
                node = next;
            }
        }
        Selector {
            input,
            options,
            groups,
            races,
            dag_nodes,
            dag_edges,
            nodes: Vec::new(),
            edges: Vec::new(),
            drawn: HashMap::new(),
            schedules: Vec::new(),
            cut: [0; 4],
            hidden: HashSet::new(),
        }
    }

    fn run(mut self) -> TreeDrawing {
        let tree = self.input.tree;
        let all = if self.groups.is_empty() {
            0
        } else {
            u64::MAX >> (64 - self.groups.len())
        };
        let root = self.add_node(tree.root, all, Vec::new());
        // Witness paths first, whatever the budget; then breadth-first.
        let mut on_path = VecDeque::new();
        let mut rest = VecDeque::new();
        let first = Pending {
            index: root,
            node: tree.root,
            depth: 0,
            mask: all,
        };
        if all != 0 {
            on_path.push_back(first)
        } else {
            rest.push_back(first)
        }
        while let Some(item) = on_path.pop_front().or_else(|| rest.pop_front()) {
            for child in self.expand(&item) {
                if child.mask != 0 {
                    on_path.push_back(child)
                } else {
                    rest.push_back(child)
                }
            }
        }
        let notes = self.notes();
        let stats = tree.stats();
        let count = crate::build::count_text;
        let summary = format!(
            "{} of {} nodes drawn ({}), {} leaves: {} passing, {} failing",
            self.nodes.len(),
            count(of_nodes(&stats, self.options.dag)),
            if self.options.dag {
                "DAG of states"
            } else {
                "unfolded tree"
            },
            count(stats.leaves),
            count(self.input.labeling.passing_leaves()),
            count(self.input.labeling.failing_leaves()),
        );
        TreeDrawing {
            title: self.input.title.to_string(),
            summary,
            nodes: self.nodes,
            edges: self.edges,
            notes,
        }
    }

    /// Draws the children of `item`, or records why not; returns the children to expand.
    fn expand(&mut self, item: &Pending) -> Vec<Pending> {
        let (tree, labeling) = (self.input.tree, self.input.labeling);
        if tree.leaf(item.node).is_some() {
            return Vec::new();
        }
        let children = tree.children(item.node);
        let uniform = labeling.category(item.node) != Some(Category::Mix);
        // A uniform subtree on a witness path is expanded along the witness only: its other
        // children are uniform too and fold, and the path ends at its red leaf as in Fig. 8.
        let reason = if self.options.fold && uniform && item.mask == 0 {
            Some(Collapsed::Folded)
        } else if self.options.depth.is_some_and(|d| item.depth >= d) {
            Some(Collapsed::Depth)
        } else if self.options.focus == Focus::Cdrs && item.mask == 0 {
            Some(Collapsed::Focus)
        } else if self.nodes.len() + children.len() > self.options.max_nodes.max(1) {
            Some(Collapsed::MaxNodes)
        } else {
            None
        };
        if let Some(reason) = reason {
            self.collapse(item.index, reason);
            return Vec::new();
        }
        let mut out = Vec::new();
        for (event, child) in children {
            let mask = self.child_mask(item, event.choice());
            if self.options.dag {
                if let Some(&index) = self.drawn.get(&child) {
                    self.add_edge(item.index, index, event, mask);
                    continue;
                }
            }
            // A DAG node has no single schedule: only the unfolded tree keeps one per node.
            let mut schedule = self.schedules.get(item.index).cloned().unwrap_or_default();
            if !self.options.dag {
                schedule.push(event.choice());
            }
            let index = self.add_node(child, mask, schedule);
            self.add_edge(item.index, index, event, mask);
            out.push(Pending {
                index,
                node: child,
                depth: item.depth + 1,
                mask,
            });
        }
        out
    }

    fn child_mask(&self, item: &Pending, choice: Choice) -> u64 {
        if self.options.dag {
            return self
                .dag_edges
                .get(&(item.node, choice))
                .copied()
                .unwrap_or(0);
        }
        let mut mask = 0;
        for (g, group) in self.groups.iter().enumerate() {
            if item.mask & (1 << g) != 0 && group.witness.get(item.depth) == Some(&choice) {
                mask |= 1 << g;
            }
        }
        mask
    }

    fn collapse(&mut self, index: usize, reason: Collapsed) {
        let node = &mut self.nodes[index];
        node.collapsed = Some(reason);
        let leaves = node.leaves;
        node.text = format!(
            "{}\n{} {}",
            node.text,
            crate::build::count_text(leaves),
            if leaves == 1 { "leaf" } else { "leaves" }
        );
        let below = node.node;
        if self.options.dag {
            // The DAG's own nodes, each once however many collapsed nodes reach it: the
            // summary counts graph nodes too, so the notes add up to it.
            self.hidden_states(below, reason);
        } else {
            let hidden = self.input.tree.unfolded(below).nodes.saturating_sub(1);
            let slot = &mut self.cut[reason as usize];
            *slot = slot.saturating_add(hidden);
        }
    }

    /// DAG mode: counts the states below `node` (not itself) that no other collapsed node
    /// has counted yet, under `reason`.
    fn hidden_states(&mut self, node: NodeId, reason: Collapsed) {
        let tree = self.input.tree;
        let mut stack: Vec<NodeId> = tree.children(node).into_iter().map(|(_, c)| c).collect();
        while let Some(next) = stack.pop() {
            if self.drawn.contains_key(&next) || !self.hidden.insert(next) {
                continue;
            }
            self.cut[reason as usize] += 1;
            stack.extend(tree.children(next).into_iter().map(|(_, c)| c));
        }
    }

    fn add_node(&mut self, node: NodeId, mask: u64, schedule: Vec<Choice>) -> usize {
        let (tree, labeling) = (self.input.tree, self.input.labeling);
        let mask = if self.options.dag {
            self.dag_nodes.get(&node).copied().unwrap_or(0)
        } else {
            mask
        };
        let race =
            (0..self.races.len()).any(|g| mask & (1 << g) != 0 && self.races[g].contains(&node));
        let label = labeling.label(node);
        let leaf = labeling.outcome(node);
        let mut text = label.map_or("?", Label::name).to_string();
        if leaf == Some(LeafOutcome::Fail) {
            if let Some(symptom) = tree.leaf(node).map(symptom) {
                text = format!("{text}\n{symptom}");
            }
        }
        let loops = tree.loops_from(node);
        if !loops.is_empty() {
            // A loop edge is not a child: it is marked on the node it leaves.
            let threads: Vec<String> = loops
                .iter()
                .map(|l| format!("T{}", l.step.thread))
                .collect();
            text = format!("{text}\n↻ {}", threads.join(" "));
        }
        let tooltip = tooltip(
            self.input,
            node,
            (!self.options.dag).then_some(schedule.as_slice()),
        );
        let index = self.nodes.len();
        self.nodes.push(DrawNode {
            node,
            label,
            leaf,
            collapsed: None,
            leaves: tree.unfolded(node).leaves(),
            race,
            witness: mask != 0,
            text,
            tooltip,
        });
        if !self.options.dag {
            self.schedules.push(schedule);
        }
        self.drawn.insert(node, index);
        index
    }

    fn add_edge(&mut self, from: usize, to: usize, event: &Event, mask: u64) {
        // The statement as written is what a reader recognizes; the line finds it.
        let line = self
            .input
            .sources
            .locate(event.span)
            .map(|l| {
                format!(
                    " · l.{} `{}`",
                    l.line,
                    shorten(l.snippet.trim(), SNIPPET_CHARS)
                )
            })
            .unwrap_or_default();
        self.edges.push(DrawEdge {
            from,
            to,
            thread: event.thread,
            label: format!("{event}{line}"),
            witness: mask != 0,
        });
    }

    fn notes(&self) -> Vec<String> {
        let mut notes = Vec::new();
        let what = [
            (Collapsed::Folded, "in folded uniform subtrees"),
            (Collapsed::Depth, "below --depth"),
            (Collapsed::Focus, "off the CDRS paths (--focus cdrs)"),
            (Collapsed::MaxNodes, "not drawn to stay within --max-nodes"),
        ];
        for (reason, why) in what {
            let count = self
                .nodes
                .iter()
                .filter(|n| n.collapsed == Some(reason))
                .count();
            if count > 0 {
                let hidden = self.cut[reason as usize];
                notes.push(format!(
                    "{hidden} nodes {why} ({count} drawn as one node each)"
                ));
            }
        }
        if self
            .nodes
            .iter()
            .any(|n| !self.input.tree.loops_from(n.node).is_empty())
        {
            notes.push(
                "↻ T1: T1's step from this state returns to a state on the path (a spin or retry loop)"
                    .to_string(),
            );
        }
        if self.options.focus == Focus::Cdrs && self.groups.is_empty() {
            notes.push("no CDRS to focus on".to_string());
        }
        notes
    }
}

/// How many nodes a drawing is drawn out of: the unfolded tree's, or the DAG's states with
/// [`DrawOptions::dag`]; what `render` says on stderr and the drawing's summary agree on it.
pub fn of_nodes(stats: &fgvt_tree::Stats, dag: bool) -> u64 {
    if dag {
        stats.graph_nodes
    } else {
        stats.nodes
    }
}

/// The tooltip of a node: its state, label, counts and, for a leaf, its history.
fn tooltip(input: &DrawInput<'_>, node: NodeId, schedule: Option<&[Choice]>) -> String {
    let (tree, labeling) = (input.tree, input.labeling);
    let counts = tree.unfolded(node);
    let mut s = format!("state {}", node.index());
    match (labeling.label(node), labeling.category(node)) {
        (Some(label), Some(category)) => {
            let _ = write!(s, ": label {label}, subtree {category}");
        }
        _ => s.push_str(": no verdict below"),
    }
    if labeling.is_decisive(node) {
        s.push_str(" (a decisive race)");
    }
    if let Some(schedule) = schedule {
        let steps: Vec<String> = schedule.iter().map(Choice::to_string).collect();
        let _ = write!(
            s,
            "\nschedule: {}",
            if steps.is_empty() {
                "(root)".to_string()
            } else {
                steps.join(",")
            }
        );
    }
    let count = crate::build::count_text;
    let _ = write!(
        s,
        "\nleaves below: {} passing, {} failing, {} unknown\nsubtree: {} nodes, depth {}",
        count(labeling.passing_below(node)),
        count(labeling.failing_below(node)),
        count(labeling.unknown_below(node)),
        count(counts.nodes),
        counts.depth
    );
    let paths = labeling.paths_to(node);
    if paths > 1 {
        let _ = write!(s, "\nshared state: reached by {} paths", count(paths));
    }
    for l in tree.loops_from(node) {
        let _ = write!(s, "\nloop: {} returns to state {}", l.step, l.to.index());
    }
    if let Some(leaf) = tree.leaf(node) {
        let _ = write!(s, "\nleaf: {}", crate::build::leaf_kind(leaf));
        let history = leaf.history.to_string();
        if !history.is_empty() {
            let _ = write!(s, "\nhistory: {}", shorten(&history, 400));
        }
        if let Some(fault) = &leaf.fault {
            let _ = write!(s, "\nfault: {}", fault.message);
        }
    }
    s
}

/// `text` cut to at most `max` characters, with an ellipsis when cut: for quoting user text
/// (a source line, a call) in a label or a message.
pub fn shorten(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_string(),
    }
}

/// What a failing leaf shows besides its label: the fault, the stuck state, or the results its
/// operations returned (the wrong one among them), so the picture says what went wrong.
fn symptom(leaf: &Leaf) -> String {
    if let Some(fault) = &leaf.fault {
        return format!("fault: {}", shorten(&fault.message, SNIPPET_CHARS));
    }
    let results: Vec<String> = leaf
        .history
        .operations()
        .unwrap_or_default()
        .iter()
        .filter_map(|op| {
            let value = op.ret.as_ref()?.value.as_ref()?;
            (!value.is_unit()).then(|| format!("{} → {value}", op.call))
        })
        .collect();
    let shown = &results[results.len().saturating_sub(2)..];
    match (leaf.kind, shown.is_empty()) {
        (LeafKind::Stuck, true) => "stuck".to_string(),
        (LeafKind::Stuck, false) => format!("stuck; {}", shown.join("\n")),
        _ => shown.join("\n"),
    }
}
