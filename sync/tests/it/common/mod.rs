//! Helpers shared by fgvt-sync's integration tests. Each test file declares `mod common;` and
//! uses what it needs.
#![allow(dead_code)]

use std::collections::BTreeMap;

use fgvt_sync::report::{CoarseEvent, Tree};

/// How many unfolded runs end with each tuple of results (per thread, in order): what merging
/// equal states must not change.
pub fn results(tree: &Tree) -> BTreeMap<Vec<(usize, String)>, u64> {
    let mut runs = BTreeMap::new();
    for (_, leaf, paths) in tree.leaves() {
        let mut returns: Vec<(usize, String)> = leaf
            .history
            .events
            .iter()
            .filter_map(|e| match e {
                CoarseEvent::Return { thread, value } => Some((*thread, format!("{value:?}"))),
                CoarseEvent::Call { .. } => None,
            })
            .collect();
        // Per thread, in the order they returned.
        returns.sort_by_key(|(thread, _)| *thread);
        *runs.entry(returns).or_insert(0) += paths;
    }
    runs
}
