//! Compile-fail cases: one per rule the macro checks, each with its committed
//! `.stderr` (regenerate with `TRYBUILD=overwrite cargo test --test ui`).

#[test]
fn invalid_descriptions_fail_to_compile_with_their_errors() {
    trybuild::TestCases::new().compile_fail("tests/ui/*.rs");
}
