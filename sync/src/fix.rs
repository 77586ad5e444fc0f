//! The search for the smallest change of orderings that fixes a test that fails under weak
//! memory: which accesses to strengthen, or where a fence is missing.
//!
//! The changes and the order of trials are [`fgvt_memory::fix`]'s, which models share (see
//! `fgvt::pipeline::weak`); this module hands it the accesses the test's executions met.
//! What a trial costs and says is the caller's.

pub(crate) use fgvt_memory::fix::Change;

use crate::weak::SiteInfo;

/// Every trial, in the order the search makes them (see [`fgvt_memory::fix::trials`]), for the
/// accesses `sites`; `racing[i]` says whether site `i` is a racing statement of a CDRS.
pub(crate) fn trials(sites: &[SiteInfo], racing: &[bool]) -> Vec<Vec<(usize, Change)>> {
    let kinds: Vec<_> = sites.iter().map(|s| (s.kind, s.order)).collect();
    fgvt_memory::fix::trials(&kinds, racing)
}
