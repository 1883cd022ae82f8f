//! The examples' layout: a newcomer tells a ladder step from a user example
//! by its name, and every ladder step has its program.

use std::collections::BTreeSet;

/// The programs a user runs first; everything else in `examples/` is a ladder step.
const USER_EXAMPLES: [&str; 12] =
    ["decode", "first_launch", "fp8", "grouped", "hopper", "ladder", "linear", "moe", "quickstart", "shapes", "split_k", "tuned"];

#[test]
fn every_example_is_a_ladder_step_in_order_or_a_user_example() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples");
    let found: BTreeSet<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "rs"))
        .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
        .collect();
    let mut expected: BTreeSet<String> = USER_EXAMPLES.iter().map(|s| s.to_string()).collect();
    for step in gemm_ladder::STEPS.iter().chain(&gemm_ladder::TENSOR_STEPS).chain(&gemm_ladder::HOPPER_STEPS).chain(&gemm_ladder::FP8_STEPS) {
        let name = gemm_ladder::steps::example_name(step.name).expect("a ladder step has an example name");
        let source = std::fs::read_to_string(dir.join(format!("{name}.rs"))).unwrap_or_else(|_| panic!("examples/{name}.rs runs step {}", step.name));
        assert!(source.contains(&format!("step(\"{}\")", step.name)), "examples/{name}.rs runs step {}", step.name);
        expected.insert(name);
    }
    assert_eq!(found, expected, "examples/ holds the ladder steps (LADDER_NN_STEP) and the user examples, nothing else");
}
