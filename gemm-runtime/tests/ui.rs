//! Compile-fail cases: one per rule the macro checks, each with its committed
//! `.stderr` (regenerate with `TRYBUILD=overwrite cargo test -p gemm-runtime --test ui`).
//! They live in this crate, the one users depend on, and build with cargo, so
//! they are not packed for the GPU host.

#[test]
fn invalid_descriptions_fail_to_compile_with_their_errors() {
    trybuild::TestCases::new().compile_fail("tests/ui/*.rs");
}
