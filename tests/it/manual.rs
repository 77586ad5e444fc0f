//! `fgvt completions` and `fgvt man`, as a user installs them: the bash script completes
//! commands and flags in a real bash, every shell's script names every command, and the manual
//! has one page per command documenting every flag its `--help` lists.

use crate::common;

use std::collections::BTreeSet;
use std::process::Command;

use common::{fgvt, run};

/// The subcommands `fgvt --help` lists.
fn subcommands() -> BTreeSet<String> {
    let (code, help, _) = run(fgvt().arg("--help"));
    assert_eq!(code, 0);
    let commands = help
        .split("Commands:")
        .nth(1)
        .and_then(|rest| rest.split("Options:").next())
        .expect("a Commands section");
    // A command's line starts with two spaces; its wrapped description, with more.
    let names: BTreeSet<String> = (commands.lines())
        .filter(|line| line.starts_with("  ") && !line.starts_with("   "))
        .filter_map(|line| line.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(str::to_string)
        .collect();
    for expected in [
        "localize",
        "explore",
        "hunt",
        "check-history",
        "completions",
        "man",
    ] {
        assert!(names.contains(expected), "{expected} in {names:?}");
    }
    names
}

/// The long flags `fgvt COMMAND --help` lists.
fn long_flags(command: &str) -> BTreeSet<String> {
    let (code, help, _) = run(fgvt().args([command, "--help"]));
    assert_eq!(code, 0);
    let flags: BTreeSet<String> = (help.split(|c: char| c.is_whitespace() || c == ','))
        .filter(|word| word.starts_with("--") && word.len() > 2)
        .map(|word| {
            (word.split(['=', '<', '[']).next().unwrap())
                .trim_end_matches('.')
                .to_string()
        })
        .collect();
    assert!(flags.contains("--help"), "{help}");
    flags
}

/// What bash's completion offers after `words` (the last one being completed), with the script
/// `fgvt completions bash` prints loaded as a user's shell would.
fn bash_completes(words: &[&str]) -> Vec<String> {
    let (code, script, _) = run(fgvt().args(["completions", "bash"]));
    assert_eq!(code, 0);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("fgvt.bash");
    std::fs::write(&path, script).unwrap();
    let words: Vec<String> = words.iter().map(|w| format!("'{w}'")).collect();
    let line = format!(
        "source {path}; COMP_WORDS=({words}); COMP_CWORD={last}; \
         _fgvt fgvt \"${{COMP_WORDS[$COMP_CWORD]}}\" \"${{COMP_WORDS[$COMP_CWORD-1]}}\"; \
         printf '%s\\n' \"${{COMPREPLY[@]}}\"",
        path = path.display(),
        words = words.join(" "),
        last = words.len() - 1,
    );
    let out = Command::new("bash").args(["-c", &line]).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    (String::from_utf8_lossy(&out.stdout).lines())
        .map(|l| l.trim().to_string())
        .filter(|l| !l.is_empty())
        .collect()
}

#[test]
fn bash_completes_commands_and_their_flags() {
    assert_eq!(bash_completes(&["fgvt", "loc"]), ["localize"]);
    assert_eq!(bash_completes(&["fgvt", "check-h"]), ["check-history"]);
    let flags = bash_completes(&["fgvt", "localize", "--max-s"]);
    assert!(flags.contains(&"--max-states".to_string()), "{flags:?}");
    assert!(flags.contains(&"--max-steps".to_string()), "{flags:?}");
    let formats = bash_completes(&["fgvt", "localize", "--format", ""]);
    for format in ["text", "markdown", "json", "sarif"] {
        assert!(formats.contains(&format.to_string()), "{formats:?}");
    }
    let shells = bash_completes(&["fgvt", "completions", ""]);
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        assert!(shells.contains(&shell.to_string()), "{shells:?}");
    }
}

#[test]
fn every_shell_gets_a_script_naming_every_command() {
    let commands = subcommands();
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let (code, script, _) = run(fgvt().args(["completions", shell]));
        assert_eq!(code, 0, "{shell}");
        for command in &commands {
            assert!(script.contains(command.as_str()), "{shell} lacks {command}");
        }
        assert!(script.contains("max-states"), "{shell}");
    }
    // Written to a file instead, atomically, the same script.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("_fgvt");
    let (code, stdout, _) = run(fgvt().args(["completions", "zsh", "-o"]).arg(&path));
    assert_eq!((code, stdout.as_str()), (0, ""));
    let (_, printed, _) = run(fgvt().args(["completions", "zsh"]));
    assert_eq!(std::fs::read_to_string(&path).unwrap(), printed);
}

#[test]
fn an_unknown_shell_is_a_usage_error() {
    let (code, _, stderr) = run(fgvt().args(["completions", "tcsh"]));
    assert_eq!(code, 2);
    assert!(stderr.contains("invalid value 'tcsh'"), "{stderr}");
    assert!(stderr.contains("bash"), "{stderr}");
}

#[test]
fn the_manual_has_a_page_per_command_with_every_flag() {
    let (code, page, _) = run(fgvt().arg("man"));
    assert_eq!(code, 0);
    assert!(page.contains(".TH fgvt 1"), "{page}");
    assert!(page.contains("Exit status: 0 linearizable"), "{page}");
    let dir = tempfile::tempdir().unwrap();
    let (code, _, stderr) = run(fgvt().args(["man", "--dir"]).arg(dir.path().join("man1")));
    assert_eq!(code, 0, "{stderr}");
    let written: BTreeSet<String> = std::fs::read_dir(dir.path().join("man1"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    let commands = subcommands();
    let mut expected: BTreeSet<String> = (commands.iter()).map(|c| format!("fgvt-{c}.1")).collect();
    expected.insert("fgvt.1".to_string());
    assert_eq!(written, expected);
    for command in &commands {
        let page = std::fs::read_to_string(dir.path().join(format!("man1/fgvt-{command}.1")));
        let page = page.unwrap();
        assert!(page.contains(&format!(".TH fgvt-{command} 1")), "{page}");
        assert!(
            page.contains(&format!("\"fgvt {}\"", env!("CARGO_PKG_VERSION"))),
            "{page}"
        );
        for flag in long_flags(command) {
            // roff escapes each hyphen of a flag.
            let roff = flag.replace('-', "\\-");
            assert!(page.contains(&roff), "fgvt-{command}.1 lacks {flag}");
        }
    }
}
