//! The look of a drawn tree, shared by both renderers: colours by label as in Fig. 8 of the
//! FGVT paper, red failing leaves, highlighted CDRS races and witness paths.

use fgvt_labeling::labels::Label;

use super::{Collapsed, DrawEdge, DrawNode};

/// Fill of a label: white for `W`, black for `B`, and greys between them, lighter the more a
/// node leans to passing (`WG`) and darker the more it leans to failing (`BG`).
pub(crate) fn label_fill(label: Option<Label>) -> &'static str {
    match label {
        Some(Label::W) => "#ffffff",
        Some(Label::WG) => "#dcdcdc",
        Some(Label::GG) => "#b4b4b4",
        Some(Label::G) => "#8c8c8c",
        Some(Label::WBG) => "#6e6e6e",
        Some(Label::BG) => "#4a4a4a",
        Some(Label::B) => "#000000",
        None => "#f4f4ff",
    }
}

/// Red of failing leaves.
pub(crate) const FAILING: &str = "#d62728";
/// Outline of the races of a reported CDRS (the paper's yellow nodes).
pub(crate) const RACE: &str = "#f0b400";
/// Colour of witness paths.
pub(crate) const WITNESS: &str = "#d9480f";
/// Ordinary outlines and edges.
pub(crate) const INK: &str = "#333333";

/// How one node looks.
pub(crate) struct NodeLook {
    pub fill: &'static str,
    pub stroke: &'static str,
    pub stroke_width: u32,
    pub text: &'static str,
    pub dashed: bool,
    /// Collapsed nodes are boxes, the others circles.
    pub boxed: bool,
}

/// The look of `node`.
pub(crate) fn node_look(node: &DrawNode) -> NodeLook {
    let fill = if node.failing_leaf() {
        FAILING
    } else {
        label_fill(node.label)
    };
    let (stroke, stroke_width) = if node.race {
        (RACE, 5)
    } else if node.witness {
        (WITNESS, 3)
    } else {
        (INK, 1)
    };
    NodeLook {
        fill,
        stroke,
        stroke_width,
        text: text_on(fill),
        dashed: matches!(node.collapsed, Some(c) if c != Collapsed::Folded),
        // Text beyond the label (a leaf count, a failing leaf's results) reads in a box; a circle
        // would grow with the text.
        boxed: node.collapsed.is_some() || node.text.contains('\n'),
    }
}

/// Colour and width of an edge.
pub(crate) fn edge_look(edge: &DrawEdge) -> (&'static str, u32) {
    if edge.witness {
        (WITNESS, 3)
    } else {
        (INK, 1)
    }
}

/// Black or white text, whichever reads on `fill` (`#rrggbb`).
pub(crate) fn text_on(fill: &str) -> &'static str {
    let channel =
        |i: usize| u32::from_str_radix(fill.get(i..i + 2).unwrap_or("ff"), 16).unwrap_or(255);
    // Rec. 601 luma: good enough to choose between black and white.
    let luma = (299 * channel(1) + 587 * channel(3) + 114 * channel(5)) / 1000;
    if luma < 120 {
        "#ffffff"
    } else {
        "#000000"
    }
}

/// One line of the legend: a sample node look and what it means.
pub(crate) struct LegendEntry {
    pub fill: &'static str,
    pub stroke: &'static str,
    pub stroke_width: u32,
    pub text: &'static str,
    pub meaning: &'static str,
}

/// The legend, in the order it is drawn.
pub(crate) fn legend() -> Vec<LegendEntry> {
    let label = |l: Label, meaning| LegendEntry {
        fill: label_fill(Some(l)),
        stroke: INK,
        stroke_width: 1,
        text: l.name(),
        meaning,
    };
    vec![
        label(Label::W, "every leaf below passes"),
        label(Label::B, "every leaf below fails"),
        label(Label::G, "children OK and ERR"),
        label(Label::WG, "children OK and MIX"),
        label(Label::BG, "children ERR and MIX"),
        label(Label::GG, "children all MIX"),
        label(Label::WBG, "children OK, ERR and MIX"),
        LegendEntry {
            fill: FAILING,
            stroke: INK,
            stroke_width: 1,
            text: "B",
            meaning: "failing leaf",
        },
        LegendEntry {
            fill: "#ffffff",
            stroke: RACE,
            stroke_width: 5,
            text: "",
            meaning: "race of a reported CDRS",
        },
        LegendEntry {
            fill: "#ffffff",
            stroke: WITNESS,
            stroke_width: 3,
            text: "",
            meaning: "witness path of a CDRS",
        },
        LegendEntry {
            fill: label_fill(None),
            stroke: INK,
            stroke_width: 1,
            text: "?",
            meaning: "no verdict below",
        },
    ]
}
