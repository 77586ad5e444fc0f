//! The guide (`docs/book/src`) and README.md are tested like code: every code block is
//! compiled, run or checked, every link leads somewhere, every figure comes with the command
//! that measures it, and the guide's chapters, its `SUMMARY.md` and the `fgvt-guide` crate that
//! doctests their Rust blocks list the same files.
//!
//! What each kind of block must do:
//!
//! | block | checked by |
//! | --- | --- |
//! | `rust` | the guide's: doctests of `fgvt-guide` (`docs/book/lib.rs`); the READMEs': `sync/tests/it/readme.rs` |
//! | `console` | run here: each `$ fgvt …` line from the repository root, its output matched (`…` skips) |
//! | `sh`, `yaml` | `bash -n`; each `fgvt` command line (or `cargo run … --`) parsed by fgvt's own command line, the repository files it names present |
//! | `json`, `fgv` | the same text (JSON: the same value) as a file of the repository the suite runs |
//! | `toml` | parsed as TOML |
//! | `text` | README only: its Rust example's report, checked by `sync/tests/it/readme.rs` |

use std::path::{Path, PathBuf};

use clap::Parser;
use pulldown_cmark::{CodeBlockKind, Event, HeadingLevel, Options, Tag, TagEnd};

use crate::common::{fgvt, files_below, output, root};

/// The guide's sources.
fn book() -> PathBuf {
    root().join("docs/book/src")
}

/// Every Markdown file this test reads: the READMEs (the repository's and fgvt-sync's, its
/// crates.io page) and the guide's chapters.
fn documents() -> Vec<PathBuf> {
    let mut files = vec![root().join("README.md"), root().join("sync/README.md")];
    files.extend(chapters().into_iter().map(|c| book().join(c)));
    files.push(book().join("SUMMARY.md"));
    files
}

/// The guide's chapter files (not `SUMMARY.md`), by name, sorted.
fn chapters() -> Vec<String> {
    let mut names: Vec<String> = (std::fs::read_dir(book()).unwrap())
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".md") && n != "SUMMARY.md")
        .collect();
    names.sort();
    names
}

/// A fenced code block: its language, text, and the line it opens on.
struct Block {
    lang: String,
    text: String,
    line: usize,
}

/// The fenced code blocks of a Markdown text.
fn blocks(markdown: &str) -> Vec<Block> {
    let mut found = Vec::new();
    let mut current: Option<Block> = None;
    for (event, range) in pulldown_cmark::Parser::new(markdown).into_offset_iter() {
        match event {
            Event::Start(Tag::CodeBlock(kind)) => {
                let lang = match kind {
                    CodeBlockKind::Fenced(info) => {
                        info.split([',', ' ']).next().unwrap_or("").to_string()
                    }
                    CodeBlockKind::Indented => String::new(),
                };
                let line = markdown[..range.start].lines().count() + 1;
                current = Some(Block {
                    lang,
                    text: String::new(),
                    line,
                });
            }
            Event::Text(text) => {
                if let Some(block) = current.as_mut() {
                    block.text.push_str(&text);
                }
            }
            Event::End(TagEnd::CodeBlock) => found.extend(current.take()),
            _ => {}
        }
    }
    found
}

/// Each document's blocks, named `file:line` for messages.
fn all_blocks() -> Vec<(String, Block)> {
    let mut all = Vec::new();
    for path in documents() {
        let text = std::fs::read_to_string(&path).unwrap();
        let name = path.strip_prefix(root()).unwrap().display().to_string();
        all.extend(blocks(&text).into_iter().map(|b| (name.clone(), b)));
    }
    all
}

#[test]
fn every_block_names_a_language_this_test_knows() {
    let known = [
        "rust", "console", "sh", "yaml", "json", "fgv", "toml", "text",
    ];
    for (file, block) in all_blocks() {
        assert!(
            known.contains(&block.lang.as_str()),
            "{file}:{}: a code block in `{}`: name one of {known:?}, so that a test checks it",
            block.line,
            block.lang
        );
        if block.lang == "rust" && !file.starts_with("docs/book/") {
            let example =
                std::fs::read_to_string(root().join("sync/tests/it/readme_counter.rs")).unwrap();
            assert_eq!(
                block.text, example,
                "{file}:{}: a README's Rust block is the tested `sync/tests/it/readme_counter.rs`",
                block.line
            );
        }
        if block.lang == "text" {
            assert_eq!(file, "README.md", "{file}:{}: a `text` block checks nothing: show output in a `console` block under its command", block.line);
        }
    }
}

