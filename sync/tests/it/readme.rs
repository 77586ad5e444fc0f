//! The READMEs' Rust example is `readme_counter.rs`, word for word, and the report README.md shows is
//! what `cargo test` prints for it: the test suite runs what a newcomer pastes and checks what
//! they will read.

use std::path::{Path, PathBuf};

/// The repository root.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

#[test]
fn the_readme_example_is_the_tested_file() {
    let example = std::fs::read_to_string(root().join("sync/tests/it/readme_counter.rs")).unwrap();
    // The repository's README and fgvt-sync's own (its crates.io page).
    for readme in ["README.md", "sync/README.md"] {
        let text = std::fs::read_to_string(root().join(readme)).unwrap();
        assert!(
            text.contains(&format!("```rust\n{example}```")),
            "{readme}'s Rust example differs from sync/tests/it/readme_counter.rs: copy it over"
        );
    }
}

/// The README's `text` block: the report it shows.
fn readme_report() -> String {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let start = readme
        .find("```text\n")
        .expect("README.md shows the report")
        + "```text\n".len();
    let end = start + readme[start..].find("```").unwrap();
    readme[start..end].to_string()
}

#[test]
fn the_readme_report_is_what_cargo_test_prints() {
    // This very binary, running the example's test alone, as `cargo test` would in the
    // user's crate: its panic message is the report.
    let run = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "readme_counter::two_increments_are_linearizable",
            "--nocapture",
        ])
        .env("NO_COLOR", "1")
        .env_remove("FGVT_REPLAY")
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "the example's test fails as it should (should_panic)"
    );
    // The user's crate is `counter` and the file `tests/counter.rs`.
    let printed = String::from_utf8_lossy(&run.stderr)
        .replace("sync/tests/it/readme_counter.rs", "tests/counter.rs")
        .replace("-p fgvt-sync --test it", "-p counter --test counter")
        .replace("readme_counter::", "");
    let shown = readme_report();
    let start = printed.find("Counter (counter)").expect("the report");
    assert!(
        printed[start..].starts_with(&shown),
        "README.md's report is not what the test prints; it prints:\n{}",
        &printed[start..]
    );
}
