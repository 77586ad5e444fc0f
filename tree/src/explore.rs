//! The recording scheduler: exhaustive exploration of a [`Program`] into an interleaving tree.
//!
//! Exploration is a depth-first search over states. From every state each thread is asked for
//! its next step; every step that moves becomes an edge.
//!
//! # The state graph (memoized exploration, the default)
//!
//! Every distinct state is explored once and gets one node. A step to a state explored before
//! is an edge to its node; a step back to a state on the current path (a spin or retry loop)
//! is a [`LoopEdge`](crate::LoopEdge), kept apart from the children so that the children form a
//! DAG. The strongly connected components of the graph are found on the way (Tarjan's
//! algorithm: a frame's low-link is the smallest discovery index of an unfinished state its
//! subtree reaches). Every state of a component reaches the same leaves, and a component that
//! no edge leaves never ends: a *livelock*, whose root becomes a stuck leaf. A run in which one
//! thread spins while another could move is not an outcome (it leaves the component).
//!
//! This is the semantics of the infinite unfolded tree: a state's category is what every
//! finite run from it can come to. The unfolded counts are those of the tree in which a loop
//! edge ends its path. The labels (in `fgvt-labeling`) follow loop edges too.
//!
//! # Plain exploration (`memoize: false`)
//!
//! Nothing is shared: every path is unfolded, and a path that returns to a state already on it
//! is cut there; a node whose every continuation is cut is a stuck leaf. On loop-free programs
//! the counts, labels and CDRS are exactly those of the state graph (property-tested); with
//! spin loops, what lies below a state can depend on the path that reached it, so a node
//! inside a retry loop can be labeled differently (a state whose only step returns to a state
//! above it is a stuck leaf here, though the state above may go on).
//!
//! States are told apart by (program state, coarse history): the explorer, not the program,
//! owns the history, interned as a prefix tree in canonical form (`history_tree.rs`), so a key
//! is the state and a small history id.
//!
//! The per-operation step bound (`max_steps`) is counted along the path; a shared node keeps
//! the bounded leaves of the path that first explored it. Bounded leaves are excluded from
//! verdicts, so this only matters for runs that already hit a limit (and are marked partial).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::choice::Choice;
use crate::event::Event;
use crate::graph::{EventId, NodeId};
use crate::history::{History, ThreadId};
use crate::history_tree::{HistoryId, HistoryKeys, HistoryTree};
use crate::interner::KeyHash;
use crate::leaf::Leaf;
use crate::limit::{Bound, Limit};
use crate::model::{Exploration, Tree, TreeBuilder};
use crate::program::{Fault, Program, Readiness, Step};
use crate::states::{Slot, StateId, States};
use crate::turn::{self, Turn};

/// How to explore.
#[derive(Clone, Debug)]
pub struct ExploreOptions {
    /// Explore the state graph, each distinct state once (see the module docs); `false`
    /// unfolds every path, cutting one where it returns to a state on it.
    pub memoize: bool,
    /// Stop after creating this many graph nodes.
    pub max_states: Option<usize>,
    /// Most steps one operation may take on a path before the path becomes a bounded leaf.
    pub max_steps: Option<usize>,
    /// Stop after this long.
    pub timeout: Option<Duration>,
    /// Stop when the process uses more memory than this.
    pub max_memory: Option<MemoryBudget>,
    /// Explore only the runs with at most this many preemptions (a switch away from a thread
    /// that could go on): the bounded search of a [`scout`]. States are then told apart by
    /// who moved last and how many preemptions their path took, too.
    pub max_preemptions: Option<u32>,
    /// A run to explore first (its thread choices from the root): the search takes its path
    /// before any other, so a partial tree holds the run whatever the limits cut.
    pub first: Option<Arc<[Choice]>>,
    /// Stop as soon as this flag is raised (a signal handler raises it on Ctrl-C): the tree is
    /// then partial, cut by [`Limit::Interrupted`], like any other limit.
    pub interrupt: Option<Interrupt>,
    /// How much longer a search that judges its leaves ([`explore_judging`]) goes on after its
    /// first failing leaf: past it the tree is partial, cut by [`Limit::ReportBudget`]. The
    /// verdict is known at the first failure; what the rest of the tree adds is the labels and
    /// the CDRS, and a user waits for those. `None`: the whole tree, however long it takes.
    pub report_budget: Option<Duration>,
    /// How many threads take steps: the search's own and `jobs - 1` workers taking steps
    /// ahead of it (see [`crate::parallel`]). Read by the entry points of that module, for
    /// programs that can run on several threads; the tree is the same whatever the number.
    /// At most one thread per core runs (more would only take turns on them), and a
    /// bounded-preemption search (`max_preemptions`) runs on one thread whatever it says.
    pub jobs: usize,
}

/// The [`ExploreOptions::report_budget`] front ends default to: a failing run's report within
/// seconds of the run, with the CDRS of what was explored by then, rather than after minutes of
/// silence.
pub const DEFAULT_REPORT_BUDGET: Duration = Duration::from_secs(5);

