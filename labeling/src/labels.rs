//! Categories and labels of the nodes of an interleaving tree (Algorithm 2 of the FGVT paper,
//! generalized to n-ary nodes).
//!
//! Every leaf gets an outcome ([`LeafOutcome`]): it passes (its history is linearizable), fails,
//! or is unknown (a bounded leaf, a checker timeout). Unknown leaves are not *counted*: they take
//! no part in categories or labels. Then, bottom-up:
//!
//! * the [`Category`] of a node is `Ok` when every counted leaf below passes, `Err` when every
//!   one fails, `Mix` otherwise, and `None` when no counted leaf lies below;
//! * the [`Label`] of a leaf is `W` (pass) or `B` (fail); an inner node with exactly one counted
//!   child takes that child's label (one continuation is not a race); otherwise the label is
//!   given by the set of its counted children's categories (see [`Label::of_categories`]).
//!
//! The tree may be a DAG (memoized states share one node) with loop edges back to states on
//! the path (spin and retry loops): a node's children include the targets of its loop edges,
//! and the categories of the nodes of a loop are closed over it (`close_over_loops`). Each
//! graph node is labeled once; counts over the *unfolded* tree multiply a node by the number
//! of root paths reaching it.

use std::fmt;

use std::collections::HashMap;

use fgvt_tree::{Leaf, NodeId, Tree};
use petgraph::visit::{DfsPostOrder, IntoNeighbors};
use serde::{Deserialize, Serialize};

/// The verdict of one leaf, as far as labeling is concerned.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LeafOutcome {
    /// The leaf's history is linearizable.
    Pass,
    /// The leaf's history is not linearizable, or the model faulted.
    Fail,
    /// No verdict (bounded leaf, checker timeout): not counted.
    Unknown,
}

/// The category of a subtree: what its counted leaves say.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Category {
    /// Every counted leaf passes (an OK-tree).
    Ok,
    /// Every counted leaf fails (an ERR-tree).
    Err,
    /// Both passing and failing leaves (a MIX-tree).
    Mix,
}

impl Category {
    /// The category of a subtree made of two parts of categories `a` and `b`.
    pub fn join(a: Option<Category>, b: Option<Category>) -> Option<Category> {
        match (a, b) {
            (None, x) | (x, None) => x,
            (Some(x), Some(y)) if x == y => Some(x),
            _ => Some(Category::Mix),
        }
    }

    /// Lower-case name for reports: `ok`, `err`, `mix`.
    pub fn name(self) -> &'static str {
        match self {
            Category::Ok => "ok",
            Category::Err => "err",
            Category::Mix => "mix",
        }
    }
}

