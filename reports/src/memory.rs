//! The words a report uses for weak memory: which store an access read, what a fix changes.
//! Shared by the renderers, so the terminal, Markdown and SARIF say the same thing.

use crate::model::{LocalizeReport, MemoryReport, MemoryWayReport, OrderChange, StoreReport};

/// A store as a sentence names it: `T0's store of 1 at src/lib.rs:24:9`, `the initial 0`,
/// `init's store of 1 at …`.
pub(crate) fn store_words(store: &StoreReport) -> String {
    let at = store
        .location
        .as_ref()
        .map(|l| format!(" at {l}"))
        .unwrap_or_default();
    match (store.thread, &store.location) {
        (Some(t), _) => format!("T{t}'s store of {}{at}", store.value),
        (None, Some(_)) => format!("init's store of {}{at}", store.value),
        (None, None) => format!("the initial {}", store.value),
    }
}

/// What a weak-memory access did, after its value: `(Relaxed)`, or with a way,
/// `(Relaxed; stale: reads the initial false, not T0's store of true at …)`.
pub(crate) fn access_words(order: Option<&str>, way: Option<&MemoryWayReport>) -> String {
    let Some(order) = order else {
        return String::new();
    };
    let Some(way) = way else {
        return format!(" ({order})");
    };
    let detail = match (&way.read, &way.latest, &way.before) {
        (Some(read), Some(latest), _) => format!(
            "stale: reads {} while {} is newer",
            store_words(read),
            store_words(latest)
        ),
        (Some(read), None, _) => format!("reads the latest, {}", store_words(read)),
        (None, _, Some(before)) => format!(
            "goes before {} in modification order, which overwrites it",
            store_words(before)
        ),
        (None, _, None) => "goes last in modification order".to_string(),
    };
    format!(" ({order}; {detail})")
}

/// What a report says of the search for a fix that found `changes` changes (none when it found
/// no fix) after `tried` trials, and whether the report budget stopped it before it had made
/// every trial.
pub fn fix_note(changes: usize, tried: usize, budget_ran_out: bool) -> String {
    match changes {
        1 => "with that one change every run passes (explored again with it)".to_string(),
        2 => "no one change is enough; with those two every run passes (explored again with \
              them)"
            .to_string(),
        n if n > 2 => format!(
            "no one or two changes are enough; with those {n} every run passes (explored again \
             with them)"
        ),
        _ if budget_ran_out => format!(
            "no change of one or two accesses' orderings or fences found that makes every run \
             pass: {tried} tried (each by exploring the test again) before the report budget \
             ran out; a larger budget tries more"
        ),
        _ => format!(
            "no change of one or two accesses' orderings or fences makes every run pass \
             ({tried} tried, each by exploring the test again)"
        ),
    }
}

/// What a report says of the search for a fix when some run fails with every access
/// `SeqCst`: none was made, because none could succeed. A run under sequential consistency is
/// a run of the code whatever its orderings and fences (the C++20 / Rust model allows every
/// sequentially consistent execution, and weaker orderings or fewer fences order less), so it
/// fails under every change as well.
pub fn no_fix_note() -> String {
    "so no change of orderings or fences can make every run pass: a run that fails with every \
     access SeqCst is a run of the code whatever its orderings (none tried)"
        .to_string()
}

/// One change of a fix: `make the load of ready#1 at src/lib.rs:39:12 Acquire (was
/// Relaxed)`, `add fence(Release) before the store to a#1 at src/lib.rs:45:9`.
pub(crate) fn change_words(change: &OrderChange) -> String {
    let at = change
        .location
        .as_ref()
        .map(|l| format!(" at {l}"))
        .unwrap_or_default();
    match change.change.as_str() {
        "fence-before" => format!("add fence({}) before the {}{at}", change.to, change.access),
        "fence-after" => format!("add fence({}) after the {}{at}", change.to, change.access),
        _ => format!(
            "make the {}{at} {} (was {})",
            change.access, change.to, change.from
        ),
    }
}

/// The lines a report ends with about a weak-memory run: whether the failure is only under weak
/// memory, and the fix found. Empty for a passing test.
pub(crate) fn memory_lines(memory: &MemoryReport) -> Vec<String> {
    let mut lines = Vec::new();
    match memory.passes_sequentially_consistent {
        Some(true) => lines.push(
            "only under weak memory: with every access SeqCst, every run passes (explored again \
             so)"
            .to_string(),
        ),
        Some(false) => lines.push(
            "not only under weak memory: with every access SeqCst, some run still fails"
                .to_string(),
        ),
        None => {}
    }
    if !memory.fix.is_empty() {
        lines.push(format!("fix: {}", changes_words(&memory.fix)));
    }
    if let Some(note) = &memory.fix_note {
        lines.push(note.clone());
    }
    lines
}

/// Names, in every CDRS of `report` whose races include a stale read taken by its witness, or
/// whose witness ends in a data race, the accesses whose orderings decide the failure: the
/// changes of the fix its weak-memory part found and checked
/// ([`CdrsReport::decided_by`](crate::model::CdrsReport::decided_by)). A stale read, or a
/// plain read racing with a write, is the victim; the access a stronger ordering would fix
/// (often a store on another line, or another thread's: the flag that should have published
/// the data) is the cause, and a reader of the CDRS needs both side by side.
pub fn name_deciding_accesses(report: &mut LocalizeReport) {
    let Some(fix) = report.memory.as_ref().map(|m| m.fix.clone()) else {
        return;
    };
    if fix.is_empty() {
        return;
    }
    for cdrs in &mut report.cdrs {
        let stale = (cdrs.nodes.iter().flat_map(|n| &n.races))
            .any(|r| r.taken && r.memory.as_ref().is_some_and(|m| m.latest.is_some()));
        if stale || cdrs.witness.ends_in_data_race() {
            cdrs.decided_by = fix.clone();
        }
    }
}

/// The line a CDRS shows for the accesses that decide it, if any: `the ordering that decides
/// it: make the load of ready#1 at src/lib.rs:39:12 Acquire (was Relaxed)`.
pub(crate) fn decided_by_line(decided_by: &[OrderChange]) -> Option<String> {
    let what = match decided_by.len() {
        0 => return None,
        1 => "the ordering that decides it",
        _ => "the orderings that decide it",
    };
    Some(format!("{what}: {}", changes_words(decided_by)))
}

/// The changes of a fix, as one clause: `make the load … Acquire (was Relaxed); and add …`.
fn changes_words(changes: &[OrderChange]) -> String {
    let words: Vec<String> = changes.iter().map(change_words).collect();
    words.join("; and ")
}
