//! The retry loops of the user's source: where each `loop` and `while` begins, where the
//! access that starts a turn may be, and where it ends.
//!
//! A turn of a waiting loop that calls neither `fgvt_sync::hint::spin_loop` nor anything fgvt
//! sees (a bare `while flag.load(Acquire) {}`, or a loop around `std::hint::spin_loop()`) is
//! still a turn: its thread comes back to the access the turn began with. The runtime asks
//! [`turn_within`] whether the accesses since that access's last occurrence all lie in one
//! such loop of the text, and if the turn wrote nothing, takes it as if the hint had ended
//! it (see `Observations::before_access`).
//!
//! The scan reads the text as Rust's lexer would for what matters here: comments (nested
//! block comments too), string, byte-string and raw-string literals, character literals told
//! from lifetimes and loop labels, and brackets. A loop that carries a variable from one turn
//! into the next is no retry loop (`SourceLoop::carries`):
//!
//! * a `for` loop carries its iterator;
//! * a loop that assigns a variable its function declared `mut` before it, or a field of one
//!   (`tail = t` after a failed compare-and-swap, `tries += 1`, `state.tries += 1`), carries
//!   that variable.
//!
//! A `while` loop's turn starts in its condition (`while lock.compare_exchange(…).is_err()
//! {}`): one whose condition reads no shared memory counts something (`while i < n`), and its
//! turns are not taken.
//!
//! A turn's accesses may also be in the functions of the same file that the loop calls, and
//! its first one in a helper the loop calls where a turn begins (`while !self.try_lock() {}`,
//! `try_lock`'s compare-and-swap in the same file), if no loop of the helper holds it and the
//! loop calls it once.
//!
//! Nor is a loop its function may enter twice with nothing between (`SourceLoop::reentered`):
//! one inside a loop that carries (each turn of `for _ in 0..2 { while x.load() != 1 {} }`
//! enters the `while` again), or that takes a next item in its condition (`while let Some(t)
//! = todo.pop()`), or inside a closure, unless the closure is handed to a call that
//! runs it once (a thread's `spawn` or a `model`, [`FRESH`], where the loop starts afresh; a
//! cell's `with` and the like, [`ONCE`]); `let wait = || …; wait(); wait();` runs it twice.
//!
//! A loop whose function an operation may run twice is no retry loop either ([`entered_once`]:
//! the text calls it twice from one function, or in a loop, or so calls a function that calls
//! it): on its second entry the thread makes the access the first entry left the loop by, and
//! with nothing written between, that looks like a turn.

/// What [`scan`] finds in a source text.
#[derive(Debug, Default)]
pub(crate) struct Source {
    /// Every `loop` and `while`, in the order their bodies close (inner loops first).
    pub loops: Vec<SourceLoop>,
    /// Every function with a body.
    pub functions: Vec<Function>,
    /// Every name called in the text, outside comments and literals, each with where (a
    /// definition's `fn name(` is none).
    pub calls: Vec<(String, u32)>,
    /// The arguments of every call of `spawn`, as byte offsets: code a new thread runs.
    pub spawns: Vec<(u32, u32)>,
}

/// One `loop` or `while` of a source text, as byte offsets.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct SourceLoop {
    /// Its keyword (or label, as written first) to its closing brace, inclusive.
    pub start: u32,
    pub end: u32,
    /// Where the access a turn begins with may be: a `while`'s condition, a `loop`'s body.
    pub heads: (u32, u32),
    /// Whether it carries a variable from turn to turn (see the module docs): no retry loop.
    pub carries: bool,
    /// Whether its thread may enter it again with nothing between (see the module docs): it
    /// is inside a loop that carries (`for _ in 0..2 { while … {} }`) or takes a next item in
    /// its condition (`while let Some(t) = todo.pop()`), or inside a closure that may be
    /// called more than once. No retry loop either.
    pub reentered: bool,
}

/// A function of a source text: its name and its body, as byte offsets.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Function {
    pub name: String,
    pub body: (u32, u32),
    /// The line of its body's opening brace, from 1 (as `line!()` there would give it).
    pub line: u32,
}

impl Source {
    /// The innermost function whose body holds byte `at`.
    fn function_at(&self, at: u32) -> Option<&Function> {
        (self.functions.iter())
            .filter(|f| f.contains(at))
            .min_by_key(|f| f.body.1 - f.body.0)
    }

    /// The calls loop `l` makes (`try_lock` in `while !self.try_lock() {}`), each with where.
    fn calls_in<'a>(&'a self, l: &'a SourceLoop) -> impl Iterator<Item = &'a (String, u32)> {
        self.calls.iter().filter(|(_, at)| l.contains(*at))
    }
}

impl Function {
    fn contains(&self, at: u32) -> bool {
        (self.body.0..self.body.1).contains(&at)
    }
}

impl SourceLoop {
    /// Whether byte `at` is in the loop.
    pub(crate) fn contains(&self, at: u32) -> bool {
        (self.start..self.end).contains(&at)
    }

    /// Whether a turn may begin with an access at byte `at`.
    pub(crate) fn may_begin_at(&self, at: u32) -> bool {
        (self.heads.0..self.heads.1).contains(&at)
    }
}