impl ExploreOptions {
    /// The limit a search that started at `started` has hit of those outside it: an
    /// interrupt, the memory budget, the timeout (in that order).
    pub(crate) fn outer_limit(&self, started: Instant) -> Option<Limit> {
        if self.interrupt.is_some_and(Interrupt::is_raised) {
            return Some(Limit::Interrupted);
        }
        if let Some(budget) = self.max_memory {
            if (budget.used)() >= budget.bytes {
                return Some(Limit::Memory);
            }
        }
        if (self.timeout).is_some_and(|timeout| started.elapsed() >= timeout) {
            return Some(Limit::Timeout);
        }
        None
    }

    /// These options, their timeout shortened so that exploring ends by `deadline` (if any)
    /// at the latest: what a stage that must end with a larger budget explores with.
    pub fn until(self, deadline: Option<Instant>) -> ExploreOptions {
        let left = deadline.map(|d| d.saturating_duration_since(Instant::now()));
        let timeout = match (self.timeout, left) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        ExploreOptions { timeout, ..self }
    }
}

/// A flag that asks a running exploration to stop: set from anywhere (a signal handler, another
/// thread), looked at wherever the limits are.
///
/// It wraps a `&'static AtomicBool` so that options holding one stay `Clone`, `Debug` and
/// comparable (two interrupts are equal when they are the same flag).
#[derive(Clone, Copy, Debug)]
pub struct Interrupt(&'static AtomicBool);

impl Interrupt {
    /// The interrupt raised by setting `flag`.
    pub const fn new(flag: &'static AtomicBool) -> Interrupt {
        Interrupt(flag)
    }

    /// Whether the flag is raised.
    pub fn is_raised(self) -> bool {
        self.0.load(Ordering::Relaxed)
    }

    /// Raises the flag (what a signal handler does; tests call it directly).
    pub fn raise(self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

impl PartialEq for Interrupt {
    fn eq(&self, other: &Interrupt) -> bool {
        std::ptr::eq(self.0, other.0)
    }
}

impl Eq for Interrupt {}

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
            max_preemptions: None,
            first: None,
            interrupt: None,
            report_budget: None,
            jobs: 1,
        }
    }
}

/// Progress reports during exploration: called now and then with the number of graph nodes.
pub trait Progress {
    /// `nodes` graph nodes have been created so far.
    fn tick(&mut self, nodes: u64);

    /// The exploration met its first failing leaf (as its judge says, see [`explore_judging`]),
    /// reached by the choices `schedule`, and goes on: a user can be told at once, long
    /// before the tree is finished and labeled.
    fn failing_run(&mut self, schedule: &[Choice]) {
        let _ = schedule;
    }
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
    match search(program, options, progress, None, AtFailure::Tell)? {
        Search::Explored(tree) => Ok(tree),
        Search::Found { .. } => unreachable!("without a watcher no leaf is found"),
    }
}

/// [`explore_with_progress`], showing every leaf that has a verdict (complete, stuck or fault;
/// bounded leaves have none) to the judge `fails` as it is made; the first that fails is told
/// to `progress` ([`Progress::failing_run`]) with its run, and the exploration goes on to the
/// whole tree.
///
/// A front end that must judge every leaf it reaches before a limit cuts exploration (a
/// `--timeout` that would otherwise leave no time to judge them) judges them here, while the
/// tree grows; so does one that shows the first failure before the tree is finished.
pub fn explore_judging<P: Program>(
    program: &P,
    options: &ExploreOptions,
    progress: &mut dyn Progress,
    fails: &mut dyn FnMut(&Leaf) -> bool,
) -> Result<Tree, Fault> {
    match search(program, options, progress, Some(fails), AtFailure::Tell)? {
        Search::Explored(tree) => Ok(tree),
        Search::Found { .. } => unreachable!("a search that only tells of failures never stops"),
    }
}

/// What a search does at its first failing leaf.
#[derive(Clone, Copy, PartialEq, Eq)]
enum AtFailure {
    /// Stops there ([`Search::Found`]).
    Stop,
    /// Tells [`Progress::failing_run`], and goes on.
    Tell,
}

/// What a search for a failing leaf found.
pub enum Search {
    /// A leaf that `fails` accepted, with what the search had seen when it stopped there.
    Found {
        /// The failing leaf.
        leaf: Leaf,
        /// The run that reaches it: the thread of every step from the root.
        schedule: Vec<Choice>,
        /// Distinct states met before stopping.
        distinct_states: u64,
    },
    /// No leaf failed: the whole tree (partial, like [`explore`]'s, when a limit cut it).
    Explored(Tree),
}

impl Search {
    /// Whether some run fails: `Some(true)` when a leaf failed, `Some(false)` when the whole
    /// tree was explored and no leaf did, `None` when a limit (or a bound) left some run
    /// unjudged.
    pub fn fails(&self) -> Option<bool> {
        match self {
            Search::Found { .. } => Some(true),
            Search::Explored(tree) => {
                let complete = tree.partial.is_none() && tree.stats().bounded == 0;
                complete.then_some(false)
            }
        }
    }
}

