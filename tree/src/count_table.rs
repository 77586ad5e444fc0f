//! The unfolded counts of every node of a tree, stored compactly.
//!
//! Every node of a [`crate::Tree`] has the [`Counts`] of its unfolded subtree: seven numbers,
//! 56 bytes, as much as the rest of the node and its edges together. Most subtrees hold complete
//! leaves only (every subtree of a correct object's tree, most of a buggy one's), so a node keeps
//! its size, complete leaves and depth in 24 bytes, and the other kinds of leaves (stuck, fault,
//! bounded, cut) in a side table only when one of them is not zero.

use crate::model::Counts;

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
}