/// Whether an access at byte `head` and the accesses of a turn since it, at `turn` (byte
/// offsets in the text `source` was scanned from), are one turn of a retry loop: a loop that
/// carries nothing holds them all and the turn may begin at `head`, or the turn begins in a
/// helper that loop calls (see the module docs).
///
/// `same_call(name, line)` tells whether the access at `head` and the one about to be made
/// are in one call of the function `name` whose body opens at `line`, where the runtime knows
/// (a function `#[fgvt_sync::operations]` marks, see `crate::marked`): a loop whose function
/// the text cannot tell is entered once is a retry loop all the same when they are.
pub(crate) fn turn_within(
    source: &Source,
    head: u32,
    turn: &[u32],
    same_call: &dyn Fn(&str, u32) -> bool,
) -> bool {
    // A loop inside `l` around `at` that carries (a `for`) runs it more than once per turn of
    // `l`: the second time would look like the next turn's head.
    let once_per_turn = |l: &SourceLoop, at: u32| {
        (source.loops.iter())
            .filter(|m| *m != l && m.contains(at) && l.contains(m.start))
            .all(|m| !m.carries)
    };
    // The innermost function that holds the head, if no loop of it holds the head.
    let helper = source
        .function_at(head)
        .filter(|f| !(source.loops.iter()).any(|l| l.contains(head) && f.contains(l.start)));
    let takes = |l: &SourceLoop| {
        // The functions of this file the loop calls: their accesses are the turn's too.
        let called = |at: u32| {
            (source.functions.iter())
                .any(|f| f.contains(at) && source.calls_in(l).any(|(name, _)| *name == f.name))
        };
        // One call of the head's helper where a turn begins, not in a loop inside `l` that
        // carries: two calls would make the same access twice in a turn.
        let begins_in_helper = helper.is_some_and(|f| {
            let mut calls =
                (source.calls_in(l)).filter(|(name, at)| *name == f.name && l.may_begin_at(*at));
            match (calls.next(), calls.next()) {
                (Some(&(_, at)), None) => once_per_turn(l, at) && !f.contains(l.start),
                _ => false,
            }
        });
        let begins = (l.may_begin_at(head) && once_per_turn(l, head)) || begins_in_helper;
        begins && turn.iter().all(|&at| l.contains(at) || called(at))
    };
    let in_one_call =
        |l: &SourceLoop| (source.function_at(l.start)).is_some_and(|f| same_call(&f.name, f.line));
    (source.loops.iter())
        .filter(|l| {
            !l.carries
                && !l.reentered
                && (entered_once(source, l.start, ENTRIES_FOLLOWED) || in_one_call(l))
        })
        .any(takes)
}

/// The line of byte `at` of `text`, from 1.
fn line_at(text: &[u8], at: usize) -> u32 {
    let breaks = text[..at].iter().filter(|&&b| b == b'\n').count();
    u32::try_from(breaks + 1).unwrap_or(u32::MAX)
}

/// How many callers up [`entered_once`] follows a function before it gives up.
const ENTRIES_FOLLOWED: u32 = 4;

/// Whether the function that holds byte `at` runs at most once per operation, as far as the
/// text tells: no call of it in a loop, none twice from one function, and each function
/// calling it so too (followed `depth` callers up). A function the text never calls is an
/// operation, or called from another file, which the text cannot tell of.
///
/// A loop whose function runs twice in one operation may repeat its first access on the
/// second entry, after leaving the loop on the first, with nothing written between
/// (`wait(x, 1); wait(x, 1)`): that is no turn of the loop, and taking it for one would send
/// the thread back to the first entry forever.
fn entered_once(source: &Source, at: u32, depth: u32) -> bool {
    let Some(function) = source.function_at(at) else {
        return true;
    };
    let sites: Vec<u32> = (source.calls.iter())
        .filter(|(name, _)| *name == function.name)
        .map(|&(_, site)| site)
        .collect();
    if sites.is_empty() {
        return true;
    }
    let in_a_loop = |site: u32| source.loops.iter().any(|l| l.contains(site));
    // Who runs a call: its function, or the thread a `spawn` around it in that function
    // starts (`thread::spawn(move || lock.inc()); lock.inc();` calls `inc` once per thread).
    let runner = |site: u32| {
        let spawned = (source.spawns.iter()).find(|&&(from, to)| (from..to).contains(&site));
        source.function_at(site).map(|f| (f, spawned))
    };
    // Two calls from outside any function (a macro's arguments) are no function's.
    let twice_from_one = sites.iter().enumerate().any(|(k, &a)| {
        (sites[k + 1..].iter()).any(|&b| runner(a).is_some_and(|r| runner(b) == Some(r)))
    });
    depth > 0
        && !twice_from_one
        && sites
            .iter()
            .all(|&site| !in_a_loop(site) && entered_once(source, site, depth - 1))
}

