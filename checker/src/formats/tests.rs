use fgvt_tree::{Call, CoarseEvent, History, Value};

use super::*;

fn ret(thread: usize, value: Option<Value>) -> CoarseEvent {
    CoarseEvent::Return { thread, value }
}

fn call(thread: usize, op: &str, args: Vec<Value>) -> CoarseEvent {
    CoarseEvent::Call {
        thread,
        call: Call::new(op, args).into(),
        seen: None,
    }
}

#[test]
fn reads_jepsen_lines_split_by_tabs_or_spaces() {
    let text = "INFO  jepsen.util - 0\t:invoke\t:read\tnil\n\
                INFO  jepsen.util - 1   :invoke   :cas   [3 0]\n\
                INFO  jepsen.util - 2\t:invoke\t:write\t4\n\
                INFO  jepsen.util - 0\t:ok\t:read\t3\n\
                INFO  jepsen.util - 1   :fail   :cas   [3 0]\n\
                INFO  jepsen.util - 2\t:info\t:write\t:timed-out\n\
                \n\
                INFO  jepsen.util - 3\t:invoke\t:read\tnil\n\
                INFO  jepsen.util - 3\t:fail\t:read\t:timed-out\n\
                INFO  jepsen.util - 4\t:invoke\t:write\t1\n\
                INFO  jepsen.util - 4\t:fail\t:write\t1\n";
    assert_eq!(detect_format(text), Some(Format::Jepsen));
    let parsed = parse(text, Format::Jepsen).unwrap();
    assert_eq!(parsed.spec.as_deref(), Some("register"));
    assert_eq!(
        parsed.history.events,
        vec![
            call(0, "read", vec![]),
            call(1, "cas", vec![Value::Int(3), Value::Int(0)]),
            call(2, "write", vec![Value::Int(4)]),
            ret(0, Some(Value::Int(3))),
            ret(1, Some(Value::Bool(false))),
            call(3, "read", vec![]),
            ret(3, None),
        ]
    );
    // The :info write stays pending.
    assert!(parsed.history.operations().unwrap()[2].ret.is_none());
}

#[test]
fn jepsen_errors_name_the_line() {
    assert_eq!(jepsen::parse("").unwrap_err().line, 1);
    assert!(jepsen::parse("")
        .unwrap_err()
        .message
        .starts_with("no events"));
    let bad =
        "INFO  jepsen.util - 0\t:invoke\t:read\tnil\nINFO  jepsen.util - 0\t:invoke\t:frob\tnil\n";
    let err = jepsen::parse(bad).unwrap_err();
    assert_eq!(err.line, 2);
    assert!(err.message.contains(":frob"), "{err}");
    let twice =
        "INFO  jepsen.util - 0\t:invoke\t:read\tnil\nINFO  jepsen.util - 0\t:invoke\t:read\tnil\n";
    assert!(jepsen::parse(twice)
        .unwrap_err()
        .message
        .contains("from line 1 is still pending"));
    assert_eq!(jepsen::parse("hello\n").unwrap_err().line, 1);
    let orphan = "INFO  jepsen.util - 0\t:ok\t:read\t1\n";
    assert!(jepsen::parse(orphan)
        .unwrap_err()
        .message
        .contains("no pending call"));
}

