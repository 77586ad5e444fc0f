//! Tests of the modeling language: syntax, diagnostics, and execution semantics.

use std::sync::Arc;

use fgvt_checker::{Apply, Spec};
use fgvt_tree::{
    Call, CoarseEvent, Event, EventKind, Fault, History, Program, SourceMap, Step, Value,
};

use super::lexer::{lex, Tok};
use super::*;

const PAIR_SNAPSHOT: &str = r#"
object PairSnapshot {
    shared int d[2] = {0, 0};

    op write(int i, int v) {
        d[i] = v;
    }

    op read() {
        while (true) {
            int x = d[0];
            int y = d[1];
            if (x == d[0]) return (x, y);
        }
    }
}
"#;

fn model(text: &str) -> Arc<Model> {
    let mut sources = SourceMap::new();
    match Model::compile(&mut sources, "test.fgv", text, None) {
        Ok(m) => Arc::new(m),
        Err(e) => panic!("{}", render(&e)),
    }
}

fn error(text: &str) -> (LangError, String) {
    let mut sources = SourceMap::new();
    let e = Model::compile(&mut sources, "bad.fgv", text, None)
        .expect_err("the model should not compile");
    let r = render(&e);
    (e, r)
}

fn render(e: &LangError) -> String {
    let mut out = String::new();
    miette::GraphicalReportHandler::new_themed(miette::GraphicalTheme::unicode_nocolor())
        .render_report(&mut out, e)
        .unwrap();
    out
}

fn call(s: &str) -> Call {
    parse_call(s).unwrap()
}

fn calls(list: &[&str]) -> Vec<Call> {
    list.iter().map(|s| call(s)).collect()
}

fn program(m: &Arc<Model>, init: &[&str], threads: &[&[&str]], finals: &[&str]) -> TestProgram {
    TestProgram::new(
        m.clone(),
        calls(init),
        threads.iter().map(|t| calls(t)).collect(),
        calls(finals),
    )
}

/// A state of a test with the coarse history of the path that reached it, as the explorer
/// keeps it (the program itself no longer carries its history).
type Path = (TestState, History);

/// `path`'s history extended by the call and return `event` emits.
fn extend(history: &History, event: &Event) -> History {
    let mut h = history.clone();
    if let Some(c) = &event.call {
        h.call(event.thread, c.clone());
    }
    if let Some(v) = &event.ret {
        h.ret(event.thread, v.clone());
    }
    h
}

/// Takes `thread`'s step, which must move.
fn mv(p: &TestProgram, s: &Path, thread: usize) -> (Path, Event) {
    match p.step(&s.0, thread) {
        Step::Moved { state, event } => ((state, extend(&s.1, &event)), (*event).clone()),
        other => panic!("thread {thread} did not move: {other:?}"),
    }
}

/// Runs a schedule; returns the final state and the events.
fn run(p: &TestProgram, schedule: &[usize]) -> (Path, Vec<Event>) {
    let mut s = p.initial_state().unwrap();
    let mut events = Vec::new();
    for &t in schedule {
        let (n, e) = mv(p, &s, t);
        s = n;
        events.push(e);
    }
    (s, events)
}

/// Runs one thread until it is done; returns the events.
fn run_thread(p: &TestProgram, s: &mut Path, thread: usize) -> Vec<Event> {
    let mut events = Vec::new();
    loop {
        match p.step(&s.0, thread) {
            Step::Moved { state, event } => {
                *s = (state, extend(&s.1, &event));
                events.push((*event).clone());
            }
            Step::Done => return events,
            other => panic!("unexpected {other:?}"),
        }
    }
}

/// The whole history at a complete leaf: the path's, then the `final` part's.
fn finish(p: &TestProgram, s: &Path) -> Result<History, Fault> {
    let mut h = s.1.clone();
    h.events.extend(p.finish(&s.0)?.events);
    Ok(h)
}

/// The history at a stuck leaf: the path's, with the calls the blocked threads were about to make.
fn stuck_history(p: &TestProgram, s: &Path) -> History {
    let mut h = s.1.clone();
    for (t, c) in p.blocked_calls(&s.0) {
        h.call(t, c);
    }
    h.stuck = true;
    h
}

fn text_of<'a>(text: &'a str, e: &Event) -> &'a str {
    &text[e.span.start as usize..e.span.end as usize]
}

fn int_pair(a: i64, b: i64) -> Value {
    Value::Tuple(vec![Value::Int(a), Value::Int(b)])
}

// ----- lexing and parsing -----

#[test]
fn lexes_tokens_and_skips_comments() {
    let text = "shared int d[2]; // comment\n /* block\n comment */ x == -1 && y";
    let toks: Vec<Tok> = lex(text).unwrap().into_iter().map(|t| t.tok).collect();
    use Tok::*;
    assert_eq!(
        toks,
        vec![
            Shared, Ident, Ident, LBracket, Int, RBracket, Semi, Ident, EqEq, Minus, Int, AndAnd,
            Ident, Eof
        ]
    );
    let t = lex("retry: \"a\\\"b\"").unwrap();
    assert_eq!(t[2].tok, Str);
    assert_eq!(
        super::lexer::unquote(&"retry: \"a\\\"b\""[t[2].start..t[2].end]),
        "a\"b"
    );
    assert!(lex("x # y").is_err());
}

/// One model using every construct of the language, run serially through the spec.
const EVERYTHING: &str = r#"
record Pair { int a; int b; }
object Everything {
    record Node { int val; Node next; (Node, bool) nm; }
    shared int d[3] = {1, 2};
    shared int count = 0;
    shared Node head = null;
    shared (Node, bool) marked;
    shared bool flag;
    lock m, n;

    constructor {
        Node dummy = new Node(0);
        head = dummy;
        marked = (dummy, false);
    }

    fn fact(int k) {
        if (k <= 1) return 1;
        return k * fact(k - 1);
    }

    fn pair(x, y) { return (y, x); }

    op arith() {
        return (1 + 2 * 3 - 4 / 2 % 3, -(5) + 1, 7 % 3 == 1 && !false || 1 / 0 == 0, fact(5));
    }

    op defaults() {
        int i; bool b; Node n; (int, bool) t;
        return (i, b, n, t, d[2], flag, marked.1);
    }

    op loops() {
        int sum = 0;
        int i = 0;
        outer: loop {
            i = i + 1;
            if (i > 10) break;
            int j = 0;
            while (true) {
                j = j + 1;
                if (j > i) continue outer;
                if (j == 3) break;
                if (i == 7) break outer;
            }
            sum = sum + 100;
        }
        return (i, sum);
    }

