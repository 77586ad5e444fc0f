//! The search for the smallest change of orderings that fixes a test that fails under weak
//! memory: which accesses to strengthen, or where a fence is missing.
//!
//! The changes, the order of trials and their limits are [`fgvt_memory::fix`]'s, which models
//! share (see `fgvt::pipeline::weak`); this module hands it the accesses the test's executions
//! met. What a trial costs and says is the caller's.

pub(crate) use fgvt_memory::fix::{trial_limits, Change, Found};

use crate::weak::SiteInfo;

/// Makes the trials for the accesses `sites` (see [`fgvt_memory::fix::search`]) until one
/// passes, at most `max` of them; `racing[i]` says whether site `i` is a racing statement of a
/// CDRS.
pub(crate) fn search(
    sites: &[SiteInfo],
    racing: &[bool],
    max: usize,
    passes: impl FnMut(&[(usize, Change)]) -> Option<bool>,
) -> Found {
    let kinds: Vec<_> = sites.iter().map(|s| (s.kind, s.order)).collect();
    fgvt_memory::fix::search(&kinds, racing, max, passes)
}