/// Explores `program` until a leaf fails: every leaf with a verdict (complete, stuck or
/// fault; bounded leaves have none) is shown to `fails` as it is made, and the search stops
/// at the first for which it returns `true`, without building the rest of the tree.
///
/// This is the verdict-only exploration of a hunt, which needs to know *whether* a test fails,
/// not which races decide it: a failing test costs the states up to its first failing leaf,
/// and nothing is labeled.
pub fn search_failing<P: Program>(
    program: &P,
    options: &ExploreOptions,
    fails: &mut dyn FnMut(&Leaf) -> bool,
) -> Result<Search, Fault> {
    search(program, options, &mut (), Some(fails), AtFailure::Stop)
}

/// The most preemptions a [`scout`] allows a run.
pub const SCOUT_PREEMPTIONS: u32 = 3;

/// Looks for a failing run among those with few preemptions: [`search_failing`] restricted
/// to runs with at most 0, then 1, 2, ... [`SCOUT_PREEMPTIONS`] preemptions, each round within
/// `options`' state limit (its timeout and memory budget shared by all rounds). The run found, as thread choices from
/// the root, or `None`.
///
/// This is what a depth-first search cut by a limit has not done: it looks at the whole tree
/// below its first choices before any other thread's early choice, while most bugs take a
/// few preemptions anywhere in the run (the observation behind CHESS's iterative context
/// bounding). With the run found, [`ExploreOptions::first`] makes an exploration take it first.
pub fn scout<P: Program>(
    program: &P,
    options: &ExploreOptions,
    fails: &mut dyn FnMut(&Leaf) -> bool,
) -> Result<Option<Vec<Choice>>, Fault> {
    let started = Instant::now();
    for bound in 0..=SCOUT_PREEMPTIONS {
        let timeout = match options.timeout {
            Some(timeout) if started.elapsed() >= timeout => return Ok(None),
            Some(timeout) => Some(timeout - started.elapsed()),
            None => None,
        };
        let round = ExploreOptions {
            max_preemptions: Some(bound),
            first: None,
            timeout,
            ..options.clone()
        };
        match search(program, &round, &mut (), Some(&mut *fails), AtFailure::Stop)? {
            Search::Found { schedule, .. } => return Ok(Some(schedule)),
            // Out of time or memory: so would the next round be. A round cut at
            // `max_states` stops there too, but the next may reach a failure sooner (its
            // bound lets it leave a thread's long run earlier).
            Search::Explored(tree)
                if matches!(
                    tree.partial,
                    Some(Limit::Timeout | Limit::Memory | Limit::Interrupted)
                ) =>
            {
                return Ok(None)
            }
            Search::Explored(_) => {}
        }
    }
    Ok(None)
}

/// The search behind [`explore_with_progress`] and [`search_failing`]: the whole tree, or the
/// first leaf `watch` failed (and nothing else of the tree, which is cut short there).
fn search<'a, P: Program>(
    program: &'a P,
    options: &'a ExploreOptions,
    progress: &'a mut dyn Progress,
    watch: Option<&'a mut dyn FnMut(&Leaf) -> bool>,
    at_failure: AtFailure,
) -> Result<Search, Fault> {
    let probe = options.max_memory.map(|budget| budget.used);
    let memory_before = probe.map(|used| used());
    let (initial, base) = program.initial_state()?;
    // Canonical histories only tell states apart; no whole one is ever read from them.
    let (histories, canonical_root) = program.history_keys(&base).unwrap_or_else(|| {
        let tree: Box<dyn HistoryKeys> = Box::new(HistoryTree::new(History::new(), true));
        (tree, HistoryTree::ROOT.index())
    });
    let mut explorer = Explorer {
        program,
        options,
        tree: TreeBuilder::new(),
        histories,
        tags: Tags::new(options.max_preemptions.is_some()),
        real: HistoryTree::new(base, false),
        states: States::new(),
        children: Vec::new(),
        keys: Vec::new(),
        asked: Vec::new(),
        edges: Vec::new(),
        op_steps: Vec::new(),
        path: Vec::new(),
        members: Vec::new(),
        discovered: 0,
        partial: None,
        spun: false,
        started: Instant::now(),
        progress,
        watch: Watch {
            fails: watch,
            at_failure,
            found: None,
            failed_at: None,
        },
    };
    let root = explorer.run((initial, HistoryId::from_index(canonical_root)));
    // What the search holds at its end: the state table and the tree being built.
    let held = probe.map(|used| used());
    let Explorer {
        mut tree,
        states,
        histories,
        real,
        watch,
        partial,
        spun,
        started,
        ..
    } = explorer;
    let partial = partial.or(spun.then_some(Limit::Spin));
    let distinct_states = states.len() as u64;
    // Freed before the tree is finished, which then works out its counts: the peak is the
    // larger of the two moments, not their sum.
    drop((states, histories, real));
    if let Some((found, schedule)) = watch.found {
        // A finding needs its leaf only: the rest of the tree is not finished.
        let leaf = tree.take_leaf(found).expect("the watcher sees leaves only");
        return Ok(Search::Found {
            leaf,
            schedule,
            distinct_states,
        });
    }
    let facts = Exploration {
        partial,
        distinct_states,
        elapsed: started.elapsed(),
    };
    let mut tree = tree.finish(root, facts);
    // The counts worked out by `finish` are part of exploring.
    tree.elapsed = started.elapsed();
    tree.memory = probe
        .zip(held)
        .zip(memory_before)
        .map(|((used, held), before)| held.max(used()).saturating_sub(before));
    Ok(Search::Explored(tree))
}

