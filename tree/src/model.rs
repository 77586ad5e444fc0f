//! The interleaving tree and its builder: the graph of nodes ([`crate::graph`]), the leaves
//! ([`crate::leaf`]) and their counts over the unfolded tree ([`Counts`]) put together.
//!
//! A [`Tree`] is stored as a [`StateGraph`] whose nodes are states and whose edges are
//! steps. When a backend merges identical states the graph is a DAG; every count here is
//! nevertheless that of the *unfolded* tree, in which a shared node appears once per path that
//! reaches it. Nothing in this module knows how the tree was explored.

use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;

use crate::choice::Choice;
use crate::count_table::{CountTable, Counts};
use crate::event::Event;
use crate::graph::{EventId, NodeId, StateGraph};
use crate::history_tree::LeafHistories;
use crate::interner::Interner;
use crate::leaf::Leaf;
use crate::limit::Limit;
use crate::pins::{Pinned, Pins};

/// Summary figures of an exploration.
#[derive(Clone, Debug, Serialize)]
pub struct Stats {
    /// Nodes of the unfolded tree.
    pub nodes: u64,
    /// Edges of the unfolded tree (nodes - 1).
    pub edges: u64,
    /// Leaves of the unfolded tree.
    pub leaves: u64,
    /// Complete leaves.
    pub complete: u64,
    /// Stuck leaves.
    pub stuck: u64,
    /// Fault leaves.
    pub fault: u64,
    /// Bounded leaves: paths cut by an operation's limits (`max_steps`, the step budget).
    pub bounded: u64,
    /// Cut leaves: states left unexplored because exploration stopped (a state limit, the
    /// timeout, the memory budget, an interrupt).
    pub cut: u64,
    /// Distinct states met.
    pub distinct_states: u64,
    /// Nodes in the stored graph (smaller than `nodes` when memoized).
    pub graph_nodes: u64,
    /// Longest root-to-leaf path, in steps.
    pub max_depth: u64,
    /// Some count reached `u64::MAX` and stopped there ("more than" that many).
    pub saturated: bool,
    /// Steps back to a state on the path (spin and retry loops). When there are any, the
    /// unfolded tree is infinite: the unfolded counts above are those of the tree in which
    /// each such step ends its path (a loop taken at most up to its return).
    pub loop_edges: u64,
}

/// A step back to a state on the path that reached it: an edge of a spin or retry loop.
///
/// The state graph of a program with such loops has cycles. The tree keeps it as a DAG of
/// children (every node added after its children) plus these edges, kept apart: walking
/// children never loops, and the labels, which are defined on the whole graph, follow both.
#[derive(Clone, Debug)]
pub struct LoopEdge {
    /// The node the step leaves.
    pub from: NodeId,
    /// The node it returns to (an ancestor of `from` on some path, or `from` itself).
    pub to: NodeId,
    /// The step.
    pub step: Event,
}

/// The interleaving tree (a DAG when memoized), with its root.
pub struct Tree {
    /// Nodes are states, edges are steps (by their number in `events`).
    pub graph: StateGraph,
    /// Every distinct step of the tree, once.
    pub events: Vec<Event>,
    /// Steps back to a state on the path (spin and retry loops), sorted by `from`: not in
    /// `graph`, which stays acyclic.
    pub loops: Vec<LoopEdge>,
    /// The initial state.
    pub root: NodeId,
    /// Set when a limit cut exploration short: unexplored states became bounded leaves.
    pub partial: Option<Limit>,
    /// Distinct states met.
    pub distinct_states: u64,
    /// How long exploration took.
    pub elapsed: Duration,
    /// Bytes exploration held at its peak, when the caller gave a memory probe
    /// ([`crate::ExploreOptions::max_memory`]): the larger of what the search held at its end
    /// (the tree and the search's maps) and what the finished tree holds. `None` otherwise, and
    /// for trees built by other backends.
    pub memory: Option<usize>,
    /// The counts of every node's unfolded subtree, by `NodeId::index()`.
    unfolded: CountTable,
}

impl Tree {
    /// Counts of the unfolded subtree below (and including) `node`.
    pub fn unfolded(&self, node: NodeId) -> Counts {
        self.unfolded.get(node.index())
    }

