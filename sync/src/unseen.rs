//! What fgvt cannot see: `std`'s atomics, fences, locks, cells and spin hints in the source
//! files an object's steps come from.
//!
//! fgvt sees only `fgvt_sync`'s types. Code that mixes in `std`'s (a `fence` imported from
//! `std::sync::atomic` beside `fgvt_sync`'s atomics, a `std::hint::spin_loop`, a `std` mutex)
//! runs, but those accesses are no steps: a fence that orders nothing under the model, a loop
//! that spins without the hint, a lock that serializes nothing fgvt knows of. The verdict can
//! then be wrong either way, and a fix of orderings may ask for the very fence the code already
//! has. So the report names each such use with its line ([`note`]), and a fix that would add a
//! fence next to a `std` fence is not offered ([`fence_near`]).
//!
//! The scan reads the text, not the compiled code: `use` declarations (with their nested
//! groups and renames) and full paths (`std::sync::atomic::fence(…)`), from `std` or `core`.
//! A declaration right under a `#[cfg(…)]` attribute with a `not(…)` in it is taken as the
//! branch a feature or cfg switches off (the `src/sync.rs` recipe imports `std`'s types under
//! `#[cfg(not(feature = "fgvt"))]`, loom users under `#[cfg(not(loom))]`, oneshot under
//! `#[cfg(all(feature = "async", not(oneshot_loom)))]`), and comments are skipped.

use std::collections::BTreeSet;

use fgvt_tree::{SourceMap, Tree};

/// A kind of `std` item fgvt cannot see.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Kind {
    /// An atomic type (`AtomicUsize`, …).
    Atomic,
    /// `fence` or `compiler_fence`.
    Fence,
    /// `Mutex`, `RwLock`, `Condvar`, `Barrier`, `Once`.
    Lock,
    /// `UnsafeCell` or `Cell`: plain memory whose data races go unchecked.
    Cell,
    /// `std::hint::spin_loop` or `std::thread::yield_now`: a waiting loop without fgvt's hint.
    Hint,
}

impl Kind {
    /// What fgvt offers instead.
    fn instead(self) -> &'static str {
        match self {
            Kind::Atomic => "fgvt_sync::atomic",
            Kind::Fence => "fgvt_sync::atomic::fence",
            Kind::Lock => "fgvt_sync's Mutex, RwLock and Condvar",
            Kind::Cell => "fgvt_sync::cell",
            Kind::Hint => "fgvt_sync::hint",
        }
    }
}

/// One use of a `std` item: where, and what.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Use {
    /// The file, as the report names it.
    pub file: String,
    /// The line (1-based).
    pub line: usize,
    /// The kind of item.
    pub kind: Kind,
    /// The item's path as written (`std::sync::atomic::fence`).
    pub path: String,
}

/// The kind of the `std` (or `core`) item at `path` (`std::sync::atomic::fence`), if fgvt
/// cannot see it; a module path (`std::sync::atomic`) is `None` here, see [`module_kind`].
fn item_kind(path: &str) -> Option<Kind> {
    let rest = path
        .strip_prefix("std::")
        .or_else(|| path.strip_prefix("core::"))?;
    let (module, item) = rest.rsplit_once("::")?;
    match (module, item) {
        ("sync::atomic", "fence" | "compiler_fence") => Some(Kind::Fence),
        ("sync::atomic", item) if item.starts_with("Atomic") => Some(Kind::Atomic),
        ("sync", "Mutex" | "RwLock" | "Condvar" | "Barrier" | "Once") => Some(Kind::Lock),
        ("cell", "UnsafeCell" | "Cell") => Some(Kind::Cell),
        ("hint", "spin_loop") | ("thread", "yield_now") => Some(Kind::Hint),
        _ => None,
    }
}

/// Whether `path` is a `std` module whose items [`item_kind`] names (`std::sync::atomic`,
/// `std::hint`, `std::cell`, `std::thread`, `std::sync`): code then reaches them as
/// `atomic::fence(…)`.
fn module_kind(path: &str) -> bool {
    let rest = path
        .strip_prefix("std::")
        .or_else(|| path.strip_prefix("core::"));
    matches!(
        rest,
        Some("sync::atomic" | "hint" | "cell" | "thread" | "sync")
    )
}