/// What tells two states of the search apart: the program's state, and the path's history
/// with, in a bounded-preemption search, its turn (as one [`Tag`]).
type Key<S> = (S, Tag);

/// A path's history and turn as one number, so that a key outside a bounded search is no
/// larger than its state and history (the explorer stores one key per distinct state).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct Tag(u32);

/// How [`Tag`]s are made: the history's own number outside a bounded search, where the turn
/// is always [`Turn::ANY`]; in one, the number of the (history, turn) pair.
enum Tags {
    Histories,
    Turns(crate::interner::Interner<(HistoryId, Turn)>),
}

impl Tags {
    fn new(bounded: bool) -> Tags {
        match bounded {
            false => Tags::Histories,
            true => Tags::Turns(crate::interner::Interner::new()),
        }
    }

    fn tag(&mut self, history: HistoryId, turn: Turn) -> Tag {
        match self {
            Tags::Histories => Tag(history.index()),
            Tags::Turns(pairs) => Tag(pairs.intern((history, turn), || ())),
        }
    }

    fn parts(&self, tag: Tag) -> (HistoryId, Turn) {
        match self {
            Tags::Histories => (HistoryId::from_index(tag.0), Turn::ANY),
            Tags::Turns(pairs) => *pairs.key(tag.0),
        }
    }
}

/// A node of the search that is being explored.
///
/// Its pending children, the edges it has found and its step counts live on the explorer's
/// shared stacks (`children`, `edges`, `op_steps`), from the positions it records: the search
/// opens one per state, and a frame allocates only for loop edges (`loops`, `incoming`), which
/// few states have.
struct Frame {
    id: StateId,
    /// The history of the path that opened this state, as it happened.
    real: HistoryId,
    depth: usize,
    /// Position in depth-first discovery order (Tarjan's index).
    index: usize,
    /// Where this frame's children still to explore start on `Explorer::children`.
    children_from: usize,
    /// Where this frame's edges (explored children: the step and the child's node) start on
    /// `Explorer::edges`.
    edges_from: usize,
    /// The step to the child being explored in a frame of its own, whose node is not known yet.
    opened: Option<EventId>,
    /// Whether the path to this state is a prefix of [`ExploreOptions::first`].
    follows: bool,
    /// Graph mode: the smallest discovery index of a state of the unfinished component this
    /// node's subtree reaches (Tarjan's low-link); the node is its component's root when it
    /// stays at `index`. Path mode: unused.
    low: usize,
    /// Graph mode: whether an edge from this node's component, found so far, leaves it.
    exits: bool,
    /// Graph mode: steps back to a state on the path, by that state's depth (loop edges).
    /// Path mode: the continuations cut there (a node with no edge must have one).
    loops: Vec<(EventId, usize)>,
    /// Graph mode: loop edges into this state from nodes closed below it.
    incoming: Vec<(NodeId, EventId)>,
    /// Graph mode: length of the component stack when this node was opened.
    members_from: usize,
}

/// What a closed frame tells its parent.
struct Closed {
    node: NodeId,
    /// The node's component is finished (it was the root): the edge to it leaves the parent's.
    finished: bool,
    low: usize,
    exits: bool,
}

struct Explorer<'a, P: Program> {
    program: &'a P,
    options: &'a ExploreOptions,
    tree: TreeBuilder,
    /// Canonical histories, which tell states apart (see `history_tree.rs`).
    histories: Box<dyn HistoryKeys>,
    /// The (history, turn) pairs of the keys.
    tags: Tags,
    /// The histories as the paths took them, which leaves carry.
    real: HistoryTree,
    /// Every state met, with what the search knows of it (on the path, its node, ...).
    states: States<Key<P::State>>,
    /// Children still to explore, of every open frame (each frame's from its
    /// `children_from`), in reverse order: the next child is on top.
    children: Vec<(Arc<Event>, StateId)>,
    /// The children of the state being opened with their keys and hashes, between
    /// prefetching and looking up (see [`Explorer::open_frame`]); kept to reuse its room.
    keys: Vec<(Arc<Event>, Key<P::State>, KeyHash)>,
    /// The steps of the state being opened, asked before they are looked at (see
    /// [`Explorer::open_frame`]); kept to reuse its room.
    asked: Vec<Option<Step<P::State>>>,
    /// Explored children of every open frame (each frame's from its `edges_from`): the step
    /// and the child's node.
    edges: Vec<(EventId, NodeId)>,
    /// Steps taken by each thread in its current operation, along the path: one row of
    /// `threads` counts per open frame (and, while a state is being opened, its own on top).
    op_steps: Vec<u32>,
    /// The thread of every step from the root to the state being looked at: the run a
    /// failing leaf is reported with.
    path: Vec<Choice>,
    /// Graph mode: closed states whose strongly connected component is not finished yet, in
    /// the order they closed (Tarjan's stack), so a finished component pops its members.
    members: Vec<StateId>,
    /// States opened so far (the next discovery index).
    discovered: usize,
    partial: Option<Limit>,
    /// Set when a path ended at a program's [`Bound::Spin`]: the tree is then partial, but the
    /// exploration goes on (unlike [`Explorer::partial`], which stops it): a spinning turn
    /// cut from one path is no reason to leave the other paths unexplored.
    spun: bool,
    started: Instant,
    progress: &'a mut dyn Progress,
    /// Who sees the leaves with a verdict as they are made.
    watch: Watch<'a>,
}

