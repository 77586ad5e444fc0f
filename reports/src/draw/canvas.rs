//! The builtin SVG engine: `layout-rs` places the nodes, and [`Canvas`], a `layout-rs` render
//! backend of our own, writes the SVG.
//!
//! Our own backend rather than `layout-rs`'s `SVGWriter`, because that one writes the
//! `properties` of shapes into the markup unescaped and has no tooltips: here every node and
//! edge is a `<g>` with a `<title>` (the tooltip browsers show), all text is escaped, and the
//! title and legend are drawn around the layout.

use std::fmt::Write as _;

use layout::core::base::Orientation;
use layout::core::color::Color;
use layout::core::format::{ClipHandle, RenderBackend};
use layout::core::geometry::Point;
use layout::core::style::StyleAttr;
use layout::std_shapes::render::get_shape_size;
use layout::std_shapes::shapes::{Arrow, Element, LineEndKind, ShapeKind};
use layout::topo::layout::VisualGraph;

use super::style::{edge_look, legend, node_look, text_on};
use super::TreeDrawing;
use crate::xml::escape;

/// Above this many nodes, `layout-rs`'s crossing optimizer is switched off: it is quadratic
/// and would take minutes, while the placement stays readable without it.
pub(crate) const OPTIMIZE_UP_TO: usize = 150;

/// `layout-rs` sizes text at one `font_size` per character, about twice what a sans-serif
/// character takes; shapes are sized with this unit and text drawn at [`NODE_FONT`] and
/// [`EDGE_FONT`] pixels.
const SIZE_UNIT: usize = 8;
const NODE_FONT: f64 = 13.0;
/// Gap between an edge and its label, in pixels.
const LABEL_GAP: f64 = 5.0;
const EDGE_FONT: f64 = 10.0;
const MULTILINE_FONT: f64 = 10.5;
const FONT: &str = "Helvetica, Arial, sans-serif";
const MARGIN: f64 = 10.0;
const LINE: f64 = 18.0;
const LEGEND_WIDTH: f64 = 250.0;

/// Lays `drawing` out with `layout-rs` and renders it as a standalone SVG document.
pub(crate) fn render(drawing: &TreeDrawing) -> String {
    let mut graph = VisualGraph::new(Orientation::TopToBottom);
    let mut canvas = Canvas::default();
    let mut handles = Vec::with_capacity(drawing.nodes.len());
    for (i, node) in drawing.nodes.iter().enumerate() {
        let look = node_look(node);
        let shape = if look.boxed {
            ShapeKind::new_box(&node.text)
        } else {
            ShapeKind::new_circle(&node.text)
        };
        let style = StyleAttr::new(
            color(look.stroke),
            look.stroke_width as usize,
            Some(color(look.fill)),
            4,
            SIZE_UNIT,
        );
        let size = get_shape_size(Orientation::TopToBottom, &shape, SIZE_UNIT, !look.boxed);
        let key = canvas.shapes.len();
        canvas.shapes.push(ShapeInfo {
            title: node.tooltip.clone(),
            text: look.text,
            dashed: look.dashed,
            font: NODE_FONT,
        });
        let element = Element::create_with_properties(
            shape,
            style,
            Orientation::TopToBottom,
            size,
            key.to_string(),
        );
        handles.push(graph.add_node(element));
        debug_assert_eq!(handles.len(), i + 1);
    }
    for edge in &drawing.edges {
        let (stroke, width) = edge_look(edge);
        let key = canvas.shapes.len();
        canvas.shapes.push(ShapeInfo {
            title: edge.label.clone(),
            text: stroke,
            dashed: false,
            font: EDGE_FONT,
        });
        let style = StyleAttr::new(color(stroke), width as usize, None, 0, SIZE_UNIT);
        let mut arrow = Arrow::simple(&edge.label);
        arrow.look = style;
        arrow.end = LineEndKind::Arrow;
        arrow.properties = Some(key.to_string());
        graph.add_edge(arrow, handles[edge.from], handles[edge.to]);
    }
    let optimize = drawing.nodes.len() <= OPTIMIZE_UP_TO;
    graph.do_it(false, !optimize, false, &mut canvas);
    canvas.finish(drawing)
}

fn color(web: &str) -> Color {
    Color::from_name(web).unwrap_or_else(|| Color::fast("black"))
}

