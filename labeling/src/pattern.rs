//! Patterns over node labels: which words of decisive labels make a CDRS.
//!
//! A [`Pattern`] is a regular expression over label names, compiled by `regex-automata` to a
//! DFA over **one byte per label**: joined label names would let `G` match the tail of `WG`.
//! The CDRS walk steps the DFA along the tree, so a prefix that can no longer match prunes it.

use std::fmt;

use regex_automata::dfa::{dense, Automaton, StartKind};
use regex_automata::util::primitives::StateID;
use regex_automata::util::start;
use regex_automata::{Anchored, MatchKind};

use crate::labels::Label;

/// The pattern of Theorem 3, extended with `WBG` for n-ary nodes.
pub const DEFAULT_PATTERN: &str = "(WG|BG|WBG)*(BG|G|WBG)";

/// A regular expression over labels, compiled to a DFA.
///
/// The syntax: label names (`W`, `B`, `G`, `WG`, `BG`, `GG`, `WBG`; case-insensitive, so the
/// paper's `Wg` works, and `_` is ignored, so `W_g` works too), `.` for any label, grouping
/// `( )`, alternation `|`, repetition `*`, `+`, `?`, `{n}`, `{n,}`, `{n,m}`. Labels must be
/// separated by a space or an operator: `WG WG G`, not `WGWGG`. A pattern matches a word when it
/// matches the whole word.
#[derive(Clone, Debug)]
pub struct Pattern {
    source: String,
    dfa: dense::DFA<Vec<u32>>,
    pub(crate) start: StateID,
}

/// Why a pattern does not parse.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PatternError {
    /// A word that is not a label name.
    #[error("`{token}` at column {column} is not a label (expected W, B, G, WG, BG, GG or WBG, separated by spaces or operators)")]
    UnknownLabel {
        /// The word as written.
        token: String,
        /// 1-based column in the pattern.
        column: usize,
    },
    /// A character with no meaning in patterns.
    #[error("unexpected `{ch}` at column {column} (patterns use labels, `.`, `|`, `*`, `+`, `?`, `( )` and `{{n,m}}`)")]
    Unexpected {
        /// The character.
        ch: char,
        /// 1-based column in the pattern.
        column: usize,
    },
    /// The pattern is not a well-formed regular expression (unbalanced parentheses, ...).
    #[error("invalid pattern `{pattern}`: {reason}")]
    Invalid {
        /// The pattern as written.
        pattern: String,
        /// What the regular-expression compiler says.
        reason: String,
    },
}

/// The byte that stands for `label` in the DFA's alphabet.
fn symbol(label: Label) -> u8 {
    b'a' + label.index() as u8
}

impl Pattern {
    /// Parses and compiles `text`.
    pub fn parse(text: &str) -> Result<Pattern, PatternError> {
        let regex = translate(text)?;
        let invalid = |reason: String| PatternError::Invalid {
            pattern: text.to_string(),
            reason,
        };
        // `All` rather than leftmost-first: we ask "is the whole word in the language", and a
        // leftmost-first DFA may stop after a shorter preferred match (`a|ab` on `ab`).
        let config = dense::Config::new()
            .start_kind(StartKind::Anchored)
            .match_kind(MatchKind::All);
        let dfa = dense::Builder::new()
            .configure(config)
            .build(&regex)
            .map_err(|e| invalid(e.to_string()))?;
        let start = dfa
            .start_state(&start::Config::new().anchored(Anchored::Yes))
            .map_err(|e| invalid(e.to_string()))?;
        Ok(Pattern {
            source: text.to_string(),
            dfa,
            start,
        })
    }

    /// The pattern as written.
    pub fn as_str(&self) -> &str {
        &self.source
    }

    /// Whether the whole of `word` matches.
    pub fn matches(&self, word: &[Label]) -> bool {
        let state = word.iter().fold(self.start, |s, &l| self.step(s, l));
        self.accepts(state)
    }

    /// The DFA state after reading `label` in `state`.
    pub(crate) fn step(&self, state: StateID, label: Label) -> StateID {
        self.dfa.next_state(state, symbol(label))
    }

    /// Whether the word read so far, ending here, matches.
    pub(crate) fn accepts(&self, state: StateID) -> bool {
        // Dense DFAs report matches one byte late: the end-of-input transition says whether a
        // match ends exactly at the end of the word.
        self.dfa.is_match_state(self.dfa.next_eoi_state(state))
    }

    /// Whether no continuation of the word read so far can match.
    pub(crate) fn is_dead(&self, state: StateID) -> bool {
        self.dfa.is_dead_state(state)
    }
}

impl Default for Pattern {
    fn default() -> Self {
        Pattern::parse(DEFAULT_PATTERN).expect("the default pattern compiles")
    }
}

impl fmt::Display for Pattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.source)
    }
}

