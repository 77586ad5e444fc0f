//! A test file (`fgvt localize TEST.json`), next to a valid model it may name.
#![no_main]

use libfuzzer_sys::fuzz_target;

const MODEL: &str = include_str!("../../fixtures/counter1/counter1.fgv");

fuzz_target!(|data: &[u8]| {
    // The loader reads files (paths inside a test are relative to it): give it a directory.
    let dir = std::env::temp_dir().join(format!("fgvt-fuzz-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("counter1.fgv"), MODEL).unwrap();
    let test = dir.join("test.json");
    std::fs::write(&test, data).unwrap();
    let _ = fgvt::testcase::load(&test);
});