impl fmt::Display for Category {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The label of a node (Definition 8 of the paper, plus `WBG` for nodes with three or more
/// counted children of all three categories).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[allow(clippy::upper_case_acronyms)]
pub enum Label {
    /// White: every leaf below passes.
    W,
    /// Black: every leaf below fails.
    B,
    /// Grey: the children are OK-trees and ERR-trees.
    G,
    /// The children are OK-trees and MIX-trees.
    WG,
    /// The children are ERR-trees and MIX-trees.
    BG,
    /// Every child is a MIX-tree.
    GG,
    /// The children are OK-, ERR- and MIX-trees.
    WBG,
}

impl Label {
    /// Every label, in a fixed order (the order of [`LabelCounts`]).
    pub const ALL: [Label; 7] = [
        Label::W,
        Label::B,
        Label::G,
        Label::WG,
        Label::BG,
        Label::GG,
        Label::WBG,
    ];

    /// The label's name, as in the paper: `W`, `B`, `G`, `WG`, `BG`, `GG`, `WBG`.
    pub fn name(self) -> &'static str {
        match self {
            Label::W => "W",
            Label::B => "B",
            Label::G => "G",
            Label::WG => "WG",
            Label::BG => "BG",
            Label::GG => "GG",
            Label::WBG => "WBG",
        }
    }

    /// The label named `name` (case-insensitive), if any.
    pub fn from_name(name: &str) -> Option<Label> {
        Label::ALL
            .into_iter()
            .find(|l| l.name().eq_ignore_ascii_case(name))
    }

    /// Position of this label in [`Label::ALL`].
    pub fn index(self) -> usize {
        self as usize
    }

    /// Whether a branching node with this label decides linearizability (`WG`, `BG`, `G`, `WBG`).
    pub fn is_decisive(self) -> bool {
        matches!(self, Label::G | Label::WG | Label::BG | Label::WBG)
    }

    /// The label of a node with two or more counted children, given whether some child is an
    /// OK-, ERR- or MIX-tree. `None` when no flag is set (no counted child).
    pub fn of_categories(ok: bool, err: bool, mix: bool) -> Option<Label> {
        Some(match (ok, err, mix) {
            (false, false, false) => return None,
            (true, false, false) => Label::W,
            (false, true, false) => Label::B,
            (true, true, false) => Label::G,
            (true, false, true) => Label::WG,
            (false, true, true) => Label::BG,
            (false, false, true) => Label::GG,
            (true, true, true) => Label::WBG,
        })
    }
}

impl fmt::Display for Label {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// How many nodes carry each label.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LabelCounts([u64; 7]);

impl LabelCounts {
    /// The count of `label`.
    pub fn get(&self, label: Label) -> u64 {
        self.0[label.index()]
    }

    /// Every label with its count, in [`Label::ALL`] order.
    pub fn iter(&self) -> impl Iterator<Item = (Label, u64)> + '_ {
        Label::ALL.into_iter().map(|l| (l, self.get(l)))
    }

    fn add(&mut self, label: Label, n: u64) {
        let slot = &mut self.0[label.index()];
        *slot = slot.saturating_add(n);
    }
}

/// Serialized as a map from label name to count: `{"W": 3, "B": 1, ...}`.
impl Serialize for LabelCounts {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = serializer.serialize_map(Some(Label::ALL.len()))?;
        for (label, n) in self.iter() {
            map.serialize_entry(label.name(), &n)?;
        }
        map.end()
    }
}

/// Everything labeling computed about a tree: per node and in total.
#[derive(Clone, Debug)]
pub struct Labeling {
    root: NodeId,
    /// Per graph node (by index); `None` for nodes unreachable from the root.
    nodes: Vec<NodeInfo>,
    /// Nodes reachable from the root, children before parents.
    post_order: Vec<NodeId>,
    /// Label counts over the unfolded tree.
    unfolded: LabelCounts,
    /// Label counts over distinct graph nodes.
    distinct: LabelCounts,
}

#[derive(Clone, Copy, Debug, Default)]
struct NodeInfo {
    category: Option<Category>,
    label: Option<Label>,
    /// Number of counted children (children with a category).
    counted_children: usize,
    /// `Some` for leaves.
    outcome: Option<LeafOutcome>,
    /// Root-to-node paths in the unfolded tree.
    paths: u64,
    /// Passing, failing and unknown leaves of the unfolded subtree.
    passing_below: u64,
    failing_below: u64,
    unknown_below: u64,
}

impl Labeling {
    /// The root of the labeled tree.
    pub fn root(&self) -> NodeId {
        self.root
    }

    fn info(&self, node: NodeId) -> NodeInfo {
        self.nodes.get(node.index()).copied().unwrap_or_default()
    }

    /// The category of `node`'s subtree; `None` when no counted leaf lies below it.
    pub fn category(&self, node: NodeId) -> Option<Category> {
        self.info(node).category
    }

    /// The label of `node`; `None` when no counted leaf lies below it.
    pub fn label(&self, node: NodeId) -> Option<Label> {
        self.info(node).label
    }

    /// The outcome of a leaf; `None` for inner nodes.
    pub fn outcome(&self, node: NodeId) -> Option<LeafOutcome> {
        self.info(node).outcome
    }

