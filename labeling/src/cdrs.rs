//! Critical data race sequences (Theorem 3 of the FGVT paper).
//!
//! On a root-to-failing-leaf path of the labeled tree, the *decisive* nodes (branching nodes
//! labeled `WG`, `BG`, `G` or `WBG`) form a word over the labels. The path's races are a CDRS
//! when that word matches a [`Pattern`], by default `(WG|BG|WBG)*(BG|G|WBG)`.
//!
//! The pattern's DFA (see [`pattern`](crate::pattern)) is stepped along the depth-first walk,
//! so a prefix that can no longer match prunes the walk.
//!
//! Failing paths are grouped by their sequence of (label, racing statements): many leaves share
//! one CDRS. The unfolded tree can have astronomically many paths, so the walk enumerates at
//! most [`CdrsOptions::max_paths`] of them. A subtree with no decisive node below is not walked
//! leaf by leaf: all its failing leaves share the path's word, and they are counted at once.

use std::collections::HashMap;

use fgvt_tree::{Choice, Event, Interrupt, NodeId, Span, Tree};
use regex_automata::util::primitives::StateID;

use crate::labels::{Category, Label, Labeling};
use crate::pattern::Pattern;

/// Default for [`CdrsOptions::max_paths`].
pub const DEFAULT_MAX_PATHS: u64 = 200_000;

/// How to search for CDRS.
#[derive(Clone, Debug)]
pub struct CdrsOptions {
    /// Most paths (or bundles of paths sharing their whole word) to enumerate; beyond it the
    /// result is marked [`Cdrs::truncated`].
    pub max_paths: u64,
    /// Stops the walk when raised (Ctrl-C): the result is then marked [`Cdrs::truncated`] and
    /// [`Cdrs::interrupted`], with the groups found until then.
    pub interrupt: Option<Interrupt>,
}

impl Default for CdrsOptions {
    fn default() -> Self {
        CdrsOptions {
            max_paths: DEFAULT_MAX_PATHS,
            interrupt: None,
        }
    }
}

/// One competing next event of a race: an out-edge of a decisive node.
#[derive(Clone, Debug)]
pub struct Race {
    /// The step (thread, operation, kind, location, value, span).
    pub event: Event,
    /// The node the step leads to.
    pub child: NodeId,
    /// The category of that child's subtree: what happens if this event wins.
    pub outcome: Option<Category>,
}

/// A decisive node of a CDRS: a high-level data race ⟨Var, I_e, M_e⟩.
#[derive(Clone, Debug)]
pub struct RaceNode {
    /// The node (on the group's witness path).
    pub node: NodeId,
    /// Its label.
    pub label: Label,
    /// Its depth on the witness path: the witness's step number `step` leaves this node.
    pub step: usize,
    /// Every out-edge of the node: its children in thread order, then its loop edges (steps
    /// back to a state on the path) in thread order. Shared by every group whose witness
    /// passes the node (a tree of a few thousand decisive nodes can have tens of thousands of
    /// groups, each a copy of its nodes' steps otherwise).
    pub races: std::sync::Arc<[Race]>,
    /// Index in `races` of the edge the witness path took.
    pub taken: usize,
}

impl RaceNode {
    /// The source spans of the competing events, sorted, without duplicates.
    pub fn spans(&self) -> Vec<Span> {
        let mut spans: Vec<Span> = self.races.iter().map(|r| r.event.span).collect();
        spans.sort();
        spans.dedup();
        spans
    }
}

/// Failing paths that share one sequence of (label, racing statements).
#[derive(Clone, Debug)]
pub struct CdrsGroup {
    /// The word of decisive labels, e.g. `[WG, WG, G]`.
    pub labels: Vec<Label>,
    /// The decisive nodes of the witness path, one per label.
    pub nodes: Vec<RaceNode>,
    /// Failing leaves of the unfolded tree whose path has this CDRS (among those enumerated).
    pub failing_leaves: u64,
    /// The schedule from the root to one failing leaf ([`Tree::follow`] replays it).
    pub witness: Vec<Choice>,
    /// The failing leaf the witness reaches.
    pub witness_leaf: NodeId,
}