/// The full paths a `use` tree names (`std::sync::{Mutex, atomic::{fence, Ordering as O}}` →
/// `std::sync::Mutex`, `std::sync::atomic::fence`, `std::sync::atomic::Ordering`), each with
/// the name it is known by in the file.
fn expand(tree: &str) -> Vec<(String, String)> {
    // `Mutex as Lock` becomes `Mutex@Lock` before the spaces go.
    let words: Vec<&str> = tree.split_whitespace().collect();
    let tree: String = words.join(" ").replace(" as ", "@").replace(' ', "");
    let mut found = Vec::new();
    expand_into("", &tree, &mut found);
    found
}

/// [`expand`]'s work for `tree` under `prefix`.
fn expand_into(prefix: &str, tree: &str, found: &mut Vec<(String, String)>) {
    let join = |p: &str| match prefix {
        "" => p.to_string(),
        _ => format!("{prefix}::{p}"),
    };
    if let Some(open) = tree.find('{') {
        let head = tree[..open].trim_end_matches("::");
        let inner = &tree[open + 1..tree.rfind('}').unwrap_or(tree.len())];
        let prefix = if head.is_empty() {
            prefix.to_string()
        } else {
            join(head)
        };
        for part in split_top(inner) {
            expand_into(&prefix, part, found);
        }
        return;
    }
    let (path, alias) = match tree.split_once('@') {
        Some((path, alias)) => (path, Some(alias)),
        None => (tree, None),
    };
    if path.is_empty() {
        return;
    }
    let full = if path == "self" {
        prefix.to_string()
    } else {
        join(path)
    };
    let name = alias
        .unwrap_or_else(|| full.rsplit("::").next().unwrap_or(&full))
        .to_string();
    found.push((full, name));
}

/// The comma-separated parts of a `use` group, not splitting inside nested braces.
fn split_top(inner: &str) -> Vec<&str> {
    let (mut parts, mut depth, mut start) = (Vec::new(), 0, 0);
    for (i, c) in inner.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&inner[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&inner[start..]);
    parts.into_iter().filter(|p| !p.is_empty()).collect()
}

/// The `std` items `text` (the source of `file`) uses that fgvt cannot see, in line order.
pub(crate) fn scan(file: &str, text: &str) -> Vec<Use> {
    let lines: Vec<String> = text.lines().map(code_of).collect();
    let mut found = BTreeSet::new();
    // Names a `use` brought into the file, and the modules it brought in by name.
    let mut imported: Vec<(String, String)> = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i].trim_start();
        let declared = line
            .strip_prefix("pub use ")
            .or_else(|| line.strip_prefix("pub(crate) use "))
            .or_else(|| line.strip_prefix("use "));
        let Some(first) = declared else {
            i += 1;
            continue;
        };
        // A declaration may span lines, up to its `;`.
        let start = i;
        let mut tree = first.to_string();
        while !tree.contains(';') && i + 1 < lines.len() {
            i += 1;
            tree.push_str(&lines[i]);
        }
        i += 1;
        // `#[cfg(not(loom))]`, `#[cfg(all(feature = "async", not(oneshot_loom)))]`: some
        // configuration turns it off, the one under which the code is tested.
        let switched_off = (start.checked_sub(1)).is_some_and(|above| {
            let above = lines[above].trim();
            above.starts_with("#[cfg(") && above.contains("not(")
        });
        if switched_off {
            continue;
        }
        let tree = tree.split(';').next().unwrap_or("");
        for (path, name) in expand(tree) {
            let kind = item_kind(&path);
            if let Some(kind) = kind {
                found.insert((start + 1, kind, path.clone()));
            }
            if kind.is_some() || module_kind(&path) {
                imported.push((path, name));
            }
        }
    }
    for (n, line) in lines.iter().enumerate() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("use ") || trimmed.contains(" use ") {
            continue;
        }
        // Full paths written in the code.
        for root in ["std::", "core::"] {
            for (at, _) in line.match_indices(root) {
                let path = path_at(&line[at..]);
                if let Some(kind) = item_kind(&path) {
                    found.insert((n + 1, kind, path));
                }
            }
        }
        // Fences and hints imported by name, where they are called.
        let called = imported
            .iter()
            .filter(|(p, _)| matches!(item_kind(p), Some(Kind::Fence | Kind::Hint)));
        for (path, name) in called {
            let call = format!("{name}(");
            for (at, _) in line.match_indices(&call) {
                if starts_a_path(line, at) {
                    found.insert((n + 1, item_kind(path).expect("filtered"), path.clone()));
                }
            }
        }
        // Items reached through an imported module (`atomic::fence(…)`).
        for (module, name) in imported.iter().filter(|(p, _)| module_kind(p)) {
            let prefix = format!("{name}::");
            for (at, _) in line.match_indices(&prefix) {
                if !starts_a_path(line, at) {
                    continue;
                }
                let item = path_at(&line[at + prefix.len()..]);
                let path = format!("{module}::{item}");
                if let Some(kind) = item_kind(&path) {
                    found.insert((n + 1, kind, path));
                }
            }
        }
    }
    (found.into_iter())
        .map(|(line, kind, path)| Use {
            file: file.to_string(),
            line,
            kind,
            path,
        })
        .collect()
}

