//! The user's source files, read once, so that reports quote the lines of their `.rs` files.
//!
//! `#[track_caller]` gives a file name as rustc saw it (relative to the directory cargo ran it
//! in, the workspace root, for a workspace member), a line and a column. A relative name is
//! looked for under the package's directory and every directory above it, whatever the working
//! directory: the directory `fgvt_sync::main!` captured at compile time ([`anchor`]), the one
//! cargo names at run time (`CARGO_MANIFEST_DIR`, set by `cargo test` and `cargo run`), then the
//! working directory and those above it.
//!
//! A file that cannot be read is still told apart position by position: each position gets a
//! placeholder text of its own with the code missing, so a report locates it by line and column
//! and its races are grouped as they would be with the code ([`unreadable`] names such files).

use std::cell::RefCell;
use std::collections::HashMap;
use std::panic::Location;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use fgvt_tree::{SourceMap, Span};

use crate::loops::Source;

/// Every source file met, with its number in the map, and the spans of positions met.
#[derive(Default)]
struct Sources {
    map: SourceMap,
    /// The number of every file read, or `None` for one that could not be.
    numbers: HashMap<String, Option<u32>>,
    /// Directories whose ancestors hold the package's sources, besides the working directory.
    anchors: Vec<PathBuf>,
    /// The span of each position met in a file that could not be read.
    placeholders: HashMap<(String, u32, u32), Span>,
    /// Spans by `#[track_caller]` position, keyed by the position's address: every execution
    /// of a test meets the same ones, and comparing addresses is cheaper than file names.
    spans: ByPosition<Span>,
    /// The names objects created at a position get ([`name_at`]), keyed as `spans`.
    names: ByPosition<Option<&'static str>>,
    /// The loops and functions of each file read, by number ([`loops_of`]).
    loops: HashMap<u32, &'static Source>,
}

fn sources() -> &'static Mutex<Sources> {
    static SOURCES: OnceLock<Mutex<Sources>> = OnceLock::new();
    SOURCES.get_or_init(Default::default)
}

/// Positions by address, as [`Sources`] keys them.
type ByPosition<T> = HashMap<usize, T, foldhash::fast::RandomState>;

thread_local! {
    /// The spans and names this thread has looked up: every step and every object creation
    /// asks for one, and hunt and minimize explore on several threads at once, so the shared
    /// lock is taken only the first time a thread meets a position.
    static SEEN: RefCell<(ByPosition<Span>, ByPosition<Option<&'static str>>)> =
        RefCell::new(Default::default());
    /// The loops of the files this thread has looked up, as [`SEEN`] keeps spans.
    static LOOPS: RefCell<HashMap<u32, &'static Source>> = RefCell::new(HashMap::new());
    /// Whether the text at each position this thread has looked up names a call
    /// ([`names_a_call`]).
    static CALLS: RefCell<ByPosition<bool>> = RefCell::new(Default::default());
}

/// Whether the accesses made at `turn` since one made at `head` (which the thread is about to
/// make again) are one turn of a `loop` or `while` of the source: one loop's text holds them
/// all, and a turn of it may begin at `head` (see [`crate::loops`]). `false` where a file
/// cannot be read.
///
/// `same_call(name, line)`: whether `head`'s access and the one about to be made are in one
/// call of the marked function `name` whose body opens at `line` of `head`'s file (see
/// [`crate::loops::turn_within`]).
pub(crate) fn turn_in_a_loop<'a>(
    head: &'static Location<'static>,
    turn: impl IntoIterator<Item = &'a &'static Location<'static>>,
    same_call: &dyn Fn(&str, u32) -> bool,
) -> bool {
    if !names_a_call(head) {
        return false;
    }
    let head = span_at(head);
    let mut offsets = Vec::new();
    for at in turn {
        let span = span_at(at);
        if span.file != head.file {
            return false;
        }
        offsets.push(span.start);
    }
    crate::loops::turn_within(loops_of(head.file), head.start, &offsets, same_call)
}

