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

/// Renders `drawing` as a standalone SVG document with `engine`.
pub fn render_svg(drawing: &TreeDrawing, engine: SvgEngine) -> Result<String, SvgError> {
    match engine {
        SvgEngine::Builtin => Ok(canvas::render(drawing)),
        SvgEngine::Graphviz => graphviz_svg(&render_dot(drawing)),
    }
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