/// Whether a name found at byte `at` of `line` starts there, rather than ending a longer name
/// or path (`my_atomic::fence`, `x::fence`).
fn starts_a_path(line: &str, at: usize) -> bool {
    let before = line[..at].chars().next_back();
    !before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':')
}

/// A line's code: without its `//` comment, and with its string literals emptied (a test that
/// quotes `"std::hint::spin_loop()"` uses nothing).
fn code_of(line: &str) -> String {
    let mut code = String::with_capacity(line.len());
    let mut chars = line.chars().peekable();
    let mut in_string = false;
    while let Some(c) = chars.next() {
        match (in_string, c) {
            (false, '/') if chars.peek() == Some(&'/') => break,
            (false, '"') | (true, '"') => {
                in_string = !in_string;
                code.push('"');
            }
            (true, '\\') => {
                chars.next();
            }
            (true, _) => {}
            (false, c) => code.push(c),
        }
    }
    code
}

/// The path at the start of `text`, identifiers joined by `::`, cut after the item
/// [`item_kind`] knows if it names one (`std::cell::Cell::new` → `std::cell::Cell`).
fn path_at(text: &str) -> String {
    let end = text
        .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
        .unwrap_or(text.len());
    let path = text[..end].trim_end_matches(':');
    let mut prefix = String::new();
    for segment in path.split("::") {
        if !prefix.is_empty() {
            prefix.push_str("::");
        }
        prefix.push_str(segment);
        if item_kind(&prefix).is_some() {
            return prefix;
        }
    }
    path.to_string()
}

/// The `std` items used in the files that `tree`'s steps come from (as `sources` holds them),
/// but for fgvt-sync's own: a step fgvt-sync takes for the object (an operation's local
/// step) is located in this crate, which builds on `std` by design.
pub(crate) fn in_tree(tree: &Tree, sources: &SourceMap) -> Vec<Use> {
    // This crate's sources, as rustc names them in a `Location` and in `file!()` alike
    // (relative to the workspace, or a path in cargo's registry).
    let own = file!().rsplit_once(['/', '\\']).map_or("", |(dir, _)| dir);
    let mut files = BTreeSet::new();
    for node in tree.graph.node_indices() {
        let steps = tree.graph.children(node).iter();
        files.extend(steps.map(|&(step, _)| tree.events[step as usize].span.file));
    }
    (files.into_iter())
        .filter_map(|number| sources.file(number))
        .filter(|(name, _)| own.is_empty() || !name.starts_with(own))
        .flat_map(|(name, text)| scan(name, text))
        .collect()
}