/// What the canvas knows of a shape or edge, keyed by the `properties` string given to
/// `layout-rs` (its index here).
struct ShapeInfo {
    title: String,
    /// Colour of the text drawn in it.
    text: &'static str,
    dashed: bool,
    font: f64,
}

/// A `layout-rs` render backend writing escaped SVG with tooltips.
#[derive(Default)]
struct Canvas {
    shapes: Vec<ShapeInfo>,
    body: String,
    /// Edge labels, drawn over everything else.
    labels: String,
    /// Bottom-right corner of everything drawn, `(x, y)`.
    extent: (f64, f64),
    /// The shape whose text is drawn next (`layout-rs` draws a node's shape, then its text),
    /// with its `<g>` left open until then.
    open: Option<usize>,
}

impl Canvas {
    fn grow(&mut self, p: Point) {
        self.extent = (self.extent.0.max(p.x), self.extent.1.max(p.y));
    }

    fn info(&self, properties: &Option<String>) -> Option<usize> {
        properties
            .as_deref()
            .and_then(|p| p.parse().ok())
            .filter(|&i| i < self.shapes.len())
    }

    fn close(&mut self) {
        if self.open.take().is_some() {
            self.body.push_str("</g>\n");
        }
    }

    /// Opens the group of shape `key`, with its tooltip.
    fn open(&mut self, class: &str, key: Option<usize>) {
        self.close();
        let _ = write!(self.body, "<g class=\"{class}\">");
        if let Some(key) = key {
            let _ = write!(
                self.body,
                "<title>{}</title>",
                escape(&self.shapes[key].title)
            );
        }
        self.body.push('\n');
        self.open = key;
        if key.is_none() {
            // Nothing will close it through a text: close it at once after the shape.
            self.open = Some(usize::MAX);
        }
    }

    fn text_lines(&mut self, center: Point, text: &str, font: f64, fill: &str, weight: &str) {
        self.text_lines_anchored(center, text, font, fill, weight, "middle");
    }

    /// Lines of text around `at`: centered on it (`anchor` "middle") or starting there ("start").
    fn text_lines_anchored(
        &mut self,
        at: Point,
        text: &str,
        font: f64,
        fill: &str,
        weight: &str,
        anchor: &str,
    ) {
        let center = at;
        let lines: Vec<&str> = text.lines().collect();
        let top = center.y - (lines.len() as f64 - 1.0) * font * 0.6;
        let _ = write!(
            self.body,
            "<text x=\"{:.1}\" y=\"{:.1}\" font-size=\"{font}\" fill=\"{fill}\" font-weight=\"{weight}\" text-anchor=\"{anchor}\" dominant-baseline=\"central\">",
            center.x, top
        );
        for (i, line) in lines.iter().enumerate() {
            let dy = if i == 0 { 0.0 } else { font * 1.2 };
            let _ = write!(
                self.body,
                "<tspan x=\"{:.1}\" dy=\"{dy:.1}\">{}</tspan>",
                center.x,
                escape(line)
            );
        }
        self.body.push_str("</text>\n");
    }