/// Whether the text at `caller`'s line and column names a call (`load` in `x.load(…)`, a
/// path's `fence(…)`, a macro's `name!`), as `#[track_caller]` positions do in the file they
/// name. A doctest's positions are lines of the doctest, not of its file: there the text is
/// something else, and no loop of the file is taken for one of the doctest's.
fn names_a_call(caller: &'static Location<'static>) -> bool {
    let key = std::ptr::from_ref(caller) as usize;
    if let Some(call) = CALLS.with_borrow(|calls| calls.get(&key).copied()) {
        return call;
    }
    let file = span_at(caller).file;
    let call = {
        let sources = sources().lock().unwrap_or_else(|e| e.into_inner());
        (sources.map.file(file))
            .is_some_and(|(_, text)| call_at(text, caller.line(), caller.column()))
    };
    CALLS.with_borrow_mut(|calls| calls.insert(key, call));
    call
}

/// Whether `text` names a call at `line`:`column`: a name, then `(`, `::` or `!`.
fn call_at(text: &str, line: u32, column: u32) -> bool {
    let rest = &text[offset(text, line, column)..];
    let name = rest
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(rest.len());
    let after = rest[name..].trim_start();
    name > 0 && (after.starts_with('(') || after.starts_with("::") || after.starts_with('!'))
}

/// The loops and functions of file `number` of the map, scanned once.
fn loops_of(number: u32) -> &'static Source {
    if let Some(loops) = LOOPS.with_borrow(|l| l.get(&number).copied()) {
        return loops;
    }
    let mut sources = sources().lock().unwrap_or_else(|e| e.into_inner());
    let loops = match sources.loops.get(&number) {
        Some(&loops) => loops,
        None => {
            let text = sources.map.file(number).map_or("", |(_, text)| text);
            // One per source file of the program: a bounded set, kept for good.
            let loops: &'static Source = Box::leak(Box::new(crate::loops::scan(text)));
            sources.loops.insert(number, loops);
            loops
        }
    };
    LOOPS.with_borrow_mut(|l| l.insert(number, loops));
    loops
}

/// The span of the expression at a caller's position ([`span`]), worked out once per position.
pub(crate) fn span_at(caller: &'static Location<'static>) -> Span {
    let key = std::ptr::from_ref(caller) as usize;
    if let Some(span) = SEEN.with_borrow(|(spans, _)| spans.get(&key).copied()) {
        return span;
    }
    let mut sources = sources().lock().unwrap_or_else(|e| e.into_inner());
    let span = match sources.spans.get(&key) {
        Some(&span) => span,
        None => {
            let span = sources.span(caller.file(), caller.line(), caller.column());
            sources.spans.insert(key, span);
            span
        }
    };
    SEEN.with_borrow_mut(|(spans, _)| spans.insert(key, span));
    span
}

/// The name the code gives an object created at `caller`: the field, variable or binding its
/// constructor's value goes to on that line (`head` in `head: AtomicPtr::new(null)`), worked
/// out once per position; `None` where the line names none (the object is then shown by its
/// type).
pub(crate) fn name_at(caller: &'static Location<'static>) -> Option<&'static str> {
    let key = std::ptr::from_ref(caller) as usize;
    if let Some(name) = SEEN.with_borrow(|(_, names)| names.get(&key).copied()) {
        return name;
    }
    let name = shared_name_at(key, caller);
    SEEN.with_borrow_mut(|(_, names)| names.insert(key, name));
    name
}

/// [`name_at`] from the shared table, worked out there the first time any thread asks.
fn shared_name_at(key: usize, caller: &'static Location<'static>) -> Option<&'static str> {
    let mut sources = sources().lock().unwrap_or_else(|e| e.into_inner());
    if let Some(&name) = sources.names.get(&key) {
        return name;
    }
    let span = sources.span(caller.file(), caller.line(), caller.column());
    let (_, text) = sources.map.file(span.file).expect("a file just added");
    let start = span.start as usize;
    let line_start = text[..start].rfind('\n').map_or(0, |i| i + 1);
    // One small string per creation site in the program's code: a bounded set, kept for good.
    let name = binding_name(&text[line_start..start])
        .map(|name| &*Box::leak(name.to_string().into_boxed_str()));
    sources.names.insert(key, name);
    name
}

