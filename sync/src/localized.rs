//! What localizing a Rust test gives ([`Localized`]): what `test.rs` makes, and what the tree
//! drawings (`picture.rs`) and `main!`'s commands read.

use fgvt_labeling::cdrs::Cdrs;
use fgvt_labeling::labels::Labeling;
use fgvt_reports::LocalizeReport;
use fgvt_tree::Tree;

use crate::runtime::Runs;

/// What [`Test::localize`](crate::Test::localize) found: the report, with the tree and labels it describes.
pub struct Localized {
    /// The report, as `fgvt localize` makes it for a model.
    pub report: LocalizeReport,
    /// The interleaving tree.
    pub tree: Tree,
    /// Its labels.
    pub labeling: Labeling,
    /// Its critical data race sequences.
    pub cdrs: Cdrs,
    /// How the test's code ran to make them (every exploration `localize` made: under weak
    /// memory, the sequentially consistent one and the fix's trials too).
    pub runs: Runs,
}
