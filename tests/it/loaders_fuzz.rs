//! Every loader, fed arbitrary and mutated bytes through the binary: fgvt never panics or
//! aborts, and when it refuses the input (exit 2) it names the file with a line.
//!
//! The loaders are the test file (`localize`), the hunt file (`hunt`), the model file a test
//! names, and each history format of `check-history` (auto-detected and forced). Mutations
//! start from valid inputs so that they get past the first byte: flips, insertions,
//! deletions, repeated slices and deep nesting. `PROPTEST_CASES` sets the cases per loader.

use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};

use crate::common;

const MODEL: &str = include_str!("../../fixtures/counter1/counter1.fgv");
const TEST: &str = include_str!("../../fixtures/counter1/failing.json");
const HUNT: &str = r#"{
  "object": "counter1.fgv#Counter1",
  "spec": "self",
  "operations": ["inc()", "get()"],
  "threads": 2,
  "ops_per_thread": 1,
  "samples": 2
}
"#;
const JEPSEN: &str = "INFO  jepsen.util - 0\t:invoke\t:read\tnil\n\
INFO  jepsen.util - 1\t:invoke\t:write\t2\n\
INFO  jepsen.util - 0\t:ok\t:read\tnil\n\
INFO  jepsen.util - 1\t:ok\t:write\t2\n\
INFO  jepsen.util - 2\t:invoke\t:cas\t[2 3]\n\
INFO  jepsen.util - 2\t:fail\t:cas\t[2 3]\n";
const KV: &str = "{:process 0, :type :invoke, :f :put, :key \"a\", :value \"x\"}\n\
{:process 0, :type :ok, :f :put, :key \"a\", :value \"x\"}\n\
{:process 1, :type :invoke, :f :get, :key \"a\", :value nil}\n\
{:process 1, :type :ok, :f :get, :key \"a\", :value \"x\"}\n";
const EDN: &str = "[{:type :invoke, :f :write, :value 1, :process 0, :time 5}\n \
{:type :ok, :f :write, :value 1, :process 0}\n \
{:type :invoke, :f :read, :value nil, :process 1}\n \
{:type :ok, :f :read, :value 1, :process 1}]\n";
/// Jepsen EDN in the other shapes Jepsen writes: `;` comments first, a top-level list, maps
/// over several lines with extra keys, operations that all failed.
const EDN_COMMENTED_LIST: &str =
    "; recorded by Jepsen\n({:type :invoke, :f :write, :value 1, :process 0}\n \
; the write returns\n {:type :ok, :f :write, :value 1, :process 0}\n \
{:type :invoke, :f :read, :value nil, :process 1}\n {:type :ok, :f :read, :value 1, :process 1})\n";
const EDN_MULTI_LINE: &str =
    "[{:type :invoke,\n :f :cas,\n :value [nil 2],\n :process 3,\n :time 7686455705}\n\
{:type :info,\n :f :cas,\n :value [nil 2],\n :process 3,\n :error :timeout,\n :time 7686455799}\n\
{:type :invoke,\n :f :read,\n :value nil,\n :process 8,\n :index 2}\n\
{:type :ok,\n :f :read,\n :value 2,\n :process 8,\n :index 3}]\n";
const EDN_ALL_FAILED: &str = "[{:process 12, :type :invoke, :f :read, :value nil}\n \
{:process 12, :type :fail, :f :read, :value nil}\n \
{:process 19, :type :invoke, :f :write, :value 1}\n \
{:process 19, :type :fail, :f :write, :value 1, :error [:temporarily-unavailable nil]}]\n";
const JSON_HISTORY: &str = r#"{"schema": "fgvt.history/1", "spec": "stack",
 "events": [
  {"type": "call", "thread": 0, "op": "push", "args": [1]},
  {"type": "call", "thread": 1, "op": "pop"},
  {"type": "return", "thread": 0},
  {"type": "return", "thread": 1, "value": 1}
 ]}
"#;

