//! One choice of a schedule: which thread moves, and which way its step goes when it can go
//! more than one.
//!
//! Under sequential consistency a step is decided by its thread alone, and a schedule is the
//! list of threads that moved. Under weak memory a load may read one of several stores, so a
//! thread's step from a state can go several *ways*, each a child of the state: way 0 is the
//! one a sequentially consistent run takes (the latest store), ways 1, 2, … the others, in the
//! order the program numbers them. A [`Choice`] names one child; a schedule is a list of them.
//!
//! Written for people (and in JSON) a choice is its thread, `1`, when it is way 0, and
//! `1/2` otherwise: schedules of sequentially consistent runs read as before.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::history::ThreadId;

/// One step of a schedule: the thread that moves and which way its step goes.
///
/// Eight bytes, as a thread number alone was: schedules are copied for every witness a CDRS
/// search records.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Choice {
    thread: u32,
    /// Which of the step's ways (0 for a step that can go only one way).
    pub way: u32,
}

impl Choice {
    /// `thread`'s step, the way it goes under sequential consistency.
    pub fn thread(thread: ThreadId) -> Choice {
        Choice::new(thread, 0)
    }

    /// Way `way` of `thread`'s step (a thread number below 2³², as every test's are).
    #[inline]
    pub fn new(thread: ThreadId, way: u32) -> Choice {
        debug_assert!(u32::try_from(thread).is_ok(), "fewer than 2^32 threads");
        #[allow(clippy::cast_possible_truncation)]
        let thread = thread as u32;
        Choice { thread, way }
    }

    /// The thread that takes the step.
    #[inline]
    pub fn thread_id(self) -> ThreadId {
        self.thread as ThreadId
    }
}

impl From<ThreadId> for Choice {
    fn from(thread: ThreadId) -> Choice {
        Choice::thread(thread)
    }
}

impl fmt::Display for Choice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.way {
            0 => write!(f, "{}", self.thread),
            way => write!(f, "{}/{way}", self.thread),
        }
    }
}

/// A choice that is neither `T` nor `T/W` with numbers `T` and `W`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("`{0}` is not a schedule step: write a thread number (`1`), or a thread and a way (`1/2`)")]
pub struct ChoiceSyntaxError(pub String);

impl FromStr for Choice {
    type Err = ChoiceSyntaxError;

    fn from_str(text: &str) -> Result<Choice, ChoiceSyntaxError> {
        let bad = || ChoiceSyntaxError(text.to_string());
        let (thread, way) = match text.trim().split_once('/') {
            Some((thread, way)) => (thread, way.trim().parse().map_err(|_| bad())?),
            None => (text, 0),
        };
        let thread = thread.trim().parse().map_err(|_| bad())?;
        Ok(Choice::new(thread, way))
    }
}

impl Serialize for Choice {
    /// A number for way 0 (as schedules were before weak memory), `"T/W"` otherwise.
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self.way {
            0 => serializer.serialize_u64(u64::from(self.thread)),
            _ => serializer.collect_str(self),
        }
    }
}

impl<'de> Deserialize<'de> for Choice {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Choice, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Written {
            Thread(usize),
            Text(String),
        }
        match Written::deserialize(deserializer)? {
            Written::Thread(thread) => Ok(Choice::thread(thread)),
            Written::Text(text) => text.parse().map_err(serde::de::Error::custom),
        }
    }
}

/// Converts a list of thread numbers into the schedule that takes each thread's step its
/// sequentially consistent way.
pub fn threads(threads: &[ThreadId]) -> Vec<Choice> {
    threads.iter().copied().map(Choice::thread).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_choice_reads_and_writes_as_its_thread_or_thread_and_way() {
        for (text, choice) in [
            ("1", Choice::thread(1)),
            ("0/2", Choice::new(0, 2)),
            (" 3 / 1 ", Choice::new(3, 1)),
        ] {
            assert_eq!(text.parse::<Choice>(), Ok(choice));
            assert_eq!(choice.to_string().parse::<Choice>(), Ok(choice));
        }
        for bad in ["", "a", "1/", "/1", "1/2/3", "-1"] {
            assert!(bad.parse::<Choice>().is_err(), "{bad:?}");
        }
        let json = serde_json::to_string(&[Choice::thread(1), Choice::new(0, 2)]);
        assert_eq!(json.unwrap(), r#"[1,"0/2"]"#);
        let back: Vec<Choice> = serde_json::from_str(r#"[1,"0/2"]"#).unwrap();
        assert_eq!(back, vec![Choice::thread(1), Choice::new(0, 2)]);
    }
}
