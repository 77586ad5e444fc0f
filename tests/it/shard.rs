//! Sharded hunts (issue 28): `fgvt hunt --shard K/N` in N processes at once, merged with
//! `--merge`, reports exactly what one process reports (the same findings, the same tests
//! written, the same exit code); shards that are not one whole hunt are bad input (exit 2);
//! the CI examples in `docs/ci` run as written.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::Value;

use crate::common;

/// What a run of fgvt gave.
#[derive(Debug)]
struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

impl Run {
    fn of(out: Output) -> Run {
        let run = Run {
            code: out.status.code().expect("fgvt exits"),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        };
        assert!(!run.stderr.contains("panicked"), "{}", run.stderr);
        run
    }

    /// stdout then stderr, without the durations of the hunt's header.
    fn text(&self) -> String {
        timeless(&format!("{}{}", self.stdout, self.stderr))
    }
}

/// `fgvt` in `dir`, colour off, with no shard variables from the environment.
fn fgvt_in(dir: &Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_fgvt"));
    command
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .env_remove("JOB_COMPLETION_INDEX")
        .env_remove("FGVT_SHARD_COUNT");
    command
}

/// `fgvt hunt ARGS` in `dir`.
fn hunt(dir: &Path, args: &[&str]) -> Run {
    Run::of(fgvt_in(dir).arg("hunt").args(args).output().unwrap())
}

/// A scratch directory where `fixtures` is the repository's, so that commands name hunt
/// files as from the repository root and write what they write here.
fn scratch() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(common::root().join("fixtures"), dir.path().join("fixtures"))
        .unwrap();
    dir
}

