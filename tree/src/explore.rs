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
//! States are told apart by (program state, coarse history): the explorer, not the program,
//! owns the history, interned as a prefix tree (`history_tree.rs`), so a key is the state and a
//! small history id.
//!
//! The per-operation step bound (`max_steps`) is counted along the path; a shared node keeps
//! the bounded leaves of the path that first explored it. Bounded leaves are excluded from
//! verdicts, so this only matters for runs that already hit a limit (and are marked partial).

use std::collections::{HashMap, HashSet};
use std::hash::BuildHasher;
use std::time::{Duration, Instant};

use crate::event::Event;
use crate::history::{History, ThreadId};
use crate::history_tree::{HistoryId, HistoryTree};
use crate::model::{Bound, Exploration, Leaf, LeafKind, Limit, NodeId, Tree, TreeBuilder};
use crate::program::{Fault, Program, Step};
use crate::source::Span;

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
    /// Stop when the process uses more memory than this.
    pub max_memory: Option<MemoryBudget>,
}

/// A memory budget: how many bytes the process may use, and how to ask how many it uses.
///
/// The tree crate cannot see the process's allocator; whoever owns it (the `fgvt` binary
/// counts its allocations) passes a probe. A probe that answers 0 disables the budget.
#[derive(Clone, Copy, Debug)]
pub struct MemoryBudget {
    /// The most bytes in use before exploration stops.
    pub bytes: usize,
    /// Bytes in use now.
    pub used: fn() -> usize,
}