/// The name that the text before a constructor call on its line binds the value to: the
/// variable of a `let`, else the last field (`name:`) or assignment target (`name =`).
fn binding_name(prefix: &str) -> Option<&str> {
    let is_ident = |c: char| c.is_alphanumeric() || c == '_';
    let ident_at = |text: &str| -> Option<usize> {
        let len = text.find(|c: char| !is_ident(c)).unwrap_or(text.len());
        (len > 0 && !text.starts_with(|c: char| c.is_ascii_digit())).then_some(len)
    };
    if let Some(at) = prefix.rfind("let ") {
        let rest = prefix[at + 4..].trim_start();
        let rest = rest.strip_prefix("mut ").map_or(rest, str::trim_start);
        return ident_at(rest).map(|len| &rest[..len]);
    }
    let mut found = None;
    let mut at = 0;
    while at < prefix.len() {
        let rest = &prefix[at..];
        let Some(len) = ident_at(rest).filter(|_| {
            // An identifier starts here only if the previous character is not part of one.
            !prefix[..at].ends_with(is_ident)
        }) else {
            at += rest.chars().next().map_or(1, char::len_utf8);
            continue;
        };
        let after = rest[len..].trim_start();
        let field = after.starts_with(':') && !after.starts_with("::");
        let assigned =
            after.starts_with('=') && !after.starts_with("==") && !after.starts_with("=>");
        let path = prefix[..at].ends_with("::");
        if (field || assigned) && !path {
            found = Some(&rest[..len]);
        }
        at += len;
    }
    found
}

/// The span of the expression at `line`:`column` (1-based) of `file` (see [`expression`]). A
/// file that cannot be read gets an empty text (its positions then have no snippet).
pub(crate) fn span(file: &str, line: u32, column: u32) -> Span {
    sources()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .span(file, line, column)
}

impl Sources {
    fn span(&mut self, file: &str, line: u32, column: u32) -> Span {
        let number = match self.numbers.get(file) {
            Some(&n) => n,
            None => {
                let text = read(file, &self.anchors);
                let n = text.map(|text| self.map.add(file, text));
                self.numbers.insert(file.to_string(), n);
                n
            }
        };
        let Some(number) = number else {
            return self.placeholder(file, line, column);
        };
        let (_, text) = self.map.file(number).expect("a file just added");
        let at = offset(text, line, column);
        let (start, end) = expression(text, at);
        Span::new(number, start, end)
    }

    /// The span of a position in a file that could not be read: a file entry of its own whose
    /// text is blank up to the position, so it is located by line and column and no two
    /// positions share a span (spans decide which races are the same statement).
    fn placeholder(&mut self, file: &str, line: u32, column: u32) -> Span {
        let key = (file.to_string(), line, column);
        if let Some(&span) = self.placeholders.get(&key) {
            return span;
        }
        let mut text = "\n".repeat(line.saturating_sub(1) as usize);
        text.push_str(&" ".repeat(column.saturating_sub(1) as usize));
        let start = text.len();
        text.push('?');
        let number = self.map.add(file, text);
        let span = Span::new(number, start, start + 1);
        self.placeholders.insert(key, span);
        span
    }
}

/// Adds `dir` to where relative source names are looked for (with every directory above it):
/// `fgvt_sync::main!` passes the package directory it was compiled in, so that a program run
/// from anywhere quotes its sources.
#[cfg_attr(not(feature = "cli"), allow(dead_code))]
pub(crate) fn anchor(dir: &'static str) {
    let mut sources = sources().lock().unwrap_or_else(|e| e.into_inner());
    let dir = PathBuf::from(dir);
    if !sources.anchors.contains(&dir) {
        sources.anchors.push(dir);
    }
}

