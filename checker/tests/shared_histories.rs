//! Every recorded history in `../shared/histories/` gets its documented verdict.

use std::path::PathBuf;
use std::time::Instant;

use fgvt_checker::formats::{load_history, Format};
use fgvt_checker::{builtin, check, CheckOptions, Verdict};

/// The shared histories directory, or `None` (with a message) when it is absent.
fn histories() -> Option<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/histories");
    if dir.is_dir() {
        Some(dir)
    } else {
        eprintln!(
            "skipping: {} is absent (the recorded histories live outside the repository)",
            dir.display()
        );
        None
    }
}

/// Loads `file`, checks it (partitioned or not) and asserts the verdict.
fn expect(file: &str, linearizable: bool, partition: bool) {
    let Some(dir) = histories() else { return };
    let loaded = load_history(&dir.join(file), None).unwrap_or_else(|e| panic!("{e}"));
    let spec_name = loaded
        .parsed
        .spec
        .as_deref()
        .expect("the format implies a spec");
    let spec = builtin(spec_name).expect("a built-in spec");
    let options = CheckOptions {
        partition,
        ..CheckOptions::default()
    };
    let start = Instant::now();
    let outcome =
        check(&spec, &loaded.parsed.history, &options).unwrap_or_else(|e| panic!("{file}: {e}"));
    eprintln!(
        "{file} (partition: {partition}, {} partitions): {:?} in {:.2?}, {:?}",
        outcome.partitions,
        verdict_name(&outcome.verdict),
        start.elapsed(),
        outcome.stats
    );
    if let Verdict::NotLinearizable(explanation) = &outcome.verdict {
        eprintln!("{}", explanation.summary());
        if std::env::var_os("FGVT_SHOW").is_some() {
            eprintln!("{explanation}");
        }
    }
    assert_eq!(
        outcome.verdict.is_linearizable(),
        linearizable,
        "{file}: {:?}",
        verdict_name(&outcome.verdict)
    );
    assert_eq!(outcome.verdict.is_violation(), !linearizable, "{file}");
}

fn verdict_name(v: &Verdict) -> &'static str {
    match v {
        Verdict::Linearizable { .. } => "linearizable",
        Verdict::NotLinearizable(_) => "NOT linearizable",
        Verdict::Unknown => "unknown",
    }
}

#[test]
fn etcd_000_is_not_linearizable() {
    expect("jepsen/etcd_000.log", false, true);
}

#[test]
fn etcd_002_is_linearizable() {
    expect("jepsen/etcd_002.log", true, true);
}

#[test]
fn kv_c01_ok_is_linearizable() {
    expect("kv/c01-ok.txt", true, true);
    expect("kv/c01-ok.txt", true, false);
}

#[test]
fn kv_c01_bad_is_not_linearizable() {
    expect("kv/c01-bad.txt", false, true);
    expect("kv/c01-bad.txt", false, false);
}

#[test]
fn kv_c10_ok_partitioned_is_linearizable() {
    expect("kv/c10-ok.txt", true, true);
}

#[test]
fn kv_c10_bad_partitioned_is_not_linearizable() {
    expect("kv/c10-bad.txt", false, true);
}

#[test]
fn kv_c10_ok_whole_is_linearizable() {
    expect("kv/c10-ok.txt", true, false);
}

#[test]
fn kv_c10_bad_whole_is_not_linearizable() {
    expect("kv/c10-bad.txt", false, false);
}

#[test]
fn the_formats_are_detected() {
    let Some(dir) = histories() else { return };
    for (file, format) in [
        ("jepsen/etcd_000.log", Format::Jepsen),
        ("kv/c01-ok.txt", Format::Kv),
    ] {
        let text = std::fs::read_to_string(dir.join(file)).unwrap();
        assert_eq!(
            fgvt_checker::formats::detect_format(&text),
            Some(format),
            "{file}"
        );
    }
}