impl CdrsGroup {
    /// The word as text: `WG WG G`.
    pub fn pattern(&self) -> String {
        self.labels
            .iter()
            .map(|l| l.name())
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// Number of races (decisive nodes).
    pub fn races(&self) -> usize {
        self.labels.len()
    }
}

/// The CDRS of a labeled tree.
#[derive(Clone, Debug)]
pub struct Cdrs {
    /// Groups, best first (see [`rank`]).
    pub groups: Vec<CdrsGroup>,
    /// Whether the walk stopped at [`CdrsOptions::max_paths`] or at its interrupt: the groups
    /// are a sample.
    pub truncated: bool,
    /// Whether the walk stopped because [`CdrsOptions::interrupt`] was raised.
    pub interrupted: bool,
    /// Paths (or bundles of paths sharing their word) enumerated.
    pub paths: u64,
    /// Failing leaves reached whose word does not match the pattern. With the default pattern
    /// this is zero unless every leaf fails (then no race decides anything).
    pub unmatched_failing_leaves: u64,
}

impl Cdrs {
    /// Failing leaves covered by some group.
    pub fn covered_failing_leaves(&self) -> u64 {
        self.groups.iter().map(|g| g.failing_leaves).sum()
    }
}

/// The ranking key of a group, smallest first:
///
/// 1. groups whose last race is a **G** node come first: such a race pins the outcome both ways
///    (one winner leads only to passing runs, another only to failing ones), the most precise
///    localization there is; a last race labeled BG or WBG only says that one winner makes the
///    failure certain while another still leaves it open;
/// 2. then fewer races, the shorter explanation;
/// 3. then more failing leaves covered.
pub fn rank(group: &CdrsGroup) -> (bool, usize, std::cmp::Reverse<u64>) {
    let ends_in_g = group.labels.last() == Some(&Label::G);
    (
        !ends_in_g,
        group.labels.len(),
        std::cmp::Reverse(group.failing_leaves),
    )
}

/// Finds the CDRS of `tree`: groups of root-to-failing-leaf paths whose decisive word matches
/// `pattern`, ranked best first.
pub fn find_cdrs(
    tree: &Tree,
    labeling: &Labeling,
    pattern: &Pattern,
    options: &CdrsOptions,
) -> Cdrs {
    Walk::new(tree, labeling, pattern, options).run()
}

/// A node being walked, with the children still to try (their steps as the tree keeps them:
/// a frame is made for every node of every path walked, so it copies nothing).
struct Frame<'a> {
    node: NodeId,
    children: Vec<(&'a Event, NodeId)>,
    next: usize,
    /// DFA state after this node's own label (if decisive).
    state: StateID,
    decisive: bool,
    /// Whether entering this node pushed a race entry on the parent's behalf.
    pushed_race: bool,
}

struct Walk<'a> {
    tree: &'a Tree,
    labeling: &'a Labeling,
    pattern: &'a Pattern,
    max_paths: u64,
    /// Per node index: whether a decisive node lies strictly below.
    decisive_below: Vec<bool>,
    /// Threads chosen from the root to the current node.
    schedule: Vec<Choice>,
    /// Decisive nodes above the current node: (node, step, index of the edge taken).
    races: Vec<(NodeId, usize, usize)>,
    groups: Vec<CdrsGroup>,
    /// Groups by their key: per decisive node, its label and the id of its set of racing
    /// statement spans.
    by_key: HashMap<Vec<(Label, usize)>, usize>,
    /// Per decisive node met, the id of its set of racing statement spans: computed once, as
    /// every path through the node needs it.
    span_set_of: HashMap<NodeId, usize>,
    /// Per decisive node on a witness, its races, made once.
    races_of: HashMap<NodeId, std::sync::Arc<[Race]>>,
    /// Distinct sets of racing statement spans, numbered.
    span_sets: HashMap<Vec<Span>, usize>,
    paths: u64,
    truncated: bool,
    interrupt: Option<Interrupt>,
    interrupted: bool,
    unmatched: u64,
}

/// What entering a node gave.
enum Entered<'a> {
    /// Nothing to walk below (no failing leaf, dead pattern, or a finished bundle).
    Done,
    /// A frame to walk.
    Frame(Frame<'a>),
    /// The path budget is spent, or the walk was interrupted.
    Stop,
}

