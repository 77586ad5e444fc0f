//! The modeling language.