    op tuples() {
        var (a, b) = pair(1, 2);
        var t = (a, (b, true));
        (Node, bool) nm = marked;
        (a, b) = (b, a);
        return (a, b, t.1.0, t.1.1, nm.0 == head);
    }

    op heap(v) {
        Node n = new Node(v, head);
        head = n;
        head.next.val = head.next.val + 1;
        count = count + 1;
        return (head.val, head.next.val, count, new Pair(3).b);
    }

    op casing() {
        Node h = head;
        bool ok1 = cas(head.nm, (null, false), (h, true));
        bool ok2 = cas(head.nm, (h, false), (h, true));
        bool ok3 = cas(d[0], 1, 10);
        bool ok4 = dcas(count, d[1], 0, 2, 5, 20);
        return (ok1, ok2, ok3, ok4, d[0], d[1], count);
    }

    op locking() {
        lock(m);
        lock(m);
        unlock(m);
        synchronized (this) {
            synchronized (head) { count = count + 1; }
        }
        unlock(m);
        atomic { d[0] = d[1]; d[1] = 0; }
        await(d[1] == 0);
        assert(d[0] == 2, "d[0] should be 2");
        assert(true);
        return;
    }

    op early() {
        int i = 0;
        while (i < 5) {
            synchronized (n) {
                if (i == 2) return i;
            }
            i = i + 1;
        }
        return -1;
    }
}
"#;

fn apply(spec: &SelfSpec, state: &Memory, c: &str) -> (Value, Memory) {
    match spec.apply(state, 0, &call(c)) {
        Apply::Returns { value, state } => (value, state),
        other => panic!("{c}: {other:?}"),
    }
}

#[test]
fn every_construct_parses_and_runs() {
    let m = model(EVERYTHING);
    assert_eq!(m.name(), "Everything");
    let names: Vec<String> = m.operations().into_iter().map(|o| o.name).collect();
    assert_eq!(
        names,
        ["arith", "defaults", "loops", "tuples", "heap", "casing", "locking", "early"]
    );
    assert_eq!(m.operation("heap").unwrap().params, ["v"]);
    let spec = SelfSpec::new(m.clone());
    let s0 = spec.initial();
    let v = |c: &str| apply(&spec, &s0, c).0;
    assert_eq!(v("arith()").to_string(), "(5, -4, true, 120)");
    assert_eq!(
        v("defaults()").to_string(),
        "(0, false, null, (0, false), 0, false, false)"
    );
    // i = 1, 2 leave through `continue outer`; 3..=6 add 100; 7 leaves through `break outer`.
    assert_eq!(v("loops()").to_string(), "(7, 400)");
    // pair(1, 2) = (2, 1); the swap makes (a, b) = (1, 2).
    assert_eq!(v("tuples()").to_string(), "(1, 2, 1, true, true)");
    let (r, s1) = apply(&spec, &s0, "heap(7)");
    assert_eq!(r.to_string(), "(7, 1, 1, 0)");
    // The new head's successor is the node of 7, incremented to 8.
    assert_eq!(apply(&spec, &s1, "heap(8)").0.to_string(), "(8, 8, 2, 0)");
    assert_eq!(
        v("casing()").to_string(),
        "(true, false, true, true, 10, 20, 5)"
    );
    let (r, after) = apply(&spec, &s0, "locking()");
    assert_eq!(r, Value::Unit);
    // Every lock is free again (m, n, this, and the head node's monitor).
    assert!(after.locks.iter().all(|l| l.count == 0));
    assert!(after.heap.iter().all(|o| o.monitor.count == 0));
    assert!(matches!(
        spec.apply(&after, 1, &call("early()")),
        Apply::Returns { .. }
    ));
    // Run again, the atomic block moves d[1] = 0 into d[0]: the assertion fails with its message.
    assert!(
        matches!(spec.apply(&after, 1, &call("locking()")), Apply::Invalid(m) if m.contains("d[0] should be 2"))
    );
    let (r, after) = apply(&spec, &s0, "early()");
    assert_eq!(r, Value::Int(2));
    // `return` inside `synchronized` released `n`.
    assert_eq!(
        after.locks.iter().map(|l| l.count).collect::<Vec<_>>(),
        vec![0, 0, 0]
    );
}

