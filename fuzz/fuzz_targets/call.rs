//! A call as a test writes it, like `write(0, (1, true))`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        if let Err(e) = fgvt_tree::parse_call(text) {
            assert!(e.offset <= text.len(), "the error points past the text");
        }
    }
});