/// The source files met that could not be read, by the name rustc gave them, but for the
/// standard library's (`/rustc/<commit>/library/…`, where `[AtomicBool; 2]`'s `Default` makes
/// its elements): no one has those, and the objects made there are named by type anyway.
pub(crate) fn unreadable() -> Vec<String> {
    let sources = sources().lock().unwrap_or_else(|e| e.into_inner());
    let mut names: Vec<String> = (sources.numbers.iter())
        .filter(|(name, n)| n.is_none() && !name.starts_with("/rustc/"))
        .map(|(name, _)| name.clone())
        .collect();
    names.sort();
    names
}

/// The expression a call at byte `at` belongs to: `#[track_caller]` points at a method's name
/// (`load` in `self.d[0].load(SeqCst)`); the span reaches back over the receiver (names,
/// fields, indexing) and on to the call's closing parenthesis. Where the text is not such a
/// call, the rest of the line, without a trailing `;`.
fn expression(text: &str, at: usize) -> (usize, usize) {
    let bytes = text.as_bytes();
    let line_end = text[at..].find('\n').map_or(text.len(), |i| at + i);
    let rest_of_line = || {
        let end = at + text[at..line_end].trim_end().trim_end_matches(';').len();
        (at, end.max(at))
    };
    let name_end = at
        + text[at..line_end]
            .find(|c: char| !(c.is_alphanumeric() || c == '_'))
            .unwrap_or(line_end - at);
    if bytes.get(name_end) != Some(&b'(') {
        return rest_of_line();
    }
    let mut depth = 0usize;
    let mut end = None;
    for (i, &b) in bytes[name_end..line_end].iter().enumerate() {
        match b {
            b'(' => depth += 1,
            b')' => {
                depth -= 1;
                if depth == 0 {
                    end = Some(name_end + i + 1);
                    break;
                }
            }
            _ => {}
        }
    }
    let Some(end) = end else {
        return rest_of_line();
    };
    let mut start = at;
    let mut brackets = 0usize;
    while start > 0 {
        let b = bytes[start - 1];
        let part_of_receiver = match b {
            b']' => {
                brackets += 1;
                true
            }
            b'[' if brackets > 0 => {
                brackets -= 1;
                true
            }
            b'.' | b'_' => true,
            _ if brackets > 0 => b != b'\n',
            _ => b.is_ascii_alphanumeric(),
        };
        if !part_of_receiver {
            break;
        }
        start -= 1;
    }
    (start, end)
}

/// Every file met so far, to resolve the spans of a tree's events.
pub(crate) fn map() -> SourceMap {
    sources()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .map
        .clone()
}

/// The byte offset of `line`:`column` (1-based, the column in characters) in `text`, clamped.
fn offset(text: &str, line: u32, column: u32) -> usize {
    let line_start = if line <= 1 {
        0
    } else {
        text.match_indices('\n')
            .nth(line as usize - 2)
            .map_or(text.len(), |(i, _)| i + 1)
    };
    let rest = &text[line_start..];
    let line_text = &rest[..rest.find('\n').unwrap_or(rest.len())];
    line_start
        + line_text
            .char_indices()
            .nth(column.saturating_sub(1) as usize)
            .map_or(line_text.len(), |(i, _)| i)
}