/// Adds the leaves that have a verdict (complete, stuck, fault), showing each to a watcher
/// that may stop the search.
struct Watch<'a> {
    /// Says whether a leaf fails.
    fails: Option<&'a mut dyn FnMut(&Leaf) -> bool>,
    /// Whether the search stops at the first failing leaf or tells of it and goes on.
    at_failure: AtFailure,
    /// The first leaf `fails` failed, with the run that reaches it, when the search stops there.
    found: Option<(NodeId, Vec<Choice>)>,
    /// When the first failing leaf was told of, if it was.
    failed_at: Option<Instant>,
}

impl Watch<'_> {
    /// Adds `leaf`, reached by the steps of `path` and then, for a failing step, of `last`.
    fn leaf(
        &mut self,
        tree: &mut TreeBuilder,
        progress: &mut dyn Progress,
        leaf: Leaf,
        path: &[Choice],
        last: Option<Choice>,
    ) -> NodeId {
        let (node, fails) = tree.leaf_judged(leaf, |leaf| match &mut self.fails {
            Some(fails) => fails(leaf),
            None => false,
        });
        if fails && self.found.is_none() && self.failed_at.is_none() {
            let schedule: Vec<Choice> = path.iter().copied().chain(last).collect();
            match self.at_failure {
                AtFailure::Stop => self.found = Some((node, schedule)),
                AtFailure::Tell => {
                    self.failed_at = Some(Instant::now());
                    progress.failing_run(&schedule);
                }
            }
        }
        node
    }
}

