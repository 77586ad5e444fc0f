//! A recorded history drawn as one self-contained HTML page, as porcupine draws one: the
//! operations of each process on a time axis, the longest linearizable prefix highlighted and
//! numbered, and the operations that cannot come next marked, with the checker's explanation
//! beside the picture. No script, no network: the page is an inline SVG and a little CSS.

use std::fmt::Write as _;

use crate::xml::escape;

/// What the picture shows.
#[derive(Clone, Debug)]
pub struct HistoryPicture {
    /// The page's title, e.g. the file name.
    pub title: String,
    /// The verdict in words, e.g. "NOT linearizable (in the sub-history of key \"7\")".
    pub verdict: String,
    /// The operations drawn.
    pub operations: Vec<PictureOp>,
    /// The checker's explanation, shown beside the picture.
    pub explanation: Option<String>,
}

/// One operation on the time axis.
#[derive(Clone, Debug)]
pub struct PictureOp {
    /// Its lane: the process, e.g. `T3`.
    pub lane: String,
    /// The call with its result, e.g. `read() → 2`.
    pub label: String,
    /// Where it starts on the time axis (an event position).
    pub start: usize,
    /// Where it returned on the time axis; `None`: pending.
    pub end: Option<usize>,
    /// What the checker made of it.
    pub role: Role,
}

/// An operation's part in the verdict.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Role {
    /// Linearized at this position (of the longest linearizable prefix, or of the witness).
    Linearized(usize),
    /// It cannot come next after the prefix, for this reason.
    Obstacle(String),
    /// Neither.
    Other,
}

const LANE_HEIGHT: usize = 34;
const UNIT: usize = 14;
const LEFT: usize = 70;