/// What [`scan`] gathers of the words it meets, to tell a loop that carries a variable.
#[derive(Default)]
struct Bindings<'a> {
    /// Where each `fn` keyword is.
    fns: Vec<usize>,
    /// Each name bound `mut` (`let mut x`, a parameter `mut x: T`), and where.
    mutable: Vec<(&'a [u8], usize)>,
    /// Each name assigned to (`x = …`, `x += …`, and `s` for a field's `s.x = …`), and where.
    assigned: Vec<(&'a [u8], usize)>,
    /// Each name called (outside comments and literals), and where.
    calls: Vec<(&'a [u8], usize)>,
    /// Each name a method is called on (`todo` in `todo.pop()`, not `self`), and where.
    receivers: Vec<(&'a [u8], usize)>,
    /// The word before the current one, where it decides: `let` and `mut` make the next name
    /// a binding, not an assignment.
    previous: &'a [u8],
}

impl Bindings<'_> {
    /// Whether the loop at `start..end` assigns a variable its function bound `mut` before it.
    fn carried(&self, start: usize, end: usize) -> bool {
        (self.assigned.iter())
            .any(|&(name, at)| (start..end).contains(&at) && self.mut_before(name, start))
    }

    /// Whether the text at `start..end` calls a method on a variable its function bound `mut`
    /// before `start` (`while let Some(t) = todo.pop()`): a `while` whose condition does goes
    /// on to the next item at each turn, as a `for` does.
    fn advanced(&self, start: usize, end: usize) -> bool {
        (self.receivers.iter())
            .any(|&(name, at)| (start..end).contains(&at) && self.mut_before(name, start))
    }

    /// Whether the function that holds byte `start` binds `name` `mut` before it.
    fn mut_before(&self, name: &[u8], start: usize) -> bool {
        let function = (self.fns.iter().rev())
            .find(|&&f| f < start)
            .copied()
            .unwrap_or(0);
        (self.mutable.iter()).any(|&(m, at)| m == name && (function..start).contains(&at))
    }
}

/// Whether an assignment operator begins at `at`: `=` (not `==` or `=>`), or `+=`, `-=`, `*=`,
/// `/=`, `%=`, `^=`, `&=`, `|=`, `<<=`, `>>=`.
fn assigns(bytes: &[u8], at: usize) -> bool {
    let b = |k: usize| bytes.get(at + k).copied();
    match b(0) {
        Some(b'=') => !matches!(b(1), Some(b'=' | b'>')),
        Some(b'+' | b'-' | b'*' | b'/' | b'%' | b'^' | b'&' | b'|') => b(1) == Some(b'='),
        Some(b'<') => b(1) == Some(b'<') && b(2) == Some(b'='),
        Some(b'>') => b(1) == Some(b'>') && b(2) == Some(b'='),
        _ => false,
    }
}

/// A bracket still open in [`scan`], and the loop whose body it opens, if one does.
struct Open {
    bracket: u8,
    /// Where it is.
    at: usize,
    body_of: Option<Pending>,
    /// Whether it opens the arguments of a call of `spawn`.
    spawns: bool,
    /// How a call whose arguments it opens runs a closure among them.
    runs: Runs,
}

/// How a closure of the text is run, as the call it is handed to tells.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Runs {
    /// On a thread (or in an execution) of its own, once: a loop in it starts afresh there.
    Fresh,
    /// Once, on the calling thread: a cell's access, a lazy value's initializer.
    Once,
    /// Maybe more than once: bound to a name, or handed to any other call.
    Again,
}

/// Calls that run a closure handed to them on a thread or in an execution of its own.
const FRESH: &[&[u8]] = &[b"spawn", b"model", b"check", b"localize"];

/// Calls that run a closure handed to them once, on the calling thread.
const ONCE: &[&[u8]] = &[
    b"with",
    b"with_mut",
    b"block_on",
    b"scope",
    b"catch_unwind",
    b"call_once",
    b"get_or_init",
];

/// A closure of the text whose body has not ended yet.
struct OpenClosure {
    /// Where its parameters begin.
    start: usize,
    /// How many brackets were open where it began: its body ends where fewer are, or at a `,`
    /// or `;` with as many.
    depth: usize,
    runs: Runs,
}

/// A closure of the text: where it begins and ends, how it runs, and the name `let` binds it
/// to, if it does (it runs again where that name is called; only handed on, as in `let body
/// = || …; model(body)`, it runs where it is handed, which the text does not follow).
type FoundClosure<'a> = (usize, usize, Runs, Option<&'a [u8]>);

impl OpenClosure {
    /// The closure, its body ended at `end` of `bytes`.
    fn ended(self, bytes: &[u8], end: usize) -> FoundClosure<'_> {
        (self.start, end, self.runs, let_bound(bytes, self.start))
    }
}

/// The name of `let name = [move] |…|` for a closure whose parameters begin at `i`.
fn let_bound(bytes: &[u8], i: usize) -> Option<&[u8]> {
    let back = |mut at: usize| {
        while at > 0 && bytes[at - 1].is_ascii_whitespace() {
            at -= 1;
        }
        at
    };
    let word_before = |at: usize| {
        let end = back(at);
        let start = (bytes[..end].iter())
            .rposition(|&b| !(b.is_ascii_alphanumeric() || b == b'_'))
            .map_or(0, |p| p + 1);
        (start, &bytes[start..end])
    };
    let mut at = i;
    if let (start, b"move") = word_before(at) {
        at = start;
    }
    at = back(at);
    if at == 0 || bytes[at - 1] != b'=' || (at >= 2 && b"=!<>+-*/%^&|".contains(&bytes[at - 2])) {
        return None;
    }
    let (start, name) = word_before(at - 1);
    let (_, mut keyword) = word_before(start);
    if keyword == b"mut" {
        keyword = word_before(word_before(start).0).1;
    }
    (keyword == b"let" && !name.is_empty()).then_some(name)
}

