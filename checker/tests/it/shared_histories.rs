//! Recorded histories get their documented verdicts: those shipped in `tests/data/histories`
//! (always), and the real ones of `../shared/histories` (ignored by default: they live outside
//! the repository; `cargo test -p fgvt-checker --test shared_histories -- --ignored` runs them,
//! and fails if they are absent).

use std::path::{Path, PathBuf};
use std::time::Instant;

use fgvt_checker::formats::{detect_format, load_history, Format};
use fgvt_checker::{builtin, check, BuiltinSpec, CheckOptions, Initialized, Spec, Verdict};

/// The histories shipped in the repository.
fn shipped() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/data/histories")
}

/// One row of the table in `tests/data/histories/README.md`.
struct Documented {
    file: String,
    linearizable: bool,
    /// The `--initial` flag of the row, if any.
    initial: Option<String>,
}

/// The table of `README.md` in `dir`: every row whose first cell names a file in backticks.
fn documented(dir: &Path) -> Vec<Documented> {
    let readme = std::fs::read_to_string(dir.join("README.md")).unwrap();
    readme
        .lines()
        .filter_map(|line| {
            let cells: Vec<&str> = line.split('|').map(str::trim).collect();
            let file = cells.get(1)?.strip_prefix('`')?.strip_suffix('`')?;
            let linearizable = match *cells.get(2)? {
                "linearizable" => true,
                "NOT linearizable" => false,
                other => panic!("{file}: verdict `{other}`"),
            };
            let initial = cells
                .get(3)
                .and_then(|c| c.strip_prefix("`--initial ")?.strip_suffix('`'))
                .map(str::to_owned);
            Some(Documented {
                file: file.to_owned(),
                linearizable,
                initial,
            })
        })
        .collect()
}

/// Loads `file` (in `dir`), checks it (partitioned or not, from `initial` when given) and
/// asserts the verdict.
fn expect(dir: &Path, file: &str, linearizable: bool, partition: bool, initial: Option<&str>) {
    let loaded = load_history(&dir.join(file), None).unwrap_or_else(|e| panic!("{e}"));
    let spec_name = loaded
        .parsed
        .spec
        .as_deref()
        .expect("the format implies a spec");
    let spec: BuiltinSpec = builtin(spec_name).expect("a built-in spec");
    let state = match initial {
        Some(edn) => spec
            .state_of(&fgvt_checker::formats::edn::parse_value(edn).unwrap())
            .unwrap(),
        None => spec.initial(),
    };
    let spec = Initialized::new(spec, state);
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

/// Every history file below `dir`, relative to `under` (the README and the licence are not
/// histories).
fn history_files(dir: &Path, under: &Path, out: &mut Vec<String>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy();
        if path.is_dir() {
            history_files(&path, under, out);
        } else if name != "README.md" && !name.starts_with("LICENSE") {
            let relative = path.strip_prefix(under).unwrap();
            out.push(relative.to_string_lossy().replace('\\', "/"));
        }
    }
}

#[test]
fn every_shipped_history_gets_its_documented_verdict() {
    let dir = shipped();
    let table = documented(&dir);
    assert!(table.len() >= 15, "the table lists the histories");
    let mut files = Vec::new();
    history_files(&dir, &dir, &mut files);
    files.sort();
    let mut listed: Vec<String> = table.iter().map(|d| d.file.clone()).collect();
    listed.sort();
    assert_eq!(files, listed, "every history in the folder is in the table");
    for row in &table {
        expect(
            &dir,
            &row.file,
            row.linearizable,
            true,
            row.initial.as_deref(),
        );
        // A kv store is partitioned by key; whole, the verdict is the same.
        if row.file.starts_with("kv/") {
            expect(&dir, &row.file, row.linearizable, false, None);
        }
    }
}

#[test]
fn the_shipped_formats_are_detected() {
    let dir = shipped();
    for (file, format) in [
        ("jepsen/etcd_ok.log", Format::Jepsen),
        ("kv/c04-ok.txt", Format::Kv),
        (
            "knossos/cas-register/good/cas-register-bug.edn",
            Format::Edn,
        ),
        (
            "knossos/cas-register/bad/rethink-fail-minimal.edn",
            Format::Edn,
        ),
        (
            "knossos/multi-register/good/multi-register.edn",
            Format::Edn,
        ),
    ] {
        let text = std::fs::read_to_string(dir.join(file)).unwrap();
        assert_eq!(detect_format(&text), Some(format), "{file}");
    }
}

/// The real histories outside the repository.
fn shared() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/histories");
    assert!(
        dir.is_dir(),
        "{} is absent: these tests need the recorded histories beside the repository",
        dir.display()
    );
    dir
}

#[test]
#[ignore = "needs ../shared/histories, outside the repository (run with --ignored)"]
fn every_shared_history_gets_its_documented_verdict() {
    let dir = shared();
    for (file, linearizable) in [
        ("jepsen/etcd_000.log", false),
        ("jepsen/etcd_002.log", true),
        ("kv/c01-ok.txt", true),
        ("kv/c01-bad.txt", false),
        ("kv/c10-ok.txt", true),
        ("kv/c10-bad.txt", false),
    ] {
        expect(&dir, file, linearizable, true, None);
        if file.starts_with("kv/") {
            expect(&dir, file, linearizable, false, None);
        }
        let text = std::fs::read_to_string(dir.join(file)).unwrap();
        let format = if file.starts_with("kv/") {
            Format::Kv
        } else {
            Format::Jepsen
        };
        assert_eq!(detect_format(&text), Some(format), "{file}");
    }
}
