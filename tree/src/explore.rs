//! The recording scheduler: exhaustive exploration of a [`Program`] into an interleaving tree.
//!
//! Exploration is a depth-first search over states. From every state each thread is asked for
//! its next step; every step that moves becomes an edge. The result is stored as a `petgraph`
//! DAG: with memoization, two paths that reach the same state share one node, and every count
//! this module reports is nevertheless that of the *unfolded* tree.
//!
//! # Cuts and memoization
//!
//! A path that returns to a state already on it is cut there (fairness: a spin loop that makes
//! no progress is not explored forever). A node whose every continuation is cut is a *stuck*
//! leaf (livelock). What lies below a state can then depend on the path that reached it, so a
//! state's node is reused only when its exploration cut no edge back to a state at or above it:
//! we track, as Tarjan's low-link does, the shallowest depth any cut below a node reached. If
//! that depth is strictly below the node, no state of its subtree can ever be above it on
//! another path (that would close a cycle through the node itself, which the search would have
//! cut at the node), so the subtree is the same from every path and may be shared.
//!
//! The per-operation step bound (`max_steps`) is counted along the path; a shared node keeps
//! the bounded leaves of the path that first explored it. Bounded leaves are excluded from
//! verdicts, so this only matters for runs that already hit a limit (and are marked partial).

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasher, Hash};
use std::time::{Duration, Instant};

use petgraph::graph::{DiGraph, NodeIndex};
use petgraph::visit::EdgeRef;
use petgraph::Direction;
use serde::Serialize;

use crate::event::Event;
use crate::history::History;
use crate::program::{Fault, Program, Step, Wait};
use crate::source::Span;

/// A node of the interleaving tree.
pub type NodeId = NodeIndex<u32>;

/// Why a leaf ends its path.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum LeafKind {
    /// Every operation returned and the `final` operations ran.
    Complete,
    /// Operations are pending but no thread can make progress (deadlock or livelock).
    Stuck,
    /// The model failed (null dereference, failed assert, ...).
    Fault,
    /// A bound was hit; the verdict below this point is unknown.
    Bounded,
}

/// A leaf: where no thread can move.
#[derive(Clone, Debug)]
pub struct Leaf {
    /// Why the path ends here.
    pub kind: LeafKind,
    /// The coarse history of the execution (with `final` operations at complete leaves, with
    /// the blocked calls at stuck leaves).
    pub history: History,
    /// The failure, for a fault leaf.
    pub fault: Option<Fault>,
    /// Why exploration stopped, for a bounded leaf.
    pub bound: Option<String>,
    /// At a stuck leaf: what each blocked thread waits for.
    pub waiting: Vec<Wait>,
}

/// What a node of the graph holds.
#[derive(Clone, Debug)]
pub struct Node {
    /// `Some` for a leaf.
    pub leaf: Option<Leaf>,
    /// Counts of the unfolded subtree below (and including) this node.
    pub unfolded: Counts,
}

/// Counts over an unfolded (sub)tree.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Counts {
    /// Nodes, leaves included.
    pub nodes: u64,
    /// Complete leaves.
    pub complete: u64,
    /// Stuck leaves.
    pub stuck: u64,
    /// Fault leaves.
    pub fault: u64,
    /// Bounded leaves.
    pub bounded: u64,
    /// Longest path below, in steps.
    pub depth: u64,
}

impl Counts {
    fn leaf(kind: LeafKind) -> Counts {
        let mut c = Counts {
            nodes: 1,
            ..Counts::default()
        };
        *c.of_kind_mut(kind) = 1;
        c
    }

    fn of_kind_mut(&mut self, kind: LeafKind) -> &mut u64 {
        match kind {
            LeafKind::Complete => &mut self.complete,
            LeafKind::Stuck => &mut self.stuck,
            LeafKind::Fault => &mut self.fault,
            LeafKind::Bounded => &mut self.bounded,
        }
    }

    /// All leaves.
    pub fn leaves(&self) -> u64 {
        self.complete + self.stuck + self.fault + self.bounded
    }

    fn add_child(&mut self, child: &Counts) {
        self.nodes = self.nodes.saturating_add(child.nodes);
        self.complete = self.complete.saturating_add(child.complete);
        self.stuck = self.stuck.saturating_add(child.stuck);
        self.fault = self.fault.saturating_add(child.fault);
        self.bounded = self.bounded.saturating_add(child.bounded);
        self.depth = self.depth.max(child.depth + 1);
    }
}

