//! `--format sarif` (issue 28): every localization of the Table 2 fixtures, failing and fixed,
//! is a SARIF 2.1.0 log that validates against the OASIS schema shipped in
//! `reports/schemas/`, with one result per CDRS pointing at the racing lines.

use crate::common;

use common::{sarif_errors as errors, sarif_validator as validator};

/// `fgvt localize FILE --format sarif`: (exit code, the log).
fn sarif(file: &str) -> (i32, serde_json::Value) {
    let (code, stdout) = common::localize(&[file, "--format", "sarif"]);
    let log = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{file}: {e}\n{stdout}"));
    (code, log)
}

#[test]
fn every_table_2_report_is_valid_sarif_with_a_result_per_cdrs() {
    let validator = validator();
    for name in common::TABLE_2 {
        let file = format!("fixtures/{name}/failing.json");
        let (code, log) = sarif(&file);
        assert_eq!(code, 1, "{name}");
        assert_eq!(errors(&validator, &log), Vec::<String>::new(), "{name}");
        let run = &log["runs"][0];
        assert_eq!(run["properties"]["verdict"], "not-linearizable", "{name}");
        let results = run["results"].as_array().unwrap();
        assert!(!results.is_empty(), "{name}: one result per CDRS shown");
        for result in results {
            assert_eq!(result["ruleId"], "fgvt/cdrs");
            let uri = result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
                .as_str()
                .unwrap();
            assert!(
                uri.ends_with(".fgv"),
                "{name}: the decisive race is in the model: {uri}"
            );
            let flows = result["codeFlows"][0]["threadFlows"].as_array().unwrap();
            assert!(flows.len() >= 2, "{name}: a thread flow per thread");
            // Execution order runs over the whole witness, across the threads' flows.
            let mut order: Vec<u64> = flows
                .iter()
                .flat_map(|f| f["locations"].as_array().unwrap())
                .map(|l| l["executionOrder"].as_u64().unwrap())
                .collect();
            order.sort_unstable();
            assert_eq!(order, (0..order.len() as u64).collect::<Vec<_>>(), "{name}");
        }
        let (code, log) = sarif(&format!("fixtures/{name}/fixed.json"));
        assert_eq!(code, 0, "{name}");
        assert_eq!(
            errors(&validator, &log),
            Vec::<String>::new(),
            "{name} fixed"
        );
        assert_eq!(
            log["runs"][0]["results"],
            serde_json::json!([]),
            "{name}: nothing to show"
        );
    }
}

#[test]
fn a_log_that_breaks_the_schema_is_caught() {
    // The validation above could pass by accident if the schema checked nothing.
    let (_, mut log) = sarif("fixtures/counter1/failing.json");
    log["runs"][0]["results"][0]["level"] = serde_json::json!("fatal");
    assert!(!errors(&validator(), &log).is_empty());
}

/// Every test of every model fixture, failing, fixed or correct: a valid log, one result per
/// CDRS shown for a failing one and none for a passing one.
#[test]
fn every_model_fixture_gives_valid_sarif() {
    let validator = validator();
    let mut checked = 0;
    let mut dirs: Vec<_> = std::fs::read_dir(common::root().join("fixtures"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    for dir in dirs {
        for (test, code) in [("failing.json", 1), ("fixed.json", 0), ("correct.json", 0)] {
            let path = dir.join(test);
            // Rust ports live in fixtures/rust, checked by their own crate's tests.
            if !path.exists() || !std::fs::read_to_string(&path).unwrap().contains(".fgv") {
                continue;
            }
            let file = path
                .strip_prefix(common::root())
                .unwrap()
                .display()
                .to_string();
            let (got, log) = sarif(&file);
            assert_eq!(got, code, "{file}");
            assert_eq!(errors(&validator, &log), Vec::<String>::new(), "{file}");
            let results = log["runs"][0]["results"].as_array().unwrap();
            assert_eq!(results.is_empty(), code == 0, "{file}");
            checked += 1;
        }
    }
    assert!(checked >= 20, "only {checked} fixture tests found");
}

/// One log in full, as a reviewer reads it: a change to the SARIF shape shows in the diff.
#[test]
fn the_counter_log_is_as_reviewed() {
    let (_, log) = sarif("fixtures/counter1/failing.json");
    insta::assert_json_snapshot!(log);
}