/// One edit of a valid input. Positions and lengths are taken modulo the text's length.
#[derive(Clone, Debug)]
enum Mutation {
    /// Replace one byte.
    Flip(usize, u8),
    /// Insert bytes.
    Insert(usize, Vec<u8>),
    /// Delete a run of bytes.
    Delete(usize, usize),
    /// Repeat a slice many times in place.
    Repeat(usize, usize, usize),
    /// Insert an opening bracket many times (deep nesting), optionally closed again.
    Nest(usize, u8, usize, bool),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    let bracket = prop::sample::select(&b"([{-!\"\\"[..]);
    prop_oneof![
        (any::<usize>(), any::<u8>()).prop_map(|(p, b)| Mutation::Flip(p, b)),
        (any::<usize>(), prop::collection::vec(any::<u8>(), 1..8))
            .prop_map(|(p, b)| Mutation::Insert(p, b)),
        (any::<usize>(), 1..40usize).prop_map(|(p, n)| Mutation::Delete(p, n)),
        (any::<usize>(), 1..20usize, 2..200usize).prop_map(|(p, n, k)| Mutation::Repeat(p, n, k)),
        (any::<usize>(), bracket, 1..5_000usize, any::<bool>())
            .prop_map(|(p, b, n, close)| Mutation::Nest(p, b, n, close)),
    ]
}

fn apply(seed: &str, mutations: &[Mutation]) -> Vec<u8> {
    let mut bytes = seed.as_bytes().to_vec();
    for m in mutations {
        let at = |p: usize, len: usize| if len == 0 { 0 } else { p % (len + 1) };
        match m {
            Mutation::Flip(p, b) if !bytes.is_empty() => {
                let i = p % bytes.len();
                bytes[i] = *b;
            }
            Mutation::Flip(..) => {}
            Mutation::Insert(p, b) => {
                let i = at(*p, bytes.len());
                bytes.splice(i..i, b.iter().copied());
            }
            Mutation::Delete(p, n) => {
                let i = at(*p, bytes.len());
                let j = (i + n).min(bytes.len());
                bytes.drain(i..j);
            }
            Mutation::Repeat(p, n, k) => {
                let i = at(*p, bytes.len());
                let j = (i + n).min(bytes.len());
                let slice = bytes[i..j].to_vec();
                for _ in 1..*k {
                    bytes.splice(j..j, slice.iter().copied());
                }
            }
            Mutation::Nest(p, b, n, close) => {
                let i = at(*p, bytes.len());
                let closing = match b {
                    b'(' => Some(b')'),
                    b'[' => Some(b']'),
                    b'{' => Some(b'}'),
                    _ => None,
                };
                let mut run = vec![*b; *n];
                if let (true, Some(c)) = (close, closing) {
                    run.extend(std::iter::repeat_n(c, *n));
                }
                bytes.splice(i..i, run);
            }
        }
    }
    bytes
}

/// Arbitrary bytes, or a valid `seed` with a few mutations.
fn input(seed: &'static str) -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        prop::collection::vec(any::<u8>(), 0..300),
        prop::collection::vec(mutation(), 1..4).prop_map(move |m| apply(seed, &m)),
    ]
}

/// The loader under test: which file gets the bytes, and how fgvt is run on it.
struct Loader {
    /// The file that receives the fuzzed bytes.
    file: &'static str,
    /// The valid text it is mutated from.
    seed: &'static str,
    /// The other files of the directory (valid).
    others: &'static [(&'static str, &'static str)],
    /// The arguments, the file being `FILE`.
    args: &'static [&'static str],
}

const LIMITS: &[&str] = &["--max-states", "3000", "--timeout", "5"];

