//! A localization as SARIF 2.1.0, the format code-scanning views read (GitHub code scanning,
//! VS Code's SARIF viewer): one result per CDRS; and a history check as SARIF, one result per
//! non-linearizable history ([`render_history_sarif`]).
//!
//! A CDRS is a set of source locations with an interleaving between them, which is the shape
//! SARIF gives a result: the decisive race (the last node of the sequence, where the run is
//! decided to fail) is the primary location, every race of the sequence a related location,
//! and the witness a code flow with one thread flow per thread, each step with its location,
//! what it did and its place in the run (`executionOrder`). The rule's metadata says what a
//! CDRS is. The file validates against the OASIS schema shipped in `schemas/` (a test checks
//! every report the fixtures give).

use std::collections::BTreeMap;

use serde_json::{json, Value as Json};

use crate::check_report::{CheckReport, CheckSummary, CheckVerdict};
use crate::model::{CdrsReport, LocalizeReport, RaceReport, SourceLocation, Verdict};

/// The id of fgvt's one rule: a critical data race sequence.
pub const RULE_ID: &str = "fgvt/cdrs";

/// `report` as a SARIF 2.1.0 log (pretty-printed JSON, with a final newline).
pub fn render_sarif(report: &LocalizeReport) -> String {
    let log = json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": { "driver": driver() },
            "invocations": [{
                "commandLine": report.test.command,
                // The run worked whatever it found; a limit makes it partial, said below.
                "executionSuccessful": true,
            }],
            "results": report.cdrs.iter().map(|c| result(report, c)).collect::<Vec<_>>(),
            "properties": {
                "verdict": verdict_name(report.verdict),
                "partial": report.partial,
                "object": report.test.object,
                "spec": report.test.spec,
                "test": report.test.file,
            },
        }],
    });
    let mut text = serde_json::to_string_pretty(&log).expect("SARIF is plain JSON");
    text.push('\n');
    text
}

/// fgvt as the tool that ran, with the CDRS rule.
fn driver() -> Json {
    json!({
        "name": "fgvt",
        "informationUri": "https://github.com/fgvt/fgvt",
        "version": env!("CARGO_PKG_VERSION"),
        "rules": [{
            "id": RULE_ID,
            "name": "CriticalDataRaceSequence",
            "shortDescription": {
                "text": "A sequence of data races that decides a non-linearizable run."
            },
            "fullDescription": {
                "text": "fgvt explored every interleaving of a small test of a concurrent object and \
                         checked every run for linearizability. A critical data race sequence \
                         (CDRS) is a path of the interleaving tree through races whose outcome \
                         decides failure: at each, which thread goes first moves the runs below \
                         from passing (or mixed) towards failing. The last race of the sequence \
                         is where the failure is decided; the earlier ones set it up."
            },
            "help": {
                "text": "Reorder or synchronize the racing statements so that no interleaving of \
                         them gives a result that no serial order of the operations gives: the \
                         witness shows one such interleaving step by step."
            },
            "defaultConfiguration": { "level": "error" },
        }],
    })
}