/// A limit that cut exploration short; the tree is then partial.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Limit {
    /// More distinct nodes than `--max-states`.
    MaxStates,
    /// Exploration ran longer than `--timeout`.
    Timeout,
    /// An operation took more steps than `--max-steps`.
    MaxSteps,
    /// A step ran out of its budget of local instructions (a loop that never touches shared
    /// memory).
    StepBudget,
}

impl Limit {
    /// The limit's stable name, as JSON reports spell it: `max-states`, `timeout`,
    /// `max-steps`, `step-budget`.
    pub fn name(self) -> &'static str {
        match self {
            Limit::MaxStates => "max-states",
            Limit::Timeout => "timeout",
            Limit::MaxSteps => "max-steps",
            Limit::StepBudget => "step-budget",
        }
    }

    /// The limit whose [`Limit::name`] is `name`.
    pub fn from_name(name: &str) -> Option<Limit> {
        [
            Limit::MaxStates,
            Limit::Timeout,
            Limit::MaxSteps,
            Limit::StepBudget,
        ]
        .into_iter()
        .find(|l| l.name() == name)
    }

    /// The command-line option that sets this limit.
    pub fn option(self) -> &'static str {
        match self {
            Limit::MaxStates => "--max-states",
            Limit::Timeout => "--timeout",
            Limit::MaxSteps => "--max-steps",
            Limit::StepBudget => "the per-step instruction budget",
        }
    }
}

/// How to explore.
#[derive(Clone, Debug)]
pub struct ExploreOptions {
    /// Share the node of identical states (the tree becomes a DAG; counts stay unfolded).
    pub memoize: bool,
    /// Stop after creating this many graph nodes.
    pub max_states: Option<usize>,
    /// Most steps one operation may take on a path before the path becomes a bounded leaf.
    pub max_steps: Option<usize>,
    /// Stop after this long.
    pub timeout: Option<Duration>,
}

impl Default for ExploreOptions {
    fn default() -> Self {
        ExploreOptions {
            memoize: true,
            max_states: Some(2_000_000),
            max_steps: Some(1_000),
            timeout: None,
        }
    }
}

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
    /// Bounded leaves.
    pub bounded: u64,
    /// Distinct states met.
    pub distinct_states: u64,
    /// Nodes in the stored graph (smaller than `nodes` when memoized).
    pub graph_nodes: u64,
    /// Longest root-to-leaf path, in steps.
    pub max_depth: u64,
}

/// The interleaving tree (a DAG when memoized), with its root.
pub struct Tree {
    /// Nodes are states, edges are steps.
    pub graph: DiGraph<Node, Event>,
    /// The initial state.
    pub root: NodeId,
    /// Set when a limit cut exploration short: unexplored states became bounded leaves.
    pub partial: Option<Limit>,
    /// Distinct states met.
    pub distinct_states: u64,
    /// How long exploration took.
    pub elapsed: Duration,
}

impl Tree {
    /// Summary figures of the unfolded tree.
    pub fn stats(&self) -> Stats {
        let c = self.graph[self.root].unfolded;
        Stats {
            nodes: c.nodes,
            edges: c.nodes.saturating_sub(1),
            leaves: c.leaves(),
            complete: c.complete,
            stuck: c.stuck,
            fault: c.fault,
            bounded: c.bounded,
            distinct_states: self.distinct_states,
            graph_nodes: self.graph.node_count() as u64,
            max_depth: c.depth,
        }
    }

    /// The children of `node`, in thread order, with the step leading to each.
    pub fn children(&self, node: NodeId) -> Vec<(&Event, NodeId)> {
        let mut out: Vec<_> = self
            .graph
            .edges_directed(node, Direction::Outgoing)
            .map(|e| (e.weight(), e.target()))
            .collect();
        // petgraph lists outgoing edges newest first; keep the order they were taken in.
        out.sort_by_key(|(e, _)| e.thread);
        out
    }

    /// The leaf data of `node`, if it is a leaf.
    pub fn leaf(&self, node: NodeId) -> Option<&Leaf> {
        self.graph[node].leaf.as_ref()
    }

    /// Follows a schedule of thread choices from the root. Returns the steps taken, or the
    /// position of the first choice that names a thread which cannot move there.
    pub fn follow(&self, schedule: &[usize]) -> Result<(Vec<&Event>, NodeId), usize> {
        let mut node = self.root;
        let mut steps = Vec::with_capacity(schedule.len());
        for (i, &thread) in schedule.iter().enumerate() {
            let (event, next) = self
                .children(node)
                .into_iter()
                .find(|(e, _)| e.thread == thread)
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
            for child in self
                .graph
                .neighbors_directed(NodeId::new(index), Direction::Outgoing)
            {
                counts[child.index()] = counts[child.index()].saturating_add(here);
            }
        }
        counts
    }

