//! ANSI styling for the text renderer, and the words reports use for outcomes.

use fgvt_labeling::labels::Category;

/// Paints text with ANSI escapes, or leaves it alone when colour is off.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Style {
    color: bool,
}

impl Style {
    pub(crate) fn new(color: bool) -> Self {
        Style { color }
    }

    fn paint(self, code: &str, text: &str) -> String {
        if self.color && !text.is_empty() {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_string()
        }
    }

    pub(crate) fn bold(self, text: &str) -> String {
        self.paint("1", text)
    }

    pub(crate) fn dim(self, text: &str) -> String {
        self.paint("2", text)
    }

    pub(crate) fn red(self, text: &str) -> String {
        self.paint("31", text)
    }

    pub(crate) fn bold_red(self, text: &str) -> String {
        self.paint("1;31", text)
    }

    pub(crate) fn green(self, text: &str) -> String {
        self.paint("32", text)
    }

    pub(crate) fn bold_green(self, text: &str) -> String {
        self.paint("1;32", text)
    }

    pub(crate) fn yellow(self, text: &str) -> String {
        self.paint("33", text)
    }

    pub(crate) fn bold_yellow(self, text: &str) -> String {
        self.paint("1;33", text)
    }

    pub(crate) fn cyan(self, text: &str) -> String {
        self.paint("36", text)
    }

    /// An outcome word in its colour: failing red, passing green, mixed yellow.
    pub(crate) fn outcome(self, outcome: Option<Category>) -> String {
        let (word, _) = outcome_words(outcome);
        match outcome {
            Some(Category::Ok) => self.green(word),
            Some(Category::Err) => self.red(word),
            Some(Category::Mix) => self.yellow(word),
            None => self.dim(word),
        }
    }
}

/// The word for an outcome and what it means: `("MIX", "some runs fail")`.
pub(crate) fn outcome_words(outcome: Option<Category>) -> (&'static str, &'static str) {
    match outcome {
        Some(Category::Ok) => ("OK", "all runs pass"),
        Some(Category::Err) => ("ERR", "all runs fail"),
        Some(Category::Mix) => ("MIX", "some runs fail"),
        None => ("?", "no verdict below"),
    }
}