/// A `loop`, `while` or `fn` keyword whose body's `{` has not come yet.
#[derive(Clone, Copy)]
struct Pending {
    kind: Keyword,
    start: usize,
    /// How many brackets were open at the keyword: its body's brace opens at that depth.
    depth: usize,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Keyword {
    Loop,
    While,
    /// A function, with where its name is.
    Fn {
        name: (usize, usize),
    },
    /// A `for`: a loop once its `in` has come (else `impl Trait for Type`).
    For {
        looping: bool,
    },
}

/// The loops and functions of `text`.
pub(crate) fn scan(text: &str) -> Source {
    let bytes = text.as_bytes();
    let mut found = Source::default();
    let mut open: Vec<Open> = Vec::new();
    let mut pending: Vec<Pending> = Vec::new();
    let mut bindings = Bindings::default();
    // The label a keyword may follow (`'outer: loop`), where it began.
    let mut label: Option<usize> = None;
    // Whether the last token ends an operand (a name, a literal, `)`, `]`): a `|` after one
    // is an operator, elsewhere it begins a closure's parameters.
    let mut operand = false;
    let mut closures: Vec<OpenClosure> = Vec::new();
    let mut found_closures: Vec<FoundClosure> = Vec::new();
    // The `while` loops whose condition goes on to a next item (see `Bindings::advanced`).
    let mut advancing: Vec<(usize, usize)> = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        let next = bytes.get(i + 1).copied();
        let after_operand = operand;
        if !b.is_ascii_whitespace() && !(b == b'/' && matches!(next, Some(b'/' | b'*'))) {
            operand = match b {
                b'"' | b'\'' | b')' | b']' => true,
                _ if b.is_ascii_alphanumeric() || b == b'_' => {
                    let end = ident_end(bytes, i);
                    !EXPRESSION_BEFORE.contains(&&bytes[i..end])
                }
                // `||` after an operand is one operator.
                b'|' if operand && next == Some(b'|') => {
                    i += 2;
                    operand = false;
                    continue;
                }
                _ => false,
            };
        }
        if matches!(b, b',' | b';' | b')' | b']' | b'}') {
            // A closure's body ends at a `,` or `;` where it began (an argument's or a
            // statement's end), or where a bracket around it closes.
            while let Some(closure) = closures.pop_if(|c| c.depth >= open.len()) {
                found_closures.push(closure.ended(bytes, i));
            }
        }
        match b {
            b'/' if next == Some(b'/') => {
                i = line_end(bytes, i);
                continue;
            }
            b'/' if next == Some(b'*') => {
                i = block_comment_end(bytes, i);
                continue;
            }
            b'"' => {
                i = string_end(bytes, i + 1);
                continue;
            }
            b'\'' => {
                match char_literal_end(bytes, i) {
                    Some(end) => i = end,
                    None => {
                        // A lifetime or a label: `'outer: loop` starts the loop at the label.
                        let end = ident_end(bytes, i + 1);
                        let colon = skip_spaces(bytes, end);
                        label = (bytes.get(colon) == Some(&b':')
                            && bytes.get(colon + 1) != Some(&b':'))
                        .then_some(i);
                        i = if label.is_some() { colon + 1 } else { end };
                    }
                }
                continue;
            }
            b'(' | b'[' => {
                // The call whose arguments this opens, if one does.
                let callee = (bindings.calls.last())
                    .filter(|&&(name, at)| b == b'(' && skip_spaces(bytes, at + name.len()) == i)
                    .map(|&(name, _)| name);
                let runs = match callee {
                    Some(name) if FRESH.contains(&name) => Runs::Fresh,
                    Some(name) if ONCE.contains(&name) => Runs::Once,
                    _ => Runs::Again,
                };
                open.push(Open {
                    bracket: b,
                    at: i,
                    body_of: None,
                    spawns: callee == Some(b"spawn".as_slice()),
                    runs,
                })
            }
            b'|' if !after_operand => {
                // A closure's parameters (`|x|`, `||`, `move |x|`): its body follows.
                let params_end = if next == Some(b'|') {
                    i + 2
                } else {
                    (bytes[i + 1..].iter().position(|&c| c == b'|'))
                        .map_or(bytes.len(), |n| i + n + 2)
                };
                closures.push(OpenClosure {
                    start: i,
                    depth: open.len(),
                    runs: open.last().map_or(Runs::Again, |o| o.runs),
                });
                i = params_end;
                continue;
            }
            b'{' => {
                let body_of = pending.last().filter(|p| p.depth == open.len()).copied();
                if body_of.is_some() {
                    pending.pop();
                }
                // `impl Trait for Type {` opens no loop.
                let body_of =
                    body_of.filter(|p| !matches!(p.kind, Keyword::For { looping: false }));
                open.push(Open {
                    bracket: b,
                    at: i,
                    body_of,
                    spawns: false,
                    runs: Runs::Again,
                });
            }
            b')' | b']' | b'}' => {
                // Unbalanced text (a file that does not compile) closes nothing.
                let Some(closed) = open.pop() else {
                    i += 1;
                    continue;
                };
                // A keyword left pending inside a closed bracket had no body there.
                pending.retain(|p| p.depth <= open.len());
                if closed.spawns && b == b')' {
                    found.spawns.push((closed.at as u32, i as u32));
                }
                if let (b'}', b'{', Some(p)) = (b, closed.bracket, closed.body_of) {
                    let (body, end) = (closed.at + 1, i + 1);
                    if p.kind == Keyword::While && bindings.advanced(p.start, body) {
                        advancing.push((p.start, end));
                    }
                    match p.kind {
                        Keyword::Fn { name } => found.functions.push(Function {
                            name: String::from_utf8_lossy(&bytes[name.0..name.1]).into(),
                            body: (body as u32, end as u32),
                            line: line_at(bytes, closed.at),
                        }),
                        kind => found.loops.push(SourceLoop {
                            start: p.start as u32,
                            end: end as u32,
                            heads: match kind {
                                Keyword::While => (p.start as u32, body as u32),
                                _ => (body as u32, end as u32),
                            },
                            carries: matches!(kind, Keyword::For { .. })
                                || bindings.carried(p.start, i),
                            reentered: false,
                        }),
                    }
                }
            }
            b';' => {
                // A function declared without a body (in a trait) has none to come.
                let depth = open.len();
                pending.retain(|p| !(matches!(p.kind, Keyword::Fn { .. }) && p.depth == depth));
            }
            _ if b.is_ascii_alphabetic() || b == b'_' => {
                // `r"…"`, `b'…'` and their kin are literals, not names.
                let literal = matches!(b, b'r' | b'b').then(|| prefixed_literal_end(bytes, i));
                if let Some(end) = literal.flatten() {
                    i = end;
                    continue;
                }
                i = word(
                    bytes,
                    i,
                    &mut pending,
                    &mut bindings,
                    &mut label,
                    open.len(),
                );
                continue;
            }
            _ => {}
        }
        if !b.is_ascii_whitespace() {
            label = None;
            bindings.previous = b"";
        }
        i += 1;
    }
    found.calls = (bindings.calls.iter())
        .map(|&(name, at)| (String::from_utf8_lossy(name).into_owned(), at as u32))
        .collect();
    for closure in closures.drain(..).rev() {
        found_closures.push(closure.ended(bytes, bytes.len()));
    }
    settle_bound_closures(&mut found_closures, &bindings.calls);
    mark_reentered(&mut found.loops, &found_closures, advancing);
    found
}