/// One CDRS as a result.
fn result(report: &LocalizeReport, cdrs: &CdrsReport) -> Json {
    let races: Vec<&RaceReport> = cdrs.nodes.iter().flat_map(|n| &n.races).collect();
    // The decisive race: the step the witness takes at the last node of the sequence.
    let decisive =
        (cdrs.nodes.last()).and_then(|n| n.races.iter().find(|r| r.taken).or(n.races.first()));
    let labels: Vec<String> = cdrs
        .nodes
        .iter()
        .map(|n| n.label.name().to_string())
        .collect();
    let symptom = report.symptom.as_deref().unwrap_or("the runs below fail");
    let message = format!(
        "CDRS {} ({}), {} failing run{}: {symptom}. Decided by {}.",
        cdrs.rank,
        labels.join(" "),
        cdrs.failing_leaves,
        if cdrs.failing_leaves == 1 { "" } else { "s" },
        decisive.map_or_else(|| "its races".to_string(), race_text),
    );
    let locations: Vec<Json> = decisive
        .and_then(located)
        .map(|(l, r)| location(l, &r.snippet, &race_text(r), None))
        .into_iter()
        .collect();
    let mut related: Vec<Json> = (races.iter().copied().filter_map(located).enumerate())
        .map(|(i, (l, r))| location(l, &r.snippet, &race_text(r), Some(i)))
        .collect();
    // A data race the witness ends at: its two accesses too.
    if let Some(race) = cdrs.witness.fault.as_ref().and_then(|f| f.race.as_ref()) {
        for access in [&race.first, &race.second] {
            if let Some(at) = &access.location {
                let text = format!(
                    "T{}'s {} of {} (data race)",
                    access.thread, access.access, race.object
                );
                let id = related.len();
                related.push(location(at, &access.snippet, &text, Some(id)));
            }
        }
    }
    let mut result = json!({
        "ruleId": RULE_ID,
        "ruleIndex": 0,
        "level": "error",
        "message": { "text": message },
        "locations": locations,
        "relatedLocations": related,
        "codeFlows": [code_flow(cdrs)],
        // Stable across runs: the statements of the sequence, not node numbers.
        "partialFingerprints": { "cdrsStatements/v1": fingerprint(cdrs) },
        "properties": {
            "rank": cdrs.rank,
            "pattern": labels.join(" "),
            "failingLeaves": cdrs.failing_leaves,
            "replay": cdrs.witness.replay,
        },
    });
    if locations_empty(&result) {
        // A result without a location is valid SARIF but shows nowhere: point at the test.
        result["locations"] = json!([{
            "physicalLocation": { "artifactLocation": { "uri": uri(&report.test.file) } },
            "message": { "text": "the test that fails" },
        }]);
    }
    result
}

fn locations_empty(result: &Json) -> bool {
    result["locations"].as_array().is_none_or(Vec::is_empty)
}

/// A race with its source location, when it has one.
fn located(r: &RaceReport) -> Option<(&SourceLocation, &RaceReport)> {
    r.location.as_ref().map(|l| (l, r))
}

/// The witness as a code flow: one thread flow per thread, steps in run order.
fn code_flow(cdrs: &CdrsReport) -> Json {
    let w = &cdrs.witness;
    let mut threads: BTreeMap<usize, Vec<Json>> = BTreeMap::new();
    for step in &w.trace {
        let mut text = format!(
            "T{} {}: {} {}",
            step.thread, step.op, step.event, step.target
        );
        if !step.value.is_empty() {
            text.push_str(&format!(" {}", step.value));
        }
        if let Some(label) = step.race {
            text.push_str(&format!(" [race {}]", label.name()));
        }
        let mut location = json!({ "message": { "text": text } });
        if let (Some(file), Some(line)) = (&step.file, step.line) {
            location["physicalLocation"] = json!({
                "artifactLocation": { "uri": uri(file) },
                "region": { "startLine": line, "snippet": { "text": step.snippet } },
            });
        }
        threads.entry(step.thread).or_default().push(json!({
            "location": location,
            "executionOrder": step.step,
            "importance": if step.race.is_some() { "essential" } else { "important" },
        }));
    }
    json!({
        "message": { "text": format!("witness ({}, ends {}); replay: {}", crate::build::counted(w.trace.len() as u64, "step", "steps"), w.ending(), w.replay) },
        "threadFlows": threads.into_iter().map(|(thread, locations)| json!({
            "id": format!("T{thread}"),
            "message": { "text": format!("thread T{thread}") },
            "locations": locations,
        })).collect::<Vec<_>>(),
    })
}

/// A source location with the statement's region and a message.
fn location(at: &SourceLocation, snippet: &str, text: &str, id: Option<usize>) -> Json {
    let mut json = json!({
        "physicalLocation": {
            "artifactLocation": { "uri": uri(&at.file) },
            "region": {
                "startLine": at.line,
                "startColumn": at.column,
                "endColumn": at.column + at.width.max(1),
                "snippet": { "text": snippet },
            },
        },
        "message": { "text": text },
    });
    if let Some(id) = id {
        json["id"] = json!(id);
    }
    json
}