    /// Whether `node` is a decisive race: it has two or more counted children and its label is
    /// `WG`, `BG`, `G` or `WBG`.
    pub fn is_decisive(&self, node: NodeId) -> bool {
        let info = self.info(node);
        info.counted_children >= 2 && info.label.is_some_and(Label::is_decisive)
    }

    /// Number of successors of `node` (children and loop-edge targets) that have a category.
    pub fn counted_children(&self, node: NodeId) -> usize {
        self.info(node).counted_children
    }

    /// Number of root-to-`node` paths: how often `node` occurs in the unfolded tree.
    pub fn paths_to(&self, node: NodeId) -> u64 {
        self.info(node).paths
    }

    /// Failing leaves of the unfolded subtree of `node`.
    pub fn failing_below(&self, node: NodeId) -> u64 {
        self.info(node).failing_below
    }

    /// Passing leaves of the unfolded subtree of `node`.
    pub fn passing_below(&self, node: NodeId) -> u64 {
        self.info(node).passing_below
    }

    /// Leaves with an unknown outcome in the unfolded subtree of `node`.
    pub fn unknown_below(&self, node: NodeId) -> u64 {
        self.info(node).unknown_below
    }

    /// Failing leaves of the unfolded tree.
    pub fn failing_leaves(&self) -> u64 {
        self.failing_below(self.root)
    }

    /// Passing leaves of the unfolded tree.
    pub fn passing_leaves(&self) -> u64 {
        self.passing_below(self.root)
    }

    /// Leaves of the unfolded tree with an unknown outcome (not counted).
    pub fn unknown_leaves(&self) -> u64 {
        self.unknown_below(self.root)
    }

    /// Label counts over the unfolded tree (a shared node counts once per path reaching it).
    pub fn unfolded_counts(&self) -> &LabelCounts {
        &self.unfolded
    }

    /// Label counts over distinct graph nodes.
    pub fn distinct_counts(&self) -> &LabelCounts {
        &self.distinct
    }

    /// The nodes reachable from the root, every node after all of its descendants.
    pub fn post_order(&self) -> &[NodeId] {
        &self.post_order
    }
}

/// Labels every node of `tree`, given the outcome of each leaf.
///
/// `outcome` is called once per distinct leaf node. Runs in time linear in the size of the
/// graph (not of the unfolded tree).
pub fn label_tree(tree: &Tree, outcome: impl Fn(NodeId, &Leaf) -> LeafOutcome) -> Labeling {
    let mut nodes = vec![NodeInfo::default(); tree.graph.node_count()];
    let mut post_order = Vec::new();
    // Post-order over a DAG visits every reachable node once, after all of its children:
    // exactly the bottom-up order Algorithm 2's recursion follows, without the recursion
    // (trees can be thousands of steps deep).
    let mut dfs = DfsPostOrder::new(&tree.graph, tree.root);
    while let Some(node) = dfs.next(&tree.graph) {
        post_order.push(node);
        let info = match tree.leaf(node) {
            Some(leaf) => leaf_info(outcome(node, leaf)),
            None => inner_info(tree, &nodes, node),
        };
        nodes[node.index()] = info;
    }

    // Top-down: paths reaching each node. Reverse post-order is a topological order.
    nodes[tree.root.index()].paths = 1;
    for &node in post_order.iter().rev() {
        let paths = nodes[node.index()].paths;
        // In the graph's order: a sum does not depend on it, and the report's order of
        // children (`Tree::children`) costs a sorted copy per node.
        for child in tree.graph.neighbors(node) {
            let slot = &mut nodes[child.index()].paths;
            *slot = slot.saturating_add(paths);
        }
    }

    if !tree.loops.is_empty() {
        close_over_loops(tree, &mut nodes);
    }

    let mut unfolded = LabelCounts::default();
    let mut distinct = LabelCounts::default();
    for &node in &post_order {
        let info = &nodes[node.index()];
        if let Some(label) = info.label {
            distinct.add(label, 1);
            unfolded.add(label, info.paths);
        }
    }
    Labeling {
        root: tree.root,
        nodes,
        post_order,
        unfolded,
        distinct,
    }
}

