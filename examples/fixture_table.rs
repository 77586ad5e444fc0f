//! Writes `fixtures/README.md`: every fixture's test localized, next to the paper's result.
//!
//! ```sh
//! cargo run --release --example fixture_table > fixtures/README.md
//! ```
//!
//! Every column but the time is deterministic; `tests/it/fixtures.rs` regenerates the table and
//! fails when the committed README differs from it in any other column. The paper's columns
//! come from each fixture's `paper.json`: the paper, its CDRS, and its racing statements, each
//! with the model sites (line and racing expression) that stand for it.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde::Deserialize;
use serde_json::Value;

/// A fixture's `paper.json`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Paper {
    /// Where the object comes from: "FGVT Table 2", "Line-Up" or "correct".
    pub paper: String,
    /// The object's name in the paper.
    pub object: String,
    /// The CDRS the paper reports, as printed there; null when it reports none.
    pub cdrs: Option<String>,
    /// The labels a top CDRS may end with (the paper's last label).
    pub last_label: Vec<String>,
    /// The paper's racing statements (for Line-Up objects: the statements of the bug).
    pub statements: Vec<PaperStatement>,
}

/// One statement of the paper and the model sites that stand for it.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PaperStatement {
    /// The statement as the paper prints it.
    pub paper: String,
    /// The racing events of the model that are this statement (any one of them will do).
    pub fgvt: Vec<Site>,
    /// Why the model's sites differ from the paper's statement, if they do.
    #[serde(default)]
    pub note: Option<String>,
}

/// A racing event's place in the model: its line and the racing expression.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Site {
    pub line: u64,
    pub snippet: String,
}

/// One test of one fixture, localized.
pub struct Row {
    /// The fixture folder's name.
    pub fixture: String,
    /// The test file's name (`failing.json`, ...).
    pub test: String,
    pub paper: Paper,
    /// The `fgvt.localize/1` report, with every CDRS.
    pub report: Value,
    /// The fastest of the timed runs.
    pub time: Duration,
}

