//! fgvt-sync and every crate it depends on can be published to crates.io, in dependency
//! order: `cargo package` makes each one's archive from the workspace (versions on the path
//! dependencies, the metadata crates.io asks for, a README), and every file a packaged crate's
//! code includes is in its archive.
//!
//! The archives are not compiled here (`--no-verify`): that would build every crate a second
//! time from them, minutes of the suite. What a build from the archive could miss that the
//! workspace build does not is a file outside the crate's folder, which the last test checks.

use std::process::Command;

use crate::common::{files_below, root};

/// The crates that are published: fgvt-sync, what it depends on, the command line it runs
/// with its `cli` feature, and loom's API on it.
const PUBLISHED: [&str; 10] = [
    "fgvt-tree",
    "fgvt-memory",
    "fgvt-checker",
    "fgvt-labeling",
    "fgvt-reports",
    "fgvt-lang",
    "fgvt",
    "fgvt-sync-macros",
    "fgvt-sync",
    "fgvt-loom",
];

/// `cargo package` for the published crates, offline (the build has fetched what they use),
/// into a target folder of its own: (success, cargo's messages).
fn package(extra: &[&str]) -> (bool, String) {
    let target = tempfile::tempdir().unwrap();
    let mut cargo = Command::new(env!("CARGO"));
    cargo
        .current_dir(root())
        .args([
            "package",
            "--no-verify",
            "--allow-dirty",
            "--offline",
            "--target-dir",
        ])
        .arg(target.path());
    for name in PUBLISHED {
        cargo.args(["-p", name]);
    }
    let out = cargo.args(extra).output().unwrap();
    let messages = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), messages)
}

#[test]
fn the_published_crates_package_in_dependency_order() {
    let (ok, messages) = package(&[]);
    assert!(ok, "cargo package failed:\n{messages}");
    let order: Vec<&str> = (messages.lines())
        .filter_map(|l| l.trim().strip_prefix("Packaging "))
        .filter_map(|l| l.split(' ').next())
        .collect();
    let mut expected = PUBLISHED.to_vec();
    expected.sort();
    let mut packaged = order.clone();
    packaged.sort();
    assert_eq!(
        packaged, expected,
        "every published crate is packaged:\n{messages}"
    );
    // Each after the crates it depends on.
    let at = |name: &str| order.iter().position(|n| *n == name).unwrap();
    assert!(at("fgvt-tree") < at("fgvt-checker") && at("fgvt-checker") < at("fgvt-lang"));
    assert!(at("fgvt-lang") < at("fgvt") && at("fgvt") < at("fgvt-sync"));
    assert!(at("fgvt-sync-macros") < at("fgvt-sync"));
    assert!(at("fgvt-sync") < at("fgvt-loom"));
}

#[test]
fn the_published_crates_say_what_crates_io_shows() {
    let metadata = Command::new(env!("CARGO"))
        .current_dir(root())
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
        ])
        .output()
        .unwrap();
    let metadata: serde_json::Value = serde_json::from_slice(&metadata.stdout).unwrap();
    for package in metadata["packages"].as_array().unwrap() {
        let name = package["name"].as_str().unwrap();
        if !PUBLISHED.contains(&name) {
            assert_eq!(
                package["publish"],
                serde_json::json!([]),
                "{name} is not published: say `publish = false`"
            );
            continue;
        }
        for field in [
            "description",
            "license",
            "repository",
            "readme",
            "rust_version",
        ] {
            assert!(package[field].is_string(), "{name} has no `{field}`");
        }
        for field in ["keywords", "categories"] {
            assert!(
                !package[field].as_array().unwrap().is_empty(),
                "{name} has no `{field}`"
            );
        }
        for dependency in package["dependencies"].as_array().unwrap() {
            let local = dependency["path"].is_string();
            let dev = dependency["kind"] == "dev";
            assert!(
                !local || dev || dependency["req"] != "*",
                "{name} depends on {} by path without a version",
                dependency["name"]
            );
        }
    }
}

#[test]
fn every_file_a_published_crate_includes_is_packaged() {
    // An `include_str!` names its file relative to the including one; an archive holds only
    // its crate's folder.
    for name in PUBLISHED {
        let folder = match name {
            "fgvt" => root().to_path_buf(),
            other => root().join(other.trim_start_matches("fgvt-")),
        };
        let src = folder.join("src");
        for file in files_below(&src, &[".rs"]) {
            let text = std::fs::read_to_string(&file).unwrap();
            // Unit tests are not built from the archive.
            let code = text.split("#[cfg(test)]").next().unwrap();
            for included in includes(code) {
                let path = file.parent().unwrap().join(included);
                let path = std::fs::canonicalize(&path).unwrap_or(path);
                let folder = std::fs::canonicalize(&folder).unwrap();
                assert!(
                    path.starts_with(&folder),
                    "{}: includes {}, outside {name}'s folder: its archive would not build",
                    file.display(),
                    path.display()
                );
            }
        }
    }
}

/// The paths of the `include_str!` and `include_bytes!` calls of a source text.
fn includes(code: &str) -> Vec<&str> {
    let mut found = Vec::new();
    for part in code
        .split("include_str!(\"")
        .skip(1)
        .chain(code.split("include_bytes!(\"").skip(1))
    {
        found.extend(part.split('"').next());
    }
    found
}
