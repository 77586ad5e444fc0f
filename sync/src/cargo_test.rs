//! The `cargo test` command a [`Test`](crate::Test)'s report gives to run it again.
//!
//! The command must run exactly the test that made the report, as the user would type it in
//! their crate: libtest names a test's thread after the test, cargo names the package in
//! `CARGO_PKG_NAME` and the package's directory in `CARGO_MANIFEST_DIR`, and the executable is
//! the test target's (`<target>-<hash>`). One thing cargo does not tell a running test is the
//! features it was built with; but when `fgvt-sync` is an *optional* dependency (the guide's
//! recipe for an object in `src/`), the test running proves that a feature enabling it is on, and
//! without that feature the command would build no fgvt test and run zero tests. So the package's
//! `Cargo.toml` is read for the features that enable `fgvt-sync`, and for the test target's
//! `required-features`.

use std::collections::BTreeSet;
use std::path::Path;

/// The crate this module's callers are compiled as, as a user's `Cargo.toml` names it.
const THIS_CRATE: &str = "fgvt-sync";

/// The command that runs the test calling this, exactly; `cargo test <name>` where the running
/// test cannot be told (a test on the main thread, a program run outside cargo). `file` is the
/// source file the test is written in, as rustc names it.
pub(crate) fn command(name: &str, file: &str) -> String {
    let thread = std::thread::current();
    let test = thread.name().filter(|n| *n != "main");
    let package = std::env::var("CARGO_PKG_NAME").ok();
    let exe = std::env::current_exe().ok();
    let target = exe
        .as_deref()
        .and_then(|e| e.file_stem())
        .and_then(|s| s.to_str());
    let (Some(test), Some(package), Some(target)) = (test, package, target) else {
        return format!("cargo test {}", fgvt_reports::shell_quote(name));
    };
    // `counter-0123456789abcdef`: the target's name, then cargo's hash.
    let target = target.rsplit_once('-').map_or(target, |(t, _)| t);
    // The library's unit tests are named after the package; so is an integration test
    // `tests/counter.rs` of a package `counter`: the test's own file tells them apart.
    let lib = target == package.replace('-', "_") && !in_tests_folder(file);
    let which = if lib {
        "--lib".to_string()
    } else {
        format!("--test {target}")
    };
    let manifest = std::env::var_os("CARGO_MANIFEST_DIR")
        .map(|dir| Path::new(&dir).join("Cargo.toml"))
        .and_then(|path| std::fs::read_to_string(path).ok());
    let features = manifest
        .map(|text| needed_features(&text, (!lib).then_some(target)))
        .unwrap_or_default();
    let features = if features.is_empty() {
        String::new()
    } else {
        let list = features.into_iter().collect::<Vec<_>>().join(",");
        format!(" --features {}", fgvt_reports::shell_quote(&list))
    };
    // A loom test exists only when built with `--cfg loom` (fgvt-loom's tests): the flag
    // reaches every crate of the build, this one too.
    let flags = if cfg!(loom) {
        "RUSTFLAGS=\"--cfg loom\" "
    } else {
        ""
    };
    format!(
        "{flags}cargo test -p {package} {which}{features} -- --exact {}",
        fgvt_reports::shell_quote(test)
    )
}

/// Whether the source file `file` (as rustc names it: relative to the workspace, or absolute)
/// is in a package's `tests/` folder, where integration tests are: a `tests` folder not inside
/// a `src` one (`src/tests/mod.rs` is the library's).
fn in_tests_folder(file: &str) -> bool {
    let file = file.replace('\\', "/");
    let folders: Vec<&str> = file.split('/').collect();
    let folders = &folders[..folders.len().saturating_sub(1)];
    (folders.iter())
        .position(|f| *f == "tests")
        .is_some_and(|at| !folders[..at].contains(&"src"))
}

/// The features a package whose manifest is `manifest` must be built with for its test target
/// `test` (`None`: the library's unit tests) to exist with `fgvt-sync` in it: the target's
/// `required-features`, and a feature that enables `fgvt-sync` when it is an optional
/// dependency. Empty for a manifest that cannot be read as TOML: the command is then the plain
/// one, as before the manifest was consulted.
pub(crate) fn needed_features(manifest: &str, test: Option<&str>) -> BTreeSet<String> {
    let Ok(manifest) = manifest.parse::<toml::Table>() else {
        return BTreeSet::new();
    };
    let mut features = BTreeSet::new();
    if let Some(test) = test {
        features.extend(required_features(&manifest, test));
    }
    if let Some(key) = optional_dependency_key(&manifest) {
        let enabled_already = features
            .iter()
            .any(|feature| enables(&manifest, feature, &key, &mut BTreeSet::new()));
        if !enabled_already {
            features.extend(feature_enabling(&manifest, &key));
        }
    }
    features
}

/// The `required-features` of the `[[test]]` target named `test`.
fn required_features(manifest: &toml::Table, test: &str) -> Vec<String> {
    let tests = manifest.get("test").and_then(|t| t.as_array());
    let target = tests
        .into_iter()
        .flatten()
        .filter_map(|t| t.as_table())
        .find(|t| t.get("name").and_then(|n| n.as_str()) == Some(test));
    strings(target.and_then(|t| t.get("required-features")))
}

