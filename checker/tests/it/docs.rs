//! `docs/specs.md` and `docs/history-format.md` are generated from the code; these tests fail
//! when a page is stale. `FGVT_BLESS=1 cargo test -p fgvt-checker --test docs` rewrites them.

use std::path::PathBuf;

use fgvt_checker::builtin::reference::{example, specs_markdown, SPECS};
use fgvt_checker::builtin::{builtin, BUILTIN_NAMES};
use fgvt_checker::formats::json::{parse, reference_markdown};
use fgvt_checker::{Apply, Call, History, Spec, Value};

fn page(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../docs")
        .join(name)
}

/// Compares `generated` with the page on disk, or rewrites the page when blessing.
fn current(name: &str, generated: &str) {
    let path = page(name);
    if std::env::var_os("FGVT_BLESS").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, generated).unwrap();
        return;
    }
    let on_disk = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        on_disk == generated,
        "{} is stale: run `FGVT_BLESS=1 cargo test -p fgvt-checker --test docs`",
        path.display()
    );
}

#[test]
fn the_specs_page_is_current() {
    current("specs.md", &specs_markdown());
}

#[test]
fn every_documented_spec_and_operation_exists_with_its_arity() {
    let documented: Vec<&str> = SPECS.iter().map(|s| s.name).collect();
    assert_eq!(
        documented, BUILTIN_NAMES,
        "every built-in spec is documented, in order"
    );
    for doc in SPECS {
        let spec = builtin(doc.name).unwrap();
        for op in doc.ops {
            let mut results = Vec::new();
            for (i, name) in op.names.iter().enumerate() {
                let call = example(op, i);
                let result = spec.apply(&spec.initial(), 0, &call);
                assert!(
                    !matches!(result, Apply::Invalid(_)),
                    "{}: `{call}`: {result:?}",
                    doc.name
                );
                results.push(format!("{result:?}"));
                // One argument more is refused: the documented arity is the spec's.
                let mut args = call.args.clone();
                args.push(Value::Int(0));
                let more = spec.apply(&spec.initial(), 0, &Call::new(*name, args));
                assert!(
                    matches!(more, Apply::Invalid(_)),
                    "{}: `{name}` takes more",
                    doc.name
                );
            }
            results.dedup();
            assert_eq!(
                results.len(),
                1,
                "{}: the aliases of `{}` agree",
                doc.name,
                op.names[0]
            );
        }
    }
}

#[test]
fn the_history_format_page_is_current_and_its_example_reads_back() {
    let mut example = History::default();
    example.call(0, Call::new("push", vec![Value::Int(1)]));
    example.call(1, Call::new("pop", vec![]));
    example.ret(0, Value::Unit);
    example.ret(1, Value::Int(1));
    let page = reference_markdown(&example);
    let json = page
        .split("```json\n")
        .nth(1)
        .unwrap()
        .split("```")
        .next()
        .unwrap();
    let parsed = parse(json).unwrap();
    assert_eq!(parsed.history, example);
    assert_eq!(parsed.spec.as_deref(), Some("stack"));
    current("history-format.md", &page);
}