/// A closure bound to a name runs again where the name is called after it, else (only handed
/// on) once where it is handed: `closures`' runs, as `calls` (each name called, and where) say.
fn settle_bound_closures(closures: &mut [FoundClosure], calls: &[(&[u8], usize)]) {
    for closure in closures {
        if let Some(name) = closure.3 {
            let called = calls.iter().any(|&(n, at)| n == name && at > closure.1);
            closure.2 = if called { Runs::Again } else { Runs::Once };
        }
    }
}

/// Marks the loops their thread may enter again with nothing between (see the module docs):
/// those inside a loop that carries or a `while` that goes on to a next item (`advancing`), or
/// inside a closure that may run again, within the code the loop's thread starts with.
fn mark_reentered(
    loops: &mut [SourceLoop],
    closures: &[FoundClosure],
    advancing: Vec<(usize, usize)>,
) {
    let carrying: Vec<(usize, usize)> = (loops.iter())
        .filter(|m| m.carries)
        .map(|m| (m.start as usize, m.end as usize))
        .chain(advancing)
        .collect();
    for l in loops {
        let (start, end) = (l.start as usize, l.end as usize);
        let holds = |c: &&FoundClosure| c.0 < start && start < c.1;
        // Where the thread that runs it starts: the closure of a `spawn` around it, if any.
        let thread_start = (closures.iter().filter(holds))
            .filter(|c| c.2 == Runs::Fresh)
            .map(|c| c.0)
            .max()
            .unwrap_or(0);
        let in_carrying =
            (carrying.iter()).any(|&(from, to)| thread_start <= from && from < start && end <= to);
        let in_closure =
            (closures.iter().filter(holds)).any(|c| thread_start <= c.0 && c.2 == Runs::Again);
        l.reentered = in_carrying || in_closure;
    }
}

/// Keywords after which an expression begins (a `|` there begins a closure).
const EXPRESSION_BEFORE: &[&[u8]] = &[
    b"move", b"return", b"in", b"else", b"if", b"match", b"while", b"let", b"mut", b"break",
    b"yield", b"async",
];

/// The identifier at `i`: a `loop` or `while` becomes pending, a binding or an assignment is
/// noted in `bindings`; returns where it ends.
fn word<'a>(
    bytes: &'a [u8],
    i: usize,
    pending: &mut Vec<Pending>,
    bindings: &mut Bindings<'a>,
    label: &mut Option<usize>,
    depth: usize,
) -> usize {
    let end = ident_end(bytes, i);
    let name = &bytes[i..end];
    match bindings.previous {
        b"mut" => bindings.mutable.push((name, i)),
        b"let" => {}
        _ if assigns(bytes, skip_spaces(bytes, end)) => {
            // A field's assignment (`state.tries += 1`) assigns the variable it is a field
            // of; a path's (`a::b = …`) names no local.
            let path = i > 0 && bytes[i - 1] == b':';
            if let Some(root) = (!path).then(|| root_of(bytes, i)).flatten() {
                bindings.assigned.push(root);
            }
        }
        _ => {}
    }
    if name == b"fn" {
        bindings.fns.push(i);
    }
    // `name.method(`: a method called on it.
    let method = end + 1;
    if bytes.get(end) == Some(&b'.') && name != b"self" && ident_end(bytes, method) > method {
        let after_method = skip_spaces(bytes, ident_end(bytes, method));
        if bytes.get(after_method) == Some(&b'(') {
            bindings.receivers.push((name, i));
        }
    }
    // A name before `(` (or `::<…>(`) is called, unless `fn` defines it.
    let after = skip_spaces(bytes, end);
    if bindings.previous != b"fn"
        && (bytes.get(after) == Some(&b'(') || bytes[after..].starts_with(b"::<"))
    {
        bindings.calls.push((name, i));
    }
    bindings.previous = name;
    let kind = match name {
        b"loop" => Some(Keyword::Loop),
        b"while" => Some(Keyword::While),
        // `for<'a>` binds lifetimes, and opens no loop.
        b"for" if bytes.get(skip_spaces(bytes, end)) != Some(&b'<') => {
            Some(Keyword::For { looping: false })
        }
        b"in" => {
            let looping = (pending.iter_mut().rev())
                .find(|p| p.depth == depth && matches!(p.kind, Keyword::For { .. }));
            if let Some(p) = looping {
                p.kind = Keyword::For { looping: true };
            }
            None
        }
        b"fn" => {
            let at = skip_spaces(bytes, end);
            let name_end = ident_end(bytes, at);
            (name_end > at).then_some(Keyword::Fn {
                name: (at, name_end),
            })
        }
        _ => None,
    };
    // `r#loop` is an identifier, not the keyword.
    let raw = i >= 2 && &bytes[i - 2..i] == b"r#";
    if let (Some(kind), false) = (kind, raw) {
        pending.push(Pending {
            kind,
            start: label.unwrap_or(i),
            depth,
        });
    }
    *label = None;
    end
}

/// The variable a place at `i` belongs to (`state` for `state.count` there), with where it is;
/// `None` for a field of `self`, which is the object's (reached through `&self`, a field
/// is only written through what fgvt sees or a `Cell`).
fn root_of(bytes: &[u8], i: usize) -> Option<(&[u8], usize)> {
    let mut start = i;
    while start > 0 && bytes[start - 1] == b'.' {
        let before = start - 1;
        let name_start = bytes[..before]
            .iter()
            .rposition(|&b| !(b.is_ascii_alphanumeric() || b == b'_'))
            .map_or(0, |p| p + 1);
        if name_start == before {
            break;
        }
        start = name_start;
    }
    let root = &bytes[start..ident_end(bytes, start)];
    (root != b"self").then_some((root, start))
}

fn ident_end(bytes: &[u8], i: usize) -> usize {
    let len = bytes[i..]
        .iter()
        .position(|&b| !(b.is_ascii_alphanumeric() || b == b'_' || b >= 0x80))
        .unwrap_or(bytes.len() - i);
    i + len
}

