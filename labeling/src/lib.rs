//! Labels of the interleaving tree and its critical data race sequences (CDRS).
//!
//! * [`labels`]: every node's category (OK / ERR / MIX) and label (W, B, G, WG, BG, GG, WBG)
//!   from the outcomes of the leaves below it (Algorithm 2 of the FGVT paper);
//! * [`pattern`]: regular expressions over labels, compiled to a DFA;
//! * [`cdrs`]: the root-to-failing-leaf paths whose decisive labels match a pattern, grouped
//!   and ranked (Theorem 3);
//! * `testing`: hand-built trees with leaf outcomes, for tests and benchmarks.
//!
//! Leaf outcomes come from outside (the linearizability checker of `fgvt-checker`, or a test):
//! labeling needs only pass / fail / unknown per leaf.
//!
//! # Example
//!
//! A race between two threads where one winner always passes and the other always fails is a
//! `G` node, and the failing path through it is a CDRS of one race:
//!
//! ```
//! use fgvt_labeling::cdrs::{find_cdrs, CdrsOptions};
//! use fgvt_labeling::labels::Label;
//! use fgvt_labeling::pattern::Pattern;
//! use fgvt_labeling::testing;
//!
//! // The root races: its first child passes (P), its second fails (F).
//! let (tree, outcomes) = testing::parse("(P F)");
//! let labeling = testing::label(&tree, &outcomes);
//! assert_eq!(labeling.label(tree.root), Some(Label::G));
//! let cdrs = find_cdrs(&tree, &labeling, &Pattern::default(), &CdrsOptions::default());
//! assert_eq!(cdrs.groups.len(), 1);
//! assert_eq!(cdrs.groups[0].labels, vec![Label::G]);
//! ```

#![warn(missing_docs)]

pub mod cdrs;
pub mod labels;
pub mod pattern;
#[doc(hidden)]
pub mod testing;
