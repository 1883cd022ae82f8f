//! The README's first example is `examples/quickstart.rs`, word for word, so
//! the code a new user copies is the code `cargo test` compiles.

#[test]
fn the_readmes_first_example_is_the_quickstart_example() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let start = readme.find("```rust\n").expect("a rust block in the README") + "```rust\n".len();
    let len = readme[start..].find("```\n").expect("the block closes");
    let example = std::fs::read_to_string(root.join("examples/quickstart.rs")).unwrap();
    assert_eq!(&readme[start..start + len], example, "README.md's first example differs from examples/quickstart.rs");
}

/// The README's Hopper kernel is the `hopper_autotuned` step's spec in
/// `src/steps.rs` (comments and spacing aside), so its figures stay true.
#[test]
fn the_readmes_hopper_kernel_is_the_hopper_autotuned_step() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    // the attribute and signature of `pub fn hopper_autotuned`, without comments or whitespace
    let spec_of = |text: &str| -> String {
        let f = "pub fn hopper_autotuned(";
        let end = text.find(f).expect("the hopper_autotuned kernel") + f.len();
        let start = text[..end].rfind("#[gemm_kernel(").expect("its attribute");
        let close = end + text[end..].find(';').expect("its signature ends");
        text[start..close].lines().map(|l| l.split("//").next().unwrap_or("")).collect::<String>().split_whitespace().collect()
    };
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let steps = std::fs::read_to_string(root.join("src/steps.rs")).unwrap();
    assert_eq!(spec_of(&readme), spec_of(&steps), "README.md's Hopper kernel differs from the hopper_autotuned step");
}

/// The README is for a user: short, the two commands (run the ladder, run
/// the tests) near its top, every link to a file that exists; the figures'
/// file holds current figures only.
#[test]
fn the_readme_is_short_with_the_two_commands_near_the_top() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    assert!(readme.lines().count() <= 250, "README.md has {} lines (at most 250)", readme.lines().count());
    let top: Vec<&str> = readme.lines().take(100).collect();
    for command in ["cargo run --release --example ladder", "scripts/test"] {
        assert!(top.iter().any(|l| l.starts_with(command)), "`{command}` is not within the README's first 100 lines");
    }
    for link in readme.split("](").skip(1).filter_map(|rest| rest.split(')').next()) {
        let path = link.split('#').next().unwrap();
        if !path.is_empty() && !path.starts_with("http") {
            assert!(root.join(path).exists(), "README.md links to {link}, which does not exist");
        }
    }
    let benchmarks = std::fs::read_to_string(root.join("BENCHMARKS.md")).unwrap();
    assert!(benchmarks.lines().count() <= 400, "BENCHMARKS.md has {} lines (at most 400)", benchmarks.lines().count());
}
