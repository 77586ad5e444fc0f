//! A model file: the lexer, the parser (with its nesting bound) and the compiler.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let mut sources = fgvt_tree::SourceMap::new();
    if let Err(e) = fgvt_lang::Model::compile(&mut sources, "fuzz.fgv", text, None) {
        assert!(e.at.offset() <= text.len(), "the error points past the text");
    }
});
