//! Hand-built trees, for tests and benchmarks.
//!
//! [`Builder`] builds a small interleaving tree (or DAG) bottom-up, leaf by leaf and node by
//! node, remembering each leaf's [`LeafOutcome`] so that it can be labeled without a spec; or
//! [`parse`] reads one from a nested description such as `(P (F P) U)`. Nothing of the real
//! explorer is involved: the tree gets the unfolded counts the explorer's would have, and the
//! edges get made-up events.

use std::collections::HashMap;

use fgvt_tree::{
    Event, EventKind, Exploration, History, Leaf, LeafKind, NodeId, Span, Tree, TreeBuilder,
};

use crate::labels::{label_tree, Labeling, LeafOutcome};

/// Builds a tree (or DAG) bottom-up, remembering each leaf's outcome.
///
/// Every node must be added after its children, as the explorer does.
pub struct Builder {
    /// The nodes and edges added so far.
    tree: TreeBuilder,
    /// The outcome of every leaf added so far.
    pub outcomes: HashMap<NodeId, LeafOutcome>,
    /// The event on the edge by which [`Builder::node`] reaches its `i`-th child.
    event: fn(usize) -> Event,
}

impl Default for Builder {
    /// A builder whose edges carry [`event`].
    fn default() -> Builder {
        Builder::with_events(event)
    }
}

impl Builder {
    /// A builder whose [`Builder::node`] reaches child `i` by the event `event(i)`.
    pub fn with_events(event: fn(usize) -> Event) -> Builder {
        Builder {
            tree: TreeBuilder::new(),
            outcomes: HashMap::new(),
            event,
        }
    }

    /// A leaf with an empty history: bounded if `outcome` is unknown, complete otherwise.
    pub fn leaf(&mut self, outcome: LeafOutcome) -> NodeId {
        self.leaf_with_history(outcome, History::new())
    }

    /// A leaf with the given coarse history: bounded if `outcome` is unknown, complete
    /// otherwise.
    pub fn leaf_with_history(&mut self, outcome: LeafOutcome, history: History) -> NodeId {
        let kind = match outcome {
            LeafOutcome::Unknown => LeafKind::Bounded,
            _ => LeafKind::Complete,
        };
        let id = self.tree.leaf(Leaf {
            kind,
            history: history.into(),
            fault: None,
            bound: None,
            waiting: Vec::new(),
        });
        self.outcomes.insert(id, outcome);
        id
    }

    /// An inner node whose `i`-th child is reached by thread `i`'s step (the builder's event
    /// for `i`).
    pub fn node(&mut self, children: &[NodeId]) -> NodeId {
        let event = self.event;
        self.node_with_events(children.iter().enumerate().map(|(i, &c)| (event(i), c)))
    }

    /// An inner node with an edge per `(event, child)`, in order.
    pub fn node_with_events(
        &mut self,
        children: impl IntoIterator<Item = (Event, NodeId)>,
    ) -> NodeId {
        self.tree.node(children)
    }

    /// How many nodes have been added.
    pub fn node_count(&self) -> usize {
        self.tree.node_count()
    }

    /// Adds the nodes of a nested description (see [`parse`]) and returns its root.
    ///
    /// # Panics
    ///
    /// If `text` is not a well-formed description.
    pub fn parse(&mut self, text: &str) -> NodeId {
        let tokens: Vec<char> = text.chars().filter(|c| !c.is_whitespace()).collect();
        let mut pos = 0;
        let root = self.parse_node(&tokens, &mut pos);
        assert_eq!(pos, tokens.len(), "trailing input in {text:?}");
        root
    }

    fn parse_node(&mut self, tokens: &[char], pos: &mut usize) -> NodeId {
        let c = tokens[*pos];
        *pos += 1;
        match c {
            'P' => self.leaf(LeafOutcome::Pass),
            'F' => self.leaf(LeafOutcome::Fail),
            'U' => self.leaf(LeafOutcome::Unknown),
            '(' => {
                let mut children = Vec::new();
                while tokens[*pos] != ')' {
                    children.push(self.parse_node(tokens, pos));
                }
                *pos += 1;
                self.node(&children)
            }
            other => panic!("unexpected {other:?}"),
        }
    }

    /// The finished tree rooted at `root` (complete, with no distinct-state count and no
    /// elapsed time) and the outcome of each of its leaves.
    pub fn finish(self, root: NodeId) -> (Tree, HashMap<NodeId, LeafOutcome>) {
        (
            self.tree.finish(root, Exploration::default()),
            self.outcomes,
        )
    }
}

/// The step of thread `thread`: a write of `x` at a span of its own.
pub fn event(thread: usize) -> Event {
    Event {
        thread,
        op_index: 0,
        op: "op".into(),
        kind: EventKind::Write,
        location: "x".into(),
        value: thread.to_string(),
        span: Span::new(0, thread * 10, thread * 10 + 5),
        call: None,
        ret: None,
        order: None,
        memory: None,
        seen: None,
        footprint: fgvt_tree::Footprint::Everything,
    }
}

/// Parses a nested description: `P` pass, `F` fail, `U` unknown, `( ... )` an inner node whose
/// child `i` is reached by thread `i`. E.g. `(P (F P) U)`.
///
/// # Panics
///
/// If `text` is not a well-formed description.
pub fn parse(text: &str) -> (Tree, HashMap<NodeId, LeafOutcome>) {
    let mut b = Builder::default();
    let root = b.parse(text);
    b.finish(root)
}

/// Labels a hand-built tree with its recorded outcomes.
pub fn label(tree: &Tree, outcomes: &HashMap<NodeId, LeafOutcome>) -> Labeling {
    label_tree(tree, |id, _| outcomes[&id])
}

/// Random DAGs for property tests of this crate.
#[cfg(test)]
pub(crate) mod dags {
    use std::ops::Range;

    use proptest::prelude::*;

    use super::*;

    /// The description of a random DAG: the outcomes of its leaves (0 pass, 1 fail, 2
    /// unknown), then per inner node its children, picked among the nodes made before it.
    pub type Dag = (Vec<u8>, Vec<Vec<prop::sample::Index>>);

    /// Random DAG descriptions with `leaves` leaves and `inner` inner nodes.
    pub fn random_dag(leaves: Range<usize>, inner: Range<usize>) -> impl Strategy<Value = Dag> {
        (leaves, inner).prop_flat_map(|(leaves, inner)| {
            (
                prop::collection::vec(0u8..3, leaves),
                prop::collection::vec(
                    prop::collection::vec(any::<prop::sample::Index>(), 1..4),
                    inner,
                ),
            )
        })
    }

    /// Builds a DAG description: node `i` may only point at nodes created before it; the last
    /// is the root.
    pub fn build((leaves, inner): Dag) -> (Tree, HashMap<NodeId, LeafOutcome>) {
        let mut b = Builder::default();
        let mut made = Vec::new();
        for o in leaves {
            made.push(
                b.leaf([LeafOutcome::Pass, LeafOutcome::Fail, LeafOutcome::Unknown][o as usize]),
            );
        }
        for picks in inner {
            let children: Vec<NodeId> = picks.iter().map(|i| made[i.index(made.len())]).collect();
            made.push(b.node(&children));
        }
        let root = *made.last().unwrap();
        b.finish(root)
    }
}