impl<P: Program> Explorer<'_, P> {
    fn graph_mode(&self) -> bool {
        self.options.memoize
    }

    fn run(&mut self, (initial, history): (P::State, HistoryId)) -> NodeId {
        let threads = self.program.threads();
        let mut stack: Vec<Frame> = Vec::new();
        let root = self.tags.tag(history, Turn::ANY);
        let root = self.states.intern((initial, root));
        self.op_steps.resize(threads, 0);
        let follows = self.options.first.is_some();
        match self.open(root, HistoryTree::ROOT, 0, follows) {
            Ok(frame) => stack.push(frame),
            Err(node) => return node,
        }
        loop {
            if let Some((found, _)) = self.watch.found {
                return found;
            }
            let top = stack.last_mut().expect("the root frame is popped last");
            if self.children.len() > top.children_from {
                let (event, child) = self.children.pop().expect("a pending child");
                let step = self.tree.step_id(&event);
                let depth = top.depth + 1;
                let follows = top.follows
                    && (self.options.first.as_ref()).and_then(|first| first.get(top.depth))
                        == Some(&event.choice());
                self.path.push(event.choice());
                let visit = self.visit(child, top.real, depth, &event, follows);
                if !matches!(visit, Visit::Open(_)) {
                    self.path.pop();
                }
                let top = stack.last_mut().expect("frame");
                match visit {
                    Visit::Leaf(node) => {
                        top.exits = true;
                        self.edges.push((step, node));
                    }
                    Visit::Shared(node, open) => {
                        // A member of the component being built, or of a finished one.
                        match open {
                            Some(index) => top.low = top.low.min(index),
                            None => top.exits = true,
                        }
                        self.edges.push((step, node));
                    }
                    Visit::OnPath { depth, index } => {
                        top.low = top.low.min(index);
                        top.loops.push((step, depth));
                    }
                    Visit::Open(frame) => {
                        // The edge is added when the child's frame closes, with its node.
                        top.opened = Some(step);
                        stack.push(frame);
                    }
                }
                continue;
            }
            let frame = stack.pop().expect("frame");
            let depth = frame.depth;
            let closed = self.close(frame, &mut stack);
            if depth > 0 {
                self.path.pop();
            }
            match stack.last_mut() {
                Some(parent) => {
                    if closed.finished {
                        parent.exits = true;
                    } else {
                        parent.low = parent.low.min(closed.low);
                        parent.exits |= closed.exits;
                    }
                    let step = parent
                        .opened
                        .take()
                        .expect("a closed frame was its parent's opened child");
                    self.edges.push((step, closed.node));
                }
                None => return closed.node,
            }
        }
    }

    /// Looks at a child state: a leaf, shared, on the path, or to be opened.
    /// `step` is the step that reached it from the frame on top of the stack, whose path's
    /// history as it happened is `parent_real`.
    fn visit(
        &mut self,
        id: StateId,
        parent_real: HistoryId,
        depth: usize,
        step: &Arc<Event>,
        follows: bool,
    ) -> Visit {
        match self.states.slot(id) {
            Slot::OnPath { depth, index } => Visit::OnPath {
                depth: depth as usize,
                index: index as usize,
            },
            Slot::Member { node, index } => Visit::Shared(node, Some(index as usize)),
            Slot::Done(node) => Visit::Shared(node, None),
            Slot::Unexplored => {
                // The child's step counts, on top of the stack: its parent's, after `step`.
                let threads = self.program.threads();
                let parent = self.op_steps.len() - threads;
                self.op_steps.extend_from_within(parent..);
                let own = &mut self.op_steps[parent + threads + step.thread];
                *own = if step.ret.is_some() { 0 } else { *own + 1 };
                // Only a state opened here needs its path's history as it happened: most
                // children are shared or loop back.
                let real = self.real.after(parent_real, step);
                match self.open(id, real, depth, follows) {
                    Ok(frame) => Visit::Open(frame),
                    Err(leaf) => Visit::Leaf(leaf),
                }
            }
        }
    }

    /// Takes every thread's step from a state: a frame to explore, or a leaf right away. The
    /// state's step counts are the top row of `op_steps`: the frame keeps them, a leaf drops
    /// them.
    fn open(
        &mut self,
        id: StateId,
        real: HistoryId,
        depth: usize,
        follows: bool,
    ) -> Result<Frame, NodeId> {
        let opened = self.open_frame(id, real, depth, follows);
        if opened.is_err() {
            self.op_steps
                .truncate(self.op_steps.len() - self.program.threads());
        }
        opened
    }

    fn open_frame(
        &mut self,
        id: StateId,
        real: HistoryId,
        depth: usize,
        follows: bool,
    ) -> Result<Frame, NodeId> {
        // Leaves carry the history as this path took it.
        let history = real;
        if let Some(limit) = self.limit_hit() {
            self.partial.get_or_insert(limit);
            let bound = Bound::Stopped { limit };
            return Err(Self::bounded_leaf(
                &mut self.tree,
                &self.real,
                history,
                bound,
            ));
        }
        let (state, tag) = self.states.key(id);
        let (canonical, turn) = self.tags.parts(*tag);
        let children_from = self.children.len();
        let edges_from = self.edges.len();
        let mut all_done = true;
        // Whether a step was left out of a bounded-preemption search: the state may go on
        // where the search does not look, so it is neither a leaf nor a livelock.
        let mut pruned = false;
        // Whether the thread that moved last can go on: a switch away from it preempts it.
        let mut last_enabled = false;
        let counts = self.op_steps.len() - self.program.threads();
        let threads = self.program.threads();
        let bound = self.options.max_preemptions;
        let mut asked = std::mem::take(&mut self.asked);
        asked.clear();
        if self.program.goes_on_from_last_step() {
            let program = self.program;
            turn::ask_last_to_first(threads, turn, bound, &mut asked, |t| program.step(state, t));
        }
        for thread in turn.order(threads, bound) {
            if turn.prunes(thread, last_enabled, bound) {
                // Not even asked for: a step of real code can cost a whole execution. A thread
                // that cannot move here (blocked, done) leaves nothing out, which its readiness
                // tells without the step: else a thread that spins while the others wait for
                // it would be a cut state, not the livelock it is.
                if self.program.readiness(state, thread) == Readiness::Ready {
                    pruned = true;
                }
                continue;
            }
            let child_turn = turn.child(thread, last_enabled, bound);
            let steps_in_op = self.op_steps[counts + thread];
            let mut first = match asked.get_mut(thread).and_then(Option::take) {
                Some(step) => step,
                None => self.program.step(state, thread),
            };
            if turn.last() == Some(thread) {
                last_enabled = turn::goes_on(&first);
            }
            // Under weak memory a load may read one of several stores: each is a way of the
            // step, and a child of its own. The first step asked is way 0.
            let ways = match &first {
                Step::Moved { event, .. } => event.ways(),
                _ => 1,
            };
            for way in 0..ways {
                // Way 0 is the step asked above, taken from where it lies: a step is large (a
                // fault carries a whole event), and each move of one copies all of it.
                let step = match way {
                    0 => std::mem::replace(&mut first, Step::Done),
                    _ => self.program.step_way(state, thread, way),
                };
                let choice = Choice::new(thread, way);
                match step {
                    Step::Done => continue,
                    Step::Blocked => {}
                    Step::Moved { state: next, event } => {
                        if let Some(max) = self.options.max_steps {
                            if steps_in_op as usize >= max && event.ret.is_none() {
                                self.partial.get_or_insert(Limit::MaxSteps);
                                let bound = Bound::MaxSteps {
                                    thread,
                                    op: event.op.clone(),
                                    max,
                                };
                                let after = self.real.after(history, &event);
                                let leaf =
                                    Self::bounded_leaf(&mut self.tree, &self.real, after, bound);
                                let step = self.tree.step_id(&event);
                                self.edges.push((step, leaf));
                                all_done = false;
                                continue;
                            }
                        }
                        // The child's slot is asked for as soon as it is known, so that the
                        // wait for it overlaps the other threads' steps (see below).
                        let history =
                            HistoryId::from_index(self.histories.after(canonical.index(), &event));
                        let key = (next, self.tags.tag(history, child_turn));
                        let hash = self.states.prefetch(&key);
                        self.keys.push((event, key, hash));
                    }
                    Step::Fault { event, fault } => {
                        let leaf = self.watch.leaf(
                            &mut self.tree,
                            &mut *self.progress,
                            Leaf::fault(self.real.history(history), fault.clone()),
                            &self.path,
                            Some(choice),
                        );
                        let step = match event {
                            Some(event) => self.tree.event_id(*event),
                            None => self.tree.event_id(fault_event(thread, &fault)),
                        };
                        self.edges.push((step, leaf));
                    }
                    Step::Bounded { .. } | Step::Cut { .. } => {
                        let bound = match step {
                            Step::Cut { bound } => bound,
                            Step::Bounded { reason } => Bound::StepBudget { reason },
                            _ => unreachable!("matched above"),
                        };
                        match bound {
                            Bound::Spin { .. } => self.spun = true,
                            _ => {
                                self.partial.get_or_insert(bound.limit());
                            }
                        }
                        let leaf = Self::bounded_leaf(&mut self.tree, &self.real, history, bound);
                        let step = self.tree.event_id(bounded_event(thread));
                        self.edges.push((step, leaf));
                    }
                }
                all_done = false;
            }
        }
        self.asked = asked;
        if self.keys.is_empty() && self.edges.len() == edges_from {
            let leaf = if all_done {
                self.complete_leaf(state, history)
            } else {
                self.stuck_leaf(state, history)
            };
            let node = self
                .watch
                .leaf(&mut self.tree, &mut *self.progress, leaf, &self.path, None);
            if self.graph_mode() {
                Self::done(&mut self.states, self.program, id, node);
            }
            return Err(node);
        }
        // The children are looked up together, when they are found rather than each when the
        // search comes to it: a lookup in a table of hundreds of thousands of states waits on
        // memory, and with every child's slot asked for first, the waits overlap.
        let mut keys = std::mem::take(&mut self.keys);
        for (_, _, hash) in &keys {
            self.states.prefetch_entry(*hash);
        }
        for (event, key, hash) in keys.drain(..) {
            let child = self.states.intern_hashed(hash, key);
            self.children.push((event, child));
        }
        self.keys = keys;
        if follows {
            self.take_first(children_from, depth);
        }
        // The next child is taken from the top.
        self.children[children_from..].reverse();
        let index = self.discovered;
        self.discovered += 1;
        self.states.set(
            id,
            Slot::OnPath {
                depth: u32::try_from(depth).expect("paths shorter than 2^32 steps"),
                index: u32::try_from(index).expect("fewer than 2^32 states"),
            },
        );
        Ok(Frame {
            id,
            real,
            depth,
            index,
            children_from,
            edges_from,
            opened: None,
            follows,
            // Leaves found while opening (faults, bounds) are already finished children, and
            // a step left out of the search leads out of the component too.
            exits: self.edges.len() > edges_from || pruned,
            low: index,
            loops: Vec::new(),
            incoming: Vec::new(),
            members_from: self.members.len(),
        })
    }

    /// On the path of [`ExploreOptions::first`], moves the child that goes on along it (the
    /// opened state is at `depth`) to the front of the children pushed from `children_from`.
    fn take_first(&mut self, children_from: usize, depth: usize) {
        let Some(&next) = self
            .options
            .first
            .as_ref()
            .and_then(|first| first.get(depth))
        else {
            return;
        };
        let pushed = &mut self.children[children_from..];
        if let Some(at) = pushed.iter().position(|(event, ..)| event.choice() == next) {
            pushed[..=at].rotate_right(1);
        }
    }

    /// Finishes a frame: its node, and what its parent learns. `stack` holds its ancestors.
    fn close(&mut self, frame: Frame, stack: &mut [Frame]) -> Closed {
        let threads = self.program.threads();
        self.op_steps.truncate(self.op_steps.len() - threads);
        let closed = if self.graph_mode() {
            self.close_in_graph(frame, stack)
        } else {
            self.close_on_path(frame)
        };
        self.progress_tick();
        closed
    }

    /// Path mode: a node whose every continuation returns to a state above it is a livelock.
    fn close_on_path(&mut self, frame: Frame) -> Closed {
        // Nothing is shared: the next path to reach this state explores it again.
        self.states.set(frame.id, Slot::Unexplored);
        let node = if self.edges.len() == frame.edges_from {
            debug_assert!(!frame.loops.is_empty());
            let leaf = self.stuck_leaf(&self.states.key(frame.id).0, frame.real);
            self.watch
                .leaf(&mut self.tree, &mut *self.progress, leaf, &self.path, None)
        } else {
            self.node(frame.edges_from)
        };
        Closed {
            node,
            finished: true,
            low: usize::MAX,
            exits: true,
        }
    }

    /// Graph mode: the node joins the graph with its loop edges; when it is the root of its
    /// strongly connected component, the component is finished, and a component no edge
    /// leaves is a livelock: its root becomes a stuck leaf.
    fn close_in_graph(&mut self, frame: Frame, stack: &mut [Frame]) -> Closed {
        let is_root = frame.low == frame.index;
        // A component with an edge into it from a closed node of its own, or a loop, is
        // non-trivial; one that nothing leaves never ends: a livelock.
        let livelock = is_root && !frame.exits;
        let node = if livelock {
            // A livelock's edges stay inside it (none leaves): they are dropped with it.
            self.edges.truncate(frame.edges_from);
            let leaf = self.stuck_leaf(&self.states.key(frame.id).0, frame.real);
            self.watch
                .leaf(&mut self.tree, &mut *self.progress, leaf, &self.path, None)
        } else {
            self.node(frame.edges_from)
        };
        for (step, depth) in frame.loops {
            if depth == frame.depth {
                if !livelock {
                    self.tree.loop_edge(node, node, step);
                }
            } else {
                stack[depth].incoming.push((node, step));
            }
        }
        for (from, step) in frame.incoming {
            self.tree.loop_edge(from, node, step);
        }
        if is_root {
            for member in self.members.drain(frame.members_from..) {
                if let Slot::Member { node, .. } = self.states.slot(member) {
                    Self::done(&mut self.states, self.program, member, node);
                }
            }
            Self::done(&mut self.states, self.program, frame.id, node);
        } else {
            self.members.push(frame.id);
            let index = u32::try_from(frame.index).expect("fewer than 2^32 states");
            self.states.set(frame.id, Slot::Member { node, index });
        }
        Closed {
            node,
            finished: is_root,
            low: frame.low,
            exits: frame.exits,
        }
    }

    /// An inner node with the edges on `edges` from `from`, which it takes off.
    fn node(&mut self, from: usize) -> NodeId {
        let node = self.tree.node_of_steps(&self.edges[from..]);
        self.edges.truncate(from);
        node
    }

    fn complete_leaf(&self, state: &P::State, history: HistoryId) -> Leaf {
        complete_leaf(self.program, state, self.real.history(history))
    }

    fn stuck_leaf(&self, state: &P::State, history: HistoryId) -> Leaf {
        stuck_leaf(self.program, state, self.real.history(history))
    }

    /// A bounded leaf; over the two fields it needs, so that it can be made while the state
    /// being opened is borrowed from the state table.
    fn bounded_leaf(
        tree: &mut TreeBuilder,
        real: &HistoryTree,
        history: HistoryId,
        bound: Bound,
    ) -> NodeId {
        tree.leaf(Leaf::bounded(real.history(history), bound))
    }

    /// `id` is explored for good, into `node`: the program may let go of what only stepping
    /// from it needs ([`Program::retire`]).
    fn done(states: &mut States<Key<P::State>>, program: &P, id: StateId, node: NodeId) {
        states.set(id, Slot::Done(node));
        program.retire(&mut states.key_mut(id).0);
    }

    fn limit_hit(&self) -> Option<Limit> {
        if self.partial.is_some() {
            return self.partial;
        }
        if self
            .options
            .max_states
            .is_some_and(|max| self.tree.node_count() >= max)
            || self.discovered >= crate::states::MAX_OPENED
            || self.tree.edge_count() >= crate::graph::MAX_EDGES
        {
            return Some(Limit::MaxStates);
        }
        // Reading the clock costs little next to the steps of every thread that opening a
        // state takes, so look at every state: gating on the node count would skip it for
        // whole trees (nodes are added when frames close, so the count can stay put for long).
        if let Some(limit) = self.options.outer_limit(self.started) {
            return Some(limit);
        }
        match (self.options.report_budget, self.watch.failed_at) {
            (Some(budget), Some(failed)) if failed.elapsed() >= budget => Some(Limit::ReportBudget),
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

/// The leaf at `state`, where every operation returned: `path`, the history that reached it,
/// and the `final` part's.
pub(crate) fn complete_leaf<P: Program>(program: &P, state: &P::State, mut path: History) -> Leaf {
    match program.finish(state) {
        Ok(finals) => {
            path.events.extend(finals.events);
            Leaf::complete(path)
        }
        Err(fault) => Leaf::fault(path, fault),
    }
}

/// The leaf at `state`, where no thread can move: `path`, the history that reached it, with
/// the calls the blocked threads were about to make, marked stuck.
pub(crate) fn stuck_leaf<P: Program>(program: &P, state: &P::State, mut path: History) -> Leaf {
    let waiting = (0..program.threads())
        .filter_map(|t| program.why_blocked(state, t))
        .collect();
    for (thread, call) in program.blocked_calls(state) {
        path.call(thread, call);
    }
    path.stuck = true;
    Leaf::stuck(path, waiting)
}

/// What looking at a child state gave its parent.
enum Visit {
    /// A leaf, made now.
    Leaf(NodeId),
    /// An explored state's node; with its discovery index when its component is unfinished.
    Shared(NodeId, Option<usize>),
    /// A state on the current path: the edge loops back to it.
    OnPath {
        /// Its depth on the path.
        depth: usize,
        /// Its discovery index.
        index: usize,
    },
    /// The child needs a frame of its own.
    Open(Frame),
}

/// The edge to a fault leaf when the program reported no event for the failing step.
fn fault_event(thread: ThreadId, fault: &Fault) -> Event {
    Event::local(
        thread,
        fault.message.clone(),
        fault.span.unwrap_or_default(),
    )
}

/// The edge to a bounded leaf when a step ran out of its local budget.
fn bounded_event(thread: ThreadId) -> Event {
    Event::local(thread, "bounded".into(), Default::default())
}
