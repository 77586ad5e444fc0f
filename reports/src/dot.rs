//! DOT (Graphviz) rendering of a [`TreeDrawing`], built with `graphviz-rust`.
//!
//! `graphviz-rust` prints identifiers as given, so every label, tooltip and colour goes through
//! [`quote`], which makes it one well-formed DOT string (`"`, `\` and line breaks escaped).

use graphviz_rust::dot_structures::{
    Attribute, Edge, EdgeTy, Graph, GraphAttributes, Id, Node, NodeId, Stmt, Subgraph, Vertex,
};
use graphviz_rust::printer::{DotPrinter, PrinterContext};

use crate::draw::style::{edge_look, legend, node_look};
use crate::draw::TreeDrawing;

/// The font of every text; Graphviz and browsers all have one of these.
const FONT: &str = "Helvetica,Arial,sans-serif";

/// Renders `drawing` as a DOT `digraph` (nodes coloured by label, a legend cluster).
pub fn render_dot(drawing: &TreeDrawing) -> String {
    dot_graph(drawing).print(&mut PrinterContext::default()) + "\n"
}

/// The `graphviz-rust` graph of `drawing`.
pub fn dot_graph(drawing: &TreeDrawing) -> Graph {
    let mut stmts = vec![
        Stmt::GAttribute(GraphAttributes::Graph(vec![
            attr("label", &caption(drawing)),
            attr("labelloc", "t"),
            attr("labeljust", "l"),
            attr("fontname", FONT),
            attr("fontsize", "14"),
            attr("rankdir", "TB"),
            attr("nodesep", "0.25"),
            attr("ranksep", "0.45"),
            attr("tooltip", &drawing.title),
        ])),
        Stmt::GAttribute(GraphAttributes::Node(vec![
            attr("fontname", FONT),
            attr("fontsize", "12"),
            attr("shape", "circle"),
            attr("fixedsize", "false"),
        ])),
        Stmt::GAttribute(GraphAttributes::Edge(vec![attr("fontname", FONT), attr("fontsize", "9"), attr("arrowsize", "0.6")])),
    ];
    for (i, node) in drawing.nodes.iter().enumerate() {
        let look = node_look(node);
        let style = if look.dashed { "filled,dashed" } else { "filled" };
        stmts.push(Stmt::Node(Node::new(
            node_id(&format!("n{i}")),
            vec![
                attr("label", &node.text),
                attr("shape", if look.boxed { "box" } else { "circle" }),
                attr("style", style),
                attr("fillcolor", look.fill),
                attr("color", look.stroke),
                attr("penwidth", &look.stroke_width.to_string()),
                attr("fontcolor", look.text),
                attr("tooltip", &node.tooltip),
            ],
        )));
    }
    for edge in &drawing.edges {
        let (color, width) = edge_look(edge);
        stmts.push(Stmt::Edge(Edge {
            ty: EdgeTy::Pair(vertex(&format!("n{}", edge.from)), vertex(&format!("n{}", edge.to))),
            attributes: vec![
                attr("label", &edge.label),
                attr("tooltip", &edge.label),
                attr("color", color),
                attr("fontcolor", color),
                attr("penwidth", &width.to_string()),
            ],
        }));
    }
    stmts.push(Stmt::Subgraph(legend_cluster()));
    Graph::DiGraph { id: Id::Plain("fgvt".to_string()), strict: false, stmts }
}

/// The legend: one sample node per entry, stacked by invisible edges.
fn legend_cluster() -> Subgraph {
    let mut stmts = vec![
        Stmt::Attribute(attr("label", "Legend")),
        Stmt::Attribute(attr("fontname", FONT)),
        Stmt::Attribute(attr("style", "rounded")),
        Stmt::Attribute(attr("color", "#999999")),
    ];
    let entries = legend();
    for (i, entry) in entries.iter().enumerate() {
        let text = if entry.text.is_empty() { entry.meaning.to_string() } else { format!("{}: {}", entry.text, entry.meaning) };
        let look_text = crate::draw::style::text_on(entry.fill);
        stmts.push(Stmt::Node(Node::new(
            node_id(&format!("legend{i}")),
            vec![
                attr("label", &text),
                attr("shape", "box"),
                attr("style", "filled,rounded"),
                attr("fillcolor", entry.fill),
                attr("color", entry.stroke),
                attr("penwidth", &entry.stroke_width.to_string()),
                attr("fontcolor", look_text),
                attr("fontsize", "10"),
                attr("width", "2.4"),
            ],
        )));
        if i > 0 {
            stmts.push(Stmt::Edge(Edge {
                ty: EdgeTy::Pair(vertex(&format!("legend{}", i - 1)), vertex(&format!("legend{i}"))),
                attributes: vec![attr("style", "invis")],
            }));
        }
    }
    Subgraph { id: Id::Plain("cluster_legend".to_string()), stmts }
}

/// Title, summary and notes, one per line.
fn caption(drawing: &TreeDrawing) -> String {
    let mut lines = vec![drawing.title.clone(), drawing.summary.clone()];
    lines.extend(drawing.notes.iter().cloned());
    lines.retain(|l| !l.is_empty());
    lines.join("\n")
}

fn attr(key: &str, value: &str) -> Attribute {
    Attribute(Id::Plain(key.to_string()), Id::Escaped(quote(value)))
}

fn node_id(name: &str) -> NodeId {
    NodeId(Id::Plain(name.to_string()), None)
}

fn vertex(name: &str) -> Vertex {
    Vertex::N(node_id(name))
}

/// `text` as one DOT double-quoted string.
///
/// A backslash is doubled so that Graphviz's escape sequences (`\N`, `\l`, ...) never trigger
/// by accident; a line break becomes `\n`, which Graphviz draws as a centred line break.
pub fn quote(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => {}
            c if c.is_control() => out.push(' '),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}