#[test]
fn parses_calls_with_literal_arguments() {
    assert_eq!(
        parse_call("write(0, -2)").unwrap(),
        Call::new("write", vec![Value::Int(0), Value::Int(-2)])
    );
    assert_eq!(
        parse_call(r#"add((1, true), null, "k v")"#).unwrap(),
        Call::new(
            "add",
            vec![
                Value::Tuple(vec![Value::Int(1), Value::Bool(true)]),
                Value::Null,
                Value::Str("k v".into())
            ]
        )
    );
    assert_eq!(parse_call("read()").unwrap(), Call::new("read", vec![]));
    assert_eq!(parse_call("write(0, x)").unwrap_err().offset, 9);
    assert_eq!(parse_call("write(0, 1) x").unwrap_err().offset, 12);
    assert!(parse_call("write(0,")
        .unwrap_err()
        .message
        .contains("expected"));
}

// ----- diagnostics -----

#[test]
fn syntax_error_names_expected_and_found_with_position() {
    let (e, r) = error("object A {\n    shared int x = 0\n    op f() { }\n}\n");
    assert_eq!(e.kind, ErrorKind::Syntax);
    assert!(e.message.contains("expected `;`"), "{}", e.message);
    assert!(e.message.contains("found `op`"), "{}", e.message);
    assert!(r.contains("bad.fgv:2:21"), "{r}");
    assert!(r.contains("add `;`"), "{r}");
    let (e, r) = error("object A {\n    op f() { x = ; }\n}\n");
    assert!(
        e.message.contains("expected an expression, found `;`"),
        "{}",
        e.message
    );
    assert!(r.contains("bad.fgv:2:18"), "{r}");
}

#[test]
fn unknown_name_suggests_a_close_one() {
    let (e, r) =
        error("object A {\n    shared int head;\n    op f() {\n        return haed;\n    }\n}\n");
    assert_eq!(e.kind, ErrorKind::UnknownName);
    assert!(r.contains("unknown variable `haed`"), "{r}");
    assert!(r.contains("bad.fgv:4:16"), "{r}");
    assert!(r.contains("did you mean `head`?"), "{r}");
    assert!(r.contains('^') || r.contains('┬'), "{r}");
    let (_, r) = error("object A {\n    op f() { zzz = 1; }\n}\n");
    assert!(r.contains("shared int zzz;"), "{r}");
    let (e, r) =
        error("object A {\n    op f() { var n = new Nod(); }\n}\nrecord Node { int v; }\n");
    assert_eq!(e.kind, ErrorKind::UnknownName);
    assert!(r.contains("did you mean `Node`?"), "{r}");
    let (_, r) =
        error("record Node { int val; }\nobject A {\n    op f(Node n) { return n.vall; }\n}\n");
    assert!(
        r.contains("unknown field `vall`") && r.contains("did you mean `val`?"),
        "{r}"
    );
    let (_, r) = error("object A {\n    op f() { outer: loop { break outr; } }\n}\n");
    assert!(
        r.contains("unknown loop label `outr`") && r.contains("did you mean `outer`?"),
        "{r}"
    );
}

#[test]
fn wrong_arity_says_how_many() {
    let (e, r) = error("object A {\n    fn write(i, v) { }\n    op f() { write(1); }\n}\n");
    assert_eq!(e.kind, ErrorKind::Arity);
    assert!(r.contains("bad.fgv:3:14"), "{r}");
    assert!(r.contains("`write` takes 2 arguments"), "{r}");
    let (e, r) = error("record N { int a; }\nobject A {\n    op f() { var n = new N(1, 2); }\n}\n");
    assert_eq!(e.kind, ErrorKind::Arity);
    assert!(r.contains("the fields of `N` are, in order: a"), "{r}");
    let (e, _) = error("object A {\n    shared int x;\n    op f() { cas(x, 1); }\n}\n");
    assert_eq!(e.kind, ErrorKind::Arity);
}

#[test]
fn duplicate_definitions_are_rejected() {
    let (e, r) = error("object A {\n    op f() { }\n    op f() { }\n}\n");
    assert_eq!(e.kind, ErrorKind::Duplicate);
    assert!(
        r.contains("operation `f` is defined twice") && r.contains("bad.fgv:3:8"),
        "{r}"
    );
    assert!(
        r.contains("first defined here") && r.contains("rename or remove"),
        "{r}"
    );
    let (e, _) = error("object A {\n    op f() { int x = 1; int x = 2; }\n}\n");
    assert_eq!(e.kind, ErrorKind::Duplicate);
    let (e, _) = error("record R { int a; int a; }\nobject A { }\n");
    assert_eq!(e.kind, ErrorKind::Duplicate);
    let (e, _) = error("record R { int a; }\nrecord R { int b; }\nobject A { }\n");
    assert_eq!(e.kind, ErrorKind::Duplicate);
    let (e, _) = error("object A {\n    shared int x;\n    lock x;\n}\n");
    assert_eq!(e.kind, ErrorKind::Duplicate);
    // Shadowing in an inner block is allowed.
    model("object A {\n    op f() { int x = 1; { int x = 2; } return x; }\n}\n");
}

#[test]
fn other_misuses_are_reported() {
    let (e, r) = error("object A {\n    op f() { break; }\n}\n");
    assert_eq!(e.kind, ErrorKind::Invalid);
    assert!(r.contains("`break` outside of a loop"), "{r}");
    let (e, r) = error("object A {\n    op f() { int x = 0; cas(x, 0, 1); }\n}\n");
    assert_eq!(e.kind, ErrorKind::Invalid);
    assert!(r.contains("needs a shared location"), "{r}");
    let (_, r) = error("object A {\n    op f() { cas(1 + 2, 0, 1); }\n}\n");
    assert!(r.contains("needs a shared location"), "{r}");
    let (_, r) = error("object A { }\nobject B { }\n");
    assert!(r.contains("several objects"), "{r}");
    let mut sources = SourceMap::new();
    let e = Model::compile(
        &mut sources,
        "two.fgv",
        "object A { }\nobject B { }\n",
        Some("C"),
    )
    .unwrap_err();
    assert_eq!(e.kind, ErrorKind::UnknownName);
    assert!(Model::compile(
        &mut sources,
        "two.fgv",
        "object A { }\nobject B { op f() { } }\n",
        Some("B")
    )
    .is_ok());
}

/// A model whose one operation has `body`, with shared `x`, a record `Node` and a lock.
fn with_orderings(body: &str) -> String {
    format!(
        "object A {{\n    record Node {{ int v; }}\n    shared int x = 0;\n    lock m;\n    op f() {{\n        {body}\n    }}\n}}\n"
    )
}

#[test]
fn orderings_parse_on_loads_stores_cas_and_fences() {
    let m = model(&with_orderings(
        "int a = x.load(acquire); x.store(a + 1, release); Node n = new Node(1); \
         n.v.store(2, relaxed); int b = n.v.load(seq_cst); \
         bool c = cas(x, 1, 2, acq_rel, acquire); bool d = cas(x, 1, 2, release); \
         fence(acq_rel); fence(seq_cst);",
    ));
    assert!(m.is_weak());
    let accesses: Vec<(String, fgvt_memory::Order)> = m
        .ordered_accesses()
        .into_iter()
        .map(|a| (a.access, a.order))
        .collect();
    use fgvt_memory::Order::*;
    assert_eq!(
        accesses,
        [
            ("load of `x`".to_string(), Acquire),
            ("store to `x`".to_string(), Release),
            ("store to `n.v`".to_string(), Relaxed),
            ("load of `n.v`".to_string(), SeqCst),
            ("cas on `x`".to_string(), AcqRel),
            ("cas on `x`".to_string(), Release),
            ("fence".to_string(), AcqRel),
            ("fence".to_string(), SeqCst),
        ]
    );
    // Only `seq_cst`, or nothing: sequentially consistent.
    assert!(!model(&with_orderings(
        "int a = x.load(seq_cst); fence(seq_cst); x = a;"
    ))
    .is_weak());
    assert!(!model(PAIR_SNAPSHOT).is_weak());
    // `fence` is no keyword: a function may be named so.
    let m = model(
        "object A {\n    fn fence(int k) { return k; }\n    op f() { return fence(1); }\n}\n",
    );
    assert!(!m.is_weak());
}

#[test]
fn an_ordering_an_access_cannot_take_is_an_error_at_its_place() {
    for (body, message, at) in [
        (
            "int a = x.load(release);",
            "a load cannot be `release`",
            "release",
        ),
        (
            "int a = x.load(acq_rel);",
            "a load cannot be `acq_rel`",
            "acq_rel",
        ),
        (
            "x.store(1, acquire);",
            "a store cannot be `acquire`",
            "acquire",
        ),
        ("fence(relaxed);", "a fence cannot be `relaxed`", "relaxed"),
        (
            "bool b = cas(x, 0, 1, acq_rel, release);",
            "a failed `cas` cannot be `release`",
            "release",
        ),
        (
            "int a = x.load(Acquire);",
            "`Acquire` is not a memory ordering",
            "Acquire",
        ),
        (
            "int a = x.load(aquire);",
            "`aquire` is not a memory ordering",
            "aquire",
        ),
        ("int a = x.load();", "expected a memory ordering", ")"),
        (
            "int a = 0; int b = a.load(relaxed);",
            "`.load` needs a shared location",
            "a.load",
        ),
        (
            "int a = 0; a.store(1, relaxed);",
            "`.store` needs a shared location",
            "a.store",
        ),
        (
            "int a = x.store(1, relaxed);",
            "a `.store` is a statement of its own",
            "x.store(1, relaxed)",
        ),
        (
            "atomic { int a = x.load(relaxed); }",
            "inside `atomic` or `await`",
            "relaxed",
        ),
        (
            "await(x.load(acquire) == 1);",
            "inside `atomic` or `await`",
            "acquire",
        ),
        (
            "atomic { fence(release); }",
            "inside `atomic` or `await`",
            "release",
        ),
        (
            "int a = x.fetch(relaxed);",
            "`fetch` is not an access",
            "fetch",
        ),
        (
            "bool b = cas(x, 0, 1, acq_rel, acquire, relaxed);",
            "`cas` takes 3 arguments (5 with orderings), found 6",
            "cas(",
        ),
    ] {
        let text = with_orderings(body);
        let (_, r) = error(&text);
        assert!(r.contains(message), "{body}: {r}");
        // The caret is on line 6, under the offending text.
        let column = text.lines().nth(5).unwrap().find(at).unwrap() + 1;
        assert!(r.contains(&format!("bad.fgv:6:{column}")), "{body}: {r}");
    }
    let (_, r) = error(&with_orderings("int a = x.load(Acquire);"));
    assert!(r.contains("did you mean `acquire`?"), "{r}");
    let (_, r) = error(&with_orderings("int a = x.load(seqcst);"));
    assert!(r.contains("did you mean `seq_cst`?"), "{r}");
}

// ----- execution -----

#[test]
fn pair_snapshot_steps_are_the_shared_accesses() {
    let m = model(PAIR_SNAPSHOT);
    let p = program(
        &m,
        &["write(0, 1)", "write(1, 1)"],
        &[&["write(0, 2)"], &["read()"]],
        &[],
    );
    let s0 = p.initial_state().unwrap();
    assert_eq!(
        s0.1.to_string(),
        "init:write(0, 1) init:ret () init:write(1, 1) init:ret ()"
    );

    // T1 reads d[0] = 1; its call is emitted with that first event.
    let (s1, e) = mv(&p, &s0, 1);
    assert_eq!(
        (e.kind, e.location.as_str(), e.value.as_str()),
        (EventKind::Read, "d[0]", "1")
    );
    assert_eq!(e.call, Some(call("read()")));
    assert_eq!(e.ret, None);
    assert_eq!(text_of(PAIR_SNAPSHOT, &e), "d[0]");
    assert_eq!((e.thread, e.op_index, e.op.as_str()), (1, 0, "read"));

    // T0's write is one step: call and return together.
    let (s2, e) = mv(&p, &s1, 0);
    assert_eq!(
        (e.kind, e.location.as_str(), e.value.as_str()),
        (EventKind::Write, "d[0]", "2")
    );
    assert_eq!(text_of(PAIR_SNAPSHOT, &e), "d[i] = v");
    assert_eq!(
        (e.call.clone(), e.ret.clone()),
        (Some(call("write(0, 2)")), Some(Value::Unit))
    );
    assert!(matches!(p.step(&s2.0, 0), Step::Done));

    // T1: y = d[1], then the re-validation `x == d[0]` fails, then a second round.
    let (s3, e) = mv(&p, &s2, 1);
    assert_eq!((e.location.as_str(), e.value.as_str()), ("d[1]", "1"));
    let (s4, e) = mv(&p, &s3, 1);
    assert_eq!(
        (e.location.as_str(), e.value.as_str(), e.ret.clone()),
        ("d[0]", "2", None)
    );
    let (s5, _) = mv(&p, &s4, 1);
    let (s6, _) = mv(&p, &s5, 1);
    let (s7, e) = mv(&p, &s6, 1);
    assert_eq!(
        (e.location.as_str(), e.ret.clone()),
        ("d[0]", Some(int_pair(2, 1)))
    );
    assert!(matches!(p.step(&s7.0, 1), Step::Done));
    assert_eq!(
        finish(&p, &s7).unwrap().to_string(),
        "init:write(0, 1) init:ret () init:write(1, 1) init:ret () T1:read() T0:write(0, 2) T0:ret () T1:ret (2, 1)"
    );
}

#[test]
fn pair_snapshot_can_return_a_pair_that_never_existed() {
    let m = model(PAIR_SNAPSHOT);
    let p = program(
        &m,
        &["write(0, 1)", "write(1, 1)"],
        &[
            &["write(0, 2)", "write(1, 2)", "write(1, 1)", "write(0, 1)"],
            &["read()"],
        ],
        &[],
    );
    // x = d[0] (1); all four writes; y = d[1] (1)... choose: x=1, w(0,2), w(1,2), y=2, w(1,1), w(0,1), x==d[0] (1).
    let (s, events) = run(&p, &[1, 0, 0, 1, 0, 0, 1]);
    assert_eq!(events.last().unwrap().ret, Some(int_pair(1, 2)));
    assert_eq!(s.1.events.len(), 4 + 8 + 2);
}

#[test]
fn states_are_equal_when_futures_are() {
    let m = model(PAIR_SNAPSHOT);
    let p = program(&m, &[], &[&["write(0, 2)"], &["write(1, 2)"]], &[]);
    let (a, _) = run(&p, &[0, 1]);
    let (b, _) = run(&p, &[0, 1]);
    let (c, _) = run(&p, &[1, 0]);
    assert_eq!(a, b);
    // Same memory, different histories: different states.
    assert_ne!(a, c);
}

#[test]
fn straight_line_code_takes_one_step_per_shared_access() {
    let text = "object S {\n shared int a; shared int b; shared int c[3];\n op f(k) {\n int t = a + 1;\n b = t;\n int i = 0;\n while (i < 3) { c[i] = a + i; i = i + 1; }\n return b + c[2];\n }\n}\n";
    let m = model(text);
    let p = program(&m, &[], &[&["f(0)"]], &[]);
    let mut s = p.initial_state().unwrap();
    let events = run_thread(&p, &mut s, 0);
    // a, b=, 3 x (a, c[i]=), b, c[2]
    assert_eq!(events.len(), 10);
    let locs: Vec<&str> = events.iter().map(|e| e.location.as_str()).collect();
    assert_eq!(
        locs,
        ["a", "b", "a", "c[0]", "a", "c[1]", "a", "c[2]", "b", "c[2]"]
    );
    assert!(events[0].call.is_some() && events[..9].iter().all(|e| e.ret.is_none()));
    assert_eq!(events[9].ret, Some(Value::Int(3)));
}

#[test]
fn an_operation_without_shared_access_is_one_local_step() {
    let text = "object L {\n op id(x) { int y = x * 2; return y; }\n}\n";
    let m = model(text);
    let p = program(&m, &[], &[&["id(4)", "id(5)"]], &[]);
    let (_, events) = run(&p, &[0, 0]);
    assert_eq!(events[0].kind, EventKind::Local);
    assert_eq!(
        (events[0].call.clone(), events[0].ret.clone()),
        (Some(call("id(4)")), Some(Value::Int(8)))
    );
    assert_eq!(text_of(text, &events[0]), "op id(x)");
    assert_eq!(events[1].ret, Some(Value::Int(10)));
}

const LOCKED: &str = r#"
object Locked {
    lock m;
    shared int x;
    op hold() { lock(m); x = 1; }
    op inc() { synchronized (m) { x = x + 1; } }
    op release() { unlock(m); }
    op wait() { await(x == 5); return x; }
    op set(v) { x = v; }
}
"#;

#[test]
fn a_held_lock_blocks_other_threads() {
    let m = model(LOCKED);
    let p = program(&m, &[], &[&["hold()", "release()"], &["inc()"]], &[]);
    let s0 = p.initial_state().unwrap();
    let (s1, e) = mv(&p, &s0, 0);
    assert_eq!((e.kind, e.location.as_str()), (EventKind::Lock, "m"));
    assert!(matches!(p.step(&s1.0, 1), Step::Blocked));
    // The blocked thread is before its first event: the stuck history shows its pending call.
    let (s2, _) = mv(&p, &s1, 0);
    let stuck = stuck_history(&p, &s2);
    assert!(stuck.stuck);
    assert_eq!(
        stuck.events.last(),
        Some(&CoarseEvent::Call {
            thread: 1,
            call: call("inc()").into(),
            seen: None,
        })
    );
    // After the release, T1 proceeds: lock, read, write, unlock.
    let (mut s3, e) = mv(&p, &s2, 0);
    assert_eq!(
        (e.kind, e.ret.clone()),
        (EventKind::Unlock, Some(Value::Unit))
    );
    let events = run_thread(&p, &mut s3, 1);
    let kinds: Vec<EventKind> = events.iter().map(|e| e.kind).collect();
    assert_eq!(
        kinds,
        [
            EventKind::Lock,
            EventKind::Read,
            EventKind::Write,
            EventKind::Unlock
        ]
    );
    assert_eq!(text_of(LOCKED, &events[0]), "synchronized (m)");
    assert_eq!(text_of(LOCKED, &events[3]), "}");
    // Reentrancy: the same thread may take it twice.
    let spec = SelfSpec::new(m.clone());
    let (_, held) = apply(&spec, &spec.initial(), "hold()");
    assert!(matches!(
        spec.apply(&held, 0, &call("inc()")),
        Apply::Returns { .. }
    ));
    assert_eq!(spec.apply(&held, 1, &call("inc()")), Apply::Blocks);
}

#[test]
fn unlocking_a_lock_not_held_is_a_fault() {
    let m = model(LOCKED);
    let p = program(&m, &[], &[&["release()"]], &[]);
    match p.step(&p.initial_state().unwrap().0, 0) {
        Step::Fault {
            event: Some(e),
            fault,
        } => {
            assert_eq!(e.kind, EventKind::Unlock);
            assert!(
                fault.message.contains("unlocks `m`, but nobody holds it"),
                "{}",
                fault.message
            );
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn await_blocks_until_its_condition_holds() {
    let m = model(LOCKED);
    let p = program(&m, &[], &[&["wait()"], &["set(5)"]], &[]);
    let s0 = p.initial_state().unwrap();
    assert!(matches!(p.step(&s0.0, 0), Step::Blocked));
    let (s1, _) = mv(&p, &s0, 1);
    let (s2, e) = mv(&p, &s1, 0);
    assert_eq!((e.kind, e.location.as_str()), (EventKind::Await, "{x}"));
    let (_, e) = mv(&p, &s2, 0);
    assert_eq!(e.ret, Some(Value::Int(5)));
}

#[test]
fn null_dereference_faults_at_its_span() {
    let text = "object N {\n record Node { int val; Node next; }\n shared Node head;\n op f() {\n Node n = head;\n return n.next;\n }\n}\n";
    let m = model(text);
    let p = program(&m, &[], &[&["f()"]], &[]);
    let (s1, _) = mv(&p, &p.initial_state().unwrap(), 0);
    match p.step(&s1.0, 0) {
        Step::Fault {
            event: Some(e),
            fault,
        } => {
            assert_eq!(e.kind, EventKind::Read);
            assert_eq!(e.location, "n.next");
            let span = fault.span.unwrap();
            assert_eq!(&text[span.start as usize..span.end as usize], "n.next");
            assert!(
                fault.message.contains("null dereference"),
                "{}",
                fault.message
            );
        }
        other => panic!("{other:?}"),
    }
    // Faults in local code after the event carry the event, and a clear message.
    let m = model("object D {\n shared int z;\n op f() { int a = z; return 1 / a; }\n op g() { assert(z == 1, \"z must be 1\"); }\n}\n");
    let p = program(&m, &[], &[&["f()"], &["g()"]], &[]);
    let s0 = p.initial_state().unwrap();
    match p.step(&s0.0, 0) {
        Step::Fault {
            event: Some(e),
            fault,
        } => {
            assert_eq!(e.location, "z");
            assert_eq!(fault.message, "division by zero");
        }
        other => panic!("{other:?}"),
    }
    match p.step(&s0.0, 1) {
        Step::Fault { fault, .. } => assert_eq!(fault.message, "z must be 1"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn an_endless_local_loop_is_bounded() {
    let m = model("object E {\n shared int x;\n op spin() { x = 1; int i = 0; while (true) { i = i + 1; } }\n op f() { loop { } }\n}\n");
    let p = program(&m, &[], &[&["spin()"], &["f()"]], &[]).with_budget(10_000);
    let s0 = p.initial_state().unwrap();
    assert!(matches!(p.step(&s0.0, 0), Step::Bounded { .. }));
    match p.step(&s0.0, 1) {
        Step::Bounded { reason } => assert!(reason.contains("f()"), "{reason}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn cas_on_a_tuple_field_compares_structurally() {
    let text = r#"
object M {
    record Node { int key; (Node, bool) next; }
    shared Node head;
    constructor { head = new Node(1, (null, false)); }
    op mark() {
        Node h = head;
        var (succ, m) = h.next;
        return cas(h.next, (succ, false), (succ, true));
    }
}
"#;
    let m = model(text);
    let p = program(&m, &[], &[&["mark()"], &["mark()"]], &[]);
    // Both read before either CASes: the first CAS wins, the second fails.
    let (_, events) = run(&p, &[0, 1, 0, 1, 0, 1]);
    let cas: Vec<&Event> = events
        .iter()
        .filter(|e| matches!(e.kind, EventKind::Cas { .. }))
        .collect();
    assert_eq!(cas[0].kind, EventKind::Cas { success: true });
    assert_eq!(cas[1].kind, EventKind::Cas { success: false });
    assert_eq!(cas[0].location, "h.next");
    assert_eq!(cas[0].value, "(null, false) -> (null, true)");
    assert_eq!(
        text_of(text, cas[0]),
        "cas(h.next, (succ, false), (succ, true))"
    );
    assert_eq!(
        (cas[0].ret.clone(), cas[1].ret.clone()),
        (Some(Value::Bool(true)), Some(Value::Bool(false)))
    );
}

#[test]
fn dcas_touches_two_locations_in_one_event() {
    let text = r#"
object Snark {
    record Node { Node L; Node R; int V; }
    shared Node RightHat;
    shared Node LeftHat;
    constructor { Node d = new Node(); RightHat = d; LeftHat = d; }
    op f() {
        Node rh = RightHat;
        Node n = new Node(null, null, 5);
        return dcas(RightHat, rh.R, rh, null, n, n);
    }
    op g() {
        Node rh = LeftHat;
        return dcas(RightHat, rh.R, rh, null, rh, rh);
    }
}
"#;
    let m = model(text);
    let p = program(&m, &[], &[&["f()", "g()"]], &[]);
    let (_, events) = run(&p, &[0, 0, 0, 0]);
    assert_eq!(events.len(), 4);
    assert_eq!(events[1].kind, EventKind::Dcas { success: true });
    assert_eq!(events[1].location, "{RightHat, rh.R}");
    assert_eq!(events[1].value, "(#0, null) -> (#1, #1)");
    // LeftHat is still the dummy, which is no longer RightHat, and its R is no longer null.
    assert_eq!(events[3].kind, EventKind::Dcas { success: false });
    assert_eq!(events[3].value, "(#0, null) -> (#0, #0)");
}

#[test]
fn atomic_block_is_one_event() {
    let text = "object A {\n shared int d[2];\n op swap() { atomic { int t = d[0]; d[0] = d[1]; d[1] = t + 1; } return d[0]; }\n}\n";
    let m = model(text);
    let p = program(&m, &["swap()"], &[&["swap()"]], &[]);
    let (_, events) = run(&p, &[0, 0]);
    assert_eq!(events[0].kind, EventKind::Atomic);
    assert_eq!(events[0].location, "{d[0], d[1]}");
    assert!(text_of(text, &events[0]).starts_with("atomic {"));
    // (0, 0) -> (0, 1) by init, -> (1, 1) by the thread.
    assert_eq!(
        (events[1].location.as_str(), events[1].ret.clone()),
        ("d[0]", Some(Value::Int(1)))
    );
}

#[test]
fn short_circuit_skips_shared_reads() {
    let text = "object C {\n shared int a; shared int b;\n op f() { if (a == 1 && b == 1) return 1; return 0; }\n op g() { return a == 0 || b == 0; }\n}\n";
    let m = model(text);
    let p = program(&m, &[], &[&["f()"], &["g()"]], &[]);
    let mut s = p.initial_state().unwrap();
    assert_eq!(run_thread(&p, &mut s, 0).len(), 1);
    assert_eq!(run_thread(&p, &mut s, 1).len(), 1);
}

#[test]
fn self_spec_runs_operations_alone() {
    let m = model(PAIR_SNAPSHOT);
    let spec = SelfSpec::new(m.clone());
    assert_eq!(spec.name(), "self");
    let s = spec.initial();
    let (_, s) = apply(&spec, &s, "write(0, 1)");
    let (_, s) = apply(&spec, &s, "write(1, 1)");
    let (v, s) = apply(&spec, &s, "write(0, 2)");
    assert_eq!(v, Value::Unit);
    assert_eq!(apply(&spec, &s, "read()").0, int_pair(2, 1));
    assert!(
        matches!(spec.apply(&s, 0, &call("write(5, 1)")), Apply::Invalid(m) if m.contains("out of range"))
    );
    assert!(matches!(
        spec.apply(&s, 0, &call("nope()")),
        Apply::Invalid(_)
    ));
    assert!(
        matches!(spec.apply(&s, 0, &call("write(1)")), Apply::Invalid(m) if m.contains("takes 2 arguments"))
    );
}

#[test]
fn finals_run_after_the_threads() {
    let m = model(PAIR_SNAPSHOT);
    let p = program(&m, &[], &[&["write(0, 3)"]], &["read()"]);
    let (s, _) = run(&p, &[0]);
    let h = finish(&p, &s).unwrap();
    assert_eq!(
        h.to_string(),
        "T0:write(0, 3) T0:ret () final:read() final:ret (3, 0)"
    );
    let bad = program(&m, &[], &[&["write(0, 3)"]], &["read(1)"]);
    // A state means something only to the program that made it.
    let (s, _) = run(&bad, &[0]);
    assert!(finish(&bad, &s).is_err());
}

const LOCK_FREE_LIST: &str = r#"
object LockFreeList {
    record Node { int key; (Node, bool) next; }
    shared Node head;

    constructor {
        Node tail = new Node(1000, (null, false));
        Node one = new Node(1, (tail, false));
        head = new Node(-1000, (one, false));
    }

    fn find(int k) {
        retry: loop {
            Node pred = head;
            Node curr = pred.next.0;
            loop {
                var (succ, m) = curr.next;
                while (m) {
                    if (!cas(pred.next, (curr, false), (succ, false))) continue retry;
                    curr = pred.next.0;
                    (succ, m) = curr.next;
                }
                if (curr.key >= k) return (pred, curr);
                pred = curr;
                curr = succ;
            }
        }
    }

    op remove(int k) {
        loop {
            var (pred, curr) = find(k);
            if (curr.key != k) return false;
            Node succ = curr.next.0;
            if (!cas(curr.next, (succ, false), (succ, true))) continue;
            cas(pred.next, (curr, false), (succ, false));
            return true;
        }
    }
}
"#;

#[test]
fn a_lock_free_list_port_runs() {
    let text = LOCK_FREE_LIST;
    let m = model(text);
    let p = program(&m, &[], &[&["remove(1)"], &["remove(1)"]], &["remove(1)"]);
    let mut s = p.initial_state().unwrap();
    let a = run_thread(&p, &mut s, 0);
    assert_eq!(a.last().unwrap().ret, Some(Value::Bool(true)));
    let b = run_thread(&p, &mut s, 1);
    assert_eq!(b.last().unwrap().ret, Some(Value::Bool(false)));
    assert!(finish(&p, &s)
        .unwrap()
        .to_string()
        .ends_with("final:remove(1) final:ret false"));
}

#[test]
fn final_fields_and_shared_constants_are_read_without_an_event() {
    let text = "record Node { final int key; Node next; }\nobject F {\n shared final Node head = null;\n constructor { head = new Node(7, null); }\n op f() { Node h = head; int k = h.key; h.next = null; return k; }\n}\n";
    let m = model(text);
    let p = program(&m, &[], &[&["f()"]], &[]);
    let mut s = p.initial_state().unwrap();
    let events = run_thread(&p, &mut s, 0);
    // Only the write of the mutable `next` is shared.
    assert_eq!(events.len(), 1);
    assert_eq!(events[0].location, "h.next");
    assert_eq!(events[0].ret, Some(Value::Int(7)));
}

#[test]
fn final_locations_cannot_be_written_after_construction() {
    let (_, out) =
        error("record Node { final int key; }\nobject F {\n op f(Node n) { n.key = 1; }\n}\n");
    assert!(out.contains("`key` is final"), "{out}");
    let (_, out) = error("object F {\n shared final int x = 1;\n op f() { cas(x, 1, 2); }\n}\n");
    assert!(out.contains("`x` is final"), "{out}");
    // A field final in one record and mutable in another stays a shared access everywhere.
    let m = model("record A { final int v; }\nrecord B { int v; }\nobject F {\n op f() { var a = new A(1); return a.v; }\n}\n");
    let p = program(&m, &[], &[&["f()"]], &[]);
    let mut s = p.initial_state().unwrap();
    assert_eq!(run_thread(&p, &mut s, 0).len(), 1);
}

/// A model whose one operation `get()` has `body`.
fn with_body(body: &str) -> String {
    format!(
        "object Deep {{\n    shared int count = 0;\n    op get() {{\n        {body}\n    }}\n}}\n"
    )
}

/// Bodies nested `n` levels deep in each way the grammar nests, with the value `get()` returns.
fn nested_bodies(n: usize) -> Vec<(&'static str, String, &'static str)> {
    vec![
        (
            "parentheses",
            format!("return {}1{};", "(".repeat(n), ")".repeat(n)),
            "1",
        ),
        (
            "negations",
            format!("return {}1;", "-".repeat(2 * (n / 2))),
            "1",
        ),
        (
            "a chain of +",
            format!("return {}1;", "1 + ".repeat(n)),
            "many",
        ),
        (
            "tuples",
            format!("return {}1{}.0;", "(1, ".repeat(n), ")".repeat(n)),
            "1",
        ),
        (
            "blocks",
            format!("{}return 1;{}", "{".repeat(n), "}".repeat(n)),
            "1",
        ),
        ("ifs", format!("{}return 1;", "if (true) ".repeat(n)), "1"),
        (
            "else-ifs",
            format!(
                "if (false) return 0; {}else return 1;",
                "else if (false) return 0; ".repeat(n)
            ),
            "1",
        ),
    ]
}

#[test]
fn nesting_below_the_bound_compiles_and_runs() {
    // The test thread's stack (2 MiB) is smaller than the binary's main thread: what passes
    // here passes there.
    let n = MAX_NESTING - 4;
    for (what, body, value) in nested_bodies(n) {
        let m = model(&with_body(&body));
        let spec = SelfSpec::new(m);
        let (got, _) = apply(&spec, &spec.initial(), "get()");
        let value = if value == "many" {
            (n + 1).to_string()
        } else {
            value.to_string()
        };
        assert_eq!(got.to_string(), value, "{what}");
    }
}

#[test]
fn nesting_past_the_bound_is_an_error_at_the_place() {
    for (what, body, _) in nested_bodies(200_000) {
        let (e, rendered) = error(&with_body(&body));
        assert_eq!(e.kind, ErrorKind::Syntax, "{what}");
        assert_eq!(
            e.message,
            format!("nested more than {} levels deep", MAX_NESTING),
            "{what}"
        );
        assert!(rendered.contains("[bad.fgv:4:"), "{what}: {rendered}");
        assert!(rendered.len() < 2_000, "{what}: the snippet is windowed");
    }
    let deep_type = format!(
        "object T {{\n    shared {}int{} x;\n}}\n",
        "(".repeat(1_000),
        ")".repeat(1_000)
    );
    assert_eq!(
        error(&deep_type).0.message,
        format!("nested more than {} levels deep", MAX_NESTING)
    );
    let deep_call = format!("get({}1{})", "(".repeat(200_000), ")".repeat(200_000));
    let message = parse_call(&deep_call).unwrap_err().message;
    assert!(message.starts_with("nested more than"), "{message}");
}

mod fuzz {
    //! Arbitrary and mutated model text never panics the compiler, and errors point inside it.

    use proptest::prelude::*;
    use proptest::sample::Index;

    use super::*;

    fn compiles_or_points_inside(text: &str) -> Result<(), TestCaseError> {
        if let Err(e) = Model::compile(&mut SourceMap::new(), "fuzz.fgv", text, None) {
            prop_assert!(
                e.at.offset() <= text.len(),
                "{} past {}",
                e.at.offset(),
                text.len()
            );
            render(&e);
        }
        Ok(())
    }

    proptest! {
        #[test]
        fn arbitrary_text(text in "\\PC{0,300}") {
            compiles_or_points_inside(&text)?;
        }

        #[test]
        fn mutated_model(
            at in any::<Index>(),
            insert in "[(){}\\[\\];,.=!<>+*/%&|\"a-z0-9 \\n-]{0,16}",
            cut_at in any::<Index>(),
            cut in 0..24usize,
        ) {
            let mut text = EVERYTHING.as_bytes().to_vec();
            let i = at.index(text.len() + 1);
            text.splice(i..i, insert.bytes());
            let j = cut_at.index(text.len() + 1);
            text.drain(j..(j + cut).min(text.len()));
            compiles_or_points_inside(&String::from_utf8_lossy(&text))?;
        }

        #[test]
        fn arbitrary_calls(text in "[a-z(),\"0-9 -]{0,40}|\\PC{0,40}") {
            if let Err(e) = parse_call(&text) {
                prop_assert!(e.offset <= text.len());
            }
        }
    }
}

#[test]
fn declared_types_accept_what_fits_and_reject_what_surely_does_not() {
    // (declaration, whether it compiles): hand-worked against the rules of `compile::types`.
    let cases = [
        ("int x = 1 + 2;", true),
        ("int x = true;", false),
        ("int x = null;", false),
        ("bool x = 1 < 2;", true),
        ("bool x = 3;", false),
        ("Node x = null;", true),
        ("Node x = new Node(1, null);", true),
        ("Node x = new Other();", false),
        ("int x = new Node(1, null);", false),
        ("string x = \"s\";", true),
        ("string x = 1;", false),
        ("(int, bool) x = (1, true);", true),
        ("(int, bool) x = (true, 1);", false),
        ("(int, bool) x = (1, true, 2);", false),
        ("(int, Node) x = (1, null);", true),
        // Unknown to the check (a field read, a call): accepted, typed at run time.
        ("int x = head.val;", true),
        ("int x = helper();", true),
        // Names declared with a type carry it.
        ("Node y = null; int x = y;", false),
        ("int x = count;", true),
        ("bool x = count;", false),
        ("int x = 0; x = new Node(1, null);", false),
        ("count = true;", false),
        ("var y = new Node(1, null); int x = y;", true),
    ];
    for (body, ok) in cases {
        let text = format!(
            "record Node {{ int val; Node next; }}\nrecord Other {{ }}\nobject T {{\n    shared int count = 0;\n    shared Node head = null;\n    fn helper() {{ return 1; }}\n    op run() {{\n        {body}\n    }}\n}}\n"
        );
        let result = Model::compile(&mut SourceMap::new(), "t.fgv", &text, None);
        match (ok, result) {
            (true, Err(e)) => panic!("`{body}` should compile: {}", render(&e)),
            (false, Ok(_)) => panic!("`{body}` should be rejected"),
            (false, Err(e)) => {
                assert!(e.message.contains("is declared"), "`{body}`: {}", e.message)
            }
            (true, Ok(_)) => {}
        }
    }
}

/// Takes `thread`'s step from `state` on `memoized` (whose table of steps other cases have
/// filled) and by interpreting it afresh on `fresh`, and says they agree.
fn same_step(
    memoized: &TestProgram,
    fresh: &TestProgram,
    states: (&TestState, &TestState),
    thread: usize,
) -> Option<(TestState, TestState)> {
    let a = memoized.step(states.0, thread);
    let b = fresh.step_noting_wait(states.1, thread, &mut None);
    match (a, b) {
        (
            Step::Moved {
                state: sa,
                event: ea,
            },
            Step::Moved {
                state: sb,
                event: eb,
            },
        ) => {
            assert_eq!(*ea, *eb, "the replayed step is the interpreted one");
            assert_eq!(memoized.describe_memory(&sa), fresh.describe_memory(&sb));
            Some((sa, sb))
        }
        // Done, blocked, or a fault (not memoized): the same, and no move.
        (a, b) => {
            assert_eq!(format!("{a:?}"), format!("{b:?}"));
            None
        }
    }
}

#[test]
fn memoized_steps_replay_exactly_what_interpreting_them_does() {
    use proptest::prelude::*;
    use proptest::test_runner::TestRunner;
    let cases: [(&str, Vec<Vec<&str>>); 3] = [
        (
            LOCK_FREE_LIST,
            vec![vec!["remove(1)"], vec!["remove(1)"], vec!["remove(1000)"]],
        ),
        (
            LOCKED,
            vec![
                vec!["hold()", "release()"],
                vec!["inc()", "wait()"],
                vec!["set(4)", "inc()"],
            ],
        ),
        // Seven threads: a row keeps the last ones as an interned group.
        (
            LOCKED,
            vec![
                vec!["hold()", "release()"],
                vec!["inc()"],
                vec!["set(4)"],
                vec!["inc()", "wait()"],
                vec!["set(1)", "inc()"],
                vec!["inc()"],
                vec!["hold()", "release()", "inc()"],
            ],
        ),
    ];
    for (text, threads) in cases {
        let m = model(text);
        let threads: Vec<&[&str]> = threads.iter().map(Vec::as_slice).collect();
        // One program for every schedule, so later schedules replay steps earlier ones took.
        let memoized = program(&m, &[], &threads, &[]);
        let mut runner = TestRunner::default();
        runner
            .run(
                &prop::collection::vec(0..threads.len(), 0..60),
                |schedule| {
                    let fresh = program(&m, &[], &threads, &[]);
                    let mut a = memoized.initial_state().unwrap().0;
                    let mut b = fresh.initial_state().unwrap().0;
                    for choice in schedule {
                        // The first thread from `choice` on that can move.
                        let moved = (0..threads.len())
                            .map(|k| (choice + k) % threads.len())
                            .find_map(|t| same_step(&memoized, &fresh, (&a, &b), t));
                        match moved {
                            Some((na, nb)) => (a, b) = (na, nb),
                            None => break,
                        }
                    }
                    prop_assert_eq!(memoized.blocked_calls(&a), fresh.blocked_calls(&b));
                    Ok(())
                },
            )
            .unwrap();
    }
}