    /// The document: title on top, the layout below it, the legend on the right.
    fn finish(mut self, drawing: &TreeDrawing) -> String {
        self.close();
        let mut header = vec![
            (drawing.title.as_str(), "bold"),
            (drawing.summary.as_str(), "normal"),
        ];
        header.extend(drawing.notes.iter().map(|n| (n.as_str(), "normal")));
        header.retain(|(l, _)| !l.is_empty());
        let top = MARGIN + header.len() as f64 * LINE + MARGIN;
        let legend = legend();
        let legend_height = LINE * 1.5 + legend.len() as f64 * 26.0 + MARGIN;
        let layout_width = self.extent.0 + MARGIN;
        let header_width = header
            .iter()
            .map(|(l, _)| l.chars().count() as f64 * 7.5)
            .fold(0.0, f64::max)
            + 2.0 * MARGIN;
        let width = (layout_width + LEGEND_WIDTH).max(header_width).ceil();
        let height = (top + self.extent.1.max(legend_height) + MARGIN).ceil();

        let mut svg = String::with_capacity(self.body.len() + 4096);
        let _ = write!(
            svg,
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
             <svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" viewBox=\"0 0 {width} {height}\" font-family=\"{FONT}\">\n\
             <title>{}</title>\n\
             <defs><marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" markerUnits=\"userSpaceOnUse\" markerWidth=\"9\" markerHeight=\"9\" orient=\"auto-start-reverse\"><path d=\"M 0 0 L 10 5 L 0 10 z\" fill=\"context-stroke\"/></marker></defs>\n\
             <rect x=\"0\" y=\"0\" width=\"{width}\" height=\"{height}\" fill=\"#ffffff\"/>\n",
            escape(&drawing.title)
        );
        for (i, (line, weight)) in header.iter().enumerate() {
            let size = if i == 0 { 15 } else { 12 };
            let _ = writeln!(
                svg,
                "<text x=\"{MARGIN}\" y=\"{:.1}\" font-size=\"{size}\" font-weight=\"{weight}\">{}</text>",
                MARGIN + (i as f64 + 0.8) * LINE,
                escape(line)
            );
        }
        let _ = writeln!(
            svg,
            "<g class=\"tree\" transform=\"translate(0 {top:.1})\">"
        );
        svg.push_str(&self.body);
        // Edge labels last, so that no edge crosses them out.
        svg.push_str(&self.labels);
        svg.push_str("</g>\n");
        let _ = writeln!(
            svg,
            "<g class=\"legend\" transform=\"translate({:.1} {top:.1})\">",
            layout_width + MARGIN
        );
        let _ = writeln!(
            svg,
            "<text x=\"0\" y=\"{:.1}\" font-size=\"13\" font-weight=\"bold\">Legend</text>",
            LINE * 0.8
        );
        for (i, entry) in legend.iter().enumerate() {
            let y = LINE * 1.5 + i as f64 * 26.0;
            let _ = writeln!(
                svg,
                "<rect x=\"2\" y=\"{y:.1}\" width=\"34\" height=\"20\" rx=\"4\" fill=\"{}\" stroke=\"{}\" stroke-width=\"{}\"/>\
                 <text x=\"19\" y=\"{:.1}\" font-size=\"11\" fill=\"{}\" text-anchor=\"middle\" dominant-baseline=\"central\">{}</text>\
                 <text x=\"46\" y=\"{:.1}\" font-size=\"12\" dominant-baseline=\"central\">{}</text>",
                entry.fill,
                entry.stroke,
                entry.stroke_width,
                y + 10.0,
                text_on(entry.fill),
                escape(entry.text),
                y + 10.0,
                escape(entry.meaning)
            );
        }
        svg.push_str("</g>\n</svg>\n");
        svg
    }
}

impl RenderBackend for Canvas {
    fn draw_rect(
        &mut self,
        xy: Point,
        size: Point,
        look: &StyleAttr,
        properties: Option<String>,
        _clip: Option<ClipHandle>,
    ) {
        let key = self.info(&properties);
        self.open("node", key);
        self.grow(xy.add(size));
        let dash = if key.is_some_and(|k| self.shapes[k].dashed) {
            " stroke-dasharray=\"5,3\""
        } else {
            ""
        };
        let _ = writeln!(
            self.body,
            "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{:.1}\" rx=\"{}\" fill=\"{}\" stroke=\"{}\" stroke-width=\"{}\"{dash}/>",
            xy.x,
            xy.y,
            size.x,
            size.y,
            look.rounded,
            web(look.fill_color),
            web(Some(look.line_color)),
            look.line_width
        );
        if key.is_none() {
            self.close();
        }
    }

    fn draw_line(
        &mut self,
        start: Point,
        stop: Point,
        look: &StyleAttr,
        _properties: Option<String>,
    ) {
        self.close();
        self.grow(start);
        self.grow(stop);
        let _ = writeln!(
            self.body,
            "<line x1=\"{:.1}\" y1=\"{:.1}\" x2=\"{:.1}\" y2=\"{:.1}\" stroke=\"{}\" stroke-width=\"{}\"/>",
            start.x,
            start.y,
            stop.x,
            stop.y,
            web(Some(look.line_color)),
            look.line_width
        );
    }

    fn draw_circle(
        &mut self,
        xy: Point,
        size: Point,
        look: &StyleAttr,
        properties: Option<String>,
    ) {
        let key = self.info(&properties);
        self.open("node", key);
        self.grow(xy.add(size.scale(0.5)));
        let _ = writeln!(
            self.body,
            "<ellipse cx=\"{:.1}\" cy=\"{:.1}\" rx=\"{:.1}\" ry=\"{:.1}\" fill=\"{}\" stroke=\"{}\" stroke-width=\"{}\"/>",
            xy.x,
            xy.y,
            size.x / 2.0,
            size.y / 2.0,
            web(look.fill_color),
            web(Some(look.line_color)),
            look.line_width
        );
        if key.is_none() {
            self.close();
        }
    }

