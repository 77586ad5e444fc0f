//! SVG rendering of a [`TreeDrawing`]: with Graphviz's `dot` when it is installed, otherwise
//! with a pure-Rust layout (`layout-rs`), so that SVG works on a fresh machine.

use std::path::Path;
use std::process::{Command, Stdio};

use graphviz_rust::cmd::{CommandArg, Format};

use crate::dot::render_dot;
use crate::draw::{canvas, TreeDrawing};

/// Which program lays the tree out.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SvgEngine {
    /// Graphviz's `dot`, found on `PATH`: the best layout.
    Graphviz,
    /// The builtin layout (`layout-rs`): needs nothing installed.
    Builtin,
}

impl SvgEngine {
    /// Graphviz when `dot` is on `PATH`, else the builtin layout.
    pub fn detect() -> SvgEngine {
        if graphviz_available() {
            SvgEngine::Graphviz
        } else {
            SvgEngine::Builtin
        }
    }

    /// The engine's name for messages: `graphviz` or `builtin`.
    pub fn name(self) -> &'static str {
        match self {
            SvgEngine::Graphviz => "graphviz",
            SvgEngine::Builtin => "builtin",
        }
    }
}

/// Why an SVG could not be made.
#[derive(Debug, thiserror::Error)]
pub enum SvgError {
    /// Graphviz's `dot` could not be run or failed.
    #[error("Graphviz `dot` failed: {0}")]
    Graphviz(String),
}

/// Whether Graphviz's `dot` is on `PATH` (checked by looking at `PATH`, without running it).
pub fn graphviz_available() -> bool {
    let Some(path) = std::env::var_os("PATH") else {
        return false;
    };
    std::env::split_paths(&path)
        .any(|dir| is_executable(&dir.join(if cfg!(windows) { "dot.exe" } else { "dot" })))
}

fn is_executable(path: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        path.metadata()
            .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    }
    #[cfg(not(unix))]
    {
        path.is_file()
    }
}

/// Renders `drawing` as a standalone SVG document with `engine`, made to open on the whole
/// drawing ([`fit_to_window`]).
pub fn render_svg(drawing: &TreeDrawing, engine: SvgEngine) -> Result<String, SvgError> {
    let svg = match engine {
        SvgEngine::Builtin => canvas::render(drawing),
        SvgEngine::Graphviz => graphviz_svg(&render_dot(drawing))?,
    };
    Ok(fit_to_window(&svg))
}

/// The zoom-and-pan script of [`fit_to_window`].
const VIEWER: &str = include_str!("draw/viewer.js");

/// `svg` made to open on the whole drawing, whatever its size: the root element keeps its
/// `viewBox` and takes the window (`width` and `height` 100%, aligned top and centre), so a
/// browser shows the root, the CDRS paths and the legend at once instead of the top-left
/// corner of a drawing thousands of pixels wide; a small script then zooms (wheel, `+`, `-`)
/// and pans (drag), and a double click (or `0`) fits it again. Embedded as an image, where
/// scripts do not run, the drawing fits its box.
pub fn fit_to_window(svg: &str) -> String {
    let Some(start) = find_root(svg) else {
        return svg.to_string();
    };
    let Some(len) = svg[start..].find('>') else {
        return svg.to_string();
    };
    let tag = &svg[start..start + len];
    if !tag.contains("viewBox=") {
        // Nothing to fit: the drawing keeps its size.
        return svg.to_string();
    }
    let mut root = set_attribute(tag, "width", "100%");
    root = set_attribute(&root, "height", "100%");
    root = set_attribute(&root, "preserveAspectRatio", "xMidYMin meet");
    let rest = &svg[start + len..];
    let close = rest.rfind("</svg>").unwrap_or(rest.len());
    let mut out = String::with_capacity(svg.len() + VIEWER.len() + 64);
    out.push_str(&svg[..start]);
    out.push_str(&root);
    out.push_str(&rest[..close]);
    out.push_str("<script type=\"application/ecmascript\"><![CDATA[\n");
    out.push_str(VIEWER);
    out.push_str("]]></script>\n");
    out.push_str(&rest[close..]);
    out
}

