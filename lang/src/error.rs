//! Load-time diagnostics of the modeling language, rendered by miette.

use fgvt_tree::Span;
use miette::SourceSpan;

use crate::snippet::SnippetSource;

/// What kind of mistake a [`LangError`] reports, for programs that react to it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    /// The text does not follow the grammar.
    Syntax,
    /// A variable, field, function, record, operation, lock, label or object is unknown.
    UnknownName,
    /// A call or `new` has the wrong number of arguments.
    Arity,
    /// Something is defined twice.
    Duplicate,
    /// Any other misuse (`break` outside a loop, `cas` on a non-location, ...).
    Invalid,
}

/// A mistake in a model file, with the file, position and a hint.
#[derive(Debug, thiserror::Error, miette::Diagnostic)]
#[error("{message}")]
pub struct LangError {
    /// What kind of mistake.
    pub kind: ErrorKind,
    /// The headline, e.g. "unknown variable `haed`".
    pub message: String,
    /// The label under the caret (boxed strings keep the error small).
    pub label: Box<str>,
    /// A hint on how to fix it.
    #[help]
    pub help: Option<Box<str>>,
    /// Where, as an fgvt span (file index in the [`fgvt_tree::SourceMap`]).
    pub span: Span,
    /// The file, for rendering (shared: it keeps the error small).
    #[source_code]
    pub src: SnippetSource,
    /// Where, for rendering.
    #[label(primary, "{label}")]
    pub at: SourceSpan,
    /// For a duplicate: where the first definition is.
    #[label("first defined here")]
    pub first: Option<SourceSpan>,
}

/// A diagnostic before it is attached to its file (the parser and compiler produce these).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Diag {
    pub kind: ErrorKind,
    pub message: String,
    pub label: String,
    pub help: Option<String>,
    pub span: Span,
    /// A second place to point at (the first definition of a duplicate).
    pub first: Option<Span>,
}

impl Diag {
    /// A diagnostic of `kind` at `span`.
    pub fn new(
        kind: ErrorKind,
        span: Span,
        message: impl Into<String>,
        label: impl Into<String>,
    ) -> Self {
        Diag {
            kind,
            message: message.into(),
            label: label.into(),
            help: None,
            span,
            first: None,
        }
    }

    /// Adds a hint.
    pub fn help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }

    /// Adds a hint when there is one.
    pub fn maybe_help(mut self, help: Option<String>) -> Self {
        if help.is_some() {
            self.help = help;
        }
        self
    }

    /// Adds a hint unless there is one already (a more precise one, such as "did you mean").
    pub fn help_if_none(mut self, help: impl Into<String>) -> Self {
        if self.help.is_none() {
            self.help = Some(help.into());
        }
        self
    }

    /// Points at a second place too.
    pub fn first_defined(mut self, at: Span) -> Self {
        self.first = Some(at);
        self
    }

    /// Attaches the file the span points into.
    pub fn into_error(self, name: &str, text: &str) -> LangError {
        let range = |span: Span| {
            let start = (span.start as usize).min(text.len());
            let end = (span.end as usize).clamp(start, text.len());
            SourceSpan::from(start..end)
        };
        LangError {
            first: self.first.filter(|f| *f != self.span).map(range),
            kind: self.kind,
            message: self.message,
            label: self.label.into(),
            help: self.help.map(Into::into),
            span: self.span,
            src: SnippetSource::new(name, text),
            at: range(self.span),
        }
    }
}

/// Levenshtein distance between two short strings.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for j in 0..b.len() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != b[j]))
                .min(row[j] + 1)
                .min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}

/// The candidate closest to `name`, if it is close enough to be a likely typo.
pub(crate) fn suggest<'a>(
    name: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    // About one typo per three characters ("haed" -> "head" is two edits).
    let limit = name.chars().count().div_ceil(3).max(1);
    candidates
        .into_iter()
        .filter(|c| *c != name)
        .map(|c| (edit_distance(name, c), c))
        .filter(|(d, _)| *d <= limit)
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

/// A name that refers to nothing: `message` at `span`, labeled `label`, with "did you mean
/// `x`?" for the candidate closest to `name`, or else `otherwise` as the help. Every "unknown
/// …" diagnostic of the compiler is made here.
pub(crate) fn unknown_name<'a>(
    span: Span,
    message: String,
    label: &str,
    name: &str,
    candidates: impl IntoIterator<Item = &'a str>,
    otherwise: Option<String>,
) -> Diag {
    Diag::new(ErrorKind::UnknownName, span, message, label)
        .maybe_help(did_you_mean(name, candidates).or(otherwise))
}

/// "did you mean `x`?" for the closest candidate.
pub(crate) fn did_you_mean<'a>(
    name: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<String> {
    suggest(name, candidates).map(|c| format!("did you mean `{c}`?"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggests_close_names_only() {
        assert_eq!(edit_distance("haed", "head"), 2);
        assert_eq!(suggest("hed", ["head", "tail"]), Some("head"));
        assert_eq!(suggest("xyz", ["head", "tail"]), None);
    }
}