fn skip_spaces(bytes: &[u8], mut i: usize) -> usize {
    while bytes.get(i).is_some_and(u8::is_ascii_whitespace) {
        i += 1;
    }
    i
}

fn line_end(bytes: &[u8], i: usize) -> usize {
    bytes[i..]
        .iter()
        .position(|&b| b == b'\n')
        .map_or(bytes.len(), |n| i + n)
}

/// Past the block comment opening at `i` (block comments nest in Rust).
fn block_comment_end(bytes: &[u8], mut i: usize) -> usize {
    let mut depth = 0usize;
    while i < bytes.len() {
        match (bytes[i], bytes.get(i + 1).copied()) {
            (b'/', Some(b'*')) => {
                depth += 1;
                i += 2;
            }
            (b'*', Some(b'/')) => {
                depth -= 1;
                i += 2;
                if depth == 0 {
                    return i;
                }
            }
            _ => i += 1,
        }
    }
    bytes.len()
}

/// Past the closing quote of a string whose text starts at `i`.
fn string_end(bytes: &[u8], mut i: usize) -> usize {
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b'"' => return i + 1,
            _ => i += 1,
        }
    }
    bytes.len()
}

/// Past a character literal opening at `i` (`'a'`, `'\n'`, `'\u{1F600}'`, `'é'`), or `None`
/// where the quote begins a lifetime or a label.
fn char_literal_end(bytes: &[u8], i: usize) -> Option<usize> {
    match bytes.get(i + 1)? {
        b'\\' => {
            // The escaped character is never the closing quote (`'\''`).
            let close = bytes.get(i + 3..)?.iter().position(|&b| b == b'\'')?;
            Some(i + 3 + close + 1)
        }
        _ => {
            // One character, however many bytes it takes in UTF-8, then the closing quote.
            let first = bytes[i + 1];
            let width = match first {
                0x00..=0x7f => 1,
                0xc0..=0xdf => 2,
                0xe0..=0xef => 3,
                _ => 4,
            };
            (bytes.get(i + 1 + width) == Some(&b'\'')).then_some(i + 2 + width)
        }
    }
}

/// Past a literal with a prefix at `i`: `b'x'`, `b"…"`, `r"…"`, `r#"…"#`, `br#"…"#`; `None`
/// where the `r` or `b` begins an identifier.
fn prefixed_literal_end(bytes: &[u8], i: usize) -> Option<usize> {
    // A letter inside an identifier (`for_each`'s `r`) begins nothing.
    if i > 0 && (bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_') {
        return None;
    }
    let mut j = i;
    if bytes[j] == b'b' {
        j += 1;
        match bytes.get(j) {
            Some(b'\'') => return char_literal_end(bytes, j),
            Some(b'"') => return Some(string_end(bytes, j + 1)),
            Some(b'r') => {}
            _ => return None,
        }
    }
    if bytes.get(j) != Some(&b'r') {
        return None;
    }
    j += 1;
    let hashes = bytes[j..].iter().take_while(|&&b| b == b'#').count();
    if bytes.get(j + hashes) != Some(&b'"') {
        return None;
    }
    let text = j + hashes + 1;
    let closing: Vec<u8> = std::iter::once(b'"')
        .chain(std::iter::repeat_n(b'#', hashes))
        .collect();
    let close = bytes[text..]
        .windows(closing.len())
        .position(|w| w == closing.as_slice())?;
    Some(text + close + closing.len())
}