    /// Summary figures of the unfolded tree.
    pub fn stats(&self) -> Stats {
        let c = self.unfolded(self.root);
        Stats {
            nodes: c.nodes,
            // A saturated node count says "more than": so does the edge count it gives.
            edges: if c.nodes == u64::MAX {
                u64::MAX
            } else {
                c.nodes.saturating_sub(1)
            },
            leaves: c.leaves(),
            complete: c.complete,
            stuck: c.stuck,
            fault: c.fault,
            bounded: c.bounded,
            cut: c.cut,
            distinct_states: self.distinct_states,
            graph_nodes: self.graph.node_count() as u64,
            max_depth: c.depth,
            saturated: c.saturated(),
            loop_edges: self.loops.len() as u64,
        }
    }

    /// The children of `node`, in thread order, with the step leading to each.
    pub fn children(&self, node: NodeId) -> Vec<(&Event, NodeId)> {
        let mut out: Vec<_> = self
            .graph
            .children(node)
            .iter()
            .map(|&(step, child)| (&self.events[step as usize], child))
            .collect();
        // A backend may add a node's children in any order.
        out.sort_by_key(|(e, _)| (e.thread, e.memory.as_ref().map_or(0, |m| m.way)));
        out
    }

    /// Every step out of `node`: its children (as [`Tree::children`]) followed by its loop
    /// edges (as [`Tree::loops_from`]).
    pub fn successors(&self, node: NodeId) -> Vec<(&Event, NodeId)> {
        let mut out = self.children(node);
        out.extend(self.loops_from(node).iter().map(|l| (&l.step, l.to)));
        out
    }

    /// The loop edges leaving `node`, in thread order.
    pub fn loops_from(&self, node: NodeId) -> &[LoopEdge] {
        let start = self.loops.partition_point(|l| l.from < node);
        let end = self.loops.partition_point(|l| l.from <= node);
        &self.loops[start..end]
    }

    /// The leaf data of `node`, if it is a leaf.
    pub fn leaf(&self, node: NodeId) -> Option<&Leaf> {
        self.graph.leaf(node)
    }

    /// Follows a schedule from the root: [`Choice`]s, or plain thread numbers (each thread's
    /// step its sequentially consistent way). Returns the steps taken, or the position of the
    /// first choice that names a thread or way which cannot move there.
    pub fn follow<C: Copy + Into<Choice>>(
        &self,
        schedule: &[C],
    ) -> Result<(Vec<&Event>, NodeId), usize> {
        let mut node = self.root;
        let mut steps = Vec::with_capacity(schedule.len());
        for (i, &choice) in schedule.iter().enumerate() {
            let choice = choice.into();
            let (event, next) = self
                .children(node)
                .into_iter()
                .find(|(e, _)| e.choice() == choice)
                .ok_or(i)?;
            steps.push(event);
            node = next;
        }
        Ok((steps, node))
    }

    /// For every graph node, how many root paths reach it: the node's multiplicity in the
    /// unfolded tree (1 everywhere when nothing was shared). Indexed by `NodeId::index()`.
    pub fn path_counts(&self) -> Vec<u64> {
        let mut counts = vec![0u64; self.graph.node_count()];
        counts[self.root.index()] = 1;
        // Nodes are added to the graph after all their children, so descending indices visit
        // every parent before its children.
        for index in (0..self.graph.node_count()).rev() {
            let here = counts[index];
            if here == 0 {
                continue;
            }
            for &(_, child) in self.graph.children(NodeId::new(index)) {
                counts[child.index()] = counts[child.index()].saturating_add(here);
            }
        }
        counts
    }

    /// Every leaf node with its multiplicity in the unfolded tree.
    pub fn leaves(&self) -> impl Iterator<Item = (NodeId, &Leaf, u64)> + '_ {
        let counts = self.path_counts();
        self.graph
            .leaves()
            .map(move |(n, leaf)| (n, leaf, counts[n.index()]))
            .filter(|(_, _, m)| *m > 0)
    }

    /// The `index`-th leaf of the unfolded tree in depth-first order (0-based), with the path
    /// of steps to it; `None` when there are fewer leaves.
    pub fn nth_leaf(&self, mut index: u64) -> Option<(Vec<&Event>, NodeId)> {
        let mut node = self.root;
        let mut path = Vec::new();
        loop {
            if self.graph.leaf(node).is_some() {
                return (index == 0).then_some((path, node));
            }
            let mut chosen = None;
            for (event, child) in self.children(node) {
                let leaves = self.unfolded(child).leaves();
                if index < leaves {
                    chosen = Some((event, child));
                    break;
                }
                index -= leaves;
            }
            let (event, child) = chosen?;
            path.push(event);
            node = child;
        }
    }
}