/// The text of `file`: as given if absolute, else under the first of `anchors`, the package
/// directory cargo names (`CARGO_MANIFEST_DIR`) and the working directory, or a directory above
/// one of them, that has it.
fn read(file: &str, anchors: &[PathBuf]) -> Option<String> {
    let path = Path::new(file);
    if path.is_absolute() {
        return std::fs::read_to_string(path).ok();
    }
    let cargo = std::env::var_os("CARGO_MANIFEST_DIR").map(PathBuf::from);
    let here = std::env::current_dir().ok();
    let starts = anchors.iter().cloned().chain(cargo).chain(here);
    starts
        .flat_map(|start| {
            let found = start
                .ancestors()
                .map(|dir| dir.join(path))
                .find(|p| p.is_file());
            found
        })
        .find_map(|p| std::fs::read_to_string(p).ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unreadable_file_keeps_its_positions_apart_and_is_named() {
        let file = "no/such/dir/object.rs";
        let a = span(file, 12, 9);
        let b = span(file, 12, 30);
        let c = span(file, 40, 5);
        assert!(a != b && b != c && a != c, "{a:?} {b:?} {c:?}");
        assert_eq!(span(file, 12, 9), a, "one span per position");
        let map = map();
        let at = |s: Span| {
            let l = map.locate(s).unwrap();
            (l.file, l.line, l.column)
        };
        assert_eq!(at(a), (file.to_string(), 12, 9));
        assert_eq!(at(c), (file.to_string(), 40, 5));
        assert!(unreadable().contains(&file.to_string()));
        // The standard library's sources are nobody's to read: not named.
        let std_file = "/rustc/0123abcd/library/core/src/array/mod.rs";
        span(std_file, 1, 1);
        assert!(!unreadable().contains(&std_file.to_string()));
    }

    #[test]
    fn a_position_is_a_byte_offset_in_its_line() {
        let text = "fn a() {}\n    let x = d.load();\nend";
        assert_eq!(offset(text, 1, 1), 0);
        assert_eq!(
            &text[offset(text, 2, 13)..offset(text, 2, 13) + 6],
            "d.load"
        );
        assert_eq!(offset(text, 9, 1), text.len(), "past the end: clamped");
    }

    #[test]
    fn this_file_is_found_and_quoted() {
        let (s, at) = (span(file!(), line!(), 9), line!());
        let location = map().locate(s).expect("this file is read");
        assert_eq!(location.line as u32, at);
        assert_eq!(location.column, 9);
        assert!(location.snippet.starts_with("let (s, at) = (span(file!()"));
        assert!(
            !location.snippet.ends_with(';'),
            "up to the end of the statement"
        );
    }

    #[test]
    fn an_object_is_named_after_the_binding_its_constructor_goes_to() {
        let cases = [
            ("            head: ", Some("head")),
            ("            d: [AtomicI64::new(0), ", Some("d")),
            ("        let counter = Arc::new(", Some("counter")),
            ("        let mut next: AtomicPtr<Node> = ", Some("next")),
            ("        self.tail = ", Some("tail")),
            ("Node { value: v, next: ", Some("next")),
            ("            ", None),
            ("        vec![", None),
            ("        if a == ", None),
            ("        match x { 1 => ", None),
            ("        fgvt_sync::atomic::", None),
        ];
        for (prefix, name) in cases {
            assert_eq!(binding_name(prefix), name, "{prefix:?}");
        }
    }

    #[test]
    fn a_position_names_a_call_where_the_file_has_one() {
        let text = "//! docs\nfn f() {\n    x.load(SeqCst);\n    fence(Acquire); m!(1);\n}";
        assert!(call_at(text, 3, 7), "`load(`");
        assert!(
            call_at(text, 4, 5) && call_at(text, 4, 21),
            "`fence(`, `m!`"
        );
        // A doctest's line and column land elsewhere in its file.
        assert!(!call_at(text, 1, 5) && !call_at(text, 2, 1) && !call_at(text, 3, 6));
        assert!(
            names_a_call(Location::caller()),
            "this very call, `caller()`"
        );
    }

    #[test]
    fn a_method_call_spans_its_receiver_and_arguments() {
        let text = "        if x == self.d[0].load(SeqCst) {\n            self.d[i].store(f(v), SeqCst);\n";
        let quote = |line, column| {
            let (start, end) = expression(text, offset(text, line, column));
            &text[start..end]
        };
        assert_eq!(quote(1, 27), "self.d[0].load(SeqCst)");
        assert_eq!(quote(2, 23), "self.d[i].store(f(v), SeqCst)");
        assert_eq!(
            quote(1, 9),
            "if x == self.d[0].load(SeqCst) {",
            "not a call: the line"
        );
    }
}
