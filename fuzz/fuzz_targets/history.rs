//! A recorded history in each format `fgvt check-history` reads, and format detection.
#![no_main]

use fgvt_checker::formats::{detect_format, parse, Format};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let _ = detect_format(text);
    for format in [Format::Json, Format::Jepsen, Format::Kv] {
        if let Err(e) = parse(text, format) {
            assert!(e.line >= 1 && e.line <= text.lines().count() + 1, "{e}");
        }
    }
});