/// The page.
pub fn render_history_html(picture: &HistoryPicture) -> String {
    let mut lanes: Vec<&str> = picture.operations.iter().map(|o| o.lane.as_str()).collect();
    lanes.sort_by_key(|l| crate::timeline::lane_order(l));
    lanes.dedup();
    let horizon = picture
        .operations
        .iter()
        .map(|o| o.end.unwrap_or(o.start) + 2)
        .max()
        .unwrap_or(1);
    let width = LEFT + horizon * UNIT + 20;
    let height = lanes.len() * LANE_HEIGHT + 30;
    let mut svg = String::new();
    let _ = write!(
        svg,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" role="img" aria-label="operations on a time axis">"#
    );
    for (i, lane) in lanes.iter().enumerate() {
        let y = 20 + i * LANE_HEIGHT;
        let _ = write!(
            svg,
            r#"<text class="lane" x="8" y="{}">{}</text><line class="axis" x1="{LEFT}" y1="{}" x2="{}" y2="{}"/>"#,
            y + 18,
            escape(lane),
            y + LANE_HEIGHT - 4,
            width - 10,
            y + LANE_HEIGHT - 4
        );
    }
    for (n, op) in picture.operations.iter().enumerate() {
        let row = lanes.iter().position(|l| *l == op.lane).unwrap_or(0);
        let y = 20 + row * LANE_HEIGHT;
        let x = LEFT + op.start * UNIT;
        let end = op.end.unwrap_or(horizon);
        let w = (end.saturating_sub(op.start)).max(1) * UNIT;
        let (class, badge, why) = match &op.role {
            Role::Linearized(i) => ("linearized", format!("{}", i + 1), String::new()),
            Role::Obstacle(reason) => ("obstacle", "✗".to_string(), reason.clone()),
            Role::Other => ("other", String::new(), String::new()),
        };
        let pending = if op.end.is_none() { " pending" } else { "" };
        let tooltip = if why.is_empty() {
            op.label.clone()
        } else {
            format!("{}: {why}", op.label)
        };
        // The label is cut to the bar (monospace, about 6.6 px a character); the whole of it
        // is in the tooltip and, for a marked operation, beside the picture.
        let badge = if badge.is_empty() {
            String::new()
        } else {
            format!("[{badge}] ")
        };
        let fits = (w.saturating_sub(8) * 10 / 66).max(badge.chars().count());
        let text = crate::draw::shorten(&format!("{badge}{}", op.label), fits);
        let _ = write!(
            svg,
            r#"<g class="op {class}{pending}" id="op-{n}"><title>{}</title><rect x="{x}" y="{y}" width="{w}" height="24" rx="4"/><text x="{}" y="{}">{}</text></g>"#,
            escape(&tooltip),
            x + 4,
            y + 16,
            escape(&text)
        );
    }
    svg.push_str("</svg>");

    let obstacles: Vec<String> = picture
        .operations
        .iter()
        .filter_map(|o| match &o.role {
            Role::Obstacle(why) => Some(format!(
                "<li class=\"obstacle-note\"><b>{} {}</b>: {}</li>",
                escape(&o.lane),
                escape(&o.label),
                escape(why)
            )),
            _ => None,
        })
        .collect();
    let explanation = picture
        .explanation
        .as_deref()
        .map(|e| format!("<h2>Explanation</h2><pre>{}</pre>", escape(e)))
        .unwrap_or_default();
    let marked = if obstacles.is_empty() {
        String::new()
    } else {
        format!("<h2>Cannot come next</h2><ul>{}</ul>", obstacles.join(""))
    };
    format!(
        r#"<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<style>
body {{ font-family: system-ui, sans-serif; margin: 1.5em; color: #222; }}
.verdict {{ font-size: 1.2em; }}
.layout {{ display: flex; gap: 2em; align-items: flex-start; }}
.picture {{ overflow-x: auto; max-width: 70vw; border: 1px solid #ddd; }}
.side {{ max-width: 28vw; }}
pre {{ white-space: pre-wrap; font-size: 0.85em; }}
.lane {{ font: bold 13px monospace; }}
.axis {{ stroke: #eee; }}
.op rect {{ fill: #e8e8e8; stroke: #999; }}
.op text {{ font: 11px monospace; pointer-events: none; }}
.op.linearized rect {{ fill: #c8ecc8; stroke: #3a8a3a; }}
.op.obstacle rect {{ fill: #fbd0d0; stroke: #c00; stroke-width: 3; }}
.op.pending rect {{ stroke-dasharray: 4 3; }}
.legend span {{ display: inline-block; padding: 0 .5em; margin-right: .5em; border-radius: 3px; }}
</style></head>
<body>
<h1>{title}</h1>
<p class="verdict">{verdict}</p>
<p class="legend"><span style="background:#c8ecc8">[n] linearized, in order</span><span style="background:#fbd0d0;border:2px solid #c00">✗ cannot come next</span><span style="background:#e8e8e8">not reached</span> (dashed: never returned; hover for details)</p>
<div class="layout"><div class="picture">{svg}</div><div class="side">{marked}{explanation}</div></div>
</body></html>
"#,
        title = escape(&picture.title),
        verdict = escape(&picture.verdict),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marks_the_prefix_and_the_obstacle_and_escapes_text() {
        let picture = HistoryPicture {
            title: "h.json".into(),
            verdict: "NOT linearizable".into(),
            operations: vec![
                PictureOp {
                    lane: "T0".into(),
                    label: "write(1) → ()".into(),
                    start: 0,
                    end: Some(2),
                    role: Role::Linearized(0),
                },
                PictureOp {
                    lane: "T1".into(),
                    label: "read() → <2>".into(),
                    start: 3,
                    end: None,
                    role: Role::Obstacle("the spec returns 1".into()),
                },
            ],
            explanation: Some("longest linearizable prefix: 1 of 2".into()),
        };
        let html = render_history_html(&picture);
        assert!(
            html.contains(r#"class="op linearized" id="op-0""#),
            "{html}"
        );
        assert!(
            html.contains(r#"class="op obstacle pending" id="op-1""#),
            "{html}"
        );
        assert!(html.contains("<title>write(1) → ()</title>"), "{html}");
        assert!(html.contains(">[1]"), "the prefix is numbered: {html}");
        assert!(
            html.contains("read() → &lt;2&gt;: the spec returns 1"),
            "escaped, whole in the tooltip"
        );
        assert!(html.contains("Cannot come next"));
        assert!(!html.contains("<script"), "no script");
        assert!(
            !html.contains("http://") || html.matches("http://").count() == 1,
            "only the SVG namespace"
        );
    }
}