/// Categories and labels on a graph with loop edges.
///
/// The bottom-up pass saw children only. A state's category is what the counted leaves it can
/// reach say, through loop edges too: every state of a loop reaches what any of them reaches.
/// Categories only grow (none → ok/err → mix), so propagating each change to the state's
/// predecessors reaches the fixpoint after at most two changes per node.
///
/// Labels then count loop edges as children (a step back into the loop is a real alternative
/// of the race), except a step back to the node itself, which changes nothing and so decides
/// nothing. A node with one counted child takes that child's label; along such a chain the
/// labels are followed until a node with two or more counted children or a leaf, which always
/// comes (a cycle of single-child nodes would reach no leaf, and so be counted by nobody).
fn close_over_loops(tree: &Tree, nodes: &mut [NodeInfo]) {
    let mut loops_into: HashMap<NodeId, Vec<NodeId>> = HashMap::new();
    let mut work = Vec::new();
    let graph_parents = tree.graph.parents();
    for l in &tree.loops {
        loops_into.entry(l.to).or_default().push(l.from);
        work.push(l.to);
    }
    while let Some(node) = work.pop() {
        let category = nodes[node.index()].category;
        let parents = graph_parents
            .of(node)
            .iter()
            .map(|&(_, parent)| parent)
            .chain(loops_into.get(&node).into_iter().flatten().copied());
        for parent in parents {
            let slot = &mut nodes[parent.index()].category;
            let joined = Category::join(*slot, category);
            if joined != *slot {
                *slot = joined;
                work.push(parent);
            }
        }
    }

    // Labels of nodes with two or more counted children, and who the only child is of the rest.
    let mut only_child = vec![None; nodes.len()];
    for node in tree.graph.node_indices() {
        if tree.leaf(node).is_some() {
            continue;
        }
        let mut counted = CountedChildren::default();
        for (_, child) in tree.successors(node) {
            if let Some(category) = nodes[child.index()].category.filter(|_| child != node) {
                counted.add(child, category);
            }
        }
        let info = &mut nodes[node.index()];
        info.counted_children = counted.count;
        info.label = counted.race_label();
        only_child[node.index()] = counted.only();
    }
    for node in tree.graph.node_indices() {
        if only_child[node.index()].is_none() {
            continue;
        }
        let mut chain = vec![node];
        let mut at = node;
        while let Some(next) = only_child[at.index()] {
            if chain.len() > nodes.len() {
                break; // cannot happen (see above); never loop forever on a malformed tree
            }
            chain.push(next);
            at = next;
        }
        let label = nodes[at.index()].label;
        for n in chain {
            nodes[n.index()].label = label;
            only_child[n.index()] = None;
        }
    }
}

fn leaf_info(outcome: LeafOutcome) -> NodeInfo {
    let (category, label) = match outcome {
        LeafOutcome::Pass => (Some(Category::Ok), Some(Label::W)),
        LeafOutcome::Fail => (Some(Category::Err), Some(Label::B)),
        LeafOutcome::Unknown => (None, None),
    };
    NodeInfo {
        category,
        label,
        counted_children: 0,
        outcome: Some(outcome),
        paths: 0,
        passing_below: u64::from(outcome == LeafOutcome::Pass),
        failing_below: u64::from(outcome == LeafOutcome::Fail),
        unknown_below: u64::from(outcome == LeafOutcome::Unknown),
    }
}

/// Labels an inner node from its (already labeled) children.
fn inner_info(tree: &Tree, nodes: &[NodeInfo], node: NodeId) -> NodeInfo {
    let mut info = NodeInfo::default();
    let mut counted = CountedChildren::default();
    // Sums and joins, whatever the children's order (see `label_tree`).
    for child in tree.graph.neighbors(node) {
        let c = nodes[child.index()];
        info.passing_below = info.passing_below.saturating_add(c.passing_below);
        info.failing_below = info.failing_below.saturating_add(c.failing_below);
        info.unknown_below = info.unknown_below.saturating_add(c.unknown_below);
        if let Some(category) = c.category {
            info.category = Category::join(info.category, Some(category));
            counted.add(child, category);
        }
    }
    info.counted_children = counted.count;
    // One continuation is not a race: the node is whatever its child is.
    info.label = match counted.only() {
        Some(child) => nodes[child.index()].label,
        None => counted.race_label(),
    };
    info
}

