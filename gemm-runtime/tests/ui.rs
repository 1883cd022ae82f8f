//! Compile-fail cases: one per rule the macro checks, each with its committed
//! `.stderr` (regenerate with `TRYBUILD=overwrite cargo test -p gemm-runtime --test ui`).
//! They live in this crate, the one users depend on, and build with cargo, so
//! they are not packed for the GPU host.

#[test]
fn invalid_descriptions_fail_to_compile_with_their_errors() {
    trybuild::TestCases::new().compile_fail("tests/ui/*.rs");
}

/// What a terminal shows of an error is its first line: every compile error
/// of the cases says what is wrong and what to write in at most 300
/// characters (the full matrix of what each path generates is in the guide).
#[test]
fn every_compile_errors_first_line_is_at_most_300_characters() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/ui");
    let mut long = Vec::new();
    let mut cases = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "stderr") {
            cases += 1;
            let text = std::fs::read_to_string(&path).unwrap();
            for line in text.lines().filter(|l| l.starts_with("error")) {
                if line.chars().count() > 300 {
                    long.push(format!("{}: {} characters: {line}", path.display(), line.chars().count()));
                }
            }
        }
    }
    assert!(cases > 100, "the cases are found ({cases})");
    assert!(long.is_empty(), "first lines over 300 characters:\n{}", long.join("\n"));
}