/// Translates a label pattern into a byte regex with one symbol per label.
fn translate(text: &str) -> Result<String, PatternError> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let column = i + 1;
        match c {
            c if c.is_whitespace() => i += 1,
            '|' | '*' | '+' | '?' | '(' | ')' => {
                out.push(c);
                i += 1;
            }
            '.' => {
                out.push_str("[a-g]");
                i += 1;
            }
            '{' => {
                let close = chars[i..].iter().position(|&c| c == '}').map(|p| i + p);
                let Some(close) = close else {
                    return Err(PatternError::Unexpected { ch: c, column });
                };
                if let Some(bad) =
                    (i + 1..close).find(|&j| !(chars[j].is_ascii_digit() || chars[j] == ','))
                {
                    return Err(PatternError::Unexpected {
                        ch: chars[bad],
                        column: bad + 1,
                    });
                }
                out.extend(&chars[i..=close]);
                i = close + 1;
            }
            c if c.is_ascii_alphabetic() || c == '_' => {
                let end = (i..chars.len())
                    .find(|&j| !(chars[j].is_ascii_alphabetic() || chars[j] == '_'))
                    .unwrap_or(chars.len());
                let token: String = chars[i..end].iter().collect();
                let name: String = token.chars().filter(|&c| c != '_').collect();
                let label =
                    Label::from_name(&name).ok_or(PatternError::UnknownLabel { token, column })?;
                out.push(symbol(label) as char);
                i = end;
            }
            _ => return Err(PatternError::Unexpected { ch: c, column }),
        }
    }
    Ok(out)
}

#[cfg(test)]
pub(crate) mod tests {
    use proptest::prelude::*;

    use super::*;

    /// An independent matcher for the default pattern `(WG|BG|WBG)*(BG|G|WBG)`.
    pub(crate) fn default_matches(word: &[Label]) -> bool {
        match word.split_last() {
            None => false,
            Some((last, init)) => {
                matches!(last, Label::BG | Label::G | Label::WBG)
                    && init
                        .iter()
                        .all(|l| matches!(l, Label::WG | Label::BG | Label::WBG))
            }
        }
    }

    #[test]
    fn one_symbol_per_label_keeps_g_apart_from_wg() {
        let g = Pattern::parse("G").unwrap();
        assert!(g.matches(&[Label::G]));
        assert!(!g.matches(&[Label::WG]));
        assert!(!g.matches(&[Label::BG]));
        let wg = Pattern::parse("WG").unwrap();
        assert!(wg.matches(&[Label::WG]));
        assert!(!wg.matches(&[Label::G]));
        assert!(!wg.matches(&[Label::W, Label::G]));
        let d = Pattern::default();
        assert!(d.matches(&[Label::G]));
        assert!(!d.matches(&[Label::WG]));
        assert!(d.matches(&[Label::WG, Label::WG, Label::G]));
        assert!(!d.matches(&[]));
        assert!(!d.matches(&[Label::GG]));
    }

    #[test]
    fn parses_paper_notation_and_operators() {
        let p = Pattern::parse("(Wg|Bg)*(Bg|G)").unwrap();
        assert!(p.matches(&[Label::WG, Label::BG]));
        let five = Pattern::parse("W_g{5} G").unwrap();
        assert!(five.matches(
            &[Label::WG; 5]
                .iter()
                .copied()
                .chain([Label::G])
                .collect::<Vec<_>>()
        ));
        assert!(!five.matches(&[Label::WG, Label::G]));
        let any = Pattern::parse(". +").unwrap();
        assert!(any.matches(&[Label::W, Label::GG]));
        // Alternatives of different lengths: a full match must not stop at the shorter one.
        let alt = Pattern::parse("WG | WG G").unwrap();
        assert!(alt.matches(&[Label::WG, Label::G]));
    }

    #[test]
    fn rejects_bad_patterns() {
        assert_eq!(
            Pattern::parse("WGG").unwrap_err(),
            PatternError::UnknownLabel {
                token: "WGG".into(),
                column: 1
            }
        );
        assert_eq!(
            Pattern::parse("G ; B").unwrap_err(),
            PatternError::Unexpected { ch: ';', column: 3 }
        );
        assert!(matches!(
            Pattern::parse("(WG").unwrap_err(),
            PatternError::Invalid { .. }
        ));
        assert!(matches!(
            Pattern::parse("G{x}").unwrap_err(),
            PatternError::Unexpected { ch: 'x', .. }
        ));
    }

    fn labels() -> impl Strategy<Value = Label> {
        prop::sample::select(Label::ALL.to_vec())
    }

    proptest! {
        #[test]
        fn dfa_agrees_with_a_hand_written_matcher(word in prop::collection::vec(labels(), 0..8)) {
            prop_assert_eq!(Pattern::default().matches(&word), default_matches(&word));
        }
    }
}