const LOADERS: &[Loader] = &[
    Loader {
        file: "test.json",
        seed: TEST,
        others: &[("counter1.fgv", MODEL)],
        args: &["localize", "FILE"],
    },
    Loader {
        file: "counter1.fgv",
        seed: MODEL,
        others: &[("test.json", TEST)],
        args: &["localize", "test.json"],
    },
    Loader {
        file: "hunt.json",
        seed: HUNT,
        others: &[("counter1.fgv", MODEL)],
        args: &["hunt", "FILE", "--seed", "1"],
    },
    Loader {
        file: "etcd.log",
        seed: JEPSEN,
        others: &[],
        args: &["check-history", "FILE"],
    },
    Loader {
        file: "etcd.log",
        seed: JEPSEN,
        others: &[],
        args: &["check-history", "--input-format", "jepsen", "FILE"],
    },
    Loader {
        file: "kv.txt",
        seed: KV,
        others: &[],
        args: &["check-history", "--input-format", "kv", "FILE"],
    },
    Loader {
        file: "history.edn",
        seed: EDN,
        others: &[],
        args: &["check-history", "FILE"],
    },
    Loader {
        file: "commented.edn",
        seed: EDN_COMMENTED_LIST,
        others: &[],
        args: &["check-history", "FILE"],
    },
    Loader {
        file: "multi-line.edn",
        seed: EDN_MULTI_LINE,
        others: &[],
        args: &["check-history", "FILE"],
    },
    Loader {
        file: "all-failed.edn",
        seed: EDN_ALL_FAILED,
        others: &[],
        args: &["check-history", "FILE"],
    },
    Loader {
        file: "history.json",
        seed: JSON_HISTORY,
        others: &[],
        args: &["check-history", "--input-format", "json", "FILE"],
    },
];

/// A fresh directory with `others` and `file` holding `bytes`, and the `fgvt` command run in
/// it with `args` (`FILE` standing for `file`). The directory lives as long as the guard.
fn prepare(
    file: &str,
    bytes: &[u8],
    others: &[(&str, &str)],
    args: &[&str],
) -> (tempfile::TempDir, assert_cmd::Command) {
    let dir = common::workdir(others);
    std::fs::write(dir.path().join(file), bytes).unwrap();
    let mut cmd = common::fgvt();
    cmd.current_dir(dir.path());
    for arg in args {
        cmd.arg(if *arg == "FILE" { file } else { arg });
    }
    (dir, cmd)
}

/// Runs `loader` on `bytes`: the exit code is 0 to 3 and a refusal names the file and a line.
fn check(loader: &Loader, bytes: &[u8]) -> Result<(), TestCaseError> {
    let (_dir, mut cmd) = prepare(loader.file, bytes, loader.others, loader.args);
    if matches!(loader.args[0], "localize" | "hunt") {
        cmd.args(LIMITS);
    }
    let out = cmd.output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let code = out.status.code();
    prop_assert!(
        matches!(code, Some(0..=3)),
        "{:?} on {}: exit {code:?}\n{stderr}",
        loader.args,
        loader.file
    );
    prop_assert!(!stderr.contains("panicked"), "{stderr}");
    if code == Some(2) {
        let said = format!("{stdout}{stderr}");
        let named = names_a_line(&said, loader.file)
            || loader.others.iter().any(|(f, _)| names_a_line(&said, f));
        prop_assert!(
            named,
            "{:?}: exit 2 without `file:line`:\n{said}",
            loader.args
        );
    }
    Ok(())
}

/// Whether `text` has `file:N` (a line, maybe a column after it).
fn names_a_line(text: &str, file: &str) -> bool {
    text.match_indices(&format!("{file}:")).any(|(i, m)| {
        text[i + m.len()..]
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_digit())
    })
}

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(24)
}

#[test]
fn every_loader_refuses_bad_bytes_with_a_position_and_never_crashes() {
    for loader in LOADERS {
        let mut runner = TestRunner::new(Config {
            cases: cases(),
            failure_persistence: None,
            ..Config::default()
        });
        let ran = std::cell::Cell::new(0);
        runner
            .run(&input(loader.seed), |bytes| {
                ran.set(ran.get() + 1);
                check(loader, &bytes)
            })
            .unwrap_or_else(|e| panic!("{:?} on {}: {e}", loader.args, loader.file));
        assert!(ran.get() >= cases(), "every case ran");
    }
}

#[test]
fn the_seeds_are_valid() {
    for loader in LOADERS {
        let (_dir, mut cmd) = prepare(
            loader.file,
            loader.seed.as_bytes(),
            loader.others,
            loader.args,
        );
        let (code, _, stderr) = common::run(&mut cmd);
        assert!(
            code == 0 || code == 1,
            "{:?}: exit {code}\n{stderr}",
            loader.args
        );
    }
}

