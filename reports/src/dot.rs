//! DOT (Graphviz) rendering of a [`TreeDrawing`], built with `graphviz-rust`.
//!
//! `graphviz-rust` prints identifiers as given, so every label, tooltip and colour goes through
//! [`quote`], which makes it one well-formed DOT string (`"`, `\` and line breaks escaped).

use graphviz_rust::dot_structures::{
    Attribute, Edge, EdgeTy, Graph, GraphAttributes, Id, Node, NodeId, Stmt, Vertex,
};
use graphviz_rust::printer::{DotPrinter, PrinterContext};

use crate::draw::style::{edge_look, legend, node_look, text_on};
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
            Attribute(Id::Plain("label".to_string()), caption(drawing)),
            attr("labelloc", "t"),
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
        Stmt::GAttribute(GraphAttributes::Edge(vec![
            attr("fontname", FONT),
            attr("fontsize", "9"),
            attr("arrowsize", "0.6"),
        ])),
    ];
    for (i, node) in drawing.nodes.iter().enumerate() {
        let look = node_look(node);
        let style = if look.dashed {
            "filled,dashed"
        } else {
            "filled"
        };
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
            ty: EdgeTy::Pair(
                vertex(&format!("n{}", edge.from)),
                vertex(&format!("n{}", edge.to)),
            ),
            attributes: vec![
                attr("label", &edge.label),
                attr("tooltip", &edge.label),
                attr("color", color),
                attr("fontcolor", color),
                attr("penwidth", &width.to_string()),
            ],
        }));
    }
    stmts.push(Stmt::Node(Node::new(
        node_id("legend"),
        vec![
            Attribute(Id::Plain("label".to_string()), legend_table()),
            attr("shape", "plaintext"),
            attr("margin", "0"),
        ],
    )));
    Graph::DiGraph {
        id: Id::Plain("fgvt".to_string()),
        strict: false,
        stmts,
    }
}

/// The legend: an HTML-like table of sample nodes and their meanings.
///
/// One node, so that Graphviz places it as a compact box beside the tree. Written without
/// whitespace between tags: `graphviz-rust`'s parser ends an HTML string at `> >`.
fn legend_table() -> Id {
    let mut html =
        String::from("<<table border=\"0\" cellborder=\"0\" cellspacing=\"3\" cellpadding=\"3\">");
    html.push_str("<tr><td colspan=\"2\" align=\"left\"><b>Legend</b></td></tr>");
    for entry in legend() {
        // Graphviz rejects an empty `<font>`.
        let sample = if entry.text.is_empty() {
            String::new()
        } else {
            format!(
                "<font color=\"{}\" point-size=\"10\">{}</font>",
                text_on(entry.fill),
                crate::xml::escape(entry.text)
            )
        };
        html.push_str(&format!(
            "<tr><td bgcolor=\"{}\" color=\"{}\" border=\"{}\" width=\"36\">{sample}</td><td align=\"left\"><font point-size=\"11\">{}</font></td></tr>",
            entry.fill,
            entry.stroke,
            entry.stroke_width.min(3),
            crate::xml::escape(entry.meaning)
        ));
    }
    html.push_str("</table>>");
    Id::Html(html)
}

/// Title, summary and notes, one per line (centred: Graphviz 2.43 crops long `\l` lines).
fn caption(drawing: &TreeDrawing) -> Id {
    let mut lines = vec![drawing.title.as_str(), drawing.summary.as_str()];
    lines.extend(drawing.notes.iter().map(String::as_str));
    lines.retain(|l| !l.is_empty());
    Id::Escaped(quote(&lines.join("\n")))
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
    format!("\"{}\"", escape(text))
}

/// The inside of [`quote`]: `text` escaped for a DOT double-quoted string.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
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
    out
}