impl Default for ExploreOptions {
    fn default() -> Self {
        ExploreOptions {
            memoize: true,
            max_states: Some(2_000_000),
            max_steps: Some(1_000),
            timeout: None,
            max_memory: None,
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
pub fn explore<P: Program>(program: &P, options: &ExploreOptions) -> Result<Tree, Fault>
where
    P::State: Send + 'static,
{
    explore_with_progress(program, options, &mut ())
}

/// [`explore`], reporting progress to `progress`.
pub fn explore_with_progress<P: Program>(
    program: &P,
    options: &ExploreOptions,
    progress: &mut dyn Progress,
) -> Result<Tree, Fault>
where
    P::State: Send + 'static,
{
    let probe = options.max_memory.map(|budget| budget.used);
    let memory_before = probe.map(|used| used());
    let (initial, base) = program.initial_state()?;
    let mut explorer = Explorer {
        program,
        options,
        tree: TreeBuilder::new(),
        histories: HistoryTree::new(base),
        memo: HashMap::new(),
        on_path: HashMap::new(),
        seen: HashSet::new(),
        hasher: std::collections::hash_map::RandomState::new(),
        partial: None,
        started: Instant::now(),
        progress,
    };
    let root = explorer.run((initial, HistoryTree::ROOT));
    let facts = Exploration {
        partial: explorer.partial,
        distinct_states: explorer.seen.len() as u64,
        elapsed: explorer.started.elapsed(),
        memory: probe
            .zip(memory_before)
            .map(|(used, before)| used().saturating_sub(before)),
    };
    let Explorer {
        tree,
        memo,
        on_path,
        ..
    } = explorer;
    // Freeing hundreds of thousands of stored states takes a noticeable share of a run (most
    // of a second on large trees, past a `--timeout`); the caller needs only the tree, so they
    // are freed beside it.
    std::thread::spawn(move || drop((memo, on_path)));
    Ok(tree.finish(root, facts))
}

/// What tells two states of the search apart: the program's state and the path's history.
type Key<S> = (S, HistoryId);

/// A node of the search that is being explored: its pending children and what they gave.
struct Frame<S> {
    key: Key<S>,
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
    tree: TreeBuilder,
    histories: HistoryTree,
    /// Nodes whose subtree is the same from every path, by state.
    memo: HashMap<Key<P::State>, NodeId>,
    /// States on the current path, with their depth.
    on_path: HashMap<Key<P::State>, usize>,
    /// Hashes of every state met, for the distinct-state count (hashes keep memory flat).
    seen: HashSet<u64>,
    hasher: std::collections::hash_map::RandomState,
    partial: Option<Limit>,
    started: Instant,
    progress: &'a mut dyn Progress,
}

impl<P: Program> Explorer<'_, P> {
    fn run(&mut self, initial: Key<P::State>) -> NodeId {
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
                let history = self.histories.after(top.key.1, &event);
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
                let visit = self.visit((child_state, history), depth, op_steps);
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
        key: Key<P::State>,
        depth: usize,
        op_steps: impl FnOnce() -> Vec<usize>,
    ) -> Visit<P::State> {
        if let Some(&at) = self.on_path.get(&key) {
            return Visit::Cut(at);
        }
        if let Some(&node) = self.memo.get(&key) {
            return Visit::Done(node, usize::MAX);
        }
        match self.open(key, depth, op_steps()) {
            Ok(frame) => Visit::Open(Box::new(frame)),
            Err(leaf) => Visit::Done(leaf, usize::MAX),
        }
    }

    /// Takes every thread's step from a state: a frame to explore, or a leaf right away.
    fn open(
        &mut self,
        key: Key<P::State>,
        depth: usize,
        op_steps: Vec<usize>,
    ) -> Result<Frame<P::State>, NodeId> {
        self.seen.insert(self.hasher.hash_one(&key));
        let (state, history) = &key;
        let history = *history;
        if let Some(limit) = self.limit_hit() {
            self.partial.get_or_insert(limit);
            return Err(self.bounded_leaf(history, Bound::Stopped { limit }));
        }
        let mut children = Vec::new();
        let mut all_done = true;
        for (thread, &steps_in_op) in op_steps.iter().enumerate() {
            match self.program.step(state, thread) {
                Step::Done => continue,
                Step::Blocked => {}
                Step::Moved { state: next, event } => {
                    if let Some(max) = self.options.max_steps {
                        if steps_in_op >= max && event.ret.is_none() {
                            self.partial.get_or_insert(Limit::MaxSteps);
                            let bound = Bound::MaxSteps {
                                thread,
                                op: event.op.clone(),
                                max,
                            };
                            let after = self.histories.after(history, &event);
                            let leaf = self.bounded_leaf(after, bound);
                            children.push(Prepared::Leaf(event, leaf));
                            all_done = false;
                            continue;
                        }
                    }
                    children.push(Prepared::State(event, next));
                }
                Step::Fault { event, fault } => {
                    let leaf = self.tree.leaf(Leaf {
                        kind: LeafKind::Fault,
                        history: self.histories.history(history),
                        fault: Some(fault.clone()),
                        bound: None,
                        waiting: Vec::new(),
                    });
                    let event = event.unwrap_or_else(|| fault_event(thread, &fault));
                    children.push(Prepared::Leaf(event, leaf));
                }
                Step::Bounded { reason } => {
                    self.partial.get_or_insert(Limit::StepBudget);
                    let leaf = self.bounded_leaf(history, Bound::StepBudget { reason });
                    children.push(Prepared::Leaf(bounded_event(thread), leaf));
                }
            }
            all_done = false;
        }
        if children.is_empty() {
            let leaf = if all_done {
                self.complete_leaf(state, history)
            } else {
                self.stuck_leaf(state, history)
            };
            let node = self.tree.leaf(leaf);
            if self.options.memoize {
                self.memo.insert(key, node);
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
        self.on_path.insert(key.clone(), depth);
        Ok(Frame {
            key,
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
        self.on_path.remove(&frame.key);
        let node = if frame.done.is_empty() {
            debug_assert!(frame.cut_any);
            // Every continuation returns to a state above: livelock.
            let leaf = self.stuck_leaf(&frame.key.0, frame.key.1);
            self.tree.leaf(leaf)
        } else {
            self.tree.node(frame.done)
        };
        // Shareable only if no cut below reached this node or above it (see the module docs).
        if self.options.memoize && frame.low > frame.depth {
            self.memo.insert(frame.key, node);
        }
        self.progress_tick();
        (node, frame.low)
    }

    /// The leaf where every operation returned: the path's history and the `final` part's.
    fn complete_leaf(&self, state: &P::State, history: HistoryId) -> Leaf {
        let mut path = self.histories.history(history);
        match self.program.finish(state) {
            Ok(finals) => {
                path.events.extend(finals.events);
                Leaf {
                    kind: LeafKind::Complete,
                    history: path,
                    fault: None,
                    bound: None,
                    waiting: Vec::new(),
                }
            }
            Err(fault) => Leaf {
                kind: LeafKind::Fault,
                history: path,
                fault: Some(fault),
                bound: None,
                waiting: Vec::new(),
            },
        }
    }

    /// The leaf where no thread can move: the path's history with the calls the blocked
    /// threads were about to make, marked stuck.
    fn stuck_leaf(&self, state: &P::State, history: HistoryId) -> Leaf {
        let waiting = (0..self.program.threads())
            .filter_map(|t| self.program.why_blocked(state, t))
            .collect();
        let mut history: History = self.histories.history(history);
        for (thread, call) in self.program.blocked_calls(state) {
            history.call(thread, call);
        }
        history.stuck = true;
        Leaf {
            kind: LeafKind::Stuck,
            history,
            fault: None,
            bound: None,
            waiting,
        }
    }

    fn bounded_leaf(&mut self, history: HistoryId, bound: Bound) -> NodeId {
        let history = self.histories.history(history);
        self.tree.leaf(Leaf {
            kind: LeafKind::Bounded,
            history,
            fault: None,
            bound: Some(bound),
            waiting: Vec::new(),
        })
    }

    fn limit_hit(&self) -> Option<Limit> {
        if self.partial.is_some() {
            return self.partial;
        }
        if self
            .options
            .max_states
            .is_some_and(|max| self.tree.node_count() >= max)
        {
            return Some(Limit::MaxStates);
        }
        // Reading the clock costs little next to the steps of every thread that opening a
        // state takes, so look at every state: gating on the node count would skip it for
        // whole trees (nodes are added when frames close, so the count can stay put for long).
        if let Some(budget) = self.options.max_memory {
            if (budget.used)() >= budget.bytes {
                return Some(Limit::Memory);
            }
        }
        match self.options.timeout {
            Some(timeout) if self.started.elapsed() >= timeout => Some(Limit::Timeout),
            _ => None,
        }
    }

    fn progress_tick(&mut self) {
        let n = self.tree.node_count() as u64;
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
fn fault_event(thread: ThreadId, fault: &Fault) -> Event {
    local_event(
        thread,
        fault.message.clone(),
        fault.span.unwrap_or_default(),
    )
}

/// The edge to a bounded leaf when a step ran out of its local budget.
fn bounded_event(thread: ThreadId) -> Event {
    local_event(thread, "bounded".into(), Default::default())
}

/// A local step of `thread` for an edge the program reported no event for: `value` says why.
fn local_event(thread: ThreadId, value: String, span: Span) -> Event {
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
