//! A recorded history drawn as one self-contained HTML page, as porcupine draws one: the
//! operations of each process on a time axis, the longest linearizable prefix highlighted and
//! numbered, and the operations that cannot come next marked, with the checker's explanation
//! beside the picture. No network: plain HTML, a little CSS and a few lines of script, which
//! only scroll the marked operation into view and note where they scrolled to (without script
//! the page is the same, scrolled to the start, or to the marked operation where the browser
//! knows CSS's `scroll-initial-target`).
//!
//! Every label is readable without hovering: the time axis gives each event a position of its
//! own, spread just enough for every operation's box to hold its label (as the history
//! timelines of text reports do in characters), so the picture grows with the number of
//! operations and the length of their labels. The picture scrolls both ways, with the lane
//! names kept in view; [`render_history_index`] links the pages of several histories.

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

/// The height of a lane, in pixels.
const LANE_HEIGHT: usize = 32;
/// The width of the lane names' column, in pixels.
const LEFT: usize = 64;
/// The width of one character of a label (12 px monospace), in pixels, rounded up (`✗` and
/// `→` may come from a wider font).
const CHAR_WIDTH: f64 = 7.6;
/// The padding and borders of a box, both sides together, in pixels (a marked box has the
/// thickest borders).
const PADDING: usize = 20;
/// Labels longer than this are cut (with `…`) in their box; the tooltip, and for a marked
/// operation the list beside the picture, have them whole.
const MAX_LABEL_CHARS: usize = 48;
/// The least distance between two consecutive event positions, in pixels.
const MIN_GAP: usize = 10;

/// One box of the picture: where it goes and what it says.
struct Placed<'p> {
    op: &'p PictureOp,
    row: usize,
    /// Its start and end event positions; a pending operation ends where the next operation
    /// of its lane starts, or at the end of the picture.
    start: usize,
    end: usize,
    /// The text in the box: the badge and the (maybe cut) label.
    text: String,
}

