//! The state graph as a [`crate::Tree`] stores it: every node's children in one array, node
//! after node, and the few leaves apart.
//!
//! A tree is built bottom-up (every node after all its children, see [`crate::TreeBuilder`])
//! and never changes afterwards, so a node's children can sit side by side: a node costs the
//! end of its run of children (4 bytes) and a child 8 (the step's number and the child's).
//! A general-purpose graph such as `petgraph`'s `DiGraph` costs 16 bytes a node and 20 an
//! edge, as it links every edge into its source's and its target's lists so that edges can be
//! added anywhere and walked both ways. Nothing here walks edges backwards while exploring;
//! what needs a node's parents (the labels, over loop edges) asks for [`StateGraph::parents`]
//! once, after exploring, when the explorer's tables are gone.
//!
//! Most nodes are inner nodes, so leaves, which are large, are kept in a list of their own
//! sorted by node, not in a slot every node would carry.
//!
//! `petgraph`'s traversals ([`petgraph::visit::DfsPostOrder`], ...) walk a `&StateGraph`:
//! it implements their traits, with a node's children as its neighbours.

use fixedbitset::FixedBitSet;
use petgraph::graph::NodeIndex;
use petgraph::visit::{GraphBase, IntoNeighbors, NodeCount, NodeIndexable, Visitable};

use crate::leaf::Leaf;

/// A node of the interleaving tree.
pub type NodeId = NodeIndex<u32>;

/// A step's number in [`Tree::events`](crate::Tree::events): edges name their step by it, as
/// many edges take the same step (the same thread doing the same thing from different states).
pub type EventId = u32;

/// The most edges a search adds before it stops as at its state limit ([`crate::Limit::MaxStates`]).
///
/// A node's run of children ends at a 32-bit position, and every node but the root is some
/// node's child, so this bounds the nodes too. The search checks it when it opens a state;
/// the frames still open when it stops then add their children, which the quarter of the
/// 32-bit range left above it holds (a frame has at most a few thousand children, threads
/// times ways). No memory holds that many edges anyway (24 GiB of them).
pub(crate) const MAX_EDGES: usize = 3 << 30;

/// Nodes (states) and their children (steps), added bottom-up.
#[derive(Clone, Debug, Default)]
pub struct StateGraph {
    /// For each node, the end of its children in `children` (they start at the previous
    /// node's end).
    ends: Vec<u32>,
    /// Every node's children, node after node, in the order they were added: the step's
    /// number in [`crate::Tree::events`] and the child.
    children: Vec<(EventId, NodeId)>,
    /// The leaves, sorted by node (nodes are added in order).
    leaves: Vec<(NodeId, Box<Leaf>)>,
}

impl StateGraph {
    /// The number of nodes.
    pub fn node_count(&self) -> usize {
        self.ends.len()
    }

    /// The number of edges (loop edges, which the tree keeps apart, not included).
    pub fn edge_count(&self) -> usize {
        self.children.len()
    }

    /// Every node, in the order added: children before their parents.
    pub fn node_indices(&self) -> impl DoubleEndedIterator<Item = NodeId> + ExactSizeIterator {
        (0..self.node_count()).map(NodeId::new)
    }

    /// The children of `node` with the number of the step to each, in the order they were
    /// added; none for a leaf.
    pub fn children(&self, node: NodeId) -> &[(EventId, NodeId)] {
        let end = self.ends[node.index()] as usize;
        let start = match node.index() {
            0 => 0,
            i => self.ends[i - 1] as usize,
        };
        &self.children[start..end]
    }

    /// The leaf data of `node`, if it is a leaf.
    pub fn leaf(&self, node: NodeId) -> Option<&Leaf> {
        Some(&self.leaves[self.leaf_at(node)?].1)
    }

    /// Where `node`'s leaf is in `leaves`, if it is a leaf.
    fn leaf_at(&self, node: NodeId) -> Option<usize> {
        self.leaves.binary_search_by_key(&node, |(n, _)| *n).ok()
    }

    /// The leaves, in node order.
    pub fn leaves(&self) -> impl Iterator<Item = (NodeId, &Leaf)> {
        self.leaves.iter().map(|(node, leaf)| (*node, &**leaf))
    }