/// `text` without the duration that ends a hunt's header: "… seed 1) in 319.4ms" and the
/// merge's "… seed 1) in 3 shards (0.6s in all)" both end at "seed 1)".
fn timeless(text: &str) -> String {
    text.lines()
        .map(|line| match line.find(") in ") {
            Some(at) if line.contains(" tests drawn (") => &line[..=at],
            _ => line,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Runs shards 1 to `n` of `fgvt hunt ARGS` at once in `dir`, each writing its result to
/// `shards/`; each must exit 0.
fn run_shards(dir: &Path, args: &[&str], n: usize) {
    let children: Vec<_> = (1..=n)
        .map(|k| {
            fgvt_in(dir)
                .arg("hunt")
                .args(args)
                .args([
                    "--jobs",
                    "1",
                    "--shard",
                    &format!("{k}/{n}"),
                    "-o",
                    "shards/",
                ])
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for (k, child) in children.into_iter().enumerate() {
        let run = Run::of(child.wait_with_output().unwrap());
        assert_eq!(run.code, 0, "shard {}/{n}: {run:?}", k + 1);
    }
}

/// Every file under `dir` but the fixtures and the shards' results, by relative path.
fn files(dir: &Path) -> BTreeMap<PathBuf, String> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<PathBuf, String>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let name = path.strip_prefix(root).unwrap().to_path_buf();
            if name == Path::new("fixtures") || name == Path::new("shards") {
                continue;
            }
            if path.is_dir() {
                walk(root, &path, out);
            } else {
                out.insert(name, std::fs::read_to_string(&path).unwrap());
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

/// Runs `fgvt hunt ARGS OUTPUT` in one process, and `fgvt hunt ARGS` in `n` shards merged
/// with `fgvt hunt ARGS OUTPUT --merge shards/`, for each `n` of `counts`: every merge must
/// print, write and exit as the one process does. Returns the one process's run and the files
/// it wrote.
fn merges_like_one_process(
    args: &[&str],
    output: &[&str],
    counts: &[usize],
) -> (Run, BTreeMap<PathBuf, String>) {
    let whole_dir = scratch();
    let whole = hunt(whole_dir.path(), &[args, output].concat());
    let written = files(whole_dir.path());
    for &n in counts {
        let dir = scratch();
        run_shards(dir.path(), args, n);
        let merged = hunt(
            dir.path(),
            &[args, output, &["--merge", "shards/"]].concat(),
        );
        assert_eq!(
            merged.code, whole.code,
            "{n} shards of {args:?}: {merged:?}"
        );
        assert_eq!(merged.text(), whole.text(), "{n} shards of {args:?}");
        assert_eq!(files(dir.path()), written, "{n} shards of {args:?}");
    }
    (whole, written)
}

/// The sample numbers of the findings a hunt printed.
fn found_samples(text: &str) -> Vec<usize> {
    text.lines()
        .filter_map(|line| line.strip_prefix("FAILING test at sample "))
        .map(|rest| rest.split(':').next().unwrap().parse().unwrap())
        .collect()
}

#[test]
fn shards_of_the_pair_snapshot_hunt_merge_to_its_finding() {
    let hunt_file = "fixtures/pair_snapshot/hunt.json";
    let args = [hunt_file, "--seed", "1", "--samples", "60"];
    let (whole, written) = merges_like_one_process(&args, &["-o", "found.json"], &[1, 2, 3, 5]);
    assert_eq!(whole.code, 1, "{whole:?}");
    assert_eq!(found_samples(&whole.text()), [50]);
    assert!(whole.text().contains("51 of 60 tests drawn"), "{whole:?}");
    let found: Value = serde_json::from_str(&written[Path::new("found.json")]).unwrap();
    assert!(
        (found["description"].as_str().unwrap()).starts_with(
            "Found by `fgvt hunt fixtures/pair_snapshot/hunt.json --seed 1` (sample 50)."
        ),
        "{found}"
    );
    // With --all every sample is checked: sample 50 is the only failing one of the 60.
    let all = [&args[..], &["--all"]].concat();
    let (whole, written) = merges_like_one_process(&all, &["-o", "found.json"], &[2, 3]);
    assert_eq!(found_samples(&whole.text()), [50]);
    assert_eq!(
        written.keys().collect::<Vec<_>>(),
        [Path::new("found-50.json")]
    );
}

#[test]
fn shards_of_the_lock_free_list_hunt_merge_to_its_findings() {
    let hunt_file = "fixtures/lock_free_list/hunt.json";
    let args = [hunt_file, "--seed", "1"];
    let (whole, _) = merges_like_one_process(&args, &["-o", "found.json"], &[1, 2, 3, 5]);
    assert_eq!(whole.code, 1);
    assert_eq!(found_samples(&whole.text()), [4]);
    let all = [&args[..], &["--all"]].concat();
    let (whole, written) = merges_like_one_process(&all, &["-o", "found.json"], &[1, 2, 3, 5]);
    assert_eq!(found_samples(&whole.text()), [4, 13, 31, 43, 52, 61]);
    assert!(
        whole
            .text()
            .contains("sample 93: the same test as sample 13"),
        "{whole:?}"
    );
    assert_eq!(written.len(), 6);
}

#[test]
fn a_merged_hunt_minimizes_and_localizes_what_one_process_does() {
    let args = [
        "fixtures/lock_free_list/hunt.json",
        "--seed",
        "2",
        "--localize",
        "--out-dir",
        "out",
    ];
    let dir = scratch();
    std::fs::create_dir(dir.path().join("out")).unwrap();
    let whole = hunt(dir.path(), &args);
    assert_eq!(whole.code, 1, "{whole:?}");
    assert!(whole.stdout.contains("NOT LINEARIZABLE"), "{whole:?}");
    let written = files(dir.path());
    assert_eq!(
        written.keys().collect::<Vec<_>>(),
        [Path::new("out/found.json"), Path::new("out/minimal.json")]
    );
    for n in [2, 3] {
        let dir = scratch();
        std::fs::create_dir(dir.path().join("out")).unwrap();
        run_shards(dir.path(), &args[..3], n);
        let merged = hunt(dir.path(), &[&args[..], &["--merge", "shards"]].concat());
        assert_eq!(merged.code, 1, "{merged:?}");
        assert_eq!(merged.stdout, whole.stdout, "the report, {n} shards");
        assert_eq!(merged.text(), whole.text());
        assert_eq!(files(dir.path()), written, "{n} shards");
    }
}

/// The result file of shard `k` of `n` in `dir/shards`.
fn shard_json(dir: &Path, k: usize, n: usize) -> Value {
    let path = dir.join("shards").join(format!("shard-{k}-of-{n}.json"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap()
}

#[test]
fn each_shard_records_its_own_samples_and_findings() {
    let dir = scratch();
    let args = ["fixtures/pair_snapshot/hunt.json", "--seed", "1"];
    run_shards(dir.path(), &args, 3);
    let summary = |k| {
        let json = shard_json(dir.path(), k, 3);
        assert_eq!(json["schema"], "fgvt.hunt-shard/1");
        assert_eq!(json["seed"], 1);
        assert_eq!(json["samples"], 100);
        assert_eq!(json["shard"], serde_json::json!({"index": k, "count": 3}));
        let findings: Vec<u64> = (json["findings"].as_array().unwrap().iter())
            .map(|f| f["sample"].as_u64().unwrap())
            .collect();
        (
            json["shard_samples"].as_u64().unwrap(),
            json["checked"].as_u64().unwrap(),
            json["last_checked"].as_u64(),
            findings,
        )
    };
    // Shard 1 has samples 0, 3, …, 99; shard 2 1, 4, …, 97; shard 3 2, 5, …, 98, of which it
    // checked 2 to 50 and stopped at the failing sample 50.
    assert_eq!(summary(1), (34, 34, Some(99), vec![]));
    assert_eq!(summary(2), (33, 33, Some(97), vec![]));
    assert_eq!(summary(3), (33, 17, Some(50), vec![50]));
    let finding = &shard_json(dir.path(), 3, 3)["findings"][0];
    assert_eq!(finding["verdict"], "fails");
    assert_eq!(
        finding["threads"],
        serde_json::json!([
            ["write(1, 1)", "write(1, 0)"],
            ["write(0, 1)", "write(0, 0)"],
            ["write(1, 0)", "read()"]
        ])
    );

    // The results merge named one by one as from their directory.
    let by_dir = hunt(dir.path(), &[&args[..], &["--merge", "shards"]].concat());
    let by_file = hunt(
        dir.path(),
        &[
            &args[..],
            &[
                "--merge",
                "shards/shard-3-of-3.json",
                "--merge",
                "shards/shard-1-of-3.json",
            ],
            &["--merge", "shards/shard-2-of-3.json"],
        ]
        .concat(),
    );
    assert_eq!(by_dir.code, 1, "{by_dir:?}");
    assert_eq!((by_file.code, by_file.text()), (by_dir.code, by_dir.text()));
    assert_eq!(found_samples(&by_dir.text()), [50]);

    // `--shard auto` in a Kubernetes Indexed Job's pod 2 of 3 (counted from 0) is shard 3/3;
    // without -o its result goes to stdout.
    let auto = Run::of(
        fgvt_in(dir.path())
            .args(["hunt", args[0], "--seed", "1", "--shard", "auto"])
            .env("JOB_COMPLETION_INDEX", "2")
            .env("FGVT_SHARD_COUNT", "3")
            .output()
            .unwrap(),
    );
    assert_eq!(auto.code, 0, "{auto:?}");
    let mut printed: Value = serde_json::from_str(&auto.stdout).unwrap();
    let mut written = shard_json(dir.path(), 3, 3);
    for json in [&mut printed, &mut written] {
        json["seconds"] = Value::Null;
    }
    assert_eq!(printed, written);
    assert!(
        auto.stderr
            .contains("shard 3/3: 17 of its 33 tests checked"),
        "{auto:?}"
    );
    // --shard-count wins over the environment's count.
    let flag = Run::of(
        fgvt_in(dir.path())
            .args(["hunt", args[0], "--shard", "auto", "--shard-count", "4"])
            .args(["-o", "auto/"])
            .env("JOB_COMPLETION_INDEX", "0")
            .env("FGVT_SHARD_COUNT", "3")
            .output()
            .unwrap(),
    );
    assert_eq!(flag.code, 0, "{flag:?}");
    assert!(dir.path().join("auto/shard-1-of-4.json").is_file());
}

/// Runs `fgvt hunt ARGS` in `dir` (with `env`) and requires exit 2 with `message` in what it
/// printed.
fn refused(dir: &Path, args: &[&str], env: &[(&str, &str)], message: &str) {
    let mut command = fgvt_in(dir);
    command.arg("hunt").args(args);
    for (name, value) in env {
        command.env(name, value);
    }
    let run = Run::of(command.output().unwrap());
    assert_eq!(run.code, 2, "{args:?}: {run:?}");
    assert!(
        run.stderr.contains(message),
        "{args:?}: wanted `{message}` in {}",
        run.stderr
    );
}

#[test]
fn malformed_shards_and_shards_that_are_not_one_hunt_are_bad_input() {
    let dir = scratch();
    let d = dir.path();
    let ps = "fixtures/pair_snapshot/hunt.json";
    for (shard, message) in [
        (
            "3/2",
            "shard 3 of 2 does not exist: K must be between 1 and N",
        ),
        ("0/2", "shard 0 of 2 does not exist"),
        ("2/0", "the number of shards N must be at least 1"),
        ("two", "`two` is not a shard: write K/N"),
        ("1/2/3", "is not a shard"),
    ] {
        refused(d, &[ps, "--shard", shard], &[], message);
    }
    refused(
        d,
        &[ps, "--shard", "auto"],
        &[],
        "JOB_COMPLETION_INDEX, which is not set",
    );
    refused(
        d,
        &[ps, "--shard", "auto"],
        &[("JOB_COMPLETION_INDEX", "1")],
        "needs the number of shards",
    );
    refused(
        d,
        &[ps, "--shard", "auto", "--shard-count", "2"],
        &[("JOB_COMPLETION_INDEX", "2")],
        "JOB_COMPLETION_INDEX=2 with 2 shards",
    );
    refused(
        d,
        &[ps, "--shard", "auto", "--shard-count", "2"],
        &[("JOB_COMPLETION_INDEX", "one")],
        "JOB_COMPLETION_INDEX=\"one\" is not a number",
    );
    refused(
        d,
        &[ps, "--shard", "1/2", "--shard-count", "3"],
        &[],
        "disagree",
    );
    refused(
        d,
        &[ps, "--shard", "1/2", "--localize"],
        &[],
        "cannot be used with",
    );
    refused(
        d,
        &[ps, "--shard", "1/2", "--merge", "x"],
        &[],
        "cannot be used with",
    );
    refused(d, &[ps, "--shard-count", "2"], &[], "--shard");

    // Shards of one hunt (seed 1, 3 shards), and of others.
    run_shards(d, &[ps, "--seed", "1", "--samples", "30"], 3);
    let shard = |k: usize| format!("shards/shard-{k}-of-3.json");
    let std_dir = |name: &str, files: &[(&str, &str)]| {
        let sub = d.join(name);
        std::fs::create_dir_all(&sub).unwrap();
        for (file, from) in files {
            std::fs::copy(d.join(from), sub.join(file)).unwrap();
        }
        name.to_string()
    };
    let merge = |dir: &str, extra: &[&str], message: &str| {
        let args = [
            &[ps, "--seed", "1", "--samples", "30", "--merge", dir][..],
            extra,
        ]
        .concat();
        refused(d, &args, &[], message);
    };
    let two = std_dir("two", &[("a.json", &shard(1)), ("b.json", &shard(3))]);
    merge(&two, &[], "shard 2 of 3 missing");
    let dup = std_dir(
        "dup",
        &[
            ("a.json", &shard(1)),
            ("b.json", &shard(2)),
            ("c.json", &shard(2)),
            ("d.json", &shard(3)),
        ],
    );
    merge(
        &dup,
        &[],
        "shard 2/3 is given twice: `dup/b.json` and `dup/c.json`",
    );
    merge(
        "shards",
        &["--all"],
        "ran without --all (it stops at its first failing test)",
    );
    refused(
        d,
        &[ps, "--seed", "2", "--samples", "30", "--merge", "shards"],
        &[],
        "is a shard of a hunt with seed 1, not 2",
    );
    refused(
        d,
        &[ps, "--seed", "1", "--merge", "shards"],
        &[],
        "is a shard of a hunt with samples 30, not 100",
    );
    refused(
        d,
        &[
            "fixtures/lock_free_list/hunt.json",
            "--seed",
            "1",
            "--samples",
            "30",
            "--merge",
            "shards",
        ],
        &[],
        "is a shard of a hunt with hunt file `fixtures/pair_snapshot/hunt.json`",
    );
    merge("nowhere", &[], "cannot read the shard result `nowhere`");
    let empty = std_dir("empty", &[]);
    merge(&empty, &[], "holds no shard results");

    // Shards of another seed mixed in.
    let other = scratch();
    run_shards(other.path(), &[ps, "--seed", "2", "--samples", "30"], 3);
    std::fs::copy(
        other.path().join("shards/shard-2-of-3.json"),
        d.join("seed2.json"),
    )
    .unwrap();
    let mixed = std_dir(
        "mixed",
        &[
            ("1.json", &shard(1)),
            ("2.json", "seed2.json"),
            ("3.json", &shard(3)),
        ],
    );
    merge(
        &mixed,
        &[],
        "the shards are not of one hunt: `mixed/1.json` has seed 1, `mixed/2.json` has 2",
    );

    // Garbled results: cut short, not JSON, a test file, a shard edited past its samples.
    let text = std::fs::read_to_string(d.join(shard(2))).unwrap();
    let garbled = |name: &str, contents: &str, message: &str| {
        let sub = std_dir(name, &[("1.json", &shard(1)), ("3.json", &shard(3))]);
        std::fs::write(d.join(&sub).join("2.json"), contents).unwrap();
        merge(
            &sub,
            &[],
            &format!("`{sub}/2.json` is not a shard result: {message}"),
        );
    };
    garbled("cut", &text[..text.len() / 2], "EOF while parsing");
    garbled("binary", "\u{0}\u{1}garbage", "expected value");
    garbled(
        "test",
        &std::fs::read_to_string(common::fixture("pair_snapshot/failing.json")).unwrap(),
        "it has no `schema` (`fgvt.hunt-shard/1`)",
    );
    garbled(
        "checked",
        &text.replace("\"checked\": 10", "\"checked\": 11"),
        "it checked 11 samples of its 10",
    );
    garbled(
        "schema",
        &text.replace("fgvt.hunt-shard/1", "fgvt.hunt-shard/2"),
        "its schema is `fgvt.hunt-shard/2`",
    );
}

/// A racy counter checked against the built-in counter spec, with an operation the spec does
/// not know: samples drawing `poke()` cannot be checked (an error, exit 2), the others may
/// fail. Seed 1's first error comes before any finding; seed 2's first finding before any
/// error.
const RACY: &str = "object Racy {\n    shared int x = 0;\n    op inc() {\n        int v = x;\n        x = v + 1;\n    }\n    op get() {\n        return x;\n    }\n    op poke() {\n        x = x;\n    }\n}\n";

#[test]
fn a_sample_that_cannot_be_checked_stops_the_merge_where_it_stops_one_process() {
    let hunt_file = r#"{"object": "racy.fgv", "spec": "counter", "operations": ["inc()", "get()", "get()", "poke()"], "threads": 2, "ops_per_thread": 2, "final": ["get()"], "samples": 30}"#;
    let setup = |dir: &Path| {
        std::fs::write(dir.join("racy.fgv"), RACY).unwrap();
        std::fs::write(dir.join("hunt.json"), hunt_file).unwrap();
    };
    for (seed, all, code) in [("1", false, 2), ("2", false, 1), ("2", true, 2)] {
        let mut args = vec!["hunt.json", "--seed", seed];
        if all {
            args.push("--all");
        }
        let output = ["-o", "found.json"];
        let whole_dir = tempfile::tempdir().unwrap();
        setup(whole_dir.path());
        let whole = hunt(whole_dir.path(), &[&args[..], &output].concat());
        assert_eq!(whole.code, code, "seed {seed}: {whole:?}");
        if code == 2 {
            assert!(whole.stderr.contains("cannot judge a history"), "{whole:?}");
        }
        for n in [2, 3] {
            let dir = tempfile::tempdir().unwrap();
            setup(dir.path());
            // A shard that meets such a sample records it and still exits 0.
            run_shards(dir.path(), &args, n);
            let merged = hunt(
                dir.path(),
                &[&args[..], &output, &["--merge", "shards"]].concat(),
            );
            assert_eq!(
                merged.code, whole.code,
                "seed {seed}, {n} shards: {merged:?}"
            );
            assert_eq!(merged.text(), whole.text(), "seed {seed}, {n} shards");
            assert_eq!(files(dir.path()), files(whole_dir.path()));
        }
    }
}

/// The file `docs/ci/<name>`.
fn ci_file(name: &str) -> String {
    std::fs::read_to_string(common::root().join("docs/ci").join(name)).unwrap()
}

/// What the unsharded `fgvt hunt ARGS` does in a scratch directory: run, files written.
fn unsharded(args: &[&str]) -> (Run, BTreeMap<PathBuf, String>) {
    let dir = scratch();
    let run = hunt(dir.path(), args);
    (run, files(dir.path()))
}

/// Runs `line` (a shell command of a CI file) in `dir` with `fgvt` on the PATH, and
/// `extra_path` before it.
fn shell(dir: &Path, line: &str, env: &[(&str, String)]) -> Run {
    let bin = Path::new(env!("CARGO_BIN_EXE_fgvt")).parent().unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut command = Command::new("sh");
    command
        .args(["-c", line])
        .current_dir(dir)
        .env("PATH", path)
        .env("NO_COLOR", "1")
        .env_remove("JOB_COMPLETION_INDEX")
        .env_remove("FGVT_SHARD_COUNT");
    for (name, value) in env {
        command.env(name, value);
    }
    Run::of(command.output().unwrap())
}

#[test]
fn the_github_actions_matrix_runs_as_written_and_merges_to_the_unsharded_hunt() {
    let workflow = ci_file("github-actions.yml");
    let runs: Vec<&str> = (workflow.lines())
        .filter_map(|line| line.trim().strip_prefix("- run: "))
        .filter(|line| line.starts_with("fgvt "))
        .collect();
    let [shard, merge] = runs[..] else {
        panic!("one shard and one merge command: {runs:?}")
    };
    let matrix: Vec<usize> = (workflow.lines())
        .find_map(|line| line.trim().strip_prefix("shard: "))
        .map(|list| serde_json::from_str(list).unwrap())
        .expect("the matrix's shards");
    assert!(
        shard.contains(&format!("--shard ${{{{ matrix.shard }}}}/{}", matrix.len())),
        "N is the matrix's length: {shard}"
    );
    let dir = scratch();
    for k in &matrix {
        // Each runner: its own checkout, its shard uploaded and downloaded into shards/.
        let runner = scratch();
        let line = shard.replace("${{ matrix.shard }}", &k.to_string());
        let run = shell(runner.path(), &line, &[]);
        assert_eq!(run.code, 0, "{line}: {run:?}");
        let name = format!("shard-{k}-of-{}.json", matrix.len());
        std::fs::create_dir_all(dir.path().join("shards")).unwrap();
        std::fs::copy(
            runner.path().join("shards").join(&name),
            dir.path().join("shards").join(&name),
        )
        .unwrap();
    }
    let merged = shell(dir.path(), merge, &[]);
    assert_eq!(merged.code, 1, "{merge}: {merged:?}");
    // The merge is the unsharded command with --merge for --shard.
    let args: Vec<&str> = merge.split_whitespace().skip(2).collect();
    let at = args.iter().position(|a| *a == "--merge").unwrap();
    let whole_args = [&args[..at], &args[at + 2..]].concat();
    let (whole, written) = unsharded(&whole_args);
    assert_eq!(merged.text(), whole.text());
    assert_eq!(files(dir.path()), written);
    assert!(
        written[Path::new("report.md")].starts_with("# `PairSnapshot` is not linearizable"),
        "{written:?}"
    );
    assert!(written.contains_key(Path::new("minimal.json")));
}

/// The `command` of a Kubernetes Job file, as an argument list.
fn k8s_command(yaml: &str) -> Vec<String> {
    let list = (yaml.lines())
        .find_map(|line| line.trim().strip_prefix("command: "))
        .expect("a command");
    // A YAML flow sequence of double-quoted strings is JSON.
    serde_json::from_str(list).unwrap()
}

#[test]
fn the_kubernetes_indexed_job_runs_as_written_and_merges_to_the_unsharded_hunt() {
    let job = ci_file("kubernetes-indexed-job.yaml");
    let completions: usize = (job.lines())
        .find_map(|line| line.trim().strip_prefix("completions: "))
        .unwrap()
        .parse()
        .unwrap();
    assert!(job.contains("completionMode: Indexed"));
    let shard = k8s_command(&job);
    let count = shard.iter().position(|a| a == "--shard-count").unwrap();
    assert_eq!(
        shard[count + 1],
        completions.to_string(),
        "--shard-count is `completions`"
    );
    let merge = k8s_command(&ci_file("kubernetes-merge-job.yaml"));
    assert_eq!(shard[0], "fgvt");
    assert_eq!(merge[0], "fgvt");

    let dir = scratch();
    let pods: Vec<_> = (0..completions)
        .map(|index| {
            fgvt_in(dir.path())
                .args(&shard[1..])
                .env("JOB_COMPLETION_INDEX", index.to_string())
                .output()
                .unwrap()
        })
        .collect();
    for pod in pods {
        let run = Run::of(pod);
        assert_eq!(run.code, 0, "{run:?}");
    }
    let merged = Run::of(fgvt_in(dir.path()).args(&merge[1..]).output().unwrap());
    assert_eq!(merged.code, 1, "{merged:?}");
    assert!(merged.stdout.contains("NOT LINEARIZABLE"), "{merged:?}");
    let at = merge.iter().position(|a| a == "--merge").unwrap();
    let whole_args: Vec<&str> = (merge[1..at].iter().chain(&merge[at + 2..]))
        .map(String::as_str)
        .collect();
    let whole_dir = scratch();
    std::fs::create_dir(whole_dir.path().join("out")).unwrap();
    let whole = hunt(whole_dir.path(), &whole_args[1..]);
    assert_eq!(merged.text(), whole.text());
    let mut written = files(dir.path());
    written.retain(|name, _| !name.starts_with("out/shards"));
    assert_eq!(written, files(whole_dir.path()));
}

/// A stand-in for GNU parallel's `parallel COMMAND ::: ARGS` (each argument for `{}`, all at
/// once), for machines without it.
const PARALLEL: &str = r#"#!/bin/sh
cmd=""
while [ "$1" != ":::" ]; do cmd="$cmd $1"; shift; done
shift
pids=""
for a in "$@"; do
  sh -c "$(printf '%s' "$cmd" | sed "s|{}|$a|g")" &
  pids="$pids $!"
done
status=0
for p in $pids; do wait "$p" || status=1; done
exit $status
"#;

#[test]
fn the_gnu_parallel_script_runs_and_merges_to_the_unsharded_hunt() {
    let script = ci_file("parallel.sh");
    let dir = scratch();
    let mut env = vec![];
    let has_parallel = Command::new("sh")
        .args(["-c", "command -v parallel"])
        .output()
        .is_ok_and(|out| out.status.success());
    let stand_in = tempfile::tempdir().unwrap();
    if !has_parallel {
        let path = stand_in.path().join("parallel");
        std::fs::write(&path, PARALLEL).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        let bin = Path::new(env!("CARGO_BIN_EXE_fgvt")).parent().unwrap();
        env.push((
            "PATH",
            format!(
                "{}:{}:{}",
                bin.display(),
                stand_in.path().display(),
                std::env::var("PATH").unwrap_or_default()
            ),
        ));
    }
    let run = shell(dir.path(), &script, &env);
    assert_eq!(run.code, 1, "{run:?}");
    let merge = (script.lines())
        .find(|line| line.contains("--merge"))
        .unwrap()
        .replace(" --merge shards/", "");
    let (whole, _) = unsharded(&merge.split_whitespace().skip(2).collect::<Vec<_>>());
    assert_eq!(run.stdout, whole.stdout);
    // The shards' notes, then the merge's, which are the unsharded hunt's.
    assert!(
        timeless(&run.stderr).ends_with(&timeless(&whole.stderr)),
        "{run:?}"
    );
    assert!(whole.stderr.contains("51 of 100 tests drawn"), "{whole:?}");
    assert_eq!(found_samples(&whole.stderr), [50]);
}
