//! The README's "Your Rust code" example is `readme_counter.rs`, word for word: the test suite
//! runs what a newcomer pastes.

#[test]
fn the_readme_example_is_the_tested_file() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let example = std::fs::read_to_string(root.join("sync/tests/it/readme_counter.rs")).unwrap();
    assert!(
        readme.contains(&format!("```rust\n{example}```")),
        "README.md's Rust example differs from sync/tests/it/readme_counter.rs: copy it over"
    );
}
