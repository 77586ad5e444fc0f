//! Source positions of events, independent of any particular modeling language.

use std::fmt;

use serde::{Deserialize, Serialize};

/// A byte range in one of the source files of a [`SourceMap`].
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize,
)]
pub struct Span {
    /// Index of the file in its [`SourceMap`].
    pub file: u32,
    /// First byte.
    pub start: u32,
    /// One past the last byte.
    pub end: u32,
}

impl Span {
    /// A span of `file` covering `start..end`.
    pub fn new(file: u32, start: usize, end: usize) -> Self {
        Span {
            file,
            start: start as u32,
            end: end as u32,
        }
    }
}

/// A resolved position: file name, 1-based line and column, and the text of that line.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Location {
    /// The file's name as given by the user (relative paths stay relative).
    pub file: String,
    /// 1-based line.
    pub line: usize,
    /// 1-based column, in characters.
    pub column: usize,
    /// The source text the span covers, trimmed to its first line.
    pub snippet: String,
    /// The whole source line the span starts on, without its line break.
    pub line_text: String,
}

impl fmt::Display for Location {
    /// `file:line:column`, as compilers and editors write positions.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}", self.file, self.line, self.column)
    }
}

/// The 1-based line and column (in characters) of byte `offset` of `text`, as compilers and
/// editors count them. `offset` is clamped to the text and must lie on a character boundary.
///
/// ```
/// assert_eq!(fgvt_tree::source::line_column("ab\ncé d", 6), (2, 3));
/// ```
pub fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    (
        before.matches('\n').count() + 1,
        before[line_start..].chars().count() + 1,
    )
}

/// Bytes that are not UTF-8 text: where the first bad byte is, to point a user at it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{line}:{column}: not UTF-8 text (byte 0x{byte:02x}); save the file as UTF-8")]
pub struct NotUtf8 {
    /// 1-based line of the bad byte.
    pub line: usize,
    /// 1-based column, in characters, of the bad byte.
    pub column: usize,
    /// Its offset in the file.
    pub offset: usize,
    /// The byte.
    pub byte: u8,
}

/// The text of a file's bytes, or where they stop being UTF-8.
///
/// ```
/// use fgvt_tree::source::decode_utf8;
/// assert_eq!(decode_utf8(b"ok".to_vec()).unwrap(), "ok");
/// let bad = decode_utf8(b"one\ntw\xffo".to_vec()).unwrap_err();
/// assert_eq!((bad.line, bad.column, bad.byte), (2, 3, 0xff));
/// ```
pub fn decode_utf8(bytes: Vec<u8>) -> Result<String, NotUtf8> {
    String::from_utf8(bytes).map_err(|e| {
        let offset = e.utf8_error().valid_up_to();
        let bytes = e.as_bytes();
        // Everything before `offset` is valid, so it can be read as text to count lines.
        let before = std::str::from_utf8(&bytes[..offset]).unwrap_or_default();
        let (line, column) = line_column(before, offset);
        NotUtf8 {
            line,
            column,
            offset,
            byte: bytes[offset],
        }
    })
}

/// The source files a program was built from, to turn [`Span`]s into [`Location`]s.
#[derive(Clone, Debug, Default)]
pub struct SourceMap {
    files: Vec<(String, String)>,
}

impl SourceMap {
    /// An empty map.
    pub fn new() -> Self {
        SourceMap::default()
    }

    /// Adds a file and returns its index for [`Span::file`].
    pub fn add(&mut self, name: impl Into<String>, text: impl Into<String>) -> u32 {
        self.files.push((name.into(), text.into()));
        (self.files.len() - 1) as u32
    }

    /// The name and text of file `index`.
    pub fn file(&self, index: u32) -> Option<(&str, &str)> {
        self.files
            .get(index as usize)
            .map(|(n, t)| (n.as_str(), t.as_str()))
    }

    /// Resolves `span` to file, line, column and text; `None` for an unknown file.
    pub fn locate(&self, span: Span) -> Option<Location> {
        let (name, text) = self.file(span.file)?;
        let start = (span.start as usize).min(text.len());
        let end = (span.end as usize).clamp(start, text.len());
        let line_start = text[..start].rfind('\n').map_or(0, |i| i + 1);
        let line_end = text[start..].find('\n').map_or(text.len(), |i| start + i);
        let (line, column) = line_column(text, start);
        let snippet = text[start..end]
            .lines()
            .next()
            .unwrap_or("")
            .trim()
            .to_string();
        Some(Location {
            file: name.to_string(),
            line,
            column,
            snippet,
            line_text: text[line_start..line_end]
                .trim_end_matches('\r')
                .to_string(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locates_line_column_and_snippet() {
        let mut map = SourceMap::new();
        let f = map.add("a.fgv", "line one\n  x = d[0];\n");
        let at = "line one\n  x = ".len();
        let loc = map.locate(Span::new(f, at, at + 4)).unwrap();
        assert_eq!((loc.line, loc.column), (2, 7));
        assert_eq!(loc.snippet, "d[0]");
        assert_eq!(loc.line_text, "  x = d[0];");
    }
}
