//! Where `-o`, `--svg` and `--dot` write, as a user meets it (issue 27): a regular file is
//! replaced atomically, through a symbolic link; `-` and `/dev/stdout` are stdout; a FIFO, a
//! device or a directory is refused before any work, with exit 2.

use std::path::Path;

use crate::common;

use common::{fgvt, fixture, names, run};

const PAIR: &str = "pair_snapshot/failing.json";

#[test]
fn a_symlink_is_followed_and_its_target_replaced_whole() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::create_dir(d.join("reports")).unwrap();
    std::fs::write(d.join("reports/latest.txt"), "an old report").unwrap();
    // A relative link, resolved from the link's own directory (not the working directory).
    std::os::unix::fs::symlink("reports/latest.txt", d.join("link.txt")).unwrap();
    let (code, out, err) = run(fgvt()
        .current_dir(common::root())
        .arg("localize")
        .arg(fixture(PAIR))
        .arg("-o")
        .arg(d.join("link.txt")));
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.is_empty(), "the report went to the file: {out}");
    let link = std::fs::symlink_metadata(d.join("link.txt")).unwrap();
    assert!(link.file_type().is_symlink(), "the link is still a link");
    let written = std::fs::read_to_string(d.join("reports/latest.txt")).unwrap();
    assert!(written.contains("NOT LINEARIZABLE"), "{written}");
    assert!(!written.contains("an old report"), "{written}");
    // No temporary file is left beside the target or the link.
    assert_eq!(names(d), ["link.txt", "reports"]);
    assert_eq!(names(&d.join("reports")), ["latest.txt"]);
}

#[test]
fn a_fifo_a_device_and_a_directory_are_refused_before_any_work() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("pipe");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let cases: [(&str, &[&str], &Path, &str); 5] = [
        ("localize", &[], &fifo, "a FIFO (named pipe)"),
        ("localize", &["--svg"], &fifo, "a FIFO (named pipe)"),
        ("render", &["--format", "dot"], &fifo, "a FIFO (named pipe)"),
        (
            "localize",
            &[],
            Path::new("/dev/null"),
            "a character device",
        ),
        ("localize", &["--dot"], dir.path(), "a directory"),
    ];
    for (command, flags, path, what) in cases {
        // Writing a FIFO that no one reads would block: the refusal must come first (the test
        // would hang otherwise), and before the exploration.
        let mut cmd = fgvt();
        cmd.arg(command).arg(fixture(PAIR));
        match flags {
            ["--svg"] | ["--dot"] => cmd.args(flags).arg(path),
            _ => cmd.args(flags).arg("-o").arg(path),
        };
        let (code, out, err) = run(&mut cmd);
        assert_eq!(
            code,
            2,
            "{command} {flags:?} {}: {out}{err}",
            path.display()
        );
        assert!(
            err.contains(&format!("it is {what}, not a regular file")),
            "{err}"
        );
        assert!(err.contains("`-` for stdout"), "says what to do: {err}");
        assert!(
            !out.contains("NOT LINEARIZABLE"),
            "nothing was explored: {out}"
        );
    }
    let fifo_still = std::fs::symlink_metadata(&fifo).unwrap();
    assert!(
        std::os::unix::fs::FileTypeExt::is_fifo(&fifo_still.file_type()),
        "the FIFO is left as it was"
    );
    let null = std::fs::metadata("/dev/null").unwrap();
    assert!(std::os::unix::fs::FileTypeExt::is_char_device(
        &null.file_type()
    ));
}

#[test]
fn dash_is_stdout_for_every_command() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let in_dir = |args: &[&str]| run(fgvt().current_dir(d).args(args));
    let test = fixture(PAIR).display().to_string();
    let hunt = fixture("pair_snapshot/hunt.json").display().to_string();

    let (code, out, err) = in_dir(&["localize", &test, "-o", "-"]);
    assert_eq!(code, 1, "{err}");
    assert!(out.contains("NOT LINEARIZABLE"), "{out}");
    let (code, out, err) = in_dir(&["render", &test, "-o", "-"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.starts_with("digraph"),
        "DOT when -o names no format: {out}"
    );
    let (code, out, err) = in_dir(&["render", &test, "-o", "-", "--format", "svg"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("<svg"), "{out}");
    let (code, out, err) = in_dir(&["hunt", &hunt, "--seed", "1", "-o", "-"]);
    assert_eq!(code, 1, "{err}");
    let found: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert!(found["threads"].is_array(), "{out}");
    let (code, out, err) = in_dir(&["minimize", &test, "-o", "-"]);
    assert_eq!(code, 1, "{err}");
    let minimal: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert!(minimal["threads"].is_array(), "{out}");
    // `/dev/stdout` is written through, not replaced.
    let (code, out, err) = in_dir(&["localize", &test, "-o", "/dev/stdout"]);
    assert_eq!(code, 1, "{err}");
    assert!(out.contains("NOT LINEARIZABLE"), "{out}");
    assert!(names(d).is_empty(), "no file named `-`: {:?}", names(d));

    // Two outputs on stdout would interleave: refused before exploring.
    let (code, out, err) = in_dir(&["localize", &test, "--svg", "-"]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(
        err.contains("the report and --svg would both go to stdout"),
        "{err}"
    );
    let (code, out, err) = in_dir(&["localize", &test, "-o", "r.md", "--svg", "-"]);
    assert_eq!(code, 1, "{err}");
    assert!(out.contains("<svg"), "the drawing on stdout: {out}");
    assert_eq!(names(d), ["r.md"]);
}