/// Builds a [`Tree`] bottom-up, whatever explores it.
///
/// Every node is added after all its children (so descending node indices are a topological
/// order from the root, which [`Tree::path_counts`] relies on); the counts of every node's
/// unfolded subtree are worked out once all are in ([`TreeBuilder::finish`]), so that the
/// explorer does not hold them beside its own tables. The state-space explorer uses it, and so
/// can any other backend — one that re-executes schedule prefixes of a program whose state
/// cannot be cloned or hashed, or a test that writes a tree by hand: the [`Tree`] does not
/// record who built it.
#[derive(Default)]
pub struct TreeBuilder {
    graph: StateGraph,
    /// Loop edges: from, to, and the step's number.
    loops: Vec<(NodeId, NodeId, EventId)>,
    /// Every distinct step, once: edges name them by number.
    events: Interner<Event>,
    /// Numbers of shared steps by address, for programs that hand out one `Arc` per distinct
    /// step: found without hashing the step's text. Each address is of a step `pins` keeps.
    shared_ids: std::collections::HashMap<usize, EventId, foldhash::fast::FixedState>,
    /// The steps `shared_ids` names, kept alive (at most [`SHARED_STEPS`] of them).
    pins: Option<Pins>,
    /// A few of `shared_ids`, in a small table indexed by a mix of the address: every edge
    /// numbers its step, and the map, read on every one of them, did not stay in the cache.
    /// Filled from `shared_ids` only, so each address in it is of a step kept there.
    recent_ids: Vec<(usize, EventId)>,
    /// The leaves' histories, each distinct one once.
    leaf_histories: LeafHistories,
}

/// Most steps numbered by address (beyond, a program that allocates every step anew would
/// only fill memory; its steps are numbered by content).
const SHARED_STEPS: usize = 1 << 16;

/// Entries of [`TreeBuilder`]'s table of recent step numbers (a power of two).
const RECENT_IDS: usize = 1 << 12;

impl TreeBuilder {
    /// An empty builder.
    pub fn new() -> TreeBuilder {
        TreeBuilder::default()
    }

    /// Adds a leaf; its history is shared with the leaves that have the same one.
    pub fn leaf(&mut self, leaf: Leaf) -> NodeId {
        self.leaf_judged(leaf, |_| ()).0
    }

    /// Adds a leaf as [`TreeBuilder::leaf`] does, showing it to `judge` first with its history
    /// shared: leaves with equal histories come to `judge` with one `Arc`, which it may key
    /// its verdicts by.
    pub fn leaf_judged<R>(
        &mut self,
        mut leaf: Leaf,
        judge: impl FnOnce(&Leaf) -> R,
    ) -> (NodeId, R) {
        leaf.history = self.leaf_histories.share(leaf.history);
        let judged = judge(&leaf);
        (self.graph.add_leaf(leaf), judged)
    }

    /// Adds an inner node with an edge per `(step, child)`, in the order given; every child
    /// must already be in the builder.
    pub fn node(&mut self, children: impl IntoIterator<Item = (Event, NodeId)>) -> NodeId {
        let children: Vec<(EventId, NodeId)> = children
            .into_iter()
            .map(|(event, child)| (self.event_id(event), child))
            .collect();
        self.node_of_steps(&children)
    }

    /// [`TreeBuilder::node`] for steps already numbered ([`TreeBuilder::step_id`],
    /// [`TreeBuilder::event_id`]).
    pub(crate) fn node_of_steps(&mut self, children: &[(EventId, NodeId)]) -> NodeId {
        self.graph.add_node(children)
    }

