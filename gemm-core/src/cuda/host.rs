//! Generated code run on the host, for tests: a C++ program built by the
//! host compiler (`c++`) and run, its standard output returned.

/// Builds `program` (C++, with whatever shims it needs in front) in a
/// temporary folder named for `tag`, runs it and returns what it printed.
pub fn run_cpp(tag: &str, program: &str) -> String {
    let dir = std::env::temp_dir().join(format!("gemm-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("main.cpp"), program).unwrap();
    let built = std::process::Command::new("c++").arg("-O1").arg("-o").arg(dir.join("main")).arg(dir.join("main.cpp")).output();
    let built = built.expect("a host C++ compiler (c++)");
    assert!(built.status.success(), "{tag}: the program compiles as C++: {}\n{program}", String::from_utf8_lossy(&built.stderr));
    let out = std::process::Command::new(dir.join("main")).output().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    String::from_utf8(out.stdout).unwrap()
}