#[test]
fn reads_kv_lines() {
    let text = r#"{:process 0, :type :invoke, :f :append, :key "3", :value "x 0 0 y"}
{:process 1, :type :invoke, :f :get, :key "3", :value nil}
{:process 0, :type :ok, :f :append, :key "3", :value "x 0 0 y"}
{:process 1, :type :ok, :f :get, :key "3", :value "x 0 0 y"}
{:process 1, :type :invoke, :f :put, :key "4", :value "a \"b\""}
{:process 1, :type :info, :f :put, :key "4", :value "a \"b\""}
"#;
    assert_eq!(detect_format(text), Some(Format::Kv));
    let parsed = parse(text, Format::Kv).unwrap();
    assert_eq!(parsed.spec.as_deref(), Some("kv"));
    let s = |v: &str| Value::Str(v.into());
    assert_eq!(
        parsed.history.events,
        vec![
            call(0, "append", vec![s("3"), s("x 0 0 y")]),
            call(1, "get", vec![s("3")]),
            ret(0, Some(Value::Unit)),
            ret(1, Some(s("x 0 0 y"))),
            call(1, "put", vec![s("4"), s("a \"b\"")]),
        ]
    );
    let err = kv::parse("{:process 0, :type :invoke, :f :get, :key \"1\"}\n{:process 0, :type :ok, :f :get, :key 1, :value 3}\n").unwrap_err();
    assert_eq!(err.line, 2);
    let err = kv::parse("\n{:process 0, :type :invoke :f :get, :key \"1\"\n").unwrap_err();
    assert_eq!(
        (err.line, err.message.as_str()),
        (2, "unterminated map: missing `}`")
    );
    assert!(kv::parse("\n\n")
        .unwrap_err()
        .message
        .starts_with("no events"));
}

#[test]
fn reads_fgvt_json() {
    let text = r#"{"schema": "fgvt.history/1", "spec": "queue", "events": [
  {"type": "call", "thread": 0, "op": "offer", "args": [1]},
  {"type": "call", "thread": 1, "op": "poll"},
  {"type": "return", "thread": 0},
  {"type": "return", "thread": 1, "value": null},
  {"type": "call", "thread": 0, "op": "f", "args": [[1, "a", true], {"ref": 3}, {"unit": true}]},
  {"type": "return", "thread": 0, "unknown": true}
]}"#;
    assert_eq!(detect_format(text), Some(Format::Json));
    let parsed = parse(text, Format::Json).unwrap();
    assert_eq!(parsed.spec.as_deref(), Some("queue"));
    assert_eq!(
        parsed.history.events,
        vec![
            call(0, "offer", vec![Value::Int(1)]),
            call(1, "poll", vec![]),
            ret(0, Some(Value::Unit)),
            ret(1, Some(Value::Null)),
            call(
                0,
                "f",
                vec![
                    Value::Tuple(vec![
                        Value::Int(1),
                        Value::Str("a".into()),
                        Value::Bool(true)
                    ]),
                    Value::Ref(3),
                    Value::Unit
                ]
            ),
            ret(0, None),
        ]
    );
    assert!(!parsed.history.stuck);
}

#[test]
fn json_errors_name_the_line() {
    let text = "{\"schema\": \"fgvt.history/1\", \"events\": [\n  {\"type\": \"call\", \"thread\": 0, \"op\": \"a\"},\n  {\"type\": \"return\", \"thread\": 0, \"value\": 1.5}\n]}";
    let err = json::parse(text).unwrap_err();
    assert_eq!(err.line, 3, "{err}");
    assert!(err.message.contains("not an integer"), "{err}");
    let text = "{\"events\": [\n  {\"type\": \"return\", \"thread\": 2}\n]}";
    assert_eq!(
        json::parse(text).unwrap_err(),
        ParseError::new(2, "thread 2 returns with no pending call")
    );
    let text = "{\"schema\": \"fgvt.history/2\", \"events\": []}";
    assert!(json::parse(text)
        .unwrap_err()
        .message
        .contains("unsupported schema"));
    let text = "{\"events\": [\n\n  {\"type\": \"call\", \"thread\": 0}\n]}";
    let err = json::parse(text).unwrap_err();
    assert_eq!(err.line, 3, "{err}");
    assert!(err.message.contains("missing field `op`"), "{err}");
}