/// One expected line of a `console` block: `…` alone skips any lines, `…` inside a line any
/// text.
fn line_matches(expected: &str, actual: &str) -> bool {
    let parts: Vec<&str> = expected.split('…').collect();
    if parts.len() == 1 {
        return expected == actual;
    }
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !actual.starts_with(first)
        || actual.len() < first.len() + last.len()
        || !actual.ends_with(last)
    {
        return false;
    }
    let mut rest = &actual[first.len()..actual.len() - last.len()];
    for part in &parts[1..parts.len() - 1] {
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    true
}

/// Whether `actual`'s lines are `expected`'s, `…` lines skipping any number.
fn output_matches(expected: &[&str], actual: &[&str]) -> bool {
    // matches[i][j]: expected[i..] matches actual[j..].
    let (n, m) = (expected.len(), actual.len());
    let mut matches = vec![vec![false; m + 1]; n + 1];
    matches[n][m] = true;
    for i in (0..n).rev() {
        for j in (0..=m).rev() {
            matches[i][j] = if expected[i] == "…" {
                matches[i + 1][j] || (j < m && matches[i][j + 1])
            } else {
                j < m && line_matches(expected[i], actual[j]) && matches[i + 1][j + 1]
            };
        }
    }
    matches[0][0]
}

#[test]
fn console_blocks_print_what_they_show() {
    // Commands write under `target/` of the repository, as a user's would.
    std::fs::create_dir_all(root().join("target")).unwrap();
    let mut ran = 0;
    for (file, block) in all_blocks()
        .into_iter()
        .filter(|(_, b)| b.lang == "console")
    {
        let lines: Vec<&str> = block.text.lines().collect();
        let commands: Vec<usize> = (0..lines.len())
            .filter(|&i| lines[i].starts_with("$ "))
            .collect();
        assert_eq!(
            commands.first(),
            Some(&0),
            "{file}:{}: a console block opens with `$ command`",
            block.line
        );
        for (k, &at) in commands.iter().enumerate() {
            let end = commands.get(k + 1).copied().unwrap_or(lines.len());
            let words: Vec<&str> = lines[at][2..].split_whitespace().collect();
            assert_eq!(
                words[0],
                "fgvt",
                "{file}:{}: console blocks run `fgvt`",
                block.line + at
            );
            let (_, stdout, stderr) = output(fgvt().current_dir(root()).args(&words[1..]));
            let printed = format!("{stdout}{stderr}");
            let mut actual: Vec<&str> = printed.lines().map(str::trim_end).collect();
            while actual.last() == Some(&"") {
                actual.pop();
            }
            let expected: Vec<&str> = lines[at + 1..end].iter().map(|l| l.trim_end()).collect();
            assert!(
                output_matches(&expected, &actual),
                "{file}:{}: `{}` printed:\n{printed}\nwhich is not what the block shows:\n{}",
                block.line + at,
                &lines[at][2..],
                expected.join("\n")
            );
            ran += 1;
        }
    }
    assert!(ran >= 5, "the guide runs its console blocks ({ran} found)");
}

#[test]
fn the_console_matcher_skips_only_where_told() {
    assert!(output_matches(&["a", "…", "d"], &["a", "b", "c", "d"]));
    assert!(output_matches(&["a", "…"], &["a"]));
    assert!(!output_matches(&["a", "d"], &["a", "b", "d"]));
    assert!(!output_matches(&["a", "…", "e"], &["a", "b", "d"]));
    assert!(line_matches("took … s (x)", "took 1.5 s (x)"));
    assert!(!line_matches("took … s (x)", "took 1.5 ms (y)"));
    assert!(line_matches("a…", "a"));
}

/// The fgvt command lines of a shell text: `fgvt ARGS` or `cargo run … -- ARGS`, as words
/// (comments and redirections dropped).
fn fgvt_command_lines(shell: &str) -> Vec<Vec<String>> {
    let mut found = Vec::new();
    for line in shell.lines() {
        let line = line
            .split(" #")
            .next()
            .unwrap()
            .split(['>', '|'])
            .next()
            .unwrap();
        let words: Vec<String> = line.split_whitespace().map(str::to_string).collect();
        let args = match words.first().map(String::as_str) {
            Some("fgvt") => words[1..].to_vec(),
            Some("cargo") if words.get(1).map(String::as_str) == Some("run") => {
                match words.iter().position(|w| w == "--") {
                    Some(at) => words[at + 1..].to_vec(),
                    None => continue,
                }
            }
            _ => continue,
        };
        found.push(args);
    }
    found
}

/// Checks a shell text: its syntax, and each fgvt command line against fgvt's own parser, with
/// the repository files it names.
fn check_shell(file: &str, line: usize, shell: &str) {
    let syntax = std::process::Command::new("bash")
        .args(["-n", "-c", shell])
        .output()
        .unwrap();
    assert!(
        syntax.status.success(),
        "{file}:{line}: not a shell command: {}",
        String::from_utf8_lossy(&syntax.stderr)
    );
    for args in fgvt_command_lines(shell) {
        let parsed =
            fgvt::cli::Cli::try_parse_from(std::iter::once("fgvt".to_string()).chain(args.clone()));
        assert!(
            parsed.is_ok(),
            "{file}:{line}: `fgvt {}` is not fgvt's command line: {}",
            args.join(" "),
            parsed.unwrap_err()
        );
        for arg in &args {
            let named = Path::new(arg);
            let in_repo = ["fixtures/", "tests/", "benches/", "docs/"]
                .iter()
                .any(|d| arg.starts_with(d));
            if in_repo && named.extension().is_some() {
                assert!(
                    root().join(named).exists(),
                    "{file}:{line}: `{arg}` is not in the repository"
                );
            }
        }
    }
}

#[test]
fn shell_blocks_are_commands_fgvt_accepts() {
    let mut checked = 0;
    for (file, block) in all_blocks() {
        match block.lang.as_str() {
            "sh" => check_shell(&file, block.line, &block.text),
            "yaml" => {
                for run in block.text.lines().filter_map(|l| {
                    l.trim_start()
                        .trim_start_matches("- ")
                        .strip_prefix("run: ")
                }) {
                    check_shell(&file, block.line, run);
                }
            }
            _ => continue,
        }
        checked += 1;
    }
    assert!(checked >= 4, "{checked} shell blocks");
}

#[test]
fn a_mistyped_command_in_a_shell_block_is_caught() {
    assert_eq!(
        fgvt_command_lines("fgvt localize x.json --max-states 5 > out.txt\ncargo run --release -- explore y.json # a comment"),
        [vec!["localize", "x.json", "--max-states", "5"], vec!["explore", "y.json"]]
    );
    let typo = ["fgvt", "localize", "x.json", "--max-state", "5"];
    assert!(fgvt::cli::Cli::try_parse_from(typo).is_err());
}

#[test]
fn json_and_model_blocks_are_files_the_suite_runs() {
    let jsons: Vec<serde_json::Value> = (files_below(&root().join("fixtures"), &[".json"]).iter())
        .filter_map(|p| serde_json::from_str(&std::fs::read_to_string(p).unwrap()).ok())
        .collect();
    let models: Vec<String> = (files_below(root(), &[".fgv"]).iter())
        .map(|p| std::fs::read_to_string(p).unwrap())
        .collect();
    for (file, block) in all_blocks() {
        match block.lang.as_str() {
            "json" => {
                let value: serde_json::Value = serde_json::from_str(&block.text)
                    .unwrap_or_else(|e| panic!("{file}:{}: not JSON: {e}", block.line));
                assert!(jsons.contains(&value), "{file}:{}: this JSON is no fixture's file: copy a file of `fixtures/` the suite runs", block.line);
            }
            "fgv" => assert!(
                models.iter().any(|m| m.contains(&block.text)),
                "{file}:{}: this model is not part of a `.fgv` file of the repository",
                block.line
            ),
            "toml" => {
                let parsed: Result<toml::Table, _> = block.text.parse();
                assert!(
                    parsed.is_ok(),
                    "{file}:{}: not TOML: {}",
                    block.line,
                    parsed.unwrap_err()
                );
            }
            _ => {}
        }
    }
}

/// A heading's anchor, as GitHub and mdBook make it.
fn anchor(heading: &str) -> String {
    (heading.trim().to_lowercase().chars())
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// The anchors of a Markdown file's headings.
fn anchors(markdown: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut heading: Option<String> = None;
    for event in pulldown_cmark::Parser::new(markdown) {
        match event {
            Event::Start(Tag::Heading { .. }) => heading = Some(String::new()),
            Event::Text(t) | Event::Code(t) => {
                if let Some(h) = heading.as_mut() {
                    h.push_str(&t);
                }
            }
            Event::End(TagEnd::Heading(_)) => found.extend(heading.take().map(|h| anchor(&h))),
            _ => {}
        }
    }
    found
}

/// The links and images of a Markdown text: their targets, and those of HTML `<img src="…">`
/// (a picture given a width).
fn links(markdown: &str) -> Vec<String> {
    let mut found = Vec::new();
    for event in pulldown_cmark::Parser::new_ext(markdown, Options::ENABLE_TABLES) {
        match event {
            Event::Start(Tag::Link { dest_url, .. } | Tag::Image { dest_url, .. }) => {
                found.push(dest_url.to_string())
            }
            Event::Html(html) | Event::InlineHtml(html) => {
                let sources = html.split("src=\"").skip(1);
                found.extend(
                    sources
                        .filter_map(|s| s.split('"').next())
                        .map(str::to_string),
                );
            }
            _ => {}
        }
    }
    found
}

#[test]
fn every_link_leads_to_a_file_and_heading() {
    for path in documents() {
        let text = std::fs::read_to_string(&path).unwrap();
        for target in links(&text) {
            if target.starts_with("http://") || target.starts_with("https://") {
                continue;
            }
            let (file, fragment) = target.split_once('#').unwrap_or((&target, ""));
            let linked = if file.is_empty() {
                path.clone()
            } else {
                path.parent().unwrap().join(file)
            };
            assert!(
                linked.exists(),
                "{}: the link `{target}` leads nowhere",
                path.display()
            );
            if !fragment.is_empty() {
                let heads = anchors(&std::fs::read_to_string(&linked).unwrap());
                assert!(
                    heads.contains(&fragment.to_string()),
                    "{}: `{target}`: no heading `#{fragment}` there ({heads:?})",
                    path.display()
                );
            }
        }
    }
}

#[test]
fn the_summary_the_crate_and_the_chapters_agree() {
    let summary = std::fs::read_to_string(book().join("SUMMARY.md")).unwrap();
    let mut listed: Vec<String> = links(&summary);
    listed.sort();
    assert_eq!(
        listed,
        chapters(),
        "SUMMARY.md lists every chapter, and only them"
    );
    let crate_root = std::fs::read_to_string(root().join("docs/book/lib.rs")).unwrap();
    for chapter in chapters() {
        assert!(
            crate_root.contains(&format!("include_str!(\"src/{chapter}\")")),
            "docs/book/lib.rs does not include {chapter}: its Rust blocks would go untested"
        );
    }
}

#[test]
fn the_command_line_chapter_is_the_generated_manual() {
    let (code, generated, stderr) = output(fgvt().args(["man", "--markdown"]));
    assert_eq!(code, 0, "{stderr}");
    let chapter = std::fs::read_to_string(book().join("command-line.md")).unwrap();
    assert!(
        chapter == generated,
        "docs/book/src/command-line.md is not what `fgvt man --markdown` prints: run \
         `cargo run -- man --markdown -o docs/book/src/command-line.md`"
    );
    for command in [
        "localize",
        "explore",
        "render",
        "check-history",
        "hunt",
        "minimize",
    ] {
        assert!(
            chapter.contains(&format!("## `fgvt {command}`")),
            "{command} has its section"
        );
    }
    assert!(
        chapter.contains("`--report-budget <SECONDS|none>`"),
        "flags are listed with their values"
    );
}

/// A measured figure: a number with a unit of time, memory or rate.
fn has_figure(text: &str) -> bool {
    let units = [
        "ms", "µs", "s", "min", "minutes", "MB", "GB", "KB", "bytes", "states/s",
    ];
    let words: Vec<&str> = text
        .split(|c: char| c.is_whitespace() || c == ',' || c == '(' || c == ')' || c == ';')
        .filter(|w| !w.is_empty())
        .collect();
    (words.windows(2)).any(|w| {
        w[0].chars().next().is_some_and(|c| c.is_ascii_digit())
            && units.contains(&w[1].trim_end_matches(['.', ':']))
    })
}

/// Whether a text names a command that measures something.
fn has_command(text: &str) -> bool {
    [
        "`cargo ",
        "`fgvt ",
        "`time ",
        "`/usr/bin/time",
        ".ci/run",
        "`git clone",
        "`CARGO_TARGET_DIR",
        "`python3 benches/",
    ]
    .iter()
    .any(|c| text.contains(c))
}

/// A Markdown text's top-level blocks as text (paragraphs, list items, tables), with whether
/// each is a table.
fn text_blocks(markdown: &str) -> Vec<(String, bool)> {
    let mut found = Vec::new();
    let mut current: Option<(String, bool)> = None;
    let mut depth = 0;
    for event in pulldown_cmark::Parser::new_ext(markdown, Options::ENABLE_TABLES) {
        match event {
            Event::Start(tag @ (Tag::Paragraph | Tag::Table(_) | Tag::Item)) => {
                if depth == 0 {
                    current = Some((String::new(), matches!(tag, Tag::Table(_))));
                }
                depth += 1;
            }
            Event::End(TagEnd::Paragraph | TagEnd::Table | TagEnd::Item) => {
                depth -= 1;
                if depth == 0 {
                    found.extend(current.take());
                }
            }
            Event::Code(t) => {
                if let Some((text, _)) = current.as_mut() {
                    text.push_str(&format!("`{t}`"));
                }
            }
            Event::Text(t) => {
                if let Some((text, _)) = current.as_mut() {
                    text.push_str(&t);
                }
            }
            Event::SoftBreak | Event::HardBreak => {
                if let Some((text, _)) = current.as_mut() {
                    text.push(' ');
                }
            }
            Event::Start(Tag::Heading {
                level: HeadingLevel::H1,
                ..
            }) => {}
            _ => {}
        }
    }
    found
}

#[test]
fn every_figure_comes_with_its_command() {
    for path in documents() {
        if path.ends_with("command-line.md") {
            continue; // flags' defaults, not measurements
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let mut previous_has_command = false;
        for (block, table) in text_blocks(&text) {
            let told = has_command(&block) || (table && previous_has_command);
            assert!(
                !has_figure(&block) || told,
                "{}: a figure without the command that measures it:\n{block}",
                path.display()
            );
            previous_has_command = has_command(&block);
        }
    }
    assert!(has_figure("took 2.30 s on 1 job") && !has_figure("3 threads × 2 operations"));
}

#[test]
fn the_readme_opens_with_the_rust_example_and_the_guide() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let lines: Vec<&str> = readme.lines().collect();
    assert!(
        lines.len() <= 150,
        "README.md has {} lines: keep it to 150, the rest in the guide",
        lines.len()
    );
    let example = lines
        .iter()
        .position(|l| l.contains("#[fgvt_sync::operations]"))
        .expect("the Rust example");
    let example_end = (example..lines.len()).find(|&i| lines[i] == "```").unwrap();
    assert!(
        example_end < 50,
        "the Rust example ends on line {example_end}: it belongs in the first screen"
    );
    let summary = std::fs::read_to_string(book().join("SUMMARY.md")).unwrap();
    for chapter in links(&summary) {
        let at = lines
            .iter()
            .position(|l| l.contains(&format!("docs/book/src/{chapter}")));
        assert!(
            at.is_some_and(|at| at < 100),
            "README.md links `{chapter}` in its second screen"
        );
    }
}
