//! The JSON rendering: the report model's serde form, schema `fgvt.localize/1`.

use crate::model::LocalizeReport;

/// Renders `report` as pretty-printed JSON, ending with a newline.
pub fn render_json(report: &LocalizeReport) -> String {
    // Every field is a string, number, bool, list, map or JSON value: serializing cannot fail.
    let mut s = serde_json::to_string_pretty(report).expect("a report serializes");
    s.push('\n');
    s
}

/// Reads a report back from its JSON form (for tools that post-process reports).
pub fn parse_json(text: &str) -> Result<LocalizeReport, serde_json::Error> {
    serde_json::from_str(text)
}
