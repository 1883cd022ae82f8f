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
