//! Renders Markdown (a `fgvt localize --format markdown` ticket) as a standalone HTML page, to
//! look at a ticket the way a tracker shows it:
//!
//! ```sh
//! fgvt localize fixtures/linked_list/failing.json --format markdown > ticket.md
//! cargo run --example markdown_html < ticket.md > ticket.html
//! ```

use std::io::Read as _;

use pulldown_cmark::{html, Options, Parser};

fn main() -> std::io::Result<()> {
    let mut markdown = String::new();
    std::io::stdin().read_to_string(&mut markdown)?;
    let mut body = String::new();
    html::push_html(
        &mut body,
        Parser::new_ext(&markdown, Options::ENABLE_TABLES),
    );
    // A tracker-like style: readable width, bordered tables, code in a monospace box.
    println!(
        "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>fgvt ticket</title><style>\n\
         body {{ font-family: sans-serif; max-width: 980px; margin: 2em auto; line-height: 1.45; }}\n\
         table {{ border-collapse: collapse; margin: 1em 0; }}\n\
         th, td {{ border: 1px solid #ccc; padding: 3px 8px; text-align: left; vertical-align: top; }}\n\
         pre {{ background: #f6f8fa; padding: 10px; overflow-x: auto; }}\n\
         code {{ background: #f6f8fa; padding: 1px 3px; }}\n\
         </style></head><body>\n{body}</body></html>"
    );
    Ok(())
}
