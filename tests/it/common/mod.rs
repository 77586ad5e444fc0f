//! Helpers shared by the end-to-end tests: running the `fgvt` binary as a user would.
//!
//! Each test file declares `mod common;` and uses what it needs of this module.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use assert_cmd::Command;

/// The repository root: where the fixtures live and `fgvt localize` runs from.
pub fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The path of `fixtures/<path>` in the repository.
pub fn fixture(path: &str) -> PathBuf {
    root().join("fixtures").join(path)
}

/// The `fgvt` binary, with colour off.
pub fn fgvt() -> Command {
    let mut cmd = Command::cargo_bin("fgvt").unwrap();
    cmd.env("NO_COLOR", "1");
    cmd
}

/// Runs `cmd`: (exit code, stdout, stderr).
pub fn output(cmd: &mut Command) -> (i32, String, String) {
    let out = cmd.output().unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Runs `cmd` and checks that it did not panic: (exit code, stdout, stderr).
pub fn run(cmd: &mut Command) -> (i32, String, String) {
    let (code, stdout, stderr) = output(cmd);
    assert!(!stderr.contains("panicked"), "{stderr}");
    (code, stdout, stderr)
}

/// Runs `fgvt localize` from the repository root with `args`: (exit code, stdout).
pub fn localize(args: &[&str]) -> (i32, String) {
    let (code, stdout, _) = run(fgvt().current_dir(root()).arg("localize").args(args));
    (code, stdout)
}

/// A fresh directory holding `files` (name, text); it is deleted when dropped.
pub fn workdir(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in files {
        std::fs::write(dir.path().join(name), text).unwrap();
    }
    dir
}

/// A model whose only operation writes once, then loops forever on a local counter: its step
/// runs out of the per-step instruction budget, giving a bounded leaf.
pub const LOCAL_LOOP_MODEL: &str = r#"
object Busy {
    shared int x = 0;
    op spin() {
        x = 1;
        int i = 0;
        while (true) { i = i + 1; }
    }
}
"#;

/// A test of [`LOCAL_LOOP_MODEL`] saved as `m.fgv`.
pub const LOCAL_LOOP_TEST: &str = r#"{"object": "m.fgv", "threads": [["spin()"]]}"#;

/// The OASIS SARIF 2.1.0 schema shipped in `reports/schemas/`, compiled.
pub fn sarif_validator() -> jsonschema::Validator {
    let text =
        std::fs::read_to_string(root().join("reports/schemas/sarif-schema-2.1.0.json")).unwrap();
    let schema: serde_json::Value = serde_json::from_str(&text).unwrap();
    jsonschema::options()
        .with_draft(jsonschema::Draft::Draft4)
        .build(&schema)
        .unwrap()
}

/// Every error the SARIF schema finds in `log`, as text (empty for a valid log).
pub fn sarif_errors(validator: &jsonschema::Validator, log: &serde_json::Value) -> Vec<String> {
    validator
        .iter_errors(log)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect()
}

/// The six fixtures of the FGVT paper's Table 2.
pub const TABLE_2: [&str; 6] = [
    "linked_list",
    "lock_free_list",
    "optimistic_queue",
    "pair_snapshot",
    "counter1",
    "snark",
];

/// Every file below `dir` whose name ends with one of `endings`, outside hidden folders and
/// `target`.
pub fn files_below(dir: &Path, endings: &[&str]) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy();
            if path.is_dir() {
                if !name.starts_with('.') && name != "target" {
                    stack.push(path);
                }
            } else if endings.iter().any(|e| name.ends_with(e)) {
                found.push(path);
            }
        }
    }
    found
}

/// The names of the entries of `dir`, sorted.
pub fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}