impl<'a> Walk<'a> {
    fn new(
        tree: &'a Tree,
        labeling: &'a Labeling,
        pattern: &'a Pattern,
        options: &CdrsOptions,
    ) -> Self {
        let mut decisive_below = vec![false; tree.graph.node_count()];
        for &node in labeling.post_order() {
            decisive_below[node.index()] = tree
                .children(node)
                .iter()
                .any(|&(_, c)| labeling.is_decisive(c) || decisive_below[c.index()]);
        }
        Walk {
            tree,
            labeling,
            pattern,
            max_paths: options.max_paths,
            decisive_below,
            schedule: Vec::new(),
            races: Vec::new(),
            groups: Vec::new(),
            by_key: HashMap::new(),
            span_set_of: HashMap::new(),
            races_of: HashMap::new(),
            span_sets: HashMap::new(),
            paths: 0,
            truncated: false,
            interrupt: options.interrupt,
            interrupted: false,
            unmatched: 0,
        }
    }

    fn run(mut self) -> Cdrs {
        let root = self.tree.root;
        let mut stack = match self.enter(root, self.pattern.start, false) {
            Entered::Frame(frame) => vec![frame],
            Entered::Done | Entered::Stop => Vec::new(),
        };
        // An explicit stack: paths can be thousands of steps long.
        while let Some(top) = stack.last_mut() {
            let next = top.children[top.next..]
                .iter()
                .position(|&(_, c)| self.labeling.failing_below(c) > 0);
            let Some(offset) = next else {
                let frame = stack.pop().expect("non-empty");
                self.leave(frame.pushed_race);
                continue;
            };
            let index = top.next + offset;
            top.next = index + 1;
            let (step, child) = top.children[index];
            let (node, state, decisive) = (top.node, top.state, top.decisive);
            if decisive {
                self.races.push((node, self.schedule.len(), index));
            }
            self.schedule.push(step.choice());
            match self.enter(child, state, decisive) {
                Entered::Frame(frame) => stack.push(frame),
                Entered::Done => self.leave(decisive),
                Entered::Stop => break,
            }
        }
        let mut groups = self.groups;
        // Stable: ties keep discovery (depth-first) order.
        groups.sort_by_key(rank);
        Cdrs {
            groups,
            truncated: self.truncated,
            interrupted: self.interrupted,
            paths: self.paths,
            unmatched_failing_leaves: self.unmatched,
        }
    }

    /// Undoes the path entries pushed when a node was entered.
    fn leave(&mut self, pushed_race: bool) {
        self.schedule.pop();
        if pushed_race {
            self.races.pop();
        }
    }