/// 200,000 nested parentheses in each kind of input: a clear error, never a stack overflow.
#[test]
fn deep_nesting_is_refused_with_a_position() {
    let deep = |open: &str, inner: &str, close: &str| {
        format!("{}{inner}{}", open.repeat(200_000), close.repeat(200_000))
    };
    let model = MODEL.replace(
        "return count;",
        &format!("return {};", deep("(", "count", ")")),
    );
    // (the file that gets the deep text, the text, the other files, the arguments)
    type Case = (
        &'static str,
        String,
        &'static [(&'static str, &'static str)],
        &'static [&'static str],
    );
    let cases: Vec<Case> = vec![
        (
            "counter1.fgv",
            model,
            &[("test.json", TEST)],
            &["localize", "test.json"],
        ),
        (
            "test.json",
            TEST.replace("[\"get()\"]", &deep("[", "", "]")),
            &[("counter1.fgv", MODEL)],
            &["localize", "FILE"],
        ),
        (
            "test.json",
            TEST.replace("get()", &format!("get{}", deep("(", "", ")"))),
            &[("counter1.fgv", MODEL)],
            &["localize", "FILE"],
        ),
        (
            "hunt.json",
            HUNT.replace("\"get()\"", &deep("[", "", "]")),
            &[("counter1.fgv", MODEL)],
            &["hunt", "FILE"],
        ),
        (
            "history.json",
            JSON_HISTORY.replace("[1]", &deep("[", "1", "]")),
            &[],
            &["check-history", "FILE"],
        ),
    ];
    for (file, text, others, args) in cases {
        let (_dir, mut cmd) = prepare(file, text.as_bytes(), others, args);
        let (code, stdout, stderr) = common::run(&mut cmd);
        let said = format!("{stdout}{stderr}");
        assert_eq!(code, 2, "{args:?} {file}:\n{said}");
        assert!(
            names_a_line(&said, file),
            "{args:?} {file}: no position:\n{said}"
        );
        assert!(
            said.len() < 4_000,
            "{args:?} {file}: {} bytes of error",
            said.len()
        );
    }
}

/// One operation of a generated Jepsen history: its process, `:f`, value, and how it ended.
#[derive(Clone, Debug)]
struct EdnOp {
    process: usize,
    f: &'static str,
    value: String,
    /// What the `:ok` of a read carries (`nil` or a number).
    read: String,
    end: &'static str,
}

/// A register history as Jepsen records one: up to 4 processes at a time, each invoking an
/// operation and completing it (`:ok`, `:fail` or `:info`, after which Jepsen gives the
/// process a new number) before its next; the events in one interleaving of theirs.
fn edn_history() -> impl Strategy<Value = Vec<(EdnOp, bool)>> {
    let op = (
        0..4usize,
        0..3usize,
        0..4i64,
        0..4i64,
        prop::option::of(0..4i64),
        prop::sample::select(&["ok", "ok", "fail", "info"][..]),
    );
    (
        prop::collection::vec(op, 1..7),
        prop::collection::vec(0..4usize, 0..40),
    )
        .prop_map(|(ops, schedule)| {
            // Each slot's operations in order; a slot is one client, its process renumbered
            // after an `:info`.
            let mut queues: Vec<Vec<EdnOp>> = vec![Vec::new(); 4];
            for (slot, f, a, b, read, end) in ops {
                let (f, value) = match f {
                    0 => ("read", "nil".to_owned()),
                    1 => ("write", a.to_string()),
                    _ => ("cas", format!("[{a} {b}]")),
                };
                queues[slot].push(EdnOp {
                    process: slot,
                    f,
                    value,
                    read: read.map_or("nil".to_owned(), |r| r.to_string()),
                    end,
                });
            }
            let mut events = Vec::new();
            let mut next = [0usize; 4];
            let mut open = [false; 4];
            let mut renumbered = [0usize, 1, 2, 3];
            // The schedule picks who moves; then everyone finishes in slot order.
            let tail = (0..4).flat_map(|s| std::iter::repeat_n(s, 2 * queues[s].len()));
            for slot in schedule.into_iter().chain(tail) {
                if next[slot] == queues[slot].len() {
                    continue;
                }
                let mut op = queues[slot][next[slot]].clone();
                op.process = renumbered[slot];
                if open[slot] {
                    next[slot] += 1;
                    if op.end == "info" {
                        renumbered[slot] += 4;
                    }
                }
                open[slot] = !open[slot];
                events.push((op, open[slot]));
            }
            events
        })
}