#[test]
fn json_round_trips() {
    let mut h = History::new();
    h.call(
        0,
        Call::new(
            "write",
            vec![
                Value::Int(0),
                Value::Tuple(vec![Value::Unit, Value::Ref(2)]),
            ],
        ),
    );
    h.call(1, Call::new("read", vec![]));
    h.ret(0, Value::Unit);
    h.ret(1, Value::Null);
    h.call(1, Call::new("put", vec![Value::Str("k\"".into())]));
    h.events.push(ret(1, None));
    h.call(2, Call::new("take", vec![]));
    h.stuck = true;
    let text = json::to_json(&h, Some("snapshot"));
    let parsed = json::parse(&text).unwrap();
    assert_eq!(parsed.history, h);
    assert_eq!(parsed.spec.as_deref(), Some("snapshot"));
}

#[test]
fn detects_nothing_in_other_text() {
    assert_eq!(detect_format(""), None);
    assert_eq!(detect_format("  \n hello"), None);
    assert_eq!("edn".parse::<Format>(), Ok(Format::Edn));
    assert_eq!("kv".parse::<Format>(), Ok(Format::Kv));
    assert!("xml".parse::<Format>().is_err());
}

#[test]
fn loading_names_the_file() {
    let dir = std::env::temp_dir().join(format!("fgvt-labeling-formats-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let empty = dir.join("empty.log");
    std::fs::write(&empty, "").unwrap();
    let err = load_history(&empty, None).unwrap_err();
    assert!(err.to_string().contains("empty.log:1: no events"), "{err}");
    let weird = dir.join("weird.txt");
    std::fs::write(&weird, "hello").unwrap();
    assert!(matches!(
        load_history(&weird, None),
        Err(LoadError::UnknownFormat { .. })
    ));
    let ok = dir.join("ok.json");
    std::fs::write(&ok, "{\"spec\": \"counter\", \"events\": [{\"type\": \"call\", \"thread\": 0, \"op\": \"inc\"}]}").unwrap();
    let loaded = load_history(&ok, None).unwrap();
    assert_eq!(
        (loaded.format, loaded.parsed.spec.as_deref()),
        (Format::Json, Some("counter"))
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

mod fuzz {
    //! Arbitrary and mutated text never panics a parser, and errors point inside the text.

    use proptest::prelude::*;
    use proptest::sample::Index;

    use super::super::{parse, Format};

    const SEEDS: [(Format, &str); 4] = [
        (
            Format::Edn,
            "[{:type :invoke, :f :cas, :value [1 2], :process 0, :time 1}\n {:type :ok, :f :cas, :value [1 2], :process 0}\n {:type :invoke, :f :read, :value nil, :process :nemesis}]\n",
        ),
        (
            Format::Jepsen,
            "INFO  jepsen.util - 0\t:invoke\t:cas\t[1 2]\nINFO  jepsen.util - 0\t:ok\t:cas\t[1 2]\n",
        ),
        (
            Format::Kv,
            "{:process 0, :type :invoke, :f :get, :key \"a\", :value nil}\n{:process 0, :type :ok, :f :get, :key \"a\", :value \"x\"}\n",
        ),
        (
            Format::Json,
            "{\"spec\": \"stack\", \"events\": [\n{\"type\": \"call\", \"thread\": 0, \"op\": \"push\", \"args\": [[1, {\"ref\": 2}]]},\n{\"type\": \"return\", \"thread\": 0, \"value\": {\"unit\": true}}]}\n",
        ),
    ];

    /// A seed with `insert` put at one place and a run cut at another.
    fn mutated(seed: &str, at: Index, insert: &str, cut_at: Index, cut: usize) -> String {
        let mut text = seed.as_bytes().to_vec();
        let i = at.index(text.len() + 1);
        text.splice(i..i, insert.bytes());
        let j = cut_at.index(text.len() + 1);
        text.drain(j..(j + cut).min(text.len()));
        String::from_utf8_lossy(&text).into_owned()
    }

    fn check(format: Format, text: &str) -> Result<(), TestCaseError> {
        if let Err(e) = parse(text, format) {
            let lines = text.lines().count().max(1);
            prop_assert!(
                e.line >= 1 && e.line <= lines + 1,
                "{format}: {e} in {lines} lines"
            );
        }
        Ok(())
    }

    proptest! {
        #[test]
        fn arbitrary_text(text in "\\PC{0,200}", which in 0..4usize) {
            check(SEEDS[which].0, &text)?;
        }

        #[test]
        fn mutated_text(
            which in 0..4usize,
            at in any::<Index>(),
            insert in "[\\[\\]{}(),:\"\\\\ \\n\\t0-9a-z-]{0,12}",
            cut_at in any::<Index>(),
            cut in 0..12usize,
        ) {
            let (format, seed) = SEEDS[which];
            check(format, &mutated(seed, at, &insert, cut_at, cut))?;
        }
    }

    #[test]
    fn the_seeds_parse() {
        for (format, seed) in SEEDS {
            parse(seed, format).unwrap_or_else(|e| panic!("{format}: {e}"));
        }
    }
}

mod edn_histories {
    //! Jepsen EDN histories of each model, linearizable and not, written by hand.

    use super::super::{detect_format, parse, Format};
    use crate::builtin::builtin;
    use crate::{check, CheckOptions, Verdict};

    /// The verdict on `text` read as EDN, with the model the reader chose.
    fn verdict(text: &str) -> (bool, String) {
        assert_eq!(detect_format(text), Some(Format::Edn), "{text}");
        let parsed = parse(text, Format::Edn).unwrap_or_else(|e| panic!("{e}"));
        let spec = parsed.spec.clone().unwrap();
        let outcome = check(
            &builtin(&spec).unwrap(),
            &parsed.history,
            &CheckOptions::default(),
        )
        .unwrap();
        (
            matches!(outcome.verdict, Verdict::Linearizable { .. }),
            spec,
        )
    }

    #[test]
    fn cas_register() {
        let ok = "{:type :invoke, :f :write, :value 1, :process 0}\n\
                  {:type :invoke, :f :cas, :value [1 2], :process 1}\n\
                  {:type :ok, :f :write, :value 1, :process 0}\n\
                  {:type :ok, :f :cas, :value [1 2], :process 1}\n\
                  {:type :invoke, :f :read, :value nil, :process 0}\n\
                  {:type :ok, :f :read, :value 2, :process 0}\n";
        assert_eq!(verdict(ok), (true, "register".into()));
        assert!(!verdict(&ok.replace(":value 2,", ":value 1,")).0);
        // A failed cas did not happen; an :info write may or may not have.
        let info = "{:type :invoke, :f :write, :value 3, :process 0}\n\
                    {:type :info, :f :write, :value 3, :process 0}\n\
                    {:type :invoke, :f :cas, :value [5 6], :process 1}\n\
                    {:type :fail, :f :cas, :value [5 6], :process 1}\n\
                    {:type :invoke, :f :read, :value nil, :process 2}\n\
                    {:type :ok, :f :read, :value 3, :process 2}\n";
        assert_eq!(verdict(info), (true, "register".into()));
        assert!(!verdict(&info.replace(":value 3, :process 2", ":value 6, :process 2")).0);
    }

    #[test]
    fn a_vector_of_maps_with_nemesis_time_and_index() {
        let text = "[{:type :invoke, :f :enqueue, :value 1, :process 0, :time 1, :index 0}\n \
                     {:type :info, :f :start, :value nil, :process :nemesis, :time 2, :index 1}\n \
                     {:type :ok, :f :enqueue, :value 1, :process 0, :time 3, :index 2}\n \
                     {:type :invoke, :f :dequeue, :value nil, :process 1, :time 4, :index 3}\n \
                     {:type :ok, :f :dequeue, :value 1, :process 1, :time 5, :index 4}]\n";
        assert_eq!(verdict(text), (true, "queue".into()));
        assert!(!verdict(&text.replace(":dequeue, :value 1", ":dequeue, :value 7")).0);
    }

    #[test]
    fn mutex() {
        let ok = "{:type :invoke, :f :acquire, :process 0}\n{:type :ok, :f :acquire, :process 0}\n\
                  {:type :invoke, :f :acquire, :process 1}\n{:type :invoke, :f :release, :process 0}\n\
                  {:type :ok, :f :release, :process 0}\n{:type :ok, :f :acquire, :process 1}\n";
        assert_eq!(verdict(ok), (true, "mutex".into()));
        // Two holders at once.
        let bad = "{:type :invoke, :f :acquire, :process 0}\n{:type :ok, :f :acquire, :process 0}\n\
                   {:type :invoke, :f :acquire, :process 1}\n{:type :ok, :f :acquire, :process 1}\n";
        assert!(!verdict(bad).0);
    }

    #[test]
    fn set_with_reads_of_the_whole_set() {
        let ok = "{:type :invoke, :f :add, :value 1, :process 0}\n\
                  {:type :invoke, :f :add, :value 2, :process 1}\n\
                  {:type :ok, :f :add, :value 1, :process 0}\n\
                  {:type :invoke, :f :read, :value nil, :process 2}\n\
                  {:type :ok, :f :read, :value #{1}, :process 2}\n\
                  {:type :ok, :f :add, :value 2, :process 1}\n";
        assert_eq!(verdict(ok), (true, "set".into()));
        // 2 was added before the read began: the read must see it.
        let missed = "{:type :invoke, :f :add, :value 2, :process 1}\n\
                      {:type :ok, :f :add, :value 2, :process 1}\n\
                      {:type :invoke, :f :read, :value nil, :process 2}\n\
                      {:type :ok, :f :read, :value #{}, :process 2}\n";
        assert!(!verdict(missed).0);
    }

    #[test]
    fn multi_register_transactions() {
        let ok = "{:type :invoke, :f :txn, :value [[:write 1 5] [:write 2 6]], :process 0}\n\
                  {:type :ok, :f :txn, :value [[:write 1 5] [:write 2 6]], :process 0}\n\
                  {:type :invoke, :f :txn, :value [[:read 1 nil] [:read 2 nil] [:read 3 nil]], :process 1}\n\
                  {:type :ok, :f :txn, :value [[:read 1 5] [:read 2 6] [:read 3 nil]], :process 1}\n";
        assert_eq!(verdict(ok), (true, "multi-register".into()));
        // A read that saw half of the first transaction: not atomic.
        assert!(!verdict(&ok.replace("[:read 2 6]", "[:read 2 nil]")).0);
    }

    #[test]
    fn malformed_edn_names_the_line_and_column() {
        let text = "{:type :invoke, :f :read, :value nil, :process 0}\n{:type :ok, :f :read, :value \"unterminated, :process 0}\n";
        let e = parse(text, Format::Edn).unwrap_err();
        assert_eq!(e.line, 2, "{e}");
        assert!(e.column.is_some(), "{e}");
        let deep = format!(
            "{{:type :invoke, :f :write, :value {}1{}, :process 0}}\n",
            "[".repeat(100_000),
            "]".repeat(100_000)
        );
        let e = parse(&deep, Format::Edn).unwrap_err();
        assert!(e.message.contains("nested more than"), "{e}");
        assert_eq!((e.line, e.column.is_some()), (1, true));
        let unknown = "{:type :invoke, :f :frob, :value nil, :process 0}\n";
        let e = parse(unknown, Format::Edn).unwrap_err();
        assert!(e.message.contains("cannot tell the model"), "{e}");
    }
}

/// A file-wide vector is recognized after blank lines and comments too.
#[test]
fn an_edn_vector_after_a_comment() {
    let text = "\n; recorded by Jepsen\n[{:type :invoke, :f :read, :value nil, :process 0}\n {:type :ok, :f :read, :value nil, :process 0}]\n";
    let parsed = parse(text, Format::Edn).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(parsed.history.events.len(), 2);
    assert_eq!(parsed.lines, vec![3, 4]);
}

/// `--initial` values: EDN literals, a map as its sorted pairs, errors with their column.
#[test]
fn an_initial_value_is_one_edn_literal() {
    use super::edn::parse_value;
    use fgvt_tree::Value;
    let s = |v: &str| Value::Str(v.into());
    assert_eq!(parse_value("nil"), Ok(Value::Null));
    assert_eq!(
        parse_value("[1 2]"),
        Ok(Value::Tuple(vec![Value::Int(1), Value::Int(2)]))
    );
    assert_eq!(
        parse_value("#{2 1}"),
        Ok(Value::Tuple(vec![Value::Int(1), Value::Int(2)]))
    );
    assert_eq!(
        parse_value(r#"{"k" "x", "a" 1}"#),
        Ok(Value::Tuple(vec![
            Value::Tuple(vec![s("a"), Value::Int(1)]),
            Value::Tuple(vec![s("k"), s("x")]),
        ]))
    );
    let e = parse_value("[3").unwrap_err();
    assert_eq!((e.line, e.column), (1, Some(3)), "{e}");
    assert!(e.message.starts_with("malformed EDN"), "{e}");
    let e = parse_value(&format!("{}1", "[".repeat(10_000))).unwrap_err();
    assert!(e.message.contains("nested more than"), "{e}");
}

/// A JSON history may give its spec's initial state, with the line it is on.
#[test]
fn a_json_history_may_give_an_initial_state() {
    use fgvt_tree::Value;
    let text = "{\"spec\": \"queue\",\n \"initial\": [7, 8],\n \"events\": []}\n";
    let parsed = parse(text, Format::Json).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        parsed.initial,
        Some((Value::Tuple(vec![Value::Int(7), Value::Int(8)]), 2))
    );
    let bad = "{\"spec\": \"queue\",\n \"initial\": [7, 1.5],\n \"events\": []}\n";
    assert_eq!(parse(bad, Format::Json).unwrap_err().line, 2);
}

/// Every shape Jepsen writes an EDN history in is told from its opening and read the same:
/// `;` comments first, a top-level list or vector or bare maps, maps over several lines, extra
/// keys.
#[test]
fn every_shape_of_an_edn_history_is_recognized_and_read_alike() {
    let one_per_line = "{:type :invoke, :f :write, :value 1, :process 0}\n\
                        {:type :ok, :f :write, :value 1, :process 0}\n\
                        {:type :invoke, :f :read, :value nil, :process 1}\n\
                        {:type :ok, :f :read, :value 1, :process 1}\n";
    let expected = parse(one_per_line, Format::Edn).unwrap().history;
    let shapes = [
        one_per_line.to_owned(),
        format!("; recorded by Jepsen\n;; twice\n\n{one_per_line}"),
        format!("[{}]", one_per_line.trim_end()),
        format!("({})\n", one_per_line.trim_end()),
        format!("; a list, commented\n(\n{one_per_line}; the end\n)\n"),
        // Knossos's multi-register.edn: keys on lines of their own, extra keys.
        "[{:type :invoke,\n :f :write,\n :value 1,\n :process 0,\n :time 7686455705}\n\
         {:type :ok,\n :f :write,\n :value 1,\n :process 0,\n :time 7686455799,\n :error nil}\n\
         {:process 1  :type :invoke, :f :read, :value nil, :index 2}\n\
         {:process 1, :type :ok, :f :read, :value 1, :index 3, :node \"n1\"}]\n"
            .to_owned(),
    ];
    for text in &shapes {
        assert_eq!(detect_format(text), Some(Format::Edn), "{text}");
        let parsed = parse(text, Format::Edn).unwrap_or_else(|e| panic!("{e}\n{text}"));
        assert_eq!(parsed.history, expected, "{text}");
        assert_eq!(parsed.spec.as_deref(), Some("register"), "{text}");
    }
    // The lines of the events are where their maps start.
    let lines = parse(&shapes[5], Format::Edn).unwrap().lines;
    assert_eq!(lines, vec![1, 6, 12, 13]);
    // A kv log is EDN too, told apart by its `:key`, even after a comment; JSON by its string
    // keys, even when the brace is alone on its line.
    assert_eq!(
        detect_format("; kv\n{:process 0, :type :invoke, :f :get, :key \"a\", :value nil}\n"),
        Some(Format::Kv)
    );
    assert_eq!(
        detect_format("{\n  \"spec\": \"queue\"}\n"),
        Some(Format::Json)
    );
    assert_eq!(
        detect_format("{:type :invoke,\n :f :read}\n"),
        Some(Format::Edn)
    );
    assert_eq!(detect_format("; only a comment\n"), None);
}

/// A history whose every operation failed recorded a test that ran and did nothing: it is
/// empty, and linearizable; so is one of the nemesis's operations only. A file with no
/// operation at all is still an error.
#[test]
fn an_all_failed_history_is_empty_not_missing() {
    use crate::builtin::builtin;
    use crate::{check, CheckOptions, Verdict};
    let all_failed = "[{:process 12, :type :invoke, :f :read, :value nil}\n \
                      {:process 12, :type :fail, :f :read, :value nil}\n \
                      {:process 19, :type :invoke, :f :write, :value 1}\n \
                      {:process 19, :type :fail, :f :write, :value 1, :error :timeout}]\n";
    let nemesis_only = "[{:process :nemesis, :type :info, :f :kill, :value nil}\n \
                        {:process :nemesis, :type :info, :f :kill, :value nil}]\n";
    for text in [all_failed, nemesis_only] {
        let parsed = parse(text, Format::Edn).unwrap_or_else(|e| panic!("{e}"));
        assert!(parsed.history.events.is_empty(), "{text}");
        let outcome = check(
            &builtin(parsed.spec.as_deref().unwrap()).unwrap(),
            &parsed.history,
            &CheckOptions::default(),
        )
        .unwrap();
        assert!(
            matches!(outcome.verdict, Verdict::Linearizable { .. }),
            "{text}: {:?}",
            outcome.verdict
        );
    }
    // A Jepsen log of failed writes only is empty too (a failed cas returned false: it stays).
    let failed_writes =
        "INFO  jepsen.util - 0\t:invoke\t:write\t1\nINFO  jepsen.util - 0\t:fail\t:write\t1\n";
    let parsed = parse(failed_writes, Format::Jepsen).unwrap_or_else(|e| panic!("{e}"));
    assert!(parsed.history.events.is_empty());
    for (text, format) in [
        ("", Format::Edn),
        ("; nothing but a comment\n", Format::Edn),
        ("[]", Format::Edn),
        ("", Format::Jepsen),
    ] {
        let e = parse(text, format).unwrap_err();
        assert!(e.message.starts_with("no events"), "{format} {text:?}: {e}");
    }
}

/// `:info` and `:fail` anywhere: a completion with no invocation before it is named with its
/// line; an `:info` of a process with nothing pending is harmless (Jepsen's crash of an idle
/// process).
#[test]
fn info_and_fail_anywhere() {
    let stray_fail = "{:type :invoke, :f :read, :value nil, :process 0}\n\
                      {:type :ok, :f :read, :value nil, :process 0}\n\
                      {:type :fail, :f :write, :value 3, :process 4}\n";
    let e = parse(stray_fail, Format::Edn).unwrap_err();
    assert_eq!(e.line, 3, "{e}");
    let stray_info = "{:type :info, :f :write, :value 3, :process 4}\n\
                      {:type :invoke, :f :read, :value nil, :process 0}\n\
                      {:type :ok, :f :read, :value nil, :process 0}\n\
                      {:type :info, :f :read, :value nil, :process 0}\n";
    let parsed = parse(stray_info, Format::Edn).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(parsed.history.events.len(), 2);
}