    /// Every node's parents, worked out from the children (in time and memory linear in the
    /// graph's size).
    pub fn parents(&self) -> Parents {
        // Counting sort by child: how many parents each node has, then where its run starts.
        let mut starts = vec![0u32; self.node_count() + 1];
        for &(_, child) in &self.children {
            starts[child.index() + 1] += 1;
        }
        for i in 1..starts.len() {
            starts[i] += starts[i - 1];
        }
        let mut next = starts.clone();
        let mut parents = vec![(0, NodeId::new(0)); self.children.len()];
        for parent in self.node_indices() {
            for &(step, child) in self.children(parent) {
                let at = &mut next[child.index()];
                parents[*at as usize] = (step, parent);
                *at += 1;
            }
        }
        Parents { starts, parents }
    }

    /// Adds a leaf.
    pub(crate) fn add_leaf(&mut self, leaf: Leaf) -> NodeId {
        let node = self.add_node(&[]);
        self.leaves.push((node, Box::new(leaf)));
        node
    }

    /// Adds an inner node with `children`, every one of them already added.
    pub(crate) fn add_node(&mut self, children: &[(EventId, NodeId)]) -> NodeId {
        let node = NodeId::new(self.ends.len());
        // `NodeId` numbers nodes in 32 bits, and a run of children ends at a 32-bit position:
        // the explorer stops before ([`MAX_EDGES`]).
        assert!(
            u32::try_from(self.ends.len()).is_ok_and(|n| n < u32::MAX),
            "a state graph has fewer than 2^32 nodes"
        );
        debug_assert!(children.iter().all(|(_, child)| *child < node));
        crate::growth::reserve(&mut self.children, children.len());
        self.children.extend_from_slice(children);
        crate::growth::reserve(&mut self.ends, 1);
        let end =
            u32::try_from(self.children.len()).expect("a state graph has fewer than 2^32 edges");
        self.ends.push(end);
        node
    }

    /// Takes the leaf data out of `node` (a search that stops at a leaf needs only it); the
    /// node stays, no longer a leaf.
    pub(crate) fn take_leaf(&mut self, node: NodeId) -> Option<Leaf> {
        Some(*self.leaves.remove(self.leaf_at(node)?).1)
    }
}

/// Every node's parents in a [`StateGraph`] ([`StateGraph::parents`]).
#[derive(Clone, Debug)]
pub struct Parents {
    /// Where each node's run of parents starts in `parents` (one more entry than nodes).
    starts: Vec<u32>,
    /// Every node's parents, node after node: the step's number and the parent.
    parents: Vec<(EventId, NodeId)>,
}

impl Parents {
    /// The parents of `node` with the number of the step from each, in the order the parents
    /// were added.
    pub fn of(&self, node: NodeId) -> &[(EventId, NodeId)] {
        let start = self.starts[node.index()] as usize;
        let end = self.starts[node.index() + 1] as usize;
        &self.parents[start..end]
    }
}

impl GraphBase for StateGraph {
    type NodeId = NodeId;
    /// An edge by its position among all children.
    type EdgeId = usize;
}

impl<'a> IntoNeighbors for &'a StateGraph {
    type Neighbors =
        std::iter::Map<std::slice::Iter<'a, (EventId, NodeId)>, fn(&(EventId, NodeId)) -> NodeId>;

    /// The children of `node`.
    fn neighbors(self, node: NodeId) -> Self::Neighbors {
        self.children(node).iter().map(|&(_, child)| child)
    }
}

impl Visitable for StateGraph {
    type Map = FixedBitSet;

    fn visit_map(&self) -> FixedBitSet {
        FixedBitSet::with_capacity(self.node_count())
    }

    fn reset_map(&self, map: &mut FixedBitSet) {
        map.clear();
        map.grow(self.node_count());
    }
}

impl NodeCount for StateGraph {
    fn node_count(&self) -> usize {
        StateGraph::node_count(self)
    }
}

impl NodeIndexable for StateGraph {
    fn node_bound(&self) -> usize {
        self.node_count()
    }

    fn to_index(&self, node: NodeId) -> usize {
        node.index()
    }