/// A node's counted children (those with a category): how many, which categories, which one.
#[derive(Default)]
struct CountedChildren {
    count: usize,
    ok: bool,
    err: bool,
    mix: bool,
    last: Option<NodeId>,
}

impl CountedChildren {
    fn add(&mut self, child: NodeId, category: Category) {
        self.count += 1;
        self.last = Some(child);
        match category {
            Category::Ok => self.ok = true,
            Category::Err => self.err = true,
            Category::Mix => self.mix = true,
        }
    }

    /// The only counted child, when there is exactly one.
    fn only(&self) -> Option<NodeId> {
        self.last.filter(|_| self.count == 1)
    }

    /// The label of a race between two or more counted children; `None` for fewer.
    fn race_label(&self) -> Option<Label> {
        if self.count < 2 {
            return None;
        }
        Label::of_categories(self.ok, self.err, self.mix)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use proptest::prelude::*;

    use super::*;
    use crate::testing::dags::{build, random_dag};
    use crate::testing::{label, parse, Builder};

    fn root_label(text: &str) -> (Option<Label>, Option<Category>, bool) {
        let (tree, outcomes) = parse(text);
        let l = label(&tree, &outcomes);
        (
            l.label(tree.root),
            l.category(tree.root),
            l.is_decisive(tree.root),
        )
    }

    #[test]
    fn leaves_are_white_or_black() {
        assert_eq!(root_label("P"), (Some(Label::W), Some(Category::Ok), false));
        assert_eq!(
            root_label("F"),
            (Some(Label::B), Some(Category::Err), false)
        );
        assert_eq!(root_label("U"), (None, None, false));
    }

    #[test]
    fn one_row_of_the_table_each() {
        // (children, label, category, decisive)
        let rows = [
            ("(P P)", Label::W, Category::Ok, false),
            ("(F F)", Label::B, Category::Err, false),
            ("(P F)", Label::G, Category::Mix, true),
            ("(P (P F))", Label::WG, Category::Mix, true),
            ("(F (P F))", Label::BG, Category::Mix, true),
            ("((P F) (F P))", Label::GG, Category::Mix, false),
            ("(P F (P F))", Label::WBG, Category::Mix, true),
        ];
        for (text, want, category, decisive) in rows {
            assert_eq!(
                root_label(text),
                (Some(want), Some(category), decisive),
                "{text}"
            );
        }
    }

    #[test]
    fn a_node_with_one_counted_child_takes_its_label_and_is_no_race() {
        // One child, and one counted child next to unknown ones.
        for text in ["((P (P F)))", "(U (P (P F)) U)"] {
            let (tree, outcomes) = parse(text);
            let l = label(&tree, &outcomes);
            assert_eq!(l.label(tree.root), Some(Label::WG), "{text}");
            assert!(!l.is_decisive(tree.root), "{text}");
            assert_eq!(l.counted_children(tree.root), 1);
        }
    }

    #[test]
    fn unknown_leaves_are_ignored() {
        assert_eq!(
            root_label("(P U)"),
            (Some(Label::W), Some(Category::Ok), false)
        );
        assert_eq!(root_label("(U U)"), (None, None, false));
        assert_eq!(
            root_label("(P (U U) F)"),
            (Some(Label::G), Some(Category::Mix), true)
        );
        let (tree, outcomes) = parse("(P (U U) F)");
        let l = label(&tree, &outcomes);
        assert_eq!(
            (l.passing_leaves(), l.failing_leaves(), l.unknown_leaves()),
            (1, 1, 2)
        );
    }

    #[test]
    fn wbg_needs_three_children() {
        assert_eq!(root_label("((P F) F P)").0, Some(Label::WBG));
        assert_eq!(root_label("((P F) F P (F P))").0, Some(Label::WBG));
    }

    #[test]
    fn shared_nodes_are_counted_once_per_path() {
        // root -> a, b; both a and b -> shared (P F) and a leaf of their own.
        let mut b = Builder::default();
        let p = b.leaf(LeafOutcome::Pass);
        let f = b.leaf(LeafOutcome::Fail);
        let shared = b.node(&[p, f]);
        let fa = b.leaf(LeafOutcome::Fail);
        let pb = b.leaf(LeafOutcome::Pass);
        let a = b.node(&[shared, fa]);
        let c = b.node(&[shared, pb]);
        let root = b.node(&[a, c]);
        let (tree, outcomes) = b.finish(root);
        let l = label(&tree, &outcomes);
        assert_eq!(l.label(shared), Some(Label::G));
        assert_eq!(l.label(a), Some(Label::BG));
        assert_eq!(l.label(c), Some(Label::WG));
        assert_eq!(l.label(root), Some(Label::GG));
        assert_eq!(l.paths_to(shared), 2);
        assert_eq!(l.paths_to(p), 2);
        assert_eq!(l.failing_leaves(), 3);
        assert_eq!(l.passing_leaves(), 3);
        let u = l.unfolded_counts();
        assert_eq!(
            (u.get(Label::W), u.get(Label::B), u.get(Label::G)),
            (3, 3, 2)
        );
        assert_eq!(
            (u.get(Label::WG), u.get(Label::BG), u.get(Label::GG)),
            (1, 1, 1)
        );
        let d = l.distinct_counts();
        assert_eq!(
            (d.get(Label::W), d.get(Label::B), d.get(Label::G)),
            (2, 2, 1)
        );
        let json = serde_json::to_value(u).unwrap();
        assert_eq!(json["G"], 2);
        assert_eq!(json["WBG"], 0);
    }

    fn brute_category(
        tree: &fgvt_tree::Tree,
        outcomes: &HashMap<NodeId, LeafOutcome>,
        node: NodeId,
    ) -> Option<Category> {
        if tree.leaf(node).is_some() {
            return match outcomes[&node] {
                LeafOutcome::Pass => Some(Category::Ok),
                LeafOutcome::Fail => Some(Category::Err),
                LeafOutcome::Unknown => None,
            };
        }
        let mut pass = false;
        let mut fail = false;
        let mut stack = vec![node];
        while let Some(n) = stack.pop() {
            match (tree.leaf(n), outcomes.get(&n)) {
                (Some(_), Some(LeafOutcome::Pass)) => pass = true,
                (Some(_), Some(LeafOutcome::Fail)) => fail = true,
                (Some(_), _) => {}
                (None, _) => stack.extend(tree.children(n).into_iter().map(|(_, c)| c)),
            }
        }
        match (pass, fail) {
            (true, true) => Some(Category::Mix),
            (true, false) => Some(Category::Ok),
            (false, true) => Some(Category::Err),
            (false, false) => None,
        }
    }

    proptest! {
        #[test]
        fn categories_match_brute_force(dag in random_dag(1..6, 1..25)) {
            let (tree, outcomes) = build(dag);
            let root = tree.root;
            let l = label(&tree, &outcomes);
            for &node in l.post_order() {
                prop_assert_eq!(l.category(node), brute_category(&tree, &outcomes, node));
                prop_assert_eq!(l.category(node).is_some(), l.label(node).is_some());
                if l.is_decisive(node) {
                    prop_assert!(l.counted_children(node) >= 2);
                }
            }
            let total: u64 = l.unfolded_counts().iter().map(|(_, n)| n).sum();
            prop_assert!(total <= tree.unfolded(root).nodes);
            let leaves = tree.unfolded(root).leaves();
            prop_assert_eq!(l.passing_leaves() + l.failing_leaves() + l.unknown_leaves(), leaves);
        }
    }
}
