//! The assertions loom's and shuttle's test bodies make at the end of every execution (fgvt
//! checks the same runs against a sequential spec instead).
//!
//! A failed assertion is also noted in this process ([`broken`]): a check that panics is then
//! known to have found a bug in the object, not to have given up on its own (loom's "maximum
//! number of branches" is a panic too), whatever the tool makes of the panic's message.

use std::sync::atomic::{AtomicBool, Ordering};

/// Set when an assertion of this module fails; cleared by [`forget_broken`].
static BROKEN: AtomicBool = AtomicBool::new(false);

/// Whether an assertion of this module failed in this process since [`forget_broken`].
pub fn broken() -> bool {
    BROKEN.load(Ordering::Relaxed)
}

/// Forgets earlier failed assertions, before a check starts.
pub fn forget_broken() {
    BROKEN.store(false, Ordering::Relaxed);
}

/// Notes that an assertion failed, and panics with `message`.
fn fail(message: String) -> ! {
    BROKEN.store(true, Ordering::Relaxed);
    panic!("{message}")
}

/// Checks what the pops of a stack test returned, where thread `i` ran `push(i + 1)` then
/// `pop()`.
///
/// Every pop must return a pushed value, and no value twice. It must not return `None` either:
/// each thread pops after its own push returned, so whenever a pop takes effect, at least one
/// more push than earlier pops has taken effect, and a linearizable stack is not empty then.
/// (A push that stores `top` without a CAS breaks this: two pushes that read the same top both
/// link their node above it, the later store unlinks the earlier node, and a pop finds the
/// stack empty while its value is lost.)
///
/// # Panics
///
/// When the pops break that, naming them.
pub fn check_pops(popped: &[Option<i64>]) {
    let pushed = popped.len() as i64;
    let mut seen = Vec::with_capacity(popped.len());
    for pop in popped {
        match *pop {
            Some(v) if (1..=pushed).contains(&v) && !seen.contains(&v) => seen.push(v),
            _ => fail(format!(
                "stack: impossible pops {popped:?} after pushing 1..={pushed}"
            )),
        }
    }
}

/// Checks a pair a seqlock reader returned while the writers wrote `(1, 1)` and `(2, 2)` over
/// the initial `(0, 0)`.
///
/// # Panics
///
/// When the pair is torn (one cell from one write, the other from another).
pub fn check_pair(pair: (i64, i64)) {
    if !matches!(pair, (0, 0) | (1, 1) | (2, 2)) {
        fail(format!("seqlock: torn read {pair:?}"));
    }
}

/// Checks what a reader of a value published through a flag returned, where the writer
/// published `value` over the initial 0: the value, or nothing (it read before the flag).
///
/// # Panics
///
/// When it returned another value: it saw the flag but not what was stored before it.
pub fn check_published(read: Option<i64>, value: i64) {
    if read.is_some_and(|v| v != value) {
        fail(format!(
            "message passing: read {read:?} after publish({value})"
        ));
    }
}

/// Checks that a stack lost no item and made none up: what its pops returned (`None`s left
/// out) and what was left in it afterwards are, together, what was pushed.
///
/// # Panics
///
/// When they are not, naming them.
pub fn check_conserved(pushed: &[i64], popped: &[Option<i64>], left: &[i64]) {
    let mut found: Vec<i64> = popped.iter().flatten().chain(left).copied().collect();
    found.sort_unstable();
    let mut expected = pushed.to_vec();
    expected.sort_unstable();
    if found != expected {
        fail(format!(
            "stack: pushed {pushed:?}, popped {popped:?}, left {left:?}"
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pops_of_pushed_values_pass() {
        check_pops(&[Some(2), Some(1), Some(3)]);
    }

    #[test]
    #[should_panic(expected = "impossible pops")]
    fn a_value_popped_twice_fails() {
        check_pops(&[Some(1), Some(1)]);
    }

    #[test]
    #[should_panic(expected = "impossible pops")]
    fn an_empty_pop_fails() {
        check_pops(&[Some(1), None]);
    }

    #[test]
    #[should_panic(expected = "impossible pops")]
    fn a_value_never_pushed_fails() {
        check_pops(&[Some(1), Some(3)]);
    }

    #[test]
    fn a_failed_assertion_is_noted() {
        // The one test that looks at the flag: the others may set it on their own threads.
        let failed = std::panic::catch_unwind(|| check_pops(&[None]));
        assert!(failed.is_err() && broken());
    }

    #[test]
    fn a_published_value_or_nothing_passes() {
        check_published(None, 1);
        check_published(Some(1), 1);
    }

    #[test]
    #[should_panic(expected = "message passing")]
    fn the_old_value_after_the_flag_fails() {
        check_published(Some(0), 1);
    }

    #[test]
    fn every_item_popped_or_left_passes() {
        check_conserved(&[1, 2], &[Some(2), None], &[1]);
    }

    #[test]
    #[should_panic(expected = "stack: pushed")]
    fn a_lost_item_fails() {
        check_conserved(&[1, 2], &[Some(2), None], &[]);
    }

    #[test]
    fn whole_pairs_pass() {
        for pair in [(0, 0), (1, 1), (2, 2)] {
            check_pair(pair);
        }
    }

    #[test]
    #[should_panic(expected = "torn read")]
    fn a_torn_pair_fails() {
        check_pair((1, 2));
    }
}
