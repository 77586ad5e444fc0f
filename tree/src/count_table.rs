//! The counts of an unfolded subtree ([`Counts`]), and those of every node of a tree, stored
//! compactly.
//!
//! Every node of a [`crate::Tree`] has the [`Counts`] of its unfolded subtree: seven numbers,
//! 56 bytes, as much as the rest of the node and its edges together. Most subtrees hold complete
//! leaves only (every subtree of a correct object's tree, most of a buggy one's), so a node keeps
//! its size, complete leaves and depth in 24 bytes, and the other kinds of leaves (stuck, fault,
//! bounded, cut) in a side table only when one of them is not zero.

use serde::Serialize;

use crate::leaf::{Leaf, LeafKind};

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
    /// Bounded leaves: paths cut by an operation's limits (`max_steps`, the step budget).
    pub bounded: u64,
    /// Cut leaves: states left unexplored because exploration stopped (see [`Leaf::is_cut`]).
    pub cut: u64,
    /// Longest path below, in steps.
    pub depth: u64,
}

impl Counts {
    pub(crate) fn leaf(kind: LeafKind) -> Counts {
        let mut c = Counts {
            nodes: 1,
            ..Counts::default()
        };
        *c.of_kind_mut(kind) = 1;
        c
    }

    /// The counts of the one-node subtree `leaf`: a bounded leaf that exploration never
    /// reached counts as cut.
    pub(crate) fn of_leaf(leaf: &Leaf) -> Counts {
        if leaf.is_cut() {
            Counts {
                nodes: 1,
                cut: 1,
                ..Counts::default()
            }
        } else {
            Counts::leaf(leaf.kind)
        }
    }

    fn of_kind_mut(&mut self, kind: LeafKind) -> &mut u64 {
        match kind {
            LeafKind::Complete => &mut self.complete,
            LeafKind::Stuck => &mut self.stuck,
            LeafKind::Fault => &mut self.fault,
            LeafKind::Bounded => &mut self.bounded,
        }
    }

    /// All leaves (saturating at `u64::MAX`, like every count: see [`Counts::saturated`]).
    pub fn leaves(&self) -> u64 {
        self.complete
            .saturating_add(self.stuck)
            .saturating_add(self.fault)
            .saturating_add(self.bounded)
            .saturating_add(self.cut)
    }

    /// Whether a count reached `u64::MAX` and stopped there: the unfolded tree is larger than
    /// the count says, which reports must say.
    pub fn saturated(&self) -> bool {
        // `leaves()` saturates when any kind of leaf does.
        self.nodes == u64::MAX || self.leaves() == u64::MAX
    }

    pub(crate) fn add_child(&mut self, child: &Counts) {
        self.nodes = self.nodes.saturating_add(child.nodes);
        self.complete = self.complete.saturating_add(child.complete);
        self.stuck = self.stuck.saturating_add(child.stuck);
        self.fault = self.fault.saturating_add(child.fault);
        self.bounded = self.bounded.saturating_add(child.bounded);
        self.cut = self.cut.saturating_add(child.cut);
        self.depth = self.depth.max(child.depth + 1);
    }
}

/// A node's counts as stored: the side table's entry, if any, is `others - 1`.
#[derive(Clone, Copy, Debug, Default)]
struct Packed {
    nodes: u64,
    complete: u64,
    /// The longest path below, at most `u32::MAX` (a path is shorter than the graph is large).
    depth: u32,
    /// 0 when every other kind of leaf counts 0; else one more than its entry in `others`.
    others: u32,
}

/// The counts of every node, by node index.
#[derive(Debug, Default)]
pub(crate) struct CountTable {
    packed: Vec<Packed>,
    /// Stuck, fault, bounded and cut leaves, of the nodes that have some.
    others: Vec<[u64; 4]>,
}

impl CountTable {
    /// An empty table with room for `nodes` nodes.
    pub(crate) fn with_capacity(nodes: usize) -> CountTable {
        CountTable {
            packed: Vec::with_capacity(nodes),
            others: Vec::new(),
        }
    }