/// The report's notes on `uses`: a warning naming each use with its line and what to import
/// instead, and with `implied_hints` (`Test::implied_hints`), spin hints apart, in a note of
/// their own: the loops around them are taken for retry loops all the same.
pub(crate) fn notes(uses: &[Use], implied_hints: bool) -> Vec<String> {
    let (hints, others): (Vec<Use>, Vec<Use>) =
        (uses.iter().cloned()).partition(|u| implied_hints && u.kind == Kind::Hint);
    let mut notes: Vec<String> = warning(&others).into_iter().collect();
    if !hints.is_empty() {
        let listed: Vec<String> = (hints.iter())
            .map(|u| format!("`{}` at {}:{}", u.path, u.file, u.line))
            .collect();
        notes.push(format!(
            "note: fgvt cannot see std's spin hints ({}); it takes a `loop` or `while` whose \
             turn writes nothing for a retry loop all the same (Test::implied_hints), and \
             fgvt_sync::hint::spin_loop says so of any loop",
            listed.join(", ")
        ));
    }
    notes
}

/// The warning for `uses` (none when there are none): each use with its line, and what to
/// import instead.
fn warning(uses: &[Use]) -> Option<String> {
    if uses.is_empty() {
        return None;
    }
    let listed: Vec<String> = (uses.iter())
        .map(|u| format!("`{}` at {}:{}", u.path, u.file, u.line))
        .collect();
    let mut kinds: Vec<Kind> = uses.iter().map(|u| u.kind).collect();
    kinds.sort();
    kinds.dedup();
    let instead: Vec<&str> = kinds.iter().map(|k| k.instead()).collect();
    Some(format!(
        "warning: fgvt cannot see std's synchronization, and the object's code uses some: {}; \
         those are no steps of the tree (no ordering, no lock, no spin hint, no data-race check), \
         so the verdict does not account for them: use {} instead (through a `src/sync.rs` \
         that picks them under your `fgvt` feature)",
        listed.join(", "),
        instead.join(", ")
    ))
}

/// Makes a failure that only weak memory gives INCONCLUSIVE when the code has `std` fences:
/// every failing run needs an ordering fgvt gave the accesses, and the fences fgvt cannot see
/// may be what orders them (Boehm's seqlock with `std`'s fences fails here, and is correct).
/// Saying NOT LINEARIZABLE would be a false alarm as likely as a find; the report keeps its
/// CDRS and says which fences to make visible.
pub(crate) fn doubt_weak_failure(report: &mut fgvt_reports::LocalizeReport, uses: &[Use]) {
    let weak_only =
        (report.memory.as_ref()).is_some_and(|m| m.passes_sequentially_consistent == Some(true));
    let fences: Vec<String> = (uses.iter())
        .filter(|u| u.kind == Kind::Fence)
        .map(|u| format!("{}:{}", u.file, u.line))
        .collect();
    if report.verdict != fgvt_reports::Verdict::NotLinearizable || !weak_only || fences.is_empty() {
        return;
    }
    report.verdict = fgvt_reports::Verdict::Inconclusive;
    report.notes.insert(
        0,
        format!(
            "INCONCLUSIVE, not NOT LINEARIZABLE: every failing run needs weak memory (with every \
             access SeqCst every run passes), and the code has std fences fgvt cannot see ({}), \
             which may be what orders those accesses: use fgvt_sync::atomic::fence there and \
             fgvt tells",
            fences.join(", ")
        ),
    );
}