    fn enter(&mut self, node: NodeId, state: StateID, pushed_race: bool) -> Entered<'a> {
        if self.interrupt.is_some_and(Interrupt::is_raised) {
            self.truncated = true;
            self.interrupted = true;
            return Entered::Stop;
        }
        let failing = self.labeling.failing_below(node);
        if failing == 0 {
            return Entered::Done;
        }
        let decisive = self.labeling.is_decisive(node);
        let state = match self.labeling.label(node) {
            Some(label) if decisive => self.pattern.step(state, label),
            _ => state,
        };
        if self.pattern.is_dead(state) {
            self.unmatched = self.unmatched.saturating_add(failing);
            return Entered::Done;
        }
        if self.decisive_below[node.index()] {
            let children = self.tree.children(node);
            return Entered::Frame(Frame {
                node,
                children,
                next: 0,
                state,
                decisive,
                pushed_race,
            });
        }
        // No decisive node below: every failing leaf under `node` has this path's word.
        if self.paths >= self.max_paths {
            self.truncated = true;
            return Entered::Stop;
        }
        self.paths += 1;
        if self.pattern.accepts(state) {
            self.record(node, decisive, failing);
        } else {
            self.unmatched = self.unmatched.saturating_add(failing);
        }
        Entered::Done
    }

    /// Adds the `failing` leaves below `node` to the group of the current path.
    fn record(&mut self, node: NodeId, decisive: bool, failing: u64) {
        let mut nodes: Vec<(NodeId, usize)> =
            self.races.iter().map(|&(n, step, _)| (n, step)).collect();
        if decisive {
            nodes.push((node, self.schedule.len()));
        }
        let key: Vec<(Label, usize)> = nodes
            .iter()
            .map(|&(n, _)| (self.label(n), self.span_set(n)))
            .collect();
        if let Some(&g) = self.by_key.get(&key) {
            let group = &mut self.groups[g];
            group.failing_leaves = group.failing_leaves.saturating_add(failing);
            return;
        }
        // The first path of a group is its witness: extend it down to a failing leaf.
        let mut witness = self.schedule.clone();
        let mut taken: Vec<usize> = self.races.iter().map(|&(_, _, t)| t).collect();
        let mut at = node;
        while self.tree.leaf(at).is_none() {
            let children = self.tree.children(at);
            let Some(i) = children
                .iter()
                .position(|&(_, c)| self.labeling.failing_below(c) > 0)
            else {
                break;
            };
            if at == node && decisive {
                taken.push(i);
            }
            witness.push(children[i].0.choice());
            at = children[i].1;
        }
        let race_nodes = nodes
            .iter()
            .zip(taken)
            .map(|(&(n, step), taken)| self.race_node(n, step, taken))
            .collect();
        self.by_key.insert(key.clone(), self.groups.len());
        self.groups.push(CdrsGroup {
            labels: key.into_iter().map(|(l, _)| l).collect(),
            nodes: race_nodes,
            failing_leaves: failing,
            witness,
            witness_leaf: at,
        });
    }

    fn label(&self, node: NodeId) -> Label {
        self.labeling
            .label(node)
            .expect("a decisive node has a label")
    }

    /// The id of `node`'s set of racing statement spans (sorted, without duplicates).
    fn span_set(&mut self, node: NodeId) -> usize {
        if let Some(&id) = self.span_set_of.get(&node) {
            return id;
        }
        let mut spans: Vec<Span> = self
            .tree
            .successors(node)
            .iter()
            .map(|(e, _)| e.span)
            .collect();
        spans.sort();
        spans.dedup();
        let next = self.span_sets.len();
        let id = *self.span_sets.entry(spans).or_insert(next);
        self.span_set_of.insert(node, id);
        id
    }

    fn race_node(&mut self, node: NodeId, step: usize, taken: usize) -> RaceNode {
        let (tree, labeling) = (self.tree, self.labeling);
        let races = self.races_of.entry(node).or_insert_with(|| {
            (tree.successors(node).into_iter())
                .map(|(event, child)| Race {
                    event: event.clone(),
                    child,
                    outcome: labeling.category(child),
                })
                .collect()
        });
        let races = std::sync::Arc::clone(races);
        RaceNode {
            node,
            label: self.label(node),
            step,
            races,
            taken,
        }
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::labels::LeafOutcome;
    use crate::pattern::tests::default_matches;
    use crate::testing::dags::{build, random_dag};
    use crate::testing::{label, parse};

    #[test]
    fn finds_the_race_of_a_small_tree() {
        // root: T0 -> pass, T1 -> (T0 -> fail, T1 -> pass). Root WG, its second child G.
        let (tree, outcomes) = parse("(P (F P))");
        let l = label(&tree, &outcomes);
        let cdrs = find_cdrs(&tree, &l, &Pattern::default(), &CdrsOptions::default());
        assert!(!cdrs.truncated);
        assert_eq!(cdrs.groups.len(), 1);
        let g = &cdrs.groups[0];
        assert_eq!(g.pattern(), "WG G");
        assert_eq!(g.failing_leaves, 1);
        assert_eq!(g.witness, fgvt_tree::choice::threads(&[1, 0]));
        assert_eq!(tree.follow(&g.witness).unwrap().1, g.witness_leaf);
        assert_eq!(g.nodes[0].taken, 1);
        assert_eq!(g.nodes[0].races[0].outcome, Some(Category::Ok));
        assert_eq!(g.nodes[0].races[1].outcome, Some(Category::Mix));
        assert_eq!((g.nodes[0].step, g.nodes[1].step), (0, 1));
        assert_eq!(g.nodes[1].races[0].outcome, Some(Category::Err));
    }

    #[test]
    fn every_leaf_failing_means_no_cdrs() {
        let (tree, outcomes) = parse("((F F) F)");
        let l = label(&tree, &outcomes);
        let cdrs = find_cdrs(&tree, &l, &Pattern::default(), &CdrsOptions::default());
        assert!(cdrs.groups.is_empty());
        assert_eq!(cdrs.unmatched_failing_leaves, 3);
    }

    #[test]
    fn ranks_a_decisive_g_ending_before_a_shorter_bg_ending() {
        // Under a GG root: a BG node (its MIX child holds a G node), and a WG node over a G.
        // "BG" is the shortest word, but "WG G" and "BG G" end in a race that decides both ways.
        let (tree, outcomes) = parse("(((P F) F) (P (P F)))");
        let l = label(&tree, &outcomes);
        let cdrs = find_cdrs(&tree, &l, &Pattern::default(), &CdrsOptions::default());
        let words: Vec<String> = cdrs.groups.iter().map(|g| g.pattern()).collect();
        assert_eq!(words, ["BG G", "WG G", "BG"]);
    }

    #[test]
    fn ranks_fewer_races_first_then_more_failing_leaves() {
        // Three subtrees under a GG root: a G node with one failing leaf, a G node (other
        // statements: it has three threads) with two, and a WG node over a G node.
        let (tree, outcomes) = parse("((P F) (P F F) (P (P F)))");
        let l = label(&tree, &outcomes);
        let cdrs = find_cdrs(&tree, &l, &Pattern::default(), &CdrsOptions::default());
        let got: Vec<(String, u64)> = cdrs
            .groups
            .iter()
            .map(|g| (g.pattern(), g.failing_leaves))
            .collect();
        assert_eq!(
            got,
            [
                ("G".to_string(), 2),
                ("G".to_string(), 1),
                ("WG G".to_string(), 1)
            ]
        );
        assert_eq!(cdrs.groups[0].nodes[0].races.len(), 3);
    }

    #[test]
    fn stops_when_interrupted_with_what_it_found() {
        static RAISED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(true);
        static LOWERED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
        let (tree, outcomes) = parse("((P F) (P F) (P F))");
        let l = label(&tree, &outcomes);
        let with = |flag: &'static std::sync::atomic::AtomicBool| {
            let options = CdrsOptions {
                interrupt: Some(Interrupt::new(flag)),
                ..CdrsOptions::default()
            };
            find_cdrs(&tree, &l, &Pattern::default(), &options)
        };
        let whole = with(&LOWERED);
        assert!(!whole.truncated && !whole.interrupted);
        assert_eq!(whole.paths, 3);
        let stopped = with(&RAISED);
        assert!(stopped.truncated && stopped.interrupted);
        assert_eq!((stopped.paths, stopped.groups.len()), (0, 0));
    }

    #[test]
    fn stops_at_the_path_budget() {
        let (tree, outcomes) = parse("((P F) (P F) (P F))");
        let l = label(&tree, &outcomes);
        let all = find_cdrs(&tree, &l, &Pattern::default(), &CdrsOptions::default());
        assert!(!all.truncated);
        assert_eq!(all.paths, 3);
        let one = find_cdrs(
            &tree,
            &l,
            &Pattern::default(),
            &CdrsOptions {
                max_paths: 1,
                ..CdrsOptions::default()
            },
        );
        assert!(one.truncated);
        assert_eq!(one.paths, 1);
        assert_eq!(one.covered_failing_leaves(), 1);
    }

    proptest! {
        #[test]
        fn groups_match_and_cover_every_failing_leaf(dag in random_dag(2..6, 1..20)) {
            let (tree, outcomes) = build(dag);
            let root = tree.root;
            let l = label(&tree, &outcomes);
            let cdrs = find_cdrs(&tree, &l, &Pattern::default(), &CdrsOptions::default());
            prop_assert!(!cdrs.truncated);
            for g in &cdrs.groups {
                prop_assert!(default_matches(&g.labels), "{}", g.pattern());
                prop_assert_eq!(g.nodes.len(), g.labels.len());
                let (_, leaf) = tree.follow(&g.witness).unwrap();
                prop_assert_eq!(leaf, g.witness_leaf);
                prop_assert_eq!(outcomes[&leaf], LeafOutcome::Fail);
                for (node, &want) in g.nodes.iter().zip(&g.labels) {
                    prop_assert_eq!(node.label, want);
                    prop_assert!(l.is_decisive(node.node));
                    prop_assert_eq!(g.witness[node.step], node.races[node.taken].event.choice());
                    let (_, at) = tree.follow(&g.witness[..node.step]).unwrap();
                    prop_assert_eq!(at, node.node);
                }
            }
            let covered = cdrs.covered_failing_leaves();
            prop_assert_eq!(covered + cdrs.unmatched_failing_leaves, l.failing_leaves());
            if l.category(root) == Some(Category::Mix) {
                prop_assert_eq!(covered, l.failing_leaves());
            }
        }
    }
}
