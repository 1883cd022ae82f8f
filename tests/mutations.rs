//! Specs a user might get wrong: every ladder step, tuned point and combo
//! changed at random in one to four places (numbers from 0 to past what
//! any rule allows, other enums, other element types and layouts), each
//! answered by the rules' errors or by the generator's source, never by a
//! panic. The macro runs the same rules and generator, and a panic there
//! is "proc macro panicked" at no argument. No GPU, no NVRTC: thousands of
//! specs a second. Then a sample of the legal ones through NVRTC: what the
//! rules accept compiles.

use gemm_ladder::mutations::{bases, mutate, random_legal};
use gemm_runtime::gemm_core::{check, generate};
use rand::{rngs::StdRng, Rng, SeedableRng};

/// The tests' draws: `default`, or `GEMM_TILES_TEST_SEED` added to it.
fn rng(default: u64) -> StdRng {
    let seed = default + std::env::var("GEMM_TILES_TEST_SEED").map_or(0, |v| v.parse::<u64>().expect("GEMM_TILES_TEST_SEED is a number"));
    StdRng::seed_from_u64(seed)
}

#[test]
fn specs_changed_at_random_get_errors_or_source_never_a_panic() {
    let bases = bases();
    let mut rng = rng(20261130);
    // the panics' own messages stay off the test's output
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let (mut legal, mut panicked) = (0, Vec::new());
    for _ in 0..30_000 {
        let mut s = bases[rng.random_range(0..bases.len())].clone();
        for _ in 0..rng.random_range(1..=4) {
            mutate(&mut rng, &mut s);
        }
        let spec = s.clone();
        match std::panic::catch_unwind(move || (check(&spec).is_empty(), generate(&spec).is_ok())) {
            Ok((true, true)) => legal += 1,
            Ok(_) => {}
            Err(e) => {
                let why = e.downcast_ref::<String>().cloned().or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string())).unwrap_or_default();
                panicked.push(format!("{why}: {s:?}"));
            }
        }
    }
    std::panic::set_hook(hook);
    assert!(
        panicked.is_empty(),
        "{} of 30000 specs panicked, the first:\n{}",
        panicked.len(),
        panicked.iter().take(3).cloned().collect::<Vec<_>>().join("\n\n")
    );
    // (most changes break a rule; some must still make kernels, or the test checks only the rules)
    assert!(legal > 500, "only {legal} of the changed specs were legal");
}

/// Legal specs among the changed ones, 48 kernels of their own (1500
/// compiled on 2026-12-03 found one warning, an unused variable of A's
/// block scales under grouped rows), compile with NVRTC, ptxas included,
/// for their arch, without a warning.
#[test]
fn legal_specs_changed_at_random_compile_with_nvrtc_without_a_warning() {
    use gemm_runtime::internal::compile::compile_with_log;
    let bases = bases();
    let mut rng = rng(20261203);
    let (mut legal, mut names) = (Vec::new(), std::collections::HashSet::new());
    while legal.len() < 48 {
        let k = random_legal(&mut rng, &bases, |_| true);
        if names.insert(k.name.to_string()) {
            legal.push(k);
        }
    }
    // (compiled side by side: NVRTC takes a second or more for some)
    let queue = std::sync::Mutex::new(legal.into_iter());
    let failed = std::sync::Mutex::new(Vec::new());
    let threads = std::thread::available_parallelism().map_or(4, |n| n.get()).min(16);
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| loop {
                let Some(k) = queue.lock().unwrap().next() else { break };
                match compile_with_log(&k.source, &k.name, k.spec.arch.nvrtc_name()) {
                    Ok((_, log)) if log.contains("warning") => failed.lock().unwrap().push(format!("{}: NVRTC warns:\n{log}", k.name)),
                    Ok(_) => {}
                    Err(e) => failed.lock().unwrap().push(format!("{}: {e}", k.name)),
                }
            });
        }
    });
    let failed = failed.into_inner().unwrap();
    assert!(failed.is_empty(), "{} of 48 legal changed specs did not compile cleanly, the first:\n{}", failed.len(), failed[0]);
}
