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

/// The attribute and signature of `pub fn NAME` in `text`, without comments or whitespace.
fn spec_of(text: &str, name: &str) -> String {
    let f = format!("pub fn {name}(");
    let end = text.find(&f).unwrap_or_else(|| panic!("the {name} kernel")) + f.len();
    let start = text[..end].rfind("#[gemm_kernel(").expect("its attribute");
    let close = end + text[end..].find(';').expect("its signature ends");
    text[start..close].lines().map(|l| l.split("//").next().unwrap_or("")).collect::<String>().split_whitespace().collect()
}

/// The README's Hopper kernel is the `hopper_autotuned` step's spec in
/// `src/steps.rs`, and its tuned kernel `mma_tuned` in `src/tuned.rs`
/// (comments and spacing aside), so that their figures stay true.
#[test]
fn the_readmes_kernels_are_the_ladders_own() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    for (name, file) in [("hopper_autotuned", "src/steps.rs"), ("mma_tuned", "src/tuned.rs")] {
        let source = std::fs::read_to_string(root.join(file)).unwrap();
        assert_eq!(spec_of(&readme, name), spec_of(&source, name), "README.md's {name} differs from {file}'s");
    }
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