/// A race as one line: `T1 read x → 0 (get())`.
fn race_text(r: &RaceReport) -> String {
    let value = if r.value.is_empty() {
        String::new()
    } else {
        format!(" {}", r.value)
    };
    let memory = crate::memory::access_words(r.order.as_deref(), r.memory.as_ref());
    format!(
        "T{} {} {}{value}{memory} in {}",
        r.thread, r.event, r.target, r.op
    )
}

/// A file name as a URI reference: relative names stay relative (to the repository root,
/// where code scanning resolves them), with `/` separators.
fn uri(file: &str) -> String {
    file.replace('\\', "/")
}

/// The statements of a CDRS, hashed (64-bit FNV-1a, the same in every build): equal for the
/// same races on the same lines.
fn fingerprint(cdrs: &CdrsReport) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for s in &cdrs.statements {
        let key = format!(
            "{}:{}:{}:{}\n",
            s.location.file, s.location.line, s.location.column, s.snippet
        );
        for byte in key.bytes() {
            hash = (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3);
        }
    }
    format!("{hash:016x}")
}

/// The verdict's stable name.
fn verdict_name(verdict: Verdict) -> &'static str {
    match verdict {
        Verdict::Linearizable => "linearizable",
        Verdict::NotLinearizable => "not-linearizable",
        Verdict::Inconclusive => "inconclusive",
    }
}

/// The rule of a history check: a recorded history that no serial order of its operations
/// explains.
pub const HISTORY_RULE_ID: &str = "fgvt/non-linearizable-history";

/// One history file's check as SARIF shows it: the report `check-history --format json` gives,
/// and, when the history is not linearizable, where in the file it goes wrong.
#[derive(Clone, Debug)]
pub struct HistoryCheck<'a> {
    /// The file's check.
    pub report: &'a CheckReport,
    /// Why it is not linearizable, by lines of the file; `None` for any other verdict.
    pub violation: Option<HistoryViolation>,
}

/// Where a recorded history stops being linearizable.
#[derive(Clone, Debug)]
pub struct HistoryViolation {
    /// What went wrong, in one sentence (the checker's headline).
    pub headline: String,
    /// The operation that cannot be placed after the longest linearizable prefix and says most
    /// about why (the result's location).
    pub culprit: HistoryOp,
    /// Every operation that could come after the prefix, with why it cannot.
    pub obstacles: Vec<HistoryOp>,
    /// The longest linearizable prefix, in its order.
    pub prefix: Vec<HistoryOp>,
}

/// An operation of a recorded history, located in its file.
#[derive(Clone, Debug)]
pub struct HistoryOp {
    /// The 1-based line of the file where the operation's result is recorded (its return; its
    /// call when it never returned), when the format has lines.
    pub line: Option<usize>,
    /// The process (thread) that performed it: `T1`.
    pub process: String,
    /// What to say about it.
    pub text: String,
}

/// The checks of `checks` (one per history file) as one SARIF 2.1.0 log: a result per
/// non-linearizable history, pointing at the line of the operation that cannot be placed, with
/// the other operations that cannot come next as related locations and the longest
/// linearizable prefix as a code flow (one thread flow per process). A file that could not be
/// checked, or whose check timed out, is a notification of the invocation.
pub fn render_history_sarif(checks: &[HistoryCheck<'_>], command_line: &str) -> String {
    let notifications: Vec<Json> = checks.iter().filter_map(notification).collect();
    let failed = checks
        .iter()
        .any(|c| c.report.verdict == CheckVerdict::Error);
    let results: Vec<Json> = (checks.iter())
        .filter_map(|c| c.violation.as_ref().map(|v| history_result(c.report, v)))
        .collect();
    let log = json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": { "driver": history_driver() },
            "invocations": [{
                "commandLine": command_line,
                // A file that could not be read is a failure of the run; verdicts are not.
                "executionSuccessful": !failed,
                "toolExecutionNotifications": notifications,
            }],
            "results": results,
            "properties": { "summary": CheckSummary::of(checks.iter().map(|c| c.report)) },
        }],
    });
    let mut text = serde_json::to_string_pretty(&log).expect("SARIF is plain JSON");
    text.push('\n');
    text
}