/// The page.
pub fn render_history_html(picture: &HistoryPicture) -> String {
    let mut lanes: Vec<&str> = picture.operations.iter().map(|o| o.lane.as_str()).collect();
    lanes.sort_by_key(|l| crate::timeline::lane_order(l));
    lanes.dedup();
    let horizon = picture
        .operations
        .iter()
        .map(|o| o.end.unwrap_or(o.start) + 1)
        .max()
        .unwrap_or(1);
    let placed: Vec<Placed> = picture
        .operations
        .iter()
        .map(|op| {
            let next_start = picture
                .operations
                .iter()
                .filter(|o| o.lane == op.lane && o.start > op.start)
                .map(|o| o.start)
                .min();
            let end = op.end.or(next_start).unwrap_or(horizon).max(op.start + 1);
            let badge = match &op.role {
                Role::Linearized(i) => format!("[{}] ", i + 1),
                Role::Obstacle(_) => "✗ ".to_owned(),
                Role::Other => String::new(),
            };
            Placed {
                op,
                row: lanes.iter().position(|l| *l == op.lane).unwrap_or(0),
                start: op.start,
                end,
                text: format!(
                    "{badge}{}",
                    crate::draw::shorten(&op.label, MAX_LABEL_CHARS)
                ),
            }
        })
        .collect();
    let x = positions(&placed, horizon);
    let width = x[horizon] + MIN_GAP;

    let mut rows = String::new();
    for (row, lane) in lanes.iter().enumerate() {
        let mut boxes = String::new();
        for (n, p) in placed.iter().enumerate().filter(|(_, p)| p.row == row) {
            let (class, why) = match &p.op.role {
                Role::Linearized(_) => ("linearized", None),
                Role::Obstacle(reason) => ("obstacle", Some(reason)),
                Role::Other => ("other", None),
            };
            let pending = if p.op.end.is_none() { " pending" } else { "" };
            let tooltip = match why {
                Some(why) => format!("{}: {why}", p.op.label),
                None => p.op.label.clone(),
            };
            let _ = write!(
                boxes,
                r#"<div class="op {class}{pending}" id="op-{n}" title="{}" style="left:{}px;width:{}px"><span>{}</span></div>"#,
                escape(&tooltip),
                x[p.start],
                x[p.end] - x[p.start],
                escape(&p.text)
            );
        }
        let _ = write!(
            rows,
            r#"<div class="row"><div class="lane">{}</div><div class="track" style="width:{width}px">{boxes}</div></div>"#,
            escape(lane)
        );
    }

    // Operations that returned first: what they returned is the clearer contradiction.
    let mut marked_ops: Vec<&PictureOp> = picture.operations.iter().collect();
    marked_ops.sort_by_key(|o| o.end.is_none());
    let obstacles: Vec<String> = marked_ops
        .into_iter()
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
    // Nothing to say beside a linearizable history: the picture takes the whole width.
    let side = if marked.is_empty() && explanation.is_empty() {
        String::new()
    } else {
        format!(r#"<div class="side">{marked}{explanation}</div>"#)
    };
    format!(
        r#"<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<style>
body {{ font-family: system-ui, sans-serif; margin: 1em 1.5em; color: #222; }}
h1 {{ font-size: 1.3em; margin: 0 0 .3em; word-break: break-all; }}
h2 {{ font-size: 1.05em; }}
.verdict {{ font-size: 1.1em; margin: .3em 0; }}
.layout {{ display: flex; gap: 1.5em; align-items: flex-start; }}
.picture {{ flex: 1 1 auto; min-width: 0; max-height: calc(100vh - 9em); overflow: auto; border: 1px solid #ccc; }}
.rows {{ width: max-content; padding: 4px 0; }}
.row {{ display: flex; height: {LANE_HEIGHT}px; border-bottom: 1px solid #f0f0f0; }}
.lane {{ position: sticky; left: 0; z-index: 2; flex: none; width: {LEFT}px; padding-left: 8px; box-sizing: border-box; background: #fff; border-right: 1px solid #ddd; font: bold 13px/{LANE_HEIGHT}px monospace; }}
.track {{ position: relative; flex: none; }}
.op {{ position: absolute; top: 4px; height: {box_height}px; box-sizing: border-box; padding: 0 5px; border: 1px solid #999; border-radius: 4px; background: #e8e8e8; font: 12px/{line_height}px monospace; white-space: nowrap; overflow: clip; text-overflow: ellipsis; }}
.op span {{ position: sticky; left: {sticky}px; }}
.op.linearized {{ background: #c8ecc8; border-color: #3a8a3a; }}
.op.obstacle {{ background: #fbd0d0; border: 3px solid #c00; line-height: {obstacle_line}px; font-weight: bold; scroll-initial-target: nearest; }}
.op.pending {{ border-style: dashed; border-right: none; border-radius: 4px 0 0 4px; }}
.side {{ flex: 0 0 30em; max-width: 38vw; max-height: calc(100vh - 9em); overflow: auto; }}
.side h2:first-child {{ margin-top: 0; }}
pre {{ white-space: pre-wrap; font-size: 0.8em; }}
.legend {{ margin: .3em 0 .6em; font-size: .9em; }}
.legend span {{ display: inline-block; padding: 0 .5em; margin-right: .5em; border-radius: 3px; border: 1px solid #999; }}
</style></head>
<body>
<h1>{title}</h1>
<p class="verdict">{verdict}</p>
<p class="legend"><span style="background:#c8ecc8;border-color:#3a8a3a">[n] linearized, in this order</span><span style="background:#fbd0d0;border:2px solid #c00">✗ cannot come next</span><span style="background:#e8e8e8">not reached</span><span style="border-style:dashed">never returned (pending)</span> time runs left to right; hover a box for its whole label</p>
<div class="layout"><div class="picture" id="picture"><div class="rows">{rows}</div></div>{side}</div>
<script>
// Scroll the picture (not the page) to centre the operation that cannot come next (one that
// returned, whose result says most, before one that never did), and say where it went
// (data-scrolled: left, top, width, height of the view), for tools that check.
var p = document.getElementById("picture");
var o = p.querySelector(".op.obstacle:not(.pending)") || p.querySelector(".op.obstacle");
if (o) {{ var a = p.getBoundingClientRect(), b = o.getBoundingClientRect();
  p.scrollLeft += b.left - a.left - Math.max(({LEFT} + p.clientWidth - b.width) / 2, {LEFT} + 8);
  p.scrollTop += b.top - a.top - (p.clientHeight - b.height) / 2; }}
p.setAttribute("data-scrolled", [p.scrollLeft, p.scrollTop, p.clientWidth, p.clientHeight].join(" "));
</script>
</body></html>
"#,
        title = escape(&picture.title),
        verdict = escape(&picture.verdict),
        box_height = LANE_HEIGHT - 8,
        line_height = LANE_HEIGHT - 10,
        obstacle_line = LANE_HEIGHT - 14,
        // A long box's label stays in view beside the lane names while the picture scrolls.
        sticky = LEFT + 6,
    )
}

/// The x coordinate, in pixels, of every event position `0..=horizon`: each at least
/// [`MIN_GAP`] after the one before, and each box's end far enough after its start for its
/// text. Every constraint points backwards (a box ends after it starts), so one left-to-right
/// pass finds the smallest positions.
fn positions(placed: &[Placed], horizon: usize) -> Vec<usize> {
    let mut x = vec![LEFT / 4; horizon + 1];
    for t in 1..=horizon {
        x[t] = x[t - 1] + MIN_GAP;
        for p in placed.iter().filter(|p| p.end == t) {
            x[t] = x[t].max(x[p.start] + text_width(&p.text));
        }
    }
    x
}

/// The width of a box that holds `text` in one line, in pixels.
fn text_width(text: &str) -> usize {
    (text.chars().count() as f64 * CHAR_WIDTH).ceil() as usize + PADDING
}

/// One history of an index page.
#[derive(Clone, Debug)]
pub struct IndexEntry {
    /// The history file, as the user named it.
    pub file: String,
    /// Its page, relative to the index; `None` when it could not be drawn (an error).
    pub page: Option<String>,
    /// The verdict in words ("linearizable", "NOT linearizable", "error", ...).
    pub verdict: String,
    /// What else to say: the headline of a violation, or the error.
    pub detail: String,
}

/// The index page of several histories' pages: one row per file with its verdict, a link to
/// its page, and why it failed or could not be checked.
pub fn render_history_index(title: &str, entries: &[IndexEntry]) -> String {
    let mut rows = String::new();
    for e in entries {
        let file = match &e.page {
            Some(page) => format!(r#"<a href="{}">{}</a>"#, escape(page), escape(&e.file)),
            None => escape(&e.file),
        };
        let class = match e.verdict.as_str() {
            "linearizable" => "ok",
            "NOT linearizable" => "bad",
            _ => "other",
        };
        let _ = write!(
            rows,
            r#"<tr class="{class}"><td>{file}</td><td>{}</td><td>{}</td></tr>"#,
            escape(&e.verdict),
            escape(&e.detail)
        );
    }
    format!(
        r#"<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<style>
body {{ font-family: system-ui, sans-serif; margin: 1.5em; color: #222; }}
table {{ border-collapse: collapse; }}
td, th {{ text-align: left; padding: .3em .8em; border-bottom: 1px solid #ddd; vertical-align: top; }}
td:nth-child(2) {{ white-space: nowrap; }}
tr.ok td:nth-child(2) {{ color: #2a7a2a; }}
tr.bad td:nth-child(2) {{ color: #b00; font-weight: bold; }}
tr.other td:nth-child(2) {{ color: #a60; }}
</style></head>
<body>
<h1>{title}</h1>
<table><tr><th>history</th><th>verdict</th><th>why</th></tr>{rows}</table>
</body></html>
"#,
        title = escape(title),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn op(lane: &str, label: &str, start: usize, end: Option<usize>, role: Role) -> PictureOp {
        PictureOp {
            lane: lane.into(),
            label: label.into(),
            start,
            end,
            role,
        }
    }

    #[test]
    fn marks_the_prefix_and_the_obstacle_and_escapes_text() {
        let picture = HistoryPicture {
            title: "h.json".into(),
            verdict: "NOT linearizable".into(),
            operations: vec![
                op("T0", "write(1) → ()", 0, Some(2), Role::Linearized(0)),
                op(
                    "T1",
                    "read() → <2>",
                    3,
                    None,
                    Role::Obstacle("the spec returns 1".into()),
                ),
            ],
            explanation: Some("longest linearizable prefix: 1 of 2".into()),
        };
        let html = render_history_html(&picture);
        assert!(
            html.contains(r#"class="op linearized" id="op-0" title="write(1) → ()""#),
            "{html}"
        );
        assert!(
            html.contains(r#"class="op obstacle pending" id="op-1""#),
            "{html}"
        );
        assert!(
            html.contains("<span>[1] write(1) → ()</span>"),
            "the prefix is numbered: {html}"
        );
        assert!(
            html.contains("read() → &lt;2&gt;: the spec returns 1"),
            "escaped, whole in the tooltip"
        );
        assert!(html.contains("Cannot come next"));
        assert!(
            !html.contains("https://") && html.matches("<script").count() == 1,
            "self-contained: {html}"
        );
    }

    /// Every box is wide enough for its text, however short the operation: the picture grows
    /// with the labels instead of cutting them.
    #[test]
    fn every_box_holds_its_label() {
        let long = "txn([[:read :x nil] [:read :y nil]]) → [[:read :x 0] [:read :y 2]]";
        let picture = HistoryPicture {
            title: "t".into(),
            verdict: "linearizable".into(),
            operations: vec![
                op("T0", "write(1) → ()", 0, Some(1), Role::Linearized(0)),
                op("T1", long, 1, Some(2), Role::Linearized(1)),
                op("T0", "read() → 1", 2, Some(3), Role::Other),
                op("T2", "write(7) (pending)", 2, None, Role::Other),
            ],
            explanation: None,
        };
        let html = render_history_html(&picture);
        let boxes: Vec<(usize, &str)> = html
            .split(r#"style="left:"#)
            .skip(1)
            .map(|rest| {
                let width: usize = rest
                    .split("width:")
                    .nth(1)
                    .and_then(|w| w.split("px").next())
                    .and_then(|w| w.parse().ok())
                    .unwrap();
                let text = rest
                    .split_once("<span>")
                    .unwrap()
                    .1
                    .split("</span>")
                    .next()
                    .unwrap();
                (width, text)
            })
            .collect();
        assert_eq!(boxes.len(), 4, "{html}");
        for (width, text) in &boxes {
            assert!(
                *width >= text_width(text),
                "{text:?} gets {width} px, needs {}",
                text_width(text)
            );
            assert!(!text.is_empty() && !text.starts_with('…'), "{text:?}");
        }
        // The long label is cut at its limit, whole in its tooltip.
        assert!(boxes.iter().any(|(_, t)| t.ends_with('…')), "{boxes:?}");
        assert!(
            html.contains(&format!(r#"title="{}""#, escape(long))),
            "{html}"
        );
        // A pending operation's box is dashed, and runs to the end of the picture.
        assert!(html.contains(r#"class="op other pending""#), "{html}");
    }

    #[test]
    fn the_index_links_each_page_and_names_the_errors() {
        let html = render_history_index(
            "3 histories",
            &[
                IndexEntry {
                    file: "a/etcd_000.log".into(),
                    page: Some("a--etcd_000.log.html".into()),
                    verdict: "NOT linearizable".into(),
                    detail: "T1 read() returned 3, which no serial order gives".into(),
                },
                IndexEntry {
                    file: "b<1>.edn".into(),
                    page: None,
                    verdict: "error".into(),
                    detail: "b<1>.edn:2: malformed EDN".into(),
                },
            ],
        );
        assert!(
            html.contains(r#"<a href="a--etcd_000.log.html">a/etcd_000.log</a>"#),
            "{html}"
        );
        assert!(
            html.contains("<td>b&lt;1&gt;.edn</td><td>error</td>"),
            "{html}"
        );
        assert!(!html.contains("<script"), "{html}");
    }
}