/// Where the root `<svg` element starts (after the XML declaration, doctype and comments).
fn find_root(svg: &str) -> Option<usize> {
    let mut from = 0;
    while let Some(at) = svg[from..].find("<svg") {
        let at = from + at;
        let next = svg[at + 4..].chars().next();
        if next.is_some_and(|c| c.is_whitespace() || c == '>') {
            return Some(at);
        }
        from = at + 4;
    }
    None
}

/// `tag` (an element's start tag, without its `>`) with attribute `name` set to `value`:
/// replaced where it is, else added at the end.
fn set_attribute(tag: &str, name: &str, value: &str) -> String {
    let mut search = 0;
    while let Some(found) = tag[search..].find(&format!("{name}=\"")) {
        let at = search + found;
        // A whole attribute name: preceded by white space (not `stroke-width=`).
        if tag[..at].ends_with(char::is_whitespace) {
            let value_start = at + name.len() + 2;
            if let Some(end) = tag[value_start..].find('"') {
                return format!(
                    "{}{value}{}",
                    &tag[..value_start],
                    &tag[value_start + end..]
                );
            }
        }
        search = at + name.len();
    }
    format!("{tag} {name}=\"{value}\"")
}

/// Runs `dot -Tsvg` on `dot`.
fn graphviz_svg(dot: &str) -> Result<String, SvgError> {
    // Fail early and clearly when `dot` is missing, rather than with a bare "not found".
    if Command::new("dot")
        .arg("-V")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_err()
    {
        return Err(SvgError::Graphviz(
            "`dot` is not on PATH (install Graphviz, or use the builtin engine)".into(),
        ));
    }
    let bytes = graphviz_rust::exec_dot(dot.to_string(), vec![CommandArg::Format(Format::Svg)])
        .map_err(|e| SvgError::Graphviz(e.to_string()))?;
    String::from_utf8(bytes).map_err(|e| SvgError::Graphviz(format!("output is not UTF-8: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_root_element_takes_the_window_and_keeps_its_view_box() {
        let svg = "<?xml version=\"1.0\"?>\n<!-- generated -->\n<svg width=\"3318pt\" height=\"2234pt\"\n viewBox=\"0.00 0.00 3318.00 2234.00\" xmlns=\"http://www.w3.org/2000/svg\">\n<rect stroke-width=\"2\" width=\"5\"/>\n</svg>\n";
        let fitted = fit_to_window(svg);
        let doc = roxmltree::Document::parse(&fitted).unwrap();
        let root = doc.root_element();
        assert_eq!(root.attribute("width"), Some("100%"));
        assert_eq!(root.attribute("height"), Some("100%"));
        assert_eq!(root.attribute("viewBox"), Some("0.00 0.00 3318.00 2234.00"));
        assert_eq!(root.attribute("preserveAspectRatio"), Some("xMidYMin meet"));
        // Only the root's size changed; the script comes last.
        let rect = root.children().find(|n| n.has_tag_name("rect")).unwrap();
        assert_eq!(rect.attribute("width"), Some("5"));
        assert_eq!(rect.attribute("stroke-width"), Some("2"));
        let script = root.last_element_child().unwrap();
        assert!(script.has_tag_name("script"));
        assert!(script
            .text()
            .unwrap_or_default()
            .contains("addEventListener('wheel'"));
    }

    #[test]
    fn a_drawing_without_a_view_box_is_left_as_it_is() {
        let svg = "<svg width=\"10\" height=\"10\"></svg>";
        assert_eq!(fit_to_window(svg), svg);
        assert_eq!(
            set_attribute("<svg a=\"1\"", "b", "2"),
            "<svg a=\"1\" b=\"2\""
        );
    }
}