    fn draw_text(&mut self, xy: Point, text: &str, look: &StyleAttr) {
        if text.is_empty() {
            return;
        }
        self.grow(xy);
        match self.open {
            // A node's own text: in its group, in the colour that reads on its fill.
            Some(key) if key < self.shapes.len() => {
                let (fill, mut font) = (self.shapes[key].text, self.shapes[key].font);
                if text.lines().count() > 1 {
                    // `layout-rs` gives a line one size unit of height: smaller text fits.
                    font = MULTILINE_FONT;
                }
                self.text_lines(xy, text, font, fill, "bold");
                self.close();
            }
            // An edge label: `layout-rs` draws it as the text of a connector node, which
            // carries none of our properties.
            _ => {
                self.close();
                let fill = web(Some(look.line_color));
                // `layout-rs` puts the label on the edge's middle point, so the edge would run
                // through it: the label starts just right of that point instead, on a white
                // ground that keeps it legible where other edges pass.
                let body = std::mem::take(&mut self.body);
                let at = Point::new(xy.x + LABEL_GAP, xy.y);
                let lines = text.lines().count().max(1) as f64;
                let width = text.lines().map(|l| l.chars().count()).max().unwrap_or(0) as f64
                    * EDGE_FONT
                    * 0.6;
                let height = lines * EDGE_FONT * 1.2;
                let _ = writeln!(
                    self.body,
                    "<g class=\"edge-label\"><rect x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{:.1}\" rx=\"2\" fill=\"#ffffff\" fill-opacity=\"0.85\"/>",
                    at.x - 1.0,
                    at.y - height / 2.0,
                    width + 2.0,
                    height
                );
                self.text_lines_anchored(at, text, EDGE_FONT, &fill, "normal", "start");
                self.grow(Point::new(at.x + width + 2.0, at.y));
                self.body.push_str("</g>\n");
                let label = std::mem::replace(&mut self.body, body);
                self.labels.push_str(&label);
            }
        }
    }

    fn draw_arrow(
        &mut self,
        path: &[(Point, Point)],
        dashed: bool,
        head: (bool, bool),
        look: &StyleAttr,
        properties: Option<String>,
        _text: &str,
    ) {
        self.close();
        if path.len() < 2 {
            return;
        }
        let key = self.info(&properties);
        let mut d = format!(
            "M {:.1} {:.1} C {:.1} {:.1}, {:.1} {:.1}, {:.1} {:.1}",
            path[0].0.x,
            path[0].0.y,
            path[0].1.x,
            path[0].1.y,
            path[1].0.x,
            path[1].0.y,
            path[1].1.x,
            path[1].1.y
        );
        for (a, b) in &path[2..] {
            let _ = write!(d, " S {:.1} {:.1}, {:.1} {:.1}", a.x, a.y, b.x, b.y);
        }
        for (a, b) in path {
            self.grow(*a);
            self.grow(*b);
        }
        let title = key
            .map(|k| format!("<title>{}</title>", escape(&self.shapes[k].title)))
            .unwrap_or_default();
        let _ = writeln!(
            self.body,
            "<g class=\"edge\">{title}<path d=\"{d}\" fill=\"none\" stroke=\"{}\" stroke-width=\"{}\"{}{}{}/></g>",
            web(Some(look.line_color)),
            look.line_width,
            if dashed { " stroke-dasharray=\"5,3\"" } else { "" },
            if head.0 { " marker-start=\"url(#arrow)\"" } else { "" },
            if head.1 { " marker-end=\"url(#arrow)\"" } else { "" },
        );
    }

    fn create_clip(&mut self, _xy: Point, _size: Point, _rounded_px: usize) -> ClipHandle {
        // Only records use clips, and the tree has none.
        0
    }
}

/// `#rrggbb` of a `layout-rs` colour (`#rrggbbaa`), `none` for no colour.
fn web(color: Option<Color>) -> String {
    match color {
        Some(c) => {
            let hex = c.to_web_color();
            hex.get(..7).unwrap_or("#000000").to_string()
        }
        None => "none".to_string(),
    }
}