    /// The number of the step `event`, stored once; by address when the same `Arc` was seen
    /// before.
    pub(crate) fn step_id(&mut self, event: &Arc<Event>) -> EventId {
        let pins = self.pins.get_or_insert_with(|| Pins::new(SHARED_STEPS));
        if !pins.active() {
            return self
                .events
                .intern_with(&**event, || ((**event).clone(), ()))
                .0;
        }
        let address = Arc::as_ptr(event) as usize;
        if self.recent_ids.is_empty() {
            self.recent_ids = vec![(0, 0); RECENT_IDS];
        }
        // Fibonacci hashing: the top bits of the product mix every bit of the address.
        let at = (address as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> (64 - RECENT_IDS.ilog2());
        let recent = &mut self.recent_ids[at as usize];
        if recent.0 == address {
            pins.hit();
            return recent.1;
        }
        if let Some(&id) = self.shared_ids.get(&address) {
            pins.hit();
            *recent = (address, id);
            return id;
        }
        let (id, _) = self
            .events
            .intern_with(&**event, || ((**event).clone(), ()));
        match pins.pin(event) {
            Pinned::Kept => {
                self.shared_ids.insert(address, id);
                self.recent_ids[at as usize] = (address, id);
            }
            Pinned::Refused => {}
            Pinned::GaveUp => {
                self.shared_ids = Default::default();
                self.recent_ids = Vec::new();
            }
        }
        id
    }

    /// The number of `event`, stored once.
    pub(crate) fn event_id(&mut self, event: Event) -> EventId {
        self.events.intern(event, || ())
    }

    /// Adds a loop edge: the numbered step `step` from `from` back to `to`, a state on the
    /// path that reached `from` (`to` may be `from` itself: a step that changes nothing). `to`
    /// is added after `from` (it closes later), which is why loop edges are not children.
    pub(crate) fn loop_edge(&mut self, from: NodeId, to: NodeId, step: EventId) {
        self.loops.push((from, to, step));
    }

    /// How many nodes have been added.
    pub fn node_count(&self) -> usize {
        self.graph.node_count()
    }

    /// How many edges have been added (loop edges not included).
    pub fn edge_count(&self) -> usize {
        self.graph.edge_count()
    }

    /// Takes the leaf data out of node `id` (a search that stops at a leaf needs only it).
    pub(crate) fn take_leaf(&mut self, id: NodeId) -> Option<Leaf> {
        self.graph.take_leaf(id)
    }

    /// The finished tree rooted at `root`.
    pub fn finish(self, root: NodeId, facts: Exploration) -> Tree {
        drop(self.leaf_histories);
        let events = self.events.into_keys();
        let mut loops: Vec<LoopEdge> = self
            .loops
            .into_iter()
            .map(|(from, to, step)| LoopEdge {
                from,
                to,
                step: events[step as usize].clone(),
            })
            .collect();
        loops.sort_by_key(|l| (l.from, l.step.choice()));
        Tree {
            unfolded: unfolded_counts(&self.graph),
            graph: self.graph,
            events,
            loops,
            root,
            partial: facts.partial,
            distinct_states: facts.distinct_states,
            elapsed: facts.elapsed,
            memory: None,
        }
    }
}

/// The counts of every node's unfolded subtree, by node index. Nodes are added after their
/// children, so in index order every child's counts are known before its parents'.
fn unfolded_counts(graph: &StateGraph) -> CountTable {
    let mut table = CountTable::with_capacity(graph.node_count());
    // Leaves come in node order: walked beside the nodes, not looked up for each.
    let mut leaves = graph.leaves().peekable();
    for node in graph.node_indices() {
        let counts = match leaves.next_if(|(at, _)| *at == node) {
            Some((_, leaf)) => Counts::of_leaf(leaf),
            None => {
                let mut counts = Counts {
                    nodes: 1,
                    ..Counts::default()
                };
                for &(_, child) in graph.children(node) {
                    counts.add_child(&table.get(child.index()));
                }
                counts
            }
        };
        table.push(counts);
    }
    table
}

/// What a backend knows about its exploration beyond the nodes it built.
#[derive(Clone, Copy, Debug, Default)]
pub struct Exploration {
    /// The limit that cut exploration short, if one did.
    pub partial: Option<Limit>,
    /// Distinct states met (for a backend that cannot compare states: the stored nodes).
    pub distinct_states: u64,
    /// How long exploration took.
    pub elapsed: Duration,
}
