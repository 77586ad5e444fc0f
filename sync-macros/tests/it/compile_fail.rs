//! What the attributes reject, each with an error at the method: `tests/ui/*.rs` and the
//! compiler's messages for them in `tests/ui/*.stderr` (`TRYBUILD=overwrite` rewrites those).

#[test]
fn rejections_point_at_the_method() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail("tests/ui/*.rs");
}