    fn from_index(&self, index: usize) -> NodeId {
        NodeId::new(index)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::History;
    use petgraph::visit::DfsPostOrder;

    /// A diamond over two leaves: 0 and 1 are leaves, 2 has both, 3 has 2 and 1.
    fn diamond() -> StateGraph {
        let mut g = StateGraph::default();
        let a = g.add_leaf(Leaf::complete(History::new()));
        let b = g.add_leaf(Leaf::complete(History::new()));
        let c = g.add_node(&[(7, a), (8, b)]);
        g.add_node(&[(9, c), (10, b)]);
        g
    }

    #[test]
    fn children_come_back_in_the_order_added_and_leaves_have_none() {
        let g = diamond();
        let n = NodeId::new;
        assert_eq!(g.node_count(), 4);
        assert_eq!(g.edge_count(), 4);
        assert_eq!(g.children(n(0)), &[]);
        assert_eq!(g.children(n(1)), &[]);
        assert_eq!(g.children(n(2)), &[(7, n(0)), (8, n(1))]);
        assert_eq!(g.children(n(3)), &[(9, n(2)), (10, n(1))]);
        assert!(g.leaf(n(0)).is_some() && g.leaf(n(1)).is_some());
        assert!(g.leaf(n(2)).is_none() && g.leaf(n(3)).is_none());
    }

    #[test]
    fn parents_invert_the_children() {
        let g = diamond();
        let n = NodeId::new;
        let parents = g.parents();
        assert_eq!(parents.of(n(0)), &[(7, n(2))]);
        assert_eq!(parents.of(n(1)), &[(8, n(2)), (10, n(3))]);
        assert_eq!(parents.of(n(2)), &[(9, n(3))]);
        assert_eq!(parents.of(n(3)), &[]);
    }

    #[test]
    fn a_taken_leaf_leaves_an_inner_node_without_children() {
        let mut g = diamond();
        let n = NodeId::new;
        assert!(g.take_leaf(n(1)).is_some());
        assert!(g.leaf(n(1)).is_none() && g.leaf(n(0)).is_some());
        assert!(g.take_leaf(n(1)).is_none());
    }

    #[test]
    fn petgraph_walks_it_every_node_after_its_children() {
        let g = diamond();
        let mut dfs = DfsPostOrder::new(&g, NodeId::new(3));
        let mut order = Vec::new();
        while let Some(node) = dfs.next(&g) {
            order.push(node);
        }
        assert_eq!(order.len(), 4, "every node once: {order:?}");
        let at = |node: NodeId| order.iter().position(|n| *n == node).expect("visited");
        for parent in g.node_indices() {
            for &(_, child) in g.children(parent) {
                assert!(
                    at(child) < at(parent),
                    "{child:?} before {parent:?}: {order:?}"
                );
            }
        }
    }

    proptest::proptest! {
        /// Random DAGs built bottom-up: each node's children and each node's parents are the
        /// edges given, as a plain list of edges says.
        #[test]
        fn children_and_parents_agree_with_a_list_of_edges(
            picks in proptest::collection::vec(proptest::collection::vec(0usize..1000, 0..4), 1..40),
        ) {
            let mut g = StateGraph::default();
            let mut edges = Vec::new();
            for (i, picks) in picks.iter().enumerate() {
                let node = NodeId::new(i);
                let children: Vec<(EventId, NodeId)> = if i == 0 || picks.is_empty() {
                    Vec::new()
                } else {
                    picks.iter().enumerate()
                        .map(|(k, p)| ((i * 10 + k) as EventId, NodeId::new(p % i)))
                        .collect()
                };
                let added = if children.is_empty() {
                    g.add_leaf(Leaf::complete(History::new()))
                } else {
                    g.add_node(&children)
                };
                proptest::prop_assert_eq!(added, node);
                edges.extend(children.iter().map(|&(step, child)| (node, step, child)));
            }
            let parents = g.parents();
            for node in g.node_indices() {
                let children: Vec<_> = edges.iter()
                    .filter(|e| e.0 == node).map(|e| (e.1, e.2)).collect();
                proptest::prop_assert_eq!(g.children(node), &children[..]);
                let into: Vec<_> = edges.iter()
                    .filter(|e| e.2 == node).map(|e| (e.1, e.0)).collect();
                proptest::prop_assert_eq!(parents.of(node), &into[..]);
                proptest::prop_assert_eq!(g.leaf(node).is_some(), children.is_empty());
            }
        }
    }
}