/// The key under which the manifest depends on `fgvt-sync` optionally (`fgvt-sync`, or a
/// renamed `sync = { package = "fgvt-sync", … }`), in `[dependencies]` or a target's.
fn optional_dependency_key(manifest: &toml::Table) -> Option<String> {
    let targets = manifest.get("target").and_then(|t| t.as_table());
    let tables = std::iter::once(manifest).chain(
        targets
            .into_iter()
            .flat_map(|t| t.values().filter_map(|v| v.as_table())),
    );
    tables
        .filter_map(|table| table.get("dependencies").and_then(|d| d.as_table()))
        .flat_map(|dependencies| dependencies.iter())
        .find_map(|(key, spec)| {
            let spec = spec.as_table()?;
            let package = spec.get("package").and_then(|p| p.as_str()).unwrap_or(key);
            let optional = spec.get("optional").and_then(|o| o.as_bool()) == Some(true);
            (package == THIS_CRATE && optional).then(|| key.clone())
        })
}

/// The feature to build with so that the optional dependency `key` is on: of those that enable
/// it directly (`dep:key`, `key`, `key/…`, `key?/…`), the one with the shortest name (the
/// package's plain switch rather than a bundle of switches); the implicit feature `key` when
/// none names it, as cargo makes one then.
fn feature_enabling(manifest: &toml::Table, key: &str) -> Option<String> {
    let Some(features) = manifest.get("features").and_then(|f| f.as_table()) else {
        return Some(key.to_string());
    };
    let direct = features
        .iter()
        .filter(|(_, list)| strings(Some(list)).iter().any(|item| names(item, key)))
        .map(|(name, _)| name.clone())
        .min_by_key(|name| (name.len(), name.clone()));
    let explicit = features.values().any(|list| {
        strings(Some(list))
            .iter()
            .any(|item| item == &format!("dep:{key}"))
    });
    direct.or_else(|| (!explicit).then(|| key.to_string()))
}

/// Whether `feature` turns on the dependency `key`, directly or through features it enables.
fn enables(manifest: &toml::Table, feature: &str, key: &str, seen: &mut BTreeSet<String>) -> bool {
    if feature == key || !seen.insert(feature.to_string()) {
        return feature == key;
    }
    let list = manifest
        .get("features")
        .and_then(|f| f.as_table())
        .and_then(|f| f.get(feature));
    strings(list)
        .iter()
        .any(|item| names(item, key) || enables(manifest, item, key, seen))
}

/// Whether an item of a feature's list turns on the dependency `key`.
fn names(item: &str, key: &str) -> bool {
    item == key
        || item == format!("dep:{key}")
        || item.starts_with(&format!("{key}/"))
        || item.starts_with(&format!("{key}?/"))
}

/// The strings of a TOML array (nothing for anything else).
fn strings(value: Option<&toml::Value>) -> Vec<String> {
    let items = value.and_then(|v| v.as_array());
    items
        .into_iter()
        .flatten()
        .filter_map(|item| item.as_str().map(str::to_string))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::{in_tests_folder, needed_features};

    fn features(manifest: &str, test: Option<&str>) -> Vec<String> {
        needed_features(manifest, test).into_iter().collect()
    }

    #[test]
    fn an_integration_test_is_told_from_the_librarys_by_its_file() {
        assert!(in_tests_folder("tests/counter.rs"));
        assert!(in_tests_folder("sync/tests/it/readme_counter.rs"));
        assert!(in_tests_folder("/home/me/counter/tests/counter/main.rs"));
        assert!(!in_tests_folder("src/lib.rs"));
        assert!(!in_tests_folder("src/tests/mod.rs"));
        assert!(!in_tests_folder("tests.rs"));
    }

    #[test]
    fn a_dev_dependency_needs_no_feature() {
        let manifest = "[package]\nname = \"counter\"\n[dev-dependencies]\nfgvt-sync = \"0.1\"\n";
        assert!(features(manifest, Some("counter")).is_empty());
    }

    #[test]
    fn an_optional_dependency_needs_the_feature_that_turns_it_on() {
        let manifest = r#"
            [dependencies]
            fgvt-sync = { path = "../sync", optional = true }
            [features]
            default = ["std"]
            std = []
            everything = ["fgvt", "std"]
            fgvt = ["dep:fgvt-sync"]
        "#;
        assert_eq!(features(manifest, Some("fgvt")), ["fgvt"]);
        assert_eq!(features(manifest, None), ["fgvt"]);
    }

    #[test]
    fn a_renamed_or_implicit_dependency_is_found_too() {
        let renamed = r#"
            [target.'cfg(unix)'.dependencies]
            sync = { package = "fgvt-sync", version = "0.1", optional = true }
            [features]
            check = ["sync/svg"]
        "#;
        assert_eq!(features(renamed, Some("t")), ["check"]);
        let implicit = "[dependencies]\nfgvt-sync = { version = \"0.1\", optional = true }\n";
        assert_eq!(features(implicit, Some("t")), ["fgvt-sync"]);
    }

    #[test]
    fn a_test_target_brings_its_required_features() {
        let manifest = r#"
            [dependencies]
            fgvt-sync = { version = "0.1", optional = true }
            [features]
            fgvt = ["dep:fgvt-sync"]
            slow = ["fgvt"]
            [[test]]
            name = "long"
            required-features = ["slow"]
        "#;
        // `slow` turns fgvt-sync on already: no second feature.
        assert_eq!(features(manifest, Some("long")), ["slow"]);
        assert_eq!(features(manifest, Some("short")), ["fgvt"]);
    }

    #[test]
    fn a_manifest_that_is_not_toml_asks_for_nothing() {
        assert!(features("[dependencies\nfgvt-sync = ", Some("t")).is_empty());
    }
}
