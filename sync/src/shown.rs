//! What an access shows in its event, kept raw until an event is built.
//!
//! Most steps of an execution replay the prefix of a schedule and become no event (only the
//! step that ends the schedule is a new edge), so an atomic access keeps what it read or wrote
//! as bits ([`Raw`]) and the text (`0 → 1 (fetch_add 1)`, `ptr#2 -> null`) is made only for
//! the step that is shown. Pointers are still *numbered* at every step, in the order the text
//! would show them ([`Shown::number`]): `ptr#n` is the n-th address to appear in the
//! execution, and it must name the same address in every event of a path, whichever
//! execution built the event.

use std::borrow::Cow;
use std::collections::HashMap;

use crate::fingerprint::split;

/// The execution's numbering of addresses (aligned down to their pointee), by first
/// appearance.
pub(crate) type Pointers = HashMap<usize, u32, foldhash::fast::RandomState>;

/// A value as an access read or wrote it.
#[derive(Clone, Copy)]
pub(crate) enum Raw {
    /// An integer's or boolean's bits, and how reports show them.
    Bits(u64, fn(u64) -> String),
    /// An address, and its pointee's alignment (the low bits below it are a tag).
    Ptr(usize, usize),
}

impl Raw {
    /// Gives the address a number, if it is one without.
    fn number(self, pointers: &mut Pointers) {
        if let Raw::Ptr(address, align) = self {
            number(pointers, address, align);
        }
    }

    /// The value as reports show it, addresses by their numbers in `pointers`.
    fn text(self, pointers: &Pointers) -> String {
        match self {
            Raw::Bits(bits, show) => show(bits),
            Raw::Ptr(address, align) => {
                let (base, _) = split(address, align);
                pointer_text(address, align, pointers.get(&base).copied())
            }
        }
    }
}

/// What one access shows in its event.
pub(crate) enum Shown {
    /// The value a load read or a store wrote.
    One(Raw),
    /// A read-modify-write: the value it found and the one it left, `old → new (how)`.
    Changed { old: Raw, new: Raw, how: Rmw },
    /// A compare-and-swap: the value it expected and the one it would write, `expected -> new`.
    Cas { expected: Raw, new: Raw },
    /// Text made by the access (a cell's value, a lock's mode).
    Text(Cow<'static, str>),
}

/// Which read-modify-write a [`Shown::Changed`] was.
#[derive(Clone, Copy)]
pub(crate) enum Rmw {
    /// `swap`: its operand is the value left.
    Swap,
    /// A `fetch_…` method, by name, and its operand.
    Fetch(&'static str, Raw),
}

impl Shown {
    /// Numbers the addresses it shows that have no number yet, in the order it shows them.
    pub(crate) fn number(&self, pointers: &mut Pointers) {
        match self {
            Shown::One(value) => value.number(pointers),
            Shown::Changed { old, new, how } => {
                old.number(pointers);
                new.number(pointers);
                if let Rmw::Fetch(_, operand) = how {
                    operand.number(pointers);
                }
            }
            Shown::Cas { expected, new } => {
                expected.number(pointers);
                new.number(pointers);
            }
            Shown::Text(_) => {}
        }
    }

    /// What the event shows, addresses by their numbers in `pointers` (see [`Shown::number`]).
    pub(crate) fn text(self, pointers: &Pointers) -> String {
        match self {
            Shown::One(value) => value.text(pointers),
            Shown::Changed { old, new, how } => {
                let (old, new) = (old.text(pointers), new.text(pointers));
                match how {
                    Rmw::Swap => format!("{old} → {new} (swap)"),
                    Rmw::Fetch(name, operand) => {
                        format!("{old} → {new} ({name} {})", operand.text(pointers))
                    }
                }
            }
            Shown::Cas { expected, new } => {
                format!("{} -> {}", expected.text(pointers), new.text(pointers))
            }
            Shown::Text(text) => text.into_owned(),
        }
    }
}

/// Gives the address `address` (aligned down to `align`) the next number in `pointers`,
/// unless it has one or is null; its number.
pub(crate) fn number(pointers: &mut Pointers, address: usize, align: usize) -> Option<u32> {
    let (base, _) = split(address, align);
    let next = u32::try_from(pointers.len()).unwrap_or(u32::MAX);
    (base != 0).then(|| *pointers.entry(base).or_insert(next))
}

/// `null`, `ptr#n` (or the address itself, unnumbered), and the tag after a `|`.
pub(crate) fn pointer_text(address: usize, align: usize, number: Option<u32>) -> String {
    let (base, tag) = split(address, align);
    let name = match (base, number) {
        (0, _) => "null".to_string(),
        (_, Some(n)) => format!("ptr#{n}"),
        (_, None) => format!("{base:#x}"),
    };
    if tag == 0 {
        name
    } else {
        format!("{name}|{tag}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decimal(bits: u64) -> String {
        bits.to_string()
    }

    #[test]
    fn addresses_are_numbered_in_the_order_they_are_shown() {
        let mut pointers = Pointers::default();
        let cas = Shown::Cas {
            expected: Raw::Ptr(0x1000, 8),
            new: Raw::Ptr(0x2000, 8),
        };
        cas.number(&mut pointers);
        // A later access shows the second address first and a tagged first one.
        let swap = Shown::Changed {
            old: Raw::Ptr(0x2000, 8),
            new: Raw::Ptr(0x1001, 8),
            how: Rmw::Swap,
        };
        swap.number(&mut pointers);
        assert_eq!(cas.text(&pointers), "ptr#0 -> ptr#1");
        assert_eq!(swap.text(&pointers), "ptr#1 → ptr#0|1 (swap)");
    }

    #[test]
    fn null_is_never_numbered_and_an_unnumbered_address_shows_itself() {
        let mut pointers = Pointers::default();
        Shown::One(Raw::Ptr(0, 8)).number(&mut pointers);
        assert!(pointers.is_empty());
        assert_eq!(Shown::One(Raw::Ptr(0, 8)).text(&pointers), "null");
        assert_eq!(Shown::One(Raw::Ptr(0x40, 8)).text(&pointers), "0x40");
    }

    #[test]
    fn a_fetch_shows_the_values_and_its_operand() {
        let pointers = Pointers::default();
        let fetch = Shown::Changed {
            old: Raw::Bits(0, decimal),
            new: Raw::Bits(1, decimal),
            how: Rmw::Fetch("fetch_add", Raw::Bits(1, decimal)),
        };
        assert_eq!(fetch.text(&pointers), "0 → 1 (fetch_add 1)");
        let text = Shown::Text("held (try_lock would block)".into());
        assert_eq!(text.text(&pointers), "held (try_lock would block)");
    }
}