/// fgvt as the tool that checked the histories, with the history rule.
fn history_driver() -> Json {
    json!({
        "name": "fgvt",
        "informationUri": "https://github.com/fgvt/fgvt",
        "version": env!("CARGO_PKG_VERSION"),
        "rules": [{
            "id": HISTORY_RULE_ID,
            "name": "NonLinearizableHistory",
            "shortDescription": {
                "text": "A recorded history that no serial order of its operations explains."
            },
            "fullDescription": {
                "text": "fgvt searched every order of the history's operations that respects \
                         real time (an operation that returned before another was called comes \
                         first) and found none that the spec accepts. The longest prefix it \
                         could place is shown step by step; the result points at the operation \
                         that cannot come next and says why."
            },
            "help": {
                "text": "The system that recorded the history returned a result no serial \
                         execution gives: look at the operations around the one pointed at, \
                         and at the longest linearizable prefix before it."
            },
            "defaultConfiguration": { "level": "error" },
        }],
    })
}

/// A non-linearizable history as a result.
fn history_result(report: &CheckReport, violation: &HistoryViolation) -> Json {
    let uri = uri(&report.file);
    let at = |op: &HistoryOp, id: Option<usize>| {
        let mut location = json!({
            "physicalLocation": { "artifactLocation": { "uri": uri } },
            "message": { "text": op.text },
        });
        if let Some(line) = op.line {
            location["physicalLocation"]["region"] = json!({ "startLine": line });
        }
        if let Some(id) = id {
            location["id"] = json!(id);
        }
        location
    };
    let mut flows: BTreeMap<&str, Vec<Json>> = BTreeMap::new();
    let steps = (violation.prefix.iter().map(|op| (op, "important")))
        .chain(std::iter::once((&violation.culprit, "essential")));
    for (order, (op, importance)) in steps.enumerate() {
        flows.entry(&op.process).or_default().push(json!({
            "location": at(op, None),
            "executionOrder": order,
            "importance": importance,
        }));
    }
    json!({
        "ruleId": HISTORY_RULE_ID,
        "ruleIndex": 0,
        "level": "error",
        "message": { "text": format!("{}: not linearizable: {}", report.file, violation.headline) },
        "locations": [at(&violation.culprit, None)],
        "relatedLocations": (violation.obstacles.iter().enumerate())
            .map(|(i, op)| at(op, Some(i)))
            .collect::<Vec<_>>(),
        "codeFlows": [{
            "message": { "text": format!(
                "the longest linearizable prefix ({} operation{}), then the operation that cannot come next",
                violation.prefix.len(),
                if violation.prefix.len() == 1 { "" } else { "s" },
            ) },
            "threadFlows": flows.into_iter().map(|(process, locations)| json!({
                "id": process,
                "message": { "text": format!("process {process}") },
                "locations": locations,
            })).collect::<Vec<_>>(),
        }],
        "properties": {
            "spec": report.spec,
            "format": report.format,
            "partitions": report.partitions,
        },
    })
}

/// A file that could not be checked (an error) or whose check gave up (a warning), as a
/// notification of the run; `None` for a verdict.
fn notification(check: &HistoryCheck<'_>) -> Option<Json> {
    let report = check.report;
    let (level, text) = match report.verdict {
        CheckVerdict::Error => ("error", report.error.clone().unwrap_or_default()),
        CheckVerdict::Unknown => (
            "warning",
            format!(
                "{}: unknown: the check timed out (raise --timeout)",
                report.file
            ),
        ),
        CheckVerdict::Linearizable | CheckVerdict::NotLinearizable => return None,
    };
    Some(json!({
        "level": level,
        "message": { "text": text },
        "locations": [{ "physicalLocation": { "artifactLocation": { "uri": uri(&report.file) } } }],
    }))
}
