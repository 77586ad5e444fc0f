//! Where `fgvt hunt` puts what it finds (issue 27): the test printed on stdout loads wherever
//! it is saved, `--localize -o F` writes the report into F and the tests into `--out-dir`, and
//! a directory that cannot take the tests does not cost the report.

use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::Value;

use crate::common;

use common::{fgvt, fixture, names, run};

fn json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}\n{text}", path.display()))
}

#[test]
fn the_test_on_stdout_loads_wherever_it_is_saved() {
    let saved = tempfile::tempdir().unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    // Run from the repository with a relative hunt file, as the README does.
    let hunt = "fixtures/pair_snapshot/hunt.json";

    // Piped: fgvt cannot tell where the text ends up, so the model path is absolute.
    let (code, out, err) = run(fgvt()
        .current_dir(common::root())
        .args(["hunt", hunt, "--seed", "1"]));
    assert_eq!(code, 1, "{err}");
    let object = serde_json::from_str::<Value>(&out).unwrap()["object"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(Path::new(&object).is_absolute(), "{object}");
    std::fs::write(saved.path().join("piped.json"), &out).unwrap();

    // Redirected to a file (`> found.json`): the path is relative to that file, as `-o` writes.
    let file = std::fs::File::create(saved.path().join("found.json")).unwrap();
    let status = Command::new(env!("CARGO_BIN_EXE_fgvt"))
        .current_dir(common::root())
        .args(["hunt", hunt, "--seed", "1"])
        .stdout(file)
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert_eq!(status.code(), Some(1));
    let redirected = json(&saved.path().join("found.json"));
    assert!(
        redirected["object"]
            .as_str()
            .unwrap()
            .ends_with("pair_snapshot.fgv#PairSnapshot"),
        "{redirected}"
    );

    // Both load from another working directory, as the user would localize them.
    for test in ["piped.json", "found.json"] {
        let (code, out, err) = run(fgvt()
            .current_dir(elsewhere.path())
            .arg("localize")
            .arg(saved.path().join(test)));
        assert_eq!(code, 1, "{test}: {out}{err}");
        assert!(out.contains("NOT LINEARIZABLE"), "{test}: {out}");
    }
}

#[test]
fn hunt_localize_writes_the_report_to_o_and_the_tests_to_out_dir() {
    let cwd = tempfile::tempdir().unwrap();
    let tests = tempfile::tempdir().unwrap();
    let (code, out, err) = run(fgvt()
        .current_dir(cwd.path())
        .arg("hunt")
        .arg(fixture("pair_snapshot/hunt.json"))
        .args([
            "--seed",
            "1",
            "--localize",
            "--format",
            "markdown",
            "-o",
            "report.md",
        ])
        .arg("--out-dir")
        .arg(tests.path()));
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.is_empty(), "the report went to -o: {out}");
    let report = std::fs::read_to_string(cwd.path().join("report.md")).unwrap();
    assert!(
        report.starts_with("# `PairSnapshot` is not linearizable"),
        "{report}"
    );
    assert_eq!(
        names(cwd.path()),
        ["report.md"],
        "no test in the working directory"
    );
    assert_eq!(names(tests.path()), ["found.json", "minimal.json"]);
    for test in ["found.json", "minimal.json"] {
        let written = json(&tests.path().join(test));
        assert!(written["threads"].is_array(), "{test}: {written}");
        let (code, out, err) = run(fgvt()
            .current_dir(cwd.path())
            .arg("localize")
            .arg(tests.path().join(test)));
        assert_eq!(code, 1, "{test} fails when localized: {out}{err}");
    }
    assert!(
        report.contains(&format!(
            "fgvt localize {}",
            tests.path().join("minimal.json").display()
        )),
        "the report reproduces the minimal test where it was written: {report}"
    );
}

#[test]
fn a_directory_that_refuses_the_tests_does_not_cost_the_report() {
    let cwd = tempfile::tempdir().unwrap();
    let locked = tempfile::tempdir().unwrap();
    std::fs::set_permissions(
        locked.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o555),
    )
    .unwrap();
    // Root writes through permission bits: then use a directory the kernel itself refuses.
    let probe = locked.path().join("probe");
    let read_only = if std::fs::write(&probe, "").is_ok() {
        std::fs::remove_file(&probe).unwrap();
        Path::new("/sys").to_path_buf()
    } else {
        locked.path().to_path_buf()
    };
    let (code, out, err) = run(fgvt()
        .current_dir(cwd.path())
        .arg("hunt")
        .arg(fixture("pair_snapshot/hunt.json"))
        .args(["--seed", "1", "--localize", "--out-dir"])
        .arg(&read_only));
    assert_eq!(code, 2, "the tests could not be written: {out}{err}");
    assert!(
        out.contains("NOT LINEARIZABLE"),
        "the report came first: {out}"
    );
    assert!(err.contains("cannot write"), "{err}");
    assert!(err.contains("minimal.json"), "{err}");
    assert!(names(cwd.path()).is_empty(), "{:?}", names(cwd.path()));
}
