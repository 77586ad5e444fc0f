//! Bad input never panics: each mistake exits 2 naming the file, line and column.

use std::path::Path;

use crate::common;

const MODEL: &str = "object Cell {\n    shared int x = 0;\n\n    op write(int v) {\n        x = v;\n    }\n\n    op read() {\n        return x;\n    }\n}\n";

/// Writes `files` into a fresh directory and runs `fgvt explore` on `test.json` there.
fn explore(files: &[(&str, &str)]) -> (i32, String) {
    let dir = common::workdir(files);
    run(&dir.path().join("test.json"))
}

/// Runs `fgvt explore` on `test`: (exit code, stderr).
fn run(test: &Path) -> (i32, String) {
    let (code, _, stderr) = common::run(common::fgvt().arg("explore").arg(test));
    (code, stderr)
}

fn test_json(threads: &str) -> String {
    format!("{{\n  \"object\": \"cell.fgv\",\n  \"threads\": {threads}\n}}\n")
}

#[test]
fn a_syntax_error_in_the_model_names_file_line_and_column() {
    let model = MODEL.replace("x = v;", "x = v");
    let (code, err) = explore(&[
        ("cell.fgv", &model),
        ("test.json", &test_json(r#"[["write(1)"]]"#)),
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("cell.fgv:5:14"), "{err}");
}

#[test]
fn an_unknown_operation_points_at_the_call_in_the_json() {
    let (code, err) = explore(&[
        ("cell.fgv", MODEL),
        ("test.json", &test_json(r#"[["write(1)", "frob()"]]"#)),
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("test.json:3:28"), "{err}");
    assert!(err.contains("threads[0][1]"), "{err}");
    assert!(err.contains("unknown operation `frob`"), "{err}");
    assert!(
        err.contains("read, write") || err.contains("write, read"),
        "lists the operations: {err}"
    );
}

#[test]
fn a_wrong_arity_names_the_declaration() {
    let (code, err) = explore(&[
        ("cell.fgv", MODEL),
        ("test.json", &test_json(r#"[["write(1, 2)"]]"#)),
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("test.json:3:16"), "{err}");
    assert!(err.contains("takes 1 argument but 2 are given"), "{err}");
}

#[test]
fn an_integer_past_the_models_range_is_bad_input_not_a_wrapped_value() {
    let (code, err) = explore(&[
        ("cell.fgv", MODEL),
        (
            "test.json",
            &test_json(r#"[["write(18446744073709551615)"]]"#),
        ),
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("test.json:3:16"), "{err}");
    assert!(
        err.contains("18446744073709551615 does not fit in the modeling language's integers"),
        "{err}"
    );
}

#[test]
fn a_malformed_call_points_into_the_string() {
    let (code, err) = explore(&[
        ("cell.fgv", MODEL),
        ("test.json", &test_json(r#"[["write(0,"]]"#)),
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("test.json:3:"), "{err}");
    assert!(err.contains("malformed call"), "{err}");
}

#[test]
fn a_missing_test_file_is_named() {
    let (code, err) = run(Path::new("no/such/test.json"));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("no/such/test.json"), "{err}");
}

#[test]
fn a_missing_object_file_points_at_the_object_key() {
    let (code, err) = explore(&[("test.json", &test_json(r#"[["write(1)"]]"#))]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("test.json:2:13"), "{err}");
    assert!(err.contains("cell.fgv"), "{err}");
}

#[test]
fn malformed_json_names_line_and_column() {
    let (code, err) = explore(&[
        ("cell.fgv", MODEL),
        (
            "test.json",
            "{\n  \"object\": \"cell.fgv\",\n  \"threads\": [[\"read()\"]\n}\n",
        ),
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("test.json:4:1"), "{err}");
}

#[test]
fn an_unknown_key_is_an_error_not_ignored() {
    let text = "{\n  \"object\": \"cell.fgv\",\n  \"thread\": [[\"read()\"]]\n}\n";
    let (code, err) = explore(&[("cell.fgv", MODEL), ("test.json", text)]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("unknown field `thread`"), "{err}");
    assert!(err.contains("test.json:3:"), "{err}");
}

#[test]
fn an_unknown_spec_lists_the_choices() {
    let text = "{\n  \"object\": \"cell.fgv\",\n  \"spec\": \"regster\",\n  \"threads\": [[\"read()\"]]\n}\n";
    let (code, err) = explore(&[("cell.fgv", MODEL), ("test.json", text)]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("test.json:3:11"), "{err}");
    assert!(err.contains("register"), "{err}");
}

#[test]
fn a_model_passed_instead_of_a_test_says_so() {
    let dir = common::workdir(&[("cell.fgv", MODEL)]);
    let (code, err) = run(&dir.path().join("cell.fgv"));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("cell.fgv:1:1"), "{err}");
    assert!(err.contains("this is a model file"), "{err}");
}

#[test]
fn the_race_check_of_shared_cells_is_for_rust_objects_not_models() {
    let test =
        "{\n  \"object\": \"cell.fgv\",\n  \"threads\": [[\"write(1)\"]],\n  \"races\": true\n}\n";
    let (code, err) = explore(&[("cell.fgv", MODEL), ("test.json", test)]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("test.json:4:12"), "{err}");
    assert!(
        err.contains("`races` is for tests of Rust objects"),
        "{err}"
    );
    assert!(err.contains("remove the key"), "{err}");
}