    /// Every leaf node with its multiplicity in the unfolded tree.
    pub fn leaves(&self) -> impl Iterator<Item = (NodeId, &Leaf, u64)> + '_ {
        let counts = self.path_counts();
        self.graph
            .node_indices()
            .filter_map(move |n| {
                self.graph[n]
                    .leaf
                    .as_ref()
                    .map(|leaf| (n, leaf, counts[n.index()]))
            })
            .filter(|(_, _, m)| *m > 0)
    }

    /// The `index`-th leaf of the unfolded tree in depth-first order (0-based), with the path
    /// of steps to it; `None` when there are fewer leaves.
    pub fn nth_leaf(&self, mut index: u64) -> Option<(Vec<&Event>, NodeId)> {
        let mut node = self.root;
        let mut path = Vec::new();
        loop {
            if self.graph[node].leaf.is_some() {
                return (index == 0).then_some((path, node));
            }
            let mut chosen = None;
            for (event, child) in self.children(node) {
                let leaves = self.graph[child].unfolded.leaves();
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

/// Progress reports during exploration: called now and then with the number of graph nodes.
pub trait Progress {
    /// `nodes` graph nodes have been created so far.
    fn tick(&mut self, nodes: u64);
}

impl Progress for () {
    fn tick(&mut self, _nodes: u64) {}
}

impl<F: FnMut(u64)> Progress for F {
    fn tick(&mut self, nodes: u64) {
        self(nodes)
    }
}

/// Explores every interleaving of `program`.
///
/// Returns the fault of the serial `init` part if it fails before any interleaving exists.
pub fn explore<P: Program>(program: &P, options: &ExploreOptions) -> Result<Tree, Fault> {
    explore_with_progress(program, options, &mut ())
}

/// [`explore`], reporting progress to `progress`.
pub fn explore_with_progress<P: Program>(
    program: &P,
    options: &ExploreOptions,
    progress: &mut dyn Progress,
) -> Result<Tree, Fault> {
    let initial = program.initial_state()?;
    let mut explorer = Explorer {
        program,
        options,
        graph: DiGraph::new(),
        memo: HashMap::new(),
        on_path: HashMap::new(),
        seen: HashSet::new(),
        hasher: std::collections::hash_map::RandomState::new(),
        partial: None,
        started: Instant::now(),
        progress,
    };
    let root = explorer.run(initial);
    let distinct_states = explorer.seen.len() as u64;
    Ok(Tree {
        graph: explorer.graph,
        root,
        partial: explorer.partial,
        distinct_states,
        elapsed: explorer.started.elapsed(),
    })
}

/// A node of the search that is being explored: its pending children and what they gave.
struct Frame<S> {
    state: S,
    depth: usize,
    /// Steps taken by each thread in its current operation, along this path.
    op_steps: Vec<usize>,
    /// Children still to explore: the step and the child state.
    pending: std::vec::IntoIter<(Event, S)>,
    /// Explored children: the step and the child's node.
    done: Vec<(Event, NodeId)>,
    /// Shallowest depth reached by a cut at or below this node (`usize::MAX`: none).
    low: usize,
    /// Whether some continuation was cut (to tell livelock from a node with no steps).
    cut_any: bool,
}

struct Explorer<'a, P: Program> {
    program: &'a P,
    options: &'a ExploreOptions,
    graph: DiGraph<Node, Event>,
    /// Nodes whose subtree is the same from every path, by state.
    memo: HashMap<P::State, NodeId>,
    /// States on the current path, with their depth.
    on_path: HashMap<P::State, usize>,
    /// Hashes of every state met, for the distinct-state count (hashes keep memory flat).
    seen: HashSet<u64>,
    hasher: std::collections::hash_map::RandomState,
    partial: Option<Limit>,
    started: Instant,
    progress: &'a mut dyn Progress,
}

impl<P: Program> Explorer<'_, P> {
    fn run(&mut self, initial: P::State) -> NodeId {
        let threads = self.program.threads();
        let mut stack: Vec<Frame<P::State>> = Vec::new();
        match self.open(initial, 0, vec![0; threads]) {
            Ok(frame) => stack.push(frame),
            Err(node) => return node,
        }
        loop {
            let top = stack.last_mut().expect("the root frame is popped last");
            if let Some((event, child_state)) = top.pending.next() {
                let depth = top.depth + 1;
                // The child's step counts are built only if it is opened: most children of a
                // memoized tree are shared or cut.
                let parent_steps = &top.op_steps;
                let op_steps = || {
                    let mut steps = parent_steps.clone();
                    steps[event.thread] = if event.ret.is_some() {
                        0
                    } else {
                        steps[event.thread] + 1
                    };
                    steps
                };
                let visit = self.visit(child_state, depth, op_steps);
                match visit {
                    Visit::Done(node, low) => {
                        let top = stack.last_mut().expect("frame");
                        top.low = top.low.min(low);
                        top.done.push((event, node));
                    }
                    Visit::Cut(at) => {
                        let top = stack.last_mut().expect("frame");
                        top.low = top.low.min(at);
                        top.cut_any = true;
                    }
                    Visit::Open(frame) => {
                        // Remember the edge: the child's node is attached when its frame closes.
                        stack
                            .last_mut()
                            .expect("frame")
                            .done
                            .push((event, NodeId::end()));
                        stack.push(*frame);
                    }
                }
                continue;
            }
            let frame = stack.pop().expect("frame");
            let (node, low) = self.close(frame);
            match stack.last_mut() {
                Some(parent) => {
                    parent.low = parent.low.min(low);
                    let slot = parent
                        .done
                        .last_mut()
                        .expect("an open child left a placeholder edge");
                    debug_assert_eq!(slot.1, NodeId::end());
                    slot.1 = node;
                }
                None => return node,
            }
        }
    }

    /// Looks at a child state: shared, cut, or to be opened.
    fn visit(
        &mut self,
        state: P::State,
        depth: usize,
        op_steps: impl FnOnce() -> Vec<usize>,
    ) -> Visit<P::State> {
        if let Some(&at) = self.on_path.get(&state) {
            return Visit::Cut(at);
        }
        if let Some(&node) = self.memo.get(&state) {
            return Visit::Done(node, usize::MAX);
        }
        match self.open(state, depth, op_steps()) {
            Ok(frame) => Visit::Open(Box::new(frame)),
            Err(leaf) => Visit::Done(leaf, usize::MAX),
        }
    }

    /// Takes every thread's step from `state`: a frame to explore, or a leaf right away.
    fn open(
        &mut self,
        state: P::State,
        depth: usize,
        op_steps: Vec<usize>,
    ) -> Result<Frame<P::State>, NodeId> {
        self.seen.insert(self.hasher.hash_one(&state));
        if let Some(limit) = self.limit_hit() {
            self.partial.get_or_insert(limit);
            let reason = format!("exploration stopped by {}", limit.option());
            return Err(self.bounded_leaf(&state, reason));
        }
        let mut children = Vec::new();
        let mut all_done = true;
        for (thread, &steps_in_op) in op_steps.iter().enumerate() {
            match self.program.step(&state, thread) {
                Step::Done => continue,
                Step::Blocked => {}
                Step::Moved { state: next, event } => {
                    if let Some(max) = self.options.max_steps {
                        if steps_in_op >= max && event.ret.is_none() {
                            self.partial.get_or_insert(Limit::MaxSteps);
                            let reason = format!(
                                "T{thread}'s `{}` took more than {max} steps (--max-steps)",
                                event.op
                            );
                            let leaf = self.bounded_leaf(&next, reason);
                            children.push(Prepared::Leaf(event, leaf));
                            all_done = false;
                            continue;
                        }
                    }
                    children.push(Prepared::State(event, next));
                }
                Step::Fault { event, fault } => {
                    let leaf = self.add_leaf(Leaf {
                        kind: LeafKind::Fault,
                        history: self.program.history(&state),
                        fault: Some(fault.clone()),
                        bound: None,
                        waiting: Vec::new(),
                    });
                    let event = event.unwrap_or_else(|| fault_event(thread, &fault));
                    children.push(Prepared::Leaf(event, leaf));
                }
                Step::Bounded { reason } => {
                    self.partial.get_or_insert(Limit::StepBudget);
                    let leaf = self.bounded_leaf(&state, reason);
                    children.push(Prepared::Leaf(bounded_event(thread), leaf));
                }
            }
            all_done = false;
        }
        if children.is_empty() {
            let leaf = if all_done {
                match self.program.finish(&state) {
                    Ok(history) => Leaf {
                        kind: LeafKind::Complete,
                        history,
                        fault: None,
                        bound: None,
                        waiting: Vec::new(),
                    },
                    Err(fault) => Leaf {
                        kind: LeafKind::Fault,
                        history: self.program.history(&state),
                        fault: Some(fault),
                        bound: None,
                        waiting: Vec::new(),
                    },
                }
            } else {
                self.stuck_leaf(&state)
            };
            let node = self.add_leaf(leaf);
            if self.options.memoize {
                self.memo.insert(state, node);
            }
            return Err(node);
        }
        // Leaves found while opening (faults, bounds) are already finished children.
        let mut done = Vec::new();
        let mut pending = Vec::new();
        for child in children {
            match child {
                Prepared::Leaf(event, node) => done.push((event, node)),
                Prepared::State(event, next) => pending.push((event, next)),
            }
        }
        self.on_path.insert(state.clone(), depth);
        Ok(Frame {
            state,
            depth,
            op_steps,
            pending: pending.into_iter(),
            done,
            low: usize::MAX,
            cut_any: false,
        })
    }

    /// Finishes a frame: its node, and the low-link its parent inherits.
    fn close(&mut self, frame: Frame<P::State>) -> (NodeId, usize) {
        self.on_path.remove(&frame.state);
        let node = if frame.done.is_empty() {
            debug_assert!(frame.cut_any);
            // Every continuation returns to a state above: livelock.
            self.add_leaf(self.stuck_leaf(&frame.state))
        } else {
            let mut unfolded = Counts {
                nodes: 1,
                ..Counts::default()
            };
            for (_, child) in &frame.done {
                unfolded.add_child(&self.graph[*child].unfolded);
            }
            let node = self.graph.add_node(Node {
                leaf: None,
                unfolded,
            });
            for (event, child) in frame.done {
                self.graph.add_edge(node, child, event);
            }
            node
        };
        // Shareable only if no cut below reached this node or above it (see the module docs).
        if self.options.memoize && frame.low > frame.depth {
            self.memo.insert(frame.state, node);
        }
        self.progress_tick();
        (node, frame.low)
    }

    fn stuck_leaf(&self, state: &P::State) -> Leaf {
        let waiting = (0..self.program.threads())
            .filter_map(|t| self.program.why_blocked(state, t))
            .collect();
        Leaf {
            kind: LeafKind::Stuck,
            history: self.program.stuck_history(state),
            fault: None,
            bound: None,
            waiting,
        }
    }

    fn bounded_leaf(&mut self, state: &P::State, reason: String) -> NodeId {
        self.add_leaf(Leaf {
            kind: LeafKind::Bounded,
            history: self.program.history(state),
            fault: None,
            bound: Some(reason),
            waiting: Vec::new(),
        })
    }

    fn add_leaf(&mut self, leaf: Leaf) -> NodeId {
        let unfolded = Counts::leaf(leaf.kind);
        self.graph.add_node(Node {
            leaf: Some(leaf),
            unfolded,
        })
    }

    fn limit_hit(&self) -> Option<Limit> {
        if self.partial.is_some() {
            return self.partial;
        }
        if self
            .options
            .max_states
            .is_some_and(|max| self.graph.node_count() >= max)
        {
            return Some(Limit::MaxStates);
        }
        // Reading the clock costs little next to the steps of every thread that opening a
        // state takes, so look at every state: gating on the node count would skip it for
        // whole trees (nodes are added when frames close, so the count can stay put for long).
        match self.options.timeout {
            Some(timeout) if self.started.elapsed() >= timeout => Some(Limit::Timeout),
            _ => None,
        }
    }

    fn progress_tick(&mut self) {
        let n = self.graph.node_count() as u64;
        if n.is_multiple_of(1024) {
            self.progress.tick(n);
        }
    }
}

/// A child found while opening a node.
enum Prepared<S> {
    State(Event, S),
    Leaf(Event, NodeId),
}

/// What looking at a child state gave its parent.
enum Visit<S> {
    /// A finished node (shared or a leaf), with the low-link of its exploration.
    Done(NodeId, usize),
    /// The child is on the current path at this depth: the edge is cut.
    Cut(usize),
    /// The child needs a frame of its own.
    Open(Box<Frame<S>>),
}

/// The edge to a fault leaf when the program reported no event for the failing step.
fn fault_event(thread: usize, fault: &Fault) -> Event {
    local_event(
        thread,
        fault.message.clone(),
        fault.span.unwrap_or_default(),
    )
}

/// The edge to a bounded leaf when a step ran out of its local budget.
fn bounded_event(thread: usize) -> Event {
    local_event(thread, "bounded".into(), Default::default())
}

/// A local step of `thread` for an edge the program reported no event for: `value` says why.
fn local_event(thread: usize, value: String, span: Span) -> Event {
    Event {
        thread,
        op_index: 0,
        op: String::new(),
        kind: crate::event::EventKind::Local,
        location: String::new(),
        value,
        span,
        call: None,
        ret: None,
    }
}