/// Whether a `std` fence of `uses` is in `file` within two lines of `line`: where a fix would
/// add a fence the code already has.
pub(crate) fn fence_near(uses: &[Use], file: &str, line: usize) -> bool {
    (uses.iter()).any(|u| u.kind == Kind::Fence && u.file == file && u.line.abs_diff(line) <= 2)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The (line, kind, path) of each use found in `text`.
    fn found(text: &str) -> Vec<(usize, Kind, String)> {
        (scan("x.rs", text).into_iter())
            .map(|u| (u.line, u.kind, u.path))
            .collect()
    }

    #[test]
    fn imports_and_paths_of_std_items_are_found_with_their_lines() {
        let text = "\
use std::sync::atomic::{fence, Ordering};
use fgvt_sync::atomic::AtomicU64;
use std::sync::{
    Arc,
    Mutex as Lock,
};

fn f() {
    fence(Ordering::Release); // the fence imported above, called
    std::hint::spin_loop();
    let c = core::cell::Cell::new(0);
    // std::sync::atomic::fence(Ordering::SeqCst) in a comment is no use
    let quoted = \"std::hint::spin_loop(); // nor in a string\";
}
";
        assert_eq!(
            found(text),
            [
                (1, Kind::Fence, "std::sync::atomic::fence".to_string()),
                (3, Kind::Lock, "std::sync::Mutex".to_string()),
                (9, Kind::Fence, "std::sync::atomic::fence".to_string()),
                (10, Kind::Hint, "std::hint::spin_loop".to_string()),
                (11, Kind::Cell, "core::cell::Cell".to_string()),
            ]
        );
    }

    #[test]
    fn a_module_imported_from_std_names_its_items_where_they_are_used() {
        let text = "\
use std::sync::atomic::{self, AtomicBool};
use std::hint;

fn f(flag: &AtomicBool) {
    atomic::fence(atomic::Ordering::Acquire);
    hint::spin_loop();
    my_atomic::fence();
}
";
        assert_eq!(
            found(text),
            [
                (1, Kind::Atomic, "std::sync::atomic::AtomicBool".to_string()),
                (5, Kind::Fence, "std::sync::atomic::fence".to_string()),
                (6, Kind::Hint, "std::hint::spin_loop".to_string()),
            ]
        );
    }

    #[test]
    fn what_fgvt_sees_or_a_feature_switches_off_is_not_named() {
        let text = "\
use std::sync::Arc;
use std::sync::atomic::Ordering::{Acquire, Release};
#[cfg(feature = \"fgvt\")]
pub use fgvt_sync::{atomic, hint, Mutex};
#[cfg(not(feature = \"fgvt\"))]
pub use std::{hint, sync::{atomic, Mutex}};

fn f() {
    hint::spin_loop();
}
";
        assert_eq!(found(text), []);
    }

    /// oneshot 0.1.10's imports: `core`'s hint where its loom cfg is off, loom's where it is on.
    #[test]
    fn an_import_a_cfg_inside_all_switches_off_is_not_named() {
        let text = "\
#[cfg(all(feature = \"async\", not(oneshot_loom)))]
use core::hint;
#[cfg(all(feature = \"async\", oneshot_loom))]
use loom::hint;

fn f() {
    hint::spin_loop();
}
";
        assert_eq!(found(text), []);
        let unswitched = text.replace("not(oneshot_loom)", "oneshot_loom");
        assert_eq!(
            found(&unswitched),
            [(7, Kind::Hint, "core::hint::spin_loop".to_string())]
        );
    }

    #[test]
    fn the_note_names_each_use_and_what_to_use_instead() {
        let uses = scan("src/seqlock.rs", "use std::sync::atomic::fence;\n");
        let said = warning(&uses).unwrap();
        assert!(
            said.contains("`std::sync::atomic::fence` at src/seqlock.rs:1"),
            "{said}"
        );
        assert!(
            said.contains("use fgvt_sync::atomic::fence instead"),
            "{said}"
        );
        assert!(warning(&[]).is_none());
        assert!(fence_near(&uses, "src/seqlock.rs", 3));
        assert!(!fence_near(&uses, "src/seqlock.rs", 4));
        assert!(!fence_near(&uses, "src/other.rs", 1));
    }

    #[test]
    fn spin_hints_have_a_note_of_their_own_when_their_loops_are_taken_for_retries() {
        let text = "use std::sync::atomic::fence;\nfn f() { std::hint::spin_loop(); }\n";
        let uses = scan("src/lock.rs", text);
        let apart = notes(&uses, true);
        assert_eq!(apart.len(), 2, "{apart:?}");
        assert!(!apart[0].contains("spin_loop"), "{apart:?}");
        assert!(
            apart[1].contains("`std::hint::spin_loop` at src/lock.rs:2"),
            "{apart:?}"
        );
        assert!(apart[1].contains("Test::implied_hints"), "{apart:?}");
        let together = notes(&uses, false);
        assert_eq!(together.len(), 1, "{together:?}");
        assert!(together[0].contains("`std::hint::spin_loop` at src/lock.rs:2"));
        assert!(
            together[0].contains("fgvt_sync::hint instead"),
            "{together:?}"
        );
    }
}