/// The test files of every fixture under `root/fixtures`, in order: (fixture, test file).
pub fn tests(root: &Path) -> Vec<(String, String)> {
    let mut fixtures: Vec<String> = std::fs::read_dir(root.join("fixtures"))
        .expect("fixtures/ is readable")
        .map(|e| e.expect("fixtures/ entry"))
        .filter(|e| e.path().is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    fixtures.sort();
    let mut tests = Vec::new();
    for fixture in fixtures {
        for test in ["failing.json", "fixed.json", "correct.json"] {
            if root.join("fixtures").join(&fixture).join(test).exists() {
                tests.push((fixture.clone(), test.to_string()));
            }
        }
    }
    tests
}

/// Reads `fixtures/<fixture>/paper.json`.
pub fn paper(root: &Path, fixture: &str) -> Paper {
    let path = root.join("fixtures").join(fixture).join("paper.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Localizes `fixtures/<fixture>/<test>` as `fgvt localize --max-cdrs 10000 --format json`
/// would, from the working directory `root`-relative paths are resolved against. `runs` timed
/// runs (at least one); the report is the last one's.
pub fn localize(fixture: &str, test: &str, runs: usize) -> (Value, Duration) {
    let path = PathBuf::from("fixtures").join(fixture).join(test);
    let limits = fgvt::pipeline::Limits::default();
    let options = fgvt::pipeline::LocalizeOptions {
        max_cdrs: 10_000,
        ..Default::default()
    };
    let mut best = Duration::MAX;
    let mut report = Value::Null;
    for _ in 0..runs.max(1) {
        let started = Instant::now();
        let test =
            fgvt::testcase::load(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let localized = fgvt::pipeline::localize(&test, &limits, &options, &mut ())
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        best = best.min(started.elapsed());
        report = serde_json::from_str(&fgvt_reports::render_json(&localized.report))
            .expect("the report is JSON");
    }
    (report, best)
}

/// Every fixture's tests, localized (paths relative to the working directory, which must be
/// the repository root).
pub fn rows(runs: usize) -> Vec<Row> {
    let root = Path::new(".");
    let mut tests = tests(root);
    // The paper's Table 2 first, then Line-Up's examples and the correct objects.
    tests.sort_by_key(|(fixture, _)| {
        (
            paper(root, fixture).paper != "FGVT Table 2",
            fixture.clone(),
        )
    });
    tests
        .into_iter()
        .map(|(fixture, test)| {
            let (report, time) = localize(&fixture, &test, runs);
            Row {
                paper: paper(root, &fixture),
                fixture,
                test,
                report,
                time,
            }
        })
        .collect()
}

/// The races of a CDRS: (line, racing expression), in order, without repeats.
pub fn sites(cdrs: &Value) -> Vec<(u64, String)> {
    let mut sites = Vec::new();
    for node in cdrs["nodes"].as_array().into_iter().flatten() {
        for race in node["races"].as_array().into_iter().flatten() {
            let Some(line) = race["location"]["line"].as_u64() else {
                continue;
            };
            let site = (
                line,
                race["snippet"].as_str().unwrap_or_default().to_string(),
            );
            if !sites.contains(&site) {
                sites.push(site);
            }
        }
    }
    sites
}

/// The sites of a CDRS's races that stand for `statement`.
pub fn matches(cdrs: &Value, statement: &PaperStatement) -> Vec<(u64, String)> {
    sites(cdrs)
        .into_iter()
        .filter(|(line, snippet)| {
            statement
                .fgvt
                .iter()
                .any(|s| s.line == *line && s.snippet == *snippet)
        })
        .collect()
}

/// The last label of a CDRS's word.
pub fn last_label(cdrs: &Value) -> &str {
    cdrs["pattern"]
        .as_str()
        .unwrap_or_default()
        .split(' ')
        .next_back()
        .unwrap_or_default()
}

/// The index of the best CDRS that ends in one of the paper's last labels and whose races
/// include every statement of the paper.
pub fn first_covering(report: &Value, paper: &Paper) -> Option<usize> {
    report["cdrs"].as_array()?.iter().position(|c| {
        paper.last_label.iter().any(|l| l == last_label(c))
            && paper.statements.iter().all(|s| !matches(c, s).is_empty())
    })
}

fn count(v: &Value) -> u64 {
    v.as_u64().unwrap_or_default()
}

fn code(s: &str) -> String {
    format!("`{}`", s.replace('|', "\\|"))
}

fn ms(time: Duration) -> String {
    let ms = time.as_secs_f64() * 1000.0;
    if ms < 1.0 {
        "<1 ms".to_string()
    } else {
        format!("{ms:.0} ms")
    }
}

fn tree(report: &Value) -> String {
    let t = &report["tree"];
    let mut s = format!(
        "{} nodes, {} leaves",
        count(&t["nodes"]),
        count(&t["leaves"])
    );
    if count(&t["failing_leaves"]) > 0 {
        write!(s, " ({} failing", count(&t["failing_leaves"])).unwrap();
        if count(&t["stuck_leaves"]) > 0 {
            write!(s, ", {} stuck", count(&t["stuck_leaves"])).unwrap();
        }
        s.push(')');
    }
    write!(s, ", {} states", count(&t["distinct_states"])).unwrap();
    s
}

/// The paper's statements, each with the lines that stand for it in the best CDRS that holds
/// them all.
fn paper_statements(row: &Row) -> String {
    if row.paper.statements.is_empty() {
        return "—".to_string();
    }
    let all = row.report["cdrs"].as_array().cloned().unwrap_or_default();
    match first_covering(&row.report, &row.paper) {
        Some(i) => {
            let c = &all[i];
            let each: Vec<String> = row
                .paper
                .statements
                .iter()
                .map(|s| {
                    let lines: Vec<String> = matches(c, s)
                        .iter()
                        .map(|(l, _)| format!("l.{l}"))
                        .collect();
                    format!("{} {}", code(&s.paper), lines.join("/"))
                })
                .collect();
            let place = if i == 0 {
                "top CDRS".to_string()
            } else {
                format!(
                    "CDRS {} `{}`",
                    i + 1,
                    c["pattern"].as_str().unwrap_or_default()
                )
            };
            format!("{} — all in the {place}", each.join(", "))
        }
        None => {
            let missing: Vec<String> = row
                .paper
                .statements
                .iter()
                .filter(|s| !all.iter().any(|c| !matches(c, s).is_empty()))
                .map(|s| code(&s.paper))
                .collect();
            format!(
                "**no CDRS holds them all**; never racing: {}",
                if missing.is_empty() {
                    "—".into()
                } else {
                    missing.join(", ")
                }
            )
        }
    }
}

/// `fixtures/README.md`.
pub fn render(rows: &[Row]) -> String {
    let mut out = String::new();
    out.push_str(
        "# Fixtures\n\n\
         Every folder holds an object model (`.fgv`, a buggy object and its `Fixed…` variant), its\n\
         tests (`failing.json`, `fixed.json`, or `correct.json` for a correct object), `paper.json` (what\n\
         the paper reports: its CDRS and racing statements, each with the model sites that stand for\n\
         it) and a README comparing fgvt's result with the paper's.\n\n\
         This file is generated — do not edit it by hand:\n\n\
         ```sh\n\
         cargo run --release --example fixture_table > fixtures/README.md\n\
         ```\n\n\
         `cargo test --test fixtures` fails when it is out of date (every column but the time).\n\
         The times are one `localize` (load, explore, judge, label, CDRS, report) in a release build,\n\
         the fastest of five runs; `cargo bench --bench localize` measures them properly.\n\n\
         ## Bugs: the failing tests\n\n\
         *top CDRS* is fgvt's best CDRS (ending in a G race first, then fewest races, then most failing leaves), of *found* in all;\n\
         *its races* are the racing expressions of its decisive nodes with their lines; *the paper's\n\
         statements* are those of the paper's last column (for Line-Up, the statement of the bug) with\n\
         the lines that stand for them in the best CDRS holding all of them.\n\n\
         | fixture | paper | paper's CDRS | verdict | top CDRS | found | its races | the paper's statements | tree | time |\n\
         | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n",
    );
    for row in rows.iter().filter(|r| r.test == "failing.json") {
        let r = &row.report;
        let all = r["cdrs"].as_array().cloned().unwrap_or_default();
        let top = all
            .first()
            .map(|c| format!("`{}`", c["pattern"].as_str().unwrap_or_default()))
            .unwrap_or_else(|| "—".into());
        let races: Vec<String> = all
            .first()
            .map(sites)
            .unwrap_or_default()
            .iter()
            .map(|(l, s)| format!("l.{l} {}", code(s)))
            .collect();
        writeln!(
            out,
            "| [{f}]({f}/) | {p} | {pc} | {v} | {top} | {n} | {races} | {ps} | {tree} | {t} |",
            f = row.fixture,
            p = row.paper.paper,
            pc = row
                .paper
                .cdrs
                .as_deref()
                .map(code)
                .unwrap_or_else(|| "—".into()),
            v = r["verdict"].as_str().unwrap_or_default(),
            n = count(&r["cdrs_found"]),
            races = races.join(", "),
            ps = paper_statements(row),
            tree = tree(r),
            t = ms(row.time),
        )
        .unwrap();
    }
    out.push_str(
        "\n## No false alarms: the fixed and correct objects\n\n\
         | fixture | test | object | verdict | CDRS | tree | time |\n\
         | --- | --- | --- | --- | --- | --- | --- |\n",
    );
    for row in rows.iter().filter(|r| r.test != "failing.json") {
        let r = &row.report;
        writeln!(
            out,
            "| [{f}]({f}/) | `{test}` | {object} | {v} | {n} | {tree} | {t} |",
            f = row.fixture,
            test = row.test,
            object = r["test"]["object"].as_str().unwrap_or_default(),
            v = r["verdict"].as_str().unwrap_or_default(),
            n = count(&r["cdrs_found"]),
            tree = tree(r),
            t = ms(row.time),
        )
        .unwrap();
    }
    out
}

/// A line of the README with its last table cell (the time) blanked out, for comparison.
pub fn without_time(line: &str) -> String {
    match line
        .trim_end()
        .strip_suffix('|')
        .and_then(|l| l.rsplit_once('|'))
    {
        Some((rest, _time)) if line.starts_with('|') => format!("{rest}| |"),
        _ => line.trim_end().to_string(),
    }
}

#[allow(dead_code)]
fn main() {
    std::env::set_current_dir(env!("CARGO_MANIFEST_DIR")).expect("the repository root");
    print!("{}", render(&rows(5)));
}