/// The byte range of `needle`'s `n`th occurrence in `text` (for the tests).
#[cfg(test)]
fn nth(text: &str, needle: &str, n: usize) -> std::ops::Range<u32> {
    let at = text.match_indices(needle).nth(n).expect("in the text").0;
    at as u32..(at + needle.len()) as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    /// [`turn_within`] where the runtime knows no call of a marked function.
    fn within(source: &Source, head: u32, turn: &[u32]) -> bool {
        turn_within(source, head, turn, &|_, _| false)
    }

    /// The loops of `text` as the text of their keyword-to-brace span and of their heads.
    fn shown(text: &str) -> Vec<(&str, &str)> {
        let at = |r: std::ops::Range<u32>| &text[r.start as usize..r.end as usize];
        (scan(text).loops.into_iter())
            .filter(|l| !l.carries)
            .map(|l| (at(l.start..l.end), at(l.heads.0..l.heads.1)))
            .collect()
    }

    #[test]
    fn a_while_begins_its_turns_in_its_condition_and_a_loop_in_its_body() {
        let text = "fn f() {\n    while a.load(X) { b(); }\n    loop { c.cas(); }\n}";
        assert_eq!(
            shown(text),
            vec![
                ("while a.load(X) { b(); }", "while a.load(X) {"),
                ("loop { c.cas(); }", " c.cas(); }"),
            ]
        );
    }

    #[test]
    fn a_for_loop_carries_its_iterator_and_an_impl_for_is_no_loop() {
        let text =
            "impl<T> Tr for S<T> { fn f(g: impl for<'a> Fn(&'a u8)) { for x in v { a(); } } }";
        let source = scan(text);
        let kinds: Vec<(bool, &str)> = (source.loops.iter())
            .map(|l| (l.carries, &text[l.start as usize..l.end as usize]))
            .collect();
        assert_eq!(kinds, [(true, "for x in v { a(); }")]);
        assert_eq!(source.functions.len(), 1);
        assert_eq!(source.functions[0].name, "f");
    }

    #[test]
    fn nested_loops_close_inner_first_and_for_loops_are_not_listed() {
        let text = "loop { for x in v { while f(|| { g() }) {} } h(); }";
        let loops = shown(text);
        assert_eq!(loops.len(), 2, "{loops:?}");
        assert_eq!(loops[0].0, "while f(|| { g() }) {}");
        assert_eq!(loops[1].0, text);
    }

    #[test]
    fn comments_strings_chars_and_raw_identifiers_hide_nothing_and_add_nothing() {
        let text = r####"fn f() {
    // loop { in a comment
    /* while { /* nested */ loop { */
    let s = "loop { \" }";
    let r = r#"while { "#;
    let c = '{'; let d = '\''; let e = b'}';
    let r#loop = 1;
    'outer: loop { x.load(); }
    fn g<'a>(v: &'a u8) { while_not_a_keyword(); }
}"####;
        let loops = shown(text);
        assert_eq!(loops, vec![("'outer: loop { x.load(); }", " x.load(); }")]);
    }

    #[test]
    fn a_loop_that_assigns_a_variable_bound_mut_before_it_carries_it_and_is_not_listed() {
        let carrying = [
            "fn f() { let mut seen = x.load(); while let Err(now) = x.cas(seen) { seen = now; } }",
            "fn f(mut tries: u8) { loop { if x.cas().is_ok() { break } tries += 1; } }",
            "fn f() { let mut tail = 0; loop { tail <<= 1; } }",
            "fn f() { let mut state = S::new(); loop { state.tries += 1; } }",
        ];
        for text in carrying {
            assert_eq!(shown(text), vec![], "{text}");
        }
        let fresh = [
            // Bound inside the loop, a closure's parameter, a field, a comparison.
            "fn f() { loop { let mut top = x.load(); top = 1; } }",
            "fn f() { let mut n = 0; loop { c.with(|p| { *p = n }); } }",
            "fn f() { let s = S::new(); loop { self.count = 2; s.count = 1; } }",
            "fn f() { let mut a = 0; loop { if a == 1 || a <= 2 || a != 3 { break } } }",
            // A `mut` binding of another function, above this one.
            "fn g() { let mut k = 0; k = 1; } fn f() { loop { k = 2; } }",
        ];
        for text in fresh {
            assert_eq!(shown(text).len(), 1, "{text}");
        }
    }

    #[test]
    fn a_turn_is_within_the_loop_that_holds_it_and_may_begin_at_its_head() {
        let text = "loop { while a.load() {} b.cas(); } c.load();";
        let loops = scan(text);
        let a = nth(text, "a.load", 0).start;
        let b = nth(text, "b.cas", 0).start;
        let c = nth(text, "c.load", 0).start;
        // The inner while's turn, then the outer loop's, which its head begins too.
        assert!(within(&loops, a, &[a]));
        assert!(within(&loops, a, &[a, b]));
        // An access a `for` inside the loop makes: more than once per turn.
        let text = "loop { for x in v { a.load(); } }";
        let a = nth(text, "a.load", 0).start;
        assert!(!within(&scan(text), a, &[a]));
        // An access outside every loop is in no turn; a `while` body is no head.
        assert!(!within(&loops, a, &[a, b, c]));
        let body = "while x.load() { y.load(); }";
        let y = nth(body, "y.load", 0).start;
        assert!(!within(&scan(body), y, &[y]));
    }

    /// A loop whose function an operation may enter twice is no retry loop: leaving it on the
    /// first entry and coming back on the second repeats its first access as a turn would.
    #[test]
    fn a_loop_whose_function_runs_twice_in_an_operation_is_no_retry_loop() {
        let waits = |op: &str| {
            let text = format!(
                "fn wait(&self) {{ while self.0.load() != 1 {{}} }}\n\
                 fn wait_twice(&self) {{ {op} }}\nfn other(&self) {{ self.wait(); }}"
            );
            let load = nth(&text, "self.0.load", 0).start;
            within(&scan(&text), load, &[load])
        };
        assert!(
            !waits("self.wait(); self.wait();"),
            "called twice by one function"
        );
        assert!(!waits("for _ in 0..2 { self.wait(); }"), "called in a loop");
        assert!(!waits("loop { self.wait(); }"), "called in a loop");
        // Called once by each of two operations: each entry is a new operation.
        assert!(waits("self.wait();"));
        // Called by a function that runs twice itself.
        let text = "fn wait(&self) { while self.0.load() != 1 {} }\n\
                    fn step(&self) { self.wait(); }\n\
                    fn op(&self) { self.step(); self.step(); }";
        let load = nth(text, "self.0.load", 0).start;
        assert!(!within(&scan(text), load, &[load]));
        // A function that calls itself: its callers are followed until the depth runs out.
        let text =
            "fn wait(&self, n: u8) { while self.0.load() != 1 {} if n > 0 { self.wait(n - 1) } }\n\
                    fn op(&self) { self.wait(2); }";
        let load = nth(text, "self.0.load", 0).start;
        assert!(!within(&scan(text), load, &[load]));
        // Called from two macros' arguments, outside any function: no function runs it twice.
        let macros = "fn wait(&self) { while self.0.load() != 1 {} }\n\
                      fn op(&self) { self.wait(); }\nm!(a in op());\nm!(b in op());";
        let load = nth(macros, "self.0.load", 0).start;
        assert!(within(&scan(macros), load, &[load]));
        // Called once by a thread a function spawns and once by the function's own thread.
        let spawned = "fn inc(&self) { while self.0.load() != 1 {} }\n\
                       fn model() { thread::spawn(move || l2.inc()); l.inc(); }";
        let load = nth(spawned, "self.0.load", 0).start;
        assert!(within(&scan(spawned), load, &[load]));
        // A definition is no call, nor is a name in a string or a comment.
        assert!(scan(text).calls.iter().all(|(name, _)| name != "op"));
        let text = "fn wait(&self) { while self.0.load() != 1 {} }\n\
                    fn test() { t.thread(&[\"wait()\"]).thread(&[\"wait()\"]); } // wait()";
        assert!(scan(text).calls.iter().all(|(name, _)| name != "wait"));
    }

    #[test]
    fn a_turn_may_begin_in_a_helper_the_loop_calls() {
        let text = "impl L {\n    fn try_lock(&self) -> bool { self.0.cas().is_ok() }\n    \
                    fn lock(&self) { while !self.try_lock() {} self.1.load(); }\n    \
                    fn wait(&self) { loop { if self.ready() { break } } }\n    \
                    fn ready(&self) -> bool { for _ in 0..2 { self.2.load(); } true }\n}";
        let source = scan(text);
        let names: Vec<&str> = source.functions.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["try_lock", "lock", "wait", "ready"]);
        let cas = nth(text, "self.0.cas", 0).start;
        let after = nth(text, "self.1.load", 0).start;
        let load = nth(text, "self.2.load", 0).start;
        assert!(
            within(&source, cas, &[cas]),
            "`try_lock` called by the `while`"
        );
        assert!(!within(&source, cas, &[cas, after]), "past the loop");
        // `ready`'s access is in a `for` loop of its own: its turns are that loop's.
        assert!(!within(&source, load, &[load]));
        // A helper called once per element by a `for` inside a `loop` is the `for`'s turn.
        let text = "fn step(&self) { self.0.load(); }\n\
                    fn run(&self) { loop { for _ in 0..2 { self.step(); } } }";
        let load = nth(text, "self.0.load", 0).start;
        assert!(!within(&scan(text), load, &[load]));
        // A helper called after the head: its accesses are the turn's.
        let text = "fn cas(&self) { self.0.cas(); }\n\
                    fn write(&self) { loop { let old = self.0.load(); self.cas(); } }";
        let (load, cas) = (
            nth(text, "self.0.load", 0).start,
            nth(text, "self.0.cas", 0).start,
        );
        assert!(within(&scan(text), load, &[load, cas]));
        // Called twice in a turn, the helper's access is made twice in it.
        let text = "fn step(&self) { self.0.load(); }\n\
                    fn run(&self) { loop { self.step(); self.step(); } }";
        let load = nth(text, "self.0.load", 0).start;
        assert!(!within(&scan(text), load, &[load]));
    }

    /// The loops of `text` its thread may enter again with nothing between, as their text.
    fn reentered(text: &str) -> Vec<&str> {
        (scan(text).loops.into_iter())
            .filter(|l| l.reentered)
            .map(|l| &text[l.start as usize..l.end as usize])
            .collect()
    }

    #[test]
    fn a_loop_in_a_for_or_in_a_closure_called_again_is_entered_again() {
        // Inside a `for`, or a `while` that carries a counter: every turn enters it again.
        let text = "fn f() { for _ in 0..2 { while a.load() {} } }";
        assert_eq!(reentered(text), ["while a.load() {}"]);
        let text = "fn f() { let mut i = 0; while i < 2 { loop { a.cas(); } i += 1; } }";
        assert_eq!(reentered(text), ["loop { a.cas(); }"]);
        // Inside a `while` whose condition takes the next item of a work list.
        let text =
            "fn f(mut todo: Vec<u8>) { while let Some(t) = todo.pop() { while a.load() {} } }";
        assert_eq!(reentered(text), ["while a.load() {}"]);
        // A method called in a `loop`'s body is no next item: a test-and-test-and-set lock's
        // waiting loop, inside its retry loop, is a retry loop.
        let text =
            "fn f() { let mut b = B::new(); loop { while a.load() { b.snooze(); } a.cas(); } }";
        assert_eq!(reentered(text), Vec::<&str>::new());
        // Inside a closure bound to a name, or handed to a call that may run it again.
        let text = "fn f() { let w = || { while a.load() {} }; w(); w(); }";
        assert_eq!(reentered(text), ["while a.load() {}"]);
        let text = "fn f() { v.iter().for_each(move |x| loop { a.cas(x); }); }";
        assert_eq!(reentered(text), ["loop { a.cas(x); }"]);
        let text = "fn f() { let w = || c.with(|p| while a.load() {}); w(); w(); }";
        assert_eq!(reentered(text), ["while a.load() {}"]);
        // A closure a call runs once: a thread's, a model's, a cell's; a closure that calls
        // one of a thread's or a model's again runs it afresh there.
        for once in [
            "fn f() { thread::spawn(move || { while a.load() {} }); }",
            "fn f() { loom::model(|| { loop { a.cas(); } }); }",
            "fn f() { c.with_mut(|p| while a.load() {}); }",
            "fn f() { let m = || loom::model(|| { while a.load() {} }); m(); m(); }",
            "fn f() { for _ in 0..2 { spawn(move || loop { a.cas(); }); } }",
            "fn f() { let body = move || { while a.load() {} }; Model::new().localize(body); }",
        ] {
            assert_eq!(reentered(once), Vec::<&str>::new(), "{once}");
        }
        // `||` and `|` between operands are operators; a loop after them is in no closure.
        for (text, found) in [
            (
                "fn f() { let b = x || y | z; while a.load() {} if p(q) || (r) { loop {} } }",
                2,
            ),
            ("fn f() { if x || y { while a.load() {} } }", 1),
            (
                "fn f() { match k { A | B => loop { a.cas(); }, _ => {} } }",
                1,
            ),
            ("fn f() { if s.f(1)[0] | 2 == 0 { while a.load() {} } }", 1),
        ] {
            assert_eq!(scan(text).loops.len(), found, "{text}");
            assert_eq!(reentered(text), Vec::<&str>::new(), "{text}");
        }
        // A closure's expression body ends at its argument's end.
        let text = "fn f() { g(|x| x + 1, 2); while a.load() {} }";
        assert_eq!(reentered(text), Vec::<&str>::new());
        // An outer `loop` carries nothing: the loop inside it is no re-entry.
        let text = "fn f() { loop { while a.load() {} } }";
        assert_eq!(reentered(text), Vec::<&str>::new());
    }
}