    /// Appends the counts of the next node.
    pub(crate) fn push(&mut self, counts: Counts) {
        let rest = [counts.stuck, counts.fault, counts.bounded, counts.cut];
        let others = if rest == [0; 4] {
            0
        } else {
            self.others.push(rest);
            u32::try_from(self.others.len()).expect("fewer than 2^32 nodes")
        };
        self.packed.push(Packed {
            nodes: counts.nodes,
            complete: counts.complete,
            depth: u32::try_from(counts.depth).unwrap_or(u32::MAX),
            others,
        });
    }

    /// The counts of node `index`.
    pub(crate) fn get(&self, index: usize) -> Counts {
        let p = self.packed[index];
        let [stuck, fault, bounded, cut] = match p.others {
            0 => [0; 4],
            n => self.others[n as usize - 1],
        };
        Counts {
            nodes: p.nodes,
            complete: p.complete,
            stuck,
            fault,
            bounded,
            cut,
            depth: u64::from(p.depth),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::History;
    use crate::limit::{Bound, Limit};
    use proptest::prelude::*;

    fn counts() -> impl Strategy<Value = Counts> {
        // Mostly zeros among the rare kinds, as in real trees; any value at all otherwise.
        let rare = prop_oneof![3 => Just(0u64), 1 => any::<u64>()];
        (
            any::<u64>(),
            any::<u64>(),
            rare.clone(),
            rare.clone(),
            rare.clone(),
            rare,
            0u64..=u64::from(u32::MAX),
        )
            .prop_map(
                |(nodes, complete, stuck, fault, bounded, cut, depth)| Counts {
                    nodes,
                    complete,
                    stuck,
                    fault,
                    bounded,
                    cut,
                    depth,
                },
            )
    }

    proptest! {
        /// Every node's counts come back as they were pushed.
        #[test]
        fn counts_come_back_as_pushed(all in proptest::collection::vec(counts(), 0..64)) {
            let mut table = CountTable::default();
            for c in &all {
                table.push(*c);
            }
            for (i, c) in all.iter().enumerate() {
                prop_assert_eq!(table.get(i), *c);
            }
            let rare = all.iter().filter(|c| [c.stuck, c.fault, c.bounded, c.cut] != [0; 4]);
            prop_assert_eq!(table.others.len(), rare.count());
        }
    }

    #[test]
    fn a_node_is_24_bytes() {
        assert_eq!(std::mem::size_of::<Packed>(), 24);
    }

    #[test]
    fn counts_saturate_and_say_so() {
        let mut big = Counts::leaf(LeafKind::Complete);
        assert!(!big.saturated());
        big.complete = u64::MAX - 1;
        big.add_child(&Counts::leaf(LeafKind::Complete));
        assert_eq!(big.complete, u64::MAX);
        assert!(big.saturated(), "a count at the maximum is flagged");
        let mut sum = Counts::leaf(LeafKind::Stuck);
        sum.complete = u64::MAX - 1;
        sum.stuck = 5;
        assert_eq!(
            sum.leaves(),
            u64::MAX,
            "the sum saturates instead of wrapping"
        );
        assert!(sum.saturated());
        let mut cut = Counts::leaf(LeafKind::Complete);
        cut.cut = u64::MAX;
        assert!(cut.saturated(), "cut leaves count among the leaves");
    }

    #[test]
    fn a_state_never_explored_is_cut_and_a_long_path_bounded() {
        let history = History::new();
        let stopped = Leaf::bounded(
            history.clone(),
            Bound::Stopped {
                limit: Limit::MaxStates,
            },
        );
        let long = Leaf::bounded(
            history,
            Bound::MaxSteps {
                thread: 0,
                op: "spin".into(),
                max: 3,
            },
        );
        assert!(stopped.is_cut() && !long.is_cut());
        assert_eq!(
            (
                Counts::of_leaf(&stopped).cut,
                Counts::of_leaf(&stopped).bounded
            ),
            (1, 0)
        );
        assert_eq!(
            (Counts::of_leaf(&long).cut, Counts::of_leaf(&long).bounded),
            (0, 1)
        );
    }
}