/// The EDN map of one event: an invocation, or the completion its operation ended with.
fn edn_map(op: &EdnOp, invoke: bool, extra: &str) -> String {
    let (kind, value) = match (invoke, op.end, op.f) {
        (true, _, _) => ("invoke", op.value.as_str()),
        (false, "ok", "read") => ("ok", op.read.as_str()),
        (false, end, _) => (end, op.value.as_str()),
    };
    format!(
        "{{:type :{kind}, :f :{}, :value {value}, :process {}{extra}}}",
        op.f, op.process
    )
}

/// The same history in every shape Jepsen writes: one map per line, a commented vector, a
/// list with comments between its maps, maps over several lines with extra keys, and several
/// maps on a line.
fn edn_shapes(events: &[(EdnOp, bool)]) -> Vec<(&'static str, String)> {
    let maps: Vec<String> = events
        .iter()
        .map(|(op, inv)| edn_map(op, *inv, ""))
        .collect();
    let extra: Vec<String> = events
        .iter()
        .enumerate()
        .map(|(i, (op, inv))| {
            edn_map(
                op,
                *inv,
                &format!(", :index {i}, :time {}, :error nil", 1000 + 7 * i),
            )
            .replace(", ", ",\n  ")
        })
        .collect();
    vec![
        ("lines.edn", maps.join("\n") + "\n"),
        (
            "vector.edn",
            format!("; a history\n\n[{}]\n", maps.join("\n ")),
        ),
        ("list.edn", format!("({})\n", maps.join("\n ; next\n "))),
        ("multi-line.edn", format!("[{}]\n", extra.join("\n"))),
        (
            "packed.edn",
            maps.chunks(3)
                .map(|c| c.join(" "))
                .collect::<Vec<_>>()
                .join("\n")
                + "\n",
        ),
    ]
}

/// Issue 27: the EDN loader reads every shape alike. A generated history gets one verdict in
/// all of them (0 or 1, never bad input); with every operation failed, it is linearizable.
#[test]
fn every_edn_shape_gets_the_same_verdict() {
    let mut runner = TestRunner::new(Config {
        cases: cases().min(32),
        failure_persistence: None,
        ..Config::default()
    });
    let seen = std::cell::RefCell::new(std::collections::BTreeSet::new());
    runner
        .run(&edn_history(), |events| {
            let mut codes = Vec::new();
            for failed in [false, true] {
                let events: Vec<(EdnOp, bool)> = if failed {
                    events
                        .iter()
                        .map(|(op, inv)| {
                            (
                                EdnOp {
                                    end: "fail",
                                    ..op.clone()
                                },
                                *inv,
                            )
                        })
                        .collect()
                } else {
                    events.clone()
                };
                for (name, text) in edn_shapes(&events) {
                    let (_dir, mut cmd) =
                        prepare(name, text.as_bytes(), &[], &["check-history", "FILE"]);
                    let (code, out, err) = common::run(&mut cmd);
                    prop_assert!(
                        code == 0 || code == 1,
                        "{name}: exit {code}\n{text}\n{out}{err}"
                    );
                    if failed {
                        prop_assert_eq!(code, 0, "all failed, {}:\n{}\n{}{}", name, text, out, err);
                    }
                    codes.push((failed, name, code));
                }
            }
            for (failed, name, code) in &codes {
                let first = codes.iter().find(|(f, ..)| f == failed).unwrap().2;
                prop_assert_eq!(
                    *code,
                    first,
                    "{} disagrees with lines.edn: {:?}",
                    name,
                    codes
                );
            }
            seen.borrow_mut().insert(codes[0].2);
            Ok(())
        })
        .unwrap_or_else(|e| panic!("{e}"));
    // Both verdicts came up, so the agreement means something.
    assert_eq!(
        seen.into_inner().len(),
        2,
        "generated histories were all linearizable or all not"
    );
}
