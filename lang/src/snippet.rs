//! Source text for diagnostics that stays readable when a line is very long.
//!
//! miette prints every line of a snippet whole. A generated or hostile input (200,000
//! parentheses on one line) would flood the terminal with one line of the error, so a
//! [`SnippetSource`] shows such a line as a window around the error instead.

use std::sync::Arc;

use miette::{MietteError, MietteSpanContents, SourceCode, SourceSpan, SpanContents};

/// Lines longer than this many bytes are shown as a window around the error.
pub const LONG_LINE: usize = 160;

/// How much of a long line to show before the error's start, in bytes.
const WINDOW_BEFORE: usize = 40;

/// A named source text for miette whose snippets window very long lines.
///
/// One shared pointer, so that the errors holding it stay small.
#[derive(Clone, Debug)]
pub struct SnippetSource(Arc<Named>);

#[derive(Debug)]
struct Named {
    name: String,
    text: String,
}

impl SnippetSource {
    /// The text of the file `name`.
    pub fn new(name: impl Into<String>, text: impl Into<String>) -> Self {
        SnippetSource(Arc::new(Named {
            name: name.into(),
            text: text.into(),
        }))
    }
}

impl SourceCode for SnippetSource {
    fn read_span<'a>(
        &'a self,
        span: &SourceSpan,
        context_lines_before: usize,
        context_lines_after: usize,
    ) -> Result<Box<dyn SpanContents<'a> + 'a>, MietteError> {
        let Named { name, text } = &*self.0;
        let text: &'a str = text;
        let inner = text.read_span(span, context_lines_before, context_lines_after)?;
        let has_long_line = inner
            .data()
            .split(|&b| b == b'\n')
            .any(|line| line.len() > LONG_LINE);
        // The context-free read gives the header's line and column: keep it exact.
        let contents = if has_long_line && (context_lines_before > 0 || context_lines_after > 0) {
            window(name, text, span.offset())
        } else {
            MietteSpanContents::new_named(
                name.clone(),
                inner.data(),
                *inner.span(),
                inner.line(),
                inner.column(),
                inner.line_count(),
            )
        };
        Ok(Box::new(contents))
    }
}

/// At most [`LONG_LINE`] bytes of the line holding `at`, starting a little before it.
fn window<'a>(name: &str, text: &'a str, at: usize) -> MietteSpanContents<'a> {
    let at = floor_boundary(text, at.min(text.len()));
    let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    let line_end = text[at..].find('\n').map_or(text.len(), |i| at + i);
    let start = floor_boundary(text, at.saturating_sub(WINDOW_BEFORE).max(line_start));
    let end = floor_boundary(text, (start + LONG_LINE).min(line_end)).max(at);
    // miette counts lines and columns from 0.
    let (line, column) = fgvt_tree::source::line_column(text, start);
    MietteSpanContents::new_named(
        name.to_owned(),
        &text.as_bytes()[start..end],
        (start, end - start).into(),
        line - 1,
        column - 1,
        text.lines().count(),
    )
}

/// The largest char boundary at or below `i`.
fn floor_boundary(text: &str, mut i: usize) -> usize {
    while !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;
    use miette::{Diagnostic, GraphicalReportHandler, GraphicalTheme};

    #[derive(Debug, thiserror::Error, Diagnostic)]
    #[error("oops")]
    struct Oops {
        #[source_code]
        src: SnippetSource,
        #[label("here")]
        at: SourceSpan,
    }

    fn render(text: &str, at: usize) -> String {
        let oops = Oops {
            src: SnippetSource::new("f.fgv", text.to_owned()),
            at: (at, 1).into(),
        };
        let mut out = String::new();
        GraphicalReportHandler::new_themed(GraphicalTheme::unicode_nocolor())
            .render_report(&mut out, &oops)
            .unwrap();
        out
    }

    #[test]
    fn short_lines_are_shown_whole_with_context() {
        let out = render("one\ntwo x\nthree\n", 8);
        assert!(out.contains("[f.fgv:2:5]"), "{out}");
        assert!(
            out.contains("one") && out.contains("two x") && out.contains("three"),
            "{out}"
        );
    }

    #[test]
    fn a_long_line_is_windowed_around_the_error_with_the_true_position() {
        let long = format!("{}x{}", "(".repeat(10_000), ")".repeat(10_000));
        let text = format!("first\n{long}\nlast\n");
        let at = 6 + 10_000;
        let out = render(&text, at);
        assert!(out.contains("[f.fgv:2:10001]"), "{out}");
        assert!(out.contains("(x)"), "{out}");
        assert!(
            out.len() < 2 * LONG_LINE + 400,
            "{} bytes:\n{out}",
            out.len()
        );
    }

    #[test]
    fn windows_never_split_a_character() {
        let long = "é".repeat(1_000);
        let out = render(&long, 501);
        assert!(out.contains("[f.fgv:1:"), "{out}");
    }
}
